/* check-budget.c: the memory budget and KV pool under each engine policy.
 * Cases are either hand arithmetic written beside the assertion, or public
 * engine start-up logs (reports/engine-logs.md, which quotes each log and its
 * source) reproduced from the terms the engine itself logged. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "units.h"

static struct kvp_model model;
static struct kvp_gpu gpu;
static struct kvp_budget b;

static void load(const char *name)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_model_load(name, &model, &err) == KVP_STATUS_OK, "%s", err.msg);
	memset(&gpu, 0, sizeof gpu);
	strcpy(gpu.name, "custom");
}

static struct kvp_budget_opts opts(enum kvp_engine e, double gib_total, double util,
				   double gib_weights, double gib_act, double gib_ovh)
{
	struct kvp_budget_opts o = {0};
	o.engine = e;
	o.par.tp = o.par.pp = 1;
	o.utilization = util;
	o.has_gpu_memory = o.has_weights = o.has_activation = o.has_overhead = true;
	o.gpu_memory_bytes = (uint64_t)llround(gib_total * KVP_GIB);
	o.weights_bytes = (uint64_t)llround(gib_weights * KVP_GIB);
	o.activation_bytes = (uint64_t)llround(gib_act * KVP_GIB);
	o.overhead_bytes = (uint64_t)llround(gib_ovh * KVP_GIB);
	return o;
}

static void compute(const struct kvp_budget_opts *o)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_budget_compute(&model, &gpu, o, &b, &err) == KVP_STATUS_OK, "%s: %s",
		      err.field, err.msg);
}

START_TEST(test_generic_by_hand)
{
	load("llama-2-7b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_GENERIC, 80, 0.9, 13, 1, 1);
	o.context = 4096;
	o.batch = 28;
	compute(&o);
	/* usable = 80 GiB * 0.9 = 72 GiB; pool = 72 - 13 - 1 - 1 = 57 GiB */
	ck_assert_uint_eq(b.usable_bytes, 72 * KVP_GIB);
	ck_assert_uint_eq(b.kv_pool_bytes, 57 * KVP_GIB);
	/* page = 16 tokens * 524,288 B = 8 MiB; blocks = 57 GiB / 8 MiB = 7,296 */
	ck_assert_uint_eq(b.page_bytes, 8 * KVP_MIB);
	ck_assert_uint_eq(b.num_blocks, 7296);
	ck_assert_uint_eq(b.max_tokens, 7296 * 16); /* 116,736 */
	/* 4,096 tokens = 256 blocks; 7,296 / 256 = 28.5 -> 28 sequences */
	ck_assert_uint_eq(b.max_sequences, 28);
	ck_assert(b.fits);
	/* 28 * 4,096 * 524,288 B = 56 GiB */
	ck_assert_uint_eq(b.kv_bytes, 56 * KVP_GIB);
	o.batch = 29;
	compute(&o);
	ck_assert(!b.fits);
	/* inverse: the longest context for one sequence is the whole pool, 116,736
	 * tokens; for two, 3,648 blocks each = 58,368 tokens */
	ck_assert_uint_eq(kvp_budget_max_context(&b, 1, 1ULL << 40), 116736);
	ck_assert_uint_eq(kvp_budget_max_context(&b, 2, 1ULL << 40), 58368);
	/* utilization for 28 x 4,096: 28 * 256 blocks * 8 MiB = 56 GiB + 15 GiB
	 * fixed = 71 GiB of 80 = 0.8875 */
	ck_assert_double_eq_tol(kvp_budget_utilization_for(&b, 4096, 28), 0.8875, 1e-9);
}
END_TEST

START_TEST(test_weights_do_not_fit)
{
	load("llama-3.1-70b");
	struct kvp_budget_opts o = {0};
	o.par.tp = o.par.pp = 1;
	o.has_gpu_memory = true;
	o.gpu_memory_bytes = 24 * KVP_GIB; /* 141 GB of bf16 weights on a 24 GiB card */
	o.context = 1024;
	compute(&o);
	ck_assert(!b.weights_fit);
	ck_assert_uint_eq(b.kv_pool_bytes, 0);
	ck_assert_uint_eq(b.num_blocks, 0);
	ck_assert_uint_eq(b.max_sequences, 0);
	ck_assert(!b.fits);
}
END_TEST

/* vLLM V0 log, Llama-3.1-8B on an A10 (engine-logs.md V2): total 22.07 GiB
 * x 0.90; weights 14.99 GiB; non-torch 0.05 GiB; activation peak 0.22 GiB;
 * logged "# CUDA blocks: 2356".  By hand: 22.07 * 0.9 = 19.863;
 * 19.863 - 14.99 - 0.05 - 0.22 = 4.603 GiB; / 2 MiB per block = 2356.7 -> 2356. */
START_TEST(test_vllm_log_a10)
{
	load("llama-3.1-8b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_VLLM, 22.07, 0.9, 14.99, 0.22, 0.05);
	o.context = 131072;
	compute(&o);
	/* vLLM's page is per layer: 16 * 2*8*128*2 = 65,536 B; a block spans the
	 * one group of 32 layers = 2 MiB */
	ck_assert_uint_eq(b.page_bytes, 65536);
	ck_assert_uint_eq(b.group_size, 32);
	ck_assert_uint_eq(b.num_blocks, 2356);
	/* logged "maximum number of tokens that can be stored in KV cache (37696)" */
	ck_assert_uint_eq(b.max_tokens, 37696);
	ck_assert_uint_eq(b.max_sequences, 0); /* "Maximum concurrency ... 0.29x" */
}
END_TEST

/* vLLM V1 0.11.2, gpt-oss-120b (engine-logs.md V10): "Available KV cache
 * memory: 8.99 GiB", "GPU KV cache size: 130,960 tokens", "Maximum
 * concurrency for 98,304 tokens per request: 2.46x"; max_num_batched_tokens
 * 8192.  By hand: 18 full + 18 sliding layers -> 2 groups of 18 sharing one
 * pool; page = 16 * 2,048 B = 32 KiB; blocks = floor(8.99 GiB / (32 KiB * 18))
 * = 16,365; tokens = 16,365 // 2 * 16 = 130,912 (the logged 8.99 is rounded:
 * 130,960 needs 8.9923 GiB).  Per request: full cdiv(98,304, 16) = 6,144
 * blocks, sliding cdiv(min(127 + 8,192, 98,304), 16) + 1 = 521. */
START_TEST(test_vllm_log_gpt_oss_hybrid)
{
	load("gpt-oss-120b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_VLLM, 8.99, 1.0, 0, 0, 0);
	o.context = 98304;
	o.max_batched_tokens = 8192;
	compute(&o);
	ck_assert_uint_eq(b.group_size, 18);
	ck_assert_uint_eq(b.num_groups, 2);
	ck_assert_uint_eq(b.padding_layers, 0);
	ck_assert_uint_eq(b.page_bytes, 32768);
	ck_assert_uint_eq(b.num_blocks, 16365);
	ck_assert_uint_eq(b.max_tokens, 130912);
	ck_assert_uint_le(130960 - b.max_tokens, 3 * 16); /* within the log's rounding */
	ck_assert_uint_eq(b.group[KVP_LAYER_FULL].blocks_per_seq, 6144);
	ck_assert_uint_eq(b.group[KVP_LAYER_SLIDING].blocks_per_seq, 521);
	/* 16,365 / (6,144 + 521) = 2.455 -> 2 whole sequences (logged 2.46x) */
	ck_assert_uint_eq(b.max_sequences, 2);
	/* without the hybrid manager every layer holds every token: 36 layers in one
	 * group, 6,144 blocks each; 8.99 GiB / (32 KiB * 36) = 8,182 blocks -> 1 */
	o.hybrid_off = true;
	compute(&o);
	ck_assert_uint_eq(b.num_groups, 1);
	ck_assert_uint_eq(b.num_blocks, 8182);
	ck_assert_uint_eq(b.max_sequences, 1);
}
END_TEST

START_TEST(test_vllm_gemma3_groups)
{
	/* architectures.md 1.4: Gemma-3-27b, 10 full + 52 sliding -> groups of 10:
	 * 1 full group + 6 sliding groups, the last with 8 padding layers */
	load("gemma-3-27b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_VLLM, 80, 0.9, 0, 0, 0);
	o.context = 8192;
	compute(&o);
	ck_assert_uint_eq(b.group_size, 10);
	ck_assert_uint_eq(b.group[KVP_LAYER_FULL].groups, 1);
	ck_assert_uint_eq(b.group[KVP_LAYER_SLIDING].groups, 6);
	ck_assert_uint_eq(b.num_groups, 7);
	ck_assert_uint_eq(b.padding_layers, 8);
	/* page 16 * 8,192 B = 128 KiB; blocks = 72 GiB / (128 KiB * 10) = 58,982 */
	ck_assert_uint_eq(b.num_blocks, 58982);
}
END_TEST

START_TEST(test_vllm_jamba_block)
{
	/* Mamba hybrids: the attention block grows until a page holds one Mamba
	 * state: 311,296 B / (16 * 4,096 B) = 4.75 -> 5 steps of 16 = 80 tokens.
	 * 4 attention + 28 Mamba layers: groups of 4 (28 >= 1.5 * 4): 1 + 7. */
	load("jamba-v0.1");
	struct kvp_budget_opts o = opts(KVP_ENGINE_VLLM, 80, 0.9, 0, 0, 0);
	o.context = 4096;
	compute(&o);
	ck_assert_uint_eq(b.block_size, 80);
	ck_assert_uint_eq(b.page_bytes, 80 * 4096);
	ck_assert_uint_eq(b.group_size, 4);
	ck_assert_uint_eq(b.num_groups, 8);
	/* per request: 4 attention layers * cdiv(4096, 80) = 52 blocks + 28 Mamba
	 * layers * 1 = 236 layer-blocks / 4 = 59 group blocks */
	uint64_t pool;
	ck_assert_int_eq(kvp_budget_pool_for(&b, 4096, 1, &pool), KVP_STATUS_OK);
	ck_assert_uint_eq(pool, 59ULL * 80 * 4096 * 4);
}
END_TEST

/* SGLang docs log (engine-logs.md S1): mem_fraction_static 0.88, "avail
 * mem=78.81 GB" before load and 63.72 after (weights 15.09 GiB), page size 1,
 * logged max_total_num_tokens=444500.  By hand: 0.88 * 78.81 - 15.09 =
 * 54.2628 GiB / 131,072 B = 444,520 tokens. */
START_TEST(test_sglang_log)
{
	load("llama-3.1-8b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_SGLANG, 78.81, 0.88, 15.09, 0, 0);
	o.context = 131072;
	compute(&o);
	ck_assert_uint_eq(b.block_size, 1);
	ck_assert_uint_le(llabs((long long)b.max_tokens - 444520), 1);
	ck_assert_double_le(fabs((double)b.max_tokens - 444500) / 444500, 1e-4);
}
END_TEST

/* TensorRT-LLM log (engine-logs.md T1): fp8 weights and KV, "available:
 * 17.83 GiB", fraction 0.9, 32 tokens per block, logged 8219 blocks.
 * By hand: 0.9 * 17.83 = 16.047 GiB / (32 * 65,536 B = 2 MiB) = 8,216. */
START_TEST(test_trtllm_log)
{
	load("llama-3.1-8b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_TRTLLM, 17.83, 0.9, 0, 0, 0);
	o.kv_dtype = KVP_DTYPE_FP8;
	o.context = 2048;
	compute(&o);
	ck_assert_uint_eq(b.block_size, 32);
	ck_assert_uint_eq(b.page_bytes, 2 * KVP_MIB);
	ck_assert_uint_eq(b.num_blocks, 8216);
	ck_assert_uint_le(8219 - b.num_blocks, 3);
}
END_TEST

START_TEST(test_trtllm_by_hand)
{
	load("llama-2-7b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_TRTLLM, 80, 0.9, 13, 1, 1);
	o.context = 4096;
	compute(&o);
	/* pool = 0.9 * (80 - 13 - 1 - 1) = 58.5 GiB; block 32 * 512 KiB = 16 MiB;
	 * 58.5 GiB / 16 MiB = 3,744 blocks = 119,808 tokens */
	ck_assert_uint_eq(b.kv_pool_bytes, 58 * KVP_GIB + KVP_GIB / 2);
	ck_assert_uint_eq(b.num_blocks, 3744);
	ck_assert_uint_eq(b.max_tokens, 119808);
	/* utilization for 29 x 4,096: 29 * 128 blocks * 16 MiB = 58 GiB / 65 GiB */
	ck_assert_double_eq_tol(kvp_budget_utilization_for(&b, 4096, 29), 58.0 / 65.0, 1e-9);
}
END_TEST

START_TEST(test_sglang_default_fraction)
{
	/* sglang's default reserve on an 80 GiB card (81,920 MiB), max batched
	 * tokens 8,192, 256 sequences, tp 1: 512 + 8,192 * 1.5 + 256 * 2 + 1/8 *
	 * 1,024 = 13,440 MiB; fraction = (81,920 - 13,440) / 81,920 = 0.8359375 */
	load("llama-3.1-8b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_SGLANG, 80, 0, 15, 0, 0);
	compute(&o);
	ck_assert_double_eq_tol(b.utilization, 0.8359375, 1e-12);
}
END_TEST

START_TEST(test_activation_estimate)
{
	/* Llama-3.1-8B, 8,192 tokens, bf16: per token 2*4096 + (32 + 2*8)*128 +
	 * 3*14,336 = 8,192 + 6,144 + 43,008 = 57,344 elements * 2 B = 114,688 B;
	 * x 8,192 = 939,524,096; sampler 256 seqs * 8 B * 128,256 = 262,668,288;
	 * total 1,202,192,384 B (1.12 GiB) */
	load("llama-3.1-8b");
	struct kvp_spec s;
	struct kvp_error err;
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &s, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(kvp_budget_activation_estimate(&s, 8192, 256), 1202192384ULL);
}
END_TEST

START_TEST(test_budget_errors)
{
	struct kvp_error err = {0};
	load("llama-2-7b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_GENERIC, 80, 0.9, 13, 1, 1);
	o.context = 1ULL << 62; /* 2^62 tokens * 2^19 B overflows 64 bits */
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OVERFLOW);
	ck_assert_str_eq(err.field, "context");
	o.context = 4096;
	o.par.tp = 3; /* 32 heads */
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_INVALID);
	o.par.tp = 1;
	o.weights_bytes = UINT64_MAX; /* overrides that overflow when summed */
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OVERFLOW);
	/* an override of 0 bytes is legal */
	o.weights_bytes = 0;
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(b.kv_pool_bytes, 70 * KVP_GIB);
}
END_TEST

START_TEST(test_record_fields)
{
	load("llama-2-7b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_GENERIC, 80, 0.9, 13, 1, 1);
	o.context = 4096;
	compute(&o);
	struct kvp_record *r = kvp_record_new();
	ck_assert(kvp_budget_to_record(&b, "custom", r));
	static const char *const contract[] = {
		"model", "gpu", "engine", "tp", "pp", "block_size", "kv_dtype",
		"kv_bytes_per_token", "kv_bytes_per_token_total", "kv_bytes", "gpu_memory_bytes",
		"usable_bytes", "weights_bytes", "activation_bytes", "overhead_bytes",
		"kv_pool_bytes", "num_blocks", "max_tokens", "max_sequences", "fits"};
	for (size_t i = 0; i < sizeof contract / sizeof contract[0]; i++)
		ck_assert_msg(kvp_record_get(r, contract[i]) != NULL, "missing %s", contract[i]);
	ck_assert_uint_eq(kvp_record_get(r, "num_blocks")->u, 7296);
	ck_assert_uint_eq(kvp_record_get(r, "layers.full.bytes_per_token")->u, 524288);
	kvp_record_free(r);
}
END_TEST

static Suite *budget_suite(void)
{
	Suite *s = suite_create("budget");
	TCase *core = tcase_create("core");
	tcase_add_test(core, test_generic_by_hand);
	tcase_add_test(core, test_weights_do_not_fit);
	tcase_add_test(core, test_vllm_log_a10);
	tcase_add_test(core, test_vllm_log_gpt_oss_hybrid);
	tcase_add_test(core, test_vllm_gemma3_groups);
	tcase_add_test(core, test_vllm_jamba_block);
	tcase_add_test(core, test_sglang_log);
	tcase_add_test(core, test_sglang_default_fraction);
	tcase_add_test(core, test_trtllm_log);
	tcase_add_test(core, test_trtllm_by_hand);
	tcase_add_test(core, test_activation_estimate);
	tcase_add_test(core, test_record_fields);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_test(errors, test_budget_errors);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(budget_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
