/* speculative.h: what one speculative decode step costs and yields: the
 * target's verify pass of K + 1 tokens per sequence plus K draft steps (the
 * draft, its parsing and its memory are memory/draft.h's).
 *
 *   step   verify: the target's decode step with K + 1 tokens per sequence (the
 *          same bytes, (K + 1) x the FLOPs and the all-reduce messages) + K
 *          draft steps
 *   TPOT   step / tokens per step (kvp_speculative_tokens_per_step) */
#ifndef KVP_SPECULATIVE_H
#define KVP_SPECULATIVE_H

#include <stdint.h>

#include "base/error.h"
#include "memory/draft.h"
#include "time/step.h"

/* One speculative decode step of B sequences at `context` tokens on c (whose
 * spec holds the draft, kvp_speculative_apply); `plain` is the ordinary decode
 * step there (its weights read, less the draft's, are the verify's). */
struct kvp_speculative_step {
	struct kvp_perf_step verify;   /* target, K + 1 tokens per sequence */
	struct kvp_perf_step draft;    /* one draft step (runs K times) */
	double tokens_per_step;
	double step_s;                 /* verify + K x draft */
	double tpot_s;                 /* step / tokens per step */
};

kvp_status kvp_speculative_decode(const struct kvp_perf_ctx *c, const struct kvp_speculative *s,
				  uint64_t batch, uint64_t context, const struct kvp_perf_step *plain,
				  struct kvp_speculative_step *out, struct kvp_error *err);

#endif
