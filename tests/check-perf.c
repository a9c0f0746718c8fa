/* check-perf.c: the latency model.  Expected values are hand arithmetic
 * written beside each assertion, on round hardware (1 TB/s, 1 PFLOP/s,
 * efficiencies 1) so the arithmetic stays checkable, and the seed figures of
 * issue 5 (Llama-2-7B: 2,048 tokens hold 1 GiB of KV; over PCIe 4.0 x16 at an
 * effective 25 GB/s one pass takes about 40 ms; at 32K one token costs over
 * 0.6 s).  No test measures time. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "check-tmp.h"
#include "time/calibration.h"
#include "time/perf.h"
#include "time/step-eager.h"
#include "time/step-gemm.h"
#include "time/step-elementwise.h"
#include "time/step-gqa.h"
#include "time/step-prefix.h"
#include "time/step-collective.h"
#include "base/units.h"
#include "model/spec.h"

static struct kvp_model model;
static struct kvp_spec spec;
static struct kvp_perf_ctx ctx;
static struct kvp_perf_hw hw;

/* 1 TB/s, 1 PFLOP/s, efficiencies 1, a 450 GB/s NVLink joining 8, 10 us. */
static void round_hw(void)
{
	memset(&hw, 0, sizeof hw);
	hw.bandwidth_bps = 1e12;
	hw.flops = 1e15;
	hw.decode_bw_efficiency = 1;
	hw.prefill_flops_efficiency = 1;
	hw.nvlink_bps = 450e9;
	hw.nvlink_domain = 8;
	hw.allreduce_latency_s = 10e-6;
	ck_assert(kvp_link_preset("pcie4x16", &hw.host_link));
}

static void setup(const char *name, uint32_t tp)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_model_load(name, &model, &err) == KVP_STATUS_OK, "%s", err.msg);
	struct kvp_parallel par = {.tp = tp, .pp = 1};
	ck_assert_msg(kvp_spec_build(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	round_hw();
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
}

/* The seed: Llama-2-7B keeps 2 * 32 heads * 128 * 2 B * 32 layers = 512 KiB
 * per token; 2,048 tokens = 1 GiB.  1 GiB / 25 GB/s = 1,073,741,824 / 25e9 =
 * 42.9 ms, "about 40 ms".  32K tokens = 16 GiB -> 0.687 s, "over 0.6 s". */
START_TEST(test_seed_offload)
{
	setup("llama-2-7b", 1);
	struct kvp_error err = {0};
	struct kvp_link pcie4;
	ck_assert(kvp_link_preset("pcie4x16", &pcie4));
	ck_assert_double_eq(pcie4.effective_bps, 25e9);
	struct kvp_perf_step s;
	struct kvp_perf_offload o;
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 2048, &s, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(s.kv_bytes, KVP_GIB);
	kvp_perf_offload_step(&ctx, &s, s.kv_bytes, &pcie4, &o);
	ck_assert_double_eq_tol(o.transfer_s, 0.04294967296, 1e-12);
	ck_assert(o.transfer_s > 0.035 && o.transfer_s < 0.045); /* "about 40 ms" */
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 32768, &s, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(s.kv_bytes, 16 * KVP_GIB);
	kvp_perf_offload_step(&ctx, &s, s.kv_bytes, &pcie4, &o);
	ck_assert_double_eq_tol(o.transfer_s, 0.68719476736, 1e-11);
	ck_assert(o.pipelined_s > 0.6); /* "one token costs over 0.6 s" */
	/* the GPU step: (13,476,831,232 weights + 17,179,869,184 KV) / 1e12 =
	 * 30.66 ms; per layer 0.958 ms of compute against 21.5 ms of transfer:
	 * the transfer is not hidden.  Pipelined = x + 31 max(x, g) + g with
	 * x = 0.687195 / 32 = 21.4748 ms, g = 30.6567 / 32 = 0.958022 ms:
	 * 21.4748 * 32 + 0.958 = 688.15 ms, below serial 687.19 + 30.66 = 717.85 */
	ck_assert(o.transfer_bound);
	ck_assert_double_eq_tol(s.time_s, 0.030656700416, 1e-12);
	ck_assert_double_eq_tol(o.serial_s, 0.68719476736 + 0.030656700416, 1e-11);
	ck_assert_double_eq_tol(o.pipelined_s, 0.68719476736 + 0.030656700416 / 32, 1e-11);
}
END_TEST

/* Offload targets and link presets (sources in perf.c and kvplan(1)). */
START_TEST(test_links)
{
	struct kvp_link l, host;
	struct kvp_offload o;
	struct kvp_error err = {0};
	/* x16 per direction: 8, 16, 32 GT/s x 16 lanes x 128/130 / 8 bits */
	ck_assert(kvp_link_preset("pcie3x16", &l));
	ck_assert_double_eq(l.theoretical_bps, 15.75e9);
	ck_assert(kvp_link_preset("pcie5x16", &l));
	ck_assert_double_eq(l.theoretical_bps, 63e9);
	ck_assert(kvp_link_preset("pcie6x16", &l));
	ck_assert_double_eq(l.theoretical_bps, 121e9);
	ck_assert(kvp_link_preset("nvlink-c2c", &l));
	ck_assert_double_eq(l.theoretical_bps, 450e9); /* 900 GB/s both ways */
	ck_assert(l.effective_bps < l.theoretical_bps);
	ck_assert(!kvp_link_preset("pcie7x16", &l));
	for (size_t i = 0; kvp_link_preset_at(i); i++)
		ck_assert(kvp_link_preset_at(i)->effective_bps <= kvp_link_preset_at(i)->theoretical_bps);

	ck_assert(kvp_link_preset("pcie4x16", &host));
	ck_assert_int_eq(kvp_offload_parse("cpu", &host, &o, &err), KVP_STATUS_OK);
	ck_assert_int_eq(o.tier, KVP_OFFLOAD_CPU);
	ck_assert_double_eq(o.link.effective_bps, 25e9);
	ck_assert_int_eq(kvp_offload_parse("cpu:12GB/s", &host, &o, &err), KVP_STATUS_OK);
	ck_assert_double_eq(o.link.effective_bps, 12e9);
	/* a disk is read through host memory: the slower of 7 GB/s and 25 GB/s */
	ck_assert_int_eq(kvp_offload_parse("nvme:7GB/s", &host, &o, &err), KVP_STATUS_OK);
	ck_assert_int_eq(o.tier, KVP_OFFLOAD_DISK);
	ck_assert_double_eq(o.link.effective_bps, 7e9);
	ck_assert_int_eq(kvp_offload_parse("nvme:40GB/s", &host, &o, &err), KVP_STATUS_OK);
	ck_assert_double_eq(o.link.effective_bps, 25e9);
	ck_assert_int_eq(kvp_offload_parse("sata", &host, &o, &err), KVP_STATUS_OK);
	ck_assert_double_eq(o.link.effective_bps, 0.55e9);
	ck_assert_int_eq(kvp_offload_parse("none", &host, &o, &err), KVP_STATUS_OK);
	ck_assert_int_eq(o.tier, KVP_OFFLOAD_NONE);
	ck_assert_int_eq(kvp_link_parse("pcie5x16:40GB/s", "--host-link", &l, &err), KVP_STATUS_OK);
	ck_assert_double_eq(l.effective_bps, 40e9);
	ck_assert_double_eq(l.theoretical_bps, 63e9);
	ck_assert_int_eq(kvp_link_parse("20GB/s", "--host-link", &l, &err), KVP_STATUS_OK);
	ck_assert_double_eq(l.effective_bps, 20e9);
}
END_TEST

/* Llama-2-7B on the round hardware, one sequence of 2,048 tokens:
 * bytes = 13,476,831,232 weights (6,738,415,616 params x 2 B) + 1 GiB KV =
 * 14,550,573,056 -> 14.55 ms; FLOPs = 2 x 6,738,415,616 + 32 layers x 2 x 32
 * heads x (128 + 128) x 2,048 keys = 13,476,831,232 + 1,073,741,824 -> 14.6 us.
 * Bandwidth-bound. */
START_TEST(test_decode_by_hand)
{
	setup("llama-2-7b", 1);
	struct kvp_error err = {0};
	struct kvp_perf_step s;
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 2048, &s, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(s.weights_bytes, 13476831232ULL);
	ck_assert_uint_eq(s.bytes, 14550573056ULL);
	ck_assert_double_eq_tol(s.memory_s, 0.014550573056, 1e-15);
	ck_assert_double_eq_tol(s.flops, 14550573056.0, 1);
	ck_assert_double_eq_tol(s.compute_s, 14.550573056e-6, 1e-15);
	ck_assert_int_eq(s.bound, KVP_PERF_BOUND_BANDWIDTH);
	ck_assert_double_eq(s.comm_s, 0);
	ck_assert_double_eq_tol(s.time_s, 0.014550573056, 1e-15);
	/* the lens form agrees with the uniform one */
	uint64_t lens[3] = {2048, 2048, 2048};
	struct kvp_perf_step u;
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 3, 2048, &s, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_decode_step_lens(&ctx, lens, 3, &u, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(s.bytes, u.bytes);
	ck_assert_double_eq_tol(s.flops, u.flops, 1);
}
END_TEST

/* Chunked prefill, Llama-2-7B on the round hardware, a prompt of 2,000
 * tokens.  Alone (B = 1) with T = 512: chunks of 512, k = ceil(2,000 / 512) = 4
 * steps; per step compute = the whole prefill's 28,002,762,752,000 FLOPs / 4
 * / 1e15 = 7.000690688 ms; memory = (13,476,831,232 weights + 2,000 x 524,288
 * / 4 = 262,144,000 KV written) / 1e12 = 13.738975232 ms; TTFT = 4 x 13.739 ms
 * = 54.955900928 ms (the weights are read four times: slower than the
 * one-pass 28.00 ms).  Joining 2 decoding sequences at 1,000 tokens (B = 3,
 * T = 514): still chunks of 512, 4 steps; compute + 2 x (13,476,831,232 +
 * 524,288,000) / 1e15 = 7.028692926464 ms; memory + 2 x 1,000 x 524,288 =
 * 1,048,576,000 B: 14,787,551,232 B -> 14.787551232 ms; TTFT 59.150204928 ms.
 * With T = 2 no prompt token fits beside 2 decodes: infinite.  B = 1 with a
 * prompt inside T is the one-pass prefill itself. */
START_TEST(test_chunked_ttft_by_hand)
{
	setup("llama-2-7b", 1);
	struct kvp_error err = {0};
	struct kvp_perf_chunked ch;
	struct kvp_perf_step s;
	static const struct {
		uint64_t batch, tokens_per_step;
		double compute_s, memory_s, ttft_s;   /* the hand figures above */
	} cases[] = {
		{1, 512, 0.007000690688, 0.013738975232, 0.054955900928},
		{3, 514, 0.007028692926464, 0.014787551232, 0.059150204928},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		ck_assert_int_eq(kvp_perf_chunked_ttft(&ctx, cases[i].batch, 2000, 1000,
						       cases[i].tokens_per_step, &ch, &err),
				 KVP_STATUS_OK);
		ck_assert_uint_eq(ch.chunk_tokens, 512);
		ck_assert_uint_eq(ch.steps, 4);
		ck_assert_double_eq_tol(ch.compute_s, cases[i].compute_s, 1e-15);
		ck_assert_double_eq_tol(ch.memory_s, cases[i].memory_s, 1e-15);
		ck_assert_double_eq_tol(ch.ttft_s, cases[i].ttft_s, 1e-14);
	}
	ck_assert_int_eq(kvp_perf_chunked_ttft(&ctx, 3, 2000, 1000, 2, &ch, &err), KVP_STATUS_OK);
	ck_assert(isinf(ch.ttft_s));
	ck_assert_int_eq(kvp_perf_chunked_ttft(&ctx, 1, 1000, 1000, 8192, &ch, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_prefill(&ctx, 1, 1000, &s, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(ch.steps, 1);
	ck_assert_double_eq_tol(ch.ttft_s, s.time_s, 1e-15);
	ck_assert_int_eq(kvp_perf_chunked_ttft(&ctx, 0, 1000, 1000, 8192, &ch, &err), KVP_STATUS_USAGE);
}
END_TEST

/* The chunked TTFT with KV offloaded (issue 34.5: it left out the transfer
 * TPOT counts).  The case above (B = 3, T = 514: c = 512, k = 4, a step of
 * 14.787551232 ms on the GPU) with a pool of 1e9 B over PCIe 4.0 (25 GB/s):
 * step j holds the 2 decodes' 2 x 1,000 x 524,288 = 1,048,576,000 B and the
 * prompt's 512 j tokens (2,000 at the last) x 524,288 B:
 *   j  held            over the pool   transfer      pipelined: max(x, g) + min(x, g) / 32
 *   1  1,317,011,456   317,011,456     12.68045824   14.787551232 + 0.39626432  = 15.183815552
 *   2  1,585,446,912   585,446,912     23.41787648   23.41787648 + 0.462110976  = 23.879987456
 *   3  1,853,882,368   853,882,368     34.15529472   34.15529472 + 0.462110976  = 34.617405696
 *   4  2,097,152,000   1,097,152,000   43.88608      43.88608 + 0.462110976     = 44.348190976
 * (ms): TTFT 118.02939968 ms against 59.150204928 ms on the GPU alone;
 * 2,853,492,736 B moved, 114.13970944 ms of transfer.  Nothing offloaded
 * (a share of 0) leaves the GPU's TTFT. */
START_TEST(test_chunked_ttft_offload)
{
	setup("llama-2-7b", 1);
	struct kvp_error err = {0};
	struct kvp_perf_chunked ch;
	struct kvp_link pcie4;
	ck_assert(kvp_link_preset("pcie4x16", &pcie4));
	ck_assert_int_eq(kvp_perf_chunked_ttft(&ctx, 3, 2000, 1000, 514, &ch, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_chunked_offload(&ctx, 3, 2000, 1000, -1, 1000000000ULL, &pcie4,
						  &ch, &err), KVP_STATUS_OK);
	ck_assert(ch.offload);
	ck_assert_uint_eq(ch.transfer_bytes, 2853492736ULL);
	ck_assert_double_eq_tol(ch.transfer_s, 0.11413970944, 1e-14);
	ck_assert_double_eq_tol(ch.gpu_ttft_s, 0.059150204928, 1e-14);
	ck_assert_double_eq_tol(ch.ttft_s, 0.11802939968, 1e-14);
	ck_assert_int_eq(kvp_perf_chunked_ttft(&ctx, 3, 2000, 1000, 514, &ch, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_chunked_offload(&ctx, 3, 2000, 1000, 0, 0, &pcie4, &ch, &err),
			 KVP_STATUS_OK);
	ck_assert_uint_eq(ch.transfer_bytes, 0);
	ck_assert_double_eq_tol(ch.ttft_s, 0.059150204928, 1e-14);
	/* 10,000 steps (T = 1, one token a step) are taken in runs of 3, each at
	 * its last step: never below the step-by-step sum, and within 0.1 % of it */
	ck_assert_int_eq(kvp_perf_chunked_ttft(&ctx, 1, 10000, 1, 1, &ch, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(ch.steps, 10000);
	double exact = 0, g = ch.step_s;
	for (uint64_t j = 1; j <= 10000; j++) {
		double x = (double)j * 524288 / 2 / 25e9; /* a share of one half */
		exact += fmax(x, g) + fmin(x, g) / 32;
	}
	ck_assert_int_eq(kvp_perf_chunked_offload(&ctx, 1, 10000, 1, 0.5, 0, &pcie4, &ch, &err),
			 KVP_STATUS_OK);
	ck_assert(ch.ttft_s >= exact * (1 - 1e-12));
	ck_assert(ch.ttft_s <= exact * 1.001);
}
END_TEST

/* Where decode turns compute-bound, one token of context: compute = B x
 * (13,476,831,232 + 2 x 32 x 256 x 32 = 524,288) / 1e15; memory =
 * (13,476,831,232 + B x 524,288) / 1e12.  Equal at B = 13,476,831,232,000 /
 * (13,477,355,520 - 524,288,000) = 1,040.44: 1,040 is bandwidth-bound,
 * 1,041 compute-bound. */
START_TEST(test_decode_turns_compute_bound)
{
	setup("llama-2-7b", 1);
	struct kvp_error err = {0};
	struct kvp_perf_step s;
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1040, 1, &s, &err), KVP_STATUS_OK);
	ck_assert_int_eq(s.bound, KVP_PERF_BOUND_BANDWIDTH);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1041, 1, &s, &err), KVP_STATUS_OK);
	ck_assert_int_eq(s.bound, KVP_PERF_BOUND_COMPUTE);
}
END_TEST

/* Prefill of 1,000 tokens: FLOPs = 2 x 6,738,415,616 x 1,000 =
 * 13,476,831,232,000 + attention 32 layers x 2 x 32 x 256 x (1,000 x 1,001 / 2)
 * = 262,406,144,000 -> 13,739,237,376,000 = 13.74 ms at 1 PFLOP/s; bytes =
 * weights 13,476,831,232 + KV written 1,000 x 524,288 = 14,001,119,232 ->
 * 14.00 ms: still bandwidth-bound.  At 2,000 tokens: 26,953,662,464,000 +
 * 32 x 16,384 x 2,001,000 = 1,049,100,288,000 -> 28.00 ms against 14.53 ms:
 * compute-bound. */
START_TEST(test_prefill_by_hand)
{
	setup("llama-2-7b", 1);
	struct kvp_error err = {0};
	struct kvp_perf_step s;
	ck_assert_double_eq_tol(kvp_perf_attention_flops(&model, 1000), 262406144000.0, 1);
	ck_assert_double_eq_tol(kvp_perf_prefill_flops(&model, 1000), 13739237376000.0, 1);
	ck_assert_int_eq(kvp_perf_prefill(&ctx, 1, 1000, &s, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(s.bytes, 14001119232ULL);
	ck_assert_double_eq_tol(s.compute_s, 0.013739237376, 1e-15);
	ck_assert_double_eq_tol(s.memory_s, 0.014001119232, 1e-15);
	ck_assert_int_eq(s.bound, KVP_PERF_BOUND_BANDWIDTH);
	ck_assert_int_eq(kvp_perf_prefill(&ctx, 1, 2000, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.compute_s, (26953662464000.0 + 1049100288000.0) / 1e15, 1e-15);
	ck_assert_int_eq(s.bound, KVP_PERF_BOUND_COMPUTE);
	/* a batch of 4 prompts: 4 x the FLOPs and the KV, the weights once */
	ck_assert_int_eq(kvp_perf_prefill(&ctx, 4, 1000, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.flops, 4 * 13739237376000.0, 4);
	ck_assert_uint_eq(s.bytes, 13476831232ULL + 4 * 524288000ULL);
}
END_TEST

/* The seed's point: doubling the context doubles the KV and the decode bytes
 * of the KV but quadruples the prefill attention: n(n + 1) -> 2n(2n + 1),
 * ratio 2(2n + 1)/(n + 1) = 2 x 8,193 / 4,097 = 3.9995 at n = 4,096. */
START_TEST(test_context_doubling)
{
	setup("llama-3.1-8b", 1);
	struct kvp_error err = {0};
	struct kvp_perf_step a, b;
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 8, 4096, &a, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 8, 8192, &b, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(b.kv_bytes, 2 * a.kv_bytes);      /* 8 x 4,096 x 131,072 B x 2 */
	ck_assert_uint_eq(a.kv_bytes, 8ULL * 4096 * 131072);
	ck_assert_uint_eq(b.weights_bytes, a.weights_bytes);
	double r = kvp_perf_attention_flops(&model, 8192) / kvp_perf_attention_flops(&model, 4096);
	ck_assert_double_eq_tol(r, 2.0 * 8193 / 4097, 1e-12);
	ck_assert(fabs(r - 4) < 1e-3);
	/* a sliding window caps it: Mistral-7B-v0.1, W = 4,096, pairs =
	 * W(W + 1)/2 + (n - W)W: 8,390,656 + 4,096 x 4,096 = 25,167,872 at 8,192
	 * and 8,390,656 + 12,288 x 4,096 = 58,722,304 at 16,384: x2.333 */
	setup("mistral-7b-v0.1", 1);
	r = kvp_perf_attention_flops(&model, 16384) / kvp_perf_attention_flops(&model, 8192);
	ck_assert_double_eq_tol(r, 58722304.0 / 25167872.0, 1e-12);
}
END_TEST

/* Tensor parallelism: Llama-3.1-70B (80 layers, hidden 8,192) at tp 4, one
 * decode token: each all-reduce moves 8,192 x 2 B = 16,384 B; ring: 2 x 3/4 x
 * 16,384 / 450e9 = 54.6 ns + 10 us; two per layer: 160 x 10.0546 us =
 * 1.6087 ms. */
START_TEST(test_tp_allreduce)
{
	setup("llama-3.1-70b", 4);
	struct kvp_error err = {0};
	struct kvp_perf_step s;
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 1024, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.comm_s, 160 * (24576.0 / 450e9 + 10e-6), 1e-12);
	/* FLOPs split four ways */
	ck_assert_double_eq_tol(s.gpu_flops, s.flops / 4, 1e-3);
	/* tp 1 has none */
	setup("llama-3.1-70b", 1);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 1024, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq(s.comm_s, 0);
}
END_TEST

/* The engine's eager attention (step.h kvp_perf_eager_s).  Llama-2-7B, 32
 * full-attention layers, on the round hardware: a decode step at batch 1
 * over 2,048 tokens is 14.550573056 ms of GPU time (test_decode_by_hand).
 * With 3 launches a layer (vLLM 0.9.2's FlashAttention op: reshape_and_
 * cache_flash, flash_attn_varlen_func, the next graph piece) at 200 us the
 * host spends 32 x 3 x 200 us = 19.2 ms a pass: the GPU waits 19.2 -
 * 14.550573056 = 4.649426944 ms more, the step is 19.2 ms.  At 100 us the
 * host's 9.6 ms hide behind the GPU's work: nothing added.  With a full
 * decode graph a step of decodes pays none, a prefill (one token: 13.48 ms
 * of weights, below 19.2) still does.  DeepSeek-R1's 61 MLA layers at 9
 * launches (MLACommonImpl.forward + FlashMLA at 0.9.2: 8 kernels and the
 * piece) x 29.4 us: 61 x 9 x 29.4 us = 16.1406 ms a pass. */
START_TEST(test_eager_by_hand)
{
	struct kvp_error err = {0};
	struct kvp_perf_step s;
	setup("llama-2-7b", 1);
	hw.eager_attention_launches = 3;
	hw.eager_launch_s = 200e-6;
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(ctx.dense_attention_layers, 32);
	ck_assert_uint_eq(ctx.mla_layers, 0);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 2048, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.eager_launch_s, 19.2e-3, 1e-12);
	ck_assert_double_eq_tol(s.eager_s, 4.649426944e-3, 1e-12);
	ck_assert_double_eq_tol(s.time_s, 19.2e-3, 1e-12);
	/* hidden behind the GPU's work */
	hw.eager_launch_s = 100e-6;
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 2048, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.eager_launch_s, 9.6e-3, 1e-12);
	ck_assert_double_eq(s.eager_s, 0);
	ck_assert_double_eq_tol(s.time_s, 0.014550573056, 1e-15);
	/* a full decode graph: decodes alone pay none, a prefill does */
	hw.eager_launch_s = 200e-6;
	hw.decode_full_graph = true;
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 2048, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq(s.eager_s, 0);
	ck_assert_double_eq_tol(s.time_s, 0.014550573056, 1e-15);
	ck_assert_int_eq(kvp_perf_prefill(&ctx, 1, 1, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.time_s, 19.2e-3, 1e-12);
	/* MLA layers take their own count */
	setup("deepseek-r1", 8);
	hw.eager_attention_launches = 3;
	hw.eager_attention_launches_mla = 9;
	hw.eager_launch_s = 29.4e-6;
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(ctx.mla_layers, 61);
	ck_assert_uint_eq(ctx.dense_attention_layers, 0);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 1024, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.eager_launch_s, 16.1406e-3, 1e-12);
}
END_TEST

/* A pass too large for the engine's CUDA graphs (step.h
 * kvp_perf_uncaptured): Llama-2-7B, 32 layers, dense attention and MLP, on
 * the round hardware at tp 1.  A decode step at batch 2 over 2,048 tokens
 * reads 13,476,831,232 B of weights + 2 GiB of KV = 15,624,314,880 B:
 * 15.62431488 ms of GPU time.  With graph_max_tokens 1 its 2 tokens replay
 * no graph: a layer launches 7 (attention part) + 4 (MLP part), no
 * all-reduce at tp 1, so 32 x 11 = 352 launches; at 50 us each the host
 * spends 17.6 ms, the GPU waits 17.6 - 15.62431488 = 1.97568512 ms more.
 * Batch 1 (1 token) replays one: the eager attention alone, 32 x 3 x 200 us
 * = 19.2 ms against 14.550573056 ms of GPU time, 4.649426944 ms added.  At
 * 30 us a launch the uncaptured host's 352 x 30 us = 10.56 ms replace the
 * eager attention's 19.2 ms and hide behind 15.62 ms: nothing added.  The
 * MLA, MoE and shared-expert counts (15, 21, 3) are not used by a dense model.
 * graph_max_tokens 0: never uncaptured; a count of 0: none charged. */
START_TEST(test_uncaptured_by_hand)
{
	struct kvp_error err = {0};
	struct kvp_perf_step s;
	setup("llama-2-7b", 1);
	hw.eager_attention_launches = 3;
	hw.eager_launch_s = 200e-6;
	hw.graph_max_tokens = 1;
	hw.uncaptured_launch_s = 50e-6;
	hw.uncaptured_attention_launches = 7;
	hw.uncaptured_attention_launches_mla = 15;
	hw.uncaptured_mlp_launches = 4;
	hw.uncaptured_moe_launches = 21;
	hw.uncaptured_shared_expert_launches = 3;
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err), KVP_STATUS_OK);
	ck_assert_double_eq(ctx.uncaptured_launches, 352);
	ck_assert(!kvp_perf_uncaptured(&ctx, 1));
	ck_assert(kvp_perf_uncaptured(&ctx, 2));
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 2, 2048, &s, &err), KVP_STATUS_OK);
	ck_assert(s.uncaptured);
	ck_assert_double_eq_tol(s.eager_launch_s, 17.6e-3, 1e-12);
	ck_assert_double_eq_tol(s.eager_s, 1.97568512e-3, 1e-12);
	ck_assert_double_eq_tol(s.time_s, 17.6e-3, 1e-12);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 2048, &s, &err), KVP_STATUS_OK);
	ck_assert(!s.uncaptured);
	ck_assert_double_eq_tol(s.eager_launch_s, 19.2e-3, 1e-12);
	ck_assert_double_eq_tol(s.eager_s, 4.649426944e-3, 1e-12);
	/* in place of the eager attention's launches, not beside them */
	hw.uncaptured_launch_s = 30e-6;
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 2, 2048, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.eager_launch_s, 10.56e-3, 1e-12);
	ck_assert_double_eq(s.eager_s, 0);
	ck_assert_double_eq_tol(s.time_s, 15.62431488e-3, 1e-15);
	/* an engine that counts no MoE part: none charged, not a partial sum */
	hw.uncaptured_moe_launches = 0;
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err), KVP_STATUS_OK);
	ck_assert(!kvp_perf_uncaptured(&ctx, 1e6));
	/* no graph size: never */
	hw.uncaptured_moe_launches = 21;
	hw.graph_max_tokens = 0;
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err), KVP_STATUS_OK);
	ck_assert(!kvp_perf_uncaptured(&ctx, 1e6));
}
END_TEST

/* The launches of a graphless pass, layer by layer (step-eager.h
 * kvp_perf_uncaptured_launches), on DeepSeek-V3's shape (its config.json:
 * num_hidden_layers 61, first_k_dense_replace 3, MLA, so 3 dense-MLP and 58
 * MoE layers, n_shared_experts 1) at tp 8: attention 61 x 15 = 915, FFN
 * 3 x 4 + 58 x (21 + 3 shared) = 12 + 1,392, all-reduces 2 x 61 = 122: 2,441 (the fit of profiles/engines/
 * vllm.yaml's uncaptured_launch_us divides by it).  At tp 1 the 122 go:
 * 2,319.  Mixtral-8x7B (32 MoE layers, no shared experts) at tp 2: 32 x
 * (7 + 21 + 2) = 960, the shared count not charged.  Llama-2-7B (32 dense
 * layers) at tp 2: 32 x (7 + 4 + 2) = 416. */
START_TEST(test_uncaptured_launches_by_layer)
{
	setup("deepseek-v3", 8);
	ck_assert_uint_eq(model.num_layers, 61);
	ck_assert_double_eq(kvp_perf_uncaptured_launches(&model, 8, 7, 15, 4, 21, 3), 2441);
	ck_assert_double_eq(kvp_perf_uncaptured_launches(&model, 1, 7, 15, 4, 21, 3), 2319);
	setup("mixtral-8x7b", 2);
	ck_assert_double_eq(kvp_perf_uncaptured_launches(&model, 2, 7, 15, 4, 21, 3), 960);
	setup("llama-2-7b", 2);
	ck_assert_double_eq(kvp_perf_uncaptured_launches(&model, 2, 7, 15, 4, 21, 3), 416);
}
END_TEST

/* MoE: one token touches 8 of 128 experts per layer.  Qwen3-30B-A3B in bf16:
 * experts 28,991,029,248 x 2 B = 57,982,058,496 B of 61,064,245,248; one
 * token reads the rest (3,082,186,752) and 1/16 of the experts
 * (3,623,878,656) = 6,706,065,408 B = 2 x 3,353,032,704 active params.
 * 256 tokens touch 1 - (15/16)^256 of them: all but 6.67e-8 x 57,982,058,496 =
 * about 3.9 KB. */
START_TEST(test_moe_weights)
{
	setup("qwen3-30b-a3b", 1);
	struct kvp_error err = {0};
	struct kvp_perf_step s;
	ck_assert_uint_eq(spec.weights_bytes, 61064245248ULL);
	ck_assert_uint_eq(ctx.expert_bytes, 57982058496ULL);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 1, &s, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(s.weights_bytes, 2 * model.active_params);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 256, 1, &s, &err), KVP_STATUS_OK);
	ck_assert(s.weights_bytes > 61064245248ULL - 4000 && s.weights_bytes < 61064245248ULL - 3800);
}
END_TEST

/* The context a decoding sequence holds, averaged over time (issue 34.8):
 * two requests of 100 prompt tokens, one of 10 output tokens and one of
 * 1,000.  The first decodes 10 steps at 100 + 4.5 on average, the second
 * 1,000 steps at 100 + 499.5: (10 x 104.5 + 1,000 x 599.5) / 1,010 =
 * 600,545 / 1,010 = 594.599..., where mean p + (mean o - 1) / 2 = 100 +
 * 504 / 2 = 352.  As a file's pairs, as a fixed prompt beside two output
 * lengths, and under max_len 600 (the long one capped to 500 output tokens:
 * (1,045 + 500 x 349.5) / 510 = 175,795 / 510 = 344.696...). */
START_TEST(test_held_context)
{
	uint64_t prompts[2] = {100, 100}, outputs[2] = {10, 1000};
	struct kvp_workload w;
	memset(&w, 0, sizeof w);
	w.prompt = (struct kvp_dist){.kind = KVP_DIST_EMPIRICAL, .values = prompts, .n = 2};
	w.output = (struct kvp_dist){.kind = KVP_DIST_EMPIRICAL, .values = outputs, .n = 2};
	w.paired = true;
	ck_assert_double_eq_tol(kvp_perf_held_context(&w), 600545.0 / 1010, 1e-9);
	w.paired = false;
	w.prompt = (struct kvp_dist){.kind = KVP_DIST_FIXED, .a = 100};
	ck_assert_double_eq_tol(kvp_perf_held_context(&w), 600545.0 / 1010, 1e-9);
	w.max_len = 600;
	ck_assert_double_eq_tol(kvp_perf_held_context(&w), 175795.0 / 510, 1e-9);
	/* one length: p + (o - 1) / 2 */
	w.max_len = 0;
	w.output = (struct kvp_dist){.kind = KVP_DIST_FIXED, .a = 512};
	ck_assert_double_eq_tol(kvp_perf_held_context(&w), 100 + 511.0 / 2, 1e-12);
}
END_TEST

/* DeepSeek-V3 over dp 8, ep 8 (issue 34.7): 256 routed experts, 8 per token,
 * 653,908,770,816 routed parameters.  One sequence in the deployment (the
 * fullest rank holds 1, the others none) is one token at the experts: a GPU
 * reads its experts' expected share 8/256 = 1/32, not 1 - (31/32)^8 =
 * 0.2243 as if every rank held one; eight sequences (one a rank) are 8
 * tokens: 1 - (31/32)^8.  A prompt of 1,000 tokens prefilled alone spreads
 * its routed FLOPs, 2 x 653,908,770,816 x 8/256 = 40,869,298,176 a token,
 * 40,869,298,176,000 in all, over the 8 GPUs: its GPU computes
 * 35,760,635,904,000 fewer than with every FLOP its own; with a prompt on
 * every rank (8 in all) each GPU computes its own share again. */
START_TEST(test_dp_ep_one_sequence)
{
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_model_load("deepseek-v3", &model, &err), KVP_STATUS_OK);
	struct kvp_parallel par = {.tp = 1, .pp = 1, .dp = 8, .ep = 8};
	ck_assert_msg(kvp_spec_build(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	round_hw();
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &hw, &err), KVP_STATUS_OK);
	double X = (double)ctx.expert_bytes, dense = (double)(spec.weights_bytes - ctx.expert_bytes);
	ck_assert(X > 0);
	struct kvp_perf_step one, eight, old;
	ck_assert_int_eq(kvp_perf_decode_step_dp(&ctx, 1, 1, 1000, &one, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol((double)one.weights_bytes, dense + X / 32, 1);
	ck_assert_int_eq(kvp_perf_decode_step_dp(&ctx, 1, 8, 1000, &eight, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol((double)eight.weights_bytes, dense + X * 0.22430012025779433, 1);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 1000, &old, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(old.weights_bytes, eight.weights_bytes);   /* rank x dp = 8 */
	struct kvp_perf_step alone, all;
	ck_assert_int_eq(kvp_perf_prefill_dp(&ctx, 1, 1, 1000, &alone, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_prefill_dp(&ctx, 1, 8, 1000, &all, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(all.gpu_flops, kvp_perf_prefill_flops(&model, 1000), 1e3);
	ck_assert_double_eq_tol(all.gpu_flops - alone.gpu_flops, 35760635904000.0, 1e3);
	ck_assert_double_eq_tol(alone.flops, all.flops, 1e3);   /* the rank's whole-model count */
	/* a total the rank cannot hold is refused */
	ck_assert_int_eq(kvp_perf_prefill_dp(&ctx, 1, 9, 1000, &all, &err), KVP_STATUS_USAGE);
	ck_assert_str_eq(err.field, "batch");
	ck_assert_int_eq(kvp_perf_decode_step_dp(&ctx, 2, 1, 1000, &all, &err), KVP_STATUS_USAGE);
}
END_TEST

/* Prefix reuse, Llama-2-7B at 1 PFLOP/s against 25 GB/s: reload = 524,288 p /
 * 25e9 = 20,971,520 p fs; recompute = (2 x 6,738,415,616 p + 262,144 p(p + 1))
 * / 1e15 = (13,477,093,376 p + 262,144 p^2) fs.  Reload wins once 262,144 p >
 * 20,971,520,000 - 13,477,093,376 = 7,494,426,624, p > 28,588.97: from 28,589. */
START_TEST(test_prefix_breakeven)
{
	setup("llama-2-7b", 1);
	struct kvp_link pcie4;
	ck_assert(kvp_link_preset("pcie4x16", &pcie4));
	ck_assert_double_eq_tol(kvp_perf_prefix_reload_s(&ctx, 1000, &pcie4), 0.02097152, 1e-12);
	ck_assert_double_eq_tol(kvp_perf_prefix_recompute_s(&ctx, 1000),
				(13477093376.0 * 1000 + 262144.0 * 1e6) / 1e15, 1e-12);
	ck_assert_uint_eq(kvp_perf_prefix_breakeven(&ctx, &pcie4, 1 << 20), 28589);
	ck_assert_uint_eq(kvp_perf_prefix_breakeven(&ctx, &pcie4, 28588), 0); /* never, up to there */
	/* over NVLink-C2C (375 GB/s) reloading wins from the first token */
	struct kvp_link c2c;
	ck_assert(kvp_link_preset("nvlink-c2c", &c2c));
	ck_assert_uint_eq(kvp_perf_prefix_breakeven(&ctx, &c2c, 1 << 20), 1);
}
END_TEST

/* Hardware from a profile: H100 SXM datasheet 3.35 TB/s, 989.4 TFLOP/s bf16,
 * NVLink 900 GB/s both ways -> 450 per direction, defaults 0.80 and 0.60. */
START_TEST(test_hw_from_profile)
{
	struct kvp_gpu g;
	struct kvp_error err = {0};
	struct kvp_perf_hw h;
	ck_assert_int_eq(kvp_gpu_load("h100-sxm", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, NULL, &h, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(h.bandwidth_bps, 3.35e12, 1);
	ck_assert_double_eq_tol(h.flops, 989.4e12, 1);
	ck_assert_double_eq_tol(h.nvlink_bps, 450e9, 1);
	ck_assert_double_eq(h.decode_bw_efficiency, 0.80);
	ck_assert_double_eq(h.prefill_flops_efficiency, 0.60);
	ck_assert_str_eq(h.host_link.name, "pcie5x16");
	/* no NVLink: all-reduces cross PCIe 4.0 (25 GB/s) */
	ck_assert_int_eq(kvp_gpu_load("l40s", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, NULL, &h, &err), KVP_STATUS_OK);
	struct kvp_link l;
	kvp_perf_collective_link(&h, 2, &l);
	ck_assert_str_eq(l.name, "pcie4x16");
	ck_assert_double_eq(l.effective_bps, 25e9);
}
END_TEST

/* The attention's peak is the KV cache's dtype's, at most the weights'
 * (kvp_gemm_attention_peak), with the GPU profiles' peaks: an H100 SXM's bf16
 * 989.4 and fp8 1,978.9 TFLOP/s dense; an A100's bf16 312 and no fp8 peak
 * (given as 0); a B200's bf16 2,250, fp8 4,500 and fp4 9,000 (the datasheet's
 * dense figures). */
START_TEST(test_attention_peak)
{
	/* fp8 weights: a 16-bit KV cache at bf16, an fp8 (e4m3, e5m2) one at fp8 */
	ck_assert_double_eq(kvp_gemm_attention_peak(1978.9e12, 989.4e12, 1978.9e12, KVP_DTYPE_BF16),
			    989.4e12);
	ck_assert_double_eq(kvp_gemm_attention_peak(1978.9e12, 989.4e12, 1978.9e12, KVP_DTYPE_FP16),
			    989.4e12);
	ck_assert_double_eq(kvp_gemm_attention_peak(1978.9e12, 989.4e12, 1978.9e12, KVP_DTYPE_FP8),
			    1978.9e12);
	ck_assert_double_eq(
		kvp_gemm_attention_peak(1978.9e12, 989.4e12, 1978.9e12, KVP_DTYPE_FP8_E5M2), 1978.9e12);
	/* an int8 KV cache is not an fp8 one: bf16 */
	ck_assert_double_eq(kvp_gemm_attention_peak(1978.9e12, 989.4e12, 1978.9e12, KVP_DTYPE_INT8),
			    989.4e12);
	/* bf16 weights: never above their peak, whatever the KV cache */
	ck_assert_double_eq(kvp_gemm_attention_peak(989.4e12, 989.4e12, 1978.9e12, KVP_DTYPE_FP8),
			    989.4e12);
	/* an A100 has no fp8 peak: an fp8 KV cache's attention at bf16 */
	ck_assert_double_eq(kvp_gemm_attention_peak(312e12, 312e12, 0, KVP_DTYPE_FP8), 312e12);
	/* nvfp4 weights on a B200: fp8 with an fp8 KV cache, bf16 without */
	ck_assert_double_eq(kvp_gemm_attention_peak(9000e12, 2250e12, 4500e12, KVP_DTYPE_FP8),
			    4500e12);
	ck_assert_double_eq(kvp_gemm_attention_peak(9000e12, 2250e12, 4500e12, KVP_DTYPE_BF16),
			    2250e12);
	/* no peaks given (a hand-made hw): the weights' */
	ck_assert_double_eq(kvp_gemm_attention_peak(1978.9e12, 0, 0, KVP_DTYPE_BF16), 1978.9e12);
}
END_TEST

/* The GEMM peak follows the weights' format.  Llama-2-7B in fp8 on an H100
 * SXM: the datasheet's FP8 3,958 TFLOPS with sparsity = 1,978.9 dense (the
 * profile's fp8_tflops).  A prompt of 2,000 tokens: 26,953,662,464,000 +
 * 1,049,100,288,000 = 28,002,762,752,000 FLOPs (test_prefill_by_hand) /
 * (1,978.9e12 x the default 0.60) = 28.002762752e12 / 1,187.34e12 =
 * 23.58 ms, against the 6.7 GB of fp8 weights over 3.35 TB/s x 0.80 = 2.5 ms:
 * compute-bound, at half the bf16 time (989.4 x 0.60 = 593.64e12 -> 47.17 ms),
 * with an fp8 KV cache.  With the KV cache at the serving dtype (fp16) the
 * attention's 1,049,100,288,000 FLOPs run at the bf16 peak instead (vLLM
 * 0.9.2 v1/attention/backends/flash_attn.py l.511-519 quantizes q to fp8 only
 * for an fp8 KV cache): 26,953,662,464,000 / 1,187.34e12 = 22.7007 ms +
 * 1,049,100,288,000 / 593.64e12 = 1.7672 ms = 24.468 ms. */
START_TEST(test_peak_by_weights_dtype)
{
	struct kvp_error err = {0};
	struct kvp_gpu g;
	struct kvp_perf_hw h;
	struct kvp_perf_step s;
	ck_assert_msg(kvp_model_load("llama-2-7b", &model, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_int_eq(kvp_model_set_weights_dtype(&model, KVP_DTYPE_FP8), KVP_STATUS_OK);
	struct kvp_parallel par = {.tp = 1, .pp = 1};
	ck_assert_msg(kvp_spec_build(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_int_eq(kvp_gpu_load("h100-sxm", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &h, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(h.flops, 1978.9e12, 1);
	ck_assert_str_eq(h.flops_dtype, "fp8");
	ck_assert_str_eq(h.flops_warning, "");
	/* the peak at the constant efficiency: the measured GEMM table that
	 * profiles/kernels holds for the H100 in fp8 is set aside here
	 * (test_gemm_table_step times a step with a table) */
	ck_assert(strstr(h.gemm.path, "gemm-h100-sxm-fp8.tsv"));
	kvp_perf_hw_prefill_efficiency(&h, 0.60);
	ck_assert_uint_eq(h.gemm.nm, 0);
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	ck_assert_int_eq(kvp_perf_prefill(&ctx, 1, 2000, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.compute_s,
				26953662464000.0 / (1978.9e12 * 0.60) +
					1049100288000.0 / (989.4e12 * 0.60),
				1e-12);
	ck_assert_double_eq_tol(s.compute_s, 0.024468, 1e-5);
	ck_assert_int_eq(s.bound, KVP_PERF_BOUND_COMPUTE);
	/* an fp8 KV cache: the attention too at the fp8 peak */
	static struct kvp_spec spec8;
	static struct kvp_perf_ctx ctx8;
	ck_assert_msg(kvp_spec_build(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_FP8, &spec8, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(kvp_perf_init(&ctx8, &spec8, spec8.weights_bytes, &h, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_int_eq(kvp_perf_prefill(&ctx8, 1, 2000, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.compute_s, 28002762752000.0 / (1978.9e12 * 0.60), 1e-12);
	ck_assert_double_eq_tol(s.compute_s, 0.023584, 1e-5);

	/* int8 (w8a8) on an A100 80GB: the datasheet's INT8 624 TOPS dense (1,248
	 * with sparsity), twice its BF16 312 */
	ck_assert_int_eq(kvp_model_set_weights_dtype(&model, KVP_DTYPE_INT8), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_gpu_load("a100-80gb", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &h, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(h.flops, 624e12, 1);
	ck_assert_str_eq(h.flops_dtype, "int8");
	ck_assert_str_eq(h.flops_warning, "");

	/* nvfp4 on an H100 (Hopper has no FP4 tensor cores): the bf16 peak,
	 * 989.4, and a warning naming what was assumed */
	ck_assert_int_eq(kvp_model_set_weights_dtype(&model, KVP_DTYPE_NVFP4), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_gpu_load("h100-sxm", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &h, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(h.flops, 989.4e12, 1);
	ck_assert_str_eq(h.flops_dtype, "bf16");
	ck_assert_msg(strstr(h.flops_warning, "h100-sxm: no fp4 peak in the profile; the bf16 "
					      "peak is used") == h.flops_warning, "%s",
		      h.flops_warning);
	/* the same on a B200: NVFP4 18 PFLOPS with sparsity = 9,000 dense */
	ck_assert_int_eq(kvp_gpu_load("b200", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &h, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(h.flops, 9000e12, 1);
	ck_assert_str_eq(h.flops_dtype, "fp4");
	ck_assert_str_eq(h.flops_warning, "");

	/* weight-only int4 (GPTQ): bf16 activations, the 16-bit peak, no warning */
	ck_assert_int_eq(kvp_model_set_weights_dtype(&model, KVP_DTYPE_INT4_GPTQ), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_gpu_load("h100-sxm", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &h, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(h.flops, 989.4e12, 1);
	ck_assert_str_eq(h.flops_warning, "");

	/* fp8 on an A100 (no FP8 tensor cores): bf16, and the warning */
	ck_assert_int_eq(kvp_model_set_weights_dtype(&model, KVP_DTYPE_FP8), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_gpu_load("a100-80gb", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &h, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(h.flops, 312e12, 1);
	ck_assert(strstr(h.flops_warning, "a100-80gb: no fp8 peak") == h.flops_warning);
}
END_TEST

/* Which link a group of GPUs crosses (shown for the profiles below).  Profiles: RTX 3090 NVLink bridge 112.5
 * GB/s both ways joining pairs, PCIe 4.0 (25 GB/s effective); H100 PCIe bridge
 * 600 GB/s joining pairs, PCIe 5.0 (50 GB/s); H100 SXM NVSwitch board of 8 at
 * 900 GB/s, 400 Gb/s InfiniBand per GPU = 50 GB/s between servers. */
static const struct {
	const char *gpu;
	uint32_t group;
	const char *link;
	double bps;
} links[] = {
	{"rtx-3090", 2, "nvlink", 56.25e9},
	{"rtx-3090", 4, "pcie4x16", 25e9},
	{"rtx-3090", 8, "pcie4x16", 25e9},
	{"h100-pcie", 2, "nvlink", 300e9},
	{"h100-pcie", 8, "pcie5x16", 50e9},
	{"h100-sxm", 8, "nvlink", 450e9},
	{"h100-sxm", 16, "scale-out", 50e9},
	{"l4", 8, "pcie4x16", 25e9},
	/* A100 80GB PCIe: "NVLink Bridge for 2 GPUs: 600 GB/s" (300 per direction),
	 * PCIe Gen4 64 GB/s both ways (25 GB/s effective, as the L4's and 3090's) */
	{"a100-80gb-pcie", 2, "nvlink", 300e9},
	{"a100-80gb-pcie", 4, "pcie4x16", 25e9},
	/* GB200 NVL72: NVLink 1.8 TB/s (900 per direction) across 72 GPUs, then
	 * 400 Gb/s ConnectX-7 per GPU = 50 GB/s */
	{"gb200", 72, "nvlink", 900e9},
	{"gb200", 144, "scale-out", 50e9},
	/* RTX 5090: no NVLink, PCIe 5.0 (50 GB/s effective) */
	{"rtx-5090", 2, "pcie5x16", 50e9},
};

START_TEST(test_collective_link)
{
	struct kvp_gpu g;
	struct kvp_error err = {0};
	struct kvp_perf_hw h;
	struct kvp_link l;
	ck_assert_int_eq(kvp_gpu_load(links[_i].gpu, &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, NULL, &h, &err), KVP_STATUS_OK);
	kvp_perf_collective_link(&h, links[_i].group, &l);
	ck_assert_str_eq(l.name, links[_i].link);
	ck_assert_double_eq_tol(l.effective_bps, links[_i].bps, 1);
}
END_TEST

/* The defect: eight RTX 3090s are bridged in pairs, so tp 8 all-reduces
 * run over PCIe 4.0 at 25 GB/s, not the bridge.  Llama-3.1-8B (hidden 4096,
 * 32 layers), bf16, one decode token: message 4096 x 2 = 8192 B; one ring
 * all-reduce 2 x 7/8 x 8192 / 25e9 + 10 us = 0.57344 + 10 us = 10.57344 us;
 * two per layer: 64 x 10.57344 us = 676.70016 us. */
START_TEST(test_tp8_rtx3090_pcie)
{
	struct kvp_gpu g;
	struct kvp_error err = {0};
	struct kvp_perf_hw h;
	struct kvp_perf_step st;
	ck_assert_int_eq(kvp_model_load("llama-3.1-8b", &model, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_gpu_load("rtx-3090", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &h, &err), KVP_STATUS_OK);
	struct kvp_parallel par = {.tp = 8, .pp = 1};
	ck_assert_int_eq(kvp_spec_build(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err),
			 KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err), KVP_STATUS_OK);
	ck_assert_str_eq(ctx.tp_link.name, "pcie4x16");
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 100, &st, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(st.comm_s, 676.70016e-6, 1e-12);
}
END_TEST

/* NCCL's ring over PCIe (step-collective.h): a profile's busbw for 2, 4 and
 * 8 GPUs; a group takes the smallest listed group that holds it, none for
 * one GPU or beyond 8. */
START_TEST(test_pcie_ring_busbw)
{
	const double all[3] = {30e9, 20e9, 10e9}, only8[3] = {0, 0, 10e9}, only2[3] = {30e9, 0, 0};
	ck_assert_double_eq(kvp_pcie_ring_busbw(all, 1), 0);
	ck_assert_double_eq(kvp_pcie_ring_busbw(all, 2), 30e9);
	ck_assert_double_eq(kvp_pcie_ring_busbw(all, 3), 20e9);
	ck_assert_double_eq(kvp_pcie_ring_busbw(all, 4), 20e9);
	ck_assert_double_eq(kvp_pcie_ring_busbw(all, 6), 10e9);
	ck_assert_double_eq(kvp_pcie_ring_busbw(all, 8), 10e9);
	ck_assert_double_eq(kvp_pcie_ring_busbw(all, 16), 0);
	ck_assert_double_eq(kvp_pcie_ring_busbw(only8, 2), 10e9);
	ck_assert_double_eq(kvp_pcie_ring_busbw(only2, 4), 0);
	/* only a collective on the host link takes it: NVLink keeps its rate */
	double bps = 450e9;
	kvp_pcie_ring_apply(all, "pcie5x16", 8, "nvlink", &bps);
	ck_assert_double_eq(bps, 450e9);
	bps = 50e9;
	kvp_pcie_ring_apply(all, "pcie5x16", 8, "pcie5x16", &bps);
	ck_assert_double_eq(bps, 10e9);
}
END_TEST

/* The RTX PRO 6000 profile's NCCL rings (rtx-pro-6000.yaml: aiconfigurator's
 * 16 MiB all_reduce, 16777216 B / 1.2480 ms x 2 x 7/8 = 23.53 GB/s for 8,
 * 24.97 for 4, 35.43 for 2).  Llama-3.1-8B, one decode token, as
 * test_tp8_rtx3090_pcie: message 8192 B; tp 8: 2 x 7/8 x 8192 / 23.53e9 =
 * 0.609265 us + 10 us = 10.609265 us, x 64 = 678.993 us; tp 4: 2 x 3/4 x
 * 8192 / 24.97e9 = 0.492111 us -> 64 x 10.492111 = 671.495 us; tp 2: 8192 /
 * 35.43e9 = 0.231216 us -> 64 x 10.231216 = 654.798 us.  An H100 PCIe (no
 * pcie_busbw) keeps its host link's 50 GB/s beyond the bridged pair. */
START_TEST(test_pcie_ring_profile)
{
	static const struct {
		const char *gpu;
		uint32_t tp;
		double bps, comm_s;
	} c[] = {
		{"rtx-pro-6000", 8, 23.53e9, 678.9929e-6},
		{"rtx-pro-6000", 4, 24.97e9, 671.4951e-6},
		{"rtx-pro-6000", 2, 35.43e9, 654.7979e-6},
		{"l40s", 8, 13.10e9, 0},
		{"h100-pcie", 8, 50e9, 0},
	};
	for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
		struct kvp_gpu g;
		struct kvp_error err = {0};
		struct kvp_perf_hw h;
		struct kvp_perf_step st;
		ck_assert_int_eq(kvp_model_load("llama-3.1-8b", &model, &err), KVP_STATUS_OK);
		ck_assert_int_eq(kvp_gpu_load(c[i].gpu, &g, &err), KVP_STATUS_OK);
		ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &h, &err), KVP_STATUS_OK);
		struct kvp_parallel par = {.tp = c[i].tp, .pp = 1};
		ck_assert_int_eq(kvp_spec_build(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec,
						&err),
				 KVP_STATUS_OK);
		ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err),
				 KVP_STATUS_OK);
		ck_assert_double_eq_tol(ctx.tp_link.effective_bps, c[i].bps, 1);
		if (c[i].comm_s > 0) {
			ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1, 100, &st, &err), KVP_STATUS_OK);
			ck_assert_double_eq_tol(st.comm_s, c[i].comm_s, 1e-9);
		}
	}
}
END_TEST

/* Attention data-parallel over 8 RTX PRO 6000s: the experts' all-gather and
 * reduce-scatter cross the same PCIe rings as an all-reduce of 8. */
START_TEST(test_pcie_ring_dp_exchange)
{
	struct kvp_gpu g;
	struct kvp_error err = {0};
	struct kvp_perf_hw h;
	ck_assert_int_eq(kvp_model_load("qwen3-30b-a3b", &model, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_gpu_load("rtx-pro-6000", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &h, &err), KVP_STATUS_OK);
	struct kvp_parallel par = {.tp = 1, .pp = 1, .dp = 8};
	ck_assert_msg(kvp_spec_build(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(ctx.moe_link.effective_bps, 23.53e9, 1);
}
END_TEST

/* ------------------------------------------------------------ calibration */

static struct kvp_gpu h200(void)
{
	struct kvp_gpu g;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_gpu_load("h200", &g, &err), KVP_STATUS_OK);
	return g;
}

START_TEST(test_calibration_table)
{
	struct kvp_gpu g = h200();
	struct kvp_calibration cal;
	struct kvp_error err = {0};
	const char *p = write_tmp("cal.yaml",
				  "calibration:\n"
				  "  - gpu: h100-sxm\n"
				  "    decode_bw_efficiency: 0.7\n"
				  "  - gpu: h200\n"
				  "    decode_bw_efficiency: 0.82\n"
				  "    prefill_flops_efficiency: 0.55\n");
	ck_assert_msg(kvp_calibration_load(p, &g, &cal, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_double_eq(cal.decode_bw_efficiency, 0.82);
	ck_assert_double_eq(cal.prefill_flops_efficiency, 0.55);
	struct kvp_perf_hw h = {.decode_bw_efficiency = 0.8, .prefill_flops_efficiency = 0.6};
	kvp_calibration_apply(&cal, &h);
	ck_assert_double_eq(h.decode_bw_efficiency, 0.82);
	p = write_tmp("cal.csv", "gpu,decode_bw_efficiency,prefill_flops_efficiency\n"
				 "a100-80gb,0.75,0.5\nh200,0.81,\n");
	ck_assert_msg(kvp_calibration_load(p, &g, &cal, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_double_eq(cal.decode_bw_efficiency, 0.81);
	ck_assert_double_eq(cal.prefill_flops_efficiency, 0); /* not given: default kept */
}
END_TEST

/* kvbench --out: the decode efficiency is the one that makes the planner's
 * step time right on the profile's bandwidth, at its median over the
 * validated timed points that move at least a quarter of the KV bytes of
 * the largest point of their shape.  Shape 8:1, d 64, bf16: 2 x 1 x 64 x
 * 2 B = 256 B a token.  1,875,000 tokens = 480,000,000 B = 100 us at the
 * H200's 4.8 TB/s; measured 125 us -> 0.8 and 160 us -> 0.625; 18,750
 * tokens (1 us; measured 10 us: 0.1) is under a quarter of the largest and
 * left out, as is a FAIL.  Median of 0.8 and 0.625 = 0.7125. */
#define KVB_POINT(B, T, V, S)                                                             \
	"  - {backend: cuda, batch: " #B ", tokens: " #T ", block_size: 16, kv_dtype: bf16, " \
	"num_heads: 8, num_kv_heads: 1, head_dim: 64, validated: " #V ", time_median_s: " #S "}\n"
#define KVB_ROW(B, T, V, S) "cuda," #B "," #T ",16,bf16,8,1,64," #V "," #S "\n"
START_TEST(test_calibration_kvbench)
{
	struct kvp_gpu g = h200();
	struct kvp_calibration cal;
	struct kvp_error err = {0};
	const char *p = write_tmp("run.yaml",
				  "# kvbench results\n"
				  "kvbench:\n"
				  "  version: \"0.1.0\"\n"
				  "  backend: \"cuda\"\n"
				  "  gpu: \"NVIDIA H200\"\n"
				  "  datasheet_gbps: 4800.0\n"
				  "points:\n"
				  KVB_POINT(100, 1875000, pass, 0.000125)
				  KVB_POINT(100, 1875000, pass, 0.000160)
				  KVB_POINT(1, 18750, pass, 0.00001)
				  KVB_POINT(100, 1875000, FAIL, 0.00005));
	ck_assert_msg(kvp_calibration_load(p, &g, &cal, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_double_eq_tol(cal.decode_bw_efficiency, 0.7125, 1e-12);
	ck_assert_uint_eq(cal.points, 2);
	ck_assert_str_eq(cal.gpu, "NVIDIA H200");
	/* the same as CSV */
	p = write_tmp("run.csv", "backend,batch,tokens,block_size,kv_dtype,num_heads,num_kv_heads,"
				 "head_dim,validated,time_median_s\n"
				 KVB_ROW(100, 1875000, pass, 0.000125)
				 KVB_ROW(100, 1875000, pass, 0.000160)
				 KVB_ROW(1, 18750, pass, 0.00001));
	ck_assert_msg(kvp_calibration_load(p, &g, &cal, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_double_eq_tol(cal.decode_bw_efficiency, 0.7125, 1e-12);
	/* faster than the datasheet: not an efficiency (100 us in 50 us) */
	p = write_tmp("fast.csv", "backend,batch,tokens,block_size,kv_dtype,num_heads,num_kv_heads,"
				  "head_dim,validated,time_median_s\n"
				  KVB_ROW(100, 1875000, pass, 0.00005));
	ck_assert_int_eq(kvp_calibration_load(p, &g, &cal, &err), KVP_STATUS_INVALID);
	ck_assert(strstr(err.msg, "200.0%") != NULL);
}
END_TEST

START_TEST(test_calibration_errors)
{
	struct kvp_gpu g = h200();
	struct kvp_calibration cal;
	struct kvp_error err = {0};
	/* a CPU run's point (its backend from the run's map) */
	const char *p = write_tmp("cpu.yaml", "kvbench:\n  backend: \"cpu\"\npoints:\n"
					      "  - {batch: 1, tokens: 100, block_size: 16, kv_dtype: bf16, "
					      "num_heads: 8, num_kv_heads: 1, head_dim: 64, "
					      "validated: pass, time_median_s: 0.001}\n");
	ck_assert_int_eq(kvp_calibration_load(p, &g, &cal, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "backend");
	ck_assert_int_eq(err.line, 4);
	p = write_tmp("range.yaml", "calibration:\n  - gpu: h200\n    decode_bw_efficiency: 1.5\n");
	ck_assert_int_eq(kvp_calibration_load(p, &g, &cal, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "decode_bw_efficiency");
	ck_assert_int_eq(err.line, 3);
	ck_assert_int_eq(err.col, 27);
	p = write_tmp("other.yaml", "calibration:\n  - gpu: l4\n    decode_bw_efficiency: 0.5\n");
	ck_assert_int_eq(kvp_calibration_load(p, &g, &cal, &err), KVP_STATUS_INVALID);
	ck_assert(strstr(err.msg, "h200") && strstr(err.msg, "l4"));
	p = write_tmp("typo.yaml", "calibration:\n  - gpu: h200\n    decode_bw_eficiency: 0.5\n");
	ck_assert_int_eq(kvp_calibration_load(p, &g, &cal, &err), KVP_STATUS_INVALID);
	p = write_tmp("bad.csv", "gpu,decode_bw_efficiency\nh200,fast\n");
	ck_assert_int_eq(kvp_calibration_load(p, &g, &cal, &err), KVP_STATUS_INVALID);
	ck_assert_int_eq(err.line, 2);
	ck_assert_int_eq(err.col, 2);
	p = write_tmp("none.yaml", "kvbench:\n  backend: cuda\npoints: []\n");
	ck_assert_int_eq(kvp_calibration_load(p, &g, &cal, &err), KVP_STATUS_INVALID);
	ck_assert_int_eq(kvp_calibration_load("/nonexistent/cal.yaml", &g, &cal, &err), KVP_STATUS_IO);
}
END_TEST

START_TEST(test_errors)
{
	setup("llama-2-7b", 1);
	struct kvp_error err = {0};
	struct kvp_perf_step s;
	struct kvp_link l;
	struct kvp_offload o;
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 0, 10, &s, &err), KVP_STATUS_USAGE);
	ck_assert_int_eq(kvp_perf_prefill(&ctx, 1, 0, &s, &err), KVP_STATUS_USAGE);
	/* 2^50 sequences x 2^20 tokens x 512 KiB overflows 64 bits */
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1ULL << 50, 1 << 20, &s, &err), KVP_STATUS_OVERFLOW);
	struct kvp_perf_hw bad = hw;
	bad.decode_bw_efficiency = 0;
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &bad, &err), KVP_STATUS_INVALID);
	bad = hw;
	bad.prefill_flops_efficiency = 1.5;
	ck_assert_int_eq(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &bad, &err), KVP_STATUS_INVALID);
	ck_assert_int_eq(kvp_link_parse("floppy", "--host-link", &l, &err), KVP_STATUS_USAGE);
	ck_assert_int_eq(kvp_link_parse("pcie4x16:fast", "--host-link", &l, &err), KVP_STATUS_USAGE);
	ck_assert_int_eq(kvp_link_parse("0GB/s", "--host-link", &l, &err), KVP_STATUS_USAGE);
	ck_assert_int_eq(kvp_offload_parse("gpu", &hw.host_link, &o, &err), KVP_STATUS_USAGE);
	ck_assert_int_eq(kvp_offload_parse("nvme:", &hw.host_link, &o, &err), KVP_STATUS_USAGE);
	ck_assert_str_eq(err.field, "--kv-offload");
	/* a GPU profile without bandwidth cannot be timed */
	struct kvp_gpu g = {0};
	struct kvp_perf_hw h;
	strcpy(g.name, "custom");
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, NULL, &h, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "bandwidth");
}
END_TEST

/* A step timed with a measured GEMM table (time/gemm-table.h): a table of
 * 1,000 TFLOP/s at every point, put where the profiles are searched first
 * ($KVPLAN_PROFILES/kernels/gemm-h100-sxm-fp8.tsv).  Llama-2-7B in fp8 on an
 * H100 SXM, a prompt of 2,000 tokens: its linear layers' 26,953,662,464,000
 * FLOPs (2 x active params x 2,000, test_prefill_by_hand) at 1,000e12 FLOP/s
 * = 26.953662464 ms, its attention's 1,049,100,288,000 at the constant,
 * 1,978.9e12 x 0.60 -> 0.883565 ms.  Weight-only int4 has no table of its
 * own and keeps the constant; a malformed table is an error naming its line
 * and field. */
START_TEST(test_gemm_table_step)
{
	struct kvp_error err = {0};
	struct kvp_gpu g;
	struct kvp_perf_hw h;
	struct kvp_perf_step s;
	char dir[700], text[2048];
	snprintf(dir, sizeof dir, "%s/kernels", tmpdir);
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	size_t at = (size_t)snprintf(text, sizeof text, "# constant\nm n k tflops\n");
	for (int m = 1; m <= 4096; m *= 4096)
		for (int n = 512; n <= 16384; n *= 32)
			for (int k = 512; k <= 16384; k *= 32)
				at += (size_t)snprintf(text + at, sizeof text - at, "%d %d %d 1000\n", m, n, k);
	write_tmp("kernels/gemm-h100-sxm-fp8.tsv", text);
	ck_assert_int_eq(setenv("KVPLAN_PROFILES", tmpdir, 1), 0);
	ck_assert_msg(kvp_model_load("llama-2-7b", &model, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_int_eq(kvp_model_set_weights_dtype(&model, KVP_DTYPE_FP8), KVP_STATUS_OK);
	struct kvp_parallel par = {.tp = 1, .pp = 1};
	ck_assert_msg(kvp_spec_build(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_int_eq(kvp_gpu_load("h100-sxm", &g, &err), KVP_STATUS_OK);
	ck_assert_msg(kvp_perf_hw_from_gpu(&g, &model, &h, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(strncmp(h.gemm.path, tmpdir, strlen(tmpdir)) == 0, "%s", h.gemm.path);
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	ck_assert_int_eq(kvp_perf_prefill(&ctx, 1, 2000, &s, &err), KVP_STATUS_OK);
	/* the attention at the bf16 peak: the KV cache is fp16, not fp8
	 * (test_peak_by_weights_dtype) */
	ck_assert_double_eq_tol(s.compute_s,
				26953662464000.0 / 1000e12 + 1049100288000.0 / (989.4e12 * 0.60),
				1e-12);
	ck_assert_double_eq_tol(s.compute_s, 0.0287209, 1e-6);
	/* a chunk runs at its own rows' throughput: a table of 250 TFLOP/s at
	 * m 1,024 and 1,000 at m 4,096 (any n, k); a prompt of 4,096 tokens in
	 * chunks of 1,024 (max-batched-tokens 1,024, nothing else running):
	 * k = 4 steps, each a quarter of the prompt's linear 2 x 6,738,415,616 x
	 * 4,096 = 55,201,100,726,272 FLOPs at 250e12 (220.804 ms) and of its
	 * attention 4,096 x 4,097 / 2 = 8,390,656 pairs x 16,384 x 32 layers =
	 * 4,399,120,252,928 FLOPs at the bf16 peak's 593.64e12 (7.4104 ms; the
	 * KV cache is fp16): 57.054 ms a step.
	 * All at once the linear part runs at m 4,096: 55.2012 + 7.4104 ms. */
	at = (size_t)snprintf(text, sizeof text, "m n k tflops\n");
	for (int m = 1024; m <= 4096; m *= 4)
		for (int n = 512; n <= 16384; n *= 32)
			for (int k = 512; k <= 16384; k *= 32)
				at += (size_t)snprintf(text + at, sizeof text - at, "%d %d %d %d\n", m, n, k,
						       m == 1024 ? 250 : 1000);
	write_tmp("kernels/gemm-h100-sxm-fp8.tsv", text);
	ck_assert_msg(kvp_perf_hw_from_gpu(&g, &model, &h, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	struct kvp_perf_chunked ch;
	ck_assert_int_eq(kvp_perf_chunked_ttft(&ctx, 1, 4096, 4096, 1024, &ch, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(ch.steps, 4);
	ck_assert_uint_eq(ch.chunk_tokens, 1024);
	ck_assert_double_eq_tol(ch.compute_s,
				(55201100726272.0 / 250e12 + 4399120252928.0 / (989.4e12 * 0.60)) / 4,
				1e-12);
	ck_assert_int_eq(kvp_perf_prefill(&ctx, 1, 4096, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.compute_s,
				55201100726272.0 / 1000e12 + 4399120252928.0 / (989.4e12 * 0.60),
				1e-12);
	/* weight-only int4: no table, the constant */
	ck_assert_int_eq(kvp_model_set_weights_dtype(&model, KVP_DTYPE_INT4_AWQ), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &h, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(h.gemm.nm, 0);
	/* a malformed table: INVALID, its file, line and field */
	write_tmp("kernels/gemm-h100-sxm-fp8.tsv", "m n k tflops\n1 512 512 fast\n");
	ck_assert_int_eq(kvp_model_set_weights_dtype(&model, KVP_DTYPE_FP8), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &h, &err), KVP_STATUS_INVALID);
	ck_assert(strstr(err.path, "kernels/gemm-h100-sxm-fp8.tsv"));
	ck_assert_int_eq(err.line, 2);
	ck_assert_str_eq(err.field, "tflops");
	unsetenv("KVPLAN_PROFILES");
}
END_TEST

/* A prefill's elementwise kernels (step-elementwise.h), by hand.
 * Llama-3.1-8B (config.json: hidden 4,096, 32 layers, 32 q heads, 8 kv heads,
 * head_dim 128, intermediate 14,336), bf16 activations, 2,048 tokens, tp 1:
 *   norms + residuals + embedding  (8 x 32 + 4) x 2,048 x 4,096 x 2
 *                                  = 260 x 16,777,216       =  4,362,076,160 B
 *   rotary  32 x 2 x 2,048 x (32 + 8) x 128 x 2             =  1,342,177,280 B
 *   silu_and_mul  32 x 3 x 2,048 x 14,336 x 2               =  5,637,144,576 B
 *   in all                                                    11,341,398,016 B
 * On an H100 SXM (3.35 TB/s, decode_bw_efficiency 0.80): 11,341,398,016 /
 * 2.68e12 = 4.2318 ms, added to the prefill pass beside its roofline (the
 * H100's measured bf16 GEMM table times its linear layers); at tp
 * 2 the norms stay whole and the rest halves: 4,362,076,160 + 3,489,660,928
 * = 7,851,737,088 B. */
START_TEST(test_elementwise_by_hand)
{
	struct kvp_error err = {0};
	struct kvp_gpu g;
	struct kvp_perf_hw h;
	struct kvp_perf_step s;
	ck_assert_msg(kvp_model_load("llama-3.1-8b", &model, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_double_eq_tol(kvp_perf_elementwise_bytes(&model, 1, 2, 2048, true), 11341398016.0,
				1);
	ck_assert_double_eq_tol(kvp_perf_elementwise_bytes(&model, 2, 2, 2048, true), 7851737088.0,
				1);
	ck_assert_double_eq(kvp_perf_elementwise_bytes(&model, 1, 2, 0, true), 0);
	/* rotary inside the attention's QKV preprocessing (TensorRT-LLM,
	 * profiles/engines/trtllm.yaml elementwise_rotary: false): the rotary
	 * term goes, the rest stays:
	 *   tp 1: 11,341,398,016 - 1,342,177,280 =  9,999,220,736 B
	 *   tp 2:  7,851,737,088 -   671,088,640 =  7,180,648,448 B */
	ck_assert_double_eq_tol(kvp_perf_elementwise_bytes(&model, 1, 2, 2048, false), 9999220736.0,
				1);
	ck_assert_double_eq_tol(kvp_perf_elementwise_bytes(&model, 2, 2, 2048, false), 7180648448.0,
				1);
	struct kvp_parallel par = {.tp = 1, .pp = 1};
	ck_assert_msg(kvp_spec_build(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_int_eq(kvp_gpu_load("h100-sxm", &g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(&g, &model, &h, &err), KVP_STATUS_OK);
	ck_assert_double_eq(h.decode_bw_efficiency, 0.80);
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	ck_assert_double_eq_tol(kvp_perf_elementwise_s(&ctx, 2048), 11341398016.0 / 2.68e12,
				1e-12);
	ck_assert_double_eq_tol(kvp_perf_elementwise_s(&ctx, 2048), 0.0042318, 1e-7);
	ck_assert_int_eq(kvp_perf_prefill(&ctx, 1, 2048, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.elementwise_s, 11341398016.0 / 2.68e12, 1e-12);
	ck_assert_double_eq_tol(s.time_s, fmax(s.compute_s, s.memory_s) + s.comm_s + s.fixed_s +
						  s.elementwise_s, 1e-12);
	/* under TensorRT-LLM's profile: 9,999,220,736 / 2.68e12 = 3.7311 ms;
	 * vLLM's keeps the rotary pass, 4.2318 ms */
	struct kvp_engine_model em;
	struct kvp_perf_hw ht = h;
	ck_assert_msg(kvp_engine_model_load("trtllm", NULL, &em, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert(!em.elementwise_rotary && em.rotary_fused);
	kvp_perf_hw_engine(&ht, &em);
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &ht, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	ck_assert_double_eq_tol(kvp_perf_elementwise_s(&ctx, 2048), 0.0037311, 1e-7);
	ht = h;
	ck_assert_msg(kvp_engine_model_load("vllm", NULL, &em, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert(em.elementwise_rotary && !em.rotary_fused);
	kvp_perf_hw_engine(&ht, &em);
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &ht, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	ck_assert_double_eq_tol(kvp_perf_elementwise_s(&ctx, 2048), 0.0042318, 1e-7);
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	/* a decode step carries none */
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 64, 2048, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq(s.elementwise_s, 0);
	/* nor does a prefill at a constant (whole-pass) efficiency, no table */
	kvp_perf_hw_prefill_efficiency(&h, 0.60);
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	ck_assert_double_eq(kvp_perf_elementwise_s(&ctx, 2048), 0);
	ck_assert_int_eq(kvp_perf_prefill(&ctx, 1, 2048, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq(s.elementwise_s, 0);
}
END_TEST


/* Llama-3.1-8B bf16 at tp 1 (model, spec) on one H100 SXM (g, h): the
 * setting of the two hand-computed decode steps below */
static void load_llama8b_h100(struct kvp_gpu *g, struct kvp_perf_hw *h)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_model_load("llama-3.1-8b", &model, &err) == KVP_STATUS_OK, "%s", err.msg);
	struct kvp_parallel par = {.tp = 1, .pp = 1};
	ck_assert_msg(kvp_spec_build(&model, par, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_int_eq(kvp_gpu_load("h100-sxm", g, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_perf_hw_from_gpu(g, &model, h, &err), KVP_STATUS_OK);
}

/* attention_serial (profiles/engines/trtllm.yaml, issue 32): the KV's reads
 * after the GEMMs, not under them.  Llama-3.1-8B bf16 on one H100 SXM, 1,024
 * sequences at context 512: the KV is 1,024 x 512 x 131,072 B (32 layers x
 * 8 KV heads x 128 x 2 (K, V) x 2 B) = 68,719,476,736 B, at 3.35 TB/s x 0.80
 * = 2.68e12 B/s: 25.6416 ms; the weights 16,060,522,496 B (8,030,261,248
 * parameters x 2 B): 5.9927 ms.  FLOPs per sequence 2 x 8,030,261,248 +
 * 32 layers x 2 x 32 heads x (128 + 128) x 512 keys = 16,328,925,184, x 1,024
 * = 1.6721e13, at 989.4 TFLOP/s x 0.60: 28.1668 ms.  Roofline: max(28.1668,
 * 5.9927 + 25.6416) = 31.6343 ms; serial: 28.1668 + 25.6416 = 53.8084 ms. */
START_TEST(test_attention_serial_by_hand)
{
	struct kvp_error err = {0};
	struct kvp_gpu g;
	struct kvp_perf_hw h;
	struct kvp_perf_step s;
	load_llama8b_h100(&g, &h);
	ck_assert(!h.attention_serial);
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1024, 512, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.compute_s, 0.0281668, 1e-6);
	ck_assert_double_eq_tol(s.memory_s, 0.0316343, 1e-6);
	ck_assert_double_eq_tol(s.time_s, 0.0316343, 1e-6);
	h.attention_serial = true;
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1024, 512, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.memory_s, 0.0316343, 1e-6);
	ck_assert_double_eq_tol(s.time_s, 0.0538084, 1e-6);
	/* bandwidth-bound GEMMs (batch 8): the weights' 5.9927 ms + the KV's
	 * 8 x 512 x 131,072 B / 2.68e12 = 0.2003 ms, as the roofline's sum */
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 8, 512, &s, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(s.time_s, 0.0059927 + 0.0002003, 1e-6);
	/* decode_gemm_table: the linear layers at the measured H100 bf16 table's
	 * rate for M = 1,024 rows (profiles/kernels/gemm-h100-sxm-bf16.tsv: a
	 * 1024 x 4096 x 4096 GEMM at 757.8 TFLOP/s, 0.766 of 989.4), the
	 * attention's 6.6 % of the FLOPs at 0.60: faster than the constant's
	 * 28.1668 ms, slower than all at 0.90 (18.78 ms) */
	ck_assert(h.gemm.nm > 0);
	h.decode_gemm_table = true;
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 1024, 512, &s, &err), KVP_STATUS_OK);
	ck_assert_msg(s.compute_s < 0.0281668 * 0.60 / 0.70 && s.compute_s > 0.0187779,
		      "decode compute at the table: %g s", s.compute_s);
	ck_assert_double_eq_tol(s.time_s, fmax(s.compute_s, 0.0059927) + 0.0256416, 1e-6);
	/* the engines' profiles: TensorRT-LLM's says both; vLLM 0.19.0's the
	 * serial attention (LlamaAttention.forward: qkv_proj, attn, o_proj in
	 * turn), not the table; its 0.11.2 entry neither */
	struct kvp_engine_model em;
	struct kvp_perf_hw ht = h;
	ck_assert_msg(kvp_engine_model_load("trtllm", NULL, &em, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert(em.attention_serial && em.decode_gemm_table);
	kvp_perf_hw_engine(&ht, &em);
	ck_assert(ht.attention_serial && ht.decode_gemm_table);
	ck_assert_msg(kvp_engine_model_load("vllm", "0.19.0", &em, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert(em.attention_serial && !em.decode_gemm_table);
	ck_assert_msg(kvp_engine_model_load("vllm", "0.11.2", &em, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert(!em.attention_serial && !em.decode_gemm_table);
	kvp_perf_hw_engine(&ht, &em);
	ck_assert(!ht.attention_serial && !ht.decode_gemm_table);
}
END_TEST

/* decode_kv_per_query_head (profiles/engines/trtllm.yaml, 0.6.1; issue 32):
 * a generation attention with one thread block per query head loads its KV
 * head's cache once per query head (time/step-gqa.h).  Llama-3.1-8B bf16 on
 * one H100 SXM, 8 sequences at context 512: 32 query heads over 8 KV heads,
 * 4 loads of each KV byte: 8 x 512 x 131,072 B = 536,870,912 B of cache,
 * 2,147,483,648 B loaded, at 3.35 TB/s x 0.80 = 2.68e12 B/s: 0.80130 ms; the
 * weights 16,060,522,496 B: 5.99273 ms; FLOPs 8 x 16,328,925,184 =
 * 1.3063e11 at 989.4 TFLOP/s x 0.60: 0.22 ms.  Step: 5.99273 + 0.80130 =
 * 6.79403 ms (0.20033 ms of KV without the term). */
START_TEST(test_kv_per_query_head_by_hand)
{
	struct kvp_error err = {0};
	struct kvp_gpu g;
	struct kvp_perf_hw h;
	struct kvp_perf_step s;
	load_llama8b_h100(&g, &h);
	ck_assert(!h.kv_per_query_head);
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 8, 512, &s, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(s.kv_bytes, 536870912ull);
	ck_assert_double_eq_tol(s.time_s, 0.00599273 + 0.00020033, 1e-7);
	h.kv_per_query_head = true;
	ck_assert_msg(kvp_perf_init(&ctx, &spec, spec.weights_bytes, &h, &err) == KVP_STATUS_OK,
		      "%s", err.msg);
	ck_assert_int_eq(kvp_perf_decode_step(&ctx, 8, 512, &s, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(s.kv_bytes, 2147483648ull);
	ck_assert_double_eq_tol(s.time_s, 0.00679403, 1e-7);
	/* per GPU: at tp 2, 16 query heads over 4 KV heads, 4 loads; at tp 16,
	 * 2 query heads over one KV head (8 heads copied to 16 GPUs), 2 */
	ck_assert_uint_eq(kvp_perf_decode_kv_loads(&model, 2, true, 1000), 4000);
	ck_assert_uint_eq(kvp_perf_decode_kv_loads(&model, 16, true, 1000), 2000);
	ck_assert_uint_eq(kvp_perf_decode_kv_loads(&model, 1, false, 1000), 1000);
	/* multi-head attention (Llama 2 7B: 32 heads, 32 KV heads): once */
	struct kvp_model mha;
	ck_assert_msg(kvp_model_load("llama-2-7b", &mha, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(kvp_perf_decode_kv_loads(&mha, 1, true, 1000), 1000);
	/* the engines: TensorRT-LLM 0.6.1 says so, the default entry does not */
	struct kvp_engine_model em;
	struct kvp_perf_hw ht = h;
	ck_assert_msg(kvp_engine_model_load("trtllm", "0.6.1", &em, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert(em.decode_kv_per_query_head);
	kvp_perf_hw_engine(&ht, &em);
	ck_assert(ht.kv_per_query_head);
	ck_assert_msg(kvp_engine_model_load("trtllm", NULL, &em, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert(!em.decode_kv_per_query_head);
	kvp_perf_hw_engine(&ht, &em);
	ck_assert(!ht.kv_per_query_head);
}
END_TEST

static Suite *perf_suite(void)
{
	Suite *s = suite_create("perf");
	TCase *core = tcase_create("core");
	tcase_add_test(core, test_seed_offload);
	tcase_add_test(core, test_links);
	tcase_add_test(core, test_decode_by_hand);
	tcase_add_test(core, test_kv_per_query_head_by_hand);
	tcase_add_test(core, test_decode_turns_compute_bound);
	tcase_add_test(core, test_prefill_by_hand);
	tcase_add_test(core, test_chunked_ttft_by_hand);
	tcase_add_test(core, test_chunked_ttft_offload);
	tcase_add_test(core, test_dp_ep_one_sequence);
	tcase_add_test(core, test_held_context);
	tcase_add_test(core, test_context_doubling);
	tcase_add_test(core, test_tp_allreduce);
	tcase_add_test(core, test_eager_by_hand);
	tcase_add_test(core, test_uncaptured_by_hand);
	tcase_add_test(core, test_uncaptured_launches_by_layer);
	tcase_add_loop_test(core, test_collective_link, 0, sizeof links / sizeof links[0]);
	tcase_add_test(core, test_tp8_rtx3090_pcie);
	tcase_add_test(core, test_moe_weights);
	tcase_add_test(core, test_prefix_breakeven);
	tcase_add_test(core, test_hw_from_profile);
	tcase_add_test(core, test_pcie_ring_busbw);
	tcase_add_test(core, test_pcie_ring_profile);
	tcase_add_test(core, test_pcie_ring_dp_exchange);
	tcase_add_test(core, test_peak_by_weights_dtype);
	tcase_add_test(core, test_attention_peak);
	tcase_add_test(core, test_gemm_table_step);
	tcase_add_test(core, test_calibration_table);
	tcase_add_test(core, test_calibration_kvbench);
	tcase_add_test(core, test_elementwise_by_hand);
	tcase_add_test(core, test_attention_serial_by_hand);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_test(errors, test_calibration_errors);
	tcase_add_test(errors, test_errors);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	return run_suite_in_tmpdir("check-perf", perf_suite());
}
