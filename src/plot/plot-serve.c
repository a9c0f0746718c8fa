/* plot-serve.c: the serve chart: one replica under Poisson load on the
 * serving-loop simulator (time/serve-sim.h), (a) TTFT and TPOT percentiles
 * against the arrival rate with the knee marked, (b) the KV pool's use over
 * time at one rate.  Every number is a kvp_serve_run's; this file picks the
 * rates, the knee and thins the series to the plot's rows. */
#include "plot/plot-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "time/serve-sim.h"
#include "time/step.h"

#define SERVE_DEFAULT_RATES 12   /* 0.1 .. 1.2 x the saturated throughput */
#define SERVE_KNEE_FACTOR 2.0

size_t kvp_plot_serve_knee(const double *ttft_p90, const bool *meets, size_t n, bool slo)
{
	size_t knee = n;
	for (size_t i = 0; i < n; i++) {
		bool ok = slo ? meets[i] : ttft_p90[i] <= SERVE_KNEE_FACTOR * ttft_p90[0];
		if (!ok)
			break;
		knee = i;
	}
	return knee;
}

/* One Poisson run at `rate` into *res. */
static kvp_status run_rate(const struct kvp_budget *b, const struct kvp_perf_ctx *pc,
			   struct kvp_serve_opts *so, double rate, struct kvp_serve_result *res,
			   struct kvp_error *err)
{
	so->load = KVP_SERVE_POISSON;
	so->rate = rate;
	return kvp_serve_run(b, pc, so, res, err);
}

kvp_status kvp_plot_serve(struct kvp_plot *p, const struct kvp_model *m, const struct kvp_gpu *g,
			  const struct kvp_budget_opts *o, const struct kvp_workload *w,
			  const struct kvp_plot_serve_opts *po, struct kvp_error *err)
{
	struct kvp_budget *b = malloc(sizeof *b);
	struct kvp_serve_result *res = malloc(sizeof *res);
	kvp_status st = KVP_STATUS_OK;
	if (!b || !res) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	struct kvp_budget_opts bo = *o;
	uint64_t max_len = w->max_len ? w->max_len : m->max_context;
	if (!bo.context)
		bo.context = max_len;
	struct kvp_perf_hw hw;
	struct kvp_perf_ctx pc;
	if ((st = kvp_budget_compute(m, g, &bo, b, err)) || (st = kvp_perf_hw_from_gpu(g, m, &hw, err)) ||
	    (st = kvp_perf_init(&pc, &b->spec, b->weights_bytes, &hw, err)))
		goto out;
	struct kvp_serve_opts so = {.max_model_len = max_len, .workload = w,
				    .requests = po->requests ? po->requests : 1000,
				    .seed = po->seed ? po->seed : 1,
				    .prefix_tokens = w->prefix_tokens,
				    .prefix_fraction = w->prefix_tokens ? w->prefix_fraction : 0};
	double rates[KVP_PLOT_MAX_ROWS];
	size_t nr = po->nrates < KVP_PLOT_MAX_ROWS ? po->nrates : KVP_PLOT_MAX_ROWS;
	double capacity = NAN;
	if (nr) {
		memcpy(rates, po->rates, nr * sizeof *rates);
	} else {
		/* the engine kept full (a closed loop of max_num_seqs users): the
		 * most it completes a second, the sweep's scale */
		so.load = KVP_SERVE_CLOSED;
		so.users = b->max_num_seqs ? b->max_num_seqs : 256;
		uint64_t keep = so.requests;
		so.requests = 4 * so.users > keep ? 4 * so.users : keep;
		if ((st = kvp_serve_run(b, &pc, &so, res, err)))
			goto out;
		so.requests = keep;
		capacity = res->request_throughput;
		if (!(capacity > 0) || !isfinite(capacity)) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "rates",
					   "the saturated run completed nothing: give --rates");
			goto out;
		}
		nr = SERVE_DEFAULT_RATES;
		for (size_t i = 0; i < nr; i++)
			rates[i] = capacity * (double)(i + 1) / 10;
	}

	struct kvp_plot_panel *pa = kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES);
	struct kvp_plot_panel *pb = kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES);
	if (!pa || !pb) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "too many panels");
		goto out;
	}
	kvp_plot_axes(pa, "arrival rate (requests/s, Poisson)", "requests/s", "TTFT (ms, log scale)",
		      "seconds");
	snprintf(pa->y2label, sizeof pa->y2label, "TPOT (ms)");
	snprintf(pa->y2unit, sizeof pa->y2unit, "seconds");
	pa->yscale = pa->y2scale = 1e-3;
	pa->logy = true;
	static const char *const names[] = {"TTFT p50", "TTFT p90", "TTFT p99", "TPOT p50 (right axis)",
					    "TPOT p90 (right axis)", "TPOT p99 (right axis)"};
	for (size_t i = 0; i < 6; i++) {
		struct kvp_plot_series *s = kvp_plot_add_series(pa, names[i]);
		s->y2 = i >= 3;
		s->color = i < 3 ? 1 : 2;
		s->dash = (int)(i % 3) + 1;
	}
	double p90[KVP_PLOT_MAX_ROWS];
	bool meets[KVP_PLOT_MAX_ROWS];
	bool slo = po->slo_ttft_s > 0 || po->slo_tpot_s > 0;
	for (size_t i = 0; i < nr; i++) {
		if ((st = run_rate(b, &pc, &so, rates[i], res, err)))
			goto out;
		char lbl[KVP_PLOT_LABEL_MAX];
		snprintf(lbl, sizeof lbl, "%.3g", rates[i]);
		size_t row;
		if (!kvp_plot_add_row(pa, rates[i], lbl, NULL, &row))
			break;
		const struct kvp_serve_stat *t = &res->ttft, *u = &res->tpot;
		double v[6] = {t->p50, t->p90, t->p99, u->p50, u->p90, u->p99};
		for (size_t k = 0; k < 6; k++)
			pa->y[row][k] = v[k];
		p90[row] = t->p90;
		meets[row] = !(po->slo_ttft_s > 0 && t->p90 > po->slo_ttft_s) &&
			     !(po->slo_tpot_s > 0 && u->p90 > po->slo_tpot_s);
	}
	size_t knee = kvp_plot_serve_knee(p90, meets, pa->nrows, slo);
	if (knee < pa->nrows) {
		pa->mark_x = pa->x[knee];
		snprintf(pa->mark_label, sizeof pa->mark_label, "knee: %.3g requests/s", pa->x[knee]);
	} else {
		kvp_plot_note(p, "no knee: %s at the lowest rate", slo ? "the SLOs are missed"
								  : "no rate was swept");
	}
	snprintf(pa->title, sizeof pa->title,
		 "(a) latency against load; knee: the highest rate %s",
		 slo ? "with TTFT and TPOT p90 within the SLOs"
		     : "whose TTFT p90 is within 2 x the lowest rate's");

	/* (b) KV use over time at --rate, else at the knee */
	double kv_rate = po->kv_rate > 0 ? po->kv_rate
			 : knee < pa->nrows ? pa->x[knee] : rates[0];
	if ((st = run_rate(b, &pc, &so, kv_rate, res, err)))
		goto out;
	kvp_plot_axes(pb, "time since the first arrival (s)", "seconds", "KV blocks in use (% of the pool)",
		      "fraction");
	pb->yscale = 0.01;
	snprintf(pb->title, sizeof pb->title,
		 "(b) the KV pool over time at %.3g requests/s: mean %.1f %%, peak %.1f %%, %llu preemptions",
		 kv_rate, 100 * res->kv_mean_util, 100 * res->kv_max_util,
		 (unsigned long long)res->preemptions);
	kvp_plot_add_series(pb, "KV blocks in use")->color = 3;
	/* the series' buckets, averaged in groups to fit the rows */
	size_t group = (res->nseries + KVP_PLOT_MAX_ROWS - 1) / KVP_PLOT_MAX_ROWS;
	if (group == 0)
		group = 1;
	for (size_t i = 0; i < res->nseries; i += group) {
		double t = 0, u = 0;
		size_t k = 0;
		for (; k < group && i + k < res->nseries; k++) {
			t += res->series_t[i + k];
			u += res->series_util[i + k];
		}
		size_t row;
		if (!kvp_plot_add_row(pb, t / (double)k - res->start_s, "", NULL, &row))
			break;
		pb->y[row][0] = u / (double)k;
	}
	char cap[64] = "";
	if (isfinite(capacity))
		snprintf(cap, sizeof cap, "; rates 0.1 .. 1.2 x %.3g requests/s (engine kept full)",
			 capacity);
	snprintf(p->title, sizeof p->title,
		 "One replica under load (kvplan serve's simulator): %s on %s, engine %s\\n"
		 "%llu requests a rate, seed %llu%s",
		 m->name, g->name, kvp_engine_name(o->engine), (unsigned long long)so.requests,
		 (unsigned long long)so.seed, cap);
out:
	free(b);
	free(res);
	return st;
}
