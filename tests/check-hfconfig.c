/* check-hfconfig.c: the Hugging Face config.json importer against real config
 * files (tests/data/hf, sources in its README.md) and malformed ones
 * (tests/data/bad/hf-*.json).  Expected values are public model facts and the
 * hand arithmetic of ../shared/reference/architectures.md: KV bytes per token
 * from table 3.3 (bf16, b = 2, tp = pp = 1) and parameter counts from table 3.2,
 * which applies the section 4.1 formulas to the same configs.
 * Legend: L = layers, Nkv = KV heads, d = head dim, W = sliding window. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "read/hf-config.h"
#include "model/model.h"
#include "base/units.h"
#include "model/spec.h"

#ifndef KVP_SRCDIR
#define KVP_SRCDIR "."
#endif

static struct kvp_model model;
static struct kvp_spec spec;

static const char *data_path(const char *rel)
{
	static char buf[1024];
	const char *top = getenv("top_srcdir");
	snprintf(buf, sizeof buf, "%s/tests/data/%s", top && top[0] ? top : KVP_SRCDIR, rel);
	return buf;
}

static void load_path(const char *path)
{
	struct kvp_error err = {0};
	kvp_status st = kvp_hf_config_load(path, &model, &err);
	char msg[1200];
	kvp_error_format(&err, msg, sizeof msg);
	ck_assert_msg(st == KVP_STATUS_OK, "%s: %s", path, msg);
}

static void load(const char *dir)
{
	char rel[256];
	snprintf(rel, sizeof rel, "hf/%s/config.json", dir);
	load_path(data_path(rel));
}

static void build(uint32_t tp, uint32_t pp)
{
	struct kvp_error err = {0};
	kvp_status st = kvp_spec_build(&model, (struct kvp_parallel){.tp = tp, .pp = pp}, KVP_DTYPE_AUTO,
				       KVP_DTYPE_BF16, &spec, &err);
	ck_assert_msg(st == KVP_STATUS_OK, "%s: %s: %s", model.name, err.field, err.msg);
}

/* A JSON document in a temporary file named kvp-hf-XXXXXX.json. */
static char tmp_path[64];

static const char *write_tmp(const char *json)
{
	snprintf(tmp_path, sizeof tmp_path, "/tmp/kvp-hf-XXXXXX.json");
	int fd = mkstemps(tmp_path, 5);
	ck_assert_msg(fd >= 0, "mkstemps");
	size_t len = strlen(json);
	ck_assert_uint_eq((size_t)write(fd, json, len), len);
	close(fd);
	return tmp_path;
}

/* ------------------------------------------------------------ core */

static const struct {
	const char *dir;
	/* KV bytes per token, all layers, bf16 (table 3.3) */
	uint64_t token_bytes;
	const char *kv_arithmetic;
	uint32_t full, sliding, mla, mamba;
	uint32_t window;
	uint32_t kv_heads, head_dim;
	/* table 3.2 */
	uint64_t params, active, expert;
	const char *param_arithmetic;
} cases[] = {
	{"Llama-2-7b", 524288, "2*32*128*2 = 16,384 B x 32 layers = 524,288", 32, 0, 0, 0, 0, 32, 128,
	 6738415616, 6738415616, 0,
	 "2*V*H 262,144,000 + 32*(attn 67,108,864 + mlp 3*H*I 135,266,304 + norms 8,192) + 4,096"},
	{"Llama-3.1-8B", 131072, "2*8*128*2 = 4,096 B x 32 = 131,072", 32, 0, 0, 0, 0, 8, 128,
	 8030261248, 8030261248, 0,
	 "2*V*H 1,050,673,152 + 32*(attn 41,943,040 + mlp 176,160,768 + 8,192) + 4,096"},
	{"Mistral-7B-v0.1", 131072, "4,096 B x 32, every layer sliding W = 4096", 0, 32, 0, 0, 4096,
	 8, 128, 7241732096, 7241732096, 0,
	 "2*V*H 262,144,000 + 32*(41,943,040 + 176,160,768 + 8,192) + 4,096"},
	{"Mixtral-8x7B", 131072, "4,096 B x 32 (sliding_window null)", 32, 0, 0, 0, 0, 8, 128,
	 46702792704, 12879925248, 45097156608,
	 "experts 32*8*3*4096*14336 = 45,097,156,608; active keeps 2 of 8: "
	 "46,702,792,704 - 32*6*176,160,768 = 12,879,925,248"},
	{"Qwen2.5-7B-Instruct", 57344, "2*4*128*2 = 2,048 B x 28 (sliding_window 131072 inactive)",
	 28, 0, 0, 0, 0, 4, 128, 7615616512, 7615616512, 0,
	 "2*V*H 1,089,994,752 + 28*(attn 29,360,128 + qkv bias 4,608 + mlp 203,685,888 + 7,168) "
	 "+ 3,584"},
	{"Qwen3-30B-A3B", 98304,
	 "2*4*128*2 = 2,048 B x 48 = 98,304 (head_dim 128; hidden/heads = 64 would give 49,152)", 48,
	 0, 0, 0, 0, 4, 128, 30532122624, 3353032704, 28991029248,
	 "experts 48*128*3*2048*768 = 28,991,029,248; active keeps 8 of 128: "
	 "30,532,122,624 - 48*120*4,718,592 = 3,353,032,704"},
	{"gemma-2-9b", 344064, "2*8*256*2 = 8,192 B x 42 (21 full + 21 sliding, W 4096)", 21, 21, 0,
	 0, 4096, 8, 256, 9241705984, 9241705984, 0,
	 "tied V*H 917,504,000 + 42*(attn 51,380,224 + mlp 154,140,672 + 4 norms 14,336) + 3,584"},
	{"gemma-2-27b-it-gptq-int4", 376832, "2*16*128*2 = 8,192 B x 46 (23 full + 23 sliding)", 23,
	 23, 0, 0, 4096, 16, 128, 27227128320, 27227128320, 0,
	 "tied V*H 1,179,648,000 + 46*(attn 113,246,208 + mlp 509,607,936 + 18,432) + 4,608"},
	{"gemma-3-27b-it", 507904,
	 "2*16*128*2 = 8,192 B x 62 (10 full + 52 sliding, W 1024); full-only 81,920", 10, 52, 0,
	 0, 1024, 16, 128, 27009346304, 27009346304, 0,
	 "tied V*H 1,409,720,832 + 62*(attn 88,080,384 + q/k norm 256 + mlp 346,816,512 + "
	 "21,504) + 5,376"},
	{"Phi-3-mini-4k", 393216, "2*32*96*2 = 12,288 B x 32, every layer sliding W = 2047", 0, 32,
	 0, 0, 2047, 32, 96, 3821079552, 3821079552, 0,
	 "2*V*H 197,001,216 + 32*(attn 37,748,736 + mlp 75,497,472 + 6,144) + 3,072"},
	{"falcon-7b", 8192, "multi_query: 2*1*64*2 = 256 B x 32 = 8,192 (num_kv_heads 71 ignored)",
	 32, 0, 0, 0, 0, 1, 64, 6921720704, 6921720704, 0,
	 "tied V*H 295,479,296 + 32*(qkv 4544*73*64 + dense 4544^2 + mlp 2*4544*18176 + "
	 "LN 9,088) + final LN 9,088"},
	{"DeepSeek-V3", 70272, "MLA: (512 + 64)*2 = 1,152 B x 61 = 70,272", 0, 0, 61, 0, 0, 1, 192,
	 671026419200, 37552297472, 653908770816,
	 "MLA attn 187,107,328/layer; 3 dense + 58 MoE layers of 256 routed + 1 shared; "
	 "experts 58*256*3*7168*2048 = 653,908,770,816"},
	{"gpt-oss-20b", 49152, "2*8*64*2 = 2,048 B x 24 (12 full + 12 sliding, W 128)", 12, 12, 0, 0,
	 128, 8, 64, 20914757184, 4187440704, 19116933120,
	 "experts 24*32*(2880*5760 + 5760 + 2880*2880 + 2880) = 19,116,933,120; "
	 "active keeps 4 of 32"},
	{"Jamba-v0.1", 16384, "2*8*128*2 = 4,096 B x 4 attention layers (4, 12, 20, 28)", 4, 0, 0, 28,
	 0, 8, 128, 51570323328, 12110311296, 45097156608,
	 "16 MoE layers of 16 experts: 16*16*176,160,768 = 45,097,156,608; active: "
	 "51,570,323,328 - 16*14*176,160,768 = 12,110,311,296 (AI21: ~12 B)"},
	{"Kimi-VL-A3B-Instruct", 31104,
	 "MLA found from kv_lora_rank under a kimi_vl wrapper: (512 + 64)*2 = 1,152 B x 27 = 31,104 "
	 "(read as 16 heads of 128 it would be 2*16*128*2*27 = 221,184)", 0, 0, 27, 0, 0, 1, 192,
	 15960110208, 2914776192, 14394851328,
	 "Moonlight text model: 2*V*H 671,088,640 + final 2,048 + 27*(MLA 13,763,072 + norms 4,096) "
	 "+ dense layer 0 3*H*11264 69,206,016 + 26*(64+2 experts of 3*H*1408 8,650,752 + router "
	 "64*H + 64) = 15,960,110,208 (card: 16B total); active keeps 6 of 64: minus 26*58*8,650,752 "
	 "= 2,914,776,192 (card: 2.24B activated without the 0.67B embeddings)"},
	{"gpt2", 36864, "2*12*64*2 = 3,072 B x 12 = 36,864 (GPT-2 124M reference)", 12, 0, 0, 0, 0,
	 12, 64, 124439808, 124439808, 0,
	 "tied wte 38,597,376 + wpe 1024*768 + 12*(LN 3,072 + attn 2,362,368 + mlp 4,722,432) + "
	 "LN 1,536"},
};

START_TEST(test_table)
{
	load(cases[_i].dir);
	build(1, 1);
	ck_assert_str_eq(model.name, cases[_i].dir);
	ck_assert_msg(spec.token_bytes_total == cases[_i].token_bytes, "%s: %llu B/token, want %s",
		      cases[_i].dir, (unsigned long long)spec.token_bytes_total,
		      cases[_i].kv_arithmetic);
	ck_assert_uint_eq(spec.token_bytes, cases[_i].token_bytes); /* tp = pp = 1: all here */
	ck_assert_uint_eq(spec.count[KVP_LAYER_FULL], cases[_i].full);
	ck_assert_uint_eq(spec.count[KVP_LAYER_SLIDING], cases[_i].sliding);
	ck_assert_uint_eq(spec.count[KVP_LAYER_CHUNKED], 0);
	ck_assert_uint_eq(spec.count[KVP_LAYER_MLA], cases[_i].mla);
	ck_assert_uint_eq(spec.count[KVP_LAYER_MAMBA], cases[_i].mamba);
	ck_assert_uint_eq(model.sliding_window, cases[_i].window);
	for (uint32_t i = 0; i < spec.num_layers; i++)
		ck_assert_uint_eq(spec.layers[i].window,
				  spec.layers[i].kind == KVP_LAYER_SLIDING ? cases[_i].window : 0);
	ck_assert_uint_eq(model.num_kv_heads, cases[_i].kv_heads);
	ck_assert_uint_eq(model.head_dim, cases[_i].head_dim);
	ck_assert_msg(model.params == cases[_i].params, "%s: %llu params, want %llu = %s",
		      cases[_i].dir, (unsigned long long)model.params,
		      (unsigned long long)cases[_i].params, cases[_i].param_arithmetic);
	ck_assert_msg(model.active_params == cases[_i].active, "%s: %llu active, want %llu (%s)",
		      cases[_i].dir, (unsigned long long)model.active_params,
		      (unsigned long long)cases[_i].active, cases[_i].param_arithmetic);
	ck_assert_msg(model.expert_params == cases[_i].expert, "%s: %llu expert, want %llu (%s)",
		      cases[_i].dir, (unsigned long long)model.expert_params,
		      (unsigned long long)cases[_i].expert, cases[_i].param_arithmetic);
}
END_TEST

START_TEST(test_path_and_names)
{
	load("Llama-2-7b");
	char want[1024];
	snprintf(want, sizeof want, "%s", data_path("hf/Llama-2-7b/config.json"));
	ck_assert_str_eq(model.path, want);
	ck_assert_str_eq(model.name, "Llama-2-7b");            /* parent directory */
	ck_assert_str_eq(model.hf_id, "meta-llama/Llama-2-7b-hf"); /* _name_or_path */
	ck_assert_str_eq(model.family, "llama");
	ck_assert_uint_eq(model.max_context, 4096);
	load("Phi-3-mini-4k"); /* "_name_or_path": "Phi-3-mini-4k-instruct" is no hub id */
	ck_assert_str_eq(model.hf_id, "");
	load_path(write_tmp("{\"num_hidden_layers\": 1, \"hidden_size\": 8, "
			    "\"num_attention_heads\": 1, \"vocab_size\": 2, "
			    "\"intermediate_size\": 4}"));
	ck_assert_int_eq(strncmp(model.name, "kvp-hf-", 7), 0); /* the file stem */
	ck_assert_ptr_null(strstr(model.name, ".json"));
	unlink(tmp_path);
}
END_TEST

START_TEST(test_falcon_multi_query)
{
	/* RW naming (n_layer, n_head), multi_query true, new_decoder_architecture
	 * absent: one KV head although num_kv_heads says 71 */
	load("falcon-7b");
	ck_assert_uint_eq(model.num_layers, 32);
	ck_assert_uint_eq(model.num_heads, 71);
	ck_assert_uint_eq(model.num_kv_heads, 1);
	ck_assert_uint_eq(model.head_dim, 64);              /* 4544 / 71 */
	ck_assert_uint_eq(model.intermediate_size, 18176);  /* 4 * 4544, implicit */
	ck_assert(model.tie_word_embeddings);               /* PretrainedConfig default */
	ck_assert_uint_eq(model.max_context, 2048);         /* FalconConfig default */
	build(1, 1);
	ck_assert_uint_eq(spec.kv_heads_per_gpu, 1);
	ck_assert_uint_eq(spec.layers[0].token_bytes, 256); /* 2*1*64*2 */
}
END_TEST

START_TEST(test_falcon_tp)
{
	load("falcon-7b"); /* 71 heads: no tensor-parallel split but 1 or 71 */
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 8, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_BF16, &spec, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "tp");
}
END_TEST

START_TEST(test_gemma3_defaults)
{
	/* the official text_config omits vocab_size, sliding_window_pattern,
	 * tie_word_embeddings and max_position_embeddings: class defaults apply */
	load("gemma-3-27b-it");
	ck_assert_str_eq(model.family, "gemma3_text");
	ck_assert_uint_eq(model.vocab_size, 262208);
	ck_assert(model.tie_word_embeddings);
	ck_assert_uint_eq(model.max_context, 131072);
	ck_assert_int_eq(model.dtype, KVP_DTYPE_BF16);      /* top-level torch_dtype */
	ck_assert_uint_eq(model.num_layers, 62);
	ck_assert_uint_eq(model.head_dim, 128);             /* not 5376 / 32 = 168 */
	/* pattern 6: full where (i + 1) % 6 == 0: 5, 11, ..., 59 */
	for (uint32_t i = 0; i < 62; i++)
		ck_assert_uint_eq(model.layers[i],
				  (i + 1) % 6 ? KVP_LAYER_SLIDING : KVP_LAYER_FULL);
	build(1, 1);
	/* full-only bytes: 10 layers x 8,192 = 81,920 (table 3.3) */
	ck_assert_uint_eq(spec.kind_token_bytes[KVP_LAYER_FULL], 81920);
	ck_assert_uint_eq(spec.layers[0].window, 1024);
}
END_TEST

START_TEST(test_layer_patterns)
{
	load("gemma-2-9b"); /* even i sliding */
	ck_assert_uint_eq(model.layers[0], KVP_LAYER_SLIDING);
	ck_assert_uint_eq(model.layers[1], KVP_LAYER_FULL);
	ck_assert_uint_eq(model.layers[41], KVP_LAYER_FULL);
	load("gpt-oss-20b"); /* layer_types: even i sliding */
	ck_assert_uint_eq(model.layers[0], KVP_LAYER_SLIDING);
	ck_assert_uint_eq(model.layers[23], KVP_LAYER_FULL);
	load("Qwen2.5-7B-Instruct"); /* use_sliding_window false: no window at all */
	ck_assert_uint_eq(model.sliding_window, 0);
	load("Jamba-v0.1"); /* attention at i % 8 == 4 */
	for (uint32_t i = 0; i < 32; i++)
		ck_assert_uint_eq(model.layers[i], i % 8 == 4 ? KVP_LAYER_FULL : KVP_LAYER_MAMBA);
	ck_assert_uint_eq(model.mamba_d_state, 16);
	ck_assert_uint_eq(model.mamba_d_conv, 4);
	ck_assert_uint_eq(model.mamba_expand, 2);
	build(1, 1);
	/* d_inner 2*4096 = 8192; (conv 8192*3 + ssm 8192*16) * 2 B = 311,296 x 28
	 * = 8,716,288 B per sequence (table 3.3) */
	ck_assert_uint_eq(spec.seq_bytes, 8716288);
}
END_TEST

START_TEST(test_dtypes)
{
	load("Llama-2-7b");
	ck_assert_int_eq(model.dtype, KVP_DTYPE_FP16);
	ck_assert_int_eq(model.weights_dtype, KVP_DTYPE_AUTO);
	load("gemma-2-9b"); /* base checkpoint in float32, served in bf16 */
	ck_assert_int_eq(model.dtype, KVP_DTYPE_FP32);
	ck_assert_int_eq(kvp_model_serving_dtype(&model, KVP_DTYPE_AUTO), KVP_DTYPE_BF16);
	load("DeepSeek-V3"); /* quant_method fp8, block 128x128 */
	ck_assert_int_eq(model.dtype, KVP_DTYPE_BF16);
	ck_assert_int_eq(model.weights_dtype, KVP_DTYPE_FP8);
	ck_assert_int_eq(model.expert_dtype, KVP_DTYPE_AUTO);
	load("gpt-oss-20b"); /* no torch_dtype: float32 to vLLM; MXFP4 experts only */
	ck_assert_int_eq(model.dtype, KVP_DTYPE_FP32);
	ck_assert_int_eq(model.weights_dtype, KVP_DTYPE_AUTO);
	ck_assert_int_eq(model.expert_dtype, KVP_DTYPE_MXFP4);
	ck_assert_uint_eq(model.moe_num_experts, 32);
	ck_assert_uint_eq(model.moe_experts_per_token, 4);
	load("gemma-2-27b-it-gptq-int4"); /* quant_method gptq, bits 4 */
	ck_assert_int_eq(model.weights_dtype, KVP_DTYPE_INT4_GPTQ);
	load_path(write_tmp("{\"model_type\": \"qwen2\", \"num_hidden_layers\": 2, "
			    "\"hidden_size\": 64, \"num_attention_heads\": 4, "
			    "\"num_key_value_heads\": 2, \"intermediate_size\": 128, "
			    "\"vocab_size\": 100, \"dtype\": \"bfloat16\", "
			    "\"quantization_config\": {\"quant_method\": \"awq\", \"bits\": 4}}"));
	unlink(tmp_path);
	ck_assert_int_eq(model.dtype, KVP_DTYPE_BF16); /* newer configs say "dtype" */
	ck_assert_int_eq(model.weights_dtype, KVP_DTYPE_INT4_AWQ);
}
END_TEST

START_TEST(test_mla)
{
	load("DeepSeek-V3");
	ck_assert_uint_eq(model.mla_kv_lora_rank, 512);
	ck_assert_uint_eq(model.mla_rope_dim, 64);
	ck_assert_uint_eq(model.mla_q_lora_rank, 1536); /* "q_lora_rank": 1536 */
	ck_assert_uint_eq(model.rotary_dim, 0);         /* MLA: qk_rope_head_dim */
	ck_assert_uint_eq(model.num_kv_heads, 1); /* num_key_value_heads 128 is a decoy */
	ck_assert_uint_eq(model.moe_num_experts, 256);
	ck_assert_uint_eq(model.moe_intermediate_size, 2048);
	build(8, 1); /* the latent is not split: 70,272 B/token on every rank */
	ck_assert_uint_eq(spec.token_bytes, 70272);
	ck_assert_uint_eq(spec.kv_heads_per_gpu, 1);
}
END_TEST

/* Rules checked on small documents written here: each value is hand arithmetic. */
/* Qwen3-Next (qwen3_next): Gated DeltaNet layers read as fixed-state layers
 * instead of refused.  The published counts of the model: 79,674,391,296
 * parameters, 3,874,929,408 active (10 routed + 1 shared expert).  Layers:
 * full every 4th (36 linear + 12 full).  State per linear layer, bf16:
 * (32 x 128 x 128 + 3 x (2 x 16 x 128 + 32 x 128)) x 2 B = 1,097,728 B. */
/* A two-layer qwen3 config of 1,024 positions with `extra` added, loaded. */
static void load_small_qwen3(const char *extra)
{
	char json[512];
	snprintf(json, sizeof json,
		 "{\"model_type\": \"qwen3\", \"num_hidden_layers\": 2, "
		 "\"hidden_size\": 2048, \"num_attention_heads\": 16, \"head_dim\": 256, "
		 "\"num_key_value_heads\": 2, \"intermediate_size\": 128, "
		 "\"vocab_size\": 100, \"max_position_embeddings\": 1024, %s}", extra);
	load_path(write_tmp(json));
	unlink(tmp_path);
}

START_TEST(test_qwen3_next)
{
	load("Qwen3-Next-80B-A3B");
	ck_assert_uint_eq(model.params, 79674391296ULL);
	ck_assert_uint_eq(model.active_params, 3874929408ULL);
	ck_assert_uint_eq(model.linear_num_value_heads, 32);
	ck_assert_uint_eq(model.layers[3], KVP_LAYER_FULL);
	ck_assert_uint_eq(model.layers[4], KVP_LAYER_MAMBA);
	build(1, 1);
	ck_assert_uint_eq(spec.count[KVP_LAYER_MAMBA], 36);
	ck_assert_uint_eq(spec.seq_bytes, 36ULL * 1097728);
	ck_assert_uint_eq(spec.token_bytes, 12ULL * 2 * 2 * 256 * 2);
	/* the rotary dimension: "partial_rotary_factor": 0.25 of head_dim 256 =
	 * 64, at the top (Qwen3-Next's config) or in rope_parameters
	 * (transformers 5); "rotary_pct" (GPT-NeoX) the same; 1.0 or none: the
	 * whole head, kept as 0 */
	static const char *const rope[] = {
		"\"partial_rotary_factor\": 0.25",
		"\"rope_parameters\": {\"rope_type\": \"default\", \"partial_rotary_factor\": 0.25}",
		"\"rotary_pct\": 0.25",
		"\"partial_rotary_factor\": 1.0",
		"\"rope_scaling\": null",
	};
	static const uint32_t want[] = {64, 64, 64, 0, 0};
	for (size_t i = 0; i < sizeof rope / sizeof rope[0]; i++) {
		load_small_qwen3(rope[i]);
		ck_assert_msg(model.rotary_dim == want[i], "%s: rotary_dim %u, want %u", rope[i],
			      model.rotary_dim, want[i]);
	}
	/* the rotary cache's length under rope_scaling, as vLLM 0.19's get_rope
	 * builds it: "linear" max_position 1,024 x 2.5 = 2,560
	 * (linear_scaling_rope.py:90); "dynamic" x 4 = 4,096
	 * (dynamic_ntk_scaling_rope.py:56); "yarn" original 512 x 4 = 2,048
	 * (yarn_scaling_rope.py:78, original_max_position_embeddings); yarn with
	 * mrope_section (MRotaryEmbedding), "llama3" and "default" keep
	 * max_position (0) */
	static const char *const scal[] = {
		"\"rope_scaling\": {\"rope_type\": \"linear\", \"factor\": 2.5}",
		"\"rope_scaling\": {\"type\": \"dynamic\", \"factor\": 4}",
		"\"rope_parameters\": {\"rope_type\": \"yarn\", \"factor\": 4.0, "
		"\"original_max_position_embeddings\": 512}",
		"\"rope_scaling\": {\"rope_type\": \"yarn\", \"factor\": 4.0, "
		"\"original_max_position_embeddings\": 512, \"mrope_section\": [16, 24, 24]}",
		"\"rope_scaling\": {\"rope_type\": \"llama3\", \"factor\": 8.0}",
		"\"rope_scaling\": {\"rope_type\": \"default\"}",
	};
	static const uint64_t want_pos[] = {2560, 4096, 2048, 0, 0, 0};
	for (size_t i = 0; i < sizeof scal / sizeof scal[0]; i++) {
		load_small_qwen3(scal[i]);
		ck_assert_msg(model.rotary_cache_positions == want_pos[i],
			      "%s: rotary_cache_positions %llu, want %llu", scal[i],
			      (unsigned long long)model.rotary_cache_positions,
			      (unsigned long long)want_pos[i]);
		ck_assert(!model.rotary_local_cache);
	}
	/* real configs: Gemma 3 27B text_config "rope_scaling": linear, factor 8,
	 * max_position the class default 131,072: 1,048,576, and its sliding
	 * layers' own cache; gpt-oss-20b yarn 4,096 x 32 = 131,072; DeepSeek-V3
	 * yarn 4,096 x 40 = 163,840 (vLLM's deepseek_v2.py:506 renames it
	 * "deepseek_yarn", whose cache is the same original x factor:
	 * deepseek_scaling_rope.py:104) */
	load("gemma-3-27b-it");
	ck_assert_uint_eq(model.rotary_cache_positions, 1048576);
	ck_assert(model.rotary_local_cache);
	load("gpt-oss-20b");
	ck_assert_uint_eq(model.rotary_cache_positions, 131072);
	ck_assert(!model.rotary_local_cache);
	load("DeepSeek-V3");
	ck_assert_uint_eq(model.rotary_cache_positions, 163840);
	/* linear layers without their shape are still an error, naming the key */
	struct kvp_error err = {0};
	const char *p = write_tmp("{\"model_type\": \"qwen3_next\", \"num_hidden_layers\": 4, "
				  "\"hidden_size\": 64, \"num_attention_heads\": 4, "
				  "\"num_key_value_heads\": 2, \"intermediate_size\": 128, "
				  "\"vocab_size\": 100, \"max_position_embeddings\": 1024, "
				  "\"linear_key_head_dim\": 16}");
	ck_assert_int_eq(kvp_hf_config_load(p, &model, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "linear_num_key_heads");
}
END_TEST

START_TEST(test_small_documents)
{
	/* one layer, H 8, 1 head: 2*V*H 32 + attn 3*64 + 64 + mlp 3*8*4 96 + norms 16
	 * + final 8 = 408 params; KV 2*1*8*2 = 32 B/token.  JSON nulls read as
	 * absent: head_dim -> 8 / 1, num_key_value_heads -> num_attention_heads. */
	load_path(write_tmp("{\"model_type\": \"llama\", \"num_hidden_layers\": 1, "
			    "\"hidden_size\": 8, \"num_attention_heads\": 1, \"vocab_size\": 2, "
			    "\"intermediate_size\": 4, \"head_dim\": null, "
			    "\"num_key_value_heads\": null, \"sliding_window\": null}"));
	unlink(tmp_path);
	ck_assert_uint_eq(model.params, 408);
	ck_assert_uint_eq(model.head_dim, 8);
	ck_assert_uint_eq(model.num_kv_heads, 1);
	ck_assert_int_eq(model.dtype, KVP_DTYPE_FP32); /* no dtype: float32 */
	build(1, 1);
	ck_assert_uint_eq(spec.token_bytes_total, 32);

	/* Qwen2 with use_sliding_window: layers i >= max_window_layers (2) slide */
	load_path(write_tmp("{\"model_type\": \"qwen2\", \"num_hidden_layers\": 4, "
			    "\"hidden_size\": 64, \"num_attention_heads\": 4, "
			    "\"num_key_value_heads\": 2, \"intermediate_size\": 128, "
			    "\"vocab_size\": 100, \"use_sliding_window\": true, "
			    "\"sliding_window\": 32, \"max_window_layers\": 2}"));
	unlink(tmp_path);
	ck_assert_uint_eq(model.layers[1], KVP_LAYER_FULL);
	ck_assert_uint_eq(model.layers[2], KVP_LAYER_SLIDING);
	ck_assert_uint_eq(model.layers[3], KVP_LAYER_SLIDING);
	ck_assert_uint_eq(model.sliding_window, 32);

	/* Llama 4 behind text_config: attention_chunk_size with the default
	 * NoPE interval 4 -> layers 3 and 7 global, the other 6 chunked;
	 * KV 2*8*128*2 = 4,096 B x 8 = 32,768 */
	load_path(write_tmp("{\"model_type\": \"llama4\", \"text_config\": {"
			    "\"model_type\": \"llama4_text\", \"num_hidden_layers\": 8, "
			    "\"hidden_size\": 5120, \"num_attention_heads\": 40, "
			    "\"num_key_value_heads\": 8, \"head_dim\": 128, "
			    "\"vocab_size\": 202048, \"intermediate_size\": 8192, "
			    "\"intermediate_size_mlp\": 16384, \"num_local_experts\": 16, "
			    "\"num_experts_per_tok\": 1, \"interleave_moe_layer_step\": 1, "
			    "\"attention_chunk_size\": 8192}}"));
	unlink(tmp_path);
	build(1, 1);
	ck_assert_uint_eq(spec.count[KVP_LAYER_CHUNKED], 6);
	ck_assert_uint_eq(spec.count[KVP_LAYER_FULL], 2);
	ck_assert_uint_eq(model.layers[3], KVP_LAYER_FULL);
	ck_assert_uint_eq(model.chunk_size, 8192);
	ck_assert_uint_eq(spec.token_bytes_total, 32768);
	ck_assert_uint_eq(model.expert_params, 8ULL * 16 * 3 * 5120 * 8192);

	/* microsoft/phi-2's config (model_type phi): one LayerNorm per parallel
	 * block, biased qkv/dense/fc1/fc2 and a biased, untied LM head:
	 * 2*V*H 262,144,000 + lm_head bias 51,200 + final LN 5,120 + 32 *
	 * (qkv 2560*7680 + 7680, dense 2560^2 + 2560, fc1/fc2 2*2560*10240 +
	 * 10240 + 2560, LN 5,120 = 78,671,360) = 2,779,683,840 (the 2.78B of
	 * its card; a Llama-style count would say 3.1B) */
	load_path(write_tmp("{\"model_type\": \"phi\", \"hidden_size\": 2560, "
			    "\"intermediate_size\": 10240, \"num_hidden_layers\": 32, "
			    "\"num_attention_heads\": 32, \"num_key_value_heads\": 32, "
			    "\"vocab_size\": 51200, \"max_position_embeddings\": 2048, "
			    "\"partial_rotary_factor\": 0.4, \"tie_word_embeddings\": false, "
			    "\"torch_dtype\": \"float16\"}"));
	unlink(tmp_path);
	ck_assert_uint_eq(model.params, 2779683840ULL);
	/* its rotary dimension as vLLM's get_rope takes it: int(80 x 0.4) = 32 */
	ck_assert_uint_eq(model.rotary_dim, 32);

	/* GPTBigCode-style multi_query on a non-Falcon model: one KV head */
	load_path(write_tmp("{\"model_type\": \"gpt_bigcode\", \"n_layer\": 2, \"n_embd\": 64, "
			    "\"n_head\": 4, \"vocab_size\": 10, \"intermediate_size\": 256, "
			    "\"multi_query\": true}"));
	unlink(tmp_path);
	ck_assert_uint_eq(model.num_kv_heads, 1);

	/* Falcon-40B style: new_decoder_architecture keeps num_kv_heads */
	load_path(write_tmp("{\"model_type\": \"falcon\", \"num_hidden_layers\": 2, "
			    "\"hidden_size\": 512, \"num_attention_heads\": 8, \"num_kv_heads\": 2, "
			    "\"new_decoder_architecture\": true, \"multi_query\": true, "
			    "\"vocab_size\": 10}"));
	unlink(tmp_path);
	ck_assert_uint_eq(model.num_kv_heads, 2);

	/* MPT: attn_config.kv_n_heads wins over the top-level keys */
	load_path(write_tmp("{\"model_type\": \"mpt\", \"n_layers\": 2, \"num_hidden_layers\": 2, "
			    "\"hidden_size\": 64, \"num_attention_heads\": 8, "
			    "\"num_key_value_heads\": 8, \"attn_config\": {\"kv_n_heads\": 2}, "
			    "\"vocab_size\": 10, \"intermediate_size\": 128}"));
	unlink(tmp_path);
	ck_assert_uint_eq(model.num_kv_heads, 2);
}
END_TEST

START_TEST(test_llama4_empty_no_rope_layers)
{
	/* "no_rope_layers": [] is derived as transformers does: layer i has
	 * RoPE (chunked) unless (i + 1) % 4 == 0 -> 36 chunked + 12 global;
	 * KV 2*8*128*2 = 4,096 B x 48 = 196,608 B/token */
	load("Llama-4-Scout-17B-16E");
	ck_assert_uint_eq(model.num_warnings, 0);
	build(1, 1);
	ck_assert_uint_eq(spec.count[KVP_LAYER_CHUNKED], 36);
	ck_assert_uint_eq(spec.count[KVP_LAYER_FULL], 12);
	for (uint32_t i = 0; i < 48; i++)
		ck_assert_uint_eq(model.layers[i],
				  (i + 1) % 4 ? KVP_LAYER_CHUNKED : KVP_LAYER_FULL);
	ck_assert_uint_eq(model.chunk_size, 8192);
	ck_assert_uint_eq(spec.token_bytes_total, 196608);
	/* 2*V*H 2,068,971,520 + H + 48*(attn 62,914,560 + norms 10,240 + 16
	 * experts of 3*H*8192 125,829,120 + shared 125,829,120 + router 16*H)
	 * = 107,769,861,120 (card: 109B with the vision tower; 17B active) */
	ck_assert_uint_eq(model.params, 107769861120ULL);
	ck_assert_uint_eq(model.active_params, 17172894720ULL);
}
END_TEST

/* A warning names the file, the line and column of the field, and the field. */
static void assert_warning(const char *path, uint32_t index, int line, int col, const char *field)
{
	ck_assert_uint_gt(model.num_warnings, index);
	char want[1200];
	snprintf(want, sizeof want, "%s:%d:%d: warning: %s: ", path, line, col, field);
	ck_assert_msg(strncmp(model.warnings[index], want, strlen(want)) == 0, "got '%s', want '%s...'",
		      model.warnings[index], want);
}

START_TEST(test_contradictions_warn)
{
	/* MLA fields beside 4 grouped KV heads for 16 heads: sized as MLA,
	 * 576*2 = 1,152 B x 2 layers = 2,304 B/token, and a warning at the
	 * num_key_value_heads value (line 7, column 26) */
	const char *p = write_tmp("{\"model_type\": \"kimi_vl\",\n"
				  "\"text_config\": {\n"
				  "  \"num_hidden_layers\": 2,\n"
				  "  \"hidden_size\": 2048,\n"
				  "  \"num_attention_heads\": 16,\n"
				  "  \"vocab_size\": 100,\n"
				  "  \"num_key_value_heads\": 4,\n"
				  "  \"kv_lora_rank\": 512, \"qk_rope_head_dim\": 64,\n"
				  "  \"qk_nope_head_dim\": 128, \"v_head_dim\": 128,\n"
				  "  \"intermediate_size\": 64}}\n");
	load_path(p);
	assert_warning(p, 0, 7, 26, "num_key_value_heads");
	ck_assert_uint_eq(model.num_warnings, 1);
	build(1, 1);
	ck_assert_uint_eq(spec.token_bytes_total, 2304);
	unlink(tmp_path);

	/* kv_lora_rank in a llama: the llama code ignores it; full heads
	 * 2*4*64*2 = 1,024 B x 1 layer, warning at the key's value (3:17) */
	p = write_tmp("{\"model_type\": \"llama\", \"num_hidden_layers\": 1,\n"
		      "\"hidden_size\": 256, \"num_attention_heads\": 4, \"vocab_size\": 10,\n"
		      "\"kv_lora_rank\": 512, \"qk_rope_head_dim\": 64,\n"
		      "\"intermediate_size\": 64}\n");
	load_path(p);
	assert_warning(p, 0, 3, 17, "kv_lora_rank");
	build(1, 1);
	ck_assert_uint_eq(spec.token_bytes_total, 1024);
	ck_assert_uint_eq(spec.count[KVP_LAYER_MLA], 0);
	unlink(tmp_path);

	/* a vision tower without its dimensions: warning at its object (2:18) */
	p = write_tmp("{\"model_type\": \"llama\", \"num_hidden_layers\": 1,\n"
		      "\"vision_config\": {\"patch_size\": 14},\n"
		      "\"hidden_size\": 256, \"num_attention_heads\": 4, \"vocab_size\": 10,\n"
		      "\"intermediate_size\": 64}\n");
	load_path(p);
	assert_warning(p, 0, 2, 18, "vision_config");
	unlink(tmp_path);

	/* the real files: nothing to say */
	load("DeepSeek-V3"); /* 128 KV heads = 128 heads beside MLA: no contradiction */
	ck_assert_uint_eq(model.num_warnings, 0);
	load("Kimi-VL-A3B-Instruct");
	ck_assert_str_eq(model.family, "kimi_vl");
	ck_assert(!model.tie_word_embeddings);
	/* "q_lora_rank": null: queries projected directly, nothing whole for them */
	ck_assert_uint_eq(model.mla_q_lora_rank, 0);
}
END_TEST

/* Quantized checkpoints: Llama-3.1-8B's dimensions (table 3.2: 8,030,261,248
 * params, of which 2*V*H = 1,050,673,152 embeddings and LM head kept in bf16,
 * leaving D = 6,979,588,096) under each quant_method.  Bytes = 2 * 1,050,673,152
 * + ceil(D * (bits * g + scale bits) / (8 * g)). */
static const struct {
	const char *quant;  /* the quantization_config object */
	uint64_t weights_bytes;
	enum kvp_dtype dtype;
	const char *arithmetic;
} quants[] = {
	{"{\"quant_method\": \"compressed-tensors\", \"format\": \"pack-quantized\", "
	 "\"ignore\": [\"lm_head\"], \"config_groups\": {\"group_0\": {\"targets\": [\"Linear\"], "
	 "\"weights\": {\"num_bits\": 4, \"type\": \"int\", \"strategy\": \"group\", "
	 "\"group_size\": 128, \"symmetric\": true}}}}",
	 5700196416ULL, KVP_DTYPE_INT4, "W4A16: D * (512 + 16 bf16 scale) / 1024 + 2,101,346,304"},
	{"{\"quant_method\": \"compressed-tensors\", \"format\": \"float-quantized\", "
	 "\"config_groups\": {\"group_0\": {\"weights\": {\"num_bits\": 8, \"type\": \"float\", "
	 "\"strategy\": \"channel\", \"symmetric\": true}, \"input_activations\": "
	 "{\"num_bits\": 8, \"type\": \"float\", \"dynamic\": true}}}}",
	 9080934400ULL, KVP_DTYPE_FP8, "FP8-dynamic: D * 1 + 2,101,346,304"},
	{"{\"quant_method\": \"compressed-tensors\", \"format\": \"nvfp4-pack-quantized\", "
	 "\"config_groups\": {\"group_0\": {\"weights\": {\"num_bits\": 4, \"type\": \"float\", "
	 "\"strategy\": \"tensor_group\", \"group_size\": 16, \"symmetric\": true}}}}",
	 6027364608ULL, KVP_DTYPE_NVFP4, "NVFP4: D * (64 + 8 fp8 scale) / 128 + 2,101,346,304"},
	{"{\"quant_method\": \"modelopt\", \"quant_algo\": \"NVFP4\", \"group_size\": 16, "
	 "\"exclude_modules\": [\"lm_head\"]}",
	 6027364608ULL, KVP_DTYPE_NVFP4, "modelopt NVFP4: as above"},
	{"{\"quant_method\": \"modelopt\", \"quant_algo\": \"FP8\"}", 9080934400ULL, KVP_DTYPE_FP8,
	 "modelopt FP8: D + 2,101,346,304"},
	{"{\"quant_method\": \"fbgemm_fp8\", \"modules_to_not_convert\": [\"lm_head\"]}",
	 9080934400ULL, KVP_DTYPE_FP8, "fbgemm_fp8: D + 2,101,346,304"},
	{"{\"quant_method\": \"bitsandbytes\", \"load_in_4bit\": true, "
	 "\"bnb_4bit_quant_type\": \"nf4\", \"bnb_4bit_use_double_quant\": true}",
	 5701900417ULL, KVP_DTYPE_INT4,
	 "nf4 + double quant: per 16,384 elements 256 int8 absmax + 1 fp32: "
	 "ceil(D * (65,536 + 2,080) / 131,072) + 2,101,346,304"},
	{"{\"quant_method\": \"bitsandbytes\", \"load_in_4bit\": true}", 6027364608ULL,
	 KVP_DTYPE_INT4, "nf4: fp32 absmax per 64 = D * (256 + 32) / 512 + 2,101,346,304"},
	{"{\"quant_method\": \"bitsandbytes\", \"load_in_8bit\": true}", 9080934400ULL,
	 KVP_DTYPE_INT8, "LLM.int8: D + 2,101,346,304"},
	{"{\"quant_method\": \"gptq\", \"bits\": 4, \"group_size\": 128, \"desc_act\": false}",
	 5727460432ULL, KVP_DTYPE_INT4_GPTQ,
	 "GPTQ: fp16 scale + 4-bit zero per 128: D * 532 / 1024 + 2,101,346,304"},
	{"{\"quant_method\": \"gptq\", \"bits\": 4, \"group_size\": -1}", 5591140352ULL,
	 KVP_DTYPE_INT4_GPTQ, "GPTQ per channel: D / 2 + 2,101,346,304"},
	{"{\"quant_method\": \"awq\", \"w_bit\": 4, \"q_group_size\": 64, \"zero_point\": false}",
	 5809252480ULL, KVP_DTYPE_INT4_AWQ, "AWQ g64 no zero: D * 272 / 512 + 2,101,346,304"},
};

static const char *llama8b_with(const char *quant)
{
	static char buf[2048];
	snprintf(buf, sizeof buf,
		 "{\"model_type\": \"llama\", \"num_hidden_layers\": 32, \"hidden_size\": 4096, "
		 "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, "
		 "\"intermediate_size\": 14336, \"vocab_size\": 128256, "
		 "\"torch_dtype\": \"bfloat16\", \"quantization_config\": %s}", quant);
	return write_tmp(buf);
}

START_TEST(test_quantization)
{
	load_path(llama8b_with(quants[_i].quant));
	unlink(tmp_path);
	ck_assert_uint_eq(model.params, 8030261248ULL);
	ck_assert_int_eq(model.weights_dtype, quants[_i].dtype);
	ck_assert_uint_eq(model.num_warnings, 0);
	build(1, 1);
	ck_assert_msg(spec.weights_bytes == quants[_i].weights_bytes, "%s: %llu B, want %llu = %s",
		      quants[_i].quant, (unsigned long long)spec.weights_bytes,
		      (unsigned long long)quants[_i].weights_bytes, quants[_i].arithmetic);
}
END_TEST

/* Against what vLLM itself loaded (reports/engine-logs.md): the engine's
 * "Model loading took" is every tensor it created. */
START_TEST(test_quantized_against_engine_logs)
{
	/* V12: kaitchup/Phi-4-AutoRound-GPTQ-4bit, "Loading model weights took
	 * 8.5107 GB" (GiB).  Phi-4 (phi3 class): 40 layers, H 5120, 40/10 heads,
	 * I 17920, V 100352, untied: 14,659,507,200 params; 2*V*H = 1,027,604,480
	 * in bf16 and D = 13,631,902,720 at 532/1024 B: 9,137,408,420 B =
	 * 8.5099 GiB, 0.01 % under the log. */
	load_path(write_tmp("{\"model_type\": \"phi3\", \"num_hidden_layers\": 40, "
			    "\"hidden_size\": 5120, \"num_attention_heads\": 40, "
			    "\"num_key_value_heads\": 10, \"intermediate_size\": 17920, "
			    "\"vocab_size\": 100352, \"tie_word_embeddings\": false, "
			    "\"torch_dtype\": \"bfloat16\", \"quantization_config\": {"
			    "\"quant_method\": \"gptq\", \"bits\": 4, \"group_size\": 128, "
			    "\"sym\": true}}"));
	unlink(tmp_path);
	ck_assert_uint_eq(model.params, 14659507200ULL);
	build(1, 1);
	ck_assert_uint_eq(spec.weights_bytes, 9137408420ULL);
	double logged = 8.5107 * 1073741824.0;
	ck_assert_msg(fabs((double)spec.weights_bytes / logged - 1) < 0.001, "Phi-4 GPTQ");

	/* V6: Qwen2.5-7B-Instruct-AWQ (bits 4, group 128, zero_point), the
	 * author's breakdown says 5.29 GiB of weights; D = 7,615,616,512 -
	 * 1,089,994,752 = 6,525,621,760 at 532/1024 B + 2,179,989,504 =
	 * 5,570,253,934 B = 5.188 GiB: 1.9 % under (the log's figure includes
	 * what vLLM allocates while loading beside the weights). */
	load("Qwen2.5-7B-Instruct");
	struct kvp_model awq = model;
	awq.weights_dtype = KVP_DTYPE_INT4_AWQ;
	awq.weights_format = (struct kvp_weights_format){4, 128, 20};
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_spec_build(&awq, (struct kvp_parallel){1, 1}, KVP_DTYPE_BF16,
					KVP_DTYPE_BF16, &spec, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(spec.weights_bytes, 5570253934ULL);
	ck_assert(fabs((double)spec.weights_bytes / (5.29 * 1073741824.0) - 1) < 0.025);
}
END_TEST

START_TEST(test_quantization_unknown_and_ignored)
{
	/* an unknown method: sized in bf16 (16,060,522,496 B, table 3.2 x 2)
	 * with a warning naming it at its value (line 3, column 35) */
	const char *p = write_tmp("{\"model_type\": \"llama\", \"num_hidden_layers\": 32,\n"
				  "\"hidden_size\": 4096, \"num_attention_heads\": 32,\n"
				  "\"quantization_config\": {\"quant_method\": \"hqq\", \"nbits\": 4},\n"
				  "\"num_key_value_heads\": 8, \"intermediate_size\": 14336,\n"
				  "\"vocab_size\": 128256, \"torch_dtype\": \"bfloat16\"}\n");
	load_path(p);
	assert_warning(p, 0, 3, 41, "quantization_config.quant_method");
	ck_assert_ptr_nonnull(strstr(model.warnings[0], "\"hqq\""));
	ck_assert_ptr_nonnull(strstr(model.warnings[0], "bf16"));
	build(1, 1);
	ck_assert_uint_eq(spec.weights_bytes, 16060522496ULL);
	unlink(tmp_path);

	/* an ignore list naming attention (Kimi-K2.5 style): the 32 layers'
	 * attention, 32 * 41,943,040 = 1,342,177,280 params, stays bf16; the
	 * rest of D (5,637,410,816) is int4 at 528/1024 B:
	 * 2,906,789,952 + 2,684,354,560 + 2,101,346,304 = 7,692,490,816 */
	load_path(llama8b_with("{\"quant_method\": \"compressed-tensors\", \"ignore\": "
			       "[\"lm_head\", \"re:.*self_attn.*\"], \"config_groups\": "
			       "{\"g\": {\"weights\": {\"num_bits\": 4, \"type\": \"int\", "
			       "\"strategy\": \"group\", \"group_size\": 128}}}}"));
	unlink(tmp_path);
	ck_assert_uint_eq(model.unquantized_params, 1342177280ULL);
	build(1, 1);
	ck_assert_uint_eq(spec.weights_bytes, 7692490816ULL);

	/* --weights-dtype's what-if replaces all of it: int4-awq (group 128,
	 * 5/256 B of scales) on every non-embedding weight = 5,727,460,432 */
	ck_assert_int_eq(kvp_model_set_weights_dtype(&model, KVP_DTYPE_INT4_AWQ), KVP_STATUS_OK);
	ck_assert_uint_eq(model.unquantized_params, 0);
	build(1, 1);
	ck_assert_uint_eq(spec.weights_bytes, 5727460432ULL);
	ck_assert_int_eq(kvp_model_set_weights_dtype(&model, KVP_DTYPE_FP8_E5M2),
			 KVP_STATUS_INVALID);
}
END_TEST

/* Vision towers, from vision_config, against published parameter counts. */
START_TEST(test_towers)
{
	/* Gemma 3 27B: SigLIP 27 x (4*(1152^2 + 1152) 5,313,024 + 2*1152*4304
	 * + 4304 + 1152 9,921,872 + 4*1152 = 15,239,504) = 411,466,608 + patch
	 * 3*14*14*1152 + 1152 + positions (896/14)^2 * 1152 = 4,718,592 + final
	 * LN 2,304 = 416,866,032 (the Gemma 3 report's "vision encoder 417M") +
	 * projector 1152*5376 + 1152 = 423,060,336 */
	load("gemma-3-27b-it");
	ck_assert_uint_eq(model.tower_params, 423060336ULL);
	/* no warning: the tower's weights are counted and its profile run
	 * modelled (issue 36): one 896 x 896 image, (896/14)^2 = 4,096 SigLIP
	 * patches of 3 x 14^2 = 588 pixel values, 256 output tokens of 5,376 */
	ck_assert_uint_eq(model.num_warnings, 0);
	ck_assert_str_eq(model.mm_encoder.family, "gemma3");
	ck_assert_uint_eq(model.mm_encoder.image_tokens, 256);
	ck_assert_uint_eq(model.mm_encoder.image_patches, 4096);
	ck_assert_uint_eq(model.mm_encoder.patch_inputs, 588);
	ck_assert_uint_eq(model.mm_encoder.out_width, 5376);
	build(1, 1);
	ck_assert_uint_eq(spec.tower_bytes, 2 * 423060336ULL);   /* bf16 */
	ck_assert_uint_eq(spec.weights_bytes, 2 * (27009346304ULL + 423060336ULL));
	/* Kimi-VL: MoonViT as above with 64 x 64 positions (same 4,718,592):
	 * 416,866,032 + projector LN 2,304 + 4608^2 + 4608 + 4608*2048 + 2048 =
	 * 447,545,840; with the text model 16,407,656,048 (card: 16.4B) */
	load("Kimi-VL-A3B-Instruct");
	ck_assert_uint_eq(model.tower_params, 447545840ULL);
	ck_assert_uint_eq(model.params + model.tower_params, 16407656048ULL);
	/* Qwen2.5-VL-7B: 32 x (4*1280^2 + 4*1280 + 3*1280*3420 + 2*3420 + 1280 +
	 * 2*1280 = 19,702,200) + conv 3*2*14*14*1280 + merger 1280 + 5120^2 +
	 * 5120 + 5120*3584 + 3584 = 676,550,144; the card's 8,292,166,656 minus
	 * the text model's 7,615,616,512 (table 3.2) */
	load_path(write_tmp("{\"model_type\": \"qwen2_5_vl\", \"hidden_size\": 3584, "
			    "\"num_hidden_layers\": 28, \"num_attention_heads\": 28, "
			    "\"num_key_value_heads\": 4, \"intermediate_size\": 18944, "
			    "\"vocab_size\": 152064, \"torch_dtype\": \"bfloat16\", "
			    "\"vision_config\": {\"depth\": 32, \"hidden_size\": 1280, "
			    "\"intermediate_size\": 3420, \"num_heads\": 16, \"out_hidden_size\": 3584, "
			    "\"patch_size\": 14, \"spatial_merge_size\": 2, "
			    "\"temporal_patch_size\": 2, \"model_type\": \"qwen2_5_vl\"}}"));
	unlink(tmp_path);
	ck_assert_uint_eq(model.tower_params, 676550144ULL);
	/* Qwen2-VL-7B: the width is embed_dim 1280 (vision_config.hidden_size
	 * 3584 is the merger's output), MLP 4 x 1280 = 5120, LayerNorms and
	 * biases: 32 x (4*1280 + 4*1280^2 + 4*1280 + 2*1280*5120 + 5120 + 1280
	 * = 19,677,440) = 629,678,080 + conv 3*2*14*14*1280 = 1,505,280 +
	 * merger 2*1280 + 5120^2 + 5120 + 5120*3584 + 3584 = 44,575,744:
	 * 675,759,104; the safetensors index's total_size 16,582,751,232 B / 2
	 * = 8,291,375,616 minus the Qwen2-7B text model's 7,615,616,512 */
	load("Qwen2-VL-7B-Instruct");
	ck_assert_uint_eq(model.tower_params, 675759104ULL);
	/* its largest image: 12,845,056 / (14 x 2)^2 = 16,384 tokens of 4
	 * patches, 3 x 2 x 14^2 = 1,176 pixel values each, out 3,584 wide */
	ck_assert_uint_eq(model.mm_encoder.image_tokens, 16384);
	ck_assert_uint_eq(model.mm_encoder.image_patches, 65536);
	ck_assert_uint_eq(model.mm_encoder.patch_inputs, 1176);
	ck_assert_uint_eq(model.mm_encoder.out_width, 3584);
	ck_assert_uint_eq(model.mm_encoder.tower_width, 1280);
	ck_assert_uint_eq(model.mm_encoder.tower_mlp, 5120);
	ck_assert(!model.mm_encoder.tower_gated);
	ck_assert_uint_eq(model.params + model.tower_params, 8291375616ULL);
	/* LLaVA-Next with CLIP ViT-L/14-336: vLLM builds 23 of 24 layers
	 * (vision_feature_layer -2), no post-LayerNorm: 23 x (4*(1024^2 + 1024)
	 * + 2*1024*4096 + 4096 + 1024 + 4*1024 = 12,596,224) = 289,713,152 +
	 * patch 3*14*14*1024 = 602,112 + class 1024 + positions 577*1024 =
	 * 590,848 + pre-LN 2,048 + projector 1024*4096 + 4096 + 4096^2 + 4096 =
	 * 20,979,712 + image_newline 4,096: 311,892,992 params, 623,785,984 B in
	 * fp16, which with the Mistral text model (32,064 tokens of vocabulary)
	 * is the 14.0786 GiB vLLM 0.10.2 logs (tests/data/engine-logs/v17) */
	load_path(data_path("engine-logs/models/llava-v1.6-mistral-7b-hf/config.json"));
	ck_assert_uint_eq(model.tower_params, 311892992ULL);
	/* Pixtral-12B in LLaVA form (mistral-community/pixtral-12b: a pixtral
	 * vision_config without dimensions, the class's 1024 / 24 layers /
	 * 4096): 24 x (2*1024 + 4*1024^2 + 3*1024*4096 = 16,779,264) =
	 * 402,702,336 + patch_conv 3*16*16*1024 = 786,432 + ln_pre 1,024 =
	 * 403,489,792 (Mistral's "400M vision encoder") + projector 1024*5120 +
	 * 5120 + 5120^2 + 5120 = 31,467,520: 434,957,312; its largest image
	 * 1024 x 1024: (1024/16)^2 = 4,096 outputs from 4,096 patches, gated */
	load_path(write_tmp("{\"model_type\": \"llava\", \"text_config\": {\"model_type\": "
			    "\"mistral\", \"hidden_size\": 5120, \"num_hidden_layers\": 40, "
			    "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"head_dim\": 128, "
			    "\"intermediate_size\": 14336, \"vocab_size\": 131072}, "
			    "\"vision_config\": {\"head_dim\": 64, \"image_size\": 1024, "
			    "\"model_type\": \"pixtral\", \"patch_size\": 16}, "
			    "\"vision_feature_layer\": -1}"));
	unlink(tmp_path);
	ck_assert_uint_eq(model.tower_params, 434957312ULL);
	ck_assert_uint_eq(model.num_warnings, 0);
	ck_assert_str_eq(model.mm_encoder.family, "pixtral");
	ck_assert_uint_eq(model.mm_encoder.image_tokens, 4096);
	ck_assert_uint_eq(model.mm_encoder.image_patches, 4096);
	ck_assert(model.mm_encoder.tower_gated);
	/* an unknown tower: counted as a generic ViT, with a warning */
	load_path(write_tmp("{\"model_type\": \"llava\", \"text_config\": {\"model_type\": "
			    "\"llama\", \"num_hidden_layers\": 1, \"hidden_size\": 8, "
			    "\"num_attention_heads\": 1, \"vocab_size\": 2, \"intermediate_size\": 4}, "
			    "\"vision_config\": {\"model_type\": \"siglip_vision_model\", "
			    "\"hidden_size\": 4, \"num_hidden_layers\": 1, \"intermediate_size\": 8, "
			    "\"patch_size\": 2, \"image_size\": 4}}"));
	unlink(tmp_path);
	/* 4*(16 + 4) + 2*4*8 + 8 + 4 + 16 = 172; patch 3*4*4 + 4 = 52; positions
	 * (4/2)^2 * 4 = 16; final LN 8: 248 */
	ck_assert_uint_eq(model.tower_params, 248);
	ck_assert_uint_eq(model.num_warnings, 2);   /* and the encoder's peak, above */
	ck_assert_ptr_nonnull(strstr(model.warnings[0], "projector is not counted"));
	ck_assert_ptr_nonnull(strstr(model.warnings[1], "profile run"));
}
END_TEST

START_TEST(test_param_overflow)
{
	/* H = Nq*d = 2^32 - 1 with one head: 2*H*Nkv*d = 2*(2^32 - 1)^2 > 2^64 */
	struct kvp_error err = {0};
	const char *p = write_tmp("{\"model_type\": \"llama\", \"num_hidden_layers\": 1, "
				  "\"hidden_size\": 4294967295, \"num_attention_heads\": 1, "
				  "\"vocab_size\": 2, \"intermediate_size\": 4}");
	kvp_status st = kvp_hf_config_load(p, &model, &err);
	unlink(tmp_path);
	ck_assert_int_eq(st, KVP_STATUS_OVERFLOW);
	ck_assert_str_eq(err.field, "params");
	ck_assert_int_eq(err.line, 1); /* the enclosing object */
	ck_assert_int_eq(err.col, 1);
}
END_TEST

/* ------------------------------------------------------------ errors */

static const struct {
	const char *file;
	kvp_status status;
	int line, col;   /* 1-based; the value, or the enclosing object when missing */
	const char *field;
} bad[] = {
	/* EOF after line 4's newline: libyaml stops at 5:1 */
	{"hf-truncated.json", KVP_STATUS_PARSE, 5, 1, ""},
	{"hf-missing-layers.json", KVP_STATUS_INVALID, 1, 1, "num_hidden_layers"},
	{"hf-missing-vocab.json", KVP_STATUS_INVALID, 1, 1, "vocab_size"},
	/* `  "hidden_size": -4096,`: the value starts at column 18 */
	{"hf-negative-hidden.json", KVP_STATUS_INVALID, 3, 18, "hidden_size"},
	/* `  "num_attention_heads": "32",`: a string, column 26 */
	{"hf-string-heads.json", KVP_STATUS_INVALID, 5, 26, "num_attention_heads"},
	/* 5 KV heads do not divide 32 */
	{"hf-heads-not-dividing.json", KVP_STATUS_INVALID, 7, 26, "num_key_value_heads"},
	/* 99999999999999999999 > 2^64 - 1 */
	{"hf-overflow-vocab.json", KVP_STATUS_OVERFLOW, 7, 17, "vocab_size"},
	/* 4294967296 = 2^32 does not fit the 32-bit field */
	{"hf-hidden-u32.json", KVP_STATUS_OVERFLOW, 3, 18, "hidden_size"},
	{"hf-head-dim-zero.json", KVP_STATUS_INVALID, 3, 15, "head_dim"},
	{"hf-fractional-layers.json", KVP_STATUS_INVALID, 6, 24, "num_hidden_layers"},
	{"hf-too-many-layers.json", KVP_STATUS_INVALID, 6, 24, "num_hidden_layers"},
	/* 4100 / 32 is not whole and no head_dim: point at the heads */
	{"hf-hidden-not-multiple.json", KVP_STATUS_INVALID, 5, 26, "num_attention_heads"},
	/* the list starts at line 6 column 18; 3 entries for 4 layers */
	{"hf-layer-types-short.json", KVP_STATUS_INVALID, 6, 18, "layer_types"},
	{"hf-layer-types-unknown.json", KVP_STATUS_INVALID, 8, 5, "layer_types"},
	/* a llama has no default window: the object is at fault */
	{"hf-sliding-no-window.json", KVP_STATUS_INVALID, 1, 1, "sliding_window"},
	{"hf-experts-per-token.json", KVP_STATUS_INVALID, 11, 26, "num_experts_per_tok"},
	/* the missing field is reported at text_config's object, line 4 column 18 */
	{"hf-gemma3-no-layers.json", KVP_STATUS_INVALID, 4, 18, "num_hidden_layers"},
	{"hf-not-object.json", KVP_STATUS_INVALID, 1, 1, ""},
	{"hf-bad-dtype.json", KVP_STATUS_INVALID, 7, 18, "torch_dtype"},
	{"hf-multi-query-string.json", KVP_STATUS_INVALID, 4, 18, "multi_query"},
	/* `  "partial_rotary_factor": 1.5,`: not in (0, 1], column 28 */
	{"hf-rotary-factor.json", KVP_STATUS_INVALID, 9, 28, "partial_rotary_factor"},
	/* `  "rotary_dim": 512,`: more than head_dim 4096 / 16 = 256, column 17 */
	{"hf-rotary-dim.json", KVP_STATUS_INVALID, 6, 17, "rotary_dim"},
	/* bit widths no engine loads (vLLM gptq.py: 2/3/4/8; awq: 4, awq_marlin
	 * 4 and 8): `"bits": 1` at column 59, `"w_bit": 3` at column 59 too */
	{"hf-gptq-bits.json", KVP_STATUS_INVALID, 9, 59, "quantization_config.bits"},
	{"hf-awq-bits.json", KVP_STATUS_INVALID, 9, 59, "quantization_config.w_bit"},
	/* `  "num_key_value_heads": 010,`: not JSON (Python's json refuses it;
	 * YAML 1.1 reads 8), column 26 */
	{"hf-leading-zero.json", KVP_STATUS_INVALID, 6, 26, "num_key_value_heads"},
	/* `  "partial_rotary_factor": "0.5",`: a string, column 28 */
	{"hf-quoted-fraction.json", KVP_STATUS_INVALID, 8, 28, "partial_rotary_factor"},
	/* `  "rope_scaling": {"rope_type": "linear", "factor": 0.5},`: a factor
	 * below 1 would shorten the cache, column 53 */
	{"hf-rope-factor.json", KVP_STATUS_INVALID, 9, 53, "rope_scaling.factor"},
	/* `  "rope_scaling": {"rope_type": "linear", "factor": "8"},`: a string, column 53 */
	{"hf-rope-factor-string.json", KVP_STATUS_INVALID, 9, 53, "rope_scaling.factor"},
};

START_TEST(test_bad)
{
	char rel[256];
	snprintf(rel, sizeof rel, "bad/%s", bad[_i].file);
	const char *path = data_path(rel);
	struct kvp_error err = {0};
	kvp_status st = kvp_hf_config_load(path, &model, &err);
	char msg[1200];
	kvp_error_format(&err, msg, sizeof msg);
	ck_assert_msg(st == bad[_i].status, "%s: status %s, want %s (%s)", bad[_i].file,
		      kvp_status_str(st), kvp_status_str(bad[_i].status), msg);
	ck_assert_str_eq(err.path, path);
	ck_assert_msg(err.line == bad[_i].line && err.col == bad[_i].col,
		      "%s: at %d:%d, want %d:%d (%s)", bad[_i].file, err.line, err.col,
		      bad[_i].line, bad[_i].col, msg);
	ck_assert_str_eq(err.field, bad[_i].field);
	ck_assert(err.msg[0]);
}
END_TEST

/* What the importer keeps is kept whole or refused, never cut: a path of
 * 512 bytes or more (m->path holds 511) names no model; an _name_or_path id
 * longer than 127 bytes is not used as the id, with a warning. */
START_TEST(test_no_silent_cuts)
{
	struct kvp_error err = {0};
	char path[700];
	int n = snprintf(path, sizeof path, "/tmp/");
	while (n < 600)
		path[n++] = 'x';
	snprintf(path + n, sizeof path - n, "/config.json");
	ck_assert_int_eq(kvp_hf_config_load(path, &model, &err), KVP_STATUS_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "longer than 511 bytes"));
	char id[200], doc[600];
	memset(id, 'a', 150);
	memcpy(id, "org/", 4);
	id[150] = 0;
	snprintf(doc, sizeof doc, "{\"_name_or_path\": \"%s\", \"model_type\": \"llama\", "
		 "\"num_hidden_layers\": 1, \"hidden_size\": 8, \"num_attention_heads\": 1, "
		 "\"vocab_size\": 2, \"intermediate_size\": 4}", id);
	load_path(write_tmp(doc));
	unlink(tmp_path);
	ck_assert_str_eq(model.hf_id, "");
	ck_assert_uint_eq(model.num_warnings, 1);
	ck_assert_ptr_nonnull(strstr(model.warnings[0], "_name_or_path: 150 bytes"));
}
END_TEST

START_TEST(test_missing_file)
{
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_hf_config_load(data_path("hf/no-such-model/config.json"), &model, &err),
			 KVP_STATUS_IO);
}
END_TEST

static Suite *hfconfig_suite(void)
{
	Suite *s = suite_create("hfconfig");
	TCase *core = tcase_create("core");
	tcase_add_loop_test(core, test_table, 0, sizeof cases / sizeof cases[0]);
	tcase_add_test(core, test_path_and_names);
	tcase_add_test(core, test_falcon_multi_query);
	tcase_add_test(core, test_gemma3_defaults);
	tcase_add_test(core, test_layer_patterns);
	tcase_add_test(core, test_dtypes);
	tcase_add_test(core, test_mla);
	tcase_add_test(core, test_qwen3_next);
	tcase_add_test(core, test_small_documents);
	tcase_add_test(core, test_llama4_empty_no_rope_layers);
	tcase_add_loop_test(core, test_quantization, 0, sizeof quants / sizeof quants[0]);
	tcase_add_test(core, test_quantized_against_engine_logs);
	tcase_add_test(core, test_quantization_unknown_and_ignored);
	tcase_add_test(core, test_towers);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_loop_test(errors, test_bad, 0, sizeof bad / sizeof bad[0]);
	tcase_add_test(errors, test_missing_file);
	tcase_add_test(errors, test_no_silent_cuts);
	tcase_add_test(errors, test_falcon_tp);
	tcase_add_test(errors, test_param_overflow);
	tcase_add_test(errors, test_contradictions_warn);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(hfconfig_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
