/* check-serve.c: the serving-loop simulator (src/time/serve-sim.h), built
 * with its invariants (KVP_CHECK_INVARIANTS: every request completes once,
 * blocks within the pool, tokens conserved, Little's law; a failure aborts).
 * Hand cases on round hardware (1 TB/s, compute that never binds,
 * efficiencies 1: a step is (weights + KV bytes) / 1e12 s), the reference
 * loop of tests/serve-ref.c on 240 random workloads, lazy decoding under a
 * caller's memory against the plain loop on 120, the load models against
 * queueing identities, and the errors. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "check-tmp.h"
#include "read/profile.h"
#include "serve-ref.h"
#include "time/serve-sim.h"

static struct kvp_model model;
static struct kvp_gpu gpu;
static struct kvp_budget budget;
static struct kvp_perf_ctx pc;
static struct kvp_serve_result res;

/* Llama-2-7B (512 KiB of KV per token: 2 x 32 heads x 128 x 2 B x 32
 * layers = 524,288 B) with its weights given as 1e10 B on an 80 GiB GPU of
 * 1 TB/s and 1e18 FLOP/s; generic engine, blocks of 16 tokens. */
static void round_setup(void)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_model_load("llama-2-7b", &model, &err) == KVP_STATUS_OK, "%s", err.msg);
	memset(&gpu, 0, sizeof gpu);
	strcpy(gpu.name, "round");
	gpu.memory_bytes = 80 * KVP_GIB;
	gpu.bandwidth_bps = 1e12;
	gpu.bf16_flops = 1e18;
	gpu.decode_bw_efficiency = gpu.prefill_flops_efficiency = 1;
	strcpy(gpu.host_link, "pcie4x16");
	struct kvp_budget_opts bo = {.engine = KVP_ENGINE_GENERIC, .par = {.tp = 1, .pp = 1},
				     .block_size = 16, .utilization = 1.0, .context = 4096,
				     .has_weights = true, .weights_bytes = 10000000000ULL,
				     .has_activation = true, .has_overhead = true};
	ck_assert_msg(kvp_budget_compute(&model, &gpu, &bo, &budget, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	struct kvp_perf_hw hw;
	ck_assert_msg(kvp_perf_hw_from_gpu(&gpu, &model, &hw, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(kvp_perf_init(&pc, &budget.spec, budget.weights_bytes, &hw, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
}

/* A real model on a real GPU profile under vLLM's accounting. */
static void real_setup_par(const char *name, const char *gpu_name, uint32_t tp, uint32_t pp)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_model_load(name, &model, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(kvp_gpu_load(gpu_name, &gpu, &err) == KVP_STATUS_OK, "%s", err.msg);
	struct kvp_budget_opts bo = {.engine = KVP_ENGINE_VLLM, .par = {.tp = tp, .pp = pp},
				     .context = 4096};
	ck_assert_msg(kvp_budget_compute(&model, &gpu, &bo, &budget, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	struct kvp_perf_hw hw;
	ck_assert_msg(kvp_perf_hw_from_gpu(&gpu, &model, &hw, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(kvp_perf_init(&pc, &budget.spec, budget.weights_bytes, &hw, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
}

static void real_setup_tp(const char *name, const char *gpu_name, uint32_t tp)
{
	real_setup_par(name, gpu_name, tp, 1);
}

static void real_setup(const char *name, const char *gpu_name)
{
	real_setup_tp(name, gpu_name, 1);
}

/* per-request results, by id */
struct done_log {
	size_t n, cap;
	struct kvp_serve_done *d;
};

static void on_done(void *ctx, const struct kvp_serve_done *d)
{
	struct done_log *l = ctx;
	ck_assert_uint_lt(d->id, l->cap);
	l->d[d->id] = *d;
	l->n++;
}

static kvp_status run_trace(const struct kvp_serve_trace_row *rows, size_t n,
			    struct kvp_serve_opts *o, struct done_log *log, struct kvp_error *err)
{
	struct kvp_serve_trace tr = {(struct kvp_serve_trace_row *)rows, n, "kvplan"};
	o->load = KVP_SERVE_TRACE;
	o->trace = &tr;
	if (log) {
		o->on_done = on_done;
		o->ctx = log;
	}
	return kvp_serve_run(&budget, &pc, o, &res, err);
}

/* One request of 100 + 3 tokens at t = 0.
 *   step 1: the prompt, one chunk: (1e10 + 100 x 524,288) / 1e12 =
 *           10.0524288 ms -> the first token (TTFT)
 *   step 2: a decode over 101 tokens: (1e10 + 101 x 524,288) / 1e12 =
 *           10.052953088 ms
 *   step 3: over 102 tokens: 10.053477376 ms
 *   E2E = 30.158859264 ms; TPOT = (E2E - TTFT) / 2 = 10.053215232 ms. */
START_TEST(test_one_request_by_hand)
{
	round_setup();
	struct kvp_serve_trace_row rows[] = {{0, 100, 3}};
	struct kvp_serve_done d[1];
	struct done_log log = {0, 1, d};
	struct kvp_serve_opts o = {0};
	struct kvp_error err = {0};
	ck_assert_msg(run_trace(rows, 1, &o, &log, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(res.completed, 1);
	ck_assert_uint_eq(res.steps, 3);
	ck_assert_double_eq_tol(d[0].ttft_s, 0.0100524288, 1e-15);
	ck_assert_double_eq_tol(d[0].e2e_s, 0.030158859264, 1e-15);
	ck_assert_double_eq_tol(res.tpot.mean, 0.010053215232, 1e-15);
	ck_assert_double_eq_tol(res.ttft.mean, 0.0100524288, 1e-15);
	/* two ITL gaps: the two decode steps */
	ck_assert_uint_eq(res.itl.n, 2);
	ck_assert_double_eq_tol(res.itl.mean, 0.010053215232, 1e-15);
	ck_assert_double_eq_tol(res.duration_s, 0.030158859264, 1e-15);
	ck_assert_double_eq_tol(res.request_throughput, 1 / 0.030158859264, 1e-9);
	ck_assert_uint_eq(res.total_input_tokens, 100);
	ck_assert_uint_eq(res.total_output_tokens, 3);
	/* one request the whole time: Little's L = 1 */
	ck_assert_double_eq_tol(res.mean_in_system, 1.0, 1e-12);
	/* 100 tokens = 7 blocks of 16 at first, 102 = 7 */
	ck_assert_uint_eq(res.kv_max_blocks, 7);
}
END_TEST

/* Preemption by recompute, traced by hand (vLLM V1: the newest running
 * request is the victim).  A pool of 8 blocks of 16 tokens; A and B arrive
 * at t = 0, each 48 + 40 tokens (at most 88 = 6 blocks: each fits alone).
 *   step 1       both prefill 48 tokens (3 blocks each, 6 in use); token 1
 *   step s >= 2  each decodes to 47 + s tokens: 4 blocks each from step 2
 *                (8 in use) until step 18 (65 tokens, a 5th block): A,
 *                scheduled first, finds none free, and B (the newest) is
 *                preempted with 17 tokens out and 64 computed -> 64 tokens
 *                to recompute; B needs ceil(65 / 16) = 5 blocks and A leaves
 *                at most 3 until it finishes at step 40 (its 40th token)
 *   step 41      B recomputes its 65 tokens in one chunk: token 18
 *   steps 42-63  tokens 19 to 40.
 * 63 steps, 1 preemption, all 8 blocks in use at the fullest. */
START_TEST(test_preemption_by_hand)
{
	round_setup();
	struct kvp_serve_trace_row rows[] = {{0, 48, 40}, {0, 48, 40}};
	struct kvp_serve_done d[2];
	struct done_log log = {0, 2, d};
	struct kvp_serve_opts o = {.num_blocks = 8};
	struct kvp_error err = {0};
	ck_assert_msg(run_trace(rows, 2, &o, &log, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(res.completed, 2);
	ck_assert_uint_eq(res.preemptions, 1);
	ck_assert_uint_eq(res.recomputed_tokens, 64);
	ck_assert_uint_eq(res.steps, 63);
	ck_assert_uint_eq(res.kv_max_blocks, 8);
	ck_assert_uint_eq(d[0].preempted, 0);
	ck_assert_uint_eq(d[1].preempted, 1);
	ck_assert_double_eq(d[0].ttft_s, d[1].ttft_s);   /* both first tokens at step 1 */
	ck_assert(d[1].e2e_s > d[0].e2e_s);
}
END_TEST

/* A cached prefix of 64 tokens (4 whole blocks, pinned): a request of
 * 100 + 2 tokens carrying it computes 100 - 64 = 36 prompt tokens; one
 * whose prompt is 50 tokens takes min(64, 49) = 49 -> 48 (3 whole blocks). */
START_TEST(test_prefix_by_hand)
{
	round_setup();
	struct kvp_serve_trace_row rows[] = {{0, 100, 2}, {10, 50, 1}};
	struct kvp_serve_opts o = {.prefix_tokens = 64, .prefix_fraction = 1};
	struct kvp_error err = {0};
	ck_assert_msg(run_trace(rows, 2, &o, NULL, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(res.pinned_blocks, 4);
	ck_assert_uint_eq(res.prefix_hits, 2);
	/* first request: a chunk of 36 over 64 cached, then one decode over 101 */
	double step1 = (1e10 + 100 * 524288.0) / 1e12;
	double step2 = (1e10 + 101 * 524288.0) / 1e12;
	ck_assert_double_eq_tol(res.e2el.max, fmax(step1 + step2, (1e10 + 50 * 524288.0) / 1e12),
				1e-15);
	/* 100 tokens: ceil(100 / 16) = 7 blocks, 4 of them the prefix's */
	ck_assert_uint_eq(res.kv_max_blocks, 7);
}
END_TEST

/* The reference loop (tests/serve-ref.c) against the simulator on random
 * workloads (round hardware; Llama-3.1-8B on an H100; Gemma-2-9B, sliding
 * windows in vLLM's KV groups, on an L4; Qwen3-30B-A3B, MoE, at tp 2 with
 * its all-reduces; every other Llama case at pp 2, micro-batches in flight):
 * the same completions and preemptions, and each request's TTFT
 * and E2E within 1e-9 relative.  Both compose the same step model in the
 * same order, so they agree to rounding; a scheduling difference would move
 * a time by at least one step (milliseconds), six orders above it. */
START_TEST(test_reference_random)
{
	enum { CASES = 240, MAXN = 60 };
	struct kvp_rng g, fixed;
	kvp_rng_seed(&g, 33);
	kvp_rng_seed(&fixed, 34);
	size_t preempting = 0, prefixed = 0, unchunked = 0, with_fixed = 0, with_eager = 0;
	for (int k = 0; k < CASES; k++) {
		if (k % 4 == 3)
			real_setup_tp("qwen3-30b-a3b", "h100-sxm", 2);   /* MoE, all-reduces */
		else if (k % 4 == 2)
			real_setup("gemma-2-9b", "l4");       /* sliding windows: vLLM's KV groups */
		else if (k % 8 == 5)
			real_setup_par("llama-3.1-8b", "h100-sxm", 1, 2);   /* pipeline */
		else if (k % 4 == 1)
			real_setup("llama-3.1-8b", "h100-sxm");
		else
			round_setup();
		/* the engine's fixed costs (step.h) in half the cases, from a
		 * generator of their own so the workloads stay those of seed 33 */
		if (kvp_rng_next(&fixed) % 2) {
			pc.hw.step_fixed_s = 2e-3 * kvp_rng_uniform(&fixed);
			pc.hw.seq_step_s = 1e-4 * kvp_rng_uniform(&fixed);
			pc.hw.prefill_fixed_s = 5e-3 * kvp_rng_uniform(&fixed);
			with_fixed++;
		}
		/* vLLM's eager attention (step.h kvp_perf_eager_s) in a third of
		 * the cases: 3 launches a dense layer, 9 an MLA one (0.10.2's
		 * counts), up to 200 us each, so some passes' GPU work hides them
		 * and some not; a full decode graph in half of those */
		if (kvp_rng_next(&fixed) % 3 == 0) {
			pc.hw.eager_launch_s = 200e-6 * kvp_rng_uniform(&fixed);
			pc.hw.eager_attention_launches = 3;
			pc.hw.eager_attention_launches_mla = 9;
			pc.hw.decode_full_graph = kvp_rng_next(&fixed) % 2;
			with_eager++;
		}
		size_t n = 1 + kvp_rng_next(&g) % MAXN;
		double rate = 0.5 + 200 * kvp_rng_uniform(&g);
		struct kvp_serve_trace_row rows[MAXN];
		struct serve_ref_req refs[MAXN];
		struct kvp_serve_done d[MAXN];
		double t = 0;
		uint64_t maxlen = 0;
		for (size_t i = 0; i < n; i++) {
			t += -log1p(-kvp_rng_uniform(&g)) / rate;
			rows[i].arrival_s = t;
			rows[i].prompt = 1 + kvp_rng_next(&g) % 400;
			rows[i].output = 1 + kvp_rng_next(&g) % 120;
			if (rows[i].prompt + rows[i].output > maxlen)
				maxlen = rows[i].prompt + rows[i].output;
		}
		struct kvp_serve_opts o = {.seed = kvp_rng_next(&g)};
		o.no_chunked_prefill = kvp_rng_next(&g) % 5 == 0;
		o.max_num_seqs = 1 + kvp_rng_next(&g) % 48;
		o.max_batched_tokens = 16 + kvp_rng_next(&g) % 1024;
		if (o.no_chunked_prefill && o.max_batched_tokens < maxlen)
			o.max_batched_tokens = maxlen;
		if (kvp_rng_next(&g) % 2) {
			o.prefix_tokens = 1 + kvp_rng_next(&g) % 300;
			o.prefix_fraction = kvp_rng_uniform(&g);
		}
		/* a pool from just what the longest request needs to 4 x that */
		uint64_t need, pre = 0, unit = budget.engine == KVP_ENGINE_VLLM
							 ? budget.page_bytes * budget.group_size
							 : budget.page_bytes;
		ck_assert(kvp_budget_pool_for(&budget, maxlen, 1, &need) == KVP_STATUS_OK);
		need = kvp_cdiv(need, unit);
		if (o.prefix_tokens) {
			uint64_t p = o.prefix_tokens / budget.block_size * budget.block_size;
			ck_assert(kvp_budget_pool_for(&budget, p, 1, &pre) == KVP_STATUS_OK);
			pre = kvp_cdiv(pre, unit);
		}
		o.num_blocks = pre + need + kvp_rng_next(&g) % (3 * need + 1);
		/* the prefix draws: the i-th uniform of the seed's generator */
		struct kvp_rng pr;
		kvp_rng_seed(&pr, o.seed);
		for (size_t i = 0; i < n; i++) {
			memset(&refs[i], 0, sizeof refs[i]);
			refs[i].arrival_s = rows[i].arrival_s;
			refs[i].prompt = rows[i].prompt;
			refs[i].output = rows[i].output;
			refs[i].prefix = o.prefix_tokens && kvp_rng_uniform(&pr) < o.prefix_fraction;
			prefixed += refs[i].prefix;
		}
		struct done_log log = {0, n, d};
		struct kvp_error err = {0};
		ck_assert_msg(run_trace(rows, n, &o, &log, &err) == KVP_STATUS_OK, "case %d: %s", k,
			      err.msg);
		struct serve_ref_cfg cfg = {o.num_blocks, o.max_num_seqs, o.max_batched_tokens,
					    o.prefix_tokens, o.no_chunked_prefill};
		struct serve_ref_out ro;
		ck_assert_msg(serve_ref_run(&budget, &pc, &cfg, refs, n, &ro), "case %d: reference", k);
		ck_assert_uint_eq(ro.completed, n);
		ck_assert_uint_eq(res.completed, n);
		ck_assert_uint_eq(log.n, n);
		ck_assert_msg(ro.preemptions == res.preemptions, "case %d: preemptions %llu vs %llu", k,
			      (unsigned long long)ro.preemptions, (unsigned long long)res.preemptions);
		ck_assert_uint_eq(ro.recomputed_tokens, res.recomputed_tokens);
		ck_assert_uint_eq(ro.steps, res.steps);
		ck_assert_uint_eq(ro.max_blocks, res.kv_max_blocks);
		for (size_t i = 0; i < n; i++) {
			ck_assert_msg(fabs(d[i].ttft_s - refs[i].ttft_s) <= 1e-9 * fmax(1, refs[i].ttft_s),
				      "case %d request %zu: ttft %.12g vs %.12g", k, i, d[i].ttft_s,
				      refs[i].ttft_s);
			ck_assert_msg(fabs(d[i].e2e_s - refs[i].e2e_s) <= 1e-9 * fmax(1, refs[i].e2e_s),
				      "case %d request %zu: e2e %.12g vs %.12g", k, i, d[i].e2e_s,
				      refs[i].e2e_s);
			ck_assert_uint_eq(d[i].preempted, refs[i].preempted);
		}
		preempting += res.preemptions > 0;
		unchunked += o.no_chunked_prefill;
	}
	/* the random cases reach the paths they are meant to */
	ck_assert_uint_gt(preempting, CASES / 10);
	ck_assert_uint_gt(prefixed, 100);
	ck_assert_uint_gt(unchunked, CASES / 10);
	ck_assert_uint_gt(with_fixed, CASES / 3);
	ck_assert_uint_gt(with_eager, CASES / 6);
}
END_TEST

/* ------------------------------------------------------------ a caller's memory */

/* A memory of blocks: a request of c tokens holds S + ceil(c / P) x U units
 * (a carrier less the shared prefix's sb = k / P blocks, held once while
 * one runs) and measures A + c x B; every fifth admission that fits is
 * refused (as a hole that is not there).  Lengths and gaps from their own
 * generator. */
struct lazy_mem {
	uint64_t S, U, A, B, sb;
	uint32_t P;
	struct kvp_rng g;
	size_t sent, n;
	double t, gap;
	uint64_t admits, running;
	/* what the loop reported */
	uint64_t steps, live, used, measure, refused;
	struct kvp_serve_done done[400];
	size_t ndone;
};

static uint64_t lm_held(void *ctx, const struct kvp_serve_view *r)
{
	const struct lazy_mem *m = ctx;
	uint64_t b = kvp_cdiv(r->tokens, m->P);
	if (r->carrier)
		b -= b < m->sb ? b : m->sb;
	return m->S + b * m->U;
}

static uint64_t lm_measure(void *ctx, const struct kvp_serve_view *r)
{
	const struct lazy_mem *m = ctx;
	return m->A + r->tokens * m->B;
}

static bool lm_admit(void *ctx, const struct kvp_serve_view *r, uint64_t units, uint64_t *tag)
{
	struct lazy_mem *m = ctx;
	(void)r, (void)units;
	*tag = 0;
	if (m->running && ++m->admits % 5 == 0)
		return false;   /* refused only beside a running one, as a hole */
	m->running++;
	return true;
}

static void lm_release(void *ctx, const struct kvp_serve_view *r, uint64_t units, uint64_t tag)
{
	struct lazy_mem *m = ctx;
	(void)r, (void)units, (void)tag;
	ck_assert_uint_gt(m->running, 0);
	m->running--;
}

static void lm_on_step(void *ctx, size_t n, uint64_t used, uint64_t measure, bool refused)
{
	struct lazy_mem *m = ctx;
	m->steps++;
	m->live += n;
	m->used += used;
	m->measure += measure;
	m->refused += refused;
}

static void lm_done(void *ctx, const struct kvp_serve_done *d)
{
	struct lazy_mem *m = ctx;
	ck_assert_uint_lt(m->ndone, sizeof m->done / sizeof m->done[0]);
	m->done[m->ndone++] = *d;
}

static kvp_status lm_source(void *ctx, struct kvp_serve_arrival *a, struct kvp_error *err)
{
	struct lazy_mem *m = ctx;
	(void)err;
	if (m->sent++ == m->n) {
		a->arrival_s = INFINITY;
		return KVP_STATUS_OK;
	}
	m->t += 2 * m->gap * kvp_rng_uniform(&m->g);
	bool carrier = m->sb && kvp_rng_next(&m->g) % 3 == 0;
	*a = (struct kvp_serve_arrival){m->t, 1 + kvp_rng_next(&m->g) % 400 + (carrier ? m->sb * m->P : 0),
					kvp_rng_next(&m->g) % 150, carrier};
	return KVP_STATUS_OK;
}

/* Lazy decoding (step_period) against the plain loop (step_period 0) under
 * the same memory, on 120 random workloads: every step's running count,
 * units and measure, every finished request in its order, and the
 * result's counts the same, bit for bit.  (Built with the invariants, every
 * step recounts each running request from the memory model.) */
START_TEST(test_lazy_memory_against_plain)
{
	enum { CASES = 120 };
	struct kvp_rng g;
	kvp_rng_seed(&g, 14);
	size_t preempting = 0, refusing = 0;
	struct lazy_mem *m = malloc(2 * sizeof *m);
	struct kvp_serve_result *r2 = malloc(sizeof *r2);
	ck_assert(m && r2);
	for (int k = 0; k < CASES; k++) {
		uint32_t P = 1 + kvp_rng_next(&g) % 32;
		uint64_t sb = kvp_rng_next(&g) % 2 ? kvp_rng_next(&g) % (300 / P + 1) : 0;
		uint64_t U = 1 + kvp_rng_next(&g) % 5, S = kvp_rng_next(&g) % 4;
		/* the longest request alone: 400 + sb P + 149 tokens */
		uint64_t most = S + kvp_cdiv(549 + sb * P, P) * U;
		struct kvp_serve_memory mem = {.pool = most + kvp_rng_next(&g) % (6 * most),
					       .shared_tokens = sb * P, .shared_units = sb * U,
					       .held = lm_held, .measure = lm_measure,
					       .shared_measure = kvp_rng_next(&g) % 100,
					       .on_step = lm_on_step, .step_units = U};
		if (kvp_rng_next(&g) % 2) {
			mem.admit = lm_admit;
			mem.release = lm_release;
		}
		struct kvp_serve_opts o = {.load = KVP_SERVE_SOURCE, .source = lm_source,
					   .memory = &mem, .step_s = 0.01, .no_itl = true,
					   .admit_after_preempt = kvp_rng_next(&g) % 2,
					   .max_num_seqs = 1 + kvp_rng_next(&g) % 64,
					   .max_batched_tokens = 1 + kvp_rng_next(&g) % 2048,
					   .on_done = lm_done};
		if (kvp_rng_next(&g) % 2)
			o.max_batched_tokens = 1 + kvp_rng_next(&g) % 24;   /* decodes beyond a step's tokens */
		m[0] = (struct lazy_mem){.S = S, .U = U, .A = kvp_rng_next(&g) % 50,
					 .B = kvp_rng_next(&g) % 7, .sb = sb, .P = P,
					 .n = 1 + kvp_rng_next(&g) % 400,
					 .gap = 0.001 + 0.05 * kvp_rng_uniform(&g)};
		kvp_rng_seed(&m[0].g, kvp_rng_next(&g));
		mem.step_measure = m[0].B;
		m[1] = m[0];
		struct kvp_error err = {0};
		for (int lazy = 0; lazy < 2; lazy++) {
			mem.ctx = o.source_ctx = o.ctx = &m[lazy];
			mem.step_period = lazy ? P : 0;
			ck_assert_msg(kvp_serve_run(NULL, NULL, &o, lazy ? r2 : &res, &err) ==
					      KVP_STATUS_OK, "case %d: %s", k, err.msg);
		}
		const struct lazy_mem *a = &m[0], *b = &m[1];
		ck_assert_msg(a->steps == b->steps && a->live == b->live && a->used == b->used &&
				      a->measure == b->measure && a->refused == b->refused,
			      "case %d: steps %llu/%llu, live %llu/%llu, used %llu/%llu, measure "
			      "%llu/%llu", k, (unsigned long long)a->steps, (unsigned long long)b->steps,
			      (unsigned long long)a->live, (unsigned long long)b->live,
			      (unsigned long long)a->used, (unsigned long long)b->used,
			      (unsigned long long)a->measure, (unsigned long long)b->measure);
		ck_assert_uint_eq(a->ndone, a->n);
		ck_assert_uint_eq(b->ndone, a->n);
		for (size_t i = 0; i < a->ndone; i++) {
			const struct kvp_serve_done *x = &a->done[i], *y = &b->done[i];
			ck_assert_msg(x->id == y->id && x->ttft_s == y->ttft_s && x->e2e_s == y->e2e_s &&
					      x->queue_s == y->queue_s && x->preempted == y->preempted,
				      "case %d: finished request %zu differs", k, i);
		}
		ck_assert_uint_eq(res.steps, r2->steps);
		ck_assert_uint_eq(res.preemptions, r2->preemptions);
		ck_assert_uint_eq(res.recomputed_tokens, r2->recomputed_tokens);
		ck_assert_uint_eq(res.prefix_hits, r2->prefix_hits);
		ck_assert_uint_eq(res.max_running, r2->max_running);
		ck_assert_uint_eq(res.kv_max_blocks, r2->kv_max_blocks);
		ck_assert(res.end_s == r2->end_s && res.kv_mean_util == r2->kv_mean_util);
		preempting += res.preemptions > 0;
		refusing += a->refused > 0;
	}
	/* the random cases reach preemption (the write-out) and refusals */
	ck_assert_uint_gt(preempting, CASES / 10);
	ck_assert_uint_gt(refusing, CASES / 10);
	free(m);
	free(r2);
}
END_TEST

/* Poisson arrivals well under capacity: the throughput is the rate
 * (2,000 requests at 5/s; the count in a Poisson window has a relative
 * spread of 1 / sqrt(2,000) = 2.2 %: within 10 %).  A closed loop of N
 * users with think time Z: each user cycles E2E + Z, so N = X (E2E + Z)
 * (the response-time law) up to the start and the drain. */
START_TEST(test_loads)
{
	round_setup();
	struct kvp_workload w = {0};
	struct kvp_error err = {0};
	ck_assert(kvp_dist_parse("uniform:50,500", "prompt", &w.prompt, &err) == KVP_STATUS_OK);
	ck_assert(kvp_dist_parse("uniform:10,100", "output", &w.output, &err) == KVP_STATUS_OK);
	struct kvp_serve_opts o = {.load = KVP_SERVE_POISSON, .rate = 5, .requests = 2000,
				   .seed = 7, .workload = &w};
	ck_assert_msg(kvp_serve_run(&budget, &pc, &o, &res, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_double_eq_tol(res.request_throughput, 5, 0.5);
	ck_assert_uint_eq(res.completed, 2000);
	/* Little's law, checked inside too: L = X W */
	ck_assert_double_eq_tol(res.mean_in_system, res.request_throughput * res.e2el.mean,
				1e-6 * res.mean_in_system);
	struct kvp_serve_opts c = {.load = KVP_SERVE_CLOSED, .users = 16, .think_s = 0.5,
				   .requests = 4000, .seed = 7, .workload = &w};
	ck_assert_msg(kvp_serve_run(&budget, &pc, &c, &res, &err) == KVP_STATUS_OK, "%s", err.msg);
	double n = res.request_throughput * (res.e2el.mean + 0.5);
	ck_assert_msg(fabs(n - 16) < 0.03 * 16, "N = X (R + Z) = %g", n);
	ck_assert_uint_le(res.max_running, 16);
	/* the same seed, the same run */
	struct kvp_serve_result *again = malloc(sizeof *again);
	ck_assert_msg(kvp_serve_run(&budget, &pc, &c, again, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_double_eq(again->e2el.mean, res.e2el.mean);
	free(again);
	kvp_workload_free(&w);
}
END_TEST

/* Percentiles from the histogram: 1..1000 ms; nearest rank: p50 = 500 ms,
 * p90 = 900, p99 = 990, each within a bin (2^-9 = 0.2 %). */
START_TEST(test_percentiles)
{
	round_setup();
	struct kvp_serve_trace_row rows[1000];
	/* one request every 10 s, alone: E2E = its own steps; instead check the
	 * histogram through TTFT of single-step requests whose prompt grows */
	for (size_t i = 0; i < 1000; i++)
		rows[i] = (struct kvp_serve_trace_row){(double)i * 100, 1 + i * 7, 1};
	struct kvp_serve_opts o = {0};
	struct kvp_error err = {0};
	ck_assert_msg(run_trace(rows, 1000, &o, NULL, &err) == KVP_STATUS_OK, "%s", err.msg);
	/* TTFT of request i: (1e10 + (1 + 7 i) x 524,288) / 1e12 s; the k-th
	 * smallest is request k - 1 */
	for (int q = 0; q < 3; q++) {
		double p[] = {0.5, 0.9, 0.99}, got[] = {res.ttft.p50, res.ttft.p90, res.ttft.p99};
		size_t rank = (size_t)ceil(p[q] * 1000) - 1;
		double want = (1e10 + (1 + 7 * (double)rank) * 524288.0) / 1e12;
		ck_assert_msg(fabs(got[q] - want) <= want / 512, "p%g: %g vs %g", p[q] * 100, got[q],
			      want);
	}
	ck_assert_uint_eq(res.tpot.n, 0);   /* one output token: no TPOT (as vLLM) */
}
END_TEST

static void write_file(const char *name, const char *text, char *path, size_t size)
{
	snprintf(path, size, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

/* The Azure layout: TIMESTAMP as wall-clock time, from the first row:
 * 18:15:46.6805900 -> 0; 18:15:47.1805900 -> 0.5 s; 18:16:00.0 on the next
 * day -> 86,400 + 13.31941 s. */
START_TEST(test_trace_formats)
{
	tmp_make("check-serve");
	char path[600];
	struct kvp_serve_trace tr;
	struct kvp_error err = {0};
	write_file("azure.csv",
		   "TIMESTAMP,ContextTokens,GeneratedTokens\n"
		   "2023-11-16 18:15:46.6805900,374,44\n"
		   "2023-11-16 18:15:47.1805900,396,109\n"
		   "2023-11-17 18:16:00.0000000,879,48\n", path, sizeof path);
	ck_assert_msg(kvp_serve_trace_load(path, 0, &tr, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_str_eq(tr.format, "azure");
	ck_assert_uint_eq(tr.n, 3);
	ck_assert_double_eq_tol(tr.rows[0].arrival_s, 0, 1e-9);
	ck_assert_double_eq_tol(tr.rows[1].arrival_s, 0.5, 1e-6);
	ck_assert_double_eq_tol(tr.rows[2].arrival_s, 86400 + 13.31941, 1e-5);
	ck_assert_uint_eq(tr.rows[1].prompt, 396);
	ck_assert_uint_eq(tr.rows[1].output, 109);
	kvp_serve_trace_free(&tr);
	write_file("own.csv", "arrival_s,prompt_tokens,output_tokens,note\n1.5,10,2,x\n1.5,20,3,y\n",
		   path, sizeof path);
	ck_assert_msg(kvp_serve_trace_load(path, 0, &tr, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_str_eq(tr.format, "kvplan");
	ck_assert_double_eq(tr.rows[0].arrival_s, 1.5);   /* seconds as given */
	kvp_serve_trace_free(&tr);
	write_file("vidur.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n0.25,100,20\n",
		   path, sizeof path);
	ck_assert_msg(kvp_serve_trace_load(path, 0, &tr, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_str_eq(tr.format, "vidur");
	kvp_serve_trace_free(&tr);
	write_file("own.jsonl", "{\"arrival_s\": 0.5, \"prompt_tokens\": 100, \"output_tokens\": 20}\n"
		   "{\"id\": \"b\", \"output_tokens\": 3,\"prompt_tokens\":7,\"arrival_s\":2}\n",
		   path, sizeof path);
	ck_assert_msg(kvp_serve_trace_load(path, 0, &tr, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_str_eq(tr.format, "kvplan-jsonl");
	ck_assert_uint_eq(tr.n, 2);
	ck_assert_double_eq(tr.rows[0].arrival_s, 0.5);
	ck_assert_uint_eq(tr.rows[0].prompt, 100);
	ck_assert_uint_eq(tr.rows[1].output, 3);
	ck_assert_uint_eq(tr.rows[1].prompt, 7);
	ck_assert_double_eq(tr.rows[1].arrival_s, 2);
	kvp_serve_trace_free(&tr);
	tmp_remove();
}
END_TEST

/* Bad traces: each names its line, column and field. */
START_TEST(test_trace_errors)
{
	tmp_make("check-serve");
	static const struct {
		const char *text;
		uint64_t max_len;
		int line, col;
		const char *field;
	} cases[] = {
		{"arrival_s,prompt_tokens,output_tokens\n1,10,2\n0.5,10,2\n", 0, 3, 1, "arrival_s"},
		{"arrival_s,prompt_tokens,output_tokens\n-1,10,2\n", 0, 2, 1, "arrival_s"},
		{"arrival_s,prompt_tokens,output_tokens\n0,100,30\n", 128, 2, 3, "prompt_tokens"},
		{"arrival_s,prompt_tokens,output_tokens\n0,0,30\n", 0, 2, 3, "prompt_tokens"},
		{"arrival_s,prompt_tokens,output_tokens\n0,5,x\n", 0, 2, 5, "output_tokens"},
		{"arrival_s,prompt_tokens,output_tokens\nsoon,5,1\n", 0, 2, 1, "arrival_s"},
		{"time,prompt,output\n0,5,1\n", 0, 1, 1, "header"},
		{"arrival_s,prompt_tokens,output_tokens\n1e300,5,1\n", 0, 2, 1, "arrival_s"},
		{"arrival_s,prompt_tokens,output_tokens\n", 0, 1, 0, "rows"},
		{"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6,1,1\n"
		 "2023-11-16 18:15:45.0,1,1\n", 0, 3, 1, "TIMESTAMP"},
		/* JSON lines: a later time earlier, a missing key, a broken object */
		{"{\"arrival_s\": 2, \"prompt_tokens\": 1, \"output_tokens\": 1}\n"
		 "{\"arrival_s\": 1, \"prompt_tokens\": 1, \"output_tokens\": 1}\n", 0, 2, 15, "arrival_s"},
		{"{\"arrival_s\": 2, \"prompt_tokens\": 1}\n", 0, 1, 1, "output_tokens"},
		{"{\"arrival_s\": 2 \"prompt_tokens\": 1}\n", 0, 1, 17, "json"},
		{"{\"arrival_s\": 2, \"prompt_tokens\": 1, \"output_tokens\": 1}\n1,2,3\n", 0, 2, 1, "json"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char path[600];
		struct kvp_serve_trace tr;
		struct kvp_error err = {0};
		write_file("bad.csv", cases[i].text, path, sizeof path);
		ck_assert_int_eq(kvp_serve_trace_load(path, cases[i].max_len, &tr, &err),
				 KVP_STATUS_INVALID);
		ck_assert_msg(err.line == cases[i].line && err.col == cases[i].col,
			      "case %zu: %d:%d", i, err.line, err.col);
		ck_assert_str_eq(err.field, cases[i].field);
		ck_assert_str_eq(err.path, path);
	}
	tmp_remove();
}
END_TEST

/* Loads the simulator refuses, each naming its field. */
START_TEST(test_run_errors)
{
	round_setup();
	struct kvp_workload w = {0};
	struct kvp_error err = {0};
	ck_assert(kvp_dist_parse("fixed:100", "prompt", &w.prompt, &err) == KVP_STATUS_OK);
	ck_assert(kvp_dist_parse("fixed:10", "output", &w.output, &err) == KVP_STATUS_OK);
	struct kvp_serve_opts o = {.load = KVP_SERVE_POISSON, .rate = 0, .requests = 10,
				   .workload = &w};
	ck_assert_int_eq(kvp_serve_run(&budget, &pc, &o, &res, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "--rate");
	o.rate = INFINITY;
	ck_assert_int_eq(kvp_serve_run(&budget, &pc, &o, &res, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "--rate");
	o.rate = NAN;
	ck_assert_int_eq(kvp_serve_run(&budget, &pc, &o, &res, &err), KVP_STATUS_INVALID);
	o.load = KVP_SERVE_CLOSED;
	ck_assert_int_eq(kvp_serve_run(&budget, &pc, &o, &res, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "--concurrency");
	/* 110 tokens = 7 blocks; a pool of 6 never holds the request */
	o.load = KVP_SERVE_POISSON;
	o.rate = 1;
	o.num_blocks = 6;
	ck_assert_int_eq(kvp_serve_run(&budget, &pc, &o, &res, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "num_blocks");
	/* without chunked prefill, 109 tokens never fit a step of 64 */
	o.num_blocks = 0;
	o.no_chunked_prefill = true;
	o.max_batched_tokens = 64;
	ck_assert_int_eq(kvp_serve_run(&budget, &pc, &o, &res, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "max_batched_tokens");
	/* a prefix that fills the pool */
	o.no_chunked_prefill = false;
	o.max_batched_tokens = 0;
	o.num_blocks = 8;
	o.prefix_tokens = 128;
	o.prefix_fraction = 1;
	ck_assert_int_eq(kvp_serve_run(&budget, &pc, &o, &res, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "--prefix");
	/* max_model_len 60 cuts each sampled 100 + 10: the prompt (100 >= 60)
	 * to 59, the output to 60 - 59 = 1 */
	o.prefix_tokens = 0;
	o.num_blocks = 0;
	o.max_model_len = 60;
	o.requests = 3;
	ck_assert_msg(kvp_serve_run(&budget, &pc, &o, &res, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(res.total_input_tokens, 3 * 59);
	ck_assert_uint_eq(res.total_output_tokens, 3);
	kvp_workload_free(&w);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("serve");
	TCase *core = tcase_create("core");
	tcase_set_timeout(core, 300);
	tcase_add_test(core, test_one_request_by_hand);
	tcase_add_test(core, test_preemption_by_hand);
	tcase_add_test(core, test_prefix_by_hand);
	tcase_add_test(core, test_reference_random);
	tcase_add_test(core, test_lazy_memory_against_plain);
	tcase_add_test(core, test_loads);
	tcase_add_test(core, test_percentiles);
	tcase_add_test(core, test_trace_formats);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_test(errors, test_trace_errors);
	tcase_add_test(errors, test_run_errors);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
