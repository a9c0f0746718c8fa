/* calibration.h: what a kvbench run, or a table written by hand, says about
 * a machine (format: kvplan(1), CALIBRATION FILES): the efficiencies that
 * replace the perf model's defaults.  Above both perf and validate: it reads
 * a kvbench run through validate's fit and applies to perf's hardware. */
#ifndef KVP_CALIBRATION_H
#define KVP_CALIBRATION_H

#include <stddef.h>

#include "base/error.h"
#include "time/perf.h"
#include "read/profile.h"

/* Efficiencies measured by kvbench, or written by hand (format: kvplan(1),
 * CALIBRATION FILES).  A value of 0 was not given. */
struct kvp_calibration {
	char gpu[KVP_NAME_MAX];          /* the entry used, or the device kvbench ran on */
	double decode_bw_efficiency;
	double prefill_flops_efficiency;
	/* the engine's fixed costs and collective latency (kvp_perf_hw's, in
	 * seconds); 0: not given */
	double step_fixed_s;
	double prefill_fixed_s;
	double seq_step_s;
	double allreduce_latency_s;
	double kv_bw_efficiency;         /* the KV reads' share of the bandwidth; 0: not given */
	size_t points;                   /* kvbench points the decode figure is the median of */
	/* a kvbench run only: the largest |measured / predicted - 1| over those
	 * large points, each predicted at the fitted efficiency: how far a
	 * decode step strayed from the calibrated model (0: not measured).  The
	 * largest, not a percentile: a run holds a handful of large points, too
	 * few for a tail, and the conservative end should cover all it saw. */
	double latency_spread;
};

/* Read a calibration file (YAML or CSV; kvplan's table or kvbench --out) for
 * GPU g.  Errors carry file:line:col.  INVALID when the file holds no entry
 * for g, when a kvbench run is a CPU run or has no validated, timed point, or
 * when an efficiency is outside (0, 1]. */
kvp_status kvp_calibration_load(const char *path, const struct kvp_gpu *g,
				struct kvp_calibration *out, struct kvp_error *err);
/* Apply what cal gives (non-zero values) to hw. */
void kvp_calibration_apply(const struct kvp_calibration *cal, struct kvp_perf_hw *hw);

#endif
