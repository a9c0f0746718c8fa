/* frag-ref.c: the plain reference simulator (see frag-ref.h).
 *
 * Read straight from the contract in src/frag/frag.h: step t first lets go of the
 * sequences that have generated all their output (admitted at a, they leave
 * at step a + o + 1), then every live sequence appends one token; a paged
 * sequence takes a block of every class still growing when its old length is
 * a multiple of P, and when the pool has too few free bytes the newest live
 * sequences are preempted (pushed back, first to be readmitted, with the
 * tokens they have).  Between steps the waiting requests are admitted in order
 * while they fit.  Every quantity is recomputed from the live array; nothing
 * is kept incrementally but the counts. */
#include "frag-ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/dist.h"
#include "model/model.h"

struct rreq {
	uint64_t p, o;
	bool carrier;
};

struct rseq {
	uint64_t a, p, o;       /* admitted at step a with p tokens, o to generate */
	uint64_t addr, len;     /* contiguous: the reservation */
	bool carrier;
};

struct hole {
	uint64_t addr, len;
};

struct ref {
	const struct kvp_frag_config *cfg;
	const struct kvp_workload *w;
	enum kvp_frag_policy policy;
	enum kvp_frag_fit fit;
	uint32_t P;
	bool paged, shared;
	uint64_t prefix_bytes;        /* the shared prefix's full blocks, held once */
	uint64_t t;
	struct rseq *live;
	size_t nlive;
	struct rreq *waiting;         /* preempted: last in, first out */
	size_t nwaiting;
	struct hole *holes;           /* sorted by address */
	size_t nholes;
	struct kvp_rng rng;
	uint64_t drawn;
	bool have_next;
	struct rreq next;
	uint64_t fresh;
	bool head_counted;
	struct frag_ref_row *out;
};

/* Bytes of a sequence of l tokens in blocks of P (P = 1: the tokens). */
static uint64_t bytes_at(const struct kvp_frag_shape *sh, uint64_t l, uint32_t P)
{
	uint64_t b = sh->seq_bytes;
	for (uint32_t c = 0; c < sh->nclass; c++)
		b += kvp_spec_layer_tokens(&sh->layer[c], l, P) * sh->token_bytes[c];
	return b;
}

/* The bytes a sequence holds on its own: the shared prefix is not its. */
static uint64_t own_held(const struct ref *r, uint64_t l, bool carrier)
{
	uint64_t b = bytes_at(&r->cfg->shape, l, r->P);
	return carrier && r->shared ? b - r->prefix_bytes : b;
}

static uint64_t own_used(const struct ref *r, uint64_t l, bool carrier)
{
	uint64_t b = bytes_at(&r->cfg->shape, l, 1);
	return carrier && r->shared ? b - r->prefix_bytes : b;
}

static size_t carriers(const struct ref *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->nlive; i++)
		n += r->live[i].carrier;
	return n;
}

/* Tokens sequence q holds after step t's growth. */
static uint64_t tokens(const struct ref *r, const struct rseq *q) { return q->p + (r->t - q->a); }

static uint64_t total_held(const struct ref *r, uint64_t back)
{
	uint64_t h = 0;
	for (size_t i = 0; i < r->nlive; i++) {
		const struct rseq *q = &r->live[i];
		h += r->paged ? own_held(r, tokens(r, q) - back, q->carrier) : q->len;
	}
	if (r->paged && r->shared && carriers(r))
		h += r->prefix_bytes;
	return h;
}

static uint64_t total_used(const struct ref *r)
{
	uint64_t u = 0;
	for (size_t i = 0; i < r->nlive; i++)
		u += own_used(r, tokens(r, &r->live[i]), r->live[i].carrier);
	if (r->shared && carriers(r))
		u += r->prefix_bytes;
	return u;
}

/* The next request of the stream, drawn as the contract says: the
 * workload's lengths, the prefix for a share of them, then the caps. */
static bool peek_stream(struct ref *r, struct rreq *out)
{
	const struct kvp_frag_config *c = r->cfg;
	if (!r->have_next) {
		if (r->drawn == c->requests)
			return false;
		uint64_t p, o;
		kvp_workload_sample(r->w, &r->rng, &p, &o);
		bool carrier = false;
		if (c->prefix_tokens && c->prefix_fraction >= 1)
			carrier = true;
		else if (c->prefix_tokens && c->prefix_fraction > 0)
			carrier = kvp_rng_uniform(&r->rng) < c->prefix_fraction;
		if (carrier)
			p += c->prefix_tokens;
		p = p < c->max_len ? p : c->max_len;
		o = o < c->max_len - p ? o : c->max_len - p;
		if (c->max_tokens && o > c->max_tokens)
			o = c->max_tokens;
		r->next = (struct rreq){p, o, carrier};
		r->have_next = true;
		r->drawn++;
	}
	*out = r->next;
	return true;
}

/* ------------------------------------------------------------ holes */

static bool hole_take(struct ref *r, uint64_t len, uint64_t *addr)
{
	if (len == 0) {
		*addr = 0; /* nothing to place */
		return true;
	}
	size_t pick = r->nholes;
	for (size_t i = 0; i < r->nholes; i++) {
		if (r->holes[i].len < len)
			continue;
		if (r->fit == KVP_FRAG_FIT_FIRST) {
			pick = i;
			break;
		}
		if (pick == r->nholes || r->holes[i].len < r->holes[pick].len)
			pick = i;
	}
	if (pick == r->nholes)
		return false;
	*addr = r->holes[pick].addr;
	r->holes[pick].addr += len;
	r->holes[pick].len -= len;
	if (!r->holes[pick].len) {
		memmove(&r->holes[pick], &r->holes[pick + 1], (r->nholes - pick - 1) * sizeof *r->holes);
		r->nholes--;
	}
	return true;
}

static void hole_give(struct ref *r, uint64_t addr, uint64_t len)
{
	if (len == 0)
		return;
	size_t i = 0;
	while (i < r->nholes && r->holes[i].addr < addr)
		i++;
	memmove(&r->holes[i + 1], &r->holes[i], (r->nholes - i) * sizeof *r->holes);
	r->holes[i] = (struct hole){addr, len};
	r->nholes++;
	if (i + 1 < r->nholes && addr + len == r->holes[i + 1].addr) {
		r->holes[i].len += r->holes[i + 1].len;
		memmove(&r->holes[i + 1], &r->holes[i + 2], (r->nholes - i - 2) * sizeof *r->holes);
		r->nholes--;
	}
	if (i > 0 && r->holes[i - 1].addr + r->holes[i - 1].len == addr) {
		r->holes[i - 1].len += r->holes[i].len;
		memmove(&r->holes[i], &r->holes[i + 1], (r->nholes - i - 1) * sizeof *r->holes);
		r->nholes--;
	}
}

/* ------------------------------------------------------------ admission */

enum { REF_BLOCKED, REF_DONE };

/* Admit waiting requests while they fit; frag_blocked: the first that did
 * not fit found enough free bytes in total. */
static int admit(struct ref *r, bool *frag_blocked)
{
	const struct kvp_frag_config *c = r->cfg;
	uint64_t held = total_held(r, 0);
	size_t carrying = carriers(r);
	*frag_blocked = false;
	for (;;) {
		struct rreq q;
		bool from_stack = r->nwaiting > 0;
		if (from_stack)
			q = r->waiting[r->nwaiting - 1];
		else if (!peek_stream(r, &q))
			return REF_DONE;
		if (c->max_seqs && r->nlive >= c->max_seqs)
			return REF_BLOCKED;
		uint64_t need, addr = 0;
		if (r->paged) {
			need = own_held(r, q.p, q.carrier);
			if (q.carrier && r->shared && !carrying)
				need += r->prefix_bytes;
		} else {
			uint64_t len = c->max_len;
			if (r->policy == KVP_FRAG_POLICY_CONTIGUOUS_REQUEST) {
				uint64_t want = q.p + (c->max_tokens ? c->max_tokens : q.o);
				len = want < len ? want : len;
			}
			need = bytes_at(&c->shape, len, 1);
		}
		bool too_big = need > c->pool_bytes, fits = false;
		if (!too_big)
			fits = r->paged ? need <= c->pool_bytes - held : hole_take(r, need, &addr);
		if (!too_big && !fits) {
			if (!r->paged && need <= c->pool_bytes - held) {
				*frag_blocked = true;
				if (!r->head_counted && r->fresh >= c->warmup) {
					r->out->refused_with_free_memory++;
					r->head_counted = true;
				}
			}
			return REF_BLOCKED;
		}
		if (too_big)
			r->out->dropped++;
		if (fits) {
			held += need;
			carrying += q.carrier;
			r->live[r->nlive++] = (struct rseq){r->t, q.p, q.o, addr, need, q.carrier};
			if (r->nlive > r->out->peak_sequences)
				r->out->peak_sequences = r->nlive;
		}
		if (from_stack) {
			r->nwaiting--;
		} else {
			r->have_next = false;
			r->fresh++;
			r->out->admitted += fits;
		}
		r->head_counted = false;
	}
}

/* ------------------------------------------------------------ steps */

static void step(struct ref *r)
{
	const struct kvp_frag_config *c = r->cfg;
	r->t++;
	/* departures: o tokens generated after o steps */
	size_t k = 0;
	for (size_t i = 0; i < r->nlive; i++) {
		struct rseq *q = &r->live[i];
		if (r->t - 1 - q->a == q->o) {
			if (!r->paged)
				hole_give(r, q->addr, q->len);
		} else {
			r->live[k++] = *q;
		}
	}
	r->nlive = k;
	if (!r->paged)
		return;
	/* growth: the bytes each sequence takes to go from l to l + 1 tokens;
	 * the newest give way while they do not fit */
	uint64_t need = 0, held = total_held(r, 1);
	size_t carrying = carriers(r);
	for (size_t i = 0; i < r->nlive; i++) {
		const struct rseq *q = &r->live[i];
		uint64_t l = tokens(r, q) - 1;
		need += own_held(r, l + 1, q->carrier) - own_held(r, l, q->carrier);
	}
	while (r->nlive && need > c->pool_bytes - held) {
		struct rseq v = r->live[--r->nlive];
		uint64_t g = r->t - 1 - v.a, l = v.p + g;
		need -= own_held(r, l + 1, v.carrier) - own_held(r, l, v.carrier);
		held -= own_held(r, l, v.carrier);
		if (v.carrier && r->shared && --carrying == 0)
			held -= r->prefix_bytes;
		if (r->nlive == 0) {
			r->out->dropped++;
		} else {
			r->waiting[r->nwaiting++] = (struct rreq){v.p + g, v.o - g, v.carrier};
			r->out->preemptions++;
		}
	}
}

bool frag_ref_run(const struct kvp_frag_config *cfg, const struct kvp_workload *w,
		  enum kvp_frag_policy policy, enum kvp_frag_fit fit, uint32_t block,
		  struct frag_ref_row *out)
{
	struct ref r = {.cfg = cfg, .w = w, .policy = policy, .fit = fit, .out = out};
	memset(out, 0, sizeof *out);
	r.paged = policy == KVP_FRAG_POLICY_PAGED || policy == KVP_FRAG_POLICY_PAGED_SHARED;
	r.shared = policy == KVP_FRAG_POLICY_PAGED_SHARED;
	r.P = r.paged ? block : 1;
	const struct kvp_frag_shape *sh = &cfg->shape;
	/* carriers share floor(k / P) full blocks of the layers keeping every
	 * token (a windowed first class keeps no whole prefix) */
	if (r.shared && sh->nclass &&
	    (sh->layer[0].kind == KVP_LAYER_FULL || sh->layer[0].kind == KVP_LAYER_MLA))
		r.prefix_bytes = cfg->prefix_tokens / r.P * r.P * sh->token_bytes[0];
	/* at most one live sequence and one waiting request per request drawn,
	 * and one hole more than there are reservations */
	size_t most = (size_t)cfg->requests + 2;
	r.live = malloc(most * sizeof *r.live);
	r.waiting = malloc(most * sizeof *r.waiting);
	r.holes = malloc(most * sizeof *r.holes);
	bool ok = r.live && r.waiting && r.holes;
	if (ok) {
		r.holes[0] = (struct hole){0, cfg->pool_bytes};
		r.nholes = 1;
		kvp_rng_seed(&r.rng, cfg->seed);
	}
	double sum_used = 0, sum_held = 0, sum_live = 0, sum_ext = 0;
	while (ok) {
		bool frag_blocked;
		if (admit(&r, &frag_blocked) == REF_DONE)
			break;
		if (r.fresh >= cfg->warmup) {
			uint64_t held = total_held(&r, 0);
			out->measured_steps++;
			sum_used += (double)total_used(&r);
			sum_held += (double)held;
			sum_live += (double)r.nlive;
			if (frag_blocked)
				sum_ext += (double)(cfg->pool_bytes - held);
		}
		step(&r);
	}
	if (ok && out->measured_steps) {
		double n = (double)out->measured_steps, pool = (double)cfg->pool_bytes;
		out->used_fraction = sum_used / n / pool;
		out->internal_waste_fraction = (sum_held - sum_used) / n / pool;
		out->external_waste_fraction = sum_ext / n / pool;
		out->free_fraction = 1 - (sum_held + sum_ext) / n / pool;
		out->mean_sequences = sum_live / n;
	}
	free(r.live);
	free(r.waiting);
	free(r.holes);
	return ok;
}

/* ------------------------------------------------------------ arrivals */

/* Arrivals over time, read from kvp_frag_arrivals_run's contract in
 * src/frag/frag.h and the model of frag-arrivals.c's opening comment: requests
 * arrive at the times of a Poisson process (gaps -ln(1 - u) / R from a
 * generator of its own, seeded with seed ^ 0x5851f42d4c957f2d, lengths from
 * the stream above), wait first come first served; step i starts at i dt,
 * lets in what has arrived, gives each running sequence in admission order a
 * decode token or its next prefill chunk out of max_batched_tokens (a paged
 * one that finds too few free bytes preempts the newest: back to the front
 * of the queue, its tokens to prefill again), admits from the front while the
 * first chunk's blocks (contiguous: the whole reservation, in one hole) fit,
 * then samples a token for each sequence that ran with its prompt done and
 * lets go of those that have all their output.  Everything is recomputed by
 * scanning the running array. */
struct aref {
	double arrival_s, queue_s;
	uint64_t p, o, kv, gen, addr, len;
	bool admitted, ran, carrier;
};

/* paged-shared: the carriers' first sb blocks of the full layers are the
 * shared prefix's, counted once (aref_total) while any carrier runs */
static uint64_t aref_own(const struct ref *r, uint64_t kv, bool carrier, uint64_t sb)
{
	uint64_t b = bytes_at(&r->cfg->shape, kv, r->P);
	uint64_t n = (kv + r->P - 1) / r->P;
	if (carrier && sb)
		b -= (n < sb ? n : sb) * r->P * r->cfg->shape.token_bytes[0];
	return b;
}

static uint64_t aref_held(const struct ref *r, const struct aref *q, uint64_t sb)
{
	return r->paged ? aref_own(r, q->kv, q->carrier, sb) : q->len;
}

static uint64_t aref_used(const struct ref *r, const struct aref *q, uint64_t sb)
{
	uint64_t b = bytes_at(&r->cfg->shape, q->kv, 1), t = sb * r->P;
	if (q->carrier && sb)
		b -= (q->kv < t ? q->kv : t) * r->cfg->shape.token_bytes[0];
	return b;
}

/* Held or used bytes of all running sequences, the shared prefix once. */
static uint64_t aref_total(const struct ref *r, const struct aref *live, size_t n, uint64_t sb,
			   bool used)
{
	uint64_t b = 0;
	bool carrying = false;
	for (size_t j = 0; j < n; j++) {
		b += used ? aref_used(r, &live[j], sb) : aref_held(r, &live[j], sb);
		carrying = carrying || live[j].carrier;
	}
	if (sb && carrying)
		b += sb * r->P * r->cfg->shape.token_bytes[0];
	return b;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

bool frag_ref_arrivals(const struct kvp_frag_config *cfg, const struct kvp_workload *w,
		       enum kvp_frag_policy policy, enum kvp_frag_fit fit, uint32_t block,
		       struct frag_ref_row *out)
{
	struct ref r = {.cfg = cfg, .w = w, .policy = policy, .fit = fit, .out = out};
	memset(out, 0, sizeof *out);
	r.paged = policy >= KVP_FRAG_POLICY_PAGED;
	r.P = r.paged ? block : 1;
	const struct kvp_frag_shape *sh = &cfg->shape;
	const uint64_t pool = cfg->pool_bytes, M = cfg->max_batched_tokens;
	/* paged-shared: floor(k / P) blocks of a first class that keeps every token */
	const uint64_t sb = policy == KVP_FRAG_POLICY_PAGED_SHARED && sh->nclass &&
			    (sh->layer[0].kind == KVP_LAYER_FULL || sh->layer[0].kind == KVP_LAYER_MLA)
		? cfg->prefix_tokens / r.P : 0;
	const double dt = cfg->step_time_s, R = cfg->arrival_rate;
	size_t most = (size_t)cfg->requests + 2;
	struct aref *live = malloc(most * sizeof *live), *wait = malloc(most * sizeof *wait);
	double *queues = malloc(most * sizeof *queues);
	r.holes = malloc(most * sizeof *r.holes);
	if (!live || !wait || !queues || !r.holes) {
		free(live);
		free(wait);
		free(queues);
		free(r.holes);
		return false;
	}
	r.holes[0] = (struct hole){0, pool};
	r.nholes = 1;
	kvp_rng_seed(&r.rng, cfg->seed);
	struct kvp_rng arr;
	kvp_rng_seed(&arr, cfg->seed ^ 0x5851f42d4c957f2dULL);
	double next_s = -log(1 - kvp_rng_uniform(&arr)) / R;
	size_t nlive = 0, nwait = 0, done = 0;
	bool head_counted = false;
	double sum_live = 0, sum_used = 0, sum_held = 0, sum_ext = 0, sum_lat = 0, sum_queue = 0;
	double last_s = 0;
	for (uint64_t i = 0;;) {
		double now = (double)i * dt;
		struct rreq q;
		while (next_s <= now && peek_stream(&r, &q)) {
			r.have_next = false;
			uint64_t t = cfg->max_len;
			if (policy == KVP_FRAG_POLICY_CONTIGUOUS_REQUEST) {
				uint64_t want = q.p + (cfg->max_tokens ? cfg->max_tokens : q.o);
				t = want < t ? want : t;
			}
			uint64_t len = r.paged ? 0 : bytes_at(sh, t, 1);
			if (r.paged ? bytes_at(sh, q.p + q.o, r.P) > pool : len > pool)
				out->dropped++;
			else
				wait[nwait++] = (struct aref){.arrival_s = next_s, .p = q.p, .o = q.o,
							     .len = len, .carrier = q.carrier};
			next_s += -log(1 - kvp_rng_uniform(&arr)) / R;
		}
		if (!nlive && !nwait) {
			if (r.drawn == cfg->requests && !r.have_next)
				break;
			uint64_t k = (uint64_t)ceil(next_s / dt);
			i = k > i ? k : i + 1;
			continue;
		}
		uint64_t budget = M;
		for (size_t k = 0; k < nlive && budget; k++) {
			struct aref *s = &live[k];
			uint64_t want = s->kv < s->p ? s->p - s->kv : 1;
			uint64_t chunk = want < budget ? want : budget;
			if (r.paged) {
				uint64_t extra = aref_own(&r, s->kv + chunk, s->carrier, sb) -
						 aref_own(&r, s->kv, s->carrier, sb);
				for (;;) {
					uint64_t held = aref_total(&r, live, nlive, sb, false);
					if (extra <= pool - held || nlive == k)
						break;
					struct aref v = live[--nlive];
					v.p += v.gen;
					v.o -= v.gen;
					v.kv = v.gen = 0;
					memmove(wait + 1, wait, nwait * sizeof *wait);
					wait[0] = v;
					nwait++;
					out->preemptions++;
				}
				if (nlive == k)
					break;
			}
			s->kv += chunk;
			s->ran = true;
			budget -= chunk;
		}
		bool frag_blocked = false;
		while (nwait && budget && (!cfg->max_seqs || nlive < cfg->max_seqs)) {
			struct aref *s = &wait[0];
			/* a carrier finding the prefix held starts past its blocks */
			bool carrying = false;
			for (size_t j = 0; j < nlive; j++)
				carrying = carrying || live[j].carrier;
			uint64_t kv0 = s->carrier && sb && carrying ? sb * r.P : 0;
			uint64_t chunk = s->p - kv0 < budget ? s->p - kv0 : budget;
			uint64_t need = r.paged ? aref_own(&r, kv0 + chunk, s->carrier, sb) : s->len;
			if (s->carrier && sb && !carrying)
				need += sb * r.P * sh->token_bytes[0];
			uint64_t held = aref_total(&r, live, nlive, sb, false);
			if (need > pool - held)
				break;
			if (!r.paged && !hole_take(&r, need, &s->addr)) {
				frag_blocked = true;
				if (!head_counted)
					out->refused_with_free_memory++;
				head_counted = true;
				break;
			}
			head_counted = false;
			struct aref x = *s;
			memmove(wait, wait + 1, (nwait - 1) * sizeof *wait);
			nwait--;
			if (!x.admitted) {
				x.admitted = true;
				x.queue_s = now - x.arrival_s;
				out->admitted++;
			}
			x.kv = kv0 + chunk;
			x.ran = true;
			budget -= chunk;
			live[nlive++] = x;
			if (nlive > out->peak_sequences)
				out->peak_sequences = nlive;
		}
		uint64_t held = aref_total(&r, live, nlive, sb, false);
		uint64_t used = aref_total(&r, live, nlive, sb, true);
		sum_live += (double)nlive;
		sum_used += (double)used;
		sum_held += (double)held;
		if (frag_blocked)
			sum_ext += (double)(pool - held);
		out->measured_steps++;
		double end = (double)(i + 1) * dt;
		size_t k = 0;
		for (size_t j = 0; j < nlive; j++) {
			struct aref *s = &live[j];
			bool ran = s->ran;
			s->ran = false;
			if (ran && s->kv >= s->p && s->o)
				s->gen++;
			if (ran && s->kv >= s->p && s->gen >= s->o) {
				if (!r.paged)
					hole_give(&r, s->addr, s->len);
				sum_lat += end - s->arrival_s;
				sum_queue += s->queue_s;
				queues[done++] = s->queue_s;
				last_s = end;
			} else {
				live[k++] = *s;
			}
		}
		nlive = k;
		i++;
	}
	double steps = last_s / dt;
	out->completed = done;
	if (done && steps > 0) {
		out->mean_live_sequences = sum_live / steps;
		out->mean_sequences = out->mean_live_sequences;
		out->mean_latency_s = sum_lat / (double)done;
		out->mean_queue_s = sum_queue / (double)done;
		out->throughput_rps = (double)done / last_s;
		out->used_fraction = sum_used / steps / (double)pool;
		out->internal_waste_fraction = (sum_held - sum_used) / steps / (double)pool;
		out->external_waste_fraction = sum_ext / steps / (double)pool;
		out->free_fraction = 1 - (sum_held + sum_ext) / steps / (double)pool;
		qsort(queues, done, sizeof *queues, cmp_double);
		out->p99_queue_s = queues[(size_t)ceil(0.99 * (double)done) - 1];
	}
	free(live);
	free(wait);
	free(queues);
	free(r.holes);
	return true;
}
