/* frag-arena.c: the contiguous allocator of the fragmentation simulator
 * (frag.h, "arena"): an address space [0, size) with first-fit and best-fit
 * allocation and coalescing of freed ranges, O(log holes) per operation.
 * tests/check-frag.c compares it with a plain list of holes. */
#include "frag/frag.h"

#include <stdlib.h>
#include <string.h>

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
