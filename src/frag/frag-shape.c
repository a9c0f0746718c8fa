/* frag-shape.c: how one sequence's KV bytes grow with its tokens, for the
 * fragmentation simulator: the model's layer list grouped into at most three
 * classes (every token, sliding window, chunked) plus fixed per-sequence
 * state.  Bytes come from the layer list (model.h), never recomputed here:
 * kvp_frag_seq_bytes equals kvp_spec_seq_bytes for a shape from that spec. */
#include "frag/frag.h"

#include <string.h>

#include "base/units.h"

/* Class 0 holds the layers that keep every token (full attention and MLA),
 * so that a shared prefix applies to it; then sliding, then chunked. */
kvp_status kvp_frag_shape_from_spec(const struct kvp_spec *s, struct kvp_frag_shape *out,
				    struct kvp_error *err)
{
	static const enum kvp_layer_kind order[] = {KVP_LAYER_FULL, KVP_LAYER_SLIDING,
						    KVP_LAYER_CHUNKED};
	memset(out, 0, sizeof *out);
	for (size_t o = 0; o < sizeof order / sizeof order[0]; o++) {
		uint64_t bytes = s->kind_token_bytes[order[o]];
		if (order[o] == KVP_LAYER_FULL)
			bytes += s->kind_token_bytes[KVP_LAYER_MLA];
		if (!bytes)
			continue;
		const struct kvp_spec_layer *rep = NULL;
		for (uint32_t i = 0; i < s->num_layers && !rep; i++) {
			enum kvp_layer_kind k = s->layers[i].kind;
			if (k == order[o] || (order[o] == KVP_LAYER_FULL && k == KVP_LAYER_MLA))
				rep = &s->layers[i];
		}
		if (!rep)
			continue;
		out->layer[out->nclass] = *rep;
		out->token_bytes[out->nclass] = bytes;
		out->nclass++;
	}
	out->seq_bytes = s->seq_bytes;
	if (!out->nclass && !out->seq_bytes)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "model",
				     "keeps no KV cache on this GPU");
	return KVP_STATUS_OK;
}

bool kvp_frag_shape_vllm(const struct kvp_budget *b, struct kvp_frag_shape *out)
{
	static const enum kvp_layer_kind order[] = {KVP_LAYER_FULL, KVP_LAYER_SLIDING,
						    KVP_LAYER_CHUNKED};
	const struct kvp_spec *s = &b->spec;
	if (b->engine != KVP_ENGINE_VLLM || !b->group_size || b->group[KVP_LAYER_MAMBA].layers ||
	    s->seq_bytes)
		return false;
	uint32_t kinds = 0;
	bool windows = false;
	uint64_t page_token = 0; /* the largest layer's bytes per token */
	for (int k = 0; k < KVP_LAYER_KIND_COUNT; k++)
		kinds += b->group[k].layers > 0;
	for (uint32_t i = 0; i < s->num_layers; i++) {
		const struct kvp_spec_layer *l = &s->layers[i];
		windows = windows || l->kind == KVP_LAYER_SLIDING || l->kind == KVP_LAYER_CHUNKED;
		if (l->token_bytes > page_token)
			page_token = l->token_bytes;
	}
	if (kinds < 2 && !windows)
		return false;
	struct kvp_frag_shape sh;
	memset(&sh, 0, sizeof sh);
	for (size_t o = 0; o < sizeof order / sizeof order[0]; o++) {
		const struct kvp_budget_group *g = &b->group[order[o]];
		if (!g->layers)
			continue;
		/* the kind's window from its first layer; full: every token */
		struct kvp_spec_layer rep = {.kind = KVP_LAYER_FULL};
		for (uint32_t i = 0; i < s->num_layers && order[o] != KVP_LAYER_FULL; i++)
			if (s->layers[i].kind == order[o]) {
				rep = s->layers[i];
				break;
			}
		uint64_t slots, bytes, real = 0;
		if (!kvp_mul(g->groups, b->group_size, &slots) || !kvp_mul(slots, page_token, &bytes))
			return false;
		/* the bytes of the real layers in these groups: a kind that forms no
		 * group of its own (a window with the hybrid manager off, MLA) is
		 * paged with the full layers */
		for (uint32_t i = 0; i < s->num_layers; i++) {
			enum kvp_layer_kind k = s->layers[i].kind;
			if (k == KVP_LAYER_NONE || k == KVP_LAYER_MAMBA)
				continue;
			if (k == KVP_LAYER_MLA || !b->group[k].layers)
				k = KVP_LAYER_FULL;
			if (k == order[o])
				real += s->layers[i].token_bytes;
		}
		sh.layer[sh.nclass] = rep;
		sh.token_bytes[sh.nclass] = bytes;
		sh.used_token_bytes[sh.nclass] = real < bytes ? real : bytes;
		sh.nclass++;
	}
	if (!sh.nclass)
		return false;
	*out = sh;
	return true;
}

void kvp_frag_shape_tokens(struct kvp_frag_shape *out, uint64_t token_bytes)
{
	memset(out, 0, sizeof *out);
	out->nclass = 1;
	out->token_bytes[0] = token_bytes;
	out->layer[0].kind = KVP_LAYER_FULL;
}

uint64_t kvp_frag_token_bytes(const struct kvp_frag_shape *sh)
{
	uint64_t t = 0;
	for (uint32_t c = 0; c < sh->nclass; c++)
		t += sh->token_bytes[c];
	return t;
}

uint64_t kvp_frag_used_bytes(const struct kvp_frag_shape *sh, uint64_t n)
{
	uint64_t total = sh->seq_bytes, t;
	for (uint32_t c = 0; c < sh->nclass; c++) {
		uint64_t ub = sh->used_token_bytes[c] ? sh->used_token_bytes[c] : sh->token_bytes[c];
		if (!kvp_mul(kvp_spec_layer_tokens(&sh->layer[c], n, 1), ub, &t) ||
		    !kvp_add(total, t, &total))
			return UINT64_MAX;
	}
	return total;
}

uint64_t kvp_frag_seq_bytes(const struct kvp_frag_shape *sh, uint64_t n, uint32_t block)
{
	uint64_t total = sh->seq_bytes, t;
	for (uint32_t c = 0; c < sh->nclass; c++)
		if (!kvp_mul(kvp_spec_layer_tokens(&sh->layer[c], n, block), sh->token_bytes[c], &t) ||
		    !kvp_add(total, t, &total))
			return UINT64_MAX;
	return total;
}

