/* cmd-perf-print.h: printing a `kvplan perf` run (cmd-perf-print.c), so that
 * kvp_cmd_perf reads parse -> kvp_perf_run -> print. */
#ifndef KVP_CMD_PERF_PRINT_H
#define KVP_CMD_PERF_PRINT_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/cli-calibration.h"
#include "time/calibration.h"
#include "cli/cli.h"
#include "time/perf.h"

/* Seconds as "1.234 s", "12.34 ms" or "56.7 us" ("-" when not finite), as
 * both halves of `kvplan perf` print them (cmd-perf-print.c). */
void kvp_perf_fmt_s(double s, char *buf, size_t size);

/* The table of `kvplan perf` on stdout: the hardware, the prefill and decode
 * arithmetic, one row per batch, offload, context doubling and prefix reuse.
 * g: the GPU the run used; cal and cf: the --calibration files read and
 * their composition (cf->n 0 when none); spec_draft and sp: the speculative draft as
 * named on the command line and parsed (unused when the rows have none). */
void kvp_perf_print_table(const struct kvp_perf_result *run, const struct kvp_gpu *g,
			  const struct kvp_calibration *cal, const struct kvp_cli_calibration *cf,
			  const char *spec_draft, const struct kvp_speculative *sp);

/* The run as JSON (with the warnings) or CSV (one row per batch) on stdout;
 * false, having printed nothing, when memory runs out. */
bool kvp_perf_print_records(const struct kvp_perf_result *run, enum kvp_format format,
			    const struct kvp_cli_warnings *warn);

#endif
