/* cmd-serve.c: `kvplan serve`: one replica under load, simulated step by
 * step (time/serve-sim.h): TTFT, TPOT, ITL and end-to-end latency
 * percentiles, throughput, goodput under SLOs, KV use and preemptions, for
 * Poisson arrivals, a closed loop of users or a trace.  JSON keys follow
 * vLLM's benchmark_serving result so a prediction diffs against a run. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "cli/cli.h"
#include "cli/cli-options.h"
#include "cli/cli-calibration.h"
#include "time/calibration.h"
#include "time/serve-sim.h"
#include "time/step.h"

static const char *const cmd = "serve";

static void help(void)
{
	printf("Usage: kvplan serve --model NAME --gpu NAME (--rate R | --concurrency N | --trace FILE)\n"
	       "                    [--workload NAME | --prompt DIST --output DIST] [OPTIONS]\n\n"
	       "One replica under load, simulated step by step as vLLM V1's scheduler runs:\n"
	       "  each step  running requests first (a decode 1 token, a prefill a chunk of\n"
	       "             what the token budget --max-batched-tokens leaves), then waiting\n"
	       "             ones while --max-num-seqs, the budget and free KV blocks allow;\n"
	       "             when blocks run out the newest running request is preempted\n"
	       "             (recompute: its blocks freed, back to the front of the queue)\n"
	       "  step time  the roofline of `kvplan perf` on what the step carries: prefill\n"
	       "             FLOPs of each chunk + decode FLOPs of each sequence; weights + KV\n"
	       "             read; the all-reduces of its tokens\n"
	       "  KV blocks  the pool of `kvplan budget` (--num-blocks to override)\n"
	       "Outputs, keys as vLLM's benchmark_serving result: mean/median/std/p90/p99 of\n"
	       "ttft, tpot, itl and e2el in ms, request and token throughput, goodput within\n"
	       "the SLOs, KV utilization (mean, max, a series in JSON) and preemptions.\n\n"
	       "%s"
	       "Load (one of):\n"
	       "  --rate R                  Poisson arrivals, R requests/s (finite, > 0)\n"
	       "  --concurrency N           a closed loop: N users, each sends its next request\n"
	       "                            when the last completes\n"
	       "  --think-time S            a user's pause before the next request (default 0)\n"
	       "  --trace FILE              a CSV with a header: TIMESTAMP,ContextTokens,\n"
	       "                            GeneratedTokens (Azure LLM inference trace),\n"
	       "                            arrived_at,num_prefill_tokens,num_decode_tokens\n"
	       "                            (Vidur) or arrival_s,prompt_tokens,output_tokens;\n"
	       "                            or JSON lines with those three keys\n"
	       "  --requests N              requests to send (default 1000; trace: all rows)\n"
	       "  --seed N                  arrivals, lengths and prefix hits (default 1)\n"
	       "Lengths (Poisson and closed loop):\n"
	       "  --workload NAME|PATH      profiles/workloads/NAME.yaml (lengths, max_len, prefix)\n"
	       "  --prompt DIST, --output DIST  fixed:N, uniform:LO,HI, lognormal:MEDIAN,SIGMA, ...\n"
	       "  --max-model-len N         prompt + output cap (default: the workload's max_len,\n"
	       "                            else the model's context); sampled lengths are cut\n"
	       "                            to it, a trace row above it is an error\n"
	       "Engine:\n"
	       "  --num-blocks N            KV blocks of the pool (default: the budget's)\n"
	       "  --no-chunked-prefill      a prompt waits until it fits one step's budget\n"
	       "  --prefix N                a shared prefix of N tokens, cached (default: the\n"
	       "                            workload's shared_prefix)\n"
	       "  --prefix-fraction F       the share of requests that carry it (default 1)\n"
	       "  --decode-bw-efficiency F, --prefill-flops-efficiency F  as in perf\n"
	       "  --calibration FILE        the constants of a calibration (kvplan calibrate --out,\n"
	       "                            kvbench --out, a table), as in perf; twice: an engine\n"
	       "                            calibration and a kvbench run (the KV read), as in perf\n"
	       "Service levels (goodput counts requests within all given):\n"
	       "  --slo-ttft S, --slo-tpot S, --slo-e2e S   seconds\n\n"
	       "Exit status: 0 ok, 2 usage, 3 an invalid trace or workload file.\n"
	       "Example: kvplan serve --model llama-3.1-8b --gpu h100-sxm --engine vllm \\\n"
	       "             --workload chat --rate 4 --requests 500\n",
	       kvp_cli_common_help);
}

struct serve_args {
	double rate, think, slo_ttft, slo_tpot, slo_e2e, prefix_fraction, decode_eff, prefill_eff;
	uint64_t users, requests, seed, max_len, num_blocks, prefix;
	bool has_rate, has_prefix, has_fraction, no_chunk;
	const char *trace, *workload, *prompt, *output;
};

static bool positive_seconds(const char *name, const char *opt, const char *arg, double *out,
			     bool zero_ok)
{
	if (kvp_parse_double(arg, out) == 0 && isfinite(*out) && (*out > 0 || (zero_ok && *out == 0)))
		return true;
	kvp_cli_usage_error(name, "%s: expected a finite number %s, got '%s'", opt,
			    zero_ok ? ">= 0" : "above 0", arg);
	return false;
}

static bool rate_parse(const char *name, const char *arg, void *dest)
{
	struct serve_args *a = dest;
	a->has_rate = true;
	return positive_seconds(name, "--rate", arg, &a->rate, false);
}

static bool think_parse(const char *name, const char *arg, void *dest)
{
	return positive_seconds(name, "--think-time", arg, dest, true);
}

static bool slo_ttft_parse(const char *name, const char *arg, void *dest)
{
	return positive_seconds(name, "--slo-ttft", arg, dest, false);
}

static bool slo_tpot_parse(const char *name, const char *arg, void *dest)
{
	return positive_seconds(name, "--slo-tpot", arg, dest, false);
}

static bool slo_e2e_parse(const char *name, const char *arg, void *dest)
{
	return positive_seconds(name, "--slo-e2e", arg, dest, false);
}

static bool users_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_u64(name, "--concurrency", arg, 1, dest);
}

static bool requests_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_u64(name, "--requests", arg, 1, dest);
}

static bool seed_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_u64(name, "--seed", arg, 0, dest);
}

static bool max_len_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_tokens(name, "--max-model-len", arg, dest);
}

static bool blocks_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_u64(name, "--num-blocks", arg, 1, dest);
}

static bool prefix_parse(const char *name, const char *arg, void *dest)
{
	struct serve_args *a = dest;
	a->has_prefix = true;
	return kvp_cli_u64(name, "--prefix", arg, 0, &a->prefix);
}

static bool fraction_parse(const char *name, const char *arg, void *dest)
{
	struct serve_args *a = dest;
	a->has_fraction = true;
	if (kvp_parse_double(arg, &a->prefix_fraction) == 0 && a->prefix_fraction >= 0 &&
	    a->prefix_fraction <= 1)
		return true;
	kvp_cli_usage_error(name, "--prefix-fraction: expected a share in [0, 1], got '%s'", arg);
	return false;
}

static bool eff_parse(const char *name, const char *opt, const char *arg, double *out)
{
	if (kvp_parse_fraction(arg, out) == 0)
		return true;
	kvp_cli_usage_error(name, "%s: expected a fraction in (0, 1], got '%s'", opt, arg);
	return false;
}

static bool decode_eff_parse(const char *name, const char *arg, void *dest)
{
	return eff_parse(name, "--decode-bw-efficiency", arg, dest);
}

static bool prefill_eff_parse(const char *name, const char *arg, void *dest)
{
	return eff_parse(name, "--prefill-flops-efficiency", arg, dest);
}

/* The lengths: a workload profile, then --prompt/--output over it. */
static int load_workload(const struct serve_args *a, struct kvp_workload *w)
{
	struct kvp_error err = {0};
	memset(w, 0, sizeof *w);
	if (a->workload && kvp_workload_load(a->workload, w, &err))
		return kvp_cli_error(cmd, &err);
	if (a->prompt || a->output) {
		int rc = kvp_cli_set_lengths(cmd, a->prompt, a->output, a->workload != NULL, w);
		if (rc >= 0)
			return rc;
	} else if (!a->workload && !a->trace) {
		return kvp_cli_usage_error(cmd, "give --workload, or --prompt and --output");
	}
	return 0;
}

static void ms(char *buf, size_t size, double s)
{
	if (isnan(s))
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, "%.1f", s * 1e3);
}

static void print_table(const struct serve_args *a, const struct kvp_serve_opts *o,
			const struct kvp_budget *b, const struct kvp_serve_result *r,
			const char *model, const char *gpu)
{
	printf("kvplan serve: %s on %s, tp %u, engine %s\n", model, gpu, b->spec.par.tp,
	       kvp_engine_name(b->engine));
	if (o->load == KVP_SERVE_POISSON)
		printf("Load: Poisson arrivals at %g requests/s, %llu requests, seed %llu\n", a->rate,
		       (unsigned long long)r->completed, (unsigned long long)o->seed);
	else if (o->load == KVP_SERVE_CLOSED)
		printf("Load: %llu users in a closed loop, think time %g s, %llu requests\n",
		       (unsigned long long)a->users, a->think, (unsigned long long)r->completed);
	else
		printf("Load: trace %s, %llu requests\n", a->trace, (unsigned long long)r->completed);
	printf("Engine: %llu KV blocks of %u tokens%s, max_num_seqs %llu, "
	       "max_num_batched_tokens %llu%s\n\n",
	       (unsigned long long)r->num_blocks, r->block_size,
	       r->pinned_blocks ? " (prefix cached)" : "", (unsigned long long)r->max_num_seqs,
	       (unsigned long long)r->max_batched_tokens,
	       o->no_chunked_prefill ? ", no chunked prefill" : ", chunked prefill");
	printf("%-10s %10s %10s %10s %10s %10s\n", "metric", "mean ms", "median ms", "p90 ms",
	       "p99 ms", "max ms");
	const struct {
		const char *name;
		const struct kvp_serve_stat *s;
	} rows[] = {{"ttft", &r->ttft}, {"tpot", &r->tpot}, {"itl", &r->itl}, {"e2el", &r->e2el}};
	for (size_t i = 0; i < 4; i++) {
		char v[5][32];
		ms(v[0], 32, rows[i].s->mean);
		ms(v[1], 32, rows[i].s->p50);
		ms(v[2], 32, rows[i].s->p90);
		ms(v[3], 32, rows[i].s->p99);
		ms(v[4], 32, rows[i].s->max);
		printf("%-10s %10s %10s %10s %10s %10s\n", rows[i].name, v[0], v[1], v[2], v[3], v[4]);
	}
	printf("\nDuration %.2f s (first arrival to last completion)\n", r->duration_s);
	printf("Throughput: %.3f requests/s, %.1f output tokens/s, %.1f total tokens/s\n",
	       r->request_throughput, r->output_throughput, r->total_token_throughput);
	if (!isnan(r->request_goodput))
		printf("Goodput: %.3f requests/s (%llu of %llu within the SLOs)\n", r->request_goodput,
		       (unsigned long long)r->good, (unsigned long long)r->completed);
	printf("KV: mean %.1f %%, max %.1f %% of the pool; %llu preemptions (%llu tokens "
	       "recomputed)\n",
	       100 * r->kv_mean_util, 100 * r->kv_max_util, (unsigned long long)r->preemptions,
	       (unsigned long long)r->recomputed_tokens);
	printf("Steps: %llu of %.2f ms and %.1f tokens on average, the engine busy %.1f %% of the "
	       "duration;\n  at most %llu requests running, %.2f in the system on average "
	       "(Little's L)\n",
	       (unsigned long long)r->steps, r->steps ? 1e3 * r->busy_s / (double)r->steps : 0,
	       r->mean_batch_tokens, r->duration_s > 0 ? 100 * r->busy_s / r->duration_s : 0,
	       (unsigned long long)r->max_running, r->mean_in_system);
	printf("\nA step: the running requests first (a decode 1 token, a prefill a chunk of what\n"
	       "the token budget leaves), then waiting ones while sequences, budget and blocks\n"
	       "allow; time = max(FLOPs of the chunks and decodes / (peak x eff), weights + KV\n"
	       "read / (bandwidth x eff)) + all-reduces, as kvplan perf's roofline.\n");
	if (r->prefix_hits)
		printf("Prefix cache: %llu requests started from the cached prefix\n",
		       (unsigned long long)r->prefix_hits);
}

static int print_records(const struct serve_args *a, const struct kvp_serve_opts *o,
			 const struct kvp_serve_result *r, const char *model, const char *gpu,
			 const struct kvp_budget *b, const struct kvp_cli_calibration *calib,
			 const struct kvp_calibration *cal, enum kvp_format fmt)
{
	/* JSON names the --calibration files applied, at the end (as perf) */
	const char *label = kvp_cli_calibration_label(calib, cal);
	const char *kernel = kvp_cli_calibration_kernel(cal);
	struct kvp_record *rec = kvp_record_new();
	bool ok = rec && kvp_record_str(rec, "backend", kvp_engine_name(b->engine)) &&
		  kvp_record_str(rec, "model_id", model) && kvp_record_str(rec, "gpu", gpu) &&
		  kvp_record_u64(rec, "tp", b->spec.par.tp) && kvp_record_u64(rec, "pp", b->spec.par.pp) &&
		  kvp_record_u64(rec, "num_prompts", r->completed) &&
		  (o->load == KVP_SERVE_POISSON ? kvp_record_f64(rec, "request_rate", a->rate)
						: kvp_record_str(rec, "request_rate", o->load == KVP_SERVE_TRACE
							       ? "trace" : "inf")) &&
		  (o->load == KVP_SERVE_CLOSED ? kvp_record_u64(rec, "max_concurrency", a->users)
					       : kvp_record_null(rec, "max_concurrency")) &&
		  kvp_record_u64(rec, "seed", o->seed) &&
		  kvp_serve_to_record(r, rec, fmt == KVP_FORMAT_JSON) &&
		  (fmt != KVP_FORMAT_JSON ||
		   ((label ? kvp_record_str(rec, "calibration", label)
			   : kvp_record_null(rec, "calibration")) &&
		    (kernel ? kvp_record_str(rec, "calibration_kernel", kernel)
			    : kvp_record_null(rec, "calibration_kernel"))));
	if (!ok) {
		kvp_record_free(rec);
		fprintf(stderr, "kvplan serve: out of memory\n");
		return KVP_EXIT_FAIL;
	}
	kvp_cli_write_rows(stdout, fmt, &rec, 1, NULL);
	kvp_record_free(rec);
	return KVP_EXIT_OK;
}

/* Check the load flags; 0 or the exit code after a message. */
static int check_load(const struct serve_args *a, struct kvp_serve_opts *o)
{
	int loads = a->has_rate + (a->users > 0) + (a->trace != NULL);
	if (loads != 1)
		return kvp_cli_usage_error(cmd, "give one of --rate, --concurrency and --trace");
	if (a->think > 0 && !a->users)
		return kvp_cli_usage_error(cmd, "--think-time needs --concurrency");
	if (a->trace && (a->workload || a->prompt || a->output))
		return kvp_cli_usage_error(cmd, "--trace carries its own lengths: no --workload, "
					  "--prompt or --output");
	o->load = a->has_rate ? KVP_SERVE_POISSON : a->users ? KVP_SERVE_CLOSED : KVP_SERVE_TRACE;
	o->rate = a->rate;
	o->users = a->users;
	o->think_s = a->think;
	o->requests = a->requests ? a->requests : a->trace ? 0 : 1000;
	o->seed = a->seed;
	o->slo_ttft_s = a->slo_ttft;
	o->slo_tpot_s = a->slo_tpot;
	o->slo_e2e_s = a->slo_e2e;
	o->num_blocks = a->num_blocks;
	o->no_chunked_prefill = a->no_chunk;
	return 0;
}

int kvp_cmd_serve(int argc, char **argv)
{
	struct kvp_cli_common c;
	kvp_cli_common_init(&c);
	struct serve_args a = {.seed = 1};
	struct kvp_cli_calibration calib = {0};
	int rc;
	const struct kvp_cli_opt opts[] = {
		{.short_name = 'h', .kind = KVP_CLI_OPT_FLAG, .dest = &c.help},
		{.kind = KVP_CLI_OPT_COMMON, .dest = &c},
		{.name = "rate", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = rate_parse},
		{.name = "concurrency", .kind = KVP_CLI_OPT_PARSE, .dest = &a.users, .parse = users_parse},
		{.name = "think-time", .kind = KVP_CLI_OPT_PARSE, .dest = &a.think, .parse = think_parse},
		{.name = "trace", .kind = KVP_CLI_OPT_STRING, .dest = &a.trace},
		{.name = "requests", .kind = KVP_CLI_OPT_PARSE, .dest = &a.requests, .parse = requests_parse},
		{.name = "seed", .kind = KVP_CLI_OPT_PARSE, .dest = &a.seed, .parse = seed_parse},
		{.name = "workload", .kind = KVP_CLI_OPT_STRING, .dest = &a.workload},
		{.name = "prompt", .kind = KVP_CLI_OPT_STRING, .dest = &a.prompt},
		{.name = "output", .kind = KVP_CLI_OPT_STRING, .dest = &a.output},
		{.name = "max-model-len", .kind = KVP_CLI_OPT_PARSE, .dest = &a.max_len, .parse = max_len_parse},
		{.name = "num-blocks", .kind = KVP_CLI_OPT_PARSE, .dest = &a.num_blocks, .parse = blocks_parse},
		{.name = "no-chunked-prefill", .kind = KVP_CLI_OPT_FLAG, .dest = &a.no_chunk},
		{.name = "prefix", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = prefix_parse},
		{.name = "prefix-fraction", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = fraction_parse},
		{.name = "slo-ttft", .kind = KVP_CLI_OPT_PARSE, .dest = &a.slo_ttft, .parse = slo_ttft_parse},
		{.name = "slo-tpot", .kind = KVP_CLI_OPT_PARSE, .dest = &a.slo_tpot, .parse = slo_tpot_parse},
		{.name = "slo-e2e", .kind = KVP_CLI_OPT_PARSE, .dest = &a.slo_e2e, .parse = slo_e2e_parse},
		{.name = "decode-bw-efficiency", .kind = KVP_CLI_OPT_PARSE, .dest = &a.decode_eff,
		 .parse = decode_eff_parse},
		{.name = "prefill-flops-efficiency", .kind = KVP_CLI_OPT_PARSE, .dest = &a.prefill_eff,
		 .parse = prefill_eff_parse},
		{.name = "calibration", .kind = KVP_CLI_OPT_PARSE, .dest = &calib,
		 .parse = kvp_cli_calibration_parse},
		{.kind = KVP_CLI_OPT_END}
	};
	if ((rc = kvp_cli_options_parse_no_operand(cmd, argc, argv, opts, help, &c.help)) !=
	    KVP_CLI_OPTIONS_DONE)
		return rc;
	struct kvp_serve_opts o = {0};
	if ((rc = check_load(&a, &o)))
		return rc;
	if (!c.model || !c.gpu)
		return kvp_cli_usage_error(cmd, "--model and --gpu are required");

	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_budget *b = malloc(sizeof *b);
	struct kvp_serve_result *res = malloc(sizeof *res);
	struct kvp_workload w = {0};
	struct kvp_serve_trace tr = {0};
	struct kvp_gpu g;
	struct kvp_error err = {0};
	struct kvp_perf_hw hw;
	struct kvp_perf_ctx pc;
	if (!m || !b || !res) {
		fprintf(stderr, "kvplan serve: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	if ((rc = load_workload(&a, &w)) || (rc = kvp_cli_load(&c, cmd, m, &g, true)))
		goto out;
	o.max_model_len = a.max_len ? a.max_len : w.max_len ? w.max_len : m->max_context;
	o.prefix_tokens = a.has_prefix ? a.prefix : w.prefix_tokens;
	o.prefix_fraction = a.has_fraction ? a.prefix_fraction
			    : a.has_prefix ? 1.0 : w.prefix_tokens ? w.prefix_fraction : 0;
	if (a.trace && kvp_serve_trace_load(a.trace, o.max_model_len, &tr, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	o.workload = &w;
	o.trace = &tr;
	struct kvp_budget_opts bo = c.opts;
	if (!bo.context)
		bo.context = o.max_model_len;
	if (kvp_budget_compute(m, &g, &bo, b, &err) || kvp_perf_hw_from_gpu(&g, m, &hw, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	struct kvp_calibration cal;
	if ((rc = kvp_cli_calibration_load(cmd, &calib, &g, &cal, NULL)))
		goto out;
	kvp_calibration_apply(&cal, &hw);
	if (a.decode_eff > 0)
		hw.decode_bw_efficiency = a.decode_eff, hw.efficiency_given = true;
	if (a.prefill_eff > 0)
		kvp_perf_hw_prefill_efficiency(&hw, a.prefill_eff);
	/* the engine's fixed costs, as perf charges them (one step cost) */
	kvp_perf_hw_engine(&hw, &b->engine_model);
	if (kvp_perf_init(&pc, &b->spec, b->weights_bytes, &hw, &err) ||
	    kvp_serve_run(b, &pc, &o, res, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	if (c.format == KVP_FORMAT_TABLE) {
		print_table(&a, &o, b, res, m->name, g.name);
		if (calib.n)
			printf("\nCalibration\n");
		kvp_cli_calibration_print(&calib, &cal, "  ");
		rc = KVP_EXIT_OK;
	} else {
		rc = print_records(&a, &o, res, m->name, g.name, b, &calib, &cal, c.format);
	}
out:
	kvp_serve_trace_free(&tr);
	kvp_workload_free(&w);
	free(res);
	free(b);
	free(m);
	return rc;
}
