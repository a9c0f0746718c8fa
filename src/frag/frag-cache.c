/* frag-cache.c: the prefix cache of `kvplan frag --prefix-cache`: an LRU over
 * distinct prefixes of Zipf popularity, for each cache size, giving the hit
 * rate of the requests carrying a prefix and the prefill tokens it saves per
 * carrier and per request of the whole stream. */
#include "frag/frag.h"

#include <math.h>
#include <stdlib.h>

#include "base/dist.h"

struct lru {
	uint32_t *prev, *next;   /* over prefix ids 1..N; 0 is null */
	uint8_t *in;
	uint32_t head, tail;
	uint64_t count, cap, hits;
};

kvp_status kvp_frag_prefix_cache(const struct kvp_frag_cache_config *c, const uint64_t *sizes,
				 size_t n, struct kvp_frag_cache_result *out,
				 struct kvp_error *err)
{
	if (!c->prefixes || c->prefixes > 10000000 || !(c->zipf_s > 0) || !c->block_size)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "--prefix-cache",
				     "needs 1 to 10,000,000 prefixes and a Zipf exponent above 0");
	if (!(c->carrier_fraction > 0 && c->carrier_fraction <= 1))
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "shared_prefix",
				     "the share of requests carrying the prefix must be in (0, 1]");
	uint64_t sb = c->prefix_tokens / c->block_size;
	/* only carriers look a prefix up */
	uint64_t lookups = (uint64_t)llround(c->carrier_fraction * (double)c->requests);
	struct lru *l = calloc(n ? n : 1, sizeof *l);
	kvp_status st = KVP_STATUS_OK;
	if (!l)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	for (size_t i = 0; i < n; i++) {
		out[i] = (struct kvp_frag_cache_result){.cache_bytes = sizes[i]};
		out[i].capacity_prefixes = c->entry_bytes ? sizes[i] / c->entry_bytes : 0;
		if (out[i].capacity_prefixes > c->prefixes)
			out[i].capacity_prefixes = c->prefixes;
		l[i].cap = sb ? out[i].capacity_prefixes : 0;
		if (!l[i].cap || c->unique_first_token)
			continue;
		l[i].prev = calloc(c->prefixes + 1, sizeof *l[i].prev);
		l[i].next = calloc(c->prefixes + 1, sizeof *l[i].next);
		l[i].in = calloc(c->prefixes + 1, 1);
		if (!l[i].prev || !l[i].next || !l[i].in) {
			st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
			goto out;
		}
	}
	struct kvp_dist z = {.kind = KVP_DIST_ZIPF, .a = (double)c->prefixes, .b = c->zipf_s};
	struct kvp_rng rng;
	kvp_rng_seed(&rng, c->seed);
	/* With a timestamp or request id first, no two prefixes are equal and no
	 * lookup can hit: every request misses, whatever the cache holds. */
	for (uint64_t r = 0; r < lookups && !c->unique_first_token; r++) {
		uint32_t id = (uint32_t)kvp_dist_sample(&z, &rng);
		for (size_t i = 0; i < n; i++) {
			struct lru *q = &l[i];
			if (!q->cap)
				continue;
			if (q->in[id]) {
				q->hits++;
				if (q->head == id)
					continue;
				/* unlink, then to the front */
				q->next[q->prev[id]] = q->next[id];
				if (q->next[id])
					q->prev[q->next[id]] = q->prev[id];
				else
					q->tail = q->prev[id];
			} else {
				q->in[id] = 1;
				q->count++;
			}
			q->prev[id] = 0;
			q->next[id] = q->head;
			if (q->head)
				q->prev[q->head] = id;
			q->head = id;
			if (!q->tail)
				q->tail = id;
			if (q->count > q->cap) {
				/* evict the least recently used; it is not id, which is in front */
				uint32_t old = q->tail;
				q->tail = q->prev[old];
				q->next[q->tail] = 0;
				q->in[old] = 0;
				q->count--;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		out[i].hit_rate = lookups ? (double)l[i].hits / (double)lookups : 0;
		out[i].saved_prefill_tokens_per_carrier = out[i].hit_rate * (double)(sb * c->block_size);
		out[i].saved_prefill_tokens =
			out[i].saved_prefill_tokens_per_carrier * c->carrier_fraction;
	}
out:
	for (size_t i = 0; i < n; i++) {
		free(l[i].prev);
		free(l[i].next);
		free(l[i].in);
	}
	free(l);
	return st;
}

