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
	double request_latency_s;        /* each request's, outside the steps (step.h) */
	double kv_bw_efficiency;         /* the KV reads' share of the bandwidth; 0: not given */
	/* kvplan calibrate's prefill constant where a measured GEMM table times
	 * the GPU's prefill: a factor on the table's rates and on
	 * prefill_flops_efficiency (kvp_perf_hw_prefill_scale); 0: not given */
	double prefill_flops_scale;
	size_t points;                   /* kvbench points the decode figure is the median of */
	/* a kvbench run only: the largest |measured / predicted - 1| over those
	 * large points, each predicted at the fitted efficiency: how far a
	 * decode step strayed from the calibrated model (0: not measured).  The
	 * largest, not a percentile: a run holds a handful of large points, too
	 * few for a tail, and the conservative end should cover all it saw.
	 * A `kvplan calibrate` file: the fit's largest residual; -1 when the
	 * file has none (the fit could not refit with a run left out, so it
	 * sets no band: kvp_calibration_apply keeps perf's own). */
	double latency_spread;
	/* a `kvplan calibrate` fit: the largest |measured / predicted - 1| of
	 * each run predicted by the refit that left it out (0: not recorded) */
	double latency_spread_loo;
	bool kernel;                     /* read from a kvbench run: its decode figure is
					  * the paged-decode kernel's KV read */
	/* two files composed (kvp_calibration_load_files): the engine
	 * calibration's path and the kvbench run's (borrowed; NULL: one file);
	 * kv_from_kernel: kv_bw_efficiency is the kvbench figure;
	 * kernel_unused: the engine calibration fitted kv_bw_efficiency
	 * itself, which won, so the kvbench figure was not used */
	const char *engine_path, *kernel_path;
	bool kv_from_kernel, kernel_unused;
};

/* Read a calibration file (YAML or CSV; kvplan's table or kvbench --out) for
 * GPU g.  Errors carry file:line:col.  INVALID when the file holds no entry
 * for g, when a kvbench run is a CPU run or has no validated, timed point, or
 * when an efficiency is outside (0, 1]. */
kvp_status kvp_calibration_load(const char *path, const struct kvp_gpu *g,
				struct kvp_calibration *out, struct kvp_error *err);
/* The entry of a calibration table (`calibration:`'s list, or one entry;
 * kvplan(1), CALIBRATION FILES) in doc that applies to GPU g: the first
 * with g's name or none, read into out (cleared by the caller) as
 * kvp_calibration_load reads it, its node in *entry (entry may be NULL).
 * kvp_calibration_load's errors for a table. */
struct kvp_doc;
struct kvp_node;
kvp_status kvp_calibration_table(const struct kvp_doc *doc, const struct kvp_node *list,
				 const struct kvp_gpu *g, struct kvp_calibration *out,
				 const struct kvp_node **entry, struct kvp_error *err);

/* At most this many files: one engine calibration, one kvbench run. */
#define KVP_CALIBRATION_MAX_FILES 2

/* Read paths[0..n) (n 1 or 2) for GPU g into out.  One file: as
 * kvp_calibration_load.  Two: one must be a kvbench run (the kernel's) and
 * the other a table (an engine calibration, `kvplan calibrate --out`, or
 * written by hand); out is the engine calibration's constants (the weights'
 * decode_bw_efficiency, prefill_flops_efficiency, the fixed costs, the
 * all-reduce latency, latency_spread) with kv_bw_efficiency the kvbench
 * run's decode figure, unless the engine calibration fitted its own
 * kv_bw_efficiency: that wins, and kernel_unused says so.  USAGE naming
 * "calibration" when both files are of one kind or n is not 1 or 2; the
 * loaders' errors otherwise. */
kvp_status kvp_calibration_load_files(const char *const *paths, size_t n,
				      const struct kvp_gpu *g, struct kvp_calibration *out,
				      struct kvp_error *err);
/* Apply what cal gives (non-zero values) to hw.  An engine calibration
 * (not a kvbench run) that measured points sets the band on times to
 * 1 -/+ s (hw's time_ratio_low and _high, KVP_PERF_GIVEN_BAND), s the
 * larger of its leave-one-out spread (latency_spread_loo: how far a run the
 * fit did not see strayed) and latency_spread (the largest |measured /
 * predicted - 1| its fit left), so the band holds every time the fit saw
 * and is never narrower than that.  A spread of 1 or more cannot bound the low end
 * by subtraction; the low end is then 1 / (1 + spread). */
void kvp_calibration_apply(const struct kvp_calibration *cal, struct kvp_perf_hw *hw);

#endif
