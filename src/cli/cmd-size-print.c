/* cmd-size-print.c: how `kvplan size` prints its answer (cmd-size-print.h):
 * the demand, the ranked configurations and the Pareto front, the service
 * levels no replica count meets, the cost basis, the cheapest (with --emit's
 * engine command) or the nearest misses; and the CSV rows and JSON record.
 * cmd-size.c parses and searches; this prints. */
#include "cli/cmd-size-print.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/output.h"
#include "size/size-emit-plan.h"
#include "size/size-record.h"
#include "base/units.h"

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

/* " (tpot x 1.10 = 55.0 ms > 50.0 ms)": a level met at the central estimate
 * but not at the conservative end. */
static void print_at_risk(const char *level, double s, double spread, double slo)
{
	char a[64], b[64];
	fmt_s(s * (1 + spread), a, sizeof a);
	fmt_s(slo, b, sizeof b);
	printf(" (%s x %.2f = %s > %s)", level, 1 + spread, a, b);
}

/* A service level missed: what it is, by how much, over what; and, when no
 * replica count meets it, its floor. */
struct level_miss {
	const char *level;
	unsigned fail;   /* KVP_SIZE_FAIL_TPOT or _TTFT */
	double s, miss, slo, floor;
	const char *floor_is;
};

static void print_level_miss(const char *sep, const struct level_miss *x, bool never)
{
	char a[64], b[64], e[64];
	fmt_s(x->s, a, sizeof a);
	fmt_s(x->miss, b, sizeof b);
	fmt_s(x->slo, e, sizeof e);
	printf("%s%s %s, %s over %s", sep, x->level, a, b, e);
	if (never) {
		fmt_s(x->floor, a, sizeof a);
		printf(" (at any count: %s is %s)", x->floor_is, a);
	}
}

/* One line of what c misses, and by how much. */
static void print_misses(const struct kvp_size_config *c, const struct kvp_size_demand *d,
			 double spread)
{
	printf("  %u x %s (tp %u, pp %u, dp %u, %u replica%s):", c->count, c->gpu, c->tp, c->pp, c->dp,
	       c->replicas, c->replicas == 1 ? "" : "s");
	if (c->at_risk) {
		char r[128];
		kvp_size_fail_format(c->risk, 0, r, sizeof r);
		printf(" meets at the central estimate; at risk: %s", r);
		if (c->risk & c->risk_never & KVP_SIZE_FAIL_MEMORY)
			printf(" (at any count: not one sequence fits at the band's low end)");
		if (c->risk & KVP_SIZE_FAIL_TPOT)
			print_at_risk("tpot", c->tpot_s, spread, d->slo_tpot_s);
		if (c->risk & KVP_SIZE_FAIL_TTFT)
			print_at_risk("ttft", c->ttft_s, spread, d->slo_ttft_s);
		printf("\n");
		return;
	}
	const char *sep = " ";
	const struct level_miss lv[] = {
		{"tpot", KVP_SIZE_FAIL_TPOT, c->tpot_s, c->miss_tpot_s, d->slo_tpot_s, c->floor_tpot_s,
		 "one sequence's step"},
		{"ttft", KVP_SIZE_FAIL_TTFT, c->ttft_s, c->miss_ttft_s, d->slo_ttft_s, c->floor_ttft_s,
		 "the prefill alone"},
	};
	for (size_t i = 0; i < sizeof lv / sizeof lv[0]; i++)
		if (c->failed & lv[i].fail) {
			print_level_miss(sep, &lv[i], c->never & lv[i].fail);
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

/* Name the GPUs the basis cannot price, ranked apart after the priced rows,
 * and what the basis needs from a profile.  Silent when every row is priced,
 * or none is (then there is no cost ranking to set them apart from). */
static void print_unpriced(const struct kvp_size_config *cfg, size_t n,
			   const struct kvp_size_cost *cost)
{
	size_t priced = 0, k = 0;
	for (size_t i = 0; i < n; i++)
		priced += kvp_size_priced(&cfg[i]);
	if (priced == 0 || priced == n)
		return;
	printf("\nNo price on this basis, so ranked apart after the priced rows (%zu of %zu rows): ",
	       n - priced, n);
	for (size_t i = 0; i < n; i++) {
		if (kvp_size_priced(&cfg[i]))
			continue;
		bool dup = false;
		for (size_t j = 0; j < i && !dup; j++)
			dup = !kvp_size_priced(&cfg[j]) && strcmp(cfg[j].gpu, cfg[i].gpu) == 0;
		if (!dup) {
			char g[KVP_TERM_SIZE(sizeof cfg[i].gpu)];
			printf("%s%s", k++ ? ", " : "", kvp_term_text(g, sizeof g, cfg[i].gpu));
		}
	}
	if (cost->basis == KVP_SIZE_BASIS_OWN)
		printf("\n(--cost own needs purchase_price or server_price, and tdp_watts, in the GPU profile)\n");
	else if (cost->kind[0])
		printf("\n(--cost cloud:%s needs a price_per_hour of kind %s in the GPU profile, or --price)\n",
		       cost->kind, cost->kind);
	else
		printf("\n(--cost cloud needs price_per_hour in the GPU profile, or --price GPU=USD)\n");
}

void kvp_size_print_table(const struct kvp_size_answer *a)
{
	const struct kvp_model *m = a->m;
	const struct kvp_workload *w = a->w;
	const struct kvp_size_demand *d = a->d;
	const struct kvp_size_config *cfg = a->cfg, *best = a->best, *fewest = a->fewest;
	size_t n = a->n;
	const struct kvp_size_cost *cost = a->cost;
	char t1[64], t2[64], t3[64];
	char mn[KVP_TERM_SIZE(sizeof m->name)], wn[KVP_TERM_SIZE(sizeof w->name)];
	printf("kvplan size: %s for workload %s, engine %s\n\n",
	       kvp_term_text(mn, sizeof mn, m->name), kvp_term_text(wn, sizeof wn, w->name),
	       kvp_engine_name(a->engine));
	printf("Demand (%d requests drawn from the workload)\n", 65536);
	if (d->rate > 0)
		printf("  arrival rate %.3g requests/s\n", d->rate);
	else if (d->users)
		printf("  %llu concurrent users, one request each at a time\n",
		       (unsigned long long)d->users);
	else
		printf("  no rate or users: one request at a time\n");
	kvp_format_u64(d->prompt_p, t1, sizeof t1);
	printf("  prompt mean %.1f tokens (p%g %s), output mean %.1f tokens\n", d->prompt_mean,
	       d->percentile, t1, d->output_mean);
	kvp_format_u64(d->mean_context, t1, sizeof t1);
	kvp_format_u64(d->max_model_len, t2, sizeof t2);
	printf("  a decoding sequence holds %s tokens on average; max_model_len %s\n", t1, t2);
	fmt_s(d->slo_ttft_s, t1, sizeof t1);
	fmt_s(d->slo_tpot_s, t2, sizeof t2);
	printf("  service levels: TTFT %s at p%g, TPOT %s\n\n", d->slo_ttft_s > 0 ? t1 : "none",
	       d->percentile, d->slo_tpot_s > 0 ? t2 : "none");
	printf("Per replica: rate / R; Little's law C = rate x (TTFT + output x TPOT);\n"
	       "TPOT = decode step of C sequences / (1 - prefill utilization)\n");
	if (d->queue_percentile)
		printf("TTFT at p%g = prefill of the p%g prompt + the p%g wait, P(W > t) = rho "
		       "exp(-t rho / W_q)\n", d->percentile, d->percentile, d->percentile);
	else
		printf("TTFT at p%g = prefill of the p%g prompt + the mean wait W_q\n", d->percentile,
		       d->percentile);
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
		if (a->disagg) {
			if (x->disagg_p)
				snprintf(t1, sizeof t1, "%u:%u", x->disagg_p, x->disagg_d);
			else
				snprintf(t1, sizeof t1, "colo");
			kvp_record_str(r, "P:D", t1);
		}
		if (a->seqs_axis)
			kvp_record_u64(r, "max_num_seqs", x->max_num_seqs);
		kvp_record_u64(r, "replicas", x->replicas);
		kvp_record_u64(r, "gpus", x->count);
		fmt_money(x->cost_per_hour, t1, sizeof t1);
		kvp_record_str(r, "$/hour", t1);
		fmt_money(x->cost_per_mtok, t1, sizeof t1);
		kvp_record_str(r, "$/Mtok", t1);
		kvp_record_str(r, "basis", x->basis);
		kvp_format_fixed(x->concurrency, 1, "", t1, sizeof t1);
		unsigned unsized = KVP_SIZE_FAIL_SPLIT | KVP_SIZE_FAIL_KV_DTYPE | KVP_SIZE_FAIL_ENGINE;
		kvp_record_str(r, "C", x->failed & (unsized | KVP_SIZE_FAIL_THROUGHPUT) ? "-" : t1);
		fmt_s(x->ttft_s, t1, sizeof t1);
		kvp_record_str(r, "ttft", x->failed & unsized ? "-" : t1);
		fmt_s(x->tpot_s, t1, sizeof t1);
		kvp_record_str(r, "tpot", x->failed & unsized ? "-" : t1);
		kvp_size_fail_format(x->failed ? x->failed : x->risk, x->never, t3, sizeof t3);
		kvp_record_str(r, "meets", x->meets ? "yes" : x->at_risk ? "at risk" : "no");
		kvp_record_str(r, "front", x->pareto ? "*" : "");
		if (a->simulate)
			kvp_record_str(r, "sim", x->simulated ? "yes" : "no");
		kvp_record_str(r, "failed", t3);
	}
	if (tab) {
		kvp_write_table(stdout, tab, n);
		for (size_t i = 0; i < n; i++)
			kvp_record_free(tab[i]);
		free(tab);
	}
	printf("\nfront *: on the Pareto front of $/Mtok, TPOT and TTFT (%zu of the %zu "
	       "configurations%s)\n", a->front, a->considered, a->pareto_only ? "; only these shown" : "");
	if (fewest)
		printf("Fewest GPUs that meet every constraint: %u (%s, tp %u, pp %u, dp %u, %u "
		       "replica%s)\n", fewest->count, fewest->gpu, fewest->tp, fewest->pp, fewest->dp,
		       fewest->replicas, fewest->replicas == 1 ? "" : "s");
	print_never(cfg, n, d);
	print_basis(cfg, n, cost);
	print_unpriced(cfg, n, cost);
	if (best && !kvp_size_priced(best) && kvp_size_priced(&cfg[0])) {
		printf("\nNo priced configuration meets every constraint; the first that does has no "
		       "price on this basis:\n  %u x %s (tp %u, %u replica%s)\n", best->count, best->gpu,
		       best->tp, best->replicas, best->replicas == 1 ? "" : "s");
	} else if (best) {
		fmt_money(best->cost_per_hour, t1, sizeof t1);
		fmt_money(best->cost_per_mtok, t2, sizeof t2);
		printf("\nCheapest: %u x %s (tp %u, %u replica%s) at $%s/hour, $%s per million "
		       "output tokens (%s)\n", best->count, best->gpu, best->tp, best->replicas,
		       best->replicas == 1 ? "" : "s", t1, t2, best->basis);
		kvp_format_bytes(best->kv_bytes_needed, t1, sizeof t1);
		kvp_format_bytes(best->kv_pool_bytes, t2, sizeof t2);
		printf("  each replica holds %.1f sequences in flight: %s of KV of a %s pool per GPU\n",
		       best->concurrency, t1, t2);
		if (a->has_emit) {
			printf("\n");
			kvp_size_emit(stdout, a->emit, m, best, a->prefix);
		}
	} else {
		size_t idx[KVP_SIZE_NEAREST], k = kvp_size_nearest(cfg, n, d, idx);
		bool risky = false;
		for (size_t i = 0; i < n; i++)
			risky |= cfg[i].at_risk;
		printf("\nNo configuration meets every constraint%s.\n",
		       risky ? " at the conservative end" : "");
		if (k)
			printf("Nearest, and what each misses by:\n");
		for (size_t i = 0; i < k; i++)
			print_misses(&cfg[idx[i]], d, a->latency_spread);
	}
}

bool kvp_size_print_record(const struct kvp_size_answer *a, enum kvp_format format)
{
	const struct kvp_model *m = a->m;
	const struct kvp_workload *w = a->w;
	const struct kvp_size_demand *d = a->d;
	const struct kvp_size_config *cfg = a->cfg, *best = a->best, *fewest = a->fewest;
	size_t n = a->n;
	const struct kvp_size_cost *cost = a->cost;
	if (format == KVP_FORMAT_CSV) {
		struct kvp_record **recs = calloc(n + 1, sizeof *recs);
		bool ok = recs != NULL;
		for (size_t i = 0; ok && i < n; i++)
			ok = (recs[i] = kvp_size_config_record(&cfg[i], a->latency_spread,
								 a->latency_spread_from)) != NULL;
		if (ok)
			kvp_write_csv(stdout, recs, n);
		for (size_t i = 0; recs && i < n; i++)
			kvp_record_free(recs[i]);
		free(recs);
		return ok;
	}
	struct kvp_size_summary s = {
		.model = m->name, .workload = w->name, .engine = a->engine, .d = d, .cost = cost,
		.cfg = cfg, .n = n, .front = a->front, .best = best, .fewest = fewest,
		.latency_spread = a->latency_spread, .latency_spread_from = a->latency_spread_from};
	struct kvp_record *top = kvp_record_new();
	bool ok = top && kvp_size_summary_record(&s, top);
	if (ok && a->warn)
		ok = kvp_cli_warnings_to_record(a->warn, top);
	if (ok && best && a->has_emit)
		ok = kvp_size_emit_record(top, a->emit, m, best, a->prefix);
	ok = ok && (a->calibration ? kvp_record_str(top, "calibration", a->calibration)
				   : kvp_record_null(top, "calibration")) &&
	     (a->calibration_kernel ? kvp_record_str(top, "calibration_kernel", a->calibration_kernel)
				    : kvp_record_null(top, "calibration_kernel"));
	if (ok)
		kvp_write_json(stdout, top);
	kvp_record_free(top);
	return ok;
}
