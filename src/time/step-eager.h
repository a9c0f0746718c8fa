/* step-eager.h: the layers whose attention an engine launches from the
 * host outside its CUDA graphs (vLLM V1's piecewise graphs), by the kind of
 * op: the count step.c's eager attention term (kvp_perf_eager_s) charges
 * the engine's launches to (profiles/engines, engine.h eager_*). */
#ifndef KVP_STEP_EAGER_H
#define KVP_STEP_EAGER_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"

/* The model's attention layers by the kind of op an engine launches for
 * them: dense (full, sliding, chunked) and MLA; Mamba and KV-less layers
 * are neither. */
void kvp_perf_eager_layers(const struct kvp_model *m, uint32_t *dense, uint32_t *mla);

/* The host's launches of one forward pass that replays no CUDA graph
 * (engine.h uncaptured_*): every layer's attention part, `attn_mla` for an
 * MLA layer and `attn` for any other (a layer without attention is charged
 * as a dense one, erring slow), and its FFN part, `moe` for a layer of
 * routed experts (kvp_shape_moe_layers) and `mlp` for the others, + `shared`
 * more in an MoE layer where the model has shared experts
 * (shared_expert_params), + 2 at tp > 1 (the all-reduce after o_proj and
 * the one after the FFN, one launch each).  0 when any of the first four
 * counts is 0 (the engine gives none). */
double kvp_perf_uncaptured_launches(const struct kvp_model *m, uint32_t tp, uint32_t attn,
				    uint32_t attn_mla, uint32_t mlp, uint32_t moe, uint32_t shared);

#endif
