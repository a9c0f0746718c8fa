/* hf-layers.c: which kind each layer of a config.json model is.
 *
 * Full attention, sliding window, chunked local attention, NoPE, Mamba or
 * linear attention (Gated DeltaNet), per family as vLLM and transformers
 * assign them (architectures.md sections 2 and 6): layer_types when the file
 * lists them, else the family's pattern (Gemma 2/3, Cohere 2, gpt-oss, Qwen's
 * use_sliding_window and max_window_layers, Jamba's attention period,
 * Llama 4's no_rope_layers).  A sliding window is never assumed where the
 * file does not turn it on: a wrong guess would shrink the KV cache. */
#include "read/hf-private.h"

#include <stdint.h>
#include <string.h>

/* ------------------------------------------------------------ layers */

/* Linear-attention layers (Qwen3-Next's Gated DeltaNet): their state shape
 * from linear_num_key_heads, linear_num_value_heads, linear_key_head_dim,
 * linear_value_head_dim, linear_conv_kernel_dim; mamba_ssm_dtype, when
 * given, the recurrent state's format. */
static kvp_status linear_state(struct hf *h, struct kvp_model *m)
{
	static const char *const keys[] = {"linear_num_key_heads", "linear_num_value_heads",
					   "linear_key_head_dim", "linear_value_head_dim",
					   "linear_conv_kernel_dim"};
	uint32_t *slots[] = {&m->linear_num_key_heads, &m->linear_num_value_heads,
			     &m->linear_key_dim, &m->linear_value_dim, &m->linear_conv_kernel};
	kvp_status st;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		bool found = false;
		if ((st = hf_opt_uint(h, h->cfg, keys[i], true, slots[i], &found)))
			return st;
		if (!found)
			return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID, keys[i],
					     "required for linear-attention layers");
	}
	const struct kvp_node *dt = kvp_map_get(h->cfg, "mamba_ssm_dtype");
	if (dt && dt->type == KVP_NODE_SCALAR &&
	    (!kvp_dtype_parse(dt->value, &m->linear_state_dtype) ||
	     !kvp_dtype_info(m->linear_state_dtype)->weights_ok))
		return kvp_node_fail(h->doc, dt, h->err, KVP_STATUS_INVALID, "mamba_ssm_dtype",
				     "unknown dtype '%s'", dt->value);
	return KVP_STATUS_OK;
}

static kvp_status layer_kind_from_string(struct hf *h, const struct kvp_node *item,
					 const char *field, uint8_t *kind)
{
	static const struct {
		const char *name;
		enum kvp_layer_kind kind;
	} names[] = {
		{"full_attention", KVP_LAYER_FULL},
		{"sliding_attention", KVP_LAYER_SLIDING},
		{"chunked_attention", KVP_LAYER_CHUNKED},
		{"linear_attention", KVP_LAYER_MAMBA},
		{"attention", KVP_LAYER_FULL},  /* layers_block_type (Jamba-style) */
		{"mamba", KVP_LAYER_MAMBA},
	};
	if (item->type != KVP_NODE_SCALAR || !item->quoted)
		return kvp_node_fail(h->doc, item, h->err, KVP_STATUS_INVALID, field,
				     "expected a layer type string such as \"full_attention\"");
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(item->value, names[i].name) == 0) {
			*kind = (uint8_t)names[i].kind;
			return KVP_STATUS_OK;
		}
	return kvp_node_fail(h->doc, item, h->err, KVP_STATUS_INVALID, field,
			     "unknown layer type \"%s\" (expected full_attention, sliding_attention, "
			     "chunked_attention or linear_attention)", item->value);
}

/* A list of one entry per layer. */
static kvp_status layer_list(struct hf *h, const struct kvp_node *list, const char *field,
			     uint32_t L)
{
	kvp_status st = kvp_node_expect(h->doc, list, field, KVP_NODE_SEQ, h->err);
	if (st)
		return st;
	if (list->n != L)
		return kvp_node_fail(h->doc, list, h->err, KVP_STATUS_INVALID, field,
				     "has %zu entries for %u layers", list->n, L);
	return KVP_STATUS_OK;
}

/* Assign each layer its kind (architectures.md 0.5-0.8 and the section 2
 * pattern rules).  Reads the window, chunk and Mamba sizes it needs. */
kvp_status hf_assign_layers(struct hf *h, struct kvp_model *m, bool mla)
{
	uint32_t L = m->num_layers;
	kvp_status st;
	for (uint32_t i = 0; i < L; i++)
		m->layers[i] = KVP_LAYER_FULL;

	/* windows: the class defaults apply to the families that have one */
	if (h->fam == FAM_GEMMA2 || h->fam == FAM_GEMMA3 || h->fam == FAM_COHERE2)
		m->sliding_window = GEMMA_WINDOW;
	else if (h->fam == FAM_GPT_OSS)
		m->sliding_window = GPT_OSS_WINDOW;
	/* 0 reads as "no window", as null does */
	if ((st = hf_opt_uint(h, h->cfg, "sliding_window", false, &m->sliding_window, NULL)) ||
	    (st = hf_opt_uint(h, h->cfg, "attention_chunk_size", false, &m->chunk_size, NULL)))
		return st;
	bool has_window = m->sliding_window != 0;

	if (mla) {
		for (uint32_t i = 0; i < L; i++)
			m->layers[i] = KVP_LAYER_MLA;
		return KVP_STATUS_OK;
	}

	const struct kvp_node *types = kvp_map_get(h->cfg, "layer_types");
	const char *types_field = "layer_types";
	if (!types) {
		types = kvp_map_get(h->cfg, "layers_block_type");
		types_field = "layers_block_type";
	}
	if (types) {
		if ((st = layer_list(h, types, types_field, L)))
			return st;
		for (uint32_t i = 0; i < L; i++)
			if ((st = layer_kind_from_string(h, types->items[i], types_field,
							 &m->layers[i])))
				return st;
	} else {
		switch (h->fam) {
		case FAM_GEMMA2:
			/* transformers: sliding if (i + 1) % 2, i.e. even i */
			for (uint32_t i = 0; i < L; i++)
				m->layers[i] = (i + 1) % 2 ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
			break;
		case FAM_GEMMA3:
		case FAM_COHERE2: {
			uint32_t pattern = h->fam == FAM_GEMMA3 ? GEMMA3_PATTERN : COHERE2_PATTERN;
			bool found = false;
			if ((st = hf_opt_uint(h, h->cfg, "sliding_window_pattern", true, &pattern, &found)))
				return st;
			if (!found &&
			    (st = hf_opt_uint(h, h->cfg, "_sliding_window_pattern", true, &pattern, NULL)))
				return st;
			for (uint32_t i = 0; i < L; i++)
				m->layers[i] = (i + 1) % pattern ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
			break;
		}
		case FAM_GPT_OSS:
			for (uint32_t i = 0; i < L; i++)
				m->layers[i] = i % 2 == 0 ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
			break;
		case FAM_QWEN2:
		case FAM_QWEN2_MOE:
		case FAM_QWEN3:
		case FAM_QWEN3_MOE: {
			/* the window is inactive unless use_sliding_window (trap 6.3) */
			bool use = false;
			uint32_t max_window_layers = QWEN_MAX_WINDOW_LAYERS;
			if ((st = hf_opt_bool(h, h->cfg, "use_sliding_window", &use)) ||
			    (st = hf_opt_uint(h, h->cfg, "max_window_layers", false, &max_window_layers,
					   NULL)))
				return st;
			for (uint32_t i = 0; i < L; i++)
				m->layers[i] = use && has_window && i >= max_window_layers
						       ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
			break;
		}
		case FAM_LLAMA4: {
			if (!m->chunk_size)
				break;
			/* no_rope_layers[i]: 1 = RoPE layer (chunked), 0 = NoPE (global) */
			/* an empty list means "derive it" (transformers Llama4TextConfig:
			 * no_rope_layers if no_rope_layers else the interval rule) */
			const struct kvp_node *nr = kvp_map_get(h->cfg, "no_rope_layers");
			if (nr && nr->type == KVP_NODE_SEQ && nr->n == 0)
				nr = NULL;
			if (nr) {
				if ((st = layer_list(h, nr, "no_rope_layers", L)))
					return st;
				for (uint32_t i = 0; i < L; i++) {
					uint64_t v;
					if ((st = hf_node_uint(h, nr->items[i], "no_rope_layers", 1, &v)))
						return st;
					m->layers[i] = v ? KVP_LAYER_CHUNKED : KVP_LAYER_FULL;
				}
			} else {
				uint32_t interval = LLAMA4_NOPE_INTERVAL;
				if ((st = hf_opt_uint(h, h->cfg, "no_rope_layer_interval", true, &interval,
						   NULL)))
					return st;
				for (uint32_t i = 0; i < L; i++)
					m->layers[i] = (i + 1) % interval ? KVP_LAYER_CHUNKED
									   : KVP_LAYER_FULL;
			}
			break;
		}
		case FAM_QWEN3_NEXT: {
			/* Qwen3NextConfig: full attention every full_attention_interval
			 * layers ((i + 1) % interval == 0), Gated DeltaNet between */
			uint32_t interval = 4;
			if ((st = hf_opt_uint(h, h->cfg, "full_attention_interval", true, &interval, NULL)))
				return st;
			for (uint32_t i = 0; i < L; i++)
				m->layers[i] = (i + 1) % interval ? KVP_LAYER_MAMBA : KVP_LAYER_FULL;
			break;
		}
		case FAM_JAMBA: {
			/* JambaConfig defaults: attention at i % 8 == 4 */
			uint32_t period = 8, offset = 4;
			if ((st = hf_opt_uint(h, h->cfg, "attn_layer_period", true, &period, NULL)) ||
			    (st = hf_opt_uint(h, h->cfg, "attn_layer_offset", false, &offset, NULL)))
				return st;
			if (offset >= period) {
				const struct kvp_node *on = kvp_map_get(h->cfg, "attn_layer_offset");
				return kvp_node_fail(h->doc, on ? on : h->cfg, h->err,
						     KVP_STATUS_INVALID, "attn_layer_offset",
						     "%u is not below attn_layer_period %u", offset,
						     period);
			}
			for (uint32_t i = 0; i < L; i++)
				m->layers[i] = i % period == offset ? KVP_LAYER_FULL : KVP_LAYER_MAMBA;
			break;
		}
		default:
			/* vLLM applies a model-level window to every layer when there is
			 * no per-layer information (Mistral v0.1, Phi-3-mini-4k: trap 6.4) */
			if (has_window)
				for (uint32_t i = 0; i < L; i++)
					m->layers[i] = KVP_LAYER_SLIDING;
			break;
		}
	}

	uint32_t count[KVP_LAYER_KIND_COUNT] = {0};
	for (uint32_t i = 0; i < L; i++)
		count[m->layers[i]]++;
	if (count[KVP_LAYER_SLIDING] && !m->sliding_window)
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID, "sliding_window",
				     "required: %u layer(s) use sliding attention",
				     count[KVP_LAYER_SLIDING]);
	if (count[KVP_LAYER_CHUNKED] && !m->chunk_size)
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID,
				     "attention_chunk_size",
				     "required: %u layer(s) use chunked attention",
				     count[KVP_LAYER_CHUNKED]);
	if (!count[KVP_LAYER_SLIDING])
		m->sliding_window = 0;  /* e.g. Qwen2.5's inactive 131072 */
	if (!count[KVP_LAYER_CHUNKED])
		m->chunk_size = 0;
	if (count[KVP_LAYER_MAMBA] && kvp_map_get(h->cfg, "linear_key_head_dim"))
		return linear_state(h, m);
	if (count[KVP_LAYER_MAMBA]) {
		/* Mamba1 state sizes; JambaConfig defaults 16, 4, 2 */
		bool fs = false, fc = false, fe = false;
		if (h->fam == FAM_JAMBA) {
			m->mamba_d_state = 16;
			m->mamba_d_conv = 4;
			m->mamba_expand = 2;
		}
		if ((st = hf_opt_uint(h, h->cfg, "mamba_d_state", true, &m->mamba_d_state, &fs)) ||
		    (st = hf_opt_uint(h, h->cfg, "mamba_d_conv", true, &m->mamba_d_conv, &fc)) ||
		    (st = hf_opt_uint(h, h->cfg, "mamba_expand", true, &m->mamba_expand, &fe)))
			return st;
		const char *missing = !m->mamba_d_state ? "mamba_d_state"
				    : !m->mamba_d_conv ? "mamba_d_conv"
				    : !m->mamba_expand ? "mamba_expand" : NULL;
		if (missing)
			return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID, missing,
					     "required for the %u Mamba/linear-attention layers "
					     "(their per-sequence state is not modelled otherwise)",
					     count[KVP_LAYER_MAMBA]);
	}
	return KVP_STATUS_OK;
}
