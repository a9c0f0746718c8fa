/* api.c: the public C API (include/kvplan.h): handles over the library's
 * model, GPU and engine structs, the option checks the CLI makes (so a
 * caller gets the same refusal and message as `kvplan budget`), the typed
 * budget and the JSON records.  Nothing here prints, exits or keeps state
 * between calls; handles are written only while loading. */
#include "api/api-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/engine.h"
#include "time/calibration.h"
#include "time/perf.h"
#include "time/step.h"

#ifndef KVPLAN_VERSION_STRING
#define KVPLAN_VERSION_STRING "unknown"
#endif

/* The library's error as the public one: the message kvplan prints. */
kvplan_status kvp_api_fail(kvplan_error *out, const struct kvp_error *e)
{
	if (out) {
		memset(out, 0, sizeof *out);
		out->status = e->status;
		kvp_error_format(e, out->message, sizeof out->message);
		snprintf(out->path, sizeof out->path, "%s", e->path);
		out->line = e->line;
		out->col = e->col;
		snprintf(out->field, sizeof out->field, "%s", e->field);
	}
	return (kvplan_status)e->status;
}

void kvp_api_clear(kvplan_error *out)
{
	if (out) {
		out->status = KVPLAN_OK;
		out->message[0] = out->path[0] = out->field[0] = '\0';
		out->line = out->col = 0;
	}
}

const char *kvplan_version(void)
{
	return KVPLAN_VERSION_STRING;
}

const char *kvplan_status_str(int status)
{
	return kvp_status_str((kvp_status)status);
}

void kvplan_free(void *p)
{
	free(p);
}

kvplan_status kvplan_model_load(const char *name, kvplan_model **out, kvplan_error *err)
{
	struct kvp_error e = {0};
	*out = NULL;
	if (!name) {
		kvp_error_set(&e, KVP_STATUS_USAGE, NULL, 0, 0, "model", "no model named");
		return kvp_api_fail(err, &e);
	}
	kvplan_model *m = calloc(1, sizeof *m);
	if (!m) {
		kvp_error_set(&e, KVP_STATUS_NOMEM, NULL, 0, 0, "model", "out of memory");
		return kvp_api_fail(err, &e);
	}
	if (kvp_model_load(name, &m->m, &e)) {
		free(m);
		return kvp_api_fail(err, &e);
	}
	kvp_api_clear(err);
	*out = m;
	return KVPLAN_OK;
}

void kvplan_model_free(kvplan_model *m)
{
	free(m);
}

const char *kvplan_model_name(const kvplan_model *m)
{
	return m->m.name;
}

uint64_t kvplan_model_max_context(const kvplan_model *m)
{
	return m->m.max_context;
}

size_t kvplan_model_warning_count(const kvplan_model *m)
{
	return m->m.num_warnings < KVP_MODEL_WARNINGS ? m->m.num_warnings : KVP_MODEL_WARNINGS;
}

const char *kvplan_model_warning(const kvplan_model *m, size_t i)
{
	return i < kvplan_model_warning_count(m) ? m->m.warnings[i] : NULL;
}

kvplan_status kvplan_gpu_load(const char *name, kvplan_gpu **out, kvplan_error *err)
{
	struct kvp_error e = {0};
	*out = NULL;
	if (!name) {
		kvp_error_set(&e, KVP_STATUS_USAGE, NULL, 0, 0, "gpu", "no GPU named");
		return kvp_api_fail(err, &e);
	}
	kvplan_gpu *g = calloc(1, sizeof *g);
	if (!g) {
		kvp_error_set(&e, KVP_STATUS_NOMEM, NULL, 0, 0, "gpu", "out of memory");
		return kvp_api_fail(err, &e);
	}
	if (kvp_gpu_load(name, &g->g, &e)) {
		free(g);
		return kvp_api_fail(err, &e);
	}
	kvp_api_clear(err);
	*out = g;
	return KVPLAN_OK;
}

void kvplan_gpu_free(kvplan_gpu *g)
{
	free(g);
}

const char *kvplan_gpu_name(const kvplan_gpu *g)
{
	return g->g.name;
}

uint64_t kvplan_gpu_memory_bytes(const kvplan_gpu *g)
{
	return g->g.memory_bytes;
}

kvplan_status kvplan_engine_load(const char *name, const char *version, kvplan_engine **out,
				 kvplan_error *err)
{
	struct kvp_error e = {0};
	enum kvp_engine en;
	*out = NULL;
	if (!name || !kvp_engine_parse(name, &en)) {
		kvp_error_set(&e, KVP_STATUS_USAGE, NULL, 0, 0, "engine",
			      "unknown engine '%s' (generic, vllm, sglang, trtllm, llamacpp)", name ? name : "");
		return kvp_api_fail(err, &e);
	}
	if (version && strlen(version) >= KVP_ENGINE_VERSION_MAX) {
		kvp_error_set(&e, KVP_STATUS_USAGE, NULL, 0, 0, "engine_version",
			      "expected a version such as 0.19.0, got '%s'", version);
		return kvp_api_fail(err, &e);
	}
	kvplan_engine *x = calloc(1, sizeof *x);
	if (!x) {
		kvp_error_set(&e, KVP_STATUS_NOMEM, NULL, 0, 0, "engine", "out of memory");
		return kvp_api_fail(err, &e);
	}
	x->engine = en;
	if (en != KVP_ENGINE_GENERIC &&
	    kvp_engine_model_load(kvp_engine_name(en), version && version[0] ? version : NULL,
				  &x->model, &e)) {
		free(x);
		return kvp_api_fail(err, &e);
	}
	/* the API has no warnings: a version outside every modelled range is
	 * refused, naming the nearest (the CLI warns and uses it) */
	if (x->model.version_nearest) {
		kvp_error_set(&e, KVP_STATUS_NOT_FOUND, x->model.path, 0, 0, "engine_version",
			      "no modelled %s version covers '%s'; the nearest is %s",
			      x->model.kind, version, x->model.version);
		free(x);
		return kvp_api_fail(err, &e);
	}
	kvp_api_clear(err);
	*out = x;
	return KVPLAN_OK;
}

void kvplan_engine_free(kvplan_engine *e)
{
	free(e);
}

const char *kvplan_engine_name(const kvplan_engine *e)
{
	return kvp_engine_name(e->engine);
}

const char *kvplan_engine_version(const kvplan_engine *e)
{
	return e->model.version;
}

void kvplan_budget_opts_init(kvplan_budget_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
}

void kvplan_perf_opts_init(kvplan_perf_opts *o)
{
	memset(o, 0, sizeof *o);
	o->size = sizeof *o;
}

kvp_status kvp_api_efficiency(const char *name, double v, struct kvp_error *err)
{
	if (v != 0 && !(v > 0 && v <= 1))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, name,
				     "expected a fraction in (0, 1], got %g", v);
	return KVP_STATUS_OK;
}

/* The caller's options, read only as far as its struct goes (an older
 * caller's shorter struct: the rest stays default), checked as the CLI
 * checks its flags (cli/cli.c), into the library's. */
kvp_status kvp_api_budget_opts(const kvplan_budget_opts *in, const kvplan_engine *e,
			       const kvplan_gpu *g, struct kvp_budget_opts *o,
			       struct kvp_error *err)
{
	kvplan_budget_opts c;
	kvplan_budget_opts_init(&c);
	if (in) {
		if (in->size < offsetof(kvplan_budget_opts, tp))
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "size",
					     "options size %u: set it with kvplan_budget_opts_init",
					     in->size);
		memcpy(&c, in, in->size < sizeof c ? in->size : sizeof c);
	}
	memset(o, 0, sizeof *o);
	o->engine = e ? e->engine : KVP_ENGINE_GENERIC;
	o->engine_model = e && e->engine != KVP_ENGINE_GENERIC ? &e->model : NULL;
	const struct {
		const char *name;
		uint32_t v;
		uint32_t *dest;
	} gpus[] = {
		{"tp", c.tp, &o->par.tp}, {"pp", c.pp, &o->par.pp}, {"dp", c.dp, &o->par.dp},
		{"ep", c.ep, &o->par.ep}, {"num_gpus", c.num_gpus, &o->par.gpus},
	};
	for (size_t i = 0; i < sizeof gpus / sizeof gpus[0]; i++) {
		if (gpus[i].v > 1u << 20)
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, gpus[i].name,
					     "%u GPUs is more than kvplan plans for", gpus[i].v);
		*gpus[i].dest = gpus[i].v;
	}
	if (!o->par.tp)
		o->par.tp = 1;
	if (!o->par.pp)
		o->par.pp = 1;
	o->dtype = o->kv_dtype = KVP_DTYPE_AUTO;
	if (c.dtype) {
		enum kvp_dtype dt;
		if (!kvp_dtype_parse(c.dtype, &dt))
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "dtype",
					     "unknown dtype '%s'", c.dtype);
		if (dt != KVP_DTYPE_AUTO && dt != KVP_DTYPE_BF16 && dt != KVP_DTYPE_FP16 &&
		    dt != KVP_DTYPE_FP32)
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "dtype",
					     "%s is not a serving dtype (auto, bf16, fp16, fp32)",
					     c.dtype);
		o->dtype = dt;
	}
	if (c.kv_dtype) {
		enum kvp_dtype dt;
		if (!kvp_dtype_parse(c.kv_dtype, &dt))
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "kv_dtype",
					     "unknown dtype '%s'", c.kv_dtype);
		if (!kvp_dtype_info(dt)->kv_ok)
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "kv_dtype",
					     "%s is not a KV cache format", c.kv_dtype);
		o->kv_dtype = dt;
	}
	if (c.block_size > 1u << 20)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "block_size",
				     "%u tokens is too large", c.block_size);
	/* NaN fails both comparisons */
	if (c.utilization != 0 && !(c.utilization > 0 && c.utilization <= 1))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "utilization",
				     "expected a fraction in (0, 1], got %g", c.utilization);
	o->block_size = c.block_size;
	o->utilization = c.utilization;
	o->context = c.context;
	o->batch = c.batch;
	o->max_num_seqs = c.max_num_seqs;
	o->max_batched_tokens = c.max_batched_tokens;
	o->hybrid_off = c.disable_hybrid_kv != 0;
	o->has_gpu_memory = c.set & KVPLAN_SET_GPU_MEMORY;
	o->has_weights = c.set & KVPLAN_SET_WEIGHTS;
	o->has_activation = c.set & KVPLAN_SET_ACTIVATION;
	o->has_overhead = c.set & KVPLAN_SET_OVERHEAD;
	o->gpu_memory_bytes = c.gpu_memory_bytes;
	o->weights_bytes = c.weights_bytes;
	o->activation_bytes = c.activation_bytes;
	o->overhead_bytes = c.overhead_bytes;
	if (o->has_gpu_memory && !o->gpu_memory_bytes)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "gpu_memory_bytes",
				     "must be positive");
	if (!g && !o->has_gpu_memory)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "gpu",
				     "a GPU (or gpu_memory_bytes) is required");
	return KVP_STATUS_OK;
}

/* The budget into *b (large: the caller allocates). */
static kvp_status budget(const kvplan_model *m, const kvplan_gpu *g, const kvplan_engine *e,
			 const kvplan_budget_opts *opts, struct kvp_budget *b, struct kvp_error *err)
{
	struct kvp_budget_opts o;
	kvp_status st;
	if (!m)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "model", "no model given");
	if ((st = kvp_api_budget_opts(opts, e, g, &o, err)))
		return st;
	struct kvp_gpu custom;
	const struct kvp_gpu *gg = g ? &g->g : NULL;
	if (!gg) {
		/* the CLI's --gpu-memory without --gpu (cli.c) */
		memset(&custom, 0, sizeof custom);
		snprintf(custom.name, sizeof custom.name, "custom");
		gg = &custom;
	}
	return kvp_budget_compute(&m->m, gg, &o, b, err);
}

kvplan_status kvplan_budget(const kvplan_model *m, const kvplan_gpu *g, const kvplan_engine *e,
			    const kvplan_budget_opts *opts, kvplan_budget_result *out,
			    kvplan_error *err)
{
	struct kvp_error ke = {0};
	if (!out || out->size < offsetof(kvplan_budget_result, fits)) {
		kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, "size",
			      "result size not set: set out->size = sizeof *out");
		return kvp_api_fail(err, &ke);
	}
	struct kvp_budget *b = malloc(sizeof *b);
	if (!b) {
		kvp_error_set(&ke, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		return kvp_api_fail(err, &ke);
	}
	kvp_status st = budget(m, g, e, opts, b, &ke);
	if (st) {
		free(b);
		return kvp_api_fail(err, &ke);
	}
	kvplan_budget_result r = {
		.size = sizeof r,
		.fits = b->fits,
		.weights_fit = b->weights_fit,
		.block_size = b->block_size,
		.context = b->context,
		.batch = b->batch,
		.kv_bytes_per_token = b->spec.token_bytes,
		.kv_bytes_per_sequence = b->seq_bytes,
		.kv_bytes = b->kv_bytes,
		.gpu_memory_bytes = b->gpu_memory_bytes,
		.usable_bytes = b->usable_bytes,
		.weights_bytes = b->weights_bytes,
		.activation_bytes = b->activation_bytes,
		.overhead_bytes = b->overhead_bytes,
		.kv_pool_bytes = b->kv_pool_bytes,
		.num_blocks = b->num_blocks,
		.max_tokens = b->max_tokens,
		.max_sequences = b->max_sequences,
		.max_sequences_low = b->max_sequences_low,
		.max_sequences_high = b->max_sequences_high,
	};
	free(b);
	/* only as far as the caller's struct goes; its size stays its own */
	uint32_t size = out->size < sizeof r ? out->size : (uint32_t)sizeof r;
	memcpy((char *)out + sizeof out->size, (char *)&r + sizeof r.size, size - sizeof r.size);
	kvp_api_clear(err);
	return KVPLAN_OK;
}

/* A record as the CLI's JSON text, malloc'd; NULL when memory runs out. */
static char *record_json(const struct kvp_record *r)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	if (!f)
		return NULL;
	kvp_write_json(f, r);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

kvplan_status kvp_api_json_out(struct kvp_record *r, bool ok, char **json, kvplan_error *err)
{
	char *text = ok ? record_json(r) : NULL;
	kvp_record_free(r);
	if (!text) {
		struct kvp_error ke = {0};
		kvp_error_set(&ke, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		return kvp_api_fail(err, &ke);
	}
	*json = text;
	kvp_api_clear(err);
	return KVPLAN_OK;
}

kvplan_status kvplan_budget_json(const kvplan_model *m, const kvplan_gpu *g,
				 const kvplan_engine *e, const kvplan_budget_opts *opts,
				 char **json, kvplan_error *err)
{
	struct kvp_error ke = {0};
	*json = NULL;
	struct kvp_budget *b = malloc(sizeof *b);
	struct kvp_record *r = kvp_record_new();
	if (!b || !r) {
		free(b);
		kvp_record_free(r);
		kvp_error_set(&ke, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		return kvp_api_fail(err, &ke);
	}
	if (budget(m, g, e, opts, b, &ke)) {
		free(b);
		kvp_record_free(r);
		return kvp_api_fail(err, &ke);
	}
	bool ok = kvp_budget_to_record(b, g ? g->g.name : "custom", r) &&
		  kvp_encoder_to_record(&b->encoder, b->encoder_bytes, r);
	free(b);
	return kvp_api_json_out(r, ok, json, err);
}

kvplan_status kvplan_perf_json(const kvplan_model *m, const kvplan_gpu *g,
			       const kvplan_engine *e, const kvplan_budget_opts *opts,
			       const kvplan_perf_opts *perf, char **json, kvplan_error *err)
{
	struct kvp_error ke = {0};
	struct kvp_budget_opts o;
	*json = NULL;
	kvplan_perf_opts p;
	kvplan_perf_opts_init(&p);
	if (perf)
		memcpy(&p, perf, perf->size < sizeof p ? perf->size : sizeof p);
	if (!m || !g) {
		kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, m ? "gpu" : "model",
			      m ? "a GPU is required: latency needs its bandwidth and FLOP/s"
				: "no model given");
		return kvp_api_fail(err, &ke);
	}
	if (kvp_api_budget_opts(opts, e, g, &o, &ke))
		return kvp_api_fail(err, &ke);
	if (p.nbatch > KVP_PERF_MAX_BATCHES || (p.nbatch && !p.batches)) {
		kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, "batches",
			      "at most %d values, and a list when nbatch > 0", KVP_PERF_MAX_BATCHES);
		return kvp_api_fail(err, &ke);
	}
	struct kvp_perf_opts po = {
		.prompt = p.prompt ? p.prompt : o.context ? o.context : 1024,
		.output = p.output ? p.output : 256,
		.nbatch = p.nbatch ? p.nbatch : 1,
		.offload = {.tier = KVP_OFFLOAD_NONE, .fraction = -1},
	};
	po.batches[0] = 1;
	for (size_t i = 0; i < p.nbatch; i++) {
		if (!p.batches[i]) {
			kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, "batches",
				      "batch %zu is 0: expected a positive count", i);
			return kvp_api_fail(err, &ke);
		}
		po.batches[i] = p.batches[i];
	}
	if (kvp_api_efficiency("decode_bw_efficiency", p.decode_bw_efficiency, &ke) ||
	    kvp_api_efficiency("prefill_flops_efficiency", p.prefill_flops_efficiency, &ke))
		return kvp_api_fail(err, &ke);
	po.calibration = p.calibration;
	if (p.calibration_kernel && !p.calibration) {
		kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, "calibration_kernel",
			      "a second calibration needs the first (calibration)");
		return kvp_api_fail(err, &ke);
	}
	struct kvp_perf_hw hw;
	if (kvp_perf_hw_from_gpu(&g->g, &m->m, &hw, &ke))
		return kvp_api_fail(err, &ke);
	/* as cmd-perf.c: the calibration, then the efficiencies given over it */
	if (p.calibration) {
		struct kvp_calibration cal;
		const char *paths[] = {p.calibration, p.calibration_kernel};
		if (kvp_calibration_load_files(paths, p.calibration_kernel ? 2 : 1, &g->g, &cal, &ke))
			return kvp_api_fail(err, &ke);
		kvp_calibration_apply(&cal, &hw);
		/* the record names the engine calibration, and the kvbench run beside it */
		if (cal.engine_path)
			po.calibration = cal.engine_path, po.calibration_kernel = cal.kernel_path;
	}
	if (p.decode_bw_efficiency > 0)
		hw.decode_bw_efficiency = p.decode_bw_efficiency, hw.efficiency_given = true;
	if (p.prefill_flops_efficiency > 0)
		kvp_perf_hw_prefill_efficiency(&hw, p.prefill_flops_efficiency);
	struct kvp_perf_result *run = malloc(sizeof *run);
	struct kvp_record *r = kvp_record_new();
	if (!run || !r) {
		free(run);
		kvp_record_free(r);
		kvp_error_set(&ke, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		return kvp_api_fail(err, &ke);
	}
	if (kvp_perf_run(&m->m, &g->g, &o, &hw, &po, run, &ke)) {
		free(run);
		kvp_record_free(r);
		return kvp_api_fail(err, &ke);
	}
	if (kvp_perf_check_finite(run, &ke)) {
		free(run);
		kvp_record_free(r);
		return kvp_api_fail(err, &ke);
	}
	bool ok = kvp_perf_to_record(run, r);
	free(run);
	return kvp_api_json_out(r, ok, json, err);
}

kvplan_status kvplan_profile_list(const char *kind, char **names, kvplan_error *err)
{
	struct kvp_error ke = {0};
	*names = NULL;
	if (!kind || (strcmp(kind, "models") && strcmp(kind, "gpus") && strcmp(kind, "workloads") &&
		      strcmp(kind, "engines"))) {
		kvp_error_set(&ke, KVP_STATUS_USAGE, NULL, 0, 0, "kind",
			      "expected models, gpus, workloads or engines, got '%s'",
			      kind ? kind : "");
		return kvp_api_fail(err, &ke);
	}
	enum { MAX = 4096 };
	char **list = malloc(MAX * sizeof *list);
	if (!list) {
		kvp_error_set(&ke, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		return kvp_api_fail(err, &ke);
	}
	size_t n = kvp_profile_list(kind, list, MAX), len = 1;
	for (size_t i = 0; i < n; i++)
		len += strlen(list[i]) + 1;
	char *text = malloc(len), *p = text;
	for (size_t i = 0; i < n; i++) {
		if (text) {
			size_t k = strlen(list[i]);
			memcpy(p, list[i], k);
			p[k] = '\n';
			p += k + 1;
		}
		free(list[i]);
	}
	free(list);
	if (!text) {
		kvp_error_set(&ke, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		return kvp_api_fail(err, &ke);
	}
	*p = '\0';
	*names = text;
	kvp_api_clear(err);
	return KVPLAN_OK;
}
