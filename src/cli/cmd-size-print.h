/* cmd-size-print.h: printing `kvplan size` (cmd-size-print.c), so that
 * kvp_cmd_size reads parse -> kvp_size_search_space and rank -> print. */
#ifndef KVP_CMD_SIZE_PRINT_H
#define KVP_CMD_SIZE_PRINT_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/cli.h"
#include "size/size.h"

/* What `kvplan size` found, as its printers need it. */
struct kvp_size_answer {
	const struct kvp_model *m;
	const struct kvp_workload *w;
	enum kvp_engine engine;              /* the engine planned with */
	const struct kvp_size_demand *d;
	const struct kvp_size_cost *cost;
	const struct kvp_size_config *cfg;   /* ranked; n shown (the front only with --pareto) */
	size_t n;
	size_t considered, front;            /* configurations searched; on the Pareto front */
	bool pareto_only, disagg;            /* --pareto; --disagg given (a P:D column) */
	bool seqs_axis;                      /* --max-num-seqs given (a max_num_seqs column) */
	bool simulate;                       /* --simulate given (a sim column) */
	const struct kvp_size_config *best;   /* the cheapest that meets, or NULL */
	const struct kvp_size_config *fewest; /* the fewest GPUs that meet, or NULL */
	bool has_emit, prefix;               /* --emit emit; the workload shares a prefix */
	enum kvp_engine emit;
	double latency_spread;               /* --latency-spread, or --calibration's */
	const char *latency_spread_from;     /* "default", "given" or "calibration" */
	const struct kvp_cli_warnings *warn; /* JSON's "warnings" (the model file's) */
	/* JSON's "calibration" and "calibration_kernel": the --calibration
	 * files applied (kvp_cli_calibration_label, _kernel); NULL: none */
	const char *calibration, *calibration_kernel;
};

/* a as `kvplan size` prints its table on stdout, with --emit's command. */
void kvp_size_print_table(const struct kvp_size_answer *a);

/* a as CSV rows (one a configuration) or as one JSON record on stdout;
 * false when memory runs out (CSV: having printed nothing). */
bool kvp_size_print_record(const struct kvp_size_answer *a, enum kvp_format format);

#endif
