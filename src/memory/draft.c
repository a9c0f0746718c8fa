/* draft.c: speculative decoding's draft (see draft.h): parsing the draft,
 * sizing it as a small model (its own profile, or the EAGLE / MTP head built
 * as a one-layer model of the target's shape), adding it to the target's
 * per-GPU spec, and the expected tokens per step.
 *
 * Stance: the draft's bytes come from the same layer arithmetic as any model
 * (kvp_spec_build); nothing here recomputes KV bytes. */
#include "memory/draft.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/profile.h"
#include "model/shape.h"
#include "base/units.h"
#include "model/spec.h"

#define MAX_K 16

static kvp_status bad_draft(struct kvp_error *err, const char *fmt, const char *arg)
{
	return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "spec-draft", fmt, arg);
}

/* An error of loading or building the draft, said again for --spec-draft:
 * from a copy (formatting err->msg into itself would overlap), keeping the
 * file:line:col of a draft's profile and its field inside the message. */
static kvp_status draft_error(struct kvp_error *err, kvp_status st, const char *what)
{
	if (!err)
		return st;
	struct kvp_error e = *err;
	return kvp_error_set(err, st, e.path[0] ? e.path : NULL, e.line, e.col, "spec-draft",
			     "%s%s%s%s", what, e.field, e.field[0] ? ": " : "", e.msg);
}

static bool parse_k(const char *s, uint32_t *k)
{
	uint64_t v;
	if (kvp_parse_u64(s, &v) || v < 1 || v > MAX_K)
		return false;
	*k = (uint32_t)v;
	return true;
}

/* The first attention kind of the target: the layer a head adds. */
static enum kvp_layer_kind first_attention(const struct kvp_model *m)
{
	for (uint32_t i = 0; i < m->num_layers; i++)
		if (m->layers[i] == KVP_LAYER_FULL || m->layers[i] == KVP_LAYER_MLA ||
		    m->layers[i] == KVP_LAYER_SLIDING || m->layers[i] == KVP_LAYER_CHUNKED)
			return (enum kvp_layer_kind)m->layers[i];
	return KVP_LAYER_FULL;
}

/* A one-layer model of the target's shape holding `params` parameters of
 * which `routed` and `shared` are experts; it runs the target's LM head too. */
static void head_model(const struct kvp_model *t, const char *name, uint64_t params,
		       uint64_t routed, uint64_t shared, uint64_t active, struct kvp_model *out)
{
	*out = *t;
	snprintf(out->name, sizeof out->name, "%s", name);
	out->num_layers = 1;
	memset(out->layers, 0, sizeof out->layers);
	out->layers[0] = (uint8_t)first_attention(t);
	/* the window of a sliding/chunked first layer is the target's */
	out->file_embed_bytes = out->file_dense_bytes = 0;   /* its bytes follow params */
	out->file_shared_bytes = out->file_routed_bytes = 0;
	out->params = params;
	out->expert_params = routed;
	out->shared_expert_params = shared;
	out->active_params = active;
}

kvp_status kvp_speculative_parse(const char *draft, const char *accept,
				 const struct kvp_model *t, struct kvp_speculative *out,
				 struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	if (!draft)
		return KVP_STATUS_OK;
	out->accept_kind = KVP_SPEC_ACCEPT_RATE;
	if (!accept || kvp_parse_double(accept, &out->accept) || !(out->accept >= 0) ||
	    !(out->accept < 1))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "spec-accept",
				     "expected the per-position acceptance rate a (the chance that "
				     "each draft token is accepted once those before it were), in "
				     "[0, 1), e.g. 0.7, got '%s'; vLLM's logged accepted / drafted "
				     "share is --spec-acceptance", accept ? accept : "(none)");
	uint64_t H = t->hidden_size, V = t->vocab_size, lm = H * V;
	const char *colon = strrchr(draft, ':');
	if (strncmp(draft, "eagle:", 6) == 0 || strncmp(draft, "mtp:", 4) == 0) {
		bool eagle = draft[0] == 'e';
		/* K is everything after the first colon: "eagle:4:4" is refused,
		 * not read as its last field */
		if (!parse_k(strchr(draft, ':') + 1, &out->k))
			return bad_draft(err, "'%s': K, the draft tokens per step, is 1 to 16", draft);
		if (eagle) {
			/* one decoder layer of the target's shape + fc 2H x H */
			uint64_t attn = H * t->num_heads * t->head_dim * 2 +
					2 * H * t->num_kv_heads * t->head_dim;
			uint64_t p = attn + 3 * H * t->intermediate_size + 2 * H + 2 * H * H;
			out->kind = KVP_SPECULATIVE_EAGLE;
			head_model(t, "eagle-head", p, 0, 0, p, &out->draft);
			out->head_params = lm;
			out->draft.moe_num_experts = 0;
		} else {
			uint32_t moe = kvp_shape_moe_layers(t);
			if (!moe)
				return bad_draft(err, "'%s': multi-token prediction here is the MoE layer of "
						 "DeepSeek-style models; this model has no routed experts", draft);
			uint64_t routed = t->expert_params / moe, shared = t->shared_expert_params / moe;
			uint64_t emb = V * H * (t->tie_word_embeddings ? 1 : 2);
			uint64_t rest = t->params - t->expert_params - t->shared_expert_params;
			rest = rest > emb ? rest - emb : rest;
			uint64_t dense = rest / t->num_layers + 2 * H * H;   /* + eh_proj */
			uint64_t k = t->moe_experts_per_token ? t->moe_experts_per_token : 1;
			uint64_t active = dense + shared + routed / t->moe_num_experts * k;
			out->head_params = lm;
			out->kind = KVP_SPECULATIVE_MTP;
			head_model(t, "mtp-module", dense + routed + shared, routed, shared, active,
				   &out->draft);
		}
		return KVP_STATUS_OK;
	}
	/* a separate draft model: NAME or NAME:K */
	char name[512];
	out->k = 4;
	snprintf(name, sizeof name, "%s", draft);
	if (colon && parse_k(colon + 1, &out->k))
		name[colon - draft] = '\0';
	kvp_status st = kvp_model_load(name, &out->draft, err);
	if (st)
		return draft_error(err, st, "");
	if (out->draft.vocab_size != t->vocab_size)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "spec-draft",
				     "%s has a vocabulary of %u tokens, %s of %u: a draft must share "
				     "the target's", out->draft.name, out->draft.vocab_size, t->name,
				     t->vocab_size);
	out->kind = KVP_SPECULATIVE_DRAFT;
	return KVP_STATUS_OK;
}

kvp_status kvp_speculative_apply(const struct kvp_speculative *s, struct kvp_spec *spec,
				 struct kvp_error *err)
{
	if (s->kind == KVP_SPECULATIVE_NONE)
		return KVP_STATUS_OK;
	struct kvp_spec *d = malloc(sizeof *d);
	if (!d)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	struct kvp_parallel par = spec->par;
	par.pp = 1;
	par.gpus = 0;
	if (s->kind != KVP_SPECULATIVE_MTP)
		par.ep = 0;
	kvp_status st = kvp_spec_build(&s->draft, par, spec->serving_dtype, spec->kv_dtype, d, err);
	if (st) {
		free(d);
		char what[32];
		snprintf(what, sizeof what, "the draft at tp %u: ", par.tp);
		return draft_error(err, st, what);
	}
	if (spec->num_layers + d->num_layers > KVP_MAX_LAYERS) {
		free(d);
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "spec-draft",
				     "target and draft have more than %d layers", KVP_MAX_LAYERS);
	}
	uint64_t w;
	if (!kvp_add(spec->weights_bytes, d->weights_bytes, &w) ||
	    !kvp_add(spec->token_bytes, d->token_bytes, &spec->token_bytes) ||
	    !kvp_add(spec->seq_bytes, d->seq_bytes, &spec->seq_bytes)) {
		free(d);
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "spec-draft", "too large");
	}
	for (uint32_t i = 0; i < d->num_layers; i++) {
		struct kvp_spec_layer l = d->layers[i];
		l.index = spec->model->num_layers + i;
		spec->layers[spec->num_layers + i] = l;
		spec->count[l.kind]++;
		spec->kind_token_bytes[l.kind] += l.token_bytes;
	}
	spec->num_layers += d->num_layers;
	spec->draft_layers = d->num_layers;
	spec->weights_bytes = w;
	spec->weights_split.draft_bytes = d->weights_bytes;
	spec->weights_split.total_bytes = w;
	free(d);
	return KVP_STATUS_OK;
}

kvp_status kvp_speculative_parse_acceptance(const char *share, struct kvp_speculative *out,
					    struct kvp_error *err)
{
	char buf[64];
	size_t len = share ? strlen(share) : 0;
	double r;
	bool pct = len && share[len - 1] == '%';
	bool ok = share && len < sizeof buf;
	if (ok) {
		memcpy(buf, share, len + 1);
		if (pct)
			buf[len - 1] = '\0';
		ok = !kvp_parse_double(buf, &r);
	}
	if (ok && pct)
		r /= 100;
	if (!ok || !(r >= 0) || !(r <= 1))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "spec-acceptance",
				     "expected accepted / drafted draft tokens, in [0, 1] or 0%% to "
				     "100%% (vLLM's \"Avg Draft acceptance rate\"), got '%s'",
				     share ? share : "(none)");
	out->accept_kind = KVP_SPEC_ACCEPT_SHARE;
	out->accept = r;
	return KVP_STATUS_OK;
}

double kvp_speculative_tokens_per_step(const struct kvp_speculative *s)
{
	if (s->kind == KVP_SPECULATIVE_NONE)
		return 1;
	if (s->accept <= 0)
		return 1;
	/* vLLM: mean acceptance length = 1 + accepted / drafts, and drafted =
	 * drafts x K, so 1 + (accepted / drafted) x K */
	if (s->accept_kind == KVP_SPEC_ACCEPT_SHARE)
		return 1 + s->accept * s->k;
	return (1 - pow(s->accept, s->k + 1.0)) / (1 - s->accept);
}
