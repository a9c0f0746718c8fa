/* plot-pareto.c: the pareto chart: cost per million output tokens against
 * TPOT, one point per configuration kvplan size's search finds that fits
 * (GPU x tp x pp x dp x ep x KV dtype at its fewest replicas), the Pareto
 * front of cost, TPOT and TTFT drawn as a line through its points.
 *
 * Stance: this file decides nothing: kvp_size_search_space sizes each
 * configuration, kvp_size_pareto marks the front, exactly as `kvplan size
 * --pareto` does, so the front's points are the rows that command prints. */
#include "plot/plot-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "size/size.h"

/* kvp_size_pareto's candidates: a known cost and latency, no failure that
 * more replicas cannot cure at the count found */
#define FRONT_FAILS (KVP_SIZE_FAIL_FIXED | KVP_SIZE_FAIL_MEMORY | KVP_SIZE_FAIL_THROUGHPUT)

static bool plotted(const struct kvp_size_config *c)
{
	return !(c->failed & FRONT_FAILS) && isfinite(c->cost_per_mtok) && isfinite(c->tpot_s) &&
	       isfinite(c->ttft_s);
}

/* front first, then by TPOT, then by cost: the front's rows are consecutive
 * and ordered along x, so its line runs left to right without a break */
static int by_front_tpot(const void *pa, const void *pb)
{
	const struct kvp_size_config *a = pa, *b = pb;
	if (a->pareto != b->pareto)
		return a->pareto ? -1 : 1;
	if (a->tpot_s != b->tpot_s)
		return a->tpot_s < b->tpot_s ? -1 : 1;
	if (a->cost_per_mtok != b->cost_per_mtok)
		return a->cost_per_mtok < b->cost_per_mtok ? -1 : 1;
	return 0;
}

kvp_status kvp_plot_pareto(struct kvp_plot *p, const struct kvp_model *m,
			   const struct kvp_gpu *gpus, size_t ngpus, const struct kvp_size_demand *d,
			   const struct kvp_size_opts *o, const struct kvp_size_space *sp,
			   struct kvp_error *err)
{
	size_t per = kvp_size_space_points(sp), n = per * ngpus;
	struct kvp_size_config *cfg = calloc(n ? n : 1, sizeof *cfg);
	if (!cfg)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	kvp_status st = KVP_STATUS_OK;
	for (size_t i = 0; i < ngpus; i++)
		if ((st = kvp_size_search_space(m, &gpus[i], d, o, sp, &cfg[i * per], err)))
			goto out;
	size_t front = kvp_size_pareto(cfg, n);
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (plotted(&cfg[i]))
			cfg[k++] = cfg[i];
	if (k == 0) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, NULL,
				   "no configuration of %s fits with a known price (give --price "
				   "GPU=USD, or --cost own for GPUs with a purchase price)", m->name);
		goto out;
	}
	qsort(cfg, k, sizeof *cfg, by_front_tpot);
	struct kvp_plot_panel *pn = kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES);
	if (!pn) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "too many panels");
		goto out;
	}
	kvp_plot_axes(pn, "TPOT, time per output token (s)", "s",
		      "cost per million output tokens (USD)", "USD");
	pn->logy = true;
	pn->point_labels = true; /* each point says which configuration it is (issue 35) */
	char lbl[KVP_PLOT_TITLE_MAX];
	snprintf(lbl, sizeof lbl, "Pareto front of $/Mtok, TPOT and TTFT (%zu)", front);
	struct kvp_plot_series *fs = kvp_plot_add_series(pn, lbl);
	struct kvp_plot_series *os = NULL;
	if (k > front) {
		snprintf(lbl, sizeof lbl, "other configurations that fit (%zu)", k - front);
		os = kvp_plot_add_series(pn, lbl);
	}
	if (!fs || (k > front && !os)) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "too many series");
		goto out;
	}
	fs->color = 1;
	if (os) {
		os->color = 3;
		os->points = true;
	}
	size_t rows = 0;
	for (size_t i = 0; i < k; i++) {
		const struct kvp_size_config *c = &cfg[i];
		char dis[24] = "";
		if (c->disagg_p)
			snprintf(dis, sizeof dis, " %u:%u", c->disagg_p, c->disagg_d);
		snprintf(lbl, sizeof lbl, "%s tp%u pp%u dp%u ep%u %s%s x%u", c->gpu, c->tp, c->pp, c->dp,
			 c->ep, kvp_dtype_name(c->kv_dtype), dis, c->replicas);
		size_t r;
		if (!kvp_plot_add_row(pn, c->tpot_s, lbl, c->meets ? "meets" : c->at_risk ? "at risk" : "misses",
				      &r))
			break;
		pn->y[r][c->pareto ? 0 : 1] = c->cost_per_mtok;
		rows++;
	}
	if (rows < k)
		kvp_plot_note(p, "%zu configurations beyond %d points left out%s", k - rows,
			      KVP_PLOT_MAX_ROWS, rows < front ? ", some of the front among them" : "");
	snprintf(p->title, sizeof p->title,
		 "Cost per million output tokens against TPOT: %s, engine %s, cost %s\\n"
		 "line: the Pareto front of cost, TPOT and TTFT; points: every other configuration "
		 "that fits (%zu searched)",
		 m->name, kvp_engine_name(o->budget.engine),
		 o->cost.basis == KVP_SIZE_BASIS_OWN ? "own" : o->cost.kind[0] ? o->cost.kind : "cloud",
		 n);
out:
	free(cfg);
	return st;
}
