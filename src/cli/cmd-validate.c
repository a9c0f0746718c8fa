/* cmd-validate.c: `kvplan validate FILE...`: measurements beside the
 * planner's predictions for the same shapes, with their errors.  Two kinds
 * of file, told apart by their content:
 *   kvbench's results (YAML or CSV): decode time (perf's roofline on the
 *     planner's KV bytes) and capacity (the generic budget's blocks and
 *     sequences), optionally calibrated: one decode efficiency fitted from
 *     the files themselves or from another run, as `kvplan perf
 *     --calibration` would use it;
 *   an engine's benchmark files (JSON: vLLM, SGLang, trtllm-bench,
 *     genai-perf, AIPerf, as `kvplan calibrate` reads them): each measured
 *     time beside the step model's prediction (cmd-validate-bench.c), with
 *     the model, GPU and shape options calibrate takes.
 * Exit 0 when every point lies within its tolerance, 1 when one does not, 2
 * usage, 3 an invalid file.  cmd-validate-print.c prints kvbench's
 * comparison. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli-bench.h"
#include "cli/cli-options.h"
#include "cli/cmd-validate-bench.h"
#include "cli/cmd-validate-print.h"
#include "base/units.h"
#include "time/validate.h"

static const char *const cmd = "validate";

static void help(void)
{
	printf("Usage: kvplan validate RESULTS... [OPTIONS]\n"
	       "       kvplan validate --gpu NAME [--model NAME] [OPTIONS] BENCHMARK-FILE...\n\n"
	       "Set measurements beside what the planner predicts for the same shapes, with\n"
	       "the relative error (predicted - measured) / measured of every point.  The\n"
	       "files are told apart by their content.\n\n"
	       "kvbench's results (kvbench --out FILE.yaml or FILE.csv):\n"
	       "  decode    the step's time: the planner's KV bytes of the batch on a\n"
	       "            bandwidth basis x an efficiency (kvplan perf's decode model)\n"
	       "  capacity  the KV blocks (and sequences) the generic budget says fit in\n"
	       "            memory x utilization - weights, against what was allocated\n"
	       "The basis: --gpu's bandwidth at its calibrated efficiency (else 0.80);\n"
	       "without --gpu a CUDA run's bus rate (YAML results) at 0.80, or the read\n"
	       "ceiling kvbench measured beside the point at efficiency 1.\n\n"
	       "An engine's benchmark files (JSON, as kvplan calibrate reads them: vllm bench\n"
	       "serve --save-result, vllm bench latency --output-json, sglang bench_serving\n"
	       "and bench_one_batch, trtllm-bench --report_json, genai-perf, AIPerf):\n"
	       "  each measured time (a serving run's median TTFT and TPOT, an offline run's\n"
	       "  prefill, decode step or whole batch) beside the step model's prediction for\n"
	       "  its shape, as kvplan perf charges it; whether measured / predicted lies in\n"
	       "  the band perf prints (the engine's time data).  --gpu is required; model,\n"
	       "  tp and engine come from the files where they record them.\n\n"
	       "Options:\n"
	       "  --gpu NAME|PATH           predict on this GPU profile\n"
	       "  --calibration FILE        kvbench: fit the efficiency to another kvbench run;\n"
	       "                            engine files: apply a calibration (kvplan calibrate\n"
	       "                            --out, kvbench --out, a table), to see before/after;\n"
	       "                            twice: an engine calibration and a kvbench run, as perf\n"
	       "  --tolerance F             error allowed, 0.10 or 10%% (default 10%%)\n"
	       "  --format F                table|json|csv (default table)\n"
	       "  --help                    this text\n"
	       "kvbench's results only:\n"
	       "  --calibrate               fit one decode efficiency to these files (the\n"
	       "                            median over the large points) and predict with it\n"
	       "  --calibrate-by dtype|shape  fit one efficiency per KV dtype, or per shape\n"
	       "                            (heads, head dim, block, KV dtype), to these files\n"
	       "  --efficiency F            predict decode at efficiency F (0 < F <= 1)\n"
	       "  --capacity-tolerance F    block-count error allowed (default 1%%)\n"
	       "  --large-only              judge only the large decode points: those moving\n"
	       "                            at least a quarter of the KV bytes of the largest\n"
	       "                            point of their shape (smaller steps are fixed costs)\n"
	       "Engine benchmark files only (and the planner options below: --model,\n"
	       "--engine, --engine-version, --tp, ...):\n"
	       "  --prompt N, --output N    the shape of runs whose file records none (vllm\n"
	       "  --batch N                 bench latency); FILE#batch=B,prompt=P,output=O\n"
	       "                            gives one file's shape\n\n%s"
	       "Points that failed kvbench's validation or were not timed are skipped.\n"
	       "A fit with as many efficiencies as points, and capacity on the cpu backend,\n"
	       "agree by construction: validate warns (and says so in JSON).\n"
	       "Exit status: 0 every point within its tolerance, 1 a point outside it,\n"
	       "2 usage, 3 an invalid results file (file:line:col: error: field: message).\n"
	       "See kvplan(1), VALIDATE, and kvbench(1).\n", kvp_cli_common_help);
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

/* The common planner options, each noted: kvbench's results take only
 * --gpu, --format and --help of them. */
static const struct option common_options[] = {KVP_CLI_COMMON_OPTIONS, {NULL, 0, NULL, 0}};

struct validate_args {
	struct kvp_cli_common c;
	const char *engine_only;   /* the first engine-files-only option given, "--model" */
};

static int common_option(void *dest, int opt, const char *arg)
{
	struct validate_args *a = dest;
	if (!a->engine_only && opt != KVP_OPT_GPU && opt != KVP_OPT_FORMAT && opt != KVP_OPT_HELP)
		for (size_t i = 0; common_options[i].name; i++)
			if (common_options[i].val == opt)
				a->engine_only = common_options[i].name;
	return kvp_cli_common_option(&a->c, cmd, opt, arg);
}

static bool tokens_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_tokens(name, "--prompt/--output", arg, dest);
}

static bool batch_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_u64(name, "--batch", arg, 1, dest);
}

/* kvbench's results: the efficiency chosen, evaluated, printed. */
static int validate_kvbench(const struct validate_args *a, char *const *files, size_t nfiles,
			    bool calibrate, enum kvp_fit_by fit_by, const char *calib_path,
			    double eff, double tol, double cap_tol, bool large_only)
{
	const char *gpu_name = a->c.gpu;
	struct kvp_gpu gpu;
	struct kvp_error err = {0};
	if (gpu_name && kvp_gpu_load(gpu_name, &gpu, &err))
		return kvp_cli_error(cmd, &err);
	struct kvp_validation v = {0};
	int rc = KVP_EXIT_OK;
	for (size_t i = 0; i < nfiles; i++)
		if (kvp_validation_load(&v, files[i], gpu_name ? &gpu : NULL, &err)) {
			rc = kvp_cli_error(cmd, &err);
			goto out;
		}
	if (!v.n) {
		fprintf(stderr, "kvplan %s: no validated, timed decode point or capacity point in "
				"the results (%zu skipped)\n", cmd, v.skipped);
		rc = KVP_EXIT_INPUT;
		goto out;
	}
	char source[600] = "each basis' default";
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
	struct kvp_validate_caveats cv;
	kvp_validate_caveats_find(&v, calibrate && !calib_path, fit_by, &cv);
	kvp_validate_caveats_warn(&cv);
	struct kvp_validate_print_opts po = {.eff = eff, .eff_source = source, .fit_points = used,
					     .tol = tol, .cap_tol = cap_tol, .large_only = large_only};
	if ((rc = kvp_validate_print(&v, a->c.format, &po, &cv)))
		goto out;
	if (kvp_validate_failed(&v, large_only))
		rc = KVP_EXIT_FAIL;
out:
	kvp_validation_free(&v);
	return rc;
}

int kvp_cmd_validate(int argc, char **argv)
{
	struct validate_args a = {0};
	kvp_cli_common_init(&a.c);
	a.c.opts.par.tp = 0; /* 0: not given, the runs' or 1 */
	struct kvp_cli_calibration calib = {0};
	bool calibrate = false, large_only = false, cap_tol_given = false;
	enum kvp_fit_by fit_by = KVP_FIT_ALL;
	double eff = 0, tol = 0.10, cap_tol = -1;
	uint64_t prompt = 0, output = 0, batch = 0;
	const struct kvp_cli_opt opts[] = {
		{.short_name = 'h', .kind = KVP_CLI_OPT_FLAG, .dest = &a.c.help},
		{.kind = KVP_CLI_OPT_GROUP, .dest = &a, .group = common_options,
		 .group_fn = common_option},
		{.common_id = KVP_OPT_BATCH, .kind = KVP_CLI_OPT_PARSE, .dest = &batch,
		 .parse = batch_parse},
		{.name = "prompt", .kind = KVP_CLI_OPT_PARSE, .dest = &prompt, .parse = tokens_parse},
		{.name = "output", .kind = KVP_CLI_OPT_PARSE, .dest = &output, .parse = tokens_parse},
		{.name = "calibrate", .kind = KVP_CLI_OPT_FLAG, .dest = &calibrate},
		{.name = "calibrate-by", .kind = KVP_CLI_OPT_PARSE, .dest = &fit_by, .parse = fit_by_parse},
		{.name = "calibration", .kind = KVP_CLI_OPT_PARSE, .dest = &calib,
		 .parse = kvp_cli_calibration_parse},
		{.name = "efficiency", .kind = KVP_CLI_OPT_PARSE, .dest = &eff, .parse = efficiency_parse},
		{.name = "tolerance", .kind = KVP_CLI_OPT_PARSE, .dest = &tol, .parse = tolerance_parse},
		{.name = "capacity-tolerance", .kind = KVP_CLI_OPT_PARSE, .dest = &cap_tol, .parse = capacity_tolerance_parse},
		{.name = "large-only", .kind = KVP_CLI_OPT_FLAG, .dest = &large_only},
		{.kind = KVP_CLI_OPT_END}
	};
	int opts_rc = kvp_cli_options_parse(cmd, argc, argv, opts, help);
	if (opts_rc != KVP_CLI_OPTIONS_DONE)
		return opts_rc;
	if (a.c.help) {
		help();
		return KVP_EXIT_OK;
	}
	if (optind >= argc)
		return kvp_cli_usage_error(cmd, "a kvbench results file is required (kvbench --out "
					   "FILE.yaml), or an engine's benchmark files");
	cap_tol_given = cap_tol >= 0;
	if (!cap_tol_given)
		cap_tol = 0.01;
	char *const *files = argv + optind;
	size_t nfiles = (size_t)(argc - optind);
	bool engine = kvp_cli_bench_is_engine_file(files[0]);
	for (size_t i = 1; i < nfiles; i++)
		if (kvp_cli_bench_is_engine_file(files[i]) != engine)
			return kvp_cli_usage_error(cmd, "'%s' is %s and '%s' %s: validate one kind "
						   "at a time", files[0], engine ? "an engine's "
						   "benchmark file (JSON)" : "kvbench's results",
						   files[i], engine ? "kvbench's results"
						   : "an engine's benchmark file (JSON)");
	if (engine) {
		const char *kvbench_only = calibrate ? "--calibrate" : fit_by != KVP_FIT_ALL
					   ? "--calibrate-by" : eff > 0 ? "--efficiency"
					   : cap_tol_given ? "--capacity-tolerance"
					   : large_only ? "--large-only" : NULL;
		if (kvbench_only)
			return kvp_cli_usage_error(cmd, "%s applies to kvbench's results, not to an "
						   "engine's benchmark files", kvbench_only);
		if (!a.c.gpu)
			return kvp_cli_usage_error(cmd, "--gpu is required: no benchmark file "
						   "records the GPU profile to predict on");
		struct kvp_validate_bench_args va = {
			.c = &a.c, .files = files, .nfiles = nfiles, .calibration = &calib,
			.tolerance = tol, .given = {.batch = batch, .prompt_tokens = prompt,
						    .output_tokens = output, .tp = a.c.opts.par.tp,
						    .model_id = a.c.model}};
		return kvp_validate_bench(&va);
	}
	if (calib.n > 1)
		return kvp_cli_usage_error(cmd, "--calibration twice (an engine calibration and a "
					   "kvbench run) applies to an engine's benchmark files; "
					   "kvbench's results take one");
	const char *calib_path = calib.n ? calib.path[0] : NULL;
	const char *engine_only = a.engine_only ? a.engine_only : batch ? "batch"
				  : prompt ? "prompt" : output ? "output" : NULL;
	if (engine_only)
		return kvp_cli_usage_error(cmd, "--%s applies to an engine's benchmark files "
					   "(JSON), not to kvbench's results", engine_only);
	if ((calibrate ? 1 : 0) + (calib_path ? 1 : 0) + (eff > 0 ? 1 : 0) > 1 ||
	    (fit_by != KVP_FIT_ALL && eff > 0))
		return kvp_cli_usage_error(cmd, "--calibrate, --calibration and --efficiency "
					   "are alternatives (--calibrate-by goes with either of "
					   "the first two): give one");
	if (fit_by != KVP_FIT_ALL && !calib_path)
		calibrate = true;
	return validate_kvbench(&a, files, nfiles, calibrate, fit_by, calib_path, eff, tol, cap_tol,
				large_only);
}
