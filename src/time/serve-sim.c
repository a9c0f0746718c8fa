/* serve-sim.c: the scheduler-loop simulator of serve-sim.h: one step at a
 * time (the engine runs back to back while it has work, and jumps to the
 * next arrival when idle), requests in a pool of slots reused as they
 * finish, running in admission order, waiting in a ring that preempted
 * requests re-enter at the front.  The step's cost is time/step.h's
 * roofline; per-length FLOPs, KV bytes and blocks are looked up in tables
 * filled on first use (one layer walk per length), so a step costs
 * O(running) and a run O(steps x running); under a caller's memory of
 * linear growth the decoding requests at the head of the running order are
 * lazy (serve-sim-memory.c), O(1) a step for them.
 *
 * Stance: the bookkeeping is checked (every request completes once, blocks
 * in use within [0, pool], tokens conserved, Little's law); a failure is
 * KVP_STATUS_INTERNAL, and with KVP_CHECK_INVARIANTS an abort. */
#include "time/serve-sim.h"
#include "time/step-gemm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "model/shape.h"
#include "time/serve-sim-private.h"

/* ------------------------------------------------------------ requests */

static void broken(struct sim *s, const char *what)
{
	if (!s->broken)
		kvp_error_set(s->err, KVP_STATUS_INTERNAL, NULL, 0, 0, "serve",
			      "the simulator's bookkeeping broke: %s (seed %llu)", what,
			      (unsigned long long)s->o->seed);
	s->broken = true;
#ifdef KVP_CHECK_INVARIANTS
	fprintf(stderr, "kvplan serve: invariant failed: %s\n", what);
	abort();
#endif
}

#define CHECK(s, cond, what)                 \
	do {                                 \
		if (!(cond))                 \
			broken((s), (what)); \
	} while (0)

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap * 2 : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * elem);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

static uint32_t slot_new(struct sim *s)
{
	if (s->nfree)
		return s->free_slots[--s->nfree];
	/* the slot pool, the free list and the running list grow together */
	size_t old = s->cap, cap = old;
	if (!grow((void **)&s->req, &cap, old + 1, sizeof *s->req))
		return UINT32_MAX;
	void *q = realloc(s->free_slots, cap * sizeof *s->free_slots);
	if (q)
		s->free_slots = q;
	void *r = q ? realloc(s->run, cap * sizeof *s->run) : NULL;
	if (r)
		s->run = r;
	if (!q || !r)
		return UINT32_MAX;   /* s->cap unchanged: the larger req array is harmless */
	s->cap = cap;
	for (size_t i = s->cap; i-- > old + 1;)
		s->free_slots[s->nfree++] = (uint32_t)i;
	return (uint32_t)old;
}

static bool wait_grow(struct sim *s)
{
	if (s->nwait < s->wcap)
		return true;
	size_t n = s->wcap ? s->wcap * 2 : 64;
	uint32_t *q = malloc(n * sizeof *q);
	if (!q)
		return false;
	for (size_t i = 0; i < s->nwait; i++)
		q[i] = s->wait[(s->whead + i) % s->wcap];
	free(s->wait);
	s->wait = q;
	s->wcap = n;
	s->whead = 0;
	return true;
}

static bool wait_push_back(struct sim *s, uint32_t i)
{
	if (!wait_grow(s))
		return false;
	s->wait[(s->whead + s->nwait++) % s->wcap] = i;
	return true;
}

static bool wait_push_front(struct sim *s, uint32_t i)
{
	if (!wait_grow(s))
		return false;
	s->whead = (s->whead + s->wcap - 1) % s->wcap;
	s->wait[s->whead] = i;
	s->nwait++;
	return true;
}

static uint32_t wait_front(const struct sim *s)
{
	return s->wait[s->whead];
}

static void wait_pop(struct sim *s)
{
	s->whead = (s->whead + 1) % s->wcap;
	s->nwait--;
}

/* ------------------------------------------------------------ arrivals */

static double exp_sample(struct kvp_rng *r, double rate)
{
	double u = kvp_rng_uniform(r);
	return -log1p(-u) / rate;
}

static double next_arrival(const struct sim *s)
{
	if (s->sent >= s->limit)
		return INFINITY;
	switch (s->o->load) {
	case KVP_SERVE_POISSON:
		return s->next_poisson;
	case KVP_SERVE_TRACE:
		return s->o->trace->rows[s->trace_i].arrival_s;
	case KVP_SERVE_SOURCE:
		return s->pending.arrival_s;
	default:
		return s->nusers ? s->users_t[s->uhead] : INFINITY;
	}
}

static void area_to(struct sim *s, double t)
{
	s->area += (double)s->insys * (t - s->t_area);
	s->t_area = t;
}

/* Take the next arrival into waiting. */
static kvp_status take_arrival(struct sim *s)
{
	const struct kvp_serve_opts *o = s->o;
	double t = next_arrival(s);
	uint64_t prompt, output;
	bool carrier = false;
	if (o->load == KVP_SERVE_SOURCE) {
		prompt = s->pending.prompt;
		output = s->pending.output;
		carrier = s->pending.carrier;
		kvp_status st = o->source(o->source_ctx, &s->pending, s->err);
		if (st)
			return st;
		if (!(s->pending.arrival_s >= t))
			return kvp_error_set(s->err, KVP_STATUS_INVALID, NULL, 0, 0, "source",
					     "request %llu arrives before the one before it",
					     (unsigned long long)s->sent + 1);
	} else if (o->load == KVP_SERVE_TRACE) {
		const struct kvp_serve_trace_row *row = &o->trace->rows[s->trace_i++];
		prompt = row->prompt;
		output = row->output;
	} else {
		kvp_workload_sample(o->workload, &s->rng, &prompt, &output);
		if (prompt == 0)
			prompt = 1;
		if (output == 0)
			output = 1;
		/* the workload's max_len caps prompt + output, as frag's lengths */
		uint64_t cap = o->max_model_len;
		if (cap >= 2 && prompt + output > cap) {
			if (prompt >= cap)
				prompt = cap - 1;
			output = cap - prompt;
		}
		if (o->load == KVP_SERVE_POISSON)
			s->next_poisson += exp_sample(&s->rng, o->rate);
		else {
			s->uhead = (s->uhead + 1) % s->ucap;
			s->nusers--;
		}
	}
	bool prefix = o->load == KVP_SERVE_SOURCE ? carrier
		      : o->prefix_tokens && kvp_rng_uniform(&s->rng) < o->prefix_fraction;
	uint64_t id = s->sent++;
	if (o->max_model_len && prompt + output > o->max_model_len)
		return kvp_error_set(s->err, KVP_STATUS_INVALID, NULL, 0, 0, "max_model_len",
				     "request %llu has %llu + %llu tokens, above max_model_len %llu",
				     (unsigned long long)id, (unsigned long long)prompt,
				     (unsigned long long)output, (unsigned long long)o->max_model_len);
	uint64_t need;
	kvp_status st = KVP_STATUS_OK;
	if (s->mem) {
		struct kvp_serve_view v = {id, prompt, output, prompt + output, prefix};
		need = s->mem->held(s->mem->ctx, &v) + (prefix ? s->mem->shared_units : 0);
	} else if ((st = serve_blocks(&s->tab, prompt + output, &need))) {
		return kvp_error_set(s->err, st, NULL, 0, 0, "blocks", "out of memory");
	}
	if (need + s->pinned > s->num_blocks)
		return kvp_error_set(s->err, KVP_STATUS_INVALID, NULL, 0, 0, "num_blocks",
				     "request %llu of %llu tokens needs %llu blocks; the pool has %llu%s",
				     (unsigned long long)id, (unsigned long long)(prompt + output),
				     (unsigned long long)need, (unsigned long long)(s->num_blocks - s->pinned),
				     s->pinned ? " besides the cached prefix" : "");
	if (o->no_chunked_prefill && prompt + output - 1 > s->mbt)
		return kvp_error_set(s->err, KVP_STATUS_INVALID, NULL, 0, 0, "max_batched_tokens",
				     "without chunked prefill a request of %llu tokens never fits a "
				     "step of %llu", (unsigned long long)(prompt + output - 1),
				     (unsigned long long)s->mbt);
	uint32_t i = slot_new(s);
	if (i == UINT32_MAX || !wait_push_back(s, i))
		return kvp_error_set(s->err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	struct sreq *r = &s->req[i];
	memset(r, 0, sizeof *r);
	r->id = id;
	r->prompt = prompt;
	r->output = output;
	r->arrival = t;
	r->prefix = prefix;
	area_to(s, t);
	s->insys++;
	return KVP_STATUS_OK;
}

static kvp_status pull_arrivals(struct sim *s, double upto)
{
	kvp_status st;
	while (next_arrival(s) <= upto)
		if ((st = take_arrival(s)))
			return st;
	return KVP_STATUS_OK;
}

/* ------------------------------------------------------------ scheduling */

static void util_to(struct sim *s, double t)
{
	if (t > s->util_t) {
		double u = (double)s->used / (double)s->num_blocks;
		s->util_area += u * (t - s->util_t);
		serve_series_add(&s->series, s->util_t, t, u);
		s->util_t = t;
	}
}

/* r's units given back (a finish or a preemption), the shared prefix's with
 * the last carrier. */
static void give_back(struct sim *s, struct sreq *r)
{
	CHECK(s, r->held <= s->used, "freeing more blocks than in use");
	s->used -= r->held;
	if (!s->mem)
		return;
	if (s->mem->release) {
		struct kvp_serve_view v = {r->id, r->prompt, r->output, r->comp, r->prefix};
		s->mem->release(s->mem->ctx, &v, r->held, r->tag);
	}
	if (r->prefix && s->mem->shared_tokens) {
		CHECK(s, s->refs > 0, "a carrier leaves with none running");
		if (--s->refs == 0) {
			CHECK(s, s->mem->shared_units <= s->used, "freeing the prefix twice");
			s->used -= s->mem->shared_units;
		}
	}
}

static kvp_status preempt(struct sim *s, uint32_t i)
{
	struct sreq *r = &s->req[i];
	give_back(s, r);
	s->res->recomputed_tokens += r->comp - r->hit;
	r->held = r->comp = r->hit = r->sched = 0;
	r->preempted++;
	s->res->preemptions++;
	if (!wait_push_front(s, i))
		return kvp_error_set(s->err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	return KVP_STATUS_OK;
}

/* Own blocks a request that took `hit` tokens from the cache holds at c tokens. */
static kvp_status own_blocks(struct sim *s, const struct sreq *r, uint64_t hit, uint64_t c,
			     uint64_t *out)
{
	if (s->mem) {
		struct kvp_serve_view v = {r->id, r->prompt, r->output, c, r->prefix};
		*out = s->mem->held(s->mem->ctx, &v);
		return KVP_STATUS_OK;
	}
	uint64_t a, h = 0;
	kvp_status st = serve_blocks(&s->tab, c, &a);
	if (!st && hit)
		st = serve_blocks(&s->tab, hit, &h);
	*out = a - h;
	return st;
}

/* One schedule() at the step's start: fills each request's sched. */
static kvp_status schedule(struct sim *s, double t, uint64_t *tokens, bool *preempted)
{
	uint64_t budget = s->mbt, need, own;
	kvp_status st;
	*preempted = false;
	serve_lazy_schedule(s, &budget);   /* the lazy decodes, or they are written out */
	size_t i = 0;
	while (i < s->nrun && budget > 0) {
		struct sreq *r = &s->req[s->run[i]];
		uint64_t n = r->prompt + r->gen - r->comp;
		if (n > budget)
			n = budget;
		if ((st = own_blocks(s, r, r->hit, r->comp + n, &own)))
			return st;
		need = own - r->held;
		bool self = false;
		while (need > s->num_blocks - s->used) {
			uint32_t v = s->run[--s->nrun];
			*preempted = true;
			if ((st = preempt(s, v)))
				return st;
			if (v == s->run[i] && s->nrun == i) {
				self = true;
				break;
			}
		}
		if (self)
			break;
		r->held += need;
		s->used += need;
		r->sched = n;
		budget -= n;
		i++;
	}
	for (size_t j = i; j < s->nrun; j++)
		s->req[s->run[j]].sched = 0;
	s->refused = false;
	while ((!*preempted || s->o->admit_after_preempt) && s->nwait &&
	       serve_running(s) < s->max_seqs && budget > 0) {
		uint32_t w = wait_front(s);
		struct sreq *r = &s->req[w];
		uint64_t known = r->prompt + r->gen, hit = 0, shared = 0;
		bool shares = s->mem && r->prefix && s->mem->shared_tokens;
		if (shares) {
			/* the prefix held while a carrier runs: a hit, else this
			 * one takes it */
			if (s->refs)
				hit = s->mem->shared_tokens;
			else
				shared = s->mem->shared_units;
		} else if (r->prefix && !s->mem) {
			hit = s->o->prefix_tokens < known - 1 ? s->o->prefix_tokens : known - 1;
			hit = hit / s->P * s->P;
		}
		uint64_t n = known - hit;
		if (s->o->no_chunked_prefill && n > budget)
			break;
		if (n > budget)
			n = budget;
		if ((st = own_blocks(s, r, hit, hit + n, &need)))
			return st;
		if (need + shared > s->num_blocks - s->used)
			break;
		if (s->mem && s->mem->admit) {
			struct kvp_serve_view v = {r->id, r->prompt, r->output, hit + n, r->prefix};
			if (!s->mem->admit(s->mem->ctx, &v, need + shared, &r->tag)) {
				s->refused = true;
				break;
			}
		}
		wait_pop(s);
		if (!r->preempted)
			r->sched_t = t;
		r->hit = r->comp = hit;
		if (hit)
			s->res->prefix_hits++;
		r->held = need;
		s->used += need + shared;
		s->refs += shares;
		r->sched = n;
		budget -= n;
		s->run[s->nrun++] = w;
	}
	CHECK(s, s->used <= s->num_blocks, "blocks in use above the pool");
	*tokens = s->mbt - budget;
	return KVP_STATUS_OK;
}

/* The step's time on the roofline (serve-sim.h). */
static kvp_status step_time(struct sim *s, double *dt)
{
	if (s->o->step_s > 0) {
		*dt = s->o->step_s;
		return KVP_STATUS_OK;
	}
	const struct kvp_perf_ctx *pc = s->pc;
	double flops = 0, tokens = 0, seqs = 0, attn = 0;
	uint64_t kv = 0, ndec = 0, one;
	bool chunk = false;
	kvp_status st;
	for (size_t i = 0; i < s->nrun; i++) {
		const struct sreq *r = &s->req[s->run[i]];
		if (!r->sched)
			continue;
		tokens += (double)r->sched;
		seqs++;
		if ((st = serve_kv_bytes(&s->tab, r->comp + r->sched, &one)))
			return st;
		kv += one;
		if (r->sched == 1 && r->comp > 0) {
			double f;
			if ((st = serve_decode_flops(&s->tab, r->comp + 1, &f)))
				return st;
			flops += f;
			attn += f - kvp_perf_decode_flops(pc->model, 0);
			ndec++;
		} else {
			chunk = true;
			flops += kvp_perf_prefill_flops(pc->model, r->comp + r->sched) -
				 kvp_perf_prefill_flops(pc->model, r->comp);
			attn += kvp_perf_attention_flops(pc->model, r->comp + r->sched) -
				kvp_perf_attention_flops(pc->model, r->comp);
		}
	}
	/* with pipeline parallelism the engine keeps pp micro-batches in
	 * flight (vLLM: max_concurrent_batches = pp_size, v1/executor/
	 * multiproc_executor.py), as perf models decode (perf.c): while one
	 * crosses the stages the others fill them, so in a pass of decodes every
	 * running sequence makes its token in the time one micro-batch of a
	 * pp-th of the sequences, tokens, FLOPs and KV takes through all the
	 * stages, each stage streaming its weights once for it.  A pass that
	 * carries a prefill chunk is charged whole, stage after stage, as perf's
	 * TTFT is: the slower end.  Pipelining those too over-promised the one
	 * public pipeline sweep (trtllm-bench, Llama-3.3-70B on 2-8 RTX PRO
	 * 6000, tests/data/perf-measured/trtllm10-llama33-70b-rtxpro-pp*) by
	 * +21, +55 and +99 % at pp 2, 4 and 8; this way it is -5, -20 and -36 %
	 * (bench/serve-measured.sh, reports/serve-measured.md) */
	uint32_t pp = pc->spec->par.pp ? pc->spec->par.pp : 1;
	uint64_t micro = ndec;
	if (pp > 1 && !chunk) {
		flops /= pp;
		tokens /= pp;
		seqs = ceil(seqs / pp);
		kv = kvp_cdiv(kv, pp);
		micro = kvp_cdiv(ndec, pp);
	}
	uint64_t weights = pc->weights_bytes;
	if (!chunk) {
		if (!s->dec_w[micro]) {
			struct kvp_perf_step d;
			if ((st = kvp_perf_decode_step(pc, micro, 1, &d, s->err)))
				return st;
			s->dec_w[micro] = (double)(d.weights_bytes / pp);
		}
		weights = (uint64_t)s->dec_w[micro];
	}
	/* the routed experts from the measured MoE table where the engine runs
	 * its kernels (step.h moe_s), as perf's steps: every rank's tokens in
	 * one MoE pass, their FLOPs and weights out of the roofline (a decode
	 * pass's weights from kvp_perf_decode_step already leave them out) */
	double dp_tokens = tokens * kvp_shape_dp(&pc->spec->par);
	double moe_s = kvp_perf_moe_table_s(pc, dp_tokens);
	if (moe_s >= 0) {
		flops -= kvp_perf_routed_token_flops(pc->model) * tokens;
		if (chunk)
			weights -= pc->expert_bytes;
	}
	/* a pass with a prefill chunk: its linear layers over all the pass's
	 * tokens at the measured GEMM table's rate where there is one, as
	 * perf's prefill (step.h); a pass of decodes at the constant, as
	 * perf's decode step */
	/* (flops are this rank's whole-model count, its routed experts' of its
	 * own tokens: total = tokens x dp keeps that share, step.h) */
	double eff = !chunk ? pc->hw.prefill_flops_efficiency
		     : moe_s >= 0 ? kvp_perf_flops_efficiency_routed(pc, flops, attn, tokens, 0)
				  : kvp_perf_flops_efficiency(pc, flops, attn, tokens, dp_tokens);
	struct kvp_perf_step step;
	if ((st = kvp_perf_step_roofline(pc, flops, eff, weights, kv,
					 pc->hw.decode_bw_efficiency, tokens, &step, s->err)))
		return st;
	/* the pass's roofline; the engine's fixed costs of a pass carrying
	 * `seqs` sequences, a prefill chunk among them or not (step.h), last,
	 * as perf charges them */
	*dt = step.time_s;
	/* and a pass with a prefill chunk its elementwise kernels over all its
	 * tokens (step.h), as perf's prefill and chunked steps */
	if (chunk)
		*dt += kvp_perf_elementwise_s(pc, tokens);
	if (moe_s >= 0)
		*dt += moe_s;
	/* the eager attention launches the GPU's work (the experts' too) does
	 * not hide (step.h), then the engine's fixed costs */
	*dt += kvp_perf_eager_s(pc, *dt, chunk, tokens, NULL);
	*dt += kvp_perf_fixed_s(&pc->hw, seqs, chunk);
	return KVP_STATUS_OK;
}

static void finish(struct sim *s, uint32_t i, double t)
{
	struct sreq *r = &s->req[i];
	struct kvp_serve_result *res = s->res;
	const struct kvp_serve_opts *o = s->o;
	/* the request's latency outside the steps (step.h request_latency_s)
	 * comes on top of what the scheduler saw: once on its first token and
	 * its end to end, on no step, so not on its TPOT; the time it spent in
	 * the scheduler (Little's law's area) is without it */
	/* (no perf context: frag's fixed step times, no latency) */
	double lat = s->pc ? kvp_perf_request_s(&s->pc->hw, 0) : 0;
	double ttft = r->first_t - r->arrival + lat, e2e = t - r->arrival + lat;
	double tpot = r->output > 1 ? (e2e - ttft) / (double)(r->output - 1) : NAN;
	serve_hist_add(s->h_ttft, ttft);
	serve_hist_add(s->h_e2el, e2e);
	if (r->output > 1)
		serve_hist_add(s->h_tpot, tpot);
	s->sum_e2e += e2e - lat;
	res->completed++;
	res->total_input_tokens += r->prompt;
	res->total_output_tokens += r->output;
	s->finished_tokens += r->prompt + (r->output ? r->output - 1 : 0) - r->hit;
	bool good = !(o->slo_ttft_s > 0 && ttft > o->slo_ttft_s) &&
		    !(o->slo_tpot_s > 0 && r->output > 1 && tpot > o->slo_tpot_s) &&
		    !(o->slo_e2e_s > 0 && e2e > o->slo_e2e_s);
	res->good += good;
	give_back(s, r);
	r->held = 0;
	if (o->on_done) {
		struct kvp_serve_done d = {r->id, r->arrival, ttft, e2e, r->sched_t - r->arrival,
					   r->prompt, r->output, r->preempted};
		o->on_done(o->ctx, &d);
	}
	if (o->load == KVP_SERVE_CLOSED && s->sent + s->nusers < s->limit) {
		/* the user sees the answer lat later, and sends the next then */
		s->users_t[(s->uhead + s->nusers++) % s->ucap] = t + lat + o->think_s;
	}
	s->free_slots[s->nfree++] = i;
}

/* The step's end at t: tokens sampled, requests finished. */
static void apply(struct sim *s, double t)
{
	size_t k = 0;
	uint64_t done = 0;
	area_to(s, t);
	if (s->lz.n) {
		/* the lazy decodes, a token each: those done leave in running order */
		s->scheduled_tokens += s->lz.n;
		for (uint32_t i; (i = serve_lazy_pop_done(s)) != SERVE_NIL; done++)
			finish(s, i, t);
		serve_lazy_advance(s);
	}
	for (size_t i = 0; i < s->nrun; i++) {
		uint32_t id = s->run[i];
		struct sreq *r = &s->req[id];
		if (r->sched) {
			s->scheduled_tokens += r->sched;
			r->comp += r->sched;
			r->sched = 0;
			if (r->comp == r->prompt + r->gen && r->output == 0) {
				/* nothing to generate (a source's): done when prefilled */
				r->first_t = r->last_t = t;
				finish(s, id, t);
				done++;
				continue;
			}
			if (r->comp == r->prompt + r->gen) {
				r->gen++;
				if (r->gen == 1)
					r->first_t = t;
				else if (!s->o->no_itl)
					serve_hist_add(s->h_itl, t - r->last_t);
				r->last_t = t;
				if (r->gen == r->output) {
					finish(s, id, t);
					done++;
					continue;
				}
			}
		}
		s->run[k++] = id;
	}
	s->nrun = k;
	s->insys -= done;
}

/* ------------------------------------------------------------ the run */

static kvp_status validate(const struct kvp_budget *b, const struct kvp_perf_ctx *pc,
			   const struct kvp_serve_opts *o, struct kvp_error *err)
{
	if (o->memory ? !o->memory->held || !(o->step_s > 0) || !o->max_num_seqs ||
			!o->max_batched_tokens
		      : !b || !pc)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "serve",
				     "a memory model needs a fixed step time, max_num_seqs and "
				     "max_batched_tokens; without one a budget and a step model");
	if (!(o->step_s >= 0) || !isfinite(o->step_s))
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "step_time",
				     "must be a finite number of seconds >= 0");
	if (b && kvp_shape_dp(&b->spec.par) > 1)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "--dp",
				     "serve simulates one engine's loop; data-parallel ranks are not "
				     "modelled yet");
	switch (o->load) {
	case KVP_SERVE_POISSON:
		if (!(o->rate > 0) || !isfinite(o->rate))
			return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "--rate",
					     "must be a finite number of requests per second above 0");
		break;
	case KVP_SERVE_CLOSED:
		if (o->users == 0)
			return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "--concurrency",
					     "must be at least 1");
		if (!(o->think_s >= 0) || !isfinite(o->think_s))
			return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "--think-time",
					     "must be a finite number of seconds >= 0");
		break;
	case KVP_SERVE_TRACE:
		if (!o->trace || o->trace->n == 0)
			return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "--trace",
					     "has no requests");
		break;
	case KVP_SERVE_SOURCE:
		if (!o->source)
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "source",
					     "a source load needs its callback");
		break;
	}
	if (o->load != KVP_SERVE_TRACE && o->load != KVP_SERVE_SOURCE &&
	    (!o->workload || o->requests == 0))
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "--requests",
				     "must be at least 1 (with a workload for the lengths)");
	if (!(o->prefix_fraction >= 0 && o->prefix_fraction <= 1))
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "--prefix-fraction",
				     "must be in [0, 1]");
	return KVP_STATUS_OK;
}

static void sim_free(struct sim *s)
{
	serve_tables_free(&s->tab);
	free(s->dec_w);
	free(s->req);
	free(s->free_slots);
	free(s->run);
	free(s->wait);
	free(s->users_t);
	free(s->h_ttft);
	free(s->h_tpot);
	free(s->h_itl);
	free(s->h_e2el);
	serve_lazy_free(s);
}

static kvp_status sim_init(struct sim *s, const struct kvp_budget *b, const struct kvp_perf_ctx *pc,
			   const struct kvp_serve_opts *o, struct kvp_serve_result *out,
			   struct kvp_error *err)
{
	s->b = b;
	s->pc = pc;
	s->o = o;
	s->res = out;
	s->err = err;
	s->mem = o->memory;
	s->num_blocks = s->mem ? s->mem->pool : o->num_blocks ? o->num_blocks : b->num_blocks;
	s->max_seqs = o->max_num_seqs ? o->max_num_seqs : b->max_num_seqs;
	s->mbt = o->max_batched_tokens ? o->max_batched_tokens : b->max_batched_tokens;
	s->P = b && b->block_size ? b->block_size : 1;
	if (!s->max_seqs)
		s->max_seqs = KVP_DEFAULT_MAX_NUM_SEQS;
	if (!s->mbt)
		s->mbt = KVP_DEFAULT_MAX_BATCHED_TOKENS;
	kvp_status st = serve_lazy_init(s);
	if (!st && !s->mem)
		st = serve_tables_init(&s->tab, b, pc);
	if (st)
		return kvp_error_set(err, st, NULL, 0, 0, "budget",
				     st == KVP_STATUS_NOMEM ? "out of memory"
							    : "the pool has no block size in bytes");
	if (s->num_blocks == 0)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "num_blocks",
				     "the KV pool holds no block: the weights leave no room");
	if (o->prefix_tokens && !s->mem) {
		if ((st = serve_blocks(&s->tab, o->prefix_tokens / s->P * s->P, &s->pinned)))
			return kvp_error_set(err, st, NULL, 0, 0, "prefix", "out of memory");
		if (s->pinned >= s->num_blocks)
			return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "--prefix",
					     "the shared prefix takes %llu of the pool's %llu blocks",
					     (unsigned long long)s->pinned,
					     (unsigned long long)s->num_blocks);
	}
	s->used = s->pinned;
	/* decode weights by batch, for the roofline only */
	s->dec_w = calloc(o->step_s > 0 ? 1 : s->max_seqs + 1, sizeof *s->dec_w);
	s->h_ttft = calloc(1, sizeof *s->h_ttft);
	s->h_tpot = calloc(1, sizeof *s->h_tpot);
	s->h_itl = calloc(1, sizeof *s->h_itl);
	s->h_e2el = calloc(1, sizeof *s->h_e2el);
	if (!s->dec_w || !s->h_ttft || !s->h_tpot || !s->h_itl || !s->h_e2el)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	kvp_rng_seed(&s->rng, o->seed);
	s->limit = o->requests;
	if (o->load == KVP_SERVE_TRACE && (s->limit == 0 || s->limit > o->trace->n))
		s->limit = o->trace->n;
	if (o->load == KVP_SERVE_SOURCE) {
		s->limit = UINT64_MAX;   /* until the source says no more */
		if ((st = o->source(o->source_ctx, &s->pending, err)))
			return st;
	}
	if (o->load == KVP_SERVE_POISSON)
		s->next_poisson = exp_sample(&s->rng, o->rate);
	if (o->load == KVP_SERVE_CLOSED) {
		s->ucap = o->users < s->limit ? o->users : s->limit;
		s->users_t = calloc(s->ucap, sizeof *s->users_t);
		if (!s->users_t)
			return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		s->nusers = s->ucap; /* every user sends at time 0 */
	}
	out->num_blocks = s->num_blocks;
	out->pinned_blocks = s->pinned;
	out->max_num_seqs = s->max_seqs;
	out->max_batched_tokens = s->mbt;
	out->block_size = s->P;
	return KVP_STATUS_OK;
}

/* The checks of the whole run (serve-sim.h). */
static void check_end(struct sim *s)
{
	struct kvp_serve_result *res = s->res;
	CHECK(s, res->completed == s->sent &&
		 (s->sent == s->limit || (s->o->load == KVP_SERVE_SOURCE && isinf(s->pending.arrival_s))),
	      "a request did not complete exactly once");
	CHECK(s, serve_running(s) == 0 && s->nwait == 0 && s->insys == 0,
	      "requests left in the system");
	CHECK(s, s->used == s->pinned, "blocks in use at the end beyond the cached prefix");
	CHECK(s, s->scheduled_tokens == s->finished_tokens + res->recomputed_tokens,
	      "tokens computed differ from the prompts, outputs and recomputations");
	/* Little's law: the integral of requests in the system is the sum of
	 * their times in it */
	CHECK(s, fabs(s->area - s->sum_e2e) <= 1e-9 * fmax(1, s->sum_e2e),
	      "Little's law: L != lambda W");
}

kvp_status kvp_serve_run(const struct kvp_budget *b, const struct kvp_perf_ctx *pc,
			 const struct kvp_serve_opts *o, struct kvp_serve_result *out,
			 struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	kvp_status st = validate(b, pc, o, err);
	if (st)
		return st;
	struct sim s = {0};
	if ((st = sim_init(&s, b, pc, o, out, err)))
		goto done;
	/* fixed steps run on a grid from 0: step i starts at i x step_s */
	const double grid = o->step_s;
	uint64_t step_i = 0;
	double t = grid > 0 ? 0 : next_arrival(&s), tokens_sum = 0;
	out->start_s = t;
	s.t_area = s.util_t = t;
	serve_series_init(&s.series, t);
	bool stalled = false;
	while (!s.broken) {
		if ((st = pull_arrivals(&s, t)))
			goto done;
		if (serve_running(&s) == 0 && s.nwait == 0) {
			double next = next_arrival(&s);
			if (isinf(next))
				break;
			if (grid > 0) {
				/* the first step that starts at or after it */
				double k = ceil(next / grid);
				if (!(k <= 9007199254740992.0)) {
					st = kvp_error_set(s.err, KVP_STATUS_USAGE, NULL, 0, 0, "step_time",
							   "request %llu arrives at %g s, step %.3g: more "
							   "than the 2^53 steps the simulation counts",
							   (unsigned long long)s.sent + 1, next, k);
					goto done;
				}
				step_i = (uint64_t)k > step_i ? (uint64_t)k : step_i + 1;
				next = (double)step_i * grid;
			}
			util_to(&s, next);
			t = next;
			continue;
		}
		uint64_t tokens;
		bool preempted;
		if ((st = schedule(&s, t, &tokens, &preempted)))
			goto done;
#ifdef KVP_CHECK_INVARIANTS
		if (s.mem)
			CHECK(&s, serve_memory_recount(&s),
			      "a request's units or measure differ from the memory model's");
#endif
		if (s.mem && s.mem->on_step)
			serve_memory_on_step(&s);
		if (tokens == 0) {
			/* everything was preempted: admit at the same instant */
			CHECK(&s, !stalled && preempted, "a step with nothing to run");
			stalled = true;
			continue;
		}
		stalled = false;
		double dt;
		if ((st = step_time(&s, &dt)))
			goto done;
		CHECK(&s, dt > 0 && isfinite(dt), "a step of no time");
		if (serve_running(&s) > out->max_running)
			out->max_running = serve_running(&s);
		if (s.used > out->kv_max_blocks)
			out->kv_max_blocks = s.used;
		util_to(&s, t + dt);
		out->steps++;
		out->busy_s += dt;
		tokens_sum += (double)tokens;
		double end = grid > 0 ? (double)(step_i + 1) * grid : t + dt;
		if ((st = pull_arrivals(&s, end)))
			goto done;
		t = end;
		step_i++;
		apply(&s, t);
		if ((st = serve_lazy_promote(&s))) {
			st = kvp_error_set(s.err, st, NULL, 0, 0, NULL, "out of memory");
			goto done;
		}
	}
	if (s.broken) {
		st = KVP_STATUS_INTERNAL;
		goto done;
	}
	check_end(&s);
	if (s.broken) {
		st = KVP_STATUS_INTERNAL;
		goto done;
	}
	out->end_s = t;
	out->duration_s = t - out->start_s;
	double d = out->duration_s > 0 ? out->duration_s : NAN;
	out->request_throughput = (double)out->completed / d;
	out->output_throughput = (double)out->total_output_tokens / d;
	out->total_token_throughput =
		(double)(out->total_input_tokens + out->total_output_tokens) / d;
	bool slo = o->slo_ttft_s > 0 || o->slo_tpot_s > 0 || o->slo_e2e_s > 0;
	out->request_goodput = slo ? (double)out->good / d : NAN;
	out->mean_batch_tokens = out->steps ? tokens_sum / (double)out->steps : 0;
	out->kv_mean_util = out->duration_s > 0 ? s.util_area / out->duration_s : 0;
	out->kv_max_util = (double)out->kv_max_blocks / (double)s.num_blocks;
	out->mean_in_system = out->duration_s > 0 ? s.area / out->duration_s : 0;
	serve_hist_stat(s.h_ttft, &out->ttft);
	serve_hist_stat(s.h_tpot, &out->tpot);
	serve_hist_stat(s.h_itl, &out->itl);
	serve_hist_stat(s.h_e2el, &out->e2el);
	out->nseries = serve_series_out(&s.series, t, out->series_t, out->series_util);
done:
	sim_free(&s);
	return st;
}
