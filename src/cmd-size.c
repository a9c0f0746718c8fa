/* cmd-size.c: `kvplan size`: which GPUs, how many and split how, at what
 * cost, for a model and a workload.  Every GPU profile (or --gpus) at every
 * tensor-parallel size (or --tp) gets the fewest replicas that meet memory,
 * throughput and the service levels; the configurations are ranked by cost and
 * each rejected one says which constraint failed.  --emit prints the serving
 * engine's settings for the cheapest. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "disagg.h"
#include "size.h"
#include "units.h"

static const char *const cmd = "size";

enum {
	OPT_WORKLOAD = KVP_OPT_LAST + 1, OPT_GPUS, OPT_RATE, OPT_USERS, OPT_TTFT, OPT_TPOT,
	OPT_PERCENTILE, OPT_PRICE, OPT_MAX_REPLICAS, OPT_EMIT, OPT_DECODE_EFF, OPT_PREFILL_EFF,
	OPT_COST, OPT_YEARS, OPT_POWER_PRICE, OPT_PUE, OPT_COST_UTIL, OPT_KV_DTYPES, OPT_PARETO,
	OPT_SLO_PERCENTILE, OPT_LATENCY_SPREAD, OPT_DISAGG
};

#define MAX_GPUS 64
#define MAX_TPS 8
#define MAX_PRICES 32

static void help(void)
{
	printf("Usage: kvplan size --model NAME --workload NAME|PATH [--gpus all|LIST] [OPTIONS]\n\n"
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
	       "  --workload NAME|PATH      workload profile (kvplan-profiles(5)); required\n"
	       "  --gpus all|LIST           GPU profiles to consider (default all); --gpu NAME: one\n"
	       "  --tp LIST                 tensor-parallel sizes (default 1,2,4,8)\n"
	       "  --pp LIST, --dp LIST, --ep LIST, --kv-dtypes LIST\n"
	       "                            the other axes searched (default 1, 1, 1, --kv-dtype)\n"
	       "  --pareto                  only the Pareto front of $/Mtok, TPOT and TTFT\n"
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
	       "                            with --cost own (defaults 3, 0.10, 1.3, 1: assumptions)\n"
	       "  --max-replicas N          the most replicas tried (default 1024)\n"
	       "  --decode-bw-efficiency F, --prefill-flops-efficiency F   as in kvplan perf\n"
	       "  --emit vllm|sglang|trtllm the engine command for the cheapest configuration\n"
	       "                            (also plans with that engine unless --engine is given)\n\n"
	       "Example: kvplan size --model llama-3.1-70b --workload chat --rate 4 --ttft 1 \\\n"
	       "             --tpot 0.05 --gpus all --emit vllm\n",
	       kvp_cli_common_help);
}

static struct kvp_record *config_record(const struct kvp_size_config *c)
{
	struct kvp_record *x = kvp_record_new();
	char failed[128], never[128], risk[128];
	kvp_size_fail_format(c->risk, 0, risk, sizeof risk);
	kvp_size_fail_format(c->failed, c->never, failed, sizeof failed);
	kvp_size_fail_format(c->never, 0, never, sizeof never);
	bool ok = x && kvp_record_str(x, "gpu", c->gpu) && kvp_record_u64(x, "count", c->count) &&
		  kvp_record_u64(x, "tp", c->tp) && kvp_record_u64(x, "replicas", c->replicas) &&
		  kvp_record_bool(x, "meets", c->meets) && kvp_record_str(x, "failed", failed) &&
		  kvp_record_f64(x, "cost_per_hour", c->cost_per_hour) &&
		  kvp_record_f64(x, "cost_per_mtok", c->cost_per_mtok) &&
		  kvp_record_f64(x, "price_per_hour", c->price_per_hour) &&
		  kvp_record_f64(x, "rate_per_replica", c->rate) &&
		  kvp_record_f64(x, "concurrency", c->concurrency) &&
		  kvp_record_u64(x, "sequences", c->sequences) &&
		  kvp_record_f64(x, "prefill_s", c->prefill_s) &&
		  kvp_record_f64(x, "prefill_utilization", c->prefill_utilization) &&
		  kvp_record_f64(x, "queue_s", c->queue_s) &&
		  kvp_record_f64(x, "ttft_s", c->ttft_s) && kvp_record_f64(x, "tpot_s", c->tpot_s) &&
		  kvp_record_str(x, "bound", kvp_perf_bound_name(c->bound)) &&
		  kvp_record_f64(x, "tokens_per_s", c->tokens_per_s) &&
		  kvp_record_u64(x, "weights_bytes", c->weights_bytes) &&
		  kvp_record_u64(x, "kv_pool_bytes", c->kv_pool_bytes) &&
		  kvp_record_u64(x, "kv_bytes_needed", c->kv_bytes_needed) &&
		  kvp_record_u64(x, "max_sequences", c->max_sequences) &&
		  kvp_record_u64(x, "max_num_seqs", c->max_num_seqs) &&
		  kvp_record_f64(x, "utilization", c->utilization) &&
		  kvp_record_str(x, "never", never) &&
		  kvp_record_f64(x, "floor_ttft_s", c->floor_ttft_s) &&
		  kvp_record_f64(x, "floor_tpot_s", c->floor_tpot_s) &&
		  kvp_record_str(x, "cost_basis", c->basis) &&
		  kvp_record_f64(x, "cloud_price_per_hour", c->cloud_gpu_hour) &&
		  kvp_record_f64(x, "own_price_per_hour", c->own_gpu_hour) &&
		  kvp_record_u64(x, "pp", c->pp) && kvp_record_u64(x, "dp", c->dp) &&
		  kvp_record_u64(x, "ep", c->ep) &&
		  kvp_record_str(x, "kv_dtype", kvp_dtype_name(c->kv_dtype)) &&
		  kvp_record_bool(x, "pareto", c->pareto) &&
		  kvp_record_f64(x, "queue_p_s", c->queue_p_s) &&
		  kvp_record_u64(x, "disagg_p", c->disagg_p) && kvp_record_u64(x, "disagg_d", c->disagg_d) &&
		  kvp_record_f64(x, "transfer_s", c->transfer_s) &&
		  kvp_record_str(x, "risk", risk) &&
		  kvp_record_str(x, "verdict", c->meets ? "meets" : c->at_risk ? "meets at risk" : "fails") &&
		  kvp_record_f64(x, "miss_ttft_s", c->miss_ttft_s) &&
		  kvp_record_f64(x, "miss_tpot_s", c->miss_tpot_s) &&
		  kvp_record_u64(x, "miss_sequences", c->miss_sequences);
	if (!ok) {
		kvp_record_free(x);
		return NULL;
	}
	return x;
}

static void fmt_s(double s, char *buf, size_t size)
{
	if (!isfinite(s))
		snprintf(buf, size, "-");
	else if (s >= 1)
		kvp_format_fixed(s, 2, " s", buf, size); /* never cut */
	else
		snprintf(buf, size, "%.1f ms", s * 1e3);
}

static void fmt_money(double v, char *buf, size_t size)
{
	if (isnan(v))
		snprintf(buf, size, "?");
	else
		kvp_format_fixed(v, 2, "", buf, size); /* a price of 1e61: never cut */
}

/* The service levels a configuration misses at any replica count, and why:
 * an idle replica (one sequence, no queue) is as fast as it gets. */
static void print_never(const struct kvp_size_config *cfg, size_t n, const struct kvp_size_demand *d)
{
	bool head = false;
	for (size_t i = 0; i < n; i++) {
		const struct kvp_size_config *x = &cfg[i];
		unsigned slo = x->never & (KVP_SIZE_FAIL_TTFT | KVP_SIZE_FAIL_TPOT);
		if (!slo || (x->never & KVP_SIZE_FAIL_FIXED))
			continue;
		if (!head)
			printf("\nNot met at any replica count (an idle replica: one sequence, no queue):\n");
		head = true;
		char a[64], b[64];
		if (slo & KVP_SIZE_FAIL_TPOT) {
			fmt_s(x->floor_tpot_s, a, sizeof a);
			fmt_s(d->slo_tpot_s, b, sizeof b);
			printf("  %s tp %u: tpot: each decode step takes at least %s > %s\n", x->gpu, x->tp, a, b);
		}
		if (slo & KVP_SIZE_FAIL_TTFT) {
			fmt_s(x->floor_ttft_s, a, sizeof a);
			fmt_s(d->slo_ttft_s, b, sizeof b);
			printf("  %s tp %u: ttft: the p%g prompt's prefill alone takes %s > %s\n", x->gpu, x->tp,
			       d->percentile, a, b);
		}
	}
}

#define NEAREST 3

/* The configurations nearest to meeting: at risk first, then the smallest
 * distance, the sum of what each level is missed by relative to the level
 * (sequences relative to what the pool holds; an unbounded queue far), rank
 * order among equals; leaving out those that fail a constraint no replica
 * count or level moves (split, weights, context, kv_dtype). */
static double distance(const struct kvp_size_config *c, const struct kvp_size_demand *d)
{
	if (c->at_risk)
		return 0;
	if (c->failed & KVP_SIZE_FAIL_THROUGHPUT)
		return INFINITY;
	double x = 0;
	if (d->slo_ttft_s > 0)
		x += c->miss_ttft_s / d->slo_ttft_s;
	if (d->slo_tpot_s > 0)
		x += c->miss_tpot_s / d->slo_tpot_s;
	if (c->max_sequences)
		x += (double)c->miss_sequences / (double)c->max_sequences;
	else if (c->miss_sequences)
		x = INFINITY;
	return x;
}

static size_t nearest(const struct kvp_size_config *cfg, size_t n, const struct kvp_size_demand *d,
		      size_t *idx)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (cfg[i].meets || (cfg[i].failed & KVP_SIZE_FAIL_FIXED))
			continue;
		double x = distance(&cfg[i], d);
		/* insert, keeping the NEAREST smallest in order (earlier rank wins ties) */
		size_t at = k;
		while (at > 0 && distance(&cfg[idx[at - 1]], d) > x)
			at--;
		if (at >= NEAREST)
			continue;
		if (k < NEAREST)
			k++;
		for (size_t j = k - 1; j > at; j--)
			idx[j] = idx[j - 1];
		idx[at] = i;
	}
	return k;
}

/* One line of what c misses, and by how much. */
static void print_misses(const struct kvp_size_config *c, const struct kvp_size_demand *d,
			 double spread)
{
	char a[64], b[64], e[64];
	printf("  %u x %s (tp %u, pp %u, dp %u, %u replica%s):", c->count, c->gpu, c->tp, c->pp, c->dp,
	       c->replicas, c->replicas == 1 ? "" : "s");
	if (c->at_risk) {
		char r[128];
		kvp_size_fail_format(c->risk, 0, r, sizeof r);
		printf(" meets at the central estimate; at risk: %s", r);
		if (c->risk & KVP_SIZE_FAIL_TPOT) {
			fmt_s(c->tpot_s * (1 + spread), a, sizeof a);
			fmt_s(d->slo_tpot_s, b, sizeof b);
			printf(" (tpot x %.2f = %s > %s)", 1 + spread, a, b);
		}
		if (c->risk & KVP_SIZE_FAIL_TTFT) {
			fmt_s(c->ttft_s * (1 + spread), a, sizeof a);
			fmt_s(d->slo_ttft_s, b, sizeof b);
			printf(" (ttft x %.2f = %s > %s)", 1 + spread, a, b);
		}
		printf("\n");
		return;
	}
	const char *sep = " ";
	if (c->failed & KVP_SIZE_FAIL_TPOT) {
		fmt_s(c->tpot_s, a, sizeof a);
		fmt_s(c->miss_tpot_s, b, sizeof b);
		fmt_s(d->slo_tpot_s, e, sizeof e);
		printf("%stpot %s, %s over %s", sep, a, b, e);
		if (c->never & KVP_SIZE_FAIL_TPOT) {
			fmt_s(c->floor_tpot_s, a, sizeof a);
			printf(" (at any count: one sequence's step is %s)", a);
		}
		sep = "; ";
	}
	if (c->failed & KVP_SIZE_FAIL_TTFT) {
		fmt_s(c->ttft_s, a, sizeof a);
		fmt_s(c->miss_ttft_s, b, sizeof b);
		fmt_s(d->slo_ttft_s, e, sizeof e);
		printf("%sttft %s, %s over %s", sep, a, b, e);
		if (c->never & KVP_SIZE_FAIL_TTFT) {
			fmt_s(c->floor_ttft_s, a, sizeof a);
			printf(" (at any count: the prefill alone is %s)", a);
		}
		sep = "; ";
	}
	if (c->failed & KVP_SIZE_FAIL_MEMORY) {
		printf("%smemory: %llu sequences in flight, %llu fit (%llu over)", sep,
		       (unsigned long long)c->sequences, (unsigned long long)c->max_sequences,
		       (unsigned long long)c->miss_sequences);
		sep = "; ";
	}
	if (c->failed & KVP_SIZE_FAIL_THROUGHPUT)
		printf("%sthroughput: the queue grows without bound at this count (prefill utilization "
		       "%.2f)", sep, c->prefill_utilization);
	printf("\n");
}

/* Say what the prices are, and warn when kinds are mixed in one ranking. */
static void print_basis(const struct kvp_size_config *cfg, size_t n, const struct kvp_size_cost *cost)
{
	if (cost->basis == KVP_SIZE_BASIS_OWN) {
		printf("\nCost basis: owned, purchase over %g years at %g%% use + TDP x PUE %g at "
		       "$%g/kWh (--cost own)\n",
		       cost->years > 0 ? cost->years : KVP_SIZE_OWN_YEARS,
		       100 * (cost->utilization > 0 ? cost->utilization : 1),
		       cost->pue > 0 ? cost->pue : KVP_SIZE_OWN_PUE,
		       cost->power_usd_per_kwh > 0 ? cost->power_usd_per_kwh
						   : KVP_SIZE_OWN_POWER_USD_PER_KWH);
		return;
	}
	if (cost->kind[0]) {
		printf("\nCost basis: cloud %s prices only (--cost cloud:%s); others are '?'\n",
		       cost->kind, cost->kind);
		return;
	}
	char seen[8][16];
	size_t ns = 0;
	for (size_t i = 0; i < n; i++) {
		if (!(cfg[i].price_per_hour > 0))
			continue;
		bool dup = false;
		for (size_t k = 0; k < ns && !dup; k++)
			dup = strcmp(seen[k], cfg[i].basis) == 0;
		if (!dup && ns < 8)
			snprintf(seen[ns++], sizeof seen[0], "%s", cfg[i].basis);
	}
	if (ns > 1) {
		printf("\nCost basis: cloud prices of %zu kinds ranked together (", ns);
		for (size_t k = 0; k < ns; k++)
			printf("%s%s", k ? ", " : "", seen[k]);
		printf("; the basis column says which);\ncompare within one kind with "
		       "--cost cloud:KIND, or owned GPUs with --cost own\n");
	}
}

struct price {
	char gpu[KVP_NAME_MAX];
	double usd;
};

int kvp_cmd_size(int argc, char **argv)
{
	static const struct option longopts[] = {
		KVP_CLI_COMMON_OPTIONS,
		{"workload", required_argument, NULL, OPT_WORKLOAD},
		{"gpus", required_argument, NULL, OPT_GPUS},
		{"rate", required_argument, NULL, OPT_RATE},
		{"users", required_argument, NULL, OPT_USERS},
		{"ttft", required_argument, NULL, OPT_TTFT},
		{"tpot", required_argument, NULL, OPT_TPOT},
		{"percentile", required_argument, NULL, OPT_PERCENTILE},
		{"price", required_argument, NULL, OPT_PRICE},
		{"max-replicas", required_argument, NULL, OPT_MAX_REPLICAS},
		{"emit", required_argument, NULL, OPT_EMIT},
		{"decode-bw-efficiency", required_argument, NULL, OPT_DECODE_EFF},
		{"prefill-flops-efficiency", required_argument, NULL, OPT_PREFILL_EFF},
		{"cost", required_argument, NULL, OPT_COST},
		{"years", required_argument, NULL, OPT_YEARS},
		{"power-price", required_argument, NULL, OPT_POWER_PRICE},
		{"pue", required_argument, NULL, OPT_PUE},
		{"cost-utilization", required_argument, NULL, OPT_COST_UTIL},
		{"kv-dtypes", required_argument, NULL, OPT_KV_DTYPES},
		{"pareto", no_argument, NULL, OPT_PARETO},
		{"slo-percentile", required_argument, NULL, OPT_SLO_PERCENTILE},
		{"latency-spread", required_argument, NULL, OPT_LATENCY_SPREAD},
		{"disagg", required_argument, NULL, OPT_DISAGG},
		{NULL, 0, NULL, 0}
	};
	struct kvp_cli_common c;
	kvp_cli_common_init(&c);
	const char *workload = NULL, *gpus_arg = NULL;
	uint64_t tps[MAX_TPS] = {1, 2, 4, 8}, users = 0, max_replicas = 0;
	size_t ntp = 4, nprice = 0;
	/* the other axes of the search: one value each unless listed */
	uint64_t pps[MAX_TPS] = {1}, dps[MAX_TPS] = {1}, eps[MAX_TPS] = {1};
	size_t npp = 1, ndp = 1, nep = 1, nkv = 1;
	enum kvp_dtype kvs[MAX_TPS] = {KVP_DTYPE_AUTO};
	bool kv_list = false, pareto_only = false, queue_pct = false;
	double latency_spread = 0;
	uint32_t pd[MAX_TPS + 1][2] = {{0, 0}}; /* colocated first */
	size_t npd = 1;
	struct price prices[MAX_PRICES];
	bool priced[MAX_PRICES] = {false};
	double rate = -1, ttft = -1, tpot = -1, percentile = -1, decode_eff = 0, prefill_eff = 0;
	bool engine_given = false, has_emit = false;
	struct kvp_size_cost cost = {0};
	bool own_opt = false;
	enum kvp_engine emit = KVP_ENGINE_GENERIC;
	int opt, rc;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		double *dp = NULL;
		const char *name = NULL;
		switch (opt) {
		case 'h': c.help = true; continue;
		case OPT_WORKLOAD: workload = optarg; continue;
		case OPT_GPUS: gpus_arg = optarg; continue;
		case KVP_OPT_TP:
			if (!kvp_cli_token_list(cmd, "--tp", optarg, tps, MAX_TPS, &ntp))
				return KVP_EXIT_USAGE;
			for (size_t i = 0; i < ntp; i++)
				if (tps[i] > 1024)
					return kvp_cli_usage_error(cmd, "--tp: %llu GPUs is more than kvplan plans for",
								   (unsigned long long)tps[i]);
			continue;
		case KVP_OPT_PP:
		case KVP_OPT_DP:
		case KVP_OPT_EP: {
			const char *nm = opt == KVP_OPT_PP ? "--pp" : opt == KVP_OPT_DP ? "--dp" : "--ep";
			uint64_t *to = opt == KVP_OPT_PP ? pps : opt == KVP_OPT_DP ? dps : eps;
			size_t *nto = opt == KVP_OPT_PP ? &npp : opt == KVP_OPT_DP ? &ndp : &nep;
			if (!kvp_cli_token_list(cmd, nm, optarg, to, MAX_TPS, nto))
				return KVP_EXIT_USAGE;
			for (size_t i = 0; i < *nto; i++)
				if (to[i] < 1 || to[i] > 1024)
					return kvp_cli_usage_error(cmd, "%s: expected 1 to 1024 GPUs, got %llu", nm,
								   (unsigned long long)to[i]);
			continue;
		}
		case OPT_KV_DTYPES: {
			char buf[256];
			snprintf(buf, sizeof buf, "%s", optarg);
			nkv = 0;
			for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				char tt[KVP_TERM_SIZE(64)];
				if (nkv == MAX_TPS)
					return kvp_cli_usage_error(cmd, "--kv-dtypes: at most %d", MAX_TPS);
				if (!kvp_dtype_parse(t, &kvs[nkv]))
					return kvp_cli_usage_error(cmd, "--kv-dtypes: unknown dtype '%s'",
								   kvp_term_text(tt, sizeof tt, t));
				nkv++;
			}
			if (!nkv)
				return kvp_cli_usage_error(cmd, "--kv-dtypes: expected a list such as auto,fp8");
			kv_list = true;
			continue;
		}
		case OPT_PARETO: pareto_only = true; continue;
		case OPT_DISAGG: {
			char buf[256];
			snprintf(buf, sizeof buf, "%s", optarg);
			npd = 1;
			for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
				struct kvp_error e = {0};
				char tt[KVP_TERM_SIZE(64)];
				if (npd == MAX_TPS + 1)
					return kvp_cli_usage_error(cmd, "--disagg: at most %d P:D pairs", MAX_TPS);
				if (kvp_disagg_parse_counts(t, &pd[npd][0], &pd[npd][1], &e) ||
				    pd[npd][0] > 64 || pd[npd][1] > 64)
					return kvp_cli_usage_error(cmd, "--disagg: expected P:D pairs of 1 to 64 "
								   "instances such as 1:2,1:3, got '%s'",
								   kvp_term_text(tt, sizeof tt, t));
				npd++;
			}
			if (npd == 1)
				return kvp_cli_usage_error(cmd, "--disagg: expected P:D pairs such as 1:2");
			continue;
		}
		case OPT_LATENCY_SPREAD:
			if (kvp_parse_double(optarg, &latency_spread) || !(latency_spread >= 0) ||
			    latency_spread > 10) {
				char t[KVP_TERM_SIZE(64)];
				return kvp_cli_usage_error(cmd, "--latency-spread: expected a fraction from 0 "
							   "to 10 such as 0.1, got '%s'",
							   kvp_term_text(t, sizeof t, optarg));
			}
			continue;
		case OPT_SLO_PERCENTILE:
			if (strcmp(optarg, "p50") && strcmp(optarg, "p90") && strcmp(optarg, "p99")) {
				char t[KVP_TERM_SIZE(64)];
				return kvp_cli_usage_error(cmd, "--slo-percentile: expected p50, p90 or p99, got '%s'",
							   kvp_term_text(t, sizeof t, optarg));
			}
			percentile = atof(optarg + 1);
			queue_pct = true;
			continue;
		case KVP_OPT_ENGINE: engine_given = true; break;
		case OPT_USERS:
			if (!kvp_cli_u64(cmd, "--users", optarg, 1, &users))
				return KVP_EXIT_USAGE;
			continue;
		case OPT_MAX_REPLICAS:
			if (!kvp_cli_u64(cmd, "--max-replicas", optarg, 1, &max_replicas))
				return KVP_EXIT_USAGE;
			if (max_replicas > 1u << 20)
				return kvp_cli_usage_error(cmd, "--max-replicas: %s is too many", optarg);
			continue;
		case OPT_RATE: dp = &rate; name = "--rate"; break;
		case OPT_TTFT: dp = &ttft; name = "--ttft"; break;
		case OPT_TPOT: dp = &tpot; name = "--tpot"; break;
		case OPT_PERCENTILE: dp = &percentile; name = "--percentile"; break;
		case OPT_DECODE_EFF:
		case OPT_PREFILL_EFF: {
			double *d = opt == OPT_DECODE_EFF ? &decode_eff : &prefill_eff;
			if (kvp_parse_fraction(optarg, d))
				return kvp_cli_usage_error(cmd, "--%s: expected a fraction in (0, 1], got '%s'",
							   opt == OPT_DECODE_EFF ? "decode-bw-efficiency"
										 : "prefill-flops-efficiency", optarg);
			continue;
		}
		case OPT_PRICE: {
			const char *eq = strchr(optarg, '=');
			if (nprice == MAX_PRICES)
				return kvp_cli_usage_error(cmd, "--price: at most %d", MAX_PRICES);
			if (!eq || eq == optarg || (size_t)(eq - optarg) >= KVP_NAME_MAX ||
			    kvp_parse_double(eq + 1, &prices[nprice].usd) || !(prices[nprice].usd > 0) ||
			    !isfinite(prices[nprice].usd))
				return kvp_cli_usage_error(cmd, "--price: expected GPU=USD, a positive price "
							   "such as h100-sxm=2.5, got '%s'", optarg);
			memcpy(prices[nprice].gpu, optarg, (size_t)(eq - optarg));
			prices[nprice].gpu[eq - optarg] = 0;
			nprice++;
			continue;
		}
		case OPT_COST:
			if (strcmp(optarg, "own") == 0) {
				cost.basis = KVP_SIZE_BASIS_OWN;
			} else if (strcmp(optarg, "cloud") == 0) {
				cost.basis = KVP_SIZE_BASIS_CLOUD;
			} else if (strncmp(optarg, "cloud:", 6) == 0 &&
				   (!strcmp(optarg + 6, "on-demand") || !strcmp(optarg + 6, "reserved-1y") ||
				    !strcmp(optarg + 6, "reserved-3y") || !strcmp(optarg + 6, "spot") ||
				    !strcmp(optarg + 6, "serverless"))) {
				cost.basis = KVP_SIZE_BASIS_CLOUD;
				snprintf(cost.kind, sizeof cost.kind, "%s", optarg + 6);
			} else {
				char t[KVP_TERM_SIZE(64)];
				return kvp_cli_usage_error(cmd, "--cost: expected cloud, cloud:KIND (on-demand, "
							   "reserved-1y, reserved-3y, spot, serverless) or own, got '%s'",
							   kvp_term_text(t, sizeof t, optarg));
			}
			continue;
		case OPT_YEARS:
		case OPT_POWER_PRICE:
		case OPT_PUE:
		case OPT_COST_UTIL: {
			static const char *const names[] = {"--years", "--power-price", "--pue",
							    "--cost-utilization"};
			int i = opt - OPT_YEARS;
			double v;
			double *to[] = {&cost.years, &cost.power_usd_per_kwh, &cost.pue, &cost.utilization};
			bool bad = kvp_parse_double(optarg, &v) || !(v > 0) || !isfinite(v) ||
				   (opt == OPT_PUE && v < 1) || (opt == OPT_COST_UTIL && v > 1);
			if (bad) {
				char t[KVP_TERM_SIZE(64)];
				return kvp_cli_usage_error(cmd, "%s: expected %s, got '%s'", names[i],
							   opt == OPT_PUE ? "a number of at least 1"
							   : opt == OPT_COST_UTIL ? "a fraction in (0, 1]"
										: "a positive number",
							   kvp_term_text(t, sizeof t, optarg));
			}
			*to[i] = v;
			own_opt = true;
			continue;
		}
		case OPT_EMIT:
			if (!kvp_engine_parse(optarg, &emit) || emit == KVP_ENGINE_GENERIC)
				return kvp_cli_usage_error(cmd, "--emit: expected vllm, sglang or trtllm, got '%s'",
							   optarg);
			has_emit = true;
			continue;
		case '?':
		case ':':
			return kvp_cli_bad_option(cmd, argv[optind - 1], longopts);
		}
		if (dp) {
			if (kvp_parse_double(optarg, dp) || (opt != OPT_PERCENTILE && !(*dp > 0)) ||
			    (opt == OPT_PERCENTILE && (*dp <= 0 || *dp >= 100)))
				return kvp_cli_usage_error(cmd, "%s: expected a positive number%s, got '%s'", name,
							   opt == OPT_PERCENTILE ? " below 100" : "", optarg);
			continue;
		}
		rc = kvp_cli_common_option(&c, cmd, opt, optarg);
		if (rc)
			return rc == 1 ? kvp_cli_usage_error(cmd, "unexpected option") : rc;
	}
	if (c.help) {
		help();
		return KVP_EXIT_OK;
	}
	if (optind < argc)
		return kvp_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (!workload)
		return kvp_cli_usage_error(cmd, "--workload is required");
	if (gpus_arg && c.gpu)
		return kvp_cli_usage_error(cmd, "give --gpus or --gpu, not both");
	if (own_opt && cost.basis != KVP_SIZE_BASIS_OWN)
		return kvp_cli_usage_error(cmd, "--years, --power-price, --pue and --cost-utilization "
					   "price owned GPUs: give --cost own");
	if (has_emit && !engine_given)
		c.opts.engine = emit;

	/* the GPU names */
	char *names[MAX_GPUS];
	size_t ngpu = 0;
	if (c.gpu) {
		names[ngpu++] = strdup(c.gpu);
	} else if (!gpus_arg || strcmp(gpus_arg, "all") == 0) {
		ngpu = kvp_profile_list("gpus", names, MAX_GPUS);
	} else {
		char buf[2048];
		snprintf(buf, sizeof buf, "%s", gpus_arg);
		for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && ngpu < MAX_GPUS;
		     t = strtok_r(NULL, ",", &save))
			names[ngpu++] = strdup(t);
	}
	struct kvp_model *m = malloc(sizeof *m);
	uint32_t tp32[MAX_TPS], pp32[MAX_TPS], dp32[MAX_TPS], ep32[MAX_TPS];
	for (size_t i = 0; i < MAX_TPS; i++) {
		tp32[i] = (uint32_t)tps[i];
		pp32[i] = (uint32_t)pps[i];
		dp32[i] = (uint32_t)dps[i];
		ep32[i] = (uint32_t)eps[i];
	}
	if (!kv_list)
		kvs[0] = c.opts.kv_dtype; /* --kv-dtype, or the default */
	struct kvp_size_space space = {tp32, pp32, dp32, ep32, ntp, npp, ndp, nep, kvs, nkv,
				       npd > 1 ? (const uint32_t(*)[2])pd : NULL, npd};
	size_t per_gpu = kvp_size_space_points(&space);
	struct kvp_size_config *cfg = calloc(ngpu * per_gpu + 1, sizeof *cfg);
	struct kvp_record *top = NULL;
	struct kvp_record **recs = calloc(ngpu * per_gpu + 1, sizeof *recs);
	struct kvp_workload w;
	bool have_w = false;
	struct kvp_error err = {0};
	size_t n = 0;
	memset(&w, 0, sizeof w);
	if (!m || !cfg || !recs) {
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
	if (kvp_workload_load(workload, &w, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	have_w = true;
	if (rate > 0)
		w.arrival_rate = rate;
	if (users)
		w.concurrent_users = users;
	if (ttft > 0)
		w.slo_ttft_s = ttft;
	if (tpot > 0)
		w.slo_tpot_s = tpot;
	if (percentile > 0)
		w.slo_percentile = percentile;
	struct kvp_size_demand d;
	if (kvp_size_demand(&w, m, &d, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	d.queue_percentile = queue_pct;
	if (npd > 1 && !(d.rate > 0)) {
		rc = kvp_cli_usage_error(cmd, "--disagg sizes against an arrival rate: give --rate "
					 "(or a workload with arrival_rate)");
		goto out;
	}
	struct kvp_size_opts so = {.budget = c.opts, .decode_bw_efficiency = decode_eff,
				   .prefill_flops_efficiency = prefill_eff,
				   .max_replicas = (uint32_t)max_replicas, .cost = cost,
				   .latency_spread = latency_spread};
	for (size_t i = 0; i < ngpu; i++) {
		struct kvp_gpu g;
		if (kvp_gpu_load(names[i], &g, &err)) {
			rc = kvp_cli_error(cmd, &err);
			goto out;
		}
		for (size_t k = 0; k < nprice; k++)
			if (strcmp(prices[k].gpu, names[i]) == 0 || strcmp(prices[k].gpu, g.name) == 0) {
				g.price_per_hour = prices[k].usd;
				snprintf(g.price_kind, sizeof g.price_kind, "given");
				priced[k] = true;
			}
		if (kvp_size_search_space(m, &g, &d, &so, &space, &cfg[n], &err)) {
			rc = kvp_cli_error(cmd, &err);
			goto out;
		}
		n += per_gpu;
	}
	for (size_t k = 0; k < nprice; k++)
		if (!priced[k]) {
			rc = kvp_cli_usage_error(cmd, "--price: '%s' is not among the GPUs considered",
						 prices[k].gpu);
			goto out;
		}
	/* searching several KV dtypes for one engine: those it cannot launch
	 * fail kv_dtype (a single --kv-dtype it lacks is refused below) */
	if (has_emit && kv_list)
		for (size_t i = 0; i < n; i++)
			if (!(cfg[i].failed & KVP_SIZE_FAIL_SPLIT) && !kvp_size_kv_name(emit, m, cfg[i].kv_dtype)) {
				cfg[i].failed |= KVP_SIZE_FAIL_KV_DTYPE;
				cfg[i].never |= KVP_SIZE_FAIL_KV_DTYPE;
				cfg[i].meets = cfg[i].at_risk = false;
			}
	kvp_size_rank(cfg, n);
	size_t front = kvp_size_pareto(cfg, n);
	const struct kvp_size_config *best = n && cfg[0].meets ? &cfg[0] : NULL;
	/* the fewest GPUs of any configuration that meets every constraint */
	struct kvp_size_config fewest_c;
	const struct kvp_size_config *fewest = NULL;
	for (size_t i = 0; i < n; i++)
		if (cfg[i].meets && (!fewest || cfg[i].count < fewest->count))
			fewest = &cfg[i];
	if (fewest) {
		fewest_c = *fewest; /* the front below may drop it */
		fewest = &fewest_c;
	}
	if (pareto_only) {
		/* the front only, still in rank order */
		size_t k = 0;
		for (size_t i = 0; i < n; i++)
			if (cfg[i].pareto)
				cfg[k++] = cfg[i];
		n = k;
		/* the cheapest that meets was ranked first, and is on the front
		 * unless an equal one is (a tie stays on it too) */
		best = n && cfg[0].meets ? &cfg[0] : NULL;
	}
	/* the command must launch what was planned: a KV dtype the engine
	 * cannot hold is refused, not replaced by one the plan did not size */
	if (best && has_emit && !kvp_size_kv_name(emit, m, best->kv_dtype)) {
		rc = kvp_cli_usage_error(cmd, "--emit %s: %s has no KV cache dtype %s, which the plan "
					 "sizes; plan with a KV dtype it has (--kv-dtype auto or fp8)",
					 kvp_engine_name(emit), kvp_engine_name(emit),
					 kvp_dtype_name(best->kv_dtype));
		goto out;
	}
	bool prefix = w.prefix_tokens > 0 && w.prefix_fraction > 0;

	if (c.format == KVP_FORMAT_TABLE) {
		char t1[64], t2[64], t3[64];
		char mn[KVP_TERM_SIZE(sizeof m->name)], wn[KVP_TERM_SIZE(sizeof w.name)];
		printf("kvplan size: %s for workload %s, engine %s\n\n",
		       kvp_term_text(mn, sizeof mn, m->name), kvp_term_text(wn, sizeof wn, w.name),
		       kvp_engine_name(c.opts.engine));
		printf("Demand (%d requests drawn from the workload)\n", 65536);
		if (d.rate > 0)
			printf("  arrival rate %.3g requests/s\n", d.rate);
		else if (d.users)
			printf("  %llu concurrent users, one request each at a time\n",
			       (unsigned long long)d.users);
		else
			printf("  no rate or users: one request at a time\n");
		kvp_format_u64(d.prompt_p, t1, sizeof t1);
		printf("  prompt mean %.1f tokens (p%g %s), output mean %.1f tokens\n", d.prompt_mean,
		       d.percentile, t1, d.output_mean);
		kvp_format_u64(d.mean_context, t1, sizeof t1);
		kvp_format_u64(d.max_model_len, t2, sizeof t2);
		printf("  a decoding sequence holds %s tokens on average; max_model_len %s\n", t1, t2);
		fmt_s(d.slo_ttft_s, t1, sizeof t1);
		fmt_s(d.slo_tpot_s, t2, sizeof t2);
		printf("  service levels: TTFT %s at p%g, TPOT %s\n\n", d.slo_ttft_s > 0 ? t1 : "none",
		       d.percentile, d.slo_tpot_s > 0 ? t2 : "none");
		printf("Per replica: rate / R; Little's law C = rate x (TTFT + output x TPOT);\n"
		       "TPOT = decode step of C sequences / (1 - prefill utilization)\n");
		if (d.queue_percentile)
			printf("TTFT at p%g = prefill of the p%g prompt + the p%g wait, P(W > t) = rho "
			       "exp(-t rho / W_q)\n", d.percentile, d.percentile, d.percentile);
		else
			printf("TTFT at p%g = prefill of the p%g prompt + the mean wait W_q\n", d.percentile,
			       d.percentile);
		printf("\n");
		struct kvp_record **tab = calloc(n ? n : 1, sizeof *tab);
		for (size_t i = 0; tab && i < n; i++) {
			const struct kvp_size_config *x = &cfg[i];
			struct kvp_record *r = tab[i] = kvp_record_new();
			if (!r)
				break;
			kvp_record_u64(r, "rank", i + 1);
			kvp_record_str(r, "gpu", x->gpu);
			kvp_record_u64(r, "tp", x->tp);
			kvp_record_u64(r, "pp", x->pp);
			kvp_record_u64(r, "dp", x->dp);
			kvp_record_u64(r, "ep", x->ep);
			kvp_record_str(r, "kv", x->failed & KVP_SIZE_FAIL_SPLIT ? "-" : kvp_dtype_name(x->kv_dtype));
			if (npd > 1) {
				if (x->disagg_p)
					snprintf(t1, sizeof t1, "%u:%u", x->disagg_p, x->disagg_d);
				else
					snprintf(t1, sizeof t1, "colo");
				kvp_record_str(r, "P:D", t1);
			}
			kvp_record_u64(r, "replicas", x->replicas);
			kvp_record_u64(r, "gpus", x->count);
			fmt_money(x->cost_per_hour, t1, sizeof t1);
			kvp_record_str(r, "$/hour", t1);
			fmt_money(x->cost_per_mtok, t1, sizeof t1);
			kvp_record_str(r, "$/Mtok", t1);
			kvp_record_str(r, "basis", x->basis);
			kvp_format_fixed(x->concurrency, 1, "", t1, sizeof t1);
			unsigned unsized = KVP_SIZE_FAIL_SPLIT | KVP_SIZE_FAIL_KV_DTYPE;
			kvp_record_str(r, "C", x->failed & (unsized | KVP_SIZE_FAIL_THROUGHPUT) ? "-" : t1);
			fmt_s(x->ttft_s, t1, sizeof t1);
			kvp_record_str(r, "ttft", x->failed & unsized ? "-" : t1);
			fmt_s(x->tpot_s, t1, sizeof t1);
			kvp_record_str(r, "tpot", x->failed & unsized ? "-" : t1);
			kvp_size_fail_format(x->failed ? x->failed : x->risk, x->never, t3, sizeof t3);
			kvp_record_str(r, "meets", x->meets ? "yes" : x->at_risk ? "at risk" : "no");
			kvp_record_str(r, "front", x->pareto ? "*" : "");
			kvp_record_str(r, "failed", t3);
		}
		if (tab) {
			kvp_write_table(stdout, tab, n);
			for (size_t i = 0; i < n; i++)
				kvp_record_free(tab[i]);
			free(tab);
		}
		printf("\nfront *: on the Pareto front of $/Mtok, TPOT and TTFT (%zu of the %zu "
		       "configurations%s)\n", front, per_gpu * ngpu, pareto_only ? "; only these shown" : "");
		if (fewest)
			printf("Fewest GPUs that meet every constraint: %u (%s, tp %u, pp %u, dp %u, %u "
			       "replica%s)\n", fewest->count, fewest->gpu, fewest->tp, fewest->pp, fewest->dp,
			       fewest->replicas, fewest->replicas == 1 ? "" : "s");
		print_never(cfg, n, &d);
		print_basis(cfg, n, &so.cost);
		if (best) {
			fmt_money(best->cost_per_hour, t1, sizeof t1);
			fmt_money(best->cost_per_mtok, t2, sizeof t2);
			printf("\nCheapest: %u x %s (tp %u, %u replica%s) at $%s/hour, $%s per million "
			       "output tokens (%s)\n", best->count, best->gpu, best->tp, best->replicas,
			       best->replicas == 1 ? "" : "s", t1, t2, best->basis);
			kvp_format_bytes(best->kv_bytes_needed, t1, sizeof t1);
			kvp_format_bytes(best->kv_pool_bytes, t2, sizeof t2);
			printf("  each replica holds %.1f sequences in flight: %s of KV of a %s pool per GPU\n",
			       best->concurrency, t1, t2);
			if (has_emit) {
				printf("\n");
				kvp_size_emit(stdout, emit, m, best, prefix);
			}
		} else {
			size_t idx[NEAREST], k = nearest(cfg, n, &d, idx);
			bool risky = false;
			for (size_t i = 0; i < n; i++)
				risky |= cfg[i].at_risk;
			printf("\nNo configuration meets every constraint%s.\n",
			       risky ? " at the conservative end" : "");
			if (k)
				printf("Nearest, and what each misses by:\n");
			for (size_t i = 0; i < k; i++)
				print_misses(&cfg[idx[i]], &d, latency_spread);
		}
	} else if (c.format == KVP_FORMAT_CSV) {
		for (size_t i = 0; i < n; i++)
			if (!(recs[i] = config_record(&cfg[i]))) {
				fprintf(stderr, "kvplan size: out of memory\n");
				rc = KVP_EXIT_FAIL;
				goto out;
			}
		kvp_write_csv(stdout, recs, n);
	} else {
		top = kvp_record_new();
		bool ok = top && kvp_record_str(top, "model", m->name) &&
			  kvp_record_str(top, "workload", w.name) &&
			  kvp_record_str(top, "engine", kvp_engine_name(c.opts.engine)) &&
			  kvp_record_f64(top, "rate", d.rate) && kvp_record_u64(top, "users", d.users) &&
			  kvp_record_f64(top, "prompt_mean", d.prompt_mean) &&
			  kvp_record_f64(top, "output_mean", d.output_mean) &&
			  kvp_record_f64(top, "percentile", d.percentile) &&
			  kvp_record_u64(top, "prompt_percentile", d.prompt_p) &&
			  kvp_record_u64(top, "mean_context", d.mean_context) &&
			  kvp_record_u64(top, "max_model_len", d.max_model_len) &&
			  kvp_record_f64(top, "slo_ttft_s", d.slo_ttft_s) &&
			  kvp_record_f64(top, "slo_tpot_s", d.slo_tpot_s) &&
			  kvp_record_str(top, "cost", cost.basis == KVP_SIZE_BASIS_OWN ? "own"
						      : cost.kind[0] ? cost.kind : "cloud") &&
			  kvp_record_u64(top, "pareto_size", front) &&
			  kvp_record_bool(top, "queue_percentile", d.queue_percentile) &&
			  (fewest ? kvp_record_u64(top, "min_gpus", fewest->count)
				  : kvp_record_null(top, "min_gpus"));
		for (size_t i = 0; ok && i < n; i++) {
			struct kvp_record *x = config_record(&cfg[i]);
			ok = x && kvp_record_push(top, "configs", x);
		}
		if (ok && best) {
			struct kvp_record *x = config_record(best);
			ok = x && kvp_record_rec(top, "chosen", x);
		} else if (ok) {
			ok = kvp_record_null(top, "chosen");
			size_t idx[NEAREST], k = nearest(cfg, n, &d, idx);
			for (size_t i = 0; ok && i < k; i++) {
				struct kvp_record *x = config_record(&cfg[idx[i]]);
				ok = x && kvp_record_push(top, "nearest", x);
			}
		}
		if (ok && best && has_emit) {
			char *buf = NULL;
			size_t len = 0;
			FILE *f = open_memstream(&buf, &len);
			if (f) {
				kvp_size_emit(f, emit, m, best, prefix);
				fclose(f);
				ok = kvp_record_str(top, "emit", buf);
			}
			free(buf);
		}
		if (!ok) {
			fprintf(stderr, "kvplan size: out of memory\n");
			rc = KVP_EXIT_FAIL;
			goto out;
		}
		kvp_write_json(stdout, top);
	}
	rc = best ? KVP_EXIT_OK : KVP_EXIT_FAIL;
out:
	for (size_t i = 0; i < ngpu; i++)
		free(names[i]);
	for (size_t i = 0; recs && i < n; i++)
		kvp_record_free(recs[i]);
	free(recs);
	kvp_record_free(top);
	if (have_w)
		kvp_workload_free(&w);
	free(cfg);
	free(m);
	return rc;
}
