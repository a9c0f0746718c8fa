/* hf-params.c: parameter counts from a config.json (architectures.md 4.1).
 *
 * Legend: L = layers, H = hidden size, Nq = attention heads, Nkv = KV heads,
 * d = head dim, V = vocabulary, I = dense FFN width, E = routed experts,
 * k = experts per token, Im = expert FFN width.
 *
 * Total, active and routed-expert parameters per family (gated and
 * LayerNorm decoders, MLA, Mamba and Gated DeltaNet mixers, which layers are
 * MoE), with checked arithmetic: an overflow is an error, never a wrapped
 * count.  The attention, shared-expert and dense-MLP shares are kept apart
 * for the quantization reader, whose ignore lists may leave them unquantized. */
#include "read/hf-private.h"

#include <stdint.h>
#include <string.h>

#include "base/units.h"

/* ------------------------------------------------------------ parameters */

/* Checked sums: any overflow marks the count invalid. */
struct count {
	uint64_t total;   /* all parameters */
	uint64_t active;  /* used per token */
	uint64_t expert;  /* in routed experts */
	/* parts of the dense share a quantization may leave alone (gated
	 * families only): attention or mixer, shared experts, dense MLPs;
	 * shared also gives the model's shared_expert_params, in total and active */
	uint64_t attn, shared, mlp;
	bool overflow;
};

static uint64_t mul(struct count *c, uint64_t a, uint64_t b)
{
	uint64_t r;
	if (!kvp_mul(a, b, &r)) {
		c->overflow = true;
		return 0;
	}
	return r;
}

static uint64_t mul3(struct count *c, uint64_t a, uint64_t b, uint64_t d)
{
	return mul(c, mul(c, a, b), d);
}

static uint64_t sum(struct count *c, uint64_t a, uint64_t b)
{
	uint64_t r;
	if (!kvp_add(a, b, &r)) {
		c->overflow = true;
		return 0;
	}
	return r;
}

/* Parameters every token uses. */
static void add_dense(struct count *c, uint64_t x)
{
	c->total = sum(c, c->total, x);
	c->active = sum(c, c->active, x);
}

/* E experts of `each` parameters, k of them active. */
static void add_experts(struct count *c, uint64_t E, uint64_t k, uint64_t each)
{
	uint64_t all = mul(c, E, each);
	c->total = sum(c, c->total, all);
	c->expert = sum(c, c->expert, all);
	c->active = sum(c, c->active, mul(c, k, each));
}

/* Which layers have a routed-expert FFN. */
struct moe_plan {
	uint32_t E, k, Im;           /* experts, per token, expert FFN width */
	uint32_t first_dense;        /* DeepSeek first_k_dense_replace */
	uint32_t layer_freq;         /* DeepSeek moe_layer_freq */
	uint32_t sparse_step;        /* Qwen-MoE decoder_sparse_step */
	uint32_t period, offset;     /* Jamba expert_layer_period/offset */
	uint32_t interleave;         /* Llama 4 interleave_moe_layer_step */
	uint8_t dense_only[KVP_MAX_LAYERS]; /* Qwen-MoE mlp_only_layers / not Llama 4 moe_layers */
};

static bool moe_layer(const struct hf *h, const struct moe_plan *p, uint32_t i)
{
	if (!p->E || p->dense_only[i])
		return false;
	switch (h->fam) {
	case FAM_DEEPSEEK_V2:
	case FAM_DEEPSEEK_V3:
		return i >= p->first_dense && i % p->layer_freq == 0;
	case FAM_QWEN2_MOE:
	case FAM_QWEN3_MOE:
	case FAM_QWEN3_NEXT:
		return (i + 1) % p->sparse_step == 0;
	case FAM_JAMBA:
		return i % p->period == p->offset;
	case FAM_LLAMA4:
		return (i + 1) % p->interleave == 0;
	default:
		return true;
	}
}

/* A list of layer indices into flags (value 1). */
static kvp_status index_list(struct hf *h, const char *key, uint32_t L, uint8_t *flags,
			     bool *found)
{
	const struct kvp_node *list = kvp_map_get(h->cfg, key);
	*found = list != NULL;
	if (!list)
		return KVP_STATUS_OK;
	kvp_status st = kvp_node_expect(h->doc, list, key, KVP_NODE_SEQ, h->err);
	for (size_t j = 0; !st && j < list->n; j++) {
		uint64_t v;
		st = hf_node_uint(h, list->items[j], key, L - 1, &v);
		if (!st)
			flags[v] = 1;
	}
	return st;
}

static kvp_status moe_read(struct hf *h, const struct kvp_model *m, struct moe_plan *p)
{
	static const char *const e_keys[] = {"num_experts", "moe_num_experts", "n_routed_experts",
					     "num_local_experts", NULL};
	static const char *const k_keys[] = {"num_experts_per_tok", "experts_per_token",
					     "moe_top_k", NULL};
	kvp_status st;
	memset(p, 0, sizeof *p);
	p->layer_freq = p->sparse_step = p->interleave = 1;
	p->period = 2;
	p->offset = 1;
	const char *which = e_keys[0];
	const struct kvp_node *en = hf_get_any(h->cfg, e_keys, &which), *kn;
	uint64_t v;
	if (h->fam == FAM_JAMBA) {
		p->E = 16;  /* JambaConfig defaults */
		p->k = 2;
	}
	if (en) {
		if ((st = hf_node_uint(h, en, which, UINT32_MAX, &v)))
			return st;
		p->E = (uint32_t)v;
	}
	if (!p->E)
		return KVP_STATUS_OK;
	which = k_keys[0];
	kn = hf_get_any(h->cfg, k_keys, &which);
	if (kn) {
		if ((st = hf_node_positive(h, kn, which, UINT32_MAX, &v)))
			return st;
		p->k = (uint32_t)v;
	}
	if (!p->k)
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID,
				     "num_experts_per_tok", "required field is missing for %u experts",
				     p->E);
	if (p->k > p->E)
		return kvp_node_fail(h->doc, kn ? kn : h->cfg, h->err, KVP_STATUS_INVALID, which,
				     "%u experts per token but only %u experts", p->k, p->E);
	/* expert width: moe_intermediate_size, else intermediate_size (Mixtral,
	 * gpt-oss, Jamba, Llama 4) */
	p->Im = m->intermediate_size;
	if ((st = hf_opt_uint(h, h->cfg, "moe_intermediate_size", true, &p->Im, NULL)))
		return st;
	if (!p->Im)
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID,
				     "moe_intermediate_size", "required field is missing for %u experts",
				     p->E);
	bool found;
	switch (h->fam) {
	case FAM_DEEPSEEK_V2:
	case FAM_DEEPSEEK_V3:
		if ((st = hf_opt_uint(h, h->cfg, "first_k_dense_replace", false, &p->first_dense, NULL)) ||
		    (st = hf_opt_uint(h, h->cfg, "moe_layer_freq", true, &p->layer_freq, NULL)))
			return st;
		break;
	case FAM_QWEN2_MOE:
	case FAM_QWEN3_MOE:
	case FAM_QWEN3_NEXT:
		if ((st = hf_opt_uint(h, h->cfg, "decoder_sparse_step", true, &p->sparse_step, NULL)) ||
		    (st = index_list(h, "mlp_only_layers", m->num_layers, p->dense_only, &found)))
			return st;
		break;
	case FAM_JAMBA:
		if ((st = hf_opt_uint(h, h->cfg, "expert_layer_period", true, &p->period, NULL)) ||
		    (st = hf_opt_uint(h, h->cfg, "expert_layer_offset", false, &p->offset, NULL)))
			return st;
		if (p->offset >= p->period) {
			const struct kvp_node *on = kvp_map_get(h->cfg, "expert_layer_offset");
			return kvp_node_fail(h->doc, on ? on : h->cfg, h->err, KVP_STATUS_INVALID,
					     "expert_layer_offset",
					     "%u is not below expert_layer_period %u", p->offset,
					     p->period);
		}
		break;
	case FAM_LLAMA4: {
		uint8_t moe[KVP_MAX_LAYERS] = {0};
		if ((st = hf_opt_uint(h, h->cfg, "interleave_moe_layer_step", true, &p->interleave,
				   NULL)) ||
		    (st = index_list(h, "moe_layers", m->num_layers, moe, &found)))
			return st;
		if (found) {
			p->interleave = 1;
			for (uint32_t i = 0; i < m->num_layers; i++)
				p->dense_only[i] = !moe[i];
		}
		break;
	}
	default:
		break;
	}
	return KVP_STATUS_OK;
}

/* MLA attention per layer (architectures.md 4.1, DeepSeek-V3 = 187,107,328):
 * q = H*q_lora + q_lora (norm) + q_lora*Nq*(nope+rope)  [or H*Nq*(nope+rope)]
 * kv = H*(kv_lora+rope) + kv_lora (norm) + kv_lora*Nq*(nope+v);  o = Nq*v*H */
static kvp_status mla_attention(struct hf *h, const struct kvp_model *m, struct count *c,
				uint64_t *out)
{
	uint32_t q_lora = 0, nope = 0, v = 0;
	bool fq;
	kvp_status st;
	if ((st = hf_opt_uint(h, h->cfg, "q_lora_rank", true, &q_lora, &fq)) ||
	    (st = hf_opt_uint(h, h->cfg, "qk_nope_head_dim", true, &nope, NULL)) ||
	    (st = hf_opt_uint(h, h->cfg, "v_head_dim", true, &v, NULL)))
		return st;
	if (!nope || !v)
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID,
				     !nope ? "qk_nope_head_dim" : "v_head_dim",
				     "required field is missing for MLA");
	uint64_t H = m->hidden_size, Nq = m->num_heads, r = m->mla_kv_lora_rank,
		 rope = m->mla_rope_dim, qk = nope + rope, a = 0;
	if (fq)
		a = sum(c, sum(c, mul(c, H, q_lora), q_lora), mul3(c, q_lora, Nq, qk));
	else
		a = mul3(c, H, Nq, qk);
	a = sum(c, a, sum(c, sum(c, mul(c, H, r + rope), r), mul3(c, r, Nq, nope + v)));
	*out = sum(c, a, mul3(c, Nq, v, H));
	return KVP_STATUS_OK;
}

/* Mamba1 mixer (Jamba), architectures.md 4.1: in_proj H*2*di, conv di*d_conv
 * (+ di bias), x_proj di*(dt_rank + 2*d_state), dt_proj dt_rank*di + di,
 * A_log di*d_state, D di, out_proj di*H, and the dt/B/C RMSNorms
 * dt_rank + 2*d_state that JambaMambaMixer always has. */
static kvp_status mamba_mixer(struct hf *h, const struct kvp_model *m, struct count *c,
			      uint64_t *out)
{
	uint64_t H = m->hidden_size, di = (uint64_t)m->mamba_expand * H, ds = m->mamba_d_state,
		 dc = m->mamba_d_conv, dt = (H + 15) / 16;  /* "auto": ceil(H / 16) */
	bool conv_bias = true, proj_bias = false;
	kvp_status st;
	const struct kvp_node *n = kvp_map_get(h->cfg, "mamba_dt_rank");
	if (n && !(n->type == KVP_NODE_SCALAR && strcmp(n->value, "auto") == 0)) {
		if ((st = hf_node_positive(h, n, "mamba_dt_rank", UINT32_MAX, &dt)))
			return st;
	}
	if ((st = hf_opt_bool(h, h->cfg, "mamba_conv_bias", &conv_bias)) ||
	    (st = hf_opt_bool(h, h->cfg, "mamba_proj_bias", &proj_bias)))
		return st;
	uint64_t a = mul3(c, H, 2, di);
	a = sum(c, a, mul(c, di, dc));
	if (conv_bias)
		a = sum(c, a, di);
	a = sum(c, a, mul(c, di, sum(c, dt, 2 * ds)));
	a = sum(c, a, sum(c, mul(c, dt, di), di));
	a = sum(c, a, sum(c, mul(c, di, ds), di));
	a = sum(c, a, mul(c, di, H));
	if (proj_bias)
		a = sum(c, a, 2 * di + H);
	*out = sum(c, a, dt + 2 * ds);
	return KVP_STATUS_OK;
}

/* Gated DeltaNet mixer (Qwen3-Next; transformers Qwen3NextGatedDeltaNet):
 * in_proj_qkvz H x (2 H_k d_k + 2 H_v d_v), in_proj_ba H x 2 H_v, a depthwise
 * conv1d over q, k, v (conv_dim x kernel, no bias), A_log and dt_bias (H_v
 * each), the gated RMSNorm (d_v) and out_proj H_v d_v x H. */
static uint64_t gdn_mixer(const struct kvp_model *m, struct count *c)
{
	uint64_t H = m->hidden_size, hk = m->linear_num_key_heads, hv = m->linear_num_value_heads,
		 dk = m->linear_key_dim, dv = m->linear_value_dim;
	uint64_t conv_dim = sum(c, mul3(c, 2, hk, dk), mul(c, hv, dv));
	uint64_t a = mul(c, H, sum(c, mul3(c, 2, hk, dk), mul3(c, 2, hv, dv)));
	a = sum(c, a, mul3(c, H, 2, hv));
	a = sum(c, a, mul(c, conv_dim, m->linear_conv_kernel));
	a = sum(c, a, 2 * hv + dv);
	return sum(c, a, mul3(c, hv, dv, H));
}

/* GPT-2 / GPT-NeoX / Falcon layers: fused QKV, dense, a 2-matrix MLP and
 * LayerNorms with bias; biases unless Falcon's `bias` is false. */
static kvp_status count_layernorm_family(struct hf *h, const struct kvp_model *m, struct count *c)
{
	kvp_status st;
	uint64_t H = m->hidden_size, Nq = m->num_heads, Nkv = m->num_kv_heads, d = m->head_dim;
	bool bias = h->fam != FAM_FALCON, parallel = true, new_arch = false;
	uint32_t n_ln = 2;
	if (h->fam == FAM_FALCON &&
	    ((st = hf_opt_bool(h, h->cfg, "bias", &bias)) ||
	     (st = hf_opt_bool(h, h->cfg, "parallel_attn", &parallel)) ||
	     (st = hf_opt_bool(h, h->cfg, "new_decoder_architecture", &new_arch)) ||
	     (st = hf_opt_uint(h, h->cfg, "num_ln_in_parallel_attn", true, &n_ln, NULL))))
		return st;
	uint64_t qkv_out = (Nq + 2 * Nkv) * d;
	uint64_t layer = sum(c, mul(c, H, qkv_out), mul(c, Nq * d, H));
	if (bias)
		layer = sum(c, layer, qkv_out + H);
	uint64_t I = m->intermediate_size;
	layer = sum(c, layer, mul3(c, 2, H, I));
	if (bias)
		layer = sum(c, layer, I + H);
	/* LayerNorms (weight + bias): two per layer, except old Falcon's
	 * parallel block which has only input_layernorm */
	uint64_t lns = 2;
	if (h->fam == FAM_FALCON)
		lns = new_arch ? n_ln : parallel ? 1 : 2;
	else if (h->fam == FAM_PHI)
		lns = 1;  /* PhiDecoderLayer: input_layernorm feeds attention and MLP */
	layer = sum(c, layer, lns * 2 * H);
	add_dense(c, mul(c, m->num_layers, layer));
	return KVP_STATUS_OK;
}

/* Decoder layers of the RMSNorm, gated-MLP families (Llama and the rest):
 * attention (standard, MLA or a Mamba mixer), norms, dense or MoE FFN. */
static kvp_status count_gated_layers(struct hf *h, const struct kvp_model *m,
				     const struct moe_plan *p, struct count *cp)
{
	struct count c = *cp;
	kvp_status st;
	uint64_t L = m->num_layers, H = m->hidden_size, Nq = m->num_heads, Nkv = m->num_kv_heads,
		 d = m->head_dim;
	bool mla = m->layers[0] == KVP_LAYER_MLA;

	/* attention of a standard layer: q, k, v, o [+ biases] [+ q/k norm] [+ sinks] */
	bool attn_bias = false, mlp_bias = false;
	if ((st = hf_opt_bool(h, h->cfg, "attention_bias", &attn_bias)) ||
	    (st = hf_opt_bool(h, h->cfg, "mlp_bias", &mlp_bias)))
		return st;
	uint64_t std_attn = sum(&c, mul3(&c, H, Nq, d), mul3(&c, 2 * H, Nkv, d));
	std_attn = sum(&c, std_attn, mul3(&c, Nq, d, H));
	if (h->fam == FAM_QWEN2 || h->fam == FAM_QWEN2_MOE)
		std_attn = sum(&c, std_attn, (Nq + 2 * Nkv) * d);      /* q, k, v bias */
	else if (attn_bias)
		std_attn = sum(&c, std_attn, (Nq + 2 * Nkv) * d + H);  /* and o bias */
	if (h->fam == FAM_QWEN3 || h->fam == FAM_QWEN3_MOE || h->fam == FAM_GEMMA3 ||
	    h->fam == FAM_QWEN3_NEXT)
		std_attn = sum(&c, std_attn, 2 * d);                   /* q_norm, k_norm */
	if (h->fam == FAM_QWEN3_NEXT)
		std_attn = sum(&c, std_attn, mul3(&c, H, Nq, d));      /* q_proj's output gate */
	if (h->fam == FAM_GPT_OSS)
		std_attn = sum(&c, std_attn, Nq);                      /* sinks */
	uint64_t attn = std_attn, mamba = 0;
	if (mla && (st = mla_attention(h, m, &c, &attn)))
		return st;
	bool any_mamba = false;
	for (uint32_t i = 0; i < L; i++)
		any_mamba |= m->layers[i] == KVP_LAYER_MAMBA;
	if (any_mamba && m->linear_key_dim)
		mamba = gdn_mixer(m, &c);
	else if (any_mamba && (st = mamba_mixer(h, m, &c, &mamba)))
		return st;

	/* dense FFN width: Llama 4 keeps the expert width in intermediate_size */
	uint32_t dense_I = m->intermediate_size;
	if (h->fam == FAM_LLAMA4 &&
	    (st = hf_opt_uint(h, h->cfg, "intermediate_size_mlp", true, &dense_I, NULL)))
		return st;
	/* shared experts: DeepSeek n_shared_experts of Im; Qwen2-MoE one of
	 * shared_expert_intermediate_size plus its sigmoid gate; Llama 4 one of Im */
	uint32_t n_shared = 0, shared_I = 0;
	if ((h->fam == FAM_DEEPSEEK_V2 || h->fam == FAM_DEEPSEEK_V3) &&
	    (st = hf_opt_uint(h, h->cfg, "n_shared_experts", false, &n_shared, NULL)))
		return st;
	if ((h->fam == FAM_QWEN2_MOE || h->fam == FAM_QWEN3_NEXT) &&
	    (st = hf_opt_uint(h, h->cfg, "shared_expert_intermediate_size", false, &shared_I, NULL)))
		return st;
	uint64_t shared = mul3(&c, n_shared, 3 * H, p->Im);
	if (shared_I)
		shared = sum(&c, shared, sum(&c, mul3(&c, 3, H, shared_I), H));
	if (h->fam == FAM_LLAMA4)
		shared = sum(&c, shared, mul3(&c, 3, H, p->Im));
	/* one expert: gated 3*H*Im; gpt-oss fuses gate/up with biases */
	uint64_t expert = h->fam == FAM_GPT_OSS
		? sum(&c, sum(&c, mul3(&c, H, 2, p->Im), 2ULL * p->Im), sum(&c, mul(&c, p->Im, H), H))
		: mul3(&c, 3, H, p->Im);
	/* router H*E, + E bias (gpt-oss router bias, DeepSeek-V3 e_score_correction_bias) */
	uint64_t router = mul(&c, H, p->E);
	if (h->fam == FAM_GPT_OSS || h->fam == FAM_DEEPSEEK_V3)
		router = sum(&c, router, p->E);
	uint64_t norms = (h->fam == FAM_GEMMA2 || h->fam == FAM_GEMMA3 ? 4 : 2) * H;

	for (uint32_t i = 0; i < L && !c.overflow; i++) {
		add_dense(&c, m->layers[i] == KVP_LAYER_MAMBA ? mamba : attn);
		c.attn = sum(&c, c.attn, m->layers[i] == KVP_LAYER_MAMBA ? mamba : attn);
		add_dense(&c, norms);
		if (moe_layer(h, p, i)) {
			add_dense(&c, sum(&c, router, shared));
			c.shared = sum(&c, c.shared, shared);
			add_experts(&c, p->E, p->k, expert);
		} else {
			if (!dense_I)
				return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID,
						     "intermediate_size",
						     "required field is missing (layer %u has a "
						     "dense MLP)", i);
			uint64_t mlp = mul3(&c, 3, H, dense_I);
			if (mlp_bias)
				mlp = sum(&c, mlp, 2ULL * dense_I + H);
			add_dense(&c, mlp);
			c.mlp = sum(&c, c.mlp, mlp);
		}
	}
	*cp = c;
	return KVP_STATUS_OK;
}

/* Count params, active_params and expert_params (architectures.md 4.1). */
kvp_status hf_count_params(struct hf *h, struct kvp_model *m)
{
	struct count c = {0};
	struct moe_plan *p = &(struct moe_plan){0};
	kvp_status st;
	uint64_t H = m->hidden_size, V = m->vocab_size;
	if ((st = moe_read(h, m, p)))
		return st;
	m->moe_num_experts = p->E;
	m->moe_experts_per_token = p->E ? p->k : 0;
	m->moe_intermediate_size = p->E ? p->Im : 0;

	/* embeddings: V*H, the LM head again unless tied, GPT-2's learned positions */
	add_dense(&c, mul(&c, V, H));
	if (!m->tie_word_embeddings)
		add_dense(&c, mul(&c, V, H));
	if (h->fam == FAM_GPT2)
		add_dense(&c, mul(&c, m->max_context ? m->max_context : 1024, H));
	if (h->fam == FAM_PHI && !m->tie_word_embeddings)
		add_dense(&c, V);  /* phi's lm_head has a bias */
	/* final norm: LayerNorm has a bias */
	add_dense(&c, hf_is_layernorm_family(h->fam) ? 2 * H : H);

	if (hf_is_layernorm_family(h->fam)) {
		if ((st = count_layernorm_family(h, m, &c)))
			return st;
	} else if ((st = count_gated_layers(h, m, p, &c))) {
		return st;
	}
	if (c.overflow)
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_OVERFLOW, "params",
				     "the parameter count does not fit in 64 bits");
	m->params = c.total;
	m->active_params = c.active;
	m->expert_params = c.expert;
	h->attn_params = c.attn;
	h->shared_params = c.shared;
	h->mlp_params = c.mlp;
	m->shared_expert_params = c.shared;
	/* which layers hold the experts, for the pipeline stages (shape.c) */
	m->moe_layers_known = p->E && !hf_is_layernorm_family(h->fam);
	for (uint32_t i = 0; m->moe_layers_known && i < m->num_layers && i < KVP_MAX_LAYERS; i++)
		m->moe_layers[i] = moe_layer(h, p, i);
	return KVP_STATUS_OK;
}
