/* serve-ref.h: the plain reference of `kvplan serve`'s scheduler loop, for
 * tests only.
 *
 * It re-reads the rules of src/time/serve-sim.h and implements them the
 * slowest obvious way: every request in one array with a state, running and
 * waiting as arrays shifted by hand, one step at a time, blocks, KV bytes
 * and FLOPs recomputed from the library's per-length functions
 * (kvp_budget_pool_for, kvp_spec_seq_bytes, kvp_perf_prefill_flops,
 * kvp_perf_decode_flops) each time they are needed.  It shares no code with
 * src/time/serve-sim*.c, so that check-serve comparing the two on random
 * workloads can catch a bug in either. */
#ifndef KVP_SERVE_REF_H
#define KVP_SERVE_REF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memory/budget.h"
#include "time/step.h"

struct serve_ref_req {
	double arrival_s;             /* non-decreasing over the array */
	uint64_t prompt, output;
	bool prefix;                  /* carries the shared prefix */
	/* out */
	double ttft_s, e2e_s;
	uint64_t preempted;
	bool done;
};

struct serve_ref_cfg {
	uint64_t num_blocks, max_num_seqs, max_batched_tokens, prefix_tokens;
	bool no_chunked_prefill;
};

struct serve_ref_out {
	uint64_t completed, preemptions, recomputed_tokens, steps, max_blocks;
};

/* Run reqs[0..n) through the loop; false on an error of the step model or
 * when no step can run. */
bool serve_ref_run(const struct kvp_budget *b, const struct kvp_perf_ctx *pc,
		   const struct serve_ref_cfg *cfg, struct serve_ref_req *reqs, size_t n,
		   struct serve_ref_out *out);

#endif
