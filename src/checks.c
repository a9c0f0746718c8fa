/* checks.c: `kvplan check`: expectations files, assertions, baselines and the
 * JUnit and TAP writers.  See checks.h for the file format.
 *
 * Parsing walks the YAML tree with key tables (one handler per scenario
 * key) and refuses unknown keys and malformed assertions with file:line:col.
 * Running calls each command kind's scenario -> record function and never
 * stops early.  Whole numbers (byte counts, blocks, tokens) compare exactly,
 * tolerances included: a value exactly at the tolerance holds. */
#include "checks.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "profile.h"
#include "name-index.h"
#include "suggest.h"
#include "tap-writer.h"
#include "units.h"
#include "utf8.h"
#include "xml-writer.h"
#include "yaml-walk.h"

/* ------------------------------------------------------------ numbers */

const char *kvp_check_op_str(enum kvp_check_op op)
{
	static const char *const s[] = {"==", "!=", "<", "<=", ">", ">=", "~"};
	return op <= KVP_CHECK_OP_NEAR ? s[op] : "?";
}

int kvp_check_pct_parse(const char *s, struct kvp_check_pct *out)
{
	size_t n = s ? strlen(s) : 0;
	if (n < 2 || n >= sizeof out->text || s[n - 1] != '%')
		return -1;
	size_t end = n - 1;
	while (end > 0 && s[end - 1] == ' ')
		end--;
	uint64_t num = 0;
	unsigned scale = 0;
	bool dot = false, digits = false;
	for (size_t i = 0; i < end; i++) {
		if (s[i] == '.' && !dot) {
			dot = true;
			continue;
		}
		if (!isdigit((unsigned char)s[i]))
			return -1;
		digits = true;
		if (dot && ++scale > 9)
			return -2;
		if (!kvp_mul(num, 10, &num) || !kvp_add(num, (uint64_t)(s[i] - '0'), &num))
			return -2;
	}
	if (!digits)
		return -1;
	out->num = num;
	out->scale = scale;
	memcpy(out->text, s, n + 1);
	return 0;
}

static uint64_t pow10u(unsigned k)
{
	uint64_t v = 1;
	while (k--)
		v *= 10;
	return v;
}

double kvp_check_pct_fraction(const struct kvp_check_pct *p)
{
	return (double)p->num / (double)pow10u(p->scale) / 100.0;
}

/* a * b as a 128-bit (hi, lo) pair, in 32-bit halves so it needs no extension. */
static void mul_wide(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo)
{
	uint64_t a0 = a & 0xffffffffu, a1 = a >> 32, b0 = b & 0xffffffffu, b1 = b >> 32;
	uint64_t p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0, p11 = a1 * b1;
	uint64_t mid = (p00 >> 32) + (p01 & 0xffffffffu) + (p10 & 0xffffffffu);
	*lo = (mid << 32) | (p00 & 0xffffffffu);
	*hi = p11 + (p01 >> 32) + (p10 >> 32) + (mid >> 32);
}

bool kvp_check_near_u64(uint64_t got, uint64_t want, const struct kvp_check_pct *p)
{
	/* |got - want| <= num / 10^scale / 100 * want
	 * <=> |got - want| * 100 * 10^scale <= num * want, in 128 bits */
	uint64_t d = got > want ? got - want : want - got;
	uint64_t lh, ll, rh, rl;
	mul_wide(d, 100 * pow10u(p->scale), &lh, &ll);
	mul_wide(p->num, want, &rh, &rl);
	return lh < rh || (lh == rh && ll <= rl);
}

bool kvp_check_near_f64(double got, double want, const struct kvp_check_pct *p)
{
	if (!isfinite(got) || !isfinite(want))
		return got == want;
	double bound = kvp_check_pct_fraction(p) * fabs(want);
	/* a few ulps of slack: 0.55 is "exactly" 10% above 0.5 to a reader, and
	 * 0.55 - 0.5 > 0.05 in binary. */
	double slack = 4 * DBL_EPSILON * fmax(fabs(got), fabs(want));
	return fabs(got - want) <= bound + slack;
}

/* ------------------------------------------------------------ values */

/* Parse an expected value's text (already trimmed) into v; quoted says the
 * YAML scalar or the text itself was quoted. */
static void value_parse(const char *text, bool quoted, struct kvp_check_value *v)
{
	memset(v, 0, sizeof *v);
	snprintf(v->text, sizeof v->text, "%s", text);
	size_t n = strlen(text);
	if (!quoted && n >= 2 && (text[0] == '"' || text[0] == '\'') && text[n - 1] == text[0]) {
		snprintf(v->text, sizeof v->text, "%.*s", (int)(n - 2), text + 1);
		quoted = true;
	}
	v->kind = KVP_CHECK_VALUE_STRING;
	if (quoted)
		return;
	if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0) {
		v->kind = KVP_CHECK_VALUE_BOOL;
		v->b = text[0] == 't';
		return;
	}
	bool neg = text[0] == '-';
	const char *t = neg ? text + 1 : text;
	uint64_t u;
	double d;
	/* whole numbers, then decimals ("0.9" is a fraction, not 1 byte), then
	 * sizes and token counts, which are whole by construction */
	if (!neg && kvp_parse_u64(t, &u) == 0) {
		v->kind = KVP_CHECK_VALUE_NUMBER;
		v->exact = true;
	} else if (kvp_parse_double(t, &d) == 0) {
		v->kind = KVP_CHECK_VALUE_NUMBER;
		v->d = neg ? -d : d;
		return;
	} else if (!neg && (kvp_parse_bytes(t, &u) == 0 || kvp_parse_tokens(t, &u) == 0)) {
		v->kind = KVP_CHECK_VALUE_NUMBER;
		v->exact = true;
	} else {
		return;
	}
	v->u = u;
	v->d = (double)u;
}

static bool is_name_char(char c) { return isalnum((unsigned char)c) || c == '_'; }
static bool is_sel_char(char c) { return is_name_char(c) || c == '.' || c == '-' || c == '+'; }

/* The length of the field name at s: NAME(.NAME)*, where a NAME may carry a
 * row selector [KEY=VALUE,...] (VALUE: letters, digits and _ . - +).  0 when
 * s does not start with a name, or when a selector is malformed: then *msg
 * says why and *bad is the offset it points at. */
static size_t field_scan(const char *s, size_t *bad, const char **msg)
{
	size_t i = 0;
	*msg = NULL;
	if (!is_name_char(s[0]) || isdigit((unsigned char)s[0]))
		return 0;
	for (;;) {
		while (is_name_char(s[i]))
			i++;
		if (s[i] == '[') {
			size_t open = i++;
			for (;;) {
				size_t k0 = i;
				while (is_name_char(s[i]))
					i++;
				if (i == k0 || s[i] != '=') {
					*bad = i;
					*msg = "a row selector reads [FIELD=VALUE,...], e.g. rows[batch=8]";
					return 0;
				}
				size_t v0 = ++i;
				while (is_sel_char(s[i]))
					i++;
				if (i == v0) {
					*bad = i;
					*msg = "missing VALUE after '=' in the row selector";
					return 0;
				}
				if (s[i] == ',') {
					i++;
					continue;
				}
				if (s[i] == ']') {
					i++;
					break;
				}
				*bad = s[i] ? i : open;
				*msg = s[i] ? "unexpected character in the row selector [FIELD=VALUE,...]"
					    : "unclosed '[' of a row selector";
				return 0;
			}
		}
		if (s[i] == '.' && is_name_char(s[i + 1])) {
			i++;
			continue;
		}
		return i;
	}
}

/* ------------------------------------------------------------ assertions */

/* Columns inside a scalar: exact for single-line scalars (one more for the
 * opening quote), the scalar's own mark otherwise. */
struct cursor {
	const struct kvp_doc *doc;
	const struct kvp_node *node;
	int base;   /* column of the text's first character, 0 when unknown */
};

static kvp_status fail_at(const struct cursor *c, size_t off, struct kvp_error *err,
			  const char *field, const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static kvp_status fail_at(const struct cursor *c, size_t off, struct kvp_error *err,
			  const char *field, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	int col = c->base ? c->base + (int)off : c->node->col;
	return kvp_error_set(err, KVP_STATUS_INVALID, c->doc->path, c->node->line, col, field,
			     "%s", msg);
}

static const char assert_hint[] =
	"an assertion is 'FIELD OP VALUE' (OP one of == != < <= > >=, or "
	"'FIELD ~ VALUE within P%'), e.g. 'max_sequences >= 64'";

/* Check the value against the operator: ordering and ~ need numbers. */
static kvp_status value_check(const struct cursor *c, size_t off, struct kvp_check_assert *a,
			      struct kvp_error *err)
{
	if (a->op == KVP_CHECK_OP_EQ || a->op == KVP_CHECK_OP_NE)
		return KVP_STATUS_OK;
	if (a->want.kind != KVP_CHECK_VALUE_NUMBER)
		return fail_at(c, off, err, a->field, "'%s' compares numbers; '%s' is not a number or size",
			       kvp_check_op_str(a->op), a->want.text);
	return KVP_STATUS_OK;
}

static kvp_status assert_from_text(const struct kvp_doc *doc, const struct kvp_node *node,
				   struct kvp_check_assert *a, struct kvp_error *err)
{
	const char *s = node->value;
	struct cursor c = {doc, node, strchr(s, '\n') ? 0 : node->col + (node->quoted ? 1 : 0)};
	snprintf(a->text, sizeof a->text, "%s", s);
	size_t i = 0, n = strlen(s);
	while (s[i] == ' ')
		i++;
	size_t f0 = i, bad = 0;
	const char *why;
	i += field_scan(s + f0, &bad, &why);
	if (why)
		return fail_at(&c, f0 + bad, err, NULL, "%s", why);
	if (i == f0 || s[i] == '.')
		return fail_at(&c, f0, err, NULL, "%s", assert_hint);
	if (i - f0 >= sizeof a->field)
		return fail_at(&c, f0, err, NULL, "field name longer than %zu characters",
			       sizeof a->field - 1);
	memcpy(a->field, s + f0, i - f0);
	a->field[i - f0] = '\0';
	a->line = a->value_line = node->line;
	a->col = c.base ? c.base + (int)f0 : node->col;
	while (s[i] == ' ')
		i++;
	static const struct { const char *s; enum kvp_check_op op; } ops[] = {
		{"==", KVP_CHECK_OP_EQ}, {"!=", KVP_CHECK_OP_NE}, {"<=", KVP_CHECK_OP_LE},
		{">=", KVP_CHECK_OP_GE}, {"<", KVP_CHECK_OP_LT}, {">", KVP_CHECK_OP_GT},
		{"~", KVP_CHECK_OP_NEAR},
	};
	size_t k;
	for (k = 0; k < sizeof ops / sizeof ops[0]; k++)
		if (strncmp(s + i, ops[k].s, strlen(ops[k].s)) == 0)
			break;
	if (k == sizeof ops / sizeof ops[0]) {
		if (s[i] == '=')
			return fail_at(&c, i, err, a->field, "'=' is not an operator; write '=='");
		return fail_at(&c, i, err, a->field, "expected an operator (== != < <= > >= ~) after "
			       "the field, got '%s'", s[i] ? s + i : "nothing");
	}
	a->op = ops[k].op;
	i += strlen(ops[k].s);
	if (s[i] == '=' || s[i] == '<' || s[i] == '>' || s[i] == '!')
		return fail_at(&c, i - strlen(ops[k].s), err, a->field, "unknown operator '%.3s'",
			       s + i - strlen(ops[k].s));
	while (s[i] == ' ')
		i++;
	size_t v0 = i, v1 = n;
	const char *within = NULL;
	for (const char *p = s + v0; (p = strstr(p, "within")) != NULL; p++)
		if (p > s + v0 && p[-1] == ' ' && (p[6] == ' ' || p[6] == '\0'))
			within = p;
	if (a->op == KVP_CHECK_OP_NEAR) {
		if (!within)
			return fail_at(&c, n, err, a->field, "'~' needs a tolerance: "
				       "'%s ~ VALUE within P%%', e.g. 'kv_pool_bytes ~ 58GiB within 2%%'",
				       a->field);
		size_t p0 = (size_t)(within - s) + 6;
		while (s[p0] == ' ')
			p0++;
		size_t p1 = n;
		while (p1 > p0 && s[p1 - 1] == ' ')
			p1--;
		char pct[64];
		snprintf(pct, sizeof pct, "%.*s", (int)(p1 - p0), s + p0);
		int rc = kvp_check_pct_parse(pct, &a->within);
		if (rc)
			return fail_at(&c, p0, err, a->field, "within: expected a percentage such as 2%% "
				       "or 0.5%% (at most 9 decimals), got '%s'", pct);
		v1 = (size_t)(within - s);
	} else if (within) {
		return fail_at(&c, (size_t)(within - s), err, a->field,
			       "'within' goes with '~' only ('%s ~ VALUE within P%%')", a->field);
	}
	while (v1 > v0 && s[v1 - 1] == ' ')
		v1--;
	if (v1 == v0)
		return fail_at(&c, v0, err, a->field, "missing value after '%s'",
			       kvp_check_op_str(a->op));
	char val[KVP_CHECK_TEXT_MAX];
	if (v1 - v0 >= sizeof val)
		return fail_at(&c, v0, err, a->field, "value longer than %zu characters", sizeof val - 1);
	snprintf(val, sizeof val, "%.*s", (int)(v1 - v0), s + v0);
	value_parse(val, false, &a->want);
	a->value_col = c.base ? c.base + (int)v0 : node->col;
	if (a->want.kind == KVP_CHECK_VALUE_STRING && val[0] != '"' && val[0] != '\'' &&
	    strchr(val, ' '))
		return fail_at(&c, v0, err, a->field, "unexpected text in '%s'; quote a string "
			       "value that holds spaces", val);
	return value_check(&c, v0, a, err);
}

/* "- fits: true": a one-key map means FIELD == VALUE. */
static kvp_status assert_from_map(const struct kvp_doc *doc, const struct kvp_node *node,
				  struct kvp_check_assert *a, struct kvp_error *err)
{
	if (node->n != 1)
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, NULL,
				     "a map assertion holds one 'FIELD: VALUE' (==); %s", assert_hint);
	const struct kvp_node *k = node->keys[0], *v = node->items[0];
	struct cursor c = {doc, k, k->col + (k->quoted ? 1 : 0)};
	size_t len = strlen(k->value), bad = 0;
	const char *why;
	size_t n = field_scan(k->value, &bad, &why);
	if (why)
		return fail_at(&c, bad, err, NULL, "%s", why);
	if (n == 0 || n != len || len >= sizeof a->field)
		return fail_at(&c, 0, err, NULL, "'%s' is not a field name; %s", k->value, assert_hint);
	snprintf(a->field, sizeof a->field, "%s", k->value);
	a->op = KVP_CHECK_OP_EQ;
	a->line = k->line;
	a->col = k->col;
	kvp_status st = kvp_node_expect(doc, v, a->field, KVP_NODE_SCALAR, err);
	if (st)
		return st;
	value_parse(v->value, v->quoted, &a->want);
	a->value_line = v->line;
	a->value_col = v->col;
	snprintf(a->text, sizeof a->text, "%.100s == %s%.140s%s", a->field, v->quoted ? "\"" : "",
		 a->want.text, v->quoted ? "\"" : "");
	return KVP_STATUS_OK;
}

static kvp_status assert_parse(const struct kvp_doc *doc, const struct kvp_node *node,
			       struct kvp_check_assert *a, struct kvp_error *err)
{
	memset(a, 0, sizeof *a);
	if (node->type == KVP_NODE_MAP)
		return assert_from_map(doc, node, a, err);
	if (node->type != KVP_NODE_SCALAR || kvp_node_is_null(node))
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, "expect", "%s", assert_hint);
	return assert_from_text(doc, node, a, err);
}

/* ------------------------------------------------------------ commands */

/* The scenario's model and GPU (a "custom" one when gpu_memory stands in);
 * m and g are the caller's, NULL for out of memory. */
static kvp_status scenario_profiles(const struct kvp_check_scenario *s, struct kvp_model *m,
				    struct kvp_gpu *g, struct kvp_error *err)
{
	memset(g, 0, sizeof *g);
	if (!m)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	kvp_status st = kvp_model_load(s->model, m, err);
	if (st || s->gpu[0])
		return st ? st : kvp_gpu_load(s->gpu, g, err);
	snprintf(g->name, sizeof g->name, "custom");
	return KVP_STATUS_OK;
}

static kvp_status run_budget(const struct kvp_check_scenario *s, struct kvp_record *out,
			     struct kvp_error *err)
{
	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_budget *b = malloc(sizeof *b);
	struct kvp_gpu g;
	kvp_status st = scenario_profiles(s, b ? m : NULL, &g, err);
	if (st || (st = kvp_budget_compute(m, &g, &s->opts, b, err)))
		goto out;
	if (!kvp_budget_to_record(b, g.name, out))
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
out:
	free(m);
	free(b);
	return st;
}

/* kvplan perf: the same defaults (prompt: context, else 1024; output 256;
 * batch 1) and the same library run; the record is its --format json. */
static kvp_status run_perf(const struct kvp_check_scenario *s, struct kvp_record *out,
			   struct kvp_error *err)
{
	const struct kvp_check_perf *p = &s->perf;
	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_perf_result *res = malloc(sizeof *res);
	struct kvp_perf_opts po = {
		.prompt = p->prompt ? p->prompt : s->opts.context ? s->opts.context : 1024,
		.output = p->output ? p->output : 256,
		.prefix = p->prefix,
		.offload = {.tier = KVP_OFFLOAD_NONE, .fraction = -1},
	};
	struct kvp_gpu g;
	struct kvp_perf_hw hw;
	kvp_status st = scenario_profiles(s, res ? m : NULL, &g, err);
	if (st || (st = kvp_perf_hw_from_gpu(&g, m, &hw, err)))
		goto out;
	if (p->host_link[0]) {
		struct kvp_link link;
		if ((st = kvp_link_parse(p->host_link, "host_link", &link, err)))
			goto out;
		kvp_perf_hw_host_link(&hw, &link);
	}
	if (p->decode_bw_efficiency > 0)
		hw.decode_bw_efficiency = p->decode_bw_efficiency;
	if (p->prefill_flops_efficiency > 0)
		hw.prefill_flops_efficiency = p->prefill_flops_efficiency;
	if (p->kv_offload[0]) {
		if ((st = kvp_offload_parse(p->kv_offload, &hw.host_link, &po.offload, err))) {
			snprintf(err->field, sizeof err->field, "kv_offload");
			goto out;
		}
		po.offload.fraction = p->offload_fraction;
	}
	po.nbatch = p->nbatch ? p->nbatch : 1;
	if (p->nbatch)
		memcpy(po.batches, p->batches, p->nbatch * sizeof p->batches[0]);
	else
		po.batches[0] = s->opts.batch ? s->opts.batch : 1;
	if ((st = kvp_perf_run(m, &g, &s->opts, &hw, &po, res, err)))
		goto out;
	if (!kvp_perf_to_record(res, out))
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
out:
	free(m);
	free(res);
	return st;
}

/* kvplan frag: the workload, the budget at max_len, every row and the
 * recommendation; the record is its --format json (no prefix cache). */
static kvp_status run_frag(const struct kvp_check_scenario *s, struct kvp_record *out,
			   struct kvp_error *err)
{
	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_frag_report *rep = malloc(sizeof *rep);
	struct kvp_workload w;
	struct kvp_gpu g;
	memset(&w, 0, sizeof w);
	kvp_status st = scenario_profiles(s, rep ? m : NULL, &g, err);
	if (st || (st = kvp_workload_load(s->frag.workload, &w, err)) ||
	    (st = kvp_frag_plan(m, &g, &s->opts, &w, &s->frag.opts, rep, err)))
		goto out;
	if (!rep->budget.kv_pool_bytes)
		st = kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, NULL,
				   "the weights, activations and overhead leave no KV pool on %s "
				   "(see kvplan budget)", g.name);
	else if (!kvp_frag_to_record(rep, out))
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
out:
	kvp_workload_free(&w);
	free(m);
	free(rep);
	return st;
}

/* One entry per command kind: its scenario -> record function.  The keys
 * each reads beyond the common ones are in keys[] below. */
static const struct command {
	const char *name;
	kvp_check_run_fn run;
} commands[] = {
	{"budget", run_budget},
	{"perf", run_perf},
	{"frag", run_frag},
};

static const struct command *command_find(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

/* ------------------------------------------------------------ scenarios */

struct walk {
	const struct kvp_doc *doc;
	char dir[512];          /* the file's directory, "" for the current one */
	bool defaults;          /* walking `defaults:` */
};

typedef kvp_status (*key_fn)(const struct walk *w, const struct kvp_node *v,
			     struct kvp_check_scenario *s, const char *key, struct kvp_error *err);

static kvp_status input_record(const struct walk *w, const struct kvp_node *v,
			       struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	char buf[512];
	kvp_status st = KVP_STATUS_OK;
	if (v->type == KVP_NODE_SEQ) {
		/* a list as written, "[1, 8, 32]" */
		size_t len = (size_t)snprintf(buf, sizeof buf, "[");
		for (size_t i = 0; i < v->n && !st && len < sizeof buf; i++) {
			char item[128];
			if (!(st = kvp_node_str(w->doc, v->items[i], key, item, sizeof item, err)))
				len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%s",
							i ? ", " : "", item);
		}
		if (!st && len + 1 >= sizeof buf)
			return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "list too long");
		if (!st)
			snprintf(buf + len, sizeof buf - len, "]");
	} else {
		st = kvp_node_str(w->doc, v, key, buf, sizeof buf, err);
	}
	if (st)
		return st;
	size_t i;
	for (i = 0; i < s->ninputs; i++)
		if (strcmp(s->inputs[i].key, key) == 0)
			break;
	if (i == KVP_CHECK_INPUTS_MAX)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "too many inputs");
	if (i == s->ninputs)
		s->ninputs++;
	struct kvp_check_input *in = &s->inputs[i];
	snprintf(in->key, sizeof in->key, "%s", key);
	snprintf(in->value, sizeof in->value, "%s", buf);
	in->line = v->line;
	in->col = v->col;
	return KVP_STATUS_OK;
}

/* A profile reference: a name, or a path, taken relative to the
 * expectations file when it exists there. */
static kvp_status key_profile(const struct walk *w, const struct kvp_node *v,
			      struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = kvp_node_expect(w->doc, v, key, KVP_NODE_SCALAR, err);
	if (st || (st = input_record(w, v, s, key, err)))
		return st;
	char *dst = strcmp(key, "model") == 0 ? s->model
		    : strcmp(key, "workload") == 0 ? s->frag.workload : s->gpu;
	const char *val = v->value;
	size_t size = sizeof s->model;
	snprintf(dst, size, "%s", val);
	if (val[0] != '/' && (strchr(val, '/') || strstr(val, ".yaml") || strstr(val, ".json")) &&
	    w->dir[0]) {
		char joined[1100];
		snprintf(joined, sizeof joined, "%s/%s", w->dir, val);
		struct stat sb; /* there, without opening it (a FIFO would block) */
		if (stat(joined, &sb) == 0) {
			if (strlen(joined) >= size)
				return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
						     "path too long");
			memcpy(dst, joined, strlen(joined) + 1);
		}
	}
	return KVP_STATUS_OK;
}

static kvp_status key_command(const struct walk *w, const struct kvp_node *v,
			      struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	const struct command *c = command_find(v->value);
	if (!c)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "unknown command '%s' (budget, frag, perf)", v->value);
	snprintf(s->command, sizeof s->command, "%s", c->name);
	s->run = c->run;
	return KVP_STATUS_OK;
}

static kvp_status key_engine(const struct walk *w, const struct kvp_node *v,
			     struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (!st && !kvp_engine_parse(v->value, &s->opts.engine))
		st = kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				   "unknown engine '%s' (generic, vllm, sglang, trtllm)", v->value);
	return st;
}

static kvp_status key_dtype(const struct walk *w, const struct kvp_node *v,
			    struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	bool kv = strcmp(key, "kv_dtype") == 0;
	enum kvp_dtype dt;
	if (!kvp_dtype_parse(v->value, &dt))
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "unknown dtype '%s'",
				     v->value);
	if (kv && !kvp_dtype_info(dt)->kv_ok)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "%s is not a KV cache format", v->value);
	if (!kv && dt != KVP_DTYPE_AUTO && dt != KVP_DTYPE_BF16 && dt != KVP_DTYPE_FP16 &&
	    dt != KVP_DTYPE_FP32)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "%s is not a serving dtype (auto, bf16, fp16, fp32)", v->value);
	*(kv ? &s->opts.kv_dtype : &s->opts.dtype) = dt;
	return KVP_STATUS_OK;
}

/* Whole numbers: their bounds and where they go (32 or 64 bits). */
#define SC(member) offsetof(struct kvp_check_scenario, member), \
	sizeof(((struct kvp_check_scenario *)0)->member)
static const struct count_key {
	const char *key;
	uint64_t min, max;
	size_t off, size;
} count_keys[] = {
	{"tp", 1, 1u << 20, SC(opts.par.tp)},
	{"pp", 1, 1u << 20, SC(opts.par.pp)},
	{"dp", 1, 1u << 20, SC(opts.par.dp)},
	{"ep", 1, 1u << 20, SC(opts.par.ep)},
	{"num_gpus", 1, 1u << 20, SC(opts.par.gpus)},
	{"block_size", 1, 1u << 20, SC(opts.block_size)},
	{"max_num_seqs", 1, UINT32_MAX, SC(opts.max_num_seqs)},
	{"batch", 1, UINT64_MAX, SC(opts.batch)},
	{"requests", 1, UINT64_MAX, SC(frag.opts.requests)},   /* frag's */
	{"seed", 0, UINT64_MAX, SC(frag.opts.seed)},
	{"warmup", 0, UINT64_MAX, SC(frag.opts.warmup)},
};
#undef SC

static kvp_status key_count(const struct walk *w, const struct kvp_node *v,
			    struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	uint64_t n;
	if (!st)
		st = kvp_node_u64(w->doc, v, key, &n, err);
	if (st)
		return st;
	const struct count_key *c = count_keys;
	while (strcmp(c->key, key) != 0)
		c++;
	if (n < c->min || n > c->max)
		return c->max == UINT64_MAX
			       ? kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
					       "must be at least %llu, got %s",
					       (unsigned long long)c->min, v->value)
			       : kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
					       "must be between %llu and %llu, got %s",
					       (unsigned long long)c->min, (unsigned long long)c->max,
					       v->value);
	char *dst = (char *)s + c->off;
	if (c->size == sizeof(uint32_t)) {
		uint32_t u = (uint32_t)n;
		memcpy(dst, &u, sizeof u);
	} else {
		memcpy(dst, &n, sizeof n);
	}
	if (strcmp(key, "warmup") == 0)
		s->frag.opts.has_warmup = true;
	return KVP_STATUS_OK;
}

static kvp_status key_tokens(const struct walk *w, const struct kvp_node *v,
			     struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	uint64_t n;
	int rc = kvp_parse_tokens(v->value, &n);
	if (rc == -2)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_OVERFLOW, key, "%s is too large",
				     v->value);
	if (rc || n == 0)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "expected a positive token count such as 8192 or 128k, got '%s'",
				     v->value);
	static const struct { const char *key; size_t off; bool perf; } dst[] = {
		{"context", offsetof(struct kvp_check_scenario, opts.context), false},
		{"max_batched_tokens", offsetof(struct kvp_check_scenario, opts.max_batched_tokens), false},
		{"prompt", offsetof(struct kvp_check_scenario, perf.prompt), true},
		{"output", offsetof(struct kvp_check_scenario, perf.output), true},
		{"prefix", offsetof(struct kvp_check_scenario, perf.prefix), true},
		{"max_len", offsetof(struct kvp_check_scenario, frag.opts.max_len), false},
		{"max_tokens", offsetof(struct kvp_check_scenario, frag.opts.max_tokens), false},
	};
	for (size_t i = 0; i < sizeof dst / sizeof dst[0]; i++) {
		if (strcmp(dst[i].key, key) != 0)
			continue;
		if (dst[i].perf && n > (1ULL << 40))   /* kvplan perf's bound */
			return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
					     "too many tokens (at most 2^40)");
		*(uint64_t *)((char *)s + dst[i].off) = n;
	}
	return KVP_STATUS_OK;
}

static kvp_status key_utilization(const struct walk *w, const struct kvp_node *v,
				  struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	double *dst = strcmp(key, "decode_bw_efficiency") == 0 ? &s->perf.decode_bw_efficiency
		      : strcmp(key, "prefill_flops_efficiency") == 0
			      ? &s->perf.prefill_flops_efficiency
			      : &s->opts.utilization;
	if (!st && kvp_parse_fraction(v->value, dst))
		st = kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				   "expected a fraction in (0, 1] such as 0.9 or 90%%, got '%s'",
				   v->value);
	return st;
}

static kvp_status key_bytes(const struct walk *w, const struct kvp_node *v,
			    struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	struct kvp_budget_opts *o = &s->opts;
	uint64_t *dst = &o->gpu_memory_bytes;
	bool *has = &o->has_gpu_memory;
	if (strcmp(key, "weights_bytes") == 0)
		dst = &o->weights_bytes, has = &o->has_weights;
	else if (strcmp(key, "activation_bytes") == 0)
		dst = &o->activation_bytes, has = &o->has_activation;
	else if (strcmp(key, "overhead_bytes") == 0)
		dst = &o->overhead_bytes, has = &o->has_overhead;
	if (!st)
		st = kvp_node_bytes(w->doc, v, key, dst, err);
	if (!st && has == &o->has_gpu_memory && *dst == 0)
		st = kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "must be positive");
	*has = st == KVP_STATUS_OK;
	return st;
}

static kvp_status key_flag(const struct walk *w, const struct kvp_node *v,
			   struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	return st ? st : kvp_node_bool(w->doc, v, key, &s->opts.hybrid_off, err);
}

/* batch: one number, or for perf a list ([1, 8, 32]) of distinct numbers. */
static kvp_status key_batch(const struct walk *w, const struct kvp_node *v,
			    struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	if (v->type != KVP_NODE_SEQ) {
		s->perf.nbatch = 0;
		return key_count(w, v, s, key, err);
	}
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	if (v->n == 0 || v->n > KVP_PERF_MAX_BATCHES)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "a list of 1 to %d batches", KVP_PERF_MAX_BATCHES);
	for (size_t i = 0; i < v->n; i++) {
		const struct kvp_node *it = v->items[i];
		uint64_t n;
		if ((st = kvp_node_u64(w->doc, it, key, &n, err)))
			return st;
		if (n < 1)
			return kvp_node_fail(w->doc, it, err, KVP_STATUS_INVALID, key,
					     "must be at least 1, got %s", it->value);
		for (size_t j = 0; j < i; j++)
			if (s->perf.batches[j] == n)
				return kvp_node_fail(w->doc, it, err, KVP_STATUS_INVALID, key,
						     "%s is listed twice: each batch names one row",
						     it->value);
		s->perf.batches[i] = n;
	}
	s->perf.nbatch = v->n;
	s->opts.batch = s->perf.batches[0];
	return KVP_STATUS_OK;
}

/* A string checked by the library's own parser, kept as written. */
static kvp_status key_spec(const struct walk *w, const struct kvp_node *v,
			   struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	struct kvp_error e = {0};
	struct kvp_link link;
	struct kvp_offload off;
	char *dst = s->perf.host_link;
	size_t size = sizeof s->perf.host_link;
	if (strcmp(key, "kv_offload") == 0) {
		dst = s->perf.kv_offload;
		size = sizeof s->perf.kv_offload;
		kvp_link_preset("pcie4x16", &link);   /* any host link: only the syntax counts */
		st = kvp_offload_parse(v->value, &link, &off, &e);
	} else if (strcmp(key, "host_link") == 0) {
		st = kvp_link_parse(v->value, key, &link, &e);
	} else {
		bool first = strcmp(v->value, "first-fit") == 0, best = strcmp(v->value, "best-fit") == 0,
		     both = strcmp(v->value, "both") == 0;
		if (!first && !best && !both)
			return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
					     "expected first-fit, best-fit or both, got '%s'", v->value);
		s->frag.opts.fit[0] = first || both;
		s->frag.opts.fit[1] = best || both;
		return KVP_STATUS_OK;
	}
	if (st)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "%s", e.msg);
	if (strlen(v->value) >= size)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "too long");
	snprintf(dst, size, "%s", v->value);
	return KVP_STATUS_OK;
}

static kvp_status key_share(const struct walk *w, const struct kvp_node *v,
			    struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	double d;
	if (!st)
		st = kvp_node_double(w->doc, v, key, &d, err);
	if (!st && !(d >= 0 && d <= 1))
		st = kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				   "expected a share in [0, 1], got %s", v->value);
	if (!st)
		s->perf.offload_fraction = d;
	return st;
}

/* block_sizes: one size or a list, each 1 to KVP_FRAG_MAX_BLOCK tokens, distinct. */
static kvp_status key_blocks(const struct walk *w, const struct kvp_node *v,
			     struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	size_t n = v->type == KVP_NODE_SEQ ? v->n : 1;
	if (n == 0 || n > KVP_FRAG_MAX_BLOCK_SIZES)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key,
				     "a list of 1 to %d block sizes", KVP_FRAG_MAX_BLOCK_SIZES);
	for (size_t i = 0; i < n; i++) {
		const struct kvp_node *it = v->type == KVP_NODE_SEQ ? v->items[i] : v;
		uint64_t b;
		if ((st = kvp_node_u64(w->doc, it, key, &b, err)))
			return st;
		if (b < 1 || b > KVP_FRAG_MAX_BLOCK)
			return kvp_node_fail(w->doc, it, err, KVP_STATUS_INVALID, key,
					     "must be between 1 and %u tokens, got %s", KVP_FRAG_MAX_BLOCK,
					     it->value);
		for (size_t j = 0; j < i; j++)
			if (s->frag.opts.block_sizes[j] == b)
				return kvp_node_fail(w->doc, it, err, KVP_STATUS_INVALID, key,
						     "%s is listed twice: each block size names one row",
						     it->value);
		s->frag.opts.block_sizes[i] = (uint32_t)b;
	}
	s->frag.opts.nblock = n;
	return KVP_STATUS_OK;
}

/* policies: one policy or a list of them, the rows frag runs. */
static kvp_status key_policies(const struct walk *w, const struct kvp_node *v,
			       struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = input_record(w, v, s, key, err);
	if (st)
		return st;
	struct kvp_frag_opts *o = &s->frag.opts;
	size_t n = v->type == KVP_NODE_SEQ ? v->n : 1;
	if (n == 0)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "empty list");
	memset(o->policy, 0, sizeof o->policy);
	o->has_policies = true;
	for (size_t i = 0; i < n; i++) {
		const struct kvp_node *it = v->type == KVP_NODE_SEQ ? v->items[i] : v;
		int p = 0;
		while (p < KVP_FRAG_POLICY_COUNT &&
		       strcmp(it->value, kvp_frag_policy_name((enum kvp_frag_policy)p)) != 0)
			p++;
		if (p == KVP_FRAG_POLICY_COUNT)
			return kvp_node_fail(w->doc, it, err, KVP_STATUS_INVALID, key,
					     "unknown policy '%s' (contiguous-max, contiguous-request, "
					     "paged, paged-shared)", it->value);
		o->policy[p] = true;
	}
	return KVP_STATUS_OK;
}

static kvp_status key_name(const struct walk *w, const struct kvp_node *v,
			   struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = kvp_node_str(w->doc, v, key, s->name, sizeof s->name, err);
	if (!st && !s->name[0])
		st = kvp_node_fail(w->doc, v, err, KVP_STATUS_INVALID, key, "must not be empty");
	return st;
}

static kvp_status key_expect(const struct walk *w, const struct kvp_node *v,
			     struct kvp_check_scenario *s, const char *key, struct kvp_error *err)
{
	kvp_status st = kvp_node_expect(w->doc, v, key, KVP_NODE_SEQ, err);
	if (st)
		return st;
	if (v->n == 0)
		return KVP_STATUS_OK;
	s->asserts = calloc(v->n, sizeof *s->asserts);
	if (!s->asserts)
		return kvp_node_fail(w->doc, v, err, KVP_STATUS_NOMEM, key, "out of memory");
	for (size_t i = 0; i < v->n; i++) {
		if ((st = assert_parse(w->doc, v->items[i], &s->asserts[i], err)))
			return st;
		s->nasserts++;
	}
	return KVP_STATUS_OK;
}

/* The keys of a scenario: the common ones (command NULL), then each
 * command's own.  `defaults` may hold any command's keys; a scenario takes
 * those its command reads. */
static const struct key {
	const char *name;
	key_fn fn;
	bool scenario_only;     /* not in defaults */
	const char *command;    /* read by this command only; NULL: by all */
} keys[] = {
	{"name", key_name, true, NULL},
	{"command", key_command, false, NULL},
	{"model", key_profile, false, NULL},
	{"gpu", key_profile, false, NULL},
	{"engine", key_engine, false, NULL},
	{"tp", key_count, false, NULL},
	{"pp", key_count, false, NULL},
	{"dp", key_count, false, NULL},
	{"ep", key_count, false, NULL},
	{"num_gpus", key_count, false, NULL},
	{"dtype", key_dtype, false, NULL},
	{"kv_dtype", key_dtype, false, NULL},
	{"block_size", key_count, false, NULL},
	{"utilization", key_utilization, false, NULL},
	{"context", key_tokens, false, NULL},
	{"batch", key_batch, false, NULL},
	{"max_batched_tokens", key_tokens, false, NULL},
	{"max_num_seqs", key_count, false, NULL},
	{"weights_bytes", key_bytes, false, NULL},
	{"activation_bytes", key_bytes, false, NULL},
	{"overhead_bytes", key_bytes, false, NULL},
	{"gpu_memory", key_bytes, false, NULL},
	{"disable_hybrid_kv", key_flag, false, NULL},
	{"expect", key_expect, true, NULL},
	/* kvplan perf */
	{"prompt", key_tokens, false, "perf"},
	{"output", key_tokens, false, "perf"},
	{"kv_offload", key_spec, false, "perf"},
	{"host_link", key_spec, false, "perf"},
	{"offload_fraction", key_share, false, "perf"},
	{"prefix", key_tokens, false, "perf"},
	{"decode_bw_efficiency", key_utilization, false, "perf"},
	{"prefill_flops_efficiency", key_utilization, false, "perf"},
	/* kvplan frag */
	{"workload", key_profile, false, "frag"},
	{"block_sizes", key_blocks, false, "frag"},
	{"requests", key_count, false, "frag"},
	{"seed", key_count, false, "frag"},
	{"warmup", key_count, false, "frag"},
	{"max_len", key_tokens, false, "frag"},
	{"max_tokens", key_tokens, false, "frag"},
	{"allocator", key_spec, false, "frag"},
	{"policies", key_policies, false, "frag"},
};

static const struct key *key_find(const char *name)
{
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (strcmp(keys[i].name, name) == 0)
			return &keys[i];
	return NULL;
}

/* Keys whose value may be a list (or a mapping, for expect); every other
 * key's handler reads a scalar, so anything else is refused before it runs. */
static bool key_takes_list(const struct key *key)
{
	return key->fn == key_batch || key->fn == key_blocks || key->fn == key_policies ||
	       key->fn == key_expect;
}

static kvp_status scenario_walk(const struct walk *w, const struct kvp_node *map,
				struct kvp_check_scenario *s, struct kvp_error *err)
{
	kvp_status st = kvp_node_expect(w->doc, map, w->defaults ? "defaults" : "scenarios",
					KVP_NODE_MAP, err);
	if (st)
		return st;
	/* the command first: it decides which command keys are known */
	const struct kvp_node *cmd = kvp_map_get(map, "command");
	if (cmd && ((st = kvp_node_expect(w->doc, cmd, "command", KVP_NODE_SCALAR, err)) ||
		    (st = key_command(w, cmd, s, "command", err))))
		return st;
	for (size_t i = 0; i < map->n; i++) {
		const char *k = map->keys[i]->value;
		const struct kvp_node *v = map->items[i];
		if (v == cmd)
			continue;
		const struct key *key = key_find(k);
		if (!key) {
			const char *names[sizeof keys / sizeof keys[0] + 1];
			for (size_t j = 0; j < sizeof keys / sizeof keys[0]; j++)
				names[j] = keys[j].name;
			names[sizeof keys / sizeof keys[0]] = "command";
			char near[256];
			kvp_suggest_text(k, names, sizeof names / sizeof names[0], "", near, sizeof near);
			return kvp_node_fail(w->doc, map->keys[i], err, KVP_STATUS_INVALID, k,
					     "unknown key%s", near);
		}
		if (w->defaults && key->scenario_only)
			return kvp_node_fail(w->doc, map->keys[i], err, KVP_STATUS_INVALID, k,
					     "belongs in a scenario, not in defaults");
		if (!w->defaults && key->command && strcmp(key->command, s->command) != 0)
			return kvp_node_fail(w->doc, map->keys[i], err, KVP_STATUS_INVALID, k,
					     "is a key of %s scenarios; this one runs %s (command: %s)",
					     key->command, s->command, key->command);
		if (kvp_node_is_null(v))
			return kvp_node_fail(w->doc, map->keys[i], err, KVP_STATUS_INVALID, k,
					     "has no value");
		if (!key_takes_list(key) &&
		    (st = kvp_node_expect(w->doc, v, k, KVP_NODE_SCALAR, err)))
			return st;
		if ((st = key->fn(w, v, s, k, err)))
			return st;
	}
	return KVP_STATUS_OK;
}

/* After a scenario's keys: drop the inputs from defaults its command does not
 * read, and check what needs several keys together. */
static kvp_status scenario_finish(const struct kvp_doc *doc, const struct kvp_node *m,
				  struct kvp_check_scenario *s, struct kvp_error *err)
{
	size_t n = 0;
	for (size_t i = 0; i < s->ninputs; i++) {
		const struct key *key = key_find(s->inputs[i].key);
		if (!key || !key->command || strcmp(key->command, s->command) == 0)
			s->inputs[n++] = s->inputs[i];
	}
	s->ninputs = n;
	const struct kvp_check_input *in;
	if (strcmp(s->command, "perf") != 0 && s->perf.nbatch > 1) {
		in = kvp_check_input_get(s, "batch");
		return kvp_error_set(err, KVP_STATUS_INVALID, doc->path, in->line, in->col, "batch",
				     "a list of batches is for perf scenarios; %s takes one",
				     s->command);
	}
	if (strcmp(s->command, "perf") == 0) {
		if (!s->gpu[0])
			return kvp_node_fail(doc, m, err, KVP_STATUS_INVALID, "gpu",
					     "missing in perf scenario '%s': latency needs the GPU's "
					     "bandwidth and FLOP/s (gpu_memory only replaces its memory)",
					     s->name);
		if ((in = kvp_check_input_get(s, "offload_fraction")) &&
		    !kvp_check_input_get(s, "kv_offload"))
			return kvp_error_set(err, KVP_STATUS_INVALID, doc->path, in->line, in->col,
					     "offload_fraction", "needs kv_offload");
	}
	if (strcmp(s->command, "frag") == 0 && !s->frag.workload[0])
		return kvp_node_fail(doc, m, err, KVP_STATUS_INVALID, "workload",
				     "missing in frag scenario '%s': a profile name or a path",
				     s->name);
	return KVP_STATUS_OK;
}

static kvp_status file_walk(const struct kvp_doc *doc, struct kvp_check_file *f,
			    struct kvp_error *err)
{
	static const char *const top[] = {"defaults", "scenarios", NULL};
	if (!doc->root)
		return kvp_error_set(err, KVP_STATUS_INVALID, doc->path, 0, 0, NULL,
				     "empty file; expected 'scenarios:'");
	kvp_status st = kvp_node_expect(doc, doc->root, "expectations", KVP_NODE_MAP, err);
	if (!st)
		st = kvp_map_only(doc, doc->root, top, err);
	if (st)
		return st;
	struct walk w = {.doc = doc};
	struct kvp_name_index names; /* scenario names seen: duplicates in linear time */
	kvp_name_index_init(&names);
	const char *slash = strrchr(doc->path, '/');
	if (slash)
		snprintf(w.dir, sizeof w.dir, "%.*s", (int)(slash - doc->path), doc->path);
	struct kvp_check_scenario *tmpl = calloc(1, sizeof *tmpl);
	if (!tmpl)
		return kvp_error_set(err, KVP_STATUS_NOMEM, doc->path, 0, 0, NULL, "out of memory");
	snprintf(tmpl->command, sizeof tmpl->command, "budget");
	tmpl->run = run_budget;
	tmpl->opts.par.tp = tmpl->opts.par.pp = 1;
	tmpl->perf.offload_fraction = -1;
	kvp_frag_opts_init(&tmpl->frag.opts);
	const struct kvp_node *defs = kvp_map_get(doc->root, "defaults");
	if (defs) {
		w.defaults = true;
		st = scenario_walk(&w, defs, tmpl, err);
		w.defaults = false;
		if (st)
			goto out;
	}
	const struct kvp_node *list = kvp_map_get(doc->root, "scenarios");
	if (!list) {
		st = kvp_node_fail(doc, doc->root, err, KVP_STATUS_INVALID, "scenarios",
				   "missing: list the scenarios to check");
		goto out;
	}
	if ((st = kvp_node_expect(doc, list, "scenarios", KVP_NODE_SEQ, err)))
		goto out;
	if (list->n == 0) {
		st = kvp_node_fail(doc, list, err, KVP_STATUS_INVALID, "scenarios", "empty list");
		goto out;
	}
	f->scenarios = calloc(list->n, sizeof *f->scenarios);
	if (!f->scenarios) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, doc->path, 0, 0, NULL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < list->n; i++) {
		const struct kvp_node *m = list->items[i];
		struct kvp_check_scenario *s = &f->scenarios[i];
		*s = *tmpl;
		s->line = m->line;
		s->col = m->col;
		f->n++;
		if ((st = scenario_walk(&w, m, s, err)))
			goto out;
		if (!s->name[0]) {
			st = kvp_node_fail(doc, m, err, KVP_STATUS_INVALID, "name",
					   "missing: every scenario needs a name");
			goto out;
		}
		size_t j = kvp_name_index_find(&names, s->name); /* hashed: linear time */
		if (j != SIZE_MAX) {
			st = kvp_node_fail(doc, kvp_map_get(m, "name"), err, KVP_STATUS_INVALID,
					   "name", "duplicate scenario '%s' (first at line %d)",
					   s->name, f->scenarios[j].line);
			goto out;
		}
		if (!kvp_name_index_add(&names, s->name, i)) {
			st = kvp_error_set(err, KVP_STATUS_NOMEM, doc->path, 0, 0, NULL, "out of memory");
			goto out;
		}
		if (!s->model[0]) {
			st = kvp_node_fail(doc, m, err, KVP_STATUS_INVALID, "model",
					   "missing in scenario '%s' (and in defaults)", s->name);
			goto out;
		}
		if (!s->gpu[0] && !s->opts.has_gpu_memory) {
			st = kvp_node_fail(doc, m, err, KVP_STATUS_INVALID, "gpu",
					   "missing in scenario '%s': give gpu or gpu_memory", s->name);
			goto out;
		}
		if ((st = scenario_finish(doc, m, s, err)))
			goto out;
	}
out:
	kvp_name_index_free(&names);
	free(tmpl);
	return st;
}

static kvp_status check_load_doc(struct kvp_doc *doc, struct kvp_check_file **out,
				 struct kvp_error *err)
{
	struct kvp_check_file *f = calloc(1, sizeof *f);
	if (!f) {
		kvp_doc_free(doc);
		return kvp_error_set(err, KVP_STATUS_NOMEM, doc->path, 0, 0, NULL, "out of memory");
	}
	snprintf(f->path, sizeof f->path, "%s", doc->path);
	kvp_status st = file_walk(doc, f, err);
	kvp_doc_free(doc);
	if (st) {
		kvp_check_file_free(f);
		return st;
	}
	*out = f;
	return KVP_STATUS_OK;
}

kvp_status kvp_check_load(const char *path, struct kvp_check_file **out, struct kvp_error *err)
{
	struct kvp_doc *doc;
	*out = NULL;
	kvp_status st = kvp_doc_load_file(path, &doc, err);
	return st ? st : check_load_doc(doc, out, err);
}

kvp_status kvp_check_load_buffer(const char *name, const char *buf, size_t len,
				 struct kvp_check_file **out, struct kvp_error *err)
{
	struct kvp_doc *doc;
	*out = NULL;
	kvp_status st = kvp_doc_load_buffer(name, buf, len, &doc, err);
	return st ? st : check_load_doc(doc, out, err);
}

void kvp_check_file_free(struct kvp_check_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++)
		free(f->scenarios[i].asserts);
	free(f->scenarios);
	free(f);
}

const struct kvp_check_input *kvp_check_input_get(const struct kvp_check_scenario *s,
						  const char *key)
{
	for (size_t i = 0; i < s->ninputs; i++)
		if (strcmp(s->inputs[i].key, key) == 0)
			return &s->inputs[i];
	return NULL;
}

void kvp_check_inputs_format(const struct kvp_check_scenario *s, char *buf, size_t size)
{
	size_t len = (size_t)snprintf(buf, size, "%s", s->command);
	const char *sep = ": ";
	for (size_t i = 0; i < s->ninputs && len < size; i++) {
		if (strcmp(s->inputs[i].key, "command") == 0)
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s %s", sep, s->inputs[i].key,
					s->inputs[i].value);
		sep = ", ";
	}
}

/* ------------------------------------------------------------ evaluation */

static bool is_bytes_field(const char *field)
{
	size_t n = strlen(field);
	return n >= 6 && strcmp(field + n - 6, "_bytes") == 0;
}

/* The value as text; byte counts also in binary units ("61203283968 (57.00 GiB)"). */
static void value_text(const char *field, const struct kvp_value *v, char *buf, size_t size)
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
	value_parse(text, false, &want);
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
static void row_key(const struct kvp_value *list, size_t i, char *buf, size_t size)
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
				plain = is_sel_char(*c);
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
				row_key(rows, 0, key, sizeof key);
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
					row_key(v, i, key, sizeof key);
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
			row_key(v, 0, key, sizeof key);
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
	value_text(a->field, v, out->got, sizeof out->got);
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
static void relocate(const struct kvp_check_file *f, const struct kvp_check_scenario *s,
		     struct kvp_error *e)
{
	if (e->line > 0)
		return;
	static const char *const alias[][2] = {
		{"models", "model"}, {"gpus", "gpu"}, {"workloads", "workload"}};
	char key[128];
	snprintf(key, sizeof key, "%s", e->field);
	for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
		if (strcmp(key, alias[i][0]) == 0)
			snprintf(key, sizeof key, "%s", alias[i][1]);
	const struct kvp_check_input *in = kvp_check_input_get(s, key);
	char msg[sizeof e->msg];
	if (e->path[0] && strcmp(e->path, f->path) != 0)
		snprintf(msg, sizeof msg, "%.300s (%.200s)", e->msg, e->path);
	else
		snprintf(msg, sizeof msg, "%s", e->msg);
	kvp_error_set(e, e->status, f->path, in ? in->line : s->line, in ? in->col : s->col,
		      in ? key : e->field, "%s", msg);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

kvp_status kvp_check_run(const struct kvp_check_file *f, struct kvp_check_report **out,
			 struct kvp_error *err)
{
	struct kvp_check_report *r = calloc(1, sizeof *r);
	*out = NULL;
	if (!r || !(r->s = calloc(f->n, sizeof *r->s))) {
		free(r);
		return kvp_error_set(err, KVP_STATUS_NOMEM, f->path, 0, 0, NULL, "out of memory");
	}
	r->file = f;
	double t0 = now_s();
	for (size_t i = 0; i < f->n; i++) {
		const struct kvp_check_scenario *s = &f->scenarios[i];
		struct kvp_check_scenario_result *res = &r->s[i];
		double ts = now_s();
		struct kvp_record *rec = kvp_record_new();
		res->results = calloc(s->nasserts ? s->nasserts : 1, sizeof *res->results);
		if (!rec || !res->results) {
			kvp_record_free(rec);
			kvp_check_report_free(r);
			return kvp_error_set(err, KVP_STATUS_NOMEM, f->path, 0, 0, NULL,
					     "out of memory");
		}
		if (s->run(s, rec, &res->err)) {
			if (res->err.status == KVP_STATUS_NOMEM) {
				*err = res->err;
				kvp_record_free(rec);
				kvp_check_report_free(r);
				return KVP_STATUS_NOMEM;
			}
			relocate(f, s, &res->err);
			kvp_record_free(rec);
			r->errors++;
		} else {
			res->record = rec;
			for (size_t k = 0; k < s->nasserts; k++) {
				kvp_check_eval(f->path, &s->asserts[k], rec, &res->results[k]);
				switch (res->results[k].outcome) {
				case KVP_CHECK_PASS: r->passed++; break;
				case KVP_CHECK_FAIL: r->failed++; break;
				case KVP_CHECK_ERROR: r->errors++; break;
				}
			}
		}
		res->time_s = now_s() - ts;
	}
	r->time_s = now_s() - t0;
	*out = r;
	return KVP_STATUS_OK;
}

void kvp_check_report_free(struct kvp_check_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->s && i < r->file->n; i++) {
		kvp_record_free(r->s[i].record);
		free(r->s[i].results);
		free(r->s[i].drift);
	}
	free(r->s);
	free(r);
}

size_t kvp_check_points(const struct kvp_check_report *r, struct kvp_check_point *pts, size_t max)
{
	size_t n = 0;
#define POINT(k, sc, ix, oc)                                                                  \
	do {                                                                                   \
		if (n < max)                                                                   \
			pts[n] = (struct kvp_check_point){(k), (sc), (ix), (oc)};              \
		n++;                                                                           \
	} while (0)
	for (size_t i = 0; i < r->file->n; i++) {
		const struct kvp_check_scenario_result *res = &r->s[i];
		if (!res->record) {
			POINT(KVP_CHECK_POINT_RUN, i, 0, KVP_CHECK_ERROR);
			continue;
		}
		for (size_t k = 0; k < r->file->scenarios[i].nasserts; k++)
			POINT(KVP_CHECK_POINT_ASSERT, i, k, res->results[k].outcome);
		if (res->baseline != KVP_CHECK_BASELINE_NONE)
			POINT(KVP_CHECK_POINT_BASELINE, i, 0,
			      res->baseline == KVP_CHECK_BASELINE_SAME ? KVP_CHECK_PASS : KVP_CHECK_FAIL);
	}
#undef POINT
	return n;
}

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
				row_key(v, k, key, sizeof key);
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

static void yaml_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		uint32_t cp;
		size_t n = *p < 0x80 ? 1 : kvp_utf8_next((const char *)p, &cp);
		if (n == 0) { /* not UTF-8: U+FFFD, so the file stays valid YAML */
			fputs("\\ufffd", f);
		} else if (n > 1) {
			fwrite(p, 1, n, f);
			p += n - 1;
		} else if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

static void yaml_key(FILE *f, const char *s)
{
	bool plain = isalpha((unsigned char)s[0]) || s[0] == '_';
	for (const char *p = s; *p && plain; p++)
		plain = isalnum((unsigned char)*p) || *p == '_' || *p == '.' || *p == '-';
	if (plain)
		fputs(s, f);
	else
		yaml_string(f, s);
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
	case KVP_VALUE_STR: yaml_string(f, v->s); break;
	case KVP_VALUE_BOOL: fputs(v->b ? "true" : "false", f); break;
	default: fputs("null", f); break;
	}
}

void kvp_check_baseline_write(FILE *f, const struct kvp_check_report *r)
{
	fprintf(f, "# kvplan check baseline of %s, written by kvplan check --update-baseline.\n"
		   "# Every scalar output field of every scenario that ran, with its inputs;\n"
		   "# kvplan check FILE --baseline THIS --tolerance P%% fails on drift beyond P%%.\n"
		   "baseline:\n", r->file->path);
	for (size_t i = 0; i < r->file->n; i++) {
		const struct kvp_check_scenario *s = &r->file->scenarios[i];
		if (!r->s[i].record)
			continue;
		struct kvp_record *flat = kvp_record_new();
		if (!flat || !flatten(r->s[i].record, "", flat)) {
			kvp_record_free(flat);
			continue;
		}
		fputs("  - scenario: ", f);
		yaml_string(f, s->name);
		fprintf(f, "\n    command: %s\n    inputs:\n", s->command);
		for (size_t k = 0; k < s->ninputs; k++) {
			if (strcmp(s->inputs[k].key, "command") == 0)
				continue;
			fprintf(f, "      %s: ", s->inputs[k].key);
			yaml_string(f, s->inputs[k].value);
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
		value_text(field, old, d->old_value, sizeof d->old_value);
	else
		snprintf(d->old_value, sizeof d->old_value, "(absent)");
	if (nw)
		value_text(field, nw, d->new_value, sizeof d->new_value);
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

kvp_status kvp_check_compare(struct kvp_check_report *r, const struct kvp_check_baseline *b,
			     const struct kvp_check_pct *tolerance)
{
	r->with_baseline = true;
	r->tolerance = *tolerance;
	snprintf(r->baseline_path, sizeof r->baseline_path, "%s", b->path);
	struct kvp_name_index names; /* baseline entries by scenario: linear time */
	kvp_name_index_init(&names);
	for (size_t k = 0; k < b->n; k++)
		if (!kvp_name_index_add(&names, b->e[k].scenario, k)) {
			kvp_name_index_free(&names);
			return KVP_STATUS_NOMEM;
		}
	for (size_t i = 0; i < r->file->n; i++) {
		const struct kvp_check_scenario *s = &r->file->scenarios[i];
		struct kvp_check_scenario_result *res = &r->s[i];
		if (!res->record)
			continue;
		size_t at = kvp_name_index_find(&names, s->name);
		const struct kvp_check_baseline_entry *e = at == SIZE_MAX ? NULL : &b->e[at];
		if (!e) {
			res->baseline = KVP_CHECK_BASELINE_MISSING;
			r->failed++;
			continue;
		}
		struct kvp_record *flat = kvp_record_new();
		if (!flat || !flatten(res->record, "", flat)) {
			kvp_record_free(flat);
			kvp_name_index_free(&names);
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
				ok = drift_push(res, flat->fields[k].name, NULL, &flat->fields[k].v,
						false);
		kvp_record_free(flat);
		if (!ok) {
			kvp_name_index_free(&names);
			return KVP_STATUS_NOMEM;
		}
		inputs_diff(s, e->inputs, res->inputs_changed, sizeof res->inputs_changed);
		res->baseline = drift ? KVP_CHECK_BASELINE_DRIFT : KVP_CHECK_BASELINE_SAME;
		if (drift)
			r->failed++;
		else
			r->passed++;
	}
	kvp_name_index_free(&names);
	return KVP_STATUS_OK;
}

/* ------------------------------------------------------------ JUnit and TAP */

/* The name of a test point and, when it did not pass, its message and detail. */
static void point_text(const struct kvp_check_report *r, const struct kvp_check_point *p,
		       char *name, size_t nsize, char *msg, size_t msize)
{
	const struct kvp_check_scenario *s = &r->file->scenarios[p->scenario];
	const struct kvp_check_scenario_result *res = &r->s[p->scenario];
	msg[0] = '\0';
	switch (p->kind) {
	case KVP_CHECK_POINT_RUN:
		snprintf(name, nsize, "run");
		kvp_error_format(&res->err, msg, msize);
		break;
	case KVP_CHECK_POINT_ASSERT: {
		const struct kvp_check_assert *a = &s->asserts[p->index];
		const struct kvp_check_result *x = &res->results[p->index];
		snprintf(name, nsize, "%s", a->text);
		if (x->outcome == KVP_CHECK_FAIL)
			snprintf(msg, msize, "%.300s:%d:%d: %.255s: %.640s", r->file->path, a->line, a->col,
				 a->text, x->why);
		else if (x->outcome == KVP_CHECK_ERROR)
			snprintf(msg, msize, "%s", x->why);
		break;
	}
	case KVP_CHECK_POINT_BASELINE: {
		snprintf(name, nsize, "baseline");
		size_t nfail = 0;
		for (size_t k = 0; k < res->ndrift; k++)
			nfail += res->drift[k].fail;
		if (res->baseline == KVP_CHECK_BASELINE_MISSING)
			snprintf(msg, msize, "scenario '%s' is not in the baseline %s; run "
				 "--update-baseline", s->name, r->baseline_path);
		else if (res->baseline == KVP_CHECK_BASELINE_DRIFT)
			snprintf(msg, msize, "%zu field%s moved beyond %s of the baseline %s", nfail,
				 nfail == 1 ? "" : "s", r->tolerance.text, r->baseline_path);
		break;
	}
	}
	/* a cut never splits a character */
	kvp_utf8_trim(name);
	kvp_utf8_trim(msg);
}

static void drift_change(const struct kvp_check_drift *d, char *buf, size_t size)
{
	if (isnan(d->change))
		snprintf(buf, size, "%s", d->fail ? "changed" : "new");
	else
		snprintf(buf, size, "%+.4g%%", d->change * 100);
}

void kvp_check_write_junit(FILE *f, const struct kvp_check_report *r)
{
	size_t n = kvp_check_points(r, NULL, 0);
	struct kvp_check_point *pts = calloc(n ? n : 1, sizeof *pts);
	if (!pts)
		return;
	kvp_check_points(r, pts, n);
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kvplan check ");
	kvp_xml_text(f, r->file->path);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n",
		r->passed + r->failed + r->errors, r->failed, r->errors, r->time_s);
	size_t k = 0;
	for (size_t i = 0; i < r->file->n; i++) {
		const struct kvp_check_scenario *s = &r->file->scenarios[i];
		size_t first = k, tests = 0, failures = 0, errors = 0;
		for (; k < n && pts[k].scenario == i; k++) {
			tests++;
			failures += pts[k].outcome == KVP_CHECK_FAIL;
			errors += pts[k].outcome == KVP_CHECK_ERROR;
		}
		fputs("  <testsuite name=\"", f);
		kvp_xml_text(f, s->name);
		fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\" "
			   "time=\"%.3f\">\n    <properties>\n", tests, failures, errors,
			r->s[i].time_s);
		fputs("      <property name=\"command\" value=\"", f);
		kvp_xml_text(f, s->command);
		fputs("\"/>\n", f);
		for (size_t j = 0; j < s->ninputs; j++) {
			if (strcmp(s->inputs[j].key, "command") == 0)
				continue;
			fputs("      <property name=\"", f);
			kvp_xml_text(f, s->inputs[j].key);
			fputs("\" value=\"", f);
			kvp_xml_text(f, s->inputs[j].value);
			fputs("\"/>\n", f);
		}
		fputs("    </properties>\n", f);
		for (size_t j = first; j < k; j++) {
			char name[KVP_CHECK_TEXT_MAX], msg[1400];
			point_text(r, &pts[j], name, sizeof name, msg, sizeof msg);
			fputs("    <testcase classname=\"", f);
			kvp_xml_text(f, s->name);
			fputs("\" name=\"", f);
			kvp_xml_text(f, name);
			if (pts[j].outcome == KVP_CHECK_PASS) {
				fputs("\"/>\n", f);
				continue;
			}
			bool err = pts[j].outcome == KVP_CHECK_ERROR;
			fprintf(f, "\">\n      <%s type=\"%s\" message=\"", err ? "error" : "failure",
				err ? "invalid" : pts[j].kind == KVP_CHECK_POINT_BASELINE ? "drift"
											: "assertion");
			kvp_xml_text(f, msg);
			fputs("\">", f);
			kvp_xml_text(f, msg);
			const struct kvp_check_scenario_result *res = &r->s[i];
			if (pts[j].kind == KVP_CHECK_POINT_BASELINE) {
				for (size_t d = 0; d < res->ndrift; d++) {
					char ch[32], line[800];
					drift_change(&res->drift[d], ch, sizeof ch);
					snprintf(line, sizeof line, "\n%s: %s -> %s (%s)",
						 res->drift[d].field, res->drift[d].old_value,
						 res->drift[d].new_value, ch);
					kvp_xml_text(f, line);
				}
				if (res->inputs_changed[0]) {
					fputs("\ninputs changed: ", f);
					kvp_xml_text(f, res->inputs_changed);
				}
			}
			fprintf(f, "</%s>\n    </testcase>\n", err ? "error" : "failure");
		}
		fputs("  </testsuite>\n", f);
	}
	fputs("</testsuites>\n", f);
	free(pts);
}

void kvp_check_write_tap(FILE *f, const struct kvp_check_report *r)
{
	size_t n = kvp_check_points(r, NULL, 0);
	struct kvp_check_point *pts = calloc(n ? n : 1, sizeof *pts);
	if (!pts)
		return;
	kvp_check_points(r, pts, n);
	fprintf(f, "TAP version 13\n1..%zu\n", n);
	for (size_t j = 0; j < n; j++) {
		const struct kvp_check_scenario *s = &r->file->scenarios[pts[j].scenario];
		const struct kvp_check_scenario_result *res = &r->s[pts[j].scenario];
		char name[KVP_CHECK_TEXT_MAX], msg[1400];
		point_text(r, &pts[j], name, sizeof name, msg, sizeof msg);
		fprintf(f, "%sok %zu - ", pts[j].outcome == KVP_CHECK_PASS ? "" : "not ", j + 1);
		kvp_tap_text(f, s->name);
		fputs(": ", f);
		kvp_tap_text(f, name);
		fputc('\n', f);
		if (pts[j].outcome == KVP_CHECK_PASS)
			continue;
		fputs("  ---\n  message: ", f);
		yaml_string(f, msg);
		fprintf(f, "\n  severity: %s\n", pts[j].outcome == KVP_CHECK_ERROR ? "error" : "fail");
		if (pts[j].kind == KVP_CHECK_POINT_ASSERT) {
			const struct kvp_check_assert *a = &s->asserts[pts[j].index];
			char at[sizeof r->file->path + 32];
			snprintf(at, sizeof at, "%s:%d:%d", r->file->path, a->line, a->col);
			fputs("  at: ", f);
			yaml_string(f, at);
			fputs("\n  field: ", f);
			yaml_string(f, a->field);
			fputs("\n  got: ", f);
			yaml_string(f, res->results[pts[j].index].got);
			fputs("\n", f);
		}
		if (pts[j].kind == KVP_CHECK_POINT_BASELINE) {
			if (res->inputs_changed[0]) {
				fputs("  inputs_changed: ", f);
				yaml_string(f, res->inputs_changed);
				fputc('\n', f);
			}
			if (res->ndrift)
				fputs("  drift:\n", f);
			for (size_t d = 0; d < res->ndrift; d++) {
				char ch[32];
				drift_change(&res->drift[d], ch, sizeof ch);
				fputs("    - field: ", f);
				yaml_string(f, res->drift[d].field);
				fputs("\n      old: ", f);
				yaml_string(f, res->drift[d].old_value);
				fputs("\n      new: ", f);
				yaml_string(f, res->drift[d].new_value);
				fputs("\n      change: ", f);
				yaml_string(f, ch);
				fputc('\n', f);
			}
		}
		fputs("  ...\n", f);
	}
	fprintf(f, "# %zu passed, %zu failed, %zu errors\n", r->passed, r->failed, r->errors);
	free(pts);
}
