/* frag-arrivals.c: `kvplan frag --arrival-rate`: requests arriving over time
 * instead of always waiting (see kvp_frag_arrivals_run in frag.h).
 *
 * Legend: R = arrival rate (requests/s), dt = step time (s), M = tokens per
 * step (max_batched_tokens), P = block size, p = prompt tokens, o = output
 * tokens, kv = tokens in a sequence's cache, B = running sequences.
 *
 * Contiguous rows reserve a request's whole length (max_len, or p plus the
 * requested tokens) when it is admitted, in the arena, and give it back when
 * it finishes: nothing grows in a step and nothing is preempted; a request
 * refused for want of a hole while enough bytes are free in total counts as
 * external fragmentation, as in the saturated mode.  paged-shared rows hold
 * the shared prefix's floor(k / P) full blocks of the full layers once while
 * any carrier runs; a carrier admitted then starts past them (a prefix-cache
 * hit: not held again, not prefilled), the first takes them at admission.
 *
 * Stance: the running sequences in admission order (the newest give way
 * first), steps with nothing running skipped to the next arrival.  A step
 * costs O(1) plus the sequences that change phase in it: the sequences that
 * decode, a prefix of the running order, are kept lazily (struct lazy): all
 * of them gain a token each step, so a clock C gives each one's tokens
 * (kv = C - base), a count per residue of base mod P says how many cross a
 * block boundary this step, and a heap by the clock at which each finishes
 * says which leave.  The rest (prefills, at most a few) and every step that
 * would preempt, or whose decodes outnumber the step's tokens, or a model
 * with windowed layers (whose bytes do not grow a block per P tokens) run the
 * plain loop over explicit sequences, the lazy ones written out first; so
 * the numbers are those of the plain loop, step for step.
 *
 * Step i covers [i dt, (i + 1) dt): the requests that
 * arrived by i dt may be admitted at its start; a sequence admitted at step a
 * and finishing in step j ran j + 1 - a steps, so with no preemption the
 * time-average of running sequences equals the completion rate times the
 * mean (latency - queue) exactly (Little's law), and R times it within the
 * sampling error of the Poisson arrivals. */
#include "frag/frag.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dist.h"
#include "frag/frag-requests.h"
#include "base/units.h"

struct aseq {
	double arrival_s, queue_s;
	uint64_t p, o;          /* tokens to prefill, tokens still to generate */
	uint64_t kv, gen;       /* in the cache; generated since (re)admission */
	uint64_t addr, len;     /* contiguous: the reservation (bytes) */
	bool carrier;           /* carries the shared prefix */
	bool admitted_once;
	bool ran;               /* scheduled in this step */
};

/* A growable ring of waiting requests (front: next to admit). */
struct ring {
	struct aseq *a;
	size_t head, n, cap;
};

static bool ring_grow(struct ring *r)
{
	if (r->n < r->cap)
		return true;
	size_t cap = r->cap ? 2 * r->cap : 256;
	struct aseq *a = malloc(cap * sizeof *a);
	if (!a)
		return false;
	for (size_t i = 0; i < r->n; i++)
		a[i] = r->a[(r->head + i) % r->cap];
	free(r->a);
	r->a = a;
	r->head = 0;
	r->cap = cap;
	return true;
}

static bool ring_push_back(struct ring *r, struct aseq x)
{
	if (!ring_grow(r))
		return false;
	r->a[(r->head + r->n++) % r->cap] = x;
	return true;
}

static bool ring_push_front(struct ring *r, struct aseq x)
{
	if (!ring_grow(r))
		return false;
	r->head = (r->head + r->cap - 1) % r->cap;
	r->a[r->head] = x;
	r->n++;
	return true;
}

static struct aseq *ring_front(struct ring *r) { return &r->a[r->head]; }

static void ring_pop_front(struct ring *r)
{
	r->head = (r->head + 1) % r->cap;
	r->n--;
}

/* What a sequence of kv tokens holds on its own: in paged-shared, a
 * carrier's first sb blocks of class 0 (the full layers) are the shared
 * prefix's, held once for all carriers while any runs. */
struct own {
	const struct kvp_frag_shape *sh;
	uint32_t P;
	uint64_t sb;            /* shared prefix blocks; 0: no sharing */
};

static uint64_t own_held(const struct own *w, uint64_t kv, bool carrier)
{
	uint64_t b = kvp_frag_seq_bytes(w->sh, kv, w->P);
	if (carrier && w->sb) {
		uint64_t n = kvp_cdiv(kv, w->P);
		b -= (n < w->sb ? n : w->sb) * w->P * w->sh->token_bytes[0];
	}
	return b;
}

static uint64_t own_used(const struct own *w, uint64_t kv, bool carrier)
{
	uint64_t b = kvp_frag_used_bytes(w->sh, kv);
	if (carrier && w->sb) {
		uint64_t t = w->sb * w->P, ub = w->sh->used_token_bytes[0] ? w->sh->used_token_bytes[0]
									   : w->sh->token_bytes[0];
		b -= (kv < t ? kv : t) * ub;
	}
	return b;
}

/* Queue times in a log histogram: bin k >= 1 holds [1e-6 * 1.01^(k-1),
 * 1e-6 * 1.01^k) s, bin 0 anything shorter; 2,800 bins reach 1e6 s. */
#define QBINS 2800
static size_t qbin(double q)
{
	if (q < 1e-6)
		return 0;
	double k = floor(log(q / 1e-6) / log(1.01)) + 1;
	return k >= QBINS - 1 ? QBINS - 1 : (size_t)k;
}

/* The decoding sequences, lazily (see the stance above): slots in a list in
 * running order, a count per residue of base mod P, a min-heap of
 * (finishing clock, order).  A sequence of base b has kv = C - b tokens and
 * gen = kv - p + 1 generated at the start of the step of clock C (its
 * prefill finished sampling the first), and finishes in the step of clock
 * b + p + o - 2, where kv + 1 reaches p + o - 1. */
#define NIL UINT32_MAX
struct lslot {
	struct aseq q;          /* kv and gen unused: they follow from C */
	uint64_t base, order;
	uint32_t prev, next;    /* running order; next also links free slots */
};
struct lheap {
	uint64_t key, order;
	uint32_t slot;
};
struct lazy {
	struct lslot *s;
	uint32_t cap, free, head, tail, n;
	struct lheap *h;
	size_t nh;
	uint32_t *cnt;          /* [P]: sequences with base = r (mod P) */
	uint64_t C, order;
	uint32_t P;
};

static bool heap_less(const struct lheap *a, const struct lheap *b)
{
	return a->key < b->key || (a->key == b->key && a->order < b->order);
}

static void heap_push(struct lazy *z, struct lheap e)
{
	size_t i = z->nh++;
	while (i && heap_less(&e, &z->h[(i - 1) / 2])) {
		z->h[i] = z->h[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	z->h[i] = e;
}

static void heap_pop(struct lazy *z)
{
	struct lheap e = z->h[--z->nh];
	size_t i = 0;
	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= z->nh)
			break;
		if (c + 1 < z->nh && heap_less(&z->h[c + 1], &z->h[c]))
			c++;
		if (!heap_less(&z->h[c], &e))
			break;
		z->h[i] = z->h[c];
		i = c;
	}
	if (z->nh)
		z->h[i] = e;
}

/* Take x, a decoding sequence that follows every lazy one in running order,
 * with x->kv tokens at the start of the step of clock C_next. */
static bool lazy_add(struct lazy *z, const struct aseq *x, uint64_t C_next)
{
	if (z->free == NIL) {
		uint32_t cap = z->cap ? 2 * z->cap : 256;
		struct lslot *s = realloc(z->s, cap * sizeof *s);
		struct lheap *h = s ? realloc(z->h, cap * sizeof *h) : NULL;
		if (s)
			z->s = s;
		if (!h)
			return false;
		z->h = h;
		for (uint32_t k = z->cap; k < cap; k++)
			z->s[k].next = k + 1 < cap ? k + 1 : NIL;
		z->free = z->cap;
		z->cap = cap;
	}
	uint32_t k = z->free;
	struct lslot *l = &z->s[k];
	z->free = l->next;
	l->q = *x;
	l->base = C_next - x->kv;
	l->order = z->order++;
	l->prev = z->tail;
	l->next = NIL;
	if (z->tail != NIL)
		z->s[z->tail].next = k;
	else
		z->head = k;
	z->tail = k;
	z->n++;
	z->cnt[l->base % z->P]++;
	heap_push(z, (struct lheap){l->base + x->p + x->o - 2, l->order, k});
	return true;
}

static void lazy_remove(struct lazy *z, uint32_t k)
{
	struct lslot *l = &z->s[k];
	if (l->prev != NIL)
		z->s[l->prev].next = l->next;
	else
		z->head = l->next;
	if (l->next != NIL)
		z->s[l->next].prev = l->prev;
	else
		z->tail = l->prev;
	z->cnt[l->base % z->P]--;
	l->next = z->free;
	z->free = k;
	z->n--;
}

/* Write the lazy sequences out, in running order, at the start of the step
 * of clock C, into out[0..z->n); the lazy set is empty after. */
static void lazy_write_out(struct lazy *z, struct aseq *out)
{
	size_t n = 0;
	for (uint32_t k = z->head; k != NIL;) {
		struct lslot *l = &z->s[k];
		uint32_t next = l->next;
		struct aseq x = l->q;
		x.kv = z->C - l->base;
		x.gen = x.kv - x.p + 1;
		x.ran = false;
		out[n++] = x;
		lazy_remove(z, k);
		k = next;
	}
	z->nh = 0;
}

/* Room for n sequences in the running list *run and its scratch *spare (the
 * same capacity *cap, doubled from 256 until it holds n; *spare's contents
 * are not kept).  False when out of memory: *run is then still valid (it
 * may have grown) and *spare may be NULL, both for the caller to free. */
static bool run_reserve(struct aseq **run, struct aseq **spare, size_t *cap, size_t n)
{
	if (n <= *cap)
		return true;
	size_t c = *cap ? 2 * *cap : 256;
	while (c < n)
		c *= 2;
	struct aseq *r = realloc(*run, c * sizeof *r);
	if (!r)
		return false;
	*run = r;
	*cap = c;
	free(*spare);
	*spare = malloc(c * sizeof **spare);
	return *spare != NULL;
}

kvp_status kvp_frag_arrivals_run(const struct kvp_frag_config *cfg, const struct kvp_workload *w,
				 struct kvp_frag_result *res, struct kvp_error *err)
{
	/* replay: the length file's rows, in order, at their own times */
	const bool replay = cfg->arrival_rate == 0 && w->arrival_s && w->narrival;
	const uint64_t total = replay ? w->narrival : cfg->requests;
	const double R = replay ? 1 : cfg->arrival_rate, dt = cfg->step_time_s;
	const uint64_t M = cfg->max_batched_tokens;
	const bool contig = res->policy < KVP_FRAG_POLICY_PAGED;
	const uint32_t P = contig ? 1 : res->block_size;
	if (!replay && (!(R > 0) || !isfinite(R)))
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "arrival_rate",
				     "must be a positive, finite number of requests per second");
	if (!(dt > 0) || !isfinite(dt))
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "step_time",
				     "must be a positive, finite number of seconds");
	if (!M)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "max_batched_tokens",
				     "must be at least 1");
	if (!P)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "block size",
				     "must be at least 1");
	/* the steps the arrivals span: the step index is a u64 and a step's time
	 * i x dt must stay exact in a double, so the span is bounded before the
	 * run (Poisson: total / R on average; a replay: its last time) */
	double span_steps = (replay ? w->arrival_s[w->narrival - 1] : (double)total / R) / dt;
	if (!(span_steps <= KVP_FRAG_MAX_STEPS))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0,
				     replay ? "step_time" : "arrival_rate",
				     "%llu requests at %g requests/s with steps of %g s span about "
				     "%.3g steps, more than the 2^53 the simulation counts: raise "
				     "the %s", (unsigned long long)total, replay ? 0.0 : R, dt,
				     span_steps, replay ? "step time (--step-time)"
							: "arrival rate (--arrival-rate) or the step time (--step-time)");
	const struct kvp_frag_shape *sh = &cfg->shape;
	const uint64_t pool = cfg->pool_bytes;
	/* layers that keep every token grow by their bytes per token, and take a
	 * block only when the old length is a multiple of P: the common case
	 * needs no call into the shape, and decoding sequences can be lazy */
	bool linear = true;
	for (uint32_t c = 0; c < sh->nclass; c++)
		linear = linear && (sh->layer[c].kind == KVP_LAYER_FULL || sh->layer[c].kind == KVP_LAYER_MLA);
	const uint64_t tok_bytes = kvp_frag_token_bytes(sh), block_bytes = tok_bytes * P;
	uint64_t used_tok = sh->seq_bytes; /* the bytes a token fills, padding left out */
	used_tok = kvp_frag_used_bytes(sh, 1) - used_tok;
	/* paged-shared: floor(k / P) full blocks of the full layers (class 0,
	 * when it keeps every token) shared by the running carriers */
	struct own ow = {.sh = sh, .P = P};
	if (res->policy == KVP_FRAG_POLICY_PAGED_SHARED && sh->nclass &&
	    (sh->layer[0].kind == KVP_LAYER_FULL || sh->layer[0].kind == KVP_LAYER_MLA))
		ow.sb = cfg->prefix_tokens / P;
	const uint64_t sbt = ow.sb * P; /* the prefix tokens in those blocks */
	const uint64_t prefix_held = sbt * (sh->nclass ? sh->token_bytes[0] : 0);
	const uint64_t prefix_used = sbt * (!sh->nclass ? 0 : sh->used_token_bytes[0]
					    ? sh->used_token_bytes[0] : sh->token_bytes[0]);
	uint64_t refs = 0; /* running carriers */
	struct kvp_frag_arena *arena = NULL;
	struct ring waiting = {0};
	/* run[0..nrun): the explicit running sequences, after the lazy ones */
	struct aseq *run = NULL, *spare = NULL;
	size_t nrun = 0, caprun = 0;
	struct lazy z = {.free = NIL, .head = NIL, .tail = NIL, .C = (uint64_t)1 << 62, .P = P};
	uint64_t *qhist = calloc(QBINS, sizeof *qhist);
	z.cnt = calloc(P, sizeof *z.cnt);
	kvp_status st = KVP_STATUS_OK;
	if (!qhist || !z.cnt)
		goto nomem;
	if (contig && !(arena = kvp_frag_arena_new(pool, res->fit == KVP_FRAG_FIT_BEST)))
		goto nomem;
	uint64_t peak_holes = 0;
	bool head_counted = false; /* the waiting front counted as refused with free memory */
	struct kvp_rng rng, arr;
	kvp_rng_seed(&rng, cfg->seed);
	kvp_rng_seed(&arr, cfg->seed ^ 0x5851f42d4c957f2dULL); /* arrivals: their own stream */
	double next_s = replay ? w->arrival_s[0] : -log(1 - kvp_rng_uniform(&arr)) / R;
	uint64_t drawn = 0, i = 0, held = 0, used = 0, done = 0;
	double sum_live = 0, sum_used = 0, sum_held = 0, sum_ext = 0, sum_lat = 0, sum_queue = 0;
	double last_s = 0;
	for (;;) {
		double now = (double)i * dt;
		while (drawn < total && next_s <= now) {
			struct kvp_frag_req q;
			if (replay)
				kvp_frag_req_make(cfg, &rng, w->prompt.values[drawn], w->output.values[drawn],
						  &q);
			else
				kvp_frag_draw(cfg, w, &rng, &q, 1);
			drawn++;
			if (cfg->progress && drawn % 65536 == 0)
				cfg->progress(cfg->progress_ctx, drawn, total);
			/* contiguous: the reservation, of max_len or p + requested */
			uint64_t len = 0;
			if (contig) {
				uint64_t t = cfg->max_len;
				if (res->policy == KVP_FRAG_POLICY_CONTIGUOUS_REQUEST) {
					/* p <= max_len: compared without forming the
					 * sum, which --max-tokens could overflow */
					uint64_t mt = cfg->max_tokens ? cfg->max_tokens : q.o;
					t = q.p > t || mt >= t - q.p ? t : q.p + mt;
				}
				len = kvp_frag_seq_bytes(sh, t, 1);
			}
			if (contig ? len > pool : kvp_frag_seq_bytes(sh, q.p + q.o, P) > pool) {
				res->dropped++; /* could never run, even alone */
			} else if (!ring_push_back(&waiting, (struct aseq){.arrival_s = next_s, .p = q.p,
									 .o = q.o, .len = len,
									 .carrier = q.prefix != 0})) {
				goto nomem;
			}
			if (replay)
				next_s = drawn < total ? w->arrival_s[drawn] : INFINITY;
			else
				next_s += -log(1 - kvp_rng_uniform(&arr)) / R;
		}
		if (!z.n && !nrun && !waiting.n) {
			if (drawn == total)
				break;
			/* idle until the next arrival: the steps count, nothing runs
			 * (one Poisson gap may be ~40 means: checked before the cast) */
			double kd = ceil(next_s / dt);
			if (!(kd <= KVP_FRAG_MAX_STEPS)) {
				st = kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0,
						   replay ? "step_time" : "arrival_rate",
						   "request %llu arrives at %g s, step %.3g: more "
						   "than the 2^53 steps the simulation counts; raise "
						   "the %s", (unsigned long long)drawn + 1, next_s, kd,
						   replay ? "step time (--step-time)"
							  : "arrival rate (--arrival-rate) or the "
							    "step time (--step-time)");
				goto out;
			}
			uint64_t k = (uint64_t)kd;
			i = k > i ? k : i + 1;
			continue;
		}
		uint64_t budget = M;
		/* the lazy decodes: a token each and the blocks of those at a
		 * boundary, unless that would preempt or overrun the step's tokens:
		 * then they are written out before the explicit ones */
		const uint64_t grow = z.n && !contig ? (uint64_t)z.cnt[z.C % P] * block_bytes : 0;
		if (z.n && (z.n > M || grow > pool - held)) {
			size_t n = z.n + nrun;
			if (!run_reserve(&run, &spare, &caprun, n))
				goto nomem;
			memcpy(spare + z.n, run, nrun * sizeof *run);
			lazy_write_out(&z, spare);
			struct aseq *t = run;
			run = spare;
			spare = t;
			nrun = n;
		}
		const uint64_t nlazy = z.n;
		if (nlazy) {
			held += grow;
			used += nlazy * used_tok;
			budget -= nlazy;
		}
		/* explicit running sequences in admission order: a decode token
		 * each, or the next prefill chunk; the newest give way when blocks
		 * run out (never a lazy one: they come first and are served) */
		for (size_t k = 0; k < nrun && budget; k++) {
			struct aseq *q = &run[k];
			uint64_t want = q->kv < q->p ? q->p - q->kv : 1;
			uint64_t chunk = want < budget ? want : budget;
			uint64_t extra, grown;
			if (linear && chunk == 1 && !(q->carrier && q->kv < sbt)) {
				extra = !contig && q->kv % P == 0 ? block_bytes : 0;
				grown = used_tok;
			} else {
				extra = contig ? 0 : own_held(&ow, q->kv + chunk, q->carrier) -
						     own_held(&ow, q->kv, q->carrier);
				grown = own_used(&ow, q->kv + chunk, q->carrier) -
					own_used(&ow, q->kv, q->carrier);
			}
			while (extra > pool - held && nrun > k) {
				struct aseq v = run[--nrun];
				held -= own_held(&ow, v.kv, v.carrier);
				used -= own_used(&ow, v.kv, v.carrier);
				if (v.carrier && ow.sb && --refs == 0) {
					held -= prefix_held;
					used -= prefix_used;
				}
				/* recompute: its tokens so far are prefilled again */
				v.p += v.gen;
				v.o -= v.gen;
				v.kv = v.gen = 0;
				if (!ring_push_front(&waiting, v))
					goto nomem;
				res->preemptions++;
			}
			if (nrun == k)
				break; /* q itself gave way */
			held += extra;
			used += grown;
			q->kv += chunk;
			q->ran = true;
			budget -= chunk;
		}
		/* admit waiting requests in order while their first chunk fits
		 * (contiguous: their reservation, in one hole) */
		bool frag_blocked = false;
		while (waiting.n && budget && (!cfg->max_seqs || nlazy + nrun < cfg->max_seqs)) {
			struct aseq *q = ring_front(&waiting);
			/* a carrier that finds the prefix held starts past it (a
			 * prefix-cache hit: those tokens are neither held again nor
			 * prefilled); the first takes the prefix blocks too */
			const bool shares = q->carrier && ow.sb, hit = shares && refs;
			uint64_t kv0 = hit ? sbt : 0, left = q->p - kv0;
			uint64_t chunk = left < budget ? left : budget;
			uint64_t need = contig ? q->len : own_held(&ow, kv0 + chunk, q->carrier) +
								  (shares && !hit ? prefix_held : 0);
			if (need > pool - held)
				break;
			if (contig && need && !kvp_frag_arena_alloc(arena, need, res->fit, &q->addr)) {
				frag_blocked = true;
				if (!head_counted)
					res->refused_with_free_memory++;
				head_counted = true;
				break;
			}
			head_counted = false;
			if (contig && kvp_frag_arena_holes(arena) > peak_holes)
				peak_holes = kvp_frag_arena_holes(arena);
			if (!run_reserve(&run, &spare, &caprun, nrun + 1))
				goto nomem;
			struct aseq x = *q;
			ring_pop_front(&waiting);
			if (!x.admitted_once) {
				x.admitted_once = true;
				x.queue_s = now - x.arrival_s;
				res->admitted++;
			}
			x.kv = kv0 + chunk;
			x.ran = true;
			held += need;
			used += own_used(&ow, x.kv, x.carrier) + (shares && !hit ? prefix_used : 0);
			refs += shares;
			budget -= chunk;
			run[nrun++] = x;
			if (nlazy + nrun > res->peak_sequences)
				res->peak_sequences = nlazy + nrun;
		}
		if (held > pool) {
			st = kvp_error_set(err, KVP_STATUS_INTERNAL, NULL, 0, 0, "frag",
					   "a consistency check failed (a bug): arrivals, block %u, "
					   "step %llu: %llu B held in a pool of %llu B", P,
					   (unsigned long long)i, (unsigned long long)held,
					   (unsigned long long)pool);
			goto out;
		}
		/* the step's averages, then its tokens: a finished prefill samples the
		 * first output token, each decode one more */
		sum_live += (double)(nlazy + nrun);
		sum_used += (double)used;
		sum_held += (double)held;
		if (frag_blocked)
			sum_ext += (double)(pool - held);
		res->measured_steps++;
		double end = (double)(i + 1) * dt;
		/* the lazy ones that finish in this step, in running order */
		while (z.nh && z.h[0].key == z.C) {
			uint32_t k = z.h[0].slot;
			struct lslot *l = &z.s[k];
			uint64_t kv = z.C - l->base + 1;
			if (contig && l->q.len)
				kvp_frag_arena_release(arena, l->q.addr, l->q.len);
			held -= contig ? l->q.len : own_held(&ow, kv, l->q.carrier);
			used -= own_used(&ow, kv, l->q.carrier);
			if (l->q.carrier && ow.sb && --refs == 0) {
				held -= prefix_held;
				used -= prefix_used;
			}
			sum_lat += end - l->q.arrival_s;
			sum_queue += l->q.queue_s;
			qhist[qbin(l->q.queue_s)]++;
			done++;
			last_s = end;
			heap_pop(&z);
			lazy_remove(&z, k);
		}
		size_t keep = 0;
		for (size_t k = 0; k < nrun; k++) {
			struct aseq *q = &run[k];
			bool ran = q->ran;
			q->ran = false;
			if (ran && q->kv >= q->p && q->o)
				q->gen++;
			if (ran && q->kv >= q->p && q->gen >= q->o) {
				if (contig && q->len)
					kvp_frag_arena_release(arena, q->addr, q->len);
				held -= contig ? q->len : own_held(&ow, q->kv, q->carrier);
				used -= own_used(&ow, q->kv, q->carrier);
				if (q->carrier && ow.sb && --refs == 0) {
					held -= prefix_held;
					used -= prefix_used;
				}
				sum_lat += end - q->arrival_s;
				sum_queue += q->queue_s;
				qhist[qbin(q->queue_s)]++;
				done++;
				last_s = end;
			} else {
				if (keep != k)
					run[keep] = *q;
				keep++;
			}
		}
		nrun = keep;
		z.C++;
		/* the explicit sequences that decode at the head of the running
		 * order become lazy, from the next step's clock */
		size_t lead = 0;
		if (linear) {
			while (lead < nrun && run[lead].kv >= run[lead].p) {
				if (!lazy_add(&z, &run[lead], z.C))
					goto nomem;
				lead++;
			}
			if (lead) {
				memmove(run, run + lead, (nrun - lead) * sizeof *run);
				nrun -= lead;
			}
		}
#ifdef KVP_CHECK_INVARIANTS
		/* test builds: the kept bytes and carriers against a recount of
		 * every running sequence, the lazy ones from the clock */
		uint64_t rh = 0, ru = 0, rc = 0;
		for (uint32_t k = z.head; k != NIL; k = z.s[k].next) {
			const struct aseq *q = &z.s[k].q;
			uint64_t kv = z.C - z.s[k].base;
			rh += contig ? q->len : own_held(&ow, kv, q->carrier);
			ru += own_used(&ow, kv, q->carrier);
			rc += q->carrier && ow.sb;
		}
		for (size_t k = 0; k < nrun; k++) {
			rh += contig ? run[k].len : own_held(&ow, run[k].kv, run[k].carrier);
			ru += own_used(&ow, run[k].kv, run[k].carrier);
			rc += run[k].carrier && ow.sb;
		}
		if (rc) {
			rh += prefix_held;
			ru += prefix_used;
		}
		if (rh != held || ru != used || rc != refs) {
			fprintf(stderr, "kvplan frag: invariant failed: arrivals, %s block %u, seed "
				"%llu, step %llu: held %llu B, used %llu B, %llu carriers; recounted "
				"%llu, %llu, %llu\n", kvp_frag_policy_name(res->policy), P,
				(unsigned long long)cfg->seed, (unsigned long long)i,
				(unsigned long long)held, (unsigned long long)used,
				(unsigned long long)refs, (unsigned long long)rh,
				(unsigned long long)ru, (unsigned long long)rc);
			abort();
		}
#endif
		i++;
	}
	if (held != 0 || used != 0 || done + res->dropped != total) {
		st = kvp_error_set(err, KVP_STATUS_INTERNAL, NULL, 0, 0, "frag",
				   "a consistency check failed (a bug): arrivals, block %u: %llu B "
				   "still held, %llu of %llu requests accounted for", P,
				   (unsigned long long)held,
				   (unsigned long long)(done + res->dropped),
				   (unsigned long long)total);
		goto out;
	}
	/* the averages run over every step to the last completion, idle ones too */
	double steps = last_s / dt;
	/* replay: the file's own rate, rows over the span of their times */
	double span = replay ? w->arrival_s[w->narrival - 1] - w->arrival_s[0] : 0;
	res->arrival_rate = !replay ? R : span > 0 ? (double)(w->narrival - 1) / span : 0;
	res->over_time = true;
	res->completed = done;
	if (done && steps > 0) {
		res->mean_live_sequences = sum_live / steps;
		res->mean_sequences = res->mean_live_sequences;
		res->max_sequences = (uint64_t)floor(res->mean_sequences + 1e-9);
		res->mean_latency_s = sum_lat / (double)done;
		res->mean_queue_s = sum_queue / (double)done;
		res->throughput_rps = (double)done / last_s;
		res->used_fraction = sum_used / steps / (double)pool;
		res->internal_waste_fraction = (sum_held - sum_used) / steps / (double)pool;
		res->external_waste_fraction = sum_ext / steps / (double)pool;
		res->free_fraction = 1 - (sum_held + sum_ext) / steps / (double)pool;
		uint64_t rank = (uint64_t)ceil(0.99 * (double)done), seen = 0;
		for (size_t k = 0; k < QBINS; k++)
			if ((seen += qhist[k]) >= rank) {
				res->p99_queue_s = k ? 1e-6 * pow(1.01, (double)k) : 0;
				break;
			}
		if (sum_live > 0) {
			/* as the saturated mode counts it (frag-sim.c): the empty
			 * slots held, per live sequence, in tokens of every layer */
			res->waste_tokens_per_sequence =
				tok_bytes ? (sum_held - sum_used) / (double)tok_bytes / sum_live : 0;
			res->held_bytes_per_sequence = sum_held / sum_live;
			/* the two printed figures of internal waste say one thing:
			 * slots per sequence x token bytes x live = int.w x pool */
			double a = res->waste_tokens_per_sequence * (double)tok_bytes *
				   res->mean_live_sequences,
			       b = res->internal_waste_fraction * (double)pool;
			if (!(fabs(a - b) <= 1e-6 * (double)pool)) {
				st = kvp_error_set(err, KVP_STATUS_INTERNAL, NULL, 0, 0, "frag",
						   "a consistency check failed (a bug): arrivals, "
						   "block %u: waste %.6g slots per sequence against "
						   "internal waste %.6g of the pool", P,
						   res->waste_tokens_per_sequence,
						   res->internal_waste_fraction);
				goto out;
			}
		}
	}
	res->pool_bytes = pool;
	if (contig) {
		/* as the saturated mode counts them: 16 B per reservation and hole */
		res->metadata_bytes = (res->peak_sequences + peak_holes) * 16;
	} else {
		res->num_blocks = tok_bytes ? pool / (tok_bytes * P) : 0;
		res->expected_waste_tokens = (P - 1) / 2.0;
		res->metadata_bytes = res->peak_sequences * ((cfg->max_len + P - 1) / P) * 4 +
				      res->num_blocks * 8;
	}
	goto out;
nomem:
	st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
out:
	free(waiting.a);
	free(run);
	free(spare);
	free(z.s);
	free(z.h);
	free(z.cnt);
	free(qhist);
	kvp_frag_arena_free(arena);
	return st;
}
