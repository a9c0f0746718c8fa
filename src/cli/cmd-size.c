/* cmd-size.c: `kvplan size`: which GPUs, how many and split how, at what
 * cost, for a model and a workload.  Every GPU profile (or --gpus) at every
 * tensor-parallel size (or --tp) gets the fewest replicas that meet memory,
 * throughput and the service levels; the configurations are ranked by cost and
 * each rejected one says which constraint failed.  --emit prints the serving
 * engine's settings for the cheapest.  cmd-size-print.c prints the answer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli-calibration.h"
#include "cli/cli-cost.h"
#include "cli/cli-options.h"
#include "cli/cmd-size-print.h"
#include "time/disagg.h"
#include "size/size-calibrate.h"
#include "size/size-choose.h"
#include "size/size-emit-plan.h"
#include "size/size.h"
#include "base/units.h"

static const char *const cmd = "size";

#define MAX_GPUS 64
#define MAX_TPS 8
#define MAX_PRICES 32

static void help(void)
{
	printf("Usage: kvplan size --model NAME (--workload NAME|PATH | --prompt DIST --output DIST)\n"
	       "                   [--gpus all|LIST] [OPTIONS]\n\n"
	       "GPU purchase sizing.  For each GPU and tensor-parallel size, the fewest replicas\n"
	       "that meet every constraint, ranked by cost per million output tokens at\n"
	       "each configuration's own throughput (then per hour):\n"
	       "  memory      weights fit; one request of max_model_len fits; the KV of the\n"
	       "              sequences in flight fits (Little's law: C = rate x (TTFT +\n"
	       "              output x TPOT), per replica)\n"
	       "  throughput  prefill and decode keep up with the rate\n"
	       "  ttft, tpot  the workload's service levels, TTFT at its percentile prompt\n"
	       "Each rejected configuration lists the constraints it fails.\n\n"
	       "%s"
	       "Sizing:\n"
	       "  --workload NAME|PATH      workload profile (kvplan-profiles(5)): lengths, limits,\n"
	       "                            rate or users, service levels\n"
	       "  --prompt DIST, --output DIST  the request lengths instead of (or over) the\n"
	       "                            workload's: fixed:N, uniform:LO,HI, lognormal:MEDIAN,SIGMA,\n"
	       "                            ... (as in kvplan frag); without --workload the\n"
	       "                            max_model_len is the model's context\n"
	       "  --gpus all|LIST           GPU profiles to consider (default all); --gpu NAME: one\n"
	       "  --tp LIST                 tensor-parallel sizes (default 1,2,4,8)\n"
	       "  --pp LIST, --dp LIST, --ep LIST, --kv-dtypes LIST\n"
	       "                            the other axes searched (default 1, 1, 1, --kv-dtype)\n"
	       "  --pareto                  only the Pareto front of $/Mtok, TPOT and TTFT\n"
	       "  --max-num-seqs LIST       also search these caps on the sequences a replica\n"
	       "                            schedules (0: as many as fit); below what fits, more\n"
	       "                            replicas each hold fewer at a lower TPOT and more cost\n"
	       "                            (default 0: the most that fit and keep TPOT in its level)\n"
	       "  --disagg P:D[,P:D...]     also disaggregated replicas: P prefill + D decode\n"
	       "                            instances, KV moved over the link between them\n"
	       "  --rate R                  arrival rate, requests/s (overrides the workload's)\n"
	       "  --users N                 concurrent users, when no rate is given\n"
	       "  --ttft S, --tpot S        service levels in seconds (override the workload's)\n"
	       "  --percentile P            the percentile of the TTFT level, in (0, 100) (default:\n"
	       "                            the workload's, else 50): the prompt at P, the mean wait\n"
	       "  --slo-percentile p50|p90|p99  the percentile of the TTFT level, prompt and wait both:\n"
	       "                            the wait W before a prefill (M/D/1 mean W_q, P(W > 0) =\n"
	       "                            rho) with an exponential tail P(W > t) = rho exp(-t rho /\n"
	       "                            W_q), so W_p = W_q / rho ln(rho / (1 - p)) when rho > 1 - p,\n"
	       "                            else 0; TPOT is the mean step (every sequence alike)\n"
	       "  --price GPU=USD           price per GPU-hour (repeatable; default: the profile's)\n"
	       "  --cost cloud|cloud:KIND|own  the cost basis (default cloud, every price labelled with\n"
	       "                            its kind: on-demand, reserved-1y, reserved-3y, spot,\n"
	       "                            serverless; cloud:KIND compares within one kind); own:\n"
	       "                            purchase / (years x 8760 h x use) + TDP x PUE x power price\n"
	       "  --years Y, --power-price USD/kWh, --pue P, --cost-utilization F\n"
	       "                            with --cost own (defaults 3, 0.10, 1.3, 1: assumptions);\n"
	       "                            --cost own:Y,USD/kWh,P gives the first three in one word\n"
	       "  --max-replicas N          the most replicas tried (default 1024)\n"
	       "  --decode-bw-efficiency F, --prefill-flops-efficiency F   as in kvplan perf\n"
	       "  --latency-spread F        TTFT and TPOT x (1 + F) is the conservative end of the\n"
	       "                            band (0 to 10; default 0, or --calibration's)\n"
	       "  --calibration FILE        a kvbench run (kvbench --out) of the one GPU considered\n"
	       "                            (--gpu): its efficiency fitted as kvplan perf does, and\n"
	       "                            the latency spread taken as the LARGEST |measured /\n"
	       "                            predicted - 1| over its large points at that efficiency\n"
	       "                            (a run holds a handful, too few for a percentile; the\n"
	       "                            conservative end covers every step it saw); given\n"
	       "                            efficiencies and --latency-spread win.  Also a\n"
	       "                            calibration file (kvplan calibrate --out, a table); twice:\n"
	       "                            an engine calibration and a kvbench run, whose figure\n"
	       "                            is the KV read (kv_bw_efficiency), as in kvplan perf\n"
	       "  --simulate N              size the N cheapest configurations again on the\n"
	       "                            serving-loop simulator (kvplan serve): per replica the\n"
	       "                            largest rate (or users, a closed loop) that keeps the\n"
	       "                            TTFT and TPOT percentiles within their levels, by\n"
	       "                            bisection; the column sim says which rows were\n"
	       "                            (default 0: closed forms only)\n"
	       "  --emit vllm|sglang|trtllm the engine command for the cheapest configuration\n"
	       "                            (also plans with that engine unless --engine is given),\n"
	       "                            carrying every planned setting: the model as typed,\n"
	       "                            shape, limits, memory fraction, KV dtype, and the\n"
	       "                            weights (--weights-dtype fp8 over a bf16 checkpoint:\n"
	       "                            --quantization fp8 on vLLM and SGLang; what an engine\n"
	       "                            cannot quantize on the fly is refused);\n"
	       "                            a disaggregated plan: one command per role (prefill,\n"
	       "                            decode) with the engine's KV transfer (vLLM\n"
	       "                            NixlConnector, SGLang --disaggregation-mode, TRT-LLM\n"
	       "                            trtllm-serve disaggregated); see kvplan(1)\n\n"
	       "Example: kvplan size --model llama-3.1-70b --workload chat --rate 4 --ttft 1 \\\n"
	       "             --tpot 0.05 --gpus all --emit vllm\n",
	       kvp_cli_common_help);
}


struct price {
	char gpu[KVP_NAME_MAX];
	double usd;
};

/* The command line beyond the common options; the table's parsers
 * (cli-options.h) take it as dest. */
struct size_args {
	struct kvp_cli_common *c;
	const char *workload, *gpus_arg, *prompt, *output;
	struct kvp_cli_calibration calibration;
	uint64_t tps[MAX_TPS], users, max_replicas, simulate;
	size_t ntp, nprice;
	/* the other axes of the search: one value each unless listed */
	uint64_t pps[MAX_TPS], dps[MAX_TPS], eps[MAX_TPS], seqs[MAX_TPS];
	size_t npp, ndp, nep, nkv, nseqs;
	enum kvp_dtype kvs[MAX_TPS];
	bool kv_list, pareto_only, queue_pct;
	double latency_spread;       /* -1: not given */
	uint32_t pd[MAX_TPS + 1][2]; /* colocated first */
	size_t npd;
	struct price prices[MAX_PRICES];
	double rate, ttft, tpot, percentile, decode_eff, prefill_eff;
	bool has_emit;
	struct kvp_size_cost cost;
	bool own_opt;
	enum kvp_engine emit;
};

static bool tp_parse(const char *name, const char *arg, void *dest)
{
	struct size_args *a = dest;
	if (!kvp_cli_token_list(name, "--tp", arg, a->tps, MAX_TPS, &a->ntp))
		return false;
	for (size_t i = 0; i < a->ntp; i++)
		if (a->tps[i] > 1024) {
			kvp_cli_usage_error(name, "--tp: %llu GPUs is more than kvplan plans for",
					    (unsigned long long)a->tps[i]);
			return false;
		}
	return true;
}

/* --pp, --dp, --ep: lists of 1 to 1024 GPUs. */
static bool axis_parse(const char *name, const char *opt, const char *arg, uint64_t *to, size_t *nto)
{
	if (!kvp_cli_token_list(name, opt, arg, to, MAX_TPS, nto))
		return false;
	for (size_t i = 0; i < *nto; i++)
		if (to[i] < 1 || to[i] > 1024) {
			kvp_cli_usage_error(name, "%s: expected 1 to 1024 GPUs, got %llu", opt,
					    (unsigned long long)to[i]);
			return false;
		}
	return true;
}

static bool pp_parse(const char *name, const char *arg, void *dest)
{
	struct size_args *a = dest;
	return axis_parse(name, "--pp", arg, a->pps, &a->npp);
}

static bool dp_parse(const char *name, const char *arg, void *dest)
{
	struct size_args *a = dest;
	return axis_parse(name, "--dp", arg, a->dps, &a->ndp);
}

static bool ep_parse(const char *name, const char *arg, void *dest)
{
	struct size_args *a = dest;
	return axis_parse(name, "--ep", arg, a->eps, &a->nep);
}

/* --max-num-seqs: a list of caps (0: none), the common option's meaning
 * (the sampler's sequences in the budget) taken per cap in kvp_size_evaluate. */
static bool seqs_parse(const char *name, const char *arg, void *dest)
{
	struct size_args *a = dest;
	const char *p = arg;
	a->nseqs = 0;
	for (;;) {
		char *end;
		unsigned long long v = strtoull(p, &end, 10);
		if (end == p || (*end && *end != ',') || *p == '-' || v > 1u << 20 ||
		    a->nseqs == MAX_TPS) {
			char t[KVP_TERM_SIZE(64)];
			kvp_cli_usage_error(name, "--max-num-seqs: expected at most %d counts of 0 "
					    "(as many as fit) to 1048576 such as 0,64,32, got '%s'",
					    MAX_TPS, kvp_term_text(t, sizeof t, arg));
			return false;
		}
		a->seqs[a->nseqs++] = v;
		if (!*end)
			return true;
		p = end + 1;
	}
}

/* --kv-dtypes, --disagg: the items of a comma list, at most MAX_TPS,
 * pointers into the copy returned, which the caller frees; NULL after a
 * usage error (kvp_cli_split: an empty or repeated item, too many). */
static char *list_items(const char *cmd, const char *opt, const char *arg, char *item[MAX_TPS],
			size_t *n)
{
	return kvp_cli_split(cmd, opt, arg, item, MAX_TPS, n);
}

static bool kv_dtypes_parse(const char *name, const char *arg, void *dest)
{
	struct size_args *a = dest;
	char *item[MAX_TPS], tt[KVP_TERM_SIZE(64)];
	size_t n;
	char *buf = list_items(name, "--kv-dtypes", arg, item, &n);
	a->nkv = 0;
	if (!buf)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (!kvp_dtype_parse(item[i], &a->kvs[i])) {
			kvp_cli_usage_error(name, "--kv-dtypes: unknown dtype '%s'",
					    kvp_term_text(tt, sizeof tt, item[i]));
			free(buf);
			a->nkv = 0;
			return false;
		}
		for (size_t j = 0; j < i; j++)
			if (a->kvs[j] == a->kvs[i]) { /* fp8 and fp8_e4m3 are one */
				kvp_cli_usage_error(name, "--kv-dtypes: '%s' and '%s' are the same dtype",
						    item[j], item[i]);
				free(buf);
				a->nkv = 0;
				return false;
			}
		a->nkv++;
	}
	free(buf);
	a->kv_list = true;
	return true;
}

static bool disagg_parse(const char *name, const char *arg, void *dest)
{
	struct size_args *a = dest;
	char *item[MAX_TPS], tt[KVP_TERM_SIZE(64)];
	size_t n;
	char *buf = list_items(name, "--disagg", arg, item, &n);
	a->npd = 1; /* colocated first */
	if (!buf)
		return false;
	for (size_t i = 0; i < n; i++) {
		struct kvp_error e = {0};
		uint32_t *pd = a->pd[a->npd];
		if (kvp_disagg_parse_counts(item[i], &pd[0], &pd[1], &e) || pd[0] > 64 || pd[1] > 64) {
			kvp_cli_usage_error(name, "--disagg: expected P:D pairs of 1 to 64 "
					    "instances such as 1:2,1:3, got '%s'",
					    kvp_term_text(tt, sizeof tt, item[i]));
			free(buf);
			return false;
		}
		for (size_t j = 1; j < a->npd; j++)
			if (a->pd[j][0] == pd[0] && a->pd[j][1] == pd[1]) {
				kvp_cli_usage_error(name, "--disagg: %u:%u is given twice", pd[0], pd[1]);
				free(buf);
				return false;
			}
		a->npd++;
	}
	free(buf);
	return true;
}

static bool latency_spread_parse(const char *name, const char *arg, void *dest)
{
	double *spread = dest;
	if (kvp_parse_double(arg, spread) || !(*spread >= 0) || *spread > 10) {
		char t[KVP_TERM_SIZE(64)];
		kvp_cli_usage_error(name, "--latency-spread: expected a fraction from 0 to 10 such as "
				    "0.1, got '%s'", kvp_term_text(t, sizeof t, arg));
		return false;
	}
	return true;
}

static bool slo_percentile_parse(const char *name, const char *arg, void *dest)
{
	struct size_args *a = dest;
	if (strcmp(arg, "p50") && strcmp(arg, "p90") && strcmp(arg, "p99")) {
		char t[KVP_TERM_SIZE(64)];
		kvp_cli_usage_error(name, "--slo-percentile: expected p50, p90 or p99, got '%s'",
				    kvp_term_text(t, sizeof t, arg));
		return false;
	}
	a->percentile = atof(arg + 1);
	a->queue_pct = true;
	return true;
}

static bool users_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_u64(name, "--users", arg, 1, dest);
}

static bool simulate_parse(const char *name, const char *arg, void *dest)
{
	uint64_t *n = dest;
	if (!kvp_cli_u64(name, "--simulate", arg, 0, n))
		return false;
	if (*n > 4096) {
		kvp_cli_usage_error(name, "--simulate: %s configurations is more than kvplan simulates "
				    "(at most 4096)", arg);
		return false;
	}
	return true;
}

static bool max_replicas_parse(const char *name, const char *arg, void *dest)
{
	uint64_t *max = dest;
	if (!kvp_cli_u64(name, "--max-replicas", arg, 1, max))
		return false;
	if (*max > 1u << 20) {
		kvp_cli_usage_error(name, "--max-replicas: %s is too many", arg);
		return false;
	}
	return true;
}

/* --rate, --ttft, --tpot: a positive number; --percentile: in (0, 100). */
static bool positive(const char *name, const char *opt, const char *arg, double *v, bool pct)
{
	if (kvp_parse_double(arg, v) || (!pct && !(*v > 0)) || (pct && (*v <= 0 || *v >= 100))) {
		kvp_cli_usage_error(name, "%s: expected a positive number%s, got '%s'", opt,
				    pct ? " below 100" : "", arg);
		return false;
	}
	return true;
}

static bool rate_parse(const char *name, const char *arg, void *dest)
{
	return positive(name, "--rate", arg, dest, false);
}

static bool ttft_parse(const char *name, const char *arg, void *dest)
{
	return positive(name, "--ttft", arg, dest, false);
}

static bool tpot_parse(const char *name, const char *arg, void *dest)
{
	return positive(name, "--tpot", arg, dest, false);
}

static bool percentile_parse(const char *name, const char *arg, void *dest)
{
	return positive(name, "--percentile", arg, dest, true);
}

static bool efficiency(const char *name, const char *opt, const char *arg, double *d)
{
	if (kvp_parse_fraction(arg, d)) {
		kvp_cli_usage_error(name, "--%s: expected a fraction in (0, 1], got '%s'", opt, arg);
		return false;
	}
	return true;
}

static bool decode_eff_parse(const char *name, const char *arg, void *dest)
{
	return efficiency(name, "decode-bw-efficiency", arg, dest);
}

static bool prefill_eff_parse(const char *name, const char *arg, void *dest)
{
	return efficiency(name, "prefill-flops-efficiency", arg, dest);
}

static bool price_parse(const char *name, const char *arg, void *dest)
{
	struct size_args *a = dest;
	if (a->nprice == MAX_PRICES) {
		kvp_cli_usage_error(name, "--price: at most %d", MAX_PRICES);
		return false;
	}
	struct price *p = &a->prices[a->nprice];
	if (!kvp_cli_price_parse(name, arg, p->gpu, &p->usd))
		return false;
	a->nprice++;
	return true;
}

/* --years, --power-price, --pue, --cost-utilization: owned GPUs' terms, one
 * group of the table (cli-options.h). */
enum { OPT_YEARS = KVP_OPT_LAST + 1, OPT_POWER_PRICE, OPT_PUE, OPT_COST_UTIL };

static const struct option own_options[] = {
	{"years", required_argument, NULL, OPT_YEARS},
	{"power-price", required_argument, NULL, OPT_POWER_PRICE},
	{"pue", required_argument, NULL, OPT_PUE},
	{"cost-utilization", required_argument, NULL, OPT_COST_UTIL},
	{NULL, 0, NULL, 0}
};

static int own_option(void *dest, int opt, const char *arg)
{
	struct size_args *a = dest;
	if (opt < OPT_YEARS || opt > OPT_COST_UTIL)
		return 1;
	static const char *const names[] = {"--years", "--power-price", "--pue", "--cost-utilization"};
	int i = opt - OPT_YEARS;
	double v;
	double *to[] = {&a->cost.years, &a->cost.power_usd_per_kwh, &a->cost.pue, &a->cost.utilization};
	bool bad = kvp_parse_double(arg, &v) || !(v > 0) || !isfinite(v) || (opt == OPT_PUE && v < 1) ||
		   (opt == OPT_COST_UTIL && v > 1);
	if (bad) {
		char t[KVP_TERM_SIZE(64)];
		return kvp_cli_usage_error(cmd, "%s: expected %s, got '%s'", names[i],
					   opt == OPT_PUE ? "a number of at least 1"
					   : opt == OPT_COST_UTIL ? "a fraction in (0, 1]"
								  : "a positive number",
					   kvp_term_text(t, sizeof t, arg));
	}
	*to[i] = v;
	a->own_opt = true;
	return 0;
}

static bool emit_parse(const char *name, const char *arg, void *dest)
{
	struct size_args *a = dest;
	if (!kvp_engine_parse(arg, &a->emit) || a->emit == KVP_ENGINE_GENERIC ||
	    kvp_engine_time_only(a->emit)) {
		kvp_cli_usage_error(name, "--emit: expected vllm, sglang or trtllm, got '%s'", arg);
		return false;
	}
	a->has_emit = true;
	return true;
}

/* The GPUs considered: --gpu, --gpus LIST, or every GPU profile (--gpus all,
 * the default), into names[*ngpu]; each name allocated, NULL when memory ran
 * out.  A list is split whole (kvp_cli_split: no name cut or skipped, none
 * twice); returns KVP_EXIT_USAGE after its error, else 0. */
static int gpu_names(const char *gpu, const char *gpus_arg, char *names[MAX_GPUS], size_t *ngpu)
{
	*ngpu = 0;
	if (gpu) {
		names[(*ngpu)++] = strdup(gpu);
	} else if (!gpus_arg || strcmp(gpus_arg, "all") == 0) {
		*ngpu = kvp_profile_list("gpus", names, MAX_GPUS);
	} else {
		char *item[MAX_GPUS];
		size_t n;
		char *buf = kvp_cli_split(cmd, "--gpus", gpus_arg, item, MAX_GPUS, &n);
		if (!buf)
			return KVP_EXIT_USAGE;
		for (size_t i = 0; i < n; i++)
			names[(*ngpu)++] = strdup(item[i]);
		free(buf);
	}
	return 0;
}

/* The command line's rate, users and service levels over the workload's. */
static void override_workload(const struct size_args *a, struct kvp_workload *w)
{
	if (a->rate > 0)
		w->arrival_rate = a->rate;
	if (a->users)
		w->concurrent_users = a->users;
	if (a->ttft > 0)
		w->slo_ttft_s = a->ttft;
	if (a->tpot > 0)
		w->slo_tpot_s = a->tpot;
	if (a->percentile > 0)
		w->slo_percentile = a->percentile;
}

/* Search the space on each GPU (at its --price, loaded into gpus[i]),
 * filling cfg with ngpu x the space's points: 0, or the exit code after a
 * message. */
static int search_gpus(const struct size_args *a, char *const *names, size_t ngpu,
		       const struct kvp_model *m, const struct kvp_size_demand *d,
		       const struct kvp_size_opts *so, const struct kvp_size_space *space,
		       struct kvp_gpu *gpus, struct kvp_size_config *cfg)
{
	bool priced[MAX_PRICES] = {false};
	struct kvp_error err = {0};
	size_t n = 0, per_gpu = kvp_size_space_points(space);
	for (size_t i = 0; i < ngpu; i++) {
		struct kvp_gpu *g = &gpus[i];
		if (kvp_gpu_load(names[i], g, &err))
			return kvp_cli_error(cmd, &err);
		for (size_t k = 0; k < a->nprice; k++)
			if (strcmp(a->prices[k].gpu, names[i]) == 0 || strcmp(a->prices[k].gpu, g->name) == 0) {
				g->price_per_hour = a->prices[k].usd;
				snprintf(g->price_kind, sizeof g->price_kind, "given");
				priced[k] = true;
			}
		if (kvp_size_search_space(m, g, d, so, space, &cfg[n], &err))
			return kvp_cli_error(cmd, &err);
		for (size_t k = n; k < n + per_gpu; k++)
			cfg[k].origin = (uint32_t)i;
		n += per_gpu;
	}
	for (size_t k = 0; k < a->nprice; k++)
		if (!priced[k])
			return kvp_cli_usage_error(cmd, "--price: '%s' is not among the GPUs considered",
						   a->prices[k].gpu);
	return 0;
}

/* --calibration: a kvbench run measures one GPU, so only that GPU is sized
 * with it (size-calibrate.h).  0, or the exit code after a message. */
static int calibrate(const struct size_args *a, char *const *names, size_t ngpu,
		     struct kvp_size_opts *so, const char **spread_from, struct kvp_calibration *cal)
{
	struct kvp_error err = {0};
	struct kvp_gpu g;
	if (ngpu != 1)
		return kvp_cli_usage_error(cmd, "--calibration: a calibration describes one GPU; "
					   "give --gpu NAME (or --gpus with one name)");
	if (kvp_gpu_load(names[0], &g, &err))
		return kvp_cli_error(cmd, &err);
	int rc = kvp_cli_calibration_load(cmd, &a->calibration, &g, cal, NULL);
	if (!rc)
		kvp_size_calibration_apply(cal, a->latency_spread >= 0, so, spread_from);
	return rc;
}

int kvp_cmd_size(int argc, char **argv)
{
	struct kvp_cli_common c;
	kvp_cli_common_init(&c);
	struct size_args a = {.c = &c, .tps = {1, 2, 4, 8}, .ntp = 4, .pps = {1}, .dps = {1}, .eps = {1},
			      .npp = 1, .ndp = 1, .nep = 1, .nkv = 1, .kvs = {KVP_DTYPE_AUTO},
			      .npd = 1, .latency_spread = -1, .rate = -1, .ttft = -1, .tpot = -1, .percentile = -1,
			      .emit = KVP_ENGINE_GENERIC};
	int rc;
	const struct kvp_cli_opt opts[] = {
		{.short_name = 'h', .kind = KVP_CLI_OPT_FLAG, .dest = &c.help},
		{.kind = KVP_CLI_OPT_COMMON, .dest = &c},
		{.common_id = KVP_OPT_TP, .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = tp_parse},
		{.common_id = KVP_OPT_PP, .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = pp_parse},
		{.common_id = KVP_OPT_DP, .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = dp_parse},
		{.common_id = KVP_OPT_EP, .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = ep_parse},
		{.common_id = KVP_OPT_MAX_NUM_SEQS, .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = seqs_parse},
		{.name = "workload", .kind = KVP_CLI_OPT_STRING, .dest = &a.workload},
		{.name = "prompt", .kind = KVP_CLI_OPT_STRING, .dest = &a.prompt},
		{.name = "output", .kind = KVP_CLI_OPT_STRING, .dest = &a.output},
		{.name = "gpus", .kind = KVP_CLI_OPT_STRING, .dest = &a.gpus_arg},
		{.name = "rate", .kind = KVP_CLI_OPT_PARSE, .dest = &a.rate, .parse = rate_parse},
		{.name = "users", .kind = KVP_CLI_OPT_PARSE, .dest = &a.users, .parse = users_parse},
		{.name = "ttft", .kind = KVP_CLI_OPT_PARSE, .dest = &a.ttft, .parse = ttft_parse},
		{.name = "tpot", .kind = KVP_CLI_OPT_PARSE, .dest = &a.tpot, .parse = tpot_parse},
		{.name = "percentile", .kind = KVP_CLI_OPT_PARSE, .dest = &a.percentile, .parse = percentile_parse},
		{.name = "price", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = price_parse},
		{.name = "simulate", .kind = KVP_CLI_OPT_PARSE, .dest = &a.simulate, .parse = simulate_parse},
		{.name = "max-replicas", .kind = KVP_CLI_OPT_PARSE, .dest = &a.max_replicas,
		 .parse = max_replicas_parse},
		{.name = "emit", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = emit_parse},
		{.name = "decode-bw-efficiency", .kind = KVP_CLI_OPT_PARSE, .dest = &a.decode_eff,
		 .parse = decode_eff_parse},
		{.name = "prefill-flops-efficiency", .kind = KVP_CLI_OPT_PARSE, .dest = &a.prefill_eff,
		 .parse = prefill_eff_parse},
		{.name = "cost", .kind = KVP_CLI_OPT_PARSE, .dest = &a.cost, .parse = kvp_cli_cost_parse},
		{.kind = KVP_CLI_OPT_GROUP, .dest = &a, .group = own_options, .group_fn = own_option},
		{.name = "kv-dtypes", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = kv_dtypes_parse},
		{.name = "pareto", .kind = KVP_CLI_OPT_FLAG, .dest = &a.pareto_only},
		{.name = "slo-percentile", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = slo_percentile_parse},
		{.name = "latency-spread", .kind = KVP_CLI_OPT_PARSE, .dest = &a.latency_spread,
		 .parse = latency_spread_parse},
		{.name = "disagg", .kind = KVP_CLI_OPT_PARSE, .dest = &a, .parse = disagg_parse},
		{.name = "calibration", .kind = KVP_CLI_OPT_PARSE, .dest = &a.calibration,
		 .parse = kvp_cli_calibration_parse},
		{.kind = KVP_CLI_OPT_END}
	};
	if ((rc = kvp_cli_options_parse_no_operand(cmd, argc, argv, opts, help, &c.help)) !=
	    KVP_CLI_OPTIONS_DONE)
		return rc;
	if (!a.workload && !a.prompt && !a.output)
		return kvp_cli_usage_error(cmd, "give --workload, or --prompt and --output");
	/* the GPUs of a replica are what size searches: a fixed count is not
	 * quietly dropped but refused, with the options that bound the search */
	if (c.opts.par.gpus)
		return kvp_cli_usage_error(cmd, "--num-gpus: size searches the GPUs of a replica "
					   "(tp x pp x dp); bound the search with --tp, --pp and --dp");
	if (a.gpus_arg && c.gpu)
		return kvp_cli_usage_error(cmd, "give --gpus or --gpu, not both");
	if (a.own_opt && a.cost.basis != KVP_SIZE_BASIS_OWN)
		return kvp_cli_usage_error(cmd, "--years, --power-price, --pue and --cost-utilization "
					   "price owned GPUs: give --cost own");
	if (a.has_emit && !c.engine_given)
		c.opts.engine = a.emit;

	char *names[MAX_GPUS];
	size_t ngpu;
	if ((rc = gpu_names(c.gpu, a.gpus_arg, names, &ngpu)))
		return rc;
	struct kvp_model *m = malloc(sizeof *m);
	uint32_t tp32[MAX_TPS], pp32[MAX_TPS], dp32[MAX_TPS], ep32[MAX_TPS];
	for (size_t i = 0; i < MAX_TPS; i++) {
		tp32[i] = (uint32_t)a.tps[i];
		pp32[i] = (uint32_t)a.pps[i];
		dp32[i] = (uint32_t)a.dps[i];
		ep32[i] = (uint32_t)a.eps[i];
	}
	if (!a.kv_list)
		a.kvs[0] = c.opts.kv_dtype; /* --kv-dtype, or the default */
	struct kvp_size_space space = {tp32, pp32, dp32, ep32, a.ntp, a.npp, a.ndp, a.nep, a.kvs, a.nkv,
				       a.npd > 1 ? (const uint32_t(*)[2])a.pd : NULL, a.npd,
				       a.nseqs ? a.seqs : NULL, a.nseqs};
	size_t per_gpu = kvp_size_space_points(&space);
	struct kvp_size_config *cfg = calloc(ngpu * per_gpu + 1, sizeof *cfg);
	struct kvp_gpu *gpus = calloc(ngpu + 1, sizeof *gpus);
	struct kvp_workload w;
	bool have_w = false;
	struct kvp_error err = {0};
	struct kvp_cli_warnings warn = {0};
	size_t n = 0;
	memset(&w, 0, sizeof w);
	if (!m || !cfg || !gpus) {
		fprintf(stderr, "kvplan size: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < ngpu; i++)
		if (!names[i]) {
			fprintf(stderr, "kvplan size: out of memory\n");
			rc = KVP_EXIT_FAIL;
			goto out;
		}
	if (ngpu == 0) {
		rc = kvp_cli_usage_error(cmd, "no GPU profiles to consider");
		goto out;
	}
	if ((rc = kvp_cli_load(&c, cmd, m, NULL, false)))
		goto out;
	kvp_cli_model_warnings(&warn, m);
	/* the command must name the model it planned: refused before the search */
	char launch[sizeof m->path + 2];
	if (a.has_emit && kvp_size_launch_id(m, launch, sizeof launch, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	/* and spread the experts, and load the weights, as planned
	 * (size-emit-plan.h) */
	if (a.has_emit && kvp_size_emit_precheck(a.emit, m, c.opts.dtype, &space, &err)) {
		rc = kvp_cli_usage_error(cmd, "--emit %s", err.msg);
		goto out;
	}
	if (a.workload && kvp_workload_load(a.workload, &w, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	have_w = true;
	/* the lengths as typed, over the workload's (or alone) */
	if ((a.prompt || a.output) &&
	    (rc = kvp_cli_set_lengths(cmd, a.prompt, a.output, a.workload != NULL, &w)) >= 0)
		goto out;
	rc = 0;
	override_workload(&a, &w);
	struct kvp_size_demand d;
	if (kvp_size_demand(&w, m, &d, &err)) {
		/* lengths typed on the line are a usage error, a file's an input one */
		rc = a.workload ? kvp_cli_error(cmd, &err)
				: kvp_cli_usage_error(cmd, "--%s: %s", err.field, err.msg);
		goto out;
	}
	d.queue_percentile = a.queue_pct;
	if (a.npd > 1 && !(d.rate > 0)) {
		rc = kvp_cli_usage_error(cmd, "--disagg sizes against an arrival rate: give --rate "
					 "(or a workload with arrival_rate)");
		goto out;
	}
	struct kvp_size_opts so = {.budget = c.opts, .decode_bw_efficiency = a.decode_eff,
				   .prefill_flops_efficiency = a.prefill_eff,
				   .max_replicas = (uint32_t)a.max_replicas, .cost = a.cost,
				   .latency_spread = a.latency_spread >= 0 ? a.latency_spread : 0};
	const char *spread_from = a.latency_spread >= 0 ? "given" : "default";
	struct kvp_calibration cal = {0};
	if (a.calibration.n && (rc = calibrate(&a, names, ngpu, &so, &spread_from, &cal)))
		goto out;
	if ((rc = search_gpus(&a, names, ngpu, m, &d, &so, &space, gpus, cfg)))
		goto out;
	n = ngpu * per_gpu;
	/* points the engine cannot launch fail: several KV dtypes searched,
	 * those it has no name for; an ep it cannot take */
	if (a.has_emit)
		kvp_size_emit_filter(a.emit, m, a.kv_list, cfg, n);
	/* rank, --simulate, the front, the fewest GPUs, --pareto */
	struct kvp_size_choice ch;
	if (kvp_size_choose(m, gpus, &d, &so, &w, a.simulate, a.pareto_only, cfg, n, &ch, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	n = ch.n;
	size_t front = ch.front;
	const struct kvp_size_config *best = ch.best, *fewest = ch.fewest;
	/* the command must launch what was planned: a KV dtype the engine
	 * cannot hold is refused, not replaced by one the plan did not size */
	if (a.has_emit && kvp_size_emit_best_ok(a.emit, m, best, &err)) {
		rc = kvp_cli_usage_error(cmd, "--emit %s", err.msg);
		goto out;
	}
	bool prefix = w.prefix_tokens > 0 && w.prefix_fraction > 0;

	struct kvp_size_answer ans = {
		.m = m, .w = &w, .engine = c.opts.engine, .d = &d, .cost = &so.cost, .cfg = cfg, .n = n,
		.considered = per_gpu * ngpu, .front = front, .pareto_only = a.pareto_only,
		.disagg = a.npd > 1, .seqs_axis = a.nseqs > 0, .simulate = a.simulate > 0, .best = best, .fewest = fewest, .has_emit = a.has_emit,
		.prefix = prefix, .emit = a.emit, .latency_spread = so.latency_spread,
		.latency_spread_from = spread_from, .warn = &warn,
		.calibration = kvp_cli_calibration_label(&a.calibration, &cal),
		.calibration_kernel = kvp_cli_calibration_kernel(&cal)};
	/* a figure overflowed to infinity: said, nothing printed */
	if (kvp_size_check_finite(cfg, n, &err)) {
		fprintf(stderr, "kvplan size: %s; nothing printed\n", err.msg);
		rc = KVP_EXIT_INPUT;
		goto out;
	}
	if (c.format == KVP_FORMAT_TABLE) {
		kvp_size_print_table(&ans);
		if (a.calibration.n)
			printf("\nCalibration\n");
		kvp_cli_calibration_print(&a.calibration, &cal, "  ");
	} else if (!kvp_size_print_record(&ans, c.format)) {
		fprintf(stderr, "kvplan size: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	rc = best ? KVP_EXIT_OK : KVP_EXIT_FAIL;
out:
	for (size_t i = 0; i < ngpu; i++)
		free(names[i]);
	if (have_w)
		kvp_workload_free(&w);
	free(cfg);
	free(gpus);
	free(m);
	return rc;
}
