/* step-elementwise.h: the bytes a prefill pass's elementwise kernels move
 * (the norms, residual adds, rotary embedding and gated activation between
 * the GEMMs) and their time at the HBM rate.  Below step.c, which adds it to
 * every pass that carries prompt tokens: perf's prefill and chunked steps and
 * the serving simulator's chunk passes (serve-sim.c).  Decode-only passes
 * carry none: reports/gemm-tables.md says why. */
#ifndef KVP_STEP_ELEMENTWISE_H
#define KVP_STEP_ELEMENTWISE_H

#include <stdbool.h>

#include "model/model.h"

/* Bytes one GPU of tensor-parallel degree `tp` reads and writes in the
 * elementwise kernels of one pass of `tokens` tokens through every layer of
 * m (all pipeline stages in turn), each element `elem` bytes (the serving
 * dtype's activations), as vLLM's CUDA kernels run them:
 *  - fused_add_rms_norm (csrc/layernorm_kernels.cu, vllm-project/vllm
 *    0112cf233e0c60674c2844a09695ddeb2b901dc0): reads the input and the
 *    residual, writes the residual (their sum) and the input (its norm):
 *    4 T H b, twice a layer (before attention, before the MLP) and once
 *    for the final norm; the first layer's first norm is the plain rms_norm
 *    (no residual yet: reads x, writes out, 2 T H b), and the embedding
 *    gather writes T rows it reads, 2 T H b: (8 L + 4) T H b in all, on every
 *    tp rank (the hidden state is whole on each);
 *  - rotary_embedding (csrc/pos_encoding_kernels.cu, 0f5257e245116449bfbe
 *    78a87c22aeef632eba8f): q and k rotated in place, read and written:
 *    2 T (H_q + H_kv) d_h b / tp a layer (the kernel touches rot_dim of each
 *    head; the whole head here, the upper end, also for partial rotary);
 *  - silu_and_mul (csrc/activation_kernels.cu, 00ccbd42dc1f40412cc711c5737
 *    cc4be0e7a8145): reads the gate and up halves, 2 T I, writes T I:
 *    3 T I b / tp a dense layer; a MoE layer's routed experts the same over
 *    the T x top-k rows of moe_intermediate_size, its shared experts over
 *    theirs (shared params / (3 H x MoE layers)).
 * Mamba, linear-attention and MLA layers are given an attention layer's
 * heads for the rotary term: a stand-in.  `rotary` false: no rotary term,
 * for an engine that rotates q and k inside its attention's QKV
 * preprocessing, reading the QKV GEMM's output it reads there anyway
 * (TensorRT-LLM: cpp/tensorrt_llm/plugins/gptAttentionCommon/
 * gptAttentionCommon.cpp, the context path's invokeApplyBiasRopeUpdateKVCache
 * of an older stored copy (release not determined), invokeQKVPreprocessing
 * at 14e801da; the PyTorch
 * backend's TRTLLM attention, rope_fusion, tensorrt_llm/_torch/modules/
 * attention.py at c6d3bb2a; profiles/engines/trtllm.yaml).  Its norms and
 * SwiGLU stay: no source read here shows them fused by default.  0 for
 * tokens 0. */
double kvp_perf_elementwise_bytes(const struct kvp_model *m, double tp, double elem,
				  double tokens, bool rotary);

#endif
