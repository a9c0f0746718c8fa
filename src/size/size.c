/* size.c: GPU purchase sizing: the demand a workload makes, one
 * configuration checked against memory, throughput and service levels, the
 * search for the fewest replicas and the ranking by cost; the engine
 * settings that realise the choice are size-emit.c's.  See size.h.
 *
 * Stance: every byte comes from kvp_budget_compute and every second from the
 * perf module; this file only adds the queueing (Little's law, M/D/1 for the
 * prefill) and the search. */
#include "size/size.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/shape.h"
#include "out/output.h"
#include "out/shell-quote.h"
#include "base/units.h"
#include "out/yaml-writer.h"

#define SIZE_SAMPLES 65536   /* requests drawn to measure a workload */
#define SIZE_SEED 1
#define SIZE_MAX_REPLICAS KVP_SIZE_MAX_REPLICAS
#define SIZE_MAX_ITER 10000

double kvp_size_concurrency(double rate, double ttft_s, double output_tokens, double tpot_s)
{
	return rate * (ttft_s + output_tokens * tpot_s);
}

double kvp_size_wait_percentile(double w_q, double rho, double p)
{
	if (!(rho > 0) || !(w_q > 0) || rho <= 1 - p)
		return 0;
	if (rho >= 1 || !isfinite(w_q))
		return INFINITY;
	return w_q / rho * log(rho / (1 - p));
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

kvp_status kvp_size_demand(const struct kvp_workload *w, const struct kvp_model *m,
			   struct kvp_size_demand *out, struct kvp_error *err)
{
	const char *where = w->path[0] ? w->path : w->name;
	memset(out, 0, sizeof *out);
	out->rate = w->arrival_rate;
	out->users = w->concurrent_users;
	out->percentile = w->slo_percentile > 0 ? w->slo_percentile : 50;
	out->slo_ttft_s = w->slo_ttft_s;
	out->slo_tpot_s = w->slo_tpot_s;
	/* the lengths as the workload draws them: pairs kept, max_len applied */
	uint64_t *p = malloc(SIZE_SAMPLES * sizeof *p);
	if (!p)
		return kvp_error_set(err, KVP_STATUS_NOMEM, where, 0, 0, NULL, "out of memory");
	struct kvp_rng rng;
	kvp_rng_seed(&rng, SIZE_SEED);
	double sp = 0, so = 0;
	for (size_t i = 0; i < SIZE_SAMPLES; i++) {
		uint64_t pr, o;
		kvp_workload_sample(w, &rng, &pr, &o);
		p[i] = pr;
		sp += (double)pr;
		so += (double)o;
	}
	out->prompt_mean = sp / SIZE_SAMPLES;
	out->output_mean = so / SIZE_SAMPLES;
	qsort(p, SIZE_SAMPLES, sizeof *p, cmp_u64);
	size_t k = (size_t)ceil(out->percentile / 100 * SIZE_SAMPLES);
	out->prompt_p = p[k == 0 ? 0 : k - 1];
	free(p);
	if (!(out->prompt_mean >= 1) || !(out->output_mean >= 1))
		return kvp_error_set(err, KVP_STATUS_INVALID, where, 0, 0,
				     out->prompt_mean >= 1 ? "output" : "prompt",
				     "requests need at least one prompt and one output token on average");
	/* the KV a decoding sequence holds on average over time (perf.h):
	 * E[o (p + (o - 1) / 2)] / E[o], not mean p + (mean o - 1) / 2 */
	out->mean_context = (uint64_t)ceil(kvp_perf_held_context(w));
	if (!out->mean_context)
		out->mean_context = 1;
	out->max_model_len = w->max_len ? w->max_len : m->max_context;
	if (out->max_model_len < out->mean_context)
		return kvp_error_set(err, KVP_STATUS_INVALID, where, 0, 0, "max_len",
				     "%llu tokens is shorter than the mean request (%llu)",
				     (unsigned long long)out->max_model_len,
				     (unsigned long long)out->mean_context);
	return KVP_STATUS_OK;
}

/* --------------------------------------------------------- one replica */

struct replica {
	struct kvp_perf_ctx pc;
	double ttft_mean;     /* S + W_q */
	double rho;
	double output_mean;
	uint64_t context;
};

/* The decode step of c sequences (c fractional: interpolated between the
 * whole numbers around it, exact where the step is linear in the batch). */
static kvp_status step_at(const struct replica *r, double c, double *time_s,
			  enum kvp_perf_bound *bound, struct kvp_error *err)
{
	struct kvp_perf_step a, b;
	uint64_t lo = c < 1 ? 1 : (uint64_t)floor(c);
	kvp_status st = kvp_perf_decode_step(&r->pc, lo, r->context, &a, err);
	if (st)
		return st;
	*bound = a.bound;
	double f = c - (double)lo;
	if (f <= 0) {
		*time_s = a.time_s;
		return KVP_STATUS_OK;
	}
	if ((st = kvp_perf_decode_step(&r->pc, lo + 1, r->context, &b, err)))
		return st;
	*bound = f >= 0.5 ? b.bound : a.bound;
	*time_s = a.time_s + f * (b.time_s - a.time_s);
	return KVP_STATUS_OK;
}

/* Little's law on one replica at rate lambda: the least C with
 * C = lambda (TTFT + output x step(C) / (1 - rho)).  The map is increasing,
 * so iterating from C = 0 climbs to the least fixed point or runs away
 * (the decode cannot keep up): *converged false. */
static kvp_status solve_open(const struct replica *r, double lambda, double cap, double *c,
			     bool *converged, struct kvp_error *err)
{
	double x = 0, t;
	enum kvp_perf_bound bd;
	*converged = false;
	for (int i = 0; i < SIZE_MAX_ITER; i++) {
		kvp_status st = step_at(r, x, &t, &bd, err);
		if (st)
			return st;
		double next = kvp_size_concurrency(lambda, r->ttft_mean, r->output_mean, t / (1 - r->rho));
		if (fabs(next - x) <= 1e-9 * fmax(1, next)) {
			*c = next;
			*converged = true;
			return KVP_STATUS_OK;
		}
		x = next;
		if (x > cap)
			break;
	}
	*c = x;
	return KVP_STATUS_OK;
}

kvp_status kvp_size_evaluate(const struct kvp_model *m, const struct kvp_gpu *g,
			     const struct kvp_size_demand *d, const struct kvp_size_opts *o,
			     uint32_t tp, uint32_t replicas, struct kvp_size_config *out,
			     struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	snprintf(out->gpu, sizeof out->gpu, "%s", g->name);
	snprintf(out->vendor, sizeof out->vendor, "%s", g->vendor);
	out->tp = tp;
	out->replicas = replicas ? replicas : 1;
	/* with data-parallel attention each replica is dp ranks of tp GPUs,
	 * each rank serving its own share of the requests (shape.h) */
	uint32_t dp = kvp_shape_dp(&o->budget.par);
	uint64_t ranks = (uint64_t)out->replicas * dp;
	uint32_t pp = o->budget.par.pp ? o->budget.par.pp : 1;
	bool disagg = o->disagg_p > 0 && o->disagg_d > 0;
	uint32_t inst_p = disagg ? o->disagg_p : 1, inst_d = disagg ? o->disagg_d : 1;
	out->disagg_p = disagg ? inst_p : 0;
	out->disagg_d = disagg ? inst_d : 0;
	/* colocated: one instance both prefills and decodes */
	out->count = tp * pp * dp * out->replicas * (disagg ? inst_p + inst_d : 1);
	out->pp = pp;
	out->dp = dp;
	out->ep = kvp_shape_ep(&o->budget.par);
	const char *label = "";
	double price = kvp_size_gpu_hour(g, &o->cost, &label);
	snprintf(out->basis, sizeof out->basis, "%s", label);
	out->price_per_hour = price > 0 ? price : 0;
	out->cost_per_hour = price > 0 ? price * out->count : NAN;
	struct kvp_size_cost other = o->cost;
	other.basis = KVP_SIZE_BASIS_CLOUD;
	other.kind[0] = 0;
	out->cloud_gpu_hour = kvp_size_gpu_hour(g, &other, NULL);
	other.basis = KVP_SIZE_BASIS_OWN;
	out->own_gpu_hour = kvp_size_gpu_hour(g, &other, NULL);
	out->cost_per_mtok = NAN;
	out->max_model_len = d->max_model_len;
	out->engine = o->budget.engine;
	snprintf(out->engine_version, sizeof out->engine_version, "%s",
		 o->budget.engine_version ? o->budget.engine_version : "");
	out->bound = KVP_PERF_BOUND_BANDWIDTH;

	if (!kvp_size_engine_on_gpu(o->budget.engine, g)) {
		out->failed = out->never = KVP_SIZE_FAIL_ENGINE; /* not planned on it at all */
		return KVP_STATUS_OK;
	}
	struct kvp_budget *b = malloc(sizeof *b);
	struct replica *r = malloc(sizeof *r);
	kvp_status st = KVP_STATUS_OK;
	if (!b || !r) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	memset(r, 0, sizeof *r);
	struct kvp_budget_opts bo = o->budget;
	if (!bo.block_size)
		bo.block_size = kvp_size_block_default(bo.engine, m);
	bo.par.tp = tp;
	bo.par.pp = pp;
	bo.context = d->mean_context;
	bo.batch = 1;
	struct kvp_error e2 = {0};
	if ((st = kvp_budget_compute(m, g, &bo, b, &e2))) {
		if ((st == KVP_STATUS_INVALID && (strcmp(e2.field, "tp") == 0 ||
						  strcmp(e2.field, "pp") == 0 ||
						  strcmp(e2.field, "dp") == 0)) ||
		    strcmp(e2.field, "ep") == 0) {
			out->failed = KVP_SIZE_FAIL_SPLIT; /* not an error: this split is impossible */
			st = KVP_STATUS_OK;
		} else {
			*err = e2;
		}
		goto out;
	}
	out->kv_dtype = b->spec.kv_dtype;
	out->serving_dtype = b->spec.serving_dtype;
	if (!kvp_size_kv_on_gpu(g, b->spec.kv_dtype)) {
		out->failed = KVP_SIZE_FAIL_KV_DTYPE; /* no point timing a format it cannot hold */
		goto out;
	}
	out->block_size = b->block_size;
	out->utilization = b->utilization;
	out->max_batched_tokens = b->max_batched_tokens;
	out->kv_pool_bytes = b->kv_pool_bytes;
	out->weights_bytes = b->weights_bytes;
	out->max_sequences = b->max_sequences;
	if (!b->weights_fit)
		out->failed |= KVP_SIZE_FAIL_WEIGHTS;
	else if (kvp_budget_max_context(b, 1, d->max_model_len) < d->max_model_len)
		out->failed |= KVP_SIZE_FAIL_CONTEXT;

	struct kvp_perf_hw hw;
	if ((st = kvp_perf_hw_from_gpu(g, m, &hw, err)))
		goto out;
	/* a calibration's constants as perf takes them (its fixed costs and
	 * all-reduce latency over the engine's); given efficiencies win below */
	if (o->calibrated)
		kvp_calibration_apply(&o->calibration, &hw);
	if (o->decode_bw_efficiency > 0)
		hw.decode_bw_efficiency = o->decode_bw_efficiency;
	if (o->prefill_flops_efficiency > 0)
		kvp_perf_hw_prefill_efficiency(&hw, o->prefill_flops_efficiency);
	if (o->kv_bw_efficiency > 0)
		hw.kv_bw_efficiency = o->kv_bw_efficiency, hw.given |= KVP_PERF_GIVEN_KV_BW;
	/* the engine's fixed costs, as perf charges them (one step cost) */
	kvp_perf_hw_engine(&hw, &b->engine_model);
	if ((st = kvp_perf_init(&r->pc, &b->spec, b->weights_bytes, &hw, err)))
		goto out;
	r->context = d->mean_context;
	r->output_mean = d->output_mean;

	struct kvp_perf_step pre, pre_p;
	if ((st = kvp_perf_prefill(&r->pc, 1, (uint64_t)llround(fmax(1, d->prompt_mean)), &pre, err)) ||
	    (st = kvp_perf_prefill(&r->pc, 1, d->prompt_p ? d->prompt_p : 1, &pre_p, err)))
		goto out;
	out->prefill_s = pre.time_s;
	if (disagg) {
		/* the percentile prompt's KV, each GPU's shard over its own link */
		struct kvp_link link;
		uint64_t bytes = 0;
		kvp_perf_collective_link(&hw, (inst_p + inst_d) * tp * pp * dp, &link);
		if ((st = kvp_budget_pool_for(b, d->prompt_p ? d->prompt_p : 1, 1, &bytes)))
			goto out;
		out->transfer_s = link.effective_bps > 0 ? (double)bytes / link.effective_bps : 0;
	}

	/* the floor: however many replicas share the rate, each still prefills
	 * the percentile prompt and decodes at least one sequence, so an idle
	 * replica's TTFT and TPOT are the best any replica count reaches */
	enum kvp_perf_bound fb;
	r->rho = 0;
	if ((st = step_at(r, 1, &out->floor_tpot_s, &fb, err)))
		goto out;
	/* + the request's latency outside the steps (step.h request_latency_s) */
	out->floor_ttft_s = kvp_perf_request_s(&r->pc.hw, pre_p.time_s + out->transfer_s);
	if (d->slo_ttft_s > 0 && out->floor_ttft_s > d->slo_ttft_s)
		out->never |= KVP_SIZE_FAIL_TTFT;
	if (d->slo_tpot_s > 0 && out->floor_tpot_s > d->slo_tpot_s)
		out->never |= KVP_SIZE_FAIL_TPOT;

	/* the rate one replica sees and the sequences it holds */
	double lambda = 0, c = 1;
	double cap = fmax(1e4, 100.0 * (double)b->max_sequences);
	bool saturated = false, overloaded = false;
	enum kvp_perf_bound bd = KVP_PERF_BOUND_BANDWIDTH;
	double step = 0;
	double rho_p = 0;
	if (d->rate > 0) {
		lambda = d->rate / ((double)ranks * inst_d);
		rho_p = d->rate / ((double)ranks * inst_p) * pre.time_s;
		/* colocated, prefills stall the decode and a request holds its KV
		 * from arrival; disaggregated, neither on the decode side */
		r->rho = disagg ? 0 : rho_p;
		if (rho_p >= 1) {
			saturated = true;
		} else {
			out->queue_s = rho_p * pre.time_s / (2 * (1 - rho_p));
			r->ttft_mean = disagg ? 0 : pre.time_s + out->queue_s;
			bool conv;
			if ((st = solve_open(r, lambda, cap, &c, &conv, err)))
				goto out;
			saturated = !conv;
		}
	} else if (d->users > 0) {
		/* closed loop: C in flight, each a request after the other */
		c = (double)((d->users + ranks - 1) / ranks);
		if ((st = step_at(r, c, &step, &bd, err)))
			goto out;
		/* lambda W(lambda) = C, W = S + W_q(rho) + output x step / (1 - rho),
		 * rho = lambda S: the left side rises from 0 to infinity on
		 * [0, 1 / S), so bisect (issue 33: iterating lambda = C / W
		 * alternated past saturation and ended on 0).  The users overload
		 * the replica when, unqueued, they come back faster than its
		 * prefill serves: C / W(0) >= 1 / S; the queue then holds them
		 * back, and the row fails throughput so more replicas are chosen. */
		double s_pre = pre.time_s, dec = d->output_mean * step;
#define CLOSED_W(rho) (s_pre + (rho) * s_pre / (2 * (1 - (rho))) + dec / (1 - (rho)))
		double lo = 0, hi = s_pre > 0 ? 1 / s_pre : 0;
		overloaded = s_pre > 0 && c / CLOSED_W(0.0) >= hi;
		for (int i = 0; i < 200 && hi > 0; i++) {
			double mid = 0.5 * (lo + hi);
			if (mid * CLOSED_W(mid * s_pre) < c)
				lo = mid;
			else
				hi = mid;
		}
#undef CLOSED_W
		lambda = s_pre > 0 ? lo : c / fmax(dec, 1e-300);
		r->rho = lambda * s_pre;
		out->queue_s = r->rho < 1 ? r->rho * pre.time_s / (2 * (1 - r->rho)) : INFINITY;
		r->ttft_mean = pre.time_s + out->queue_s;
		saturated = r->rho >= 1;
		if (overloaded)
			out->failed |= KVP_SIZE_FAIL_THROUGHPUT;
	} else {
		r->rho = 0;
		r->ttft_mean = pre.time_s;
	}
	if (d->rate <= 0)
		rho_p = r->rho;
	out->rate = lambda;
	out->prefill_utilization = rho_p;

	out->concurrency = c;
	out->sequences = c < 1 ? 1 : (uint64_t)ceil(c - 1e-9);
	if (saturated) {
		/* the queue grows without bound: no concurrency, memory or latency to speak of */
		out->failed |= KVP_SIZE_FAIL_THROUGHPUT;
		out->concurrency = out->ttft_s = out->tpot_s = INFINITY;
		out->sequences = 0;
	} else {
		if ((st = step_at(r, c, &step, &bd, err)))
			goto out;
		out->step_s = step;
		out->bound = bd;
		out->tpot_s = step / (1 - r->rho);
		out->queue_p_s = d->queue_percentile
				 ? kvp_size_wait_percentile(out->queue_s, rho_p, d->percentile / 100)
				 : out->queue_s;
		out->ttft_s = kvp_perf_request_s(&r->pc.hw,
						 pre_p.time_s + out->queue_p_s + out->transfer_s);
		if (d->slo_ttft_s > 0 && out->ttft_s > d->slo_ttft_s)
			out->failed |= KVP_SIZE_FAIL_TTFT;
		if (d->slo_tpot_s > 0 && out->tpot_s > d->slo_tpot_s)
			out->failed |= KVP_SIZE_FAIL_TPOT;
	}
	if (!saturated && !(out->failed & (KVP_SIZE_FAIL_WEIGHTS | KVP_SIZE_FAIL_CONTEXT))) {
		if ((st = kvp_budget_pool_for(b, d->mean_context, out->sequences, &out->kv_bytes_needed)))
			goto out;
		if (out->sequences > b->max_sequences)
			out->failed |= KVP_SIZE_FAIL_MEMORY;
	}
	/* a max_num_seqs below what fits caps the sequences in flight */
	uint64_t seqs_max = o->max_num_seqs && o->max_num_seqs < b->max_sequences ? o->max_num_seqs
										   : b->max_sequences;
	out->seqs_cap = o->max_num_seqs;
	if (!saturated && out->sequences > seqs_max)
		out->failed |= KVP_SIZE_FAIL_MEMORY;
	/* what the deployment serves: the demand, when it keeps up */
	if (!saturated) {
		double served = lambda > 0 ? lambda * (double)ranks * inst_d
					   : (double)ranks / (r->ttft_mean + d->output_mean * out->tpot_s);
		out->tokens_per_s = served * d->output_mean;
		if (out->tokens_per_s > 0 && out->price_per_hour > 0)
			out->cost_per_mtok = out->cost_per_hour / (out->tokens_per_s * 3600 / 1e6);
	}
	/* engine settings: schedule what the pool holds at the mean context, but
	 * no more than keeps TPOT within its level (a burst above the planned
	 * concurrency then queues instead of slowing every sequence), and at
	 * least the planned concurrency */
	uint64_t lo = out->sequences, hi = b->max_sequences > lo ? b->max_sequences : lo;
	if (d->slo_tpot_s > 0 && !saturated && hi > lo) {
		while (hi > lo) {
			uint64_t mid = lo + (hi - lo + 1) / 2;
			double t;
			enum kvp_perf_bound bb;
			if ((st = step_at(r, (double)mid, &t, &bb, err)))
				goto out;
			if (t / (1 - r->rho) <= d->slo_tpot_s)
				lo = mid;
			else
				hi = mid - 1;
		}
	}
	out->max_num_seqs = o->max_num_seqs && hi > o->max_num_seqs ? o->max_num_seqs : hi;

	/* the conservative end of the band */
	double f = 1 + (o->latency_spread > 0 ? o->latency_spread : 0);
	if (!saturated && !(out->failed & (KVP_SIZE_FAIL_WEIGHTS | KVP_SIZE_FAIL_CONTEXT |
					   KVP_SIZE_FAIL_MEMORY)) &&
	    out->sequences > b->max_sequences_low)
		out->risk |= KVP_SIZE_FAIL_MEMORY;
	if (!saturated && d->slo_ttft_s > 0 && out->ttft_s * f > d->slo_ttft_s)
		out->risk |= KVP_SIZE_FAIL_TTFT;
	if (!saturated && d->slo_tpot_s > 0 && out->tpot_s * f > d->slo_tpot_s)
		out->risk |= KVP_SIZE_FAIL_TPOT;
	if (d->slo_ttft_s > 0 && out->floor_ttft_s * f > d->slo_ttft_s)
		out->risk_never |= KVP_SIZE_FAIL_TTFT;
	if (d->slo_tpot_s > 0 && out->floor_tpot_s * f > d->slo_tpot_s)
		out->risk_never |= KVP_SIZE_FAIL_TPOT;
	/* at the band's low end not one sequence fits: every replica holds at
	 * least one in flight, so no count cures that risk (the search must not
	 * climb to max_replicas for it) */
	if (!(out->failed & (KVP_SIZE_FAIL_WEIGHTS | KVP_SIZE_FAIL_CONTEXT)) &&
	    b->max_sequences_low == 0)
		out->risk_never |= KVP_SIZE_FAIL_MEMORY;
	if (saturated) {
		out->miss_ttft_s = d->slo_ttft_s > 0 ? INFINITY : 0;
		out->miss_tpot_s = d->slo_tpot_s > 0 ? INFINITY : 0;
	} else {
		out->miss_ttft_s = d->slo_ttft_s > 0 ? fmax(0, out->ttft_s - d->slo_ttft_s) : 0;
		out->miss_tpot_s = d->slo_tpot_s > 0 ? fmax(0, out->tpot_s - d->slo_tpot_s) : 0;
		if (out->failed & KVP_SIZE_FAIL_MEMORY)
			out->miss_sequences = out->sequences - seqs_max;
	}
out:
	out->never |= out->failed & KVP_SIZE_FAIL_FIXED;
	out->failed |= out->never;
	out->risk &= ~out->failed;
	out->risk_never &= ~out->never;
	out->meets = out->failed == 0 && out->risk == 0;
	out->at_risk = out->failed == 0 && out->risk != 0;
	free(b);
	free(r);
	return st;
}

double kvp_size_gpu_hour(const struct kvp_gpu *g, const struct kvp_size_cost *c, const char **label)
{
	if (c->basis == KVP_SIZE_BASIS_OWN) {
		if (label)
			*label = "own";
		double years = c->years > 0 ? c->years : KVP_SIZE_OWN_YEARS;
		double kwh = c->power_usd_per_kwh > 0 ? c->power_usd_per_kwh : KVP_SIZE_OWN_POWER_USD_PER_KWH;
		double pue = c->pue > 0 ? c->pue : KVP_SIZE_OWN_PUE;
		double u = c->utilization > 0 ? c->utilization : 1;
		/* a server bought whole: its price shared by its GPUs (the
		 * CPUs, memory and network they need come with it) */
		double buy = g->server_usd > 0 && g->node_gpus ? g->server_usd / g->node_gpus
							       : g->purchase_usd;
		if (!(buy > 0) || !(g->tdp_watts > 0)) {
			if (label)
				*label = "none";
			return NAN;
		}
		return buy / (years * 8760 * u) + g->tdp_watts / 1000 * pue * kwh;
	}
	const char *kind = g->price_kind[0] ? g->price_kind : "unlabelled";
	if (label)
		*label = g->price_per_hour > 0 ? kind : "none";
	if (!(g->price_per_hour > 0))
		return NAN;
	if (c->kind[0] && strcmp(c->kind, kind) && strcmp(kind, "given"))
		return NAN;
	return g->price_per_hour;
}

kvp_status kvp_size_search(const struct kvp_model *m, const struct kvp_gpu *g,
			   const struct kvp_size_demand *d, const struct kvp_size_opts *o,
			   uint32_t tp, struct kvp_size_config *out, struct kvp_error *err)
{
	uint32_t maxr = o->max_replicas ? o->max_replicas : SIZE_MAX_REPLICAS;
	kvp_status st = kvp_size_evaluate(m, g, d, o, tp, 1, out, err);
	/* what the search aims at: every constraint that replicas can cure
	 * (the floor, out->never, does not depend on the replica count) */
	/* central failures but the floor's, risks but the conservative floor's */
	unsigned never = out->never, risk_never = out->risk_never;
#define BAD(x) (((x)->failed & ~never) | ((x)->risk & ~risk_never))
	if (st || BAD(out) == 0 || (out->failed & KVP_SIZE_FAIL_FIXED) || maxr == 1 ||
	    (d->rate <= 0 && d->users <= 1))
		return st;
	struct kvp_size_config *hi = malloc(sizeof *hi), *mid = malloc(sizeof *mid);
	if (!hi || !mid) {
		free(hi);
		free(mid);
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	}
	/* more replicas only lighten each one: the predicate is monotone */
	if ((st = kvp_size_evaluate(m, g, d, o, tp, maxr, hi, err)))
		goto out;
	if (BAD(hi)) {
		/* only replicas short: say so at max_replicas; else keep one replica */
		if (!(BAD(hi) & (KVP_SIZE_FAIL_TTFT | KVP_SIZE_FAIL_TPOT)))
			*out = *hi;
		goto out;
	}
	uint32_t lo = 1, h = maxr; /* lo fails, h meets (all but the floor) */
	while (h - lo > 1) {
		uint32_t r = lo + (h - lo) / 2;
		if ((st = kvp_size_evaluate(m, g, d, o, tp, r, mid, err)))
			goto out;
		if (BAD(mid) == 0) {
			h = r;
			*hi = *mid;
		} else {
			lo = r;
		}
	}
	*out = *hi;
out:
	free(hi);
	free(mid);
	return st;
#undef BAD
}
