/* cmd-calibrate-print.c: `kvplan calibrate`'s output: the fitted constants
 * with their spread, and each observation's residual (measured against
 * predicted, before and after the fit), as a table explained line by line
 * or as out/output.c's records.  Every text from an input (paths, model
 * ids) reaches the terminal through kvp_term_text, files through the
 * writers. */
#include "cli/cmd-calibrate-print.h"

#include "cli/cli-bench.h"
#include "time/calibration-write.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* obs i as a record (the observation table's row and JSON item). */
static struct kvp_record *obs_record(const struct kvp_calibrate_print *p, size_t i)
{
	const struct kvp_calib_obs *o = &p->fit->obs[i];
	const struct kvp_bench_run *r = &p->runs[o->run];
	struct kvp_record *rec = kvp_record_new();
	if (!rec || !kvp_cli_bench_obs_fields(rec, r, o) ||
	    !kvp_record_f64(rec, "uncalibrated_s", o->uncalibrated_s) ||
	    !kvp_record_f64(rec, "predicted_s", o->predicted_s) ||
	    !kvp_record_f64(rec, "residual_uncalibrated", o->measured_s / o->uncalibrated_s - 1) ||
	    !kvp_record_f64(rec, "residual", o->measured_s / o->predicted_s - 1) ||
	    !kvp_record_bool(rec, "held_out", !o->train) ||
	    !kvp_record_f64(rec, "queued", o->queued)) {
		kvp_record_free(rec);
		return NULL;
	}
	return rec;
}

static struct kvp_record *const_record(const struct kvp_calib_result *f, int k)
{
	struct kvp_record *rec = kvp_record_new();
	if (!rec || !kvp_record_str(rec, "name", kvp_calib_result_param_name(f, k)) ||
	    !kvp_record_bool(rec, "supported", f->supported[k]) ||
	    !kvp_record_bool(rec, "fitted", f->fitted[k]) ||
	    !kvp_record_f64(rec, "uncalibrated", f->start[k]) ||
	    !kvp_record_f64(rec, "value", f->fitted[k] ? f->value[k] : f->start[k]) ||
	    !(f->fitted[k] && kvp_calib_result_spread_known(f)
		      ? kvp_record_f64(rec, "low", f->lo[k]) : kvp_record_null(rec, "low")) ||
	    !(f->fitted[k] && kvp_calib_result_spread_known(f)
		      ? kvp_record_f64(rec, "high", f->hi[k]) : kvp_record_null(rec, "high"))) {
		kvp_record_free(rec);
		return NULL;
	}
	return rec;
}

void kvp_calibrate_print_table(const struct kvp_calibrate_print *p)
{
	const struct kvp_calib_result *f = p->fit;
	char gpu[KVP_TERM_SIZE(64)], model[KVP_TERM_SIZE(128)];
	kvp_term_text(gpu, sizeof gpu, p->gpu);
	kvp_term_text(model, sizeof model, p->model);
	char cal[KVP_TERM_SIZE(512)];
	kvp_term_text(cal, sizeof cal, p->calibration ? p->calibration : "");
	if (p->evaluate) {
		printf("Prediction of %s on %s against %zu run%s (%zu measured times), with the\n"
		       "  %s%s; nothing fitted\n\n", model, gpu, p->nruns,
		       p->nruns == 1 ? "" : "s", f->nobs, p->calibration ? "constants of " :
		       "GPU's uncalibrated constants", cal);
		printf("  median |measured / predicted - 1|: %.1f%%\n\n", 100 * f->median_calibrated);
		goto obs;
	}
	printf("Calibration of %s on %s from %zu run%s (%zu measured times, %zu in the fit):\n"
	       "  each time is predicted by the step model (as `kvplan perf` does) and the\n"
	       "  constants below minimise the sum of log(measured / predicted)^2%s%s\n\n",
	       model, gpu, p->nruns, p->nruns == 1 ? "" : "s", f->nobs, f->ntrain,
	       p->calibration ? ", from those of " : "", cal);
	printf("  %-26s %14s %14s   %s\n", "constant", "uncalibrated", "fitted",
	       "spread (leave one run out)");
	for (int k = 0; k < KVP_CALIB_NPARAMS; k++) {
		if (f->fitted[k] && !kvp_calib_result_spread_known(f))
			printf("  %-26s %14.6g %14.6g   none: too few runs to refit with one left out\n",
			       kvp_calib_result_param_name(f, k), f->start[k], f->value[k]);
		else if (f->fitted[k])
			printf("  %-26s %14.6g %14.6g   [%.6g, %.6g]\n", kvp_calib_result_param_name(f, k),
			       f->start[k], f->value[k], f->lo[k], f->hi[k]);
		else
			printf("  %-26s %14.6g %14s   %s\n", kvp_calib_result_param_name(f, k), f->start[k],
			       "-", f->supported[k] ? "not fitted (too few runs or not asked)"
			       : "not supported: these runs do not tell it apart");
	}
	printf("\n  median |measured / predicted - 1|: %.1f%% uncalibrated, %.1f%% fitted",
	       100 * f->median_uncalibrated, 100 * f->median_calibrated);
	if (f->ntrain < f->nobs)
		printf(", %.1f%% on the %zu held-out times", 100 * f->median_held_out,
		       f->nobs - f->ntrain);
	/* the band a calibration file of this fit sets on perf's times */
	if (f->loo_spread > 0)
		printf("\n  each run predicted by the refit without it: worst %.1f%% (the\n"
		       "  leave-one-out spread; perf's band is 1 -/+ it, or the fit's worst\n"
		       "  residual where larger)", 100 * f->loo_spread);
	else if (!kvp_calib_result_spread_known(f))
		printf("\n  no refit could leave a run out (each would leave fewer times than\n"
		       "  constants), so how far a run the fit did not see strays is unknown:\n"
		       "  the file sets no band, and perf keeps its own");
	printf("\n\n");
obs:;
	struct kvp_record *rows[KVP_CALIB_MAX_OBS];
	size_t n = 0;
	for (size_t i = 0; i < f->nobs; i++)
		if ((rows[n] = obs_record(p, i)))
			n++;
	kvp_write_table(stdout, rows, n);
	for (size_t i = 0; i < n; i++)
		kvp_record_free(rows[i]);
	if (p->out_path) {
		char path[KVP_TERM_SIZE(512)];
		kvp_term_text(path, sizeof path, p->out_path);
		printf("\nWritten: %s (apply with --calibration %s)\n", path, path);
	}
}

bool kvp_calibrate_print_records(const struct kvp_calibrate_print *p, enum kvp_format fmt)
{
	const struct kvp_calib_result *f = p->fit;
	struct kvp_record *rows[KVP_CALIB_MAX_OBS] = {0};
	size_t n = 0;
	bool ok = true;
	for (size_t i = 0; i < f->nobs && ok; i++) {
		rows[n] = obs_record(p, i);
		ok = rows[n] != NULL;
		n += ok;
	}
	if (ok && fmt == KVP_FORMAT_CSV) {
		kvp_write_csv(stdout, rows, n);
	} else if (ok) {
		struct kvp_record *r = kvp_record_new();
		ok = r && kvp_record_str(r, "gpu", p->gpu) && kvp_record_str(r, "model", p->model) &&
		     kvp_record_u64(r, "runs", p->nruns) &&
		     kvp_record_f64(r, "median_residual_uncalibrated", f->median_uncalibrated) &&
		     kvp_record_f64(r, "median_residual", f->median_calibrated) &&
		     (f->ntrain < f->nobs ? kvp_record_f64(r, "median_residual_held_out",
							  f->median_held_out)
					  : kvp_record_null(r, "median_residual_held_out")) &&
		     (p->out_path ? kvp_record_str(r, "written", p->out_path)
				  : kvp_record_null(r, "written")) &&
		     kvp_record_list(r, "constants") && kvp_record_list(r, "observations");
		for (int k = 0; ok && k < KVP_CALIB_NPARAMS; k++) {
			struct kvp_record *c = const_record(f, k);
			ok = c && kvp_record_push(r, "constants", c);
		}
		for (size_t i = 0; ok && i < n; i++) {
			ok = kvp_record_push(r, "observations", rows[i]);
			rows[i] = NULL;
		}
		ok = ok && kvp_cli_warnings_to_record(p->warn, r);
		/* the spreads the file writes (rounded as it rounds them): the
		 * fit's largest residual (null when no refit could leave a run
		 * out: the file writes no band), and the leave-one-out refits'
		 * (null: no refit, as with --evaluate) */
		ok = ok && (kvp_calib_result_spread_known(f)
				    ? kvp_record_f64(r, "latency_spread",
						     kvp_calibration_spread_round(f->latency_spread))
				    : kvp_record_null(r, "latency_spread")) &&
		     (f->loo_spread > 0
			      ? kvp_record_f64(r, "latency_spread_loo",
					       kvp_calibration_spread_round(f->loo_spread))
			      : kvp_record_null(r, "latency_spread_loo"));
		if (ok)
			kvp_write_json(stdout, r);
		kvp_record_free(r);
	}
	for (size_t i = 0; i < n; i++)
		kvp_record_free(rows[i]);
	return ok;
}
