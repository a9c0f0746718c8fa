/* frag-events.h: the event queue of the fragmentation simulator (internal to
 * src/frag-*.c): events keyed by the decode step they fall on, taken in time
 * order.
 *
 * Stance: a radix heap.  It is correct only while no event is pushed behind
 * the last time taken (kvp_frag_evq_floor); the simulator takes events at or
 * before the current step and pushes them for later steps, and checks it.
 * Looking at the earliest time changes nothing (issue 14: a peek that moved
 * the floor past the current step sent events pushed later in that step to
 * the wrong bucket, to be popped hundreds of steps late). */
#ifndef KVP_FRAG_EVENTS_H
#define KVP_FRAG_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* 16 bytes: a time, the sequence slot and a tag the simulator interprets. */
struct kvp_frag_event {
	uint64_t t;
	uint32_t slot, tag;
};

struct kvp_frag_evq {
	struct kvp_frag_evq_bucket {
		struct kvp_frag_event *e;
		size_t n, cap;
		uint64_t min;            /* the earliest time in e[0..n) */
	} b[65];                         /* b[i]: times whose highest bit differing from last is i - 1 */
	uint64_t last;                   /* the floor: the last minimum taken */
	size_t n;
	bool oom;                        /* a move between buckets found no memory */
};

/* An empty queue is all zeros; kvp_frag_evq_free gives back its buckets. */
void kvp_frag_evq_free(struct kvp_frag_evq *q);
/* Queue e; e.t must be >= kvp_frag_evq_floor(q).  false when out of memory. */
bool kvp_frag_evq_push(struct kvp_frag_evq *q, struct kvp_frag_event e);
static inline size_t kvp_frag_evq_size(const struct kvp_frag_evq *q) { return q->n; }
static inline uint64_t kvp_frag_evq_floor(const struct kvp_frag_evq *q) { return q->last; }
/* The earliest time queued (the queue is not empty); changes nothing. */
uint64_t kvp_frag_evq_peek(const struct kvp_frag_evq *q);
/* Remove an event of the earliest time (the queue is not empty); the floor
 * becomes that time. */
struct kvp_frag_event kvp_frag_evq_take(struct kvp_frag_evq *q);

#endif
