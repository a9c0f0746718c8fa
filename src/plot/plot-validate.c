/* plot-validate.c: the validate chart: kvplan's predictions against
 * kvbench's measurements (decode time, capacity blocks) as square scatter
 * panels, with y = x and a +/- band. */
#include "plot/plot-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "time/validate.h"

static double panel_median_error(const struct kvp_plot_panel *pn)
{
	double errs[KVP_PLOT_MAX_ROWS * 2];
	size_t n = 0;
	for (size_t r = 0; r < pn->nrows; r++)
		for (size_t s = 0; s < pn->nseries && n < sizeof errs / sizeof errs[0]; s++)
			if (!isnan(pn->y[r][s]) && pn->y[r][s] > 0)
				errs[n++] = fabs(pn->x[r] - pn->y[r][s]) / pn->y[r][s];
	for (size_t i = 1; i < n; i++)  /* insertion sort: at most 256 */
		for (size_t j = i; j > 0 && errs[j - 1] > errs[j]; j--) {
			double t = errs[j];
			errs[j] = errs[j - 1];
			errs[j - 1] = t;
		}
	return n ? (n % 2 ? errs[n / 2] : (errs[n / 2 - 1] + errs[n / 2]) / 2) : 0;
}

static bool validate_point(struct kvp_plot_panel *a, struct kvp_plot_panel *b,
			   const struct kvp_vpoint *v)
{
	bool dec = v->kind == KVP_VPOINT_DECODE;
	struct kvp_plot_panel *pn = dec ? a : b;
	const char *slash = strrchr(v->file, '/');
	char title[KVP_PLOT_TITLE_MAX], label[KVP_PLOT_LABEL_MAX];
	/* MHA and GQA (and MQA) steps differ in what they read per query head:
	 * separate legend entries */
	uint32_t hq = v->shape.num_heads, hkv = v->shape.num_kv_heads;
	const char *attn = hkv == hq ? "MHA" : hkv == 1 ? "MQA" : "GQA";
	snprintf(title, sizeof title, "%.40s, %s, %s (%.64s)", v->device[0] ? v->device : v->backend,
		 kvp_dtype_name(v->shape.kv_dtype), attn, slash ? slash + 1 : v->file);
	size_t s = 0;
	while (s < pn->nseries && strcmp(pn->series[s].title, title) != 0)
		s++;
	if (s == pn->nseries) {
		/* colour by KV dtype, in the order first seen; shape by attention */
		char dt[48];
		snprintf(dt, sizeof dt, ", %s, ", kvp_dtype_name(v->shape.kv_dtype));
		int color = 0, most = 0;
		for (size_t i = 0; i < pn->nseries; i++) {
			if (!color && strstr(pn->series[i].title, dt))
				color = pn->series[i].color;
			most = pn->series[i].color > most ? pn->series[i].color : most;
		}
		struct kvp_plot_series *ns = kvp_plot_add_series(pn, title);
		if (!ns)
			return true; /* too many series: the point is left out, the rest go on */
		ns->color = color ? color : most + 1;
		ns->point = hkv == hq ? 7 : hkv == 1 ? 5 : 9;   /* circle, square, triangle */
	}
	if (dec)
		snprintf(label, sizeof label, "B %llu, n %llu, P %u", (unsigned long long)v->batch,
			 (unsigned long long)v->context, v->shape.block_size);
	else
		snprintf(label, sizeof label, "%u:%u, ctx %llu", v->shape.num_heads,
			 v->shape.num_kv_heads, (unsigned long long)v->context);
	size_t r;
	if (!kvp_plot_add_row(pn, dec ? v->predicted_s : (double)v->predicted.num_blocks, label, NULL,
			      &r))
		return false;
	pn->y[r][s] = dec ? v->measured_s : (double)v->blocks;
	return true;
}

kvp_status kvp_plot_validate(struct kvp_plot *p, const char *const *paths, size_t npaths,
			     const struct kvp_gpu *gpu, double efficiency, double band,
			     struct kvp_error *err)
{
	/* both panels, the empty one dropped at the end */
	size_t first = p->npanels;
	struct kvp_plot_panel *a = kvp_plot_add_panel(p, KVP_PLOT_STYLE_SCATTER);
	struct kvp_plot_panel *b = kvp_plot_add_panel(p, KVP_PLOT_STYLE_SCATTER);
	if (!a || !b)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "too many panels");
	struct kvp_validation v = {0};
	kvp_status st = KVP_STATUS_OK;
	for (size_t i = 0; i < npaths && !st; i++)
		st = kvp_validation_load(&v, paths[i], gpu, err);
	if (!st && !v.n)
		st = kvp_error_set(err, KVP_STATUS_INVALID, npaths ? paths[0] : NULL, 0, 0, "points",
				   "no point that passed validation and was timed");
	if (st) {
		kvp_validation_free(&v);
		return st;
	}
	kvp_validation_evaluate(&v, efficiency, 1, 1);
	size_t used = 0;
	for (; used < v.n; used++)
		if (!validate_point(a, b, &v.points[used])) {
			kvp_plot_note(p, "more than %d points of a kind: the rest left out",
				      KVP_PLOT_MAX_ROWS);
			break;
		}
	if (v.skipped)
		kvp_plot_note(p, "%zu point(s) that failed validation or were not timed left out",
			      v.skipped);
	if (v.decode_n)
		kvp_plot_note(p, "decode predicted on %s at efficiency %.3g%s", v.points[0].basis,
			      efficiency > 0 ? efficiency : v.points[0].base_efficiency,
			      efficiency > 0 ? " (calibrated)" : "");
	kvp_validation_free(&v);
	/* the median relative error of each panel: time and blocks are
	 * different questions, one median over both would answer neither */
	double med_a = panel_median_error(a), med_b = panel_median_error(b);
	if (a->nrows) {
		struct kvp_plot_panel *pn = a;
		snprintf(pn->title, sizeof pn->title, "decode step time: %zu point%s, median |error| "
			 "%.1f %%", a->nrows, a->nrows == 1 ? "" : "s", 100 * med_a);
		kvp_plot_axes(pn, "predicted by kvplan (ms)", "seconds",
		     "measured by kvbench, median (ms)", "seconds");
		pn->yscale = 1e-3;
		pn->logx = pn->logy = true;
		pn->band = band;
	}
	if (b->nrows) {
		struct kvp_plot_panel *pn = b;
		snprintf(pn->title, sizeof pn->title, "KV pool capacity: %zu point%s, median |error| "
			 "%.2f %%", b->nrows, b->nrows == 1 ? "" : "s", 100 * med_b);
		kvp_plot_axes(pn, "predicted KV blocks", "blocks",
		     "blocks kvbench allocated", "blocks");
		pn->logx = pn->logy = true;
		pn->band = band;
	}
	if (!b->nrows)
		p->npanels--;
	else if (!a->nrows) {
		memmove(&p->panel[first], b, sizeof *b);
		p->npanels--;
	}
	char files[256] = "";
	for (size_t i = 0; i < npaths && strlen(files) < 200; i++) {
		const char *slash = strrchr(paths[i], '/');
		snprintf(files + strlen(files), sizeof files - strlen(files), "%s%s", i ? ", " : "",
			 slash ? slash + 1 : paths[i]);
	}
	char meds[160] = "";
	if (a->nrows)
		snprintf(meds, sizeof meds, "decode time: median |error| %.1f %% over %zu point%s",
			 100 * med_a, a->nrows, a->nrows == 1 ? "" : "s");
	if (b->nrows)
		snprintf(meds + strlen(meds), sizeof meds - strlen(meds),
			 "%scapacity: median |error| %.2f %% over %zu point%s", a->nrows ? "; " : "",
			 100 * med_b, b->nrows, b->nrows == 1 ? "" : "s");
	snprintf(p->title, sizeof p->title,
		 "kvplan's predictions against kvbench's measurements: %s\\n%s; band +/- %g %%",
		 files, meds, 100 * band);
	return KVP_STATUS_OK;
}
