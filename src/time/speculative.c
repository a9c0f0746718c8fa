/* speculative.c: one speculative decode step (see speculative.h): the
 * target's verify pass over K + 1 tokens of every sequence and K draft steps,
 * each a roofline step of step.c, over the KV split between the target's
 * layers and the draft's in the per-GPU spec (draft.c added them). */
#include "time/speculative.h"

#include <string.h>

#include "base/units.h"
#include "model/spec.h"

/* KV of one sequence of n tokens on this GPU: the target's layers and the draft's. */
static bool split_kv(const struct kvp_spec *s, uint64_t n, uint64_t *target, uint64_t *draft)
{
	*target = *draft = 0;
	uint32_t first_draft = s->num_layers - s->draft_layers;
	for (uint32_t i = 0; i < s->num_layers; i++) {
		const struct kvp_spec_layer *l = &s->layers[i];
		uint64_t t, sum = 0;
		uint64_t tokens = kvp_spec_layer_tokens(l, n, 1);
		if (!kvp_mul(tokens, l->token_bytes, &t) || !kvp_add(t, l->seq_bytes, &sum))
			return false;
		uint64_t *acc = i < first_draft ? target : draft;
		if (!kvp_add(*acc, sum, acc))
			return false;
	}
	return true;
}

kvp_status kvp_speculative_decode(const struct kvp_perf_ctx *c, const struct kvp_speculative *s,
				  uint64_t batch, uint64_t context, const struct kvp_perf_step *plain,
				  struct kvp_speculative_step *out, struct kvp_error *err)
{
	const struct kvp_spec *sp = c->spec;
	memset(out, 0, sizeof *out);
	uint64_t tkv, dkv, tkv_b, dkv_b, head_bytes;
	uint32_t pp = sp->par.pp ? sp->par.pp : 1;
	if (!split_kv(sp, context, &tkv, &dkv) || !kvp_mul(tkv, batch, &tkv_b) ||
	    !kvp_mul(dkv, batch, &dkv_b) ||
	    kvp_weights_bytes(s->head_params, sp->serving_dtype, &head_bytes))
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "batch", "KV bytes overflow");
	head_bytes = kvp_cdiv(head_bytes, sp->par.tp);
	uint64_t draft_w = sp->weights_split.draft_bytes;
	uint64_t per_stage = plain->weights_bytes / pp;
	uint64_t verify_w = per_stage > draft_w ? per_stage - draft_w : 0;
	double k1 = s->k + 1.0, b = (double)batch;
	kvp_status st;
	/* verify: the target's weights and KV, K + 1 tokens of every sequence */
	if ((st = kvp_perf_step_roofline(c, b * k1 * kvp_perf_decode_flops(c->model, context),
					 c->hw.prefill_flops_efficiency, verify_w, tkv_b,
					 c->hw.decode_bw_efficiency, b * k1, &out->verify, err)))
		return st;
	/* one draft step: its weights, the LM head it borrows, its KV; the
	 * all-reduces of its own layers (an EAGLE head's one, not the target's L) */
	double dflops = b * (kvp_perf_decode_flops(&s->draft, context) + 2.0 * (double)s->head_params);
	if ((st = kvp_perf_step_roofline_of(c, &s->draft, dflops, c->hw.prefill_flops_efficiency,
					 draft_w + head_bytes, dkv_b, c->hw.decode_bw_efficiency, b,
					 &out->draft, err)))
		return st;
	out->tokens_per_step = kvp_speculative_tokens_per_step(s);
	out->step_s = out->verify.time_s + s->k * out->draft.time_s;
	out->tpot_s = out->step_s / out->tokens_per_step;
	return KVP_STATUS_OK;
}
