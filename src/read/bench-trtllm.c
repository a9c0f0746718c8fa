/* bench-trtllm.c: `trtllm-bench throughput --report_json FILE`
 * (tensorrt_llm/bench/dataclasses/reporting.py get_statistics_dict @
 * 2787769; the command in bench/benchmark/throughput.py @ 000a01d).
 *
 * One object: engine {model, version, backend, dtype, ...}, world_info
 * {tp_size, pp_size, ep_size, max_batch_size, ...}, request_info
 * {num_requests, avg_num_concurrent_requests, avg_input_length,
 * avg_output_length}, performance {...} and, for a --streaming run only,
 * streaming_metrics {avg_ttft_ms, avg_tpot_ms, ttft_percentiles,
 * tpot_percentiles}, each percentile object {minimum, maximum, average,
 * p50, p90, p95, p99} in ms.  Without --streaming there is no TTFT or
 * TPOT to calibrate from. */
#include <stdio.h>
#include <string.h>

#include "read/bench-private.h"

/* The median of a percentile object, else its average (ms -> s). */
static kvp_status median_ms(const struct kvp_bench_src *s, const struct kvp_node *sm,
			    const char *pkey, const char *avg_key, double *out,
			    struct kvp_error *err)
{
	const struct kvp_node *p;
	kvp_status st = kvp_bench_map(s, sm, pkey, false, &p, err);
	if (st)
		return st;
	if (p)
		return kvp_bench_num(s, p, "p50", 1e-3, true, out, err);
	return kvp_bench_num(s, sm, avg_key, 1e-3, true, out, err);
}

kvp_status kvp_bench_trtllm(const struct kvp_bench_src *s, struct kvp_bench_run *run,
			    struct kvp_error *err)
{
	const struct kvp_node *o = s->obj, *eng, *world, *req, *sm;
	double n = 0, conc = 0, in = 0, out = 0, tp = 0;
	kvp_status st;
	snprintf(run->engine, sizeof run->engine, "trtllm");
	if ((st = kvp_bench_map(s, o, "engine", false, &eng, err)) ||
	    (st = kvp_bench_map(s, o, "world_info", false, &world, err)) ||
	    (st = kvp_bench_map(s, o, "request_info", true, &req, err)) ||
	    (st = kvp_bench_map(s, o, "streaming_metrics", false, &sm, err)))
		return st;
	struct kvp_bench_src e = {s->doc, eng, s->tool, "/engine"},
			     w = {s->doc, world, s->tool, "/world_info"},
			     r = {s->doc, req, s->tool, "/request_info"},
			     m = {s->doc, sm, s->tool, "/streaming_metrics"};
	if (eng && ((st = kvp_bench_str(&e, eng, "model", false, run->model_id,
					sizeof run->model_id, err)) ||
		    (st = kvp_bench_str(&e, eng, "version", false, run->engine_version,
					sizeof run->engine_version, err))))
		return st;
	if (world && (st = kvp_bench_num(&w, world, "tp_size", 1, false, &tp, err)))
		return st;
	run->tp = tp >= 1 && tp <= 65536 ? (uint32_t)tp : 0;
	if ((st = kvp_bench_num(&r, req, "num_requests", 1, true, &n, err)) ||
	    (st = kvp_bench_num(&r, req, "avg_num_concurrent_requests", 1, true, &conc, err)) ||
	    (st = kvp_bench_num(&r, req, "avg_input_length", 1, true, &in, err)) ||
	    (st = kvp_bench_num(&r, req, "avg_output_length", 1, true, &out, err)))
		return st;
	if (!sm)
		return kvp_bench_fail(s, o, "streaming_metrics", err, "missing: a run without "
				      "--streaming records no TTFT or TPOT; rerun trtllm-bench "
				      "throughput with --streaming");
	if ((st = median_ms(&m, sm, "ttft_percentiles", "avg_ttft_ms", &run->m.ttft_s, err)) ||
	    (st = median_ms(&m, sm, "tpot_percentiles", "avg_tpot_ms", &run->m.tpot_s, err)))
		return st;
	if (!(n >= 1))
		return kvp_bench_fail(&r, req, "num_requests", err, "no request: nothing measured");
	run->requests = (uint64_t)n;
	run->prompt_tokens = kvp_bench_per_request(in, 1);
	run->output_tokens = kvp_bench_per_request(out, 1);
	run->batch = conc < 1 ? 1 : conc;
	return KVP_STATUS_OK;
}
