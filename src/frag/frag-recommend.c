/* frag-recommend.c: the block size `kvplan frag` recommends from its paged
 * rows, and the reason it prints.
 *
 * What a block size costs, besides the internal waste the simulation sees:
 *   - metadata: the block table (an int32 block id per block of every
 *     sequence slot) and the allocator's per-block state come out of the same
 *     GPU memory as the KV pool (vLLM allocates its block tables before it
 *     sizes the cache), so a row is weighed by the sequences its pool holds
 *     less the metadata's share of it, and a row whose metadata alone fills
 *     the pool is impossible and never recommended;
 *   - kernel efficiency: a block under KVP_FRAG_SMALL_BLOCK tokens multiplies
 *     the block-table lookups of every decode step.  The block-size evidence
 *     is the vLLM paper's section 7.2 (arXiv 2309.06180, Fig. 18b: latency
 *     against block size on ShareGPT and Alpaca): a block too small "may not
 *     fully utilize the GPU's parallelism for reading and processing KV
 *     cache", and 16 is "large enough to efficiently utilize the GPU", so
 *     vLLM's default is 16.  vLLM's paged kernel is compiled for blocks 8, 16
 *     and 32 and "performs best with block size 16" (vAttention, arXiv
 *     2405.04437, section 7.2).  How much a small block costs is not given
 *     as one figure there; the threshold borrows the paper's section 7.1
 *     figure, where its paged kernel (block-table access, extra branches,
 *     variable lengths) runs 20-26 % slower than FasterTransformer's
 *     contiguous one (Fig. 18a), as an upper bound of what indirection costs.
 *     FlashInfer shows no loss for pages 1 to 16 (its Fig. 12), so the cost
 *     depends on the kernel: a smaller block is recommended only when it
 *     holds more than KVP_FRAG_SMALL_BLOCK_GAIN (26 %) more sequences than
 *     the best block of 16 or more. */
#include "frag/frag.h"

#include <stdio.h>

/* Sequences a row holds with its metadata taken out of the pool; -1 when the
 * metadata alone fills the pool. */
static double weighed(const struct kvp_frag_result *r)
{
	if (!r->pool_bytes)
		return r->mean_sequences;
	if (r->metadata_bytes >= r->pool_bytes)
		return -1;
	return r->mean_sequences * (1 - (double)r->metadata_bytes / (double)r->pool_bytes);
}

/* Among rows of policy pol with block >= min_block, the largest block within
 * 1 % of the most weighed sequences; *best: the row holding the most. */
static int pick_among(const struct kvp_frag_result *rows, size_t n, enum kvp_frag_policy pol,
		      uint32_t min_block, int *best)
{
	int pick = -1;
	*best = -1;
	for (size_t i = 0; i < n; i++)
		if (rows[i].policy == pol && rows[i].block_size >= min_block && weighed(&rows[i]) >= 0 &&
		    (*best < 0 || weighed(&rows[i]) > weighed(&rows[*best])))
			*best = (int)i;
	if (*best < 0)
		return -1;
	double floor_seqs = weighed(&rows[*best]) * 0.99;
	for (size_t i = 0; i < n; i++)
		if (rows[i].policy == pol && rows[i].block_size >= min_block &&
		    weighed(&rows[i]) >= floor_seqs &&
		    (pick < 0 || rows[i].block_size > rows[pick].block_size))
			pick = (int)i;
	return pick;
}

int kvp_frag_recommend(const struct kvp_frag_result *rows, size_t n, char *reason, size_t size)
{
	enum kvp_frag_policy pol = KVP_FRAG_POLICY_PAGED;
	size_t npaged = 0;
	for (size_t i = 0; i < n; i++)
		if (rows[i].policy == KVP_FRAG_POLICY_PAGED_SHARED)
			pol = KVP_FRAG_POLICY_PAGED_SHARED;
	for (size_t i = 0; i < n; i++)
		npaged += rows[i].policy == pol;
	if (!npaged) {
		snprintf(reason, size, "no paged rows were simulated");
		return -1;
	}
	int best, pick = pick_among(rows, n, pol, 1, &best);
	if (pick < 0) {
		snprintf(reason, size, "none: at every block size simulated the block table and "
				       "allocator state alone fill the KV pool");
		return -1;
	}
	const char *name = kvp_frag_policy_name(pol);
	int big_best, big = -1;
	if (rows[pick].block_size < KVP_FRAG_SMALL_BLOCK)
		big = pick_among(rows, n, pol, KVP_FRAG_SMALL_BLOCK, &big_best);
	if (big >= 0 && weighed(&rows[pick]) <= weighed(&rows[big_best]) * (1 + KVP_FRAG_SMALL_BLOCK_GAIN)) {
		const struct kvp_frag_result *p = &rows[big], *s = &rows[pick];
		snprintf(reason, size,
			 "%s block %u holds %.1f sequences on average; block %u holds %.1f, but "
			 "blocks under %u tokens slow decode kernels (vLLM paper section 7.2, "
			 "Fig. 18b) and it gains less than %.0f%%; internal waste %.2f%% of the pool, "
			 "metadata %.2f%% of it", name, p->block_size, p->mean_sequences,
			 s->block_size, s->mean_sequences, KVP_FRAG_SMALL_BLOCK,
			 100 * KVP_FRAG_SMALL_BLOCK_GAIN, 100 * p->internal_waste_fraction,
			 p->pool_bytes ? 100.0 * (double)p->metadata_bytes / (double)p->pool_bytes : 0);
		return big;
	}
	const struct kvp_frag_result *p = &rows[pick], *b = &rows[best];
	double meta = p->pool_bytes ? 100.0 * (double)p->metadata_bytes / (double)p->pool_bytes : 0;
	if (pick == best)
		snprintf(reason, size,
			 "%s block %u holds the most sequences (%.1f on average); internal waste "
			 "%.2f%% of the pool, %.1f slots per sequence, metadata %.2f%% of the pool",
			 name, p->block_size, p->mean_sequences, 100 * p->internal_waste_fraction,
			 p->waste_tokens_per_sequence, meta);
	else
		snprintf(reason, size,
			 "%s block %u holds %.1f sequences on average, within 1%% of the best "
			 "(block %u: %.1f, metadata counted), with %.0fx fewer blocks to track; "
			 "internal waste %.2f%% of the pool, metadata %.2f%% of it", name,
			 p->block_size, p->mean_sequences, b->block_size, b->mean_sequences,
			 (double)p->block_size / b->block_size, 100 * p->internal_waste_fraction, meta);
	return pick;
}
