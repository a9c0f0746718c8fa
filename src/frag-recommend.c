/* frag-recommend.c: the block size `kvplan frag` recommends from its paged
 * rows, and the reason it prints. */
#include "frag.h"

#include <stdio.h>

int kvp_frag_recommend(const struct kvp_frag_result *rows, size_t n, char *reason, size_t size)
{
	enum kvp_frag_policy pol = KVP_FRAG_POLICY_PAGED;
	for (size_t i = 0; i < n; i++)
		if (rows[i].policy == KVP_FRAG_POLICY_PAGED_SHARED)
			pol = KVP_FRAG_POLICY_PAGED_SHARED;
	int best = -1, pick = -1;
	for (size_t i = 0; i < n; i++)
		if (rows[i].policy == pol &&
		    (best < 0 || rows[i].mean_sequences > rows[best].mean_sequences))
			best = (int)i;
	if (best < 0) {
		snprintf(reason, size, "no paged rows were simulated");
		return -1;
	}
	double floor_seqs = rows[best].mean_sequences * 0.99;
	for (size_t i = 0; i < n; i++)
		if (rows[i].policy == pol && rows[i].mean_sequences >= floor_seqs &&
		    (pick < 0 || rows[i].block_size > rows[pick].block_size))
			pick = (int)i;
	const struct kvp_frag_result *p = &rows[pick], *b = &rows[best];
	if (pick == best)
		snprintf(reason, size,
			 "%s block %u holds the most sequences (%.1f on average); internal waste "
			 "%.2f%% of the pool, %.1f slots per sequence", kvp_frag_policy_name(pol),
			 p->block_size, p->mean_sequences, 100 * p->internal_waste_fraction,
			 p->waste_tokens_per_sequence);
	else
		snprintf(reason, size,
			 "%s block %u holds %.1f sequences on average, within 1%% of the best "
			 "(block %u: %.1f), with %.0fx fewer blocks to track; internal waste "
			 "%.2f%% of the pool", kvp_frag_policy_name(pol), p->block_size,
			 p->mean_sequences, b->block_size, b->mean_sequences,
			 (double)p->block_size / b->block_size, 100 * p->internal_waste_fraction);
	return pick;
}

