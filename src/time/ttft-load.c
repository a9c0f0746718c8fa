/* ttft-load.c: a first token under load by the engine's scheduler, and the
 * queue's wait (ttft-load.h). */
#include "time/ttft-load.h"

#include <string.h>

#include "base/units.h"
#include "model/shape.h"

kvp_status kvp_perf_loaded_ttft(const struct kvp_perf_ctx *c, const struct kvp_engine_model *e,
				uint64_t batch, uint64_t total, uint64_t n, uint64_t context,
				uint64_t max_batched_tokens, double arrival_rps,
				struct kvp_perf_loaded *out, struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	if (!e || !e->prefill_alone) {
		kvp_status st = kvp_perf_chunked_ttft_dp(c, batch, total, n, context,
							 max_batched_tokens, &out->chunked, err);
		/* the request's latency outside the steps (step.h
		 * request_latency_s): once, after the GPU's part */
		out->ttft_s = kvp_perf_request_s(&c->hw, out->chunked.ttft_s);
		out->request_s = kvp_perf_request_s(&c->hw, 0);
		return st;
	}
	if (batch == 0 || n == 0)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, !batch ? "batch" : "prompt",
				     "must be at least 1");
	out->prefill_alone = true;
	out->wait_steps = e->overlap_schedule ? 1.5 : 0.5;
	struct kvp_perf_step pre, dec = {0};
	kvp_status st = kvp_perf_prefill_dp(c, 1, 1, n, &pre, err);
	if (st)
		return st;
	/* the deployment's other total - 1 sequences, as many as dp ranks of
	 * batch - 1 hold at most (kvp_perf_chunked_ttft_dp's count) */
	uint64_t others = batch - 1, dp = kvp_shape_dp(&c->spec->par), most;
	uint64_t dec_total = total > batch ? total - 1 : others;
	if (!kvp_mul(others, dp, &most))
		most = UINT64_MAX;
	dec_total = dec_total < others ? others : dec_total > most ? most : dec_total;
	if (others && (st = kvp_perf_decode_step_dp(c, others, dec_total, context, &dec, err)))
		return st;
	out->prefill_s = pre.time_s;
	out->decode_s = others ? dec.time_s : 0;
	out->batch_prompts = 1;
	/* the prompts that arrived in the same step prefill with it, as many
	 * as the step's token budget takes */
	double extra = arrival_rps > 0 ? arrival_rps * out->decode_s : 0;
	if (max_batched_tokens && extra > (double)max_batched_tokens / (double)n - 1)
		extra = (double)max_batched_tokens / (double)n - 1;
	if (extra > 0) {
		struct kvp_perf_step two;
		if ((st = kvp_perf_prefill_dp(c, 2, 2, n, &two, err)))
			return st;
		out->batch_prompts = 1 + extra;
		out->prefill_s += extra * (two.time_s - pre.time_s);
	}
	double gpu_s = out->prefill_s + out->wait_steps * out->decode_s;
	out->ttft_s = kvp_perf_request_s(&c->hw, gpu_s);
	out->request_s = kvp_perf_request_s(&c->hw, 0);
	return KVP_STATUS_OK;
}

double kvp_perf_queue_wait_s(double queued, double running, double ttft_s, double tpot_s,
			     uint64_t output)
{
	if (!(queued > 0) || !(running > 0))
		return 0;
	double e2e = ttft_s + (output > 1 ? (double)(output - 1) : 0) * tpot_s;
	return queued * e2e / running;
}
