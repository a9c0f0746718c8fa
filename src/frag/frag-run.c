/* frag-run.c: `kvplan frag`'s run (kvp_frag_run, frag.h): the configuration
 * checked, the rows built from the policies, allocators and block sizes, and
 * each run by its simulator: the closed-batch one (frag-sim.c) or the
 * arrivals over time (frag-arrivals.c).  Both simulators sit below it and
 * never call each other. */
#include "frag/frag.h"

#include "frag/frag-sim.h"

kvp_status kvp_frag_run(const struct kvp_frag_config *cfg, const struct kvp_workload *w,
			struct kvp_frag_result *out, size_t max, size_t *n, struct kvp_error *err)
{
	*n = 0;
	if (!cfg->max_len)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "max_len", "must be positive");
	if (!cfg->pool_bytes)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "pool",
				     "the KV pool is empty: the weights leave no room");
	if (cfg->prefix_tokens && cfg->prefix_tokens >= cfg->max_len)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "shared_prefix",
				     "%llu tokens leave no room under max_len %llu",
				     (unsigned long long)cfg->prefix_tokens,
				     (unsigned long long)cfg->max_len);
	uint64_t biggest = kvp_frag_seq_bytes(&cfg->shape, cfg->max_len, KVP_FRAG_MAX_BLOCK);
	if (cfg->has_paged_shape &&
	    (kvp_frag_seq_bytes(&cfg->paged_shape, cfg->max_len, KVP_FRAG_MAX_BLOCK) == UINT64_MAX ||
	     kvp_frag_token_bytes(&cfg->paged_shape) > UINT64_MAX / KVP_FRAG_MAX_BLOCK))
		biggest = UINT64_MAX;
	if (biggest == UINT64_MAX || kvp_frag_token_bytes(&cfg->shape) > UINT64_MAX / KVP_FRAG_MAX_BLOCK)
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "max_len",
				     "bytes of one sequence overflow 64 bits");
	/* the rows */
	struct kvp_frag_result rows[KVP_FRAG_MAX_ROWS];
	size_t nr = 0;
	for (int p = KVP_FRAG_POLICY_CONTIGUOUS_MAX; p <= KVP_FRAG_POLICY_CONTIGUOUS_REQUEST; p++)
		for (int f = 0; f < 2 && cfg->policy[p]; f++)
			if (cfg->fit[f])
				rows[nr++] = (struct kvp_frag_result){.policy = (enum kvp_frag_policy)p,
								      .fit = (enum kvp_frag_fit)f};
	bool prefix = cfg->prefix_tokens && cfg->prefix_fraction > 0;
	for (int p = KVP_FRAG_POLICY_PAGED; p <= KVP_FRAG_POLICY_PAGED_SHARED; p++) {
		if (!cfg->policy[p] || (p == KVP_FRAG_POLICY_PAGED_SHARED && !prefix))
			continue;
		for (size_t b = 0; b < cfg->nblock; b++) {
			if (!cfg->block_sizes[b] || cfg->block_sizes[b] > KVP_FRAG_MAX_BLOCK)
				return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "block size",
						     "%u is outside 1..%u", cfg->block_sizes[b],
						     KVP_FRAG_MAX_BLOCK);
			rows[nr++] = (struct kvp_frag_result){.policy = (enum kvp_frag_policy)p,
							      .block_size = cfg->block_sizes[b]};
		}
	}
	if (!nr)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "policies",
				     "nothing to simulate: %s",
				     cfg->policy[KVP_FRAG_POLICY_PAGED_SHARED] && !prefix
					     ? "paged-shared needs a shared prefix (--shared-prefix)"
					     : "no policy, allocator or block size left");
	if (cfg->arrival_rate != 0 || (w->arrival_s && w->narrival && cfg->step_time_s > 0)) {
		/* arrivals over time: every row, one after the other */
		size_t k = nr;
		for (size_t i = 0; i < k; i++) {
			struct kvp_frag_config rc = *cfg;
			if (cfg->has_paged_shape && rows[i].policy >= KVP_FRAG_POLICY_PAGED)
				rc.shape = cfg->paged_shape;
			kvp_status st = kvp_frag_arrivals_run(&rc, w, &rows[i], err);
			if (st)
				return st;
			if (i < max)
				out[(*n)++] = rows[i];
		}
		return KVP_STATUS_OK;
	}
	kvp_status st = kvp_frag_sim_rows(cfg, w, rows, nr, err);
	for (size_t i = 0; !st && i < nr && i < max; i++)
		out[(*n)++] = rows[i];
	return st;
}
