/* api-size.c: the purchase search in the public API (include/kvplan.h):
 * `kvplan size` over a list of GPU handles as its JSON record, with the
 * option checks cli/cmd-size.c makes on its flags and the same steps after
 * the search (size/size-choose.c: rank, --simulate, the Pareto front, the
 * fewest GPUs, --pareto; then infinities refused), so a caller gets the
 * record the CLI prints for the same inputs (size/size-record.c writes
 * both), emit and calibration through the CLI's own steps
 * (size/size-emit-plan.h, size/size-calibrate.h).  The workload handle is
 * read through a shallow copy, the GPUs through copies priced as asked. */
#include "api/api-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "size/size-calibrate.h"
#include "size/size-choose.h"
#include "size/size-emit-plan.h"
#include "size/size-record.h"
#include "size/size.h"

void kvplan_size_opts_init(kvplan_size_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->latency_spread = -1;
}

/* An axis of the search (tp, pp, dp, ep): n values of 1 to 1024 GPUs, none
 * twice, into to[]; NULL list: def. */
static kvp_status axis(const char *name, const uint32_t *v, size_t n, uint32_t def, uint32_t *to,
		       size_t *nto, struct kvp_error *err)
{
	if (n > KVPLAN_SIZE_MAX_AXIS || (n && !v))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, name,
				     "at most %d values, and a list when its count > 0",
				     KVPLAN_SIZE_MAX_AXIS);
	if (!n) {
		to[0] = def;
		*nto = 1;
		return KVP_STATUS_OK;
	}
	for (size_t i = 0; i < n; i++) {
		if (v[i] < 1 || v[i] > 1024)
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, name,
					     "expected 1 to 1024 GPUs, got %u", v[i]);
		for (size_t j = 0; j < i; j++)
			if (v[j] == v[i])
				return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, name,
						     "%u is given twice", v[i]);
		to[i] = v[i];
	}
	*nto = n;
	return KVP_STATUS_OK;
}

/* 0 (not given) or a positive finite number; NaN fails the comparison. */
static kvp_status positive(const char *name, double v, struct kvp_error *err)
{
	if (v != 0 && !(v > 0 && isfinite(v)))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, name,
				     "expected a positive number, got %g", v);
	return KVP_STATUS_OK;
}

/* The cost basis, as cli-cost.c reads --cost and the owned GPUs' terms. */
static kvp_status cost_basis(const kvplan_size_opts *c, struct kvp_size_cost *cost,
			     struct kvp_error *err)
{
	static const char *const kinds[] = {"on-demand", "reserved-1y", "reserved-3y", "spot",
					    "serverless"};
	memset(cost, 0, sizeof *cost);
	const char *s = c->cost ? c->cost : "cloud";
	bool known = strcmp(s, "own") == 0 || strcmp(s, "cloud") == 0;
	if (strcmp(s, "own") == 0)
		cost->basis = KVP_SIZE_BASIS_OWN;
	for (size_t i = 0; !known && strncmp(s, "cloud:", 6) == 0 && i < sizeof kinds / sizeof *kinds;
	     i++)
		if (strcmp(s + 6, kinds[i]) == 0) {
			snprintf(cost->kind, sizeof cost->kind, "%s", kinds[i]);
			known = true;
		}
	if (!known)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "cost",
				     "expected cloud, cloud:KIND (on-demand, reserved-1y, "
				     "reserved-3y, spot, serverless) or own, got '%.64s'", s);
	const struct {
		const char *name;
		double v, min, max;
		double *to;
	} own[] = {
		{"years", c->years, 0, INFINITY, &cost->years},
		{"power_usd_per_kwh", c->power_usd_per_kwh, 0, INFINITY, &cost->power_usd_per_kwh},
		{"pue", c->pue, 1, INFINITY, &cost->pue},
		{"cost_utilization", c->cost_utilization, 0, 1, &cost->utilization},
	};
	for (size_t i = 0; i < sizeof own / sizeof *own; i++) {
		if (own[i].v == 0)
			continue;
		if (cost->basis != KVP_SIZE_BASIS_OWN)
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, own[i].name,
					     "prices owned GPUs: give cost \"own\"");
		/* pue may be 1; the others must be above their minimum */
		bool ok = isfinite(own[i].v) && own[i].v <= own[i].max &&
			  (own[i].min == 1 ? own[i].v >= 1 : own[i].v > own[i].min);
		if (!ok)
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, own[i].name,
					     "expected %s, got %g",
					     own[i].min == 1 ? "a number of at least 1"
					     : own[i].max == 1 ? "a fraction in (0, 1]"
							       : "a positive number",
					     own[i].v);
		*own[i].to = own[i].v;
	}
	return KVP_STATUS_OK;
}

/* The rest of the size options, checked as cmd-size.c checks its flags. */
static kvp_status scalars(const kvplan_size_opts *c, struct kvp_error *err)
{
	kvp_status st;
	if ((st = positive("rate", c->rate, err)) || (st = positive("ttft_s", c->ttft_s, err)) ||
	    (st = positive("tpot_s", c->tpot_s, err)))
		return st;
	if (c->percentile != 0 && !(c->percentile > 0 && c->percentile < 100))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "percentile",
				     "expected a number in (0, 100), got %g", c->percentile);
	if (c->max_replicas > 1u << 20)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "max_replicas",
				     "%u is too many", c->max_replicas);
	if (c->simulate > 4096)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "simulate",
				     "%u configurations is more than kvplan simulates (at most 4096)",
				     c->simulate);
	if ((st = kvp_api_efficiency("decode_bw_efficiency", c->decode_bw_efficiency, err)) ||
	    (st = kvp_api_efficiency("prefill_flops_efficiency", c->prefill_flops_efficiency, err)))
		return st;
	if (isnan(c->latency_spread) || c->latency_spread > 10)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "latency_spread",
				     "expected a fraction from 0 to 10, got %g", c->latency_spread);
	return KVP_STATUS_OK;
}

/* The search space beyond the GPUs, into the caller's arrays. */
struct space_buf {
	uint32_t tp[KVPLAN_SIZE_MAX_AXIS], pp[KVPLAN_SIZE_MAX_AXIS], dp[KVPLAN_SIZE_MAX_AXIS],
		ep[KVPLAN_SIZE_MAX_AXIS];
	enum kvp_dtype kv[KVPLAN_SIZE_MAX_AXIS];
	uint64_t seqs[KVPLAN_SIZE_MAX_AXIS];
	uint32_t pd[KVPLAN_SIZE_MAX_AXIS + 1][2];  /* colocated first */
};

static kvp_status space_of(const kvplan_size_opts *c, enum kvp_dtype kv_default,
			   struct space_buf *b, struct kvp_size_space *sp, struct kvp_error *err)
{
	static const uint32_t tps[] = {1, 2, 4, 8};
	kvp_status st;
	memset(sp, 0, sizeof *sp);
	if ((st = axis("tp", c->ntp ? c->tp : tps, c->ntp ? c->ntp : 4, 1, b->tp, &sp->ntp, err)) ||
	    (st = axis("pp", c->pp, c->npp, 1, b->pp, &sp->npp, err)) ||
	    (st = axis("dp", c->dp, c->ndp, 1, b->dp, &sp->ndp, err)) ||
	    (st = axis("ep", c->ep, c->nep, 1, b->ep, &sp->nep, err)))
		return st;
	sp->tp = b->tp, sp->pp = b->pp, sp->dp = b->dp, sp->ep = b->ep;
	if (c->nkv_dtypes > KVPLAN_SIZE_MAX_AXIS || (c->nkv_dtypes && !c->kv_dtypes))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "kv_dtypes",
				     "at most %d names, and a list when its count > 0",
				     KVPLAN_SIZE_MAX_AXIS);
	b->kv[0] = kv_default;
	sp->nkv = c->nkv_dtypes ? c->nkv_dtypes : 1;
	for (size_t i = 0; i < c->nkv_dtypes; i++) {
		if (!c->kv_dtypes[i] || !kvp_dtype_parse(c->kv_dtypes[i], &b->kv[i]))
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "kv_dtypes",
					     "unknown dtype '%.64s'",
					     c->kv_dtypes[i] ? c->kv_dtypes[i] : "");
		for (size_t j = 0; j < i; j++)
			if (b->kv[j] == b->kv[i]) /* fp8 and fp8_e4m3 are one */
				return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "kv_dtypes",
						     "'%.64s' and '%.64s' are the same dtype",
						     c->kv_dtypes[j], c->kv_dtypes[i]);
	}
	sp->kv = b->kv;
	if (c->nmax_num_seqs > KVPLAN_SIZE_MAX_AXIS || (c->nmax_num_seqs && !c->max_num_seqs))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "max_num_seqs",
				     "at most %d caps, and a list when its count > 0",
				     KVPLAN_SIZE_MAX_AXIS);
	for (size_t i = 0; i < c->nmax_num_seqs; i++) {
		if (c->max_num_seqs[i] > 1u << 20)
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "max_num_seqs",
					     "expected 0 (as many as fit) to 1048576, got %llu",
					     (unsigned long long)c->max_num_seqs[i]);
		b->seqs[i] = c->max_num_seqs[i];
	}
	if (c->nmax_num_seqs) {
		sp->seqs = b->seqs;
		sp->nseqs = c->nmax_num_seqs;
	}
	if (c->ndisagg > KVPLAN_SIZE_MAX_AXIS || (c->ndisagg && !c->disagg))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "disagg",
				     "at most %d pairs, and a list when its count > 0",
				     KVPLAN_SIZE_MAX_AXIS);
	b->pd[0][0] = b->pd[0][1] = 0;
	for (size_t i = 0; i < c->ndisagg; i++) {
		uint32_t p = c->disagg[i][0], d = c->disagg[i][1];
		if (p < 1 || p > 64 || d < 1 || d > 64)
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "disagg",
					     "expected P:D pairs of 1 to 64 instances, got %u:%u", p, d);
		for (size_t j = 0; j < i; j++)
			if (b->pd[j + 1][0] == p && b->pd[j + 1][1] == d)
				return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "disagg",
						     "%u:%u is given twice", p, d);
		b->pd[i + 1][0] = p;
		b->pd[i + 1][1] = d;
	}
	if (c->ndisagg) {
		sp->pd = (const uint32_t(*)[2])b->pd;
		sp->npd = c->ndisagg + 1;
	}
	return KVP_STATUS_OK;
}

/* What the search is asked beyond its options: the engine whose command
 * the record carries (KVP_ENGINE_GENERIC: none) and where the latency
 * spread came from. */
struct size_ask {
	enum kvp_engine emit;
	const char *spread_from;
	const char *calibration[2];   /* the record's calibration, calibration_kernel */
};

/* Everything after the options: the demand, the search on each GPU, the
 * answer's record into top. */
static kvp_status size_run(const struct kvp_model *m, kvplan_gpu *const *gh, size_t ngpu,
			   struct kvp_workload *w, const kvplan_size_opts *c,
			   struct kvp_size_opts *so, const struct kvp_size_space *sp,
			   const struct size_ask *ask, struct kvp_record *top,
			   struct kvp_error *err)
{
	bool emit = ask->emit != KVP_ENGINE_GENERIC;
	kvp_status st = KVP_STATUS_OK;
	if (c->rate > 0)
		w->arrival_rate = c->rate;
	if (c->users)
		w->concurrent_users = c->users;
	if (c->ttft_s > 0)
		w->slo_ttft_s = c->ttft_s;
	if (c->tpot_s > 0)
		w->slo_tpot_s = c->tpot_s;
	if (c->percentile > 0)
		w->slo_percentile = c->percentile;
	struct kvp_size_demand d;
	if ((st = kvp_size_demand(w, m, &d, err)))
		return st;
	d.queue_percentile = c->queue_percentile != 0;
	if (sp->npd > 1 && !(d.rate > 0))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "disagg",
				     "sizes against an arrival rate: give rate (or a workload with "
				     "arrival_rate)");
	size_t per_gpu = kvp_size_space_points(sp), n = ngpu * per_gpu;
	struct kvp_gpu *gpus = malloc(ngpu * sizeof *gpus);
	struct kvp_size_config *cfg = calloc(n + 1, sizeof *cfg);
	if (!gpus || !cfg) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < ngpu; i++) {
		gpus[i] = gh[i]->g;
		if (c->prices && c->prices[i] > 0) {
			gpus[i].price_per_hour = c->prices[i];
			snprintf(gpus[i].price_kind, sizeof gpus[i].price_kind, "given");
		}
		if ((st = kvp_size_search_space(m, &gpus[i], &d, so, sp, &cfg[i * per_gpu], err)))
			goto out;
		for (size_t k = i * per_gpu; k < (i + 1) * per_gpu; k++)
			cfg[k].origin = (uint32_t)i;
	}
	/* as cmd-size.c: points the engine cannot launch fail before ranking,
	 * and the choice must be one it can */
	if (emit)
		kvp_size_emit_filter(ask->emit, m, c->nkv_dtypes > 0, cfg, n);
	struct kvp_size_choice ch;
	if ((st = kvp_size_choose(m, gpus, &d, so, w, c->simulate, c->pareto_only != 0, cfg, n, &ch,
				  err)))
		goto out;
	n = ch.n;
	if ((emit && (st = kvp_size_emit_best_ok(ask->emit, m, ch.best, err))) ||
	    (st = kvp_size_check_finite(cfg, n, err)))
		goto out;
	struct kvp_size_summary s = {
		.model = m->name, .workload = w->name, .engine = so->budget.engine, .d = &d,
		.cost = &so->cost, .cfg = cfg, .n = n, .front = ch.front, .best = ch.best,
		.fewest = ch.fewest, .latency_spread = so->latency_spread,
		.latency_spread_from = ask->spread_from};
	bool prefix = w->prefix_tokens > 0 && w->prefix_fraction > 0;
	if (!kvp_size_summary_record(&s, top) ||
	    (emit && ch.best && !kvp_size_emit_record(top, ask->emit, m, ch.best, prefix)) ||
	    !(ask->calibration[0] ? kvp_record_str(top, "calibration", ask->calibration[0])
				  : kvp_record_null(top, "calibration")) ||
	    !(ask->calibration[1] ? kvp_record_str(top, "calibration_kernel", ask->calibration[1])
				  : kvp_record_null(top, "calibration_kernel")))
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
out:
	free(cfg);
	free(gpus);
	return st;
}

/* kvplan_size_json after the handles and the engine: the options checked
 * as the CLI checks its flags, the emit and calibration steps, the search;
 * the JSON into *json. */
static kvp_status size_setup(const struct kvp_model *m, kvplan_gpu *const *gpus, size_t ngpu,
			     const kvplan_engine *e, const kvplan_workload *wl,
			     const kvplan_budget_opts *opts, const kvplan_size_opts *cp,
			     struct size_ask *ask, struct kvp_record **out, struct kvp_error *ke)
{
	struct kvp_budget_opts o;
	kvplan_size_opts c = *cp;
	if (kvp_api_budget_opts(opts, e, gpus[0], &o, ke))
		return ke->status;
	/* the split is what size searches: a fixed one is refused, not dropped */
	if (o.par.tp != 1 || o.par.pp != 1 || o.par.dp > 1 || o.par.ep > 1 || o.par.gpus ||
	    o.max_num_seqs)
		return kvp_error_set(ke, KVP_STATUS_USAGE, NULL, 0, 0,
				     o.par.gpus ? "num_gpus" : o.max_num_seqs ? "max_num_seqs" : "tp",
				     "size searches the GPUs of a replica and the sequences it "
				     "schedules: give the lists of kvplan_size_opts (tp, pp, dp, ep, "
				     "max_num_seqs) and leave the budget options' at 0");
	struct kvp_size_opts so = {.budget = o,
				   .decode_bw_efficiency = c.decode_bw_efficiency,
				   .prefill_flops_efficiency = c.prefill_flops_efficiency,
				   .max_replicas = c.max_replicas,
				   .latency_spread = c.latency_spread >= 0 ? c.latency_spread : 0};
	struct space_buf b;
	struct kvp_size_space sp;
	kvp_status st;
	if ((st = scalars(&c, ke)) || (st = cost_basis(&c, &so.cost, ke)) ||
	    (st = space_of(&c, o.kv_dtype, &b, &sp, ke)))
		return st;
	for (size_t i = 0; c.prices && i < ngpu; i++)
		if (c.prices[i] != 0 && !(c.prices[i] > 0 && isfinite(c.prices[i])))
			return kvp_error_set(ke, KVP_STATUS_USAGE, NULL, 0, 0, "prices",
					     "GPU %zu: expected a positive price, got %g", i,
					     c.prices[i]);
	/* as cmd-size.c: the command must name the model planned, spread its
	 * experts and load its weights as planned */
	if (ask->emit != KVP_ENGINE_GENERIC) {
		char launch[sizeof m->path + 2];
		if ((st = kvp_size_launch_id(m, launch, sizeof launch, ke)) ||
		    (st = kvp_size_emit_precheck(ask->emit, m, o.dtype, &sp, ke)))
			return st;
	}
	if (c.calibration_kernel && !c.calibration)
		return kvp_error_set(ke, KVP_STATUS_USAGE, NULL, 0, 0, "calibration_kernel",
				     "a second calibration needs the first (calibration)");
	/* a calibration describes one GPU: only that GPU is sized with it */
	if (c.calibration) {
		if (ngpu != 1)
			return kvp_error_set(ke, KVP_STATUS_USAGE, NULL, 0, 0, "calibration",
					     "a calibration describes one GPU; give one GPU handle");
		const char *paths[] = {c.calibration, c.calibration_kernel};
		if ((st = kvp_size_calibrate(paths, c.calibration_kernel ? 2 : 1, &gpus[0]->g,
					     c.latency_spread >= 0, &so,
					     &ask->spread_from, ask->calibration, ke)))
			return st;
	}
	struct kvp_record *r = kvp_record_new();
	if (!r)
		return kvp_error_set(ke, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	/* a shallow copy: the levels and rate are written into it; the
	 * distributions stay the handle's, only read */
	struct kvp_workload w = wl->w;
	if ((st = size_run(m, gpus, ngpu, &w, &c, &so, &sp, ask, r, ke))) {
		kvp_record_free(r);
		return st;
	}
	*out = r;
	return KVP_STATUS_OK;
}

kvplan_status kvplan_size_json(const kvplan_model *m, kvplan_gpu *const *gpus, size_t ngpu,
			       const kvplan_engine *e, const kvplan_workload *wl,
			       const kvplan_budget_opts *opts, const kvplan_size_opts *size,
			       char **json, kvplan_error *err)
{
	struct kvp_error ke = {0};
	*json = NULL;
	if (!m || !wl) {
		kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, m ? "workload" : "model",
			      "none given");
		return kvp_api_fail(err, &ke);
	}
	if (!gpus || ngpu < 1 || ngpu > KVPLAN_SIZE_MAX_GPUS) {
		kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, "gpus",
			      "expected 1 to %d GPU handles, got %zu", KVPLAN_SIZE_MAX_GPUS,
			      gpus ? ngpu : 0);
		return kvp_api_fail(err, &ke);
	}
	for (size_t i = 0; i < ngpu; i++)
		if (!gpus[i]) {
			kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, "gpus",
				      "handle %zu is NULL", i);
			return kvp_api_fail(err, &ke);
		}
	kvplan_size_opts c;
	kvplan_size_opts_init(&c);
	if (size) {
		if (size->size < offsetof(kvplan_size_opts, rate)) {
			kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, "size",
				      "options size %u: set it with kvplan_size_opts_init", size->size);
			return kvp_api_fail(err, &ke);
		}
		memcpy(&c, size, size->size < sizeof c ? size->size : sizeof c);
	}
	/* emit: the engine named; with no engine handle, planned with it too
	 * (as `kvplan size --emit E` without --engine) */
	struct size_ask ask = {.emit = KVP_ENGINE_GENERIC,
			       .spread_from = c.latency_spread >= 0 ? "given" : "default"};
	if (c.emit && (!kvp_engine_parse(c.emit, &ask.emit) || ask.emit == KVP_ENGINE_GENERIC ||
		       kvp_engine_time_only(ask.emit))) {
		kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, "emit",
			      "expected vllm, sglang or trtllm, got '%.64s'", c.emit);
		return kvp_api_fail(err, &ke);
	}
	kvplan_engine *own = NULL;
	if (ask.emit != KVP_ENGINE_GENERIC && !e) {
		kvplan_status es = kvplan_engine_load(c.emit, NULL, &own, err);
		if (es)
			return es;
		e = own;
	}
	struct kvp_record *r = NULL;
	kvp_status st = size_setup(&m->m, gpus, ngpu, e, wl, opts, &c, &ask, &r, &ke);
	kvplan_engine_free(own);
	if (st)
		return kvp_api_fail(err, &ke);
	return kvp_api_json_out(r, true, json, err);
}
