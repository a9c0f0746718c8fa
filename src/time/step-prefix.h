/* step-prefix.h: prefix reuse, reloading saved KV against recomputing it,
 * timed with the step model's context (step.h). */
#ifndef KVP_STEP_PREFIX_H
#define KVP_STEP_PREFIX_H

#include <stdint.h>

#include "time/step.h"

/* Prefix reuse: reloading p tokens of saved KV over `link` against recomputing
 * them (the compute a prefill of p tokens needs; inside a longer prefill the
 * weights are read anyway, so the compute term is the marginal cost). */
double kvp_perf_prefix_reload_s(const struct kvp_perf_ctx *c, uint64_t p, const struct kvp_link *link);
double kvp_perf_prefix_recompute_s(const struct kvp_perf_ctx *c, uint64_t p);
/* The shortest prefix, in [1, limit], from which reloading is faster than
 * recomputing; 0 when recomputing stays faster up to limit. */
uint64_t kvp_perf_prefix_breakeven(const struct kvp_perf_ctx *c, const struct kvp_link *link,
				   uint64_t limit);

#endif
