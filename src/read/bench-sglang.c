/* bench-sglang.c: SGLang's two benchmark result files, both JSON Lines
 * appended to one line per run.
 *
 * `python -m sglang.bench_serving --output-file` (sglang/bench_serving.py
 * 0.5.10 l.1549-1636; sglang/benchmark/serving.py 0.5.23): the config
 * (backend, dataset_name, request_rate, max_concurrency, server_info: the
 * server's /get_server_info with its version, tp_size and model_path), the
 * counts (duration, completed, total_input_tokens, total_output_tokens,
 * request_throughput), {mean,median,std,p99}_{ttft,tpot,itl}_ms,
 * {mean,median,..}_e2e_latency_ms and `concurrency`, the mean requests in
 * flight (the summed end-to-end latencies over the duration).  Its releases
 * of late 2024 (0.3.x to 0.4.x, the result dict of run_benchmark) wrote a
 * shorter line: backend, dataset_name, request_rate, max_concurrency, the
 * token totals, mean_/median_e2e_latency_ms, median_ttft_ms, median_itl_ms,
 * output_throughput, the random_* and sharegpt_output_len arguments,
 * duration and completed; no median_tpot_ms, no concurrency, no
 * server_info (tests/data/bench-public/sglang-*: files a user published).
 * There the median inter-token gap stands for the TPOT (calculate_metrics:
 * median_itl_ms is np.median over every request's gaps, median_tpot_ms over
 * each request's (latency - ttft) / (output - 1); one decode step each in
 * steady decoding), and the requests in flight are completed x
 * mean_e2e_latency_ms / duration, which is the later `concurrency`
 * (np.sum(e2e_latencies) / dur_s) written out.
 *
 * `python -m sglang.bench_one_batch --result-filename` (sglang/bench_one_batch.py
 * 0.5.10 l.651-757, l.866; benchmark/one_batch.py 0.5.23): one line per
 * (batch, input, output) of run_name, batch_size, input_len, output_len,
 * prefill_latency (s, one prefill of the batch), median_decode_latency (s,
 * one decode step of the batch), total_latency, throughputs: a step
 * measured with no server or scheduler in the path. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "read/bench-private.h"

/* The running batch's mean decode context of a random-dataset run whose
 * lengths were drawn over a range (bench_serving.py 0.4.0.post1
 * sample_random_requests l.611-629: input_lens = randint(max(int(I r), 1),
 * I + 1), output_lens = randint(int(O r), O + 1), each request's own, I =
 * random_input_len, O = random_output_len, r = random_range_ratio; sent with
 * ignore_eos, l.165, so each makes its o tokens).  Under continuous batching
 * a request decodes for o steps at contexts p, p + 1, ..., p + o - 1, so of
 * the sequences running at a step (Little's law, each request counted for
 * the steps it is in the batch) the mean context is
 *   E[o (p + (o - 1) / 2)] / E[o] = E[p] + E[o (o - 1)] / (2 E[o])
 * (p and o drawn apart): longer outputs stay longer and are more of the
 * batch than of the requests.  With o uniform on the integers a..b:
 *   E[o] = (a + b) / 2, E[o^2] = ((b - a + 1)^2 - 1) / 12 + E[o]^2.
 * E[p] is the file's mean prompt.  A fixed length (r = 1) gives
 * p + (o - 1) / 2, as without it.  Only where the file's mean output is
 * within 10 % of (a + b) / 2 (the lengths were drawn as recorded); else 0. */
static kvp_status running_context(const struct kvp_bench_src *s, const struct kvp_node *o,
				  double mean_p, double mean_o, struct kvp_bench_run *run,
				  struct kvp_error *err)
{
	char ds[32] = "";
	double ratio = -1, olen = 0;
	kvp_status st;
	if ((st = kvp_bench_str(s, o, "dataset_name", false, ds, sizeof ds, err)) ||
	    (st = kvp_bench_num(s, o, "random_range_ratio", 1, false, &ratio, err)) ||
	    (st = kvp_bench_num(s, o, "random_output_len", 1, false, &olen, err)))
		return st;
	if (strcmp(ds, "random") != 0 || !(ratio >= 0) || !(ratio < 1) || !(olen >= 1) ||
	    olen > 1e9)
		return KVP_STATUS_OK;
	double b = floor(olen), a = floor(olen * ratio), eo = (a + b) / 2;
	double eo2 = ((b - a + 1) * (b - a + 1) - 1) / 12 + eo * eo;
	if (!(eo > 0) || fabs(mean_o / eo - 1) > 0.10)
		return KVP_STATUS_OK;
	run->decode_context = mean_p + (eo2 - eo) / (2 * eo);
	return KVP_STATUS_OK;
}

kvp_status kvp_bench_sglang_serving(const struct kvp_bench_src *s, struct kvp_bench_run *run,
				    struct kvp_error *err)
{
	const struct kvp_node *o = s->obj, *info;
	double completed = 0, in = 0, out = 0, conc = 0, maxc = 0, tp = 0, e2e = 0, dur = 0, thr = 0;
	/* the late-2024 line (above): no median_tpot_ms, its median ITL instead */
	bool short_line = !kvp_map_get(o, "median_tpot_ms") && kvp_map_get(o, "median_itl_ms");
	kvp_status st;
	snprintf(run->engine, sizeof run->engine, "sglang");
	if ((st = kvp_bench_num(s, o, "completed", 1, true, &completed, err)) ||
	    (st = kvp_bench_num(s, o, "total_input_tokens", 1, true, &in, err)) ||
	    (st = kvp_bench_num(s, o, "total_output_tokens", 1, true, &out, err)) ||
	    (st = kvp_bench_num(s, o, "median_ttft_ms", 1e-3, true, &run->m.ttft_s, err)) ||
	    (st = kvp_bench_num(s, o, short_line ? "median_itl_ms" : "median_tpot_ms", 1e-3,
				true, &run->m.tpot_s, err)) ||
	    (st = kvp_bench_num(s, o, "concurrency", 1, false, &conc, err)) ||
	    (st = kvp_bench_num(s, o, "mean_e2e_latency_ms", 1e-3, false, &e2e, err)) ||
	    (st = kvp_bench_num(s, o, "duration", 1, false, &dur, err)) ||
	    (st = kvp_bench_num(s, o, "request_throughput", 1, false, &thr, err)) ||
	    (st = kvp_bench_num(s, o, "max_concurrency", 1, false, &maxc, err)) ||
	    (st = kvp_bench_map(s, o, "server_info", false, &info, err)))
		return st;
	if (info) {
		struct kvp_bench_src si = {s->doc, info, s->tool, "/server_info"};
		if ((st = kvp_bench_str(&si, info, "version", false, run->engine_version,
					sizeof run->engine_version, err)) ||
		    (st = kvp_bench_str(&si, info, "model_path", false, run->model_id,
					sizeof run->model_id, err)) ||
		    (st = kvp_bench_num(&si, info, "tp_size", 1, false, &tp, err)))
			return st;
		run->tp = tp >= 1 && tp <= 65536 ? (uint32_t)tp : 0;
	}
	if (!(completed >= 1))
		return kvp_bench_fail(s, o, "completed", err, "no request completed: nothing "
				      "was measured");
	run->requests = (uint64_t)completed;
	/* the late-2024 line has no request_throughput: completed / duration,
	 * as calculate_metrics computes it */
	run->throughput_rps = thr > 0 ? thr : dur > 0 ? completed / dur : 0;
	run->prompt_tokens = kvp_bench_per_request(in, completed);
	run->output_tokens = kvp_bench_per_request(out, completed);
	/* Little's law where the line predates `concurrency`: the same sum of
	 * end-to-end latencies over the duration */
	if (!(conc > 0) && e2e > 0 && dur > 0)
		conc = completed * e2e / dur;
	run->batch = conc > 0 ? conc : maxc;
	if ((st = running_context(s, o, in / completed, out / completed, run, err)))
		return st;
	if (!(run->batch > 0))
		return kvp_bench_fail(s, o, "concurrency", err, "the requests in flight are "
				      "unknown: the file has neither concurrency, "
				      "mean_e2e_latency_ms with duration, nor max_concurrency");
	if (run->batch < 1)
		run->batch = 1;
	return KVP_STATUS_OK;
}

kvp_status kvp_bench_sglang_one_batch(const struct kvp_bench_src *s, struct kvp_bench_run *run,
				      struct kvp_error *err)
{
	const struct kvp_node *o = s->obj;
	double bs = 0, in = 0, out = 0;
	kvp_status st;
	snprintf(run->engine, sizeof run->engine, "sglang");
	if ((st = kvp_bench_num(s, o, "batch_size", 1, true, &bs, err)) ||
	    (st = kvp_bench_num(s, o, "input_len", 1, true, &in, err)) ||
	    (st = kvp_bench_num(s, o, "output_len", 1, true, &out, err)) ||
	    (st = kvp_bench_num(s, o, "prefill_latency", 1, true, &run->m.prefill_s, err)) ||
	    (st = kvp_bench_num(s, o, "median_decode_latency", 1, true, &run->m.decode_step_s, err)))
		return st;
	if (!(bs >= 1) || bs > 1e6)
		return kvp_bench_fail(s, o, "batch_size", err, "expected a batch of 1 to 10^6");
	if (!(in >= 1) || !(out >= 1) || in > 1e9 || out > 1e9)
		return kvp_bench_fail(s, o, in >= 1 && in <= 1e9 ? "output_len" : "input_len", err,
				      "expected 1 to 10^9 tokens");
	run->batch = (double)(uint64_t)bs;
	run->prompt_tokens = (uint64_t)in;
	run->output_tokens = (uint64_t)out;
	if (!(run->m.prefill_s > 0) || !(run->m.decode_step_s > 0))
		return kvp_bench_fail(s, o, run->m.prefill_s > 0 ? "median_decode_latency"
				      : "prefill_latency", err, "expected a positive time");
	return KVP_STATUS_OK;
}
