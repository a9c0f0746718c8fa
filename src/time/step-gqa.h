/* step-gqa.h: the KV bytes a decode step loads when the engine's generation
 * attention reads a KV head once for every query head it serves.
 *
 * TensorRT-LLM 0.6.1 runs the generation phase as one kernel, the masked
 * multi-head attention, "a single CUDA thread-block per head"
 * (docs/source/gpt_attention.md, "Generation Phase", at 138f96d45f90b966
 * 7426f7c47297d8c06bafac73, the commit of docs/source/performance.md "updated
 * for v0.6.1"); the kernel's own header says "The different kernels assign a
 * threadblock for B x H pair" and each block loads its K and V vectors from
 * the cache at the KV head hi_kv its query head hi maps to
 * (cpp/tensorrt_llm/kernels/decoderMaskedMultiheadAttention/
 * decoderMaskedMultiheadAttentionTemplate.h, same commit: the comment
 * before Qk_vec_m_ and kvCacheBuffer.getKVLocalIdx(valid_time_now, hi_kv, Dh, jj)
 * in the key loop).  With grouped-query attention the blocks of the g query
 * heads of one KV head each load that head's cache: g loads of every KV byte.
 * The figure is the kernel's loads; the GPU's L2 may serve some of the
 * repeats, so it is the upper end (a slower step, never a faster one).  The
 * grouped kernel that loads a KV head once for its g query heads (XQA) is
 * not in that commit's attention document, and its support matrix, added
 * later, names a paged KV cache only (docs/source/advanced/gpt-attention.md,
 * "XQA Optimization"), where 0.6.1's Llama 2 70B build has none. */
#ifndef KVP_STEP_GQA_H
#define KVP_STEP_GQA_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

/* The KV bytes one GPU of tensor-parallel degree `tp` loads in a decode step
 * whose cache holds `kv` bytes (the sequences' KV on that GPU): kv itself
 * unless `per_query_head`; then kv x (query heads / KV heads on the GPU),
 * each counted per GPU (num_heads / tp query heads; num_kv_heads / tp KV
 * heads, at least one: a KV head is copied to the GPUs that share it).  A
 * model with a layer of another kind (MLA, Mamba) loads kv (no engine with
 * the flag ran one).  Saturates at UINT64_MAX. */
uint64_t kvp_perf_decode_kv_loads(const struct kvp_model *m, uint32_t tp, bool per_query_head,
				  uint64_t kv);

#endif
