/* bench-vllm.c: vLLM's two benchmark result files.
 *
 * `vllm bench serve --save-result` (vllm/benchmarks/serve.py, 0.19.0
 * l.983, l.1824-1960; the legacy benchmarks/benchmark_serving.py @ 0049e29
 * writes the same keys): one JSON object (one per line with
 * --append-result) of the setup (date "%Y%m%d-%H%M%S", backend, model_id,
 * num_prompts, request_rate, max_concurrency), the counts (duration s,
 * completed, total_input_tokens, total_output_tokens, request_throughput
 * req/s) and the statistics mean_/median_/std_/p<P>_<m>_ms for m in ttft,
 * tpot, itl, e2el; TPOT per request is (latency - ttft) / (output - 1).
 * Its releases before e2el joined the default --percentile-metrics
 * ("ttft,tpot,itl"; vLLM 0.8.3's benchmark_serving.py, as
 * tests/data/bench-public/vllm-* were written) have no mean_e2el_ms: it is
 * derived as mean_ttft_ms + mean_tpot_ms x (total_output_tokens /
 * completed - 1), each request's latency being its TTFT plus (output - 1)
 * TPOTs, summed over the mean output (exact when TPOT and output length
 * are uncorrelated; kvplan(1), CALIBRATE).
 *
 * `vllm bench latency --output-json` (vllm/benchmarks/latency.py, the
 * legacy benchmarks/benchmark_latency.py): avg_latency (s), latencies (one
 * per iteration, each one generate() of --batch-size prompts of --input-len
 * tokens to --output-len tokens), percentiles {"10".."99"} (s), and from
 * 0.34.0 model_id.  It records no shape: --batch, --prompt and --output
 * give it.
 *
 * input_lens, where written (`vllm bench serve --save-detailed`: serve.py
 * 0.10.2 l.1208-1219 strips it otherwise; the 0.8.3 benchmark_serving.py
 * files of tests/data/bench-public/vllm-* hold it), is each request's
 * prompt length in the order the dataset sampled them (`output.prompt_len
 * for output in outputs`, serve.py 0.10.2 l.641): read as the list's
 * fingerprint only (bench.h prompts_hash). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/bench-private.h"

/* input_lens (above): absent or null leaves the run unlisted; anything but
 * a list of whole non-negative numbers is INVALID naming it. */
static kvp_status prompt_list(const struct kvp_bench_src *s, struct kvp_bench_run *run,
			      struct kvp_error *err)
{
	const struct kvp_node *l = kvp_map_get(s->obj, "input_lens");
	if (!l)
		return KVP_STATUS_OK;
	uint64_t h = 14695981039346656037ULL, first = 0;
	for (size_t i = 0; l->type == KVP_NODE_SEQ && i < l->n; i++) {
		const struct kvp_node *v = l->items[i];
		char *end = NULL;
		unsigned long long x = v->type == KVP_NODE_SCALAR && !v->quoted && v->value &&
				       v->value[0] >= '0' && v->value[0] <= '9'
				       ? strtoull(v->value, &end, 10) : 0;
		if (!end || *end)
			return kvp_node_fail(s->doc, v, err, KVP_STATUS_INVALID, "input_lens",
					     "item %zu: expected a whole number of prompt tokens, "
					     "as %s writes each request's (JSON pointer %s/input_lens/%zu)",
					     i, s->tool, s->ptr ? s->ptr : "", i);
		for (int b = 0; b < 8; b++) {
			h ^= (x >> (8 * b)) & 0xff;
			h *= 1099511628211ULL;
		}
		if (i == 0)
			first = x;
		else if (x != first)
			run->prompts_vary = true;
	}
	if (l->type != KVP_NODE_SEQ)
		return kvp_bench_fail(s, s->obj, "input_lens", err, "expected a list of each "
				      "request's prompt tokens");
	run->prompts_listed = l->n;
	run->prompts_hash = h;
	return KVP_STATUS_OK;
}

kvp_status kvp_bench_vllm_serve(const struct kvp_bench_src *s, struct kvp_bench_run *run,
				struct kvp_error *err)
{
	const struct kvp_node *o = s->obj;
	double completed = 0, in = 0, out = 0, thr = 0, e2el = 0, maxc = 0, ttft = 0, tpot = 0;
	char backend[32];
	kvp_status st;
	if ((st = kvp_bench_str(s, o, "backend", false, backend, sizeof backend, err)))
		return st;
	/* `vllm bench serve` drives other servers too: backend names the
	 * request protocol, and the engine only where it is one
	 * (benchmarks/backend_request_func.py ASYNC_REQUEST_FUNCS); "openai",
	 * "openai-chat" and the rest leave it to --engine */
	snprintf(run->engine, sizeof run->engine, "%s",
		 strcmp(backend, "vllm") == 0 ? "vllm" : strcmp(backend, "sglang") == 0 ? "sglang"
		 : strcmp(backend, "tensorrt-llm") == 0 ? "trtllm" : "");
	if ((st = kvp_bench_str(s, o, "model_id", false, run->model_id, sizeof run->model_id, err)) ||
	    (st = kvp_bench_str(s, o, "date", false, run->date, sizeof run->date, err)) ||
	    (st = kvp_bench_num(s, o, "completed", 1, true, &completed, err)) ||
	    (st = kvp_bench_num(s, o, "total_input_tokens", 1, true, &in, err)) ||
	    (st = kvp_bench_num(s, o, "total_output_tokens", 1, true, &out, err)) ||
	    (st = kvp_bench_num(s, o, "median_ttft_ms", 1e-3, true, &run->m.ttft_s, err)) ||
	    (st = kvp_bench_num(s, o, "median_tpot_ms", 1e-3, true, &run->m.tpot_s, err)) ||
	    (st = kvp_bench_num(s, o, "request_throughput", 1, false, &thr, err)) ||
	    (st = kvp_bench_num(s, o, "mean_e2el_ms", 1e-3, false, &e2el, err)) ||
	    (st = kvp_bench_num(s, o, "max_concurrency", 1, false, &maxc, err)) ||
	    (st = prompt_list(s, run, err)))
		return st;
	if (!(completed >= 1))
		return kvp_bench_fail(s, o, "completed", err, "no request completed: nothing "
				      "was measured");
	run->requests = (uint64_t)completed;
	run->throughput_rps = thr;
	run->prompt_tokens = kvp_bench_per_request(in, completed);
	run->output_tokens = kvp_bench_per_request(out, completed);
	/* no mean_e2el_ms (above): the mean TTFT and TPOT over the mean output */
	if (!(e2el > 0) && !kvp_map_get(o, "mean_e2el_ms")) {
		if ((st = kvp_bench_num(s, o, "mean_ttft_ms", 1e-3, false, &ttft, err)) ||
		    (st = kvp_bench_num(s, o, "mean_tpot_ms", 1e-3, false, &tpot, err)))
			return st;
		if (ttft > 0 && tpot > 0 && out / completed >= 1)
			e2el = ttft + tpot * (out / completed - 1);
	}
	/* request_rate "inf" (the one figure the tool quotes) sends every
	 * request at once (serve.py 0.10.2 get_request l.171-172: a delay of
	 * 0 each), and without max_concurrency no semaphore holds them back
	 * (l.512-520) */
	const struct kvp_node *rate = kvp_map_get(o, "request_rate");
	run->burst = rate && rate->type == KVP_NODE_SCALAR && rate->quoted && rate->value &&
		     strcmp(rate->value, "inf") == 0 && !(maxc >= 1);
	/* the sequences in flight: Little's law over the measured throughput
	 * and end-to-end latency, at most --max-concurrency */
	run->batch = thr * e2el;
	if (maxc >= 1 && (!(run->batch > 0) || run->batch > maxc))
		run->batch = maxc;
	if (!(run->batch > 0))
		return kvp_bench_fail(s, o, "max_concurrency", err, "the requests in flight are "
				      "unknown: the file has neither request_throughput with "
				      "mean_e2el_ms (or mean_ttft_ms and mean_tpot_ms) nor "
				      "max_concurrency");
	if (run->batch < 1)
		run->batch = 1;
	return KVP_STATUS_OK;
}

kvp_status kvp_bench_vllm_latency(const struct kvp_bench_src *s, const struct kvp_bench_given *g,
				  struct kvp_bench_run *run, struct kvp_error *err)
{
	const struct kvp_node *o = s->obj, *pct;
	kvp_status st;
	snprintf(run->engine, sizeof run->engine, "vllm");
	if ((st = kvp_bench_str(s, o, "model_id", false, run->model_id, sizeof run->model_id, err)) ||
	    (st = kvp_bench_num(s, o, "avg_latency", 1, true, &run->m.latency_s, err)) ||
	    (st = kvp_bench_map(s, o, "percentiles", false, &pct, err)))
		return st;
	/* the median iteration where the file has it: warm-up outliers left out */
	if (pct && (st = kvp_bench_num(s, pct, "50", 1, false, &run->m.latency_s, err)))
		return st;
	if (!(run->m.latency_s > 0))
		return kvp_bench_fail(s, o, "avg_latency", err, "expected a positive latency");
	if (!g->batch || !g->prompt_tokens || !g->output_tokens)
		return kvp_bench_fail(s, o, "avg_latency", err, "vllm bench latency records no "
				      "shape: give --batch, --prompt and --output as its "
				      "--batch-size, --input-len and --output-len");
	return KVP_STATUS_OK;
}
