/* cmd-validate.c: `kvplan validate FILE...`: kvbench's measurements beside
 * the planner's predictions for the same shapes, with their errors: decode
 * time (perf's roofline on the planner's KV bytes) and capacity (the
 * generic budget's blocks and sequences).  Optionally calibrated: one decode
 * efficiency fitted from the files themselves or from another run, as
 * `kvplan perf --calibration` would use it.  Exit 0 when every point lies
 * within its tolerance, 1 when one does not, 2 usage, 3 an invalid file. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli-options.h"
#include "units.h"
#include "validate.h"

static const char *const cmd = "validate";

static void help(void)
{
	printf("Usage: kvplan validate RESULTS... [OPTIONS]\n\n"
	       "Set kvbench's measurements (kvbench --out FILE.yaml or FILE.csv) beside\n"
	       "what the planner predicts for the same shapes, with the relative error\n"
	       "(predicted - measured) / measured of every point:\n"
	       "  decode    the step's time: the planner's KV bytes of the batch on a\n"
	       "            bandwidth basis x an efficiency (kvplan perf's decode model)\n"
	       "  capacity  the KV blocks (and sequences) the generic budget says fit in\n"
	       "            memory x utilization - weights, against what was allocated\n\n"
	       "The basis: --gpu's bandwidth at its calibrated efficiency (else 0.80);\n"
	       "without --gpu a CUDA run's bus rate (YAML results) at 0.80, or the read\n"
	       "ceiling kvbench measured beside the point at efficiency 1.\n\n"
	       "Options:\n"
	       "  --gpu NAME|PATH           predict on this GPU profile's bandwidth\n"
	       "  --calibrate               fit one decode efficiency to these files (the\n"
	       "                            median over the large points) and predict with it\n"
	       "  --calibrate-by dtype|shape  fit one efficiency per KV dtype, or per shape\n"
	       "                            (heads, head dim, block, KV dtype), to these files\n"
	       "  --calibration FILE        fit it to another kvbench run instead\n"
	       "  --efficiency F            predict decode at efficiency F (0 < F <= 1)\n"
	       "  --tolerance F             decode error allowed, 0.10 or 10%% (default 10%%)\n"
	       "  --capacity-tolerance F    block-count error allowed (default 1%%)\n"
	       "  --large-only              judge only the large decode points: those moving\n"
	       "                            at least a quarter of the KV bytes of the largest\n"
	       "                            point of their shape (smaller steps are fixed costs)\n"
	       "  --format F                table|json|csv (default table)\n"
	       "  --help                    this text\n\n"
	       "Points that failed kvbench's validation or were not timed are skipped.\n"
	       "A fit with as many efficiencies as points, and capacity on the cpu backend,\n"
	       "agree by construction: validate warns (and says so in JSON).\n"
	       "Exit status: 0 every point within its tolerance, 1 a point outside it,\n"
	       "2 usage, 3 an invalid results file (file:line:col: error: field: message).\n"
	       "See kvplan(1), VALIDATE, and kvbench(1).\n");
}

/* "0.10" or "10%" into (0, 1]; or, with zero_ok, also 0 ("0", "0%"). */
static bool fraction(const char *opt, const char *arg, bool zero_ok, double *out)
{
	double v;
	if (zero_ok && (strcmp(arg, "0%") == 0 || (kvp_parse_double(arg, &v) == 0 && v == 0))) {
		*out = 0;
		return true;
	}
	if (kvp_parse_fraction(arg, out) == 0)
		return true;
	kvp_cli_usage_error(cmd, "%s: expected a fraction in %s, 1] such as 0.1 or 10%%, got '%s'",
			    opt, zero_ok ? "[0" : "(0", arg);
	return false;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* One point as a record: the same fields for every kind, so that CSV has
 * one header; `measured` and `predicted` are in `unit`. */
static struct kvp_record *point_record(const struct kvp_vpoint *p)
{
	struct kvp_record *r = kvp_record_new();
	if (!r)
		return NULL;
	bool dec = p->kind == KVP_VPOINT_DECODE;
	bool ok = kvp_record_str(r, "file", p->file) && kvp_record_u64(r, "line", (uint64_t)p->line) &&
		  kvp_record_str(r, "kind", dec ? "decode" : "capacity") &&
		  kvp_record_str(r, "backend", p->backend) &&
		  kvp_record_str(r, "kv_dtype", kvp_dtype_name(p->shape.kv_dtype)) &&
		  kvp_record_u64(r, "num_heads", p->shape.num_heads) &&
		  kvp_record_u64(r, "num_kv_heads", p->shape.num_kv_heads) &&
		  kvp_record_u64(r, "head_dim", p->shape.head_dim) &&
		  kvp_record_u64(r, "block_size", p->shape.block_size) &&
		  kvp_record_u64(r, "layers", p->shape.layers) &&
		  (dec ? kvp_record_u64(r, "batch", p->batch) : kvp_record_null(r, "batch")) &&
		  kvp_record_u64(r, "context", p->context) &&
		  (dec ? kvp_record_u64(r, "tokens", p->tokens) : kvp_record_null(r, "tokens")) &&
		  kvp_record_str(r, "lengths", p->lengths) &&
		  kvp_record_str(r, "basis", dec ? p->basis : "generic-budget") &&
		  (dec ? kvp_record_f64(r, "bandwidth_gbps", p->bandwidth_bps / 1e9) &&
			 kvp_record_f64(r, "efficiency", p->efficiency) &&
			 kvp_record_u64(r, "predicted_kv_bytes", p->kv_bytes)
		       : kvp_record_null(r, "bandwidth_gbps") && kvp_record_null(r, "efficiency") &&
			 kvp_record_null(r, "predicted_kv_bytes")) &&
		  kvp_record_str(r, "unit", dec ? "s" : "blocks") &&
		  kvp_record_f64(r, "measured", dec ? p->measured_s : (double)p->blocks) &&
		  kvp_record_f64(r, "predicted", dec ? p->predicted_s : (double)p->predicted.num_blocks) &&
		  kvp_record_f64(r, "error", p->error) &&
		  (dec ? kvp_record_null(r, "sequences") && kvp_record_null(r, "predicted_sequences")
		       : kvp_record_u64(r, "sequences", p->sequences) &&
			 kvp_record_u64(r, "predicted_sequences", p->predicted.max_sequences)) &&
		  kvp_record_bool(r, "within", p->within) &&
		  (dec ? kvp_record_bool(r, "large", p->large) : kvp_record_null(r, "large"));
	if (!ok) {
		kvp_record_free(r);
		return NULL;
	}
	return r;
}

/* What the statistics cannot show: an in-sample fit with as many
 * efficiencies as points reproduces them by construction; a CPU capacity
 * point compares floor((limit - weights) / block) with the blocks malloc gave
 * under that same limit, so it checks the allocator, not the budget. */
struct caveats {
	bool in_sample;
	size_t parameters, points, exact;   /* kvp_validation_fit_degrees */
	size_t capacity_cpu;
};

static void caveats_find(struct kvp_validation *v, bool in_sample, enum kvp_fit_by by,
			 struct caveats *c)
{
	memset(c, 0, sizeof *c);
	c->in_sample = in_sample;
	if (in_sample)
		kvp_validation_fit_degrees(v, by, &c->parameters, &c->points, &c->exact);
	for (size_t i = 0; i < v->n; i++)
		c->capacity_cpu += v->points[i].kind == KVP_VPOINT_CAPACITY &&
				   strcmp(v->points[i].backend, "cpu") == 0;
}

static bool fit_exact(const struct caveats *c)
{
	return c->in_sample && c->points && c->parameters == c->points;
}

/* The warnings, on stderr in every format. */
static void caveats_warn(const struct caveats *c)
{
	if (fit_exact(c))
		fprintf(stderr, "kvplan %s: warning: the fit has as many efficiencies as points "
				"(%zu): it reproduces every fitted point by construction, so their "
				"0 %% error proves nothing; fit to another run (--calibration FILE) "
				"or measure more points per group\n", cmd, c->points);
	else if (c->in_sample && c->exact)
		fprintf(stderr, "kvplan %s: warning: %zu of %zu fitted group%s rest%s on one "
				"point, which the fit reproduces by construction (error 0)\n", cmd,
			c->exact, c->parameters, c->parameters == 1 ? "" : "s",
			c->exact == 1 ? "s" : "");
	if (c->capacity_cpu)
		fprintf(stderr, "kvplan %s: warning: %zu capacity point%s on the cpu backend: the "
				"budget's floor((limit - weights) / block) against the blocks malloc "
				"gave under the same limit agrees by construction; it checks the "
				"allocator, not the planner's budget (run --capacity on a GPU)\n",
			cmd, c->capacity_cpu, c->capacity_cpu == 1 ? "" : "s");
}

static void pct(char *buf, size_t size, double x)
{
	snprintf(buf, size, "%+.1f%%", 100 * x);
}

/* The table: one section per kind, the columns a reader compares. */
static void print_table(const struct kvp_validation *v, double tol, double cap_tol,
			bool large_only, const char *eff_note, const struct caveats *cv)
{
	char a[64], b[64], e[32], heads[32], where[300];
	int w = 5; /* "point" */
	for (size_t i = 0; i < v->n; i++) {
		int len = snprintf(where, sizeof where, "%s:%d", base_name(v->points[i].file),
				   v->points[i].line);
		w = len > w ? (len < 48 ? len : 48) : w;
	}
	for (int kind = 0; kind < 2; kind++) {
		size_t n = kind == KVP_VPOINT_DECODE ? v->decode_n : v->capacity_n;
		if (!n)
			continue;
		if (kind == KVP_VPOINT_DECODE)
			printf("Decode step: measured median time vs the planner's (%s)\n\n"
			       "%-*s %-7s %-6s %-7s %4s %3s %4s %10s %-12s %5s %11s %11s %8s\n",
			       eff_note, w, "point", "backend", "kv", "heads", "d", "P", "B", "tokens",
			       "basis", "eff", "measured", "predicted", "error");
		else
			printf("%sCapacity: KV blocks allocated vs the generic budget's\n\n"
			       "%-*s %-7s %-6s %-7s %4s %3s %6s %12s %12s %8s %9s %9s\n",
			       v->decode_n ? "\n" : "", w, "point", "backend", "kv", "heads", "d", "P",
			       "layers", "blocks", "predicted", "error", "seqs", "predicted");
		for (size_t i = 0; i < v->n; i++) {
			const struct kvp_vpoint *p = &v->points[i];
			if ((int)p->kind != kind)
				continue;
			snprintf(where, sizeof where, "%s:%d", base_name(p->file), p->line);
			snprintf(heads, sizeof heads, "%u:%u", p->shape.num_heads, p->shape.num_kv_heads);
			pct(e, sizeof e, p->error);
			const char *mark = p->within			 ? ""
					   : !large_only || p->kind != KVP_VPOINT_DECODE || p->large
						? "  <- outside"
						: "  (small step, not judged)";
			if (kind == KVP_VPOINT_DECODE) {
				kvp_format_fixed(p->measured_s * 1e3, 3, " ms", a, sizeof a);
				kvp_format_fixed(p->predicted_s * 1e3, 3, " ms", b, sizeof b);
				printf("%-*.48s %-7s %-6s %-7s %4u %3u %4llu %10llu %-12.12s %5.3f %11s "
				       "%11s %8s%s\n",
				       w, where, p->backend, kvp_dtype_name(p->shape.kv_dtype), heads,
				       p->shape.head_dim, p->shape.block_size,
				       (unsigned long long)p->batch, (unsigned long long)p->tokens,
				       p->basis, p->efficiency, a, b, e, mark);
			} else {
				kvp_format_u64(p->blocks, a, sizeof a);
				kvp_format_u64(p->predicted.num_blocks, b, sizeof b);
				printf("%-*.48s %-7s %-6s %-7s %4u %3u %6u %12s %12s %8s %9llu %9llu%s\n",
				       w, where, p->backend, kvp_dtype_name(p->shape.kv_dtype), heads,
				       p->shape.head_dim, p->shape.block_size, p->shape.layers, a, b, e,
				       (unsigned long long)p->sequences,
				       (unsigned long long)p->predicted.max_sequences, mark);
			}
		}
	}
	printf("\n");
	if (v->decode_n) {
		const struct kvp_vpoint *w = &v->points[v->worst];
		printf("decode: %zu point(s), median |error| %.1f%%, worst %+.1f%% (%s:%d, %s %u:%u), "
		       "%zu outside +/-%.3g%%\n",
		       v->decode_n, 100 * v->decode_median_abs, 100 * w->error, base_name(w->file),
		       w->line, kvp_dtype_name(w->shape.kv_dtype), w->shape.num_heads,
		       w->shape.num_kv_heads, v->decode_outside, 100 * tol);
		if (v->large_n < v->decode_n)
			printf("decode, large steps: %zu point(s), median |error| %.1f%%, worst "
			       "%.1f%%, %zu outside +/-%.3g%%%s\n",
			       v->large_n, 100 * v->large_median_abs, 100 * v->large_max_abs,
			       v->large_outside, 100 * tol, large_only ? " (judged)" : "");
	}
	if (v->capacity_n)
		printf("capacity: %zu point(s), worst |error| %.2f%% in blocks, %zu outside "
		       "+/-%.3g%%\n",
		       v->capacity_n, 100 * v->capacity_max_abs, v->capacity_outside, 100 * cap_tol);
	if (v->skipped)
		printf("skipped: %zu point(s) that failed validation or were not timed\n", v->skipped);
	if (fit_exact(cv))
		printf("fit: %zu efficiencies on %zu points, exact by construction: the decode "
		       "errors of the fitted points prove nothing\n", cv->parameters, cv->points);
	else if (cv->in_sample && cv->points)
		printf("fit: %zu efficienc%s on %zu points (in sample); %zu group%s of one point, "
		       "exact by construction\n", cv->parameters, cv->parameters == 1 ? "y" : "ies",
		       cv->points, cv->exact, cv->exact == 1 ? "" : "s");
	if (cv->capacity_cpu)
		printf("capacity on the cpu: the blocks malloc gave under the budget's own limit; "
		       "agreement is by construction\n");
}

/* Whether a judged point lies outside its tolerance. */
static bool failed(const struct kvp_validation *v, bool large_only)
{
	return (large_only ? v->large_outside : v->decode_outside) || v->capacity_outside;
}

static int write_output(const struct kvp_validation *v, enum kvp_format fmt, double tol,
			double cap_tol, bool large_only, const char *eff_source, size_t fit_points,
			const struct caveats *cv)
{
	struct kvp_record **rows = calloc(v->n ? v->n : 1, sizeof *rows);
	struct kvp_record *top = kvp_record_new(), *sum = kvp_record_new();
	int rc = KVP_EXIT_OK;
	bool ok = rows && top && sum;
	for (size_t i = 0; ok && i < v->n; i++)
		ok = (rows[i] = point_record(&v->points[i])) != NULL;
	if (!ok) {
		fprintf(stderr, "kvplan %s: out of memory\n", cmd);
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	if (fmt == KVP_FORMAT_CSV) {
		kvp_write_csv(stdout, rows, v->n);
		goto out;
	}
	ok = kvp_record_str(top, "efficiency_source", eff_source) &&
	     (v->efficiency > 0 ? kvp_record_f64(top, "efficiency", v->efficiency)
				: kvp_record_null(top, "efficiency")) &&
	     kvp_record_u64(top, "fit_points", fit_points) &&
	     kvp_record_bool(top, "fit_in_sample", cv->in_sample) &&
	     kvp_record_u64(top, "fit_parameters", cv->parameters) &&
	     kvp_record_u64(top, "fit_exact_groups", cv->exact) &&
	     kvp_record_bool(top, "fit_exact_by_construction", fit_exact(cv)) &&
	     kvp_record_f64(sum, "tolerance", tol) &&
	     kvp_record_f64(sum, "capacity_tolerance", cap_tol) &&
	     kvp_record_u64(sum, "decode_points", v->decode_n) &&
	     kvp_record_u64(sum, "decode_outside", v->decode_outside) &&
	     kvp_record_f64(sum, "decode_median_abs_error", v->decode_median_abs) &&
	     kvp_record_f64(sum, "decode_max_abs_error", v->decode_max_abs) &&
	     kvp_record_u64(sum, "large_points", v->large_n) &&
	     kvp_record_u64(sum, "large_outside", v->large_outside) &&
	     kvp_record_f64(sum, "large_median_abs_error", v->large_median_abs) &&
	     kvp_record_f64(sum, "large_max_abs_error", v->large_max_abs) &&
	     kvp_record_u64(sum, "capacity_points", v->capacity_n) &&
	     kvp_record_u64(sum, "capacity_outside", v->capacity_outside) &&
	     kvp_record_f64(sum, "capacity_max_abs_error", v->capacity_max_abs) &&
	     kvp_record_u64(sum, "capacity_cpu_points", cv->capacity_cpu) &&
	     kvp_record_u64(sum, "skipped", v->skipped) &&
	     kvp_record_bool(sum, "large_only", large_only) &&
	     kvp_record_bool(sum, "all_within", !failed(v, large_only)) &&
	     kvp_record_rec(top, "summary", sum);
	sum = NULL;
	for (size_t i = 0; ok && i < v->n; i++) {
		ok = kvp_record_push(top, "points", rows[i]);
		rows[i] = NULL;
	}
	if (!ok) {
		fprintf(stderr, "kvplan %s: out of memory\n", cmd);
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	kvp_write_json(stdout, top);
out:
	for (size_t i = 0; rows && i < v->n; i++)
		kvp_record_free(rows[i]);
	free(rows);
	kvp_record_free(top);
	kvp_record_free(sum);
	return rc;
}

/* The efficiency the decode predictions use: 0 (each basis' default),
 * --efficiency, or one fitted to a results file.  *source says which. */
static int choose_efficiency(struct kvp_validation *v, bool calibrate, const char *calib_path,
			     const struct kvp_gpu *gpu, double *eff, char *source, size_t size,
			     size_t *used)
{
	if (calibrate) {
		*eff = kvp_validation_fit(v, used);
		snprintf(source, size, "fitted to these results");
	} else if (calib_path) {
		struct kvp_validation c = {0};
		struct kvp_error err = {0};
		if (kvp_validation_load(&c, calib_path, gpu, &err)) {
			kvp_validation_free(&c);
			return kvp_cli_error(cmd, &err);
		}
		*eff = kvp_validation_fit(&c, used);
		kvp_validation_free(&c);
		snprintf(source, size, "fitted to %s", calib_path);
		if (!*used) {
			fprintf(stderr, "kvplan %s: %s: no validated, timed decode point to fit "
					"an efficiency to\n", cmd, calib_path);
			return KVP_EXIT_INPUT;
		}
	}
	if ((calibrate || calib_path) && !(*eff > 0 && *eff <= 4)) {
		fprintf(stderr, "kvplan %s: the fitted efficiency %.3g is not plausible (expected "
				"a share of the basis' bandwidth)\n", cmd, *eff);
		return KVP_EXIT_INPUT;
	}
	return KVP_EXIT_OK;
}

/* One efficiency per group (KV dtype or shape), fitted to v itself or to
 * the kvbench run at calib_path and carried over group by group (a group
 * that run lacks takes its whole-run figure).  *source says which. */
static int fit_groups(struct kvp_validation *v, enum kvp_fit_by by, const char *calib_path,
		      const struct kvp_gpu *gpu, char *source, size_t size, size_t *used)
{
	const char *what = by == KVP_FIT_DTYPE ? "KV dtype" : "shape";
	struct kvp_validation c = {0};
	struct kvp_error err = {0};
	struct kvp_validation *from = v;
	if (calib_path) {
		if (kvp_validation_load(&c, calib_path, gpu, &err)) {
			kvp_validation_free(&c);
			return kvp_cli_error(cmd, &err);
		}
		from = &c;
	}
	size_t groups = kvp_validation_fit_by(from, by);
	*used = 0;
	for (size_t i = 0; i < from->n; i++)
		*used += from->points[i].kind == KVP_VPOINT_DECODE && from->points[i].large;
	if (!*used) {
		kvp_validation_free(&c);
		fprintf(stderr, "kvplan %s: %s: no validated, timed decode point to fit an "
				"efficiency to\n", cmd, calib_path ? calib_path : "the results");
		return KVP_EXIT_INPUT;
	}
	if (!calib_path) {
		snprintf(source, size, "fitted per %s to these results (%zu group%s)", what, groups,
			 groups == 1 ? "" : "s");
		return KVP_EXIT_OK;
	}
	size_t whole_used;
	double whole = kvp_validation_fit(&c, &whole_used);
	size_t missed = kvp_validation_apply_fit(v, &c, by, whole);
	kvp_validation_free(&c);
	if (missed == (size_t)-1) {
		fprintf(stderr, "kvplan %s: out of memory\n", cmd);
		return KVP_EXIT_FAIL;
	}
	snprintf(source, size, "fitted per %s to %s (%zu group%s; %zu point(s) of a %s it "
		 "lacks at its whole-run %.3f)", what, calib_path, groups, groups == 1 ? "" : "s",
		 missed, what, whole);
	return KVP_EXIT_OK;
}

/* --calibrate-by: dtype or shape. */
static bool fit_by_parse(const char *name, const char *arg, void *dest)
{
	enum kvp_fit_by *by = dest;
	if (strcmp(arg, "dtype") == 0)
		*by = KVP_FIT_DTYPE;
	else if (strcmp(arg, "shape") == 0)
		*by = KVP_FIT_SHAPE;
	else {
		kvp_cli_usage_error(name, "--calibrate-by: expected dtype or shape (one efficiency "
				    "for all: --calibrate), got '%s'", arg);
		return false;
	}
	return true;
}

static bool efficiency_parse(const char *name, const char *arg, void *dest)
{
	return fraction("--efficiency", arg, false, dest);
}

static bool tolerance_parse(const char *name, const char *arg, void *dest)
{
	return fraction("--tolerance", arg, true, dest);
}

static bool capacity_tolerance_parse(const char *name, const char *arg, void *dest)
{
	return fraction("--capacity-tolerance", arg, true, dest);
}

static bool format_parse(const char *name, const char *arg, void *dest)
{
	if (kvp_format_parse(arg, dest))
		return true;
	kvp_cli_usage_error(name, "--format: expected table, json or csv, got '%s'", arg);
	return false;
}

int kvp_cmd_validate(int argc, char **argv)
{
	const char *gpu_name = NULL, *calib_path = NULL;
	bool calibrate = false, large_only = false;
	enum kvp_fit_by fit_by = KVP_FIT_ALL;
	double eff = 0, tol = 0.10, cap_tol = 0.01;
	enum kvp_format fmt = KVP_FORMAT_TABLE;
	const struct kvp_cli_opt opts[] = {
		{.name = "gpu", .kind = KVP_CLI_OPT_STRING, .dest = &gpu_name},
		{.name = "calibrate", .kind = KVP_CLI_OPT_FLAG, .dest = &calibrate},
		{.name = "calibrate-by", .kind = KVP_CLI_OPT_PARSE, .dest = &fit_by, .parse = fit_by_parse},
		{.name = "calibration", .kind = KVP_CLI_OPT_STRING, .dest = &calib_path},
		{.name = "efficiency", .kind = KVP_CLI_OPT_PARSE, .dest = &eff, .parse = efficiency_parse},
		{.name = "tolerance", .kind = KVP_CLI_OPT_PARSE, .dest = &tol, .parse = tolerance_parse},
		{.name = "capacity-tolerance", .kind = KVP_CLI_OPT_PARSE, .dest = &cap_tol, .parse = capacity_tolerance_parse},
		{.name = "large-only", .kind = KVP_CLI_OPT_FLAG, .dest = &large_only},
		{.name = "format", .kind = KVP_CLI_OPT_PARSE, .dest = &fmt, .parse = format_parse},
		{.name = "help", .short_name = 'h', .kind = KVP_CLI_OPT_HELP},
		{.kind = KVP_CLI_OPT_END}
	};
	int opts_rc = kvp_cli_options_parse(cmd, argc, argv, opts, help);
	if (opts_rc != KVP_CLI_OPTIONS_DONE)
		return opts_rc;
	if (optind >= argc)
		return kvp_cli_usage_error(cmd, "a kvbench results file is required "
					   "(kvbench --out FILE.yaml)");
	if ((calibrate ? 1 : 0) + (calib_path ? 1 : 0) + (eff > 0 ? 1 : 0) > 1 ||
	    (fit_by != KVP_FIT_ALL && eff > 0))
		return kvp_cli_usage_error(cmd, "--calibrate, --calibration and --efficiency "
					   "are alternatives (--calibrate-by goes with either of "
					   "the first two): give one");
	if (fit_by != KVP_FIT_ALL && !calib_path)
		calibrate = true;

	struct kvp_gpu gpu;
	struct kvp_error err = {0};
	if (gpu_name && kvp_gpu_load(gpu_name, &gpu, &err))
		return kvp_cli_error(cmd, &err);
	struct kvp_validation v = {0};
	int rc = KVP_EXIT_OK;
	for (int i = optind; i < argc; i++)
		if (kvp_validation_load(&v, argv[i], gpu_name ? &gpu : NULL, &err)) {
			rc = kvp_cli_error(cmd, &err);
			goto out;
		}
	if (!v.n) {
		fprintf(stderr, "kvplan %s: no validated, timed decode point or capacity point in "
				"the results (%zu skipped)\n", cmd, v.skipped);
		rc = KVP_EXIT_INPUT;
		goto out;
	}
	char source[600] = "each basis' default", note[700];
	size_t used = 0;
	if (eff > 0)
		snprintf(source, sizeof source, "--efficiency");
	if (fit_by != KVP_FIT_ALL) {
		if ((rc = fit_groups(&v, fit_by, calib_path, gpu_name ? &gpu : NULL, source,
				     sizeof source, &used)))
			goto out;
		eff = -1;
	} else if ((rc = choose_efficiency(&v, calibrate, calib_path, gpu_name ? &gpu : NULL, &eff,
					   source, sizeof source, &used))) {
		goto out;
	}
	kvp_validation_evaluate(&v, eff, tol, cap_tol);
	struct caveats cv;
	caveats_find(&v, calibrate && !calib_path, fit_by, &cv);
	caveats_warn(&cv);
	if (fmt == KVP_FORMAT_TABLE) {
		if (eff > 0)
			snprintf(note, sizeof note, "efficiency %.3f, %s", eff, source);
		else if (eff < 0)
			snprintf(note, sizeof note, "efficiencies %s", source);
		else
			snprintf(note, sizeof note, "uncalibrated: %s", source);
		if (used)
			snprintf(note + strlen(note), sizeof note - strlen(note),
				 ", median of %zu point(s)", used);
		print_table(&v, tol, cap_tol, large_only, note, &cv);
	} else if ((rc = write_output(&v, fmt, tol, cap_tol, large_only, source, used, &cv))) {
		goto out;
	}
	if (failed(&v, large_only))
		rc = KVP_EXIT_FAIL;
out:
	kvp_validation_free(&v);
	return rc;
}
