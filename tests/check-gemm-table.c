/* check-gemm-table.c: the measured GEMM table reader and its interpolation
 * (src/time/gemm-table.c): hand arithmetic at grid points, between them and
 * outside the grid; a plain reference written here (corner weights over the
 * eight corners, a linear bracket scan), sharing nothing with the library's
 * axis-by-axis code, compared on many random points; the tables shipped in
 * profiles/kernels/ against the source's own latencies; and bad input, each
 * error with its line and field. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-tmp.h"
#include "read/profile.h"
#include "time/gemm-table.h"

/* The fixture: m 2 8 32, n 1024 4096, k 1024 4096; TFLOP/s chosen so the
 * log-space means come out round by hand. */
static const double FM[3] = {2, 8, 32}, FN[2] = {1024, 4096}, FK[2] = {1024, 4096};
static const double FTF[3][2][2] = {
	{{1, 4}, {2, 8}},       /* m 2:  [n 1024][k 1024, 4096], [n 4096][...] */
	{{4, 16}, {8, 32}},     /* m 8 */
	{{100, 400}, {200, 900}}, /* m 32 */
};

static const char *write_fixture(void)
{
	static char text[2048];
	size_t at = (size_t)snprintf(text, sizeof text,
				     "# a fixture\n\nm\tn\tk\ttflops\n");
	/* rows in a shuffled order: the reader must not rely on sorting */
	for (int i = 2; i >= 0; i--)
		for (int j = 0; j < 2; j++)
			for (int l = 1; l >= 0; l--)
				at += (size_t)snprintf(text + at, sizeof text - at, "%.0f %.0f\t%.0f %g\n",
						       FM[i], FN[j], FK[l], FTF[i][j][l]);
	return write_tmp("fixture.tsv", text);
}

static struct kvp_gemm_table tab;

static void load_fixture(void)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_gemm_table_load(write_fixture(), &tab, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
}

/* Hand arithmetic: t(m, n, k) in TFLOP/s. */
static const struct {
	double m, n, k, tflops;
	const char *why;
} hand[] = {
	{8, 4096, 1024, 8, "a grid point"},
	{32, 4096, 4096, 900, "a grid corner"},
	{4, 1024, 1024, 2, "log2 4 halfway between 1 and 3: sqrt(1 x 4)"},
	{16, 4096, 4096, 169.70562748477141, "halfway 8..32: sqrt(32 x 900) = 120 sqrt 2"},
	{2, 2048, 2048, 2.8284271247461903, "halfway in n and k: (1 x 4 x 2 x 8)^(1/4) = 2 sqrt 2"},
	{4, 2048, 1024, 2.8284271247461903, "halfway in m and n: (1 x 2 x 4 x 8)^(1/4)"},
	{1, 1024, 1024, 0.5, "below m: the edge's time, 1 x 1/2"},
	{64, 1024, 1024, 100, "above m: the edge's throughput"},
	{2, 512, 1024, 0.5, "below n: 1 x 512/1024"},
	{8, 1024, 8192, 16, "above k: held at k 4096"},
	{1, 512, 512, 0.125, "below all three: 1 x 1/2 x 1/2 x 1/2"},
	{4, 1024, 2048, 4, "halfway m and k: (1 x 4 x 4 x 16)^(1/4) = 4"},
};

START_TEST(test_hand)
{
	load_fixture();
	ck_assert_uint_eq(tab.nm, 3);
	ck_assert_uint_eq(tab.nn, 2);
	ck_assert_uint_eq(tab.nk, 2);
	double got = kvp_gemm_table_flops(&tab, hand[_i].m, hand[_i].n, hand[_i].k);
	ck_assert_msg(fabs(got / 1e12 - hand[_i].tflops) < 1e-9 * hand[_i].tflops,
		      "%s: got %.12g, want %.12g", hand[_i].why, got / 1e12, hand[_i].tflops);
}
END_TEST

/* The plain reference: per axis a bracket found by scanning, the fraction in
 * log2, the clamping rules of gemm-table.h; then the sum over the 8 corners
 * of the product of their weights times log tf. */
static void ref_axis(const double *a, int n, double x, int *lo, double *w, double *scale)
{
	*scale = 1;
	if (x < a[0]) {
		*scale = x / a[0];
		x = a[0];
	}
	if (x > a[n - 1])
		x = a[n - 1];
	*lo = 0;
	for (int i = 0; i < n - 1; i++)
		if (a[i] <= x)
			*lo = i;
	*w = (log2(x) - log2(a[*lo])) / (log2(a[*lo + 1]) - log2(a[*lo]));
}

static double ref_tflops(double m, double n, double k)
{
	int i, j, l;
	double wi, wj, wl, si, sj, sl;
	ref_axis(FM, 3, m, &i, &wi, &si);
	ref_axis(FN, 2, n, &j, &wj, &sj);
	ref_axis(FK, 2, k, &l, &wl, &sl);
	double sum = 0;
	for (int c = 0; c < 8; c++) {
		int a = c & 1, b = (c >> 1) & 1, d = (c >> 2) & 1;
		double w = (a ? wi : 1 - wi) * (b ? wj : 1 - wj) * (d ? wl : 1 - wl);
		sum += w * log(FTF[i + a][j + b][l + d]);
	}
	return exp(sum) * si * sj * sl;
}

START_TEST(test_random_against_reference)
{
	load_fixture();
	srand(32);
	for (int t = 0; t < 20000; t++) {
		/* log-uniform over a range wider than the grid on every axis */
		double m = exp2(-1 + 8.0 * rand() / RAND_MAX);
		double n = exp2(8 + 6.0 * rand() / RAND_MAX);
		double k = exp2(8 + 6.0 * rand() / RAND_MAX);
		double want = ref_tflops(m, n, k), got = kvp_gemm_table_flops(&tab, m, n, k) / 1e12;
		ck_assert_msg(fabs(got - want) <= 1e-9 * want, "m %g n %g k %g: %.12g vs %.12g", m, n,
			      k, got, want);
	}
}
END_TEST

/* Limits: no table, zero or negative sizes, a grid of one point. */
START_TEST(test_limits)
{
	struct kvp_gemm_table none = {0};
	ck_assert_double_eq(kvp_gemm_table_flops(&none, 8, 1024, 1024), 0);
	ck_assert_double_eq(kvp_gemm_table_flops(NULL, 8, 1024, 1024), 0);
	load_fixture();
	ck_assert_double_eq(kvp_gemm_table_flops(&tab, 0, 1024, 1024), 0);
	ck_assert_double_eq(kvp_gemm_table_flops(&tab, 8, -1, 1024), 0);
	ck_assert_double_eq(kvp_gemm_table_flops(&tab, 8, 1024, NAN), 0);
	/* one point: 5 TFLOP/s at m 4, n k 1024; m 2 -> 5 x 2/4 = 2.5; m 1e9 -> 5 */
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_gemm_table_load(write_tmp("one.tsv", "m n k tflops\n4 1024 1024 5\n"),
					     &tab, &err),
			 KVP_STATUS_OK);
	ck_assert_double_eq_tol(kvp_gemm_table_flops(&tab, 2, 1024, 1024), 2.5e12, 1);
	ck_assert_double_eq_tol(kvp_gemm_table_flops(&tab, 1e9, 1e6, 1e6), 5e12, 1);
}
END_TEST

/* The shipped tables load, and a row matches the source by hand:
 * aiconfigurator-core 0.12.0, systems/data/h100_sxm/gemm/trtllm/1.3.0rc20/
 * gemm_perf.parquet, bfloat16 m = n = k = 8192, latency 1.4048 ms (to 5
 * figures): 2 x 8192^3 / 1.4048e-3 = 782.7 TFLOP/s. */
START_TEST(test_shipped)
{
	static const char *const names[] = {
		"gemm-a100-80gb-bf16.tsv", "gemm-h100-sxm-bf16.tsv", "gemm-h100-sxm-fp8.tsv",
		"gemm-h200-bf16.tsv", "gemm-h200-fp8.tsv", "gemm-b200-bf16.tsv", "gemm-b200-fp8.tsv",
		"gemm-gb200-bf16.tsv", "gemm-gb200-fp8.tsv", "gemm-l40s-bf16.tsv", "gemm-l40s-fp8.tsv",
		"gemm-rtx-pro-6000-bf16.tsv", "gemm-rtx-pro-6000-fp8.tsv",
	};
	char path[768];
	struct kvp_error err = {0};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
		ck_assert_msg(kvp_profile_data_file("kernels", names[i], path, sizeof path), "%s",
			      names[i]);
		ck_assert_msg(kvp_gemm_table_load(path, &tab, &err) == KVP_STATUS_OK, "%s", err.msg);
		/* N and K 512 .. 16384 in powers of two (scripts/gemm-tables.py) */
		ck_assert_uint_eq(tab.nn, 6);
		ck_assert_uint_eq(tab.nk, 6);
		ck_assert_double_eq(tab.n[0], 512);
		ck_assert_double_eq(tab.k[5], 16384);
		ck_assert_double_eq(tab.m[0], 1);
	}
	ck_assert(kvp_profile_data_file("kernels", "gemm-h100-sxm-bf16.tsv", path, sizeof path));
	ck_assert_int_eq(kvp_gemm_table_load(path, &tab, &err), KVP_STATUS_OK);
	double want = 2.0 * 8192.0 * 8192.0 * 8192.0 / 1.4048e-3;
	ck_assert_double_eq_tol(kvp_gemm_table_flops(&tab, 8192, 8192, 8192), want, want * 1e-3);
	ck_assert(!kvp_profile_data_file("kernels", "gemm-no-such-gpu-bf16.tsv", path, sizeof path));
}
END_TEST

/* Bad input: each names its line and field. */
static const struct {
	const char *text;
	int line;
	const char *field, *msg;
} bad[] = {
	{"", 0, "header", "no header"},
	{"# only a comment\n", 1, "header", "no header"},
	{"m n k\n2 1024 1024 1\n", 1, "header", "'m n k tflops'"},
	{"m n k tflops\n", 1, "m", "no rows"},
	{"# c\nm n k tflops\n2 1024 x 5\n", 3, "k", "'x' is not a positive integer"},
	{"m n k tflops\n0 1024 1024 5\n", 2, "m", "'0' is not a positive integer"},
	{"m n k tflops\n2.5 1024 1024 5\n", 2, "m", "not a positive integer"},
	{"m n k tflops\n2 1024 1024 -1\n", 2, "tflops", "'-1' is not a positive number"},
	{"m n k tflops\n2 1024 1024 nan\n", 2, "tflops", "not a positive number"},
	{"m n k tflops\n2 1024 1024 0\n", 2, "tflops", "not a positive number"},
	{"m n k tflops\n2 1024 1024 1e999\n", 2, "tflops", "not a positive number"},
	{"m n k tflops\n2 1024 1024\n", 2, "tflops", "expected 4 fields"},
	{"m n k tflops\n2 1024 1024 1 7\n", 2, "tflops", "expected 4 fields"},
	{"m n k tflops\n2 1024 1024 1\n2 1024 1024 2\n", 3, "m", "given twice"},
	{"m n k tflops\n2 1024 1024 1\n8 4096 1024 2\n", 3, "m",
	 "the grid has no row for m 2 n 4096 k 1024"},
};

START_TEST(test_bad)
{
	struct kvp_error err = {0};
	const char *p = write_tmp("bad.tsv", bad[_i].text);
	ck_assert_int_eq(kvp_gemm_table_load(p, &tab, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.path, p);
	ck_assert_int_eq(err.line, bad[_i].line);
	ck_assert_str_eq(err.field, bad[_i].field);
	ck_assert_msg(strstr(err.msg, bad[_i].msg), "%s: %s", bad[_i].msg, err.msg);
}
END_TEST

START_TEST(test_bad_limits)
{
	struct kvp_error err = {0};
	/* 21 distinct m values: one past KVP_GEMM_MAX_M, on line 22 */
	char text[4096];
	size_t at = (size_t)snprintf(text, sizeof text, "m n k tflops\n");
	for (int i = 1; i <= 21; i++)
		at += (size_t)snprintf(text + at, sizeof text - at, "%d 1024 1024 1\n", i);
	ck_assert_int_eq(kvp_gemm_table_load(write_tmp("many.tsv", text), &tab, &err),
			 KVP_STATUS_INVALID);
	ck_assert_int_eq(err.line, 22);
	ck_assert_str_eq(err.field, "m");
	ck_assert(strstr(err.msg, "more than 20 distinct values"));
	/* 9 distinct k values */
	at = (size_t)snprintf(text, sizeof text, "m n k tflops\n");
	for (int i = 1; i <= 9; i++)
		at += (size_t)snprintf(text + at, sizeof text - at, "1 1024 %d 1\n", i);
	ck_assert_int_eq(kvp_gemm_table_load(write_tmp("manyk.tsv", text), &tab, &err),
			 KVP_STATUS_INVALID);
	ck_assert_int_eq(err.line, 10);
	ck_assert_str_eq(err.field, "k");
	/* a missing file */
	ck_assert_int_eq(kvp_gemm_table_load("/nonexistent/gemm.tsv", &tab, &err),
			 KVP_STATUS_NOT_FOUND);
	/* a line longer than the reader's buffer */
	char *longline = malloc(1200);
	memset(longline, '1', 1199);
	longline[1199] = 0;
	snprintf(text, sizeof text, "m n k tflops\n%s\n", longline);
	free(longline);
	ck_assert_int_eq(kvp_gemm_table_load(write_tmp("long.tsv", text), &tab, &err),
			 KVP_STATUS_INVALID);
	ck_assert_int_eq(err.line, 2);
	ck_assert(strstr(err.msg, "line longer"));
	/* a failed load leaves the output as it was */
	load_fixture();
	ck_assert_int_ne(kvp_gemm_table_load(write_tmp("b.tsv", "m n k tflops\n1 1 1 x\n"), &tab,
					     &err),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(tab.nm, 3);
}
END_TEST

static Suite *gemm_table_suite(void)
{
	Suite *s = suite_create("gemm-table");
	TCase *core = tcase_create("core");
	tcase_add_loop_test(core, test_hand, 0, (int)(sizeof hand / sizeof hand[0]));
	tcase_add_test(core, test_random_against_reference);
	tcase_add_test(core, test_limits);
	tcase_add_test(core, test_shipped);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_loop_test(errors, test_bad, 0, (int)(sizeof bad / sizeof bad[0]));
	tcase_add_test(errors, test_bad_limits);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	return run_suite_in_tmpdir("check-gemm-table", gemm_table_suite());
}
