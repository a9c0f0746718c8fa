/* step-moe.h: the routed experts of a step timed from a measured MoE layer
 * table (time/moe-table.h, profiles/kernels/moe-*.tsv) where the engine runs
 * the kernels it measured: which curve a deployment gets, and the seconds of
 * a step's MoE layers.  Below step.c, which wraps both (kvp_perf_init,
 * kvp_perf_moe_table_s). */
#ifndef KVP_STEP_MOE_H
#define KVP_STEP_MOE_H

#include <stdbool.h>
#include <stddef.h>

#include "model/model.h"
#include "time/moe-table.h"

/* The curve of table t for model m on parallel shape par: the expert group
 * is the tp x dp GPUs of a stage (shape.h), as aiconfigurator's moe_tp x
 * moe_ep = tp x attention dp (sdk/models/moe.py, 0.12.0) and TensorRT-LLM's
 * Mapping; with ep the experts are split over ep of them (moe_ep = ep) and
 * each expert over the rest (moe_tp = group / ep), else each expert over the
 * whole group (moe_tp = group, moe_ep = 1).  Each point of the curve is
 * held at or under the time the table gives at the same tokens for the same
 * moe_tp over moe_ep / 2, moe_ep / 4, ... 1 GPUs where it measured them (a
 * GPU's experts are then a subset of a coarser split's, its tokens the
 * same).  true with *out set when t has that curve; false with out->n = 0 and `warning` (size bytes) saying what
 * was missing and what is assumed instead (the roofline's experts). */
bool kvp_moe_curve_pick(const struct kvp_moe_table *t, const struct kvp_parallel *par,
			struct kvp_moe_curve *out, char *warning, size_t size);

/* Seconds of a step's routed experts at `tokens` tokens entering each MoE
 * layer: m's MoE layers (kvp_shape_moe_layers) x kvp_moe_curve_s(c, tokens);
 * -1 when c holds no curve or tokens <= 0. */
double kvp_moe_step_s(const struct kvp_moe_curve *c, const struct kvp_model *m, double tokens);

#endif
