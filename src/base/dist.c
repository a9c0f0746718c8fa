/* dist.c: request length distributions and the seeded generator behind every
 * simulation (see dist.h for the spec syntax).
 *
 * Stance: a sample is a whole number of tokens; continuous laws are rounded to
 * the nearest integer and clamped to [1, KVP_DIST_MAX_TOKENS] (fixed:N is taken
 * as given, so fixed:0 is a zero-length output).  Sampling must be cheap: the
 * fragmentation simulator draws two lengths per request for a million
 * requests, so the normal deviate uses the ziggurat method and the Zipf
 * tail uses rejection-inversion (Hörmann and Derflinger 1996), both O(1).
 * Means and quantiles are of the rounded, clamped law; where that has no
 * closed form the continuous law's value is used and the comment says so. */
#include "base/dist.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

/* ------------------------------------------------------------ generator */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Seed the four words from splitmix64, as the xoshiro authors recommend;
 * never all zero. */
void kvp_rng_seed(struct kvp_rng *r, uint64_t seed)
{
	uint64_t x = seed;
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
}

static inline uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

/* xoshiro256** (Blackman and Vigna). */
uint64_t kvp_rng_next(struct kvp_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

/* 53 random bits scaled to [0, 1). */
double kvp_rng_uniform(struct kvp_rng *r)
{
	return (double)(kvp_rng_next(r) >> 11) * 0x1.0p-53;
}

/* An integer in [0, n) (n >= 1) by the multiply-high method; its bias is
 * below n / 2^64, far under any sampling error kvplan reports. */
static inline uint64_t rng_below(struct kvp_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)kvp_rng_next(r) * n) >> 64);
}

/* A standard normal deviate by the ziggurat method (Marsaglia and Tsang,
 * "The Ziggurat Method for Generating Random Variables", J. Stat. Softw.
 * 5(8), 2000) with 128 strips: one 64-bit draw, a multiply and a compare
 * 98.8% of the time.  The strip index comes from the low 7 bits and the
 * signed abscissa from the high 32, so the two are independent (the original
 * shares bits between them, the flaw Doornik (2005) points out). */
static uint32_t zig_k[128];
static double zig_w[128], zig_f[128];
static pthread_once_t zig_once = PTHREAD_ONCE_INIT;

static void zig_init(void)
{
	const double m1 = 2147483648.0, vn = 9.91256303526217e-3;
	double dn = 3.442619855899, tn = dn;
	double q = vn / exp(-0.5 * dn * dn);
	zig_k[0] = (uint32_t)((dn / q) * m1);
	zig_k[1] = 0;
	zig_w[0] = q / m1;
	zig_w[127] = dn / m1;
	zig_f[0] = 1.0;
	zig_f[127] = exp(-0.5 * dn * dn);
	for (int i = 126; i >= 1; i--) {
		dn = sqrt(-2.0 * log(vn / dn + exp(-0.5 * dn * dn)));
		zig_k[i + 1] = (uint32_t)((dn / tn) * m1);
		tn = dn;
		zig_f[i] = exp(-0.5 * dn * dn);
		zig_w[i] = dn / m1;
	}
}

static double rng_normal(struct kvp_rng *r)
{
	const double tail = 3.442619855899;
	for (;;) {
		uint64_t u = kvp_rng_next(r);
		int32_t hz = (int32_t)(u >> 32);
		unsigned iz = (unsigned)(u & 127);
		uint32_t mag = hz < 0 ? (uint32_t)(-(int64_t)hz) : (uint32_t)hz;
		double x = hz * zig_w[iz];
		if (mag < zig_k[iz])
			return x;
		if (iz == 0) {
			/* the tail beyond 3.44: Marsaglia's exponential rejection */
			double t, y;
			do {
				t = -log(1.0 - kvp_rng_uniform(r)) / tail;
				y = -log(1.0 - kvp_rng_uniform(r));
			} while (y + y < t * t);
			return hz > 0 ? tail + t : -tail - t;
		}
		/* the wedge between two strips */
		if (zig_f[iz] + kvp_rng_uniform(r) * (zig_f[iz - 1] - zig_f[iz]) < exp(-0.5 * x * x))
			return x;
	}
}

/* ------------------------------------------------------------ normal law */

static double norm_cdf(double z) { return 0.5 * erfc(-z / M_SQRT2); }
static double norm_pdf(double z) { return exp(-0.5 * z * z) / sqrt(2.0 * M_PI); }

/* The standard normal quantile: Acklam's rational approximation (relative
 * error 1.15e-9) refined by one Halley step on erfc. */
static double norm_quantile(double p)
{
	static const double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,
				   -2.759285104469687e+02, 1.383577518672690e+02,
				   -3.066479806614716e+01, 2.506628277459239e+00};
	static const double b[] = {-5.447609879822406e+01, 1.615858368580409e+02,
				   -1.556989798598866e+02, 6.680131188771972e+01,
				   -1.328068155288572e+01};
	static const double c[] = {-7.784894002430293e-03, -3.223964580411365e-01,
				   -2.400758277161838e+00, -2.549732539343734e+00,
				   4.374664141464968e+00, 2.938163982698783e+00};
	static const double d[] = {7.784695709041462e-03, 3.224671290700398e-01,
				   2.445134137142996e+00, 3.754408661907416e+00};
	if (p <= 0)
		return -INFINITY;
	if (p >= 1)
		return INFINITY;
	double q, x;
	if (p < 0.02425) {
		q = sqrt(-2 * log(p));
		x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else if (p > 1 - 0.02425) {
		q = sqrt(-2 * log1p(-p));
		x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
		    ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1);
	} else {
		q = p - 0.5;
		double rr = q * q;
		x = (((((a[0] * rr + a[1]) * rr + a[2]) * rr + a[3]) * rr + a[4]) * rr + a[5]) * q /
		    (((((b[0] * rr + b[1]) * rr + b[2]) * rr + b[3]) * rr + b[4]) * rr + 1);
	}
	double e = norm_cdf(x) - p;
	double u = e * sqrt(2 * M_PI) * exp(x * x / 2);
	return x - u / (1 + x * u / 2);
}

/* ------------------------------------------------------------ Zipf law */

/* Rejection-inversion over {1..N} with P(n) ~ n^-s (Hörmann and Derflinger,
 * "Rejection-inversion to generate variates from monotone discrete
 * distributions", ACM TOMACS 6(3), 1996), in the form Apache Commons RNG
 * uses: H is an antiderivative of h(x) = x^-s, with the s = 1 case taken by
 * the log1p/expm1 helpers. */
static double zipf_helper1(double x) { return fabs(x) > 1e-8 ? log1p(x) / x : 1 - x / 2 + x * x / 3; }
static double zipf_helper2(double x) { return fabs(x) > 1e-8 ? expm1(x) / x : 1 + x / 2 + x * x / 6; }
static double zipf_h(double s, double x) { return exp(-s * log(x)); }
static double zipf_H(double s, double x)
{
	double lx = log(x);
	return zipf_helper2((1 - s) * lx) * lx;
}
static double zipf_Hinv(double s, double x)
{
	double t = x * (1 - s);
	if (t < -1)
		t = -1;
	return exp(zipf_helper1(t) * x);
}

/* The sampler's constants for (n, s), kept per thread: they cost five
 * transcendental calls, more than a draw. */
static _Thread_local struct {
	uint64_t n;
	double s, hx1, hn, sq;
} zipf_cache;

static uint64_t zipf_sample(uint64_t n, double s, struct kvp_rng *r)
{
	if (zipf_cache.n != n || zipf_cache.s != s) {
		zipf_cache.n = n;
		zipf_cache.s = s;
		zipf_cache.hx1 = zipf_H(s, 1.5) - 1;
		zipf_cache.hn = zipf_H(s, (double)n + 0.5);
		zipf_cache.sq = 2 - zipf_Hinv(s, zipf_H(s, 2.5) - zipf_h(s, 2));
	}
	double hx1 = zipf_cache.hx1, hn = zipf_cache.hn, sq = zipf_cache.sq;
	for (;;) {
		double u = hn + kvp_rng_uniform(r) * (hx1 - hn);
		double x = zipf_Hinv(s, u);
		double kf = floor(x + 0.5);
		uint64_t k = kf < 1 ? 1 : kf > (double)n ? n : (uint64_t)kf;
		if ((double)k - x <= sq || u >= zipf_H(s, (double)k + 0.5) - zipf_h(s, (double)k))
			return k;
	}
}

/* Sums of n^-s and n^(1-s) over [1, N]: exact up to ZIPF_EXACT terms, the
 * rest by the Euler-Maclaurin integral with its first correction. */
#define ZIPF_EXACT 1000000ULL

static double zipf_tail(double e, uint64_t from, uint64_t to)
{
	/* sum_{n=from}^{to} n^-e ~ integral + (f(from) + f(to)) / 2 */
	double a = (double)from, b = (double)to, integral;
	if (fabs(e - 1) < 1e-12)
		integral = log(b / a);
	else
		integral = (pow(b, 1 - e) - pow(a, 1 - e)) / (1 - e);
	return integral + (pow(a, -e) + pow(b, -e)) / 2;
}

static double zipf_sum(double e, uint64_t n)
{
	uint64_t m = n < ZIPF_EXACT ? n : ZIPF_EXACT;
	double sum = 0;
	for (uint64_t k = m; k >= 1; k--) /* smallest terms first */
		sum += pow((double)k, -e);
	if (n > m)
		sum += zipf_tail(e, m + 1, n);
	return sum;
}

static uint64_t zipf_quantile(uint64_t n, double s, double p)
{
	double z = zipf_sum(s, n), acc = 0;
	uint64_t m = n < ZIPF_EXACT ? n : ZIPF_EXACT;
	for (uint64_t k = 1; k <= m; k++) {
		acc += pow((double)k, -s) / z;
		if (acc >= p)
			return k;
	}
	if (n == m)
		return n;
	/* beyond the exact part: bisect on the approximate tail */
	uint64_t lo = m + 1, hi = n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		if (acc + zipf_tail(s, m + 1, mid) / z >= p)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

/* ------------------------------------------------------------ specs */

static const char spec_help[] =
	"expected fixed:N, uniform:LO,HI, normal:MEAN,SD, lognormal:MEDIAN,SIGMA or zipf:MAX,S";

static kvp_status bad(struct kvp_error *err, const char *field, const char *spec, const char *why)
{
	return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, field, "%s in '%s'", why, spec);
}

/* A token count: a whole number with an optional k/m suffix, at most
 * KVP_DIST_MAX_TOKENS. */
static bool parse_count(const char *s, uint64_t *out)
{
	return kvp_parse_tokens(s, out) == 0 && *out <= KVP_DIST_MAX_TOKENS;
}

static bool parse_real(const char *s, double *out)
{
	return kvp_parse_double(s, out) == 0;
}

/* Parse a spec into *out (which it zeroes first).  Errors are INVALID and
 * name `field`; the caller adds a location. */
kvp_status kvp_dist_parse(const char *spec, const char *field, struct kvp_dist *out,
			  struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	if (!spec)
		spec = "";
	const char *colon = strchr(spec, ':');
	if (!colon)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, field, "%s, got '%s'",
				     spec_help, spec);
	char kind[16], p1[64] = "", p2[64] = "";
	size_t klen = (size_t)(colon - spec);
	if (klen >= sizeof kind)
		return bad(err, field, spec, "unknown distribution");
	memcpy(kind, spec, klen);
	kind[klen] = '\0';
	const char *params = colon + 1;
	const char *comma = strchr(params, ',');
	size_t l1 = comma ? (size_t)(comma - params) : strlen(params);
	if (l1 >= sizeof p1 || (comma && strlen(comma + 1) >= sizeof p2))
		return bad(err, field, spec, "parameter too long");
	memcpy(p1, params, l1);
	p1[l1] = '\0';
	if (comma)
		strcpy(p2, comma + 1);
	bool two = strcmp(kind, "fixed") != 0;
	if (strcmp(kind, "empirical") == 0)
		return bad(err, field, spec,
			   "empirical lengths come from a file (--lengths, or lengths: in a workload)");
	if (two != (comma != NULL))
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, field,
				     "%s takes %s parameter%s, got '%s'", kind, two ? "two" : "one",
				     two ? "s" : "", spec);
	uint64_t n1, n2;
	double d1, d2;
	if (strcmp(kind, "fixed") == 0) {
		if (!parse_count(p1, &n1))
			return bad(err, field, spec, "fixed:N needs a token count N");
		out->kind = KVP_DIST_FIXED;
		out->a = (double)n1;
	} else if (strcmp(kind, "uniform") == 0) {
		if (!parse_count(p1, &n1) || !parse_count(p2, &n2))
			return bad(err, field, spec, "uniform:LO,HI needs two token counts");
		if (n1 < 1 || n1 > n2)
			return bad(err, field, spec, "uniform:LO,HI needs 1 <= LO <= HI");
		out->kind = KVP_DIST_UNIFORM;
		out->a = (double)n1;
		out->b = (double)n2;
	} else if (strcmp(kind, "normal") == 0) {
		if (!parse_real(p1, &d1) || !parse_real(p2, &d2))
			return bad(err, field, spec, "normal:MEAN,SD needs two non-negative numbers");
		if (d1 <= 0 || d1 > (double)KVP_DIST_MAX_TOKENS)
			return bad(err, field, spec, "the mean must be positive and at most 2^32 tokens");
		out->kind = KVP_DIST_NORMAL;
		out->a = d1;
		out->b = d2;
	} else if (strcmp(kind, "lognormal") == 0) {
		if (!parse_real(p1, &d1) || !parse_real(p2, &d2))
			return bad(err, field, spec,
				   "lognormal:MEDIAN,SIGMA needs two non-negative numbers");
		if (d1 <= 0 || d1 > (double)KVP_DIST_MAX_TOKENS)
			return bad(err, field, spec, "the median must be positive and at most 2^32 tokens");
		if (d2 > 10)
			return bad(err, field, spec, "SIGMA above 10 is not a length distribution");
		out->kind = KVP_DIST_LOGNORMAL;
		out->a = d1;
		out->b = d2;
	} else if (strcmp(kind, "zipf") == 0) {
		if (!parse_count(p1, &n1) || n1 < 1 || !parse_real(p2, &d2) || !(d2 > 0) || d2 > 100)
			return bad(err, field, spec,
				   "zipf:MAX,S needs a token count MAX >= 1 and an exponent 0 < S <= 100");
		out->kind = KVP_DIST_ZIPF;
		out->a = (double)n1;
		out->b = d2;
	} else {
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, field,
				     "unknown distribution '%s'; %s", kind, spec_help);
	}
	return KVP_STATUS_OK;
}

/* Copy values[0..n) into an empirical distribution (n >= 1). */
kvp_status kvp_dist_empirical(const uint64_t *values, size_t n, struct kvp_dist *out)
{
	memset(out, 0, sizeof *out);
	if (n == 0)
		return KVP_STATUS_INVALID;
	out->values = malloc(n * sizeof *out->values);
	if (!out->values)
		return KVP_STATUS_NOMEM;
	memcpy(out->values, values, n * sizeof *values);
	out->n = n;
	out->kind = KVP_DIST_EMPIRICAL;
	return KVP_STATUS_OK;
}

void kvp_dist_free(struct kvp_dist *d)
{
	if (!d)
		return;
	free(d->values);
	d->values = NULL;
	d->n = 0;
}

/* Round a continuous draw to a token count in [1, KVP_DIST_MAX_TOKENS]. */
static inline uint64_t round_clamp(double x)
{
	if (!(x >= 1.5)) /* also NaN */
		return 1;
	if (x >= (double)KVP_DIST_MAX_TOKENS)
		return KVP_DIST_MAX_TOKENS;
	return (uint64_t)(x + 0.5);
}

uint64_t kvp_dist_sample(const struct kvp_dist *d, struct kvp_rng *r)
{
	if (d->kind == KVP_DIST_NORMAL || d->kind == KVP_DIST_LOGNORMAL)
		pthread_once(&zig_once, zig_init);
	switch (d->kind) {
	case KVP_DIST_FIXED:
		return (uint64_t)d->a;
	case KVP_DIST_UNIFORM:
		return (uint64_t)d->a + rng_below(r, (uint64_t)d->b - (uint64_t)d->a + 1);
	case KVP_DIST_NORMAL:
		return round_clamp(d->a + d->b * rng_normal(r));
	case KVP_DIST_LOGNORMAL:
		return round_clamp(d->a * exp(d->b * rng_normal(r)));
	case KVP_DIST_ZIPF:
		return zipf_sample((uint64_t)d->a, d->b, r);
	case KVP_DIST_EMPIRICAL:
		return d->n ? d->values[rng_below(r, d->n)] : 0;
	}
	return 0;
}

/* The mean of the sampled (rounded, clamped) law.  Normal and lognormal:
 * a draw below 1.5 becomes 1, above it rounds without bias to first order,
 * so mean = P(Y < 1.5) + E[Y; Y >= 1.5] with the continuous Y; the upper
 * clamp at 2^32 tokens is ignored. */
double kvp_dist_mean(const struct kvp_dist *d)
{
	double z, sum;
	switch (d->kind) {
	case KVP_DIST_FIXED:
		return d->a;
	case KVP_DIST_UNIFORM:
		return (d->a + d->b) / 2;
	case KVP_DIST_NORMAL:
		if (d->b == 0)
			return (double)round_clamp(d->a);
		z = (1.5 - d->a) / d->b;
		return norm_cdf(z) + d->a * (1 - norm_cdf(z)) + d->b * norm_pdf(z);
	case KVP_DIST_LOGNORMAL:
		if (d->b == 0)
			return (double)round_clamp(d->a);
		/* E[Y; Y >= c] = m e^(s^2/2) Phi((ln m + s^2 - ln c) / s) */
		z = (log(1.5) - log(d->a)) / d->b;
		return norm_cdf(z) +
		       d->a * exp(d->b * d->b / 2) * norm_cdf((log(d->a / 1.5) + d->b * d->b) / d->b);
	case KVP_DIST_ZIPF:
		return zipf_sum(d->b - 1, (uint64_t)d->a) / zipf_sum(d->b, (uint64_t)d->a);
	case KVP_DIST_EMPIRICAL:
		sum = 0;
		for (size_t i = 0; i < d->n; i++)
			sum += (double)d->values[i];
		return d->n ? sum / (double)d->n : 0;
	}
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The smallest length n with P(X <= n) >= p. */
uint64_t kvp_dist_quantile(const struct kvp_dist *d, double p)
{
	if (p < 0)
		p = 0;
	if (p > 1)
		p = 1;
	switch (d->kind) {
	case KVP_DIST_FIXED:
		return (uint64_t)d->a;
	case KVP_DIST_UNIFORM: {
		uint64_t lo = (uint64_t)d->a, width = (uint64_t)d->b - lo + 1;
		uint64_t k = (uint64_t)ceil(p * (double)width);
		return k == 0 ? lo : lo + k - 1;
	}
	case KVP_DIST_NORMAL:
		/* P(X <= n) = Phi((n + 0.5 - mean) / sd) for n >= 1 */
		if (d->b == 0 || p <= 0)
			return p <= 0 ? 1 : round_clamp(d->a);
		return round_clamp(ceil(d->a + d->b * norm_quantile(p) - 0.5));
	case KVP_DIST_LOGNORMAL:
		if (d->b == 0 || p <= 0)
			return p <= 0 ? 1 : round_clamp(d->a);
		return round_clamp(ceil(d->a * exp(d->b * norm_quantile(p)) - 0.5));
	case KVP_DIST_ZIPF:
		return zipf_quantile((uint64_t)d->a, d->b, p);
	case KVP_DIST_EMPIRICAL: {
		if (!d->n)
			return 0;
		uint64_t *s = malloc(d->n * sizeof *s);
		if (!s)
			return 0;
		memcpy(s, d->values, d->n * sizeof *s);
		qsort(s, d->n, sizeof *s, cmp_u64);
		size_t k = (size_t)ceil(p * (double)d->n);
		uint64_t v = s[k == 0 ? 0 : k - 1];
		free(s);
		return v;
	}
	}
	return 0;
}

/* The shortest decimal that reads back as exactly v (%.15g, else %.17g), so a
 * printed spec parses back to the same distribution. */
static const char *shortest(double v, char *buf, size_t size)
{
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	return buf;
}

void kvp_dist_format(const struct kvp_dist *d, char *buf, size_t size)
{
	char x[32], y[32];
	switch (d->kind) {
	case KVP_DIST_FIXED:
		snprintf(buf, size, "fixed:%llu", (unsigned long long)d->a);
		break;
	case KVP_DIST_UNIFORM:
		snprintf(buf, size, "uniform:%llu,%llu", (unsigned long long)d->a,
			 (unsigned long long)d->b);
		break;
	case KVP_DIST_NORMAL:
		snprintf(buf, size, "normal:%s,%s", shortest(d->a, x, sizeof x), shortest(d->b, y, sizeof y));
		break;
	case KVP_DIST_LOGNORMAL:
		snprintf(buf, size, "lognormal:%s,%s", shortest(d->a, x, sizeof x), shortest(d->b, y, sizeof y));
		break;
	case KVP_DIST_ZIPF:
		snprintf(buf, size, "zipf:%llu,%s", (unsigned long long)d->a, shortest(d->b, y, sizeof y));
		break;
	case KVP_DIST_EMPIRICAL:
		snprintf(buf, size, "empirical:%zu", d->n);
		break;
	}
}
