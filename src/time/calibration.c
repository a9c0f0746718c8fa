/* calibration.c: what a kvbench run, or a table written by hand, says about
 * a machine: the decode bandwidth and prefill FLOP efficiencies that replace
 * the perf model's defaults (`kvplan perf --calibration`).
 *
 * Stance: the dependency runs one way, perf <- validate <- calibration.  The
 * perf model takes efficiencies as plain numbers (kvp_perf_hw) and knows no
 * file; validate predicts kvbench's points with that model; a kvbench run
 * becomes an efficiency here by validate's fit, so a calibration and
 * `kvplan validate --calibrate --gpu` never disagree. */
#include "time/calibration.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/csv.h"
#include "base/input-file.h"
#include "time/validate.h"
#include "base/yaml-walk.h"

/* The forms read:
 *   kvplan's table (YAML):  calibration: [{gpu: h200, decode_bw_efficiency: 0.82,
 *                            prefill_flops_efficiency: 0.55}, ...]
 *   kvplan's table (CSV):   gpu,decode_bw_efficiency,prefill_flops_efficiency
 *   kvbench --out (YAML, or CSV with a `validated` column): read as
 *                           `kvplan validate` reads it (validate.h).
 *   kvplan calibrate --out: kvplan's YAML table with the engine's fixed
 *                           costs (step_fixed_s, prefill_fixed_s,
 *                           seq_step_s), allreduce_latency_s,
 *                           kv_bw_efficiency,
 *                           latency_spread and points beside the
 *                           efficiencies; model, engine, tp, spread, the
 *                           residuals and source are where the figures came
 *                           from (calibration-write.c) and are not applied. */

/* A kvbench run: the efficiency that makes the planner's decode time right
 * on this GPU's bandwidth (validate.h: its KV bytes at efficiency 1 over the
 * measured median, the median over the large points of each shape), so the
 * figure is what this model needs, computed as `kvplan validate
 * --calibrate --gpu` computes it, and the spread of those points about it
 * (latency_spread).  CPU points cannot calibrate a GPU. */
static kvp_status kvbench_run(const char *path, const struct kvp_gpu *g,
			      struct kvp_calibration *out, struct kvp_error *err)
{
	struct kvp_validation v = {0};
	kvp_status st = kvp_validation_load(&v, path, g, err);
	for (size_t i = 0; !st && i < v.n; i++) {
		const struct kvp_vpoint *p = &v.points[i];
		if (p->kind == KVP_VPOINT_DECODE && strcmp(p->backend, "cuda") != 0)
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, p->line, 1, "backend",
					   "a '%s' run measures the CPU, not a GPU; calibrate from "
					   "a kvbench --backend cuda run",
					   p->backend[0] ? p->backend : "unknown");
	}
	size_t used = 0;
	double eff = st ? 0 : kvp_validation_fit(&v, &used);
	if (!st && !used)
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "points",
				   "no validated, timed decode point to calibrate from");
	else if (!st && (!(eff > 0) || eff > 1))
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "time_median_s",
				   "the decode steps ran at %.1f%% of %s's %.1f GB/s; expected a "
				   "share in (0, 100]%%", 100 * eff, g->name, g->bandwidth_bps / 1e9);
	if (!st) {
		kvp_validation_evaluate(&v, eff, 0, 0);
		for (size_t i = 0; i < v.n; i++) {
			const struct kvp_vpoint *p = &v.points[i];
			if (p->kind == KVP_VPOINT_DECODE && p->large && p->predicted_s > 0)
				out->latency_spread = fmax(out->latency_spread,
							   fabs(p->measured_s / p->predicted_s - 1));
		}
		out->decode_bw_efficiency = eff;
		out->points = used;
		out->kernel = true;
		snprintf(out->gpu, sizeof out->gpu, "%s", v.points[0].device[0] ? v.points[0].device
										   : g->name);
	}
	kvp_validation_free(&v);
	return st;
}

static kvp_status check_eff(const struct kvp_doc *doc, const struct kvp_node *node,
			    const char *field, double *v, struct kvp_error *err)
{
	kvp_status st = kvp_node_double(doc, node, field, v, err);
	if (st)
		return st;
	if (!(*v > 0) || *v > 1)
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, field,
				     "an efficiency is a fraction in (0, 1], got %s", node->value);
	return KVP_STATUS_OK;
}

/* The engine's fixed costs and collective latency (kvplan calibrate's
 * keys), each in seconds within its bound; latency_spread and
 * latency_spread_loo (shares, at most 10, as `kvplan size --latency-spread`
 * takes one) with its points. */
static kvp_status fixed_costs(const struct kvp_doc *doc, const struct kvp_node *e,
			      struct kvp_calibration *out, struct kvp_error *err)
{
	static const struct {
		const char *key;
		double max;
		size_t off;
	} f[] = {
		{"step_fixed_s", 1, offsetof(struct kvp_calibration, step_fixed_s)},
		{"prefill_fixed_s", 1, offsetof(struct kvp_calibration, prefill_fixed_s)},
		{"seq_step_s", 0.1, offsetof(struct kvp_calibration, seq_step_s)},
		{"allreduce_latency_s", 0.01, offsetof(struct kvp_calibration, allreduce_latency_s)},
		/* a request's latency outside the steps: a second is far above
		 * any tokeniser's or process hop's (the fit's bound, calibrate-fit.c) */
		{"request_latency_s", 1, offsetof(struct kvp_calibration, request_latency_s)},
		/* a factor on the prefill's compute rate (kvp_perf_hw_prefill_scale):
		 * the fit keeps prefill_flops_efficiency x it within 1, so at most
		 * 1 / 0.02 for the smallest efficiency a profile may give */
		{"prefill_flops_scale", 50, offsetof(struct kvp_calibration, prefill_flops_scale)},
		{"latency_spread", 10, offsetof(struct kvp_calibration, latency_spread)},
		{"latency_spread_loo", 10, offsetof(struct kvp_calibration, latency_spread_loo)},
	};
	kvp_status st;
	for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
		const struct kvp_node *n = kvp_map_get(e, f[i].key);
		double *v = (double *)((char *)out + f[i].off);
		/* no latency_spread: the fit set no band (calibration-write.c),
		 * and kvp_calibration_apply keeps perf's own */
		if (!n && f[i].off == offsetof(struct kvp_calibration, latency_spread))
			*v = -1;
		if (!n)
			continue;
		if ((st = kvp_node_double(doc, n, f[i].key, v, err)))
			return st;
		if (!(*v >= 0) || *v > f[i].max)
			return kvp_node_fail(doc, n, err, KVP_STATUS_INVALID, f[i].key,
					     "expected 0 to %g%s, got %s", f[i].max,
					     i < 5 ? " s" : "", n->value);
		if (f[i].off == offsetof(struct kvp_calibration, prefill_flops_scale) && !(*v > 0))
			return kvp_node_fail(doc, n, err, KVP_STATUS_INVALID, f[i].key,
					     "a scale is above 0, got %s", n->value);
	}
	const struct kvp_node *pn = kvp_map_get(e, "points");
	uint64_t points = 0;
	if (pn && (st = kvp_node_u64(doc, pn, "points", &points, err)))
		return st;
	out->points = (size_t)points;
	return KVP_STATUS_OK;
}

kvp_status kvp_calibration_table(const struct kvp_doc *doc, const struct kvp_node *list,
				 const struct kvp_gpu *g, struct kvp_calibration *out,
				 const struct kvp_node **entry, struct kvp_error *err)
{
	static const char *const keys[] = {"gpu", "decode_bw_efficiency",
					   "prefill_flops_efficiency", "source",
					   /* written by kvplan calibrate (calibration-write.c) */
					   "model", "engine", "engine_version", "tp",
					   "step_fixed_s", "prefill_fixed_s", "seq_step_s",
					   "allreduce_latency_s", "request_latency_s",
					   "kv_bw_efficiency", "prefill_flops_scale",
					   "latency_spread", "latency_spread_loo", "points",
					   "residual_median", "residual_median_uncalibrated",
					   "spread", NULL};
	kvp_status st;
	char names[512] = "";
	if (list->type == KVP_NODE_MAP) { /* a single entry */
		if ((st = kvp_map_only(doc, list, keys, err)))
			return st;
	} else if ((st = kvp_node_expect(doc, list, "calibration", KVP_NODE_SEQ, err))) {
		return st;
	}
	size_t n = list->type == KVP_NODE_MAP ? 1 : list->n;
	for (size_t i = 0; i < n; i++) {
		const struct kvp_node *e = list->type == KVP_NODE_MAP ? list : list->items[i];
		if ((st = kvp_node_expect(doc, e, "calibration", KVP_NODE_MAP, err)) ||
		    (st = kvp_map_only(doc, e, keys, err)))
			return st;
		char name[KVP_NAME_MAX] = "";
		const struct kvp_node *gn = kvp_map_get(e, "gpu");
		if (gn && (st = kvp_node_str(doc, gn, "gpu", name, sizeof name, err)))
			return st;
		if (name[0] && strcmp(name, g->name) != 0) {
			size_t l = strlen(names);
			snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", name);
			continue;
		}
		const struct kvp_node *d = kvp_map_get(e, "decode_bw_efficiency");
		const struct kvp_node *p = kvp_map_get(e, "prefill_flops_efficiency");
		const struct kvp_node *kv = kvp_map_get(e, "kv_bw_efficiency");
		if ((kv && (st = check_eff(doc, kv, "kv_bw_efficiency", &out->kv_bw_efficiency,
					   err))) ||
		    (d && (st = check_eff(doc, d, "decode_bw_efficiency",
					  &out->decode_bw_efficiency, err))) ||
		    (p && (st = check_eff(doc, p, "prefill_flops_efficiency",
					  &out->prefill_flops_efficiency, err))) ||
		    (st = fixed_costs(doc, e, out, err)))
			return st;
		if (!d && !p && !kv && !out->step_fixed_s && !out->prefill_fixed_s && !out->seq_step_s &&
		    !out->allreduce_latency_s && !out->request_latency_s &&
		    !out->prefill_flops_scale)
			return kvp_node_fail(doc, e, err, KVP_STATUS_INVALID, "calibration",
					     "an entry needs decode_bw_efficiency, "
					     "prefill_flops_efficiency, prefill_flops_scale or a fixed cost "
					     "(step_fixed_s, prefill_fixed_s, seq_step_s, "
					     "allreduce_latency_s, request_latency_s)");
		snprintf(out->gpu, sizeof out->gpu, "%s", name[0] ? name : g->name);
		if (entry)
			*entry = e;
		return KVP_STATUS_OK;
	}
	return kvp_node_fail(doc, list, err, KVP_STATUS_INVALID, "calibration",
			     "no entry for GPU '%s' (entries: %s)", g->name, names[0] ? names : "none");
}

static kvp_status load_csv(const char *path, const struct kvp_gpu *g, struct kvp_calibration *out,
			   struct kvp_error *err)
{
	FILE *f;
	kvp_status ost = kvp_input_open(path, &f, err);
	if (ost)
		return ost;
	char hline[KVP_CSV_LINE_MAX], line[KVP_CSV_LINE_MAX], names[512] = "";
	char *h[KVP_CSV_MAX_FIELDS], *v[KVP_CSV_MAX_FIELDS];
	kvp_status st = KVP_STATUS_OK;
	bool found = false;
	if (!fgets(hline, sizeof hline, f)) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 1, 1, NULL, "empty file");
		goto out;
	}
	size_t nh = kvp_csv_split(hline, h, KVP_CSV_MAX_FIELDS);
	int c_gpu = kvp_csv_col(h, nh, "gpu"), c_dec = kvp_csv_col(h, nh, "decode_bw_efficiency"),
	    c_pre = kvp_csv_col(h, nh, "prefill_flops_efficiency");
	if (kvp_csv_col(h, nh, "validated") >= 0) { /* kvbench --out */
		fclose(f);
		return kvbench_run(path, g, out, err);
	}
	if (c_dec < 0 && c_pre < 0) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 1, 1, "header",
				   "expected gpu,decode_bw_efficiency,prefill_flops_efficiency "
				   "or a kvbench --out CSV (backend,...,validated,...,gbps)");
		goto out;
	}
	for (int ln = 2; fgets(line, sizeof line, f); ln++) {
		if (line[strspn(line, " \t\r\n")] == 0 || line[0] == '#')
			continue;
		size_t n = kvp_csv_split(line, v, KVP_CSV_MAX_FIELDS);
		if (n != nh) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, ln, 1, NULL,
					   "%zu fields, the header has %zu", n, nh);
			goto out;
		}
		if (found)
			continue;
		if (c_gpu >= 0 && v[c_gpu][0] && strcmp(v[c_gpu], g->name) != 0) {
			size_t l = strlen(names);
			snprintf(names + l, sizeof names - l, "%s%s", l ? ", " : "", v[c_gpu]);
			continue;
		}
		static const char *const fields[] = {"decode_bw_efficiency", "prefill_flops_efficiency"};
		int cols[] = {c_dec, c_pre};
		double *dst[] = {&out->decode_bw_efficiency, &out->prefill_flops_efficiency};
		for (int k = 0; k < 2; k++) {
			if (cols[k] < 0 || !v[cols[k]][0])
				continue;
			if ((st = kvp_csv_number(path, ln, cols[k] + 1, fields[k], v[cols[k]], dst[k], err)))
				goto out;
			if (!(*dst[k] > 0) || *dst[k] > 1) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, ln, cols[k] + 1,
						   fields[k], "an efficiency is a fraction in (0, 1], "
						   "got %s", v[cols[k]]);
				goto out;
			}
		}
		snprintf(out->gpu, sizeof out->gpu, "%s", g->name);
		found = true;
	}
	if (!found)
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "gpu",
				   "no entry for GPU '%s' (entries: %s)", g->name,
				   names[0] ? names : "none");
out:
	fclose(f);
	return st;
}

kvp_status kvp_calibration_load(const char *path, const struct kvp_gpu *g,
				struct kvp_calibration *out, struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	const char *dot = strrchr(path, '.');
	if (dot && strcmp(dot, ".csv") == 0)
		return load_csv(path, g, out, err);
	struct kvp_doc *doc;
	kvp_status st = kvp_doc_load_file(path, &doc, err);
	if (st)
		return st;
	if (!doc->root || doc->root->type != KVP_NODE_MAP) {
		st = kvp_node_fail(doc, doc->root, err, KVP_STATUS_INVALID, NULL,
				   "expected a map with 'calibration' or a kvbench result "
				   "('kvbench' and 'points')");
	} else if (kvp_map_get(doc->root, "kvbench")) {
		kvp_doc_free(doc);
		return kvbench_run(path, g, out, err);
	} else if (kvp_map_get(doc->root, "calibration")) {
		static const char *const top[] = {"calibration", NULL};
		if (!(st = kvp_map_only(doc, doc->root, top, err)))
			st = kvp_calibration_table(doc, kvp_map_get(doc->root, "calibration"), g,
						   out, NULL, err);
	} else {
		st = kvp_node_fail(doc, doc->root, err, KVP_STATUS_INVALID, NULL,
				   "expected 'calibration' (a list of {gpu, decode_bw_efficiency, "
				   "prefill_flops_efficiency}) or a kvbench result");
	}
	kvp_doc_free(doc);
	return st;
}

kvp_status kvp_calibration_load_files(const char *const *paths, size_t n,
				      const struct kvp_gpu *g, struct kvp_calibration *out,
				      struct kvp_error *err)
{
	if (n < 1 || n > KVP_CALIBRATION_MAX_FILES)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "calibration",
				     "expected one or two files (one engine calibration and one "
				     "kvbench run), got %zu", n);
	kvp_status st = kvp_calibration_load(paths[0], g, out, err);
	if (st || n == 1)
		return st;
	struct kvp_calibration other;
	if ((st = kvp_calibration_load(paths[1], g, &other, err)))
		return st;
	if (out->kernel == other.kernel)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "calibration",
				     "%s and %s are both %s; give one engine calibration "
				     "(kvplan calibrate --out, or a table) and one kvbench run",
				     paths[0], paths[1], out->kernel ? "kvbench runs"
				     : "engine calibrations");
	/* the engine's constants, the kernel's KV read beside them */
	const struct kvp_calibration *kernel = out->kernel ? out : &other;
	struct kvp_calibration engine = out->kernel ? other : *out;
	engine.engine_path = out->kernel ? paths[1] : paths[0];
	engine.kernel_path = out->kernel ? paths[0] : paths[1];
	if (engine.kv_bw_efficiency > 0)
		engine.kernel_unused = true;
	else
		engine.kv_bw_efficiency = kernel->decode_bw_efficiency, engine.kv_from_kernel = true;
	*out = engine;
	return KVP_STATUS_OK;
}

void kvp_calibration_apply(const struct kvp_calibration *cal, struct kvp_perf_hw *hw)
{
	if (!cal->kernel && cal->points && cal->latency_spread >= 0) {
		double s = fmax(cal->latency_spread, cal->latency_spread_loo);
		hw->time_ratio_low = s < 1 ? 1 - s : 1 / (1 + s);
		hw->time_ratio_high = 1 + s;
		hw->given |= KVP_PERF_GIVEN_BAND;
	}
	if (cal->decode_bw_efficiency > 0)
		hw->decode_bw_efficiency = cal->decode_bw_efficiency, hw->efficiency_given = true;
	if (cal->prefill_flops_efficiency > 0)
		kvp_perf_hw_prefill_efficiency(hw, cal->prefill_flops_efficiency),
		hw->efficiency_given = true;
	/* kvplan calibrate's fit against a measured GEMM table: the table kept,
	 * its rates and the constant scaled, as the fit predicted (calibrate-fit.h) */
	if (cal->prefill_flops_scale > 0)
		kvp_perf_hw_prefill_scale(hw, cal->prefill_flops_scale),
		hw->efficiency_given = true;
	if (cal->step_fixed_s > 0)
		hw->step_fixed_s = cal->step_fixed_s, hw->given |= KVP_PERF_GIVEN_STEP_FIXED;
	if (cal->prefill_fixed_s > 0)
		hw->prefill_fixed_s = cal->prefill_fixed_s, hw->given |= KVP_PERF_GIVEN_PREFILL_FIXED;
	if (cal->seq_step_s > 0)
		hw->seq_step_s = cal->seq_step_s, hw->given |= KVP_PERF_GIVEN_SEQ_STEP;
	if (cal->kv_bw_efficiency > 0)
		hw->kv_bw_efficiency = cal->kv_bw_efficiency, hw->given |= KVP_PERF_GIVEN_KV_BW;
	if (cal->allreduce_latency_s > 0)
		hw->allreduce_latency_s = cal->allreduce_latency_s,
		hw->given |= KVP_PERF_GIVEN_ALLREDUCE;
	if (cal->request_latency_s > 0)
		hw->request_latency_s = cal->request_latency_s,
		hw->given |= KVP_PERF_GIVEN_REQUEST_LATENCY;
}
