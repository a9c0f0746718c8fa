/* cmd-budget.c: `kvplan budget`: one GPU's memory budget, the KV pool it
 * leaves and what fits in it, with the arithmetic shown step by step.
 * Also the inverse questions: the longest context that fits B sequences
 * (--max-context) and the utilization needed for B sequences
 * (--target-utilization).  cmd-budget-print.c prints the answer. */
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/cli-options.h"
#include "cli/cmd-budget-print.h"

static const char *const cmd = "budget";

static void help(void)
{
	printf("Usage: kvplan budget --model NAME --gpu NAME [OPTIONS]\n\n"
	       "The memory budget of one GPU (the worst one under tp/pp): usable memory,\n"
	       "weights, activations, overhead, the KV pool, its blocks, the maximum\n"
	       "concurrent tokens and sequences at --context, and whether --batch fits.\n\n"
	       "%s"
	       "Inverse questions:\n"
	       "  --max-context             the longest context at which --batch sequences fit\n"
	       "  --target-utilization      the utilization needed for --batch x --context\n\n"
	       "Example: kvplan budget --model llama-3.1-8b --gpu h100-sxm --context 8192\n",
	       kvp_cli_common_help);
}

int kvp_cmd_budget(int argc, char **argv)
{
	struct kvp_cli_common c;
	kvp_cli_common_init(&c);
	bool ask_ctx = false, ask_util = false;
	int rc;
	const struct kvp_cli_opt opts[] = {
		{.short_name = 'h', .kind = KVP_CLI_OPT_FLAG, .dest = &c.help},
		{.kind = KVP_CLI_OPT_COMMON, .dest = &c},
		{.name = "max-context", .kind = KVP_CLI_OPT_FLAG, .dest = &ask_ctx},
		{.name = "target-utilization", .kind = KVP_CLI_OPT_FLAG, .dest = &ask_util},
		{.kind = KVP_CLI_OPT_END}
	};
	if ((rc = kvp_cli_options_parse_no_operand(cmd, argc, argv, opts, help, &c.help)) !=
	    KVP_CLI_OPTIONS_DONE)
		return rc;
	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_budget *b = malloc(sizeof *b);
	struct kvp_gpu g;
	if (!m || !b) {
		fprintf(stderr, "kvplan budget: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	if ((rc = kvp_cli_load(&c, cmd, m, &g, true)) || (rc = kvp_cli_speculative(&c, cmd, m)))
		goto out;
	struct kvp_error err = {0};
	if (kvp_budget_compute(m, &g, &c.opts, b, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	struct kvp_cli_warnings warn = {0};
	kvp_cli_model_warnings(&warn, m);
	kvp_cli_check_context(&warn, cmd, "--context", b->context, m);
	struct kvp_budget_answers ans = {
		.ask_ctx = ask_ctx, .ask_util = ask_util,
		.max_ctx = ask_ctx ? kvp_budget_max_context(b, b->batch, 1ULL << 40) : 0,
		.util = ask_util ? kvp_budget_utilization_for(b, b->context, b->batch) : 0};
	if (c.format == KVP_FORMAT_TABLE) {
		kvp_budget_print_table(b, &g, &ans);
	} else if (!kvp_budget_print_record(b, &g, &ans, c.format, &warn)) {
		fprintf(stderr, "kvplan budget: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	rc = b->fits ? KVP_EXIT_OK : KVP_EXIT_FAIL;
out:
	free(m);
	free(b);
	return rc;
}
