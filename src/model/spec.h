/* spec.h: building the per-GPU spec (struct kvp_spec, model.h) of a model
 * under a deployment shape: the one place that joins the model's per-layer
 * costs (model.h) with the shape's weight placement (shape.h). */
#ifndef KVP_SPEC_H
#define KVP_SPEC_H

#include "base/error.h"
#include "model/model.h"

/* Build the spec of the stage with the most KV bytes per token (ties: the
 * first).  kv_dtype AUTO follows the serving dtype; serving_dtype AUTO
 * follows kvp_model_serving_dtype.  Fails (INVALID) when tp does not divide the
 * attention heads, or H_kv and tp do not divide one another, or pp exceeds the
 * layers; OVERFLOW when a byte count does not fit. */
kvp_status kvp_spec_build(const struct kvp_model *m, struct kvp_parallel par,
			  enum kvp_dtype serving_dtype, enum kvp_dtype kv_dtype,
			  struct kvp_spec *out, struct kvp_error *err);

/* The same for pipeline stage `stage` (0 .. pp - 1) instead of the one with
 * the most KV bytes per token: the budget sizes every stage, and the stage
 * with the least room governs (memory/budget.c).  USAGE when stage >= pp. */
kvp_status kvp_spec_build_stage(const struct kvp_model *m, struct kvp_parallel par,
				enum kvp_dtype serving_dtype, enum kvp_dtype kv_dtype, uint32_t stage,
				struct kvp_spec *out, struct kvp_error *err);

#endif
