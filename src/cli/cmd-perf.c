/* cmd-perf.c: `kvplan perf`: time to first token, time per output token and
 * tokens per second of one replica as the batch grows, until memory runs out;
 * with --kv-offload, the KV that lives off the GPU and the link it crosses
 * every step; prefix reuse against recompute; and the context-doubling point.
 * The table shows each term of the arithmetic; JSON and CSV carry the rows
 * (cmd-perf-print.c prints them; cmd-perf-disagg.c runs --disagg). */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli-calibration.h"
#include "cli/cli-options.h"
#include "cli/cmd-perf-disagg.h"
#include "cli/cmd-perf-print.h"
#include "time/calibration.h"
#include "time/perf.h"
#include "base/units.h"

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
	       "  --calibration FILE        a calibration: kvplan calibrate --out, a table, or\n"
	       "                            kvbench --out; twice: an engine calibration and a\n"
	       "                            kvbench run, whose figure is the KV read (kvplan(1))\n"
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
	const char *offload_arg = NULL, *link_arg = NULL;
	struct kvp_cli_calibration calib = {0};
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
		{.name = "calibration", .kind = KVP_CLI_OPT_PARSE, .dest = &calib,
		 .parse = kvp_cli_calibration_parse},
		{.name = "decode-bw-efficiency", .kind = KVP_CLI_OPT_PARSE, .dest = &decode_eff,
		 .parse = decode_eff_parse},
		{.name = "prefill-flops-efficiency", .kind = KVP_CLI_OPT_PARSE, .dest = &prefill_eff,
		 .parse = prefill_eff_parse},
		{.kind = KVP_CLI_OPT_GROUP, .dest = &dis, .group = disagg_options, .group_fn = disagg_option},
		{.kind = KVP_CLI_OPT_END}
	};
	if ((rc = kvp_cli_options_parse_no_operand(cmd, argc, argv, opts, help, &c.help)) !=
	    KVP_CLI_OPTIONS_DONE)
		return rc;
	if (!prompt)
		prompt = c.opts.context ? c.opts.context : 1024;
	if (prompt > (1ULL << 40) || output > (1ULL << 40))
		return kvp_cli_usage_error(cmd, "--prompt/--output: too many tokens");
	if (fraction >= 0 && !offload_arg)
		return kvp_cli_usage_error(cmd, "--offload-fraction needs --kv-offload");

	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_perf_result *run = malloc(sizeof *run);
	struct kvp_gpu g;
	struct kvp_error err = {0};
	struct kvp_perf_hw hw;
	struct kvp_calibration cal = {0};
	struct kvp_perf_opts po = {.prompt = prompt, .output = output, .nbatch = nbatch,
				   .prefix = prefix,
				   .offload = {.tier = KVP_OFFLOAD_NONE, .fraction = -1}};
	struct kvp_offload *off = &po.offload;
	memcpy(po.batches, batches, nbatch * sizeof batches[0]);
	if (!m || !run) {
		fprintf(stderr, "kvplan perf: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	if (dis.disagg) {
		if (offload_arg || calib.n)
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
	struct kvp_cli_warnings warn = {0};
	if ((rc = kvp_cli_calibration_load(cmd, &calib, &g, &cal, &warn)))
		goto out;
	kvp_calibration_apply(&cal, &hw);
	po.calibration = kvp_cli_calibration_label(&calib, &cal);
	po.calibration_kernel = kvp_cli_calibration_kernel(&cal);
	if (decode_eff > 0)
		hw.decode_bw_efficiency = decode_eff, hw.efficiency_given = true;
	if (prefill_eff > 0)
		kvp_perf_hw_prefill_efficiency(&hw, prefill_eff);
	if (offload_arg) {
		if (kvp_offload_parse(offload_arg, &hw.host_link, off, &err)) {
			rc = kvp_cli_error(cmd, &err);
			goto out;
		}
		off->fraction = fraction;
	}
	kvp_cli_model_warnings(&warn, m);
	kvp_cli_check_context(&warn, cmd, "--prompt + --output", prompt + output, m);
	if (hw.flops_warning[0] && warn.n < KVP_CLI_MAX_WARNINGS) {
		/* the GPU has no peak for the weights' format: the bf16 one stands in */
		snprintf(warn.code[warn.n], sizeof warn.code[0], "peak_dtype_assumed");
		snprintf(warn.message[warn.n], sizeof warn.message[0], "%s", hw.flops_warning);
		fprintf(stderr, "kvplan %s: warning: %s\n", cmd, warn.message[warn.n]);
		warn.n++;
	}
	if (kvp_perf_run(m, &g, &c.opts, &hw, &po, run, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}

	if (run->ctx.moe_warning[0] && warn.n < KVP_CLI_MAX_WARNINGS) {
		/* the engine runs the measured MoE kernels, the table has no curve
		 * for this deployment: the roofline keeps the experts, the band widened */
		snprintf(warn.code[warn.n], sizeof warn.code[0], "moe_table_shape");
		snprintf(warn.message[warn.n], sizeof warn.message[0], "%s", run->ctx.moe_warning);
		fprintf(stderr, "kvplan %s: warning: %s\n", cmd, warn.message[warn.n]);
		warn.n++;
	}
	/* an overflow to infinity: said, nothing printed (perf.h) */
	if (kvp_perf_check_finite(run, &err)) {
		fprintf(stderr, "kvplan perf: %s; nothing printed\n", err.msg);
		rc = KVP_EXIT_INPUT;
		goto out;
	}
	if (c.format == KVP_FORMAT_TABLE) {
		kvp_perf_print_table(run, &g, &cal, &calib, c.spec_draft, c.opts.speculative);
	} else if (!kvp_perf_print_records(run, c.format, &warn)) {
		fprintf(stderr, "kvplan perf: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	rc = run->all_fit ? KVP_EXIT_OK : KVP_EXIT_FAIL;
out:
	free(run);
	free(m);
	return rc;
}
