/* calibrate-fit.h: fit the step model's constants to measured benchmark
 * runs (read/bench.h): `kvplan calibrate`.
 *
 * Stance: the fit never models a step itself.  Each run's prediction is
 * what the step model says (kvp_perf_prefill_dp, kvp_perf_decode_step_dp,
 * kvp_perf_chunked_ttft_dp on a kvp_perf_hw whose constants the fit sets),
 * so the fit follows whatever the step model charges, and a constant the
 * step model does not charge for these runs (its predictions do not move
 * with it) is reported as not supported rather than fitted to noise.
 *
 *   observation  one measured time of a run: a serving run's median TTFT
 *                (one prompt joining B - 1 decodes, as the engine's
 *                scheduler serves it: ttft-load.h) and median
 *                TPOT (a decode step of B at the mean context p + (o-1)/2);
 *                B beyond the sequences the KV pool holds at p + o: those
 *                run, the rest wait and their wait joins the TTFT
 *                (ttft-load.h "queue");
 *                an offline run's prefill of B x p and decode step, or its
 *                whole batch, prefill + (o - 1) decode steps
 *   objective    sum over observations of log(measured / predicted)^2,
 *                minimised on the log of each constant within its bounds
 *                (Nelder-Mead, then a coordinate search to polish, in
 *                turn while either gains), from the uncalibrated values:
 *                hw's, with the engine's time data (kvp_perf_hw_engine)
 *                where no calibration gave them, as kvp_perf_run has them
 *   prefill      where the GPU has a measured GEMM table for the weights
 *                (step-gemm.h), as perf times a prefill by default, the
 *                prefill's constant is a scale on the table's rates and on
 *                prefill_flops_efficiency alike (prefill_flops_scale,
 *                kvp_perf_hw_prefill_scale), 1 uncalibrated: the table's
 *                shape over rows (small chunks slower than large ones) is
 *                measured and kept, the engine's share of it is fitted; a
 *                flat efficiency in its place would throw that shape away
 *                and would not start from perf's own prediction.  Without
 *                a table it is prefill_flops_efficiency itself.
 *   supported    the constants whose log-sensitivity columns are not
 *                (within 5 %) spanned by those before them, in the order
 *                decode_bw_efficiency, prefill_flops_efficiency,
 *                kv_bw_efficiency, step_fixed_s, seq_step_s, prefill_fixed_s,
 *                allreduce_latency_s, request_latency_s (last: a
 *                request's latency outside the steps, which moves the
 *                TTFTs only, kept when the step constants leave the TTFTs
 *                a part it alone explains), and at most observations - 1 of them;
 *                with a list asked for (kvp_calib_opts.want), only the
 *                constants listed are spanned against each other, and one
 *                not listed is supported when those listed leave it apart
 *   spread       each constant's range over the refits that leave one run
 *                out (jackknife), so a constant one run alone decides shows;
 *                and each left-out run's times predicted by its refit, the
 *                largest residual of which is loo_spread
 *
 * Legend: B = sequences in flight, p = prompt tokens, o = output tokens. */
#ifndef KVP_CALIBRATE_FIT_H
#define KVP_CALIBRATE_FIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "memory/budget.h"
#include "read/bench.h"
#include "read/profile.h"
#include "time/calibrate-checks.h"
#include "time/step.h"

enum kvp_calib_param {
	KVP_CALIB_DECODE_BW_EFFICIENCY,
	KVP_CALIB_PREFILL_FLOPS_EFFICIENCY,
	KVP_CALIB_KV_BW_EFFICIENCY,
	KVP_CALIB_STEP_FIXED_S,
	KVP_CALIB_SEQ_STEP_S,
	KVP_CALIB_PREFILL_FIXED_S,
	KVP_CALIB_ALLREDUCE_LATENCY_S,
	KVP_CALIB_REQUEST_LATENCY_S,
	KVP_CALIB_NPARAMS
};

/* The constant's name as kvp_perf_hw and calibration files spell it. */
const char *kvp_calib_param_name(enum kvp_calib_param p);
/* The parameter named `name`, or -1 ("prefill_flops_scale" names the
 * prefill slot, as "prefill_flops_efficiency" does). */
int kvp_calib_param_from_name(const char *name);

enum kvp_calib_obs_kind { KVP_CALIB_TTFT, KVP_CALIB_TPOT, KVP_CALIB_PREFILL, KVP_CALIB_DECODE_STEP,
			KVP_CALIB_LATENCY };
/* "ttft", "tpot", "prefill", "decode_step", "latency" */
const char *kvp_calib_obs_name(enum kvp_calib_obs_kind k);

struct kvp_calib_obs {
	size_t run;                   /* index into the runs */
	enum kvp_calib_obs_kind kind;
	double measured_s;
	double uncalibrated_s;        /* predicted with the constants before the fit */
	double predicted_s;           /* with the fitted constants */
	bool train;                   /* in the fit; false: held out */
	/* the run's requests in flight beyond what the KV pool holds: they
	 * wait (ttft-load.h "queue"; a serving run's TTFT counts their wait,
	 * its TPOT the running ones' step); 0: none wait */
	double queued;
};

struct kvp_calib_opts {
	/* the constants to fit; all false: every supported one */
	bool want[KVP_CALIB_NPARAMS];
	/* runs (by index) left out of the fit and only predicted; NULL: none */
	const bool *held_out;
};

#define KVP_CALIB_MAX_RUNS 512
#define KVP_CALIB_MAX_OBS (2 * KVP_CALIB_MAX_RUNS)

struct kvp_calib_result {
	double start[KVP_CALIB_NPARAMS];    /* the uncalibrated constants */
	double value[KVP_CALIB_NPARAMS];    /* fitted where fitted[], else start */
	double lo[KVP_CALIB_NPARAMS], hi[KVP_CALIB_NPARAMS];   /* the jackknife range */
	bool fitted[KVP_CALIB_NPARAMS];
	bool supported[KVP_CALIB_NPARAMS];  /* the runs can tell it apart */
	struct kvp_calib_obs obs[KVP_CALIB_MAX_OBS];
	size_t nobs, ntrain;
	/* median |measured / predicted - 1| over the training observations,
	 * before and after; over the held-out ones after (0 when none) */
	double median_uncalibrated, median_calibrated, median_held_out;
	/* the leave-one-out spread: the largest |measured / predicted - 1| of
	 * a training run's times predicted by the jackknife refit that left
	 * that run out (0: no refit); what a run the fit did not see strays by */
	double loo_spread;
	/* how many jackknife refits ran: 0 when leaving any training run out
	 * leaves fewer times than constants, so the fit's spread on a run it
	 * did not see is unknown (lo = hi = value; no band is written) */
	size_t loo_refits;
	/* the largest |measured / predicted - 1| of the training times with
	 * the fitted constants (kvp_calib_evaluate: as predicted): the fit's
	 * own spread */
	double latency_spread;
	bool worse;                       /* the fit is worse than the model uncalibrated */
	/* the GPU's prefill is timed with a measured GEMM table (step.h
	 * gemm): the prefill constant is prefill_flops_scale, a factor on the
	 * table's rates and the constant (kvp_perf_hw_prefill_scale), 1
	 * uncalibrated; false: prefill_flops_efficiency itself */
	bool prefill_scale;
	/* the step model's band on these predictions: measured / predicted
	 * time at the engine's fit's 10th and 90th percentiles, as perf prints
	 * it (kvp_perf_hw's time_ratio_low and _high after kvp_perf_hw_engine) */
	double band_low, band_high;
	size_t nwarn;
	char warning[KVP_CALIB_MAX_WARNINGS][KVP_CALIB_WARNING_MAX];
};

/* Fit the constants of hw (the GPU's, before any calibration) to runs[0..n)
 * of model m on GPU g, each run's split and engine terms from `o` (batch,
 * context replaced per run).  INVALID naming the run's file:line when two
 * runs of the same shape contradict each other (the same measure differs by
 * more than 1.5x), when fewer than 2 runs or 2 observations train, or when
 * the constants asked for exceed what the runs support (observations - 1,
 * or not told apart, naming the constant); the budget's errors otherwise.
 * *out is large: allocate it.  Warnings (runs on another GPU than g, of
 * another model or engine version than the first, each named) are noted in
 * out. */
kvp_status kvp_calib_run(const struct kvp_model *m, const struct kvp_gpu *g,
		       const struct kvp_budget_opts *o, const struct kvp_perf_hw *hw,
		       const struct kvp_bench_run *runs, size_t n, const struct kvp_calib_opts *fo,
		       struct kvp_calib_result *out, struct kvp_error *err);

/* No fit: each run's times predicted with hw's constants as they are (a
 * calibration applied, or none), their residuals and median in out
 * (predicted_s = uncalibrated_s; nothing fitted).  One run will do; the
 * errors and warnings are kvp_calib_run's but the counts, and a run that
 * sends the prompts of one the calibration was fitted on, seen[0..nseen)
 * (NULL, 0: none known), dated before it, is named as a repeat as a run of
 * runs would be. */
kvp_status kvp_calib_evaluate(const struct kvp_model *m, const struct kvp_gpu *g,
			      const struct kvp_budget_opts *o, const struct kvp_perf_hw *hw,
			      const struct kvp_bench_run *runs, size_t n,
			      const struct kvp_calib_seen *seen, size_t nseen,
			      struct kvp_calib_result *out, struct kvp_error *err);

/* The constant's name as r's calibration file writes it: the prefill slot
 * is "prefill_flops_scale" where r->prefill_scale. */
const char *kvp_calib_result_param_name(const struct kvp_calib_result *r,
					enum kvp_calib_param p);

/* Whether r knows how far a run it did not see strays: true when nothing
 * was fitted (the residuals are the prediction's) or a jackknife refit
 * ran; false when every refit would have left fewer times than constants
 * (then no band is written: perf keeps its own). */
bool kvp_calib_result_spread_known(const struct kvp_calib_result *r);

/* The constants of r set on hw (what kvp_calibration_apply does with a
 * calibration file written from r). */
void kvp_calib_apply(const struct kvp_calib_result *r, struct kvp_perf_hw *hw);

#endif
