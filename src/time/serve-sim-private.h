/* serve-sim-private.h: what serve-sim.c shares with its helpers
 * (serve-sim-stats.c): tables by sequence length, latency histograms and the
 * KV series.  Not for other modules. */
#ifndef KVP_SERVE_SIM_PRIVATE_H
#define KVP_SERVE_SIM_PRIVATE_H

#include <stdint.h>

#include "memory/budget.h"
#include "time/serve-sim.h"
#include "time/step.h"

/* Per-length values, filled on first use (one layer walk each): a
 * sequence of n tokens' blocks in the pool, its KV bytes on one GPU
 * (kvp_spec_seq_bytes, block 1: what a step reads) and the FLOPs of one
 * decode token over n tokens (kvp_perf_decode_flops). */
struct serve_tables {
	const struct kvp_budget *b;
	const struct kvp_perf_ctx *pc;
	uint64_t unit_bytes;         /* one block of the pool */
	size_t cap;
	uint64_t *blocks, *kv;       /* UINT64_MAX: not yet */
	double *flops;               /* < 0: not yet */
};

kvp_status serve_tables_init(struct serve_tables *t, const struct kvp_budget *b,
			     const struct kvp_perf_ctx *pc);
void serve_tables_free(struct serve_tables *t);
kvp_status serve_blocks(struct serve_tables *t, uint64_t n, uint64_t *out);
kvp_status serve_kv_bytes(struct serve_tables *t, uint64_t n, uint64_t *out);
kvp_status serve_decode_flops(struct serve_tables *t, uint64_t n, double *out);

/* A log histogram of seconds: bins of 2^-9 relative width from 2^-30 s to
 * 2^20 s (the double's exponent and its 9 leading mantissa bits). */
#define SERVE_HIST_SHIFT 43
#define SERVE_HIST_BINS (50 * 512)
struct serve_hist {
	uint64_t n;
	double sum, sumsq, min, max;
	uint64_t count[SERVE_HIST_BINS];
};

void serve_hist_add(struct serve_hist *h, double x);
/* Mean, standard deviation, min, max and the nearest-rank percentiles
 * (each the middle of its bin, within [min, max]). */
void serve_hist_stat(const struct serve_hist *h, struct kvp_serve_stat *out);

/* KV use over time in at most KVP_SERVE_SERIES buckets of equal width,
 * doubled (pairs merged) when the run outgrows them. */
struct serve_series {
	double origin, width;
	double area[KVP_SERVE_SERIES];   /* utilization x seconds */
};

void serve_series_init(struct serve_series *s, double origin);
void serve_series_add(struct serve_series *s, double t0, double t1, double util);
/* Bucket middles and mean utilizations up to `end`; returns the count. */
size_t serve_series_out(const struct serve_series *s, double end, double *t, double *util);

#endif
