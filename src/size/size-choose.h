/* size-choose.h: what `kvplan size` does after searching each GPU
 * (kvp_size_search_space): rank, size the finalists again on the
 * simulator, mark the Pareto front, find the fewest GPUs that meet, keep
 * the front alone if asked.  One sequence for the CLI (cli/cmd-size.c) and
 * the API (api/api-size.c), so their answers cannot drift. */
#ifndef KVP_SIZE_CHOOSE_H
#define KVP_SIZE_CHOOSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "read/workload.h"
#include "size/size.h"

struct kvp_size_choice {
	size_t n;                            /* configurations kept: all, or the front */
	size_t front;                        /* on the Pareto front */
	const struct kvp_size_config *best;   /* cfg[0] when it meets, else NULL */
	const struct kvp_size_config *fewest; /* &fewest_c, or NULL when none meets */
	struct kvp_size_config fewest_c;      /* a copy: the front may drop it from cfg */
};

/* Over cfg[0 .. n - 1], each sized on gpus[cfg[i].origin] with demand d,
 * options o and workload w:
 *   1. rank (kvp_size_rank);
 *   2. with simulate > 0: the `simulate` first configurations in rank order
 *      that the simulator can size (kvp_size_sim_applies) sized again on
 *      it, ranked again; while the cheapest that meets is one not
 *      simulated, it is simulated too (at most `simulate` more), so the
 *      choice is never a closed form's alone;
 *   3. the Pareto front marked (kvp_size_pareto);
 *   4. the fewest GPUs of any configuration that meets;
 *   5. with pareto_only: cfg keeps only the front, in rank order (the
 *      cheapest that meets is on it unless an equal one is).
 * out->fewest points into out: do not copy out.  Errors: the simulator's. */
kvp_status kvp_size_choose(const struct kvp_model *m, const struct kvp_gpu *gpus,
			   const struct kvp_size_demand *d, const struct kvp_size_opts *o,
			   const struct kvp_workload *w, uint64_t simulate, bool pareto_only,
			   struct kvp_size_config *cfg, size_t n, struct kvp_size_choice *out,
			   struct kvp_error *err);

/* A figure that finite inputs make finite but that overflowed to infinity
 * (a price of 1e308 $/GPU-hour times 2 GPUs; a rate so small the cost per
 * million tokens passes 1.8e308) is an error, never "inf" in a table or CSV
 * nor null in JSON.  NaN stays what it means (a price not known), and a
 * configuration that does not meet its levels may hold infinite times (an
 * unstable queue).  OVERFLOW naming the field; its message reads "GPU, tp
 * T, N GPUs: FIELD: overflows to infinity (...)". */
kvp_status kvp_size_check_finite(const struct kvp_size_config *cfg, size_t n,
				 struct kvp_error *err);

#endif
