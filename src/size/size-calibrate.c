/* size-calibrate.c: a calibration into the purchase search's options
 * (size-calibrate.h). */
#include "size/size-calibrate.h"

#include <math.h>

void kvp_size_calibration_apply(const struct kvp_calibration *cal, bool spread_given,
				struct kvp_size_opts *so, const char **spread_from)
{
	if (!(so->decode_bw_efficiency > 0) && cal->decode_bw_efficiency > 0)
		so->decode_bw_efficiency = cal->decode_bw_efficiency;
	if (!(so->prefill_flops_efficiency > 0) && cal->prefill_flops_efficiency > 0)
		so->prefill_flops_efficiency = cal->prefill_flops_efficiency;
	if (!(so->kv_bw_efficiency > 0) && cal->kv_bw_efficiency > 0)
		so->kv_bw_efficiency = cal->kv_bw_efficiency;
	/* the fixed costs an engine calibration fitted, charged as perf does
	 * (size.c: kvp_calibration_apply on each configuration's step model) */
	so->calibration = *cal;
	so->calibration.engine_path = so->calibration.kernel_path = NULL;   /* borrowed */
	so->calibrated = true;
	/* the spread as perf's band takes it (calibration.c): the larger of the
	 * fit's own and its leave-one-out spread, never narrower than measured */
	if (!spread_given && cal->points && cal->latency_spread >= 0) {
		so->latency_spread = fmax(cal->latency_spread, cal->latency_spread_loo);
		*spread_from = "calibration";
	}
}

kvp_status kvp_size_calibrate(const char *const *paths, size_t n, const struct kvp_gpu *g,
			      bool spread_given, struct kvp_size_opts *so,
			      const char **spread_from, const char **names,
			      struct kvp_error *err)
{
	struct kvp_calibration cal;
	kvp_status st = kvp_calibration_load_files(paths, n, g, &cal, err);
	if (st)
		return st;
	/* the names size's JSON gives them, as the CLI's (cli-calibration.c
	 * kvp_cli_calibration_label, _kernel): the engine calibration, or the
	 * one file given; the kvbench run beside an engine calibration */
	names[0] = cal.engine_path ? cal.engine_path : paths[0];
	names[1] = cal.kernel_path;
	kvp_size_calibration_apply(&cal, spread_given, so, spread_from);
	return KVP_STATUS_OK;
}
