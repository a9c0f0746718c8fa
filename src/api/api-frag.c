/* api-frag.c: workloads and the fragmentation simulator in the public API
 * (include/kvplan.h): a workload handle, and `kvplan frag`'s run as its
 * JSON record, with the option checks cli/cmd-frag.c makes.  A run works
 * on a shallow copy of the workload, so the handle stays read-only. */
#include "api/api-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frag/frag.h"

static kvplan_status workload_new(const char *path, bool lengths, kvplan_workload **out,
				  kvplan_error *err)
{
	struct kvp_error e = {0};
	*out = NULL;
	if (!path) {
		kvp_error_set(&e, KVP_STATUS_USAGE, NULL, 0, 0, "workload", "no workload named");
		return kvp_api_fail(err, &e);
	}
	kvplan_workload *w = calloc(1, sizeof *w);
	if (!w) {
		kvp_error_set(&e, KVP_STATUS_NOMEM, NULL, 0, 0, "workload", "out of memory");
		return kvp_api_fail(err, &e);
	}
	kvp_status st = lengths ? kvp_workload_load_lengths(path, &w->w, &e)
				: kvp_workload_load(path, &w->w, &e);
	if (st) {
		kvp_workload_free(&w->w);
		free(w);
		return kvp_api_fail(err, &e);
	}
	kvp_api_clear(err);
	*out = w;
	return KVPLAN_OK;
}

kvplan_status kvplan_workload_load(const char *name, kvplan_workload **out, kvplan_error *err)
{
	return workload_new(name, false, out, err);
}

kvplan_status kvplan_workload_load_lengths(const char *path, kvplan_workload **out,
					   kvplan_error *err)
{
	return workload_new(path, true, out, err);
}

void kvplan_workload_free(kvplan_workload *w)
{
	if (w) {
		kvp_workload_free(&w->w);
		free(w);
	}
}

void kvplan_frag_opts_init(kvplan_frag_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
	o->warmup = -1;
}

/* The caller's frag options into the library's, checked as cmd-frag.c
 * checks its flags. */
static kvp_status frag_opts(const kvplan_frag_opts *in, const struct kvp_workload *w,
			    struct kvp_frag_opts *fo, struct kvp_error *err)
{
	kvplan_frag_opts c;
	kvplan_frag_opts_init(&c);
	if (in)
		memcpy(&c, in, in->size < sizeof c ? in->size : sizeof c);
	kvp_frag_opts_init(fo);
	fo->max_len = c.max_len;
	if (c.requests)
		fo->requests = c.requests;
	if (c.seed)
		fo->seed = c.seed;
	if (c.warmup >= 0) {
		fo->has_warmup = true;
		fo->warmup = (uint64_t)c.warmup;
	}
	if (c.nblock > KVP_FRAG_MAX_BLOCK_SIZES || (c.nblock && !c.block_sizes))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "block_sizes",
				     "at most %d sizes, and a list when nblock > 0",
				     KVP_FRAG_MAX_BLOCK_SIZES);
	for (size_t i = 0; i < c.nblock; i++) {
		if (!c.block_sizes[i] || c.block_sizes[i] > KVP_FRAG_MAX_BLOCK)
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "block_sizes",
					     "%u: expected 1 to %u tokens", c.block_sizes[i],
					     KVP_FRAG_MAX_BLOCK);
		fo->block_sizes[i] = c.block_sizes[i];
	}
	fo->nblock = c.nblock;
	/* NaN fails the comparisons */
	if (c.arrival_rate != 0 && !(c.arrival_rate > 0))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "arrival_rate",
				     "expected a positive rate, got %g", c.arrival_rate);
	if (c.step_time_s != 0 && !(c.step_time_s > 0))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "step_time_s",
				     "expected a positive time, got %g", c.step_time_s);
	fo->arrival_rate = c.arrival_rate;
	fo->step_time_s = c.step_time_s;
	if (c.step_time_s > 0 && !(c.arrival_rate > 0) && !w->arrival_s)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "step_time_s",
				     "applies only with arrival_rate or arrival times in the "
				     "lengths file");
	if (w->arrival_s && !(c.arrival_rate > 0) && !(c.step_time_s > 0))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "step_time_s",
				     "the lengths file has arrival times: give step_time_s to "
				     "replay them");
	return KVP_STATUS_OK;
}

kvplan_status kvplan_frag_json(const kvplan_model *m, const kvplan_gpu *g,
			       const kvplan_engine *e, const kvplan_workload *wl,
			       const kvplan_budget_opts *opts, const kvplan_frag_opts *frag,
			       char **json, kvplan_error *err)
{
	struct kvp_error ke = {0};
	struct kvp_budget_opts o;
	struct kvp_frag_opts fo;
	*json = NULL;
	if (!m || !wl) {
		kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, m ? "workload" : "model",
			      "none given");
		return kvp_api_fail(err, &ke);
	}
	/* a shallow copy: kvp_frag_plan writes max_len into it; the
	 * distributions stay the handle's, only read */
	struct kvp_workload w = wl->w;
	if (kvp_api_budget_opts(opts, e, g, &o, &ke) || frag_opts(frag, &w, &fo, &ke))
		return kvp_api_fail(err, &ke);
	uint64_t max_len = kvp_frag_max_len(&fo, &w, &o, &m->m);
	if (w.prefix_tokens >= max_len) {
		kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, "shared_prefix",
			      "%llu tokens leave no room under max_len %llu",
			      (unsigned long long)w.prefix_tokens, (unsigned long long)max_len);
		return kvp_api_fail(err, &ke);
	}
	struct kvp_gpu custom;
	const struct kvp_gpu *gg = g ? &g->g : NULL;
	if (!gg) {
		memset(&custom, 0, sizeof custom);
		snprintf(custom.name, sizeof custom.name, "custom");
		gg = &custom;
	}
	struct kvp_frag_report *rep = malloc(sizeof *rep);
	struct kvp_record *r = kvp_record_new();
	if (!rep || !r) {
		free(rep);
		kvp_record_free(r);
		kvp_error_set(&ke, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		return kvp_api_fail(err, &ke);
	}
	if (kvp_frag_plan(&m->m, gg, &o, &w, &fo, rep, &ke)) {
		free(rep);
		kvp_record_free(r);
		return kvp_api_fail(err, &ke);
	}
	bool ok = kvp_frag_to_record(rep, r);
	free(rep);
	return kvp_api_json_out(r, ok, json, err);
}
