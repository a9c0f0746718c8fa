/* model.c: KV bytes per token per layer, per-sequence state and weights of a
 * model on one GPU.  Legend: L = layers, n = tokens, H_kv = KV heads,
 * d_h = head dim, b = bytes per element, B = sequences.  See model.h.
 *
 * Rules follow ../shared/reference/architectures.md section 0: standard
 * attention 2 * H_kv * d_h * b per token per layer, with H_kv per GPU =
 * max(1, H_kv / tp) (replicated below one head); MLA (r + d_rope) * b on every
 * rank; Mamba1 state (d_conv - 1) * d_inner/tp + d_inner/tp * d_state
 * elements per sequence in the serving dtype.  The per-GPU spec over
 * pipeline stages is spec.c's. */
#include "model/model.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/units.h"

/* name, bits, weights scale bytes/param (num/den), KV extra bytes per element
 * (num/den), KV bytes per (token, head) for K and again for V, kv_ok, weights_ok */
static const struct {
	struct kvp_dtype_info info;
	unsigned kv_elem_num, kv_elem_den;
} dtypes[KVP_DTYPE_COUNT] = {
	[KVP_DTYPE_AUTO] = {{"auto", 0, 0, 1, 0, true, true}, 0, 1},
	[KVP_DTYPE_FP32] = {{"fp32", 32, 0, 1, 0, true, true}, 0, 1},
	[KVP_DTYPE_FP16] = {{"fp16", 16, 0, 1, 0, true, true}, 0, 1},
	[KVP_DTYPE_BF16] = {{"bf16", 16, 0, 1, 0, true, true}, 0, 1},
	/* vLLM fp8: per-layer scalar k/v scales only (architectures.md 0.10). */
	[KVP_DTYPE_FP8] = {{"fp8", 8, 0, 1, 0, true, true}, 0, 1},
	[KVP_DTYPE_FP8_E5M2] = {{"fp8_e5m2", 8, 0, 1, 0, true, false}, 0, 1},
	/* vLLM fp8/int8_per_token_head: + 2 * H_kv * 4 B per token per layer. */
	[KVP_DTYPE_FP8_PTH] = {{"fp8-pth", 8, 0, 1, 4, true, false}, 0, 1},
	[KVP_DTYPE_INT8] = {{"int8", 8, 0, 1, 4, true, true}, 0, 1},
	/* KV int4: fp16 scale + fp16 zero per token and head (4 B);
	 * weights int4: GPTQ/AWQ group 128, fp16 scale + 4-bit zero per group:
	 * (2 + 0.5) / 128 = 5/256 B per parameter (architectures.md 4.2). */
	[KVP_DTYPE_INT4] = {{"int4", 4, 5, 256, 4, true, true}, 0, 1},
	[KVP_DTYPE_INT4_GPTQ] = {{"int4-gptq", 4, 5, 256, 0, false, true}, 0, 1},
	[KVP_DTYPE_INT4_AWQ] = {{"int4-awq", 4, 5, 256, 0, false, true}, 0, 1},
	/* MXFP4: one e8m0 byte per 32 elements. */
	[KVP_DTYPE_MXFP4] = {{"mxfp4", 4, 1, 32, 0, false, true}, 0, 1},
	/* NVFP4: one fp8 scale per 16 elements, for weights and for KV (d/2 + d/16). */
	[KVP_DTYPE_NVFP4] = {{"nvfp4", 4, 1, 16, 0, true, true}, 1, 16},
};

static const struct {
	const char *name;
	enum kvp_dtype dt;
} dtype_names[] = {
	{"auto", KVP_DTYPE_AUTO}, {"fp32", KVP_DTYPE_FP32}, {"float32", KVP_DTYPE_FP32},
	{"float", KVP_DTYPE_FP32}, {"fp16", KVP_DTYPE_FP16}, {"float16", KVP_DTYPE_FP16},
	{"half", KVP_DTYPE_FP16}, {"bf16", KVP_DTYPE_BF16}, {"bfloat16", KVP_DTYPE_BF16},
	{"fp8", KVP_DTYPE_FP8}, {"fp8_e4m3", KVP_DTYPE_FP8}, {"fp8-e4m3", KVP_DTYPE_FP8},
	{"e4m3", KVP_DTYPE_FP8}, {"fp8_e5m2", KVP_DTYPE_FP8_E5M2},
	{"fp8-e5m2", KVP_DTYPE_FP8_E5M2}, {"e5m2", KVP_DTYPE_FP8_E5M2},
	{"fp8-pth", KVP_DTYPE_FP8_PTH}, {"fp8_per_token_head", KVP_DTYPE_FP8_PTH},
	{"int8", KVP_DTYPE_INT8}, {"int8_per_token_head", KVP_DTYPE_INT8},
	{"int4", KVP_DTYPE_INT4}, {"int4_per_token_head", KVP_DTYPE_INT4},
	{"int4-gptq", KVP_DTYPE_INT4_GPTQ}, {"gptq", KVP_DTYPE_INT4_GPTQ},
	{"int4-awq", KVP_DTYPE_INT4_AWQ}, {"awq", KVP_DTYPE_INT4_AWQ},
	{"mxfp4", KVP_DTYPE_MXFP4}, {"nvfp4", KVP_DTYPE_NVFP4},
};

const struct kvp_dtype_info *kvp_dtype_info(enum kvp_dtype dt)
{
	return dt < KVP_DTYPE_COUNT ? &dtypes[dt].info : NULL;
}

void kvp_dtype_kv_elem_scale(enum kvp_dtype dt, unsigned *num, unsigned *den)
{
	*num = dt < KVP_DTYPE_COUNT ? dtypes[dt].kv_elem_num : 0;
	*den = dt < KVP_DTYPE_COUNT ? dtypes[dt].kv_elem_den : 1;
}

bool kvp_dtype_parse(const char *s, enum kvp_dtype *out)
{
	for (size_t i = 0; i < sizeof dtype_names / sizeof dtype_names[0]; i++)
		if (strcasecmp(s, dtype_names[i].name) == 0) {
			*out = dtype_names[i].dt;
			return true;
		}
	return false;
}

const char *kvp_dtype_name(enum kvp_dtype dt)
{
	return dt < KVP_DTYPE_COUNT ? dtypes[dt].info.name : "?";
}

static const char *const kind_names[KVP_LAYER_KIND_COUNT] = {
	"full", "sliding", "chunked", "mla", "mamba", "none"
};

const char *kvp_layer_kind_name(enum kvp_layer_kind kind)
{
	return kind < KVP_LAYER_KIND_COUNT ? kind_names[kind] : "?";
}

bool kvp_layer_kind_parse(const char *s, enum kvp_layer_kind *out)
{
	if (strcmp(s, "linear") == 0) {  /* linear attention: a fixed state, as Mamba */
		*out = KVP_LAYER_MAMBA;
		return true;
	}
	for (int k = 0; k < KVP_LAYER_KIND_COUNT; k++)
		if (strcmp(s, kind_names[k]) == 0) {
			*out = (enum kvp_layer_kind)k;
			return true;
		}
	return false;
}

static kvp_status invalid(const struct kvp_model *m, struct kvp_error *err, const char *field,
			  const char *msg)
{
	return kvp_error_set(err, KVP_STATUS_INVALID, m->path[0] ? m->path : m->name, 0, 0,
			     field, "%s", msg);
}

kvp_status kvp_model_validate(const struct kvp_model *m, struct kvp_error *err)
{
	if (m->num_layers == 0 || m->num_layers > KVP_MAX_LAYERS)
		return invalid(m, err, "num_layers", "must be between 1 and 4096");
	if (m->num_heads == 0)
		return invalid(m, err, "num_heads", "must be positive");
	if (m->num_kv_heads == 0)
		return invalid(m, err, "num_kv_heads", "must be positive");
	if (m->num_kv_heads > m->num_heads || m->num_heads % m->num_kv_heads)
		return invalid(m, err, "num_kv_heads", "must divide num_heads");
	if (m->head_dim == 0 || m->head_dim_v == 0)
		return invalid(m, err, "head_dim", "must be positive");
	if (m->rotary_dim > m->head_dim)
		return invalid(m, err, "rotary_dim", "must not exceed head_dim");
	if (m->hidden_size == 0)
		return invalid(m, err, "hidden_size", "must be positive");
	if (m->params == 0)
		return invalid(m, err, "params", "must be positive");
	if (m->active_params > m->params)
		return invalid(m, err, "active_params", "must not exceed params");
	if (m->expert_params > m->params)
		return invalid(m, err, "expert_params", "must not exceed params");
	if (m->shared_expert_params > m->params - m->expert_params)
		return invalid(m, err, "shared_expert_params",
			       "must not exceed params less expert_params");
	uint32_t count[KVP_LAYER_KIND_COUNT] = {0};
	for (uint32_t i = 0; i < m->num_layers; i++)
		count[m->layers[i]]++;
	if (count[KVP_LAYER_SLIDING] && m->sliding_window == 0)
		return invalid(m, err, "sliding_window", "required (and positive) for sliding layers");
	if (count[KVP_LAYER_CHUNKED] && m->chunk_size == 0)
		return invalid(m, err, "chunk_size", "required (and positive) for chunked layers");
	if (count[KVP_LAYER_MLA] && (m->mla_kv_lora_rank == 0 || m->mla_rope_dim == 0))
		return invalid(m, err, "mla", "kv_lora_rank and qk_rope_head_dim are required for mla layers");
	bool linear = m->linear_key_dim || m->linear_value_dim || m->linear_num_key_heads ||
		      m->linear_num_value_heads || m->linear_conv_kernel;
	if (linear && (!m->linear_key_dim || !m->linear_value_dim || !m->linear_num_key_heads ||
		       !m->linear_num_value_heads || m->linear_conv_kernel < 1))
		return invalid(m, err, "linear", "num_key_heads, num_value_heads, key_head_dim, "
			       "value_head_dim and conv_kernel are all required");
	if (count[KVP_LAYER_MAMBA] && !linear &&
	    (m->mamba_d_state == 0 || m->mamba_d_conv == 0 || m->mamba_expand == 0))
		return invalid(m, err, "mamba", "d_state, d_conv and expand are required for mamba "
			       "layers (or a linear section for linear attention)");
	if (m->weights_dtype != KVP_DTYPE_AUTO && !kvp_dtype_info(m->weights_dtype)->weights_ok)
		return invalid(m, err, "weights_dtype", "not a weights format");
	if (m->expert_dtype != KVP_DTYPE_AUTO && !kvp_dtype_info(m->expert_dtype)->weights_ok)
		return invalid(m, err, "expert_dtype", "not a weights format");
	return KVP_STATUS_OK;
}

enum kvp_dtype kvp_model_serving_dtype(const struct kvp_model *m, enum kvp_dtype requested)
{
	if (requested != KVP_DTYPE_AUTO)
		return requested;
	return m->dtype == KVP_DTYPE_FP32 || m->dtype == KVP_DTYPE_AUTO ? KVP_DTYPE_BF16 : m->dtype;
}

/* elements * (bits/8 + num/den), rounded up, checked. */
static bool elem_bytes(uint64_t elements, unsigned bits, unsigned num, unsigned den, uint64_t *out)
{
	uint64_t a, b, s;
	/* elements * (bits * den + 8 * num) / (8 * den) */
	uint64_t per = (uint64_t)bits * den + 8ULL * num;
	if (!kvp_mul(elements, per, &a))
		return false;
	b = 8ULL * den;
	s = kvp_cdiv(a, b);
	*out = s;
	return true;
}

kvp_status kvp_weights_bytes(uint64_t params, enum kvp_dtype dt, uint64_t *out)
{
	const struct kvp_dtype_info *d = kvp_dtype_info(dt);
	if (!d || !d->weights_ok || d->bits == 0)
		return KVP_STATUS_INVALID;
	return elem_bytes(params, d->bits, d->scale_num, d->scale_den, out) ? KVP_STATUS_OK
									   : KVP_STATUS_OVERFLOW;
}

kvp_status kvp_weights_format_bytes(uint64_t params, const struct kvp_weights_format *f,
				    uint64_t *out)
{
	if (!f->bits)
		return KVP_STATUS_INVALID;
	/* bits per element as the fraction (bits * group + group_bits) / group */
	uint64_t group = f->group ? f->group : 1, num;
	if (!kvp_mul(f->bits, group, &num) || !kvp_add(num, f->group ? f->group_bits : 0, &num))
		return KVP_STATUS_OVERFLOW;
	/* ceil(params * num / (8 * group)) without forming params * num: with
	 * params = Q * 8 * group + R, that is Q * num + ceil(R * num / (8 * group)) */
	uint64_t den = 8 * group, Q = params / den, R = params % den, a, b;
	if (!kvp_mul(Q, num, &a) || !kvp_mul(R, num, &b) || !kvp_add(a, kvp_cdiv(b, den), out))
		return KVP_STATUS_OVERFLOW;
	return KVP_STATUS_OK;
}

kvp_status kvp_model_set_weights_dtype(struct kvp_model *m, enum kvp_dtype dt)
{
	const struct kvp_dtype_info *d = kvp_dtype_info(dt);
	if (!d || !d->weights_ok)
		return KVP_STATUS_INVALID;
	m->weights_dtype = dt;
	m->expert_dtype = KVP_DTYPE_AUTO;
	memset(&m->weights_format, 0, sizeof m->weights_format);
	memset(&m->expert_format, 0, sizeof m->expert_format);
	m->unquantized_params = 0;
	m->weights_source[0] = '\0'; /* the caller says why */
	return KVP_STATUS_OK;
}

static bool model_file_weights(const struct kvp_model *m)
{
	return m->file_embed_bytes || m->file_dense_bytes || m->file_shared_bytes ||
	       m->file_routed_bytes;
}

void kvp_model_weights_origin(const struct kvp_model *m, char *buf, size_t size)
{
	const char *path = m->path[0] ? m->path : m->name;
	if (model_file_weights(m))
		snprintf(buf, size, "the tensor types of the GGUF file %s", path);
	else if (m->weights_source[0] && strncmp(m->weights_source, "--", 2) == 0)
		snprintf(buf, size, "%s (a what-if over %s)", m->weights_source, path);
	else if (m->weights_source[0] && strncmp(m->weights_source, "the name", 8) == 0)
		snprintf(buf, size, "%s (the profile %s)", m->weights_source, path);
	else if (m->weights_source[0])
		snprintf(buf, size, "%s in %s", m->weights_source, path);
	else if (m->weights_dtype != KVP_DTYPE_AUTO || m->expert_dtype != KVP_DTYPE_AUTO)
		snprintf(buf, size, "weights_dtype in %s", path);
	else
		snprintf(buf, size, "no quantization found in %s (the serving dtype)", path);
}

const char *kvp_model_weights_dtype_name(const struct kvp_model *m, enum kvp_dtype serving)
{
	if (model_file_weights(m))
		return "gguf";
	return kvp_dtype_name(m->weights_dtype == KVP_DTYPE_AUTO ? serving : m->weights_dtype);
}

/* KV bytes per token for one attention layer with `heads` heads of (dk + dv) elements. */
static bool kv_layer_bytes(enum kvp_dtype dt, uint64_t heads, uint64_t dk, uint64_t dv,
			   unsigned scale_slots, uint64_t *out)
{
	uint64_t e, bytes, scales;
	if (!kvp_mul(heads, dk + dv, &e) ||
	    !elem_bytes(e, dtypes[dt].info.bits, dtypes[dt].kv_elem_num, dtypes[dt].kv_elem_den,
			&bytes))
		return false;
	if (!kvp_mul(heads, (uint64_t)scale_slots * dtypes[dt].info.kv_scale_bytes, &scales))
		return false;
	return kvp_add(bytes, scales, out);
}

kvp_status kvp_model_layer_cost(const struct kvp_model *m, enum kvp_layer_kind kind, uint32_t tp,
			     enum kvp_dtype kv, enum kvp_dtype serving, struct kvp_spec_layer *l)
{
	l->kind = kind;
	l->token_bytes = l->seq_bytes = 0;
	l->window = 0;
	bool ok = true;
	switch (kind) {
	case KVP_LAYER_FULL:
	case KVP_LAYER_SLIDING:
	case KVP_LAYER_CHUNKED: {
		uint64_t heads = m->num_kv_heads / tp ? m->num_kv_heads / tp : 1;
		ok = kv_layer_bytes(kv, heads, m->head_dim, m->head_dim_v, 2, &l->token_bytes);
		l->window = kind == KVP_LAYER_SLIDING ? m->sliding_window
			  : kind == KVP_LAYER_CHUNKED ? m->chunk_size : 0;
		break;
	}
	case KVP_LAYER_MLA:
		/* one latent "head" of r + d_rope, no factor 2, on every rank */
		ok = kv_layer_bytes(kv, 1, m->mla_kv_lora_rank, m->mla_rope_dim, 1, &l->token_bytes);
		break;
	case KVP_LAYER_MAMBA: {
		if (m->linear_key_dim) {
			/* vLLM MambaStateShapeCalculator.gated_delta_net_state_shape: conv
			 * (conv_dim / tp, conv - 1), temporal (H_v / tp, d_k, d_v) */
			uint64_t conv_dim = 2ULL * m->linear_num_key_heads * m->linear_key_dim +
					    (uint64_t)m->linear_num_value_heads * m->linear_value_dim;
			uint64_t conv = conv_dim / tp * (m->linear_conv_kernel - 1), cb, sb;
			uint64_t state = (uint64_t)m->linear_num_value_heads / tp * m->linear_key_dim *
					 m->linear_value_dim;
			enum kvp_dtype sdt = m->linear_state_dtype == KVP_DTYPE_AUTO
				? serving : m->linear_state_dtype;
			ok = elem_bytes(conv, kvp_dtype_info(serving)->bits, 0, 1, &cb) &&
			     elem_bytes(state, kvp_dtype_info(sdt)->bits, 0, 1, &sb) &&
			     kvp_add(cb, sb, &l->seq_bytes);
			break;
		}
		uint64_t d_inner = (uint64_t)m->mamba_expand * m->hidden_size / tp, e1, e2, e;
		ok = kvp_mul(d_inner, m->mamba_d_conv - 1, &e1) &&
		     kvp_mul(d_inner, m->mamba_d_state, &e2) && kvp_add(e1, e2, &e) &&
		     elem_bytes(e, kvp_dtype_info(serving)->bits, 0, 1, &l->seq_bytes);
		break;
	}
	case KVP_LAYER_NONE:
	case KVP_LAYER_KIND_COUNT:
		break;
	}
	return ok ? KVP_STATUS_OK : KVP_STATUS_OVERFLOW;
}

uint64_t kvp_spec_layer_tokens(const struct kvp_spec_layer *l, uint64_t n, uint32_t block)
{
	uint64_t blocks = kvp_cdiv(n, block), cap;
	switch (l->kind) {
	case KVP_LAYER_FULL:
	case KVP_LAYER_MLA:
		break;
	case KVP_LAYER_SLIDING:
		/* the last W tokens straddle at most ceil((W - 1) / P) + 1 blocks */
		cap = kvp_cdiv(l->window - 1, block) + 1;
		blocks = blocks < cap ? blocks : cap;
		break;
	case KVP_LAYER_CHUNKED:
		/* the current chunk, aligned to C: ceil(C / P) blocks, one more if unaligned */
		cap = kvp_cdiv(l->window, block) + (l->window % block != 0);
		blocks = blocks < cap ? blocks : cap;
		break;
	default:
		return 0;
	}
	/* n within a block of 2^64 rounds up past it: saturate, and let the
	 * checked products of kvp_spec_seq_bytes report the overflow */
	uint64_t tokens;
	return kvp_mul(blocks, block, &tokens) ? tokens : UINT64_MAX;
}

kvp_status kvp_spec_seq_bytes(const struct kvp_spec *s, uint64_t n, uint32_t block,
			      uint64_t *out)
{
	uint64_t total = 0, t;
	for (uint32_t i = 0; i < s->num_layers; i++) {
		const struct kvp_spec_layer *l = &s->layers[i];
		uint64_t tokens = kvp_spec_layer_tokens(l, n, block);
		if ((tokens == UINT64_MAX && l->token_bytes) || !kvp_mul(tokens, l->token_bytes, &t) ||
		    !kvp_add(total, t, &total) || !kvp_add(total, l->seq_bytes, &total))
			return KVP_STATUS_OVERFLOW;
	}
	*out = total;
	return KVP_STATUS_OK;
}
