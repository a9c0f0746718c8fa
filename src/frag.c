/* frag.c: the fragmentation simulator behind `kvplan frag` (see frag.h for
 * the policies and the time model).
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
 *     one event per sequence, as is its departure (a binary heap);
 *   - contiguous reservations never grow, so their simulation jumps from one
 *     event to the next and integrates the linear growth of used tokens;
 *   - the requests are drawn once, in chunks, and fed to every row, so all
 *     rows see the same stream and the memory does not grow with it. */
#include "frag.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist.h"
#include "units.h"

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

static const char *const policy_names[] = {"contiguous-max", "contiguous-request", "paged",
					   "paged-shared"};

const char *kvp_frag_policy_name(enum kvp_frag_policy p) { return policy_names[p]; }
const char *kvp_frag_fit_name(enum kvp_frag_fit f) { return f == KVP_FRAG_FIT_BEST ? "best-fit" : "first-fit"; }

/* ------------------------------------------------------------ shape */

/* Class 0 holds the layers that keep every token (full attention and MLA),
 * so that a shared prefix applies to it; then sliding, then chunked. */
kvp_status kvp_frag_shape_from_spec(const struct kvp_spec *s, struct kvp_frag_shape *out,
				    struct kvp_error *err)
{
	static const enum kvp_layer_kind order[] = {KVP_LAYER_FULL, KVP_LAYER_SLIDING,
						    KVP_LAYER_CHUNKED};
	memset(out, 0, sizeof *out);
	for (size_t o = 0; o < sizeof order / sizeof order[0]; o++) {
		uint64_t bytes = s->kind_token_bytes[order[o]];
		if (order[o] == KVP_LAYER_FULL)
			bytes += s->kind_token_bytes[KVP_LAYER_MLA];
		if (!bytes)
			continue;
		const struct kvp_spec_layer *rep = NULL;
		for (uint32_t i = 0; i < s->num_layers && !rep; i++) {
			enum kvp_layer_kind k = s->layers[i].kind;
			if (k == order[o] || (order[o] == KVP_LAYER_FULL && k == KVP_LAYER_MLA))
				rep = &s->layers[i];
		}
		if (!rep)
			continue;
		out->layer[out->nclass] = *rep;
		out->token_bytes[out->nclass] = bytes;
		out->nclass++;
	}
	out->seq_bytes = s->seq_bytes;
	if (!out->nclass && !out->seq_bytes)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "model",
				     "keeps no KV cache on this GPU");
	return KVP_STATUS_OK;
}

void kvp_frag_shape_tokens(struct kvp_frag_shape *out, uint64_t token_bytes)
{
	memset(out, 0, sizeof *out);
	out->nclass = 1;
	out->token_bytes[0] = token_bytes;
	out->layer[0].kind = KVP_LAYER_FULL;
}

uint64_t kvp_frag_token_bytes(const struct kvp_frag_shape *sh)
{
	uint64_t t = 0;
	for (uint32_t c = 0; c < sh->nclass; c++)
		t += sh->token_bytes[c];
	return t;
}

uint64_t kvp_frag_seq_bytes(const struct kvp_frag_shape *sh, uint64_t n, uint32_t block)
{
	uint64_t total = sh->seq_bytes, t;
	for (uint32_t c = 0; c < sh->nclass; c++)
		if (!kvp_mul(kvp_spec_layer_tokens(&sh->layer[c], n, block), sh->token_bytes[c], &t) ||
		    !kvp_add(total, t, &total))
			return UINT64_MAX;
	return total;
}

/* Blocks of P tokens class c holds at most (UINT64_MAX: no cap). */
static uint64_t class_cap_blocks(const struct kvp_frag_shape *sh, uint32_t c, uint32_t P)
{
	if (sh->layer[c].kind != KVP_LAYER_SLIDING && sh->layer[c].kind != KVP_LAYER_CHUNKED)
		return UINT64_MAX;
	return kvp_spec_layer_tokens(&sh->layer[c], UINT64_MAX - KVP_FRAG_MAX_BLOCK, P) / P;
}

/* ------------------------------------------------------------ arena */

/* Holes live in two treaps over one node pool: tree 0 ordered by address
 * (each node keeps the largest hole of its subtree, for first fit), tree 1 by
 * (size, address) (for best fit). */
struct hole {
	uint64_t addr, size, maxsz;
	uint32_t prio;
	uint32_t l[2], r[2];
};

struct kvp_frag_arena {
	struct hole *h;          /* h[0] is the null node */
	uint32_t cap, top, freelist;
	uint32_t root[2];
	uint64_t size, free_bytes;
	size_t holes;
	uint64_t rng;
	bool by_size;            /* keep tree 1 (best fit needs it) */
};

static uint32_t arena_rand(struct kvp_frag_arena *a)
{
	a->rng ^= a->rng << 13;
	a->rng ^= a->rng >> 7;
	a->rng ^= a->rng << 17;
	return (uint32_t)(a->rng >> 32);
}

static inline uint64_t maxsz(const struct kvp_frag_arena *a, uint32_t i) { return i ? a->h[i].maxsz : 0; }

static inline void fix(struct kvp_frag_arena *a, int t, uint32_t i)
{
	if (t == 0) {
		uint64_t m = a->h[i].size, x = maxsz(a, a->h[i].l[0]), y = maxsz(a, a->h[i].r[0]);
		a->h[i].maxsz = m > x ? (m > y ? m : y) : (x > y ? x : y);
	}
}

/* Node key < (k1, k2)?  Tree 0: address; tree 1: (size, address). */
static inline bool key_lt(const struct hole *x, int t, uint64_t k1, uint64_t k2)
{
	if (t == 0)
		return x->addr < k1;
	return x->size < k1 || (x->size == k1 && x->addr < k2);
}

static void split(struct kvp_frag_arena *a, int t, uint32_t i, uint64_t k1, uint64_t k2,
		  uint32_t *L, uint32_t *R)
{
	if (!i) {
		*L = *R = 0;
		return;
	}
	if (key_lt(&a->h[i], t, k1, k2)) {
		split(a, t, a->h[i].r[t], k1, k2, &a->h[i].r[t], R);
		*L = i;
	} else {
		split(a, t, a->h[i].l[t], k1, k2, L, &a->h[i].l[t]);
		*R = i;
	}
	fix(a, t, i);
}

static uint32_t merge(struct kvp_frag_arena *a, int t, uint32_t L, uint32_t R)
{
	if (!L || !R)
		return L ? L : R;
	if (a->h[L].prio > a->h[R].prio) {
		a->h[L].r[t] = merge(a, t, a->h[L].r[t], R);
		fix(a, t, L);
		return L;
	}
	a->h[R].l[t] = merge(a, t, L, a->h[R].l[t]);
	fix(a, t, R);
	return R;
}

static inline uint64_t key1(const struct hole *x, int t) { return t ? x->size : x->addr; }

/* Insert node i below root: descend to where its priority belongs, then
 * split the (small, expected) subtree there around it. */
static uint32_t insert_at(struct kvp_frag_arena *a, int t, uint32_t root, uint32_t i)
{
	struct hole *h = a->h;
	if (!root)
		return i;
	if (h[i].prio > h[root].prio) {
		split(a, t, root, key1(&h[i], t), h[i].addr, &h[i].l[t], &h[i].r[t]);
		fix(a, t, i);
		return i;
	}
	if (key_lt(&h[i], t, key1(&h[root], t), h[root].addr))
		h[root].l[t] = insert_at(a, t, h[root].l[t], i);
	else
		h[root].r[t] = insert_at(a, t, h[root].r[t], i);
	fix(a, t, root);
	return root;
}

/* Remove node i from below root: its children take its place. */
static uint32_t erase_at(struct kvp_frag_arena *a, int t, uint32_t root, uint32_t i)
{
	struct hole *h = a->h;
	if (root == i)
		return merge(a, t, h[i].l[t], h[i].r[t]);
	if (key_lt(&h[i], t, key1(&h[root], t), h[root].addr))
		h[root].l[t] = erase_at(a, t, h[root].l[t], i);
	else
		h[root].r[t] = erase_at(a, t, h[root].r[t], i);
	fix(a, t, root);
	return root;
}

/* Node x before node y in tree 1's (size, address) order? */
static inline bool size_before(const struct hole *x, const struct hole *y)
{
	return x->size < y->size || (x->size == y->size && x->addr < y->addr);
}

/* Tree 1 keeps no subtree values, so its insert and erase walk down a link
 * iteratively instead of recursing back up. */
static void tree_insert(struct kvp_frag_arena *a, int t, uint32_t i)
{
	struct hole *h = a->h;
	h[i].l[t] = h[i].r[t] = 0;
	fix(a, t, i);
	if (t == 0) {
		a->root[0] = insert_at(a, 0, a->root[0], i);
		return;
	}
	uint32_t *link = &a->root[1];
	while (*link && h[*link].prio > h[i].prio)
		link = size_before(&h[i], &h[*link]) ? &h[*link].l[1] : &h[*link].r[1];
	split(a, 1, *link, h[i].size, h[i].addr, &h[i].l[1], &h[i].r[1]);
	*link = i;
}

static void tree_erase(struct kvp_frag_arena *a, int t, uint32_t i)
{
	struct hole *h = a->h;
	if (t == 0) {
		a->root[0] = erase_at(a, 0, a->root[0], i);
		return;
	}
	uint32_t *link = &a->root[1];
	while (*link != i)
		link = size_before(&h[i], &h[*link]) ? &h[*link].l[1] : &h[*link].r[1];
	*link = merge(a, 1, h[i].l[1], h[i].r[1]);
}

#define ARENA_PATH 192

/* Re-fix the largest-hole values along path[0..n) (root first, the changed
 * node last), bottom-up, stopping where a subtree's value is unchanged. */
static void fix_up(struct kvp_frag_arena *a, const uint32_t *path, int n)
{
	if (n-- > 0)
		fix(a, 0, path[n]);
	while (n-- > 0) {
		uint64_t before = a->h[path[n]].maxsz;
		fix(a, 0, path[n]);
		if (a->h[path[n]].maxsz == before)
			break;
	}
}

/* The same, finding the path to the node at addr first (tree 0). */
static void fix_path(struct kvp_frag_arena *a, uint64_t addr)
{
	uint32_t path[ARENA_PATH];
	int n = 0;
	for (uint32_t i = a->root[0]; i; i = addr < a->h[i].addr ? a->h[i].l[0] : a->h[i].r[0]) {
		if (n == ARENA_PATH) {
			/* a treap this deep is astronomically unlikely: fix it all */
			for (int k = n - 1; k >= 0; k--)
				fix(a, 0, path[k]);
			n = 0;
		}
		path[n++] = i;
		if (addr == a->h[i].addr)
			break;
	}
	fix_up(a, path, n);
}

/* Give hole i a new address and size that keep its place in address order;
 * path[0..n) leads to it when the caller knows the way (n = 0: find it). */
static void hole_move(struct kvp_frag_arena *a, uint32_t i, uint64_t addr, uint64_t size,
		      const uint32_t *path, int n)
{
	if (a->by_size)
		tree_erase(a, 1, i);
	a->h[i].addr = addr;
	a->h[i].size = size;
	if (n > 0 && n < ARENA_PATH)
		fix_up(a, path, n);
	else
		fix_path(a, addr);
	if (a->by_size)
		tree_insert(a, 1, i);
}

static uint32_t hole_new(struct kvp_frag_arena *a, uint64_t addr, uint64_t size)
{
	uint32_t i;
	if (a->freelist) {
		i = a->freelist;
		a->freelist = a->h[i].l[0];
	} else {
		if (a->top == a->cap) {
			uint32_t cap = a->cap * 2;
			struct hole *nh = realloc(a->h, cap * sizeof *nh);
			if (!nh)
				return 0;
			a->h = nh;
			a->cap = cap;
		}
		i = a->top++;
	}
	memset(&a->h[i], 0, sizeof a->h[i]);
	a->h[i].addr = addr;
	a->h[i].size = a->h[i].maxsz = size;
	a->h[i].prio = arena_rand(a);
	tree_insert(a, 0, i);
	if (a->by_size)
		tree_insert(a, 1, i);
	a->holes++;
	return i;
}

static void hole_drop(struct kvp_frag_arena *a, uint32_t i)
{
	tree_erase(a, 0, i);
	if (a->by_size)
		tree_erase(a, 1, i);
	a->h[i].l[0] = a->freelist;
	a->freelist = i;
	a->holes--;
}

struct kvp_frag_arena *kvp_frag_arena_new(uint64_t size, bool by_size)
{
	struct kvp_frag_arena *a = calloc(1, sizeof *a);
	if (!a)
		return NULL;
	a->by_size = by_size;
	a->cap = 64;
	a->top = 1;
	a->h = calloc(a->cap, sizeof *a->h);
	a->size = a->free_bytes = size;
	a->rng = 0x9e3779b97f4a7c15ULL;
	if (!a->h || (size && !hole_new(a, 0, size))) {
		kvp_frag_arena_free(a);
		return NULL;
	}
	return a;
}

void kvp_frag_arena_free(struct kvp_frag_arena *a)
{
	if (a)
		free(a->h);
	free(a);
}

bool kvp_frag_arena_alloc(struct kvp_frag_arena *a, uint64_t size, enum kvp_frag_fit fit,
			  uint64_t *addr)
{
	uint32_t i = 0, path[ARENA_PATH];
	int n = 0;
	if (size == 0 || maxsz(a, a->root[0]) < size)
		return false;
	if (fit == KVP_FRAG_FIT_FIRST) {
		/* the lowest address whose hole is large enough */
		uint32_t x = a->root[0];
		while (x) {
			if (n < ARENA_PATH)
				path[n++] = x;
			if (maxsz(a, a->h[x].l[0]) >= size) {
				x = a->h[x].l[0];
			} else if (a->h[x].size >= size) {
				i = x;
				break;
			} else {
				x = a->h[x].r[0];
			}
		}
	} else if (a->by_size) {
		/* the smallest hole that is large enough, lowest address first */
		for (uint32_t x = a->root[1]; x;) {
			if (!key_lt(&a->h[x], 1, size, 0)) {
				i = x;
				x = a->h[x].l[1];
			} else {
				x = a->h[x].r[1];
			}
		}
		n = 0;
	}
	if (!i)
		return false;
	*addr = a->h[i].addr;
	if (a->h[i].size == size)
		hole_drop(a, i);
	else
		hole_move(a, i, a->h[i].addr + size, a->h[i].size - size, path, n);
	a->free_bytes -= size;
	return true;
}

void kvp_frag_arena_release(struct kvp_frag_arena *a, uint64_t addr, uint64_t size)
{
	/* the neighbours lie on the search path: the last turn right passed the
	 * predecessor, the last turn left the successor */
	uint32_t pred = 0, succ = 0, path[ARENA_PATH];
	int n = 0, np = 0, ns = 0;
	for (uint32_t x = a->root[0]; x;) {
		if (n < ARENA_PATH)
			path[n++] = x;
		if (a->h[x].addr < addr) {
			pred = x;
			np = n;
			x = a->h[x].r[0];
		} else {
			succ = x;
			ns = n;
			x = a->h[x].l[0];
		}
	}
	bool left = pred && a->h[pred].addr + a->h[pred].size == addr;
	bool right = succ && addr + size == a->h[succ].addr;
	if (left && right) {
		uint64_t len = a->h[pred].size + size + a->h[succ].size;
		hole_drop(a, succ);
		hole_move(a, pred, a->h[pred].addr, len, NULL, 0);
	} else if (left) {
		hole_move(a, pred, a->h[pred].addr, a->h[pred].size + size, path, np);
	} else if (right) {
		hole_move(a, succ, addr, a->h[succ].size + size, path, ns);
	} else {
		hole_new(a, addr, size);
	}
	a->free_bytes += size;
}

uint64_t kvp_frag_arena_free_bytes(const struct kvp_frag_arena *a) { return a->free_bytes; }
uint64_t kvp_frag_arena_largest_hole(const struct kvp_frag_arena *a) { return maxsz(a, a->root[0]); }
size_t kvp_frag_arena_holes(const struct kvp_frag_arena *a) { return a->holes; }

/* ------------------------------------------------------------ requests */

struct req {
	uint64_t p, o;      /* prompt (with any prefix) and output still to generate */
	uint8_t prefix;     /* carries the shared prefix */
};

#define CHUNK 16384

/* Draw n requests: the workload's lengths, the prefix for a share of them,
 * then the caps (max_len on p + o, max_tokens on o). */
static void draw(const struct kvp_frag_config *c, const struct kvp_workload *w,
		 struct kvp_rng *r, struct req *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t p, o;
		kvp_workload_sample(w, r, &p, &o);
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
		out[i].p = p;
		out[i].o = o;
		out[i].prefix = carrier;
	}
}

/* ------------------------------------------------------------ one row */

enum { EV_DEPART, EV_BLOCKS_FULL, EV_TOKENS_FULL };

/* 16 bytes, four to a cache line in the 4-ary heap.  tag = gen << 4 | type
 * << 2 | class: generations wrap after 2^28 uses of one slot, far more steps
 * than an event waits (at most max_len + 2 P). */
struct event {
	uint64_t t;
	uint32_t slot, tag;
};

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
	struct evbucket {
		struct event *e;
		size_t n, cap;
		uint64_t min;                   /* the earliest time in e[0..n) */
	} ev[65];                               /* radix heap of events */
	uint64_t ev_last;                       /* the last minimum taken */
	size_t nev;
	struct req *stack;                      /* preempted, waiting first (LIFO) */
	size_t nstack, capstack;
	struct kvp_frag_arena *arena;
	const struct req *chunk;
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
		b += (l < s->cap_tok[c] ? l : s->cap_tok[c]) * s->tb[c];
	if (carrier && s->shared)
		b -= s->sb * s->bpb[0];
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

/* Events wait in a radix heap: an event sits in the bucket of the highest
 * bit in which its time differs from `ev_last`, a push is O(1) and each event
 * moves down at most 64 buckets over its life.  The heap is only correct while
 * every event ever pushed is >= ev_last, so ev_last moves only when events are
 * taken (heap_take, at or before the current step, and every push is for a
 * later step); looking at the earliest time (heap_peek) changes nothing.  Each
 * bucket keeps its minimum so the peek costs one scan of the bucket heads. */
static inline int ev_bucket(uint64_t t, uint64_t last)
{
	return t == last ? 0 : 64 - __builtin_clzll(t ^ last);
}

static bool ev_append(struct sim *s, int b, struct event e)
{
	struct evbucket *q = &s->ev[b];
	if (!grow(s, (void **)&q->e, &q->cap, q->n, sizeof *q->e, 64))
		return false;
	if (!q->n || e.t < q->min)
		q->min = e.t;
	q->e[q->n++] = e;
	return true;
}

static bool heap_push(struct sim *s, uint64_t t, uint32_t slot, uint8_t type, uint8_t cls)
{
	struct event e = {t, slot, (s->seqs[slot].gen & 0x0fffffffu) << 4 | (uint32_t)type << 2 | cls};
	KVP_FRAG_ASSERT(s, t >= s->ev_last, "event at step %llu pushed behind the heap's %llu",
			(unsigned long long)t, (unsigned long long)s->ev_last);
	s->nev++;
	return ev_append(s, ev_bucket(t, s->ev_last), e);
}

/* The earliest event time (events exist); the heap is left as it was. */
static uint64_t heap_peek(const struct sim *s)
{
	int b = 0;
	while (!s->ev[b].n)
		b++;
	return s->ev[b].min;
}

/* Remove an event of the earliest time, which must be <= the current step:
 * refill bucket 0 from the lowest non-empty bucket around its minimum. */
static struct event heap_take(struct sim *s)
{
	if (!s->ev[0].n) {
		int b = 1;
		while (!s->ev[b].n)
			b++;
		struct evbucket *q = &s->ev[b];
		uint64_t m = q->min;
		KVP_FRAG_ASSERT(s, m <= s->t, "event at step %llu taken at step %llu",
				(unsigned long long)m, (unsigned long long)s->t);
		s->ev_last = m;
		size_t n = q->n;
		q->n = 0;
		for (size_t i = 0; i < n; i++)
			ev_append(s, ev_bucket(q->e[i].t, m), q->e[i]); /* always a lower bucket */
	}
	s->nev--;
	return s->ev[0].e[--s->ev[0].n];
}

static bool push_waiting(struct sim *s, struct req r)
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
			s->used -= s->sb * s->bpb[0];
		}
	} else {
		s->held -= q->resv;
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
static bool seq_admit(struct sim *s, const struct req *r, uint64_t need, uint64_t addr)
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
			s->used += s->sb * s->bpb[0];
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
static uint64_t need_bytes(const struct sim *s, const struct req *r)
{
	if (!s->paged) {
		const struct kvp_frag_config *c = s->cfg;
		uint64_t len = c->max_len;
		if (s->res->policy == KVP_FRAG_POLICY_CONTIGUOUS_REQUEST) {
			uint64_t want = r->p + (c->max_tokens ? c->max_tokens : r->o);
			len = want < len ? want : len;
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
		const struct req *r;
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
			fits = kvp_frag_arena_alloc(s->arena, need, s->fit, &addr);
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
			struct req copy = *r;
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
		used += s->sb * s->bpb[0];
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
		d += s->growing[c] * s->tb[c];
	return d;
}

/* Step t: departures and saturations, then every live sequence appends a
 * token (paged: taking the blocks it needs, preempting the newest sequences
 * when the pool runs out). */
static void sim_step(struct sim *s)
{
	if (!s->paged && s->nev) {
		/* nothing changes but the used bytes until the next event */
		uint64_t next = heap_peek(s);
		if (next > s->t + 1) {
			uint64_t k = next - s->t - 1, du = growth_bytes(s);
			s->used += du; /* the averages count from the first skipped step */
			sim_measure(s, k, du);
			s->used += du * (k - 1);
			s->t += k;
		}
	}
	s->t++;
	while (s->nev && heap_peek(s) <= s->t) {
		struct event e = heap_take(s);
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
			struct req back = {q->p + g, q->o - g, q->prefix};
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
static void sim_feed(struct sim *s, const struct req *chunk, size_t n, bool last)
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
	for (int b = 0; b < 65; b++)
		free(s->ev[b].e);
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
		s->bpb[c] = s->tb[c] * s->P;
		s->cap_blk[c] = class_cap_blocks(sh, c, s->P);
		s->cap_tok[c] = class_cap_blocks(sh, c, 1);
		if (s->paged && !(s->bucket[c] = calloc(s->P, sizeof *s->bucket[c])))
			return false;
	}
	if (s->shared && s->nclass && s->cap_blk[0] == UINT64_MAX)
		s->sb = cfg->prefix_tokens / s->P;
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

/* ------------------------------------------------------------ the run */

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

kvp_status kvp_frag_run(const struct kvp_frag_config *cfg, const struct kvp_workload *w,
			struct kvp_frag_result *out, size_t max, size_t *n, struct kvp_error *err)
{
	*n = 0;
	if (!cfg->max_len)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "max_len", "must be positive");
	if (!cfg->pool_bytes)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "pool",
				     "the KV pool is empty: the weights leave no room");
	if (cfg->prefix_tokens && cfg->prefix_tokens >= cfg->max_len)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "shared_prefix",
				     "%llu tokens leave no room under max_len %llu",
				     (unsigned long long)cfg->prefix_tokens,
				     (unsigned long long)cfg->max_len);
	uint64_t biggest = kvp_frag_seq_bytes(&cfg->shape, cfg->max_len, KVP_FRAG_MAX_BLOCK);
	if (biggest == UINT64_MAX || kvp_frag_token_bytes(&cfg->shape) > UINT64_MAX / KVP_FRAG_MAX_BLOCK)
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "max_len",
				     "bytes of one sequence overflow 64 bits");
	/* the rows */
	struct kvp_frag_result rows[KVP_FRAG_MAX_ROWS];
	size_t nr = 0;
	for (int p = KVP_FRAG_POLICY_CONTIGUOUS_MAX; p <= KVP_FRAG_POLICY_CONTIGUOUS_REQUEST; p++)
		for (int f = 0; f < 2 && cfg->policy[p]; f++)
			if (cfg->fit[f])
				rows[nr++] = (struct kvp_frag_result){.policy = (enum kvp_frag_policy)p,
								      .fit = (enum kvp_frag_fit)f};
	bool prefix = cfg->prefix_tokens && cfg->prefix_fraction > 0;
	for (int p = KVP_FRAG_POLICY_PAGED; p <= KVP_FRAG_POLICY_PAGED_SHARED; p++) {
		if (!cfg->policy[p] || (p == KVP_FRAG_POLICY_PAGED_SHARED && !prefix))
			continue;
		for (size_t b = 0; b < cfg->nblock; b++) {
			if (!cfg->block_sizes[b] || cfg->block_sizes[b] > KVP_FRAG_MAX_BLOCK)
				return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "block size",
						     "%u is outside 1..%u", cfg->block_sizes[b],
						     KVP_FRAG_MAX_BLOCK);
			rows[nr++] = (struct kvp_frag_result){.policy = (enum kvp_frag_policy)p,
							      .block_size = cfg->block_sizes[b]};
		}
	}
	if (cfg->policy[KVP_FRAG_POLICY_CONTIGUOUS_MAX] &&
	    kvp_frag_seq_bytes(&cfg->shape, cfg->max_len, 1) > cfg->pool_bytes)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "max_len",
				     "one reservation of %llu tokens is larger than the KV pool",
				     (unsigned long long)cfg->max_len);
	struct sim *sims = calloc(nr ? nr : 1, sizeof *sims);
	struct req *buf = malloc(CHUNK * sizeof *buf);
	kvp_status st = KVP_STATUS_OK;
	if (!sims || !buf) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < nr; i++)
		if (!sim_init(&sims[i], cfg, &rows[i])) {
			st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
			nr = i + 1;
			goto out;
		}
	struct kvp_rng rng;
	kvp_rng_seed(&rng, cfg->seed);
	for (uint64_t done = 0; done < cfg->requests;) {
		size_t m = cfg->requests - done < CHUNK ? (size_t)(cfg->requests - done) : CHUNK;
		draw(cfg, w, &rng, buf, m);
		done += m;
		for (size_t i = 0; i < nr; i++)
			sim_feed(&sims[i], buf, m, done == cfg->requests);
	}
	for (size_t i = 0; i < nr; i++) {
		if (sims[i].oom) {
			st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
			goto out;
		}
		sim_finish(&sims[i], cfg);
		if (sims[i].broken) {
			st = kvp_error_set(err, KVP_STATUS_INTERNAL, NULL, 0, 0, "frag",
					   "a consistency check failed (a bug): %s", sims[i].why);
			goto out;
		}
	}
	for (size_t i = 0; i < nr && i < max; i++)
		out[(*n)++] = rows[i];
out:
	for (size_t i = 0; sims && i < nr; i++)
		sim_free(&sims[i]);
	free(sims);
	free(buf);
	return st;
}

/* ------------------------------------------------------------ advice */

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

/* ------------------------------------------------------------ prefix cache */

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
	uint64_t sb = c->prefix_tokens / c->block_size;
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
	for (uint64_t r = 0; r < c->requests && !c->unique_first_token; r++) {
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
		out[i].hit_rate = c->requests ? (double)l[i].hits / (double)c->requests : 0;
		out[i].saved_prefill_tokens = out[i].hit_rate * (double)(sb * c->block_size);
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

/* ------------------------------------------------------------ runs */

void kvp_frag_opts_init(struct kvp_frag_opts *o)
{
	memset(o, 0, sizeof *o);
	o->requests = 100000;
	o->seed = 1;
	o->fit[0] = o->fit[1] = true;
}

uint64_t kvp_frag_max_len(const struct kvp_frag_opts *fo, const struct kvp_workload *w,
			  const struct kvp_budget_opts *o, const struct kvp_model *m)
{
	return fo->max_len ? fo->max_len
	       : w->max_len ? w->max_len
	       : o->context ? o->context : m->max_context;
}

kvp_status kvp_frag_plan(const struct kvp_model *m, const struct kvp_gpu *g,
			 const struct kvp_budget_opts *o, struct kvp_workload *w,
			 const struct kvp_frag_opts *fo, struct kvp_frag_report *out,
			 struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	out->model = m;
	out->workload = w;
	out->recommended = -1;
	snprintf(out->gpu, sizeof out->gpu, "%s", g->name);
	uint64_t max_len = kvp_frag_max_len(fo, w, o, m);
	w->max_len = max_len;
	struct kvp_budget_opts bo = *o;
	bo.context = max_len;
	kvp_status st = kvp_budget_compute(m, g, &bo, &out->budget, err);
	if (st || !out->budget.kv_pool_bytes)
		return st;

	struct kvp_frag_config *fc = &out->cfg;
	kvp_frag_config_init(fc);
	if ((st = kvp_frag_shape_from_spec(&out->budget.spec, &fc->shape, err)))
		return st;
	fc->pool_bytes = out->budget.kv_pool_bytes;
	fc->max_len = max_len;
	fc->max_tokens = fo->max_tokens;
	fc->requests = fo->requests;
	fc->warmup = fo->has_warmup ? fo->warmup : fo->requests / 10;
	fc->seed = fo->seed;
	fc->fit[0] = fo->fit[0];
	fc->fit[1] = fo->fit[1];
	fc->prefix_tokens = w->prefix_tokens;
	fc->prefix_fraction = w->prefix_fraction;
	fc->max_seqs = 0;
	if (fo->has_policies)
		memcpy(fc->policy, fo->policy, sizeof fc->policy);
	if (fo->nblock) {
		fc->nblock = fo->nblock;
		memcpy(fc->block_sizes, fo->block_sizes, fo->nblock * sizeof fo->block_sizes[0]);
	} else if (o->block_size) {
		fc->nblock = 1;
		fc->block_sizes[0] = o->block_size;
	}
	if (fc->prefix_tokens >= max_len)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "shared_prefix",
				     "%llu tokens leave no room under max_len %llu",
				     (unsigned long long)fc->prefix_tokens, (unsigned long long)max_len);
	out->max_fits = kvp_frag_seq_bytes(&fc->shape, max_len, 1) <= fc->pool_bytes;
	if (!out->max_fits)
		fc->policy[KVP_FRAG_POLICY_CONTIGUOUS_MAX] = false;
	if ((st = kvp_frag_run(fc, w, out->rows, KVP_FRAG_MAX_ROWS, &out->nrows, err)))
		return st;
	out->recommended = kvp_frag_recommend(out->rows, out->nrows, out->reason, sizeof out->reason);
	return KVP_STATUS_OK;
}

struct kvp_record *kvp_frag_row_to_record(const struct kvp_frag_result *r)
{
	struct kvp_record *x = kvp_record_new();
	bool paged = r->policy >= KVP_FRAG_POLICY_PAGED, ok = x != NULL;
	ok = ok && kvp_record_str(x, "policy", kvp_frag_policy_name(r->policy));
	ok = ok && (paged ? kvp_record_null(x, "allocator")
			  : kvp_record_str(x, "allocator", kvp_frag_fit_name(r->fit)));
	ok = ok && (paged ? kvp_record_u64(x, "block_size", r->block_size)
			  : kvp_record_null(x, "block_size"));
	ok = ok && kvp_record_f64(x, "used_fraction", r->used_fraction) &&
	     kvp_record_f64(x, "internal_waste_fraction", r->internal_waste_fraction) &&
	     kvp_record_f64(x, "external_waste_fraction", r->external_waste_fraction) &&
	     kvp_record_f64(x, "free_fraction", r->free_fraction) &&
	     kvp_record_u64(x, "metadata_bytes", r->metadata_bytes) &&
	     kvp_record_u64(x, "max_sequences", r->max_sequences) &&
	     kvp_record_f64(x, "mean_sequences", r->mean_sequences) &&
	     kvp_record_u64(x, "peak_sequences", r->peak_sequences) &&
	     kvp_record_u64(x, "refused_with_free_memory", r->refused_with_free_memory) &&
	     kvp_record_u64(x, "preemptions", r->preemptions) &&
	     kvp_record_u64(x, "dropped", r->dropped) &&
	     kvp_record_f64(x, "waste_tokens_per_sequence", r->waste_tokens_per_sequence);
	ok = ok && (paged ? kvp_record_f64(x, "expected_waste_tokens", r->expected_waste_tokens)
			  : kvp_record_null(x, "expected_waste_tokens"));
	ok = ok && (paged ? kvp_record_u64(x, "num_blocks", r->num_blocks)
			  : kvp_record_null(x, "num_blocks"));
	ok = ok && kvp_record_f64(x, "held_bytes_per_sequence", r->held_bytes_per_sequence) &&
	     kvp_record_u64(x, "measured_steps", r->measured_steps);
	if (!ok) {
		kvp_record_free(x);
		return NULL;
	}
	return x;
}

bool kvp_frag_to_record(const struct kvp_frag_report *rep, struct kvp_record *r)
{
	const struct kvp_budget *b = &rep->budget;
	const struct kvp_frag_config *fc = &rep->cfg;
	const struct kvp_workload *w = rep->workload;
	char spec[128];
	bool ok = kvp_record_str(r, "model", rep->model->name) && kvp_record_str(r, "gpu", rep->gpu) &&
		  kvp_record_str(r, "engine", kvp_engine_name(b->engine)) &&
		  kvp_record_u64(r, "tp", b->spec.par.tp) && kvp_record_u64(r, "pp", b->spec.par.pp) &&
		  kvp_record_str(r, "kv_dtype", kvp_dtype_name(b->spec.kv_dtype)) &&
		  kvp_record_str(r, "workload", w->name);
	kvp_dist_format(&w->prompt, spec, sizeof spec);
	ok = ok && kvp_record_str(r, "prompt", spec);
	kvp_dist_format(&w->output, spec, sizeof spec);
	ok = ok && kvp_record_str(r, "output", spec) && kvp_record_u64(r, "max_len", fc->max_len) &&
	     kvp_record_u64(r, "prefix_tokens", fc->prefix_tokens) &&
	     kvp_record_f64(r, "prefix_fraction", fc->prefix_tokens ? fc->prefix_fraction : 0) &&
	     kvp_record_u64(r, "requests", fc->requests) && kvp_record_u64(r, "seed", fc->seed) &&
	     kvp_record_u64(r, "kv_pool_bytes", fc->pool_bytes) &&
	     kvp_record_u64(r, "kv_bytes_per_token", kvp_frag_token_bytes(&fc->shape)) &&
	     kvp_record_u64(r, "engine_max_sequences", b->max_sequences) &&
	     kvp_record_bool(r, "contiguous_max_fits", rep->max_fits);
	/* kvp_record_push and kvp_record_rec own what they are given, even on failure */
	for (size_t i = 0; ok && i < rep->nrows; i++) {
		struct kvp_record *x = kvp_frag_row_to_record(&rep->rows[i]);
		ok = x && kvp_record_push(r, "rows", x);
	}
	struct kvp_record *rr = ok ? kvp_record_new() : NULL;
	int rec = rep->recommended;
	ok = rr && (rec >= 0 ? kvp_record_u64(rr, "recommended_block_size", rep->rows[rec].block_size)
			     : kvp_record_null(rr, "recommended_block_size")) &&
	     kvp_record_str(rr, "reason", rep->reason);
	if (!ok) {
		kvp_record_free(rr);
		return false;
	}
	return kvp_record_rec(r, "recommendation", rr);
}
