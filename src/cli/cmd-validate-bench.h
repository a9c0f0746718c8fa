/* cmd-validate-bench.h: `kvplan validate` on an engine's benchmark files
 * (cmd-validate-bench.c): cmd-validate.c parses the options and tells the
 * files' kind; this reads the runs, predicts and prints. */
#ifndef KVP_CMD_VALIDATE_BENCH_H
#define KVP_CMD_VALIDATE_BENCH_H

#include <stddef.h>

#include "cli/cli.h"
#include "cli/cli-calibration.h"
#include "read/bench.h"

struct kvp_validate_bench_args {
	struct kvp_cli_common *c;      /* --gpu, --model, --engine, --tp ..., --format */
	char *const *files;            /* FILE or FILE#SHAPE operands */
	size_t nfiles;
	struct kvp_bench_given given;  /* --batch, --prompt, --output */
	const struct kvp_cli_calibration *calibration;  /* --calibration's files (n 0: none) */
	double tolerance;              /* --tolerance */
};

/* Each measured time of the files beside the step model's prediction, as
 * the table or out/output.c's JSON or CSV.  Exit 0 when every time lies
 * within the tolerance, 1 when one does not, 2 usage, 3 an invalid file. */
int kvp_validate_bench(const struct kvp_validate_bench_args *a);

#endif
