/* frag-arrivals.c: `kvplan frag --arrival-rate`: requests arriving over time
 * instead of always waiting (see kvp_frag_arrivals_run in frag.h), run on
 * the serving-loop simulator (time/serve-sim.h) like `kvplan serve`: one
 * engine loop for both.  This file is frag's side of it: the request stream
 * (drawn as the saturated mode draws it, replayed from a length file's
 * times), the memory model of each row (what a sequence holds in bytes
 * under a layout and block size) and the measures over the steps.
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
 * The loop's settings for frag: steps of a fixed dt on a grid from 0 (step i
 * covers [i dt, (i + 1) dt): the requests that arrived by i dt may be
 * admitted at its start; an idle engine waits for the step after the next
 * arrival), admission in a step that preempted too, no cap on the running
 * sequences but cfg->max_seqs.  A sequence admitted at step a and finishing
 * in step j ran j + 1 - a steps, so with no preemption the time-average of
 * running sequences equals the completion rate times the mean (latency -
 * queue) exactly (Little's law), and R times it within the sampling error
 * of the Poisson arrivals.
 *
 * When every layer keeps every token (full attention, MLA) a decoding
 * sequence grows by a block each P tokens (a reservation: by nothing) and
 * fills a token's bytes a step: the memory says so (step_period) and the
 * loop keeps the decoding sequences lazily (time/serve-sim-memory.c), a
 * step O(1) plus the sequences that change phase in it, the numbers the
 * plain loop's; windowed or state layers run the plain loop. */
#include "frag/frag.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/dist.h"
#include "base/units.h"
#include "frag/frag-requests.h"
#include "time/serve-sim.h"

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


/* One row's run: the stream, the memory model and the measures. */
struct arrivals {
	const struct kvp_frag_config *cfg;
	const struct kvp_workload *w;
	struct kvp_frag_result *res;
	const struct kvp_frag_shape *sh;
	struct own ow;
	bool contig, replay;
	/* every layer keeps every token (full attention, MLA): a sequence of kv
	 * tokens holds its state and ceil(kv / P) blocks of block_bytes and
	 * fills kv x used_tok, with no call into the shape */
	bool linear;
	uint64_t block_bytes, used_tok;
	uint64_t total, drawn, pool;
	double R, next_s;
	struct kvp_rng rng, arr;
	uint64_t prefix_used, prefix_held;
	struct kvp_frag_arena *arena;
	uint64_t peak_holes;
	bool head_counted;       /* the waiting front counted as refused with free memory */
	double sum_live, sum_used, sum_held, sum_ext, sum_lat, sum_queue;
	uint64_t done, *qhist;
};

/* A contiguous row's reservation for a request: max_len, or p plus the
 * requested tokens (contiguous-request), in bytes. */
static uint64_t reservation(const struct arrivals *a, uint64_t p, uint64_t o)
{
	const struct kvp_frag_config *cfg = a->cfg;
	uint64_t t = cfg->max_len;
	if (a->res->policy == KVP_FRAG_POLICY_CONTIGUOUS_REQUEST) {
		/* p <= max_len: compared without forming the sum, which
		 * --max-tokens could overflow */
		uint64_t mt = cfg->max_tokens ? cfg->max_tokens : o;
		t = p > t || mt >= t - p ? t : p + mt;
	}
	return kvp_frag_seq_bytes(a->sh, t, 1);
}

/* The loop's source: the next request that can run at all (one that
 * cannot even alone is dropped). */
static kvp_status next_request(void *ctx, struct kvp_serve_arrival *out, struct kvp_error *err)
{
	struct arrivals *a = ctx;
	const struct kvp_frag_config *cfg = a->cfg;
	(void)err;
	while (a->drawn < a->total) {
		struct kvp_frag_req q;
		double t = a->next_s;
		if (a->replay)
			kvp_frag_req_make(cfg, &a->rng, a->w->prompt.values[a->drawn],
					  a->w->output.values[a->drawn], &q);
		else
			kvp_frag_draw(cfg, a->w, &a->rng, &q, 1);
		a->drawn++;
		if (cfg->progress && a->drawn % 65536 == 0)
			cfg->progress(cfg->progress_ctx, a->drawn, a->total);
		if (a->replay)
			a->next_s = a->drawn < a->total ? a->w->arrival_s[a->drawn] : INFINITY;
		else
			a->next_s += -log(1 - kvp_rng_uniform(&a->arr)) / a->R;
		uint64_t need = a->contig ? reservation(a, q.p, q.o)
					  : kvp_frag_seq_bytes(a->sh, q.p + q.o, a->ow.P);
		if (need > a->pool) {
			a->res->dropped++; /* could never run, even alone */
			continue;
		}
		*out = (struct kvp_serve_arrival){t, q.p, q.o, q.prefix != 0};
		return KVP_STATUS_OK;
	}
	out->arrival_s = INFINITY;
	return KVP_STATUS_OK;
}

/* Test builds: a shortcut's bytes against the shape's own count (the
 * count is not even computed in other builds). */
#ifdef KVP_CHECK_INVARIANTS
#define CHECK_BYTES(a, what, fast, shape) check_bytes((a), (what), (fast), (shape))
static void check_bytes(const struct arrivals *a, const char *what, uint64_t fast, uint64_t shape)
{
	if (fast != shape) {
		fprintf(stderr, "kvplan frag: invariant failed: arrivals, %s block %u, seed %llu: "
			"%s %llu B, from the shape %llu B\n", kvp_frag_policy_name(a->res->policy),
			a->ow.P, (unsigned long long)a->cfg->seed, what, (unsigned long long)fast,
			(unsigned long long)shape);
		abort();
	}
}
#else
#define CHECK_BYTES(a, what, fast, shape) ((void)0)
#endif

/* The memory model: what a request holds at its tokens (the loop keeps
 * the sum; test builds recount every running request each step). */
static uint64_t held(void *ctx, const struct kvp_serve_view *v)
{
	const struct arrivals *a = ctx;
	if (a->contig)
		return reservation(a, v->prompt, v->output);
	if (a->linear && !(v->carrier && a->ow.sb)) {
		uint64_t b = a->sh->seq_bytes + kvp_cdiv(v->tokens, a->ow.P) * a->block_bytes;
		CHECK_BYTES(a, "held", b, own_held(&a->ow, v->tokens, v->carrier));
		return b;
	}
	return own_held(&a->ow, v->tokens, v->carrier);
}

/* The measure summed over the running requests each step: the bytes filled. */
static uint64_t used_of(void *ctx, const struct kvp_serve_view *v)
{
	const struct arrivals *a = ctx;
	if (a->linear && !(v->carrier && a->ow.sb)) {
		uint64_t b = a->sh->seq_bytes + v->tokens * a->used_tok;
		CHECK_BYTES(a, "used", b, own_used(&a->ow, v->tokens, v->carrier));
		return b;
	}
	return own_used(&a->ow, v->tokens, v->carrier);
}

/* Contiguous: the reservation in one hole of the arena. */
static bool admit(void *ctx, const struct kvp_serve_view *v, uint64_t units, uint64_t *tag)
{
	struct arrivals *a = ctx;
	(void)v;
	if (units && !kvp_frag_arena_alloc(a->arena, units, a->res->fit, tag)) {
		if (!a->head_counted)
			a->res->refused_with_free_memory++;
		a->head_counted = true;
		return false;
	}
	a->head_counted = false;
	if (kvp_frag_arena_holes(a->arena) > a->peak_holes)
		a->peak_holes = kvp_frag_arena_holes(a->arena);
	return true;
}

static void release(void *ctx, const struct kvp_serve_view *v, uint64_t units, uint64_t tag)
{
	struct arrivals *a = ctx;
	(void)v;
	if (units)
		kvp_frag_arena_release(a->arena, tag, units);
}

/* A step's measures, after its schedule: the live sequences, the bytes
 * they hold and fill, the free bytes while a reservation found no hole. */
static void on_step(void *ctx, size_t n, uint64_t held_bytes, uint64_t used, bool refused)
{
	struct arrivals *a = ctx;
	a->sum_live += (double)n;
	a->sum_used += (double)used;
	a->sum_held += (double)held_bytes;
	if (refused)
		a->sum_ext += (double)(a->pool - held_bytes);
	a->res->measured_steps++;
	if (n > a->res->peak_sequences)
		a->res->peak_sequences = n;
}

static void on_done(void *ctx, const struct kvp_serve_done *d)
{
	struct arrivals *a = ctx;
	a->sum_lat += d->e2e_s;
	a->sum_queue += d->queue_s;
	a->qhist[qbin(d->queue_s)]++;
	a->done++;
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
	const uint64_t tok_bytes = kvp_frag_token_bytes(sh);
	struct arrivals *a = calloc(1, sizeof *a);
	struct kvp_serve_result *sr = malloc(sizeof *sr);
	uint64_t *qhist = calloc(QBINS, sizeof *qhist);
	kvp_status st = KVP_STATUS_OK;
	if (!a || !sr || !qhist)
		goto nomem;
	*a = (struct arrivals){.cfg = cfg, .w = w, .res = res, .sh = sh, .ow = {.sh = sh, .P = P},
			       .contig = contig, .replay = replay, .total = total, .pool = pool,
			       .R = R, .qhist = qhist};
	/* paged-shared: floor(k / P) full blocks of the full layers (class 0,
	 * when it keeps every token) shared by the running carriers */
	if (res->policy == KVP_FRAG_POLICY_PAGED_SHARED && sh->nclass &&
	    (sh->layer[0].kind == KVP_LAYER_FULL || sh->layer[0].kind == KVP_LAYER_MLA))
		a->ow.sb = cfg->prefix_tokens / P;
	const uint64_t sbt = a->ow.sb * P; /* the prefix tokens in those blocks */
	a->linear = true;
	for (uint32_t c = 0; c < sh->nclass; c++)
		a->linear = a->linear &&
			    (sh->layer[c].kind == KVP_LAYER_FULL || sh->layer[c].kind == KVP_LAYER_MLA);
	a->block_bytes = tok_bytes * P;
	a->used_tok = kvp_frag_used_bytes(sh, 1) - sh->seq_bytes; /* padding left out */
	a->prefix_held = sbt * (sh->nclass ? sh->token_bytes[0] : 0);
	a->prefix_used = sbt * (!sh->nclass ? 0 : sh->used_token_bytes[0]
				? sh->used_token_bytes[0] : sh->token_bytes[0]);
	if (contig && !(a->arena = kvp_frag_arena_new(pool, res->fit == KVP_FRAG_FIT_BEST)))
		goto nomem;
	kvp_rng_seed(&a->rng, cfg->seed);
	kvp_rng_seed(&a->arr, cfg->seed ^ 0x5851f42d4c957f2dULL); /* arrivals: their own stream */
	a->next_s = replay ? w->arrival_s[0] : -log(1 - kvp_rng_uniform(&a->arr)) / R;
	/* every layer keeping every token, a decoding sequence past the shared
	 * prefix grows by a block each P tokens (a reservation: by nothing) and
	 * fills used_tok a token: the loop may keep the decoding ones lazily */
	struct kvp_serve_memory mem = {.pool = pool, .shared_tokens = sbt,
				       .shared_units = sbt ? a->prefix_held : 0, .ctx = a,
				       .held = held, .admit = contig ? admit : NULL,
				       .release = contig ? release : NULL, .measure = used_of,
				       .shared_measure = sbt ? a->prefix_used : 0, .on_step = on_step,
				       .step_period = a->linear ? P : 0,
				       .step_units = contig ? 0 : a->block_bytes,
				       .step_measure = a->used_tok};
	struct kvp_serve_opts so = {.load = KVP_SERVE_SOURCE, .source = next_request, .source_ctx = a,
				    .memory = &mem, .step_s = dt, .admit_after_preempt = true, .no_itl = true,
				    .max_num_seqs = cfg->max_seqs ? cfg->max_seqs : UINT64_MAX,
				    .max_batched_tokens = M, .on_done = on_done, .ctx = a};
	if ((st = kvp_serve_run(NULL, NULL, &so, sr, err)))
		goto out;
	res->preemptions = sr->preemptions;
	res->admitted = a->done;
	const uint64_t done = a->done;
	if (done + res->dropped != total) {
		st = kvp_error_set(err, KVP_STATUS_INTERNAL, NULL, 0, 0, "frag",
				   "a consistency check failed (a bug): arrivals, block %u: %llu of "
				   "%llu requests accounted for", P,
				   (unsigned long long)(done + res->dropped), (unsigned long long)total);
		goto out;
	}
	const double last_s = done ? sr->end_s : 0;
	const double sum_live = a->sum_live, sum_used = a->sum_used, sum_held = a->sum_held,
		     sum_ext = a->sum_ext, sum_lat = a->sum_lat, sum_queue = a->sum_queue;
	const uint64_t peak_holes = a->peak_holes;
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
	if (a)
		kvp_frag_arena_free(a->arena);
	free(a);
	free(sr);
	free(qhist);
	return st;
}
