/* bench-genai-perf.c: NVIDIA's client benchmarks' summary files.
 *
 * genai-perf `<prefix>_genai_perf.json` (genai-perf 0.0.16,
 * export_data/json_exporter.py) and AIPerf `profile_export_aiperf.json`
 * (aiperf 0.13.0, common/models/export_models.py JsonExportData): one
 * object per metric, {unit, avg, min, max, std, p1 .. p99} (AIPerf adds
 * count), for request_throughput (requests/sec), request_latency,
 * time_to_first_token, inter_token_latency (per request (latency - ttft) /
 * (output - 1): vLLM's TPOT), input_sequence_length and
 * output_sequence_length (tokens); AIPerf adds aiperf_version.  Times are in
 * the metric's `unit` (ms as exported; ns, us and s read too).  The
 * sequences in flight come by Little's law: request_throughput x mean
 * request_latency. */
#include <stdio.h>
#include <string.h>

#include "read/bench-private.h"

/* metric `name`'s statistic `stat`, in seconds when `time` (by its unit). */
static kvp_status metric(const struct kvp_bench_src *s, const char *name, const char *stat,
			 bool time, double *out, struct kvp_error *err)
{
	const struct kvp_node *mo;
	kvp_status st = kvp_bench_map(s, s->obj, name, true, &mo, err);
	if (st)
		return st;
	char ptr[80];
	snprintf(ptr, sizeof ptr, "/%s", name);
	struct kvp_bench_src ms = {s->doc, mo, s->tool, ptr};
	double scale = 1;
	if (time) {
		char unit[16];
		if ((st = kvp_bench_str(&ms, mo, "unit", false, unit, sizeof unit, err)))
			return st;
		if (!unit[0] || strcmp(unit, "ms") == 0)
			scale = 1e-3;
		else if (strcmp(unit, "us") == 0)
			scale = 1e-6;
		else if (strcmp(unit, "ns") == 0)
			scale = 1e-9;
		else if (strcmp(unit, "s") == 0 || strcmp(unit, "sec") == 0)
			scale = 1;
		else
			return kvp_bench_fail(&ms, mo, "unit", err, "expected ms, us, ns or s, "
					      "got '%s'", unit);
	}
	return kvp_bench_num(&ms, mo, stat, scale, true, out, err);
}

kvp_status kvp_bench_genai_perf(const struct kvp_bench_src *s, struct kvp_bench_run *run,
				struct kvp_error *err)
{
	double thr = 0, lat = 0, in = 0, out = 0;
	kvp_status st;
	/* aiperf_version is the client's, not the engine's: not an engine version */
	if ((st = metric(s, "time_to_first_token", "p50", true, &run->m.ttft_s, err)) ||
	    (st = metric(s, "inter_token_latency", "p50", true, &run->m.tpot_s, err)) ||
	    (st = metric(s, "request_throughput", "avg", false, &thr, err)) ||
	    (st = metric(s, "request_latency", "avg", true, &lat, err)) ||
	    (st = metric(s, "input_sequence_length", "avg", false, &in, err)) ||
	    (st = metric(s, "output_sequence_length", "avg", false, &out, err)))
		return st;
	run->prompt_tokens = kvp_bench_per_request(in, 1);
	run->output_tokens = kvp_bench_per_request(out, 1);
	run->batch = thr * lat;
	if (!(run->batch > 0))
		return kvp_bench_fail(s, s->obj, "request_throughput", err, "expected a positive "
				      "throughput and latency (the requests in flight come from them)");
	if (run->batch < 1)
		run->batch = 1;
	/* a serving run (its concurrency measured, so --batch does not name
	 * it): request_count where the file has it, else one */
	double count = 1;
	const struct kvp_node *rc = kvp_map_get(s->obj, "request_count");
	if (rc && rc->type == KVP_NODE_MAP &&
	    (st = metric(s, "request_count", "avg", false, &count, err)))
		return st;
	run->requests = count >= 1 && count < 1e15 ? (uint64_t)count : 1;
	return KVP_STATUS_OK;
}
