/* cmd-calibrate-print.h: printing `kvplan calibrate` (cmd-calibrate-print.c),
 * so that kvp_cmd_calibrate reads parse -> read and fit -> write -> print. */
#ifndef KVP_CMD_CALIBRATE_PRINT_H
#define KVP_CMD_CALIBRATE_PRINT_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/cli.h"
#include "read/bench.h"
#include "time/calibrate-fit.h"

struct kvp_calibrate_print {
	const struct kvp_calib_result *fit;
	const struct kvp_bench_run *runs;
	size_t nruns;
	const char *gpu, *model;
	const char *out_path;          /* the file written, or NULL */
	const struct kvp_cli_warnings *warn;
	bool evaluate;                 /* no fit: predictions and residuals only */
	const char *calibration;       /* --calibration, or NULL */
};

/* The table: the constants (uncalibrated -> fitted [spread]), then one line
 * per observation with its residual before and after. */
void kvp_calibrate_print_table(const struct kvp_calibrate_print *p);
/* JSON (one object: constants, observations, medians, warnings) or CSV (one
 * row per observation).  false when memory runs out. */
bool kvp_calibrate_print_records(const struct kvp_calibrate_print *p, enum kvp_format fmt);

#endif
