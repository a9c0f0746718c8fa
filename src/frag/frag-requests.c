/* frag-requests.c: the request stream of the fragmentation simulator (see
 * frag-requests.h). */
#include "frag/frag-requests.h"

#include <stdbool.h>

void kvp_frag_req_make(const struct kvp_frag_config *c, struct kvp_rng *r, uint64_t p,
		       uint64_t o, struct kvp_frag_req *out)
{
	bool carrier = c->prefix_tokens &&
		       (c->prefix_fraction >= 1 ||
			(c->prefix_fraction > 0 && kvp_rng_uniform(r) < c->prefix_fraction));
	if (carrier)
		p += c->prefix_tokens;
	if (p > c->max_len)
		p = c->max_len;
	if (o > c->max_len - p)
		o = c->max_len - p;
	if (c->max_tokens && o > c->max_tokens)
		o = c->max_tokens;
	out->p = p;
	out->o = o;
	out->prefix = carrier;
}

void kvp_frag_draw(const struct kvp_frag_config *c, const struct kvp_workload *w,
		   struct kvp_rng *r, struct kvp_frag_req *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t p, o;
		kvp_workload_sample(w, r, &p, &o);
		kvp_frag_req_make(c, r, p, o, &out[i]);
	}
}
