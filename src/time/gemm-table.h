/* gemm-table.h: a measured GEMM table (profiles/kernels/gemm-<gpu>-<dtype>.tsv,
 * converted from NVIDIA aiconfigurator's collected data by
 * scripts/gemm-tables.py) and its interpolation: the throughput one GPU
 * reaches on C[M x N] = A[M x K] B[K x N] in one dtype.
 *
 *   M = rows (tokens), N = output features, K = input features,
 *   tf(M, N, K) = achieved FLOP/s = 2 M N K / measured seconds.
 *
 * Stance: the table is data with its source in its header; this module only
 * reads it and interpolates, never extrapolates upwards.  Between grid points
 * log tf is interpolated linearly in log2 M, log2 N and log2 K (trilinear in
 * log space: exact for a GEMM whose time is flat in M, tf proportional to M, as
 * a memory-bound one is, and for a saturated one, tf constant).  Outside the
 * grid, per axis: below the smallest point the GEMM is given the edge's time
 * (tf scaled by x / x_min: a smaller GEMM is never timed faster than the
 * smallest one measured); above the largest, the edge's throughput (tf held:
 * never more than was measured). */
#ifndef KVP_GEMM_TABLE_H
#define KVP_GEMM_TABLE_H

#include <stdint.h>

#include "base/error.h"

#define KVP_GEMM_MAX_M 20   /* grid points in M */
#define KVP_GEMM_MAX_NK 8   /* grid points in N and in K */

struct kvp_gemm_table {
	char path[256];          /* where it was read from ("" when none is loaded) */
	uint32_t nm, nn, nk;     /* grid points per axis; nm = 0: no table */
	double m[KVP_GEMM_MAX_M], n[KVP_GEMM_MAX_NK], k[KVP_GEMM_MAX_NK]; /* ascending */
	double tflops[KVP_GEMM_MAX_M][KVP_GEMM_MAX_NK][KVP_GEMM_MAX_NK];  /* 1e12 FLOP/s */
};

/* Read a table: '#' comment lines, then the header line "m n k tflops"
 * (tabs or spaces), then one row per grid point: m, n, k positive integers,
 * tflops a positive finite number.  The rows must fill a complete grid (every
 * m x n x k once) of at most KVP_GEMM_MAX_M x KVP_GEMM_MAX_NK^2 points.
 * INVALID with path:line and the field ("m", "n", "k", "tflops", "header")
 * on anything else; NOT_FOUND when the file cannot be opened. */
kvp_status kvp_gemm_table_load(const char *path, struct kvp_gemm_table *out,
			       struct kvp_error *err);

/* FLOP/s (not TFLOP/s) at (M, N, K), each > 0, by the rules above.  0 when
 * t holds no table. */
double kvp_gemm_table_flops(const struct kvp_gemm_table *t, double m, double n, double k);

#endif
