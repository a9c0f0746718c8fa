/* step-gemm.h: a step's linear layers timed with a measured GEMM table
 * (time/gemm-table.h, profiles/kernels/): which table a GPU profile and the
 * weights' dtype get, and the share of the peak a step's FLOPs then reach.
 * Below step.c, which wraps it (kvp_perf_flops_efficiency) for its prefill
 * and the serving simulator's chunk passes; decode steps keep the constant
 * (reports/gemm-tables.md says why). */
#ifndef KVP_STEP_GEMM_H
#define KVP_STEP_GEMM_H

#include "model/model.h"
#include "read/profile.h"
#include "time/gemm-table.h"
#include "time/moe-table.h"

/* The measured GEMM table profiles/kernels/gemm-<profile file name>-<dtype>.tsv
 * (found as kvp_profile_data_file finds it) for GPU profile g and m's weights:
 * dtype bf16 for 16-bit weights, fp8 for fp8, nvfp4 for nvfp4; none (out->nm = 0,
 * OK) for other formats, a GPU struct not read from a file, a profile that gives its
 * own prefill_flops_efficiency, or no such file.  INVALID naming the file,
 * line and field when the table is malformed (kvp_gemm_table_load). */
kvp_status kvp_perf_gemm_table_find(const struct kvp_gpu *g, const struct kvp_model *m,
				    struct kvp_gemm_table *out, struct kvp_error *err);

/* The measured MoE layer table profiles/kernels/moe-<profile file name>-<dtype>.tsv
 * for GPU profile g and m's weights (bf16 for 16-bit, fp8, nvfp4), with the
 * curves of m's expert shape (hidden_size, expert_intermediate_size,
 * experts_per_token, num_experts) kept; out->path[0] = 0 (OK) for a dense
 * model, another format, a GPU struct not read from a file or no such file;
 * out->ncurves = 0 when the file has no row of that shape.  INVALID naming
 * the file, line and field when the table is malformed (kvp_moe_table_load). */
kvp_status kvp_perf_moe_table_find(const struct kvp_gpu *g, const struct kvp_model *m,
				   struct kvp_moe_table *out, struct kvp_error *err);

/* The share of the peak `peak_flops` a step's FLOPs reach on one GPU of
 * shape `par`.  `flops` (whole model), of which `attn_flops` are attention's
 * (QK^T, PV).  Without a table (t->nm = 0) every FLOP at eff_c.  With one,
 * the attention and the routed experts (grouped MoE kernels, of which no table
 * is converted) at eff_c, the rest at the table's throughput for the step's
 * linear layers on one GPU, eff_gemm, so the compute time is
 *   (flops - other) / (peak x eff_gemm) + other / (peak x eff_c)
 * with the attention's FLOPs in `other` at attn_peak, not peak (scaled by
 * peak / attn_peak; kvp_gemm_attention_peak), with or without a table
 * and the figure returned is flops over that, over the peak;
 *   eff_gemm = sum_i F_i / (peak x sum_i F_i / tf_i(M_i, N_i, K_i)), at most 1,
 * over each layer's GEMMs, F_i = 2 M_i N_i K_i (d = hidden, I = intermediate,
 * H_q, H_kv, d_h):
 *   QKV        M = tokens, N = (H_q + 2 H_kv) d_h / tp, K = d     every layer
 *   O          M = tokens, N = d, K = H_q d_h / tp                every layer
 *   MLP        M = tokens, N = 2 I / tp (gate, up), then N = d, K = I / tp
 *                                                                 dense layers
 *   shared     as MLP with I = shared params / (3 d x MoE layers), MoE layers
 *   LM head    M = tokens, N = vocab / tp, K = d                  once
 * `tokens` are the rank's rows, `total` the deployment's (the routed experts'
 * FLOPs on one GPU are those of total / dp tokens, as step.c's dp_flops).
 * Mamba, linear-attention and MLA layers are given the QKV/O shapes of their
 * heads: a stand-in, named as such in reports/gemm-tables.md. */
double kvp_gemm_step_efficiency(const struct kvp_gemm_table *t, const struct kvp_model *m,
				const struct kvp_parallel *par, double peak_flops, double attn_peak,
				double eff_c, double flops, double attn_flops, double tokens,
				double total);

/* The same with the routed experts' FLOPs on this GPU given: `routed` of
 * `flops` at eff_c (0 when the caller times them apart, from a measured MoE
 * table, and left them out of `flops`). */
double kvp_gemm_step_efficiency_routed(const struct kvp_gemm_table *t, const struct kvp_model *m,
				       const struct kvp_parallel *par, double peak_flops,
				       double attn_peak, double eff_c, double flops,
				       double attn_flops, double tokens, double routed);

/* The peak attention's FLOPs (QK^T, PV) run at: the KV cache's dtype's, not
 * the weights'.  An engine hands its attention kernel q, k and v in the KV
 * cache's dtype: vLLM quantizes q to fp8 only when kv_cache_dtype starts with
 * "fp8" (0.9.2 v1/attention/backends/flash_attn.py l.511-519; otherwise
 * FlashAttention runs in bf16/fp16 whatever the weights); TensorRT-LLM's FP8
 * context FMHA is a build option (--use_fp8_context_fmha, Hopper; an engine
 * that runs it over a 16-bit cache is charged slow here).  So: `peak8` for an
 * fp8 (e4m3, e5m2) KV cache on
 * a GPU that has one, else `peak16`; never above `peak` (the weights'
 * GEMMs'); `peak` when the others are not given (0). */
double kvp_gemm_attention_peak(double peak, double peak16, double peak8, enum kvp_dtype kv);

/* FLOPs of one token in the routed experts (whole model): 2 x the expert
 * parameters a token runs, expert_params x k / E, at most 2 x active; 0 for
 * a dense model. */
double kvp_perf_routed_token_flops(const struct kvp_model *m);

#endif
