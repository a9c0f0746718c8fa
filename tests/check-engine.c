/* check-engine.c: the engine memory models of profiles/engines load, name
 * their versions, and carry the constants their comments cite (engine-memory.md);
 * malformed files fail with file:line:col and the field. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "units.h"

#ifndef KVP_SRCDIR
#define KVP_SRCDIR "."
#endif

static const char *data_path(const char *rel)
{
	static char buf[1024];
	const char *top = getenv("top_srcdir");
	snprintf(buf, sizeof buf, "%s/tests/data/%s", top && top[0] ? top : KVP_SRCDIR, rel);
	return buf;
}

START_TEST(test_vllm)
{
	struct kvp_engine_model e;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_engine_model_load("vllm", NULL, &e, &err), KVP_STATUS_OK);
	ck_assert_str_eq(e.version, "0.19.0");
	/* engine-memory.md 1-4 */
	ck_assert_double_eq_tol(e.utilization, 0.90, 1e-12);
	ck_assert_uint_eq(e.sampler_bytes_per_seq_vocab, 14);    /* 2 + 4 + 4 + 4 */
	ck_assert_uint_eq(e.large_gpu_memory_bytes, 70 * KVP_GIB);
	ck_assert(!e.cuda_graphs_subtracted);
	ck_assert_uint_eq(kvp_engine_non_torch_bytes(&e, 1), KVP_GIB / 4);
	ck_assert_uint_eq(kvp_engine_non_torch_bytes(&e, 2), 2 * KVP_GIB);
	uint32_t seqs;
	uint64_t mbt;
	/* an H100 (79.19 GiB), an A100-80GB (excluded by name), an L40S (44.4 GiB) */
	kvp_engine_batch_defaults(&e, 85028896768ULL, "h100-sxm", &seqs, &mbt);
	ck_assert(seqs == 1024 && mbt == 8192);
	kvp_engine_batch_defaults(&e, 85051572224ULL, "NVIDIA A100-SXM4-80GB", &seqs, &mbt);
	ck_assert(seqs == 256 && mbt == 2048);
	kvp_engine_batch_defaults(&e, 47697362944ULL, "l40s", &seqs, &mbt);
	ck_assert(seqs == 256 && mbt == 2048);
	/* exactly 70 GiB is large (>=) */
	kvp_engine_batch_defaults(&e, 70 * KVP_GIB, "x", &seqs, &mbt);
	ck_assert_uint_eq(seqs, 1024);
	ck_assert_int_eq(kvp_engine_model_load("vllm", "0.19.0", &e, &err), KVP_STATUS_OK);
}
END_TEST

START_TEST(test_sglang_trtllm)
{
	struct kvp_engine_model e;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_engine_model_load("sglang", NULL, &e, &err), KVP_STATUS_OK);
	ck_assert_str_eq(e.version, "0.5.10");
	ck_assert_uint_eq(e.reserve_base_bytes, 512 * KVP_MIB);
	ck_assert_uint_eq(e.reserve_per_prefill_token_bytes, 3 * KVP_MIB / 2);
	ck_assert_uint_eq(e.reserve_floor_bytes, 10 * KVP_GIB);
	ck_assert_uint_eq(e.block_size, 1);
	ck_assert_int_eq(kvp_engine_model_load("trtllm", NULL, &e, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(e.free_fraction, 0.90, 1e-12);
	ck_assert_uint_eq(e.block_size, 32);
}
END_TEST

static const struct {
	const char *file;
	kvp_status status;
	int line, col;
	const char *field;
} bad[] = {
	{"bad/engine-unknown-key.yaml", KVP_STATUS_INVALID, 6, 5, "sampler_bytes"},
	{"bad/engine-fraction.yaml", KVP_STATUS_INVALID, 4, 18, "utilization"},
	{"bad/engine-no-version.yaml", KVP_STATUS_INVALID, 3, 5, "version"},
};

START_TEST(test_bad)
{
	struct kvp_engine_model e;
	struct kvp_error err = {0};
	const char *path = data_path(bad[_i].file);
	kvp_status st = kvp_engine_model_load(path, NULL, &e, &err);
	ck_assert_msg(st == bad[_i].status, "%s: %s", bad[_i].file, err.msg);
	ck_assert_msg(err.line == bad[_i].line && err.col == bad[_i].col, "%s: at %d:%d",
		      bad[_i].file, err.line, err.col);
	ck_assert_str_eq(err.field, bad[_i].field);
}
END_TEST

START_TEST(test_unknown)
{
	struct kvp_engine_model e;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_engine_model_load("vllm", "9.9.9", &e, &err), KVP_STATUS_NOT_FOUND);
	ck_assert_str_eq(err.field, "engine-version");
	ck_assert_int_eq(kvp_engine_model_load("tgi", NULL, &e, &err), KVP_STATUS_NOT_FOUND);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("engine");
	TCase *core = tcase_create("core");
	tcase_add_test(core, test_vllm);
	tcase_add_test(core, test_sglang_trtllm);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_loop_test(errors, test_bad, 0, sizeof bad / sizeof bad[0]);
	tcase_add_test(errors, test_unknown);
	suite_add_tcase(s, errors);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
