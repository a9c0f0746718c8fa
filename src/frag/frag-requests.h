/* frag-requests.h: the request stream of the fragmentation simulator
 * (internal to src/frag-*.c): lengths drawn from the workload, the shared
 * prefix for a share of them, the caps.  Every row draws the same stream
 * for the same seed. */
#ifndef KVP_FRAG_REQUESTS_H
#define KVP_FRAG_REQUESTS_H

#include <stddef.h>
#include <stdint.h>

#include "base/dist.h"
#include "frag/frag.h"

struct kvp_frag_req {
	uint64_t p, o;      /* prompt (with any prefix) and output still to generate */
	uint8_t prefix;     /* carries the shared prefix */
};

/* One request of p prompt and o output tokens: the prefix for a share of
 * them (drawing from r), then the caps (max_len on p + o, max_tokens on o). */
void kvp_frag_req_make(const struct kvp_frag_config *c, struct kvp_rng *r, uint64_t p,
		       uint64_t o, struct kvp_frag_req *out);

/* Draw n requests: the workload's lengths, the prefix for a share of them,
 * then the caps (max_len on p + o, max_tokens on o). */
void kvp_frag_draw(const struct kvp_frag_config *c, const struct kvp_workload *w,
		   struct kvp_rng *r, struct kvp_frag_req *out, size_t n);

#endif
