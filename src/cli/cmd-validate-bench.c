/* cmd-validate-bench.c: `kvplan validate` on the benchmark files an engine
 * already wrote (vLLM, SGLang, trtllm-bench, genai-perf, AIPerf; read as
 * `kvplan calibrate` reads them, cli-bench.c): each measured time beside
 * what the step model predicts for the same shape (time/validate-bench.h),
 * its signed error, whether it lies inside the band perf prints and within
 * --tolerance.  Every text from an input reaches the terminal through
 * kvp_term_text, JSON and CSV through out/output.c's writers. */
#include "cli/cmd-validate-bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "cli/cli-bench.h"
#include "out/output.h"
#include "time/validate-bench.h"

static const char *const cmd = "validate";

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* Observation i as a record: the CSV row and the JSON item. */
static struct kvp_record *obs_record(const struct kvp_bench_validation *v,
				     const struct kvp_bench_run *runs, size_t i)
{
	const struct kvp_calib_obs *o = &v->fit->obs[i];
	const struct kvp_bench_vpoint *p = &v->point[i];
	const struct kvp_bench_run *r = &runs[o->run];
	struct kvp_record *rec = kvp_record_new();
	if (!rec || !kvp_cli_bench_obs_fields(rec, r, o) ||
	    !kvp_record_f64(rec, "predicted_s", o->predicted_s) ||
	    !kvp_record_f64(rec, "error", p->error) ||
	    !kvp_record_f64(rec, "measured_over_predicted", o->measured_s / o->predicted_s) ||
	    !kvp_record_bool(rec, "in_band", p->in_band) ||
	    !kvp_record_bool(rec, "within", p->within) ||
	    !kvp_record_f64(rec, "queued", o->queued)) {
		kvp_record_free(rec);
		return NULL;
	}
	return rec;
}

static void print_table(const struct kvp_validate_bench_args *a, const struct kvp_cli_bench *b,
			const struct kvp_bench_validation *v)
{
	const struct kvp_calib_result *f = v->fit;
	char model[KVP_TERM_SIZE(128)], gpu[KVP_TERM_SIZE(64)], cal[KVP_TERM_SIZE(512)];
	char where[KVP_TERM_SIZE(600)], m[64], pr[64], e[32];
	kvp_term_text(model, sizeof model, a->c->model);
	kvp_term_text(gpu, sizeof gpu, b->g.name);
	const char *label = kvp_cli_calibration_label(a->calibration, &b->cal);
	kvp_term_text(cal, sizeof cal, label ? label : "");
	printf("Engine benchmark runs: measured against kvplan's prediction\n"
	       "  %s on %s, tp %u, engine %s: %zu run%s, %zu measured time%s\n"
	       "  each predicted by the step model as `kvplan perf` charges it (the\n"
	       "  functions `kvplan calibrate` fits through), with %s%s\n"
	       "  error = (predicted - measured) / measured; the band: measured / predicted\n"
	       "  from x%.2f to x%.2f (the band perf prints on its times)\n\n",
	       model, gpu, a->c->opts.par.tp, kvp_engine_name(a->c->opts.engine), b->runs.n,
	       b->runs.n == 1 ? "" : "s", f->nobs, f->nobs == 1 ? "" : "s",
	       label ? "the constants of " : "the GPU's constants and the\n"
	       "  engine's time data (uncalibrated)", cal, v->band_low, v->band_high);
	kvp_cli_calibration_print(a->calibration, &b->cal, "  ");
	if (label)
		printf("\n");
	int w = 3; /* "run" */
	for (size_t i = 0; i < f->nobs; i++) {
		const struct kvp_bench_run *r = &b->runs.v[f->obs[i].run];
		char raw[600];
		snprintf(raw, sizeof raw, "%s:%d", base_name(r->path), r->line);
		int len = (int)strlen(kvp_term_text(where, sizeof where, raw));
		w = len > w ? (len < 48 ? len : 48) : w;
	}
	printf("%-*s %-16s %-11s %7s %7s %6s %12s %12s %8s  %s\n", w, "run", "format", "measure",
	       "batch", "prompt", "output", "measured", "predicted", "error", "band");
	for (size_t i = 0; i < f->nobs; i++) {
		const struct kvp_calib_obs *o = &f->obs[i];
		const struct kvp_bench_vpoint *p = &v->point[i];
		const struct kvp_bench_run *r = &b->runs.v[o->run];
		char raw[600];
		snprintf(raw, sizeof raw, "%s:%d", base_name(r->path), r->line);
		kvp_term_text(where, sizeof where, raw);
		kvp_format_fixed(o->measured_s * 1e3, 3, " ms", m, sizeof m);
		kvp_format_fixed(o->predicted_s * 1e3, 3, " ms", pr, sizeof pr);
		snprintf(e, sizeof e, "%+.1f%%", 100 * p->error);
		printf("%-*.48s %-16s %-11s %7.4g %7llu %6llu %12s %12s %8s  %s%s", w, where,
		       kvp_bench_format_name(r->format), kvp_calib_obs_name(o->kind), r->batch,
		       (unsigned long long)r->prompt_tokens, (unsigned long long)r->output_tokens,
		       m, pr, e, p->in_band ? "in" : "out", p->within ? "" : "  <- outside");
		/* beyond what the KV pool holds: the waiting ones (ttft-load.h) */
		if (o->queued > 0)
			printf("  (%.0f queued)", o->queued);
		printf("\n");
	}
	const struct kvp_calib_obs *wo = &f->obs[v->worst];
	char raw[600];
	snprintf(raw, sizeof raw, "%s:%d", base_name(b->runs.v[wo->run].path),
		 b->runs.v[wo->run].line);
	printf("\n%zu time%s: median |error| %.1f%%, worst %+.1f%% (%s, %s); %zu outside "
	       "+/-%.3g%%, %zu outside the band\n", f->nobs, f->nobs == 1 ? "" : "s",
	       100 * v->median_abs, 100 * v->point[v->worst].error,
	       kvp_term_text(where, sizeof where, raw), kvp_calib_obs_name(wo->kind), v->outside,
	       100 * v->tolerance, v->outside_band);
}

static bool print_records(const struct kvp_validate_bench_args *a, const struct kvp_cli_bench *b,
			  const struct kvp_bench_validation *v, const struct kvp_cli_warnings *warn)
{
	const struct kvp_calib_result *f = v->fit;
	const char *label = kvp_cli_calibration_label(a->calibration, &b->cal);
	struct kvp_record **rows = calloc(f->nobs ? f->nobs : 1, sizeof *rows);
	bool ok = rows != NULL;
	for (size_t i = 0; ok && i < f->nobs; i++)
		ok = (rows[i] = obs_record(v, b->runs.v, i)) != NULL;
	if (ok && a->c->format == KVP_FORMAT_CSV) {
		kvp_write_csv(stdout, rows, f->nobs);
	} else if (ok) {
		struct kvp_record *r = kvp_record_new(), *sum = kvp_record_new();
		ok = r && sum && kvp_record_str(r, "gpu", b->g.name) &&
		     kvp_record_str(r, "model", a->c->model) &&
		     kvp_record_str(r, "engine", kvp_engine_name(a->c->opts.engine)) &&
		     kvp_record_u64(r, "tp", a->c->opts.par.tp) &&
		     (label ? kvp_record_str(r, "calibration", label)
			    : kvp_record_null(r, "calibration")) &&
		     (b->cal.kernel_path ? kvp_record_str(r, "calibration_kernel", b->cal.kernel_path)
					 : kvp_record_null(r, "calibration_kernel")) &&
		     kvp_record_f64(r, "band_low", v->band_low) &&
		     kvp_record_f64(r, "band_high", v->band_high) &&
		     kvp_record_f64(sum, "tolerance", v->tolerance) &&
		     kvp_record_u64(sum, "runs", b->runs.n) &&
		     kvp_record_u64(sum, "times", f->nobs) &&
		     kvp_record_f64(sum, "median_abs_error", v->median_abs) &&
		     kvp_record_f64(sum, "max_abs_error", v->max_abs) &&
		     kvp_record_u64(sum, "outside", v->outside) &&
		     kvp_record_u64(sum, "outside_band", v->outside_band) &&
		     kvp_record_bool(sum, "all_within", !v->outside);
		if (ok) {
			ok = kvp_record_rec(r, "summary", sum); /* owns sum, even when it fails */
			sum = NULL;
		}
		ok = ok && kvp_record_list(r, "observations");
		for (size_t i = 0; ok && i < f->nobs; i++) {
			ok = kvp_record_push(r, "observations", rows[i]);
			rows[i] = NULL;
		}
		ok = ok && kvp_cli_warnings_to_record(warn, r);
		if (ok)
			kvp_write_json(stdout, r);
		kvp_record_free(sum);
		kvp_record_free(r);
	}
	for (size_t i = 0; rows && i < f->nobs; i++)
		kvp_record_free(rows[i]);
	free(rows);
	return ok;
}

int kvp_validate_bench(const struct kvp_validate_bench_args *a)
{
	struct kvp_cli_bench b;
	struct kvp_bench_validation v = {0};
	struct kvp_error err = {0};
	int rc = kvp_cli_bench_load(cmd, a->c, a->files, a->nfiles, &a->given, a->calibration, &b);
	if (rc)
		goto out;
	if (kvp_bench_validate(b.m, &b.g, &a->c->opts, &b.hw, b.runs.v, b.runs.n, b.seen, b.nseen,
			       a->tolerance, &v, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	struct kvp_cli_warnings warn = {0};
	kvp_cli_bench_warnings(cmd, b.m, v.fit, &warn);
	if (a->c->format == KVP_FORMAT_TABLE) {
		print_table(a, &b, &v);
	} else if (!print_records(a, &b, &v, &warn)) {
		fprintf(stderr, "kvplan %s: out of memory\n", cmd);
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	rc = v.outside ? KVP_EXIT_FAIL : KVP_EXIT_OK;
out:
	kvp_bench_validation_free(&v);
	kvp_cli_bench_free(&b);
	return rc;
}
