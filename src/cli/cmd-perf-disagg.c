/* cmd-perf-disagg.c: `kvplan perf --disagg P:D`: prefill and decode on
 * separate pools (disagg.h), each with its own GPU and shape, the KV every
 * request moves between them, and the colocated configuration beside it.
 * cmd-perf.c parses the options and hands over here. */
#include "cli/cmd-perf-disagg.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmd-perf-print.h"
#include "time/disagg.h"
#include "model/shape.h"
#include "base/units.h"

static const char *const cmd = "perf";

const char kvp_perf_disagg_help[] =
	"Disaggregated prefill/decode:\n"
	"  --disagg P:D              P prefill and D decode instances\n"
	"  --prefill-gpu G, --decode-gpu G   each pool's GPU (default --gpu)\n"
	"  --prefill-tp N, --decode-tp N     each pool's shape (default --tp; also\n"
	"  --prefill-dp, --decode-dp, --prefill-ep, --decode-ep)\n"
	"  --kv-link L               ib200|ib400|ib800|roce200|roce400|nvlink|pcie5x16...\n"
	"                            or a RATE (default ib400): the KV each request moves\n";

int kvp_perf_disagg_option(struct kvp_perf_disagg_args *a, int opt, const char *arg)
{
	static const char *const names[] = {"--prefill-tp", "--decode-tp", "--prefill-dp",
					    "--decode-dp", "--prefill-ep", "--decode-ep"};
	uint32_t *slots[] = {&a->prefill_tp, &a->decode_tp, &a->prefill_dp, &a->decode_dp,
			     &a->prefill_ep, &a->decode_ep};
	uint64_t v;
	switch (opt) {
	case KVP_OPT_DISAGG: a->disagg = arg; return 0;
	case KVP_OPT_PREFILL_GPU: a->prefill_gpu = arg; return 0;
	case KVP_OPT_DECODE_GPU: a->decode_gpu = arg; return 0;
	case KVP_OPT_KV_LINK: a->kv_link = arg; return 0;
	case KVP_OPT_PREFILL_TP: case KVP_OPT_DECODE_TP: case KVP_OPT_PREFILL_DP:
	case KVP_OPT_DECODE_DP: case KVP_OPT_PREFILL_EP: case KVP_OPT_DECODE_EP: {
		size_t i = (size_t)(opt - KVP_OPT_PREFILL_TP);
		if (!kvp_cli_u64(cmd, names[i], arg, 1, &v))
			return KVP_EXIT_USAGE;
		if (v > 1u << 20)
			return kvp_cli_usage_error(cmd, "%s: %s GPUs is more than kvplan plans for",
						   names[i], arg);
		*slots[i] = (uint32_t)v;
		return 0;
	}
	default:
		return 1;
	}
}

/* One pool: its GPU profile, shape and hardware. */
static int load_pool(const struct kvp_cli_common *c, const struct kvp_model *m, const char *gpu,
		     uint32_t tp, uint32_t dp, uint32_t ep, double decode_eff, double prefill_eff,
		     struct kvp_disagg_pool *out)
{
	struct kvp_error err = {0};
	memset(out, 0, sizeof *out);
	if (!gpu)
		return kvp_cli_usage_error(cmd, "--disagg needs --gpu (or --prefill-gpu and --decode-gpu)");
	if (kvp_gpu_load(gpu, &out->gpu, &err) || kvp_perf_hw_from_gpu(&out->gpu, m, &out->hw, &err))
		return kvp_cli_error(cmd, &err);
	if (out->hw.flops_warning[0])
		fprintf(stderr, "kvplan %s: warning: %s\n", cmd, out->hw.flops_warning);
	out->par = c->opts.par;
	if (tp)
		out->par.tp = tp;
	if (dp)
		out->par.dp = dp;
	if (ep)
		out->par.ep = ep;
	out->par.gpus = 0;   /* --num-gpus counts both pools; checked by the caller */
	if (decode_eff > 0)
		out->hw.decode_bw_efficiency = decode_eff, out->hw.efficiency_given = true;
	if (prefill_eff > 0)
		kvp_perf_hw_prefill_efficiency(&out->hw, prefill_eff);
	return 0;
}

/* A table cell: seconds, or a number in `fmt`. */
static void cell_s(struct kvp_record *y, const char *name, double s)
{
	char t[64];
	kvp_perf_fmt_s(s, t, sizeof t);
	kvp_record_str(y, name, t);
}

static void cell_f(struct kvp_record *y, const char *name, const char *fmt, double v)
{
	char t[64];
	snprintf(t, sizeof t, fmt, v);
	kvp_record_str(y, name, t);
}

static void print_pool(const char *side, uint32_t n, const struct kvp_perf_result *r,
		       uint64_t max_seq, const char *what)
{
	const struct kvp_parallel *p = &r->budget.spec.par;
	char w[32], k[32];
	kvp_format_bytes(r->budget.weights_bytes, w, sizeof w);
	kvp_format_u64(max_seq, k, sizeof k);
	printf("  %-7s %u x %s, tp %u x pp %u x dp %u (ep %u) = %u GPUs; weights %s per GPU;\n"
	       "          one instance holds %s %s\n", side, n, r->gpu, p->tp, p->pp,
	       kvp_shape_dp(p), kvp_shape_ep(p), n * kvp_shape_gpus(p), w, k, what);
}

static void print_table(const struct kvp_disagg_result *r, const struct kvp_model *m)
{
	char t1[64], t2[64], t3[64];
	printf("kvplan perf --disagg %u:%u: %s, prompt %llu, output %llu\n\n", r->prefill_instances,
	       r->decode_instances, m->name, (unsigned long long)r->prompt,
	       (unsigned long long)r->output);
	printf("Pools\n");
	print_pool("prefill", r->prefill_instances, r->prefill, r->prefill_max_sequences, "prompts");
	print_pool("decode", r->decode_instances, r->decode, r->decode_max_sequences,
		   "sequences of prompt + output");
	kvp_format_bytes(r->kv_request_bytes, t1, sizeof t1);
	kvp_format_u64(r->kv_request_bytes, t2, sizeof t2);
	kvp_format_rate(r->link.effective_bps, t3, sizeof t3);
	printf("\nKV transfer, prefill -> decode\n");
	printf("  each request moves %s (%s B): its KV, one copy of every head\n", t1, t2);
	kvp_perf_fmt_s(r->transfer_s, t1, sizeof t1);
	printf("  over %s at %s per GPU, %u GPUs sending at once: %s / (%u x %s) = %s\n",
	       r->link.name, t3, r->transfer_gpus, t2, r->transfer_gpus, t3, t1);
	kvp_perf_fmt_s(r->prefill_s, t1, sizeof t1);
	kvp_perf_fmt_s(r->transfer_s, t2, sizeof t2);
	kvp_perf_fmt_s(r->ttft_s, t3, sizeof t3);
	printf("  TTFT = prefill %s + transfer %s = %s\n", t1, t2, t3);
	printf("  the prefill pool starts %.2f requests/s (instances x dp / prefill)\n\n",
	       r->prefill_capacity_rps);

	struct kvp_record **tab = calloc(r->nrows, sizeof *tab);
	for (size_t i = 0; tab && i < r->nrows; i++) {
		const struct kvp_disagg_row *x = &r->rows[i];
		struct kvp_record *y = tab[i] = kvp_record_new();
		if (!y)
			break;
		kvp_record_u64(y, "batch", x->batch);
		cell_s(y, "ttft", r->ttft_s);
		cell_s(y, "tpot", x->tpot_s);
		cell_f(y, "tokens/s", "%.1f", x->tokens_per_s);
		cell_f(y, "prefill_load", "%.2f", x->prefill_utilization);
		cell_s(y, "colocated_ttft", x->colocated_ttft_s);
		cell_s(y, "colocated_tpot", x->colocated_tpot_s);
		cell_f(y, "colocated_tokens/s", "%.1f", x->colocated_tokens_per_s);
		kvp_record_str(y, "memory", x->fits ? "fits" : "DOES NOT FIT");
	}
	printf("Per decode instance batch (colocated: %u instances of the decode shape, each\n"
	       "prefilling its own requests: TPOT + batch x prefill / output)\n",
	       r->prefill_instances + r->decode_instances);
	if (tab) {
		kvp_write_table(stdout, tab, r->nrows);
		for (size_t i = 0; i < r->nrows; i++)
			kvp_record_free(tab[i]);
		free(tab);
	}
	/* the note follows the figures it is about: only batches whose load is
	 * over 1 are named */
	char over[256] = "";
	size_t len = 0;
	for (size_t i = 0; i < r->nrows; i++)
		if (r->rows[i].prefill_utilization > 1 && len < sizeof over) {
			int k = snprintf(over + len, sizeof over - len, "%s%llu", len ? ", " : "",
					 (unsigned long long)r->rows[i].batch);
			len += k > 0 ? (size_t)k : 0;
		}
	if (len)
		printf("prefill_load > 1 at batch %s: the prefill pool cannot start requests as\n"
		       "fast as decode finishes them; the decode batch will not stay full.\n", over);
	else
		printf("prefill_load <= 1 at every batch: the prefill pool starts requests as fast\n"
		       "as decode finishes them.\n");
}

int kvp_perf_disagg_main(const struct kvp_cli_common *c, const struct kvp_model *m,
			 const struct kvp_perf_disagg_args *a, const struct kvp_perf_opts *po,
			 double decode_eff, double prefill_eff)
{
	struct kvp_error err = {0};
	struct kvp_disagg_pool *pre = malloc(sizeof *pre), *dec = malloc(sizeof *dec);
	struct kvp_disagg_result res = {0};
	struct kvp_link link;
	uint32_t np, nd;
	int rc = 0;
	if (!pre || !dec) {
		fprintf(stderr, "kvplan perf: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	if (c->format == KVP_FORMAT_CSV) {
		rc = kvp_cli_usage_error(cmd, "--disagg prints table or json, not csv");
		goto out;
	}
	if (kvp_disagg_parse_counts(a->disagg, &np, &nd, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	if ((rc = load_pool(c, m, a->prefill_gpu ? a->prefill_gpu : c->gpu, a->prefill_tp,
			    a->prefill_dp, a->prefill_ep, decode_eff, prefill_eff, pre)) ||
	    (rc = load_pool(c, m, a->decode_gpu ? a->decode_gpu : c->gpu, a->decode_tp,
			    a->decode_dp, a->decode_ep, decode_eff, prefill_eff, dec)))
		goto out;
	pre->instances = np;
	dec->instances = nd;
	if (c->opts.par.gpus &&
	    c->opts.par.gpus != np * kvp_shape_gpus(&pre->par) + nd * kvp_shape_gpus(&dec->par)) {
		rc = kvp_cli_usage_error(cmd, "--num-gpus %u: the pools use %u + %u GPUs",
					 c->opts.par.gpus, np * kvp_shape_gpus(&pre->par),
					 nd * kvp_shape_gpus(&dec->par));
		goto out;
	}
	if (kvp_disagg_link_parse(a->kv_link ? a->kv_link : "ib400", pre, dec, &link, &err) ||
	    kvp_disagg_run(m, &c->opts, pre, dec, &link, po, &res, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	bool all_fit = true;
	for (size_t i = 0; i < res.nrows; i++)
		all_fit = all_fit && res.rows[i].fits;
	if (c->format == KVP_FORMAT_TABLE) {
		print_table(&res, m);
	} else {
		struct kvp_record *top = kvp_record_new();
		if (!top || !kvp_disagg_to_record(&res, m, top)) {
			fprintf(stderr, "kvplan perf: out of memory\n");
			kvp_record_free(top);
			rc = KVP_EXIT_FAIL;
			goto out;
		}
		kvp_write_json(stdout, top);
		kvp_record_free(top);
	}
	rc = all_fit ? KVP_EXIT_OK : KVP_EXIT_FAIL;
out:
	kvp_disagg_free(&res);
	free(pre);
	free(dec);
	return rc;
}
