/* cmd-budget-print.h: printing `kvplan budget` (cmd-budget-print.c), so
 * that kvp_cmd_budget reads parse -> kvp_budget_compute -> print. */
#ifndef KVP_CMD_BUDGET_PRINT_H
#define KVP_CMD_BUDGET_PRINT_H

#include <stdbool.h>
#include <stdint.h>

#include "memory/budget.h"
#include "cli/cli.h"

/* The inverse questions and their answers: --max-context (the longest
 * context for the batch) and --target-utilization (the utilization the
 * batch x context needs). */
struct kvp_budget_answers {
	bool ask_ctx, ask_util;
	uint64_t max_ctx;
	double util;
};

/* b as `kvplan budget` prints its table on stdout (g: the GPU it is on). */
void kvp_budget_print_table(const struct kvp_budget *b, const struct kvp_gpu *g,
			    const struct kvp_budget_answers *a);

/* b as one JSON (with the warnings) or CSV record on stdout; false, having
 * printed nothing, when memory runs out. */
bool kvp_budget_print_record(const struct kvp_budget *b, const struct kvp_gpu *g,
			     const struct kvp_budget_answers *a, enum kvp_format format,
			     const struct kvp_cli_warnings *warn);

#endif
