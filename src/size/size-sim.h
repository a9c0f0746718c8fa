/* size-sim.h: a sized configuration checked on the serving-loop simulator
 * (time/serve-sim.h) instead of the closed forms of size.h.  The closed
 * forms rank the space and prune it; the finalists are simulated here:
 *
 *   capacity  with a rate: the largest Poisson rate lambda* one replica
 *             serves with the SLO percentiles met and its queue stable
 *             (found by doubling, then bisection); replicas R =
 *             ceil(lambda / lambda*).  With users (a closed loop, each
 *             user sends its next request when the last completes): the
 *             most users N* one replica serves within the SLOs; R =
 *             ceil(users / N*).  Then the replica is simulated once more at
 *             its share (lambda / R, or ceil(users / R)) and its rows are
 *             that run's: TTFT and TPOT at the percentile, concurrency (the
 *             simulated mean in the system), tokens/s and cost.
 *   meets     TTFT and TPOT at the workload's percentile (the simulator
 *             keeps p50, p90 and p99: a percentile between them takes the
 *             next one up, so it errs towards slower) within their levels;
 *             a Poisson run is stable when the mean TTFT of its last third
 *             of requests is at most 1.5 x that of its middle third plus an
 *             idle replica's TTFT (a queue that grows without bound grows
 *             through the run); without a TTFT level a closed loop of N
 *             users must also run them all at once (N <= max_num_seqs).
 *   never     one user alone (an idle replica) already misses a level: no
 *             replica count meets it; the row says which and by how much
 *             (miss_ttft_s, miss_tpot_s) and keeps one replica.
 *   too many  R above max_replicas: fails throughput at max_replicas.
 *
 * Memory is not a separate test: the simulator runs out of KV blocks and
 * preempts, which shows in the latencies.  Only colocated configurations of
 * one data-parallel rank are simulated (serve-sim models one engine loop);
 * the others keep their closed forms and simulated = false.
 * Legend: lambda = requests/s, R = replicas, N = concurrent users. */
#ifndef KVP_SIZE_SIM_H
#define KVP_SIZE_SIM_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "read/profile.h"
#include "read/workload.h"
#include "size/size.h"

/* Requests in each simulation when kvp_size_sim_opts.requests is 0. */
#define KVP_SIZE_SIM_REQUESTS 1000

struct kvp_size_sim_opts {
	const struct kvp_workload *w;   /* the lengths and the prefix (d's workload) */
	uint64_t requests;              /* per simulation; 0: KVP_SIZE_SIM_REQUESTS */
	uint64_t seed;                  /* 0: 1 */
};

/* Whether c can be simulated: sized at all (no fixed failure), colocated,
 * one data-parallel rank, and the demand has a rate or users. */
bool kvp_size_sim_applies(const struct kvp_size_config *c, const struct kvp_size_demand *d);

/* Size c again on the simulator (see above) for GPU g, the demand d and
 * the options o that sized it; c's replicas, count, cost, latencies,
 * failures and verdict are replaced, c->simulated set and c->sim_capacity
 * the per-replica rate (or users) found.  c unchanged when
 * kvp_size_sim_applies is false.  Errors: the budget's and the
 * simulator's (a workload request longer than the pool holds is INVALID). */
kvp_status kvp_size_simulate(const struct kvp_model *m, const struct kvp_gpu *g,
			     const struct kvp_size_demand *d, const struct kvp_size_opts *o,
			     const struct kvp_size_sim_opts *so, struct kvp_size_config *c,
			     struct kvp_error *err);

#endif
