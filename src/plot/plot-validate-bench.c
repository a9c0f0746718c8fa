/* plot-validate-bench.c: the validate chart for an engine's benchmark runs:
 * each measured time (TTFT, TPOT, prefill, decode step, whole batch) against
 * the step model's prediction of it (time/validate-bench.h, as `kvplan
 * validate` prints them), one series per measure, with y = x and a +/- band.
 * Nothing is predicted here. */
#include "plot/plot-private.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "read/bench.h"
#include "time/validate-bench.h"

kvp_status kvp_plot_validate_bench(struct kvp_plot *p, const struct kvp_model *m,
				   const struct kvp_gpu *g, const struct kvp_budget_opts *o,
				   const struct kvp_perf_hw *hw, const struct kvp_bench_run *runs,
				   size_t n, double band, struct kvp_error *err)
{
	struct kvp_plot_panel *pn = kvp_plot_add_panel(p, KVP_PLOT_STYLE_SCATTER);
	if (!pn)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "too many panels");
	struct kvp_bench_validation v;
	kvp_status st = kvp_bench_validate(m, g, o, hw, runs, n, NULL, 0, 0, &v, err);
	if (st)
		return st;
	const struct kvp_calib_result *f = v.fit;
	/* one series per measure, in the order first met */
	int series_of[KVP_CALIB_LATENCY + 1];
	for (int k = 0; k <= KVP_CALIB_LATENCY; k++)
		series_of[k] = -1;
	static const int points[] = {7, 5, 9, 11, 13};  /* circle, square, triangles, diamond */
	size_t used = 0;
	for (; used < f->nobs; used++) {
		const struct kvp_calib_obs *ob = &f->obs[used];
		const struct kvp_bench_run *r = &runs[ob->run];
		if (series_of[ob->kind] < 0) {
			struct kvp_plot_series *s = kvp_plot_add_series(pn, kvp_calib_obs_name(ob->kind));
			if (!s)
				break;
			s->point = points[pn->nseries - 1];
			series_of[ob->kind] = (int)pn->nseries - 1;
		}
		const char *slash = strrchr(r->path, '/');
		char label[KVP_PLOT_LABEL_MAX];
		snprintf(label, sizeof label, "B %.4g, %llu+%llu, %.30s:%d", r->batch,
			 (unsigned long long)r->prompt_tokens, (unsigned long long)r->output_tokens,
			 slash ? slash + 1 : r->path, r->line);
		size_t row;
		if (!kvp_plot_add_row(pn, ob->predicted_s, label, NULL, &row))
			break;
		pn->y[row][series_of[ob->kind]] = ob->measured_s;
	}
	if (used < f->nobs)
		kvp_plot_note(p, "more than %d measured times: the rest left out", KVP_PLOT_MAX_ROWS);
	snprintf(pn->title, sizeof pn->title, "%zu measured time%s, median |error| %.1f %%, "
		 "%zu outside the step model's band x%.2f .. x%.2f", f->nobs, f->nobs == 1 ? "" : "s",
		 100 * v.median_abs, v.outside_band, v.band_low, v.band_high);
	kvp_plot_axes(pn, "predicted by kvplan's step model (ms)", "seconds",
		      "measured by the engine's benchmark, median (ms)", "seconds");
	pn->yscale = 1e-3;
	pn->logx = pn->logy = true;
	pn->band = band;
	char files[256] = "";
	for (size_t i = 0; i < n && strlen(files) < 200; i++) {
		if (i && strcmp(runs[i].path, runs[i - 1].path) == 0)
			continue;
		const char *slash = strrchr(runs[i].path, '/');
		snprintf(files + strlen(files), sizeof files - strlen(files), "%s%s",
			 files[0] ? ", " : "", slash ? slash + 1 : runs[i].path);
	}
	snprintf(p->title, sizeof p->title,
		 "kvplan's predictions against an engine's benchmark: %s\\n%s on %s; "
		 "band +/- %g %%", files, m->name, g->name, 100 * band);
	kvp_bench_validation_free(&v);
	return KVP_STATUS_OK;
}
