/* cmd-perf-disagg.h: the --disagg half of `kvplan perf` (cmd-perf-disagg.c):
 * its options, gathered while cmd-perf.c parses, and the report. */
#ifndef KVP_CMD_PERF_DISAGG_H
#define KVP_CMD_PERF_DISAGG_H

#include "cli/cli.h"
#include "time/perf.h"

/* Option ids, after cmd-perf.c's own. */
enum {
	KVP_OPT_DISAGG = KVP_OPT_LAST + 100, KVP_OPT_PREFILL_GPU, KVP_OPT_DECODE_GPU,
	KVP_OPT_PREFILL_TP, KVP_OPT_DECODE_TP, KVP_OPT_PREFILL_DP, KVP_OPT_DECODE_DP,
	KVP_OPT_PREFILL_EP, KVP_OPT_DECODE_EP, KVP_OPT_KV_LINK
};

#define KVP_PERF_DISAGG_OPTIONS                                                        \
	{"disagg", required_argument, NULL, KVP_OPT_DISAGG},                           \
	{"prefill-gpu", required_argument, NULL, KVP_OPT_PREFILL_GPU},                 \
	{"decode-gpu", required_argument, NULL, KVP_OPT_DECODE_GPU},                   \
	{"prefill-tp", required_argument, NULL, KVP_OPT_PREFILL_TP},                   \
	{"decode-tp", required_argument, NULL, KVP_OPT_DECODE_TP},                     \
	{"prefill-dp", required_argument, NULL, KVP_OPT_PREFILL_DP},                   \
	{"decode-dp", required_argument, NULL, KVP_OPT_DECODE_DP},                     \
	{"prefill-ep", required_argument, NULL, KVP_OPT_PREFILL_EP},                   \
	{"decode-ep", required_argument, NULL, KVP_OPT_DECODE_EP},                     \
	{"kv-link", required_argument, NULL, KVP_OPT_KV_LINK}

extern const char kvp_perf_disagg_help[];

struct kvp_perf_disagg_args {
	const char *disagg, *prefill_gpu, *decode_gpu, *kv_link;
	uint32_t prefill_tp, decode_tp, prefill_dp, decode_dp, prefill_ep, decode_ep; /* 0: common */
};

/* Take one --disagg option; 0 handled, 1 not ours, else the exit code. */
int kvp_perf_disagg_option(struct kvp_perf_disagg_args *a, int opt, const char *arg);

/* Run and print `kvplan perf --disagg` (c: the common options; hw_over: the
 * efficiency overrides, 0 when not given).  Returns the exit code. */
int kvp_perf_disagg_main(const struct kvp_cli_common *c, const struct kvp_model *m,
			 const struct kvp_perf_disagg_args *a, const struct kvp_perf_opts *po,
			 double decode_eff, double prefill_eff);

#endif
