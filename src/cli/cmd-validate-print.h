/* cmd-validate-print.h: printing `kvplan validate` (cmd-validate-print.c),
 * so that kvp_cmd_validate reads parse -> load and evaluate -> print. */
#ifndef KVP_CMD_VALIDATE_PRINT_H
#define KVP_CMD_VALIDATE_PRINT_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/cli.h"
#include "time/validate.h"

/* What the statistics cannot show: an in-sample fit with as many
 * efficiencies as points reproduces them by construction; a CPU capacity
 * point compares floor((limit - weights) / block) with the blocks malloc gave
 * under that same limit, so it checks the allocator, not the budget. */
struct kvp_validate_caveats {
	bool in_sample;
	size_t parameters, points, exact;   /* kvp_validation_fit_degrees */
	size_t capacity_cpu;
};

/* The caveats of v: in_sample when the efficiencies were fitted to v itself
 * (by: how they were grouped). */
void kvp_validate_caveats_find(struct kvp_validation *v, bool in_sample, enum kvp_fit_by by,
			       struct kvp_validate_caveats *c);
/* The caveats as warnings, on stderr in every format. */
void kvp_validate_caveats_warn(const struct kvp_validate_caveats *c);

/* Whether a judged point lies outside its tolerance (large_only: of the
 * decode points, only the large ones count). */
bool kvp_validate_failed(const struct kvp_validation *v, bool large_only);

/* How the comparison was made, as the output says it. */
struct kvp_validate_print_opts {
	double eff;              /* > 0: one efficiency; < 0: one per group; 0: each basis' default */
	const char *eff_source;  /* where the efficiency came from */
	size_t fit_points;       /* points a fit took the median of; 0: none */
	double tol, cap_tol;     /* --tolerance, --capacity-tolerance */
	bool large_only;         /* --large-only */
};

/* v on stdout as fmt says: the table, or JSON or CSV records.  Returns
 * KVP_EXIT_OK, or KVP_EXIT_FAIL after "out of memory" on stderr. */
int kvp_validate_print(const struct kvp_validation *v, enum kvp_format fmt,
		       const struct kvp_validate_print_opts *o, const struct kvp_validate_caveats *cv);

#endif
