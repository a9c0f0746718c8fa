/* size-calibrate.c: a calibration into the purchase search's options
 * (size-calibrate.h). */
#include "size/size-calibrate.h"

#include "time/calibration.h"

kvp_status kvp_size_calibrate(const char *path, const struct kvp_gpu *g, bool spread_given,
			      struct kvp_size_opts *so, const char **spread_from,
			      struct kvp_error *err)
{
	struct kvp_calibration cal;
	kvp_status st = kvp_calibration_load(path, g, &cal, err);
	if (st)
		return st;
	if (!(so->decode_bw_efficiency > 0) && cal.decode_bw_efficiency > 0)
		so->decode_bw_efficiency = cal.decode_bw_efficiency;
	if (!(so->prefill_flops_efficiency > 0) && cal.prefill_flops_efficiency > 0)
		so->prefill_flops_efficiency = cal.prefill_flops_efficiency;
	if (!spread_given && cal.points) {
		so->latency_spread = cal.latency_spread;
		*spread_from = "calibration";
	}
	return KVP_STATUS_OK;
}
