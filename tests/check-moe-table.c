/* check-moe-table.c: the measured MoE layer table reader and its
 * interpolation (src/time/moe-table.c): hand arithmetic on a fixture at its
 * points, between them and outside them; a plain reference written here (a
 * power law through the bracketing points, found by scanning the fixture's
 * unsorted rows), sharing nothing with the library's sorted log/exp code,
 * compared on many random points; the tables shipped in profiles/kernels/
 * against the source parquet's own latencies; the curve a deployment gets
 * held under its coarser expert splits' (kvp_moe_curve_pick); and bad input, each error with
 * its line and field. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-tmp.h"
#include "read/profile.h"
#include "time/moe-table.h"
#include "time/step-moe.h"

/* The fixture: shape (4096, 1536, 8, 128); group (8, 1) at tokens 4, 16,
 * 64 with 10, 40, 90 us (rows out of order); group (1, 8) at tokens 16 with
 * 30 us; and rows of another shape, which must not be kept. */
static const double FT[3] = {4, 16, 64}, FUS[3] = {10, 40, 90};

static const char *write_fixture(void)
{
	return write_tmp("fixture.tsv",
			 "# a fixture\n\n"
			 "hidden inter topk experts moe_tp moe_ep tokens latency_us\n"
			 "4096\t1536\t8\t128\t8\t1\t64\t90\n"
			 "2048 768 8 128 8 1 4 1\n"
			 "4096\t1536\t8\t128\t8\t1\t4\t10\n"
			 "4096\t1536\t8\t128\t1\t8\t16\t30\n"
			 "4096\t1536\t8\t128\t8\t1\t16\t40\n"
			 "4096 1536 8 64 8 1 16 7\n");
}

static struct kvp_moe_table tab;

static void load_fixture(void)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_moe_table_load(write_fixture(), 4096, 1536, 8, 128, &tab, &err) ==
			      KVP_STATUS_OK,
		      "%s", err.msg);
}

/* Hand arithmetic on group (8, 1): seconds of one layer at `tokens`. */
static const struct {
	double tokens, us;
	const char *why;
} hand[] = {
	{16, 40, "a measured point"},
	{8, 20, "log2 8 halfway 4..16: sqrt(10 x 40) = 20"},
	{32, 60, "halfway 16..64: sqrt(40 x 90) = 60"},
	{1, 10, "below the fewest tokens: their time, 10"},
	{0.25, 10, "a fraction of a token: still 10"},
	{128, 180, "above the most: 90 x 128 / 64"},
	{6400, 9000, "far above: 90 x 100"},
	{5.656854249492381, 14.142135623730951, "log2 2.5 a quarter of 2..4: 10 x 4^(1/4) = 10 sqrt 2"},
};

START_TEST(test_hand)
{
	load_fixture();
	ck_assert_uint_eq(tab.ncurves, 2);
	const struct kvp_moe_curve *c = kvp_moe_table_curve(&tab, 8, 1);
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(c->n, 3);
	double got = kvp_moe_curve_s(c, hand[_i].tokens) * 1e6;
	ck_assert_msg(fabs(got - hand[_i].us) < 1e-9 * hand[_i].us, "%s: got %.12g, want %.12g",
		      hand[_i].why, got, hand[_i].us);
}
END_TEST

/* The plain reference: the bracketing measured points found by scanning
 * the unsorted arrays, then the power law t = t0 (T / T0)^p through them,
 * p = ln(t1 / t0) / ln(T1 / T0); the clamping rules of moe-table.h. */
static double ref_us(double tokens)
{
	static const double t[3] = {64, 4, 16}, us[3] = {90, 10, 40}; /* the file's order */
	double lo = -1, hi = -1, ulo = 0, uhi = 0, min = INFINITY, max = 0, umin = 0, umax = 0;
	for (int i = 0; i < 3; i++) {
		if (t[i] < min)
			min = t[i], umin = us[i];
		if (t[i] > max)
			max = t[i], umax = us[i];
		if (t[i] <= tokens && t[i] > lo)
			lo = t[i], ulo = us[i];
		if (t[i] >= tokens && (hi < 0 || t[i] < hi))
			hi = t[i], uhi = us[i];
	}
	if (tokens <= min)
		return umin;
	if (tokens >= max)
		return umax * tokens / max;
	if (hi == lo)
		return ulo;
	return ulo * pow(tokens / lo, log(uhi / ulo) / log(hi / lo));
}

START_TEST(test_random_against_reference)
{
	load_fixture();
	const struct kvp_moe_curve *c = kvp_moe_table_curve(&tab, 8, 1);
	srand(32);
	for (int i = 0; i < 20000; i++) {
		/* log-uniform over 0.5 .. 2^10 tokens, wider than 4 .. 64 */
		double tokens = exp2(-1 + 11.0 * rand() / RAND_MAX);
		double want = ref_us(tokens), got = kvp_moe_curve_s(c, tokens) * 1e6;
		ck_assert_msg(fabs(got - want) <= 1e-9 * want, "tokens %g: %.12g vs %.12g", tokens,
			      got, want);
	}
	/* the points themselves agree with the fixture's arrays */
	for (int i = 0; i < 3; i++)
		ck_assert_double_eq_tol(kvp_moe_curve_s(c, FT[i]) * 1e6, FUS[i], 1e-9);
}
END_TEST

/* Limits: an empty curve, no curve for a group, zero and negative tokens, a
 * curve of one point, a shape the file lacks. */
START_TEST(test_limits)
{
	struct kvp_moe_curve none = {0};
	ck_assert_double_eq(kvp_moe_curve_s(&none, 8), 0);
	ck_assert_double_eq(kvp_moe_curve_s(NULL, 8), 0);
	load_fixture();
	ck_assert_ptr_null(kvp_moe_table_curve(&tab, 4, 2));
	const struct kvp_moe_curve *c = kvp_moe_table_curve(&tab, 8, 1);
	ck_assert_double_eq(kvp_moe_curve_s(c, 0), 0);
	ck_assert_double_eq(kvp_moe_curve_s(c, -3), 0);
	ck_assert_double_eq(kvp_moe_curve_s(c, NAN), 0);
	/* group (1, 8): one point, 30 us at 16; at 8 -> 30; at 32 -> 30 x 2 = 60 */
	c = kvp_moe_table_curve(&tab, 1, 8);
	ck_assert_uint_eq(c->n, 1);
	ck_assert_double_eq_tol(kvp_moe_curve_s(c, 8) * 1e6, 30, 1e-9);
	ck_assert_double_eq_tol(kvp_moe_curve_s(c, 32) * 1e6, 60, 1e-9);
	/* the other shape's row (2048, 768, 8, 128) alone: one curve of 1 us */
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_moe_table_load(write_fixture(), 2048, 768, 8, 128, &tab, &err),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(tab.ncurves, 1);
	/* a shape the file lacks: loaded, no curve */
	ck_assert_int_eq(kvp_moe_table_load(write_fixture(), 5120, 8192, 1, 128, &tab, &err),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(tab.ncurves, 0);
	ck_assert_ptr_null(kvp_moe_table_curve(&tab, 8, 1));
}
END_TEST

/* The shipped tables against the source by hand: aiconfigurator-core
 * 0.12.0, TensorRT-LLM 1.3.0rc20, kernel_source moe_torch_flow_cutlass,
 * distribution power_law_1.2, latency in ms as the parquet holds it:
 *   systems/data/h200_sxm/moe/trtllm/1.3.0rc20/moe_perf.parquet, fp8,
 *     (4096, 1536, 8, 128) moe_tp 8 moe_ep 1: 1024 tokens 0.27562239170074465,
 *     1536 tokens 0.3360447883605957 (the next measured count),
 *     2048 tokens 0.40135040283203127;
 *   systems/data/b200_sxm/moe/trtllm/1.3.0rc20/moe_perf.parquet, nvfp4, the
 *     same shape and group: 1 token 0.044633600115776065, 16384 tokens
 *     1.8070592880249023;
 *   systems/data/h100_sxm/moe/trtllm/1.3.0rc20/moe_perf.parquet, bfloat16,
 *     (4096, 14336, 2, 8) moe_tp 1 moe_ep 1: 64 tokens 1.1471424102783203.
 * The tables keep 4 significant figures of microseconds (scripts/moe-tables.py),
 * so each is asserted to 5e-4 relative. */
static const struct {
	const char *file;
	unsigned hidden, inter, topk, experts, tp, ep;
	double tokens, us;
	const char *why;
} shipped[] = {
	{"moe-h200-fp8.tsv", 4096, 1536, 8, 128, 8, 1, 1024, 275.62239170074465, "a point"},
	{"moe-h200-fp8.tsv", 4096, 1536, 8, 128, 8, 1, 2048, 401.35040283203127, "a point"},
	/* halfway in log tokens, sqrt(1024 x 1536) = 1254.14: sqrt(275.622 x 336.045) = 304.338 */
	{"moe-h200-fp8.tsv", 4096, 1536, 8, 128, 8, 1, 1254.138748304987, 304.33775363322565,
	 "halfway"},
	{"moe-b200-nvfp4.tsv", 4096, 1536, 8, 128, 8, 1, 1, 44.633600115776065, "the fewest"},
	/* above the most: 1807.059 x 2 */
	{"moe-b200-nvfp4.tsv", 4096, 1536, 8, 128, 8, 1, 32768, 3614.1185760498047, "above"},
	{"moe-h100-sxm-bf16.tsv", 4096, 14336, 2, 8, 1, 1, 64, 1147.1424102783203, "Mixtral"},
};

START_TEST(test_shipped)
{
	char path[768];
	struct kvp_error err = {0};
	ck_assert(kvp_profile_data_file("kernels", shipped[_i].file, path, sizeof path));
	ck_assert_msg(kvp_moe_table_load(path, shipped[_i].hidden, shipped[_i].inter,
					 shipped[_i].topk, shipped[_i].experts, &tab,
					 &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	const struct kvp_moe_curve *c = kvp_moe_table_curve(&tab, shipped[_i].tp, shipped[_i].ep);
	ck_assert_ptr_nonnull(c);
	double got = kvp_moe_curve_s(c, shipped[_i].tokens) * 1e6;
	ck_assert_msg(fabs(got - shipped[_i].us) <= 5e-4 * shipped[_i].us, "%s %s: %.6g vs %.6g",
		      shipped[_i].file, shipped[_i].why, got, shipped[_i].us);
}
END_TEST

/* Every shipped table loads whole (every row checked) for each of the
 * expert shapes it was converted for. */
START_TEST(test_shipped_all)
{
	static const char *const gpus[] = {"h100-sxm", "h200", "b200", "gb200", "l40s",
					   "rtx-pro-6000"};
	static const char *const dtypes[] = {"bf16", "fp8"};
	char name[128], path[768];
	struct kvp_error err = {0};
	for (size_t g = 0; g < sizeof gpus / sizeof gpus[0]; g++)
		for (size_t d = 0; d < 2; d++) {
			snprintf(name, sizeof name, "moe-%s-%s.tsv", gpus[g], dtypes[d]);
			ck_assert_msg(kvp_profile_data_file("kernels", name, path, sizeof path), "%s",
				      name);
			ck_assert_msg(kvp_moe_table_load(path, 2048, 768, 8, 128, &tab, &err) ==
					      KVP_STATUS_OK,
				      "%s", err.msg);
			/* moe_tp x moe_ep <= 8 with both powers of two: at most 10 groups */
			ck_assert_uint_gt(tab.ncurves, 0);
			ck_assert_uint_le(tab.ncurves, 10);
		}
}
END_TEST

/* Bad input: each names its line, column and field. */
static const struct {
	const char *text;
	int line, col;
	const char *field, *msg;
} bad[] = {
	{"", 0, 1, "header", "no header"},
	{"# only a comment\n", 1, 1, "header", "no header"},
	{"hidden inter topk experts moe_tp moe_ep tokens\n", 1, 1, "header", "expected the columns"},
	{"m n k tflops\n", 1, 1, "header", "expected the columns"},
	{"hidden inter topk experts moe_tp moe_ep tokens latency_us\n"
	 "4096 1536 8 128 8 1 16 fast\n", 2, 24, "latency_us", "'fast' is not a positive number"},
	{"hidden inter topk experts moe_tp moe_ep tokens latency_us\n"
	 "4096 1536 8 128 0 1 16 5\n", 2, 17, "moe_tp", "'0' is not a positive integer"},
	{"hidden inter topk experts moe_tp moe_ep tokens latency_us\n"
	 "# c\n4096 1536 8 128 8 1 1.5 5\n", 3, 21, "tokens", "not a positive integer"},
	{"hidden inter topk experts moe_tp moe_ep tokens latency_us\n"
	 "4096 1536 8 128 8 1 16 -2\n", 2, 24, "latency_us", "not a positive number"},
	{"hidden inter topk experts moe_tp moe_ep tokens latency_us\n"
	 "4096 1536 8 128 8 1 16 inf\n", 2, 24, "latency_us", "not a positive number"},
	{"hidden inter topk experts moe_tp moe_ep tokens latency_us\n"
	 "4096 1536 8 128 8 1 16\n", 2, 1, "latency_us", "expected 8 fields"},
	{"hidden inter topk experts moe_tp moe_ep tokens latency_us\n"
	 "4096 1536 8 128 8 1 16 5 6\n", 2, 1, "latency_us", "expected 8 fields"},
	{"hidden inter topk experts moe_tp moe_ep tokens latency_us\n"
	 "x 1536 8 128 8 1 16 5\n", 2, 1, "hidden", "'x' is not a positive integer"},
	/* a malformed row of another shape is refused all the same */
	{"hidden inter topk experts moe_tp moe_ep tokens latency_us\n"
	 "4096 1536 8 128 8 1 16 5\n2048 768 8 128 8 1 16 0\n", 3, 23, "latency_us",
	 "not a positive number"},
	{"hidden inter topk experts moe_tp moe_ep tokens latency_us\n"
	 "4096 1536 8 128 8 1 16 5\n4096 1536 8 128 8 1 16 6\n", 3, 21, "tokens", "given twice"},
};

START_TEST(test_bad)
{
	struct kvp_error err = {0};
	const char *p = write_tmp("bad.tsv", bad[_i].text);
	ck_assert_int_eq(kvp_moe_table_load(p, 4096, 1536, 8, 128, &tab, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.path, p);
	ck_assert_int_eq(err.line, bad[_i].line);
	ck_assert_int_eq(err.col, bad[_i].col);
	ck_assert_str_eq(err.field, bad[_i].field);
	ck_assert_msg(strstr(err.msg, bad[_i].msg), "%s: %s", bad[_i].msg, err.msg);
}
END_TEST

START_TEST(test_bad_limits)
{
	struct kvp_error err = {0};
	char text[8192];
	/* 17 groups for one shape: one past KVP_MOE_MAX_CURVES, on line 18 */
	size_t at = (size_t)snprintf(text, sizeof text,
				     "hidden inter topk experts moe_tp moe_ep tokens latency_us\n");
	for (int i = 1; i <= 17; i++)
		at += (size_t)snprintf(text + at, sizeof text - at, "4096 1536 8 128 %d 1 16 5\n", i);
	ck_assert_int_eq(kvp_moe_table_load(write_tmp("groups.tsv", text), 4096, 1536, 8, 128, &tab,
					    &err),
			 KVP_STATUS_INVALID);
	ck_assert_int_eq(err.line, 18);
	ck_assert_str_eq(err.field, "moe_tp");
	ck_assert(strstr(err.msg, "more than 16 groups"));
	/* 41 token counts in one curve: one past KVP_MOE_MAX_POINTS, on line 42 */
	at = (size_t)snprintf(text, sizeof text,
			      "hidden inter topk experts moe_tp moe_ep tokens latency_us\n");
	for (int i = 1; i <= 41; i++)
		at += (size_t)snprintf(text + at, sizeof text - at, "4096 1536 8 128 8 1 %d 5\n", i);
	ck_assert_int_eq(kvp_moe_table_load(write_tmp("points.tsv", text), 4096, 1536, 8, 128, &tab,
					    &err),
			 KVP_STATUS_INVALID);
	ck_assert_int_eq(err.line, 42);
	ck_assert_str_eq(err.field, "tokens");
	ck_assert(strstr(err.msg, "more than 40 token counts"));
	/* a missing file */
	ck_assert_int_eq(kvp_moe_table_load("/nonexistent/moe.tsv", 4096, 1536, 8, 128, &tab, &err),
			 KVP_STATUS_NOT_FOUND);
	/* a line longer than the reader's buffer */
	char *longline = malloc(1200);
	memset(longline, '1', 1199);
	longline[1199] = 0;
	snprintf(text, sizeof text, "hidden inter topk experts moe_tp moe_ep tokens latency_us\n%s\n",
		 longline);
	free(longline);
	ck_assert_int_eq(kvp_moe_table_load(write_tmp("long.tsv", text), 4096, 1536, 8, 128, &tab,
					    &err),
			 KVP_STATUS_INVALID);
	ck_assert_int_eq(err.line, 2);
	ck_assert(strstr(err.msg, "line longer"));
	/* a failed load leaves the output as it was */
	load_fixture();
	ck_assert_int_ne(kvp_moe_table_load(write_tmp("b.tsv", "hidden inter topk experts moe_tp "
							       "moe_ep tokens latency_us\n1 1 1 1 1 1 "
							       "1 x\n"),
					    4096, 1536, 8, 128, &tab, &err),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(tab.ncurves, 2);
}
END_TEST

/* The curve a deployment gets (step-moe.c, kvp_moe_curve_pick) is held at or
 * under the coarser expert splits of the same moe_tp at each of its points.
 * The fixture: moe_tp 1 over moe_ep 2, 4 and 8 at tokens 16 and 64:
 *   (1, 2): 50, 100 us;  (1, 4): 20, 200 us (slower than (1, 2) at 64);
 *   (1, 8): 30, 60 us (slower than (1, 4) at 16).
 * By hand, min over the curve and its coarser ones at each point:
 *   ep 8: 16 -> min(30, 20, 50) = 20; 64 -> min(60, 200, 100) = 60
 *   ep 4: 16 -> min(20, 50) = 20;     64 -> min(200, 100) = 100
 *   ep 2: 16 -> 50;                   64 -> 100 (no coarser curve: moe_ep 1
 *         was not measured)
 * and between the points the power law through them: ep 8 at 32 tokens is
 * sqrt(20 x 60) us. */
static const struct {
	uint32_t ep;
	double tokens, us;
} envelope[] = {
	{8, 16, 20}, {8, 64, 60}, {8, 32, 34.641016151377546},
	{4, 16, 20}, {4, 64, 100},
	{2, 16, 50}, {2, 64, 100},
};

START_TEST(test_envelope)
{
	struct kvp_error err = {0};
	struct kvp_moe_table t;
	ck_assert_int_eq(kvp_moe_table_load(write_tmp("ep.tsv",
						      "hidden inter topk experts moe_tp moe_ep "
						      "tokens latency_us\n"
						      "4096 1536 8 128 1 2 16 50\n"
						      "4096 1536 8 128 1 2 64 100\n"
						      "4096 1536 8 128 1 4 16 20\n"
						      "4096 1536 8 128 1 4 64 200\n"
						      "4096 1536 8 128 1 8 16 30\n"
						      "4096 1536 8 128 1 8 64 60\n"),
					    4096, 1536, 8, 128, &t, &err),
			 KVP_STATUS_OK);
	/* tp 1 x dp ep: the expert group is the ep GPUs, each expert whole */
	struct kvp_parallel par = {.tp = 1, .pp = 1, .dp = envelope[_i].ep, .ep = envelope[_i].ep};
	struct kvp_moe_curve c;
	char warning[256] = "";
	ck_assert(kvp_moe_curve_pick(&t, &par, &c, warning, sizeof warning));
	ck_assert_uint_eq(c.moe_tp, 1);
	ck_assert_uint_eq(c.moe_ep, envelope[_i].ep);
	double got = kvp_moe_curve_s(&c, envelope[_i].tokens) * 1e6;
	ck_assert_msg(fabs(got - envelope[_i].us) < 1e-9 * envelope[_i].us,
		      "ep %u at %g tokens: got %.12g us, want %.12g", envelope[_i].ep,
		      envelope[_i].tokens, got, envelope[_i].us);
	/* the table itself is left as measured */
	ck_assert_double_eq_tol(kvp_moe_curve_s(kvp_moe_table_curve(&t, 1, 8), 16) * 1e6, 30, 1e-9);
}
END_TEST

static Suite *moe_table_suite(void)
{
	Suite *s = suite_create("moe-table");
	TCase *core = tcase_create("core");
	tcase_add_loop_test(core, test_hand, 0, (int)(sizeof hand / sizeof hand[0]));
	tcase_add_test(core, test_random_against_reference);
	tcase_add_test(core, test_limits);
	tcase_add_loop_test(core, test_shipped, 0, (int)(sizeof shipped / sizeof shipped[0]));
	tcase_add_test(core, test_shipped_all);
	tcase_add_loop_test(core, test_envelope, 0, (int)(sizeof envelope / sizeof envelope[0]));
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_loop_test(errors, test_bad, 0, (int)(sizeof bad / sizeof bad[0]));
	tcase_add_test(errors, test_bad_limits);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	return run_suite_in_tmpdir("check-moe-table", moe_table_suite());
}
