/* step-moe-align.h: a kernel of fixed time an engine runs once per MoE layer
 * of every forward pass, whatever the batch: SGLang 0.4.1-0.4.1.post3 sent
 * moe_align_block_size for models of >= 224 routed experts (256 at 0.4.1) to
 * sgl-kernel's kernel, one block whose two 256-step prefix sums run serially
 * in global memory (profiles/engines/sglang.yaml, the 0.4.1.post2 entry;
 * reports/perf-measured.md, the tenth pass).  Below step.c, which adds
 * it to every pass's fixed costs (kvp_perf_fixed_s).
 *
 * L_moe = the model's MoE layers (kvp_shape_moe_layers), t = the kernel's
 * time in one layer (engine time data, moe_align_layer_us), E = routed
 * experts, E_min = the fewest that take the kernel. */
#ifndef KVP_STEP_MOE_ALIGN_H
#define KVP_STEP_MOE_ALIGN_H

#include <stdint.h>

#include "model/model.h"

/* Seconds a forward pass of m spends in the kernel: L_moe x layer_s where m
 * has E >= min_experts routed experts; 0 for a dense model, min_experts 0
 * (no such kernel) or layer_s <= 0. */
double kvp_moe_align_step_s(const struct kvp_model *m, double layer_s, uint32_t min_experts);

#endif
