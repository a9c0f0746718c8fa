/* perf.c: `kvplan perf` (see perf.h): the budget at prompt + output for each
 * batch, the step costs of step.c composed into rows (prefill, decode, the
 * chunked TTFT, offload, speculative decoding), prefix reuse, and the rows as
 * records.  No step arithmetic of its own. */
#include "time/perf.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/shape.h"
#include "time/speculative.h"
#include "time/step-prefix.h"
#include "base/units.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------ held context */

/* o (p + (o - 1) / 2) and o for one request, its lengths capped as
 * kvp_workload_sample caps them. */
static void held_add(const struct kvp_workload *w, uint64_t p, uint64_t o, double weight,
		     double *num, double *den)
{
	if (w->max_len) {
		if (p > w->max_len)
			p = w->max_len;
		if (o > w->max_len - p)
			o = w->max_len - p;
	}
	double dp = (double)p, dout = (double)o;
	*num += weight * dout * (dp + (dout - 1) / 2);
	*den += weight * dout;
}

/* The values of a fixed or empirical distribution, or false. */
static bool dist_values(const struct kvp_dist *d, const uint64_t **v, size_t *n, uint64_t *one)
{
	if (d->kind == KVP_DIST_FIXED) {
		*one = (uint64_t)d->a;
		*v = one;
		*n = 1;
		return true;
	}
	if (d->kind == KVP_DIST_EMPIRICAL && d->values && d->n) {
		*v = d->values;
		*n = d->n;
		return true;
	}
	return false;
}

double kvp_perf_held_context(const struct kvp_workload *w)
{
	double num = 0, den = 0;
	const uint64_t *pv, *ov;
	size_t pn, on;
	uint64_t p1, o1;
	if (w->paired && w->prompt.values && w->prompt.n && w->prompt.n == w->output.n) {
		for (size_t i = 0; i < w->prompt.n; i++)
			held_add(w, w->prompt.values[i], w->output.values[i], 1, &num, &den);
	} else if (dist_values(&w->prompt, &pv, &pn, &p1) && dist_values(&w->output, &ov, &on, &o1) &&
		   (double)pn * (double)on <= 1048576) {
		for (size_t i = 0; i < pn; i++)
			for (size_t j = 0; j < on; j++)
				held_add(w, pv[i], ov[j], 1, &num, &den);
	} else {
		struct kvp_rng rng;
		kvp_rng_seed(&rng, 1);
		for (size_t i = 0; i < 65536; i++) {
			uint64_t p, o;
			kvp_workload_sample(w, &rng, &p, &o);
			held_add(w, p, o, 1, &num, &den);
		}
	}
	return den > 0 ? num / den : 0;
}

/* --------------------------------------------------------------- runs */

kvp_status kvp_perf_run(const struct kvp_model *m, const struct kvp_gpu *g,
			const struct kvp_budget_opts *o, const struct kvp_perf_hw *hw,
			const struct kvp_perf_opts *po, struct kvp_perf_result *out,
			struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	if (!po->prompt || !po->output || !po->nbatch || po->nbatch > KVP_PERF_MAX_BATCHES)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, NULL,
				     "perf needs prompt > 0, output > 0 and 1 to %d batches",
				     KVP_PERF_MAX_BATCHES);
	out->model = m;
	snprintf(out->gpu, sizeof out->gpu, "%s", g->name);
	out->opts = *po;
	out->hw = *hw;
	const struct kvp_offload *off = &po->offload;
	uint64_t prompt = po->prompt, total;
	if (!kvp_add(prompt, po->output, &total) || prompt > UINT64_MAX / 2)
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "prompt",
				     "%llu + %llu output tokens overflow the token count",
				     (unsigned long long)prompt, (unsigned long long)po->output);
	out->decode_context = prompt + (po->output - 1) / 2;
	out->all_fit = true;
	struct kvp_budget *b = &out->budget;
	struct kvp_perf_ctx *pc = &out->ctx;
	kvp_status st;
	/* the engine's profile, read with the first batch's budget and lent to
	 * the others (it does not depend on the batch; vllm.yaml read once a
	 * batch was a millisecond of each answer) */
	struct kvp_engine_model em;
	bool have_em = false;
	for (size_t i = 0; i < po->nbatch; i++) {
		struct kvp_perf_row *r = &out->rows[i];
		struct kvp_budget_opts bo = *o;
		if (have_em)
			bo.engine_model = &em;
		/* with data-parallel attention the batch is the deployment's, spread
		 * over the DP ranks; the fullest rank paces every step */
		uint32_t dp = kvp_shape_dp(&o->par);
		bo.context = total;
		bo.batch = kvp_cdiv(po->batches[i], dp);
		if ((st = kvp_budget_compute(m, g, &bo, b, err)))
			return st;
		if (!have_em && o->engine != KVP_ENGINE_GENERIC) {
			em = b->engine_model;
			have_em = true;
		}
		/* the engine's fixed costs and band beside the GPU's figures */
		out->hw = *hw;
		kvp_perf_hw_engine(&out->hw, &b->engine_model);
		/* with pipeline parallelism the engine keeps pp micro-batches in
		 * flight (vLLM: max_concurrent_batches = pp_size, v1/executor/
		 * multiproc_executor.py): each stage works on one while the others
		 * move on, so a sequence's token crosses the pp stages in turn at the
		 * pace of a micro-batch of ceil(B / pp) sequences, and the B
		 * sequences each make a token in that time */
		uint32_t pp = b->spec.par.pp ? b->spec.par.pp : 1;
		uint64_t micro = kvp_cdiv(bo.batch, pp), micro_total = kvp_cdiv(po->batches[i], pp);
		if (micro_total < micro)
			micro_total = micro;
		if (micro_total > micro * dp)
			micro_total = micro * dp;
		if ((st = kvp_perf_init(pc, &b->spec, b->weights_bytes, &out->hw, err)) ||
		    (st = kvp_perf_prefill_dp(pc, bo.batch, po->batches[i], prompt, &r->prefill,
					      err)) ||
		    (st = kvp_perf_decode_step_dp(pc, micro, micro_total, out->decode_context,
						  &r->decode, err)) ||
		    (st = kvp_perf_chunked_ttft_dp(pc, bo.batch, po->batches[i], prompt,
						   out->decode_context, b->max_batched_tokens,
						   &r->chunked, err)))
			return st;
		/* a band widened where the MoE table has no curve (kvp_perf_init) */
		out->hw.time_ratio_low = pc->hw.time_ratio_low;
		out->hw.time_ratio_high = pc->hw.time_ratio_high;
		out->max_batch = kvp_mul(b->max_sequences, dp, &out->max_batch) ? out->max_batch
									      : UINT64_MAX;
		r->batch = po->batches[i];
		r->rank_batch = bo.batch;
		r->micro_batches = bo.batch < pp ? bo.batch : pp;
		r->micro_batch = micro;
		r->dp_balance = (double)r->batch / ((double)dp * (double)bo.batch);
		r->kv_bytes = b->kv_bytes;
		r->fits = b->fits;
		r->tpot_s = r->decode.time_s;
		r->ttft_s = r->prefill.time_s;
		if (off->tier != KVP_OFFLOAD_NONE && b->weights_fit) {
			/* the KV of one stage, less what the pool keeps (or the share asked) */
			uint64_t stage_kv = r->decode.kv_bytes / b->spec.par.pp, x;
			if (off->fraction >= 0)
				x = (uint64_t)ceil(off->fraction * (double)stage_kv);
			else
				x = stage_kv > b->kv_pool_bytes ? stage_kv - b->kv_pool_bytes : 0;
			kvp_perf_offload_step(pc, &r->decode, x * b->spec.par.pp, &off->link, &r->off);
			/* the TTFTs move what does not stay on the GPU too: the batch's
			 * prompts write their KV out once (layer-pipelined), a chunked
			 * prompt's steps read the decodes' and its own chunks' KV */
			uint64_t pre_kv = r->prefill.kv_bytes / b->spec.par.pp, y;
			if (off->fraction >= 0)
				y = (uint64_t)ceil(fmin(off->fraction, 1.0) * (double)pre_kv);
			else
				y = pre_kv > b->kv_pool_bytes ? pre_kv - b->kv_pool_bytes : 0;
			kvp_perf_offload_step(pc, &r->prefill, y * b->spec.par.pp, &off->link,
					      &r->prefill_off);
			r->ttft_s = r->prefill_off.pipelined_s;
			if ((st = kvp_perf_chunked_offload(pc, bo.batch, prompt, out->decode_context,
							   off->fraction, b->kv_pool_bytes, &off->link,
							   &r->chunked, err)))
				return st;
			r->offload = true;
			r->tpot_s = r->off.pipelined_s;
			r->fits = true;
		}
		if (o->speculative && o->speculative->kind != KVP_SPECULATIVE_NONE &&
		    off->tier == KVP_OFFLOAD_NONE) {
			struct kvp_speculative_step ss;
			if ((st = kvp_speculative_decode(pc, o->speculative, bo.batch,
							 out->decode_context, &r->decode, &ss, err)))
				return st;
			r->speculative = true;
			r->tokens_per_step = ss.tokens_per_step;
			r->verify_s = ss.verify.time_s;
			r->draft_s = ss.draft.time_s;
			r->tpot_s = ss.tpot_s;
		}
		/* each request's latency outside the GPU's steps (step.h
		 * request_latency_s): once on its first token, and so on its end
		 * to end and the throughput of B at a time; never on a step */
		r->ttft_s = kvp_perf_request_s(&pc->hw, r->ttft_s);
		if (isfinite(r->chunked.ttft_s))
			r->chunked.ttft_s = kvp_perf_request_s(&pc->hw, r->chunked.ttft_s);
		/* what one printed line says must not contradict another: a TTFT
		 * never below the GPU's own step it is built on, TPOT likewise
		 * (offload only adds; speculative decoding may go below) */
		double k_steps = (double)r->chunked.steps;
		if (r->ttft_s < r->prefill.time_s * (1 - 1e-12) ||
		    (isfinite(r->chunked.ttft_s) &&
		     r->chunked.ttft_s < k_steps * r->chunked.step_s * (1 - 1e-12)) ||
		    (!r->speculative && r->tpot_s < r->decode.time_s * (1 - 1e-12)))
			return kvp_error_set(err, KVP_STATUS_INTERNAL, NULL, 0, 0, "perf",
					     "a consistency check failed (a bug): batch %llu: TTFT "
					     "%g s against its prefill %g s, chunked %g s against %g "
					     "steps of %g s, TPOT %g s against its step %g s",
					     (unsigned long long)r->batch, r->ttft_s, r->prefill.time_s,
					     r->chunked.ttft_s, k_steps, r->chunked.step_s, r->tpot_s,
					     r->decode.time_s);
		r->tokens_per_s = (double)r->batch / r->tpot_s;
		/* a static batch end to end, as benchmark_latency and trtllm-bench
		 * time it: the B prompts in one pass, then output - 1 steps */
		r->e2e_s = r->ttft_s + (double)(po->output - 1) * r->tpot_s;
		r->output_tokens_per_s = (double)r->batch * (double)po->output / r->e2e_s;
		r->total_tokens_per_s = (double)r->batch * (double)(po->output + prompt) / r->e2e_s;
		/* at a steady concurrency of B under continuous batching the other
		 * B - 1 requests each arrive once over a request's output - 1
		 * steps, and their prompts' compute rides in those steps (the
		 * weights are read anyway): each step carries (B - 1) / (output -
		 * 1) of a prompt's prefill compute (one prompt's share of the
		 * batch's); equal to tpot_s at B = 1 */
		double pre1 = r->prefill.compute_s / (double)bo.batch;
		r->tpot_loaded_s = r->tpot_s + (po->output > 1 ? (double)(bo.batch - 1) * pre1 /
								     (double)(po->output - 1)
							   : 0);
		out->all_fit = out->all_fit && r->fits;
		out->nrows++;
	}
	kvp_spec_seq_bytes(&b->spec, prompt, 1, &out->kv_1x_bytes);
	kvp_spec_seq_bytes(&b->spec, 2 * prompt, 1, &out->kv_2x_bytes);
	out->attention_1x_flops = kvp_perf_attention_flops(m, prompt);
	out->attention_2x_flops = kvp_perf_attention_flops(m, 2 * prompt);
	out->prefix_link = off->tier != KVP_OFFLOAD_NONE ? off->link : hw->host_link;
	if (!out->opts.prefix)
		out->opts.prefix = prompt;
	uint64_t p = out->opts.prefix, prefix_bytes;
	/* a prefix whose KV bytes overflow has no reload time: an error, not a
	 * reload that never ends (every p <= this one fits, so the search does) */
	if (kvp_spec_seq_bytes(&b->spec, p, 1, &prefix_bytes))
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "prefix",
				     "the KV bytes of %llu tokens overflow", (unsigned long long)p);
	out->prefix_reload_s = kvp_perf_prefix_reload_s(pc, p, &out->prefix_link);
	out->prefix_recompute_s = kvp_perf_prefix_recompute_s(pc, p);
	out->prefix_limit = m->max_context > p ? m->max_context : p;
	out->prefix_breakeven = kvp_perf_prefix_breakeven(pc, &out->prefix_link, out->prefix_limit);
	out->gpus = kvp_shape_gpus(&b->spec.par);
	return KVP_STATUS_OK;
}

struct kvp_record *kvp_perf_row_to_record(const struct kvp_perf_result *run, size_t i)
{
	const struct kvp_perf_row *r = &run->rows[i];
	struct kvp_record *x = kvp_record_new();
	if (!x)
		return NULL;
	bool ok = kvp_record_u64(x, "batch", r->batch) &&
		  kvp_record_f64(x, "prefill_flops", r->prefill.flops) &&
		  kvp_record_f64(x, "prefill_s", fmax(r->prefill.compute_s, r->prefill.memory_s)) &&
		  kvp_record_str(x, "prefill_bound", kvp_perf_bound_name(r->prefill.bound)) &&
		  kvp_record_f64(x, "ttft_s", r->ttft_s) &&
		  (isfinite(r->chunked.ttft_s) ? kvp_record_f64(x, "ttft_chunked_s", r->chunked.ttft_s)
					       : kvp_record_null(x, "ttft_chunked_s")) &&
		  kvp_record_u64(x, "prefill_chunk_tokens", r->chunked.chunk_tokens) &&
		  kvp_record_u64(x, "prefill_chunk_steps", r->chunked.steps) &&
		  kvp_record_u64(x, "decode_bytes_per_step", r->decode.bytes) &&
		  kvp_record_u64(x, "decode_weights_bytes_per_step", r->decode.weights_bytes) &&
		  kvp_record_u64(x, "decode_kv_bytes_per_step", r->decode.kv_bytes) &&
		  kvp_record_f64(x, "decode_flops_per_step", r->decode.flops) &&
		  kvp_record_f64(x, "decode_compute_s", r->decode.compute_s) &&
		  kvp_record_f64(x, "decode_memory_s", r->decode.memory_s) &&
		  kvp_record_f64(x, "comm_s_per_step", r->decode.comm_s) &&
		  kvp_record_f64(x, "moe_comm_s_per_step", r->decode.moe_comm_s) &&
		  kvp_record_u64(x, "rank_batch", r->rank_batch) &&
		  kvp_record_f64(x, "dp_balance", r->dp_balance) &&
		  kvp_record_f64(x, "decode_fixed_s", r->decode.fixed_s) &&
		  kvp_record_f64(x, "prefill_fixed_s", r->prefill.fixed_s) &&
		  kvp_record_u64(x, "pp_micro_batches", r->micro_batches) &&
		  kvp_record_f64(x, "tpot_s", r->tpot_s) &&
		  kvp_record_f64(x, "tpot_s_low", r->tpot_s * run->hw.time_ratio_low) &&
		  kvp_record_f64(x, "tpot_s_high", r->tpot_s * run->hw.time_ratio_high) &&
		  kvp_record_f64(x, "ttft_s_low", r->ttft_s * run->hw.time_ratio_low) &&
		  kvp_record_f64(x, "ttft_s_high", r->ttft_s * run->hw.time_ratio_high) &&
		  kvp_record_f64(x, "tpot_loaded_s", r->tpot_loaded_s) &&
		  kvp_record_f64(x, "e2e_s", r->e2e_s) &&
		  kvp_record_f64(x, "decode_tokens_per_s", r->tokens_per_s) &&
		  kvp_record_f64(x, "output_tokens_per_s", r->output_tokens_per_s) &&
		  kvp_record_f64(x, "output_tokens_per_s_low",
				 r->output_tokens_per_s / run->hw.time_ratio_high) &&
		  kvp_record_f64(x, "output_tokens_per_s_high",
				 r->output_tokens_per_s / run->hw.time_ratio_low) &&
		  kvp_record_f64(x, "total_tokens_per_s", r->total_tokens_per_s) &&
		  kvp_record_str(x, "bound", kvp_perf_bound_name(r->decode.bound)) &&
		  kvp_record_u64(x, "kv_bytes", r->kv_bytes) &&
		  kvp_record_bool(x, "fits", r->fits);
	/* the offload fields are always there (null without --kv-offload) so
	 * that CSV keeps its columns whatever the options */
	if (ok && r->speculative)
		ok = kvp_record_f64(x, "spec_tokens_per_step", r->tokens_per_step) &&
		     kvp_record_f64(x, "spec_verify_s", r->verify_s) &&
		     kvp_record_f64(x, "spec_draft_s", r->draft_s);
	else if (ok)
		ok = kvp_record_null(x, "spec_tokens_per_step") && kvp_record_null(x, "spec_verify_s") &&
		     kvp_record_null(x, "spec_draft_s");
	if (ok && r->offload)
		ok = kvp_record_u64(x, "transfer_bytes_per_step", r->off.transfer_bytes) &&
		     kvp_record_f64(x, "transfer_s_per_step", r->off.transfer_s) &&
		     kvp_record_f64(x, "tpot_serial_s", r->off.serial_s) &&
		     kvp_record_str(x, "offload_bound", r->off.transfer_bound ? "transfer" : "compute");
	else if (ok)
		ok = kvp_record_null(x, "transfer_bytes_per_step") &&
		     kvp_record_null(x, "transfer_s_per_step") && kvp_record_null(x, "tpot_serial_s") &&
		     kvp_record_null(x, "offload_bound");
	ok = ok && kvp_record_f64(x, "output_tokens_per_s_per_gpu",
				  r->output_tokens_per_s / run->gpus) &&
	     kvp_record_f64(x, "decode_eager_s", r->decode.eager_s) &&
	     kvp_record_f64(x, "prefill_eager_s", r->prefill.eager_s);
	/* the routed experts timed from the measured MoE table (step.h moe_s),
	 * inside tpot_s and ttft_s; 0 where the roofline holds them */
	ok = ok && kvp_record_f64(x, "decode_moe_s", r->decode.moe_s) &&
	     kvp_record_f64(x, "prefill_moe_s", r->prefill.moe_s);
	if (!ok) {
		kvp_record_free(x);
		return NULL;
	}
	return x;
}

kvp_status kvp_perf_check_finite(const struct kvp_perf_result *run, struct kvp_error *err)
{
	for (size_t i = 0; i < run->nrows; i++) {
		const struct kvp_perf_row *r = &run->rows[i];
		const struct {
			const char *name;
			double v;
		} f[] = {{"prefill_s", r->prefill.time_s}, {"prefill_flops", r->prefill.flops},
			 {"decode_compute_s", r->decode.compute_s},
			 {"decode_memory_s", r->decode.memory_s},
			 {"decode_flops_per_step", r->decode.flops}};
		for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
			if (isinf(f[k].v))
				return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, f[k].name,
						     "batch %llu: %s: overflows to infinity (an input "
						     "too large or too small for double arithmetic)",
						     (unsigned long long)r->batch, f[k].name);
	}
	return KVP_STATUS_OK;
}

bool kvp_perf_to_record(const struct kvp_perf_result *run, struct kvp_record *r)
{
	const struct kvp_budget *b = &run->budget;
	const struct kvp_perf_hw *hw = &run->hw;
	const struct kvp_offload *off = &run->opts.offload;
	bool ok = kvp_record_str(r, "model", run->model->name) && kvp_record_str(r, "gpu", run->gpu) &&
		  kvp_record_str(r, "engine", kvp_engine_name(b->engine)) &&
		  kvp_record_str(r, "engine_version", b->engine_model.version) &&
		  kvp_record_u64(r, "tp", b->spec.par.tp) && kvp_record_u64(r, "pp", b->spec.par.pp) &&
		  kvp_record_str(r, "dtype", kvp_dtype_name(b->spec.serving_dtype)) &&
		  kvp_record_str(r, "kv_dtype", kvp_dtype_name(b->spec.kv_dtype)) &&
		  kvp_record_u64(r, "prompt", run->opts.prompt) &&
		  kvp_record_u64(r, "output", run->opts.output) &&
		  kvp_record_u64(r, "decode_context", run->decode_context) &&
		  kvp_record_f64(r, "bandwidth_bps", hw->bandwidth_bps) &&
		  kvp_record_f64(r, "decode_bw_efficiency", hw->decode_bw_efficiency) &&
		  kvp_record_f64(r, "peak_flops", hw->flops) &&
		  kvp_record_f64(r, "prefill_flops_efficiency", hw->prefill_flops_efficiency) &&
		  kvp_record_f64(r, "step_fixed_s", hw->step_fixed_s) &&
		  kvp_record_f64(r, "moe_align_s", run->ctx.hw.moe_align_s) &&
		  kvp_record_f64(r, "prefill_pass_fixed_s", hw->prefill_fixed_s) &&
		  kvp_record_f64(r, "seq_step_s", hw->seq_step_s) &&
		  kvp_record_f64(r, "allreduce_latency_s", hw->allreduce_latency_s) &&
		  kvp_record_f64(r, "kv_bw_efficiency", hw->kv_bw_efficiency > 0
								 ? hw->kv_bw_efficiency
								 : hw->decode_bw_efficiency) &&
		  kvp_record_str(r, "time_source", hw->time_source) &&
		  kvp_record_f64(r, "time_ratio_low", hw->time_ratio_low) &&
		  kvp_record_f64(r, "time_ratio_high", hw->time_ratio_high) &&
		  kvp_record_u64(r, "dp", kvp_shape_dp(&b->spec.par)) &&
		  kvp_record_u64(r, "ep", kvp_shape_ep(&b->spec.par)) &&
		  kvp_record_u64(r, "gpus", run->gpus) &&
		  kvp_record_str(r, "moe_link", run->ctx.moe_link.name) &&
		  kvp_record_f64(r, "moe_link_bps", run->ctx.moe_link.effective_bps) &&
		  kvp_record_str(r, "tp_link", run->ctx.tp_link.name) &&
		  kvp_record_f64(r, "tp_link_bps", run->ctx.tp_link.effective_bps) &&
		  kvp_record_u64(r, "weights_bytes", b->weights_bytes) &&
		  kvp_record_u64(r, "kv_bytes_per_token", b->spec.token_bytes) &&
		  kvp_record_u64(r, "max_batch", run->max_batch) &&
		  kvp_record_f64(r, "prefill_attention_flops", run->attention_1x_flops) &&
		  kvp_record_f64(r, "kv_ratio_2x_context",
				 (double)run->kv_2x_bytes / (double)run->kv_1x_bytes) &&
		  kvp_record_f64(r, "attention_flops_ratio_2x_context",
				 run->attention_2x_flops / run->attention_1x_flops) &&
		  kvp_record_u64(r, "prefix_tokens", run->opts.prefix) &&
		  kvp_record_str(r, "prefix_link", run->prefix_link.name) &&
		  kvp_record_f64(r, "prefix_reload_s", run->prefix_reload_s) &&
		  kvp_record_f64(r, "prefix_recompute_s", run->prefix_recompute_s) &&
		  kvp_record_u64(r, "prefix_breakeven_tokens", run->prefix_breakeven);
	if (ok)
		ok = (run->opts.calibration ? kvp_record_str(r, "calibration", run->opts.calibration)
					    : kvp_record_null(r, "calibration")) &&
		     (run->opts.calibration_kernel
		      ? kvp_record_str(r, "calibration_kernel", run->opts.calibration_kernel)
		      : kvp_record_null(r, "calibration_kernel"));
	if (ok && off->tier != KVP_OFFLOAD_NONE)
		ok = kvp_record_str(r, "offload", off->tier == KVP_OFFLOAD_CPU ? "cpu" : "disk") &&
		     kvp_record_str(r, "offload_link", off->link.name) &&
		     kvp_record_f64(r, "offload_link_bps", off->link.effective_bps);
	else if (ok)
		ok = kvp_record_str(r, "offload", "none") && kvp_record_null(r, "offload_link") &&
		     kvp_record_null(r, "offload_link_bps");
	if (ok) {
		/* the measured GEMM table the prefill's linear layers are timed
		 * with (step.h), by its file name; null: none */
		const char *g = strrchr(hw->gemm.path, '/');
		g = g ? g + 1 : hw->gemm.path;
		ok = hw->gemm.nm ? kvp_record_str(r, "gemm_table", g) : kvp_record_null(r, "gemm_table");
	}
	if (ok) {
		/* the engine's eager attention (step.h kvp_perf_eager_s): the
		 * host launches of one pass and the cost of each */
		double launches = kvp_perf_eager_launches(&run->ctx);
		ok = kvp_record_f64(r, "eager_launch_s", hw->eager_launch_s) &&
		     kvp_record_u64(r, "eager_launches_per_pass",
				    hw->eager_launch_s > 0 ? (uint64_t)launches : 0) &&
		     kvp_record_bool(r, "decode_full_graph", hw->decode_full_graph) &&
		     kvp_record_u64(r, "graph_max_tokens", hw->graph_max_tokens) &&
		     kvp_record_f64(r, "uncaptured_launch_s", hw->uncaptured_launch_s) &&
		     kvp_record_u64(r, "uncaptured_launches_per_pass",
				    hw->uncaptured_launch_s > 0
					    ? (uint64_t)run->ctx.uncaptured_launches
					    : 0) &&
		     kvp_record_f64(r, "decode_bw_scale", hw->decode_bw_scale) &&
		     kvp_record_f64(r, "prefill_flops_scale",
				    hw->prefill_flops_scale > 0 ? hw->prefill_flops_scale : 1);
	}
	if (ok) {
		/* the measured MoE table the routed experts are timed with, by
		 * its file name; null: none (the roofline holds them) */
		const char *g = strrchr(hw->moe.path, '/');
		g = g ? g + 1 : hw->moe.path;
		ok = run->ctx.moe_curve.n ? kvp_record_str(r, "moe_table", g)
					  : kvp_record_null(r, "moe_table");
	}
	for (size_t i = 0; ok && i < run->nrows; i++) {
		struct kvp_record *x = kvp_perf_row_to_record(run, i);
		/* kvp_record_push owns x, even when it fails */
		ok = x && kvp_record_push(r, "rows", x);
	}
	return ok;
}
