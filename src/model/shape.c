/* shape.c: the deployment shape: its checks, the weights one GPU holds under
 * it, and the bytes of the experts' exchange.  See shape.h for the placement
 * and its source; spec.c builds the per-GPU layer list on top of this.
 *
 * Stance: the same weights land on a GPU whether the routed experts are
 * sharded or owned whole (vLLM spreads them over tp x dp either way); ep
 * changes what must divide what and what crosses the link, not the bytes. */
#include "model/shape.h"

#include <string.h>

#include "base/units.h"

uint32_t kvp_shape_dp(const struct kvp_parallel *par)
{
	return par->dp ? par->dp : 1;
}

uint32_t kvp_shape_ep(const struct kvp_parallel *par)
{
	return par->ep ? par->ep : 1;
}

uint32_t kvp_shape_gpus(const struct kvp_parallel *par)
{
	uint64_t g = (uint64_t)par->tp * par->pp * kvp_shape_dp(par);
	return g > UINT32_MAX ? 0 : (uint32_t)g;
}

kvp_status kvp_shape_check(const struct kvp_model *m, const struct kvp_parallel *par,
			   struct kvp_error *err)
{
	const char *where = m->path[0] ? m->path : m->name;
	uint32_t dp = kvp_shape_dp(par), ep = kvp_shape_ep(par);
	uint64_t stage_gpus = (uint64_t)par->tp * dp;
	uint32_t gpus = kvp_shape_gpus(par);
	if (gpus == 0)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "dp",
				     "tp x pp x dp must be between 1 and %u GPUs", UINT32_MAX);
	if (par->gpus && par->gpus != gpus)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "dp",
				     "tp %u x pp %u x dp %u = %u GPUs, not the %u asked for",
				     par->tp, par->pp, dp, gpus, par->gpus);
	if (ep <= 1)
		return KVP_STATUS_OK;
	if (!m->moe_num_experts || !m->expert_params)
		return kvp_error_set(err, KVP_STATUS_INVALID, where, 0, 0, "ep",
				     "%u: the model has no routed experts", ep);
	if (m->moe_num_experts % ep)
		return kvp_error_set(err, KVP_STATUS_INVALID, where, 0, 0, "ep",
				     "%u does not divide the %u routed experts", ep,
				     m->moe_num_experts);
	if (stage_gpus % ep)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "ep",
				     "%u must divide tp x dp = %llu, the GPUs of a stage the experts "
				     "are spread over", ep, (unsigned long long)stage_gpus);
	return KVP_STATUS_OK;
}

/* Layers [first, first + n) that hold routed experts (moe_layers). */
static uint32_t moe_layers_in(const struct kvp_model *m, uint32_t first, uint32_t n)
{
	uint32_t c = 0;
	for (uint32_t i = first; i < first + n && i < m->num_layers && i < KVP_MAX_LAYERS; i++)
		c += m->moe_layers[i] != 0;
	return c;
}

uint32_t kvp_shape_moe_layers(const struct kvp_model *m)
{
	if (!m->moe_num_experts || !m->expert_params || !m->moe_intermediate_size)
		return 0;
	if (m->moe_layers_known)
		return moe_layers_in(m, 0, m->num_layers);
	double one = 3.0 * m->moe_num_experts * m->hidden_size * m->moe_intermediate_size;
	double n = (double)m->expert_params / one + 0.5;
	return n >= m->num_layers ? m->num_layers : (uint32_t)n;
}

/* x * nlayers / L without overflow: a stage's share of per-layer parameters. */
static bool layer_share(uint64_t x, uint32_t nlayers, uint32_t L, uint64_t *out)
{
	uint64_t q;
	if (!kvp_mul(x / L, nlayers, &q))
		return false;
	*out = q + x % L * nlayers / L;
	return true;
}

/* Weights whose bytes a file gave (GGUF): the embeddings and head on the first
 * and last stages (half each when they differ), the layers' share of the rest. */
static kvp_status file_stage_weights(const struct kvp_model *m, const struct kvp_parallel *par,
				     uint32_t stage, uint32_t nlayers, struct kvp_weights_split *out)
{
	uint64_t emb = 0, d, sh, ro, t;
	if (par->pp == 1)
		emb = m->file_embed_bytes;
	else if (stage == 0 || stage == par->pp - 1)
		emb = kvp_cdiv(m->file_embed_bytes, 2);
	if (!layer_share(m->file_dense_bytes, nlayers, m->num_layers, &d) ||
	    !layer_share(m->file_shared_bytes, nlayers, m->num_layers, &sh) ||
	    !layer_share(m->file_routed_bytes, nlayers, m->num_layers, &ro))
		return KVP_STATUS_OVERFLOW;
	out->embed_bytes = kvp_cdiv(emb, par->tp);
	out->dense_bytes = kvp_cdiv(d, par->tp);
	out->shared_bytes = kvp_cdiv(sh, par->tp);
	out->routed_bytes = kvp_cdiv(ro, (uint64_t)par->tp * kvp_shape_dp(par));
	if (!kvp_add(out->embed_bytes, out->dense_bytes, &t) || !kvp_add(t, out->shared_bytes, &t) ||
	    !kvp_add(t, out->routed_bytes, &t))
		return KVP_STATUS_OVERFLOW;
	out->total_bytes = t;
	return KVP_STATUS_OK;
}

kvp_status kvp_shape_stage_weights(const struct kvp_model *m, enum kvp_dtype serving,
				   const struct kvp_parallel *par, uint32_t stage, uint32_t first,
				   uint32_t nlayers, struct kvp_weights_split *out)
{
	enum kvp_dtype wdt = m->weights_dtype == KVP_DTYPE_AUTO ? serving : m->weights_dtype;
	enum kvp_dtype edt = m->expert_dtype == KVP_DTYPE_AUTO ? wdt : m->expert_dtype;
	memset(out, 0, sizeof *out);
	if (m->file_embed_bytes || m->file_dense_bytes || m->file_shared_bytes ||
	    m->file_routed_bytes)
		return file_stage_weights(m, par, stage, nlayers, out);
	uint64_t vh, emb, emb_here = 0, moe_div = (uint64_t)par->tp * kvp_shape_dp(par);
	if (!kvp_mul(m->vocab_size, m->hidden_size, &vh) ||
	    !kvp_mul(vh, m->tie_word_embeddings ? 1 : 2, &emb))
		return KVP_STATUS_OVERFLOW;
	uint64_t experts = m->expert_params + m->shared_expert_params;
	if (experts < m->expert_params || experts > m->params)
		return KVP_STATUS_INVALID;
	if (emb > m->params - experts)
		emb = 0; /* a profile whose params exclude embeddings: count none */
	uint64_t head_here = 0; /* the LM head, when split over tp x dp */
	uint32_t dp = kvp_shape_dp(par), full = dp > 1 ? par->dp_full_tp : 0;
	if (emb) {
		if (stage == 0)
			emb_here += vh;
		if (stage == par->pp - 1 && (!m->tie_word_embeddings || par->pp > 1)) {
			if (full & KVP_SHAPE_DP_LM_HEAD)
				head_here = vh;
			else
				emb_here += vh;
		}
	}
	uint64_t dense = m->params - experts - emb, dense_here, shared_here, routed_here;
	/* whole on every tp rank (shape.h): the MoE routers, and the K and V
	 * projections of the one KV head each rank holds when tp > H_kv */
	uint64_t router_all = 0, kv_rep_all = 0, router_here, kv_rep_here;
	uint64_t mla_all = 0, mla_here;
	uint32_t attn = 0, mla = 0, moe = kvp_shape_moe_layers(m);
	for (uint32_t i = 0; i < m->num_layers && i < KVP_MAX_LAYERS; i++) {
		attn += m->layers[i] == KVP_LAYER_FULL || m->layers[i] == KVP_LAYER_SLIDING ||
			m->layers[i] == KVP_LAYER_CHUNKED;
		mla += m->layers[i] == KVP_LAYER_MLA;
	}
	if (moe && (!kvp_mul((uint64_t)moe * m->moe_num_experts, m->hidden_size, &router_all) ||
		    router_all > dense))
		router_all = 0; /* a profile whose params leave the routers out: none */
	dense -= router_all;
	/* MLA's down-projections, H x (q_lora + kv_lora + d_rope) a layer, are
	 * whole on every rank too (deepseek_v2.py: q_a_proj and
	 * kv_a_proj_with_mqa replicated), quantized like the rest */
	if (mla && (!kvp_mul((uint64_t)m->mla_q_lora_rank + m->mla_kv_lora_rank + m->mla_rope_dim,
			     m->hidden_size, &mla_all) ||
		    !kvp_mul(mla_all, mla, &mla_all) || mla_all > dense))
		mla_all = 0;
	dense -= mla_all;
	/* tp ranks of one head each stand for tp heads where the model has H_kv:
	 * 2 H d_h (tp - H_kv) more parameters per layer, before the split by tp */
	uint64_t kv_head = 0; /* 2 H d_h: one head's K and V projections */
	if (attn && m->num_kv_heads && par->tp > m->num_kv_heads &&
	    !(kvp_mul(2ULL * m->hidden_size, m->head_dim, &kv_head) &&
	      kvp_mul(kv_head, par->tp - m->num_kv_heads, &kv_rep_all) &&
	      kvp_mul(kv_rep_all, attn, &kv_rep_all)))
		return KVP_STATUS_OVERFLOW;
	/* A stage's experts, routers and dense MLPs are those of its own layers
	 * (the engines split the layers whole: vLLM get_pp_indices), counted
	 * where the model says which layers hold experts: DeepSeek-V3 at pp 2
	 * puts its 3 dense layers and 28 MoE layers on the first stage, 30 MoE
	 * layers on the second.  Otherwise each stage takes its share of them. */
	uint32_t moe_here = 0, dense_layers = 0, dense_layers_here = 0;
	uint64_t mlp_all = 0, mlp_here = 0;
	bool counted = m->moe_layers_known && moe;
	if (counted) {
		moe_here = moe_layers_in(m, first, nlayers);
		dense_layers = m->num_layers - moe;
		dense_layers_here = nlayers - moe_here;
		/* the dense layers' gated MLPs, 3 H I each, where params hold them */
		if (dense_layers &&
		    (!kvp_mul(3ULL * m->hidden_size, m->intermediate_size, &mlp_all) ||
		     !kvp_mul(mlp_all, dense_layers, &mlp_all) || mlp_all > dense))
			mlp_all = 0;
		if (!layer_share(mlp_all, dense_layers_here, dense_layers ? dense_layers : 1,
				 &mlp_here))
			return KVP_STATUS_OVERFLOW;
	}
	uint32_t ek = counted ? moe_here : nlayers, eK = counted ? moe : m->num_layers;
	if (!layer_share(router_all, ek, eK, &router_here) ||
	    !layer_share(mla_all, nlayers, m->num_layers, &mla_here) ||
	    !layer_share(kv_rep_all, nlayers, m->num_layers, &kv_rep_here))
		return KVP_STATUS_OVERFLOW;
	if (!layer_share(dense - mlp_all, nlayers, m->num_layers, &dense_here) ||
	    !kvp_add(dense_here, mlp_here, &dense_here) ||
	    !layer_share(m->shared_expert_params, ek, eK, &shared_here) ||
	    !layer_share(m->expert_params, ek, eK, &routed_here))
		return KVP_STATUS_OVERFLOW;
	/* what the checkpoint's quantization leaves in the serving dtype
	 * (ignored attention, shared experts, dense MLPs), in the same
	 * proportion per layer; taken from the dense share, then the shared
	 * experts' */
	uint64_t unq_all = m->unquantized_params < dense + m->shared_expert_params
		? m->unquantized_params : dense + m->shared_expert_params, unq_here;
	if (!layer_share(unq_all, nlayers, m->num_layers, &unq_here))
		return KVP_STATUS_OVERFLOW;
	uint64_t unq_dense = unq_here < dense_here ? unq_here : dense_here;
	uint64_t unq_shared = unq_here - unq_dense < shared_here ? unq_here - unq_dense : shared_here;
	dense_here -= unq_dense;
	shared_here -= unq_shared;
	/* the replicated heads' K and V as the tp ranks hold them (one head each) */
	uint64_t kv_whole_all = 0, kv_whole_here = 0;
	if (kv_rep_here &&
	    !(kvp_add(dense_here, kv_rep_here, &dense_here) &&
	      kvp_mul(kv_head, par->tp, &kv_whole_all) &&
	      kvp_mul(kv_whole_all, attn, &kv_whole_all) &&
	      layer_share(kv_whole_all, nlayers, m->num_layers, &kv_whole_here)))
		return KVP_STATUS_OVERFLOW;
	/* under DP attention the engine may split the dense layers' MLPs over
	 * every GPU of the stage (KVP_SHAPE_DP_DENSE_MLP): set them apart */
	uint64_t mlp_full = 0;
	if ((full & KVP_SHAPE_DP_DENSE_MLP) && mlp_here <= dense_here) {
		mlp_full = mlp_here;
		dense_here -= mlp_here;
	}
	/* the experts follow the dense layout unless they have their own */
	const struct kvp_weights_format *wf = &m->weights_format,
		*ef = m->expert_format.bits ? &m->expert_format
		    : m->expert_dtype == KVP_DTYPE_AUTO ? wf : &m->expert_format;
	uint64_t b_emb, b_dense, b_shared, b_routed, b_unq_d, b_unq_s, b_tower = 0, t;
	uint64_t b_router, b_kv_whole, b_mla, b_head, b_mlp_full;
	kvp_status st;
	if ((st = kvp_weights_bytes(emb_here, serving, &b_emb)) ||
	    (st = wf->bits ? kvp_weights_format_bytes(dense_here, wf, &b_dense)
			   : kvp_weights_bytes(dense_here, wdt, &b_dense)) ||
	    (st = wf->bits ? kvp_weights_format_bytes(shared_here, wf, &b_shared)
			   : kvp_weights_bytes(shared_here, wdt, &b_shared)) ||
	    (st = ef->bits ? kvp_weights_format_bytes(routed_here, ef, &b_routed)
			   : kvp_weights_bytes(routed_here, edt, &b_routed)) ||
	    (st = kvp_weights_bytes(unq_dense, serving, &b_unq_d)) ||
	    /* routers stay in the serving dtype (ReplicatedLinear, quant_config None) */
	    (st = kvp_weights_bytes(router_here, serving, &b_router)) ||
	    (st = wf->bits ? kvp_weights_format_bytes(kv_whole_here, wf, &b_kv_whole)
			   : kvp_weights_bytes(kv_whole_here, wdt, &b_kv_whole)) ||
	    (st = wf->bits ? kvp_weights_format_bytes(mla_here, wf, &b_mla)
			   : kvp_weights_bytes(mla_here, wdt, &b_mla)) ||
	    (st = kvp_weights_bytes(unq_shared, serving, &b_unq_s)) ||
	    (st = kvp_weights_bytes(head_here, serving, &b_head)) ||
	    (st = wf->bits ? kvp_weights_format_bytes(mlp_full, wf, &b_mlp_full)
			   : kvp_weights_bytes(mlp_full, wdt, &b_mlp_full)))
		return st;
	/* towers: the first stage, serving dtype, split by tp like the rest */
	if (stage == 0 && m->tower_params &&
	    (st = kvp_weights_bytes(m->tower_params, serving, &b_tower)))
		return st;
	if (!kvp_add(b_dense, b_unq_d, &b_dense) || !kvp_add(b_shared, b_unq_s, &b_shared))
		return KVP_STATUS_OVERFLOW;
	out->embed_bytes = kvp_cdiv(b_emb, par->tp) + kvp_cdiv(b_head, moe_div);
	out->dense_bytes = kvp_cdiv(b_dense, par->tp) + kvp_cdiv(b_mlp_full, moe_div);
	out->replicated_bytes = kvp_cdiv(b_kv_whole, par->tp) + b_router + b_mla;
	if (!kvp_add(out->dense_bytes, b_router, &out->dense_bytes) ||
	    !kvp_add(out->dense_bytes, b_mla, &out->dense_bytes))
		return KVP_STATUS_OVERFLOW;
	out->shared_bytes = kvp_cdiv(b_shared, full & KVP_SHAPE_DP_SHARED_EXPERTS ? moe_div : par->tp);
	out->routed_bytes = kvp_cdiv(b_routed, moe_div);
	out->tower_bytes = kvp_cdiv(b_tower, par->tp);
	if (!kvp_add(out->embed_bytes, out->dense_bytes, &t) || !kvp_add(t, out->shared_bytes, &t) ||
	    !kvp_add(t, out->routed_bytes, &t) || !kvp_add(t, out->tower_bytes, &t))
		return KVP_STATUS_OVERFLOW;
	out->total_bytes = t;
	return KVP_STATUS_OK;
}

double kvp_shape_moe_exchange_bytes(const struct kvp_model *m, const struct kvp_parallel *par,
				    enum kvp_dtype serving, double tokens)
{
	uint32_t dp = kvp_shape_dp(par), ep = kvp_shape_ep(par);
	if (dp <= 1 || !m->moe_num_experts || !m->expert_params)
		return 0;
	double row = (double)m->hidden_size * kvp_dtype_info(serving)->bits / 8.0;
	if (ep > 1) {
		double k = m->moe_experts_per_token ? m->moe_experts_per_token : 1;
		return tokens * k * row * (ep - 1) / ep;
	}
	return tokens * row * (dp - 1);
}

bool kvp_shape_to_record(const struct kvp_spec *s, uint64_t max_sequences, struct kvp_record *r)
{
	const struct kvp_weights_split *w = &s->weights_split;
	uint64_t dep;
	if (!kvp_mul(max_sequences, kvp_shape_dp(&s->par), &dep))
		dep = UINT64_MAX;
	return kvp_record_u64(r, "dp", kvp_shape_dp(&s->par)) &&
	       kvp_record_u64(r, "ep", kvp_shape_ep(&s->par)) &&
	       kvp_record_u64(r, "gpus", kvp_shape_gpus(&s->par)) &&
	       kvp_record_u64(r, "weights_embed_bytes", w->embed_bytes) &&
	       kvp_record_u64(r, "weights_dense_bytes", w->dense_bytes) &&
	       kvp_record_u64(r, "weights_shared_expert_bytes", w->shared_bytes) &&
	       kvp_record_u64(r, "weights_routed_expert_bytes", w->routed_bytes) &&
	       kvp_record_u64(r, "weights_draft_bytes", w->draft_bytes) &&
	       kvp_record_u64(r, "dp_sequences", dep);
}
