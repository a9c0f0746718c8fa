/* validate-bench.h: an engine's benchmark runs (read/bench.h) set beside the
 * step model's predictions of them: `kvplan validate` and `kvplan plot
 * validate` on vLLM, SGLang, trtllm-bench, genai-perf and AIPerf files, as
 * validate.h does for kvbench's.
 *
 * Stance: nothing here predicts.  Each measured time (a serving run's median
 * TTFT and TPOT, an offline run's prefill, decode step or whole batch) is
 * predicted by kvp_calib_evaluate, the step functions `kvplan calibrate`
 * fits through, on the hardware given (its calibration applied or not) with
 * the engine's time data, as `kvplan perf` charges it.  This adds the
 * judgement: the signed relative error (predicted - measured) / measured,
 * whether measured / predicted lies inside the step model's band (the one
 * perf prints on its times) and whether |error| lies within a tolerance. */
#ifndef KVP_VALIDATE_BENCH_H
#define KVP_VALIDATE_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "memory/budget.h"
#include "read/bench.h"
#include "read/profile.h"
#include "time/calibrate-fit.h"
#include "time/step.h"

/* One observation's judgement (fit->obs[i] holds its run, measure, measured
 * and predicted times). */
struct kvp_bench_vpoint {
	double error;        /* (predicted - measured) / measured */
	bool in_band;        /* band_low <= measured / predicted <= band_high */
	bool within;         /* |error| <= tolerance */
};

struct kvp_bench_validation {
	struct kvp_calib_result *fit;      /* the observations (allocated) */
	struct kvp_bench_vpoint *point;    /* fit->nobs of them (allocated) */
	double tolerance;
	double band_low, band_high;        /* fit's: the band the predictions carry */
	size_t outside, outside_band;      /* observations outside the tolerance, the band */
	double median_abs, max_abs;        /* of |error| */
	size_t worst;                      /* the observation of largest |error| */
};

/* Predict every measured time of runs[0..n) (model m on GPU g, the split and
 * engine of o, the constants of hw; seen[0..nseen): the runs the calibration
 * applied was fitted on, as kvp_calib_evaluate takes them) and judge each
 * against `tolerance`
 * (a fraction, >= 0).  kvp_calib_evaluate's errors (a run's budget, runs
 * that contradict each other, more than KVP_CALIB_MAX_RUNS); NOMEM.  *out
 * is cleared first; free it with kvp_bench_validation_free. */
kvp_status kvp_bench_validate(const struct kvp_model *m, const struct kvp_gpu *g,
			      const struct kvp_budget_opts *o, const struct kvp_perf_hw *hw,
			      const struct kvp_bench_run *runs, size_t n,
			      const struct kvp_calib_seen *seen, size_t nseen, double tolerance,
			      struct kvp_bench_validation *out, struct kvp_error *err);

void kvp_bench_validation_free(struct kvp_bench_validation *v);

#endif
