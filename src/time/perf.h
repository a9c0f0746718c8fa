/* perf.h: `kvplan perf` for one serving replica: a budget at prompt + output
 * for each batch, the prefill and decode steps of step.h, offload, prefix
 * reuse and speculative decoding composed into rows, and the output
 * contract.  The step-time model itself is step.h's. */
#ifndef KVP_PERF_H
#define KVP_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memory/budget.h"
#include "base/error.h"
#include "model/model.h"
#include "out/output.h"
#include "read/profile.h"
#include "read/workload.h"
#include "time/step.h"

/* ------------------------------------------------------------ runs */

/* What `kvplan perf` computes for one replica, and what `kvplan check`
 * asserts on: a row per batch, timed at the mean context of the output
 * (prompt + (output - 1) / 2), its memory checked at prompt + output. */
#define KVP_PERF_MAX_BATCHES 64

struct kvp_perf_opts {
	uint64_t prompt, output;          /* tokens; both > 0 */
	uint64_t batches[KVP_PERF_MAX_BATCHES];
	size_t nbatch;                    /* >= 1 */
	struct kvp_offload offload;       /* tier NONE: everything on the GPU;
					   * fraction < 0: what does not fit in the pool */
	uint64_t prefix;                  /* prefix reuse, tokens; 0: the prompt */
	const char *calibration;          /* a label for the record, or NULL */
	const char *calibration_kernel;   /* the kvbench run composed with it, or NULL */
};

struct kvp_perf_row {
	uint64_t batch;                   /* sequences of the whole deployment */
	uint64_t rank_batch;              /* on the fullest DP rank: ceil(batch / dp) */
	double dp_balance;                /* batch / (dp x rank_batch): 1 when even */
	struct kvp_perf_step prefill, decode;   /* prefill: the B prompts at once */
	struct kvp_perf_chunked chunked;        /* one prompt joining B - 1 decodes */
	bool offload;                     /* off holds the offloaded step */
	struct kvp_perf_offload off;
	struct kvp_perf_offload prefill_off;    /* the batch's prompts' KV written out */
	double ttft_s;                    /* the batch at once: prefill, or with offload
					   * prefill_off.pipelined_s (chunked: chunked.ttft_s) */
	bool speculative;                 /* a draft proposes tokens (time/speculative.h) */
	double tokens_per_step, verify_s, draft_s;  /* then tpot_s = (verify + K draft) / tokens */
	uint32_t micro_batches;           /* pipeline micro-batches in flight: min(pp, rank_batch) */
	uint64_t micro_batch;             /* sequences of each: ceil(rank_batch / pp) */
	double tpot_s;
	double tokens_per_s;              /* decode only: batch / tpot_s */
	double tpot_loaded_s;             /* TPOT at a steady concurrency of batch, others' prefills riding */
	double e2e_s;                     /* the static batch: ttft_s + (output - 1) tpot_s */
	double output_tokens_per_s;       /* batch x output / e2e_s: prefill included */
	double total_tokens_per_s;        /* batch x (prompt + output) / e2e_s */
	uint64_t kv_bytes;                /* at prompt + output (the budget's) */
	bool fits;                        /* in memory, or offloaded */
};

struct kvp_perf_result {
	const struct kvp_model *model;    /* borrowed */
	char gpu[KVP_NAME_MAX];
	struct kvp_perf_opts opts;        /* prefix resolved */
	struct kvp_perf_hw hw;
	struct kvp_budget budget;         /* at prompt + output, the last batch */
	struct kvp_perf_ctx ctx;          /* points into budget */
	uint64_t decode_context;          /* prompt + (output - 1) / 2 */
	uint64_t max_batch;               /* sequences of prompt + output that fit, all DP ranks */
	struct kvp_perf_row rows[KVP_PERF_MAX_BATCHES];
	size_t nrows;
	bool all_fit;
	/* the context-doubling point and prefix reuse, at the prompt */
	uint64_t kv_1x_bytes, kv_2x_bytes;      /* one sequence of prompt, 2 x prompt */
	double attention_1x_flops, attention_2x_flops;
	struct kvp_link prefix_link;            /* the offload link, else the host link */
	double prefix_reload_s, prefix_recompute_s;
	uint64_t prefix_limit;                  /* breakeven searched up to this */
	uint64_t prefix_breakeven;              /* 0: recomputing stays faster */
	uint32_t gpus;                          /* tp x pp x dp */
};

/* The context a decoding sequence holds, averaged over time: a request of p
 * prompt and o output tokens decodes for o steps holding p + j tokens at the
 * j-th (j = 0 .. o - 1), p + (o - 1) / 2 on average, and a long output holds
 * its context for more steps, so over the workload's requests
 *   C = E[o (p + (o - 1) / 2)] / E[o],
 * not mean p + (mean o - 1) / 2 (which leaves out how o weighs the time).
 * Lengths as kvp_workload_sample draws them (w->max_len applied): exact over
 * a file's pairs, or the product of two fixed or empirical distributions up
 * to 2^20 pairs; else 65,536 draws of seed 1.  Requests with no output hold
 * nothing while decoding.  0 when no request decodes. */
double kvp_perf_held_context(const struct kvp_workload *w);

/* Run `kvplan perf`: a budget at prompt + output for each batch (o gives
 * the split, dtypes and budget terms; its context and batch are replaced),
 * the prefill and decode roofline, offload when asked, and prefix reuse.
 * hw is the hardware after any overrides.  *out is large: allocate it.
 * Errors: the budget's (INVALID split, OVERFLOW) and kvp_perf_init's. */
kvp_status kvp_perf_run(const struct kvp_model *m, const struct kvp_gpu *g,
			const struct kvp_budget_opts *o, const struct kvp_perf_hw *hw,
			const struct kvp_perf_opts *po, struct kvp_perf_result *out,
			struct kvp_error *err);

/* A roofline term of finite inputs that overflowed (an efficiency of 1e-300
 * over 1.6e17 bytes) would print as "inf": KVP_STATUS_OVERFLOW naming the
 * batch and the field, for the CLI (which prints nothing then) and the
 * library alike.  ttft_s and tpot_s stay infinite where the batch cannot be
 * scheduled at all, which is their meaning, not an overflow. */
kvp_status kvp_perf_check_finite(const struct kvp_perf_result *run, struct kvp_error *err);

/* The output contract (man/kvplan.1, PERF): row i as its record (a new
 * record, NULL when memory runs out), and the whole run as `kvplan perf
 * --format json` prints it, its rows under "rows" (false when memory runs
 * out; r keeps what was added). */
struct kvp_record *kvp_perf_row_to_record(const struct kvp_perf_result *run, size_t i);
bool kvp_perf_to_record(const struct kvp_perf_result *run, struct kvp_record *r);

#endif
