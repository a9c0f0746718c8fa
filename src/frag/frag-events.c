/* frag-events.c: the radix heap of frag-events.h.  An event sits in the
 * bucket of the highest bit in which its time differs from the floor (bucket
 * 0: equal to it); a push is O(1), each event moves down at most 64 buckets
 * over its life, and each bucket keeps its minimum so that a peek is a scan
 * of at most 65 bucket heads. */
#include "frag/frag-events.h"

#include <stdlib.h>

static inline int bucket_of(uint64_t t, uint64_t last)
{
	return t == last ? 0 : 64 - __builtin_clzll(t ^ last);
}

static bool append(struct kvp_frag_evq *q, int i, struct kvp_frag_event e)
{
	struct kvp_frag_evq_bucket *b = &q->b[i];
	if (b->n == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		struct kvp_frag_event *p = realloc(b->e, cap * sizeof *p);
		if (!p)
			return false;
		b->e = p;
		b->cap = cap;
	}
	if (!b->n || e.t < b->min)
		b->min = e.t;
	b->e[b->n++] = e;
	return true;
}

void kvp_frag_evq_free(struct kvp_frag_evq *q)
{
	for (int i = 0; i < 65; i++)
		free(q->b[i].e);
}

bool kvp_frag_evq_push(struct kvp_frag_evq *q, struct kvp_frag_event e)
{
	if (!append(q, bucket_of(e.t, q->last), e))
		return false;
	q->n++;
	return true;
}

uint64_t kvp_frag_evq_peek(const struct kvp_frag_evq *q)
{
	int i = 0;
	while (!q->b[i].n)
		i++;
	return q->b[i].min;
}

struct kvp_frag_event kvp_frag_evq_take(struct kvp_frag_evq *q)
{
	if (!q->b[0].n) {
		/* refill bucket 0 from the lowest non-empty bucket around its minimum:
		 * every event there moves to a lower bucket */
		int i = 1;
		while (!q->b[i].n)
			i++;
		struct kvp_frag_evq_bucket *b = &q->b[i];
		uint64_t m = b->min;
		q->last = m;
		size_t n = b->n;
		b->n = 0;
		for (size_t k = 0; k < n; k++)
			if (!append(q, bucket_of(b->e[k].t, m), b->e[k]))
				q->oom = true;
	}
	q->n--;
	return q->b[0].e[--q->b[0].n];
}
