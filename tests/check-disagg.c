/* check-disagg.c: disaggregated prefill/decode (disagg.h): the KV each request
 * moves and its transfer time by hand, the colocated comparison's arithmetic,
 * and the links and counts that cannot be used. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "time/disagg.h"
#include "read/profile.h"
#include "model/shape.h"

static struct kvp_model model;

static void pool(const char *gpu, uint32_t tp, uint32_t n, struct kvp_disagg_pool *p)
{
	struct kvp_error err = {0};
	memset(p, 0, sizeof *p);
	ck_assert_int_eq(kvp_gpu_load(gpu, &p->gpu, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&p->gpu, &model, &p->hw, &err), KVP_STATUS_OK);
	p->par = (struct kvp_parallel){.tp = tp, .pp = 1};
	p->instances = n;
}

/* 1P:1D Llama-3.1-70B on H100 SXM, tp 4 each, a 4,096-token prompt over
 * InfiniBand NDR 400 Gb/s = 50 GB/s per GPU.  KV of the request: 80 layers x 2
 * (K, V) x 8 KV heads x 128 x 2 B = 327,680 B per token x 4,096 =
 * 1,342,177,280 B (1.25 GiB); the 4 GPUs of each side send their shards at
 * once: 1,342,177,280 / (4 x 50e9) = 6.7108864 ms. */
START_TEST(test_llama70b_1p1d_ib400)
{
	struct kvp_error err = {0};
	struct kvp_disagg_pool pre, dec;
	struct kvp_link link;
	struct kvp_disagg_result r;
	ck_assert_int_eq(kvp_model_load("llama-3.1-70b", &model, &err), KVP_STATUS_OK);
	pool("h100-sxm", 4, 1, &pre);
	pool("h100-sxm", 4, 1, &dec);
	ck_assert_int_eq(kvp_disagg_link_parse("ib400", &pre, &dec, &link, &err), KVP_STATUS_OK);
	ck_assert_double_eq(link.effective_bps, 50e9);
	struct kvp_budget_opts o = {.engine = KVP_ENGINE_GENERIC, .par = {.tp = 4, .pp = 1}};
	struct kvp_perf_opts po = {.prompt = 4096, .output = 512, .batches = {1, 16},
				   .nbatch = 2, .offload = {.tier = KVP_OFFLOAD_NONE}};
	ck_assert_int_eq(kvp_disagg_run(&model, &o, &pre, &dec, &link, &po, &r, &err),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(r.kv_request_bytes, 1342177280ULL);
	ck_assert_uint_eq(r.kv_gpu_bytes, 1342177280ULL / 4);
	ck_assert_uint_eq(r.transfer_gpus, 4);
	ck_assert_double_eq_tol(r.transfer_s, 6.7108864e-3, 1e-12);
	ck_assert_double_eq_tol(r.ttft_s - r.prefill_s, 6.7108864e-3, 1e-12);
	ck_assert_uint_eq(r.prefill_gpus, 4);
	ck_assert_uint_eq(r.decode_gpus, 4);
	/* 1 prefill instance, dp 1: 1 / prefill requests per second */
	ck_assert_double_eq_tol(r.prefill_capacity_rps, 1 / r.prefill_s, 1e-9);
	for (size_t i = 0; i < r.nrows; i++) {
		const struct kvp_disagg_row *x = &r.rows[i];
		double b = (double)x->batch;
		ck_assert_double_eq_tol(x->tokens_per_s, b / x->tpot_s, 1e-6);
		/* colocated: 2 instances, each also prefilling b prompts per 512 tokens */
		ck_assert_double_eq_tol(x->colocated_tpot_s,
					x->tpot_s + b * x->colocated_ttft_s / 512, 1e-12);
		ck_assert_double_eq_tol(x->colocated_tokens_per_s, 2 * b / x->colocated_tpot_s, 1e-6);
		ck_assert_double_eq_tol(x->prefill_needed_rps, b / (512 * x->tpot_s), 1e-9);
	}
	kvp_disagg_free(&r);

	/* a wider decode side: the 4 prefill GPUs bound the transfer */
	pool("h100-sxm", 8, 1, &dec);
	ck_assert_int_eq(kvp_disagg_run(&model, &o, &pre, &dec, &link, &po, &r, &err),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(r.transfer_gpus, 4);
	ck_assert_double_eq_tol(r.transfer_s, 6.7108864e-3, 1e-12);
	kvp_disagg_free(&r);
}
END_TEST

/* NVLink inside one 8-GPU board: 1P:1D at tp 4 uses all 8 GPUs; H100 NVLink
 * 900 GB/s both ways = 450 per direction: 1,342,177,280 / (4 x 450e9) s. */
START_TEST(test_nvlink_inside_domain)
{
	struct kvp_error err = {0};
	struct kvp_disagg_pool pre, dec;
	struct kvp_link link;
	ck_assert_int_eq(kvp_model_load("llama-3.1-70b", &model, &err), KVP_STATUS_OK);
	pool("h100-sxm", 4, 1, &pre);
	pool("h100-sxm", 4, 1, &dec);
	ck_assert_int_eq(kvp_disagg_link_parse("nvlink", &pre, &dec, &link, &err), KVP_STATUS_OK);
	ck_assert_double_eq(link.effective_bps, 450e9);
}
END_TEST

static const struct {
	const char *prefill_gpu, *decode_gpu, *link;
	uint32_t tp, n;
	const char *msg;
} bad_links[] = {
	{"rtx-4090", "rtx-4090", "nvlink", 1, 1, "has no NVLink"},
	{"h100-sxm", "h200", "nvlink", 4, 1, "joins GPUs of one kind"},
	{"h100-sxm", "h100-sxm", "nvlink", 8, 1, "more than the 8 one NVLink domain"},
	{"h100-sxm", "h100-sxm", "nvme", 4, 1, "not a link between GPUs"},
	{"h100-sxm", "h100-sxm", "carrier-pigeon", 4, 1, "unknown link"},
};

START_TEST(test_bad_links)
{
	struct kvp_error err = {0};
	struct kvp_disagg_pool pre, dec;
	struct kvp_link link;
	ck_assert_int_eq(kvp_model_load("llama-3.1-8b", &model, &err), KVP_STATUS_OK);
	pool(bad_links[_i].prefill_gpu, bad_links[_i].tp, bad_links[_i].n, &pre);
	pool(bad_links[_i].decode_gpu, bad_links[_i].tp, bad_links[_i].n, &dec);
	ck_assert_int_ne(kvp_disagg_link_parse(bad_links[_i].link, &pre, &dec, &link, &err),
			 KVP_STATUS_OK);
	ck_assert_str_eq(err.field, "kv-link");
	ck_assert_msg(strstr(err.msg, bad_links[_i].msg), "'%s' lacks '%s'", err.msg,
		      bad_links[_i].msg);
}
END_TEST

START_TEST(test_counts)
{
	struct kvp_error err = {0};
	uint32_t p, d;
	ck_assert_int_eq(kvp_disagg_parse_counts("3:5", &p, &d, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(p, 3);
	ck_assert_uint_eq(d, 5);
	static const char *const bad[] = {"1x1", "0:1", "1:0", ":", "1:", "4097:1", "-1:2", ""};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_int_eq(kvp_disagg_parse_counts(bad[i], &p, &d, &err), KVP_STATUS_USAGE);
		ck_assert_str_eq(err.field, "disagg");
	}
}
END_TEST

static Suite *disagg_suite(void)
{
	Suite *s = suite_create("disagg");
	TCase *core = tcase_create("core");
	tcase_set_timeout(core, 60);
	tcase_add_test(core, test_llama70b_1p1d_ib400);
	tcase_add_test(core, test_nvlink_inside_domain);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_loop_test(errors, test_bad_links, 0, sizeof bad_links / sizeof bad_links[0]);
	tcase_add_test(errors, test_counts);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(disagg_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
