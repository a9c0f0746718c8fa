/* validate-bench.c: an engine's benchmark runs beside the step model's
 * predictions (validate-bench.h): kvp_calib_evaluate predicts, this judges
 * each observation against the band and the tolerance and sums them up. */
#include "time/validate-bench.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The median of v[0..n) (sorted in place; n is at most KVP_CALIB_MAX_OBS). */
static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			double x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

kvp_status kvp_bench_validate(const struct kvp_model *m, const struct kvp_gpu *g,
			      const struct kvp_budget_opts *o, const struct kvp_perf_hw *hw,
			      const struct kvp_bench_run *runs, size_t n,
			      const struct kvp_calib_seen *seen, size_t nseen, double tolerance,
			      struct kvp_bench_validation *out, struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	out->tolerance = tolerance;
	out->fit = malloc(sizeof *out->fit);
	out->point = calloc(KVP_CALIB_MAX_OBS, sizeof *out->point);
	double *abs_err = malloc(KVP_CALIB_MAX_OBS * sizeof *abs_err);
	kvp_status st = KVP_STATUS_OK;
	if (!out->fit || !out->point || !abs_err)
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	else
		st = kvp_calib_evaluate(m, g, o, hw, runs, n, seen, nseen, out->fit, err);
	if (st) {
		free(abs_err);
		kvp_bench_validation_free(out);
		return st;
	}
	const struct kvp_calib_result *f = out->fit;
	out->band_low = f->band_low;
	out->band_high = f->band_high;
	for (size_t i = 0; i < f->nobs; i++) {
		const struct kvp_calib_obs *ob = &f->obs[i];
		struct kvp_bench_vpoint *p = &out->point[i];
		double ratio = ob->measured_s / ob->predicted_s;
		p->error = (ob->predicted_s - ob->measured_s) / ob->measured_s;
		p->in_band = ratio >= f->band_low && ratio <= f->band_high;
		/* a hair of slack: 10 % is within 10 % whatever the rounding */
		p->within = fabs(p->error) <= tolerance * (1 + 1e-9);
		out->outside += !p->within;
		out->outside_band += !p->in_band;
		abs_err[i] = fabs(p->error);
		if (abs_err[i] > out->max_abs) {
			out->max_abs = abs_err[i];
			out->worst = i;
		}
	}
	out->median_abs = median(abs_err, f->nobs);
	free(abs_err);
	return KVP_STATUS_OK;
}

void kvp_bench_validation_free(struct kvp_bench_validation *v)
{
	free(v->fit);
	free(v->point);
	v->fit = NULL;
	v->point = NULL;
}
