/* check-dist.c: length distributions, the seeded generator, workload profiles
 * and length files.  Expected values are hand arithmetic or public reference
 * values written beside each assertion; statistical checks state the
 * standard error they allow and how it was computed. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-tmp.h"
#include "base/dist.h"
#include "read/workload.h"

#ifndef KVP_SRCDIR
#define KVP_SRCDIR "."
#endif

/* ------------------------------------------------------------ generator */

START_TEST(test_rng_reference)
{
	/* xoshiro256** from the state {1, 2, 3, 4}: the first output is
	 * rotl(s[1] * 5, 7) * 9 = rotl(10, 7) * 9 = 1280 * 9 = 11,520. */
	struct kvp_rng r = {{1, 2, 3, 4}};
	ck_assert_uint_eq(kvp_rng_next(&r), 11520);
	/* splitmix64 from 0 gives 0xe220a8397b1dcdaf first (Vigna's splitmix64.c,
	 * the value every port tests against); kvp_rng_seed puts it in s[0]. */
	kvp_rng_seed(&r, 0);
	ck_assert_uint_eq(r.s[0], 0xe220a8397b1dcdafULL);
	/* same seed, same stream; another seed, another stream */
	struct kvp_rng a, b, c;
	kvp_rng_seed(&a, 42);
	kvp_rng_seed(&b, 42);
	kvp_rng_seed(&c, 43);
	bool differ = false;
	for (int i = 0; i < 1000; i++) {
		uint64_t x = kvp_rng_next(&a);
		ck_assert_uint_eq(x, kvp_rng_next(&b));
		differ |= x != kvp_rng_next(&c);
	}
	ck_assert(differ);
	/* uniform lies in [0, 1); its mean over n = 10^6 draws is 1/2 within
	 * 5 standard errors: sd = sqrt(1/12) = 0.2887, se = 0.2887e-3 */
	double sum = 0;
	for (int i = 0; i < 1000000; i++) {
		double u = kvp_rng_uniform(&a);
		ck_assert(u >= 0 && u < 1);
		sum += u;
	}
	ck_assert_double_eq_tol(sum / 1e6, 0.5, 5 * 0.2887e-3);
}
END_TEST

/* ------------------------------------------------------------ specs */

struct spec_case {
	const char *spec;
	enum kvp_dist_kind kind;
	double a, b;
	const char *formatted;
};

static const struct spec_case good_specs[] = {
	{"fixed:100", KVP_DIST_FIXED, 100, 0, "fixed:100"},
	{"fixed:0", KVP_DIST_FIXED, 0, 0, "fixed:0"},
	{"fixed:8k", KVP_DIST_FIXED, 8192, 0, "fixed:8192"},
	{"uniform:1,4096", KVP_DIST_UNIFORM, 1, 4096, "uniform:1,4096"},
	{"normal:512,128", KVP_DIST_NORMAL, 512, 128, "normal:512,128"},
	{"lognormal:1200,0.8", KVP_DIST_LOGNORMAL, 1200, 0.8, "lognormal:1200,0.8"},
	{"zipf:32768,1.2", KVP_DIST_ZIPF, 32768, 1.2, "zipf:32768,1.2"},
};

START_TEST(test_parse_good)
{
	const struct spec_case *c = &good_specs[_i];
	struct kvp_dist d;
	struct kvp_error err = {0};
	ck_assert_msg(kvp_dist_parse(c->spec, "--prompt", &d, &err) == KVP_STATUS_OK, "%s: %s",
		      c->spec, err.msg);
	ck_assert_int_eq(d.kind, c->kind);
	ck_assert_double_eq(d.a, c->a);
	ck_assert_double_eq(d.b, c->b);
	char buf[64];
	kvp_dist_format(&d, buf, sizeof buf);
	ck_assert_str_eq(buf, c->formatted);
	kvp_dist_free(&d);
}
END_TEST

static const char *const bad_specs[] = {
	"", "fixed", "fixed:", "fixed:-1", "fixed:1,2", "uniform:5", "uniform:0,10",
	"uniform:10,5", "normal:0,5", "normal:x,1", "lognormal:1200", "lognormal:0,1",
	"lognormal:100,11", "zipf:0,1", "zipf:100,0", "poisson:4", "empirical:10",
	"fixed:99999999999999999999", "fixed:5000000000", "uniform:1,nan",
};

START_TEST(test_parse_bad)
{
	struct kvp_dist d;
	struct kvp_error err = {0};
	ck_assert_msg(kvp_dist_parse(bad_specs[_i], "--output", &d, &err) == KVP_STATUS_INVALID,
		      "'%s' was accepted", bad_specs[_i]);
	ck_assert_str_eq(err.field, "--output");
	ck_assert(err.msg[0]);
}
END_TEST

/* ------------------------------------------------------------ laws */

static double sample_mean(const struct kvp_dist *d, int n, uint64_t seed)
{
	struct kvp_rng r;
	kvp_rng_seed(&r, seed);
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += (double)kvp_dist_sample(d, &r);
	return sum / n;
}

static struct kvp_dist parse(const char *spec)
{
	struct kvp_dist d;
	struct kvp_error err = {0};
	ck_assert_msg(kvp_dist_parse(spec, "test", &d, &err) == KVP_STATUS_OK, "%s", err.msg);
	return d;
}

START_TEST(test_means)
{
	struct kvp_dist d;
	/* fixed: exact */
	d = parse("fixed:77");
	ck_assert_double_eq(kvp_dist_mean(&d), 77);
	ck_assert_double_eq(sample_mean(&d, 1000, 1), 77);
	d = parse("fixed:0");
	ck_assert_double_eq(sample_mean(&d, 10, 1), 0);

	/* uniform:1,100: mean 50.5, variance (100^2 - 1) / 12 = 833.25, sd 28.87;
	 * n = 10^5 -> se 0.0913; allow 5 se = 0.46 */
	d = parse("uniform:1,100");
	ck_assert_double_eq(kvp_dist_mean(&d), 50.5);
	ck_assert_double_eq_tol(sample_mean(&d, 100000, 2), 50.5, 0.46);

	/* normal:100,30: draws below 1.5 become 1: z = (1.5 - 100) / 30 =
	 * -3.2833, Phi(z) = 5.129e-4, phi(z) = 1.8197e-3; mean = Phi(z) +
	 * 100 (1 - Phi(z)) + 30 phi(z) = 100.0038 (the exact sum over the
	 * rounded law, sum n P(X = n), is 100.00382); se = 30 / sqrt(10^5) =
	 * 0.095; 5 se = 0.47 */
	d = parse("normal:100,30");
	ck_assert_double_eq_tol(kvp_dist_mean(&d), 100.0038, 0.0001);
	ck_assert_double_eq_tol(sample_mean(&d, 100000, 3), 100, 0.47);

	/* lognormal:1000,0.5: mean = 1000 e^(0.125) = 1133.148; variance =
	 * (e^0.25 - 1) e^0.25 10^6 = 364,696, sd 603.9; se = 1.91; 5 se = 9.5 */
	d = parse("lognormal:1000,0.5");
	ck_assert_double_eq_tol(kvp_dist_mean(&d), 1133.148, 0.01);
	ck_assert_double_eq_tol(sample_mean(&d, 100000, 4), 1133.148, 9.5);

	/* zipf:10,1: P(n) = (1/n) / H_10, H_10 = 7381/2520 = 2.928968;
	 * mean = 10 / H_10 = 3.414172 */
	d = parse("zipf:10,1");
	ck_assert_double_eq_tol(kvp_dist_mean(&d), 3.414172, 1e-6);
}
END_TEST

START_TEST(test_normal_shape)
{
	/* The ziggurat sampler against the normal law, through normal:10000,1000
	 * (no clamping): X = round(10000 + 1000 Z), so |X - 10000| <= 1000 iff
	 * |Z| <= 1.0005: p = 0.682689 + 2 phi(1) 0.0005 = 0.682931; over n = 10^6
	 * draws se = sqrt(p (1 - p) / n) = 0.000465, allow 5 se = 0.0023.
	 * |X - 10000| > 3500 iff |Z| > 3.5005 (this takes the tail branch):
	 * p = 2 (1 - Phi(3.5005)) = 4.644e-4, expected count 464.4, sd 21.5,
	 * allow 5 sd = 108. */
	struct kvp_dist d = parse("normal:10000,1000");
	struct kvp_rng r;
	kvp_rng_seed(&r, 12);
	long within = 0, tail = 0;
	for (int i = 0; i < 1000000; i++) {
		long x = (long)kvp_dist_sample(&d, &r) - 10000;
		within += labs(x) <= 1000;
		tail += labs(x) > 3500;
	}
	ck_assert_double_eq_tol(within / 1e6, 0.682931, 0.0023);
	ck_assert_msg(labs(tail - 464) <= 108, "tail count %ld", tail);
}
END_TEST

START_TEST(test_zipf_frequencies)
{
	/* zipf:10,1: each count of n = 1..10 over N = 2*10^5 draws is binomial
	 * with p_n = (1/n) / 2.928968; allow 5 sd = 5 sqrt(N p (1 - p)). */
	struct kvp_dist d = parse("zipf:10,1");
	struct kvp_rng r;
	kvp_rng_seed(&r, 7);
	int count[11] = {0};
	const int N = 200000;
	for (int i = 0; i < N; i++) {
		uint64_t k = kvp_dist_sample(&d, &r);
		ck_assert(k >= 1 && k <= 10);
		count[k]++;
	}
	for (int n = 1; n <= 10; n++) {
		double p = (1.0 / n) / 2.928968;
		double sd = sqrt(N * p * (1 - p));
		ck_assert_msg(fabs(count[n] - N * p) < 5 * sd, "n=%d count %d want %.0f", n, count[n],
			      N * p);
	}
	/* quantiles: CDF(1) = 0.3414, CDF(2) = 0.5121 -> median 2; CDF(10) = 1 */
	ck_assert_uint_eq(kvp_dist_quantile(&d, 0.5), 2);
	ck_assert_uint_eq(kvp_dist_quantile(&d, 0.3), 1);
	ck_assert_uint_eq(kvp_dist_quantile(&d, 1.0), 10);
	/* a long tail: zipf:2^21,1.5 goes past the exact sum (10^6 terms); its
	 * mean sum n^-0.5 / sum n^-1.5 against a direct sum of all 2^21 terms */
	d = parse("zipf:2097152,1.5");
	double s1 = 0, s0 = 0;
	for (long n = 2097152; n >= 1; n--) {
		s1 += pow((double)n, -0.5);
		s0 += pow((double)n, -1.5);
	}
	ck_assert_double_eq_tol(kvp_dist_mean(&d), s1 / s0, 1e-6 * s1 / s0);
}
END_TEST

START_TEST(test_quantiles)
{
	struct kvp_dist d = parse("uniform:1,100");
	/* smallest n with n / 100 >= p */
	ck_assert_uint_eq(kvp_dist_quantile(&d, 0.5), 50);
	ck_assert_uint_eq(kvp_dist_quantile(&d, 0.0), 1);
	ck_assert_uint_eq(kvp_dist_quantile(&d, 0.991), 100);
	ck_assert_uint_eq(kvp_dist_quantile(&d, 1.0), 100);
	/* normal:100,30, p = 0.975: 100 + 30 * 1.959964 - 0.5 = 158.30 -> 159;
	 * check: Phi((158.5 - 100) / 30) = Phi(1.95) = 0.9744 < 0.975 and
	 * Phi((159.5 - 100) / 30) = Phi(1.983) = 0.9763 >= 0.975 */
	d = parse("normal:100,30");
	ck_assert_uint_eq(kvp_dist_quantile(&d, 0.5), 100);
	ck_assert_uint_eq(kvp_dist_quantile(&d, 0.975), 159);
	/* lognormal: the median is the median; p90 = 1200 e^(0.8 * 1.281552) =
	 * 1200 e^1.025241 = 1200 * 2.787764 = 3345.3 -> 3345 */
	d = parse("lognormal:1200,0.8");
	ck_assert_uint_eq(kvp_dist_quantile(&d, 0.5), 1200);
	ck_assert_uint_eq(kvp_dist_quantile(&d, 0.9), 3345);
	d = parse("fixed:64");
	ck_assert_uint_eq(kvp_dist_quantile(&d, 0.99), 64);
}
END_TEST

START_TEST(test_empirical)
{
	static const uint64_t v[] = {40, 10, 30, 20};
	struct kvp_dist d;
	ck_assert_int_eq(kvp_dist_empirical(v, 4, &d), KVP_STATUS_OK);
	ck_assert_int_eq(d.kind, KVP_DIST_EMPIRICAL);
	ck_assert_double_eq(kvp_dist_mean(&d), 25); /* (10 + 20 + 30 + 40) / 4 */
	ck_assert_uint_eq(kvp_dist_quantile(&d, 0.5), 20);
	ck_assert_uint_eq(kvp_dist_quantile(&d, 0.75), 30);
	ck_assert_uint_eq(kvp_dist_quantile(&d, 1), 40);
	char buf[32];
	kvp_dist_format(&d, buf, sizeof buf);
	ck_assert_str_eq(buf, "empirical:4");
	/* each value 1/4 of the time: count of 10 in 10^5 draws, sd = sqrt(10^5
	 * 0.25 0.75) = 137; 5 sd = 685 */
	struct kvp_rng r;
	kvp_rng_seed(&r, 9);
	int tens = 0;
	for (int i = 0; i < 100000; i++) {
		uint64_t x = kvp_dist_sample(&d, &r);
		ck_assert(x == 10 || x == 20 || x == 30 || x == 40);
		tens += x == 10;
	}
	ck_assert_int_lt(abs(tens - 25000), 685);
	kvp_dist_free(&d);
	ck_assert_ptr_null(d.values);
	ck_assert_int_eq(kvp_dist_empirical(v, 0, &d), KVP_STATUS_INVALID);
}
END_TEST

START_TEST(test_sample_limits)
{
	/* a huge sigma still gives lengths within [1, 2^32] */
	struct kvp_dist d = parse("lognormal:4294967296,10");
	struct kvp_rng r;
	kvp_rng_seed(&r, 1);
	for (int i = 0; i < 10000; i++) {
		uint64_t x = kvp_dist_sample(&d, &r);
		ck_assert(x >= 1 && x <= KVP_DIST_MAX_TOKENS);
	}
	d = parse("normal:2,100");
	for (int i = 0; i < 10000; i++)
		ck_assert_uint_ge(kvp_dist_sample(&d, &r), 1);
	d = parse("uniform:7,7");
	ck_assert_uint_eq(kvp_dist_sample(&d, &r), 7);
}
END_TEST

/* ------------------------------------------------------------ workloads */

static void tmp_setup(void)
{
	tmp_make("check-dist");
}

START_TEST(test_workload_load)
{
	struct kvp_workload w;
	struct kvp_error err = {0};
	const char *p = write_tmp("mix.yaml",
				  "name: mix\n"
				  "description: \"a test\"\n"
				  "prompt: lognormal:1200,0.8\n"
				  "output: fixed:300\n"
				  "max_len: 8k\n"
				  "arrival_rate: 4.0\n"
				  "concurrent_users: 64\n"
				  "shared_prefix: {tokens: 2048, fraction: 0.7}\n"
				  "slo: {ttft_s: 0.5, tpot_s: 0.05, percentile: 90}\n");
	ck_assert_msg(kvp_workload_load(p, &w, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_str_eq(w.name, "mix");
	ck_assert_int_eq(w.prompt.kind, KVP_DIST_LOGNORMAL);
	ck_assert_int_eq(w.output.kind, KVP_DIST_FIXED);
	ck_assert(!w.paired);
	ck_assert_uint_eq(w.max_len, 8192);
	ck_assert_double_eq(w.arrival_rate, 4.0);
	ck_assert_uint_eq(w.concurrent_users, 64);
	ck_assert_uint_eq(w.prefix_tokens, 2048);
	ck_assert_double_eq(w.prefix_fraction, 0.7);
	ck_assert_double_eq(w.slo_ttft_s, 0.5);
	ck_assert_double_eq(w.slo_tpot_s, 0.05);
	ck_assert_double_eq(w.slo_percentile, 90);
	/* max_len caps every sample: prompt <= 8192, prompt + output <= 8192 */
	struct kvp_rng r;
	kvp_rng_seed(&r, 5);
	for (int i = 0; i < 100000; i++) {
		uint64_t a, b;
		kvp_workload_sample(&w, &r, &a, &b);
		ck_assert_uint_le(a + b, 8192);
		ck_assert_uint_ge(a, 1);
	}
	kvp_workload_free(&w);

	/* defaults: no prefix, percentile 50 */
	p = write_tmp("small.yaml", "name: small\nprompt: fixed:10\noutput: fixed:5\n");
	ck_assert_int_eq(kvp_workload_load(p, &w, &err), KVP_STATUS_OK);
	ck_assert_double_eq(w.slo_percentile, 50);
	ck_assert_uint_eq(w.prefix_tokens, 0);
	ck_assert_uint_eq(w.max_len, 0);
	kvp_workload_free(&w);
}
END_TEST

START_TEST(test_lengths_files)
{
	struct kvp_workload w;
	struct kvp_error err = {0};
	memset(&w, 0, sizeof w);
	const char *p = write_tmp("pairs.csv", "prompt,output\n# a comment\n100,7\n\n200, 9\n300,0\n");
	ck_assert_msg(kvp_workload_load_lengths(p, &w, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert(w.paired);
	ck_assert_uint_eq(w.prompt.n, 3);
	ck_assert_str_eq(w.name, "pairs");
	/* pairs stay together: 100 goes with 7, 200 with 9, 300 with 0 */
	struct kvp_rng r;
	kvp_rng_seed(&r, 11);
	for (int i = 0; i < 1000; i++) {
		uint64_t a, b;
		kvp_workload_sample(&w, &r, &a, &b);
		ck_assert(b == (a == 100 ? 7 : a == 200 ? 9 : 0));
	}
	ck_assert_double_eq(kvp_dist_mean(&w.prompt), 200);
	kvp_workload_free(&w);

	/* a YAML list of pairs, referenced from a workload relative to it */
	write_tmp("pairs.yaml", "- {prompt: 50, output: 5}\n- {prompt: 70, output: 3}\n");
	p = write_tmp("fromfile.yaml", "name: fromfile\nlengths: pairs.yaml\nmax_len: 60\n");
	ck_assert_msg(kvp_workload_load(p, &w, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(w.prompt.n, 2);
	/* max_len 60: (50, 5) stays; (70, 3) becomes (60, 0) */
	for (int i = 0; i < 100; i++) {
		uint64_t a, b;
		kvp_workload_sample(&w, &r, &a, &b);
		ck_assert((a == 50 && b == 5) || (a == 60 && b == 0));
	}
	kvp_workload_free(&w);
}
END_TEST

/* Bad inputs: each must fail with a located error naming the field. */
struct bad_case {
	const char *name, *text;
	int line, col;
	const char *field;
};

static const struct bad_case bad_lengths[] = {
	{"a.csv", "prompt,output\n10,x\n", 2, 4, "output"},
	{"b.csv", "10,5\n0,5\n", 2, 1, "prompt"},
	{"c.csv", "10,5\n10,5,3\n", 2, 1, ""},
	{"d.csv", "tokens,len\n10,5\n", 1, 1, ""},
	{"e.csv", "# nothing\n", 0, 0, ""},
	{"f.yaml", "- {prompt: 10, output: 5}\n- {prompt: 10, outptu: 5}\n", 2, 16, "outptu"},
	{"g.yaml", "- {prompt: 10, output: -5}\n", 1, 24, "output"},
	{"h.csv", "10,99999999999\n", 1, 4, "output"},
};

START_TEST(test_lengths_bad)
{
	const struct bad_case *c = &bad_lengths[_i];
	struct kvp_workload w;
	struct kvp_error err = {0};
	memset(&w, 0, sizeof w);
	const char *p = write_tmp(c->name, c->text);
	ck_assert_msg(kvp_workload_load_lengths(p, &w, &err) != KVP_STATUS_OK, "%s accepted",
		      c->name);
	ck_assert_msg(err.line == c->line && err.col == c->col, "%s: at %d:%d, want %d:%d (%s)",
		      c->name, err.line, err.col, c->line, c->col, err.msg);
	ck_assert_str_eq(err.field, c->field);
	ck_assert(strstr(err.path, c->name));
	kvp_workload_free(&w);
}
END_TEST

/* The bad workload profiles in tests/data/bad/workload-*.yaml, with the
 * line:col and field each must report. */
static const struct bad_case bad_workloads[] = {
	{"workload-unknown-key.yaml", NULL, 5, 1, "arival_rate"},
	{"workload-bad-dist.yaml", NULL, 3, 9, "prompt"},
	{"workload-both-sources.yaml", NULL, 5, 10, "lengths"},
	{"workload-fraction-range.yaml", NULL, 5, 40, "shared_prefix.fraction"},
	{"workload-missing-output.yaml", NULL, 1, 1, "output"},
	{"workload-negative-max-len.yaml", NULL, 4, 10, "max_len"},
	{"workload-prefix-too-long.yaml", NULL, 5, 25, "shared_prefix.tokens"},
	{"workload-slo-key.yaml", NULL, 5, 20, "p99"},
	{"workload-lengths-missing.yaml", NULL, 2, 10, "lengths"},
	{"workload-name-mismatch.yaml", NULL, 1, 7, "name"},
};

START_TEST(test_workload_bad)
{
	const struct bad_case *c = &bad_workloads[_i];
	char path[600];
	snprintf(path, sizeof path, "%s/tests/data/bad/%s", KVP_SRCDIR, c->name);
	struct kvp_workload w;
	struct kvp_error err = {0};
	ck_assert_msg(kvp_workload_load(path, &w, &err) != KVP_STATUS_OK, "%s accepted", c->name);
	ck_assert_msg(err.line == c->line && err.col == c->col, "%s: at %d:%d, want %d:%d (%s)",
		      c->name, err.line, err.col, c->line, c->col, err.msg);
	ck_assert_str_eq(err.field, c->field);
	ck_assert_ptr_null(w.prompt.values);
}
END_TEST

START_TEST(test_builtin_workloads)
{
	/* every shipped workload loads, has a mean prompt of at least one token,
	 * and is found by name */
	static const char *const names[] = {"chat", "rag", "code-completion", "batch-summarize"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		struct kvp_workload w;
		struct kvp_error err = {0};
		ck_assert_msg(kvp_workload_load(names[i], &w, &err) == KVP_STATUS_OK, "%s: %s:%d: %s",
			      names[i], err.path, err.line, err.msg);
		ck_assert_str_eq(w.name, names[i]);
		ck_assert(kvp_dist_mean(&w.prompt) >= 1);
		ck_assert_uint_gt(w.max_len, 0);
		kvp_workload_free(&w);
	}
	struct kvp_workload w;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_workload_load("no-such-workload", &w, &err), KVP_STATUS_NOT_FOUND);
}
END_TEST

/* A printed spec parses back to the same parameters (found by fuzzing: %g
 * printed lognormal:4294967296 as 4.29497e+09). */
START_TEST(test_format_round_trip)
{
	static const char *const specs[] = {"lognormal:4294967296,0.1", "normal:1234567.5,0.3",
					    "lognormal:1200,0.8", "zipf:100000,1.1"};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		struct kvp_dist d, e;
		struct kvp_error err;
		char buf[128];
		ck_assert_int_eq(kvp_dist_parse(specs[i], "t", &d, &err), KVP_STATUS_OK);
		kvp_dist_format(&d, buf, sizeof buf);
		ck_assert_str_eq(buf, specs[i]);
		ck_assert_int_eq(kvp_dist_parse(buf, "t", &e, &err), KVP_STATUS_OK);
		ck_assert(d.a == e.a && d.b == e.b);
		kvp_dist_free(&d);
		kvp_dist_free(&e);
	}
}
END_TEST

static Suite *dist_suite(void)
{
	Suite *s = suite_create("dist");
	TCase *core = tcase_create("core");
	tcase_add_test(core, test_rng_reference);
	tcase_add_test(core, test_format_round_trip);
	tcase_add_loop_test(core, test_parse_good, 0, sizeof good_specs / sizeof good_specs[0]);
	tcase_add_test(core, test_means);
	tcase_add_test(core, test_normal_shape);
	tcase_add_test(core, test_zipf_frequencies);
	tcase_add_test(core, test_quantiles);
	tcase_add_test(core, test_empirical);
	tcase_add_test(core, test_sample_limits);
	tcase_set_timeout(core, 60);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_loop_test(errors, test_parse_bad, 0, sizeof bad_specs / sizeof bad_specs[0]);
	suite_add_tcase(s, errors);
	return s;
}

static Suite *workload_suite(void)
{
	Suite *s = suite_create("workload");
	TCase *core = tcase_create("core");
	tcase_add_checked_fixture(core, tmp_setup, tmp_remove);
	tcase_add_test(core, test_workload_load);
	tcase_add_test(core, test_lengths_files);
	tcase_add_test(core, test_builtin_workloads);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_checked_fixture(errors, tmp_setup, tmp_remove);
	tcase_add_loop_test(errors, test_lengths_bad, 0, sizeof bad_lengths / sizeof bad_lengths[0]);
	tcase_add_loop_test(errors, test_workload_bad, 0,
			    sizeof bad_workloads / sizeof bad_workloads[0]);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(dist_suite());
	srunner_add_suite(sr, workload_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
