/* size-choose.c: after the search (size-choose.h): rank, simulate the
 * finalists, the Pareto front, the fewest GPUs, the front alone, and the
 * check that no figure overflowed to infinity.  Moved
 * from cli/cmd-size.c so the public API follows the same steps (issue 40). */
#include "size/size-choose.h"

#include "size/size-sim.h"

#include <math.h>

kvp_status kvp_size_choose(const struct kvp_model *m, const struct kvp_gpu *gpus,
			   const struct kvp_size_demand *d, const struct kvp_size_opts *o,
			   const struct kvp_workload *w, uint64_t simulate, bool pareto_only,
			   struct kvp_size_config *cfg, size_t n, struct kvp_size_choice *out,
			   struct kvp_error *err)
{
	struct kvp_size_sim_opts sim = {.w = w};
	kvp_status st;
	kvp_size_rank(cfg, n);
	if (simulate) {
		uint64_t done = 0;
		for (size_t i = 0; i < n && done < simulate; i++) {
			if (!kvp_size_sim_applies(&cfg[i], d))
				continue;
			if ((st = kvp_size_simulate(m, &gpus[cfg[i].origin], d, o, &sim, &cfg[i], err)))
				return st;
			done++;
		}
		kvp_size_rank(cfg, n);
		for (uint64_t extra = 0; extra < simulate && n && cfg[0].meets && !cfg[0].simulated &&
					 kvp_size_sim_applies(&cfg[0], d); extra++) {
			if ((st = kvp_size_simulate(m, &gpus[cfg[0].origin], d, o, &sim, &cfg[0], err)))
				return st;
			kvp_size_rank(cfg, n);
		}
	}
	out->front = kvp_size_pareto(cfg, n);
	out->fewest = NULL;
	for (size_t i = 0; i < n; i++)
		if (cfg[i].meets && (!out->fewest || cfg[i].count < out->fewest->count))
			out->fewest = &cfg[i];
	if (out->fewest) {
		out->fewest_c = *out->fewest;
		out->fewest = &out->fewest_c;
	}
	if (pareto_only) {
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (cfg[i].pareto)
				cfg[k++] = cfg[i];
		n = k;
	}
	out->n = n;
	/* the first that meets: a priced one when any priced one meets, since
	 * the ranking puts the unpriced apart after them */
	out->best = NULL;
	for (size_t i = 0; i < n && !out->best; i++)
		if (cfg[i].meets)
			out->best = &cfg[i];
	return KVP_STATUS_OK;
}

kvp_status kvp_size_check_finite(const struct kvp_size_config *cfg, size_t n,
				 struct kvp_error *err)
{
	for (size_t i = 0; i < n; i++) {
		const struct kvp_size_config *c = &cfg[i];
		const struct {
			const char *name;
			double v;
			bool check;
		} f[] = {
			{"price_per_hour", c->price_per_hour, true},
			{"cloud_price_per_hour", c->cloud_gpu_hour, true},
			{"own_price_per_hour", c->own_gpu_hour, true},
			{"cost_per_hour", c->cost_per_hour, true},
			{"cost_per_mtok", c->cost_per_mtok, c->meets && !isnan(c->cost_per_mtok)},
			{"ttft_s", c->ttft_s, c->meets},
			{"tpot_s", c->tpot_s, c->meets},
		};
		for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
			if (f[k].check && isinf(f[k].v))
				return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, f[k].name,
						     "%s, tp %u, %u GPUs: %s: overflows to infinity (an "
						     "input too large or too small for double "
						     "arithmetic)", c->gpu, c->tp, c->count, f[k].name);
	}
	return KVP_STATUS_OK;
}
