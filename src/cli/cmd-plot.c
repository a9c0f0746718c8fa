/* cmd-plot.c: `kvplan plot KIND`: draw one of the planner's charts.  The
 * data (NAME.dat) and the gnuplot script (NAME.gp) are always written; the
 * image is rendered by gnuplot when it can be run (on PATH, or
 * $KVPLAN_GNUPLOT).  When it cannot, one warning names the two files and the
 * command still exits 0: the chart is optional, the numbers are not. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli-bench.h"
#include "cli/cli-cost.h"
#include "cli/cli-options.h"
#include "out/gnuplot-writer.h"
#include "plot/plot.h"
#include "out/shell-quote.h"
#include "frag/frag.h"
#include "size/size.h"
#include "read/workload.h"
#include "base/units.h"

static const char *const cmd = "plot";

#define MAX_LIST 24

/* perf's context when --context is not given: a chat-sized one, not max_context */
#define PERF_DEFAULT_CONTEXT 4096

/* What the options asked for; lists where a chart compares several. */
struct plot_args {
	struct kvp_cli_common c;
	char *models[MAX_LIST], *gpus[MAX_LIST];
	size_t nmodels, ngpus;
	uint32_t tps[MAX_LIST];
	size_t ntps;
	enum kvp_dtype kv[MAX_LIST];
	size_t nkv;
	uint64_t contexts[KVP_PLOT_MAX_ROWS], batches[KVP_PLOT_MAX_ROWS];
	size_t ncontexts, nbatches;
	uint32_t blocks[KVP_PLOT_MAX_ROWS];
	size_t nblocks;
	uint64_t requests;
	double rates[KVP_PLOT_MAX_ROWS];   /* serve: --rates */
	size_t nrates;
	const char *workload;
	char *results[MAX_LIST];
	size_t nresults;
	bool engine_results;   /* validate: the results are an engine's benchmark files */
	uint64_t prompt, output;   /* validate: their shape where they record none */
	struct kvp_cli_calibration calibration;   /* validate: applied to an engine's files' predictions */
	double band;
	const char *dir, *name;
	enum kvp_plot_term term;
	/* pareto: kvplan size's demand and cost options */
	double rate, ttft, tpot;
	uint64_t users;
	struct kvp_size_cost cost;
	struct { char gpu[KVP_NAME_MAX]; double usd; bool used; } price[MAX_LIST];
	size_t nprice;
	int quiet_fail;        /* a build's exit code after its own message */
	/* loaded */
	struct kvp_model *m;   /* nmodels */
	struct kvp_gpu *g;     /* ngpus, or one "custom" GPU */
};

typedef kvp_status (*build_fn)(struct plot_args *a, struct kvp_plot *p, struct kvp_error *err);

static kvp_status build_budget(struct plot_args *a, struct kvp_plot *p, struct kvp_error *err)
{
	return kvp_plot_budget(p, &a->m[0], a->g, a->ngpus, a->tps, a->ntps, &a->c.opts, err);
}

static kvp_status build_kv_context(struct plot_args *a, struct kvp_plot *p, struct kvp_error *err)
{
	return kvp_plot_kv_context(p, a->m, a->nmodels, a->contexts, a->ncontexts, a->c.opts.par,
				   a->c.opts.kv_dtype, a->c.opts.block_size, err);
}

static kvp_status build_max_seqs(struct plot_args *a, struct kvp_plot *p, struct kvp_error *err)
{
	return kvp_plot_max_seqs(p, &a->m[0], a->g, a->ngpus, a->kv, a->nkv, a->contexts,
				 a->ncontexts, &a->c.opts, err);
}

static kvp_status build_perf(struct plot_args *a, struct kvp_plot *p, struct kvp_error *err)
{
	struct kvp_budget_opts o = a->c.opts;
	if (!o.context)
		o.context = PERF_DEFAULT_CONTEXT;
	return kvp_plot_perf(p, &a->m[0], &a->g[0], NULL, &o, a->batches, a->nbatches, a->contexts,
			     a->ncontexts, err);
}

/* The block-size chart's simulation: estimated up front as kvplan frag
 * estimates its own (requests x rows x cli.h's speed; rows: the block sizes,
 * twice with a shared prefix), said on stderr with progress when it passes
 * KVP_CLI_PROGRESS_FROM_S (issue 37 D20: 10^8 requests ran minutes in
 * silence). */
static kvp_status build_block_size(struct plot_args *a, struct kvp_plot *p, struct kvp_error *err)
{
	struct kvp_workload w;
	memset(&w, 0, sizeof w);
	struct kvp_frag_config *dflt = malloc(sizeof *dflt);
	if (!dflt)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	kvp_frag_config_init(dflt);
	struct kvp_cli_progress tenth = {.cmd = "kvplan plot"};
	bool loud = false;
	kvp_status st = kvp_workload_load(a->workload ? a->workload : "chat", &w, err);
	if (!st) {
		uint64_t requests = a->requests ? a->requests : dflt->requests;
		size_t rows = (a->nblocks ? a->nblocks : dflt->nblock) * (w.prefix_tokens ? 2 : 1);
		double est_s = (double)requests * (double)rows * 1e-6 * KVP_CLI_FRAG_US_PER_REQUEST_ROW;
		if (est_s > KVP_CLI_PROGRESS_FROM_S) {
			char t1[64];
			kvp_format_u64(requests, t1, sizeof t1);
			fprintf(stderr, "kvplan plot: block-size: %s requests over about %zu row%s: "
				"about %.0f s; progress follows\n", t1, rows, rows == 1 ? "" : "s", est_s);
			loud = true;
		}
		st = kvp_plot_block_size(p, &a->m[0], &a->g[0], &a->c.opts, &w, a->blocks, a->nblocks,
					 a->requests, loud ? kvp_cli_progress : NULL,
					 loud ? &tenth : NULL, err);
	}
	kvp_workload_free(&w);
	free(dflt);
	return st;
}

/* validate on an engine's benchmark files: read and settled as `kvplan
 * validate` and `kvplan calibrate` read them (cli-bench.h). */
static kvp_status build_validate_bench(struct plot_args *a, struct kvp_plot *p,
				       struct kvp_error *err)
{
	struct kvp_cli_bench b;
	struct kvp_bench_given given = {.batch = a->c.opts.batch, .prompt_tokens = a->prompt,
					.output_tokens = a->output, .tp = a->c.opts.par.tp,
					.model_id = a->c.model};
	a->c.opts.batch = 0;
	int rc = kvp_cli_bench_load(cmd, &a->c, a->results, a->nresults, &given, &a->calibration,
				    &b);
	kvp_status st;
	if (rc) {
		/* the message is out */
		st = kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, NULL, "no runs");
		a->quiet_fail = rc;
	} else {
		st = kvp_plot_validate_bench(p, b.m, &b.g, &a->c.opts, &b.hw, b.runs.v, b.runs.n,
					     a->band > 0 ? a->band : 0.2, err);
	}
	kvp_cli_bench_free(&b);
	return st;
}

static kvp_status build_validate(struct plot_args *a, struct kvp_plot *p, struct kvp_error *err)
{
	if (a->engine_results)
		return build_validate_bench(a, p, err);
	return kvp_plot_validate(p, (const char *const *)a->results, a->nresults,
				 a->ngpus ? &a->g[0] : NULL, 0, a->band > 0 ? a->band : 0.2, err);
}

static kvp_status build_serve(struct plot_args *a, struct kvp_plot *p, struct kvp_error *err)
{
	struct kvp_workload w;
	memset(&w, 0, sizeof w);
	kvp_status st = kvp_workload_load(a->workload ? a->workload : "chat", &w, err);
	struct kvp_plot_serve_opts po = {.rates = a->nrates ? a->rates : NULL, .nrates = a->nrates,
					 .kv_rate = a->rate > 0 ? a->rate : 0,
					 .requests = a->requests, .slo_ttft_s = a->ttft > 0 ? a->ttft : 0,
					 .slo_tpot_s = a->tpot > 0 ? a->tpot : 0};
	if (!st)
		st = kvp_plot_serve(p, &a->m[0], &a->g[0], &a->c.opts, &w, &po, err);
	kvp_workload_free(&w);
	return st;
}

/* The GPUs pareto searches: those named, else every GPU profile (as kvplan
 * size), each with its --price; *out is malloc'd.  0 or an exit code. */
static int pareto_gpus(struct plot_args *a, struct kvp_gpu **out, size_t *n, struct kvp_error *err)
{
	char *names[64];
	size_t nn = a->ngpus ? 0 : kvp_profile_list("gpus", names, 64);
	*n = a->ngpus ? a->ngpus : nn;
	*out = calloc(*n ? *n : 1, sizeof **out);
	int rc = 0;
	for (size_t i = 0; i < *n && *out && !rc; i++) {
		if (a->ngpus)
			(*out)[i] = a->g[i];
		else if (!names[i] || kvp_gpu_load(names[i], &(*out)[i], err))
			rc = names[i] ? kvp_cli_error(cmd, err) : KVP_EXIT_FAIL;
		const char *asked = a->ngpus ? a->gpus[i] : names[i];
		for (size_t k = 0; !rc && k < a->nprice; k++)
			if ((asked && strcmp(a->price[k].gpu, asked) == 0) ||
			    strcmp(a->price[k].gpu, (*out)[i].name) == 0) {
				(*out)[i].price_per_hour = a->price[k].usd;
				snprintf((*out)[i].price_kind, sizeof (*out)[i].price_kind, "given");
				a->price[k].used = true;
			}
	}
	for (size_t i = 0; i < nn; i++)
		free(names[i]);
	if (!*out) {
		fprintf(stderr, "kvplan plot: out of memory\n");
		return KVP_EXIT_FAIL;
	}
	for (size_t k = 0; !rc && k < a->nprice; k++)
		if (!a->price[k].used)
			rc = kvp_cli_usage_error(cmd, "--price: '%s' is not among the GPUs considered",
						 a->price[k].gpu);
	return rc;
}

static kvp_status build_pareto(struct plot_args *a, struct kvp_plot *p, struct kvp_error *err)
{
	struct kvp_workload w;
	memset(&w, 0, sizeof w);
	struct kvp_gpu *g = NULL;
	size_t ng = 0;
	kvp_status st = kvp_workload_load(a->workload ? a->workload : "chat", &w, err);
	if (st)
		goto out;
	if (a->rate > 0)
		w.arrival_rate = a->rate;
	if (a->users)
		w.concurrent_users = a->users;
	if (a->ttft > 0)
		w.slo_ttft_s = a->ttft;
	if (a->tpot > 0)
		w.slo_tpot_s = a->tpot;
	struct kvp_size_demand d;
	if ((st = kvp_size_demand(&w, &a->m[0], &d, err)))
		goto out;
	int rc = pareto_gpus(a, &g, &ng, err);
	if (rc) {
		/* the message is out; an error without one stops the build */
		st = kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, NULL, "no GPUs to search");
		a->quiet_fail = rc;
		goto out;
	}
	uint32_t one[3] = {a->c.opts.par.pp ? a->c.opts.par.pp : 1,
			   a->c.opts.par.dp ? a->c.opts.par.dp : 1,
			   a->c.opts.par.ep ? a->c.opts.par.ep : 1};
	struct kvp_size_space sp = {a->tps, &one[0], &one[1], &one[2], a->ntps, 1, 1, 1, a->kv,
				    a->nkv, NULL, 0, NULL, 0};
	struct kvp_size_opts o = {.budget = a->c.opts, .cost = a->cost};
	st = kvp_plot_pareto(p, &a->m[0], g, ng, &d, &o, &sp, err);
out:
	free(g);
	kvp_workload_free(&w);
	return st;
}

/* Which lists a kind takes (more than one value), and what it needs. */
enum { MANY_MODELS = 1, MANY_GPUS = 2, MANY_TP = 4, MANY_KV = 8, NEEDS_GPU = 16, NO_MODEL = 32,
       SEARCH = 64 /* kvplan size's defaults: --tp 1,2,4,8, one KV dtype */ };

static const struct plot_kind {
	const char *name;
	const char *summary;
	unsigned flags;
	const char *default_models;
	build_fn build;
} kinds[] = {
	{"budget", "memory of one GPU as stacked bars, one per --gpu and --tp (lists)",
	 MANY_GPUS | MANY_TP | NEEDS_GPU, NULL, build_budget},
	{"kv-context", "KV bytes of one sequence against context, one line per --model (list)",
	 MANY_MODELS, "llama-2-7b,llama-3.1-8b,mistral-7b-v0.1,gemma-2-9b,deepseek-v3",
	 build_kv_context},
	{"max-seqs", "max concurrent sequences against context, per --gpu and --kv-dtype (lists)",
	 MANY_GPUS | MANY_KV | NEEDS_GPU, NULL, build_max_seqs},
	{"perf", "decode step and throughput against --batches (roofline), and against\n"
		 "               context with the KV brought over each host link (--batch)",
	 NEEDS_GPU, NULL, build_perf},
	{"block-size", "internal waste, metadata and live sequences against block size,\n"
		       "               simulated over --workload (kvplan frag's simulator)",
	 NEEDS_GPU, NULL, build_block_size},
	{"validate", "kvplan's predictions against measurements (--results: kvbench --out\n"
		     "               files, or an engine's benchmark files with --gpu), with\n"
		     "               y = x and a +/- --band",
	 NO_MODEL, NULL, build_validate},
	{"pareto", "cost per million output tokens against TPOT over kvplan size's search\n"
		   "               (--gpu, --tp, --kv-dtype lists; --workload), the front a line",
	 MANY_GPUS | MANY_TP | MANY_KV | SEARCH, NULL, build_pareto},
	{"serve", "TTFT and TPOT percentiles against the arrival rate (--rates), the knee\n"
		  "               marked, and KV use over time (kvplan serve's simulator)",
	 NEEDS_GPU, NULL, build_serve},
};

static void help(void)
{
	printf("Usage: kvplan plot KIND [OPTIONS]\n\n"
	       "Write a chart's data (NAME.dat) and gnuplot script (NAME.gp), then render it\n"
	       "with gnuplot (on PATH, or $KVPLAN_GNUPLOT).  Without gnuplot the two files stay\n"
	       "and one warning says so; the exit status is still 0.\n\nKinds:\n");
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		printf("  %-12s %s\n", kinds[i].name, kinds[i].summary);
	printf("\nPlot options:\n"
	       "  -o, --output-dir DIR      where the files go (default kvplan-plots, a folder of\n"
	       "                            its own; created if missing)\n"
	       "  --name STEM               file stem: letters, digits, . _ - (default: the kind)\n"
	       "  --term png|svg|pdf|dumb   image format (default png; dumb draws in the terminal)\n"
	       "  --contexts LIST           context points, e.g. 1k,4k,32k (default 256 ... 128k,\n"
	       "                            powers of two)\n"
	       "  --batches LIST            perf: batch points (default 1, 2, 4 ... 512); its\n"
	       "                            --context defaults to 4096, its --batch to 1\n"
	       "  --workload NAME|PATH      block-size: the request lengths (default chat)\n"
	       "  --block-sizes LIST        block-size: the sizes to simulate (default 1, 8, 16,\n"
	       "                            32, 64, 128, 256)\n"
	       "  --requests N              block-size: requests simulated (default 100,000)\n"
	       "  --results FILE[,FILE]     validate: kvbench --out results (.yaml or .csv), or\n"
	       "                            an engine's benchmark files (JSON, as kvplan\n"
	       "                            validate reads them; --gpu required, --model,\n"
	       "                            --engine, --tp, --batch from the files if not given)\n"
	       "  --prompt N, --output N    validate: the shape of engine runs whose file records\n"
	       "                            none (vllm bench latency)\n"
	       "  --calibration FILE        validate: engine files predicted with its constants\n"
	       "                            (twice: an engine calibration and a kvbench run)\n"
	       "  --band F                  validate: the error band drawn, 0.2 = +/- 20%% (default)\n"
	       "  --rate R, --users N, --ttft S, --tpot S, --price GPU=USD,\n"
	       "  --cost cloud[:KIND]|own[:Y,USD/kWh,P]\n"
	       "                            pareto: as kvplan size takes them (--workload default\n"
	       "                            chat; --gpu default every GPU profile; --tp 1,2,4,8)\n"
	       "  --rates LIST              serve: arrival rates, requests/s, increasing (default\n"
	       "                            0.1 .. 1.2 x what the engine completes kept full);\n"
	       "                            --rate: the KV panel's rate (default the knee's);\n"
	       "                            --ttft, --tpot: the knee is the highest rate within\n"
	       "                            them at p90 (default: TTFT p90 within 2 x the lowest\n"
	       "                            rate's); --requests per rate (default 1,000);\n"
	       "                            --workload (default chat)\n"
	       "  --model, --gpu, --tp, --kv-dtype take comma-separated lists where the kind\n"
	       "  compares several (see Kinds); kv-context defaults to\n"
	       "  %s;\n"
	       "  max-seqs to --kv-dtype auto,fp8.\n\n%s"
	       "Example: kvplan plot budget --model llama-3.1-70b --gpu h100-sxm,h200 --tp 2,4,8\n",
	       kinds[1].default_models, kvp_cli_common_help);
}

/* Split a comma list into at most MAX_LIST strings (pointers into a copy
 * that out[0] owns); empty and repeated items refused (kvp_cli_split). */
static bool split(const char *opt, const char *arg, char **out, size_t *n)
{
	return kvp_cli_split(cmd, opt, arg, out, MAX_LIST, n) != NULL;
}

/* A list option whose values the common parser checks one by one. */
static int parse_list(struct plot_args *a, int opt, const char *name, const char *arg)
{
	char *v[MAX_LIST];
	size_t n;
	if (!split(name, arg, v, &n))
		return KVP_EXIT_USAGE;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		struct kvp_cli_common one;
		kvp_cli_common_init(&one);
		rc = kvp_cli_common_option(&one, cmd, opt, v[i]);
		if (opt == KVP_OPT_TP)
			a->tps[i] = one.opts.par.tp;
		else
			a->kv[i] = one.opts.kv_dtype;
	}
	free(v[0]);
	if (rc)
		return rc;
	if (opt == KVP_OPT_TP) {
		a->ntps = n;
		a->c.opts.par.tp = a->tps[0];
	} else {
		a->nkv = n;
		a->c.opts.kv_dtype = a->kv[0];
	}
	return 0;
}

static int load_all(struct plot_args *a, const struct plot_kind *k)
{
	struct kvp_error err = {0};
	a->m = calloc(a->nmodels ? a->nmodels : 1, sizeof *a->m);
	a->g = calloc(a->ngpus ? a->ngpus : 1, sizeof *a->g);
	if (!a->m || !a->g) {
		fprintf(stderr, "kvplan plot: out of memory\n");
		return KVP_EXIT_FAIL;
	}
	for (size_t i = 0; i < a->nmodels; i++) {
		int rc;
		if (kvp_model_load(a->models[i], &a->m[i], &err))
			return kvp_cli_error(cmd, &err);
		if ((rc = kvp_cli_apply_model_options(&a->c, cmd, &a->m[i])))
			return rc;
	}
	for (size_t i = 0; i < a->ngpus; i++)
		if (kvp_gpu_load(a->gpus[i], &a->g[i], &err))
			return kvp_cli_error(cmd, &err);
	if (a->ngpus == 0 && (k->flags & NEEDS_GPU)) {
		if (!a->c.opts.has_gpu_memory)
			return kvp_cli_usage_error(cmd, "plot %s: --gpu (or --gpu-memory) is required",
						   k->name);
		snprintf(a->g[0].name, sizeof a->g[0].name, "custom");
		a->ngpus = 1;
	}
	return 0;
}

static void free_args(struct plot_args *a)
{
	if (a->nmodels)
		free(a->models[0]);
	if (a->nresults)
		free(a->results[0]);
	if (a->ngpus && a->gpus[0])
		free(a->gpus[0]);
	free(a->m);
	free(a->g);
}

/* --tp and --kv-dtype: lists of the common option's values. */
static int list_option(void *dest, int opt, const char *arg)
{
	return parse_list(dest, opt, opt == KVP_OPT_TP ? "--tp" : "--kv-dtype", arg);
}

static bool name_parse(const char *name, const char *arg, void *dest)
{
	if (!kvp_gp_stem_ok(arg)) {
		kvp_cli_usage_error(name, "--name: not a file stem (1 to 200 of letters, digits, "
				    "'.', '_', '-'; not first '.' or '-')");
		return false;
	}
	*(const char **)dest = arg;
	return true;
}

static bool term_parse(const char *name, const char *arg, void *dest)
{
	if (kvp_plot_term_parse(arg, dest))
		return true;
	kvp_cli_usage_error(name, "--term: expected png, svg, pdf or dumb, got '%s'", arg);
	return false;
}

static bool contexts_parse(const char *name, const char *arg, void *dest)
{
	struct plot_args *a = dest;
	return kvp_cli_token_list(name, "--contexts", arg, a->contexts, KVP_PLOT_MAX_ROWS,
				  &a->ncontexts);
}

static bool batches_parse(const char *name, const char *arg, void *dest)
{
	struct plot_args *a = dest;
	return kvp_cli_token_list(name, "--batches", arg, a->batches, KVP_PLOT_MAX_ROWS,
				  &a->nbatches);
}

static bool band_parse(const char *name, const char *arg, void *dest)
{
	double *band = dest;
	if (kvp_parse_fraction(arg, band) || *band >= 1) {
		kvp_cli_usage_error(name, "--band: expected a fraction in (0, 1) such as 0.2 or "
				    "20%%, got '%s'", arg);
		return false;
	}
	return true;
}

static bool tokens_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_tokens(name, "--prompt/--output", arg, dest);
}

static bool requests_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_u64(name, "--requests", arg, 1, dest);
}

static bool block_sizes_parse(const char *name, const char *arg, void *dest)
{
	struct plot_args *a = dest;
	uint64_t v[KVP_PLOT_MAX_ROWS];
	if (!kvp_cli_token_list(name, "--block-sizes", arg, v, KVP_FRAG_MAX_BLOCK_SIZES, &a->nblocks))
		return false;
	for (size_t i = 0; i < a->nblocks; i++) {
		if (v[i] > KVP_FRAG_MAX_BLOCK) {
			kvp_cli_usage_error(name, "--block-sizes: %llu is more than %u tokens",
					    (unsigned long long)v[i], KVP_FRAG_MAX_BLOCK);
			return false;
		}
		a->blocks[i] = (uint32_t)v[i];
	}
	return true;
}

/* --rates: positive, finite, increasing requests/s. */
static bool rates_parse(const char *name, const char *arg, void *dest)
{
	struct plot_args *a = dest;
	char *v[KVP_PLOT_MAX_ROWS];
	size_t n;
	if (!kvp_cli_split(name, "--rates", arg, v, KVP_PLOT_MAX_ROWS, &n))
		return false;
	bool ok = true;
	for (size_t i = 0; i < n && ok; i++) {
		double r;
		ok = !kvp_parse_double(v[i], &r) && r > 0 && isfinite(r) && (i == 0 || r > a->rates[i - 1]);
		if (!ok) {
			char t[KVP_TERM_SIZE(64)];
			kvp_cli_usage_error(name, "--rates: expected increasing positive requests/s "
					    "such as 1,2,4, got '%s'", kvp_term_text(t, sizeof t, v[i]));
		}
		a->rates[i] = r;
	}
	free(v[0]);
	a->nrates = ok ? n : 0;
	return ok;
}

static bool positive_parse(const char *name, const char *arg, void *dest)
{
	double *v = dest;
	if (kvp_parse_double(arg, v) || !(*v > 0) || !isfinite(*v)) {
		kvp_cli_usage_error(name, "expected a positive number, got '%s'", arg);
		return false;
	}
	return true;
}

static bool users_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_u64(name, "--users", arg, 1, dest);
}

static bool price_parse(const char *name, const char *arg, void *dest)
{
	struct plot_args *a = dest;
	if (a->nprice == MAX_LIST) {
		kvp_cli_usage_error(name, "--price: at most %d", MAX_LIST);
		return false;
	}
	if (!kvp_cli_price_parse(name, arg, a->price[a->nprice].gpu, &a->price[a->nprice].usd))
		return false;
	a->price[a->nprice++].used = false;
	return true;
}

/* The kind operand's chart, or NULL. */
static const struct plot_kind *find_kind(const char *name)
{
	const struct plot_kind *k = NULL;
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
		if (strcmp(name, kinds[i].name) == 0)
			k = &kinds[i];
	return k;
}

/* validate: whether the --results are an engine's benchmark files (JSON) or
 * kvbench's, all of one kind: 0, or the exit code after a message. */
static int validate_kind(struct plot_args *a, const struct plot_kind *k)
{
	if (k->build != build_validate || !a->nresults)
		return 0;
	a->engine_results = kvp_cli_bench_is_engine_file(a->results[0]);
	for (size_t i = 1; i < a->nresults; i++)
		if (kvp_cli_bench_is_engine_file(a->results[i]) != a->engine_results)
			return kvp_cli_usage_error(cmd, "plot validate: --results mixes an engine's "
						   "benchmark files (JSON) and kvbench's results: "
						   "give one kind");
	return 0;
}

/* The --model, --gpu and --results lists split into a and checked against
 * what chart k compares, and the defaults it needs filled in: 0, or the
 * exit code after a message. */
static int finish_args(struct plot_args *a, const struct plot_kind *k, const char *model_arg,
		       const char *gpu_arg, const char *results_arg)
{
	if (!model_arg)
		model_arg = k->default_models;
	if (a->engine_results) {
		/* validate on an engine's files: one model and GPU, loaded with the runs */
		if (!gpu_arg)
			return kvp_cli_usage_error(cmd, "plot %s: --gpu is required with an engine's "
						   "benchmark files", k->name);
		a->c.model = model_arg;
		a->c.gpu = gpu_arg;
		model_arg = gpu_arg = NULL;
	} else if (a->prompt || a->output || a->calibration.n) {
		return kvp_cli_usage_error(cmd, "plot %s: --prompt, --output and --calibration apply "
					   "to validate on an engine's benchmark files", k->name);
	}
	if (k->flags & NO_MODEL) {
		if (model_arg || gpu_arg)
			return kvp_cli_usage_error(cmd, "plot %s: takes no --model or --gpu", k->name);
		if (!results_arg)
			return kvp_cli_usage_error(cmd, "plot %s: --results FILE is required", k->name);
	} else if (!model_arg) {
		return kvp_cli_usage_error(cmd, "plot %s: --model is required", k->name);
	}
	if ((model_arg && !split("--model", model_arg, a->models, &a->nmodels)) ||
	    (gpu_arg && !split("--gpu", gpu_arg, a->gpus, &a->ngpus)))
		return KVP_EXIT_USAGE;
	const struct { size_t n; unsigned flag; const char *opt; } many[] = {
		{a->nmodels, MANY_MODELS, "--model"}, {a->ngpus, MANY_GPUS, "--gpu"},
		{a->ntps, MANY_TP, "--tp"}, {a->nkv, MANY_KV, "--kv-dtype"}};
	for (size_t i = 0; i < sizeof many / sizeof many[0]; i++)
		if (many[i].n > 1 && !(k->flags & many[i].flag))
			return kvp_cli_usage_error(cmd, "plot %s: %s takes one value", k->name,
						   many[i].opt);
	if (a->ntps == 0 && (k->flags & SEARCH)) {
		static const uint32_t tps[] = {1, 2, 4, 8};
		for (size_t i = 0; i < 4; i++)
			a->tps[a->ntps++] = tps[i];
	}
	if (a->nkv == 0 && (k->flags & SEARCH))
		a->kv[a->nkv++] = a->c.opts.kv_dtype;
	if (a->ntps == 0)
		a->tps[a->ntps++] = a->c.opts.par.tp;
	if (a->nkv == 0) {
		a->kv[a->nkv++] = KVP_DTYPE_AUTO;
		if (k->flags & MANY_KV)
			a->kv[a->nkv++] = KVP_DTYPE_FP8;
	}
	if (a->ncontexts == 0)
		a->ncontexts = kvp_plot_default_contexts(a->contexts, KVP_PLOT_MAX_ROWS);
	if (a->nbatches == 0)
		a->nbatches = kvp_plot_default_batches(a->batches, KVP_PLOT_MAX_ROWS);
	return 0;
}

/* Chart k built from the loaded a into *out (its source line the command
 * line argv): 0, or the exit code after a message. */
static int build_plot(struct plot_args *a, const struct plot_kind *k, int argc, char **argv,
		      struct kvp_plot **out)
{
	struct kvp_plot *p = *out = kvp_plot_new(a->name ? a->name : k->name);
	if (!p) {
		fprintf(stderr, "kvplan plot: out of memory\n");
		return KVP_EXIT_FAIL;
	}
	size_t len = (size_t)snprintf(p->source, sizeof p->source, "kvplan");
	for (int i = 0; i < argc && len < sizeof p->source; i++)
		len += (size_t)snprintf(p->source + len, sizeof p->source - len, " %s", argv[i]);
	struct kvp_error err = {0};
	if (k->build(a, p, &err))
		return a->quiet_fail ? a->quiet_fail : kvp_cli_error(cmd, &err);
	kvp_plot_mark_overlaps(p);
	return 0;
}

/* NAME.dat and NAME.gp written into a->dir and the image rendered when
 * gnuplot runs; the notes and a missing image said on stderr, the files
 * written on stdout: 0, or the exit code after a message. */
static int write_plot(const struct plot_args *a, const struct kvp_plot *p)
{
	struct kvp_error err = {0};
	if (kvp_plot_mkdir(a->dir, &err) || kvp_plot_write(p, a->dir, a->term, &err))
		return kvp_cli_error(cmd, &err);
	for (size_t i = 0; i < p->nnotes; i++) {
		char note[KVP_TERM_SIZE(sizeof p->notes[i])];
		fprintf(stderr, "kvplan plot: note: %s\n", kvp_term_text(note, sizeof note, p->notes[i]));
	}
	kvp_status st = kvp_plot_render(p, a->dir, a->term, getenv("KVPLAN_GNUPLOT"), &err);
	const char *ext = kvp_plot_term_ext(a->term);
	if (st) {
		char why[1400];
		kvp_error_format(&err, why, sizeof why);
		fprintf(stderr, "kvplan plot: warning: no image (%s); kept %s/%s.dat and %s/%s.gp: "
				"render them with: cd ", why, a->dir, p->name, a->dir, p->name);
		kvp_sh_word(stderr, a->dir); /* a command to paste: the folder quoted */
		fprintf(stderr, " && gnuplot %s.gp\n", p->name);
	} else if (ext) {
		printf("kvplan plot: wrote %s/%s.dat, %s/%s.gp and %s/%s.%s\n", a->dir, p->name, a->dir,
		       p->name, a->dir, p->name, ext);
	}
	return 0;
}

int kvp_cmd_plot(int argc, char **argv)
{
	struct plot_args a;
	memset(&a, 0, sizeof a);
	kvp_cli_common_init(&a.c);
	a.dir = "kvplan-plots"; /* its own folder: never scatter files into . */
	a.term = KVP_PLOT_TERM_PNG;
	const char *model_arg = NULL, *gpu_arg = NULL, *results_arg = NULL;
	const struct kvp_cli_opt opts[] = {
		{.short_name = 'h', .kind = KVP_CLI_OPT_FLAG, .dest = &a.c.help},
		{.kind = KVP_CLI_OPT_COMMON, .dest = &a.c},
		{.common_id = KVP_OPT_MODEL, .kind = KVP_CLI_OPT_STRING, .dest = &model_arg},
		{.common_id = KVP_OPT_GPU, .kind = KVP_CLI_OPT_STRING, .dest = &gpu_arg},
		{.common_id = KVP_OPT_TP, .kind = KVP_CLI_OPT_GROUP, .dest = &a, .group_fn = list_option},
		{.common_id = KVP_OPT_KV_DTYPE, .kind = KVP_CLI_OPT_GROUP, .dest = &a,
		 .group_fn = list_option},
		{.name = "output-dir", .short_name = 'o', .kind = KVP_CLI_OPT_STRING, .dest = &a.dir},
		{.name = "name", .kind = KVP_CLI_OPT_PARSE, .dest = &a.name, .parse = name_parse},
		{.name = "term", .kind = KVP_CLI_OPT_PARSE, .dest = &a.term, .parse = term_parse},
		{.name = "contexts", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = contexts_parse},
		{.name = "batches", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = batches_parse},
		{.name = "workload", .kind = KVP_CLI_OPT_STRING, .dest = &a.workload},
		/* split after parsing, where a usage error frees it */
		{.name = "results", .kind = KVP_CLI_OPT_STRING, .dest = &results_arg},
		{.name = "band", .kind = KVP_CLI_OPT_PARSE, .dest = &a.band, .parse = band_parse},
		{.name = "prompt", .kind = KVP_CLI_OPT_PARSE, .dest = &a.prompt, .parse = tokens_parse},
		{.name = "output", .kind = KVP_CLI_OPT_PARSE, .dest = &a.output, .parse = tokens_parse},
		{.name = "calibration", .kind = KVP_CLI_OPT_PARSE, .dest = &a.calibration,
		 .parse = kvp_cli_calibration_parse},
		{.name = "block-sizes", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = block_sizes_parse},
		{.name = "requests", .kind = KVP_CLI_OPT_PARSE, .dest = &a.requests, .parse = requests_parse},
		{.name = "rate", .kind = KVP_CLI_OPT_PARSE, .dest = &a.rate, .parse = positive_parse},
		{.name = "rates", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = rates_parse},
		{.name = "ttft", .kind = KVP_CLI_OPT_PARSE, .dest = &a.ttft, .parse = positive_parse},
		{.name = "tpot", .kind = KVP_CLI_OPT_PARSE, .dest = &a.tpot, .parse = positive_parse},
		{.name = "users", .kind = KVP_CLI_OPT_PARSE, .dest = &a.users, .parse = users_parse},
		{.name = "price", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = price_parse},
		{.name = "cost", .kind = KVP_CLI_OPT_PARSE, .dest = &a.cost, .parse = kvp_cli_cost_parse},
		{.kind = KVP_CLI_OPT_END}
	};
	int rc = kvp_cli_options_parse(cmd, argc, argv, opts, help);
	if (rc != KVP_CLI_OPTIONS_DONE)
		return rc;
	rc = 0;
	if (a.c.help) {
		help();
		return KVP_EXIT_OK;
	}
	if (optind >= argc)
		return kvp_cli_usage_error(cmd, "which plot? (budget, kv-context, max-seqs, perf, "
						"block-size, validate, pareto, serve)");
	const struct plot_kind *k = find_kind(argv[optind]);
	if (!k)
		return kvp_cli_usage_error(cmd, "unknown plot '%s'", argv[optind]);
	if (optind + 1 < argc)
		return kvp_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
	if (a.c.format != KVP_FORMAT_TABLE)
		return kvp_cli_usage_error(cmd, "--format: a plot writes .dat and .gp files; use --term");

	struct kvp_plot *p = NULL;
	bool tp_given = a.ntps > 0;
	if (results_arg && !split("--results", results_arg, a.results, &a.nresults)) {
		rc = KVP_EXIT_USAGE;
		goto out;
	}
	if ((rc = validate_kind(&a, k)) || (rc = finish_args(&a, k, model_arg, gpu_arg, results_arg)))
		goto out;
	if (a.engine_results && !tp_given)
		a.c.opts.par.tp = 0; /* the runs' */
	if ((rc = load_all(&a, k)) || (rc = build_plot(&a, k, argc, argv, &p)))
		goto out;
	rc = write_plot(&a, p);
out:
	kvp_plot_free(p);
	free_args(&a);
	return rc;
}
