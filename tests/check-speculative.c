/* check-speculative.c: speculative decoding (speculative.h): the EAGLE head on
 * Llama-3.1-8B sized and timed by hand, a separate draft model, the expected
 * tokens per step, and the drafts that cannot be used. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "time/perf.h"
#include "read/profile.h"
#include "time/speculative.h"
#include "model/spec.h"
#include "memory/draft.h"

static struct kvp_model model;
static struct kvp_spec spec;

/* Llama-3.1-8B (H 4096, 32 heads, 8 KV heads, d_h 128, I 14336, V 128256),
 * EAGLE head: q 4096*4096 16,777,216 + k,v 2*4096*1024 8,388,608 + o
 * 16,777,216 + MLP 3*4096*14336 176,160,768 + norms 8,192 + fc 2*4096^2
 * 33,554,432 = 251,666,432 params = 503,332,864 B in bf16; its KV one full
 * layer: 2 * 8 * 128 * 2 B = 4,096 B per token, beside the target's 131,072. */
START_TEST(test_eagle_llama8b)
{
	struct kvp_error err = {0};
	struct kvp_speculative sp;
	ck_assert_int_eq(kvp_model_load("llama-3.1-8b", &model, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_speculative_parse("eagle:4", "0.8", &model, &sp, &err), KVP_STATUS_OK);
	ck_assert_int_eq(sp.kind, KVP_SPECULATIVE_EAGLE);
	ck_assert_uint_eq(sp.k, 4);
	ck_assert_uint_eq(sp.draft.params, 251666432ULL);
	ck_assert_uint_eq(sp.head_params, 128256ULL * 4096);
	/* (1 - 0.8^5) / (1 - 0.8) = (1 - 0.32768) / 0.2 = 3.3616 */
	ck_assert_double_eq_tol(kvp_speculative_tokens_per_step(&sp), 3.3616, 1e-12);

	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 1},
					KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	uint64_t target_w = spec.weights_bytes;
	ck_assert_int_eq(kvp_speculative_apply(&sp, &spec, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(spec.weights_split.draft_bytes, 503332864ULL);
	ck_assert_uint_eq(spec.weights_bytes, target_w + 503332864ULL);
	ck_assert_uint_eq(spec.token_bytes, 131072 + 4096);
	ck_assert_uint_eq(spec.draft_layers, 1);

	/* timed on round hardware (1 TB/s, 1 PFLOP/s, efficiencies 1), one sequence
	 * at 1,151 tokens: verify reads the target's weights and 1,151 x 131,072 =
	 * 150,863,872 B of KV; a draft step reads the head, the borrowed LM head
	 * 128,256 x 4,096 x 2 = 1,050,673,152 B and 1,151 x 4,096 = 4,714,496 B */
	struct kvp_perf_hw hw = {.bandwidth_bps = 1e12, .flops = 1e15, .decode_bw_efficiency = 1,
				 .prefill_flops_efficiency = 1, .allreduce_latency_s = 10e-6};
	ck_assert(kvp_link_preset("pcie5x16", &hw.host_link));
	struct kvp_perf_ctx ctx;
	struct kvp_perf_step plain;
	struct kvp_speculative_step ss;
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 1151, &plain, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_speculative_decode(&ctx, &sp, 1, 1151, &plain, &ss, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(ss.verify.memory_s, (double)(target_w + 150863872ULL) / 1e12, 1e-15);
	ck_assert_double_eq_tol(ss.draft.memory_s, (503332864.0 + 1050673152.0 + 4714496.0) / 1e12,
				1e-15);
	/* verify FLOPs: 5 tokens of the target's decode */
	ck_assert_double_eq_tol(ss.verify.flops, 5 * kvp_perf_decode_flops(&model, 1151), 1);
	ck_assert_double_eq_tol(ss.step_s, ss.verify.time_s + 4 * ss.draft.time_s, 1e-15);
	ck_assert_double_eq_tol(ss.tpot_s, ss.step_s / 3.3616, 1e-15);
}
END_TEST

/* A draft model with the target's vocabulary (Llama-3.1-8B for -70B, both
 * 128,256 tokens): its 32 layers' KV join the pool, K 4 unless given. */
START_TEST(test_draft_model)
{
	struct kvp_error err = {0};
	struct kvp_speculative sp;
	ck_assert_int_eq(kvp_model_load("llama-3.1-70b", &model, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_speculative_parse("llama-3.1-8b", "0.6", &model, &sp, &err),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(sp.k, 4);
	ck_assert_int_eq(kvp_speculative_parse("llama-3.1-8b:3", "0", &model, &sp, &err),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(sp.k, 3);
	/* a = 0: every step yields the target's own token only */
	ck_assert_double_eq(kvp_speculative_tokens_per_step(&sp), 1);
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 4, .pp = 1},
					KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_speculative_apply(&sp, &spec, &err), KVP_STATUS_OK);
	/* 70B at tp 4: 80 x 2 x 2 x 128 x 2 = 81,920; 8B at tp 4: 32 x 4,096 / 4 = 32,768 */
	ck_assert_uint_eq(spec.token_bytes, 81920 + 32768);
	ck_assert_uint_eq(spec.draft_layers, 32);
}
END_TEST

/* The two ways of giving acceptance (issue 34.6): vLLM logs accepted /
 * drafted tokens ("Avg Draft acceptance rate", v1/spec_decode/metrics.py),
 * and its mean acceptance length is 1 + accepted / drafts = 1 + r K: r 0.8,
 * K 4 gives 1 + 3.2 = 4.2 tokens per step, where the per-position a = 0.8
 * gives (1 - 0.8^5) / 0.2 = 3.3616. */
START_TEST(test_acceptance_share)
{
	struct kvp_error err = {0};
	struct kvp_speculative sp;
	ck_assert_int_eq(kvp_model_load("llama-3.1-8b", &model, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_speculative_parse("eagle:4", "0", &model, &sp, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_speculative_parse_acceptance("0.8", &sp, &err), KVP_STATUS_OK);
	ck_assert_int_eq(sp.accept_kind, KVP_SPEC_ACCEPT_SHARE);
	ck_assert_double_eq_tol(kvp_speculative_tokens_per_step(&sp), 4.2, 1e-12);
	ck_assert_int_eq(kvp_speculative_parse_acceptance("80%", &sp, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(kvp_speculative_tokens_per_step(&sp), 4.2, 1e-12);
	/* every draft token accepted: K + 1 = 5; none: 1 */
	ck_assert_int_eq(kvp_speculative_parse_acceptance("1", &sp, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(kvp_speculative_tokens_per_step(&sp), 5, 1e-12);
	ck_assert_int_eq(kvp_speculative_parse_acceptance("0%", &sp, &err), KVP_STATUS_OK);
	ck_assert_double_eq(kvp_speculative_tokens_per_step(&sp), 1);
	static const char *const bad_share[] = {"1.01", "101%", "-0.1", "x", "%", "", NULL};
	for (size_t i = 0; i < sizeof bad_share / sizeof bad_share[0]; i++) {
		ck_assert_int_eq(kvp_speculative_parse_acceptance(bad_share[i], &sp, &err),
				 KVP_STATUS_USAGE);
		ck_assert_str_eq(err.field, "spec-acceptance");
	}
}
END_TEST

/* The draft step at tp 4 all-reduces over the draft's layers (issue 34.6):
 * an EAGLE head has one, so 2 all-reduces of one token's hidden state,
 * 8,192 x 2 B = 16,384 B each, over a 450 GB/s link: 2 x (2 x 3/4 x 16,384 /
 * 450e9 + 10 us) = 2 x 10.054613 us = 20.109227 us; the verify pass keeps the
 * target's 80 layers: 160 x (1.5 x 5 x 16,384 / 450e9 + 10 us). */
START_TEST(test_draft_allreduce)
{
	struct kvp_error err = {0};
	struct kvp_speculative sp;
	ck_assert_int_eq(kvp_model_load("llama-3.1-70b", &model, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_speculative_parse("eagle:4", "0.8", &model, &sp, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 4, .pp = 1},
					KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_speculative_apply(&sp, &spec, &err), KVP_STATUS_OK);
	struct kvp_perf_hw hw = {.bandwidth_bps = 1e12, .flops = 1e15, .decode_bw_efficiency = 1,
				 .prefill_flops_efficiency = 1, .allreduce_latency_s = 10e-6,
				 .nvlink_bps = 450e9, .nvlink_domain = 8};
	ck_assert(kvp_link_preset("pcie5x16", &hw.host_link));
	struct kvp_perf_ctx ctx;
	struct kvp_perf_step plain;
	struct kvp_speculative_step ss;
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 1000, &plain, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_speculative_decode(&ctx, &sp, 1, 1000, &plain, &ss, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(ss.draft.comm_s, 2 * (1.5 * 16384 / 450e9 + 10e-6), 1e-15);
	ck_assert_double_eq_tol(ss.verify.comm_s, 160 * (1.5 * 5 * 16384 / 450e9 + 10e-6), 1e-13);
}
END_TEST

static const struct {
	const char *target, *draft, *accept, *field, *msg;
} bad[] = {
	{"llama-3.1-8b", "eagle:4:4", "0.7", "spec-draft", "'eagle:4:4': K"},
	{"llama-3.1-8b", "mtp:2x", "0.7", "spec-draft", "1 to 16"},
	{"llama-3.1-8b", "qwen3-8b", "0.7", "spec-draft", "vocabulary of 151936 tokens"},
	{"llama-3.1-8b", "mtp:2", "0.7", "spec-draft", "no routed experts"},
	{"llama-3.1-8b", "eagle:0", "0.7", "spec-draft", "1 to 16"},
	{"llama-3.1-8b", "eagle:17", "0.7", "spec-draft", "1 to 16"},
	{"llama-3.1-8b", "eagle:3", "1", "spec-accept", "[0, 1)"},
	{"llama-3.1-8b", "eagle:3", "-0.1", "spec-accept", "[0, 1)"},
	{"llama-3.1-8b", "eagle:3", NULL, "spec-accept", "(none)"},
	{"llama-3.1-8b", "no-such-model", "0.5", "spec-draft", ""},
};

START_TEST(test_bad_drafts)
{
	struct kvp_error err = {0};
	struct kvp_speculative sp;
	ck_assert_int_eq(kvp_model_load(bad[_i].target, &model, &err), KVP_STATUS_OK);
	ck_assert_int_ne(kvp_speculative_parse(bad[_i].draft, bad[_i].accept, &model, &sp, &err),
			 KVP_STATUS_OK);
	ck_assert_str_eq(err.field, bad[_i].field);
	ck_assert_msg(strstr(err.msg, bad[_i].msg), "'%s' lacks '%s'", err.msg, bad[_i].msg);
}
END_TEST

/* MTP on DeepSeek-V3: one MoE layer's share of the experts (653,908,770,816 /
 * 58 = 11,274,289,152 routed; 2,554,331,136 / 58 = 44,040,192 shared), the
 * per-layer average of the rest (12,709,959,168 / 61 = 208,359,986) and eh_proj
 * 2 x 7168^2 = 102,760,448: 11,629,449,778, the ~11.6 B of architectures.md. */
START_TEST(test_mtp_deepseek)
{
	struct kvp_error err = {0};
	struct kvp_speculative sp;
	ck_assert_int_eq(kvp_model_load("deepseek-v3", &model, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_speculative_parse("mtp:1", "0.85", &model, &sp, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(sp.draft.params, 11629449778ULL);
	ck_assert_uint_eq(sp.draft.expert_params, 11274289152ULL);
	ck_assert_uint_eq(sp.draft.shared_expert_params, 44040192ULL);
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 8, .pp = 1},
					KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_speculative_apply(&sp, &spec, &err), KVP_STATUS_OK);
	/* one more MLA layer: 61 + 1 layers x 1,152 B */
	ck_assert_uint_eq(spec.token_bytes, 62 * 1152);
}
END_TEST

static Suite *speculative_suite(void)
{
	Suite *s = suite_create("speculative");
	TCase *core = tcase_create("core");
	tcase_add_test(core, test_eagle_llama8b);
	tcase_add_test(core, test_draft_model);
	tcase_add_test(core, test_mtp_deepseek);
	tcase_add_test(core, test_acceptance_share);
	tcase_add_test(core, test_draft_allreduce);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_loop_test(errors, test_bad_drafts, 0, sizeof bad / sizeof bad[0]);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(speculative_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
