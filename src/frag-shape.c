/* frag-shape.c: how one sequence's KV bytes grow with its tokens, for the
 * fragmentation simulator: the model's layer list grouped into at most three
 * classes (every token, sliding window, chunked) plus fixed per-sequence
 * state.  Bytes come from the layer list (model.h), never recomputed here:
 * kvp_frag_seq_bytes equals kvp_spec_seq_bytes for a shape from that spec. */
#include "frag.h"

#include <string.h>

#include "units.h"

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

uint64_t kvp_frag_seq_bytes(const struct kvp_frag_shape *sh, uint64_t n, uint32_t block)
{
	uint64_t total = sh->seq_bytes, t;
	for (uint32_t c = 0; c < sh->nclass; c++)
		if (!kvp_mul(kvp_spec_layer_tokens(&sh->layer[c], n, block), sh->token_bytes[c], &t) ||
		    !kvp_add(total, t, &total))
			return UINT64_MAX;
	return total;
}

