/* fuzz-results.c: libFuzzer target for kvbench results read back by kvplan:
 * the calibration reader (calibration.h, kvp_calibration_load: kvplan's table, CSV,
 * or kvbench --out YAML, for an H100 SXM) and the validate chart's reader
 * (plot.h, kvp_plot_validate) and `kvplan validate`'s (validate.h: load,
 * fit, evaluate; every loaded point predicted, finite).  The input's first byte picks the suffix
 * (even: .yaml, odd: .csv), the rest is the file.  A calibration that loads
 * has efficiencies in (0, 1].  Build: fuzz/run.sh. */
#include <math.h>
#include <stdint.h>

#include "fuzz-common.h"
#include "time/calibration.h"
#include "time/perf.h"
#include "plot/plot.h"
#include "time/validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kvp_gpu g;
	static int init;
	if (!init) {
		struct kvp_error e = {0};
		if (kvp_gpu_load("h100-sxm", &g, &e))
			abort();
		init = 1;
	}
	const char *named = fuzz_write_picked("results", "yaml", "csv", data, size);
	if (!named)
		return 0;
	bool csv = data[0] & 1;
	struct kvp_calibration cal;
	memset(&cal, 0, sizeof cal);
	struct kvp_error err = {0};
	kvp_status st = kvp_calibration_load(named, &g, &cal, &err);
	if (st) {
		FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
	} else {
		FUZZ_ASSERT(cal.decode_bw_efficiency >= 0 && cal.decode_bw_efficiency <= 1 &&
				    cal.prefill_flops_efficiency >= 0 &&
				    cal.prefill_flops_efficiency <= 1,
			    "an efficiency outside [0, 1]");
	}
	struct kvp_validation v = {0};
	memset(&err, 0, sizeof err);
	st = kvp_validation_load(&v, named, NULL, &err);
	if (st) {
		FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
	} else {
		size_t used;
		double eff = kvp_validation_fit(&v, &used);
		FUZZ_ASSERT(used <= v.n && isfinite(eff) && eff >= 0, "a fit that is not a number");
		kvp_validation_evaluate(&v, eff > 0 ? eff : 0, 0.1, 0.01);
		for (size_t i = 0; i < v.n; i++)
			FUZZ_ASSERT(!isnan(v.points[i].error), "a point without an error");
		size_t groups = kvp_validation_fit_by(&v, KVP_FIT_SHAPE);
		FUZZ_ASSERT(groups <= v.n, "more groups than points");
		kvp_validation_evaluate(&v, -1, 0.1, 0.01);
		FUZZ_ASSERT(kvp_validation_apply_fit(&v, &v, KVP_FIT_DTYPE, 0.5) == 0,
			    "a point whose own group is missing");
	}
	kvp_validation_free(&v);
	if (!csv) {
		struct kvp_plot *p = kvp_plot_new("fuzz");
		if (!p)
			return 0;
		const char *paths[] = {named};
		memset(&err, 0, sizeof err);
		st = kvp_plot_validate(p, paths, 1, NULL, 0, 0.2, &err);
		if (st)
			FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
		kvp_plot_free(p);
	}
	return 0;
}
