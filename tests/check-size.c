/* check-size.c: GPU purchase sizing.  Expected values are hand arithmetic
 * beside each assertion, on round hardware (1 TB/s, efficiencies 1, compute
 * so fast it never binds) and fixed-length workloads (tests/data/workloads/
 * size-*.yaml), plus the worked example: a 30B model in 4 bits on a
 * 24 GB GPU leaves about 9 GB, about 36,000 tokens at 256 KiB per token. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "size/size-sim.h"
#include "size/size.h"
#include "base/dist.h"
#include "base/units.h"
#include "base/yaml-walk.h"
#include "out/yaml-writer.h"

static struct kvp_model model;
static struct kvp_gpu gpu;
static struct kvp_workload wl;
static struct kvp_size_demand demand;
static struct kvp_size_opts opts;

/* A GPU of round numbers: 1 TB/s, 1e18 FLOP/s (compute never binds), no
 * NVLink, PCIe 4.0, $2 per hour. */
static void round_gpu(uint64_t memory)
{
	memset(&gpu, 0, sizeof gpu);
	strcpy(gpu.name, "round");
	gpu.memory_bytes = memory;
	gpu.bandwidth_bps = 1e12;
	gpu.bf16_flops = 1e18;
	strcpy(gpu.host_link, "pcie4x16");
	gpu.price_per_hour = 2.0;
	gpu.decode_bw_efficiency = 1;
	gpu.prefill_flops_efficiency = 1;
}

static void load(const char *model_name, const char *workload)
{
	struct kvp_error err = {0};
	char path[1024];
	ck_assert_msg(kvp_model_load(model_name, &model, &err) == KVP_STATUS_OK, "%s", err.msg);
	snprintf(path, sizeof path, "%s/tests/data/workloads/%s.yaml", KVP_SRCDIR, workload);
	ck_assert_msg(kvp_workload_load(path, &wl, &err) == KVP_STATUS_OK, "%s: %s", path, err.msg);
	memset(&opts, 0, sizeof opts);
	opts.budget.engine = KVP_ENGINE_GENERIC;
	opts.budget.par.tp = opts.budget.par.pp = 1;
	opts.budget.utilization = 1.0;
	opts.budget.has_activation = opts.budget.has_overhead = true;
}

static void derive(void)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_size_demand(&wl, &model, &demand, &err) == KVP_STATUS_OK, "%s", err.msg);
}

/* The replica cases' set-up (test_replicas_by_hand has the arithmetic):
 * Llama-2-7B with its weights given as 10 GB on an 80 GiB round GPU, under
 * the size-replicas workload. */
static void replicas_case(void)
{
	load("llama-2-7b", "size-replicas");
	round_gpu(80 * KVP_GIB);
	opts.budget.has_weights = true;
	opts.budget.weights_bytes = 10000000000ULL;
	derive();
}

/* Little's law: 4 requests/s, each 0.5 s to its first token and 200 tokens
 * at 10 ms: 4 x (0.5 + 200 x 0.01) = 10 in the system. */
START_TEST(test_littles_law)
{
	ck_assert_double_eq_tol(kvp_size_concurrency(4, 0.5, 200, 0.01), 10.0, 1e-12);
	ck_assert_double_eq(kvp_size_concurrency(0, 0.5, 200, 0.01), 0);
}
END_TEST

/* The replica search by hand.  Llama-2-7B, weights given as 10 GB (1e10 B),
 * on an 80 GiB GPU at 1 TB/s; 5 requests/s of 100 prompt + 100 output
 * tokens; TPOT level 10.7 ms.
 *   mean context = 100 + 99 / 2 = 149.5 -> 150 tokens = 150 x 524,288 =
 *     78,643,200 B of KV -> k = 78.6432 us per sequence per step
 *   prefill S = (1e10 + 100 x 524,288) / 1e12 = 10.0524288 ms (bandwidth)
 *   step(C) = 10 ms + k C
 * One replica: rho = 5 x 0.0100524288 = 0.050262144; W_q = rho S / (2 (1 -
 *   rho)) = 0.26600 ms; TTFT = 10.31843 ms; C = 5 (TTFT + 100 (0.01 + k C) /
 *   (1 - rho)) -> C (1 - 500 k / 0.949737856) = 0.0515921 + 5.264610 ->
 *   C = 5.545814; TPOT = (0.01 + k C) / 0.949737856 = 10.98844 ms > 10.7: fails.
 * Two replicas: 2.5 requests/s each; rho = 0.025131072; W_q = 0.12957 ms;
 *   TTFT = 10.18200 ms; C = 2.643210; TPOT = 10.47102 ms: meets.
 * Cost: 2 GPUs x $2 = $4 per hour for 5 x 100 = 500 output tokens/s =
 *   1.8 M per hour: $2.2222 per million. */
START_TEST(test_replicas_by_hand)
{
	replicas_case();
	ck_assert_double_eq(demand.prompt_mean, 100);
	ck_assert_double_eq(demand.output_mean, 100);
	ck_assert_uint_eq(demand.mean_context, 150);
	ck_assert_uint_eq(demand.prompt_p, 100);
	ck_assert_uint_eq(demand.max_model_len, 4096); /* Llama-2's max_position_embeddings */
	ck_assert_double_eq(demand.percentile, 90);

	struct kvp_size_config c;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(c.prefill_s, 0.0100524288, 1e-9);
	ck_assert_double_eq_tol(c.prefill_utilization, 0.050262144, 1e-9);
	ck_assert_double_eq_tol(c.queue_s, 0.00026600, 1e-8);
	ck_assert_double_eq_tol(c.concurrency, 5.545814, 1e-5);
	ck_assert_double_eq_tol(c.tpot_s, 0.01098844, 1e-7);
	ck_assert_uint_eq(c.sequences, 6);
	ck_assert_uint_eq(c.failed, KVP_SIZE_FAIL_TPOT);
	ck_assert(!c.meets);

	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 2, &c, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(c.rate, 2.5, 1e-12);
	ck_assert_double_eq_tol(c.concurrency, 2.643210, 1e-5);
	ck_assert_double_eq_tol(c.tpot_s, 0.01047102, 1e-7);
	ck_assert_double_eq_tol(c.ttft_s, 0.01018200, 1e-7);
	ck_assert(c.meets);
	/* Little's law holds for what evaluate reports (fixed lengths: the
	 * percentile prompt is the mean one) */
	ck_assert_double_eq_tol(c.concurrency, kvp_size_concurrency(c.rate, c.ttft_s, 100, c.tpot_s), 1e-6);

	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	ck_assert(c.meets);
	ck_assert_uint_eq(c.replicas, 2);
	ck_assert_uint_eq(c.count, 2);
	ck_assert_double_eq_tol(c.cost_per_hour, 4.0, 1e-12);
	ck_assert_double_eq_tol(c.tokens_per_s, 500, 1e-9);
	ck_assert_double_eq_tol(c.cost_per_mtok, 4.0 / 1.8, 1e-9);
	kvp_workload_free(&wl);
}
END_TEST

/* A 30B model quantized to 4 bits on a 24 GB GPU: 30e9 x 0.5 B = 15e9 B of
 * weights, "about 9 GB left"; in the example's round binary figures, 24 GiB -
 * 15 GiB = 9 GiB; at 256 KiB per token (64 layers x 2 x 8 KV heads x 128 x
 * 2 B = 262,144 B) that is 9 x 2^30 / 2^18 = 36,864 tokens, "about 36,000".
 * A sequence of 4,096 tokens takes 1 GiB: 9 of them fit.  9 users fit one
 * GPU; 10 do not (memory), and two replicas of 5 do. */
START_TEST(test_30b_int4_on_24gb)
{
	load("llama-2-7b", "size-memory");
	model.num_layers = 64;
	for (uint32_t i = 0; i < 64; i++)
		model.layers[i] = KVP_LAYER_FULL;
	model.num_kv_heads = 8;
	model.params = model.active_params = 30000000000ULL;
	model.max_context = 8192;
	round_gpu(24 * KVP_GIB);
	opts.budget.has_weights = true;
	opts.budget.weights_bytes = 15 * KVP_GIB;
	derive();
	ck_assert_uint_eq(demand.mean_context, 4096); /* 3,072 + 2,048 / 2 */
	ck_assert_uint_eq(demand.max_model_len, 6144);

	struct kvp_size_config c;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(c.kv_pool_bytes, 9 * KVP_GIB);
	ck_assert_uint_eq(c.kv_pool_bytes / 262144, 36864);
	ck_assert_uint_eq(c.max_sequences, 9);
	ck_assert_uint_eq(c.sequences, 9);
	ck_assert_uint_eq(c.kv_bytes_needed, 9 * KVP_GIB);
	ck_assert_msg(c.meets, "failed %u", c.failed);

	wl.concurrent_users = 10;
	derive();
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(c.sequences, 10);
	ck_assert_uint_eq(c.failed, KVP_SIZE_FAIL_MEMORY);
	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(c.replicas, 2);
	ck_assert_uint_eq(c.sequences, 5);
	ck_assert(c.meets);
	kvp_workload_free(&wl);
}
END_TEST

/* Constraints no replica count cures, and saturation. */
START_TEST(test_failures)
{
	struct kvp_size_config c;
	struct kvp_error err = {0};
	replicas_case();
	/* tp 3 does not divide 32 heads: a failed split, not an error */
	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 3, &c, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(c.failed, KVP_SIZE_FAIL_SPLIT);
	ck_assert_uint_eq(c.count, 3);
	/* 200 requests/s: rho = 200 x 10.05 ms = 2.01 on one replica */
	demand.rate = 200;
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 1, &c, &err), KVP_STATUS_OK);
	ck_assert(c.failed & KVP_SIZE_FAIL_THROUGHPUT);
	opts.max_replicas = 1;
	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	ck_assert(!c.meets);
	ck_assert_uint_eq(c.replicas, 1);
	opts.max_replicas = 0;
	/* a TPOT level below the bare weights read (10 ms) fails at any count */
	demand.rate = 5;
	demand.slo_tpot_s = 0.009;
	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(c.failed, KVP_SIZE_FAIL_TPOT);
	ck_assert_uint_eq(c.replicas, 1);
	ck_assert_uint_eq(c.never, KVP_SIZE_FAIL_TPOT);
	/* The defect: a rate that saturates one replica and a TPOT
	 * level no replica count meets must be reported as TPOT, not as
	 * throughput.  An idle replica decodes one sequence of 150 tokens:
	 * 10 ms of weights + 150 x 524,288 B / 1 TB/s = 10 + 0.0786432 =
	 * 10.0786432 ms > 10 ms, at any replica count.  The search then stops at
	 * the fewest replicas where only that fails: 200 requests/s saturates
	 * 1 and 2 replicas (rho = 200 x 10.0524288 ms / R = 2.01, 1.005), decode
	 * runs away on 3 and converges on 4 (test_failures' numbers in
	 * tests/cli-size.sh); the idle prefill of the p90 prompt (100 tokens)
	 * is S = 10.0524288 ms. */
	demand.rate = 200;
	demand.slo_tpot_s = 0.010;
	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(c.never, KVP_SIZE_FAIL_TPOT);
	ck_assert_uint_eq(c.failed, KVP_SIZE_FAIL_TPOT);
	ck_assert_uint_eq(c.replicas, 4);
	ck_assert_double_eq_tol(c.floor_tpot_s, 0.0100786432, 1e-12);
	ck_assert_double_eq_tol(c.floor_ttft_s, 0.0100524288, 1e-12);
	/* one replica fails throughput too, and names the floor first */
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(c.failed, KVP_SIZE_FAIL_THROUGHPUT | KVP_SIZE_FAIL_TPOT);
	char order[64];
	kvp_size_fail_format(c.failed, c.never, order, sizeof order);
	ck_assert_str_eq(order, "tpot,throughput");
	/* a TTFT level under the idle prefill (10.05 ms) fails at any count */
	demand.slo_tpot_s = 0.0107;
	demand.slo_ttft_s = 0.010;
	demand.rate = 5;
	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(c.never, KVP_SIZE_FAIL_TTFT);
	ck_assert_uint_eq(c.replicas, 2); /* TPOT needs 2 (test_replicas_by_hand) */
	ck_assert_uint_eq(c.failed, KVP_SIZE_FAIL_TTFT);
	demand.slo_ttft_s = 1.0;
	/* weights of 90 GB on 80 GiB (85.9 GB) */
	demand.slo_tpot_s = 0.0107;
	opts.budget.weights_bytes = 90000000000ULL;
	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	ck_assert(c.failed & KVP_SIZE_FAIL_WEIGHTS);
	/* max_model_len 4,096 = 2 GiB of KV does not fit a 1.5 GiB pool */
	round_gpu(10 * KVP_GIB + 3 * KVP_GIB / 2);
	opts.budget.weights_bytes = 10 * KVP_GIB;
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 1, &c, &err), KVP_STATUS_OK);
	ck_assert(c.failed & KVP_SIZE_FAIL_CONTEXT);
	char buf[64];
	kvp_size_fail_format(KVP_SIZE_FAIL_MEMORY | KVP_SIZE_FAIL_TPOT, 0, buf, sizeof buf);
	ck_assert_str_eq(buf, "memory,tpot");
	kvp_size_fail_format(KVP_SIZE_FAIL_MEMORY | KVP_SIZE_FAIL_TPOT, KVP_SIZE_FAIL_TPOT, buf, sizeof buf);
	ck_assert_str_eq(buf, "tpot,memory");
	kvp_size_fail_format(0, 0, buf, sizeof buf);
	ck_assert_str_eq(buf, "");
	ck_assert_str_eq(kvp_size_fail_name(KVP_SIZE_FAIL_THROUGHPUT), "throughput");
	kvp_workload_free(&wl);
}
END_TEST


/* issue 33: the closed loop (--users) once iterated lambda = C / W(lambda)
 * and, past saturation, alternated between an infinite wait (next rate 0)
 * and rate 0 (no wait), ending on 0 after an even number of turns: such
 * rows met every target with one user's throughput.  replicas_case's numbers
 * (test_replicas_by_hand): S = 10.0524288 ms, k = 78.6432 us, output 100.
 * 300 users on one replica: step = 10 ms + 300 k = 33.59296 ms, D = 100 x
 * step = 3.359296 s.  The closed loop's Little's law lambda W(lambda) = 300
 * with rho = lambda S, W = S + rho S / (2 (1 - rho)) + D / (1 - rho):
 *   rho + rho^2 / (2 (1 - rho)) + rho D / (S (1 - rho)) = 300
 *   -> rho^2 / 2 - (301 + D / S) rho + 300 = 0, D / S = 334.17755
 *   -> rho = 635.17755 - sqrt(635.17755^2 - 600) = 0.4724846,
 *      lambda = rho / S = 47.00204 requests/s.
 * 600 users: unqueued, each comes back every W(0) = S + 100 (10 ms + 600 k)
 * = 5.7286444 s: 600 / 5.7286444 = 104.74 requests/s against a prefill
 * that serves 1 / S = 99.48: overloaded, a throughput failure, and the
 * search adds a replica (300 each, as above). */
START_TEST(test_users_closed_loop)
{
	struct kvp_size_config c;
	struct kvp_error err = {0};
	replicas_case();
	demand.rate = 0;
	demand.slo_ttft_s = demand.slo_tpot_s = 0;
	demand.users = 300;
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(c.prefill_utilization, 0.4724846, 1e-6);
	ck_assert_double_eq_tol(c.rate, 47.00204, 1e-4);
	ck_assert_double_eq_tol(c.concurrency, 300, 1e-9);
	/* N = lambda W on what evaluate reports (fixed lengths: p90 prompt = mean) */
	ck_assert_double_eq_tol(kvp_size_concurrency(c.rate, c.ttft_s, 100, c.tpot_s), 300, 1e-6);
	ck_assert_msg(c.meets, "failed %u", c.failed);

	demand.users = 600;
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 1, &c, &err), KVP_STATUS_OK);
	ck_assert(c.failed & KVP_SIZE_FAIL_THROUGHPUT);
	ck_assert(!c.meets);
	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	ck_assert(c.meets);
	ck_assert_uint_eq(c.replicas, 2);
	ck_assert_double_eq_tol(c.rate, 47.00204, 1e-4);
	kvp_workload_free(&wl);
}
END_TEST

START_TEST(test_rank)
{
	struct kvp_size_config c[4] = {0};
	strcpy(c[0].gpu, "a"); c[0].meets = false; c[0].failed = KVP_SIZE_FAIL_MEMORY; c[0].cost_per_hour = 1;
	strcpy(c[1].gpu, "b"); c[1].meets = true; c[1].cost_per_hour = 8; c[1].count = 2;
	strcpy(c[2].gpu, "c"); c[2].meets = true; c[2].cost_per_hour = 4; c[2].count = 4;
	strcpy(c[3].gpu, "d"); c[3].meets = true; c[3].cost_per_hour = NAN; c[3].count = 1;
	kvp_size_rank(c, 4);
	ck_assert_str_eq(c[0].gpu, "c"); /* cheapest that meets */
	ck_assert_str_eq(c[1].gpu, "b");
	ck_assert_str_eq(c[2].gpu, "a"); /* priced failures after the priced that meet */
	ck_assert_str_eq(c[3].gpu, "d"); /* no price on the basis: ranked apart, last,
					   * though it meets (issue 35) */
	ck_assert(kvp_size_priced(&c[2]));
	ck_assert(!kvp_size_priced(&c[3]));

	/* without a rate each serves its own throughput: $0.68/h at 40 tokens/s
	 * is 0.68 / (40 x 3,600 / 1e6 = 0.144 Mtok/h) = $4.72/Mtok; $1.85/h at
	 * 250 tokens/s is 1.85 / 0.9 = $2.06/Mtok: the dearer GPU is the cheaper
	 * buy, 2.3 x per token, and ranks first */
	struct kvp_size_config d[2] = {0};
	strcpy(d[0].gpu, "cheap-slow"); d[0].meets = true; d[0].count = 1;
	d[0].cost_per_hour = 0.68; d[0].cost_per_mtok = 0.68 / (40 * 3600 / 1e6);
	strcpy(d[1].gpu, "dear-fast"); d[1].meets = true; d[1].count = 1;
	d[1].cost_per_hour = 1.85; d[1].cost_per_mtok = 1.85 / (250 * 3600 / 1e6);
	ck_assert_double_eq_tol(d[0].cost_per_mtok, 4.7222, 1e-4);
	ck_assert_double_eq_tol(d[1].cost_per_mtok, 2.0556, 1e-4);
	kvp_size_rank(d, 2);
	ck_assert_str_eq(d[0].gpu, "dear-fast");
	ck_assert_str_eq(d[1].gpu, "cheap-slow");
}
END_TEST

START_TEST(test_emit)
{
	load("llama-2-7b", "size-replicas");
	struct kvp_size_config c = {0};
	strcpy(c.gpu, "h100-sxm");
	c.tp = 2;
	c.replicas = 3;
	c.count = 6;
	c.kv_dtype = KVP_DTYPE_FP8;
	c.block_size = 16;
	c.utilization = 0.9;
	c.max_model_len = 4096;
	c.max_num_seqs = 64;
	c.max_batched_tokens = 8192;
	c.kv_pool_bytes = 1000;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	kvp_size_emit(f, KVP_ENGINE_VLLM, &model, &c, false);
	kvp_size_emit(f, KVP_ENGINE_SGLANG, &model, &c, false);
	kvp_size_emit(f, KVP_ENGINE_TRTLLM, &model, &c, false);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "vllm serve 'meta-llama/Llama-2-7b-hf' --tensor-parallel-size 2"));
	ck_assert_ptr_nonnull(strstr(buf, "--max-model-len 4096 --max-num-seqs 64"));
	ck_assert_ptr_nonnull(strstr(buf, "--gpu-memory-utilization 0.9000 --kv-cache-dtype 'fp8' --block-size 16"));
	ck_assert_ptr_nonnull(strstr(buf, "3 replicas of 2 x h100-sxm (6 GPUs)"));
	ck_assert_ptr_nonnull(strstr(buf, "--tp-size 2"));
	ck_assert_ptr_nonnull(strstr(buf, "--kv-cache-dtype 'fp8_e4m3'"));
	ck_assert_ptr_nonnull(strstr(buf, "--max-running-requests 64"));
	ck_assert_ptr_nonnull(strstr(buf, "trtllm-serve 'meta-llama/Llama-2-7b-hf' --tp_size 2 --max_seq_len 4096"));
	ck_assert_ptr_nonnull(strstr(buf, "--kv_cache_free_gpu_memory_fraction 0.9000"));
	ck_assert_ptr_nonnull(strstr(buf, "  dtype: \"fp8\"\n"));
	ck_assert_ptr_nonnull(strstr(buf, "--extra_llm_api_options kvplan-trtllm.yaml\n"));
	/* no shared prefix: no prefix caching asked for, block reuse off */
	ck_assert_ptr_null(strstr(buf, "--enable-prefix-caching"));
	ck_assert_ptr_nonnull(strstr(buf, "  enable_block_reuse: false\n"));
	/* the vLLM config file holds what the command line says */
	ck_assert_ptr_nonnull(strstr(buf, "cat > kvplan-vllm.yaml <<'KVPLAN_EOF'\n"
					  "model: \"meta-llama/Llama-2-7b-hf\"\n"
					  "tensor-parallel-size: 2\n"
					  "max-model-len: 4096\n"
					  "max-num-seqs: 64\n"
					  "gpu-memory-utilization: 0.9000\n"
					  "kv-cache-dtype: \"fp8\"\n"
					  "block-size: 16\n"
					  "max-num-batched-tokens: 8192\n"
					  "KVPLAN_EOF\n"));
	free(buf);

	/* shared prefixes, data-parallel attention over 4 ranks with experts
	 * over 8 GPUs, and a model id written to break out of both quotings */
	strcpy(model.hf_id, "a'b\"c\\d\ne #f");
	c.dp = 4;
	c.ep = 8;
	c.count = 24;
	f = open_memstream(&buf, &len);
	kvp_size_emit(f, KVP_ENGINE_VLLM, &model, &c, true);
	kvp_size_emit(f, KVP_ENGINE_SGLANG, &model, &c, true);
	kvp_size_emit(f, KVP_ENGINE_TRTLLM, &model, &c, true);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "--max-num-batched-tokens 8192 --enable-prefix-caching"));
	ck_assert_ptr_nonnull(strstr(buf, "--data-parallel-size 4 --enable-expert-parallel\n"));
	ck_assert_ptr_nonnull(strstr(buf, "enable-prefix-caching: true\ndata-parallel-size: 4\n"
					  "enable-expert-parallel: true\n"));
	/* shell: one single-quoted word, ' as '\'' */
	ck_assert_ptr_nonnull(strstr(buf, "vllm serve 'a'\\''b\"c\\d\ne #f' --tensor-parallel-size 2"));
	/* YAML: one double-quoted scalar on one line */
	ck_assert_ptr_nonnull(strstr(buf, "model: \"a'b\\\"c\\\\d\\ne #f\"\n"));
	/* SGLang and TensorRT-LLM count the 2 x 4 GPUs of a DP group in tp */
	ck_assert_ptr_nonnull(strstr(buf, "--tp-size 8 \\"));
	ck_assert_ptr_nonnull(strstr(buf, "--dp-size 4 --enable-dp-attention --ep-size 8"));
	ck_assert_ptr_nonnull(strstr(buf, "--tp_size 8 --max_seq_len 4096"));
	ck_assert_ptr_nonnull(strstr(buf, "  enable_block_reuse: true\nenable_attention_dp: true\n"));
	ck_assert_ptr_nonnull(strstr(buf, "kvplan-trtllm.yaml --ep_size 8\n"));
	free(buf);
	/* pipeline stages: each engine's flag, and in the header's GPU count */
	c.pp = 2;
	c.dp = 1;
	c.ep = 1;
	c.count = 12;
	f = open_memstream(&buf, &len);
	kvp_size_emit(f, KVP_ENGINE_GENERIC, &model, &c, false);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "3 replicas of 4 x h100-sxm (tp 2 x pp 2 x dp 1) (12 GPUs)"));
	ck_assert_ptr_nonnull(strstr(buf, "--pipeline-parallel-size 2\n"));
	ck_assert_ptr_nonnull(strstr(buf, "pipeline-parallel-size: 2\n"));
	ck_assert_ptr_nonnull(strstr(buf, " --pp-size 2"));
	ck_assert_ptr_nonnull(strstr(buf, "kvplan-trtllm.yaml --pp_size 2\n"));
	free(buf);
	kvp_workload_free(&wl);
}
END_TEST

/* The KV dtype an engine can hold, the GPUs a hardware-only format needs, and
 * vLLM's MLA block size. */
START_TEST(test_emit_consistency)
{
	struct kvp_error err = {0};
	load("llama-2-7b", "size-replicas");
	/* vLLM's CacheDType has no int4: nothing to emit; fp8 is "fp8" in vLLM,
	 * "fp8_e4m3" in SGLang; bf16 on a bf16 model is every engine's auto */
	ck_assert_ptr_null(kvp_size_kv_name(KVP_ENGINE_VLLM, &model, KVP_DTYPE_INT4));
	ck_assert_ptr_null(kvp_size_kv_name(KVP_ENGINE_SGLANG, &model, KVP_DTYPE_NVFP4));
	ck_assert_str_eq(kvp_size_kv_name(KVP_ENGINE_TRTLLM, &model, KVP_DTYPE_NVFP4), "nvfp4");
	ck_assert_str_eq(kvp_size_kv_name(KVP_ENGINE_SGLANG, &model, KVP_DTYPE_FP8), "fp8_e4m3");
	ck_assert_str_eq(kvp_size_kv_name(KVP_ENGINE_VLLM, &model, KVP_DTYPE_BF16), "auto");
	/* nvfp4 needs compute capability 10.0 (developer.nvidia.com/cuda-gpus:
	 * H100 9.0, B200 10.0, RTX 5090 12.0); fp8 is stored anywhere */
	struct kvp_gpu g;
	ck_assert_int_eq(kvp_gpu_load("h100-sxm", &g, &err), KVP_STATUS_OK);
	ck_assert_double_eq(g.compute_capability, 9.0);
	ck_assert(!kvp_size_kv_on_gpu(&g, KVP_DTYPE_NVFP4));
	ck_assert(kvp_size_kv_on_gpu(&g, KVP_DTYPE_FP8));
	ck_assert_int_eq(kvp_gpu_load("b200", &g, &err), KVP_STATUS_OK);
	ck_assert(kvp_size_kv_on_gpu(&g, KVP_DTYPE_NVFP4));
	ck_assert_int_eq(kvp_gpu_load("rtx-5090", &g, &err), KVP_STATUS_OK);
	ck_assert(kvp_size_kv_on_gpu(&g, KVP_DTYPE_NVFP4));
	ck_assert_int_eq(kvp_gpu_load("mi300x", &g, &err), KVP_STATUS_OK); /* AMD: no NVFP4 */
	ck_assert(!kvp_size_kv_on_gpu(&g, KVP_DTYPE_NVFP4));
	/* on a Hopper GPU an nvfp4 plan fails kv_dtype at any replica count */
	ck_assert_int_eq(kvp_gpu_load("h100-sxm", &g, &err), KVP_STATUS_OK);
	derive();
	opts.budget.kv_dtype = KVP_DTYPE_NVFP4;
	struct kvp_size_config c;
	ck_assert_int_eq(kvp_size_search(&model, &g, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(c.failed, KVP_SIZE_FAIL_KV_DTYPE);
	ck_assert_uint_eq(c.never, KVP_SIZE_FAIL_KV_DTYPE);
	/* block size: 64 for MLA on vLLM (FlashMLA's only kernel block size),
	 * the engine's default otherwise */
	ck_assert_uint_eq(kvp_size_block_default(KVP_ENGINE_VLLM, &model), 0);
	kvp_workload_free(&wl);
	ck_assert_int_eq(kvp_model_load("deepseek-v3", &model, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(kvp_size_block_default(KVP_ENGINE_VLLM, &model), 64);
	ck_assert_uint_eq(kvp_size_block_default(KVP_ENGINE_SGLANG, &model), 0);
}
END_TEST

/* The wait's percentile (--slo-percentile), by hand on the replica case:
 * S = 10.0524288 ms, 5 requests/s on one replica: rho = 0.050262144,
 * W_q = rho S / (2 (1 - rho)) = 0.26599794 ms, W_q / rho = S / (2 (1 - rho))
 * = 5.2922031 ms.
 *   p90: rho = 0.05 <= 1 - 0.9: at least 90 % of prompts do not wait: 0
 *   p99: 5.2922031 ms x ln(0.050262144 / 0.01) = 5.2922031 x 1.6146759 =
 *        8.5451611 ms; TTFT = 10.0524288 + 8.5451611 = 18.5975899 ms */
START_TEST(test_wait_percentile)
{
	double s = 0.0100524288, rho = 5 * s, wq = rho * s / (2 * (1 - rho));
	ck_assert_double_eq_tol(wq, 0.00026599794, 1e-11);
	ck_assert_double_eq(kvp_size_wait_percentile(wq, rho, 0.90), 0);
	ck_assert_double_eq_tol(kvp_size_wait_percentile(wq, rho, 0.99), 0.0085451611, 1e-10);
	ck_assert_double_eq(kvp_size_wait_percentile(0, 0, 0.99), 0);
	ck_assert(isinf(kvp_size_wait_percentile(1, 1, 0.99)));
	replicas_case();
	demand.queue_percentile = true;
	demand.percentile = 99;
	struct kvp_size_config c;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(c.queue_s, 0.00026599794, 1e-11);
	ck_assert_double_eq_tol(c.queue_p_s, 0.0085451611, 1e-10);
	ck_assert_double_eq_tol(c.ttft_s, 0.0185975899, 1e-10);
	/* p90: the mean wait no longer counts, the percentile (0) does */
	demand.percentile = 90;
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(c.ttft_s, 0.0100524288, 1e-12);
	kvp_workload_free(&wl);
}
END_TEST

/* Risk: the replica case with TPOT allowed 5 % or 7 % of error.
 *   7 %: an idle replica's step, 10.0786432 ms x 1.07 = 10.784 ms > 10.7:
 *        never met conservatively; two replicas meet the central estimate
 *        (10.47102 ms, test_replicas_by_hand): "meets at risk", tpot.
 *   5 %: 10.0786432 x 1.05 = 10.583 ms <= 10.7, so replicas help: the level
 *        conservatively is TPOT <= 10.7 / 1.05 = 10.190476 ms; the search
 *        stops at the first count that reaches it, and one fewer does not. */
START_TEST(test_risk)
{
	replicas_case();
	struct kvp_size_config c, prev;
	struct kvp_error err = {0};
	opts.latency_spread = 0.07;
	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(c.replicas, 2);
	ck_assert(!c.meets);
	ck_assert(c.at_risk);
	ck_assert_uint_eq(c.risk, KVP_SIZE_FAIL_TPOT);
	ck_assert_uint_eq(c.risk_never, KVP_SIZE_FAIL_TPOT);
	ck_assert_uint_eq(c.failed, 0);
	opts.latency_spread = 0.05;
	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	ck_assert(c.meets);
	ck_assert(c.tpot_s * 1.05 <= 0.0107);
	ck_assert_uint_gt(c.replicas, 2);
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, c.replicas - 1, &prev, &err),
			 KVP_STATUS_OK);
	ck_assert(prev.tpot_s * 1.05 > 0.0107);
	ck_assert(prev.at_risk);
	/* what a failing one misses by: one replica at 0 % is 10.98844 ms
	 * against 10.7 ms: 0.28844 ms over */
	opts.latency_spread = 0;
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(c.miss_tpot_s, 0.01098844 - 0.0107, 1e-7);
	ck_assert_double_eq(c.miss_ttft_s, 0); /* 10.3 ms against 1 s */
	kvp_workload_free(&wl);
}
END_TEST

/* The YAML writer against libyaml: a "model" line written for 2,000 random
 * strings of every byte but NUL (valid UTF-8 mixed in) parses back, through
 * the same loader as the profiles, to exactly the string written, as one
 * scalar on one line.  Strings libyaml refuses as text (invalid UTF-8) are
 * skipped; they must still not break the line. */
START_TEST(test_yaml_round_trip)
{
	static const char *const utf8[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
	srand(1616);
	int parsed = 0;
	for (int t = 0; t < 2000; t++) {
		char in[64];
		size_t n = 0, want = (size_t)(rand() % 40);
		while (n < want) {
			if (rand() % 4 == 0) {
				const char *u = utf8[rand() % 3];
				if (n + strlen(u) >= sizeof in)
					break;
				memcpy(in + n, u, strlen(u));
				n += strlen(u);
			} else {
				int c = rand() % 4 ? 0x20 + rand() % 0x5f : 1 + rand() % 0x7f;
				in[n++] = (char)c;
			}
		}
		in[n] = 0;
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		kvp_yaml_kv_str(f, 0, "model", in);
		fclose(f);
		ck_assert_ptr_eq(strchr(buf, '\n'), buf + len - 1); /* one line */
		struct kvp_doc *doc = NULL;
		struct kvp_error err = {0};
		if (kvp_doc_load_buffer("t.yaml", buf, len, &doc, &err) == KVP_STATUS_OK) {
			const struct kvp_node *v = kvp_map_get(doc->root, "model");
			ck_assert_ptr_nonnull(v);
			ck_assert_msg(strcmp(v->value, in) == 0, "wrote '%s', read '%s'", in, v->value);
			ck_assert_uint_eq(doc->root->n, 1);
			parsed++;
			kvp_doc_free(doc);
		}
		free(buf);
	}
	ck_assert_int_gt(parsed, 1500);
}
END_TEST

/* Disaggregated 1:1 by hand, on the replica case (5 requests/s, 100 + 100
 * tokens, k = 150 x 524,288 B / 1 TB/s = 78.6432 us per sequence per step):
 *   prefill instance: rho = 5 x 10.0524288 ms = 0.050262144, W_q = 0.26599794 ms
 *   decode instance: 5 requests/s, no prefill stalls, no TTFT held:
 *     C = 5 x 100 x (0.01 + k C) -> C (1 - 0.0393216) = 5 -> C = 5.2046554
 *     TPOT = 0.01 + k C = 10.409311 ms
 *   KV moved: 100 tokens in blocks of 16 = 112 tokens x 524,288 B =
 *     58,720,256 B over PCIe 4.0 x16 at 25 GB/s effective = 2.34881024 ms
 *   TTFT = 10.0524288 + 0.2659979 + 2.3488102 = 12.6672369 ms
 *   2 GPUs (1 + 1), where colocated needs 2 replicas for the TPOT level */
START_TEST(test_disagg_by_hand)
{
	replicas_case();
	opts.disagg_p = opts.disagg_d = 1;
	struct kvp_size_config c;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	ck_assert(c.meets);
	ck_assert_uint_eq(c.replicas, 1);
	ck_assert_uint_eq(c.count, 2);
	ck_assert_double_eq_tol(c.prefill_utilization, 0.050262144, 1e-12);
	ck_assert_double_eq_tol(c.concurrency, 5.2046554, 1e-6);
	ck_assert_double_eq_tol(c.tpot_s, 0.010409311, 1e-9);
	ck_assert_double_eq_tol(c.transfer_s, 0.00234881024, 1e-14);
	ck_assert_double_eq_tol(c.ttft_s, 0.0126672369, 1e-9);
	ck_assert_double_eq_tol(c.tokens_per_s, 500, 1e-9);
	/* 1:2: each decode instance 2.5 requests/s, 3 GPUs */
	opts.disagg_d = 2;
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 1, &c, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(c.count, 3);
	ck_assert_double_eq_tol(c.rate, 2.5, 1e-12);
	kvp_workload_free(&wl);
}
END_TEST

/* The price of a GPU-hour on each basis, by hand. */
START_TEST(test_cost_basis)
{
	round_gpu(80 * KVP_GIB);
	strcpy(gpu.price_kind, "on-demand");
	struct kvp_size_cost c = {0};
	const char *label = NULL;
	/* cloud, any kind: the profile's $2, labelled with its kind */
	ck_assert_double_eq(kvp_size_gpu_hour(&gpu, &c, &label), 2.0);
	ck_assert_str_eq(label, "on-demand");
	/* cloud:spot: an on-demand price is not a spot price */
	strcpy(c.kind, "spot");
	ck_assert(isnan(kvp_size_gpu_hour(&gpu, &c, &label)));
	strcpy(c.kind, "on-demand");
	ck_assert_double_eq(kvp_size_gpu_hour(&gpu, &c, NULL), 2.0);
	/* a price given on the command line matches any kind */
	strcpy(gpu.price_kind, "given");
	strcpy(c.kind, "spot");
	ck_assert_double_eq(kvp_size_gpu_hour(&gpu, &c, NULL), 2.0);
	/* own, without purchase price or TDP: unknown, and the label says so */
	c.basis = KVP_SIZE_BASIS_OWN;
	ck_assert(isnan(kvp_size_gpu_hour(&gpu, &c, &label)));
	ck_assert_str_eq(label, "none");
	/* $10,000 over 2 years at 50 % use: 10,000 / (2 x 8,760 x 0.5) =
	 * 1.141552511 $/h; 500 W x PUE 1.5 at $0.20/kWh = 0.5 x 1.5 x 0.2 =
	 * 0.15 $/h; 1.291552511 in all */
	gpu.purchase_usd = 10000;
	gpu.tdp_watts = 500;
	c.years = 2;
	c.utilization = 0.5;
	c.pue = 1.5;
	c.power_usd_per_kwh = 0.2;
	ck_assert_double_eq_tol(kvp_size_gpu_hour(&gpu, &c, NULL), 1.291552511, 1e-9);
	/* the defaults: 3 years, all hours, PUE 1.3, $0.10/kWh: 10,000 / 26,280
	 * = 0.380517504 + 0.5 x 1.3 x 0.1 = 0.065 -> 0.445517504 */
	struct kvp_size_cost d = {.basis = KVP_SIZE_BASIS_OWN};
	ck_assert_double_eq_tol(kvp_size_gpu_hour(&gpu, &d, NULL), 0.445517504, 1e-9);
	/* a server of 8 bought whole for $160,000 replaces the GPU's own price:
	 * 160,000 / 8 = 20,000 per GPU; 20,000 / 26,280 = 0.761035008 + 0.065
	 * = 0.826035008 */
	gpu.server_usd = 160000;
	gpu.node_gpus = 8;
	ck_assert_double_eq_tol(kvp_size_gpu_hour(&gpu, &d, NULL), 0.826035008, 1e-9);
	/* without the server's size the share is unknown: the GPU's price */
	gpu.node_gpus = 0;
	ck_assert_double_eq_tol(kvp_size_gpu_hour(&gpu, &d, NULL), 0.445517504, 1e-9);
	gpu.server_usd = 0;
	/* no cloud price: label none */
	struct kvp_size_cost cl = {0};
	gpu.price_per_hour = 0;
	ck_assert(isnan(kvp_size_gpu_hour(&gpu, &cl, &label)));
	ck_assert_str_eq(label, "none");
}
END_TEST

/* The replica search against a brute-force reference: for random rates,
 * levels, weights and memory, every replica count 1 .. 48 is evaluated in a
 * plain loop and the first that fails nothing but what no count cures must
 * be what kvp_size_search returns (it bisects instead). */
START_TEST(test_search_brute_force)
{
	load("llama-2-7b", "size-replicas");
	struct kvp_error err = {0};
	srand(16);
	opts.max_replicas = 48;
	opts.budget.has_weights = true;
	int several = 0, floor_only = 0, capped = 0; /* the cases must reach every branch */
	for (int trial = 0; trial < 40; trial++) {
		round_gpu((uint64_t)(16 + rand() % 64) * KVP_GIB);
		opts.budget.weights_bytes = (uint64_t)(2 + rand() % 12) * 1000000000ULL;
		derive();
		demand.rate = 1 + rand() % 400;
		demand.slo_tpot_s = 0.004 + (rand() % 100) * 0.0005;
		demand.slo_ttft_s = 0.005 + (rand() % 100) * 0.002;
		uint32_t tp = 1u << (rand() % 3);
		/* max_num_seqs as an axis: no cap in half the trials, else 1 .. 16 */
		opts.max_num_seqs = rand() % 2 ? 0 : (uint64_t)(1 + rand() % 16);
		struct kvp_size_config got, ref;
		ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, tp, &got, &err),
				 KVP_STATUS_OK);
		uint32_t want = 0;
		unsigned never = 0;
		for (uint32_t r = 1; r <= 48 && !want; r++) {
			ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, tp, r, &ref, &err),
					 KVP_STATUS_OK);
			never = ref.never;
			if ((ref.failed & ~ref.never) == 0)
				want = r;
			if (ref.failed & KVP_SIZE_FAIL_FIXED)
				break;
		}
		if (want && !(never & KVP_SIZE_FAIL_FIXED)) {
			ck_assert_msg(got.replicas == want, "trial %d: search %u replicas, brute force %u",
				      trial, got.replicas, want);
			ck_assert_uint_eq(got.failed, never);
			ck_assert(got.meets == (never == 0));
			/* a cap holds: no more sequences in flight, none scheduled */
			if (opts.max_num_seqs && !never) {
				ck_assert_uint_le(got.sequences, opts.max_num_seqs);
				ck_assert_uint_le(got.max_num_seqs, opts.max_num_seqs);
				capped++;
			}
			several += want > 1;
			floor_only += never != 0;
		} else {
			ck_assert(!got.meets);
		}
	}
	ck_assert_int_gt(several, 3);
	ck_assert_int_gt(floor_only, 0);
	ck_assert_int_gt(capped, 3);
	opts.max_num_seqs = 0;
	kvp_workload_free(&wl);
}
END_TEST

/* max_num_seqs as an axis (tests/check-size.c test_replicas_by_hand has the
 * uncapped steps): 5 requests/s of 100 + 100 tokens; uncapped, 2 replicas
 * hold C = 2.643 (3 sequences) at TPOT 10.471 ms.  A cap of 2 refuses that
 * (3 > 2); 3 replicas see 5/3 requests/s, each ~1.02 s in the system (10 ms
 * TTFT + 100 steps of ~10.1 ms), C ~ 1.7: 2 sequences, fits.  A cap of 1
 * needs C <= 1: 5 replicas give 1 request/s x ~1.01 s > 1, 6 give 0.83 x
 * ~1.01 s ~ 0.85: 6.  Fewer sequences a replica step faster: each capped
 * point costs more ($6, $12 an hour against $4) at a lower TPOT, so all
 * three are on the front; the front is checked against its definition in a
 * plain loop. */
START_TEST(test_seqs_axis)
{
	replicas_case();
	static const uint32_t one[] = {1};
	static const enum kvp_dtype kv[] = {KVP_DTYPE_AUTO};
	static const uint64_t seqs[] = {0, 2, 1};
	struct kvp_size_space sp = {one, one, one, one, 1, 1, 1, 1, kv, 1, NULL, 0, seqs, 3};
	ck_assert_uint_eq(kvp_size_space_points(&sp), 3);
	struct kvp_size_config c[3];
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_size_search_space(&model, &gpu, &demand, &opts, &sp, c, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(c[0].replicas, 2);
	ck_assert_uint_eq(c[1].replicas, 3);
	ck_assert_uint_eq(c[2].replicas, 6);
	ck_assert_uint_eq(c[1].sequences, 2);
	ck_assert_uint_eq(c[1].max_num_seqs, 2); /* what --emit writes */
	ck_assert_uint_eq(c[2].max_num_seqs, 1);
	ck_assert(c[0].meets && c[1].meets && c[2].meets);
	ck_assert(c[0].max_num_seqs > 2);
	ck_assert_double_eq_tol(c[1].cost_per_hour, 6.0, 1e-12);
	ck_assert_double_eq_tol(c[2].cost_per_hour, 12.0, 1e-12);
	ck_assert(c[1].tpot_s < c[0].tpot_s && c[2].tpot_s < c[1].tpot_s);
	ck_assert_uint_eq(kvp_size_pareto(c, 3), 3);
	for (int i = 0; i < 3; i++) {
		ck_assert(c[i].pareto);
		for (int j = 0; j < 3; j++)
			ck_assert(j == i || !(c[j].cost_per_mtok <= c[i].cost_per_mtok &&
					      c[j].tpot_s <= c[i].tpot_s && c[j].ttft_s <= c[i].ttft_s &&
					      (c[j].cost_per_mtok < c[i].cost_per_mtok ||
					       c[j].tpot_s < c[i].tpot_s || c[j].ttft_s < c[i].ttft_s)));
	}
	/* the space's shortcuts (a cap the uncapped answer already keeps to)
	 * agree with searching each cap on its own, over caps 0 .. 8 */
	static const uint64_t caps[] = {0, 8, 7, 6, 5, 4, 3, 2, 1};
	struct kvp_size_space sp9 = {one, one, one, one, 1, 1, 1, 1, kv, 1, NULL, 0, caps, 9};
	struct kvp_size_config c9[9], alone;
	/* and with at most 4 replicas, where cap 1 (6 replicas) cannot meet */
	for (uint32_t maxr = 0; maxr <= 4; maxr += 4) {
		opts.max_replicas = maxr;
		opts.max_num_seqs = 0;
		ck_assert_int_eq(kvp_size_search_space(&model, &gpu, &demand, &opts, &sp9, c9, &err),
				 KVP_STATUS_OK);
		for (int i = 0; i < 9; i++) {
			opts.max_num_seqs = caps[i];
			ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &alone, &err),
					 KVP_STATUS_OK);
			ck_assert_uint_eq(c9[i].replicas, alone.replicas);
			ck_assert_uint_eq(c9[i].max_num_seqs, alone.max_num_seqs);
			ck_assert_uint_eq(c9[i].failed, alone.failed);
			ck_assert(c9[i].meets == alone.meets);
			ck_assert_double_eq(c9[i].tpot_s, alone.tpot_s);
		}
		ck_assert(maxr == 0 || !c9[8].meets);
	}
	opts.max_replicas = 0;
	/* the same evaluated at one replica fewer: the cap is what refuses it */
	struct kvp_size_config r;
	opts.max_num_seqs = 2;
	ck_assert_int_eq(kvp_size_evaluate(&model, &gpu, &demand, &opts, 1, 2, &r, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(r.failed, KVP_SIZE_FAIL_MEMORY);
	ck_assert_uint_eq(r.miss_sequences, 1); /* 3 sequences, 2 allowed */
	kvp_workload_free(&wl);
}
END_TEST

/* The Pareto front against its definition, by brute force on random
 * configurations: nothing on it is dominated by a candidate, everything off
 * it (a candidate) is; non-candidates (memory, throughput, fixed failures or
 * an unknown cost) are never on it. */
START_TEST(test_pareto_brute_force)
{
	enum { N = 60 };
	static struct kvp_size_config c[N];
	srand(161);
	for (int trial = 0; trial < 50; trial++) {
		for (int i = 0; i < N; i++) {
			memset(&c[i], 0, sizeof c[i]);
			/* coarse values so ties happen */
			c[i].cost_per_mtok = rand() % 10 == 0 ? NAN : (double)(rand() % 8);
			c[i].tpot_s = (double)(rand() % 8);
			c[i].ttft_s = (double)(rand() % 8);
			int f = rand() % 10;
			c[i].failed = f == 0 ? KVP_SIZE_FAIL_MEMORY : f == 1 ? KVP_SIZE_FAIL_TPOT : 0;
		}
		size_t front = kvp_size_pareto(c, N), seen = 0;
		for (int i = 0; i < N; i++) {
			bool cand = !isnan(c[i].cost_per_mtok) && c[i].failed != KVP_SIZE_FAIL_MEMORY;
			bool dominated = false;
			for (int j = 0; j < N; j++) {
				bool candj = !isnan(c[j].cost_per_mtok) && c[j].failed != KVP_SIZE_FAIL_MEMORY;
				if (!candj || j == i)
					continue;
				if (c[j].cost_per_mtok <= c[i].cost_per_mtok && c[j].tpot_s <= c[i].tpot_s &&
				    c[j].ttft_s <= c[i].ttft_s &&
				    (c[j].cost_per_mtok < c[i].cost_per_mtok || c[j].tpot_s < c[i].tpot_s ||
				     c[j].ttft_s < c[i].ttft_s))
					dominated = true;
			}
			ck_assert_msg(c[i].pareto == (cand && !dominated), "trial %d config %d", trial, i);
			seen += c[i].pareto;
		}
		ck_assert_uint_eq(front, seen);
		ck_assert_uint_gt(front, 0);
	}
}
END_TEST

/* YAML double-quoted scalars: '"' and '\' escaped, line breaks and other
 * control characters never written raw (YAML 1.2, 5.7 escaped characters). */
START_TEST(test_yaml_writer)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
		{"meta-llama/Llama-3.1-8B", "\"meta-llama/Llama-3.1-8B\""},
		{"", "\"\""},
		{"a\"b", "\"a\\\"b\""},
		{"a\\b", "\"a\\\\b\""},
		{"x\ny", "\"x\\ny\""},
		{"t\tu", "\"t\\tu\""},
		{"\x01#: - &*!", "\"\\x01#: - &*!\""},
		{"\xc3\xa9", "\"\xc3\xa9\""}, /* UTF-8 kept */
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		kvp_yaml_str(f, cases[i].in);
		fclose(f);
		ck_assert_str_eq(buf, cases[i].out);
		free(buf);
	}
}
END_TEST

/* The model argument of --emit, by hand: a local file as given (config.json
 * by its folder), "./" before a leading '-', an id with '-' refused. */
static const struct {
	const char *path, *hf_id, *name, *want; /* want NULL: refused */
} launch_cases[] = {
	{"models/llama/config.json", "meta-llama/Llama-2-7b-hf", "llama", "models/llama"},
	{"config.json", "", "x", "."},
	{"/config.json", "", "x", "/"},
	{"-d/config.json", "", "d", "./-d"},
	{"/m/q4.gguf", "", "Llama 3", "/m/q4.gguf"},
	{"-q4.gguf", "", "q", "./-q4.gguf"},
	{"p/x.yaml", "org/m", "x", "org/m"},
	{"p/x.yaml", "", "x", "x"},
	{"p/x.yaml", "--model=evil", "x", NULL},
	{"p/-x.yaml", "", "-x", NULL},
};

START_TEST(test_launch_id)
{
	struct kvp_model m;
	memset(&m, 0, sizeof m);
	snprintf(m.path, sizeof m.path, "%s", launch_cases[_i].path);
	snprintf(m.hf_id, sizeof m.hf_id, "%s", launch_cases[_i].hf_id);
	snprintf(m.name, sizeof m.name, "%s", launch_cases[_i].name);
	char id[600];
	struct kvp_error err;
	kvp_status st = kvp_size_launch_id(&m, id, sizeof id, &err);
	if (launch_cases[_i].want) {
		ck_assert_int_eq(st, KVP_STATUS_OK);
		ck_assert_str_eq(id, launch_cases[_i].want);
	} else {
		ck_assert_int_eq(st, KVP_STATUS_INVALID);
		ck_assert_str_eq(err.path, launch_cases[_i].path);
	}
	/* never cut: a buffer one byte short is an overflow */
	if (launch_cases[_i].want) {
		char small[64];
		size_t need = strlen(launch_cases[_i].want);
		ck_assert_int_eq(kvp_size_launch_id(&m, small, need, &err), KVP_STATUS_OVERFLOW);
		ck_assert_int_eq(kvp_size_launch_id(&m, small, need + 1, &err), KVP_STATUS_OK);
	}
}
END_TEST

START_TEST(test_demand_errors)
{
	struct kvp_error err = {0};
	load("llama-2-7b", "size-replicas");
	/* no max_len: the model's max_context, here shorter than the mean
	 * sequence of 150 tokens */
	model.max_context = 120;
	ck_assert_int_eq(kvp_size_demand(&wl, &model, &demand, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "max_len");
	/* with max_len 120 the output is cut to 20 tokens: 100 + 19 / 2 = 109.5 -> 110 */
	wl.max_len = 120;
	ck_assert_int_eq(kvp_size_demand(&wl, &model, &demand, &err), KVP_STATUS_OK);
	ck_assert_double_eq(demand.output_mean, 20);
	ck_assert_uint_eq(demand.mean_context, 110);
	ck_assert_uint_eq(demand.max_model_len, 120);
	kvp_workload_free(&wl);
}
END_TEST

/* Sizing on the simulator, a closed loop by hand (the replicas case's
 * model and GPU, 100 + 100 tokens, no think time): N users arrive together,
 * one step prefills all N (100 N <= 8,192 batched tokens) reading 10 GB of
 * weights and N x 100 x 524,288 B of KV at 1 TB/s, 99 decode steps follow,
 * all finish together and send again, so every request's
 *   TTFT(N) = (10e9 + N x 52,428,800) / 1e12 s.
 * The level T at p90 admits the largest N with TTFT(N) <= T; each T sits
 * about 0.2 % from both neighbours (the percentiles are bin middles, 0.1 %):
 *   T 10.288 ms: TTFT(5) 10.2621, TTFT(6) 10.3146 -> 5
 *   T 11.020 ms: TTFT(19) 10.9961, TTFT(20) 11.0486 -> 19
 *   T 11.600 ms: TTFT(30) 11.5729, TTFT(31) 11.6253 -> 30
 * and R = ceil(users / N), or 1 when the users are fewer than N. */
static const struct sim_closed_case {
	double ttft_s;
	uint64_t users, capacity;
	uint32_t replicas;
} sim_closed_cases[] = {
	{0.010288, 40, 5, 8},     /* ceil(40 / 5) */
	{0.011020, 40, 19, 3},    /* ceil(40 / 19) */
	{0.011600, 100, 30, 4},   /* ceil(100 / 30) */
	{0.011600, 10, 10, 1},    /* 10 users: all on one, the most asked for */
};

START_TEST(test_simulate_closed)
{
	const struct sim_closed_case *k = &sim_closed_cases[_i];
	struct kvp_error err = {0};
	struct kvp_size_config c;
	replicas_case();
	demand.rate = 0;
	demand.users = k->users;
	demand.percentile = 90;
	demand.slo_ttft_s = k->ttft_s;
	demand.slo_tpot_s = 1;
	ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
	struct kvp_size_sim_opts so = {.w = &wl};
	ck_assert_msg(kvp_size_simulate(&model, &gpu, &demand, &opts, &so, &c, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	ck_assert(c.simulated);
	ck_assert_double_eq(c.sim_capacity, (double)k->capacity);
	ck_assert_uint_eq(c.replicas, k->replicas);
	ck_assert_uint_eq(c.count, k->replicas);              /* tp 1, pp 1 */
	ck_assert_double_eq_tol(c.cost_per_hour, 2.0 * k->replicas, 1e-9);
	ck_assert(c.meets);
	/* one user alone: one prefill step and the mean of 99 decode steps at
	 * contexts 101 .. 199, (10e9 + 150 x 524,288) / 1e12 */
	ck_assert_double_eq_tol(c.floor_ttft_s, 0.0100524288, 2e-5);
	ck_assert_double_eq_tol(c.floor_tpot_s, 0.0100786432, 2e-5);
	kvp_workload_free(&wl);
}
END_TEST

/* Sizing on the simulator over random Poisson demands: whatever the
 * simulator finds, the row follows from it.  R is ceil(rate / capacity) (up
 * to 3 more when the run at the share misses by seeded noise), a row that
 * meets has TTFT and TPOT within their levels, and a TPOT level below one
 * user's 10.0786432 ms (above) is never met, by the difference. */
START_TEST(test_simulate_random)
{
	struct kvp_rng rng;
	kvp_rng_seed(&rng, 33);
	for (int t = 0; t < 12; t++) {
		struct kvp_error err = {0};
		struct kvp_size_config c;
		replicas_case();
		demand.rate = 1 + 59 * kvp_rng_uniform(&rng);
		demand.percentile = t % 3 == 0 ? 50 : t % 3 == 1 ? 90 : 99;
		demand.slo_ttft_s = 0.012 + 0.5 * kvp_rng_uniform(&rng);
		demand.slo_tpot_s = 0.0095 + 0.04 * kvp_rng_uniform(&rng);
		ck_assert_int_eq(kvp_size_search(&model, &gpu, &demand, &opts, 1, &c, &err), KVP_STATUS_OK);
		struct kvp_size_sim_opts so = {.w = &wl};
		ck_assert_msg(kvp_size_simulate(&model, &gpu, &demand, &opts, &so, &c, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
		ck_assert(c.simulated);
		ck_assert_double_eq_tol(c.floor_tpot_s, 0.0100786432, 2e-5);
		bool never = demand.slo_tpot_s < c.floor_tpot_s;
		ck_assert_int_eq((c.never & KVP_SIZE_FAIL_TPOT) != 0, never);
		if (never)
			ck_assert_double_eq_tol(c.miss_tpot_s, c.floor_tpot_s - demand.slo_tpot_s, 1e-12);
		ck_assert(c.sim_capacity > 0);
		uint32_t need = (uint32_t)ceil(demand.rate / c.sim_capacity - 1e-9);
		ck_assert_msg(c.replicas >= need && c.replicas <= need + 3, "case %d: %u replicas for "
			      "%g / %g", t, c.replicas, demand.rate, c.sim_capacity);
		ck_assert_uint_eq(c.count, c.replicas);
		ck_assert_double_eq_tol(c.rate, demand.rate / c.replicas, 1e-9);
		if (c.meets) {
			ck_assert(c.ttft_s <= demand.slo_ttft_s);
			ck_assert(c.tpot_s <= demand.slo_tpot_s);
		}
		kvp_workload_free(&wl);
	}
}
END_TEST

/* Only colocated configurations of one data-parallel rank are simulated. */
START_TEST(test_simulate_applies)
{
	struct kvp_size_config c = {.tp = 1, .pp = 1, .dp = 1};
	struct kvp_size_demand d = {.rate = 1};
	ck_assert(kvp_size_sim_applies(&c, &d));
	c.dp = 2;
	ck_assert(!kvp_size_sim_applies(&c, &d));
	c.dp = 1;
	c.disagg_p = c.disagg_d = 1;
	ck_assert(!kvp_size_sim_applies(&c, &d));
	c.disagg_p = c.disagg_d = 0;
	c.failed = KVP_SIZE_FAIL_WEIGHTS;
	ck_assert(!kvp_size_sim_applies(&c, &d));
	c.failed = 0;
	d.rate = 0;                 /* no rate and no users: nothing to size for */
	ck_assert(!kvp_size_sim_applies(&c, &d));
}
END_TEST

static Suite *size_suite(void)
{
	Suite *s = suite_create("size");
	TCase *core = tcase_create("core");
	tcase_set_timeout(core, 60);
	tcase_add_test(core, test_littles_law);
	tcase_add_test(core, test_replicas_by_hand);
	tcase_add_test(core, test_30b_int4_on_24gb);
	tcase_add_test(core, test_rank);
	tcase_add_test(core, test_users_closed_loop);
	tcase_add_test(core, test_emit);
	tcase_add_test(core, test_emit_consistency);
	tcase_add_test(core, test_yaml_writer);
	tcase_add_test(core, test_cost_basis);
	tcase_add_test(core, test_wait_percentile);
	tcase_add_test(core, test_risk);
	tcase_add_test(core, test_yaml_round_trip);
	tcase_add_test(core, test_disagg_by_hand);
	tcase_add_test(core, test_search_brute_force);
	tcase_add_test(core, test_pareto_brute_force);
	tcase_add_test(core, test_seqs_axis);
	tcase_add_loop_test(core, test_simulate_closed, 0,
			    sizeof sim_closed_cases / sizeof sim_closed_cases[0]);
	tcase_add_test(core, test_simulate_random);
	tcase_add_test(core, test_simulate_applies);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_set_timeout(errors, 60);
	tcase_add_test(errors, test_failures);
	tcase_add_test(errors, test_demand_errors);
	tcase_add_loop_test(errors, test_launch_id, 0, sizeof launch_cases / sizeof launch_cases[0]);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(size_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
