/* cmd-perf.c: `kvplan perf`: time to first token, time per output token and
 * tokens per second of one replica as the batch grows, until memory runs out;
 * with --kv-offload, the KV that lives off the GPU and the link it crosses
 * every step; prefix reuse against recompute; and the context-doubling point.
 * The table shows each term of the arithmetic; JSON and CSV carry the rows. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli-options.h"
#include "cmd-perf-disagg.h"
#include "shape.h"
#include "calibration.h"
#include "perf.h"
#include "units.h"

static const char *const cmd = "perf";

#define MAX_BATCHES KVP_PERF_MAX_BATCHES

static void help(void)
{
	printf("Usage: kvplan perf --model NAME --gpu NAME [--prompt N] [--output N] [--batch LIST] [OPTIONS]\n\n"
	       "Latency and throughput of one replica (tp x pp GPUs), a roofline:\n"
	       "  prefill  FLOPs = 2 x active params x n + causal attention; time = max(FLOPs /\n"
	       "           (peak x eff), bytes / (bandwidth x eff)) -> time to first token\n"
	       "  decode   bytes = weights + KV of the batch; time = max(bytes / (bandwidth x\n"
	       "           eff), FLOPs / (peak x eff)) -> time per output token, tokens/s\n"
	       "  tp       two ring all-reduces per layer over NVLink (or PCIe)\n"
	       "Decode is timed at the mean context of the output, prompt + (output - 1) / 2;\n"
	       "memory is checked at prompt + output (the budget of `kvplan budget`).\n"
	       "Two times to first token per batch B:\n"
	       "  ttft_batch    B prompts prefilled together in one pass (a burst of B arrivals;\n"
	       "                every user waits for the whole pass)\n"
	       "  ttft_chunked  one prompt joining B - 1 sequences already decoding, under\n"
	       "                continuous batching with chunked prefill: each step carries the\n"
	       "                B - 1 decode tokens and T - (B - 1) prompt tokens (T =\n"
	       "                --max-batched-tokens); k = ceil(prompt / chunk) steps, each\n"
	       "                timed on the same roofline; no queueing counted\n\n"
	       "%s"
	       "Perf:\n"
	       "  --prompt N                prompt tokens (default: --context, else 1024)\n"
	       "  --output N                output tokens (default 256)\n"
	       "  --batch LIST              sequences per step, e.g. 1,8,32,128 (default 1)\n"
	       "  --calibration FILE        efficiencies from kvbench --out or a table (kvplan(1))\n"
	       "  --decode-bw-efficiency F  share of the memory bandwidth decode reaches (default %.2f)\n"
	       "  --prefill-flops-efficiency F  share of peak FLOP/s prefill reaches (default %.2f)\n"
	       "Offload:\n"
	       "  --kv-offload T            none|cpu|cpu:RATE|nvme|nvme:RATE|sata|sata:RATE\n"
	       "  --host-link L             pcie3x16|pcie4x16|pcie5x16|pcie6x16|nvlink-c2c, or\n"
	       "                            L:RATE, or a RATE (default: the GPU profile's)\n"
	       "  --offload-fraction F      share of the KV kept off the GPU (default: what does\n"
	       "                            not fit in the KV pool)\n"
	       "  --prefix N                prefix reuse: reload N saved tokens over the link or\n"
	       "                            recompute them (default: the prompt)\n"
	       "%s\n"
	       "Example: kvplan perf --model llama-3.1-70b --gpu h100-sxm --tp 4 --prompt 4096 \\\n"
	       "             --output 512 --batch 1,8,32,128   # exits 1: 128 does not fit\n",
	       kvp_cli_common_help, KVP_PERF_DECODE_BW_EFFICIENCY, KVP_PERF_PREFILL_FLOPS_EFFICIENCY,
	       kvp_perf_disagg_help);
}

void kvp_perf_fmt_s(double s, char *buf, size_t size)
{
	if (!isfinite(s))
		snprintf(buf, size, "-");
	else if (s >= 1)
		kvp_format_fixed(s, 3, " s", buf, size); /* 1e61 s: never cut */
	else if (s >= 1e-3)
		snprintf(buf, size, "%.2f ms", s * 1e3);
	else
		snprintf(buf, size, "%.1f us", s * 1e6);
}

/* Data-parallel attention and the experts' exchange (shape.h), when used. */
static void print_shape(const struct kvp_perf_result *run, const struct kvp_perf_hw *hw)
{
	const struct kvp_spec *s = &run->budget.spec;
	const struct kvp_model *m = s->model;
	uint32_t dp = kvp_shape_dp(&s->par), ep = kvp_shape_ep(&s->par);
	if (dp <= 1)
		return;
	const struct kvp_perf_row *r = &run->rows[0];
	char t1[64];
	printf("  %u DP ranks x tp %u x pp %u = %u GPUs; each rank its own requests and their KV;\n"
	       "  a batch B is spread over the ranks, the fullest holding ceil(B/%u) (batch %llu: %llu,"
	       " balance %.2f)\n", dp, s->par.tp, s->par.pp, run->gpus, dp,
	       (unsigned long long)r->batch, (unsigned long long)r->rank_batch, r->dp_balance);
	if (!m->moe_num_experts)
		return;
	const struct kvp_link *l = &run->ctx.moe_link;
	kvp_format_rate(l->effective_bps, t1, sizeof t1);
	if (ep > 1)
		printf("  experts' all-to-all over %s (%u GPUs), %s per direction: dispatch and combine"
		       " each\n  k %u x H %u x %u B x (ep %u - 1)/%u per token, %u MoE layers\n",
		       l->name, s->par.tp * dp, t1, m->moe_experts_per_token, m->hidden_size,
		       kvp_dtype_info(s->serving_dtype)->bits / 8, ep, ep, kvp_shape_moe_layers(m));
	else
		printf("  experts' all-gather and reduce-scatter over %s (%u GPUs), %s per direction:"
		       "\n  (dp %u - 1) x H %u x %u B per token each way, %u MoE layers\n", l->name,
		       s->par.tp * dp, t1, dp, m->hidden_size,
		       kvp_dtype_info(s->serving_dtype)->bits / 8, kvp_shape_moe_layers(m));
	if (strcmp(l->name, "nvlink") != 0 && hw->nvlink_domain > 1)
		printf("  (%u GPUs are more than the NVLink domain of %u)\n", s->par.tp * dp,
		       hw->nvlink_domain);
}

static void fmt_flops(double f, char *buf, size_t size)
{
	if (f >= 1e15)
		kvp_format_fixed(f / 1e15, 3, " PFLOP", buf, size);
	else if (f >= 1e12)
		snprintf(buf, size, "%.3f TFLOP", f / 1e12);
	else
		snprintf(buf, size, "%.3f GFLOP", f / 1e9);
}

/* --batch: a list of batch sizes. */
struct batch_list {
	uint64_t *v;
	size_t *n;
};

static bool batch_parse(const char *name, const char *arg, void *dest)
{
	struct batch_list *bl = dest;
	return kvp_cli_token_list(name, "--batch", arg, bl->v, MAX_BATCHES, bl->n);
}

static bool prompt_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_tokens(name, "--prompt", arg, dest);
}

static bool output_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_tokens(name, "--output", arg, dest);
}

static bool prefix_parse(const char *name, const char *arg, void *dest)
{
	return kvp_cli_tokens(name, "--prefix", arg, dest);
}

static bool offload_fraction_parse(const char *name, const char *arg, void *dest)
{
	double *fraction = dest;
	if (kvp_parse_double(arg, fraction) || *fraction > 1) {
		kvp_cli_usage_error(name, "--offload-fraction: expected a share in [0, 1], got '%s'",
				    arg);
		return false;
	}
	return true;
}

/* --decode-bw-efficiency, --prefill-flops-efficiency */
static bool efficiency(const char *name, const char *opt, const char *arg, double *out)
{
	if (kvp_parse_fraction(arg, out) == 0)
		return true;
	kvp_cli_usage_error(name, "--%s: expected a fraction in (0, 1] such as 0.8 or 80%%, got '%s'",
			    opt, arg);
	return false;
}

static bool decode_eff_parse(const char *name, const char *arg, void *dest)
{
	return efficiency(name, "decode-bw-efficiency", arg, dest);
}

static bool prefill_eff_parse(const char *name, const char *arg, void *dest)
{
	return efficiency(name, "prefill-flops-efficiency", arg, dest);
}

static const struct option disagg_options[] = {KVP_PERF_DISAGG_OPTIONS, {NULL, 0, NULL, 0}};

static int disagg_option(void *dest, int opt, const char *arg)
{
	return kvp_perf_disagg_option(dest, opt, arg);
}

int kvp_cmd_perf(int argc, char **argv)
{
	struct kvp_cli_common c;
	struct kvp_perf_disagg_args dis = {0};
	kvp_cli_common_init(&c);
	uint64_t batches[MAX_BATCHES] = {1}, prompt = 0, output = 256, prefix = 0;
	size_t nbatch = 1;
	struct batch_list bl = {batches, &nbatch};
	const char *offload_arg = NULL, *link_arg = NULL, *calib_path = NULL;
	double fraction = -1, decode_eff = 0, prefill_eff = 0;
	int rc;
	const struct kvp_cli_opt opts[] = {
		{.short_name = 'h', .kind = KVP_CLI_OPT_FLAG, .dest = &c.help},
		{.kind = KVP_CLI_OPT_COMMON, .dest = &c},
		{.common_id = KVP_OPT_BATCH, .kind = KVP_CLI_OPT_PARSE, .dest = &bl, .parse = batch_parse},
		{.name = "prompt", .kind = KVP_CLI_OPT_PARSE, .dest = &prompt, .parse = prompt_parse},
		{.name = "output", .kind = KVP_CLI_OPT_PARSE, .dest = &output, .parse = output_parse},
		{.name = "kv-offload", .kind = KVP_CLI_OPT_STRING, .dest = &offload_arg},
		{.name = "host-link", .kind = KVP_CLI_OPT_STRING, .dest = &link_arg},
		{.name = "offload-fraction", .kind = KVP_CLI_OPT_PARSE, .dest = &fraction,
		 .parse = offload_fraction_parse},
		{.name = "prefix", .kind = KVP_CLI_OPT_PARSE, .dest = &prefix, .parse = prefix_parse},
		{.name = "calibration", .kind = KVP_CLI_OPT_STRING, .dest = &calib_path},
		{.name = "decode-bw-efficiency", .kind = KVP_CLI_OPT_PARSE, .dest = &decode_eff,
		 .parse = decode_eff_parse},
		{.name = "prefill-flops-efficiency", .kind = KVP_CLI_OPT_PARSE, .dest = &prefill_eff,
		 .parse = prefill_eff_parse},
		{.kind = KVP_CLI_OPT_GROUP, .dest = &dis, .group = disagg_options, .group_fn = disagg_option},
		{.kind = KVP_CLI_OPT_END}
	};
	if ((rc = kvp_cli_options_parse(cmd, argc, argv, opts, help)) != KVP_CLI_OPTIONS_DONE)
		return rc;
	if (c.help) {
		help();
		return KVP_EXIT_OK;
	}
	if (optind < argc)
		return kvp_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (!prompt)
		prompt = c.opts.context ? c.opts.context : 1024;
	if (prompt > (1ULL << 40) || output > (1ULL << 40))
		return kvp_cli_usage_error(cmd, "--prompt/--output: too many tokens");
	if (fraction >= 0 && !offload_arg)
		return kvp_cli_usage_error(cmd, "--offload-fraction needs --kv-offload");

	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_perf_result *run = malloc(sizeof *run);
	struct kvp_record *top = NULL;
	struct kvp_record **recs = calloc(nbatch, sizeof *recs);
	struct kvp_gpu g;
	struct kvp_error err = {0};
	struct kvp_perf_hw hw;
	struct kvp_calibration cal = {0};
	struct kvp_perf_opts po = {.prompt = prompt, .output = output, .nbatch = nbatch,
				   .prefix = prefix, .calibration = calib_path,
				   .offload = {.tier = KVP_OFFLOAD_NONE, .fraction = -1}};
	struct kvp_offload *off = &po.offload;
	memcpy(po.batches, batches, nbatch * sizeof batches[0]);
	if (!m || !run || !recs) {
		fprintf(stderr, "kvplan perf: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	if (dis.disagg) {
		if (offload_arg || calib_path)
			rc = kvp_cli_usage_error(cmd, "--disagg does not take --kv-offload or --calibration");
		else if (!c.model)
			rc = kvp_cli_usage_error(cmd, "--model is required");
		else if (kvp_model_load(c.model, m, &err))
			rc = kvp_cli_error(cmd, &err);
		else
			rc = kvp_perf_disagg_main(&c, m, &dis, &po, decode_eff, prefill_eff);
		goto out;
	}
	if (dis.prefill_gpu || dis.decode_gpu || dis.kv_link || dis.prefill_tp || dis.decode_tp ||
	    dis.prefill_dp || dis.decode_dp || dis.prefill_ep || dis.decode_ep) {
		rc = kvp_cli_usage_error(cmd, "--prefill-*, --decode-* and --kv-link need --disagg");
		goto out;
	}
	if ((rc = kvp_cli_load(&c, cmd, m, &g, true)) || (rc = kvp_cli_speculative(&c, cmd, m)))
		goto out;
	if (!c.gpu) {
		rc = kvp_cli_usage_error(cmd, "--gpu is required: latency needs its bandwidth and FLOP/s");
		goto out;
	}
	if (kvp_perf_hw_from_gpu(&g, m, &hw, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	if (link_arg) {
		struct kvp_link link;
		if (kvp_link_parse(link_arg, "--host-link", &link, &err)) {
			rc = kvp_cli_error(cmd, &err);
			goto out;
		}
		kvp_perf_hw_host_link(&hw, &link);
	}
	if (calib_path) {
		if (kvp_calibration_load(calib_path, &g, &cal, &err)) {
			rc = kvp_cli_error(cmd, &err);
			goto out;
		}
		kvp_calibration_apply(&cal, &hw);
	}
	if (decode_eff > 0)
		hw.decode_bw_efficiency = decode_eff;
	if (prefill_eff > 0)
		hw.prefill_flops_efficiency = prefill_eff;
	if (offload_arg) {
		if (kvp_offload_parse(offload_arg, &hw.host_link, off, &err)) {
			rc = kvp_cli_error(cmd, &err);
			goto out;
		}
		off->fraction = fraction;
	}
	struct kvp_cli_warnings warn = {0};
	kvp_cli_check_context(&warn, cmd, "--prompt + --output", prompt + output, m);
	if (kvp_perf_run(m, &g, &c.opts, &hw, &po, run, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}

	const struct kvp_budget *b = &run->budget;
	const struct kvp_perf_row *rows = run->rows;
	const struct kvp_link *plink = &run->prefix_link;
	uint64_t total = prompt + output, n_dec = run->decode_context, max_batch = run->max_batch;
	uint64_t kv1 = run->kv_1x_bytes, kv2 = run->kv_2x_bytes, breakeven = run->prefix_breakeven;
	uint64_t limit = run->prefix_limit;
	double att1 = run->attention_1x_flops, att2 = run->attention_2x_flops;
	double reload_s = run->prefix_reload_s, recompute_s = run->prefix_recompute_s;
	uint32_t gpus = run->gpus;
	bool all_fit = run->all_fit;
	prefix = run->opts.prefix;

	if (c.format == KVP_FORMAT_TABLE) {
		const struct kvp_spec *s = &b->spec;
		char t1[64], t2[64], t3[64], t4[64];
		char mn[KVP_TERM_SIZE(sizeof m->name)], gn[KVP_TERM_SIZE(sizeof g.name)];
		printf("kvplan perf: %s on %s, tp %u, pp %u, dp %u, ep %u, dtype %s, KV %s\n\n",
		       kvp_term_text(mn, sizeof mn, m->name), kvp_term_text(gn, sizeof gn, g.name),
		       s->par.tp, s->par.pp, kvp_shape_dp(&s->par), kvp_shape_ep(&s->par),
		       kvp_dtype_name(s->serving_dtype), kvp_dtype_name(s->kv_dtype));
		kvp_format_rate(hw.bandwidth_bps, t1, sizeof t1);
		kvp_format_rate(hw.bandwidth_bps * hw.decode_bw_efficiency, t2, sizeof t2);
		printf("Hardware (one GPU)\n");
		printf("  memory bandwidth %s x efficiency %.2f = %s\n", t1, hw.decode_bw_efficiency, t2);
		printf("  peak %.1f TFLOP/s x efficiency %.2f = %.1f TFLOP/s\n", hw.flops / 1e12,
		       hw.prefill_flops_efficiency, hw.flops * hw.prefill_flops_efficiency / 1e12);
		if (cal.decode_bw_efficiency > 0 || cal.prefill_flops_efficiency > 0)
			printf("  efficiencies calibrated from %s%s%s\n", calib_path,
			       cal.gpu[0] ? " for " : "", cal.gpu);
		if (s->par.tp > 1) {
			const struct kvp_link *tl = &run->ctx.tp_link;
			kvp_format_rate(tl->effective_bps, t1, sizeof t1);
			printf("  tp all-reduce over %s, %s per direction, %.0f us latency each",
			       tl->name, t1, hw.allreduce_latency_s * 1e6);
			if (strcmp(tl->name, "nvlink") != 0 && hw.nvlink_domain > 1)
				printf(" (tp %u is larger than the NVLink domain of %u GPUs)",
				       s->par.tp, hw.nvlink_domain);
			printf("\n");
		}
		print_shape(run, &hw);
		kvp_format_bytes(b->weights_bytes, t1, sizeof t1);
		kvp_format_u64(s->token_bytes, t2, sizeof t2);
		printf("  weights on one GPU %s; KV %s B per token on one GPU\n\n", t1, t2);

		const struct kvp_perf_row *r0 = &rows[0];
		kvp_format_u64(prompt, t1, sizeof t1);
		printf("Prefill of %s tokens (one sequence, whole model)\n", t1);
		fmt_flops(2.0 * (double)m->active_params * (double)prompt, t2, sizeof t2);
		fmt_flops(att1, t3, sizeof t3);
		fmt_flops(kvp_perf_prefill_flops(m, prompt), t4, sizeof t4);
		printf("  2 x %.3g active params x %s tokens = %s; causal attention %s; total %s\n",
		       (double)m->active_params, t1, t2, t3, t4);
		kvp_perf_fmt_s(r0->prefill.compute_s, t1, sizeof t1);
		kvp_perf_fmt_s(r0->prefill.memory_s, t2, sizeof t2);
		kvp_perf_fmt_s(r0->prefill.comm_s, t3, sizeof t3);
		kvp_perf_fmt_s(r0->prefill.time_s, t4, sizeof t4);
		printf("  batch %llu at once: compute %s, memory %s -> %s-bound; + communication %s = "
		       "TTFT %s\n", (unsigned long long)r0->batch, t1, t2,
		       kvp_perf_bound_name(r0->prefill.bound), t3, t4);
		const struct kvp_perf_row *rl = &rows[nbatch - 1];
		if (isfinite(rl->chunked.ttft_s)) {
			char t5[64];
			kvp_format_u64(rl->chunked.chunk_tokens, t1, sizeof t1);
			kvp_perf_fmt_s(rl->chunked.compute_s, t2, sizeof t2);
			kvp_perf_fmt_s(rl->chunked.memory_s, t3, sizeof t3);
			kvp_perf_fmt_s(rl->chunked.comm_s, t4, sizeof t4);
			kvp_perf_fmt_s(rl->chunked.ttft_s, t5, sizeof t5);
			printf("  chunked, joining %llu decoding: chunks of %s tokens (max-batched-tokens "
			       "%llu - %llu), %llu step%s x (max(compute %s, memory %s) + all-reduce %s)"
			       " = TTFT %s\n\n", (unsigned long long)(rl->batch - 1), t1,
			       (unsigned long long)b->max_batched_tokens,
			       (unsigned long long)(rl->batch - 1), (unsigned long long)rl->chunked.steps,
			       rl->chunked.steps == 1 ? "" : "s", t2, t3, t4, t5);
		} else {
			printf("  chunked, joining %llu decoding: no prompt token fits a step of "
			       "max-batched-tokens %llu\n\n", (unsigned long long)(rl->batch - 1),
			       (unsigned long long)b->max_batched_tokens);
		}

		kvp_format_u64(n_dec, t1, sizeof t1);
		printf("Decode step at the mean context %s tokens\n", t1);
		kvp_format_bytes(r0->decode.weights_bytes, t2, sizeof t2);
		kvp_format_bytes(r0->decode.kv_bytes, t3, sizeof t3);
		printf("  batch %llu reads weights %s + KV %s on one GPU", (unsigned long long)r0->batch, t2, t3);
		kvp_perf_fmt_s(r0->decode.memory_s, t2, sizeof t2);
		kvp_perf_fmt_s(r0->decode.compute_s, t3, sizeof t3);
		printf(": memory %s, compute %s\n", t2, t3);
		kvp_format_u64(total, t1, sizeof t1);
		kvp_format_u64(max_batch, t2, sizeof t2);
		printf("  memory holds %s sequences of %s tokens (kvplan budget)\n", t2, t1);
		if (r0->speculative) {
			const struct kvp_speculative *sp = c.opts.speculative;
			kvp_perf_fmt_s(r0->verify_s, t1, sizeof t1);
			kvp_perf_fmt_s(r0->draft_s, t2, sizeof t2);
			kvp_perf_fmt_s(r0->tpot_s, t3, sizeof t3);
			printf("  speculative (%s, K %u, accept %.2f): (1 - a^(K+1)) / (1 - a) = %.4f tokens"
			       " per step;\n  batch %llu: verify %s + %u x draft %s, / %.4f = TPOT %s\n",
			       c.spec_draft, sp->k, sp->accept, r0->tokens_per_step,
			       (unsigned long long)r0->batch, t1, sp->k, t2, r0->tokens_per_step, t3);
		}
		printf("\n");

		struct kvp_record **tab = calloc(nbatch, sizeof *tab);
		for (size_t i = 0; tab && i < nbatch; i++) {
			const struct kvp_perf_row *r = &rows[i];
			struct kvp_record *x = tab[i] = kvp_record_new();
			if (!x)
				break;
			kvp_record_u64(x, "batch", r->batch);
			kvp_perf_fmt_s(r->prefill.time_s, t1, sizeof t1);
			kvp_record_str(x, "ttft_batch", t1);
			kvp_perf_fmt_s(r->chunked.ttft_s, t1, sizeof t1);
			kvp_record_str(x, "ttft_chunked", t1);
			if (r->offload) {
				kvp_perf_fmt_s(r->decode.time_s, t1, sizeof t1);
				kvp_record_str(x, "step_on_gpu", t1);
				kvp_format_bytes(r->off.transfer_bytes, t1, sizeof t1);
				kvp_record_str(x, "offloaded_kv", t1);
				kvp_perf_fmt_s(r->off.transfer_s, t1, sizeof t1);
				kvp_record_str(x, "transfer", t1);
				kvp_record_str(x, "offload_bound", r->off.transfer_bound ? "transfer" : "compute");
			}
			kvp_perf_fmt_s(r->tpot_s, t1, sizeof t1);
			kvp_record_str(x, "tpot", t1);
			kvp_format_fixed(r->tokens_per_s, 1, "", t1, sizeof t1);
			kvp_record_str(x, "tokens/s", t1);
			kvp_format_fixed(r->tokens_per_s / gpus, 1, "", t1, sizeof t1);
			kvp_record_str(x, "per_gpu", t1);
			kvp_record_str(x, "bound", kvp_perf_bound_name(r->decode.bound));
			kvp_record_str(x, "memory", r->offload ? (r->off.transfer_bytes ? "offload" : "fits")
							       : r->fits ? "fits" : "DOES NOT FIT");
		}
		if (tab) {
			kvp_write_table(stdout, tab, nbatch);
			for (size_t i = 0; i < nbatch; i++)
				kvp_record_free(tab[i]);
			free(tab);
		}
		if (off->tier != KVP_OFFLOAD_NONE) {
			kvp_format_rate(off->link.effective_bps, t1, sizeof t1);
			kvp_format_rate(off->link.theoretical_bps, t2, sizeof t2);
			printf("\nOffload to %s over %s: effective %s (theoretical %s)\n",
			       off->tier == KVP_OFFLOAD_CPU ? "host memory" : "disk", off->link.name, t1, t2);
			printf("  each step moves the offloaded KV; layer i+1's KV moves while layer i\n"
			       "  computes, which hides it only while a layer's compute outlasts its transfer\n");
		}
		printf("\nDoubling the context (%llu -> %llu tokens): KV x%.2f, decode KV bytes x%.2f, "
		       "prefill attention FLOPs x%.2f\n", (unsigned long long)prompt,
		       (unsigned long long)(2 * prompt), (double)kv2 / (double)kv1,
		       (double)kv2 / (double)kv1, att2 / att1);
		kvp_perf_fmt_s(reload_s, t1, sizeof t1);
		kvp_perf_fmt_s(recompute_s, t2, sizeof t2);
		kvp_format_u64(prefix, t3, sizeof t3);
		printf("Prefix of %s tokens: reload over %s %s, recompute %s -> %s\n", t3, plink->name, t1,
		       t2, reload_s < recompute_s ? "reload" : "recompute");
		if (breakeven == 1)
			printf("  reloading beats recomputing from the first token\n");
		else if (breakeven)
			printf("  reloading beats recomputing from %llu tokens on\n",
			       (unsigned long long)breakeven);
		else
			printf("  recomputing stays faster up to %llu tokens\n", (unsigned long long)limit);
		if (!all_fit)
			printf("\nSome batches do not fit in memory (see kvplan budget, or --kv-offload).\n");
	} else {
		top = kvp_record_new();
		bool ok = top != NULL;
		if (c.format == KVP_FORMAT_CSV)
			for (size_t i = 0; ok && i < nbatch; i++)
				ok = (recs[i] = kvp_perf_row_to_record(run, i)) != NULL;
		else
			ok = ok && kvp_perf_to_record(run, top) && kvp_cli_warnings_to_record(&warn, top);
		if (!ok) {
			fprintf(stderr, "kvplan perf: out of memory\n");
			rc = KVP_EXIT_FAIL;
			goto out;
		}
		if (c.format == KVP_FORMAT_CSV)
			kvp_write_csv(stdout, recs, nbatch);
		else
			kvp_write_json(stdout, top);
	}
	rc = all_fit ? KVP_EXIT_OK : KVP_EXIT_FAIL;
out:
	for (size_t i = 0; recs && i < nbatch; i++)
		kvp_record_free(recs[i]);
	free(recs);
	kvp_record_free(top);
	free(run);
	free(m);
	return rc;
}
