/* check-expect.c: `kvplan check`'s assertions as written: FIELD OP VALUE
 * (and "~ VALUE within P%") parsed from a scalar or a one-key map, values
 * typed as booleans, numbers, sizes, token counts or strings, and the
 * tolerance arithmetic (whole numbers compare exactly, a value exactly at
 * the tolerance holds).  Errors point at the column of the bad part. */
#include "check/check-private.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "base/yaml-walk.h"

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
void kvp_check_value_parse(const char *text, bool quoted, struct kvp_check_value *v)
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
bool kvp_check_is_sel_char(char c) { return is_name_char(c) || c == '.' || c == '-' || c == '+'; }

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
				while (kvp_check_is_sel_char(s[i]))
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
	kvp_check_value_parse(val, false, &a->want);
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
	kvp_check_value_parse(v->value, v->quoted, &a->want);
	a->value_line = v->line;
	a->value_col = v->col;
	snprintf(a->text, sizeof a->text, "%.100s == %s%.140s%s", a->field, v->quoted ? "\"" : "",
		 a->want.text, v->quoted ? "\"" : "");
	return KVP_STATUS_OK;
}

kvp_status kvp_check_assert_parse(const struct kvp_doc *doc, const struct kvp_node *node,
			       struct kvp_check_assert *a, struct kvp_error *err)
{
	memset(a, 0, sizeof *a);
	if (node->type == KVP_NODE_MAP)
		return assert_from_map(doc, node, a, err);
	if (node->type != KVP_NODE_SCALAR || kvp_node_is_null(node))
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, "expect", "%s", assert_hint);
	return assert_from_text(doc, node, a, err);
}
