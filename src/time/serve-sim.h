/* serve-sim.h: a discrete-event simulator of one engine's scheduler loop
 * under load (`kvplan serve`), in the shape of vLLM V1's Scheduler.schedule()
 * (../shared/reference/time-model.md 2.1) and SGLang's continuous batching:
 *
 *   each step  the running requests first, in admission order: a request
 *              still prefilling (or recomputing) takes min(its remaining
 *              tokens, the step's token budget T = max_batched_tokens), a
 *              decoding one takes 1 token; blocks for the new tokens are
 *              allocated, and when the pool runs out the newest running
 *              request is preempted (recompute: its blocks freed, its
 *              computed tokens forgotten, back to the front of waiting),
 *              until the request fits or is itself the victim;
 *              then, only if nothing was preempted this step, waiting
 *              requests in order while running < max_num_seqs, budget is
 *              left and their blocks fit (with chunked prefill off a prompt
 *              that does not fit the budget waits);
 *              a request whose computed tokens reach its known tokens
 *              (prompt + generated) samples one token at the step's end; the
 *              last one frees its blocks.
 *   step time  the roofline of time/step.h on what the step carries:
 *                FLOPs  = sum over chunks of F_p(c + n) - F_p(c)
 *                         (kvp_perf_prefill_flops: the chunk's tokens and
 *                         their causal attention over the c tokens before)
 *                         + sum over decodes of F_d(c + 1) (kvp_perf_decode_flops)
 *                bytes  = weights (all of them when a chunk runs, a decode
 *                         batch's experts otherwise, as kvp_perf_decode_step)
 *                         + KV read and written (kvp_spec_seq_bytes of c + n)
 *                comm   = all-reduces of the step's tokens
 *              composed by kvp_perf_step_roofline.  A step of decodes alone
 *              is exactly kvp_perf_decode_step_lens.
 *   blocks     a sequence of n tokens holds kvp_budget_pool_for(n) / the
 *              engine's block bytes (ceil(n / P) for a model of full
 *              attention; vLLM's KV groups for hybrid ones), out of the
 *              budget's num_blocks.
 *   prefix     a share of the requests carry a shared prefix of p tokens,
 *              cached once (its whole blocks pinned for the run); such a
 *              request computes from floor(min(p, prompt - 1) / P) x P.
 *   time       a request arriving during a step is seen at the next step.
 *
 * Load: Poisson arrivals (seeded), a closed loop of N users (each sends its
 * next request when the last completes, after a fixed think time), or a
 * trace (arrival time, prompt and output lengths).  Memory is O(running +
 * waiting requests): latencies go into log histograms (relative bins of
 * 2^-9, percentiles within 0.2 %), the KV series into at most
 * KVP_SERVE_SERIES points (halved in resolution when full).
 *
 * Legend: T = max_batched_tokens, P = block size (tokens), c = a request's
 * computed tokens, n = tokens it computes this step.  Times are seconds. */
#ifndef KVP_SERVE_SIM_H
#define KVP_SERVE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/dist.h"
#include "base/error.h"
#include "memory/budget.h"
#include "out/output.h"
#include "read/workload.h"
#include "time/step.h"

enum kvp_serve_load { KVP_SERVE_POISSON, KVP_SERVE_CLOSED, KVP_SERVE_TRACE,
		      KVP_SERVE_SOURCE /* the caller's requests (kvp_serve_opts.source) */ };

/* One request of a caller's source, in arrival order. */
struct kvp_serve_arrival {
	double arrival_s;            /* non-decreasing; INFINITY: no more */
	uint64_t prompt, output;     /* prompt >= 1; output 0: done when prefilled */
	bool carrier;                /* carries the shared prefix (kvp_serve_memory) */
};

/* A request as the memory model sees it: tokens its KV holds. */
struct kvp_serve_view {
	uint64_t id, prompt, output, tokens;
	bool carrier;
};

/* The KV memory in a caller's units (frag's layouts: bytes, contiguous
 * reservations) in place of the budget's blocks.  The simulator keeps the
 * sum of what each running request holds (held at its tokens, fixed at
 * admission or growing) within pool, preempts the newest when a growth does
 * not fit, and holds shared_units once while any carrier runs (a carrier
 * admitted then takes shared_tokens from it, a prefix-cache hit; the first
 * pays them).  admit (NULL: always) may refuse an admission that fits in
 * total (no hole for a reservation): the admissions stop for the step and
 * on_step hears refused.  release undoes admit at a finish or preemption.
 * on_step (NULL: none) hears each step after scheduling: the running
 * requests, the units in use and the sum of measure (NULL: 0) over the
 * running requests at their tokens, plus shared_measure while a carrier
 * runs (frag: the bytes filled).
 *
 * Linear growth (step_period > 0): a decoding request (past its prompt and
 * first token) of c tokens holds held(c + 1) = held(c) + step_units when
 * c is a multiple of step_period, else held(c), and measure(c + 1) =
 * measure(c) + step_measure.  With it (and no_itl) the decoding requests at
 * the head of the running order are kept lazily: a step costs O(1) for
 * them plus O(log) for each that finishes, not O(running); the numbers are
 * the plain loop's, step for step (each step that would preempt, or whose
 * decodes outnumber its tokens, writes them out first).  Test builds
 * (KVP_CHECK_INVARIANTS) recount held and measure of every running request
 * each step. */
struct kvp_serve_memory {
	uint64_t pool;
	uint64_t shared_tokens, shared_units;
	void *ctx;
	uint64_t (*held)(void *ctx, const struct kvp_serve_view *r);
	bool (*admit)(void *ctx, const struct kvp_serve_view *r, uint64_t units, uint64_t *tag);
	void (*release)(void *ctx, const struct kvp_serve_view *r, uint64_t units, uint64_t tag);
	uint64_t (*measure)(void *ctx, const struct kvp_serve_view *r);
	uint64_t shared_measure;
	void (*on_step)(void *ctx, size_t running, uint64_t used, uint64_t measure, bool refused);
	uint32_t step_period;        /* 0: growth not linear, nothing lazy */
	uint64_t step_units, step_measure;
};

/* One request of a trace. */
struct kvp_serve_trace_row {
	double arrival_s;            /* from the first row's time; non-decreasing */
	uint64_t prompt, output;     /* tokens, >= 1 */
};

struct kvp_serve_trace {
	struct kvp_serve_trace_row *rows;   /* owned */
	size_t n;
	char format[16];             /* "azure", "vidur", "kvplan", "kvplan-jsonl" */
};

/* Read a trace CSV: a header naming the columns, then one request a line.
 * Columns (case as written): TIMESTAMP, ContextTokens, GeneratedTokens (the
 * Azure LLM inference traces 2023/2024; TIMESTAMP a wall-clock time
 * "YYYY-MM-DD HH:MM:SS.fffffff", taken from the first row); arrived_at,
 * num_prefill_tokens, num_decode_tokens (Vidur's processed traces, seconds);
 * or kvplan's own arrival_s, prompt_tokens, output_tokens (seconds), also
 * as JSON lines ({"arrival_s": 0.5, "prompt_tokens": 100, "output_tokens":
 * 20} a line, other keys ignored).  Times
 * must be non-negative and non-decreasing, lengths >= 1 and prompt + output
 * <= max_len when max_len > 0.  Errors (INVALID, with file:line:col and the
 * column) for anything else. */
kvp_status kvp_serve_trace_load(const char *path, uint64_t max_len, struct kvp_serve_trace *out,
				struct kvp_error *err);
void kvp_serve_trace_free(struct kvp_serve_trace *t);

/* What one finished request saw (for tests and per-request exports). */
struct kvp_serve_done {
	uint64_t id;                 /* arrival order, from 0 */
	double arrival_s, ttft_s, e2e_s;
	double queue_s;              /* arrival to its first admission */
	uint64_t prompt, output, preempted;
};

struct kvp_serve_opts {
	/* the engine */
	uint64_t num_blocks;         /* 0: the budget's */
	uint64_t max_num_seqs;       /* 0: the budget's */
	uint64_t max_batched_tokens; /* 0: the budget's */
	uint64_t max_model_len;      /* prompt + output cap (sampled lengths are cut
				      * to it; a trace row above it is an error); 0: none */
	bool no_chunked_prefill;     /* a prompt over the budget waits (vLLM without chunking) */
	uint64_t prefix_tokens;      /* shared prefix p; 0: no prefix cache */
	double prefix_fraction;      /* share of requests that carry it, [0, 1] */
	/* the load */
	enum kvp_serve_load load;
	double rate;                 /* POISSON: requests per second, finite, > 0 */
	uint64_t users;              /* CLOSED: users, >= 1 */
	double think_s;              /* CLOSED: a user's pause between requests */
	uint64_t requests;           /* requests to send (TRACE: 0 all rows; else at most) */
	uint64_t seed;
	const struct kvp_workload *workload;   /* lengths (POISSON, CLOSED) */
	const struct kvp_serve_trace *trace;   /* TRACE */
	/* service levels for goodput; 0: not asked */
	double slo_ttft_s, slo_tpot_s, slo_e2e_s;
	/* SOURCE: the requests, one a call (arrival_s INFINITY after the last) */
	kvp_status (*source)(void *ctx, struct kvp_serve_arrival *a, struct kvp_error *err);
	void *source_ctx;
	const struct kvp_serve_memory *memory;  /* NULL: the budget's blocks */
	double step_s;               /* > 0: every step takes this long, on a grid
				      * from 0 (step i covers [i s, (i + 1) s); an
				      * idle engine waits for the step after the next
				      * arrival); 0: the roofline */
	bool admit_after_preempt;    /* admit waiting requests in a step that
				      * preempted too (frag's loop); vLLM does not */
	bool no_itl;                 /* leave the inter-token latencies out (a
				      * histogram entry a token: frag has no use) */
	/* each finished request, in finishing order; NULL: none */
	void (*on_done)(void *ctx, const struct kvp_serve_done *d);
	void *ctx;
};

/* A latency metric's summary (seconds). */
struct kvp_serve_stat {
	uint64_t n;
	double mean, std, min, max, p50, p90, p99;
};

#define KVP_SERVE_SERIES 512

struct kvp_serve_result {
	uint64_t completed, total_input_tokens, total_output_tokens;
	double start_s, end_s, duration_s;   /* first arrival to last completion */
	double request_throughput, output_throughput, total_token_throughput;
	uint64_t good;                        /* requests within every asked SLO */
	double request_goodput;               /* good / duration; NAN: no SLO asked */
	struct kvp_serve_stat ttft, tpot, itl, e2el;
	uint64_t steps, preemptions, recomputed_tokens, prefix_hits, max_running;
	double mean_batch_tokens;             /* tokens a step carries, on average */
	double busy_s;                        /* the steps' time together */
	uint64_t num_blocks, pinned_blocks;   /* the pool; the cached prefix's */
	uint64_t kv_max_blocks;               /* blocks in use at the fullest step */
	double kv_mean_util, kv_max_util;     /* time-weighted over the duration; peak */
	double mean_in_system;                /* Little's L, time-weighted */
	size_t nseries;                       /* KV use over time */
	double series_t[KVP_SERVE_SERIES], series_util[KVP_SERVE_SERIES];
	uint64_t max_num_seqs, max_batched_tokens;
	uint32_t block_size;
};

/* Run the simulator.  b: the budget (its pool, block size, max_num_seqs,
 * max_batched_tokens, spec); pc: the step model on the same spec.  INVALID
 * (field named) for a rate of 0 or infinity, no users, a trace request
 * longer than max_model_len, a request longer than the pool holds (a request that could never run);
 * USAGE for a data-parallel shape (one engine's loop only); INTERNAL when the
 * bookkeeping breaks (an invariant; built with KVP_CHECK_INVARIANTS it
 * aborts).  *out is large: allocate it. */
/* b and pc may be NULL with a memory model and a fixed step_s (then
 * max_num_seqs and max_batched_tokens must be given). */
kvp_status kvp_serve_run(const struct kvp_budget *b, const struct kvp_perf_ctx *pc,
			 const struct kvp_serve_opts *o, struct kvp_serve_result *out,
			 struct kvp_error *err);

/* The output contract (man/kvplan.1, SERVE): the result as one record whose
 * keys follow vLLM's benchmark_serving (mean_ttft_ms, median_ttft_ms,
 * p99_ttft_ms, ..., request_throughput, output_throughput,
 * total_token_throughput); false when memory runs out. */
bool kvp_serve_to_record(const struct kvp_serve_result *r, struct kvp_record *rec, bool series);

#endif
