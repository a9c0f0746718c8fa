/* calibration-write.h: a fit of benchmark runs (calibrate-fit.h) written as
 * a calibration file that `--calibration` reads back (kvplan(1),
 * CALIBRATION FILES): the fitted constants, their spread, the residual, and
 * where they came from (which runs, when, which kvplan).
 *
 * Stance: written through base/atomic-file.h only, so a reader sees the old
 * file or the whole new one and never a file over one of the inputs; every
 * value from an input (a path, a model id, a version) through
 * out/yaml-writer.h's quoting. */
#ifndef KVP_CALIBRATION_WRITE_H
#define KVP_CALIBRATION_WRITE_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "read/bench.h"
#include "time/calibrate-fit.h"

/* Who and what the calibration is for. */
struct kvp_calibration_source {
	const char *gpu;              /* the GPU profile's name */
	const char *model;            /* the model as given */
	const char *engine;           /* the runs' engine, or NULL */
	const char *engine_version;   /* the runs' (or the command line's), or NULL */
	uint32_t tp;
	const char *kvplan_version;
	const char *created;          /* ISO 8601 UTC, e.g. 2026-12-03T17:45:00Z */
};

/* A spread as the file writes it: rounded UP at 4 significant digits
 * (0.0270380 -> 0.02704), so that the constants' own rounding in the file
 * cannot put a time the fit saw outside a band of this width; x <= 0 as
 * it is.  `kvplan calibrate --format json` shows the same figures. */
double kvp_calibration_spread_round(double x);

/* Write the calibration of fit r over runs[0..n) to `path`.  USAGE when
 * path is one of the command's inputs, IO when it cannot be written (the
 * message names it); nothing is left behind on failure. */
kvp_status kvp_calibration_write(const char *path, const struct kvp_calibration_source *src,
				 const struct kvp_calib_result *r, const struct kvp_bench_run *runs,
				 size_t n, struct kvp_error *err);

#endif
