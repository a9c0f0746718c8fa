/* check-shape.c: the deployment shape (shape.h): the weights each GPU holds
 * under tp / dp / ep from the published parameter split, KV per GPU, the
 * experts' exchange and data-parallel balance by hand, the shapes that cannot
 * be built, and a plain reference of the split over random shapes. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "memory/budget.h"
#include "model/model.h"
#include "time/perf.h"
#include "read/profile.h"
#include "model/shape.h"
#include "model/spec.h"

static struct kvp_model model;
static struct kvp_spec spec;

static void load(const char *name)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_model_load(name, &model, &err) == KVP_STATUS_OK, "%s: %s", name, err.msg);
}

static kvp_status build(struct kvp_parallel par, struct kvp_error *err)
{
	return kvp_spec_build(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, err);
}

/* DeepSeek-V3 on 8 GPUs, --dp 8 --ep 8 (tp 1).  Published split
 * (profiles/models/deepseek-v3.yaml, from config.json): 671,026,419,200
 * params; routed experts 58 x 256 x 3 x 7168 x 2048 = 653,908,770,816; shared
 * experts 58 x 3 x 7168 x 2048 = 2,554,331,136; embeddings 2 x 129,280 x 7,168
 * = 1,853,358,080; the rest 12,709,959,168 = 61 MLA 187,107,328 + 3 dense MLPs
 * 396,361,728 + 58 routers 1,835,264 + 61 x 14,336 norms + 7,168.  fp8
 * weights (1 B), bf16 embeddings (2 B) and routers (2 B: vLLM's
 * ReplicatedLinear with quant_config None, whole on every rank).  Per GPU:
 * embeddings 3,706,716,160; rest 12,709,959,168 - routers 58 x 256 x 7168 =
 * 106,430,464 in fp8, + the same routers in bf16 212,860,928 =
 * 12,816,389,632; shared 2,554,331,136; routed / 8 = 81,738,596,352; total
 * 100,816,033,280.  MLA KV per rank 61 x 576 x 2 B = 70,272 B/token. */
START_TEST(test_deepseek_dp8_ep8)
{
	struct kvp_error err = {0};
	load("deepseek-v3");
	ck_assert_int_eq(build((struct kvp_parallel){.tp = 1, .pp = 1, .dp = 8, .ep = 8}, &err),
			 KVP_STATUS_OK);
	const struct kvp_weights_split *w = &spec.weights_split;
	ck_assert_uint_eq(w->embed_bytes, 3706716160ULL);
	ck_assert_uint_eq(w->dense_bytes, 12816389632ULL);
	/* whole on every GPU: the routers and 61 MLA down-projections of 7,168 x
	 * (1,536 + 512 + 64) in fp8, 923,467,776 (at tp 1, as a plain split) */
	ck_assert_uint_eq(w->replicated_bytes, 212860928ULL + 923467776ULL);
	ck_assert_uint_eq(w->shared_bytes, 2554331136ULL);
	ck_assert_uint_eq(w->routed_bytes, 81738596352ULL);
	ck_assert_uint_eq(w->total_bytes, 100816033280ULL);
	ck_assert_uint_eq(spec.weights_bytes, 100816033280ULL);
	ck_assert_uint_eq(spec.token_bytes, 61 * 576 * 2);
	ck_assert_uint_eq(kvp_shape_gpus(&spec.par), 8);
	/* 653,908,770,816 / (256 x 3 x 7168 x 2048) = 58 MoE layers */
	ck_assert_uint_eq(kvp_shape_moe_layers(&model), 58);
	/* one token dispatched to 8 experts of 7168 bf16 values, 7 of 8 GPUs remote:
	 * 8 x 7168 x 2 x 7/8 = 100,352 B each way per MoE layer */
	ck_assert_double_eq_tol(kvp_shape_moe_exchange_bytes(&model, &spec.par, KVP_DTYPE_BF16, 1),
				100352.0, 1e-6);
}
END_TEST

/* The same exchange timed on an H200 board (NVLink 900 GB/s both ways = 450
 * per direction, 10 us latency): one decode token per rank, 58 MoE layers,
 * dispatch and combine: 2 x 58 x (100,352 / 450e9 + 10e-6) s = 1.1858685e-3. */
/* Pipeline stages hold their own layers' experts (issue 34), vLLM's
 * get_pp_indices: DeepSeek-V3's 61 layers at pp 2 are 31 (layers 0-30: the
 * first_k_dense_replace 3 dense layers and 28 MoE layers) and 30 (layers
 * 31-60, all MoE), not 31/61 and 30/61 of the experts each.  From the public
 * config, tp 8: per MoE layer 256 x 3 x 7,168 x 2,048 = 11,274,289,152 routed
 * and 44,040,192 shared expert params (fp8, 1 B), router 256 x 7,168 =
 * 1,835,008 (bf16, whole); per layer MLA down-projections (1,536 + 512 + 64)
 * x 7,168 = 15,138,816 (fp8, whole); the 3 dense MLPs 3 x 7,168 x 18,432 =
 * 396,361,728 each; the rest of the non-expert params, 12,709,959,168 -
 * 58 routers 106,430,464 - 61 x 15,138,816 - 3 x 396,361,728 =
 * 10,490,975,744, by layer (x 30/61 = 5,159,496,267; x 31/61 = 5,331,479,476,
 * rounded down); embeddings 129,280 x 7,168 x 2 B = 1,853,358,080 on each
 * end stage.  Stage 1: 1,853,358,080/8 = 231,669,760 + ceil(5,159,496,267/8)
 * 644,937,034 + 30 x 1,835,008 x 2 = 110,100,480 + 30 x 15,138,816 =
 * 454,164,480 + 30 x 44,040,192 / 8 = 165,150,720 + 30 x 11,274,289,152 / 8
 * = 42,278,584,320: 43,884,606,794 B = 40.87 GiB.  Stage 0: 231,669,760 +
 * ceil((5,331,479,476 + 3 x 396,361,728)/8) = 815,070,583 + 28 x 3,670,016 =
 * 102,760,448 + 31 x 15,138,816 = 469,303,296 + 28 x 44,040,192 / 8 =
 * 154,140,672 + 28 x 11,274,289,152 / 8 = 39,460,012,032: 41,232,956,791 B
 * = 38.40 GiB.  Pro-rating gave both 31/61 of the experts: 40.28 GiB. */
START_TEST(test_deepseek_pp2_stages)
{
	load("deepseek-v3");
	struct kvp_parallel par = {.tp = 8, .pp = 2};
	struct kvp_weights_split w;
	ck_assert_int_eq(kvp_shape_stage_weights(&model, KVP_DTYPE_BF16, &par, 1, 31, 30, &w),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(w.embed_bytes, 231669760ULL);
	ck_assert_uint_eq(w.dense_bytes, 644937034ULL + 110100480ULL + 454164480ULL);
	ck_assert_uint_eq(w.shared_bytes, 165150720ULL);
	ck_assert_uint_eq(w.routed_bytes, 42278584320ULL);
	ck_assert_uint_eq(w.total_bytes, 43884606794ULL);
	ck_assert_int_eq(kvp_shape_stage_weights(&model, KVP_DTYPE_BF16, &par, 0, 0, 31, &w),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(w.dense_bytes, 815070583ULL + 102760448ULL + 469303296ULL);
	ck_assert_uint_eq(w.shared_bytes, 154140672ULL);
	ck_assert_uint_eq(w.routed_bytes, 39460012032ULL);
	ck_assert_uint_eq(w.total_bytes, 41232956791ULL);
	/* the spec of each stage carries its own weights */
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_spec_build_stage(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, 0, &spec,
					      &err), KVP_STATUS_OK);
	ck_assert_uint_eq(spec.first_layer, 0);
	ck_assert_uint_eq(spec.num_layers, 31);
	ck_assert_uint_eq(spec.weights_bytes, 41232956791ULL);
	ck_assert_int_eq(kvp_spec_build_stage(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, 2, &spec,
					      &err), KVP_STATUS_USAGE);
	/* the budget sizes both stages; stage 1 (2.47 GiB more weights, one
	 * layer's 1,152 B/token less KV) leaves less room and governs */
	struct kvp_gpu gpu = {0};
	strcpy(gpu.name, "custom");
	struct kvp_budget_opts o = {.engine = KVP_ENGINE_GENERIC, .par = par, .context = 8192,
				    .has_gpu_memory = true, .gpu_memory_bytes = 80ULL << 30};
	struct kvp_budget *b = malloc(sizeof *b);
	ck_assert_ptr_nonnull(b);
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, b, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(b->spec.stage, 1);
	ck_assert_uint_eq(b->spec.weights_split.total_bytes, 43884606794ULL);
	free(b);
}
END_TEST

/* SGLang's DP attention (profiles/engines/sglang.yaml, deepseek_v2.py in
 * 0.5.10): DeepSeek-V3 at --tp-size 8 --dp-size 8 (kvplan tp 1, dp 8) keeps
 * the input embedding whole on each GPU (attention group of 1) but splits
 * the LM head, the 3 dense MLPs and the shared experts over all 8 GPUs:
 * embeddings 1,853,358,080 + 1,853,358,080 / 8 = 2,085,027,840 B (vLLM:
 * 3,706,716,160); dense MLPs 3 x 396,361,728 fp8 / 8 = 148,635,648 (vLLM:
 * 1,189,085,184 whole); shared experts 2,554,331,136 / 8 = 319,291,392.
 * 4,897,177,600 B = 4.56 GiB less per GPU than vLLM's placement. */
START_TEST(test_deepseek_sglang_dp8)
{
	load("deepseek-v3");
	struct kvp_parallel par = {.tp = 1, .pp = 1, .dp = 8};
	struct kvp_weights_split v, g;
	ck_assert_int_eq(kvp_shape_stage_weights(&model, KVP_DTYPE_BF16, &par, 0, 0, 61, &v),
			 KVP_STATUS_OK);
	par.dp_full_tp = KVP_SHAPE_DP_LM_HEAD | KVP_SHAPE_DP_DENSE_MLP | KVP_SHAPE_DP_SHARED_EXPERTS;
	ck_assert_int_eq(kvp_shape_stage_weights(&model, KVP_DTYPE_BF16, &par, 0, 0, 61, &g),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(v.embed_bytes, 3706716160ULL);
	ck_assert_uint_eq(g.embed_bytes, 2085027840ULL);
	ck_assert_uint_eq(v.dense_bytes - g.dense_bytes, 1189085184ULL - 148635648ULL);
	ck_assert_uint_eq(v.shared_bytes, 2554331136ULL);
	ck_assert_uint_eq(g.shared_bytes, 319291392ULL);
	ck_assert_uint_eq(g.routed_bytes, v.routed_bytes);
	ck_assert_uint_eq(v.total_bytes - g.total_bytes, 4897177600ULL);
	/* without DP the flags change nothing */
	par.dp = 1;
	ck_assert_int_eq(kvp_shape_stage_weights(&model, KVP_DTYPE_BF16, &par, 0, 0, 61, &g),
			 KVP_STATUS_OK);
	par.dp_full_tp = 0;
	ck_assert_int_eq(kvp_shape_stage_weights(&model, KVP_DTYPE_BF16, &par, 0, 0, 61, &v),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(g.total_bytes, v.total_bytes);
}
END_TEST

START_TEST(test_deepseek_alltoall_time)
{
	struct kvp_error err = {0};
	struct kvp_gpu g;
	struct kvp_perf_hw hw;
	struct kvp_perf_ctx ctx;
	struct kvp_perf_step st;
	load("deepseek-v3");
	ck_assert_int_eq(build((struct kvp_parallel){.tp = 1, .pp = 1, .dp = 8, .ep = 8}, &err),
			 KVP_STATUS_OK);
	ck_assert_int_eq(kvp_gpu_load("h200", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &hw, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err), KVP_STATUS_OK);
	ck_assert_str_eq(ctx.moe_link.name, "nvlink");
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 1000, &st, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(st.moe_comm_s, 2 * 58 * (100352.0 / 450e9 + 10e-6), 1e-12);
	ck_assert_double_eq_tol(st.comm_s, st.moe_comm_s, 1e-15); /* tp 1: no all-reduce */
}
END_TEST

/* Qwen3-235B-A22B, --tp 4 --ep 4, bf16 (profiles/models/qwen3-235b-a22b.yaml):
 * 235,093,634,560 params, routed experts 94 x 128 x 3 x 4096 x 1536 =
 * 227,096,395,776, embeddings 2 x 151,936 x 4,096 = 1,244,659,712, the rest
 * 6,752,579,072 of which routers 94 x 128 x 4096 = 49,283,072, whole on
 * every GPU.  Per GPU (2 B): embeddings / 4 622,329,856 + the rest
 * (6,703,296,000 x 2 / 4 = 3,351,648,000 + routers 98,566,144 =
 * 3,450,214,144) + experts / 4 113,548,197,888 = 117,620,741,888.  KV: 4 KV
 * heads / tp 4 = 1 per GPU (none replicated): 94 x 2 x 1 x 128 x 2 B =
 * 48,128 B/token. */
START_TEST(test_qwen3_235b_tp4_ep4)
{
	struct kvp_error err = {0};
	load("qwen3-235b-a22b");
	ck_assert_int_eq(build((struct kvp_parallel){.tp = 4, .pp = 1, .ep = 4}, &err),
			 KVP_STATUS_OK);
	const struct kvp_weights_split *w = &spec.weights_split;
	ck_assert_uint_eq(w->embed_bytes, 622329856ULL);
	ck_assert_uint_eq(w->dense_bytes, 3450214144ULL);
	ck_assert_uint_eq(w->replicated_bytes, 98566144ULL);
	ck_assert_uint_eq(w->shared_bytes, 0);
	ck_assert_uint_eq(w->routed_bytes, 113548197888ULL);
	ck_assert_uint_eq(w->total_bytes, 117620741888ULL);
	ck_assert_uint_eq(spec.token_bytes, 48128);
	ck_assert_uint_eq(spec.kv_heads_per_gpu, 1);
	/* dp 1: the experts' results join the tp all-reduce; no all-to-all */
	ck_assert_double_eq(kvp_shape_moe_exchange_bytes(&model, &spec.par, KVP_DTYPE_BF16, 64), 0);
}
END_TEST

/* Whole on every tp rank (vLLM: QKVParallelLinear keeps max(1, H_kv / tp)
 * heads' K and V projections per rank, num_kv_head_replicas = tp / H_kv;
 * MoE routers are ReplicatedLinear).  Llama-3.1-70B, bf16: 70,553,706,496
 * params - embeddings 2 x 128,256 x 8,192 = 2,101,346,304 leaves
 * 68,452,360,192.  tp 8 (8 KV heads, one each): 68,452,360,192 x 2 / 8 =
 * 17,113,090,048, nothing replicated.  tp 16 (2 replicas of each head): each
 * rank holds one whole head, 80 x 2 x 8,192 x 128 x 2 B = 335,544,320 of K
 * and V, not half a head's 167,772,160: (68,452,360,192 + 80 x 2 x 8,192 x
 * 128 x (16 - 8) = 1,342,177,280) x 2 / 16 = 8,724,317,184 (a plain split
 * would give 8,556,545,024).  Mixtral-8x7B at tp 8 (8 KV heads: no
 * replica): the rest 46,702,792,704 - experts 45,097,156,608 - embeddings
 * 262,144,000 = 1,343,492,096, of which routers 32 x 8 x 4,096 = 1,048,576:
 * 1,342,443,520 x 2 / 8 = 335,610,880 + 2,097,152 = 337,708,032. */
START_TEST(test_replicated)
{
	struct kvp_error err = {0};
	const struct kvp_weights_split *w = &spec.weights_split;
	load("llama-3.1-70b");
	ck_assert_int_eq(build((struct kvp_parallel){.tp = 8, .pp = 1}, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(w->dense_bytes, 17113090048ULL);
	ck_assert_uint_eq(w->replicated_bytes, 0);
	ck_assert_int_eq(build((struct kvp_parallel){.tp = 16, .pp = 1}, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(w->dense_bytes, 8724317184ULL);
	ck_assert_uint_eq(w->replicated_bytes, 335544320ULL);
	ck_assert_uint_eq(spec.kv_heads_per_gpu, 1);
	/* pp 2 at tp 16: each stage holds its 40 layers' share */
	ck_assert_int_eq(build((struct kvp_parallel){.tp = 16, .pp = 2}, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(w->replicated_bytes, 335544320ULL / 2);
	load("mixtral-8x7b");
	ck_assert_int_eq(build((struct kvp_parallel){.tp = 8, .pp = 1}, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(w->dense_bytes, 337708032ULL);
	ck_assert_uint_eq(w->replicated_bytes, 2097152ULL);
	/* tp 1: the same bytes as the plain sum, routers in bf16 either way */
	ck_assert_int_eq(build((struct kvp_parallel){.tp = 1, .pp = 1}, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(w->dense_bytes, 1343492096ULL * 2);
	/* MLA (vLLM deepseek_v2.py: q_a_proj and kv_a_proj_with_mqa are
	 * ReplicatedLinear, quantized): DeepSeek-V3 at tp 8, fp8.  The rest
	 * 12,709,959,168 holds the routers 58 x 256 x 7,168 = 106,430,464 and the
	 * down-projections 61 x 7,168 x (1,536 + 512 + 64) = 923,467,776:
	 * (12,709,959,168 - 106,430,464 - 923,467,776) / 8 = 1,460,007,616 +
	 * routers in bf16 212,860,928 + down-projections in fp8 923,467,776 =
	 * 2,596,336,320 */
	load("deepseek-v3");
	ck_assert_int_eq(build((struct kvp_parallel){.tp = 8, .pp = 1}, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(w->dense_bytes, 2596336320ULL);
	ck_assert_uint_eq(w->replicated_bytes, 212860928ULL + 923467776ULL);
}
END_TEST

/* Data-parallel balance: 12 sequences over 8 DP ranks; the fullest holds
 * ceil(12/8) = 2, balance 12 / (8 x 2) = 0.75; tokens per second count all 12.
 * (32 x (1 - (31/32)^12) = 10.13, 32 x (1 - (31/32)^16) = 12.74.) */
START_TEST(test_dp_balance)
{
	struct kvp_error err = {0};
	struct kvp_gpu g;
	struct kvp_perf_hw hw;
	load("deepseek-v3");
	ck_assert_int_eq(kvp_gpu_load("h200", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &hw, &err), KVP_STATUS_OK);
	struct kvp_budget_opts o = {.engine = KVP_ENGINE_GENERIC,
				    .par = {.tp = 1, .pp = 1, .dp = 8, .ep = 8}};
	struct kvp_perf_opts po = {.prompt = 1024, .output = 128, .batches = {12, 16},
				   .nbatch = 2, .offload = {.tier = KVP_OFFLOAD_NONE}};
	struct kvp_perf_result *run = malloc(sizeof *run);
	ck_assert_ptr_nonnull(run);
	ck_assert_int_eq(kvp_perf_run(&model, &g, &o, &hw, &po, run, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(run->rows[0].rank_batch, 2);
	ck_assert_double_eq_tol(run->rows[0].dp_balance, 0.75, 1e-12);
	ck_assert_double_eq_tol(run->rows[0].tokens_per_s, 12 / run->rows[0].tpot_s, 1e-9);
	ck_assert_uint_eq(run->rows[1].rank_batch, 2);
	ck_assert_double_eq_tol(run->rows[1].dp_balance, 1.0, 1e-12);
	/* the same rank batch, but the experts a GPU reads follow every token of
	 * the EP group (issue 34.7): of its 32 experts, 32 x (1 - (31/32)^T) are
	 * touched by T tokens of top-8 over 256, 10.1 for T = 12 and 12.7 for
	 * T = 16, so the step of 16 sequences reads more and is slower */
	ck_assert(run->rows[1].tpot_s > run->rows[0].tpot_s);
	ck_assert_uint_eq(run->gpus, 8);
	free(run);
}
END_TEST

/* Shapes that cannot be built, each naming its flag. */
static const struct {
	const char *model;
	struct kvp_parallel par;
	kvp_status status;
	const char *field, *msg;
} bad[] = {
	{"deepseek-v3", {.tp = 1, .pp = 1, .dp = 6, .ep = 3}, KVP_STATUS_INVALID, "ep",
	 "does not divide the 256 routed experts"},
	{"llama-3.1-8b", {.tp = 2, .pp = 1, .ep = 2}, KVP_STATUS_INVALID, "ep", "no routed experts"},
	{"deepseek-v3", {.tp = 1, .pp = 1, .dp = 8, .ep = 16}, KVP_STATUS_USAGE, "ep",
	 "must divide tp x dp = 8"},
	{"deepseek-v3", {.tp = 1, .pp = 1, .dp = 8, .ep = 8, .gpus = 16}, KVP_STATUS_USAGE, "dp",
	 "= 8 GPUs, not the 16 asked for"},
	{"qwen3-235b-a22b", {.tp = 2, .pp = 2, .dp = 2, .gpus = 4}, KVP_STATUS_USAGE, "dp",
	 "tp 2 x pp 2 x dp 2 = 8 GPUs"},
};

START_TEST(test_bad_shapes)
{
	struct kvp_error err = {0};
	load(bad[_i].model);
	ck_assert_int_eq(build(bad[_i].par, &err), bad[_i].status);
	ck_assert_str_eq(err.field, bad[_i].field);
	ck_assert_msg(strstr(err.msg, bad[_i].msg), "'%s' lacks '%s'", err.msg, bad[_i].msg);
}
END_TEST

/* A plain reference over random shapes and parameter splits (bf16, pp 1):
 * the parts one GPU holds, times the GPUs that split them, cover the whole
 * (2 B per parameter) and exceed it by less than one byte per GPU; the total
 * is the sum of the parts; KV per token does not depend on dp. */
static uint64_t rand64(void)
{
	return (uint64_t)rand() << 31 ^ (uint64_t)rand();
}

START_TEST(test_split_reference)
{
	struct kvp_error err = {0};
	srand(15);
	for (int i = 0; i < 400; i++) {
		load("qwen3-30b-a3b");
		uint64_t V = model.vocab_size, H = model.hidden_size;
		uint64_t emb = 2 * V * H;
		model.expert_params = rand64() % 40000000000ULL + 1;
		model.shared_expert_params = rand64() % 4000000000ULL;
		uint64_t rest = rand64() % 9000000000ULL + 1000;
		model.params = emb + model.expert_params + model.shared_expert_params + rest;
		model.active_params = model.params / 2;
		model.weights_dtype = model.expert_dtype = KVP_DTYPE_AUTO;
		/* random expert params: the MoE layers from their count, not the
		 * profile's layout (which says 48) */
		model.moe_layers_known = false;
		static const uint32_t tps[] = {1, 2, 4}, dps[] = {1, 2, 4, 8};
		uint32_t tp = tps[rand() % 3], dp = dps[rand() % 4];
		uint32_t ep = rand() % 2 ? tp * dp : 1;
		if (model.moe_num_experts % ep)
			ep = 1;
		ck_assert_int_eq(build((struct kvp_parallel){.tp = tp, .pp = 1, .dp = dp, .ep = ep},
				       &err), KVP_STATUS_OK);
		const struct kvp_weights_split *w = &spec.weights_split;
		uint64_t n = (uint64_t)tp * dp;
		ck_assert(w->routed_bytes * n >= 2 * model.expert_params);
		ck_assert(w->routed_bytes * n < 2 * model.expert_params + n);
		ck_assert(w->shared_bytes * tp >= 2 * model.shared_expert_params);
		ck_assert(w->shared_bytes * tp < 2 * model.shared_expert_params + tp);
		ck_assert(w->embed_bytes * tp >= 2 * emb && w->embed_bytes * tp < 2 * emb + tp);
		/* the routers, whole on every GPU: round(experts / (128 x 3 x 2048 x
		 * 768 = 603,979,776 a layer)) MoE layers, at most 48, x 128 x 2048,
		 * when the rest holds them; the rest of the rest split by tp */
		uint64_t moe = (model.expert_params + 301989888) / 603979776;
		uint64_t R = (moe > 48 ? 48 : moe) * 128 * 2048;
		if (R > rest)
			R = 0;
		ck_assert(w->dense_bytes * tp >= 2 * (rest - R) + 2 * R * tp &&
			  w->dense_bytes * tp < 2 * (rest - R) + 2 * R * tp + tp);
		ck_assert_uint_eq(w->replicated_bytes, 2 * R);
		ck_assert_uint_eq(w->total_bytes, w->embed_bytes + w->dense_bytes + w->shared_bytes +
							  w->routed_bytes);
		/* 48 layers x 2 x (4 / tp) KV heads x 128 x 2 B */
		ck_assert_uint_eq(spec.token_bytes, 48ULL * 2 * (4 / tp) * 128 * 2);
	}
}
END_TEST

static Suite *shape_suite(void)
{
	Suite *s = suite_create("shape");
	TCase *core = tcase_create("core");
	tcase_set_timeout(core, 60);
	tcase_add_test(core, test_deepseek_dp8_ep8);
	tcase_add_test(core, test_deepseek_alltoall_time);
	tcase_add_test(core, test_deepseek_pp2_stages);
	tcase_add_test(core, test_deepseek_sglang_dp8);
	tcase_add_test(core, test_qwen3_235b_tp4_ep4);
	tcase_add_test(core, test_dp_balance);
	tcase_add_test(core, test_replicated);
	tcase_add_test(core, test_split_reference);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_loop_test(errors, test_bad_shapes, 0, sizeof bad / sizeof bad[0]);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(shape_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
