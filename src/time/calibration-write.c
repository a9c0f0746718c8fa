/* calibration-write.c: `kvplan calibrate --out FILE`: the fit as a
 * calibration file (YAML), atomically.  See calibration-write.h. */
#include "time/calibration-write.h"

#include <math.h>
#include <stdio.h>

#include "base/atomic-file.h"
#include "out/yaml-writer.h"

double kvp_calibration_spread_round(double x)
{
	if (!(x > 0))
		return x;
	double q = pow(10, floor(log10(x)) - 3);
	return ceil(x / q * (1 - 1e-12)) * q;
}

kvp_status kvp_calibration_write(const char *path, const struct kvp_calibration_source *src,
				 const struct kvp_calib_result *r, const struct kvp_bench_run *runs,
				 size_t n, struct kvp_error *err)
{
	struct kvp_afile a;
	kvp_status st = kvp_afile_open(&a, path, err);
	if (st)
		return st;
	FILE *f = a.f;
	fprintf(f, "# kvplan calibration: the step model's constants fitted to benchmark runs\n"
		   "# by `kvplan calibrate` (kvplan(1), CALIBRATE; read back by --calibration)\n"
		   "calibration:\n");
	fputs("  - gpu: ", f);
	kvp_yaml_str(f, src->gpu);
	fputc('\n', f);
	kvp_yaml_kv_str(f, 4, "model", src->model);
	if (src->engine && src->engine[0])
		kvp_yaml_kv_str(f, 4, "engine", src->engine);
	if (src->engine_version && src->engine_version[0])
		kvp_yaml_kv_str(f, 4, "engine_version", src->engine_version);
	kvp_yaml_kv_u64(f, 4, "tp", src->tp ? src->tp : 1);
	for (int k = 0; k < KVP_CALIB_NPARAMS; k++)
		if (r->fitted[k])
			kvp_yaml_kv_num(f, 4, kvp_calib_result_param_name(r, k), r->value[k]);
	/* the band of `kvplan size`, and of perf and validate: the largest
	 * residual the fit left; none when no jackknife refit could leave a
	 * run out (the residuals of an all but exact fit say nothing of a run
	 * it did not see): the reader then keeps perf's own band */
	if (kvp_calib_result_spread_known(r))
		kvp_yaml_kv_num(f, 4, "latency_spread",
				kvp_calibration_spread_round(r->latency_spread));
	else
		fputs("    # no latency_spread: no refit could leave a run out (each would leave\n"
		      "    # fewer times than constants), so perf keeps its own band\n", f);
	/* each run predicted by the refit that left it out: perf's band */
	if (r->loo_spread > 0)
		kvp_yaml_kv_num(f, 4, "latency_spread_loo", kvp_calibration_spread_round(r->loo_spread));
	kvp_yaml_kv_u64(f, 4, "points", r->ntrain);
	kvp_yaml_kv_num(f, 4, "residual_median", r->median_calibrated);
	kvp_yaml_kv_num(f, 4, "residual_median_uncalibrated", r->median_uncalibrated);
	if (kvp_calib_result_spread_known(r))
		kvp_yaml_map(f, 4, "spread");
	for (int k = 0; k < KVP_CALIB_NPARAMS && kvp_calib_result_spread_known(r); k++)
		if (r->fitted[k])
			fprintf(f, "      %s: [%.9g, %.9g]\n", kvp_calib_result_param_name(r, k), r->lo[k],
				r->hi[k]);
	kvp_yaml_map(f, 4, "source");
	kvp_yaml_kv_str(f, 6, "tool", "kvplan calibrate");
	kvp_yaml_kv_str(f, 6, "kvplan_version", src->kvplan_version);
	kvp_yaml_kv_str(f, 6, "created", src->created);
	kvp_yaml_map(f, 6, "runs");
	for (size_t i = 0; i < n; i++) {
		char where[600];
		snprintf(where, sizeof where, "%s:%d", runs[i].path, runs[i].line);
		fputs("        - {run: ", f);
		kvp_yaml_str(f, where);
		fprintf(f, ", format: %s", kvp_bench_format_name(runs[i].format));
		bool held = false;
		for (size_t k = 0; k < r->nobs; k++)
			held |= r->obs[k].run == i && !r->obs[k].train;
		if (held)
			fputs(", held_out: true", f);
		if (runs[i].date[0]) {
			fputs(", date: ", f);
			kvp_yaml_str(f, runs[i].date);
		}
		/* the prompts it sent (bench.h prompts_hash), for validate to
		 * name a later run that sends them again (calibration-runs.h) */
		if (runs[i].prompts_vary) {
			if (runs[i].model_id[0]) {
				fputs(", model_id: ", f);
				kvp_yaml_str(f, runs[i].model_id);
			}
			fprintf(f, ", prompts: %llu, prompts_hash: \"%016llx\"",
				(unsigned long long)runs[i].prompts_listed,
				(unsigned long long)runs[i].prompts_hash);
		}
		fputs("}\n", f);
	}
	return kvp_afile_commit(&a, err);
}
