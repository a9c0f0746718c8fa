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

#endif
