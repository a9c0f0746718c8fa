/* check-frag-ref.c: the fragmentation simulator (src/frag*.c) against the
 * plain reference (tests/frag-ref.c) on 240 random workloads: every length
 * distribution (and empirical lengths, paired or not), every policy and
 * allocator, block sizes drawn from 1 to 256, pools from 2 to 300,000
 * sequences, plain token shapes and real layer lists (sliding windows, Mamba
 * state, MLA), with and without a shared prefix, a requested max_tokens and a
 * sequence cap.
 *
 * Both run the same seeded request stream and the simulation is
 * deterministic, so every count (sequences, refusals, preemptions, drops,
 * admissions, measured steps) must agree exactly; the shares of the pool and
 * the mean sequences are sums of up to 10^6 byte counts in doubles, added in
 * a different order (the simulator integrates the contiguous growth in
 * closed form over the steps it skips), so they must agree to 1e-9 of the
 * pool.  The workload generator is seeded: a failure names the case.
 *
 * And 120 random workloads of requests arriving over time (every shape,
 * distribution, allocator and block size as above, tokens per step from 1
 * to 8,192, loads from a third of the pool to three times it, paged-shared
 * when a prefix is drawn) against frag_ref_arrivals, with the same
 * tolerances and the exact p99 queue. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frag-ref.h"
#include "read/profile.h"
#include "model/spec.h"

#define CASES 240
#define SHARE_TOL 1e-9

static uint64_t gen_state = 0x2545f4914f6cdd1dULL;

static uint64_t gen(uint64_t lo, uint64_t hi) /* uniform in [lo, hi] */
{
	gen_state ^= gen_state << 13;
	gen_state ^= gen_state >> 7;
	gen_state ^= gen_state << 17;
	return lo + gen_state % (hi - lo + 1);
}

/* A length distribution of mean about `mean` tokens, of kind k. */
static void make_dist(int k, uint64_t mean, bool allow_zero, struct kvp_dist *d)
{
	struct kvp_error err = {0};
	char spec[96];
	uint64_t lo = 1;
	(void)allow_zero; /* only fixed:0 may be 0 */
	switch (k) {
	case 0: snprintf(spec, sizeof spec, "fixed:%llu", (unsigned long long)(mean ? mean : 1)); break;
	case 1: snprintf(spec, sizeof spec, "uniform:%llu,%llu", (unsigned long long)lo,
			 (unsigned long long)(mean ? 2 * mean : 1)); break;
	case 2: snprintf(spec, sizeof spec, "normal:%llu,%llu", (unsigned long long)(mean + 1),
			 (unsigned long long)(mean / 2 + 1)); break;
	case 3: snprintf(spec, sizeof spec, "lognormal:%llu,%.2f", (unsigned long long)(mean + 1),
			 0.3 + (double)gen(0, 90) / 100); break;
	case 4: snprintf(spec, sizeof spec, "zipf:%llu,%.2f", (unsigned long long)(4 * mean + 2),
			 1.1 + (double)gen(0, 80) / 100); break;
	default: {
		uint64_t v[64];
		size_t n = (size_t)gen(1, 64);
		for (size_t i = 0; i < n; i++)
			v[i] = gen(lo, 2 * mean + 1);
		ck_assert_int_eq(kvp_dist_empirical(v, n, d), KVP_STATUS_OK);
		return;
	}
	}
	ck_assert_msg(kvp_dist_parse(spec, "test", d, &err) == KVP_STATUS_OK, "%s: %s", spec, err.msg);
}

static struct kvp_frag_shape shapes[5];
static size_t nshapes;

static void load_shapes(void)
{
	static const char *const models[] = {"gemma-2-9b", "gpt-oss-20b", "jamba-v0.1",
					     "deepseek-v3"};
	kvp_frag_shape_tokens(&shapes[0], 1);
	nshapes = 1;
	for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
		struct kvp_model *model = malloc(sizeof *model);
		struct kvp_spec *spec = malloc(sizeof *spec);
		struct kvp_error err = {0};
		ck_assert_msg(kvp_model_load(models[m], model, &err) == KVP_STATUS_OK, "%s", err.msg);
		ck_assert_int_eq(kvp_spec_build(model, (struct kvp_parallel){1, 1}, KVP_DTYPE_AUTO,
						KVP_DTYPE_AUTO, spec, &err), KVP_STATUS_OK);
		ck_assert_int_eq(kvp_frag_shape_from_spec(spec, &shapes[nshapes++], &err),
				 KVP_STATUS_OK);
		free(model);
		free(spec);
	}
}

static void check_row(int c, const struct kvp_frag_result *x, const struct frag_ref_row *y)
{
	char what[96];
	snprintf(what, sizeof what, "case %d, %s %s %u", c, kvp_frag_policy_name(x->policy),
		 x->block_size ? "block" : kvp_frag_fit_name(x->fit), x->block_size);
	ck_assert_msg(x->measured_steps == y->measured_steps, "%s: steps %llu vs ref %llu", what,
		      (unsigned long long)x->measured_steps, (unsigned long long)y->measured_steps);
	ck_assert_msg(x->peak_sequences == y->peak_sequences, "%s: peak %llu vs ref %llu", what,
		      (unsigned long long)x->peak_sequences, (unsigned long long)y->peak_sequences);
	ck_assert_msg(x->refused_with_free_memory == y->refused_with_free_memory,
		      "%s: refused %llu vs ref %llu", what,
		      (unsigned long long)x->refused_with_free_memory,
		      (unsigned long long)y->refused_with_free_memory);
	ck_assert_msg(x->preemptions == y->preemptions, "%s: preemptions %llu vs ref %llu", what,
		      (unsigned long long)x->preemptions, (unsigned long long)y->preemptions);
	ck_assert_msg(x->dropped == y->dropped, "%s: dropped %llu vs ref %llu", what,
		      (unsigned long long)x->dropped, (unsigned long long)y->dropped);
	ck_assert_msg(x->admitted == y->admitted, "%s: admitted %llu vs ref %llu", what,
		      (unsigned long long)x->admitted, (unsigned long long)y->admitted);
	const double a[5] = {x->used_fraction, x->internal_waste_fraction,
			     x->external_waste_fraction, x->free_fraction, x->mean_sequences};
	const double b[5] = {y->used_fraction, y->internal_waste_fraction,
			     y->external_waste_fraction, y->free_fraction, y->mean_sequences};
	static const char *const names[5] = {"used", "internal", "external", "free", "mean seqs"};
	for (int i = 0; i < 5; i++) {
		double tol = i < 4 ? SHARE_TOL : SHARE_TOL * (1 + fabs(b[i]));
		ck_assert_msg(fabs(a[i] - b[i]) <= tol, "%s: %s %.12f vs ref %.12f", what, names[i],
			      a[i], b[i]);
	}
}

START_TEST(test_against_reference)
{
	static struct kvp_frag_result rows[KVP_FRAG_MAX_ROWS];
	load_shapes();
	uint64_t compared = 0;
	for (int c = 0; c < CASES; c++) {
		struct kvp_workload w = {0};
		struct kvp_frag_config cfg;
		struct kvp_error err = {0};
		kvp_frag_config_init(&cfg);
		/* one case in 40 is a huge pool of tiny requests */
		bool huge = c % 40 == 39;
		cfg.shape = shapes[huge ? 0 : gen(0, nshapes - 1)];
		cfg.max_len = huge ? 16 : gen(8, 4096);
		uint64_t pmean = huge ? gen(1, 3) : gen(1, cfg.max_len / 2);
		uint64_t omean = huge ? gen(0, 2) : gen(0, 60);
		if (c % 40 == 17) {
			/* empty requests: no prompt, no output (fixed:0 both) */
			struct kvp_error e2 = {0};
			ck_assert_int_eq(kvp_dist_parse("fixed:0", "prompt", &w.prompt, &e2), 0);
			ck_assert_int_eq(kvp_dist_parse("fixed:0", "output", &w.output, &e2), 0);
		} else if (huge) {
			make_dist(0, pmean, false, &w.prompt);
			make_dist(0, omean, true, &w.output);
		} else {
			int pk = (int)gen(0, 5), ok = (int)gen(0, 5);
			make_dist(pk, pmean, false, &w.prompt);
			make_dist(ok, omean, true, &w.output);
			if (pk == 5 && ok == 5 && w.prompt.n == w.output.n)
				w.paired = gen(0, 1);
		}
		if (!huge && gen(0, 2) == 0) {
			cfg.prefix_tokens = gen(1, cfg.max_len - 1);
			cfg.prefix_fraction = (double)gen(1, 10) / 10;
		}
		if (gen(0, 4) == 0)
			cfg.max_tokens = gen(1, 64);
		/* the pool: 2 to 300,000 sequences of the mean length */
		uint64_t seqs = huge ? gen(100000, 300000) : (uint64_t[]){2, 5, 20, 100, 1000}[gen(0, 4)] +
								 gen(0, 10);
		uint64_t per = kvp_frag_seq_bytes(&cfg.shape, pmean + omean + cfg.prefix_tokens / 2, 1);
		cfg.pool_bytes = seqs * per;
		if (kvp_frag_seq_bytes(&cfg.shape, cfg.max_len, 1) > cfg.pool_bytes)
			cfg.policy[KVP_FRAG_POLICY_CONTIGUOUS_MAX] = false;
		if (gen(0, 9) == 0)
			cfg.max_seqs = gen(1, seqs + 1);
		cfg.nblock = (size_t)gen(1, 3);
		for (size_t b = 0; b < cfg.nblock; b++)
			cfg.block_sizes[b] = (uint32_t)(gen(0, 3) == 0 ? (uint64_t[]){1, 16, 256}[gen(0, 2)]
							    : gen(1, 256));
		/* enough requests to fill the pool a few times over, within the
		 * reference's O(live) per step */
		cfg.requests = huge ? seqs * 3 / 2 : gen(200, 1500);
		cfg.warmup = cfg.requests / 10;
		cfg.seed = (uint64_t)c + 1;
		w.max_len = cfg.max_len;
		if (getenv("FRAG_REF_VERBOSE"))
			fprintf(stderr, "case %d: pool %llu B, %llu requests, huge %d\n", c,
				(unsigned long long)cfg.pool_bytes, (unsigned long long)cfg.requests, huge);
		size_t n;
		kvp_status st = kvp_frag_run(&cfg, &w, rows, KVP_FRAG_MAX_ROWS, &n, &err);
		ck_assert_msg(st == KVP_STATUS_OK, "case %d: %s: %s", c, err.field, err.msg);
		for (size_t i = 0; i < n; i++) {
			struct frag_ref_row ref;
			bool paged = rows[i].policy >= KVP_FRAG_POLICY_PAGED;
			if (huge && !paged && rows[i].policy == KVP_FRAG_POLICY_CONTIGUOUS_REQUEST &&
			    !cfg.max_tokens)
				continue; /* unequal holes: O(holes) per admission is too slow here */
			if (getenv("FRAG_REF_VERBOSE"))
				fprintf(stderr, "  row %zu\n", i);
			ck_assert(frag_ref_run(&cfg, &w, rows[i].policy, rows[i].fit,
					       rows[i].block_size, &ref));
			check_row(c, &rows[i], &ref);
			compared++;
		}
		kvp_workload_free(&w);
	}
	/* every case ran at least its contiguous-request and paged rows */
	ck_assert_uint_ge(compared, 2 * CASES);
}
END_TEST

/* ------------------------------------------------------------ arrivals */

#define ARRIVAL_CASES 120

/* The arrivals rows against frag_ref_arrivals: counts exactly, shares of the
 * pool to SHARE_TOL, means of times and sequences to 1e-9 of themselves; the
 * simulator's p99 queue is the upper edge of a 1 % log bin, so it lies in
 * [exact, 1.01 exact] (or is 0 below 1 us); 2 % allows the bin's edge. */
static void check_arrival_row(int c, const struct kvp_frag_result *x, const struct frag_ref_row *y)
{
	check_row(c, x, y);
	char what[96];
	snprintf(what, sizeof what, "arrivals case %d, %s %s %u", c,
		 kvp_frag_policy_name(x->policy), x->block_size ? "block" : kvp_frag_fit_name(x->fit),
		 x->block_size);
	ck_assert_msg(x->completed == y->completed, "%s: completed %llu vs ref %llu", what,
		      (unsigned long long)x->completed, (unsigned long long)y->completed);
	const double a[4] = {x->mean_queue_s, x->mean_live_sequences, x->mean_latency_s,
			     x->throughput_rps};
	const double b[4] = {y->mean_queue_s, y->mean_live_sequences, y->mean_latency_s,
			     y->throughput_rps};
	static const char *const names[4] = {"queue", "live", "latency", "throughput"};
	for (int i = 0; i < 4; i++)
		ck_assert_msg(fabs(a[i] - b[i]) <= 1e-9 * (1 + fabs(b[i])), "%s: %s %.12g vs ref %.12g",
			      what, names[i], a[i], b[i]);
	if (y->p99_queue_s < 1e-6)
		ck_assert_msg(x->p99_queue_s <= 1.02e-6, "%s: p99 %g vs ref %g", what, x->p99_queue_s,
			      y->p99_queue_s);
	else
		ck_assert_msg(x->p99_queue_s >= y->p99_queue_s / 1.02 &&
			      x->p99_queue_s <= y->p99_queue_s * 1.02,
			      "%s: p99 %g vs ref %g", what, x->p99_queue_s, y->p99_queue_s);
}

START_TEST(test_arrivals_against_reference)
{
	static struct kvp_frag_result rows[KVP_FRAG_MAX_ROWS];
	load_shapes();
	uint64_t compared = 0, preempted = 0, refused = 0, shared = 0;
	for (int c = 0; c < ARRIVAL_CASES; c++) {
		struct kvp_workload w = {0};
		struct kvp_frag_config cfg;
		struct kvp_error err = {0};
		kvp_frag_config_init(&cfg);
		cfg.shape = shapes[gen(0, nshapes - 1)];
		cfg.max_len = gen(8, 2048);
		uint64_t pmean = gen(1, cfg.max_len / 2), omean = gen(0, 60);
		int pk = (int)gen(0, 5), ok = (int)gen(0, 5);
		make_dist(pk, pmean, false, &w.prompt);
		make_dist(ok, omean, true, &w.output);
		if (pk == 5 && ok == 5 && w.prompt.n == w.output.n)
			w.paired = gen(0, 1);
		if (gen(0, 3) == 0) {
			cfg.prefix_tokens = gen(1, cfg.max_len - 1);
			cfg.prefix_fraction = (double)gen(1, 10) / 10;
		}
		if (gen(0, 4) == 0)
			cfg.max_tokens = gen(1, 64);
		/* the pool: 2 to 60 sequences of the mean length */
		uint64_t seqs = (uint64_t[]){2, 5, 20, 50}[gen(0, 3)] + gen(0, 10);
		uint64_t per = kvp_frag_seq_bytes(&cfg.shape, pmean + omean + cfg.prefix_tokens / 2, 1);
		cfg.pool_bytes = seqs * per;
		if (kvp_frag_seq_bytes(&cfg.shape, cfg.max_len, 1) > cfg.pool_bytes)
			cfg.policy[KVP_FRAG_POLICY_CONTIGUOUS_MAX] = false;
		if (gen(0, 9) == 0)
			cfg.max_seqs = gen(1, seqs + 1);
		cfg.nblock = (size_t)gen(1, 2);
		for (size_t b = 0; b < cfg.nblock; b++)
			cfg.block_sizes[b] = (uint32_t)(gen(0, 3) == 0 ? (uint64_t[]){1, 16, 256}[gen(0, 2)]
							    : gen(1, 256));
		/* tokens per step from a few (prefills in many chunks, decodes
		 * starved) to plenty; a load from a third of the pool to three
		 * times it (in service about omean + 1 steps) */
		cfg.max_batched_tokens = gen(0, 2) == 0 ? gen(1, 64) : gen(64, 8192);
		cfg.step_time_s = (double)gen(1, 100) / 1000;
		double load = (double)gen(30, 300) / 100;
		cfg.arrival_rate = load * (double)seqs / ((double)(omean + 1) * cfg.step_time_s);
		cfg.requests = gen(100, 600);
		cfg.seed = (uint64_t)c + 1000;
		w.max_len = cfg.max_len;
		size_t n;
		kvp_status st = kvp_frag_run(&cfg, &w, rows, KVP_FRAG_MAX_ROWS, &n, &err);
		ck_assert_msg(st == KVP_STATUS_OK, "arrivals case %d: %s: %s", c, err.field, err.msg);
		for (size_t i = 0; i < n; i++) {
			struct frag_ref_row ref;
			ck_assert(rows[i].over_time);
			ck_assert(frag_ref_arrivals(&cfg, &w, rows[i].policy, rows[i].fit,
						    rows[i].block_size, &ref));
			check_arrival_row(c, &rows[i], &ref);
			preempted += rows[i].preemptions;
			refused += rows[i].refused_with_free_memory;
			shared += rows[i].policy == KVP_FRAG_POLICY_PAGED_SHARED;
			compared++;
		}
		kvp_workload_free(&w);
	}
	/* contiguous-request (two allocators) and a paged row in every case, and
	 * the cases reach preemption and external fragmentation */
	ck_assert_uint_ge(compared, 3 * ARRIVAL_CASES);
	ck_assert_uint_gt(preempted, 0);
	ck_assert_uint_gt(refused, 0);
	ck_assert_uint_ge(shared, 10);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("frag-ref");
	TCase *core = tcase_create("core");
	tcase_add_test(core, test_against_reference);
	tcase_add_test(core, test_arrivals_against_reference);
	tcase_set_timeout(core, 300);
	suite_add_tcase(s, core);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
