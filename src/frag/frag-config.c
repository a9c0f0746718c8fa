/* frag-config.c: the fragmentation simulator's vocabulary: policy and
 * allocator names, and the default configuration (frag.h).  Every other frag
 * file reads these; this one reads none of them. */
#include "frag/frag.h"

#include <string.h>

static const char *const policy_names[] = {"contiguous-max", "contiguous-request", "paged",
					   "paged-shared"};

const char *kvp_frag_policy_name(enum kvp_frag_policy p) { return policy_names[p]; }
const char *kvp_frag_fit_name(enum kvp_frag_fit f) { return f == KVP_FRAG_FIT_BEST ? "best-fit" : "first-fit"; }

void kvp_frag_config_init(struct kvp_frag_config *c)
{
	static const uint32_t sizes[] = {1, 8, 16, 32, 64, 128, 256};
	memset(c, 0, sizeof *c);
	memcpy(c->block_sizes, sizes, sizeof sizes);
	c->nblock = sizeof sizes / sizeof sizes[0];
	for (int p = 0; p < KVP_FRAG_POLICY_COUNT; p++)
		c->policy[p] = true;
	c->fit[0] = c->fit[1] = true;
	c->requests = 100000;
	c->warmup = 10000;
	c->seed = 1;
}
