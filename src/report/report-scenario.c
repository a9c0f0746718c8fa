/* report-scenario.c: a design-review scenario file read for `kvplan
 * report`: the models, GPUs, engines, splits, KV dtypes, workloads,
 * questions, charts and kvbench results it names, walked with key tables
 * (unknown keys refused, every error at file:line:col), relative paths taken
 * from the scenario's directory. */
#include "report/report-private.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/units.h"
#include "read/workload.h"
#include "base/yaml-walk.h"

/* ================================================================ scenario */

struct parse {
	const struct kvp_doc *doc;
	struct kvp_scenario *s;
	struct kvp_error *err;
	char dir[512];            /* the scenario's directory, for relative paths */
	bool has_plots, has_questions;
};

/* Each item of a list of scalars, through `item`. */
static kvp_status each_item(struct parse *p, const struct kvp_node *n, const char *field,
			    size_t max, size_t *count,
			    kvp_status (*item)(struct parse *, const struct kvp_node *, size_t))
{
	kvp_status st = kvp_node_expect(p->doc, n, field, KVP_NODE_SEQ, p->err);
	if (st)
		return st;
	if (n->n > max)
		return kvp_node_fail(p->doc, n->items[max], p->err, KVP_STATUS_INVALID, field,
				     "at most %zu entries", max);
	for (size_t i = 0; i < n->n; i++) {
		if ((st = kvp_node_expect(p->doc, n->items[i], field, KVP_NODE_SCALAR, p->err)) ||
		    (st = item(p, n->items[i], i)))
			return st;
	}
	if (count)
		*count = n->n;
	return KVP_STATUS_OK;
}

/* A relative path is taken from the scenario's directory; a bare name (no
 * '/', no .yaml, .yml or .json ending) stays a profile name.  False when it
 * does not fit out[size]: refused, never cut to another file's path. */
static bool scenario_path(const struct parse *p, const char *v, bool always, char *out,
			  size_t size)
{
	size_t n = strlen(v);
	bool file = strchr(v, '/') || (n > 5 && strcmp(v + n - 5, ".yaml") == 0) ||
		    (n > 4 && strcmp(v + n - 4, ".yml") == 0) ||
		    (n > 5 && strcmp(v + n - 5, ".json") == 0);
	int len;
	if ((always || file) && v[0] != '/' && p->dir[0])
		len = snprintf(out, size, "%s/%s", p->dir, v);
	else
		len = snprintf(out, size, "%s", v);
	return len >= 0 && (size_t)len < size;
}

/* A profile name or a path.  A name that resolves to nothing is reported at
 * the node; a profile that is itself invalid, at its own line. */
static kvp_status load_profile(struct parse *p, const struct kvp_node *n, const char *field,
			       void *out)
{
	char name[1024];
	const char *v = n->value;
	if (!scenario_path(p, v, false, name, sizeof name))
		return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_INVALID, field,
				     "path longer than %zu bytes", sizeof name - 1);
	struct kvp_error e = {0};
	kvp_status st = strcmp(field, "models") == 0 ? kvp_model_load(name, out, &e)
		      : strcmp(field, "gpus") == 0 ? kvp_gpu_load(name, out, &e)
						   : kvp_workload_load(name, out, &e);
	if (st == KVP_STATUS_NOT_FOUND)
		return kvp_node_fail(p->doc, n, p->err, st, field, "%s: %s", v, e.msg);
	if (st)
		*p->err = e;
	return st;
}

static kvp_status item_model(struct parse *p, const struct kvp_node *n, size_t i)
{
	return load_profile(p, n, "models", &p->s->models[i]);
}

static kvp_status item_gpu(struct parse *p, const struct kvp_node *n, size_t i)
{
	return load_profile(p, n, "gpus", &p->s->gpus[i]);
}

static kvp_status item_engine(struct parse *p, const struct kvp_node *n, size_t i)
{
	if (!kvp_engine_parse(n->value, &p->s->engines[i]))
		return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_INVALID, "engines",
				     "unknown engine '%s' (generic, vllm, sglang, trtllm, llamacpp)", n->value);
	return KVP_STATUS_OK;
}

static kvp_status item_tp(struct parse *p, const struct kvp_node *n, size_t i)
{
	uint64_t v;
	kvp_status st = kvp_node_u64(p->doc, n, "tp", &v, p->err);
	if (st)
		return st;
	if (v < 1 || v > 1024)
		return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_INVALID, "tp",
				     "must be between 1 and 1024, got %s", n->value);
	p->s->tp[i] = (uint32_t)v;
	return KVP_STATUS_OK;
}

static kvp_status item_kv(struct parse *p, const struct kvp_node *n, size_t i)
{
	if (!kvp_dtype_parse(n->value, &p->s->kv[i]) || !kvp_dtype_info(p->s->kv[i])->kv_ok)
		return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_INVALID, "kv_dtypes",
				     "'%s' is not a KV cache dtype (auto, bf16, fp16, fp32, fp8, "
				     "fp8_e5m2, fp8-pth, int8, int4, nvfp4)", n->value);
	return KVP_STATUS_OK;
}

static const struct {
	const char *name;
	unsigned bit;
} question_names[] = {
	{"fit", KVP_QUESTION_FIT},
	{"max-context", KVP_QUESTION_MAX_CONTEXT},
	{"utilization", KVP_QUESTION_UTILIZATION},
}, plot_names[] = {
	{"budget", KVP_REPORT_PLOT_BUDGET},
	{"kv-context", KVP_REPORT_PLOT_KV_CONTEXT},
	{"max-seqs", KVP_REPORT_PLOT_MAX_SEQS},
	{"perf", KVP_REPORT_PLOT_PERF},
	{"block-size", KVP_REPORT_PLOT_BLOCK_SIZE},
	{"validate", KVP_REPORT_PLOT_VALIDATE},
};

static kvp_status item_question(struct parse *p, const struct kvp_node *n, size_t i)
{
	for (size_t k = 0; k < sizeof question_names / sizeof question_names[0]; k++)
		if (strcmp(n->value, question_names[k].name) == 0) {
			p->s->questions |= question_names[k].bit;
			return KVP_STATUS_OK;
		}
	return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_INVALID, "questions",
			     "unknown question '%s' (fit, max-context, utilization)", n->value);
}

static kvp_status item_plot(struct parse *p, const struct kvp_node *n, size_t i)
{
	for (size_t k = 0; k < sizeof plot_names / sizeof plot_names[0]; k++)
		if (strcmp(n->value, plot_names[k].name) == 0) {
			p->s->plots |= plot_names[k].bit;
			return KVP_STATUS_OK;
		}
	return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_INVALID, "plots",
			     "unknown plot '%s' (budget, kv-context, max-seqs, perf, block-size, "
			     "validate)", n->value);
}

static kvp_status item_result(struct parse *p, const struct kvp_node *n, size_t i)
{
	if (!scenario_path(p, n->value, true, p->s->results[i], sizeof p->s->results[i]))
		return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_INVALID, "results",
				     "path longer than %zu bytes", sizeof p->s->results[i] - 1);
	if (access(p->s->results[i], R_OK) != 0)
		return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_NOT_FOUND, "results",
				     "%s: %s", n->value, strerror(errno));
	return KVP_STATUS_OK;
}

/* A token count written as 8192 or 8k (k = 1024), positive. */
static kvp_status node_tokens(struct parse *p, const struct kvp_node *n, const char *field,
			      uint64_t *out)
{
	kvp_status st = kvp_node_expect(p->doc, n, field, KVP_NODE_SCALAR, p->err);
	if (st)
		return st;
	int rc = kvp_parse_tokens(n->value, out);
	if (rc == -2)
		return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_OVERFLOW, field,
				     "%s is too large", n->value);
	if (rc || *out == 0)
		return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_INVALID, field,
				     "expected a positive token count such as 8192 or 8k, got '%s'",
				     n->value);
	return KVP_STATUS_OK;
}

static kvp_status key_title(struct parse *p, const struct kvp_node *n)
{
	return kvp_node_str(p->doc, n, "title", p->s->title, sizeof p->s->title, p->err);
}

static kvp_status key_description(struct parse *p, const struct kvp_node *n)
{
	return kvp_node_str(p->doc, n, "description", p->s->description,
			    sizeof p->s->description, p->err);
}

/* models and gpus: allocated to the list's length, then loaded */
static kvp_status key_models(struct parse *p, const struct kvp_node *n)
{
	if (n->type == KVP_NODE_SEQ && n->n && !(p->s->models = calloc(n->n, sizeof *p->s->models)))
		return kvp_error_set(p->err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	return each_item(p, n, "models", KVP_SCENARIO_MAX, &p->s->nmodels, item_model);
}

static kvp_status key_gpus(struct parse *p, const struct kvp_node *n)
{
	if (n->type == KVP_NODE_SEQ && n->n && !(p->s->gpus = calloc(n->n, sizeof *p->s->gpus)))
		return kvp_error_set(p->err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	return each_item(p, n, "gpus", KVP_SCENARIO_MAX, &p->s->ngpus, item_gpu);
}

static kvp_status key_engines(struct parse *p, const struct kvp_node *n)
{
	return each_item(p, n, "engines", KVP_SCENARIO_MAX, &p->s->nengines, item_engine);
}

static kvp_status key_tp(struct parse *p, const struct kvp_node *n)
{
	return each_item(p, n, "tp", KVP_SCENARIO_MAX, &p->s->ntp, item_tp);
}

static kvp_status key_kv(struct parse *p, const struct kvp_node *n)
{
	return each_item(p, n, "kv_dtypes", KVP_SCENARIO_MAX, &p->s->nkv, item_kv);
}

static kvp_status key_questions(struct parse *p, const struct kvp_node *n)
{
	p->has_questions = true;
	return each_item(p, n, "questions", KVP_SCENARIO_MAX, NULL, item_question);
}

static kvp_status key_plots(struct parse *p, const struct kvp_node *n)
{
	p->has_plots = true;
	return each_item(p, n, "plots", KVP_SCENARIO_MAX, NULL, item_plot);
}

static kvp_status key_results(struct parse *p, const struct kvp_node *n)
{
	return each_item(p, n, "results", KVP_SCENARIO_MAX, &p->s->nresults, item_result);
}

static kvp_status key_utilization(struct parse *p, const struct kvp_node *n)
{
	kvp_status st = kvp_node_double(p->doc, n, "utilization", &p->s->utilization, p->err);
	if (!st && (p->s->utilization <= 0 || p->s->utilization > 1))
		return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_INVALID, "utilization",
				     "must lie in (0, 1], got %s", n->value);
	return st;
}

static kvp_status key_block_size(struct parse *p, const struct kvp_node *n)
{
	uint64_t v;
	kvp_status st = kvp_node_u64(p->doc, n, "block_size", &v, p->err);
	if (!st && (v < 1 || v > 1u << 20))
		return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_INVALID, "block_size",
				     "must be between 1 and 1048576 tokens, got %s", n->value);
	p->s->block_size = (uint32_t)v;
	return st;
}

static kvp_status key_max_batched(struct parse *p, const struct kvp_node *n)
{
	return node_tokens(p, n, "max_batched_tokens", &p->s->max_batched_tokens);
}

/* One workload: {name, context, batch} required, profile optional. */
static kvp_status workload(struct parse *p, const struct kvp_node *n, size_t i)
{
	static const char *const keys[] = {"name", "context", "batch", "profile", NULL};
	struct kvp_scenario_workload *w = &p->s->workloads[i];
	kvp_status st;
	if ((st = kvp_node_expect(p->doc, n, "workloads", KVP_NODE_MAP, p->err)) ||
	    (st = kvp_map_only(p->doc, n, keys, p->err)))
		return st;
	for (const char *const *k = keys; k < keys + 3; k++)
		if (!kvp_map_get(n, *k))
			return kvp_node_fail(p->doc, n, p->err, KVP_STATUS_INVALID, *k,
					     "required in every workload");
	if ((st = kvp_node_str(p->doc, kvp_map_get(n, "name"), "name", w->name, sizeof w->name,
			       p->err)) ||
	    (st = node_tokens(p, kvp_map_get(n, "context"), "context", &w->context)) ||
	    (st = kvp_node_u64(p->doc, kvp_map_get(n, "batch"), "batch", &w->batch, p->err)))
		return st;
	if (w->batch == 0)
		return kvp_node_fail(p->doc, kvp_map_get(n, "batch"), p->err, KVP_STATUS_INVALID,
				     "batch", "must be at least 1");
	const struct kvp_node *prof = kvp_map_get(n, "profile");
	if (!prof)
		return KVP_STATUS_OK;
	if ((st = kvp_node_expect(p->doc, prof, "profile", KVP_NODE_SCALAR, p->err)))
		return st;
	if (!(w->lengths = calloc(1, sizeof *w->lengths)))
		return kvp_error_set(p->err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	return load_profile(p, prof, "profile", w->lengths);
}

static kvp_status key_workloads(struct parse *p, const struct kvp_node *n)
{
	kvp_status st = kvp_node_expect(p->doc, n, "workloads", KVP_NODE_SEQ, p->err);
	if (st)
		return st;
	if (n->n > KVP_SCENARIO_MAX)
		return kvp_node_fail(p->doc, n->items[KVP_SCENARIO_MAX], p->err, KVP_STATUS_INVALID,
				     "workloads", "at most %d entries", KVP_SCENARIO_MAX);
	for (size_t i = 0; i < n->n; i++)
		if ((st = workload(p, n->items[i], i)))
			return st;
	p->s->nworkloads = n->n;
	return KVP_STATUS_OK;
}

/* The scenario's keys, in the order they are read (profiles before what needs them). */
static const struct scenario_key {
	const char *name;
	bool required;
	kvp_status (*read)(struct parse *, const struct kvp_node *);
} scenario_keys[] = {
	{"title", true, key_title},
	{"description", false, key_description},
	{"models", true, key_models},
	{"gpus", true, key_gpus},
	{"engines", false, key_engines},
	{"tp", false, key_tp},
	{"kv_dtypes", false, key_kv},
	{"utilization", false, key_utilization},
	{"block_size", false, key_block_size},
	{"max_batched_tokens", false, key_max_batched},
	{"workloads", true, key_workloads},
	{"results", false, key_results},
	{"questions", false, key_questions},
	{"plots", false, key_plots},
};

#define NKEYS (sizeof scenario_keys / sizeof scenario_keys[0])

void kvp_scenario_free(struct kvp_scenario *s)
{
	for (size_t i = 0; i < KVP_SCENARIO_MAX; i++)
		if (s->workloads[i].lengths) {
			kvp_workload_free(s->workloads[i].lengths);
			free(s->workloads[i].lengths);
		}
	free(s->models);
	free(s->gpus);
	memset(s, 0, sizeof *s);
}

kvp_status kvp_scenario_load(const char *path, struct kvp_scenario *s, struct kvp_error *err)
{
	memset(s, 0, sizeof *s);
	struct kvp_doc *doc = NULL;
	kvp_status st = kvp_doc_load_file(path, &doc, err);
	if (st)
		return st;
	struct parse p = {.doc = doc, .s = s, .err = err};
	const char *slash = strrchr(path, '/');
	if (strlen(path) >= sizeof s->path || (slash && (size_t)(slash - path) >= sizeof p.dir)) {
		kvp_doc_free(doc);
		return kvp_error_set(err, KVP_STATUS_USAGE, path, 0, 0, NULL,
				     "path longer than %zu bytes", sizeof p.dir - 1);
	}
	snprintf(s->path, sizeof s->path, "%s", path);
	if (slash)
		snprintf(p.dir, sizeof p.dir, "%.*s", (int)(slash - path), path);
	const char *allowed[NKEYS + 1];
	for (size_t i = 0; i < NKEYS; i++)
		allowed[i] = scenario_keys[i].name;
	allowed[NKEYS] = NULL;
	if (!doc->root) {
		st = kvp_node_fail(doc, NULL, err, KVP_STATUS_INVALID, NULL, "empty scenario");
		goto out;
	}
	if ((st = kvp_node_expect(doc, doc->root, "scenario", KVP_NODE_MAP, err)) ||
	    (st = kvp_map_only(doc, doc->root, allowed, err)))
		goto out;
	for (size_t i = 0; i < NKEYS; i++) {
		const struct kvp_node *n = kvp_map_get(doc->root, scenario_keys[i].name);
		if (!n) {
			if (scenario_keys[i].required) {
				st = kvp_node_fail(doc, doc->root, err, KVP_STATUS_INVALID,
						   scenario_keys[i].name, "required");
				goto out;
			}
			continue;
		}
		if ((st = scenario_keys[i].read(&p, n)))
			goto out;
	}
	/* required lists must not be empty */
	const struct { size_t n; const char *key; } need[] = {
		{s->nmodels, "models"}, {s->ngpus, "gpus"}, {s->nworkloads, "workloads"}};
	for (size_t i = 0; i < sizeof need / sizeof need[0]; i++)
		if (need[i].n == 0) {
			st = kvp_node_fail(doc, kvp_map_get(doc->root, need[i].key), err,
					   KVP_STATUS_INVALID, need[i].key, "must not be empty");
			goto out;
		}
	if (!s->nengines)
		s->engines[s->nengines++] = KVP_ENGINE_GENERIC;
	if (!s->ntp)
		s->tp[s->ntp++] = 1;
	if (!s->nkv)
		s->kv[s->nkv++] = KVP_DTYPE_AUTO;
	if (!p.has_questions)
		s->questions = KVP_QUESTION_FIT;
	bool lengths = false;
	for (size_t i = 0; i < s->nworkloads; i++)
		lengths |= s->workloads[i].lengths != NULL;
	if (!p.has_plots)
		s->plots = KVP_REPORT_PLOT_BUDGET | KVP_REPORT_PLOT_KV_CONTEXT | KVP_REPORT_PLOT_MAX_SEQS |
			   KVP_REPORT_PLOT_PERF | (lengths ? KVP_REPORT_PLOT_BLOCK_SIZE : 0) |
			   (s->nresults ? KVP_REPORT_PLOT_VALIDATE : 0);
	if (((s->plots & KVP_REPORT_PLOT_BLOCK_SIZE) && !lengths) ||
	    ((s->plots & KVP_REPORT_PLOT_VALIDATE) && !s->nresults)) {
		bool bs = (s->plots & KVP_REPORT_PLOT_BLOCK_SIZE) && !lengths;
		st = kvp_node_fail(doc, kvp_map_get(doc->root, "plots"), err, KVP_STATUS_INVALID,
				   "plots", bs ? "block-size needs a workload with a profile (its "
						 "request lengths)"
					       : "validate needs results (kvbench --out files)");
		goto out;
	}
	size_t options = s->nmodels * s->ngpus * s->nengines * s->ntp * s->nkv;
	if (options > KVP_SCENARIO_MAX_OPTIONS)
		st = kvp_node_fail(doc, doc->root, err, KVP_STATUS_INVALID, "models",
				   "%zu options (models x gpus x engines x tp x kv_dtypes); at most %d",
				   options, KVP_SCENARIO_MAX_OPTIONS);
out:
	kvp_doc_free(doc);
	if (st)
		kvp_scenario_free(s);
	return st;
}
