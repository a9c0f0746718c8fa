/* size-sim.c: a sized configuration checked on the serving-loop simulator
 * (size-sim.h): the most one replica serves within the SLO percentiles,
 * found by doubling and bisection over simulated runs, the replicas that
 * follow, and one run at the replica's share for the row's figures.
 *
 * Stance: every second comes from kvp_serve_run on the budget and step
 * model size.c uses for the same configuration; this file only searches
 * and judges.  The runs are seeded: one configuration always sizes alike. */
#include "size/size-sim.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/shape.h"
#include "time/serve-sim.h"

#define SIM_BISECT 7          /* a factor-2 bracket to within 2^-7 (0.8 %) */
#define SIM_DOUBLINGS 40
#define SIM_FLOOR_REQUESTS 64 /* one user alone: every request sees an idle replica */
#define SIM_STABLE_RATIO 1.3
#define SIM_STABLE_RUNS 10    /* a Poisson run spans at least this many idle
			       * requests' end-to-end times... */
#define SIM_MAX_REQUESTS 20000 /* ...up to this many requests */
#define SIM_PER_USER 8        /* a closed loop: requests per user, so the start's
			       * burst and the end's drain weigh little */

bool kvp_size_sim_applies(const struct kvp_size_config *c, const struct kvp_size_demand *d)
{
	return !(c->failed & KVP_SIZE_FAIL_FIXED) && c->disagg_p == 0 && c->disagg_d == 0 &&
	       c->dp <= 1 && (d->rate > 0 || d->users > 0);
}

/* One replica of c, ready to simulate. */
struct replica {
	const struct kvp_size_demand *d;
	struct kvp_budget *b;
	struct kvp_perf_ctx pc;
	struct kvp_serve_opts so;
	struct kvp_serve_result *res;
	double *arrival, *finish;  /* by request id: the stability test's */
	uint64_t cap, nreq;
	double floor_e2e;          /* one user's mean end-to-end time */
};

/* Requests in a run of `users` users (0: Poisson). */
static uint64_t run_requests(uint64_t requests, uint64_t users)
{
	return users && requests < SIM_PER_USER * users ? SIM_PER_USER * users : requests;
}

static void on_done(void *ctx, const struct kvp_serve_done *x)
{
	struct replica *r = ctx;
	if (x->id < r->nreq) {
		r->arrival[x->id] = x->arrival_s;
		r->finish[x->id] = x->arrival_s + x->e2e_s;
	}
}

/* The simulator's percentile at or above p (it keeps p50, p90, p99). */
static double at_percentile(const struct kvp_serve_stat *s, double p)
{
	if (s->n == 0)
		return 0;
	return p <= 50 ? s->p50 : p <= 90 ? s->p90 : s->p99;
}

/* Requests in the system at t: arrived, not finished. */
static double in_system(const struct replica *r, double t)
{
	uint64_t n = 0;
	for (uint64_t i = 0; i < r->nreq; i++)
		n += r->arrival[i] <= t && t < r->finish[i];
	return (double)n;
}

/* Simulate at a Poisson rate (users == 0) or a closed loop of users; *ok:
 * the levels met at the percentile, and the queue stable (Poisson) or the
 * users all running (closed, no TTFT level). */
static kvp_status run_at(struct replica *r, double rate, uint64_t users, uint64_t requests,
			 bool *ok, struct kvp_error *err)
{
	const struct kvp_size_demand *d = r->d;
	r->so.load = users ? KVP_SERVE_CLOSED : KVP_SERVE_POISSON;
	r->so.rate = rate;
	r->so.users = users;
	if (!users && isfinite(r->floor_e2e) && rate * SIM_STABLE_RUNS * r->floor_e2e > (double)requests)
		requests = (uint64_t)fmin(SIM_MAX_REQUESTS, ceil(rate * SIM_STABLE_RUNS * r->floor_e2e));
	if (requests > r->cap)
		requests = r->cap;
	r->so.requests = requests;
	r->nreq = requests;
	kvp_status st = kvp_serve_run(r->b, &r->pc, &r->so, r->res, err);
	if (st)
		return st;
	const struct kvp_serve_result *x = r->res;
	*ok = !(d->slo_ttft_s > 0 && at_percentile(&x->ttft, d->percentile) > d->slo_ttft_s) &&
	      !(d->slo_tpot_s > 0 && at_percentile(&x->tpot, d->percentile) > d->slo_tpot_s);
	if (!users) {
		/* a queue that grows without bound grows through the run: the
		 * requests in the system at the last arrival against those at
		 * half its time (a stable queue holds about as many, Little's
		 * law, within a few standard deviations of a Poisson count) */
		double end = 0;
		for (uint64_t i = 0; i < requests; i++)
			end = fmax(end, r->arrival[i]);
		double half = in_system(r, end / 2), last = in_system(r, end);
		if (last > SIM_STABLE_RATIO * half + 3 * sqrt(half) + 2)
			*ok = false;
	} else if (!(d->slo_ttft_s > 0) && users > x->max_num_seqs) {
		*ok = false;
	}
	return KVP_STATUS_OK;
}

/* The budget and step model of c, as size.c builds them. */
static kvp_status replica_init(struct replica *r, const struct kvp_model *m, const struct kvp_gpu *g,
			       const struct kvp_size_demand *d, const struct kvp_size_opts *o,
			       const struct kvp_size_sim_opts *so, const struct kvp_size_config *c,
			       uint64_t cap, struct kvp_error *err)
{
	memset(r, 0, sizeof *r);
	r->d = d;
	r->b = malloc(sizeof *r->b);
	r->res = malloc(sizeof *r->res);
	r->cap = cap > SIM_MAX_REQUESTS ? cap : SIM_MAX_REQUESTS;
	r->arrival = malloc(r->cap * sizeof *r->arrival);
	r->finish = malloc(r->cap * sizeof *r->finish);
	r->floor_e2e = INFINITY;
	if (!r->b || !r->res || !r->arrival || !r->finish)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	struct kvp_budget_opts bo = o->budget;
	if (!bo.block_size)
		bo.block_size = kvp_size_block_default(bo.engine, m);
	bo.par.tp = c->tp;
	bo.par.pp = c->pp;
	bo.par.dp = 1;
	bo.par.ep = c->ep;
	bo.par.gpus = 0;
	bo.kv_dtype = c->kv_dtype;
	bo.context = d->mean_context;
	bo.batch = 1;
	kvp_status st = kvp_budget_compute(m, g, &bo, r->b, err);
	struct kvp_perf_hw hw;
	if (st || (st = kvp_perf_hw_from_gpu(g, m, &hw, err)))
		return st;
	if (o->decode_bw_efficiency > 0)
		hw.decode_bw_efficiency = o->decode_bw_efficiency, hw.efficiency_given = true;
	if (o->prefill_flops_efficiency > 0)
		kvp_perf_hw_prefill_efficiency(&hw, o->prefill_flops_efficiency);
	if ((st = kvp_perf_init(&r->pc, &r->b->spec, r->b->weights_bytes, &hw, err)))
		return st;
	const struct kvp_workload *w = so->w;
	/* the engine as launched: the cap searched (--max-num-seqs), else
	 * the budget's; not the closed form's TPOT-bounded setting, which
	 * the simulated TPOT replaces (and which is 1 where no batch meets
	 * the level) */
	r->so.max_num_seqs = c->seqs_cap;
	r->so.max_model_len = d->max_model_len;
	r->so.prefix_tokens = w->prefix_tokens;
	r->so.prefix_fraction = w->prefix_tokens ? w->prefix_fraction : 0;
	r->so.seed = so->seed ? so->seed : 1;
	r->so.workload = w;
	r->so.on_done = on_done;
	r->so.ctx = r;
	return KVP_STATUS_OK;
}

static void replica_free(struct replica *r)
{
	free(r->b);
	free(r->res);
	free(r->arrival);
	free(r->finish);
}

/* The largest rate (users == false) or number of users one replica serves:
 * from x0 (meeting or not), doubling or halving to a bracket, then
 * bisection; *cap 0 when none does (down to 2^-SIM_DOUBLINGS x0, or one
 * user). */
static kvp_status capacity(struct replica *r, bool users, double x0, double most, uint64_t requests,
			   double *cap, struct kvp_error *err)
{
	double lo = 0, hi = 0, x = x0;
	bool ok;
	kvp_status st;
#define RUN(v) run_at(r, users ? 0 : (v), users ? (uint64_t)(v) : 0, \
		      run_requests(requests, users ? (uint64_t)(v) : 0), &ok, err)
	if ((st = RUN(x)))
		return st;
	if (ok) {
		lo = x;
		for (int i = 0; i < SIM_DOUBLINGS && lo < most; i++) {
			x = fmin(2 * lo, most);
			if ((st = RUN(x)))
				return st;
			if (!ok) {
				hi = x;
				break;
			}
			lo = x;
		}
		if (hi == 0) {
			*cap = lo;      /* meets at the most asked for */
			return KVP_STATUS_OK;
		}
	} else {
		hi = x;
		for (int i = 0; i < SIM_DOUBLINGS && lo == 0; i++) {
			x = users ? floor(hi / 2) : hi / 2;
			if (x < (users ? 1 : x0 * ldexp(1, -SIM_DOUBLINGS)))
				break;
			if ((st = RUN(x)))
				return st;
			if (ok)
				lo = x;
			else
				hi = x;
		}
		if (lo == 0) {
			*cap = 0;
			return KVP_STATUS_OK;
		}
	}
	for (int i = 0; i < SIM_BISECT && (users ? hi - lo > 1 : hi > lo * (1 + 1e-3)); i++) {
		x = users ? floor((lo + hi) / 2) : 0.5 * (lo + hi);
		if ((st = RUN(x)))
			return st;
		if (ok)
			lo = x;
		else
			hi = x;
	}
#undef RUN
	*cap = lo;
	return KVP_STATUS_OK;
}

/* The SLO bits a TTFT and a TPOT, each times f, miss. */
static unsigned slo_misses(const struct kvp_size_demand *d, double ttft_s, double tpot_s, double f)
{
	unsigned bits = 0;
	if (d->slo_ttft_s > 0 && ttft_s * f > d->slo_ttft_s)
		bits |= KVP_SIZE_FAIL_TTFT;
	if (d->slo_tpot_s > 0 && tpot_s * f > d->slo_tpot_s)
		bits |= KVP_SIZE_FAIL_TPOT;
	return bits;
}

/* c's verdict from its simulated figures (size.h's failed, never, risk). */
static void judge(struct kvp_size_config *c, const struct kvp_size_demand *d,
		  const struct kvp_size_opts *o, bool short_of_replicas)
{
	unsigned sim_bits = KVP_SIZE_FAIL_MEMORY | KVP_SIZE_FAIL_THROUGHPUT | KVP_SIZE_FAIL_TTFT |
			    KVP_SIZE_FAIL_TPOT;
	c->failed &= ~sim_bits;
	c->never &= ~sim_bits;
	c->risk = c->risk_never = 0;
	double f = 1 + (o->latency_spread > 0 ? o->latency_spread : 0);
	c->never |= slo_misses(d, c->floor_ttft_s, c->floor_tpot_s, 1);
	c->risk_never |= slo_misses(d, c->floor_ttft_s, c->floor_tpot_s, f);
	if (short_of_replicas)
		c->failed |= KVP_SIZE_FAIL_THROUGHPUT;
	c->failed |= slo_misses(d, c->ttft_s, c->tpot_s, 1);
	c->risk |= slo_misses(d, c->ttft_s, c->tpot_s, f);
	c->failed |= c->never;
	c->risk &= ~c->failed;
	c->risk_never &= ~c->never;
	c->meets = c->failed == 0 && c->risk == 0;
	c->at_risk = c->failed == 0 && c->risk != 0;
	c->miss_sequences = 0;
	/* by how much: an idle replica's miss when no count cures it */
	c->miss_ttft_s = d->slo_ttft_s > 0
			 ? fmax(0, ((c->never & KVP_SIZE_FAIL_TTFT) ? c->floor_ttft_s : c->ttft_s) -
				      d->slo_ttft_s)
			 : 0;
	c->miss_tpot_s = d->slo_tpot_s > 0
			 ? fmax(0, ((c->never & KVP_SIZE_FAIL_TPOT) ? c->floor_tpot_s : c->tpot_s) -
				      d->slo_tpot_s)
			 : 0;
}

/* c's row from the run at its share on `replicas` replicas. */
static void take_run(struct kvp_size_config *c, const struct kvp_size_demand *d,
		     const struct kvp_serve_result *x, uint32_t replicas)
{
	c->replicas = replicas;
	c->count = c->tp * c->pp * replicas;
	c->cost_per_hour = c->price_per_hour > 0 ? c->price_per_hour * c->count : NAN;
	c->rate = d->rate > 0 ? d->rate / replicas : x->request_throughput;
	c->max_num_seqs = x->max_num_seqs;      /* what --emit launches is what ran */
	c->concurrency = x->mean_in_system;
	c->sequences = c->concurrency < 1 ? 1 : (uint64_t)ceil(c->concurrency - 1e-9);
	c->ttft_s = at_percentile(&x->ttft, d->percentile);
	c->tpot_s = at_percentile(&x->tpot, d->percentile);
	c->queue_s = c->queue_p_s = NAN;   /* the simulator has no separate wait */
	c->prefill_utilization = NAN;
	c->tokens_per_s = d->rate > 0 ? d->rate * d->output_mean : x->output_throughput * replicas;
	c->cost_per_mtok = c->tokens_per_s > 0 && c->price_per_hour > 0
			   ? c->cost_per_hour / (c->tokens_per_s * 3600 / 1e6)
			   : NAN;
}

kvp_status kvp_size_simulate(const struct kvp_model *m, const struct kvp_gpu *g,
			     const struct kvp_size_demand *d, const struct kvp_size_opts *o,
			     const struct kvp_size_sim_opts *so, struct kvp_size_config *c,
			     struct kvp_error *err)
{
	if (!kvp_size_sim_applies(c, d))
		return KVP_STATUS_OK;
	uint64_t requests = so->requests ? so->requests : KVP_SIZE_SIM_REQUESTS;
	uint32_t maxr = o->max_replicas ? o->max_replicas : KVP_SIZE_MAX_REPLICAS;
	bool closed = !(d->rate > 0);
	uint64_t most_users = closed ? d->users : 0;
	uint64_t cap_req = run_requests(requests, most_users);
	struct replica r;
	kvp_status st = replica_init(&r, m, g, d, o, so, c, cap_req, err);
	bool ok;
	if (st)
		goto out;
	/* the floor: one user alone, every request on an idle replica */
	if ((st = run_at(&r, 0, 1, SIM_FLOOR_REQUESTS, &ok, err)))
		goto out;
	c->floor_ttft_s = at_percentile(&r.res->ttft, d->percentile);
	r.floor_e2e = r.res->e2el.mean;
	c->floor_tpot_s = at_percentile(&r.res->tpot, d->percentile);
	c->simulated = true;
	/* a level one user alone misses, no replica count cures: the replicas
	 * are sized for the others (as kvp_size_search does), and the verdict
	 * says which level fails and by how much */
	struct kvp_size_demand rest = *d;
	if (d->slo_ttft_s > 0 && c->floor_ttft_s > d->slo_ttft_s)
		rest.slo_ttft_s = 0;
	if (d->slo_tpot_s > 0 && c->floor_tpot_s > d->slo_tpot_s)
		rest.slo_tpot_s = 0;
	r.d = &rest;
	double cap;
	double x0 = closed ? fmax(1, fmin((double)most_users, ceil(c->concurrency > 0 &&
									   isfinite(c->concurrency)
								   ? c->concurrency : 1)))
			   : (c->rate > 0 && isfinite(c->rate) ? c->rate : d->rate);
	/* a closed loop starts within a few engine batches: beyond them users
	 * only queue, and a run of millions of users costs seconds */
	double batch = c->seqs_cap ? (double)c->seqs_cap
				   : r.b->max_num_seqs ? (double)r.b->max_num_seqs : 256;
	if (closed && x0 > 4 * batch)
		x0 = 4 * batch;
	if ((st = capacity(&r, closed, x0, closed ? (double)most_users : INFINITY, requests, &cap, err)))
		goto out;
	c->sim_capacity = cap;
	double need = cap > 0 ? ceil((closed ? (double)d->users : d->rate) / cap - 1e-9) : INFINITY;
	bool short_of = !(need <= maxr);
	uint32_t rep = short_of ? maxr : (uint32_t)fmax(1, need);
	/* the row: a run at the replica's share (seeded noise may fail a
	 * count the search passed: one more replica, a few times) */
	for (int tries = 0;; tries++) {
		uint64_t share = closed ? (d->users + rep - 1) / rep : 0;
		if ((st = run_at(&r, closed ? 0 : d->rate / rep, share,
				 run_requests(requests, share),
				 &ok, err)))
			goto out;
		if (ok || short_of || tries == 3 || rep >= maxr)
			break;
		rep++;
	}
	take_run(c, d, r.res, rep);
	judge(c, d, o, short_of || !ok);
	/* the levels the replicas were not sized for fail as never (judge);
	 * the rest as the last run found them */
out:
	replica_free(&r);
	return st;
}
