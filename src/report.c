/* report.c: read a design-review scenario and write its report as Markdown
 * and HTML, with the charts beside it.  The scenario is walked with key
 * tables (unknown keys refused, every error at file:line:col); the report
 * arranges what kvp_budget_compute and the plot builders return and computes
 * nothing of its own beyond unit conversion.  See report.h. */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <unistd.h>

#include "config.h"
#include "atomic-file.h"
#include "units.h"
#include "workload.h"
#include "yaml-walk.h"

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
				     "unknown engine '%s' (generic, vllm, sglang, trtllm)", n->value);
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

/* ================================================================ the document */

/* One document written twice: Markdown and HTML.  Text may hold `code` spans. */
struct doc {
	FILE *md, *html;
	size_t cols, first_number;  /* of the open table */
};

static void html_text(FILE *f, const char *s, bool code_spans)
{
	bool code = false;
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '`':
			if (code_spans) {
				fputs(code ? "</code>" : "<code>", f);
				code = !code;
				break;
			}
			/* fall through */
		default: fputc(*s, f);
		}
	}
	if (code)
		fputs("</code>", f);
}

/* Markdown text: '<', which opens every HTML tag a renderer would pass
 * through, as &lt;, so no name becomes a tag or a script (& and > open
 * none, and stay readable inside `code` spans); in a table cell (`cell`) also
 * | as \| and a line break as a space; in a heading (`line`) a line break as
 * a space. */
static void md_put(FILE *f, const char *s, bool cell, bool line)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '|':
			fputs(cell ? "\\|" : "|", f);
			break;
		case '\n':
		case '\r':
			fputc(cell || line ? ' ' : *s, f);
			break;
		default: fputc(*s, f);
		}
	}
}

static void md_cell(FILE *f, const char *s)
{
	md_put(f, s, true, true);
}

static void doc_begin(struct doc *d, const char *title)
{
	fprintf(d->html, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			 "<title>");
	html_text(d->html, title, false);
	fprintf(d->html,
		"</title>\n<style>\n"
		"body { font-family: sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em;"
		" color: #222; line-height: 1.45; }\n"
		"table { border-collapse: collapse; margin: 1em 0; font-size: 0.92em; }\n"
		"th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; }\n"
		"th { background: #eee; }\n"
		"td.n { text-align: right; font-variant-numeric: tabular-nums; }\n"
		"pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }\n"
		"img { max-width: 100%%; border: 1px solid #ddd; }\n"
		".note { color: #555; font-size: 0.92em; }\n"
		"</style>\n</head>\n<body>\n");
}

static void doc_end(struct doc *d)
{
	fprintf(d->html, "</body>\n</html>\n");
}

static void doc_heading(struct doc *d, int level, const char *text)
{
	fprintf(d->md, "%.*s ", level, "######");
	md_put(d->md, text, false, true);
	fputs("\n\n", d->md);
	fprintf(d->html, "<h%d>", level);
	html_text(d->html, text, true);
	fprintf(d->html, "</h%d>\n", level);
}

static void doc_para_class(struct doc *d, const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void doc_para_class(struct doc *d, const char *cls, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fputs(cls ? "*" : "", d->md);
	md_put(d->md, buf, false, false);
	fputs(cls ? "*\n\n" : "\n\n", d->md);
	fprintf(d->html, cls ? "<p class=\"%s\">" : "<p>", cls);
	html_text(d->html, buf, true);
	fprintf(d->html, "</p>\n");
}

#define doc_para(d, ...) doc_para_class(d, NULL, __VA_ARGS__)
#define doc_note(d, ...) doc_para_class(d, "note", __VA_ARGS__)

/* Columns from `first_number` on are right-aligned numbers. */
static void doc_table(struct doc *d, const char *const *head, size_t n, size_t first_number)
{
	d->cols = n;
	d->first_number = first_number;
	fprintf(d->md, "|");
	for (size_t i = 0; i < n; i++) {
		fputc(' ', d->md);
		md_cell(d->md, head[i]);
		fprintf(d->md, " |");
	}
	fprintf(d->md, "\n|");
	for (size_t i = 0; i < n; i++)
		fprintf(d->md, "%s|", i >= first_number ? "---:" : "---");
	fprintf(d->md, "\n");
	fprintf(d->html, "<table>\n<tr>");
	for (size_t i = 0; i < n; i++) {
		fprintf(d->html, "<th>");
		html_text(d->html, head[i], false);
		fprintf(d->html, "</th>");
	}
	fprintf(d->html, "</tr>\n");
}

static void doc_row(struct doc *d, const char *const *cells)
{
	size_t n = d->cols, first_number = d->first_number;
	fprintf(d->md, "|");
	fprintf(d->html, "<tr>");
	for (size_t i = 0; i < n; i++) {
		fputc(' ', d->md);
		md_cell(d->md, cells[i]);
		fprintf(d->md, " |");
		fprintf(d->html, i >= first_number ? "<td class=\"n\">" : "<td>");
		html_text(d->html, cells[i], false);
		fprintf(d->html, "</td>");
	}
	fprintf(d->md, "\n");
	fprintf(d->html, "</tr>\n");
}

static void doc_table_end(struct doc *d)
{
	fprintf(d->md, "\n");
	fprintf(d->html, "</table>\n");
	d->cols = 0;
}

static void doc_pre(struct doc *d, const char *text)
{
	/* a fence longer than any run of backquotes inside, so none closes it */
	size_t run = 0, longest = 0;
	for (const char *p = text; *p; p++)
		longest = (run = *p == '`' ? run + 1 : 0) > longest ? run : longest;
	int fence = longest < 3 ? 3 : (int)longest + 1;
	fprintf(d->md, "%.*s\n%s%.*s\n\n", fence, "````````````````````````````````", text,
		fence, "````````````````````````````````");
	fprintf(d->html, "<pre>");
	html_text(d->html, text, false);
	fprintf(d->html, "</pre>\n");
}

static void doc_image(struct doc *d, const char *alt, const char *src)
{
	fputs("![", d->md);
	md_put(d->md, alt, true, true);
	fprintf(d->md, "](%s)\n\n", src); /* plots/STEM.EXT: a safe stem */
	fprintf(d->html, "<p><img src=\"");
	html_text(d->html, src, false);
	fprintf(d->html, "\" alt=\"");
	html_text(d->html, alt, false);
	fprintf(d->html, "\"></p>\n");
}

/* ================================================================ options */

/* One way to serve: a model on a GPU type, an engine, a split, a KV dtype. */
struct option {
	const struct kvp_model *m;
	const struct kvp_gpu *g;
	enum kvp_engine engine;
	uint32_t tp;
	enum kvp_dtype kv;
};

static size_t options_list(const struct kvp_scenario *s, struct option *out)
{
	size_t n = 0;
	for (size_t mi = 0; mi < s->nmodels; mi++)
		for (size_t gi = 0; gi < s->ngpus; gi++)
			for (size_t ei = 0; ei < s->nengines; ei++)
				for (size_t ti = 0; ti < s->ntp; ti++)
					for (size_t ki = 0; ki < s->nkv; ki++)
						out[n++] = (struct option){&s->models[mi], &s->gpus[gi],
									   s->engines[ei], s->tp[ti],
									   s->kv[ki]};
	return n;
}

static struct kvp_budget_opts budget_opts(const struct kvp_scenario *s, enum kvp_engine engine,
					  uint32_t tp, enum kvp_dtype kv,
					  const struct kvp_scenario_workload *w)
{
	struct kvp_budget_opts o = {0};
	o.engine = engine;
	o.par.tp = tp;
	o.par.pp = 1;
	o.dtype = KVP_DTYPE_AUTO;
	o.kv_dtype = kv;
	o.block_size = s->block_size;
	o.utilization = s->utilization;
	o.max_batched_tokens = s->max_batched_tokens;
	o.context = w ? w->context : 0;
	o.batch = w ? w->batch : 1;
	return o;
}

static kvp_status option_budget(const struct kvp_scenario *s, const struct option *op,
				const struct kvp_scenario_workload *w, struct kvp_budget *b,
				struct kvp_error *err)
{
	struct kvp_budget_opts o = budget_opts(s, op->engine, op->tp, op->kv, w);
	return kvp_budget_compute(op->m, op->g, &o, b, err);
}

/* ================================================================ formatting */

static const char *bytes_str(uint64_t v, char *buf, size_t size)
{
	kvp_format_bytes(v, buf, size);
	return buf;
}

static const char *u64_str(uint64_t v, char *buf, size_t size)
{
	kvp_format_u64(v, buf, size);
	return buf;
}

static const char *tokens_str(uint64_t n, char *buf, size_t size)
{
	if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, size, "%lluk", (unsigned long long)(n / 1024));
	else
		kvp_format_u64(n, buf, size);
	return buf;
}

static void option_cells(const struct option *op, const struct kvp_spec *spec, char kv[][32],
			 char tp[][16], const char **cells)
{
	snprintf(*tp, 16, "%u", op->tp);
	if (spec)
		snprintf(*kv, 32, "%s", kvp_dtype_name(spec->kv_dtype));
	else
		snprintf(*kv, 32, "%s", kvp_dtype_name(op->kv));
	cells[0] = op->m->name;
	cells[1] = op->g->name;
	cells[2] = kvp_engine_name(op->engine);
	cells[3] = *tp;
	cells[4] = *kv;
}

/* ================================================================ sections */

struct report {
	const struct kvp_scenario *s;
	const struct kvp_report_opts *o;
	struct kvp_report_result *res;
	struct doc d;
	struct option *ops;
	size_t nops;
	struct kvp_budget *b;     /* scratch */
	char dir[1024];           /* DIR/plots */
	struct kvp_error *err;    /* what stops the report */
};

/* Stop the report with e (or with st when e says nothing). */
static kvp_status fail(struct report *r, kvp_status st, const struct kvp_error *e)
{
	if (e && e->status)
		*r->err = *e;
	else
		kvp_error_set(r->err, st, NULL, 0, 0, NULL, "%s", kvp_status_str(st));
	return st;
}

static void section_scenario(struct report *r)
{
	const struct kvp_scenario *s = r->s;
	struct doc *d = &r->d;
	char a[64], b2[64], c[64], e[64], f[64];
	doc_heading(d, 2, "Scenario");
	static const char *const mhead[] = {"model", "layers", "attention heads / KV heads",
					    "head dim", "max context", "parameters",
					    "KV per token (whole model, serving dtype)"};
	doc_table(d, mhead, 7, 1);
	for (size_t i = 0; i < s->nmodels; i++) {
		const struct kvp_model *m = &s->models[i];
		struct kvp_error err = {0};
		const char *kvtok = "-";
		if (!kvp_spec_build(m, (struct kvp_parallel){.tp = 1, .pp = 1}, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO,
				    &r->b->spec, &err)) {
			kvp_format_u64(r->b->spec.token_bytes_total, f, sizeof f);
			strcat(f, " B");
			kvtok = f;
		}
		snprintf(a, sizeof a, "%u", m->num_layers);
		snprintf(b2, sizeof b2, "%u / %u", m->num_heads, m->num_kv_heads);
		snprintf(c, sizeof c, "%u", m->head_dim);
		char params[32];
		const char *cells[] = {m->name, a, b2, c, u64_str(m->max_context, e, sizeof e),
				       u64_str(m->params, params, sizeof params), kvtok};
		doc_row(d, cells);
	}
	doc_table_end(d);

	static const char *const ghead[] = {"GPU", "memory", "bandwidth", "host link",
					    "price per GPU-hour"};
	doc_table(d, ghead, 5, 1);
	for (size_t i = 0; i < s->ngpus; i++) {
		const struct kvp_gpu *g = &s->gpus[i];
		kvp_format_rate(g->bandwidth_bps, b2, sizeof b2);
		if (g->price_per_hour > 0)
			snprintf(c, sizeof c, "$%.2f", g->price_per_hour);
		else
			snprintf(c, sizeof c, "unknown");
		const char *cells[] = {g->name, bytes_str(g->memory_bytes, a, sizeof a), b2,
				       g->host_link[0] ? g->host_link : "-", c};
		doc_row(d, cells);
	}
	doc_table_end(d);

	static const char *const whead[] = {"workload", "context (tokens)", "batch (sequences)",
					    "tokens in flight"};
	doc_table(d, whead, 4, 1);
	for (size_t i = 0; i < s->nworkloads; i++) {
		const struct kvp_scenario_workload *w = &s->workloads[i];
		uint64_t tokens;
		const char *t = kvp_mul(w->context, w->batch, &tokens) ? u64_str(tokens, c, sizeof c)
								       : "overflow";
		const char *cells[] = {w->name, u64_str(w->context, a, sizeof a),
				       u64_str(w->batch, b2, sizeof b2), t};
		doc_row(d, cells);
	}
	doc_table_end(d);

	char engines[128] = "", tps[128] = "", kvs[128] = "";
	for (size_t i = 0; i < s->nengines; i++)
		snprintf(engines + strlen(engines), sizeof engines - strlen(engines), "%s%s",
			 i ? ", " : "", kvp_engine_name(s->engines[i]));
	for (size_t i = 0; i < s->ntp; i++)
		snprintf(tps + strlen(tps), sizeof tps - strlen(tps), "%s%u", i ? ", " : "", s->tp[i]);
	for (size_t i = 0; i < s->nkv; i++)
		snprintf(kvs + strlen(kvs), sizeof kvs - strlen(kvs), "%s%s", i ? ", " : "",
			 kvp_dtype_name(s->kv[i]));
	if (s->utilization > 0)
		snprintf(a, sizeof a, "%.4g", s->utilization);
	else
		snprintf(a, sizeof a, "the engine's default");
	if (s->block_size)
		snprintf(b2, sizeof b2, "%u tokens", s->block_size);
	else
		snprintf(b2, sizeof b2, "the engine's default");
	doc_para(d, "Engines: %s. Tensor-parallel sizes: %s. KV dtypes: %s (auto: the serving "
		    "dtype). Memory fraction: %s. Block size: %s. Max batched tokens: %llu. "
		    "Each option below is one model on one GPU type with one engine, split and "
		    "KV dtype: %zu options.",
		 engines, tps, kvs, a, b2,
		 (unsigned long long)(s->max_batched_tokens ? s->max_batched_tokens
							    : KVP_DEFAULT_MAX_BATCHED_TOKENS),
		 r->nops);
}

/* The options a split cannot make, once each, as a note. */
static void note_invalid(struct report *r, const struct option *op, const struct kvp_error *e)
{
	doc_note(&r->d, "%s on %s at tp %u is left out: %s: %s", op->m->name, op->g->name, op->tp,
		 e->field, e->msg);
}

static kvp_status section_budget(struct report *r)
{
	struct doc *d = &r->d;
	doc_heading(d, 2, "Memory budget of one GPU");
	doc_para(d, "Per GPU (the worst one under tensor parallelism). The KV pool is what "
		    "the engine leaves for the KV cache after weights, the activation peak and "
		    "runtime overhead; blocks and max tokens follow the engine's paging. "
		    "Cost is the GPU's price times the GPUs of one replica.");
	static const char *const head[] = {"model", "GPU", "engine", "tp", "KV", "GPUs", "$/hour",
					   "weights", "activations", "overhead", "KV pool",
					   "blocks", "max tokens"};
	doc_table(d, head, 13, 5);
	size_t invalid = 0;
	struct kvp_error skipped[KVP_SCENARIO_MAX_OPTIONS];
	size_t skipped_at[KVP_SCENARIO_MAX_OPTIONS];
	for (size_t i = 0; i < r->nops; i++) {
		const struct option *op = &r->ops[i];
		struct kvp_error e = {0};
		kvp_status st = option_budget(r->s, op, NULL, r->b, &e);
		if (st == KVP_STATUS_INVALID) {
			skipped[invalid] = e;
			skipped_at[invalid++] = i;
			continue;
		}
		if (st) {
			doc_table_end(d);
			return fail(r, st, &e);
		}
		char kv[1][32], tp[1][16], gpus[16], cost[32], w[32], a[32], o[32], pool[32],
			blocks[32], tokens[32];
		const char *cells[13];
		option_cells(op, &r->b->spec, kv, tp, cells);
		snprintf(gpus, sizeof gpus, "%u", op->tp);
		if (op->g->price_per_hour > 0)
			snprintf(cost, sizeof cost, "$%.2f", op->g->price_per_hour * op->tp);
		else
			snprintf(cost, sizeof cost, "-");
		cells[5] = gpus;
		cells[6] = cost;
		cells[7] = bytes_str(r->b->weights_bytes, w, sizeof w);
		cells[8] = bytes_str(r->b->activation_bytes, a, sizeof a);
		cells[9] = bytes_str(r->b->overhead_bytes, o, sizeof o);
		cells[10] = r->b->weights_fit ? bytes_str(r->b->kv_pool_bytes, pool, sizeof pool)
					      : "does not fit";
		cells[11] = u64_str(r->b->num_blocks, blocks, sizeof blocks);
		cells[12] = u64_str(r->b->max_tokens, tokens, sizeof tokens);
		doc_row(d, cells);
	}
	doc_table_end(d);
	/* one note per model and split, not per GPU, engine and dtype */
	for (size_t k = 0; k < invalid; k++) {
		const struct option *op = &r->ops[skipped_at[k]];
		bool seen = false;
		for (size_t j = 0; j < k && !seen; j++)
			seen = r->ops[skipped_at[j]].m == op->m && r->ops[skipped_at[j]].tp == op->tp;
		if (!seen)
			note_invalid(r, op, &skipped[k]);
	}
	return KVP_STATUS_OK;
}

/* In short: for each model and workload, the options that hold it and the
 * cheapest replica among them (GPU price x tp; unpriced GPUs come last). */
static kvp_status section_summary(struct report *r)
{
	const struct kvp_scenario *s = r->s;
	struct doc *d = &r->d;
	doc_heading(d, 2, "In short");
	for (size_t mi = 0; mi < s->nmodels; mi++) {
		for (size_t k = 0; k < s->nworkloads; k++) {
			const struct kvp_scenario_workload *w = &s->workloads[k];
			size_t best = SIZE_MAX, fits = 0, tried = 0;
			double best_cost = INFINITY;
			for (size_t i = 0; i < r->nops; i++) {
				if (r->ops[i].m != &s->models[mi])
					continue;
				tried++;
				struct kvp_error e = {0};
				kvp_status st = option_budget(s, &r->ops[i], w, r->b, &e);
				if (st == KVP_STATUS_INVALID || (!st && !r->b->fits))
					continue;
				if (st)
					return fail(r, st, &e);
				fits++;
				double cost = r->ops[i].g->price_per_hour > 0
					? r->ops[i].g->price_per_hour * r->ops[i].tp : INFINITY;
				if (best == SIZE_MAX || cost < best_cost) {
					best = i;
					best_cost = cost;
				}
			}
			char b1[32], b2[32], cost[48] = "";
			u64_str(w->batch, b1, sizeof b1);
			tokens_str(w->context, b2, sizeof b2);
			if (best == SIZE_MAX) {
				doc_para(d, "%s, %s (%s x %s tokens): none of its %zu options holds it.",
					 s->models[mi].name, w->name, b1, b2, tried);
				continue;
			}
			const struct option *op = &r->ops[best];
			if (isfinite(best_cost))
				snprintf(cost, sizeof cost, ", $%.2f per hour", best_cost);
			doc_para(d, "%s, %s (%s x %s tokens): %zu of %zu options hold it; the cheapest "
				    "replica is %u x %s, %s, KV %s%s.",
				 s->models[mi].name, w->name, b1, b2, fits, tried, op->tp, op->g->name,
				 kvp_engine_name(op->engine), kvp_dtype_name(op->kv), cost);
		}
	}
	doc_note(d, "Price per replica is not price per token: the tables and charts below show "
		    "how many sequences each option holds.");
	return KVP_STATUS_OK;
}

/* One question: a row per option, a column per workload. */
static kvp_status section_question(struct report *r, enum kvp_question q)
{
	struct doc *d = &r->d;
	const struct kvp_scenario *s = r->s;
	switch (q) {
	case KVP_QUESTION_FIT:
		doc_heading(d, 2, "Does each workload fit?");
		doc_para(d, "Each cell: whether the workload's batch of sequences at its context "
			    "fits the KV pool of one replica, and the most sequences of that "
			    "context that do.");
		break;
	case KVP_QUESTION_MAX_CONTEXT:
		doc_heading(d, 2, "Longest context for each workload's batch");
		doc_para(d, "Each cell: the longest context (tokens per sequence) at which the "
			    "workload's batch still fits; marked when it passes the model's "
			    "max_context.");
		break;
	case KVP_QUESTION_UTILIZATION:
		doc_heading(d, 2, "Memory fraction each workload needs");
		doc_para(d, "Each cell: the engine's memory fraction (vLLM gpu_memory_utilization, "
			    "SGLang mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction) the "
			    "workload needs; above 1 the GPU is too small.");
		break;
	}
	const char *head[5 + KVP_SCENARIO_MAX] = {"model", "GPU", "engine", "tp", "KV"};
	char wh[KVP_SCENARIO_MAX][96];
	for (size_t i = 0; i < s->nworkloads; i++) {
		char b[32], c[32];
		snprintf(wh[i], sizeof wh[i], "%s: %s x %s", s->workloads[i].name,
			 u64_str(s->workloads[i].batch, b, sizeof b),
			 tokens_str(s->workloads[i].context, c, sizeof c));
		head[5 + i] = wh[i];
	}
	doc_table(d, head, 5 + s->nworkloads, 5);
	for (size_t i = 0; i < r->nops; i++) {
		const struct option *op = &r->ops[i];
		const char *cells[5 + KVP_SCENARIO_MAX];
		char kv[1][32], tp[1][16], val[KVP_SCENARIO_MAX][64];
		bool valid = true;
		for (size_t k = 0; k < s->nworkloads && valid; k++) {
			const struct kvp_scenario_workload *w = &s->workloads[k];
			struct kvp_error e = {0};
			kvp_status st = option_budget(s, op, w, r->b, &e);
			if (st == KVP_STATUS_INVALID) {
				valid = false;
				break;
			}
			if (st) {
				doc_table_end(d);
				return fail(r, st, &e);
			}
			char n[32];
			const struct kvp_budget *b = r->b;
			if (q == KVP_QUESTION_FIT) {
				if (!b->weights_fit)
					snprintf(val[k], sizeof val[k], "no: weights do not fit");
				else
					snprintf(val[k], sizeof val[k], "%s (max %s)",
						 b->fits ? "yes" : "no",
						 u64_str(b->max_sequences, n, sizeof n));
			} else if (q == KVP_QUESTION_MAX_CONTEXT) {
				uint64_t c = kvp_budget_max_context(b, w->batch, 1ULL << 40);
				snprintf(val[k], sizeof val[k], "%s%s", u64_str(c, n, sizeof n),
					 c > op->m->max_context ? " (past max_context)" : "");
			} else {
				double u = kvp_budget_utilization_for(b, w->context, w->batch);
				if (isinf(u))
					snprintf(val[k], sizeof val[k], "never");
				else
					snprintf(val[k], sizeof val[k], "%.4f%s", u,
						 u > 1 ? " (too small)" : "");
			}
			cells[5 + k] = val[k];
		}
		if (!valid)
			continue;
		option_cells(op, &r->b->spec, kv, tp, cells);
		doc_row(d, cells);
	}
	doc_table_end(d);
	return KVP_STATUS_OK;
}

/* Write, render and show one chart; a render failure is kept, not returned. */
static kvp_status show_plot(struct report *r, struct kvp_plot *p, const char *caption)
{
	struct kvp_error err = {0};
	kvp_plot_mark_overlaps(p);
	kvp_status st = kvp_plot_write(p, r->dir, r->o->term, &err);
	if (st)
		return fail(r, st, &err);
	r->res->plots++;
	const char *ext = kvp_plot_term_ext(r->o->term);
	char src[sizeof p->name + 16];
	snprintf(src, sizeof src, "plots/%s.%s", p->name, ext);
	doc_heading(&r->d, 3, caption);
	st = kvp_plot_render(p, r->dir, r->o->term, r->o->gnuplot, &err);
	if (st) {
		if (!r->res->render.status)
			r->res->render = err;
		doc_note(&r->d, "No image: gnuplot could not draw it. The data is `plots/%s.dat` "
				"and the script `plots/%s.gp`: `cd plots && gnuplot %s.gp`.",
			 p->name, p->name, p->name);
	} else {
		r->res->images++;
		doc_image(&r->d, caption, src);
		doc_note(&r->d, "Data: `plots/%s.dat`; script: `plots/%s.gp`.", p->name, p->name);
	}
	for (size_t i = 0; i < p->nnotes; i++)
		doc_note(&r->d, "%s", p->notes[i]);
	return KVP_STATUS_OK;
}

/* The smallest split in the scenario at which the model's weights fit every
 * GPU, else the largest: the one the sequences-against-context chart uses. */
static uint32_t chart_tp(struct report *r, const struct kvp_model *m)
{
	const struct kvp_scenario *s = r->s;
	uint32_t best = 0, largest = 0;
	for (size_t t = 0; t < s->ntp; t++) {
		bool all = true, valid = true;
		for (size_t g = 0; g < s->ngpus && all; g++) {
			struct kvp_budget_opts o = budget_opts(s, s->engines[0], s->tp[t], s->kv[0], NULL);
			struct kvp_error e = {0};
			kvp_status st = kvp_budget_compute(m, &s->gpus[g], &o, r->b, &e);
			valid = st == KVP_STATUS_OK;
			all = valid && r->b->weights_fit;
		}
		if (valid && s->tp[t] > largest)
			largest = s->tp[t];
		if (all && (!best || s->tp[t] < best))
			best = s->tp[t];
	}
	return best ? best : largest;
}

/* The first GPU of the scenario on which the model's weights leave a pool at
 * split tp (the block-size chart's), else the first. */
static size_t chart_gpu(struct report *r, const struct kvp_model *m, uint32_t tp)
{
	const struct kvp_scenario *s = r->s;
	for (size_t g = 0; g < s->ngpus; g++) {
		struct kvp_budget_opts o = budget_opts(s, s->engines[0], tp, s->kv[0], NULL);
		struct kvp_error e = {0};
		if (!kvp_budget_compute(m, &s->gpus[g], &o, r->b, &e) && r->b->weights_fit)
			return g;
	}
	return 0;
}

/* Show a chart its builder returned st for: drawn when OK, a note when the
 * scenario cannot have it (INVALID), the report stopped otherwise.  Frees p. */
static kvp_status finish_chart(struct report *r, struct kvp_plot *p, kvp_status st,
			       const struct kvp_error *err, const char *caption)
{
	snprintf(p->source, sizeof p->source, "%s", r->o->source ? r->o->source : "kvplan report");
	if (!st) {
		st = show_plot(r, p, caption);
	} else if (st == KVP_STATUS_INVALID) {
		doc_note(&r->d, "No chart \"%s\": %s%s%s", caption, err->field,
			 err->field[0] ? ": " : "", err->msg);
		st = KVP_STATUS_OK;
	} else if (!r->err->status) {
		fail(r, st, err);
	}
	kvp_plot_free(p);
	return st;
}

/* A new chart named by fmt, err cleared for its builder; NULL: no memory. */
static struct kvp_plot *new_chart(struct kvp_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static struct kvp_plot *new_chart(struct kvp_error *err, const char *fmt, ...)
{
	char name[2 * KVP_NAME_MAX + 16];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	memset(err, 0, sizeof *err);
	return kvp_plot_new(name);
}

static kvp_status section_plots(struct report *r)
{
	const struct kvp_scenario *s = r->s;
	if (!s->plots)
		return KVP_STATUS_OK;
	doc_heading(&r->d, 2, "Charts");
	uint64_t ctx[KVP_PLOT_MAX_ROWS], batches[KVP_PLOT_MAX_ROWS];
	size_t nctx = kvp_plot_default_contexts(ctx, KVP_PLOT_MAX_ROWS);
	size_t nb = kvp_plot_default_batches(batches, KVP_PLOT_MAX_ROWS);
	kvp_status st = KVP_STATUS_OK;
	char caption[512];
	struct kvp_error err = {0};
	struct kvp_plot *p;
	for (size_t i = 0; i < s->nmodels && (s->plots & KVP_REPORT_PLOT_BUDGET); i++) {
		const struct kvp_model *m = &s->models[i];
		if (!(p = new_chart(&err, "budget-%s", m->name)))
			return fail(r, KVP_STATUS_NOMEM, NULL);
		struct kvp_budget_opts o = budget_opts(s, s->engines[0], 1, s->kv[0], &s->workloads[0]);
		st = kvp_plot_budget(p, m, s->gpus, s->ngpus, s->tp, s->ntp, &o, &err);
		snprintf(caption, sizeof caption, "Memory budget: %s (%s, workload %s)", m->name,
			 kvp_engine_name(s->engines[0]), s->workloads[0].name);
		if ((st = finish_chart(r, p, st, &err, caption)))
			return st;
	}
	if (s->plots & KVP_REPORT_PLOT_KV_CONTEXT) {
		if (!(p = new_chart(&err, "kv-context")))
			return fail(r, KVP_STATUS_NOMEM, NULL);
		st = kvp_plot_kv_context(p, s->models, s->nmodels, ctx, nctx,
					 (struct kvp_parallel){.tp = 1, .pp = 1}, s->kv[0], 1, &err);
		if ((st = finish_chart(r, p, st, &err, "KV cache of one sequence against context")))
			return st;
	}
	/* sequences, roofline and block size at the smallest split that holds
	 * each model on every GPU */
	const struct kvp_scenario_workload *lw = NULL;  /* the first with lengths */
	for (size_t k = 0; k < s->nworkloads && !lw; k++)
		if (s->workloads[k].lengths)
			lw = &s->workloads[k];
	for (size_t i = 0; i < s->nmodels; i++) {
		const struct kvp_model *m = &s->models[i];
		uint32_t tp = chart_tp(r, m);
		if (s->plots & KVP_REPORT_PLOT_MAX_SEQS) {
			if (!(p = new_chart(&err, "max-seqs-%s", m->name)))
				return fail(r, KVP_STATUS_NOMEM, NULL);
			struct kvp_budget_opts o = budget_opts(s, s->engines[0], tp ? tp : 1, s->kv[0],
							       NULL);
			st = tp ? kvp_plot_max_seqs(p, m, s->gpus, s->ngpus, s->kv, s->nkv, ctx, nctx,
						    &o, &err)
				: kvp_error_set(&err, KVP_STATUS_INVALID, NULL, 0, 0, "tp",
						"no split in the scenario can hold it");
			snprintf(caption, sizeof caption, "Max concurrent sequences: %s (%s, tp %u)",
				 m->name, kvp_engine_name(s->engines[0]), tp);
			if ((st = finish_chart(r, p, st, &err, caption)))
				return st;
		}
		tp = tp ? tp : 1;
		/* the decode roofline and offload on each GPU, at the first
		 * workload's context and batch */
		for (size_t gi = 0; gi < s->ngpus && (s->plots & KVP_REPORT_PLOT_PERF); gi++) {
			if (!(p = new_chart(&err, "perf-%s-%s", m->name, s->gpus[gi].name)))
				return fail(r, KVP_STATUS_NOMEM, NULL);
			struct kvp_budget_opts o = budget_opts(s, s->engines[0], tp, s->kv[0],
							       &s->workloads[0]);
			st = kvp_plot_perf(p, m, &s->gpus[gi], NULL, &o, batches, nb, ctx, nctx, &err);
			snprintf(caption, sizeof caption, "Decode roofline and KV offload: %s on %u x %s",
				 m->name, tp, s->gpus[gi].name);
			if ((st = finish_chart(r, p, st, &err, caption)))
				return st;
		}
		/* the block size on the first GPU that holds the model */
		if (lw && (s->plots & KVP_REPORT_PLOT_BLOCK_SIZE)) {
			size_t gi = chart_gpu(r, m, tp);
			if (!(p = new_chart(&err, "block-size-%s", m->name)))
				return fail(r, KVP_STATUS_NOMEM, NULL);
			struct kvp_budget_opts o = budget_opts(s, s->engines[0], tp, s->kv[0], NULL);
			st = kvp_plot_block_size(p, m, &s->gpus[gi], &o, lw->lengths, NULL, 0, 0, &err);
			snprintf(caption, sizeof caption, "Block size: %s on %u x %s, workload %s",
				 m->name, tp, s->gpus[gi].name, lw->name);
			if ((st = finish_chart(r, p, st, &err, caption)))
				return st;
		}
	}
	if (s->plots & KVP_REPORT_PLOT_VALIDATE) {
		const char *paths[KVP_SCENARIO_MAX];
		for (size_t k = 0; k < s->nresults; k++)
			paths[k] = s->results[k];
		if (!(p = new_chart(&err, "validate")))
			return fail(r, KVP_STATUS_NOMEM, NULL);
		st = kvp_plot_validate(p, paths, s->nresults, NULL, 0, 0.2, &err);
		if ((st = finish_chart(r, p, st, &err,
				       "kvplan's predictions against kvbench's measurements")))
			return st;
	}
	return KVP_STATUS_OK;
}

/* The budget of one option, step by step, into buf. */
static void arithmetic(const struct kvp_budget *b, const struct kvp_gpu *g, char *buf, size_t size)
{
	const struct kvp_spec *s = &b->spec;
	const struct kvp_model *m = s->model;
	size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))
	char t1[32], t2[32], t3[32], t4[32], t5[32];
	double elem = kvp_dtype_info(s->kv_dtype)->bits / 8.0;
	PUT("KV per token on one GPU (layers %u-%u of %u):\n", s->first_layer,
	    s->first_layer + s->num_layers - 1, m->num_layers);
	for (int k = 0; k < KVP_LAYER_KIND_COUNT; k++) {
		if (!s->count[k] || k == KVP_LAYER_NONE)
			continue;
		kvp_format_u64(s->kind_token_bytes[k], t1, sizeof t1);
		if (k == KVP_LAYER_MLA)
			PUT("  mla      %3u layers x (r %u + d_rope %u) x %g B = %s B\n", s->count[k],
			    m->mla_kv_lora_rank, m->mla_rope_dim, elem, t1);
		else if (k == KVP_LAYER_MAMBA)
			PUT("  mamba    %3u layers: %s B of state per sequence\n", s->count[k],
			    u64_str(s->seq_bytes, t1, sizeof t1));
		else {
			uint32_t window = 0;
			for (uint32_t i = 0; i < s->num_layers && !window; i++)
				if (s->layers[i].kind == (enum kvp_layer_kind)k)
					window = s->layers[i].window;
			PUT("  %-8s %3u layers x 2 x %u KV heads x %u d_h x %g B = %s B%s",
			    kvp_layer_kind_name((enum kvp_layer_kind)k), s->count[k],
			    s->kv_heads_per_gpu, m->head_dim, elem, t1,
			    kvp_dtype_info(s->kv_dtype)->kv_scale_bytes ? " (with scales)" : "");
			if (window)
				PUT(" (window %u tokens)", window);
			PUT("\n");
		}
	}
	PUT("  = %s B per token\n", u64_str(s->token_bytes, t1, sizeof t1));
	bytes_str(b->gpu_memory_bytes, t1, sizeof t1);
	bytes_str(b->weights_bytes, t2, sizeof t2);
	bytes_str(b->activation_bytes, t3, sizeof t3);
	bytes_str(b->overhead_bytes, t4, sizeof t4);
	bytes_str(b->kv_pool_bytes, t5, sizeof t5);
	switch (b->engine) {
	case KVP_ENGINE_SGLANG:
		PUT("KV pool = %.4f x (GPU %s - overhead %s) - weights %s = %s\n", b->utilization, t1,
		    t4, t2, t5);
		break;
	case KVP_ENGINE_TRTLLM:
		PUT("KV pool = %.4f x (GPU %s - weights %s - activations %s - overhead %s) = %s\n",
		    b->utilization, t1, t2, t3, t4, t5);
		break;
	default:
		PUT("KV pool = GPU %s x %.4f - weights %s - activations %s - overhead %s = %s\n", t1,
		    b->utilization, t2, t3, t4, t5);
	}
	if (!b->weights_fit) {
		PUT("The weights, activations and overhead do not fit: no KV pool.\n");
		return;
	}
	bytes_str(b->page_bytes, t1, sizeof t1);
	u64_str(b->num_blocks, t2, sizeof t2);
	u64_str(b->max_tokens, t3, sizeof t3);
	if (b->engine == KVP_ENGINE_VLLM) /* vLLM pages one layer; a block spans a group */
		PUT("page = %u tokens of one layer = %s; blocks = floor(pool / (page x %u layers "
		    "per group)) = %s;\nmax tokens = blocks / %u group(s) x %u = %s\n",
		    b->block_size, t1, b->group_size, t2, b->num_groups, b->block_size, t3);
	else
		PUT("page = %u tokens = %s; blocks = floor(pool / page) = %s; max tokens = %s\n",
		    b->block_size, t1, t2, t3);
	(void)g;
#undef PUT
}

static kvp_status section_arithmetic(struct report *r)
{
	const struct kvp_scenario *s = r->s;
	doc_heading(&r->d, 2, "The arithmetic");
	doc_para(&r->d, "How each option's numbers come about (binary units: GiB = 2^30 bytes), "
			"and what one sequence of each workload takes of its pool.");
	for (size_t i = 0; i < r->nops; i++) {
		const struct option *op = &r->ops[i];
		struct kvp_error e = {0};
		kvp_status st = option_budget(s, op, NULL, r->b, &e);
		if (st == KVP_STATUS_INVALID)
			continue;
		if (st)
			return fail(r, st, &e);
		char head[512], text[4096];
		snprintf(head, sizeof head, "%s on %s, %s, tp %u, KV %s", op->m->name, op->g->name,
			 kvp_engine_name(op->engine), op->tp, kvp_dtype_name(r->b->spec.kv_dtype));
		arithmetic(r->b, op->g, text, sizeof text);
		size_t n = strlen(text);
		for (size_t k = 0; k < s->nworkloads && r->b->weights_fit; k++) {
			const struct kvp_scenario_workload *w = &s->workloads[k];
			if ((st = option_budget(s, op, w, r->b, &e)))
				return fail(r, st, &e);
			char t1[32], t2[32], t3[32], t4[32];
			snprintf(text + n, sizeof text - n,
				 "%s: one sequence of %s tokens takes %s of the pool -> at most %s "
				 "sequences; %s wanted: %s\n",
				 w->name, u64_str(w->context, t1, sizeof t1),
				 bytes_str(r->b->seq_bytes, t2, sizeof t2),
				 u64_str(r->b->max_sequences, t3, sizeof t3),
				 u64_str(w->batch, t4, sizeof t4), r->b->fits ? "fits" : "does not fit");
			n = strlen(text);
		}
		doc_heading(&r->d, 3, head);
		doc_pre(&r->d, text);
	}
	return KVP_STATUS_OK;
}

/* Start DIR/NAME through the atomic writer; *f is where its text goes. */
static kvp_status open_out(const char *dir, const char *name, struct kvp_afile *a, FILE **f,
			   struct kvp_error *err)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	kvp_status st = kvp_afile_open(a, path, err);
	*f = a->f;
	return st;
}

kvp_status kvp_report_write(const struct kvp_scenario *s, const struct kvp_report_opts *o,
			    struct kvp_report_result *res, struct kvp_error *err)
{
	memset(res, 0, sizeof *res);
	struct report r = {.s = s, .o = o, .res = res, .err = err};
	kvp_status st;
	if ((size_t)snprintf(r.dir, sizeof r.dir, "%s/plots", o->dir) >= sizeof r.dir)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "-o",
				     "a folder of at most %zu bytes", sizeof r.dir - 8);
	if ((st = kvp_plot_mkdir(r.dir, err)))
		return st;
	r.ops = calloc(KVP_SCENARIO_MAX_OPTIONS, sizeof *r.ops);
	r.b = malloc(sizeof *r.b);
	if (!r.ops || !r.b) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	r.nops = options_list(s, r.ops);
	struct kvp_afile md = {0}, html = {0};
	if ((st = open_out(o->dir, "report.md", &md, &r.d.md, err)) ||
	    (st = open_out(o->dir, "report.html", &html, &r.d.html, err)))
		goto out;

	doc_begin(&r.d, s->title);
	doc_heading(&r.d, 1, s->title);
	/* the description, paragraph by paragraph */
	char desc[sizeof s->description];
	snprintf(desc, sizeof desc, "%s", s->description);
	for (char *para = desc, *next; para && *para; para = next) {
		next = strstr(para, "\n\n");
		if (next) {
			*next = 0;
			next += 2;
		}
		if (*para)
			doc_para(&r.d, "%s", para);
	}
	doc_note(&r.d, "Made by kvplan %s from `%s` (`%s`). Every number comes from kvplan's "
		       "model and budget library; the last section shows the arithmetic. "
		       "Sizes are binary (GiB = 2^30 bytes); contexts count tokens (k = 1024).",
		 PACKAGE_VERSION, s->path, o->source ? o->source : "kvplan report");
	section_scenario(&r);
	if ((st = section_summary(&r)) || (st = section_budget(&r)))
		goto out;
	static const enum kvp_question qs[] = {KVP_QUESTION_FIT, KVP_QUESTION_MAX_CONTEXT,
					       KVP_QUESTION_UTILIZATION};
	for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
		if ((s->questions & qs[i]) && (st = section_question(&r, qs[i])))
			goto out;
	if ((st = section_plots(&r)) || (st = section_arithmetic(&r)))
		goto out;
	doc_end(&r.d);
out:
	/* both written, or neither replaced */
	if (!st)
		st = kvp_afile_commit(&md, err);
	if (!st)
		st = kvp_afile_commit(&html, err);
	kvp_afile_abort(&md);
	kvp_afile_abort(&html);
	free(r.ops);
	free(r.b);
	return st;
}
