/* check-baseline.c: `kvplan check`'s baselines: every scalar field of
 * every scenario written as YAML (--update-baseline), read back, and
 * compared with a run within a tolerance, the drift listed field by field
 * with the inputs that changed. */
#include "check/check-private.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/name-index.h"
#include "base/units.h"
#include "base/utf8.h"
#include "base/yaml-walk.h"
#include "out/yaml-writer.h"

/* ------------------------------------------------------------ baseline */

/* Copy the scalar fields of r into flat, nested names joined with dots. */
static bool flatten(const struct kvp_record *r, const char *prefix, struct kvp_record *flat)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct kvp_value *v = &r->fields[i].v;
		char name[KVP_CHECK_NAME_MAX];
		snprintf(name, sizeof name, "%s%s", prefix, r->fields[i].name);
		bool ok = true;
		switch (v->type) {
		case KVP_VALUE_U64: ok = kvp_record_u64(flat, name, v->u); break;
		case KVP_VALUE_F64: ok = kvp_record_f64(flat, name, v->f); break;
		case KVP_VALUE_STR: ok = kvp_record_str(flat, name, v->s); break;
		case KVP_VALUE_BOOL: ok = kvp_record_bool(flat, name, v->b); break;
		case KVP_VALUE_NULL: ok = kvp_record_null(flat, name); break;
		case KVP_VALUE_RECORD: {
			size_t len = strlen(name);
			snprintf(name + len, sizeof name - len, ".");
			ok = flatten(v->rec, name, flat);
			break;
		}
		case KVP_VALUE_LIST:
			/* each row under its key, as an assertion names it: rows[batch=8].ttft_s */
			for (size_t k = 0; k < v->nlist && ok; k++) {
				char key[KVP_CHECK_NAME_MAX], row[KVP_CHECK_NAME_MAX];
				kvp_check_row_key(v, k, key, sizeof key);
				if (!key[0] ||
				    (size_t)snprintf(row, sizeof row, "%s[%s].", name, key) >= sizeof row)
					continue;   /* a row with no name cannot be compared */
				ok = flatten(v->list[k], row, flat);
			}
			break;
		}
		if (!ok)
			return false;
	}
	return true;
}

static void yaml_key(FILE *f, const char *s)
{
	bool plain = isalpha((unsigned char)s[0]) || s[0] == '_';
	for (const char *p = s; *p && plain; p++)
		plain = isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '-';
	if (plain)
		fputs(s, f);
	else
		kvp_yaml_str(f, s);
}

/* The shortest "%.*g" that reads back as the same double. */
static void f64_exact(double d, char *buf, size_t size)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			return;
	}
}

static void yaml_value(FILE *f, const struct kvp_value *v)
{
	char buf[64];
	switch (v->type) {
	case KVP_VALUE_U64: fprintf(f, "%llu", (unsigned long long)v->u); break;
	case KVP_VALUE_F64:
		if (!isfinite(v->f)) {
			fputs("null", f);
			break;
		}
		f64_exact(v->f, buf, sizeof buf);
		/* keep a double a double when it reads back: 2 -> 2.0 */
		fprintf(f, "%s%s", buf, strpbrk(buf, ".eEn") ? "" : ".0");
		break;
	case KVP_VALUE_STR: kvp_yaml_str(f, v->s); break;
	case KVP_VALUE_BOOL: fputs(v->b ? "true" : "false", f); break;
	default: fputs("null", f); break;
	}
}

void kvp_check_baseline_head(FILE *f, const struct kvp_check_report *r)
{
	fprintf(f, "# kvplan check baseline of %s, written by kvplan check --update-baseline.\n"
		   "# Every scalar output field of every scenario that ran, with its inputs;\n"
		   "# kvplan check FILE --baseline THIS --tolerance P%% fails on drift beyond P%%.\n"
		   "baseline:\n", r->file->path);
}

void kvp_check_baseline_scenario(FILE *f, const struct kvp_check_report *r, size_t i,
				 const struct kvp_check_scenario_result *res)
{
	const struct kvp_check_scenario *s = kvp_check_ran(r, i, res);
	if (!res->record)
		return;
	struct kvp_record *flat = kvp_record_new();
	if (!flat || !flatten(res->record, "", flat)) {
		kvp_record_free(flat);
		return;
	}
	fputs("  - scenario: ", f);
	kvp_yaml_str(f, s->name);
	fprintf(f, "\n    command: %s\n    inputs:\n", s->command);
	for (size_t k = 0; k < s->ninputs; k++) {
		if (strcmp(s->inputs[k].key, "command") == 0)
			continue;
		fprintf(f, "      %s: ", s->inputs[k].key);
		kvp_yaml_str(f, s->inputs[k].value);
		fputc('\n', f);
	}
	fputs("    fields:\n", f);
	for (size_t k = 0; k < flat->n; k++) {
		fputs("      ", f);
		yaml_key(f, flat->fields[k].name);
		fputs(": ", f);
		yaml_value(f, &flat->fields[k].v);
		fputc('\n', f);
	}
	kvp_record_free(flat);
}

void kvp_check_baseline_write(FILE *f, const struct kvp_check_report *r)
{
	kvp_check_baseline_head(f, r);
	for (size_t i = 0; i < r->file->n; i++)
		kvp_check_baseline_scenario(f, r, i, &r->s[i]);
}

static kvp_status baseline_value(const struct kvp_doc *doc, const struct kvp_node *key,
				 const struct kvp_node *v, struct kvp_record *out,
				 struct kvp_error *err)
{
	const char *name = key->value;
	kvp_status st = kvp_node_expect(doc, v, name, KVP_NODE_SCALAR, err);
	if (st)
		return st;
	const char *s = v->value;
	bool ok;
	uint64_t u;
	char *end;
	if (v->quoted) {
		ok = kvp_record_str(out, name, s);
	} else if (kvp_node_is_null(v)) {
		ok = kvp_record_null(out, name);
	} else if (strcmp(s, "true") == 0 || strcmp(s, "false") == 0) {
		ok = kvp_record_bool(out, name, s[0] == 't');
	} else if (isdigit((unsigned char)s[0]) && strspn(s, "0123456789") == strlen(s)) {
		if (kvp_parse_u64(s, &u))
			return kvp_node_fail(doc, v, err, KVP_STATUS_OVERFLOW, name,
					     "%s does not fit in 64 bits", s);
		ok = kvp_record_u64(out, name, u);
	} else {
		/* an underflow to a subnormal sets ERANGE and still reads back exactly */
		double d = strtod(s, &end);
		if (end != s && !*end && isfinite(d))
			ok = kvp_record_f64(out, name, d);
		else
			ok = kvp_record_str(out, name, s);
	}
	return ok ? KVP_STATUS_OK
		  : kvp_node_fail(doc, v, err, KVP_STATUS_NOMEM, name, "out of memory");
}

static kvp_status baseline_map(const struct kvp_doc *doc, const struct kvp_node *m,
			       const char *field, struct kvp_record **out, struct kvp_error *err)
{
	kvp_status st = kvp_node_expect(doc, m, field, KVP_NODE_MAP, err);
	if (st)
		return st;
	if (!(*out = kvp_record_new()))
		return kvp_node_fail(doc, m, err, KVP_STATUS_NOMEM, field, "out of memory");
	for (size_t i = 0; i < m->n && !st; i++)
		st = baseline_value(doc, m->keys[i], m->items[i], *out, err);
	return st;
}

/* The entries of a baseline's list, duplicates found through `names`. */
static kvp_status baseline_entries(const struct kvp_doc *doc, const struct kvp_node *list,
				   struct kvp_check_baseline *b, struct kvp_name_index *names,
				   struct kvp_error *err)
{
	static const char *const entry[] = {"scenario", "command", "inputs", "fields", NULL};
	kvp_status st;
	for (size_t i = 0; i < list->n; i++) {
		const struct kvp_node *m = list->items[i];
		struct kvp_check_baseline_entry *e = &b->e[i];
		b->n++;
		if ((st = kvp_node_expect(doc, m, "baseline", KVP_NODE_MAP, err)) ||
		    (st = kvp_map_only(doc, m, entry, err)))
			return st;
		const struct kvp_node *name = kvp_map_get(m, "scenario");
		const struct kvp_node *cmd = kvp_map_get(m, "command");
		const struct kvp_node *in = kvp_map_get(m, "inputs");
		const struct kvp_node *fields = kvp_map_get(m, "fields");
		if (!name || !fields)
			return kvp_node_fail(doc, m, err, KVP_STATUS_INVALID,
					     name ? "fields" : "scenario", "missing");
		if ((st = kvp_node_str(doc, name, "scenario", e->scenario, sizeof e->scenario, err)))
			return st;
		if (kvp_name_index_find(names, e->scenario) != SIZE_MAX)
			return kvp_node_fail(doc, name, err, KVP_STATUS_INVALID, "scenario",
					     "duplicate scenario '%s'", e->scenario);
		if (!kvp_name_index_add(names, e->scenario, i))
			return kvp_node_fail(doc, name, err, KVP_STATUS_NOMEM, "scenario",
					     "out of memory");
		if (cmd && (st = kvp_node_str(doc, cmd, "command", e->command, sizeof e->command,
					      err)))
			return st;
		if (in && (st = baseline_map(doc, in, "inputs", &e->inputs, err)))
			return st;
		if ((st = baseline_map(doc, fields, "fields", &e->fields, err)))
			return st;
	}
	return KVP_STATUS_OK;
}

static kvp_status baseline_walk(const struct kvp_doc *doc, struct kvp_check_baseline *b,
				struct kvp_error *err)
{
	static const char *const top[] = {"baseline", NULL};
	if (!doc->root)
		return kvp_error_set(err, KVP_STATUS_INVALID, doc->path, 0, 0, NULL,
				     "empty file; expected 'baseline:'");
	kvp_status st = kvp_node_expect(doc, doc->root, "baseline", KVP_NODE_MAP, err);
	if (!st)
		st = kvp_map_only(doc, doc->root, top, err);
	if (st)
		return st;
	const struct kvp_node *list = kvp_map_get(doc->root, "baseline");
	if (!list)
		return kvp_node_fail(doc, doc->root, err, KVP_STATUS_INVALID, "baseline", "missing");
	if ((st = kvp_node_expect(doc, list, "baseline", KVP_NODE_SEQ, err)))
		return st;
	if (list->n && !(b->e = calloc(list->n, sizeof *b->e)))
		return kvp_node_fail(doc, list, err, KVP_STATUS_NOMEM, "baseline", "out of memory");
	struct kvp_name_index names;
	kvp_name_index_init(&names);
	st = baseline_entries(doc, list, b, &names, err);
	kvp_name_index_free(&names);
	return st;
}

static kvp_status baseline_from_doc(struct kvp_doc *doc, struct kvp_check_baseline **out,
				    struct kvp_error *err)
{
	struct kvp_check_baseline *b = calloc(1, sizeof *b);
	if (!b) {
		kvp_doc_free(doc);
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	}
	snprintf(b->path, sizeof b->path, "%s", doc->path);
	kvp_status st = baseline_walk(doc, b, err);
	kvp_doc_free(doc);
	if (st) {
		kvp_check_baseline_free(b);
		return st;
	}
	*out = b;
	return KVP_STATUS_OK;
}

kvp_status kvp_check_baseline_load(const char *path, struct kvp_check_baseline **out,
				   struct kvp_error *err)
{
	struct kvp_doc *doc;
	*out = NULL;
	kvp_status st = kvp_doc_load_file(path, &doc, err);
	return st ? st : baseline_from_doc(doc, out, err);
}

kvp_status kvp_check_baseline_load_buffer(const char *name, const char *buf, size_t len,
					  struct kvp_check_baseline **out, struct kvp_error *err)
{
	struct kvp_doc *doc;
	*out = NULL;
	kvp_status st = kvp_doc_load_buffer(name, buf, len, &doc, err);
	return st ? st : baseline_from_doc(doc, out, err);
}

void kvp_check_baseline_free(struct kvp_check_baseline *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->n; i++) {
		kvp_record_free(b->e[i].inputs);
		kvp_record_free(b->e[i].fields);
	}
	free(b->e);
	free(b);
}

static const struct kvp_value *flat_get(const struct kvp_record *r, const char *name)
{
	for (size_t i = 0; r && i < r->n; i++)
		if (strcmp(r->fields[i].name, name) == 0)
			return &r->fields[i].v;
	return NULL;
}

static bool numeric(const struct kvp_value *v)
{
	return v->type == KVP_VALUE_U64 || v->type == KVP_VALUE_F64;
}

static double as_f64(const struct kvp_value *v)
{
	return v->type == KVP_VALUE_U64 ? (double)v->u : v->f;
}

/* Does new hold against old within the tolerance? */
static bool field_same(const struct kvp_value *old, const struct kvp_value *nw,
		       const struct kvp_check_pct *tol)
{
	if (numeric(old) && numeric(nw)) {
		if (old->type == KVP_VALUE_U64 && nw->type == KVP_VALUE_U64)
			return kvp_check_near_u64(nw->u, old->u, tol);
		return kvp_check_near_f64(as_f64(nw), as_f64(old), tol);
	}
	if (old->type != nw->type)
		return false;
	switch (old->type) {
	case KVP_VALUE_STR: return strcmp(old->s, nw->s) == 0;
	case KVP_VALUE_BOOL: return old->b == nw->b;
	default: return true;
	}
}

static bool drift_push(struct kvp_check_scenario_result *res, const char *field,
		       const struct kvp_value *old, const struct kvp_value *nw, bool fail)
{
	struct kvp_check_drift *d = realloc(res->drift, (res->ndrift + 1) * sizeof *d);
	if (!d)
		return false;
	res->drift = d;
	d = &d[res->ndrift++];
	memset(d, 0, sizeof *d);
	snprintf(d->field, sizeof d->field, "%s", field);
	if (old)
		kvp_check_value_text(field, old, d->old_value, sizeof d->old_value);
	else
		snprintf(d->old_value, sizeof d->old_value, "(absent)");
	if (nw)
		kvp_check_value_text(field, nw, d->new_value, sizeof d->new_value);
	else
		snprintf(d->new_value, sizeof d->new_value, "(absent)");
	d->change = old && nw && numeric(old) && numeric(nw) && as_f64(old) != 0
			    ? (as_f64(nw) - as_f64(old)) / fabs(as_f64(old))
			    : NAN;
	d->fail = fail;
	return true;
}

static void inputs_diff(const struct kvp_check_scenario *s, const struct kvp_record *old,
			char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = '\0';
	if (!old) {
		snprintf(buf, size, "unknown (the baseline records no inputs)");
		return;
	}
#define ADD(...)                                                                         \
	do {                                                                             \
		if (len < size)                                                          \
			len += (size_t)snprintf(buf + len, size - len, "%s", len ? "; " : ""); \
		if (len < size)                                                          \
			len += (size_t)snprintf(buf + len, size - len, __VA_ARGS__);     \
	} while (0)
	for (size_t i = 0; i < s->ninputs; i++) {
		const struct kvp_check_input *in = &s->inputs[i];
		if (strcmp(in->key, "command") == 0)
			continue;
		const struct kvp_value *o = flat_get(old, in->key);
		char was[KVP_CHECK_TEXT_MAX];
		if (o)
			kvp_value_format(o, was, sizeof was);
		if (!o)
			ADD("+ %s %s", in->key, in->value);
		else if (strcmp(was, in->value) != 0)
			ADD("%s %s -> %s", in->key, was, in->value);
	}
	for (size_t i = 0; i < old->n; i++)
		if (strcmp(old->fields[i].name, "command") != 0 &&
		    !kvp_check_input_get(s, old->fields[i].name)) {
			char v[KVP_CHECK_TEXT_MAX];
			kvp_value_format(&old->fields[i].v, v, sizeof v);
			ADD("- %s %s", old->fields[i].name, v);
		}
#undef ADD
}

struct kvp_check_compare {
	struct kvp_check_report *r;
	const struct kvp_check_baseline *b;
	struct kvp_name_index names;   /* baseline entries by scenario: linear time */
};

struct kvp_check_compare *kvp_check_compare_begin(struct kvp_check_report *r,
						  const struct kvp_check_baseline *b,
						  const struct kvp_check_pct *tolerance)
{
	struct kvp_check_compare *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	r->with_baseline = true;
	r->tolerance = *tolerance;
	snprintf(r->baseline_path, sizeof r->baseline_path, "%s", b->path);
	c->r = r;
	c->b = b;
	kvp_name_index_init(&c->names);
	for (size_t k = 0; k < b->n; k++)
		if (!kvp_name_index_add(&c->names, b->e[k].scenario, k)) {
			kvp_check_compare_end(c);
			return NULL;
		}
	return c;
}

void kvp_check_compare_end(struct kvp_check_compare *c)
{
	if (!c)
		return;
	kvp_name_index_free(&c->names);
	free(c);
}

kvp_status kvp_check_compare_one(struct kvp_check_compare *c, size_t i,
				 struct kvp_check_scenario_result *res)
{
	struct kvp_check_report *r = c->r;
	const struct kvp_check_pct *tolerance = &r->tolerance;
	const struct kvp_check_scenario *s = kvp_check_ran(r, i, res);
	if (!res->record)
		return KVP_STATUS_OK;
	size_t at = kvp_name_index_find(&c->names, s->name);
	const struct kvp_check_baseline_entry *e = at == SIZE_MAX ? NULL : &c->b->e[at];
	if (!e) {
		res->baseline = KVP_CHECK_BASELINE_MISSING;
		r->failed++;
		return KVP_STATUS_OK;
	}
	struct kvp_record *flat = kvp_record_new();
	if (!flat || !flatten(res->record, "", flat)) {
		kvp_record_free(flat);
		return KVP_STATUS_NOMEM;
	}
	bool drift = e->command[0] && strcmp(e->command, s->command) != 0, ok = true;
	for (size_t k = 0; k < e->fields->n && ok; k++) {
		const struct kvp_field_value *o = &e->fields->fields[k];
		const struct kvp_value *nv = flat_get(flat, o->name);
		if (!nv || !field_same(&o->v, nv, tolerance)) {
			drift = true;
			ok = drift_push(res, o->name, &o->v, nv, true);
		}
	}
	for (size_t k = 0; k < flat->n && ok; k++)
		if (!flat_get(e->fields, flat->fields[k].name))
			ok = drift_push(res, flat->fields[k].name, NULL, &flat->fields[k].v, false);
	kvp_record_free(flat);
	if (!ok)
		return KVP_STATUS_NOMEM;
	inputs_diff(s, e->inputs, res->inputs_changed, sizeof res->inputs_changed);
	res->baseline = drift ? KVP_CHECK_BASELINE_DRIFT : KVP_CHECK_BASELINE_SAME;
	if (drift)
		r->failed++;
	else
		r->passed++;
	return KVP_STATUS_OK;
}

kvp_status kvp_check_compare(struct kvp_check_report *r, const struct kvp_check_baseline *b,
			     const struct kvp_check_pct *tolerance)
{
	struct kvp_check_compare *c = kvp_check_compare_begin(r, b, tolerance);
	if (!c)
		return KVP_STATUS_NOMEM;
	kvp_status st = KVP_STATUS_OK;
	for (size_t i = 0; i < r->file->n && !st; i++)
		st = kvp_check_compare_one(c, i, &r->s[i]);
	kvp_check_compare_end(c);
	return st;
}
