/* check-eval.c: one assertion held against a command's record: the field
 * found by name (descending into maps, a row chosen by a selector such as
 * rows[batch=8]), a near name suggested when none matches, and the value
 * compared with the assertion's operator and tolerance. */
#include "check/check-private.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

/* ------------------------------------------------------------ evaluation */

static bool is_bytes_field(const char *field)
{
	size_t n = strlen(field);
	return n >= 6 && strcmp(field + n - 6, "_bytes") == 0;
}

/* The value as text; byte counts also in binary units ("61203283968 (57.00 GiB)"). */
void kvp_check_value_text(const char *field, const struct kvp_value *v, char *buf, size_t size)
{
	kvp_value_format(v, buf, size);
	if (v->type == KVP_VALUE_U64 && is_bytes_field(field) && v->u >= KVP_KIB) {
		char h[32];
		kvp_format_bytes(v->u, h, sizeof h);
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, " (%s)", h);
	}
}

static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), row[KVP_CHECK_NAME_MAX + 1];
	if (lb > KVP_CHECK_NAME_MAX)
		return (size_t)-1;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t diag = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

/* The closest scalar field name (flattened) to `name`, within a third of its length. */
static void suggest(const struct kvp_record *r, const char *prefix, const char *name,
		    char *best, size_t size, size_t *dist)
{
	for (size_t i = 0; i < r->n; i++) {
		char full[KVP_CHECK_NAME_MAX * 2];
		snprintf(full, sizeof full, "%s%s", prefix, r->fields[i].name);
		if (r->fields[i].v.type == KVP_VALUE_RECORD) {
			size_t len = strlen(full);
			snprintf(full + len, sizeof full - len, ".");
			suggest(r->fields[i].v.rec, full, name, best, size, dist);
			continue;
		}
		size_t d = edit_distance(name, full);
		if (d < *dist && d <= strlen(name) / 3 + 1) {
			*dist = d;
			snprintf(best, size, "%s", full);
		}
	}
}

/* ------------------------------------------------------------ rows */

/* The field `name` of r itself (no descent), or NULL. */
static const struct kvp_value *direct(const struct kvp_record *r, const char *name)
{
	for (size_t i = 0; r && i < r->n; i++)
		if (strcmp(r->fields[i].name, name) == 0)
			return &r->fields[i].v;
	return NULL;
}

/* Does a row's value equal the selector's text?  Numbers compare as numbers
 * (block_size=16 matches 16 and 16.0), null only "null". */
static bool value_matches(const struct kvp_value *v, const char *text)
{
	struct kvp_check_value want;
	kvp_check_value_parse(text, false, &want);
	switch (v->type) {
	case KVP_VALUE_STR: return strcmp(v->s, want.text) == 0;
	case KVP_VALUE_U64:
		return want.kind == KVP_CHECK_VALUE_NUMBER &&
		       (want.exact ? v->u == want.u : (double)v->u == want.d);
	case KVP_VALUE_F64: return want.kind == KVP_CHECK_VALUE_NUMBER && v->f == want.d;
	case KVP_VALUE_BOOL: return want.kind == KVP_CHECK_VALUE_BOOL && v->b == want.b;
	case KVP_VALUE_NULL: return strcmp(text, "null") == 0;
	default: return false;
	}
}

/* Does row match every KEY=VALUE of sel ("policy=paged,block_size=16")?
 * *known: some KEY is a field of the row. */
static bool row_matches(const struct kvp_record *row, const char *sel, bool *known)
{
	char buf[KVP_CHECK_NAME_MAX];
	snprintf(buf, sizeof buf, "%s", sel);
	bool all = true;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(t, '=');
		if (!eq)
			return false;
		*eq = '\0';
		const struct kvp_value *v = direct(row, t);
		if (v && known)
			*known = true;
		all = all && v && value_matches(v, eq + 1);
	}
	return all;
}

/* A row's key, the selector that names it: its leading string and whole
 * number fields (nulls skipped), as few as tell it from the other rows of
 * the list ("batch=8", "policy=paged,block_size=16"); all of them when no
 * prefix does. */
void kvp_check_row_key(const struct kvp_value *list, size_t i, char *buf, size_t size)
{
	const struct kvp_record *row = list->list[i];
	size_t len = 0;
	buf[0] = '\0';
	for (size_t k = 0; k < row->n; k++) {
		const struct kvp_value *v = &row->fields[k].v;
		char text[64];
		if (v->type == KVP_VALUE_U64) {
			snprintf(text, sizeof text, "%llu", (unsigned long long)v->u);
		} else if (v->type == KVP_VALUE_STR && v->s[0] && strlen(v->s) < sizeof text) {
			snprintf(text, sizeof text, "%s", v->s);
			bool plain = true;
			for (const char *c = text; *c && plain; c++)
				plain = kvp_check_is_sel_char(*c);
			if (!plain)
				continue;
		} else {
			continue;
		}
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s=%s",
					len ? "," : "", row->fields[k].name, text);
		if (len >= size) {
			buf[0] = '\0';   /* too long to name: no key */
			return;
		}
		size_t same = 0;
		for (size_t j = 0; j < list->nlist; j++)
			same += row_matches(list->list[j], buf, NULL);
		if (same == 1)
			return;
	}
}

/* Where a lookup stopped, for messages and suggestions. */
struct find {
	const struct kvp_record *at;          /* the record the last name was looked up in */
	char prefix[KVP_CHECK_NAME_MAX * 2];  /* its name, "rows[batch=8]." */
	char why[400];                        /* "" when the name is simply not there */
};

/* The value `field` names in r: "a.b" descends into records, "rows[K=V,...]"
 * picks the one row of the list whose fields K equal V, and a bare name r
 * lacks is its only row's (r's list "rows" of one). */
static const struct kvp_value *field_find(const struct kvp_record *r, const char *field,
					  struct find *f)
{
	const struct kvp_record *cur = r;
	const char *p = field;
	memset(f, 0, sizeof *f);
	f->at = r;
	for (bool top = true;; top = false) {
		char name[KVP_CHECK_NAME_MAX], sel[KVP_CHECK_NAME_MAX] = "";
		size_t n = strcspn(p, "[.");
		snprintf(name, sizeof name, "%.*s", (int)n, p);
		p += n;
		bool has_sel = *p == '[';
		if (has_sel) {
			size_t m = strcspn(p + 1, "]");
			snprintf(sel, sizeof sel, "%.*s", (int)m, p + 1);
			p += m + 1 + (p[m + 1] == ']');
		}
		const struct kvp_value *v = direct(cur, name);
		const struct kvp_value *rows = direct(cur, "rows");
		if (!v && top && !has_sel && rows && rows->type == KVP_VALUE_LIST && rows->nlist &&
		    direct(rows->list[0], name)) {
			if (rows->nlist > 1) {
				char key[KVP_CHECK_NAME_MAX];
				kvp_check_row_key(rows, 0, key, sizeof key);
				snprintf(f->why, sizeof f->why, "is a field of each of the %zu rows; name "
					 "one, e.g. rows[%.100s].%.100s", rows->nlist, key, field);
				return NULL;
			}
			cur = f->at = rows->list[0];
			v = direct(cur, name);
		}
		if (!v)
			return NULL;
		if (has_sel) {
			if (v->type != KVP_VALUE_LIST) {
				snprintf(f->why, sizeof f->why, "'%.100s' is not a list of rows; "
					 "[FIELD=VALUE] selects a row of one", name);
				return NULL;
			}
			size_t hits = 0, first = 0;
			bool known = false;
			for (size_t i = 0; i < v->nlist; i++)
				if (row_matches(v->list[i], sel, &known) && hits++ == 0)
					first = i;
			if (hits != 1) {
				char keys[300] = "";
				size_t len = 0;
				for (size_t i = 0; i < v->nlist && len < sizeof keys; i++) {
					if (hits && !row_matches(v->list[i], sel, NULL))
						continue;
					char key[KVP_CHECK_NAME_MAX];
					kvp_check_row_key(v, i, key, sizeof key);
					len += (size_t)snprintf(keys + len, sizeof keys - len, "%s[%s]",
								len ? ", " : "", key);
				}
				if (!known)
					snprintf(f->why, sizeof f->why, "the %.60s have no field named in "
						 "[%.80s]; they are %.200s", name, sel, keys);
				else if (!hits)
					snprintf(f->why, sizeof f->why, "no such row; the %.60s are %.200s",
						 name, keys);
				else
					snprintf(f->why, sizeof f->why, "[%.80s] matches %zu rows (%.200s); "
						 "add a field to the selector", sel, hits, keys);
				return NULL;
			}
			cur = f->at = v->list[first];
			size_t len = strlen(f->prefix);
			snprintf(f->prefix + len, sizeof f->prefix - len, "%s[%s].", name, sel);
			if (!*p) {
				snprintf(f->why, sizeof f->why, "is a row, not a value; name one of its "
					 "fields, e.g. %.120s%.100s", f->prefix,
					 cur->n ? cur->fields[cur->n - 1].name : "");
				return NULL;
			}
			p++;
			continue;
		}
		if (!*p)
			return v;
		if (v->type != KVP_VALUE_RECORD)
			return NULL;
		cur = f->at = v->rec;
		size_t len = strlen(f->prefix);
		snprintf(f->prefix + len, sizeof f->prefix - len, "%s.", name);
		p++;
	}
}

static int cmp_u64(uint64_t a, uint64_t b) { return (a > b) - (a < b); }
static int cmp_f64(double a, double b) { return (a > b) - (a < b); }

static bool op_holds(enum kvp_check_op op, int c)
{
	switch (op) {
	case KVP_CHECK_OP_EQ: return c == 0;
	case KVP_CHECK_OP_NE: return c != 0;
	case KVP_CHECK_OP_LT: return c < 0;
	case KVP_CHECK_OP_LE: return c <= 0;
	case KVP_CHECK_OP_GT: return c > 0;
	case KVP_CHECK_OP_GE: return c >= 0;
	default: return false;
	}
}

static void eval_error(const char *path, const struct kvp_check_assert *a, bool at_value,
		       struct kvp_check_result *out, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
static void eval_error(const char *path, const struct kvp_check_assert *a, bool at_value,
		       struct kvp_check_result *out, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	out->outcome = KVP_CHECK_ERROR;
	snprintf(out->why, sizeof out->why, "%.200s:%d:%d: error: %.100s: %.300s", path,
		 at_value ? a->value_line : a->line, at_value ? a->value_col : a->col, a->field, msg);
}

void kvp_check_eval(const char *path, const struct kvp_check_assert *a,
		    const struct kvp_record *r, struct kvp_check_result *out)
{
	memset(out, 0, sizeof *out);
	struct find f;
	const struct kvp_value *v = field_find(r, a->field, &f);
	if (!v && f.why[0]) {
		eval_error(path, a, false, out, "%s", f.why);
		return;
	}
	if (!v) {
		char best[KVP_CHECK_NAME_MAX * 2] = "";
		size_t dist = (size_t)-1;
		suggest(f.at, f.prefix, a->field, best, sizeof best, &dist);
		/* a bare name may be a row's: suggest the only row's fields bare */
		const struct kvp_value *rows = direct(r, "rows");
		if (f.at == r && rows && rows->type == KVP_VALUE_LIST && rows->nlist == 1)
			suggest(rows->list[0], "", a->field, best, sizeof best, &dist);
		eval_error(path, a, false, out, "no such field in the output%s%s%s",
			   best[0] ? "; did you mean " : "", best, best[0] ? "?" : "");
		return;
	}
	if (v->type == KVP_VALUE_LIST) {
		char hint[320] = "";
		if (v->nlist) {
			char key[KVP_CHECK_NAME_MAX];
			const struct kvp_record *row = v->list[0];
			kvp_check_row_key(v, 0, key, sizeof key);
			snprintf(hint, sizeof hint, "; pick one, e.g. %.100s[%.100s].%.60s", a->field, key,
				 row->n ? row->fields[row->n - 1].name : "");
		}
		eval_error(path, a, false, out, "is a list of %zu rows, not a value%s", v->nlist, hint);
		return;
	}
	if (v->type == KVP_VALUE_RECORD) {
		const struct kvp_record *sub = v->rec;
		char hint[KVP_CHECK_NAME_MAX * 2] = "";
		if (sub && sub->n)
			snprintf(hint, sizeof hint, "; name one, e.g. %s.%s", a->field,
				 sub->fields[0].name);
		eval_error(path, a, false, out, "is a group of fields, not a value%s", hint);
		return;
	}
	kvp_check_value_text(a->field, v, out->got, sizeof out->got);
	const struct kvp_check_value *want = &a->want;
	bool near = a->op == KVP_CHECK_OP_NEAR, holds;
	switch (v->type) {
	case KVP_VALUE_U64:
	case KVP_VALUE_F64:
		if (want->kind != KVP_CHECK_VALUE_NUMBER) {
			eval_error(path, a, true, out, "is a number (%s); '%s' is not", out->got,
				   want->text);
			return;
		}
		if (v->type == KVP_VALUE_U64 && want->exact) {
			holds = near ? kvp_check_near_u64(v->u, want->u, &a->within)
				     : op_holds(a->op, cmp_u64(v->u, want->u));
		} else {
			double got = v->type == KVP_VALUE_U64 ? (double)v->u : v->f;
			holds = near ? kvp_check_near_f64(got, want->d, &a->within)
				     : op_holds(a->op, cmp_f64(got, want->d));
		}
		break;
	case KVP_VALUE_BOOL:
		if (want->kind != KVP_CHECK_VALUE_BOOL) {
			eval_error(path, a, true, out, "is true or false; compare it with == true "
				   "or == false, not '%s %s'", kvp_check_op_str(a->op), want->text);
			return;
		}
		holds = op_holds(a->op, v->b != want->b);
		break;
	case KVP_VALUE_STR:
		if (a->op != KVP_CHECK_OP_EQ && a->op != KVP_CHECK_OP_NE) {
			eval_error(path, a, false, out, "is a string ('%s'); only == and != "
				   "compare strings", v->s);
			return;
		}
		holds = op_holds(a->op, strcmp(v->s, want->text));
		break;
	default:
		eval_error(path, a, false, out, "has no value (null) in this output");
		return;
	}
	out->outcome = holds ? KVP_CHECK_PASS : KVP_CHECK_FAIL;
	if (holds)
		return;
	if (near) {
		double got = v->type == KVP_VALUE_U64 ? (double)v->u : v->f;
		double off = want->d != 0 ? (got - want->d) / fabs(want->d) * 100 : INFINITY;
		snprintf(out->why, sizeof out->why, "got %s, %+.10g%% from %s (within %s allowed)",
			 out->got, off, want->text, a->within.text);
	} else {
		snprintf(out->why, sizeof out->why, "got %s, want %s %s", out->got,
			 kvp_check_op_str(a->op), want->text);
	}
}

/* Errors of a scenario that does not run point at the input they name (or
 * the scenario) unless they already point into a profile. */
