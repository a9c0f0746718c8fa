/* frag-sim.c: the fragmentation simulator behind `kvplan frag`: the rows
 * (policies with their allocator or block size) run over one request stream
 * (see frag.h for the policies and the time model).
 *
 * Legend: P = block size in tokens, p = prompt tokens at admission, o =
 * output tokens, a = admission step, l = tokens a sequence holds, k = shared
 * prefix tokens, sb = floor(k / P) shared blocks, B = live sequences.
 *
 * Stance: one pass over the requests, O(1) amortised work per decode step and
 * O(log B) per admission or departure, memory bounded by the live set:
 *   - a sequence needs a new block at step t exactly when its old length is a
 *     multiple of P, i.e. when t = a + 1 - p (mod P); sequences are counted in
 *     P phase buckets per layer class, so a step's allocations are one lookup
 *     per class, whatever B is;
 *   - windowed classes (sliding, chunked) stop growing at their cap; that is
 *     one event per sequence, as is its departure (frag-events.h);
 *   - contiguous reservations never grow, so their simulation jumps from one
 *     event to the next and integrates the linear growth of used tokens;
 *   - the requests are drawn once, in chunks, and fed to every row, so all
 *     rows see the same stream and the memory does not grow with it. */
#include "frag/frag.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dist.h"
#include "frag/frag-events.h"
#include "frag/frag-requests.h"
#include "frag/frag-sim.h"
#include "base/units.h"

struct sim;
static void sim_broken(struct sim *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A check of the simulator's own bookkeeping: built with KVP_CHECK_INVARIANTS
 * (the test and sanitizer builds) a failure aborts naming the row and the
 * seed; otherwise it marks the row broken and kvp_frag_run returns
 * KVP_STATUS_INTERNAL instead of a table. */
#define KVP_FRAG_ASSERT(s, cond, ...)                                                      \
	do {                                                                               \
		if (!(cond))                                                               \
			sim_broken((s), __VA_ARGS__);                                      \
	} while (0)


/* Blocks of P tokens class c holds at most (UINT64_MAX: no cap). */
static uint64_t class_cap_blocks(const struct kvp_frag_shape *sh, uint32_t c, uint32_t P)
{
	if (sh->layer[c].kind != KVP_LAYER_SLIDING && sh->layer[c].kind != KVP_LAYER_CHUNKED)
		return UINT64_MAX;
	return kvp_spec_layer_tokens(&sh->layer[c], UINT64_MAX - KVP_FRAG_MAX_BLOCK, P) / P;
}


#define CHUNK 16384

/* ------------------------------------------------------------ one row */

enum { EV_DEPART, EV_BLOCKS_FULL, EV_TOKENS_FULL };

/* An event's tag = gen << 4 | type << 2 | class: generations wrap after 2^28
 * uses of one slot, far more steps than an event waits (at most max_len +
 * 2 P). */
#define EV_GEN(tag) ((tag) >> 4)
#define EV_TYPE(tag) (((tag) >> 2) & 3u)
#define EV_CLASS(tag) ((tag) & 3u)

struct seq {
	uint64_t a, p, o;        /* admitted at step a with p tokens, o to generate */
	uint64_t addr, resv;     /* contiguous reservation */
	uint32_t gen, prev, next;
	uint32_t key;            /* phase bucket: allocates when t % P == key */
	uint8_t prefix;
	uint8_t in_blocks;       /* bit c: class c still takes new blocks */
	uint8_t in_tokens;       /* bit c: class c still stores new tokens */
};

enum { ADMIT_BLOCKED, ADMIT_NEED_MORE, ADMIT_DONE };

struct sim {
	const struct kvp_frag_config *cfg;
	struct kvp_frag_result *res;
	bool paged, shared;
	enum kvp_frag_fit fit;
	uint32_t P, nclass;
	uint64_t tb[KVP_FRAG_MAX_CLASSES];      /* bytes per token */
	uint64_t ub[KVP_FRAG_MAX_CLASSES];      /* of which hold tokens (tb less padding) */
	uint64_t sub;                           /* used bytes of the shared prefix blocks */
	uint64_t bpb[KVP_FRAG_MAX_CLASSES];     /* bytes per block: P * tb */
	uint64_t cap_blk[KVP_FRAG_MAX_CLASSES]; /* blocks held at most */
	uint64_t cap_tok[KVP_FRAG_MAX_CLASSES]; /* tokens used at most */
	uint64_t seq_bytes;
	uint32_t *bucket[KVP_FRAG_MAX_CLASSES]; /* P counters per class */
	uint64_t growing[KVP_FRAG_MAX_CLASSES]; /* sequences storing a new token each step */
	uint64_t sb;                            /* shared prefix blocks (class 0) */
	uint64_t prefix_refs;
	uint64_t pool, held, used;              /* bytes */
	uint64_t t;
	struct seq *seqs;
	uint32_t nseqs, slot_free, head, tail;  /* slot 0 is the null slot */
	size_t capseqs;
	uint64_t live;
	struct kvp_frag_evq ev;                 /* departures and saturations */
	struct kvp_frag_req *stack;                      /* preempted, waiting first (LIFO) */
	size_t nstack, capstack;
	struct kvp_frag_arena *arena;
	const struct kvp_frag_req *chunk;
	size_t nchunk, pos;
	bool last, admitting, done;
	bool frag_blocked;                      /* the head waits though free >= its size */
	bool head_counted;
	uint64_t fresh;                         /* requests admitted for the first time */
	double sum_used, sum_held, sum_live, sum_ext;
	uint64_t steps, peak_live, peak_holes;
	bool oom;
	/* conservation: every admission's p + o leaves as completed, preempted,
	 * dropped or still live; the smallest admission bounds the live count */
	uint64_t tok_admitted, tok_completed, tok_preempted, tok_dropped;
	uint64_t min_need, checks;
	bool broken;
	char why[240];
};

static void sim_broken(struct sim *s, const char *fmt, ...)
{
	char msg[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	if (s->paged)
		snprintf(s->why, sizeof s->why, "row %s block %u, seed %llu, step %llu: %s",
			 kvp_frag_policy_name(s->res->policy), s->P,
			 (unsigned long long)s->cfg->seed, (unsigned long long)s->t, msg);
	else
		snprintf(s->why, sizeof s->why, "row %s %s, seed %llu, step %llu: %s",
			 kvp_frag_policy_name(s->res->policy), kvp_frag_fit_name(s->fit),
			 (unsigned long long)s->cfg->seed, (unsigned long long)s->t, msg);
	s->broken = true;
#ifdef KVP_CHECK_INVARIANTS
	fprintf(stderr, "kvplan frag: invariant failed: %s\n", s->why);
	abort();
#endif
}

/* Used and held bytes of a sequence of l tokens (carrier: of the prefix). */
static inline uint64_t used_bytes(const struct sim *s, uint64_t l, bool carrier)
{
	uint64_t b = s->seq_bytes;
	for (uint32_t c = 0; c < s->nclass; c++)
		b += (l < s->cap_tok[c] ? l : s->cap_tok[c]) * s->ub[c];
	if (carrier && s->shared)
		b -= s->sub;
	return b;
}

static inline uint64_t held_bytes(const struct sim *s, uint64_t l, bool carrier)
{
	uint64_t b = s->seq_bytes, n = kvp_cdiv(l, s->P);
	for (uint32_t c = 0; c < s->nclass; c++)
		b += (n < s->cap_blk[c] ? n : s->cap_blk[c]) * s->bpb[c];
	if (carrier && s->shared)
		b -= s->sb * s->bpb[0];
	return b;
}

/* Make room for one more element in a growing array (doubling from `first`);
 * false (and the simulation marked out of memory) when realloc fails. */
static bool grow(struct sim *s, void **items, size_t *cap, size_t n, size_t size, size_t first)
{
	if (n < *cap)
		return true;
	size_t want = *cap ? *cap * 2 : first;
	void *p = realloc(*items, want * size);
	if (!p) {
		s->oom = true;
		return false;
	}
	*items = p;
	*cap = want;
	return true;
}

/* Queue an event of sequence `slot` at step t (after the current step, so
 * never behind the queue; checked). */
static bool heap_push(struct sim *s, uint64_t t, uint32_t slot, uint8_t type, uint8_t cls)
{
	struct kvp_frag_event e = {t, slot,
				   (s->seqs[slot].gen & 0x0fffffffu) << 4 | (uint32_t)type << 2 | cls};
	KVP_FRAG_ASSERT(s, t > s->t && t >= kvp_frag_evq_floor(&s->ev),
			"event at step %llu pushed at step %llu, behind the queue's %llu",
			(unsigned long long)t, (unsigned long long)s->t,
			(unsigned long long)kvp_frag_evq_floor(&s->ev));
	if (!kvp_frag_evq_push(&s->ev, e)) {
		s->oom = true;
		return false;
	}
	return true;
}

static bool push_waiting(struct sim *s, struct kvp_frag_req r)
{
	if (!grow(s, (void **)&s->stack, &s->capstack, s->nstack, sizeof *s->stack, 64))
		return false;
	s->stack[s->nstack++] = r;
	return true;
}

static uint32_t slot_get(struct sim *s)
{
	if (s->slot_free) {
		uint32_t i = s->slot_free;
		s->slot_free = s->seqs[i].next;
		return i;
	}
	if (!grow(s, (void **)&s->seqs, &s->capseqs, s->nseqs, sizeof *s->seqs, 1024))
		return 0;
	uint32_t i = s->nseqs++;
	s->seqs[i].gen = 0;
	return i;
}

/* Take a live sequence out: give back its bytes, leave its buckets, unlink it;
 * its pending events die with its generation. */
static void seq_remove(struct sim *s, uint32_t i)
{
	struct seq *q = &s->seqs[i];
	uint64_t l = q->p + (s->t - 1 - q->a);
	s->used -= used_bytes(s, l, q->prefix);
	if (s->paged) {
		s->held -= held_bytes(s, l, q->prefix);
		for (uint32_t c = 0; c < s->nclass; c++)
			if (q->in_blocks & (1u << c))
				s->bucket[c][q->key]--;
		if (q->prefix && s->shared && --s->prefix_refs == 0) {
			s->held -= s->sb * s->bpb[0];
			s->used -= s->sub;
		}
	} else {
		s->held -= q->resv;
		if (q->resv)
			kvp_frag_arena_release(s->arena, q->addr, q->resv);
	}
	for (uint32_t c = 0; c < s->nclass; c++)
		if (q->in_tokens & (1u << c))
			s->growing[c]--;
	if (q->prev)
		s->seqs[q->prev].next = q->next;
	else
		s->head = q->next;
	if (q->next)
		s->seqs[q->next].prev = q->prev;
	else
		s->tail = q->prev;
	q->gen++;
	q->next = s->slot_free;
	s->slot_free = i;
	s->live--;
}

/* Admit r at step t (its bytes are known to fit). */
static bool seq_admit(struct sim *s, const struct kvp_frag_req *r, uint64_t need, uint64_t addr)
{
	uint32_t i = slot_get(s);
	if (!i)
		return false;
	struct seq *q = &s->seqs[i];
	uint32_t gen = q->gen;
	memset(q, 0, sizeof *q);
	q->gen = gen;
	q->a = s->t;
	q->p = r->p;
	q->o = r->o;
	q->prefix = r->prefix;
	q->prev = s->tail;
	if (s->tail)
		s->seqs[s->tail].next = i;
	else
		s->head = i;
	s->tail = i;
	s->live++;
	if (s->live > s->peak_live)
		s->peak_live = s->live;
	s->held += need;
	s->used += used_bytes(s, r->p, r->prefix);
	s->tok_admitted += r->p + r->o;
	uint64_t own = s->paged ? held_bytes(s, r->p, r->prefix) : need;
	if (!s->min_need || own < s->min_need)
		s->min_need = own;
	if (s->paged) {
		if (r->prefix && s->shared && s->prefix_refs++ == 0)
			s->used += s->sub;
		uint64_t P = s->P, blocks = kvp_cdiv(r->p, P);
		q->key = (uint32_t)((s->t + 1 + P - r->p % P) % P);
		for (uint32_t c = 0; c < s->nclass; c++) {
			if (blocks >= s->cap_blk[c])
				continue;
			q->in_blocks |= 1u << c;
			s->bucket[c][q->key]++;
			/* the last block is taken when the old length is (cap - 1) P */
			if (s->cap_blk[c] != UINT64_MAX &&
			    !heap_push(s, s->t + 2 + (s->cap_blk[c] - 1) * P - r->p, i,
				       EV_BLOCKS_FULL, (uint8_t)c))
				return false;
		}
	} else {
		q->addr = addr;
		q->resv = need;
	}
	for (uint32_t c = 0; c < s->nclass; c++) {
		if (r->p >= s->cap_tok[c])
			continue;
		q->in_tokens |= 1u << c;
		s->growing[c]++;
		if (s->cap_tok[c] != UINT64_MAX &&
		    !heap_push(s, s->t + 1 + s->cap_tok[c] - r->p, i, EV_TOKENS_FULL, (uint8_t)c))
			return false;
	}
	return heap_push(s, s->t + r->o + 1, i, EV_DEPART, 0);
}

/* The bytes r needs now: its reservation (contiguous) or its blocks and, for
 * the first carrier, the shared prefix (paged). */
static uint64_t need_bytes(const struct sim *s, const struct kvp_frag_req *r)
{
	if (!s->paged) {
		const struct kvp_frag_config *c = s->cfg;
		uint64_t len = c->max_len;
		if (s->res->policy == KVP_FRAG_POLICY_CONTIGUOUS_REQUEST) {
			/* p <= max_len, so the sum is compared without being formed:
			 * --max-tokens may be as large as a u64 holds */
			uint64_t mt = c->max_tokens ? c->max_tokens : r->o;
			len = r->p > len || mt >= len - r->p ? len : r->p + mt;
		}
		return used_bytes(s, len, false);
	}
	uint64_t b = held_bytes(s, r->p, r->prefix);
	if (r->prefix && s->shared && s->prefix_refs == 0)
		b += s->sb * s->bpb[0];
	return b;
}

/* Admit waiting requests in order while they fit. */
static int sim_admit(struct sim *s)
{
	s->frag_blocked = false;
	for (;;) {
		const struct kvp_frag_req *r;
		if (s->nstack)
			r = &s->stack[s->nstack - 1];
		else if (s->pos < s->nchunk)
			r = &s->chunk[s->pos];
		else
			return s->last ? ADMIT_DONE : ADMIT_NEED_MORE;
		if (s->cfg->max_seqs && s->live >= s->cfg->max_seqs)
			return ADMIT_BLOCKED;
		uint64_t need = need_bytes(s, r), addr = 0, free_bytes = s->pool - s->held;
		bool fits;
		if (need > s->pool) {
			s->res->dropped++; /* larger than the whole pool: never admitted */
			fits = false;
		} else if (s->paged) {
			fits = need <= free_bytes;
		} else {
			/* an empty reservation (no prompt, no output, no state) takes
			 * no hole; the arena refuses size 0, which blocked it forever */
			fits = need == 0 || kvp_frag_arena_alloc(s->arena, need, s->fit, &addr);
		}
		if (need <= s->pool && !fits) {
			if (!s->paged && need <= free_bytes) {
				s->frag_blocked = true;
				if (!s->head_counted && s->fresh >= s->cfg->warmup) {
					s->res->refused_with_free_memory++;
					s->head_counted = true;
				}
			}
			return ADMIT_BLOCKED;
		}
		if (fits) {
			struct kvp_frag_req copy = *r;
			if (!seq_admit(s, &copy, need, addr))
				return ADMIT_DONE; /* out of memory: oom is set */
		}
		if (s->nstack) {
			s->nstack--;
		} else {
			s->pos++;
			s->fresh++;
			if (fits)
				s->res->admitted++;
		}
		s->head_counted = false;
	}
}

#ifdef KVP_CHECK_INVARIANTS
/* Recount the used and held bytes from the live sequences, after a step's
 * growth and admissions (a sequence admitted at a holds p + t - a tokens). */
static void sim_recount(struct sim *s)
{
	uint64_t used = 0, held = 0, live = 0, carriers = 0;
	for (uint32_t i = s->head; i; i = s->seqs[i].next) {
		const struct seq *q = &s->seqs[i];
		uint64_t l = q->p + s->t - q->a;
		used += used_bytes(s, l, q->prefix);
		held += s->paged ? held_bytes(s, l, q->prefix) : q->resv;
		carriers += q->prefix;
		live++;
	}
	if (s->shared && carriers) {
		used += s->sub;
		held += s->sb * s->bpb[0];
	}
	KVP_FRAG_ASSERT(s, used == s->used && held == s->held && live == s->live,
			"recounted used %llu B, held %llu B, live %llu; kept %llu, %llu, %llu",
			(unsigned long long)used, (unsigned long long)held,
			(unsigned long long)live, (unsigned long long)s->used,
			(unsigned long long)s->held, (unsigned long long)s->live);
}

#endif

/* Count k steps in the averages; the used bytes grow by du per step. */
static void sim_measure(struct sim *s, uint64_t k, uint64_t du)
{
	KVP_FRAG_ASSERT(s, s->held <= s->pool && s->used + du * (k ? k - 1 : 0) <= s->held,
			"used %llu B, held %llu B, pool %llu B", (unsigned long long)s->used,
			(unsigned long long)s->held, (unsigned long long)s->pool);
	if (s->fresh < s->cfg->warmup || !k)
		return;
	double kd = (double)k;
	s->steps += k;
	s->sum_used += kd * (double)s->used + (double)du * kd * (kd - 1) / 2;
	s->sum_held += kd * (double)s->held;
	s->sum_live += kd * (double)s->live;
	if (s->frag_blocked)
		s->sum_ext += kd * (double)(s->pool - s->held);
	if (s->arena && kvp_frag_arena_holes(s->arena) > s->peak_holes)
		s->peak_holes = kvp_frag_arena_holes(s->arena);
}

static uint64_t growth_bytes(const struct sim *s)
{
	uint64_t d = 0;
	for (uint32_t c = 0; c < s->nclass; c++)
		d += s->growing[c] * s->ub[c];
	return d;
}

/* Step t: departures and saturations, then every live sequence appends a
 * token (paged: taking the blocks it needs, preempting the newest sequences
 * when the pool runs out). */
static void sim_step(struct sim *s)
{
	if (!s->paged && kvp_frag_evq_size(&s->ev)) {
		/* nothing changes but the used bytes until the next event */
		uint64_t next = kvp_frag_evq_peek(&s->ev);
		if (next > s->t + 1) {
			uint64_t k = next - s->t - 1, du = growth_bytes(s);
			s->used += du; /* the averages count from the first skipped step */
			sim_measure(s, k, du);
			s->used += du * (k - 1);
			s->t += k;
		}
	}
	s->t++;
	while (kvp_frag_evq_size(&s->ev) && kvp_frag_evq_peek(&s->ev) <= s->t) {
		struct kvp_frag_event e = kvp_frag_evq_take(&s->ev);
		struct seq *q = &s->seqs[e.slot];
		uint32_t cls = EV_CLASS(e.tag);
		if ((q->gen & 0x0fffffffu) != EV_GEN(e.tag))
			continue;
		if (EV_TYPE(e.tag) == EV_DEPART) {
			KVP_FRAG_ASSERT(s, s->t - 1 - q->a == q->o,
					"a sequence of %llu output tokens left after %llu steps",
					(unsigned long long)q->o, (unsigned long long)(s->t - 1 - q->a));
			s->tok_completed += q->p + q->o;
			seq_remove(s, e.slot);
		} else if (EV_TYPE(e.tag) == EV_BLOCKS_FULL) {
			q->in_blocks &= (uint8_t)~(1u << cls);
			s->bucket[cls][q->key]--;
		} else {
			q->in_tokens &= (uint8_t)~(1u << cls);
			s->growing[cls]--;
		}
	}
	if (s->paged) {
		uint32_t idx = (uint32_t)(s->t % s->P);
		uint64_t need = 0;
		for (uint32_t c = 0; c < s->nclass; c++)
			need += s->bucket[c][idx] * s->bpb[c];
		while (need > s->pool - s->held && s->tail) {
			uint32_t v = s->tail;
			struct seq *q = &s->seqs[v];
			for (uint32_t c = 0; c < s->nclass; c++)
				if ((q->in_blocks & (1u << c)) && q->key == idx)
					need -= s->bpb[c];
			uint64_t g = s->t - 1 - q->a;
			struct kvp_frag_req back = {q->p + g, q->o - g, q->prefix};
			bool alone = s->live == 1;
			seq_remove(s, v);
			if (alone) {
				s->res->dropped++; /* it cannot grow even with the pool to itself */
				s->tok_dropped += back.p + back.o;
			} else if (push_waiting(s, back)) {
				s->res->preemptions++;
				s->tok_preempted += back.p + back.o;
			}
		}
		s->held += need;
	}
	s->used += growth_bytes(s);
}

/* Feed a chunk of requests; returns when the chunk is used up or the stream
 * ends (the drain after the last admission is not simulated). */
static void sim_feed(struct sim *s, const struct kvp_frag_req *chunk, size_t n, bool last)
{
	s->chunk = chunk;
	s->nchunk = n;
	s->pos = 0;
	s->last = last;
	while (!s->done && !s->oom) {
		if (s->admitting) {
			int r = sim_admit(s);
			if (r == ADMIT_NEED_MORE)
				return;
			if (r == ADMIT_DONE) {
				s->done = true;
				return;
			}
			sim_measure(s, 1, 0);
			s->admitting = false;
#ifdef KVP_CHECK_INVARIANTS
			if ((++s->checks & 255) == 0)
				sim_recount(s);
#endif
		}
		sim_step(s);
		s->admitting = true;
	}
}

static void sim_free(struct sim *s)
{
	for (uint32_t c = 0; c < KVP_FRAG_MAX_CLASSES; c++)
		free(s->bucket[c]);
	free(s->seqs);
	kvp_frag_evq_free(&s->ev);
	free(s->stack);
	kvp_frag_arena_free(s->arena);
}

static bool sim_init(struct sim *s, const struct kvp_frag_config *cfg, struct kvp_frag_result *res)
{
	const struct kvp_frag_shape *sh = &cfg->shape;
	memset(s, 0, sizeof *s);
	s->cfg = cfg;
	s->res = res;
	s->paged = res->policy == KVP_FRAG_POLICY_PAGED || res->policy == KVP_FRAG_POLICY_PAGED_SHARED;
	s->shared = res->policy == KVP_FRAG_POLICY_PAGED_SHARED;
	s->fit = res->fit;
	s->P = s->paged ? res->block_size : 1;
	s->nclass = sh->nclass;
	s->seq_bytes = sh->seq_bytes;
	s->pool = cfg->pool_bytes;
	s->nseqs = 1; /* slot 0 is null */
	s->capseqs = 1024;
	s->seqs = malloc(s->capseqs * sizeof *s->seqs);
	s->admitting = true;
	if (!s->seqs)
		return false;
	for (uint32_t c = 0; c < s->nclass; c++) {
		s->tb[c] = sh->token_bytes[c];
		s->ub[c] = sh->used_token_bytes[c] ? sh->used_token_bytes[c] : sh->token_bytes[c];
		s->bpb[c] = s->tb[c] * s->P;
		s->cap_blk[c] = class_cap_blocks(sh, c, s->P);
		s->cap_tok[c] = class_cap_blocks(sh, c, 1);
		if (s->paged && !(s->bucket[c] = calloc(s->P, sizeof *s->bucket[c])))
			return false;
	}
	if (s->shared && s->nclass && s->cap_blk[0] == UINT64_MAX)
		s->sb = cfg->prefix_tokens / s->P;
	s->sub = s->nclass ? s->sb * s->P * s->ub[0] : 0;
	if (!s->paged && !(s->arena = kvp_frag_arena_new(s->pool, s->fit == KVP_FRAG_FIT_BEST)))
		return false;
	return true;
}

/* The end of a run: tokens are conserved, and the live set is what the pool
 * can hold at the smallest admission. */
static void sim_check_end(struct sim *s)
{
	uint64_t live_tok = 0;
	for (uint32_t i = s->head; i; i = s->seqs[i].next)
		live_tok += s->seqs[i].p + s->seqs[i].o;
	KVP_FRAG_ASSERT(s, s->tok_admitted == s->tok_completed + s->tok_preempted + s->tok_dropped +
						 live_tok,
			"tokens admitted %llu != completed %llu + preempted %llu + dropped %llu + "
			"live %llu", (unsigned long long)s->tok_admitted,
			(unsigned long long)s->tok_completed, (unsigned long long)s->tok_preempted,
			(unsigned long long)s->tok_dropped, (unsigned long long)live_tok);
	KVP_FRAG_ASSERT(s, !s->min_need || s->peak_live <= s->pool / s->min_need,
			"%llu sequences live at once, but the pool holds %llu of the smallest "
			"(%llu B)", (unsigned long long)s->peak_live,
			(unsigned long long)(s->pool / s->min_need), (unsigned long long)s->min_need);
#ifdef KVP_CHECK_INVARIANTS
	sim_recount(s);
#endif
}

/* A row's shares of the pool: each in [0, 1], together 1, to rounding. */
static void sim_check_row(struct sim *s)
{
	const struct kvp_frag_result *r = s->res;
	const double e = KVP_FRAG_SHARE_TOLERANCE;
	double f[4] = {r->used_fraction, r->internal_waste_fraction, r->external_waste_fraction,
		       r->free_fraction};
	double sum = 0;
	for (int i = 0; i < 4; i++) {
		KVP_FRAG_ASSERT(s, f[i] >= -e && f[i] <= 1 + e,
				"share %d of the pool is %.9f, outside [0, 1]", i, f[i]);
		sum += f[i];
	}
	KVP_FRAG_ASSERT(s, fabs(sum - 1) <= e, "shares of the pool add up to %.9f", sum);
	KVP_FRAG_ASSERT(s, r->mean_sequences <= (double)s->peak_live + e,
			"mean sequences %.3f above the peak %llu", r->mean_sequences,
			(unsigned long long)s->peak_live);
}

static void sim_finish(struct sim *s, const struct kvp_frag_config *cfg)
{
	struct kvp_frag_result *r = s->res;
	uint64_t tok = kvp_frag_token_bytes(&cfg->shape);
	r->measured_steps = s->steps;
	r->peak_sequences = s->peak_live;
	r->pool_bytes = s->pool;
	if (s->paged) {
		uint64_t block = tok * s->P;
		r->num_blocks = block ? s->pool / block : 0;
		r->expected_waste_tokens = (s->P - 1) / 2.0;
		/* block table: int32 block ids, one row of ceil(max_len / P) per
		 * sequence slot (vLLM's block_table and kvbench's layout); the
		 * allocator: an int32 id and int32 reference count per block, and
		 * an 8-byte content hash per block when prefixes are shared */
		r->metadata_bytes = r->peak_sequences * kvp_cdiv(cfg->max_len, s->P) * 4 +
				    r->num_blocks * (s->shared ? 16 : 8);
	} else {
		/* (offset, length) per live reservation and per hole */
		r->metadata_bytes = (r->peak_sequences + s->peak_holes) * 16;
	}
	sim_check_end(s);
	if (!s->steps)
		return;
	double steps = (double)s->steps, pool = (double)s->pool;
	r->used_fraction = s->sum_used / steps / pool;
	r->internal_waste_fraction = (s->sum_held - s->sum_used) / steps / pool;
	r->external_waste_fraction = s->sum_ext / steps / pool;
	r->free_fraction = 1 - (s->sum_held + s->sum_ext) / steps / pool;
	if (r->free_fraction < 0 && r->free_fraction > -KVP_FRAG_SHARE_TOLERANCE)
		r->free_fraction = 0; /* rounding of the sums */
	r->mean_sequences = s->sum_live / steps;
	r->max_sequences = (uint64_t)floor(r->mean_sequences + 1e-9);
	if (s->sum_live > 0) {
		r->waste_tokens_per_sequence = (s->sum_held - s->sum_used) / (double)tok / s->sum_live;
		r->held_bytes_per_sequence = s->sum_held / s->sum_live;
	}
	sim_check_row(s);
}

/* ------------------------------------------------------------ the rows */

kvp_status kvp_frag_sim_rows(const struct kvp_frag_config *cfg, const struct kvp_workload *w,
			     struct kvp_frag_result *rows, size_t nr, struct kvp_error *err)
{
	if (cfg->policy[KVP_FRAG_POLICY_CONTIGUOUS_MAX] &&
	    kvp_frag_seq_bytes(&cfg->shape, cfg->max_len, 1) > cfg->pool_bytes)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "max_len",
				     "one reservation of %llu tokens is larger than the KV pool",
				     (unsigned long long)cfg->max_len);
	struct sim *sims = calloc(nr ? nr : 1, sizeof *sims);
	struct kvp_frag_req *buf = malloc(CHUNK * sizeof *buf);
	/* each row's own settings: the paged rows take paged_shape when set */
	struct kvp_frag_config *rc = malloc((nr ? nr : 1) * sizeof *rc);
	kvp_status st = KVP_STATUS_OK;
	if (!sims || !buf || !rc) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nr; i++) {
		rc[i] = *cfg;
		if (cfg->has_paged_shape && rows[i].policy >= KVP_FRAG_POLICY_PAGED)
			rc[i].shape = cfg->paged_shape;
	}
	for (size_t i = 0; i < nr; i++)
		if (!sim_init(&sims[i], &rc[i], &rows[i])) {
			st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
			nr = i + 1;
			goto out;
		}
	struct kvp_rng rng;
	kvp_rng_seed(&rng, cfg->seed);
	for (uint64_t done = 0; done < cfg->requests;) {
		size_t m = cfg->requests - done < CHUNK ? (size_t)(cfg->requests - done) : CHUNK;
		kvp_frag_draw(cfg, w, &rng, buf, m);
		done += m;
		for (size_t i = 0; i < nr; i++)
			sim_feed(&sims[i], buf, m, done == cfg->requests);
		if (cfg->progress)
			cfg->progress(cfg->progress_ctx, done, cfg->requests);
	}
	for (size_t i = 0; i < nr; i++) {
		if (sims[i].oom || sims[i].ev.oom) {
			st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
			goto out;
		}
		sim_finish(&sims[i], &rc[i]);
		if (sims[i].broken) {
			st = kvp_error_set(err, KVP_STATUS_INTERNAL, NULL, 0, 0, "frag",
					   "a consistency check failed (a bug): %s", sims[i].why);
			goto out;
		}
	}
out:
	for (size_t i = 0; sims && i < nr; i++)
		sim_free(&sims[i]);
	free(sims);
	free(buf);
	free(rc);
	return st;
}

