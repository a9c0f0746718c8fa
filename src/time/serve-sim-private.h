/* serve-sim-private.h: what serve-sim.c shares with its helpers: tables by
 * sequence length, latency histograms and the KV series (serve-sim-stats.c);
 * the loop's state and the caller's memory model in it, with lazy decoding
 * (serve-sim-memory.c).  Not for other modules. */
#ifndef KVP_SERVE_SIM_PRIVATE_H
#define KVP_SERVE_SIM_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/dist.h"
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

/* A request in the loop (serve-sim.c). */
struct sreq {
	uint64_t id, prompt, output;
	uint64_t gen;                /* tokens sampled so far */
	uint64_t comp;               /* tokens whose KV is computed (c) */
	uint64_t hit;                /* of which from the prefix cache */
	uint64_t held;               /* blocks of its own */
	uint64_t sched;              /* tokens this step (n) */
	uint64_t preempted;
	uint64_t tag;                /* the memory model's (kvp_serve_memory.admit) */
	double arrival, first_t, last_t, sched_t;
	bool prefix;
	/* lazy (struct serve_lazy): comp, held and measure as they were when it
	 * became lazy; its tokens now are the clock - base */
	uint64_t base, measure;
	uint32_t lz_prev, lz_next;   /* the lazy ones in running order */
};

/* Lazy decoding (serve-sim-memory.c): the decoding requests at the head of
 * the running order, under a memory model whose growth is linear
 * (kvp_serve_memory.step_period), are not touched a step.  Each gains a
 * token a step, so a clock gives its tokens (c = clock - base); a count
 * per residue of base mod the period says how many take step_units this
 * step; a min-heap of (the clock of the step it finishes in, order) says
 * which leave, in running order; the measure is summed in aggregate. */
struct serve_lazy_ev {
	uint64_t key, order;
	uint32_t slot;
};

struct serve_lazy {
	bool on;
	uint32_t period;             /* kvp_serve_memory.step_period */
	uint64_t units, measure_tok; /* step_units, step_measure */
	uint32_t head, tail;         /* slots, SERVE_NIL: none */
	size_t n;
	struct serve_lazy_ev *heap;
	size_t nh, caph;
	uint32_t *cnt;               /* [period]: lazy ones with base = r (mod period) */
	uint64_t clock, order;
	uint64_t measure;            /* their measures at this step's start */
};

#define SERVE_NIL UINT32_MAX

/* The loop (serve-sim.c). */
struct sim {
	const struct kvp_budget *b;
	const struct kvp_perf_ctx *pc;
	const struct kvp_serve_opts *o;
	struct kvp_serve_result *res;
	struct kvp_error *err;
	/* engine */
	uint64_t num_blocks, max_seqs, mbt, pinned, used;
	uint32_t P;
	/* tables by length */
	struct serve_tables tab;
	double *dec_w;               /* decode weights (bytes) by batch, 0: not yet */
	/* requests */
	struct sreq *req;
	uint32_t *free_slots, nfree;
	size_t cap;
	uint32_t *run;               /* running after the lazy ones, in admission order */
	size_t nrun;
	struct serve_lazy lz;
	uint32_t *wait;              /* ring */
	size_t whead, nwait, wcap;
	/* arrivals */
	struct kvp_rng rng;
	uint64_t sent, limit;
	double next_poisson;
	size_t trace_i;
	double *users_t;             /* closed loop: pending sends, a FIFO ring */
	size_t uhead, nusers, ucap;
	struct kvp_serve_arrival pending;   /* SOURCE: the next request */
	/* a caller's memory (kvp_serve_memory) */
	const struct kvp_serve_memory *mem;
	uint64_t refs;               /* running carriers of the shared prefix */
	bool refused;                /* an admission refused this step */
	/* accounting */
	double t_area, area;         /* Little: integral of requests in the system */
	uint64_t insys;
	uint64_t scheduled_tokens, finished_tokens;
	double sum_e2e;
	double util_t;               /* utilization integrated up to here */
	double util_area;
	struct serve_hist *h_ttft, *h_tpot, *h_itl, *h_e2el;
	struct serve_series series;
	bool broken;
};

/* The requests running, the lazy ones and the rest. */
static inline size_t serve_running(const struct sim *s)
{
	return s->lz.n + s->nrun;
}

/* Lazy decoding on when the memory model's growth is linear and no
 * per-token latency is kept: the counts by residue.  NOMEM. */
kvp_status serve_lazy_init(struct sim *s);
void serve_lazy_free(struct sim *s);
/* At a step's start: the lazy ones each take a token of *budget and the
 * pool their growth, when all of them fit; else they are written out, in
 * running order, before the other running requests (explicit from then). */
void serve_lazy_schedule(struct sim *s, uint64_t *budget);
/* At the step's end: the next lazy request that finished in it (its state
 * after the step written out, no longer lazy), in running order, or
 * SERVE_NIL; then serve_lazy_advance for the step's tokens. */
uint32_t serve_lazy_pop_done(struct sim *s);
void serve_lazy_advance(struct sim *s);
/* After the step's end: the running requests that decode at the head of the
 * explicit ones become lazy.  NOMEM. */
kvp_status serve_lazy_promote(struct sim *s);
/* The memory model's view of the step after its schedule (on_step): the
 * measures summed, with the shared prefix's while a carrier runs. */
void serve_memory_on_step(struct sim *s);
/* Test builds: every running request's units and measure from the memory
 * model against what the loop keeps; false when they differ. */
bool serve_memory_recount(const struct sim *s);

#endif
