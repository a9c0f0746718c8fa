/* moe-table.h: a measured MoE layer table (profiles/kernels/moe-<gpu>-<dtype>.tsv,
 * converted from NVIDIA aiconfigurator's collected data by scripts/moe-tables.py)
 * and its interpolation: the time one GPU takes for one MoE layer's routed
 * experts (routing, both grouped GEMMs, the activation) in TensorRT-LLM's
 * fused MoE kernel.
 *
 *   shape   = hidden d, one expert's intermediate size I (before moe_tp splits
 *             it), top-k, experts E;
 *   group   = moe_tp (each expert's I split over moe_tp GPUs) x moe_ep (the
 *             experts split over moe_ep GPUs);
 *   T       = tokens entering the layer on one GPU (every token of the group);
 *   t(T)    = the measured seconds of one layer on one GPU.
 *
 * Stance: the table is data with its source in its header; this module reads
 * every row (a malformed one anywhere is an error, whatever shape is asked
 * for), keeps the curves of one shape, and interpolates in T only: a shape or
 * a group the table never measured is no curve at all (the caller warns and
 * keeps its own term), never a neighbour's.  Between measured T, log t is
 * linear in log T; below the smallest T the smallest's time (a layer is never
 * faster than the fewest tokens measured); above the largest, its time x
 * T / T_max (the throughput held: never more than was measured). */
#ifndef KVP_MOE_TABLE_H
#define KVP_MOE_TABLE_H

#include <stdint.h>

#include "base/error.h"

#define KVP_MOE_MAX_CURVES 16  /* groups (moe_tp, moe_ep) of one shape */
#define KVP_MOE_MAX_POINTS 40  /* measured token counts per curve */

struct kvp_moe_curve {
	uint32_t moe_tp, moe_ep;
	uint32_t n;                          /* points, T ascending */
	double tokens[KVP_MOE_MAX_POINTS];
	double s[KVP_MOE_MAX_POINTS];        /* seconds, one layer, one GPU */
};

struct kvp_moe_table {
	char path[256];          /* where it was read from ("" when none is loaded) */
	uint32_t hidden, inter, topk, experts;
	uint32_t ncurves;        /* 0: the table has no row of this shape */
	struct kvp_moe_curve curves[KVP_MOE_MAX_CURVES];
};

/* Read a table: '#' comment lines, then the header line
 * "hidden inter topk experts moe_tp moe_ep tokens latency_us" (tabs or
 * spaces), then rows of 8 fields: the first seven positive integers,
 * latency_us a positive finite number.  Keeps the curves of the shape
 * (hidden, inter, topk, experts); ncurves = 0 when none matches.  INVALID
 * with path:line and the field ("hidden" .. "latency_us", "header") on a
 * malformed row anywhere in the file, a token count given twice in one
 * curve, or more than KVP_MOE_MAX_CURVES groups or KVP_MOE_MAX_POINTS
 * points for the shape; NOT_FOUND when the file cannot be opened.  *out is
 * written only on success. */
kvp_status kvp_moe_table_load(const char *path, uint32_t hidden, uint32_t inter, uint32_t topk,
			      uint32_t experts, struct kvp_moe_table *out, struct kvp_error *err);

/* The curve of group (moe_tp, moe_ep), NULL when the table did not measure it. */
const struct kvp_moe_curve *kvp_moe_table_curve(const struct kvp_moe_table *t, uint32_t moe_tp,
						uint32_t moe_ep);

/* Seconds of one layer on one GPU at `tokens` (> 0) tokens, by the rules
 * above; 0 for an empty curve. */
double kvp_moe_curve_s(const struct kvp_moe_curve *c, double tokens);

#endif
