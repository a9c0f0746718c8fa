/* step-prefix.c: prefix reuse, reloading saved KV against recomputing it
 * (step-prefix.h). */
#include "time/step-prefix.h"

#include <math.h>

double kvp_perf_prefix_reload_s(const struct kvp_perf_ctx *c, uint64_t p, const struct kvp_link *link)
{
	uint64_t bytes;
	if (kvp_spec_seq_bytes(c->spec, p, 1, &bytes))
		return INFINITY;
	/* each stage's GPUs load their own layers over their own links, at once */
	return (double)bytes / link->effective_bps;
}

double kvp_perf_prefix_recompute_s(const struct kvp_perf_ctx *c, uint64_t p)
{
	return kvp_perf_prefill_flops(c->model, p) / c->spec->par.tp /
	       (c->hw.flops * c->hw.prefill_flops_efficiency);
}

uint64_t kvp_perf_prefix_breakeven(const struct kvp_perf_ctx *c, const struct kvp_link *link,
				   uint64_t limit)
{
	/* recompute - reload is 0 at p = 0 and convex in p (a linear term plus the
	 * attention's growing pairs), so its sign turns positive at most once */
#define WINS(p) (kvp_perf_prefix_reload_s(c, (p), link) < kvp_perf_prefix_recompute_s(c, (p)))
	if (limit == 0 || !WINS(limit))
		return 0;
	if (WINS(1))
		return 1;
	uint64_t lo = 1, hi = limit; /* !WINS(lo), WINS(hi) */
	while (hi - lo > 1) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (WINS(mid))
			hi = mid;
		else
			lo = mid;
	}
	return hi;
#undef WINS
}
