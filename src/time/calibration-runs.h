/* calibration-runs.h: the runs a `kvplan calibrate` file was fitted on, as
 * its source records them (calibration-write.c: each run's file:line, date,
 * model id and the prompts it sent), read back so that validate can name a
 * run that sends a fit run's prompts again to a server that kept its
 * prefix cache (calibrate-fit.c check_repeats).
 *
 * Stance: only what the runs' prompts need is read; the rest of the file
 * is kvp_calibration_load's (calibration.h), which reads it first. */
#ifndef KVP_CALIBRATION_RUNS_H
#define KVP_CALIBRATION_RUNS_H

#include <stddef.h>

#include "base/error.h"
#include "read/profile.h"
#include "time/calibrate-checks.h"

/* The runs of the entry for GPU g (kvp_calibration_table's: the entry
 * kvp_calibration_load applies) in the YAML calibration at path whose prompts are recorded (prompts and
 * prompts_hash), appended to *v (grown with realloc; *n counts them).  A
 * kvbench run, a CSV table, or an entry without source.runs adds none.  A
 * run item that records prompts but not both keys, or a prompts_hash not
 * 16 hex digits, is INVALID at its file:line:col naming the field; the
 * file's own errors as kvp_calibration_load gives them; NOMEM.  On error
 * *v and *n keep what was read before. */
kvp_status kvp_calibration_runs_load(const char *path, const struct kvp_gpu *g,
				     struct kvp_calib_seen **v, size_t *n,
				     struct kvp_error *err);

#endif
