/* calibrate-checks.h: what benchmark runs say about themselves, before
 * `kvplan calibrate` fits them or `kvplan validate` predicts them
 * (calibrate-fit.c): runs on another GPU, model or engine version than the
 * rest, runs that send an earlier run's prompts again to a server that may
 * have kept its prefix cache, and bursts.
 *
 * Stance: said, not modelled: warnings noted in the result, never an error
 * (runs that contradict each other are calibrate-fit.c's error). */
#ifndef KVP_CALIBRATE_CHECKS_H
#define KVP_CALIBRATE_CHECKS_H

#include <stddef.h>
#include <stdint.h>

#include "memory/budget.h"
#include "read/bench.h"
#include "read/profile.h"

#define KVP_CALIB_MAX_WARNINGS 8
#define KVP_CALIB_WARNING_MAX 1280  /* bytes of one warning, its NUL included */

/* A run a calibration was fitted on, as `kvplan calibrate` records it in
 * the file's source (calibration-write.c; read back by
 * calibration-runs.c): enough to tell that a run predicted with that
 * calibration sends the same prompts again (bench.h prompts_hash). */
struct kvp_calib_seen {
	char run[600];                  /* "file:line" as the calibration names it */
	char date[32];
	char model_id[KVP_NAME_MAX];    /* "" where the run's file recorded none */
	uint64_t prompts_listed, prompts_hash;
};

/* The warnings about runs[0..n) (each named by file:line) appended to
 * warning[*nwarn ..), at most KVP_CALIB_MAX_WARNINGS in all:
 * a run on another GPU than g, of another model than the first, on another
 * engine version than o's or the first run's that records one; a run that
 * sends the prompts of a run dated before it (one of runs or of
 * seen[0..nseen), the runs a calibration applied was fitted on); a burst. */
void kvp_calib_check_runs(const struct kvp_gpu *g, const struct kvp_budget_opts *o,
			  const struct kvp_bench_run *runs, size_t n,
			  const struct kvp_calib_seen *seen, size_t nseen,
			  char (*warning)[KVP_CALIB_WARNING_MAX], size_t *nwarn);

#endif
