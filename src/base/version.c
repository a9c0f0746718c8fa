/* version.c: PEP 440-style engine versions (version.h): parse, order,
 * ranges.  No allocation; every number is checked against UINT32_MAX. */
#include "base/version.h"

#include <ctype.h>
#include <string.h>

/* digits at *s into *n, advancing *s; false when none or too large */
static bool number(const char **s, uint32_t *n)
{
	uint64_t v = 0;
	const char *p = *s;
	if (!isdigit((unsigned char)*p))
		return false;
	for (; isdigit((unsigned char)*p); p++) {
		v = v * 10 + (uint64_t)(*p - '0');
		if (v > UINT32_MAX)
			return false;
	}
	*s = p;
	*n = (uint32_t)v;
	return true;
}

/* a PEP 440 separator before a pre/post/dev label: '.', '-', '_' or none */
static const char *label(const char *s, const char *name)
{
	const char *p = s;
	if (*p == '.' || *p == '-' || *p == '_')
		p++;
	size_t n = strlen(name);
	return strncmp(p, name, n) == 0 ? p + n : NULL;
}

bool kvp_version_parse(const char *s, struct kvp_version *out)
{
	struct kvp_version v = {.pre = -1};
	const char *p = s, *q;
	if (!s)
		return false;
	if (*p == 'v' || *p == 'V')
		p++;
	do {
		if (v.nparts == KVP_VERSION_PARTS || !number(&p, &v.part[v.nparts]))
			return false;
		v.nparts++;
	} while (*p == '.' && isdigit((unsigned char)p[1]) && p++);
	static const char *const pre[] = {"a", "b", "rc"};
	for (int i = 2; i >= 0; i--)
		if ((q = label(p, pre[i])) && isdigit((unsigned char)*q)) {
			v.pre = i;
			p = q;
			if (!number(&p, &v.pre_num))
				return false;
			break;
		}
	if ((q = label(p, "post")) && isdigit((unsigned char)*q)) {
		v.post = true;
		p = q;
		if (!number(&p, &v.post_num))
			return false;
	}
	if ((q = label(p, "dev"))) {
		v.dev = true;
		p = q;
		if (isdigit((unsigned char)*p) && !number(&p, &v.dev_num))
			return false;
	}
	if (*p == '+') {
		/* the local label: letters, digits and . - _ (not ordered) */
		if (!*++p)
			return false;
		for (; *p; p++)
			if (!isalnum((unsigned char)*p) && *p != '.' && *p != '-' && *p != '_')
				return false;
	}
	if (*p)
		return false;
	*out = v;
	return true;
}

static int cmp_u32(uint32_t a, uint32_t b)
{
	return a < b ? -1 : a > b;
}

/* PEP 440's phase of a version within its release: a nightly of the
 * release itself (X.devN) first, then the pre-releases, the release, its
 * post-releases */
static int phase(const struct kvp_version *v)
{
	if (v->pre < 0 && !v->post && v->dev)
		return -1;
	return v->pre >= 0 ? v->pre : 3;
}

int kvp_version_cmp(const struct kvp_version *a, const struct kvp_version *b)
{
	int c;
	for (uint32_t i = 0; i < KVP_VERSION_PARTS; i++)
		if ((c = cmp_u32(i < a->nparts ? a->part[i] : 0, i < b->nparts ? b->part[i] : 0)))
			return c;
	if ((c = phase(a) - phase(b)) != 0)
		return c < 0 ? -1 : 1;
	if (a->pre >= 0 && (c = cmp_u32(a->pre_num, b->pre_num)))
		return c;
	if (a->post != b->post)
		return a->post ? 1 : -1;
	if (a->post && (c = cmp_u32(a->post_num, b->post_num)))
		return c;
	if (a->dev != b->dev)
		return a->dev ? -1 : 1;
	return a->dev ? cmp_u32(a->dev_num, b->dev_num) : 0;
}

/* Same release numbers (missing parts 0)? */
static bool same_release(const struct kvp_version *a, const struct kvp_version *b)
{
	for (uint32_t i = 0; i < KVP_VERSION_PARTS; i++)
		if ((i < a->nparts ? a->part[i] : 0) != (i < b->nparts ? b->part[i] : 0))
			return false;
	return true;
}

/* One specifier "OPversion" (blanks around) against v (NULL: only check
 * it); false when malformed or not satisfied. */
static bool specifier(const char *s, size_t n, const struct kvp_version *v, bool *ok)
{
	char buf[64];
	while (n && isspace((unsigned char)*s))
		s++, n--;
	while (n && isspace((unsigned char)s[n - 1]))
		n--;
	static const char *const ops[] = {"==", "!=", ">=", "<=", ">", "<"};
	int op = -1;
	for (int i = 0; i < 6 && op < 0; i++)
		if (n >= strlen(ops[i]) && strncmp(s, ops[i], strlen(ops[i])) == 0)
			op = i;
	if (op < 0)
		return false;
	s += strlen(ops[op]);
	n -= strlen(ops[op]);
	while (n && isspace((unsigned char)*s))
		s++, n--;
	struct kvp_version b;
	if (n == 0 || n >= sizeof buf)
		return false;
	memcpy(buf, s, n);
	buf[n] = 0;
	if (!kvp_version_parse(buf, &b))
		return false;
	if (!v)
		return true;
	int c = kvp_version_cmp(v, &b);
	bool b_final = b.pre < 0 && !b.dev;
	bool v_early = v->pre >= 0 || v->dev;
	switch (op) {
	case 0: *ok = c == 0; break;
	case 1: *ok = c != 0; break;
	case 2: *ok = c >= 0; break;
	case 3: *ok = c <= 0; break;
	case 4: *ok = c > 0; break;
	default: *ok = c < 0 && !(b_final && v_early && same_release(v, &b)); break;
	}
	return true;
}

static bool walk(const char *range, const struct kvp_version *v)
{
	const char *p = range;
	if (!range || !*range)
		return false;
	for (;;) {
		size_t n = strcspn(p, ",");
		bool ok = true;
		if (!specifier(p, n, v, &ok) || !ok)
			return false;
		if (!p[n])
			return true;
		p += n + 1;
	}
}

bool kvp_version_range_valid(const char *range)
{
	return walk(range, NULL);
}

bool kvp_version_in_range(const struct kvp_version *v, const char *range)
{
	return walk(range, v);
}

double kvp_version_position(const struct kvp_version *v)
{
	double x = 0;
	for (uint32_t i = 0; i < 4; i++)
		x = x * 1000 + (i < v->nparts ? v->part[i] : 0);
	return v->pre >= 0 || (v->dev && !v->post) ? x - 0.5 : x;
}
