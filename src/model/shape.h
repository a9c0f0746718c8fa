/* shape.h: the deployment shape (struct kvp_parallel, model.h): how one
 * model is laid over GPUs with tensor, pipeline, data-parallel attention and
 * expert parallelism, what each GPU then holds of the weights, and what the
 * experts' exchange costs on the wire.
 *
 * Legend: tp = tensor-parallel GPUs inside one data-parallel rank, pp =
 * pipeline stages, dp = data-parallel attention ranks, ep = GPUs the routed
 * experts are split over as whole experts, E = routed experts, k = experts
 * per token, H = hidden size, b = bytes per activation element, B = sequences
 * on one DP rank.  GPUs = tp x pp x dp.
 *
 * Placement follows vLLM (vllm/model_executor/layers/fused_moe/config.py,
 * FusedMoEParallelConfig.make): attention, dense MLPs, shared experts and the
 * vocabulary-parallel embeddings are split over the tp GPUs of a DP rank and
 * copied on every DP rank; the routed experts of a stage are spread over all
 * tp x dp of its GPUs ("flatten_tp_across_dp": sharded without expert
 * parallelism, "each device owns a set of experts fully" with it), so a GPU
 * holds routed / (tp x dp) either way.  Each DP rank keeps the KV of its own
 * requests only: no copy of a request's KV on another rank.
 *
 * Not split by tp (vLLM v0.10.2, vllm/model_executor/layers/linear.py
 * QKVParallelLinear: num_kv_heads = max(1, H_kv / tp), num_kv_head_replicas =
 * tp / H_kv; models/qwen3_moe.py, mixtral.py, deepseek_v2.py: the router
 * `gate` a ReplicatedLinear with quant_config None; the same in SGLang's
 * python/sglang/srt/layers/linear.py, adapted from vLLM v0.6.4.post1, and
 * srt/models/qwen3_moe.py, whose gate stays bf16 unless modelslim): with
 * tp > H_kv each GPU holds one whole KV head's K and V projections, 2 H d_h
 * per attention layer where a plain split gives 2 H d_h H_kv / tp; and the
 * MoE routers, E x H per MoE layer, whole in the serving dtype; and MLA's
 * down-projections (models/deepseek_v2.py: q_a_proj and kv_a_proj_with_mqa,
 * ReplicatedLinear), H x (q_lora + kv_lora + d_rope) per MLA layer, whole in
 * the weights' format.
 * weights_split.replicated_bytes is that part of dense_bytes (budget.c adds
 * the engines' rotary cache to both).
 *
 * The exchange of a MoE layer with dp > 1 (vLLM uses all-to-all kernels only
 * then: use_all2all_kernels = use_ep and dp_size > 1): with ep > 1 each token
 * is dispatched to its k experts and their outputs combined back, k x H x b
 * bytes each way of which (ep - 1)/ep leave the GPU (uniform routing; DeepEP
 * dispatches in fp8, so the serving dtype is an upper bound); with ep = 1 the
 * DP ranks all-gather their tokens and reduce-scatter the results, (dp - 1)
 * x B x H x b bytes each way.  With dp = 1 the experts' results join the
 * tensor-parallel all-reduce that perf already counts. */
#ifndef KVP_SHAPE_H
#define KVP_SHAPE_H

#include <stdint.h>

#include "base/error.h"
#include "model/model.h"
#include "out/output.h"

/* Parts of a stage split over all its tp x dp GPUs under DP attention
 * (kvp_parallel.dp_full_tp): SGLang 0.5.10 builds only attention (and for
 * most models the input embedding) on the attention-TP group of a DP rank;
 * the LM head (ParallelLMHead, use_attn_tp_group = enable_dp_lm_head), the
 * dense layers' MLPs (DeepseekV2MLP, tp_size None unless moe_dense_tp_size
 * is 1) and the shared experts (the same MLP, or fused into the routed
 * experts) take the whole TP group (python/sglang/srt/models/deepseek_v2.py). */
#define KVP_SHAPE_DP_LM_HEAD 1u
#define KVP_SHAPE_DP_DENSE_MLP 2u
#define KVP_SHAPE_DP_SHARED_EXPERTS 4u

/* dp and ep as used: 0 means 1. */
uint32_t kvp_shape_dp(const struct kvp_parallel *par);
uint32_t kvp_shape_ep(const struct kvp_parallel *par);
/* tp x pp x dp; 0 when the product passes 2^32. */
uint32_t kvp_shape_gpus(const struct kvp_parallel *par);

/* Check a shape against a model.  Errors name the flag's field: "ep" when ep
 * is given for a model without routed experts, does not divide them, or does
 * not divide tp x dp; "dp" when tp x pp x dp is not the `gpus` asked for.
 * tp and pp are checked by kvp_spec_build. */
kvp_status kvp_shape_check(const struct kvp_model *m, const struct kvp_parallel *par,
			   struct kvp_error *err);

/* MoE layers: those moe_layers marks when the model gives them, else from the
 * routed-expert parameters, expert_params / (E x 3 H I_moe), rounded to the
 * nearest (gpt-oss's expert biases add < 0.1 %); 0 for a dense model. */
uint32_t kvp_shape_moe_layers(const struct kvp_model *m);

/* Weights of pipeline stage `stage` (layers [first, first + nlayers)) on one
 * GPU: embeddings in the serving dtype (the input embedding on the first
 * stage, the LM head on the last), the stage's layers' attention and norms,
 * its own layers' dense MLPs, routers and experts where the model says
 * which layers hold experts (moe_layers_known; else the stage's share of
 * them), shared experts in the weights dtype and routed experts in the
 * expert dtype.  Each part is rounded up to whole bytes on its own;
 * total_bytes is their sum. */
kvp_status kvp_shape_stage_weights(const struct kvp_model *m, enum kvp_dtype serving,
				   const struct kvp_parallel *par, uint32_t stage, uint32_t first,
				   uint32_t nlayers, struct kvp_weights_split *out);

/* Bytes one GPU sends (and again receives) per MoE layer in a decode or
 * prefill step of `tokens` tokens on its DP rank (see above); 0 when dp = 1
 * or the model has no routed experts. */
double kvp_shape_moe_exchange_bytes(const struct kvp_model *m, const struct kvp_parallel *par,
				    enum kvp_dtype serving, double tokens);

/* Add the shape and the weights split to a record (man/kvplan.1, BUDGET):
 * dp, ep, gpus, weights_{embed,dense,shared_expert,routed_expert}_bytes, and
 * dp_sequences = max_sequences x dp (each DP rank its own requests). */
bool kvp_shape_to_record(const struct kvp_spec *s, uint64_t max_sequences, struct kvp_record *r);

#endif
