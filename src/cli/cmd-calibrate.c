/* cmd-calibrate.c: `kvplan calibrate FILE...`: read the benchmark results
 * an engine already wrote (read/bench.h), fit the step model's constants to
 * them (time/calibrate-fit.h), print each run's residual and, with --out,
 * write a calibration file that --calibration on perf, size and serve
 * applies (time/calibration-write.h).  Refuses (exit 1, nothing written) a
 * fit worse than the model uncalibrated; bad input exits 3 with
 * file:line:col and the field, before anything is written. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/cli-bench.h"
#include "cli/cli-options.h"
#include "cli/cmd-calibrate-print.h"
#include "config.h"
#include "read/bench.h"
#include "time/calibrate-fit.h"
#include "time/calibration.h"
#include "time/calibration-write.h"

static const char *const cmd = "calibrate";

static void help(void)
{
	printf("Usage: kvplan calibrate --gpu NAME [--model NAME] [OPTIONS] FILE...\n\n"
	       "Fit the step model's constants to benchmark results an engine already wrote:\n"
	       "  vllm bench serve --save-result (benchmark_serving.py), vllm bench latency\n"
	       "  --output-json, sglang bench_serving (JSONL), sglang bench_one_batch (JSONL),\n"
	       "  trtllm-bench throughput --report_json (with --streaming), genai-perf and\n"
	       "  AIPerf summaries (*_genai_perf.json, profile_export_aiperf.json).\n"
	       "Each measured time (a serving run's median TTFT and TPOT at its requests in\n"
	       "flight; an offline run's prefill and decode step, or whole batch) is predicted\n"
	       "by the step model, and the constants it supports are fitted to minimise the\n"
	       "sum of log(measured / predicted)^2; each constant's spread is its range over\n"
	       "the fits that leave one run out.  Refused (exit 1): a fit worse than the\n"
	       "model uncalibrated; too few runs for the constants (exit 3).\n\n"
	       "%s"
	       "Calibrate:\n"
	       "  --out FILE                write the calibration (YAML) for --calibration\n"
	       "  --fit LIST                the constants to fit, e.g. decode_bw_efficiency,\n"
	       "                            step_fixed_s (default: every one the runs support:\n"
	       "                            decode_bw_efficiency prefill_flops_efficiency\n"
	       "                            kv_bw_efficiency step_fixed_s seq_step_s\n"
	       "                            prefill_fixed_s allreduce_latency_s\n"
	       "                            request_latency_s; prefill_flops_scale in place\n"
	       "                            of prefill_flops_efficiency where a measured GEMM\n"
	       "                            table times the GPU's prefill)\n"
	       "  --hold-out N              leave every N-th run out of the fit and only predict\n"
	       "                            it (N >= 2): the residual on runs the fit never saw\n"
	       "  --calibration FILE        start from a calibration's constants (kvplan\n"
	       "                            calibrate --out, kvbench --out, a table; twice: an\n"
	       "                            engine calibration and a kvbench run, as perf)\n"
	       "  --evaluate                fit nothing: each run's residual under the GPU's\n"
	       "                            constants, or --calibration's (predicted vs measured)\n"
	       "  --prompt N, --output N    the shape of runs whose file records none (vllm\n"
	       "  --batch N                 bench latency: its --input-len, --output-len,\n"
	       "                            --batch-size); a recorded value they contradict\n"
	       "                            is an error.  FILE#batch=B,prompt=P,output=O gives\n"
	       "                            one file's shape\n\n"
	       "Model, tp and engine come from the files where they record them (--model,\n"
	       "--tp and --engine name them otherwise); the GPU always from --gpu.\n"
	       "Example: kvplan calibrate --gpu h100-sxm --model llama-3.1-8b --out h100-vllm.yaml \\\n"
	       "             examples/calibrate/vllm-serve-c*.json\n",
	       kvp_cli_common_help);
}

static bool tokens_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_tokens(name, "--prompt/--output", arg, dest);
}

static bool batch_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_u64(name, "--batch", arg, 1, dest);
}

static bool holdout_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_u64(name, "--hold-out", arg, 2, dest);
}

/* --fit LIST into want[] */
static int fit_list(const char *arg, bool *want)
{
	char *items[KVP_CALIB_NPARAMS];
	size_t n = 0;
	char *copy = kvp_cli_split(cmd, "--fit", arg, items, KVP_CALIB_NPARAMS, &n);
	if (!copy)
		return KVP_EXIT_USAGE;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		int k = kvp_calib_param_from_name(items[i]);
		if (k < 0)
			rc = kvp_cli_usage_error(cmd, "--fit: unknown constant '%s' (decode_bw_efficiency, "
						 "prefill_flops_efficiency, kv_bw_efficiency, "
						 "step_fixed_s, seq_step_s, "
						 "prefill_fixed_s, allreduce_latency_s, "
						 "request_latency_s)", items[i]);
		else
			want[k] = true;
	}
	free(copy);
	return rc;
}

static void utc_now(char *buf, size_t size)
{
	time_t t = time(NULL);
	const char *sde = getenv("SOURCE_DATE_EPOCH"); /* reproducible output */
	if (sde && *sde)
		t = (time_t)strtoll(sde, NULL, 10);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, size, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, size, "unknown");
}

int kvp_cmd_calibrate(int argc, char **argv)
{
	struct kvp_cli_common c;
	kvp_cli_common_init(&c);
	c.opts.par.tp = 0; /* 0: not given, the runs' or 1 */
	uint64_t prompt = 0, output = 0, batch = 0, holdout = 0;
	const char *out_path = NULL, *fit_arg = NULL;
	struct kvp_cli_calibration calib = {0};
	bool evaluate = false;
	int rc;
	const struct kvp_cli_opt opts[] = {
		{.short_name = 'h', .kind = KVP_CLI_OPT_FLAG, .dest = &c.help},
		{.kind = KVP_CLI_OPT_COMMON, .dest = &c},
		{.common_id = KVP_OPT_BATCH, .kind = KVP_CLI_OPT_PARSE, .dest = &batch,
		 .parse = batch_parse},
		{.name = "prompt", .kind = KVP_CLI_OPT_PARSE, .dest = &prompt, .parse = tokens_parse},
		{.name = "output", .kind = KVP_CLI_OPT_PARSE, .dest = &output, .parse = tokens_parse},
		{.name = "out", .short_name = 'o', .kind = KVP_CLI_OPT_STRING, .dest = &out_path},
		{.name = "fit", .kind = KVP_CLI_OPT_STRING, .dest = &fit_arg},
		{.name = "hold-out", .kind = KVP_CLI_OPT_PARSE, .dest = &holdout,
		 .parse = holdout_parse},
		{.name = "calibration", .kind = KVP_CLI_OPT_PARSE, .dest = &calib,
		 .parse = kvp_cli_calibration_parse},
		{.name = "evaluate", .kind = KVP_CLI_OPT_FLAG, .dest = &evaluate},
		{.kind = KVP_CLI_OPT_END}
	};
	if ((rc = kvp_cli_options_parse(cmd, argc, argv, opts, help)) != KVP_CLI_OPTIONS_DONE)
		return rc;
	if (c.help) {
		help();
		return KVP_EXIT_OK;
	}
	if (optind >= argc)
		return kvp_cli_usage_error(cmd, "expected one or more benchmark result files");
	if (!c.gpu)
		return kvp_cli_usage_error(cmd, "--gpu is required: no benchmark file records the "
					   "GPU profile to calibrate");
	if (evaluate && (out_path || fit_arg || holdout))
		return kvp_cli_usage_error(cmd, "--evaluate fits nothing: it takes no --out, --fit "
					   "or --hold-out");
	struct kvp_calib_opts fo = {0};
	if (fit_arg && (rc = fit_list(fit_arg, fo.want)))
		return rc;

	struct kvp_cli_bench b = {0};
	struct kvp_calib_result *fit = malloc(sizeof *fit);
	bool *held = NULL;
	struct kvp_error err = {0};
	struct kvp_bench_given given = {.batch = batch, .prompt_tokens = prompt,
					.output_tokens = output, .tp = c.opts.par.tp,
					.model_id = c.model};
	if (!fit) {
		fprintf(stderr, "kvplan calibrate: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	if ((rc = kvp_cli_bench_load(cmd, &c, argv + optind, (size_t)(argc - optind), &given,
				     &calib, &b)))
		goto out;
	const struct kvp_bench_runs runs = b.runs;
	const struct kvp_model *m = b.m;
	const struct kvp_gpu g = b.g;
	const struct kvp_perf_hw hw = b.hw;
	const char *engine = b.engine, *version = b.version;
	if (holdout) {
		if (!(held = calloc(runs.n, sizeof *held))) {
			rc = KVP_EXIT_FAIL;
			goto out;
		}
		for (size_t i = 0; i < runs.n; i++)
			held[i] = i % holdout == holdout - 1;
		fo.held_out = held;
	}
	if (evaluate ? kvp_calib_evaluate(m, &g, &c.opts, &hw, runs.v, runs.n, b.seen, b.nseen, fit,
					  &err)
		     : kvp_calib_run(m, &g, &c.opts, &hw, runs.v, runs.n, &fo, fit, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	struct kvp_cli_warnings warn = {0};
	kvp_cli_bench_warnings(cmd, m, fit, &warn);
	if (fit->worse) {
		fprintf(stderr, "kvplan calibrate: refused: the fit's median residual %.1f%% is "
				"worse than the model's uncalibrated %.1f%%; nothing written\n",
			100 * fit->median_calibrated, 100 * fit->median_uncalibrated);
		out_path = NULL;
	} else if (out_path) {
		char created[32];
		utc_now(created, sizeof created);
		struct kvp_calibration_source src = {
			.gpu = g.name, .model = c.model, .engine = engine, .engine_version = version,
			.tp = c.opts.par.tp, .kvplan_version = PACKAGE_VERSION, .created = created};
		if (kvp_calibration_write(out_path, &src, fit, runs.v, runs.n, &err)) {
			rc = kvp_cli_error(cmd, &err);
			goto out;
		}
	}
	struct kvp_calibrate_print pr = {.fit = fit, .runs = runs.v, .nruns = runs.n,
					 .gpu = g.name, .model = c.model, .out_path = out_path,
					 .warn = &warn, .evaluate = evaluate, .calibration = kvp_cli_calibration_label(&calib, &b.cal)};
	if (c.format == KVP_FORMAT_TABLE) {
		kvp_calibrate_print_table(&pr);
	} else if (!kvp_calibrate_print_records(&pr, c.format)) {
		fprintf(stderr, "kvplan calibrate: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	rc = fit->worse ? KVP_EXIT_FAIL : KVP_EXIT_OK;
out:
	kvp_cli_bench_free(&b);
	free(held);
	free(fit);
	return rc;
}
