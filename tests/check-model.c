/* check-model.c: KV bytes per token, per-sequence state and weights of the
 * built-in profiles, against public model facts and hand arithmetic
 * (../shared/reference/architectures.md sections 3.2 and 3.3). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/model.h"
#include "read/profile.h"
#include "base/units.h"
#include "model/spec.h"

static struct kvp_model model;
static struct kvp_spec spec;

static void load(const char *name)
{
	struct kvp_error err = {0};
	kvp_status st = kvp_model_load(name, &model, &err);
	ck_assert_msg(st == KVP_STATUS_OK, "%s: %s", name, err.msg);
}

static void build(uint32_t tp, uint32_t pp, enum kvp_dtype kv)
{
	struct kvp_error err = {0};
	kvp_status st = kvp_spec_build(&model, (struct kvp_parallel){.tp = tp, .pp = pp}, KVP_DTYPE_AUTO, kv,
				       &spec, &err);
	ck_assert_msg(st == KVP_STATUS_OK, "%s: %s: %s", model.name, err.field, err.msg);
}

/* KV bytes per token, whole model, bf16 (b = 2) */
static const struct {
	const char *name;
	uint64_t token_bytes;
	const char *arithmetic;
} kv_cases[] = {
	{"llama-2-7b", 524288, "2*32 KV heads*128*2 B = 16,384 x 32 layers"},
	{"llama-2-70b", 327680, "2*8*128*2 = 4,096 x 80"},
	{"llama-3.1-8b", 131072, "4,096 x 32"},
	{"llama-3.1-70b", 327680, "4,096 x 80"},
	{"llama-3.1-405b", 516096, "4,096 x 126"},
	{"mistral-7b-v0.1", 131072, "4,096 x 32, all sliding W=4096"},
	{"mixtral-8x7b", 131072, "4,096 x 32"},
	{"qwen2.5-7b", 57344, "2*4*128*2 = 2,048 x 28"},
	{"qwen2.5-72b", 327680, "4,096 x 80"},
	{"qwen3-8b", 147456, "4,096 x 36"},
	{"qwen3-30b-a3b", 98304, "2*4*128*2 = 2,048 x 48 (head_dim 128, not hidden/heads = 64)"},
	{"gemma-2-9b", 344064, "2*8*256*2 = 8,192 x 42"},
	{"gemma-2-27b", 376832, "2*16*128*2 = 8,192 x 46"},
	{"gemma-3-27b", 507904, "8,192 x 62 (10 full + 52 sliding)"},
	{"phi-3-mini-4k", 393216, "2*32*96*2 = 12,288 x 32"},
	{"falcon-7b", 8192, "multi-query: 2*1*64*2 = 256 x 32"},
	{"deepseek-v3", 70272, "MLA: (512 + 64)*2 = 1,152 x 61"},
	{"gpt-oss-20b", 49152, "2*8*64*2 = 2,048 x 24"},
	{"gpt-oss-120b", 73728, "2,048 x 36"},
	{"jamba-v0.1", 16384, "4,096 x 4 attention layers (28 Mamba)"},
	{"deepseek-r1", 70272, "the V3 shape: MLA (512 + 64)*2 = 1,152 x 61"},
	{"kimi-k2", 70272, "MLA (512 + 64)*2 = 1,152 x 61"},
	{"qwen3-235b-a22b", 192512, "2*4*128*2 = 2,048 x 94"},
	{"llama-4-scout", 196608, "2*8*128*2 = 4,096 x 48 (36 chunked + 12 full)"},
	{"llama-4-maverick", 196608, "4,096 x 48 (36 chunked + 12 full)"},
	{"gemma-3-4b", 139264, "2*4*256*2 = 4,096 x 34 (29 sliding + 5 full)"},
	{"gemma-3-12b", 393216, "2*8*256*2 = 8,192 x 48 (40 sliding + 8 full)"},
	{"mistral-small-3.1", 163840, "2*8*128*2 = 4,096 x 40"},
	{"qwen3-next-80b-a3b", 24576, "2*2*256*2 = 2,048 x 12 full layers (36 linear: state)"},
};

START_TEST(test_kv_per_token)
{
	load(kv_cases[_i].name);
	build(1, 1, KVP_DTYPE_BF16);
	ck_assert_msg(spec.token_bytes_total == kv_cases[_i].token_bytes, "%s: %llu, want %llu (%s)",
		      kv_cases[_i].name, (unsigned long long)spec.token_bytes_total,
		      (unsigned long long)kv_cases[_i].token_bytes, kv_cases[_i].arithmetic);
	ck_assert_uint_eq(spec.token_bytes, kv_cases[_i].token_bytes); /* tp = pp = 1 */
}
END_TEST

START_TEST(test_layer_kinds)
{
	load("gemma-3-27b"); /* pattern 6: full at i = 5, 11, ..., 59 -> 10 full, 52 sliding */
	build(1, 1, KVP_DTYPE_BF16);
	ck_assert_uint_eq(spec.count[KVP_LAYER_FULL], 10);
	ck_assert_uint_eq(spec.count[KVP_LAYER_SLIDING], 52);
	ck_assert_uint_eq(spec.layers[5].kind, KVP_LAYER_FULL);
	ck_assert_uint_eq(spec.layers[0].kind, KVP_LAYER_SLIDING);
	ck_assert_uint_eq(spec.layers[0].window, 1024);
	load("jamba-v0.1"); /* attention at i % 8 == 4: 4, 12, 20, 28 */
	build(1, 1, KVP_DTYPE_BF16);
	ck_assert_uint_eq(spec.count[KVP_LAYER_FULL], 4);
	ck_assert_uint_eq(spec.count[KVP_LAYER_MAMBA], 28);
	ck_assert_uint_eq(spec.layers[4].kind, KVP_LAYER_FULL);
	ck_assert_uint_eq(spec.layers[12].kind, KVP_LAYER_FULL);
	/* Mamba state per sequence: d_inner = 2 * 4096 = 8192; (4 - 1) * 8192 +
	 * 8192 * 16 = 155,648 elements * 2 B = 311,296 B per layer; x 28 = 8,716,288 B */
	ck_assert_uint_eq(spec.seq_bytes, 8716288);
	ck_assert_uint_eq(spec.layers[0].seq_bytes, 311296);
	load("gpt-oss-20b"); /* even layers sliding (W = 128): 12 + 12 */
	build(1, 1, KVP_DTYPE_BF16);
	ck_assert_uint_eq(spec.count[KVP_LAYER_SLIDING], 12);
	ck_assert_uint_eq(spec.count[KVP_LAYER_FULL], 12);
	ck_assert_uint_eq(spec.layers[0].kind, KVP_LAYER_SLIDING);
	ck_assert_uint_eq(spec.layers[1].kind, KVP_LAYER_FULL);
}
END_TEST

/* Tensor parallelism: heads per GPU = max(1, H_kv / tp); MLA not split. */
static const struct {
	const char *name;
	uint32_t tp;
	uint64_t token_bytes;   /* per GPU */
	uint32_t heads;
} tp_cases[] = {
	{"llama-3.1-70b", 2, 163840, 4},  /* 2*4*128*2 = 2,048 x 80 */
	{"llama-3.1-70b", 8, 40960, 1},   /* 2*1*128*2 = 512 x 80 = 40 KiB */
	{"llama-3.1-70b", 16, 40960, 1},  /* still one head per GPU: replicated x2 */
	{"llama-2-7b", 4, 131072, 8},     /* 524,288 / 4 */
	{"deepseek-v3", 8, 70272, 1},     /* the latent lives on every rank */
	{"qwen2.5-7b", 4, 14336, 1},      /* 4 KV heads / 4: 2*1*128*2 = 512 x 28 */
};

START_TEST(test_tensor_parallel)
{
	load(tp_cases[_i].name);
	build(tp_cases[_i].tp, 1, KVP_DTYPE_BF16);
	ck_assert_uint_eq(spec.token_bytes, tp_cases[_i].token_bytes);
	ck_assert_uint_eq(spec.kv_heads_per_gpu, tp_cases[_i].heads);
}
END_TEST

START_TEST(test_pipeline_parallel)
{
	load("llama-3.1-8b");
	/* 32 layers over 3 stages, vLLM get_pp_indices: 10 each, the remainder of 2
	 * added to stages 1 and 0 -> [11, 11, 10]; the worst is stage 0 (first tie). */
	build(1, 3, KVP_DTYPE_BF16);
	ck_assert_uint_eq(spec.num_layers, 11);
	ck_assert_uint_eq(spec.first_layer, 0);
	ck_assert_uint_eq(spec.token_bytes, 11 * 4096);
	ck_assert_uint_eq(spec.token_bytes_total, 131072);
	build(1, 2, KVP_DTYPE_BF16); /* 16 + 16 */
	ck_assert_uint_eq(spec.num_layers, 16);
	ck_assert_uint_eq(spec.token_bytes, 16 * 4096);
}
END_TEST

/* KV dtypes on Llama-2-7B (32 layers, 32 KV heads, d_h 128). */
static const struct {
	enum kvp_dtype kv;
	uint64_t token_bytes;
	const char *arithmetic;
} dtype_cases[] = {
	{KVP_DTYPE_FP32, 1048576, "2*32*128*4 * 32"},
	{KVP_DTYPE_FP16, 524288, "2*32*128*2 * 32"},
	{KVP_DTYPE_FP8, 262144, "2*32*128*1 * 32 (scalar scales per layer)"},
	{KVP_DTYPE_FP8_E5M2, 262144, "same bytes as e4m3"},
	{KVP_DTYPE_INT8, 270336, "262,144 + 32 layers * 2 * 32 heads * 4 B scales = 8,192"},
	{KVP_DTYPE_FP8_PTH, 270336, "as int8: + 2 * H_kv * 4 B per layer"},
	{KVP_DTYPE_INT4, 139264, "2*32*128*0.5 * 32 = 131,072 + 8,192 of fp16 scale+zero"},
	{KVP_DTYPE_NVFP4, 147456, "2*32*128 * (1/2 + 1/16) = 4,608 * 32"},
};

START_TEST(test_kv_dtypes)
{
	load("llama-2-7b");
	build(1, 1, dtype_cases[_i].kv);
	ck_assert_msg(spec.token_bytes == dtype_cases[_i].token_bytes, "%s: %llu, want %llu (%s)",
		      kvp_dtype_name(dtype_cases[_i].kv), (unsigned long long)spec.token_bytes,
		      (unsigned long long)dtype_cases[_i].token_bytes, dtype_cases[_i].arithmetic);
}
END_TEST

START_TEST(test_mla_fp8)
{
	load("deepseek-v3");
	build(1, 1, KVP_DTYPE_FP8);
	ck_assert_uint_eq(spec.token_bytes, 35136); /* 61 * 576 * 1 */
}
END_TEST

START_TEST(test_sequence_bytes)
{
	uint64_t v;
	load("gemma-3-27b");
	build(1, 1, KVP_DTYPE_BF16);
	/* 131,072 tokens, exact: full 10 * 8,192 B * 131,072 = 10 GiB = 10,737,418,240
	 * + sliding 52 * 8,192 * 1,024 = 436,207,616 -> 11,173,625,856 (10.4 GiB) */
	ck_assert_int_eq(kvp_spec_seq_bytes(&spec, 131072, 1, &v), KVP_STATUS_OK);
	ck_assert_uint_eq(v, 11173625856ULL);
	load("mistral-7b-v0.1");
	build(1, 1, KVP_DTYPE_BF16);
	/* 32,768 tokens, exact: 32 * 4,096 B * 4,096 window = 512 MiB */
	ck_assert_int_eq(kvp_spec_seq_bytes(&spec, 32768, 1, &v), KVP_STATUS_OK);
	ck_assert_uint_eq(v, 536870912ULL);
	/* blocks of 16: the window straddles ceil(4095/16) + 1 = 257 blocks = 4,112 tokens;
	 * 32 * 4,096 * 4,112 = 538,968,064 */
	ck_assert_int_eq(kvp_spec_seq_bytes(&spec, 32768, 16, &v), KVP_STATUS_OK);
	ck_assert_uint_eq(v, 538968064ULL);
	/* shorter than the window: 100 tokens -> 7 blocks of 16 = 112 tokens */
	ck_assert_int_eq(kvp_spec_seq_bytes(&spec, 100, 16, &v), KVP_STATUS_OK);
	ck_assert_uint_eq(v, 32ULL * 4096 * 112);
	load("llama-2-7b");
	build(1, 1, KVP_DTYPE_BF16);
	/* the seed's example: 2,048 tokens hold 2,048 * 512 KiB = 1 GiB */
	ck_assert_int_eq(kvp_spec_seq_bytes(&spec, 2048, 1, &v), KVP_STATUS_OK);
	ck_assert_uint_eq(v, 1ULL << 30);
	/* 2^60 tokens * 2^19 B overflows */
	ck_assert_int_eq(kvp_spec_seq_bytes(&spec, 1ULL << 60, 1, &v), KVP_STATUS_OVERFLOW);
	ck_assert_uint_eq(kvp_spec_seq_bytes(&spec, 0, 16, &v), KVP_STATUS_OK);
	ck_assert_uint_eq(v, 0);
}
END_TEST

START_TEST(test_weights)
{
	load("llama-2-7b"); /* 6,738,415,616 params, fp16 checkpoint: x 2 B */
	build(1, 1, KVP_DTYPE_AUTO);
	ck_assert_uint_eq(spec.weights_bytes_total, 13476831232ULL);
	ck_assert_uint_eq(spec.weights_bytes, 13476831232ULL);
	build(2, 1, KVP_DTYPE_AUTO); /* halved across two ranks */
	ck_assert_uint_eq(spec.weights_bytes, 13476831232ULL / 2);
	load("gpt-oss-120b");
	build(1, 1, KVP_DTYPE_AUTO);
	/* MXFP4 experts (4.25 bits) + bf16 rest: 60.77 GiB (architectures.md 3.2;
	 * OpenAI's model card: 60.8 GiB checkpoint) */
	ck_assert_double_eq_tol((double)spec.weights_bytes_total / KVP_GIB, 60.77, 0.01);
	load("gpt-oss-20b"); /* 12.82 GiB, same source */
	build(1, 1, KVP_DTYPE_AUTO);
	ck_assert_double_eq_tol((double)spec.weights_bytes_total / KVP_GIB, 12.82, 0.01);
	load("gemma-2-9b"); /* float32 checkpoint served in bf16: 9,241,705,984 * 2 */
	build(1, 1, KVP_DTYPE_AUTO);
	ck_assert_int_eq(spec.serving_dtype, KVP_DTYPE_BF16);
	ck_assert_uint_eq(spec.weights_bytes_total, 18483411968ULL);
	uint64_t w;
	/* GPTQ int4, group 128: 0.5 + 2.5/128 B/param -> 128 params = 66.5 B -> 67 */
	ck_assert_int_eq(kvp_weights_bytes(128, KVP_DTYPE_INT4_GPTQ, &w), KVP_STATUS_OK);
	ck_assert_uint_eq(w, 67);
	ck_assert_int_eq(kvp_weights_bytes(256, KVP_DTYPE_INT4_GPTQ, &w), KVP_STATUS_OK);
	ck_assert_uint_eq(w, 133); /* 256 * 0.51953125 */
	ck_assert_int_eq(kvp_weights_bytes(32, KVP_DTYPE_MXFP4, &w), KVP_STATUS_OK);
	ck_assert_uint_eq(w, 17); /* 16 B of nibbles + 1 scale byte */
	ck_assert_int_eq(kvp_weights_bytes(UINT64_MAX / 2, KVP_DTYPE_FP32, &w), KVP_STATUS_OVERFLOW);
}
END_TEST

/* Quantized layouts: bits per element plus scale bits per group. */
START_TEST(test_weights_format)
{
	uint64_t out;
	struct kvp_weights_format g128 = {4, 128, 20}; /* 532 bits per 128 elements */
	ck_assert_int_eq(kvp_weights_format_bytes(0, &g128, &out), KVP_STATUS_OK);
	ck_assert_uint_eq(out, 0);
	ck_assert_int_eq(kvp_weights_format_bytes(1, &g128, &out), KVP_STATUS_OK);
	ck_assert_uint_eq(out, 1);                 /* 4 + 20/128 bits -> 1 byte */
	ck_assert_int_eq(kvp_weights_format_bytes(128, &g128, &out), KVP_STATUS_OK);
	ck_assert_uint_eq(out, 67);                /* 532 bits = 66.5 B -> 67 */
	ck_assert_int_eq(kvp_weights_format_bytes(1024, &g128, &out), KVP_STATUS_OK);
	ck_assert_uint_eq(out, 532);               /* 8 groups of 66.5 B */
	struct kvp_weights_format chan = {8, 0, 0};
	ck_assert_int_eq(kvp_weights_format_bytes(UINT64_MAX, &chan, &out), KVP_STATUS_OK);
	ck_assert_uint_eq(out, UINT64_MAX);        /* one byte each, no overflow */
	/* 2^64 - 1 elements of 16 + 1 bits per group of 1: more bytes than 2^64 */
	struct kvp_weights_format wide = {16, 1, 1};
	ck_assert_int_eq(kvp_weights_format_bytes(UINT64_MAX, &wide, &out), KVP_STATUS_OVERFLOW);
	struct kvp_weights_format none = {0, 0, 0};
	ck_assert_int_eq(kvp_weights_format_bytes(8, &none, &out), KVP_STATUS_INVALID);
}
END_TEST

START_TEST(test_split_errors)
{
	struct kvp_error err = {0};
	load("llama-3.1-8b");
	/* 32 heads: tp 3 does not divide */
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 3, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "tp");
	/* 33 stages for 32 layers */
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 33}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "pp");
	/* mxfp4 is a weights format, not a KV cache format */
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_MXFP4, &spec, &err), KVP_STATUS_USAGE);
	load("falcon-7b"); /* 71 heads: only tp 1 or 71 */
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 2, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_INVALID);
}
END_TEST

START_TEST(test_profiles_all_load)
{
	char *names[256];
	size_t n = kvp_profile_list("models", names, 256);
	ck_assert_uint_ge(n, 20); /* the list of 20 models */
	for (size_t i = 0; i < n; i++) {
		load(names[i]);
		build(1, 1, KVP_DTYPE_AUTO);
		free(names[i]);
	}
	n = kvp_profile_list("gpus", names, 256);
	ck_assert_uint_ge(n, 12);
	for (size_t i = 0; i < n; i++) {
		struct kvp_gpu g;
		struct kvp_error err = {0};
		ck_assert_msg(kvp_gpu_load(names[i], &g, &err) == KVP_STATUS_OK, "%s: %s", names[i],
			      err.msg);
		ck_assert(g.memory_bytes > 0 && g.bandwidth_bps > 0 && g.bf16_flops > 0);
		free(names[i]);
	}
}
END_TEST

/* Qwen3-Next's Gated DeltaNet layers keep a fixed state per sequence (vLLM
 * gated_delta_net_state_shape): per layer (32/tp) x 128 x 128 state + (4 - 1) x
 * (2 x 16 x 128 + 32 x 128)/tp = 3 x 8,192/tp convolution elements, bf16:
 * tp 1: (524,288 + 24,576) x 2 B = 1,097,728 B x 36 layers = 39,518,208 B;
 * tp 2: half, 19,759,104 B.  The state does not grow with the context. */
START_TEST(test_linear_attention_state)
{
	struct kvp_error err = {0};
	uint64_t a, b;
	load("qwen3-next-80b-a3b");
	build(1, 1, KVP_DTYPE_AUTO);
	ck_assert_uint_eq(spec.count[KVP_LAYER_MAMBA], 36);
	ck_assert_uint_eq(spec.count[KVP_LAYER_FULL], 12);
	ck_assert_uint_eq(spec.seq_bytes, 39518208ULL);
	ck_assert_int_eq(kvp_spec_seq_bytes(&spec, 1000, 1, &a), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_spec_seq_bytes(&spec, 2000, 1, &b), KVP_STATUS_OK);
	/* only the 12 full layers grow: 1,000 more tokens x 24,576 B */
	ck_assert_uint_eq(b - a, 1000ULL * 24576);
	build(2, 1, KVP_DTYPE_AUTO);
	ck_assert_uint_eq(spec.seq_bytes, 19759104ULL);
	/* an fp32 recurrent state (vLLM --mamba-ssm-cache-dtype float32) at tp 1:
	 * (524,288 x 4 + 24,576 x 2) x 36 = 77,266,944 B */
	model.linear_state_dtype = KVP_DTYPE_FP32;
	build(1, 1, KVP_DTYPE_AUTO);
	ck_assert_uint_eq(spec.seq_bytes, 77266944ULL);
	/* value heads tp cannot split */
	model.linear_num_value_heads = 24;
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 16, .pp = 1},
					KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "tp");
	/* an incomplete linear section */
	model.linear_num_value_heads = 32;
	model.linear_conv_kernel = 0;
	ck_assert_int_eq(kvp_model_validate(&model, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "linear");
}
END_TEST

START_TEST(test_gpu_facts)
{
	struct kvp_gpu g;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_gpu_load("h100-sxm", &g, &err), KVP_STATUS_OK);
	/* CUDA runtime total, deviceQuery "81090 MBytes (85028896768 bytes)"; less than
	 * nvidia-smi's 81559 MiB = 81,559 * 1,048,576 = 85,520,809,984 B */
	ck_assert_uint_eq(g.memory_bytes, 85028896768ULL);
	ck_assert_uint_lt(g.memory_bytes, 81559ULL << 20);
	ck_assert_double_eq_tol(g.bandwidth_bps, 3.35e12, 1e6);
	ck_assert_double_eq_tol(g.bf16_flops, 989.4e12, 1e9); /* dense */
	ck_assert_int_eq(kvp_gpu_load("h200", &g, &err), KVP_STATUS_OK);
	/* torch total_memory=143156MB: 143,156 * 1,048,576 = 150,109,945,856 B = 139.80 GiB,
	 * not "141 GB" and not nvidia-smi's 143,771 MiB */
	ck_assert_uint_eq(g.memory_bytes, 143156ULL << 20);
	ck_assert_double_eq_tol(g.bandwidth_bps, 4.8e12, 1e6);
	/* torch total_memory=97285MB on an H20: 97,285 MiB; datasheet 4.0 TB/s, 148 dense */
	ck_assert_int_eq(kvp_gpu_load("h20", &g, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(g.memory_bytes, 97285ULL << 20);
	ck_assert_double_eq_tol(g.bandwidth_bps, 4.0e12, 1e6);
	ck_assert_double_eq_tol(g.bf16_flops, 148e12, 1e9);
	/* A100 80GB PCIe beside the SXM4 card (datasheet): 1,935 GB/s against 2,039 GB/s
	 * (memory clock 1512 MHz x 2 x 5120 bit / 8 = 1,935.36 GB/s), 300 W against 400 W,
	 * the same 312 dense BF16; deviceQuery 84974239744 bytes; a bridge joins 2 cards */
	ck_assert_int_eq(kvp_gpu_load("a100-80gb-pcie", &g, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(g.memory_bytes, 84974239744ULL);
	ck_assert_double_eq_tol(g.bandwidth_bps, 1.935e12, 1e6);
	ck_assert_double_eq_tol(g.bf16_flops, 312e12, 1e9);
	ck_assert_double_eq_tol(g.tdp_watts, 300, 1e-9);
	ck_assert_uint_eq(g.nvlink_domain, 2);
	ck_assert_int_eq(kvp_gpu_load("a100-80gb", &g, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(g.bandwidth_bps, 2.039e12, 1e6);
	ck_assert_double_eq_tol(g.tdp_watts, 400, 1e-9);
	/* GB200 NVL72: 720 PFLOPS FP8 sparse per rack / 72 GPUs / 2 = 5 PFLOPS dense;
	 * one 72-GPU NVLink domain, 4 GPUs per compute tray */
	ck_assert_int_eq(kvp_gpu_load("gb200", &g, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(g.fp8_flops, 720e15 / 72 / 2, 1e9);
	ck_assert_uint_eq(g.nvlink_domain, 72);
	ck_assert_uint_eq(g.node_gpus, 4);
	ck_assert_int_eq(kvp_gpu_load("no-such-gpu", &g, &err), KVP_STATUS_NOT_FOUND);
}
END_TEST

static Suite *model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *core = tcase_create("core");
	tcase_add_loop_test(core, test_kv_per_token, 0, sizeof kv_cases / sizeof kv_cases[0]);
	tcase_add_loop_test(core, test_tensor_parallel, 0, sizeof tp_cases / sizeof tp_cases[0]);
	tcase_add_loop_test(core, test_kv_dtypes, 0, sizeof dtype_cases / sizeof dtype_cases[0]);
	tcase_add_test(core, test_layer_kinds);
	tcase_add_test(core, test_pipeline_parallel);
	tcase_add_test(core, test_mla_fp8);
	tcase_add_test(core, test_sequence_bytes);
	tcase_add_test(core, test_weights);
	tcase_add_test(core, test_weights_format);
	tcase_add_test(core, test_profiles_all_load);
	tcase_add_test(core, test_gpu_facts);
	tcase_add_test(core, test_linear_attention_state);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_test(errors, test_split_errors);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(model_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
