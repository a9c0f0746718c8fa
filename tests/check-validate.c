/* check-validate.c: kvbench's shapes as the planner sees them, and kvbench's
 * results read back beside the planner's predictions (`kvplan validate`).
 * Expected values are hand arithmetic written beside each assertion, or the
 * numbers a real kvbench --capacity run allocated (quoted where used). */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-tmp.h"
#include "time/validate.h"

#define DATA KVP_SRCDIR "/tests/data/"

static const struct kvp_bench_shape gqa4_bf16 = {
	.num_heads = 8, .num_kv_heads = 2, .head_dim = 64, .block_size = 16, .layers = 1,
	.kv_dtype = KVP_DTYPE_BF16,
};

/* 256 MiB x 0.9 = 241,591,910 B; a block is 2 (K, V) x 2 KV heads x 16
 * tokens x 64 x 2 B = 8,192 B -> 29,491 blocks (29,491.2); a 1,000-token
 * sequence takes ceil(1000 / 16) = 63 blocks -> 468 sequences (468.1).
 * `kvbench --capacity --gpu-memory 256MiB --context 1000 --heads 8:2
 * --head-dim 64` allocated 29,491 blocks and admitted 468 on 2026-11-29. */
START_TEST(test_capacity_by_hand)
{
	struct kvp_bench_capacity c;
	struct kvp_error err = {0};
	ck_assert_msg(kvp_bench_capacity(&gqa4_bf16, 256ull << 20, 0.9, 0, 1000, &c, &err) ==
		      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(c.page_bytes, 8192);
	ck_assert_uint_eq(c.num_blocks, 29491);
	ck_assert_uint_eq(c.max_tokens, 29491 * 16);
	ck_assert_uint_eq(c.max_sequences, 468);
	/* int8 KV carries an fp32 scale per token and head: 2 x 2 x 16 x
	 * (64 + 4) = 4,352 B -> 55,512 blocks (55,512.8), 881 sequences */
	struct kvp_bench_shape s = gqa4_bf16;
	s.kv_dtype = KVP_DTYPE_INT8;
	ck_assert(kvp_bench_capacity(&s, 256ull << 20, 0.9, 0, 1000, &c, &err) == KVP_STATUS_OK);
	ck_assert_uint_eq(c.page_bytes, 4352);
	ck_assert_uint_eq(c.num_blocks, 55512);
	ck_assert_uint_eq(c.max_sequences, 881);
	/* two layers per block and 64 MiB of weights: 16,384 B blocks,
	 * (241,591,910 - 67,108,864) / 16,384 = 10,649.6 -> 10,649 */
	s.kv_dtype = KVP_DTYPE_BF16;
	s.layers = 2;
	ck_assert(kvp_bench_capacity(&s, 256ull << 20, 0.9, 64ull << 20, 1000, &c, &err) ==
		  KVP_STATUS_OK);
	ck_assert_uint_eq(c.page_bytes, 16384);
	ck_assert_uint_eq(c.num_blocks, 10649);
}
END_TEST

/* Llama-3.1-8B's attention shape, one layer, bf16: 2 x 32 x 128 x 2 B =
 * 16 KiB per token; 16 sequences of 8,192 = 131,072 tokens = 2 GiB; at
 * 20.35 GB/s and efficiency 1 that is 2,147,483,648 / 20.35e9 = 105.53 ms,
 * and at efficiency 0.5 twice that. */
START_TEST(test_decode_by_hand)
{
	struct kvp_bench_shape s = {.num_heads = 32, .num_kv_heads = 32, .head_dim = 128,
				    .block_size = 16, .layers = 1, .kv_dtype = KVP_DTYPE_BF16};
	uint64_t lens[16], kv;
	double t;
	struct kvp_error err = {0};
	for (int i = 0; i < 16; i++)
		lens[i] = 8192;
	ck_assert_msg(kvp_bench_decode(&s, lens, 16, 20.35e9, 1.0, &kv, &t, &err) ==
		      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(kv, 2147483648ull);
	ck_assert_double_eq_tol(t, 2147483648.0 / 20.35e9, 1e-12);
	ck_assert(kvp_bench_decode(&s, lens, 16, 20.35e9, 0.5, &kv, &t, &err) == KVP_STATUS_OK);
	ck_assert_double_eq_tol(t, 2 * 2147483648.0 / 20.35e9, 1e-12);
	/* GQA-8 fp8: 2 x 4 x 128 x 1 B = 1 KiB per token -> 128 MiB */
	s.num_kv_heads = 4;
	s.kv_dtype = KVP_DTYPE_FP8;
	ck_assert(kvp_bench_decode(&s, lens, 16, 20.35e9, 1.0, &kv, &t, &err) == KVP_STATUS_OK);
	ck_assert_uint_eq(kv, 131072ull * 1024);
	/* a shape the planner cannot take */
	s.num_kv_heads = 3;
	ck_assert_int_eq(kvp_bench_decode(&s, lens, 16, 20.35e9, 1.0, &kv, &t, &err),
			 KVP_STATUS_INVALID);
}
END_TEST

/* tests/data/good/kvbench-run.yaml: every kept decode point moves
 * 2,048,000 KV bytes:
 *   line  9: fp16 8:8, 2 x 500 tokens: 2 x 8 x 64 x 2 B x 1,000; at 10 GB/s
 *            204.8 us, measured 256 us -> efficiency 0.8, error -20%
 *   line 22: bf16 8:2, 4,000 tokens: 2 x 2 x 64 x 2 B x 4,000; at 20 GB/s
 *            102.4 us, measured 128 us -> 0.8, -20%
 *   line 35: fp32 8:8, 500 tokens: 2 x 8 x 64 x 4 B x 500; at 10 GB/s
 *            204.8 us, measured 409.6 us -> 0.5, -50%
 * and two are skipped (FAIL, and not timed).  Fitted: the median of
 * 0.8, 0.8, 0.5 = 0.8; then the errors are 0, 0 and 256 / 409.6 - 1 =
 * -37.5%. */
START_TEST(test_results_yaml)
{
	struct kvp_validation v = {0};
	struct kvp_error err = {0};
	ck_assert_msg(kvp_validation_load(&v, DATA "good/kvbench-run.yaml", NULL, &err) ==
		      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(v.n, 3);
	ck_assert_uint_eq(v.skipped, 2);
	ck_assert_int_eq(v.points[0].line, 9);
	ck_assert_int_eq(v.points[1].line, 22);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(v.points[i].kv_bytes, 2048000);
		ck_assert_str_eq(v.points[i].basis, "read-ceiling");
	}
	ck_assert_double_eq_tol(v.points[0].unit_s, 204.8e-6, 1e-15);
	ck_assert_double_eq_tol(v.points[1].unit_s, 102.4e-6, 1e-15);

	kvp_validation_evaluate(&v, 0, 0.10, 0.01); /* uncalibrated: efficiency 1 */
	ck_assert_double_eq_tol(v.points[0].error, -0.20, 1e-9);
	ck_assert_double_eq_tol(v.points[2].error, -0.50, 1e-9);
	ck_assert_uint_eq(v.decode_outside, 3);
	ck_assert_uint_eq(v.worst, 2);

	size_t used;
	double eff = kvp_validation_fit(&v, &used);
	ck_assert_uint_eq(used, 3);
	ck_assert_double_eq_tol(eff, 0.8, 1e-9);
	kvp_validation_evaluate(&v, eff, 0.10, 0.01);
	ck_assert_double_eq_tol(v.points[0].error, 0, 1e-9);
	ck_assert_double_eq_tol(v.points[1].error, 0, 1e-9);
	ck_assert_double_eq_tol(v.points[2].error, -0.375, 1e-9);
	ck_assert_uint_eq(v.decode_outside, 1);
	ck_assert_double_eq_tol(v.decode_median_abs, 0, 1e-9);
	ck_assert_double_eq_tol(v.decode_max_abs, 0.375, 1e-9);
	kvp_validation_evaluate(&v, eff, 0.40, 0.01);
	ck_assert_uint_eq(v.decode_outside, 0);
	kvp_validation_free(&v);

	/* on a GPU profile instead: the H200's 4.8 TB/s at the planner's 0.80 */
	struct kvp_gpu g;
	ck_assert(kvp_gpu_load("h200", &g, &err) == KVP_STATUS_OK);
	g.decode_bw_efficiency = 0;
	ck_assert(kvp_validation_load(&v, DATA "good/kvbench-run.yaml", &g, &err) == KVP_STATUS_OK);
	kvp_validation_evaluate(&v, 0, 0.10, 0.01);
	ck_assert_str_eq(v.points[0].basis, "h200");
	ck_assert_double_eq_tol(v.points[0].predicted_s, 2048000 / (4.8e12 * 0.80), 1e-15);
	kvp_validation_free(&v);
}
END_TEST

/* Only the large points of each shape enter the fit: a quarter of the
 * largest step of the same shape, so one small step (fixed costs) of the
 * fp16 shape is left out while another shape's smaller steps are not. */
START_TEST(test_fit_large_points)
{
	const char *p = write_tmp("sweep.csv",
		"backend,batch,tokens,block_size,kv_dtype,num_heads,num_kv_heads,head_dim,"
		"validated,time_median_s,ceiling_read_gbps\n"
		/* fp16 8:8: 1,000 tokens = 2,048,000 B -> 204.8 us at 10 GB/s */
		"cpu,2,1000,16,fp16,8,8,64,pass,0.000256,10\n"     /* 0.8 */
		"cpu,1,100,16,fp16,8,8,64,pass,0.0002048,10\n"     /* 10x smaller: 0.1, out */
		/* bf16 8:2: 100 tokens = 51,200 B -> 5.12 us at 10 GB/s */
		"cpu,1,100,16,bf16,8,2,64,pass,0.000008,10\n"      /* 0.64 */
		"cpu,1,100,16,bf16,8,2,64,pass,0.0000064,10\n");   /* 0.8 */
	struct kvp_validation v = {0};
	struct kvp_error err = {0};
	ck_assert_msg(kvp_validation_load(&v, p, NULL, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(v.n, 4);
	size_t used;
	double eff = kvp_validation_fit(&v, &used);
	ck_assert_uint_eq(used, 3);               /* 0.8, 0.64, 0.8 */
	ck_assert_double_eq_tol(eff, 0.8, 1e-9);  /* their median */
	ck_assert(v.points[0].large && !v.points[1].large && v.points[2].large && v.points[3].large);
	/* at 0.8: the small fp16 step 25.6 us against 204.8 (-87.5%), the
	 * bf16 steps 6.4 us against 8 (-20%) and 6.4 (0) */
	kvp_validation_evaluate(&v, eff, 0.10, 0.01);
	ck_assert_double_eq_tol(v.points[1].error, -0.875, 1e-9);
	ck_assert_double_eq_tol(v.points[2].error, -0.2, 1e-9);
	ck_assert_uint_eq(v.decode_outside, 2);
	ck_assert_uint_eq(v.large_n, 3);
	ck_assert_uint_eq(v.large_outside, 1);
	ck_assert_double_eq_tol(v.large_max_abs, 0.2, 1e-9);
	ck_assert_double_eq_tol(v.large_median_abs, 0, 1e-9);
	ck_assert_uint_eq(v.worst, 1);

	/* one efficiency per KV dtype: fp16's large point 0.8 (for both fp16
	 * points), bf16's median of 0.64 and 0.8 = 0.72; then the bf16 steps are
	 * 5.12 / 0.72 = 7.111 us against 8 (-11.1%) and 6.4 (+11.1%) */
	ck_assert_uint_eq(kvp_validation_fit_by(&v, KVP_FIT_DTYPE), 2);
	ck_assert_double_eq_tol(v.points[0].fit_efficiency, 0.8, 1e-9);
	ck_assert_double_eq_tol(v.points[1].fit_efficiency, 0.8, 1e-9);
	ck_assert_double_eq_tol(v.points[2].fit_efficiency, 0.72, 1e-9);
	ck_assert_double_eq_tol(v.points[3].fit_efficiency, 0.72, 1e-9);
	kvp_validation_evaluate(&v, -1, 0.10, 0.01);
	ck_assert_double_eq_tol(v.points[2].error, 5.12 / 0.72 / 8 - 1, 1e-9);
	ck_assert_double_eq_tol(v.points[3].error, 5.12 / 0.72 / 6.4 - 1, 1e-9);
	ck_assert_uint_eq(kvp_validation_fit_by(&v, KVP_FIT_ALL), 1);
	ck_assert_double_eq_tol(v.points[3].fit_efficiency, 0.8, 1e-9);

	/* what the fits rest on: the large points are fp16 #0 and bf16 #2, #3.
	 * per dtype: 2 efficiencies on 3 points, fp16 on one point (exact);
	 * per shape the same two groups; one for all: 1 on 3, none exact */
	size_t par, pts, exact;
	kvp_validation_fit_degrees(&v, KVP_FIT_DTYPE, &par, &pts, &exact);
	ck_assert_uint_eq(par, 2);
	ck_assert_uint_eq(pts, 3);
	ck_assert_uint_eq(exact, 1);
	kvp_validation_fit_degrees(&v, KVP_FIT_ALL, &par, &pts, &exact);
	ck_assert_uint_eq(par, 1);
	ck_assert_uint_eq(pts, 3);
	ck_assert_uint_eq(exact, 0);

	/* out of sample: kvbench-run.yaml's shapes fitted one by one (fp16 8:8
	 * 0.8, bf16 8:2 0.8, fp32 8:8 0.5) carried over to these points; the
	 * other way round fp32 8:8 has no group here and takes the fallback */
	struct kvp_validation c = {0};
	ck_assert(kvp_validation_load(&c, DATA "good/kvbench-run.yaml", NULL, &err) == KVP_STATUS_OK);
	ck_assert_uint_eq(kvp_validation_fit_by(&c, KVP_FIT_SHAPE), 3);
	/* three shapes of one point each: as many efficiencies as points */
	kvp_validation_fit_degrees(&c, KVP_FIT_SHAPE, &par, &pts, &exact);
	ck_assert_uint_eq(par, 3);
	ck_assert_uint_eq(pts, 3);
	ck_assert_uint_eq(exact, 3);
	ck_assert_uint_eq(kvp_validation_apply_fit(&v, &c, KVP_FIT_SHAPE, 0.3), 0);
	ck_assert_double_eq_tol(v.points[1].fit_efficiency, 0.8, 1e-9);
	ck_assert_double_eq_tol(v.points[2].fit_efficiency, 0.8, 1e-9);
	kvp_validation_fit_by(&v, KVP_FIT_SHAPE);
	ck_assert_uint_eq(kvp_validation_apply_fit(&c, &v, KVP_FIT_SHAPE, 0.3), 1);
	ck_assert_double_eq_tol(c.points[2].fit_efficiency, 0.3, 1e-9);
	kvp_validation_free(&c);
	kvp_validation_free(&v);
}
END_TEST

/* tests/data/good/kvbench-capacity.csv: two rows of a real run (quoted
 * in test_capacity_by_hand) and one made 1 block off to check the error:
 * predicted 10,649 against 10,650 is -1 / 10,650. */
START_TEST(test_results_capacity_csv)
{
	struct kvp_validation v = {0};
	struct kvp_error err = {0};
	ck_assert_msg(kvp_validation_load(&v, DATA "good/kvbench-capacity.csv", NULL, &err) ==
		      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(v.n, 3);
	kvp_validation_evaluate(&v, 0, 0.10, 0.01);
	ck_assert_int_eq(v.points[0].kind, KVP_VPOINT_CAPACITY);
	ck_assert_uint_eq(v.points[0].predicted.num_blocks, 29491);
	ck_assert_double_eq(v.points[0].error, 0);
	ck_assert_uint_eq(v.points[1].predicted.num_blocks, 55512);
	ck_assert_uint_eq(v.points[2].predicted.num_blocks, 10649);
	ck_assert_double_eq_tol(v.points[2].error, -1.0 / 10650, 1e-12);
	ck_assert_uint_eq(v.capacity_outside, 0);
	kvp_validation_evaluate(&v, 0, 0.10, 0.00005); /* 0.005%: the third is outside */
	ck_assert_uint_eq(v.capacity_outside, 1);
	kvp_validation_free(&v);
}
END_TEST

struct bad_case {
	const char *name, *text;
	kvp_status status;
	int line, col;
	const char *field;
};

START_TEST(test_results_errors)
{
	static const char hdr[] = "backend,batch,tokens,block_size,kv_dtype,num_heads,num_kv_heads,"
				  "head_dim,validated,time_median_s,ceiling_read_gbps\n";
	char buf[1024];
	static const struct bad_case cases[] = {
		{"neg.csv", "cpu,2,1000,16,fp16,8,8,64,pass,-0.1,10\n", KVP_STATUS_INVALID, 2, 10,
		 "time_median_s"},
		{"zero-time.csv", "cpu,2,1000,16,fp16,8,8,64,pass,0,10\n", KVP_STATUS_INVALID, 2, 1,
		 "time_median_s"},
		{"dtype.csv", "cpu,2,1000,16,fp12,8,8,64,pass,0.1,10\n", KVP_STATUS_INVALID, 2, 5,
		 "kv_dtype"},
		{"heads.csv", "cpu,2,1000,16,fp16,8,3,64,pass,0.1,10\n", KVP_STATUS_INVALID, 2, 1,
		 "shape"},
		{"overflow.csv", "cpu,2,99999999999999999999999,16,fp16,8,8,64,pass,0.1,10\n",
		 KVP_STATUS_OVERFLOW, 2, 3, "tokens"},
		{"big-heads.csv", "cpu,2,1000,16,fp16,4294967296,8,64,pass,0.1,10\n",
		 KVP_STATUS_OVERFLOW, 2, 6, "num_heads"},
		{"text.csv", "cpu,two,1000,16,fp16,8,8,64,pass,0.1,10\n", KVP_STATUS_INVALID, 2, 2,
		 "batch"},
		{"fields.csv", "cpu,2,1000\n", KVP_STATUS_INVALID, 2, 1, NULL},
		{"no-ceiling.csv", "cpu,2,1000,16,fp16,8,8,64,pass,0.1,\n", KVP_STATUS_INVALID, 2, 1,
		 "ceiling_read_gbps"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const struct bad_case *c = &cases[i];
		snprintf(buf, sizeof buf, "%s%s", hdr, c->text);
		const char *p = write_tmp(c->name, buf);
		struct kvp_validation v = {0};
		struct kvp_error err = {0};
		ck_assert_int_eq(kvp_validation_load(&v, p, NULL, &err), c->status);
		ck_assert_msg(strstr(err.path, c->name), "%s: path '%s'", c->name, err.path);
		ck_assert_msg(err.line == c->line && err.col == c->col, "%s: at %d:%d (%s)", c->name,
			      err.line, err.col, err.msg);
		if (c->field)
			ck_assert_str_eq(err.field, c->field);
		kvp_validation_free(&v);
	}
	/* YAML: the field's own line and column */
	const char *p = write_tmp("missing.yaml", "kvbench:\n  backend: cpu\npoints:\n"
						  "  - batch: 2\n    tokens: 1000\n    block_size: 16\n"
						  "    kv_dtype: fp16\n    num_heads: 8\n    num_kv_heads: 8\n"
						  "    validated: pass\n    time_median_s: 0.1\n");
	struct kvp_validation v = {0};
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_validation_load(&v, p, NULL, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "head_dim");
	ck_assert_int_eq(err.line, 4);
	p = write_tmp("neg.yaml", "kvbench:\n  backend: cpu\npoints:\n"
				  "  - batch: 2\n    tokens: 1000\n    block_size: 16\n"
				  "    kv_dtype: fp16\n    num_heads: 8\n    num_kv_heads: 8\n"
				  "    head_dim: 64\n    validated: pass\n    time_median_s: 0.1\n"
				  "    ceiling_read_gbps: -3\n");
	ck_assert_int_eq(kvp_validation_load(&v, p, NULL, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "ceiling_read_gbps");
	ck_assert_int_eq(err.line, 13);
	ck_assert_int_eq(err.col, 24);
	p = write_tmp("other.yaml", "calibration:\n  - gpu: h200\n");
	ck_assert_int_eq(kvp_validation_load(&v, p, NULL, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "kvbench");
	p = write_tmp("other.csv", "gpu,decode_bw_efficiency\nh200,0.8\n");
	ck_assert_int_eq(kvp_validation_load(&v, p, NULL, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "header");
	ck_assert_int_eq(kvp_validation_load(&v, DATA "no-such-file.yaml", NULL, &err),
			 KVP_STATUS_IO);
	kvp_validation_free(&v);
}
END_TEST

static Suite *validate_suite(void)
{
	Suite *s = suite_create("validate");
	TCase *core = tcase_create("core");
	tcase_add_test(core, test_capacity_by_hand);
	tcase_add_test(core, test_decode_by_hand);
	tcase_add_test(core, test_results_yaml);
	tcase_add_test(core, test_fit_large_points);
	tcase_add_test(core, test_results_capacity_csv);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_test(errors, test_results_errors);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	return run_suite_in_tmpdir("check-validate", validate_suite());
}
