/* budget.c: one GPU's memory budget and KV pool under each engine's policy.
 * Legend: n = tokens per sequence, B = sequences, P = block size in tokens,
 * T = max_batched_tokens.  See budget.h for the four policies; the engine
 * formulas are transcribed from peers.md section 2 and architectures.md
 * section 1.4 (vLLM's hybrid KV groups). */
#include "memory/budget.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/shape.h"
#include "memory/draft.h"
#include "base/units.h"
#include "model/spec.h"

/* Activation peak of one forward pass over T tokens on one GPU, in the
 * serving dtype: per token the hidden state and residual (2H), the q/k/v
 * projections ((H_q/tp + 2 H_kv/tp) d_h) and the gated MLP's gate/up output
 * and activation (3 I/tp, with I = max(dense I, top_k * expert I) for MoE);
 * plus the sampler's fp32 logits and probabilities for min(S, T) sequences
 * (2 * 4 * V/tp each).  A profile run's peak, as vLLM measures it. */
uint64_t kvp_budget_activation_estimate(const struct kvp_spec *s, uint64_t tokens,
					uint32_t max_num_seqs)
{
	const struct kvp_model *m = s->model;
	uint64_t tp = s->par.tp;
	uint64_t inter = m->intermediate_size;
	if (m->moe_num_experts) {
		uint64_t ei = m->moe_intermediate_size ? m->moe_intermediate_size : m->intermediate_size;
		uint64_t moe;
		if (!kvp_mul(ei, m->moe_experts_per_token, &moe))
			return UINT64_MAX;
		inter = moe > inter ? moe : inter;
	}
	/* heads (2^32 at most) times d_h (2^32) and 3 I can pass 2^64: checked */
	uint64_t qkv, mlp, per_token;
	if (!kvp_mul((uint64_t)m->num_heads / tp + 2ULL * s->kv_heads_per_gpu, m->head_dim, &qkv) ||
	    !kvp_mul(inter / tp, 3, &mlp) || !kvp_add(qkv, mlp, &per_token) ||
	    !kvp_add(per_token, 2ULL * m->hidden_size, &per_token))
		return UINT64_MAX;
	uint64_t elem = kvp_dtype_info(s->serving_dtype)->bits / 8;
	uint64_t seqs = max_num_seqs < tokens ? max_num_seqs : tokens;
	uint64_t a, b, t;
	if (!kvp_mul(per_token, elem, &a) || !kvp_mul(a, tokens, &a) ||
	    !kvp_mul(seqs, 8ULL * (m->vocab_size / tp), &b) || !kvp_add(a, b, &t))
		return UINT64_MAX;
	return t;
}

uint64_t kvp_budget_vllm_sampler_peak(const struct kvp_spec *s, const struct kvp_engine_model *e,
				      uint64_t tokens, uint32_t max_num_seqs)
{
	const struct kvp_model *m = s->model;
	uint64_t N = max_num_seqs < tokens ? max_num_seqs : tokens, V = m->vocab_size,
		 H = m->hidden_size, elem = kvp_dtype_info(s->serving_dtype)->bits / 8;
	/* the Triton top-k/top-p buffer has min(next_pow2(min(SMs, N)), SMs) rows */
	uint64_t rows = 1;
	while (rows < N && rows < e->topk_buffer_rows)
		rows *= 2;
	rows = rows < e->topk_buffer_rows ? rows : e->topk_buffer_rows;
	uint64_t a, b, c, d, w = 0, t;
	if (!kvp_mul(N, V, &a) || !kvp_mul(a, e->sampler_bytes_per_seq_vocab, &a) ||
	    !kvp_mul(rows, V, &b) || !kvp_mul(b, e->topk_buffer_bytes_per_row_vocab, &b) ||
	    !kvp_mul(tokens, H, &c) || !kvp_mul(c, elem * e->retained_hidden_per_token, &c) ||
	    !kvp_mul(N, H, &d) || !kvp_mul(d, elem * e->retained_hidden_per_seq, &d))
		return UINT64_MAX;
	if (m->moe_num_experts && e->moe_workspaces) {
		/* vLLM 0.19.0 (fused_moe/modular_kernel.py _allocate_buffers
		 * l.1009-1069, TritonExperts.workspace_shapes fused_moe.py
		 * l.1976-1991): M = T, N = w1's rows 2 I_e / tp_moe, K = H;
		 * workspace13 (M, top_k, max(N / 2, K)) for a gated activation,
		 * shared with the (M, K) output, then workspace2 (M, top_k,
		 * max(N, K)), one WorkspaceManager buffer in the model dtype with
		 * each part rounded up to 256 B (v1/worker/workspace.py
		 * get_simultaneous).  tp_moe: 1 under EP, else tp x dp
		 * (FusedMoEParallelConfig), as the MXFP4 padding below */
		uint64_t ie = m->moe_intermediate_size ? m->moe_intermediate_size
						       : m->intermediate_size;
		uint64_t moe_tp = kvp_shape_ep(&s->par) > 1
					  ? 1 : (uint64_t)s->par.tp * kvp_shape_dp(&s->par);
		uint64_t n = moe_tp ? 2 * ie / moe_tp : 2 * ie;
		uint64_t width[2] = {n / 2 > H ? n / 2 : H, n > H ? n : H};
		for (uint32_t i = 0; i < e->moe_workspaces && i < 2; i++) {
			uint64_t part;
			if (!kvp_mul(tokens, m->moe_experts_per_token, &part) ||
			    !kvp_mul(part, width[i], &part) || !kvp_mul(part, elem, &part) ||
			    !kvp_add(part, 255, &part) || !kvp_add(w, part / 256 * 256, &w))
				return UINT64_MAX;
		}
	}
	if (!kvp_add(a, b, &t) || !kvp_add(t, c, &t) || !kvp_add(t, d, &t) || !kvp_add(t, w, &t))
		return UINT64_MAX;
	return t;
}

/* vLLM's per-request worst case in blocks for one layer of this kind
 * (kv_cache_interface.py max_memory_usage_bytes / page).  W - 1 + T past
 * 2^64 is more than n anyway, so the window sum saturates; the result itself
 * is UINT64_MAX only when it does not fit (n near 2^64 with P = 1), which
 * every caller's checked product then reports as an overflow. */
static uint64_t vllm_blocks(enum kvp_layer_kind kind, uint32_t window, uint64_t n, uint32_t P,
			    uint64_t T)
{
	uint64_t w;
	switch (kind) {
	case KVP_LAYER_SLIDING:
		if (!kvp_add((uint64_t)window - 1, T, &w))
			w = UINT64_MAX;
		w = kvp_cdiv(w < n ? w : n, P);
		return w < UINT64_MAX ? w + 1 : UINT64_MAX;
	case KVP_LAYER_CHUNKED:
		if (!kvp_add(window, T, &w))
			w = UINT64_MAX;
		return kvp_cdiv(w < n ? w : n, P);
	case KVP_LAYER_MAMBA:
		return 1;
	default:
		return kvp_cdiv(n, P);
	}
}

/* The kind a layer counts as in vLLM's grouping (MLA is full attention). */
static enum kvp_layer_kind vllm_kind(enum kvp_layer_kind k, bool hybrid_off)
{
	if (k == KVP_LAYER_MLA)
		return KVP_LAYER_FULL;
	if (hybrid_off && (k == KVP_LAYER_SLIDING || k == KVP_LAYER_CHUNKED))
		return KVP_LAYER_FULL;
	return k;
}

/* Per-request blocks in vLLM's pool (kv_cache_utils.py
 * get_max_concurrency_for_kv_cache_config): every KV group, padded ones
 * included, holds its kind's worst case, so a request takes the sum over
 * groups of blocks per group; false when the sum does not fit in 64 bits. */
static bool vllm_request_blocks(const struct kvp_budget *b, uint64_t n, uint64_t *out)
{
	uint64_t sum = 0, t;
	for (int k = 0; k < KVP_LAYER_KIND_COUNT; k++) {
		const struct kvp_budget_group *g = &b->group[k];
		if (!g->layers)
			continue;
		uint32_t window = 0;
		for (uint32_t i = 0; i < b->spec.num_layers && !window; i++)
			if (b->spec.layers[i].kind == (enum kvp_layer_kind)k)
				window = b->spec.layers[i].window;
		if (!kvp_mul(g->groups, vllm_blocks((enum kvp_layer_kind)k, window, n, b->block_size,
						    b->max_batched_tokens), &t) ||
		    !kvp_add(sum, t, &sum))
			return false;
	}
	*out = sum;
	return true;
}

/* Lay out vLLM's KV groups; sets page_bytes, group_size, groups, padding.
 * False when the grown block size or the page does not fit. */
static bool vllm_groups(struct kvp_budget *b, bool hybrid_off)
{
	const struct kvp_spec *s = &b->spec;
	uint64_t attn_token_bytes = 0, state = 0;
	for (uint32_t i = 0; i < s->num_layers; i++) {
		const struct kvp_spec_layer *l = &s->layers[i];
		if (l->kind == KVP_LAYER_NONE)
			continue;
		enum kvp_layer_kind k = vllm_kind(l->kind, hybrid_off);
		b->group[k].kind = k;
		b->group[k].layers++;
		if (l->token_bytes > attn_token_bytes)
			attn_token_bytes = l->token_bytes;
		if (l->seq_bytes > state)
			state = l->seq_bytes;
	}
	/* Mamba hybrids: the attention block grows (in steps of 16 tokens) until
	 * one attention page holds a Mamba state; the state is padded to it. */
	uint64_t page, step, grown;
	if (!kvp_mul(b->block_size, attn_token_bytes, &page))
		return false;
	if (state && attn_token_bytes && page < state) {
		if (!kvp_mul(16, attn_token_bytes, &step) ||
		    !kvp_mul(16, kvp_cdiv(state, step), &grown) || grown > UINT32_MAX ||
		    !kvp_mul(grown, attn_token_bytes, &page))
			return false;
		b->block_size = (uint32_t)grown;
	}
	b->page_bytes = attn_token_bytes ? page : state;
	uint32_t lo = UINT32_MAX, hi = 0, types = 0;
	for (int k = 0; k < KVP_LAYER_KIND_COUNT; k++) {
		uint32_t c = b->group[k].layers;
		if (!c)
			continue;
		types++;
		lo = c < lo ? c : lo;
		hi = c > hi ? c : hi;
	}
	/* group size: the smallest layer count, or the largest when it is
	 * under 1.5 times the smallest (kv_cache_utils.py) */
	b->group_size = types <= 1 ? hi : (2 * hi < 3 * lo ? hi : lo);
	b->num_groups = 0;
	for (int k = 0; k < KVP_LAYER_KIND_COUNT; k++) {
		struct kvp_budget_group *g = &b->group[k];
		if (!g->layers)
			continue;
		g->groups = (uint32_t)kvp_cdiv(g->layers, b->group_size);
		b->num_groups += g->groups;
		b->padding_layers += g->groups * b->group_size - g->layers;
	}
	return true;
}

kvp_status kvp_budget_pool_for(const struct kvp_budget *b, uint64_t n, uint64_t B, uint64_t *out)
{
	uint64_t per;
	if (b->engine == KVP_ENGINE_VLLM) {
		uint64_t blocks, slot;
		if (!vllm_request_blocks(b, n, &blocks) ||
		    !kvp_mul(b->page_bytes, b->group_size, &slot) || !kvp_mul(blocks, slot, &per))
			return KVP_STATUS_OVERFLOW;
	} else if (kvp_spec_seq_bytes(&b->spec, n, b->block_size, &per)) {
		return KVP_STATUS_OVERFLOW;
	}
	return kvp_mul(per, B, out) ? KVP_STATUS_OK : KVP_STATUS_OVERFLOW;
}

static uint64_t max_sequences_at(const struct kvp_budget *b, uint64_t n)
{
	uint64_t per;
	if (kvp_budget_pool_for(b, n, 1, &per) || per == 0)
		return 0;
	if (b->engine == KVP_ENGINE_VLLM)
		return b->num_blocks / (per / (b->page_bytes * b->group_size));
	return b->kv_pool_bytes / per;
}

uint64_t kvp_budget_max_context(const struct kvp_budget *b, uint64_t B, uint64_t limit)
{
	uint64_t lo = 0, hi = limit;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo + 1) / 2;
		if (max_sequences_at(b, mid) >= B)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

double kvp_budget_utilization_for(const struct kvp_budget *b, uint64_t n, uint64_t B)
{
	uint64_t pool;
	if (kvp_budget_pool_for(b, n, B, &pool))
		return INFINITY;
	double need = (double)pool, gpu = (double)b->gpu_memory_bytes;
	double fixed = (double)b->weights_bytes + (double)b->activation_bytes +
		       (double)b->overhead_bytes;
	switch (b->engine) {
	case KVP_ENGINE_SGLANG:
		/* pool = f * (gpu - context overhead) - weights */
		return gpu > (double)b->overhead_bytes
			? (need + (double)b->weights_bytes) / (gpu - (double)b->overhead_bytes)
			: INFINITY;
	case KVP_ENGINE_TRTLLM:
		/* pool = f * (gpu - weights - activations - overhead) */
		return gpu > fixed ? need / (gpu - fixed) : INFINITY;
	default:
		return (need + fixed) / gpu;
	}
}

/* floor(x) bytes, at most cap: 0 for a negative or NaN x (a fraction of a
 * GPU smaller than its overhead), cap beyond it (casting a double past 2^64
 * to uint64_t is undefined, and rounding can lift x over the exact cap). */
static uint64_t bytes_floor(double x, uint64_t cap)
{
	x = floor(x);
	if (!(x > 0))
		return 0;
	if (x >= (double)cap)
		return cap;
	return (uint64_t)x;
}

/* Blocks of a `pool`-byte pool, engines other than vLLM.  TensorRT-LLM
 * counts tokens first and rounds the blocks up: maxTokens = floor(pool /
 * B/token), blocks = ceilDiv(maxTokens, tokensPerBlock)
 * (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp, calculateMaxNumBlocks:
 * https://github.com/NVIDIA/TensorRT-LLM/blob/002ba6a7cc5eb28f180d45d4a91142d9d927a606/cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp),
 * so its pool can exceed the fraction by up to one block less a token; the
 * others take whole pages of the pool. */
static uint64_t pool_blocks(const struct kvp_budget *b, uint64_t pool)
{
	if (b->engine == KVP_ENGINE_TRTLLM)
		return b->spec.token_bytes && b->block_size
			? kvp_cdiv(pool / b->spec.token_bytes, b->block_size) : 0;
	return b->page_bytes ? pool / b->page_bytes : 0;
}

/* Max tokens and sequences at context n if the pool were `pool` bytes. */
static void tokens_at_pool(const struct kvp_budget *b, uint64_t pool, uint64_t *tokens,
			   uint64_t *seqs)
{
	uint64_t per = 0, blocks;
	if (kvp_budget_pool_for(b, b->context, 1, &per))
		per = 0;
	*tokens = *seqs = 0;
	if (b->engine == KVP_ENGINE_VLLM) {
		uint64_t slot = b->page_bytes * b->group_size;
		blocks = slot ? pool / slot : 0;
		if (b->num_groups && !kvp_mul(blocks / b->num_groups, b->block_size, tokens))
			*tokens = UINT64_MAX;
		*seqs = per && slot && per / slot ? blocks / (per / slot) : 0;
	} else {
		blocks = pool_blocks(b, pool);
		if (!kvp_mul(blocks, b->block_size, tokens))
			*tokens = UINT64_MAX;
		*seqs = per ? pool / per : 0;
	}
}

/* The longest one sequence (budget.h): kvp_budget_max_context's search for
 * one sequence, so it uses the very bytes per sequence the fit uses.  F, the
 * bytes per token of the layers that keep every token (full and MLA; under
 * vLLM without its hybrid manager every attention layer), bounds it: one
 * sequence of n tokens takes at least n F of the pool.  Without such layers
 * the search runs to half of 2^64 (a length whose bytes overflow does not
 * fit), and reaching it means nothing grows with n: unbounded. */
static uint64_t one_sequence_tokens(const struct kvp_budget *b)
{
	const struct kvp_spec *s = &b->spec;
	const uint64_t limit = UINT64_MAX / 2;
	uint64_t F = s->kind_token_bytes[KVP_LAYER_FULL] + s->kind_token_bytes[KVP_LAYER_MLA];
	if (!F && b->engine == KVP_ENGINE_VLLM && b->group[KVP_LAYER_FULL].layers)
		F = s->token_bytes;
	uint64_t hi = F ? b->kv_pool_bytes / F + 1 : limit;
	uint64_t n = kvp_budget_max_context(b, 1, hi < limit ? hi : limit);
	return !F && n == limit ? KVP_BUDGET_UNBOUNDED : n;
}

/* Spread of `bytes` by fraction f, rounded up. */
static uint64_t spread_of(uint64_t bytes, double f)
{
	double x = ceil((double)bytes * f);
	return x >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)x;
}

/* The band (budget.h): every estimated term's spread against the pool. */
static void budget_band(struct kvp_budget *b, const struct kvp_budget_opts *o,
			const struct kvp_engine_model *em)
{
	size_t len = 0;
	b->estimated_terms[0] = 0;
#define TERM(name) len += (size_t)snprintf(b->estimated_terms + len, \
					  sizeof b->estimated_terms - len, "%s%s", len ? "," : "", name)
	if (!o->has_weights)
		TERM("weights");
	if (o->engine != KVP_ENGINE_SGLANG && !o->has_activation)
		TERM("activation");
	if (!o->has_overhead)
		TERM("overhead");
	if ((o->engine == KVP_ENGINE_SGLANG || o->engine == KVP_ENGINE_TRTLLM) &&
	    !(o->utilization > 0))
		TERM("fraction");
#undef TERM
	uint64_t fixed = 0;
	if (em) {
		if (!o->has_weights)
			b->weights_spread_bytes = spread_of(b->weights_bytes, em->weights_spread);
		if (o->engine != KVP_ENGINE_SGLANG) {
			if (!o->has_activation) {
				b->activation_spread_bytes =
					spread_of(b->activation_bytes, em->activation_spread);
				b->activation_spread_above_bytes =
					em->activation_spread_above_bytes
						? em->activation_spread_above_bytes
						: b->activation_spread_bytes;
			}
		}
		/* SGLang's overhead is the CUDA context before load */
		if (!o->has_overhead)
			b->overhead_spread_bytes = em->non_torch_spread_bytes;
		/* a version outside every entry of the engine's file: its
		 * nearest entry stands in, and the band widens by the file's
		 * unmodelled_version_spread each way (engine.h) */
		if (em->version_nearest)
			b->version_spread_bytes = em->unmodelled_version_spread_bytes;
		if ((o->engine == KVP_ENGINE_SGLANG || o->engine == KVP_ENGINE_TRTLLM) &&
		    !(o->utilization > 0))
			b->fraction_spread_bytes = spread_of(
				o->engine == KVP_ENGINE_SGLANG ? b->usable_bytes + 0 : b->kv_pool_bytes,
				em->fraction_spread / (b->utilization > 0 ? b->utilization : 1));
	}
	/* low: every term as large as its spread allows (the activation by its
	 * upward spread); high: every term as small.  TRT-LLM's fraction scales
	 * every term; SGLang's only the context before load (pool = f x (GPU -
	 * context) - weights) */
	double f = o->engine == KVP_ENGINE_TRTLLM ? b->utilization : 1;
	double fo = o->engine == KVP_ENGINE_SGLANG ? b->utilization : f;
	double rest = (double)b->weights_spread_bytes * f + (double)b->overhead_spread_bytes * fo;
	double lo = rest + (double)b->activation_spread_above_bytes * f +
		    (double)b->fraction_spread_bytes + (double)b->version_spread_bytes * f;
	double hi = rest + (double)b->activation_spread_bytes * f +
		    (double)b->fraction_spread_bytes + (double)b->version_spread_bytes * f;
	fixed = lo >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)ceil(lo);
	b->kv_pool_low_bytes = b->kv_pool_bytes > fixed ? b->kv_pool_bytes - fixed : 0;
	fixed = hi >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)ceil(hi);
	b->kv_pool_high_bytes = kvp_add(b->kv_pool_bytes, fixed, &b->kv_pool_high_bytes)
		? b->kv_pool_high_bytes : UINT64_MAX;
	tokens_at_pool(b, b->kv_pool_low_bytes, &b->max_tokens_low, &b->max_sequences_low);
	tokens_at_pool(b, b->kv_pool_high_bytes, &b->max_tokens_high, &b->max_sequences_high);
}

/* The budget of one pipeline stage's GPU (UINT32_MAX: the stage with the
 * most KV bytes per token, kvp_spec_build). */
static kvp_status budget_stage(const struct kvp_model *m, const struct kvp_gpu *g,
			       const struct kvp_budget_opts *o, uint32_t stage,
			       struct kvp_budget *b, struct kvp_error *err)
{
	memset(b, 0, sizeof *b);
	kvp_status st;
	/* the engine's memory model first: its placement under DP attention
	 * shapes the weights (shape.h) */
	const struct kvp_engine_model *em = NULL;
	if (o->engine != KVP_ENGINE_GENERIC) {
		if (o->engine_model)
			b->engine_model = *o->engine_model;
		else if ((st = kvp_engine_model_load(kvp_engine_name(o->engine), o->engine_version,
						     &b->engine_model, err)))
			return st;
		/* its attention kernels' KV bandwidth on this GPU (engine.h) */
		b->engine_model.kv_bw_efficiency =
			kvp_engine_kv_bw_efficiency(&b->engine_model, g ? g->name : "");
		em = &b->engine_model;
	}
	struct kvp_parallel par = o->par;
	par.dp_full_tp = em ? kvp_engine_dp_full_tp(em) : 0;
	st = stage == UINT32_MAX
		? kvp_spec_build(m, par, o->dtype, o->kv_dtype, &b->spec, err)
		: kvp_spec_build_stage(m, par, o->dtype, o->kv_dtype, stage, &b->spec, err);
	if (!st && o->speculative)
		st = kvp_speculative_apply(o->speculative, &b->spec, err);
	if (st)
		return st;
	const struct kvp_spec *s = &b->spec;
	b->engine = o->engine;
	/* llama.cpp: the generic engine's (its memory is not modelled) */
	static const uint32_t default_block[] = {16, 16, 1, 32, 16};
	b->block_size = o->block_size ? o->block_size : default_block[o->engine];
	b->context = o->context ? o->context : m->max_context;
	b->batch = o->batch ? o->batch : 1;
	b->max_batched_tokens = o->max_batched_tokens ? o->max_batched_tokens
						      : KVP_DEFAULT_MAX_BATCHED_TOKENS;
	uint32_t max_seqs = o->max_num_seqs ? o->max_num_seqs : KVP_DEFAULT_MAX_NUM_SEQS;
	b->gpu_memory_bytes = o->has_gpu_memory ? o->gpu_memory_bytes : g->memory_bytes;
	/* the engine's memory model: defaults and accounting as data */
	if (em && !o->block_size && em->block_size)
		b->block_size = em->block_size;
	bool vllm = o->engine == KVP_ENGINE_VLLM && em;
	if (vllm) {
		/* engine/arg_utils.py: defaults by GPU class, then mbt <= seqs x
		 * max_model_len and seqs <= mbt when they were defaulted */
		uint32_t dseqs;
		uint64_t dmbt;
		kvp_engine_batch_defaults(em, b->gpu_memory_bytes, g ? g->name : "", &dseqs, &dmbt);
		if (!o->max_num_seqs)
			max_seqs = dseqs;
		if (!o->max_batched_tokens) {
			uint64_t cap;
			b->max_batched_tokens = kvp_mul(max_seqs, b->context, &cap) && cap < dmbt
				? cap : dmbt;
		}
		if (!o->max_num_seqs && max_seqs > b->max_batched_tokens)
			max_seqs = (uint32_t)b->max_batched_tokens;
	}
	b->max_num_seqs = max_seqs;
	if (em) {
		/* the engine pads MXFP4 experts to its kernels' tile (engine.h;
		 * an engine file without mxfp4_* keys pads nothing) */
		const struct kvp_model *mm = s->model;
		enum kvp_dtype edt = mm->expert_dtype != KVP_DTYPE_AUTO ? mm->expert_dtype
									: mm->weights_dtype;
		struct kvp_weights_split *ws = &b->spec.weights_split;
		uint32_t moe_tp = kvp_shape_ep(&o->par) > 1 ? 1 : o->par.tp * kvp_shape_dp(&o->par);
		if (edt == KVP_DTYPE_MXFP4 && ws->routed_bytes && mm->moe_intermediate_size && moe_tp) {
			uint64_t padded = kvp_engine_mxfp4_routed_bytes(
				em, g ? g->name : "", mm->hidden_size,
				mm->moe_intermediate_size / moe_tp, ws->routed_bytes);
			/* the whole model is padded too: every GPU of the shape pads its
			 * own disjoint share of the routed experts (tp x dp within a
			 * stage, pp stages), so one GPU never holds more than the whole */
			uint64_t grow = padded - ws->routed_bytes, whole_grow;
			if (padded == UINT64_MAX ||
			    !kvp_add(ws->total_bytes, grow, &ws->total_bytes) ||
			    !kvp_add(b->spec.weights_bytes, grow, &b->spec.weights_bytes) ||
			    !kvp_mul(grow, (uint64_t)o->par.tp * o->par.pp * kvp_shape_dp(&o->par),
				     &whole_grow) ||
			    !kvp_add(b->spec.weights_bytes_total, whole_grow,
				     &b->spec.weights_bytes_total))
				return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "weights",
						     "the padded MXFP4 expert bytes overflow");
			ws->routed_bytes = padded;
		}
	}
	if (em) {
		/* the rotary cos/sin cache every rank builds with the model, where
		 * the engine's file says it does (rotary_cache_dtype; engine.h) */
		uint64_t rot = kvp_engine_rotary_cache_bytes(em, s->model, s->serving_dtype);
		struct kvp_weights_split *ws = &b->spec.weights_split;
		if (rot == UINT64_MAX || !kvp_add(ws->dense_bytes, rot, &ws->dense_bytes) ||
		    !kvp_add(ws->total_bytes, rot, &ws->total_bytes) ||
		    !kvp_add(b->spec.weights_bytes, rot, &b->spec.weights_bytes) ||
		    !kvp_add(b->spec.weights_bytes_total, rot, &b->spec.weights_bytes_total))
			return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "weights",
					     "the rotary cache bytes overflow");
		ws->replicated_bytes += rot;
		b->rotary_cache_bytes = rot;
	}
	b->weights_bytes = o->has_weights ? o->weights_bytes : s->weights_bytes;
	if (o->has_activation) {
		b->activation_bytes = o->activation_bytes;
	} else if (vllm) {
		/* the forward pass (no sampler) or the sampler pass, whichever
		 * peaks.  The dummy sampler runs on the last pipeline stage only
		 * (gpu_model_runner.py profile_run: "if get_pp_group().is_last_rank"
		 * before _dummy_sampler_run): the stages before it keep the
		 * forward's hidden states and MoE workspaces, not the sampler's
		 * logits, its top-k buffer or its requests' hidden states */
		struct kvp_engine_model fwd_only;
		const struct kvp_engine_model *se = em;
		if (stage != UINT32_MAX && stage + 1 < o->par.pp) {
			fwd_only = *em;
			fwd_only.sampler_bytes_per_seq_vocab = 0;
			fwd_only.topk_buffer_bytes_per_row_vocab = 0;
			fwd_only.retained_hidden_per_seq = 0;
			se = &fwd_only;
		}
		uint64_t fwd = kvp_budget_activation_estimate(s, b->max_batched_tokens, 0);
		uint64_t smp = kvp_budget_vllm_sampler_peak(s, se, b->max_batched_tokens, max_seqs);
		b->activation_bytes = fwd == UINT64_MAX || smp == UINT64_MAX ? UINT64_MAX
				      : fwd > smp ? fwd : smp;
		/* the encoder profile run (memory/encoder.h), on every PP stage
		 * (which ranks run the tower was not read: fewer tokens) */
		if (b->activation_bytes != UINT64_MAX &&
		    kvp_encoder_vllm(&s->model->mm_encoder, em, b->context, b->max_batched_tokens,
				     max_seqs, (kvp_dtype_info(s->serving_dtype)->bits + 7) / 8,
				     &b->encoder) &&
		    !kvp_add(b->activation_bytes,
			     b->encoder_bytes = kvp_encoder_charge(&b->encoder, b->activation_bytes),
			     &b->activation_bytes))
			b->activation_bytes = UINT64_MAX;
	} else {
		b->activation_bytes = kvp_budget_activation_estimate(s, b->max_batched_tokens,
								     max_seqs);
	}
	uint64_t ctx = KVP_OVERHEAD_CONTEXT_BYTES +
		       (kvp_shape_gpus(&o->par) != 1 ? KVP_OVERHEAD_NCCL_BYTES : 0);
	if (o->has_overhead)
		b->overhead_bytes = o->overhead_bytes;
	else if (vllm)
		/* only the non-torch growth during profiling is charged, not the
		 * CUDA context; graphs only where the version subtracts them */
		b->overhead_bytes = kvp_engine_non_torch_bytes(
					    em, kvp_shape_gpus(&o->par), o->par.tp,
					    /* no GPU profile ("custom"): topology unknown */
					    g && g->host_link[0] ? (int)g->nvlink_domain : -1,
					    /* --p2p, else the profile's PCIe P2P */
					    o->p2p ? o->p2p
					    : g && g->path[0] && !g->pcie_p2p ? KVP_P2P_NVLINK_ONLY
					    : KVP_P2P_PCIE) +
				    (em->cuda_graphs_subtracted ? em->cuda_graphs_bytes : 0);
	else
		b->overhead_bytes = ctx + (o->engine == KVP_ENGINE_SGLANG ? 0 : KVP_OVERHEAD_GRAPHS_BYTES);
	uint64_t fixed;
	if (!o->has_activation && b->activation_bytes == UINT64_MAX)
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "max-batched-tokens",
				     "the activation estimate for %llu tokens overflows",
				     (unsigned long long)b->max_batched_tokens);
	if (!kvp_add(b->weights_bytes, b->activation_bytes, &fixed) ||
	    !kvp_add(fixed, b->overhead_bytes, &fixed)) {
		/* blame the largest term: the one the user set too large */
		const char *field = "weights-bytes";
		uint64_t big = b->weights_bytes;
		if (b->activation_bytes > big)
			field = "activation-bytes", big = b->activation_bytes;
		if (b->overhead_bytes > big)
			field = "overhead-bytes";
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, field,
				     "weights + activations + overhead overflow");
	}
	double gpu = (double)b->gpu_memory_bytes;

	/* the pool, per engine, in exact integers once the fraction is applied */
	uint64_t gpu_bytes = b->gpu_memory_bytes;
	switch (o->engine) {
	case KVP_ENGINE_GENERIC:
	case KVP_ENGINE_LLAMACPP:   /* time data only: the generic budget */
	case KVP_ENGINE_VLLM:
		b->utilization = o->utilization > 0 ? o->utilization
			       : em && em->utilization > 0 ? em->utilization
			       : KVP_DEFAULT_UTILIZATION;
		b->usable_bytes = bytes_floor(gpu * b->utilization, gpu_bytes);
		b->kv_pool_bytes = b->usable_bytes > fixed ? b->usable_bytes - fixed : 0;
		break;
	case KVP_ENGINE_SGLANG: {
		/* default mem_fraction_static (sglang PR #10975; the constants are
		 * profiles/engines/sglang.yaml's): reserve 512 MiB + max(chunked
		 * prefill, 2048) x 1.5 MiB + cuda_graph_max_bs x 2 MiB + tp x pp x
		 * 128 MiB + the piecewise graphs, at least 10 GiB on GPUs over
		 * 60 GiB.  An explicit --max-batched-tokens / --max-num-seqs stands
		 * for chunked_prefill_size / cuda_graph_max_bs. */
		double gpu_mib = gpu / (double)KVP_MIB;
		double mbt = o->max_batched_tokens ? (double)o->max_batched_tokens
			   : em && em->chunked_prefill_size ? em->chunked_prefill_size
			   : (double)b->max_batched_tokens;
		/* with DP attention SGLang's tp_size is every GPU of the replica
		 * (--tp-size tp x dp, size.c's emit), and the reserve grows with
		 * cuda_graph_max_bs x dp (server_args.py, 0.5.10) */
		uint32_t dp = kvp_shape_dp(&o->par);
		double sg_tp = (double)o->par.tp * dp;
		double bs = o->max_num_seqs ? (double)o->max_num_seqs
			  : em ? (sg_tp < 4 ? em->cuda_graph_max_bs_tp_below_4
					    : em->cuda_graph_max_bs_tp_from_4)
			  : (double)max_seqs;
		double reserved, table_f = em ? kvp_engine_sglang_fraction(em, gpu_mib, o->par.tp,
									   o->par.pp) : -1;
		if (table_f >= 0) {
			/* versions whose default is a table (<= 0.4.5, 0.4.8 - 0.5.2) */
			reserved = gpu_mib * (1 - table_f);
		} else if (em) {
			double mib = (double)KVP_MIB, minp = em->reserve_min_prefill_tokens;
			bool mla = s->count[KVP_LAYER_MLA] && em->reserve_piecewise_graphs_mla_bytes;
			double dp_graphs = 0;
			if (dp > 1) {
				dp_graphs = bs * dp * (double)em->reserve_per_graph_bs_dp_bytes;
				if (em->reserve_graph_bs_large_above && bs > em->reserve_graph_bs_large_above)
					dp_graphs += bs * dp * (double)em->reserve_per_graph_bs_dp_large_bytes;
			}
			reserved = ((double)em->reserve_base_bytes +
				    (mbt > minp ? mbt : minp) *
					    (double)em->reserve_per_prefill_token_bytes +
				    bs * (double)em->reserve_per_graph_bs_bytes +
				    sg_tp * o->par.pp * (double)em->reserve_per_gpu_in_group_bytes +
				    dp_graphs +
				    (double)(mla ? em->reserve_piecewise_graphs_mla_bytes
						 : em->reserve_piecewise_graphs_bytes)) / mib;
			if (gpu > (double)em->reserve_floor_above_bytes &&
			    reserved < (double)em->reserve_floor_bytes / mib)
				reserved = (double)em->reserve_floor_bytes / mib;
		} else {
			reserved = 512 + (mbt > 2048 ? mbt : 2048) * 1.5 + bs * 2.0 +
				   (double)o->par.tp * o->par.pp / 8.0 * 1024;
			if (gpu_mib > 60 * 1024 && reserved < 10 * 1024)
				reserved = 10 * 1024;
		}
		/* on a GPU smaller than the reserve the default fraction would be
		 * negative: nothing is left for weights and KV */
		b->utilization = o->utilization > 0 ? o->utilization
			: gpu_mib > reserved ? (gpu_mib - reserved) / gpu_mib : 0;
		uint64_t free_before = gpu_bytes > b->overhead_bytes ? gpu_bytes - b->overhead_bytes : 0;
		b->usable_bytes = bytes_floor((double)free_before * b->utilization, free_before);
		b->kv_pool_bytes = b->usable_bytes > b->weights_bytes
			? b->usable_bytes - b->weights_bytes : 0;
		break;
	}
	case KVP_ENGINE_TRTLLM: {
		b->utilization = o->utilization > 0 ? o->utilization
			       : em && em->free_fraction > 0 ? em->free_fraction
			       : KVP_DEFAULT_TRT_FREE_FRACTION;
		uint64_t left = gpu_bytes > fixed ? gpu_bytes - fixed : 0;
		b->kv_pool_bytes = bytes_floor((double)left * b->utilization, left);
		b->usable_bytes = b->kv_pool_bytes + fixed; /* at most gpu when the pool is not 0 */
		break;
	}
	}
	b->weights_fit = b->kv_pool_bytes > 0;
	b->headroom_bytes = b->gpu_memory_bytes > b->usable_bytes
		? b->gpu_memory_bytes - b->usable_bytes : 0;

	/* paging */
	if (o->engine == KVP_ENGINE_VLLM) {
		uint64_t slot;
		if (!vllm_groups(b, o->hybrid_off) || !kvp_mul(b->page_bytes, b->group_size, &slot))
			return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "block-size",
					     "page size overflow");
		b->num_blocks = slot ? b->kv_pool_bytes / slot : 0;
		/* a Mamba-only page holds a state, not tokens: its blocks x P can pass 2^64 */
		if (b->num_groups &&
		    !kvp_mul(b->num_blocks / b->num_groups, b->block_size, &b->max_tokens))
			return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "block-size",
					     "token count overflow");
		for (int k = 0; k < KVP_LAYER_KIND_COUNT; k++)
			if (b->group[k].layers) {
				uint32_t window = 0;
				for (uint32_t i = 0; i < s->num_layers && !window; i++)
					if (vllm_kind(s->layers[i].kind, o->hybrid_off) ==
					    (enum kvp_layer_kind)k)
						window = s->layers[i].window;
				b->group[k].blocks_per_seq =
					vllm_blocks((enum kvp_layer_kind)k,
						    o->hybrid_off ? 0 : window, b->context,
						    b->block_size, b->max_batched_tokens);
			}
	} else {
		b->group_size = s->num_layers;
		b->num_groups = 1;
		if (!kvp_mul(b->block_size, s->token_bytes, &b->page_bytes))
			return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "block-size",
					     "page size overflow");
		b->num_blocks = pool_blocks(b, b->kv_pool_bytes);
		b->max_tokens = b->num_blocks * b->block_size;
	}
	if (kvp_budget_pool_for(b, b->context, 1, &b->seq_bytes))
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "context",
				     "%llu tokens overflow the byte count",
				     (unsigned long long)b->context);
	b->max_sequences = max_sequences_at(b, b->context);
	uint64_t exact;
	if (kvp_spec_seq_bytes(s, b->context, 1, &exact))
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "context",
				     "%llu tokens overflow the byte count",
				     (unsigned long long)b->context);
	/* one sequence fits the arithmetic: the batch is what overflows */
	if (!kvp_mul(exact, b->batch, &b->kv_bytes))
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "batch",
				     "KV bytes of %llu sequences x %llu tokens overflow",
				     (unsigned long long)b->batch, (unsigned long long)b->context);
	b->fits = b->weights_fit && b->max_sequences >= b->batch;
	b->max_tokens_one_sequence = one_sequence_tokens(b);
#ifdef KVP_CHECK_INVARIANTS
	/* the printed longest sequence never contradicts the fit below it */
	if (b->max_sequences >= 1 && b->max_tokens_one_sequence < b->context) {
		fprintf(stderr, "kvplan budget: invariant failed: %s: one sequence of %llu tokens "
			"fits but max_tokens_one_sequence is %llu\n", m->name,
			(unsigned long long)b->context,
			(unsigned long long)b->max_tokens_one_sequence);
		abort();
	}
#endif
	budget_band(b, o, em);
	return KVP_STATUS_OK;
}

/* Does stage budget a leave less room than b?  A stage whose weights do not
 * fit first, then the fewest sequences at n, the fewest tokens, the most
 * weights.  vLLM sets every worker's blocks to the smallest among them
 * (kv_cache_utils.py get_kv_cache_configs) and SGLang all-reduces the token
 * capacity to the minimum over the PP ranks
 * (model_runner_kv_cache_mixin.py _resolve_token_capacity, 0.5.10), so the
 * stage with the least room governs the pipeline. */
static bool stage_tighter(const struct kvp_budget *a, const struct kvp_budget *b)
{
	if (a->weights_fit != b->weights_fit)
		return !a->weights_fit;
	if (a->max_sequences != b->max_sequences)
		return a->max_sequences < b->max_sequences;
	if (a->max_tokens != b->max_tokens)
		return a->max_tokens < b->max_tokens;
	return a->weights_bytes > b->weights_bytes;
}

kvp_status kvp_budget_compute(const struct kvp_model *m, const struct kvp_gpu *g,
			      const struct kvp_budget_opts *o, struct kvp_budget *b,
			      struct kvp_error *err)
{
	/* weights given as one figure, or one stage: the spec's worst stage */
	if (o->par.pp <= 1 || o->has_weights)
		return budget_stage(m, g, o, UINT32_MAX, b, err);
	/* every stage's budget; the one with the least room governs */
	struct kvp_budget *t = malloc(sizeof *t);
	if (!t)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, "pp",
				     "no memory for the stage budgets");
	struct kvp_budget_stage shown[KVP_BUDGET_STAGES_SHOWN];
	uint32_t n = 0;
	kvp_status st = KVP_STATUS_OK;
	for (uint32_t s = 0; !st && s < o->par.pp; s++) {
		struct kvp_budget *c = s == 0 ? b : t;
		if ((st = budget_stage(m, g, o, s, c, err)))
			break;
		if (n < KVP_BUDGET_STAGES_SHOWN)
			shown[n++] = (struct kvp_budget_stage){
				.first_layer = c->spec.first_layer, .num_layers = c->spec.num_layers,
				.weights_bytes = c->weights_bytes, .kv_pool_bytes = c->kv_pool_bytes,
				.max_tokens = c->max_tokens, .max_sequences = c->max_sequences};
		if (s > 0 && stage_tighter(t, b))
			memcpy(b, t, sizeof *b);
	}
	free(t);
	if (!st) {
		b->stages_shown = n;
		memcpy(b->stage, shown, n * sizeof shown[0]);
	}
	return st;
}

bool kvp_budget_to_record(const struct kvp_budget *b, const char *gpu_name, struct kvp_record *r)
{
	const struct kvp_spec *s = &b->spec;
	/* the versions the entry followed stands for: its range, else itself */
	char range[sizeof b->engine_model.range + KVP_ENGINE_VERSION_MAX];
	snprintf(range, sizeof range, "%s%s", b->engine_model.range[0] || !b->engine_model.version[0]
		 ? "" : "==", b->engine_model.range[0] ? b->engine_model.range : b->engine_model.version);
	bool ok = kvp_record_str(r, "model", s->model->name) &&
		  kvp_record_str(r, "gpu", gpu_name) &&
		  kvp_record_str(r, "engine", kvp_engine_name(b->engine)) &&

		  kvp_record_u64(r, "tp", s->par.tp) && kvp_record_u64(r, "pp", s->par.pp) &&
		  kvp_record_u64(r, "block_size", b->block_size) &&
		  kvp_record_str(r, "dtype", kvp_dtype_name(s->serving_dtype)) &&
		  kvp_record_str(r, "kv_dtype", kvp_dtype_name(s->kv_dtype)) &&
		  kvp_record_u64(r, "context", b->context) && kvp_record_u64(r, "batch", b->batch) &&
		  kvp_record_u64(r, "kv_bytes_per_token", s->token_bytes) &&
		  kvp_record_u64(r, "kv_bytes_per_token_total", s->token_bytes_total) &&
		  kvp_record_u64(r, "kv_state_bytes_per_sequence", s->seq_bytes) &&
		  kvp_record_u64(r, "kv_bytes_per_sequence", b->seq_bytes) &&
		  kvp_record_u64(r, "kv_bytes", b->kv_bytes) &&
		  kvp_record_u64(r, "gpu_memory_bytes", b->gpu_memory_bytes) &&
		  kvp_record_f64(r, "utilization", b->utilization) &&
		  kvp_record_u64(r, "usable_bytes", b->usable_bytes) &&
		  kvp_record_u64(r, "weights_bytes", b->weights_bytes) &&
		  kvp_record_u64(r, "activation_bytes", b->activation_bytes) &&
		  kvp_record_u64(r, "overhead_bytes", b->overhead_bytes) &&
		  kvp_record_u64(r, "headroom_bytes", b->headroom_bytes) &&
		  kvp_record_u64(r, "kv_pool_bytes", b->kv_pool_bytes) &&
		  kvp_record_u64(r, "page_bytes", b->page_bytes) &&
		  kvp_record_u64(r, "kv_groups", b->num_groups) &&
		  kvp_record_u64(r, "padding_layers", b->padding_layers) &&
		  kvp_record_u64(r, "num_blocks", b->num_blocks) &&
		  kvp_record_u64(r, "max_tokens", b->max_tokens) &&
		  (b->max_tokens_one_sequence == KVP_BUDGET_UNBOUNDED
			   ? kvp_record_null(r, "max_tokens_one_sequence")
			   : kvp_record_u64(r, "max_tokens_one_sequence", b->max_tokens_one_sequence)) &&
		  kvp_record_u64(r, "max_sequences", b->max_sequences) &&
		  kvp_record_bool(r, "fits", b->fits) &&
		  kvp_record_str(r, "engine_version", b->engine_model.version) &&
		  kvp_record_str(r, "engine_version_asked", b->engine_model.version_asked) &&
		  kvp_record_str(r, "engine_version_range", range) &&
		  kvp_record_bool(r, "engine_version_nearest", b->engine_model.version_nearest) &&
		  kvp_record_u64(r, "max_num_seqs", b->max_num_seqs) &&
		  kvp_record_u64(r, "max_batched_tokens", b->max_batched_tokens) &&
		  kvp_record_u64(r, "max_tokens_low", b->max_tokens_low) &&
		  kvp_record_u64(r, "max_tokens_high", b->max_tokens_high) &&
		  kvp_record_u64(r, "max_sequences_low", b->max_sequences_low) &&
		  kvp_record_u64(r, "max_sequences_high", b->max_sequences_high) &&
		  kvp_record_str(r, "estimated_terms", b->estimated_terms) &&
		  kvp_record_u64(r, "tower_bytes", s->tower_bytes) &&
		  kvp_shape_to_record(s, b->max_sequences, r);
	/* the weights' format as detected and where it was read (issue 35) */
	char origin[sizeof s->model->path + 192];
	kvp_model_weights_origin(s->model, origin, sizeof origin);
	ok = ok && kvp_record_str(r, "weights_dtype",
				  kvp_model_weights_dtype_name(s->model, s->serving_dtype)) &&
	     kvp_record_str(r, "weights_expert_dtype",
			    s->model->expert_dtype == KVP_DTYPE_AUTO
				    ? "" : kvp_dtype_name(s->model->expert_dtype)) &&
	     kvp_record_str(r, "weights_source", origin) &&
	     kvp_record_u64(r, "weights_rotary_cache_bytes", b->rotary_cache_bytes);
	struct kvp_record *layers = ok ? kvp_record_new() : NULL;
	if (!layers)
		return false;
	for (int k = 0; k < KVP_LAYER_KIND_COUNT; k++) {
		if (!s->count[k])
			continue;
		struct kvp_record *kr = kvp_record_new();
		if (!kr)
			break;
		kvp_record_u64(kr, "layers", s->count[k]);
		if (k == KVP_LAYER_MAMBA) {
			uint64_t state = 0;
			for (uint32_t i = 0; i < s->num_layers; i++)
				state += s->layers[i].seq_bytes;
			kvp_record_u64(kr, "state_bytes_per_sequence", state);
		} else {
			kvp_record_u64(kr, "bytes_per_token", s->kind_token_bytes[k]);
		}
		for (uint32_t i = 0; i < s->num_layers; i++)
			if (s->layers[i].kind == (enum kvp_layer_kind)k && s->layers[i].window) {
				kvp_record_u64(kr, "window", s->layers[i].window);
				break;
			}
		kvp_record_rec(layers, kvp_layer_kind_name((enum kvp_layer_kind)k), kr);
	}
	return kvp_record_rec(r, "layers", layers);
}

