/* units.c: parse and print sizes, rates and token counts; checked arithmetic.
 * See units.h for the suffixes.  Parsing is strict: the whole string must be
 * consumed, no sign is accepted, and a value that does not fit in uint64_t is
 * an error rather than a saturated or wrapped number. */
#include "base/units.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

bool kvp_mul(uint64_t a, uint64_t b, uint64_t *out)
{
	uint64_t r;
	if (__builtin_mul_overflow(a, b, &r))
		return false;
	*out = r;
	return true;
}

bool kvp_add(uint64_t a, uint64_t b, uint64_t *out)
{
	uint64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return false;
	*out = r;
	return true;
}

int kvp_parse_u64(const char *s, uint64_t *out)
{
	if (!s || !isdigit((unsigned char)s[0]))
		return -1;
	uint64_t v = 0;
	for (const char *p = s; *p; p++) {
		if (*p == '_' && p != s && isdigit((unsigned char)p[1]))
			continue; /* 1_000_000 */
		if (!isdigit((unsigned char)*p))
			return -1;
		if (!kvp_mul(v, 10, &v) || !kvp_add(v, (uint64_t)(*p - '0'), &v))
			return -2;
	}
	*out = v;
	return 0;
}

/* Split "12.5GiB" into the number part (decimal, no sign) and the suffix. */
static int split_number(const char *s, char *num, size_t numsize, const char **suffix)
{
	size_t i = 0;
	bool digits = false, dot = false;
	while (s[i] && (isdigit((unsigned char)s[i]) || (s[i] == '.' && !dot) ||
			(s[i] == '_' && i > 0))) {
		if (s[i] == '.')
			dot = true;
		else if (s[i] != '_')
			digits = true;
		i++;
	}
	if (!digits || i >= numsize)
		return -1;
	size_t k = 0;
	for (size_t j = 0; j < i; j++)
		if (s[j] != '_')
			num[k++] = s[j];
	num[k] = '\0';
	*suffix = s + i;
	while (**suffix == ' ')
		(*suffix)++;
	return 0;
}

/* num (a decimal string) times mult, exactly when num is an integer. */
static int scale(const char *num, uint64_t mult, uint64_t *out)
{
	if (!strchr(num, '.')) {
		uint64_t v;
		int rc = kvp_parse_u64(num, &v);
		if (rc)
			return rc;
		return kvp_mul(v, mult, out) ? 0 : -2;
	}
	errno = 0;
	double d = strtod(num, NULL);
	if (errno || !isfinite(d))
		return -2;
	long double r = (long double)d * (long double)mult;
	if (r >= 18446744073709551616.0L)
		return -2;
	*out = (uint64_t)(r + 0.5L);
	return 0;
}

/* num (a decimal string) times mult, only when the product is a whole
 * number, computed exactly in integers: "1.5" x 1024 = 1536, but "1.5" x 1
 * is not a count (-3) rather than 2. */
static int scale_whole(const char *num, uint64_t mult, uint64_t *out)
{
	const char *dot = strchr(num, '.');
	if (!dot)
		return scale(num, mult, out);
	char ip[64], fp[64];
	size_t ni = (size_t)(dot - num), nf = strlen(dot + 1);
	memcpy(ip, num, ni);
	ip[ni] = '\0';
	memcpy(fp, dot + 1, nf + 1);
	while (nf && fp[nf - 1] == '0') /* 1.50k: the zeros change nothing */
		fp[--nf] = '\0';
	uint64_t whole = 0, frac = 0, pow10 = 1, v;
	if ((ni && kvp_parse_u64(ip, &whole)) || !kvp_mul(whole, mult, &v))
		return ni ? -2 : -1;
	if (nf == 0)
		return (*out = v), 0;
	if (nf > 18)
		return -3; /* 10^19 > 2^63: a tail this long is no whole count */
	for (size_t i = 0; i < nf; i++)
		pow10 *= 10;
	uint64_t f;
	if (kvp_parse_u64(fp, &frac) || !kvp_mul(frac, mult, &f))
		return -3; /* frac < 10^18 and mult <= 2^20: only a malformed tail */
	if (f % pow10)
		return -3;
	return kvp_add(v, f / pow10, out) ? 0 : -2;
}

struct suffix {
	const char *name;
	uint64_t mult; /* 0: a bare K, M, G or T, which could be either */
};

/* Matched in any case ("80gb" = "80GB"): KB MB GB TB are powers of 10,
 * KiB MiB GiB TiB powers of 2.  A bare letter is refused (-4): "80G" is
 * 80GB to a disk vendor and 80GiB to nvidia-smi, 7% apart. */
static const struct suffix byte_suffixes[] = {
	{"", 1}, {"B", 1},
	{"KiB", 1ULL << 10}, {"MiB", 1ULL << 20}, {"GiB", 1ULL << 30}, {"TiB", 1ULL << 40},
	{"KB", 1000ULL}, {"MB", 1000000ULL}, {"GB", 1000000000ULL}, {"TB", 1000000000000ULL},
	{"K", 0}, {"M", 0}, {"G", 0}, {"T", 0},
	{NULL, 0}
};

static const struct suffix token_suffixes[] = {
	{"", 1}, {"K", 1024}, {"M", 1048576}, {NULL, 0}
};

static const struct suffix *find_suffix(const struct suffix *table, const char *name)
{
	for (const struct suffix *t = table; t->name; t++)
		if (strcasecmp(name, t->name) == 0)
			return t;
	return NULL;
}

static int parse_with(const char *s, const struct suffix *table, bool whole, uint64_t *out)
{
	char num[64];
	const char *suffix;
	if (!s || split_number(s, num, sizeof num, &suffix))
		return -1;
	const struct suffix *t = find_suffix(table, suffix);
	if (!t)
		return -1;
	if (!t->mult)
		return -4;
	return whole ? scale_whole(num, t->mult, out) : scale(num, t->mult, out);
}

int kvp_parse_bytes(const char *s, uint64_t *out) { return parse_with(s, byte_suffixes, false, out); }

bool kvp_bytes_readings(const char *s, char *buf, size_t size)
{
	char num[64];
	const char *suffix;
	if (!s || split_number(s, num, sizeof num, &suffix))
		return false;
	const char *rate = strcmp(suffix + (suffix[0] ? 1 : 0), "/s") == 0 ? "/s" : "";
	char letter[2] = {suffix[0], '\0'};
	const struct suffix *t = find_suffix(byte_suffixes, letter);
	if (!letter[0] || !t || t->mult || strlen(suffix) != 1 + strlen(rate))
		return false;
	char up = (char)toupper((unsigned char)letter[0]);
	if (rate[0]) { /* a rate is a double: the names say enough */
		snprintf(buf, size, "%s%cB/s or %s%ciB/s", num, up, num, up);
		return true;
	}
	char dec[8], bin[8], text[2][48];
	snprintf(dec, sizeof dec, "%cB", up);
	snprintf(bin, sizeof bin, "%ciB", up);
	const char *names[2] = {dec, bin};
	for (int i = 0; i < 2; i++) {
		uint64_t v;
		if (scale(num, find_suffix(byte_suffixes, names[i])->mult, &v) == 0) {
			char digits[32];
			kvp_format_u64(v, digits, sizeof digits);
			snprintf(text[i], sizeof text[i], "%s B", digits);
		} else {
			snprintf(text[i], sizeof text[i], "over 64 bits");
		}
	}
	snprintf(buf, size, "%s%s (%s) or %s%s (%s)", num, dec, text[0], num, bin, text[1]);
	return true;
}

int kvp_parse_tokens(const char *s, uint64_t *out) { return parse_with(s, token_suffixes, true, out); }

/* A decimal number as people write one: digits with at most one '.', at
 * least one digit, then an optional exponent e[+-]digits.  Not strtod's
 * whole grammar: no hex float (0x0.8p0), no inf or nan, no sign. */
static bool is_decimal(const char *s)
{
	size_t digits = 0;
	bool dot = false;
	for (; *s && *s != 'e' && *s != 'E'; s++) {
		if (*s == '.' && !dot)
			dot = true;
		else if (isdigit((unsigned char)*s))
			digits++;
		else
			return false;
	}
	if (!digits)
		return false;
	if (!*s)
		return true;
	s++;
	if (*s == '+' || *s == '-')
		s++;
	if (!isdigit((unsigned char)*s))
		return false;
	while (isdigit((unsigned char)*s))
		s++;
	return *s == '\0';
}

int kvp_parse_double(const char *s, double *out)
{
	if (!s || !is_decimal(s))
		return -1;
	char *end;
	errno = 0;
	double d = strtod(s, &end);
	if (end == s || *end)
		return -1;
	if (errno == ERANGE || !isfinite(d))
		return -2;
	*out = d;
	return 0;
}

int kvp_parse_fraction(const char *s, double *out)
{
	char buf[64];
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n >= sizeof buf)
		return -1;
	memcpy(buf, s, n + 1);
	double div = 1.0;
	if (buf[n - 1] == '%') {
		buf[n - 1] = '\0';
		div = 100.0;
	}
	double d;
	int rc = kvp_parse_double(buf, &d);
	if (rc)
		return rc;
	d /= div;
	if (!(d > 0.0 && d <= 1.0))
		return -2;
	*out = d;
	return 0;
}

int kvp_parse_rate(const char *s, double *bytes_per_s)
{
	char num[64];
	const char *suffix;
	if (!s || split_number(s, num, sizeof num, &suffix))
		return -1;
	size_t n = strlen(suffix);
	if (n < 2 || strcmp(suffix + n - 2, "/s") != 0)
		return -1;
	char unit[16];
	if (n - 2 >= sizeof unit)
		return -1;
	memcpy(unit, suffix, n - 2);
	unit[n - 2] = '\0';
	const struct suffix *t = find_suffix(byte_suffixes, unit);
	if (!t || !unit[0])
		return -1;
	if (!t->mult)
		return -4;
	double d;
	int rc = kvp_parse_double(num, &d);
	if (rc)
		return rc;
	*bytes_per_s = d * (double)t->mult;
	return isfinite(*bytes_per_s) ? 0 : -2;
}

void kvp_format_bytes(uint64_t bytes, char *buf, size_t size)
{
	static const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
	if (bytes < 1024) {
		snprintf(buf, size, "%llu B", (unsigned long long)bytes);
		return;
	}
	double v = (double)bytes;
	int u = 0;
	while (v >= 1024.0 && u < 6) {
		v /= 1024.0;
		u++;
	}
	snprintf(buf, size, "%.2f %s", v, units[u]);
}

void kvp_format_rate(double bytes_per_s, char *buf, size_t size)
{
	static const char *units[] = {"B/s", "KB/s", "MB/s", "GB/s", "TB/s", "PB/s"};
	double v = bytes_per_s;
	int u = 0;
	while (v >= 1000.0 && u < 5) {
		v /= 1000.0;
		u++;
	}
	/* beyond 10^9 PB/s "%.2f" needs more digits than any buffer the
	 * callers pass, and a cut-off number is a wrong number */
	snprintf(buf, size, v < 1e9 ? "%.2f %s" : "%.3e %s", v, units[u]);
}

void kvp_format_fixed(double v, int decimals, const char *unit, char *buf, size_t size)
{
	if (decimals < 0)
		decimals = 0;
	if (decimals > 6)
		decimals = 6;
	if (isfinite(v) && fabs(v) < 1e15)
		snprintf(buf, size, "%.*f%s", decimals, v, unit);
	else
		snprintf(buf, size, "%.*e%s", decimals + 2, v, unit);
}

void kvp_format_u64(uint64_t v, char *buf, size_t size)
{
	char digits[32];
	int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
	char out[48];
	int k = 0;
	for (int i = 0; i < n; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			out[k++] = ',';
		out[k++] = digits[i];
	}
	out[k] = '\0';
	snprintf(buf, size, "%s", out);
}
