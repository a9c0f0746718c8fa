/* check-budget.c: the memory budget and KV pool under each engine policy.
 * Cases are either hand arithmetic written beside the assertion, or public
 * engine start-up logs (reports/engine-logs.md, which quotes each log and its
 * source) reproduced from the terms the engine itself logged. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "memory/budget.h"
#include "base/units.h"
#include "model/spec.h"

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
	/* per request, vLLM's get_max_concurrency_for_kv_cache_config: every
	 * group holds its kind's worst case, the padded sliding group too:
	 * full cdiv(8192, 16) = 512; sliding cdiv(min(1023 + 8192, 8192), 16) + 1
	 * = 513 (T = 8,192 on an 80 GiB GPU); 1 x 512 + 6 x 513 = 3,590 blocks,
	 * so 58,982 / 3,590 = 16 sequences (counting real layers instead,
	 * cdiv(10 x 512 + 52 x 513, 10) = 3,180, would promise 18) */
	ck_assert_uint_eq(b.group[KVP_LAYER_FULL].blocks_per_seq, 512);
	ck_assert_uint_eq(b.group[KVP_LAYER_SLIDING].blocks_per_seq, 513);
	uint64_t pool;
	ck_assert_int_eq(kvp_budget_pool_for(&b, 8192, 1, &pool), KVP_STATUS_OK);
	ck_assert_uint_eq(pool, 3590ULL * 16 * 8192 * 10);
	ck_assert_uint_eq(b.max_sequences, 16);
	/* --max-context agrees: 16 sequences fit 8,192 tokens, 17 do not */
	ck_assert_uint_ge(kvp_budget_max_context(&b, 16, 1 << 20), 8192);
	ck_assert_uint_lt(kvp_budget_max_context(&b, 17, 1 << 20), 8192);
}
END_TEST

/* Two meanings of "max tokens" (issue 34): many short sequences, every layer
 * keeping every token, and the longest one sequence, the windowed layers
 * keeping only their windows.  Gemma-3-27b: 10 full + 52 sliding layers
 * (window 1,024), 2 x 16 KV heads x 128 d_h x 2 B = 8,192 B per layer and
 * token (architectures.md). */
START_TEST(test_max_tokens_one_sequence)
{
	load("gemma-3-27b");
	/* generic: pool = 80 GiB x 0.9 - 50 GiB = 22 GiB = 23,622,320,128 B */
	struct kvp_budget_opts o = opts(KVP_ENGINE_GENERIC, 80, 0.9, 50, 0, 0);
	o.context = 131072;
	compute(&o);
	ck_assert_uint_eq(b.kv_pool_bytes, 23622320128ULL);
	/* short: page 16 x 62 x 8,192 B = 8,126,464 B; 23,622,320,128 / 8,126,464
	 * = 2,906.8 -> 2,906 blocks x 16 = 46,496 tokens */
	ck_assert_uint_eq(b.max_tokens, 46496);
	/* one sequence: each sliding layer keeps ceil(1,024 / 16) + 1 = 65 blocks
	 * = 1,040 tokens: 52 x 8,192 x 1,040 = 443,023,360 B; the rest,
	 * 23,179,296,768 B, over the full layers' 16 x 10 x 8,192 = 1,310,720 B
	 * a block = 17,684.4 -> 17,684 blocks x 16 = 282,944 tokens */
	ck_assert_uint_eq(b.max_tokens_one_sequence, 282944);
	ck_assert(b.fits);
	ck_assert_uint_ge(b.max_tokens_one_sequence, b.context);

	/* vLLM: 72 GiB pool = 58,982 slots of 10 layers x 131,072 B (as in
	 * test_vllm_gemma3_groups); one sequence takes 6 sliding groups x
	 * (cdiv(min(1,023 + 8,192, n), 16) + 1) = 6 x 577 = 3,462 blocks once
	 * n passes 9,215, the full group the other 55,520 = 888,320 tokens */
	o = opts(KVP_ENGINE_VLLM, 80, 0.9, 0, 0, 0);
	o.context = 8192;
	compute(&o);
	ck_assert_uint_eq(b.num_blocks, 58982);
	ck_assert_uint_eq(b.max_tokens, 58982 / 7 * 16);
	ck_assert_uint_eq(b.max_tokens_one_sequence, 888320);

	/* no window: the two agree (llama-2-7b, test_generic_by_hand: 7,296
	 * blocks x 16 = 116,736) */
	load("llama-2-7b");
	o = opts(KVP_ENGINE_GENERIC, 80, 0.9, 13, 1, 1);
	o.context = 4096;
	compute(&o);
	ck_assert_uint_eq(b.max_tokens, 116736);
	ck_assert_uint_eq(b.max_tokens_one_sequence, 116736);
	/* every layer windowed (Mistral-7B-v0.1, window 4,096): no bound */
	load("mistral-7b-v0.1");
	o = opts(KVP_ENGINE_GENERIC, 80, 0.9, 14, 1, 1);
	o.context = 32768;
	compute(&o);
	ck_assert_uint_eq(b.max_tokens_one_sequence, KVP_BUDGET_UNBOUNDED);
	/* nothing left for KV: 0 */
	o = opts(KVP_ENGINE_GENERIC, 80, 0.9, 80, 1, 1);
	compute(&o);
	ck_assert_uint_eq(b.max_tokens_one_sequence, 0);
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
	/* per request: the attention group cdiv(4096, 80) = 52 blocks + 7 Mamba
	 * groups x 1 = 59 blocks of a group */
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
 * TRT-LLM's kvCacheManager.cpp (calculateMaxNumBlocks) counts tokens, then
 * rounds the blocks up: by hand 0.9 * 17.83 GiB = 17,230,335,049 B /
 * 65,536 B = 262,914 tokens, ceil(262,914 / 32) = 8,217 blocks (floor
 * would give 8,216).  The log's 17.835 GiB rounding edge gives
 * ceil(262,987 / 32) = 8,219, the logged count. */
START_TEST(test_trtllm_log)
{
	load("llama-3.1-8b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_TRTLLM, 17.83, 0.9, 0, 0, 0);
	o.kv_dtype = KVP_DTYPE_FP8;
	o.context = 2048;
	compute(&o);
	ck_assert_uint_eq(b.block_size, 32);
	ck_assert_uint_eq(b.page_bytes, 2 * KVP_MIB);
	ck_assert_uint_eq(b.num_blocks, 8217);
	ck_assert_uint_eq(b.max_tokens, 8217 * 32);
	o.gpu_memory_bytes = (uint64_t)llround(17.835 * KVP_GIB);
	compute(&o);
	ck_assert_uint_eq(b.num_blocks, 8219);
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
	/* sglang 0.5.10's default reserve on an 80 GiB card (81,920 MiB; the
	 * 60-160 GiB tier: chunked prefill 8,192, cuda_graph_max_bs 256 below
	 * tp 4), tp 1, with the 58 piecewise graph sizes x 8 MiB
	 * (engine-memory.md 5): 512 + 8,192 * 1.5 + 256 * 2 + 1/8 * 1,024 + 464
	 * = 13,904 MiB; fraction = (81,920 - 13,904) / 81,920 = 0.830273437 */
	load("llama-3.1-8b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_SGLANG, 80, 0, 15, 0, 0);
	compute(&o);
	ck_assert_double_eq_tol(b.utilization, 68016.0 / 81920.0, 1e-12);
	ck_assert_str_eq(b.engine_model.version, "0.5.10");
	/* at tp 4 the graph batch is 512: 13,904 + 512 + 3 * 128 = 14,800 MiB */
	o.par.tp = 4;
	compute(&o);
	ck_assert_double_eq_tol(b.utilization, (81920.0 - 14800.0) / 81920.0, 1e-12);
	/* DP attention (server_args.py _handle_gpu_memory_settings, 0.5.10):
	 * DeepSeek-V3 at --tp-size 8 --dp-size 8 (kvplan tp 1, dp 8): SGLang's
	 * tp_size is 8, so cuda_graph_max_bs 512 and 8 / 8 x 1,024; plus
	 * 512 x 8 x 3 for DP attention and 512 x 8 x 1.5 more (512 > 300); MLA's
	 * piecewise graphs 1.5 x 1,024: 512 + 12,288 + 1,024 + 1,024 + 12,288 +
	 * 6,144 + 1,536 = 34,816 MiB; (81,920 - 34,816) / 81,920 = 0.575 (was
	 * 13,904 + 0 with tp 1's tier and no DP terms: 0.830) */
	load("deepseek-v3");
	o = opts(KVP_ENGINE_SGLANG, 80, 0, 15, 0, 0);
	o.par.dp = 8;
	compute(&o);
	ck_assert_double_eq_tol(b.utilization, 47104.0 / 81920.0, 1e-12);
}
END_TEST

/* Llama-3.1-8B on an H100 SXM under vLLM, every term estimated, 8,192 tokens. */
static struct kvp_budget_opts llama8b_on_h100_vllm(void)
{
	load("llama-3.1-8b");
	struct kvp_budget_opts o = opts(KVP_ENGINE_VLLM, 0, 0, 0, 0, 0);
	o.has_gpu_memory = o.has_weights = o.has_activation = o.has_overhead = false;
	o.context = 8192;
	strcpy(gpu.name, "h100-sxm");
	gpu.memory_bytes = 85028896768ULL; /* 79.19 GiB >= 70 GiB, not an A100 */
	return o;
}

/* vLLM 0.19's accounting from profiles/engines/vllm.yaml, by hand. */
START_TEST(test_vllm_engine_model)
{
	struct kvp_budget_opts o = llama8b_on_h100_vllm();
	compute(&o);
	ck_assert_str_eq(b.engine_model.version, "0.19.0");
	/* large-GPU defaults: 1,024 sequences, 8,192 batched tokens */
	ck_assert_uint_eq(b.max_num_seqs, 1024);
	ck_assert_uint_eq(b.max_batched_tokens, 8192);
	/* sampler 14 * 1,024 * 128,256 = 1,838,678,016 + top-k buffer 132 *
	 * 128,256 * 4 = 67,719,168 + hidden 8,192 * 4,096 * 2 = 67,108,864 +
	 * 2 * 1,024 * 4,096 * 2 = 16,777,216 = 1,990,283,264 B (1.854 GiB,
	 * engine-memory.md 3); the forward pass alone is 939,524,096 */
	ck_assert_uint_eq(b.activation_bytes, 1990283264ULL);
	/* non-torch at tp 1: 0.25 GiB; no CUDA graphs charged, no context */
	ck_assert_uint_eq(b.overhead_bytes, KVP_GIB / 4);
	ck_assert_double_eq_tol(b.utilization, 0.90, 1e-12);

	/* tp 2: the sampler is not divided (all-gathered logits); the forward
	 * part is, and the 2 GiB NCCL step appears */
	o.par.tp = 2;
	compute(&o);
	ck_assert_uint_eq(b.activation_bytes, 1990283264ULL);
	ck_assert_uint_eq(b.overhead_bytes, 2 * KVP_GIB);

	/* an A100-80GB: 256 sequences and 2,048 tokens; N = 256: sampler
	 * 459,669,504 + top-k 67,719,168 + hidden 16,777,216 + 4,194,304 =
	 * 548,360,192; forward 2,048 * 114,688 = 234,881,024 */
	o.par.tp = 1;
	strcpy(gpu.name, "a100-80gb");
	gpu.memory_bytes = 85051572224ULL;
	compute(&o);
	ck_assert_uint_eq(b.max_num_seqs, 256);
	ck_assert_uint_eq(b.max_batched_tokens, 2048);
	ck_assert_uint_eq(b.activation_bytes, 548360192ULL);

	/* a 24 GB card with --max-num-seqs 4: mbt 2,048 capped by 4 x context
	 * 100 = 400; N = 4, top-k rows next_pow2(4) = 4: 14*4*128,256 +
	 * 4*128,256*4 + 400*4,096*2 + 2*4*4,096*2 = 7,182,336 + 2,052,096 +
	 * 3,276,800 + 65,536 = 12,576,768 < forward 400 * 114,688 = 45,875,200 */
	strcpy(gpu.name, "rtx-4090");
	gpu.memory_bytes = 25386352640ULL;
	o.max_num_seqs = 4;
	o.context = 100;
	compute(&o);
	ck_assert_uint_eq(b.max_batched_tokens, 400);
	ck_assert_uint_eq(b.activation_bytes, 45875200ULL);

	/* no version at all is an error naming the ones there are (a version
	 * outside every entry takes the nearest: tests/check-engine.c) */
	struct kvp_error err = {0};
	o.engine_version = "zero.one";
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_NOT_FOUND);
	ck_assert_str_eq(err.field, "engine-version");
	ck_assert_ptr_nonnull(strstr(err.msg, "0.19.0"));
}
END_TEST

/* The band: each estimated term's spread from the engine profile, none for
 * the terms the user passed; low <= point <= high. */
START_TEST(test_band)
{
	struct kvp_budget_opts o = llama8b_on_h100_vllm();
	compute(&o);
	const struct kvp_engine_model *e = &b.engine_model;
	ck_assert_str_eq(b.estimated_terms, "weights,activation,overhead");
	/* weights 16,060,522,496 B + vLLM's rotary cos/sin cache 131,072 positions
	 * x 128 x 2 B = 33,554,432 -> 16,094,076,928 B; activation 1,990,283,264 B
	 * (by hand above) */
	ck_assert_uint_eq(b.weights_bytes, 16094076928ULL);
	ck_assert_uint_eq(b.weights_spread_bytes,
			  (uint64_t)ceil(16094076928.0 * e->weights_spread));
	ck_assert_uint_eq(b.activation_spread_bytes,
			  (uint64_t)ceil(1990283264.0 * e->activation_spread));
	ck_assert_uint_eq(b.overhead_spread_bytes, e->non_torch_spread_bytes);
	/* upward the activation takes its fitted bytes (1.05 GiB in vllm.yaml,
	 * the largest logged-minus-estimated peak, engine-logs.md): low end
	 * pool - (w + 1.05 GiB + o), high end pool + (w + 11 % of 1.99e9 + o) */
	ck_assert_uint_eq(e->activation_spread_above_bytes, 1127428915ULL); /* 1.05 x 2^30 */
	ck_assert_uint_eq(b.activation_spread_above_bytes, e->activation_spread_above_bytes);
	uint64_t rest = b.weights_spread_bytes + b.overhead_spread_bytes;
	ck_assert_uint_eq(b.kv_pool_low_bytes,
			  b.kv_pool_bytes - rest - b.activation_spread_above_bytes);
	ck_assert_uint_eq(b.kv_pool_high_bytes, b.kv_pool_bytes + rest + b.activation_spread_bytes);
	/* one slot = 16 tokens x 4,096 B x 32 layers = 2 MiB; 512 per sequence */
	ck_assert_uint_eq(b.max_tokens_low, b.kv_pool_low_bytes / (2 * KVP_MIB) * 16);
	ck_assert_uint_eq(b.max_tokens_high, b.kv_pool_high_bytes / (2 * KVP_MIB) * 16);
	ck_assert_uint_eq(b.max_sequences_low, b.kv_pool_low_bytes / (2 * KVP_MIB) / 512);
	ck_assert(b.max_tokens_low <= b.max_tokens && b.max_tokens <= b.max_tokens_high);
	ck_assert(b.max_sequences_low <= b.max_sequences &&
		  b.max_sequences <= b.max_sequences_high);

	/* terms the user passed carry no spread */
	o.has_weights = o.has_activation = o.has_overhead = true;
	o.weights_bytes = 16 * KVP_GIB;
	o.activation_bytes = KVP_GIB;
	o.overhead_bytes = KVP_GIB;
	compute(&o);
	ck_assert_str_eq(b.estimated_terms, "");
	ck_assert_uint_eq(b.kv_pool_low_bytes, b.kv_pool_bytes);
	ck_assert_uint_eq(b.max_tokens_high, b.max_tokens);

	/* SGLang: the default fraction is estimated; given, it is not */
	o.engine = KVP_ENGINE_SGLANG;
	compute(&o);
	ck_assert_str_eq(b.estimated_terms, "fraction");
	ck_assert_uint_gt(b.fraction_spread_bytes, 0);
	o.utilization = 0.85;
	compute(&o);
	ck_assert_uint_eq(b.fraction_spread_bytes, 0);
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
	tcase_add_test(core, test_max_tokens_one_sequence);
	tcase_add_test(core, test_vllm_engine_model);
	tcase_add_test(core, test_band);
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
