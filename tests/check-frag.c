/* check-frag.c: the fragmentation simulator.  Every expected value is hand
 * arithmetic written beside its assertion: fixed lengths give exactly
 * computable waste; uniform lengths give (P - 1) / 2 slots per sequence
 * within a sampling error derived in the test; shared prefixes save
 * (g - 1) k blocks.  Pools are counted in tokens (1 byte per token) unless a
 * model is named. */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "frag/frag.h"
#include "read/profile.h"
#include "model/spec.h"

static struct kvp_workload wl;
static struct kvp_frag_config cfg;

/* A workload of two specs, and a config over a pool of `pool` tokens. */
static void setup(const char *prompt, const char *output, uint64_t pool, uint64_t max_len)
{
	struct kvp_error err = {0};
	kvp_workload_free(&wl);
	memset(&wl, 0, sizeof wl);
	ck_assert_msg(kvp_dist_parse(prompt, "prompt", &wl.prompt, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(kvp_dist_parse(output, "output", &wl.output, &err) == KVP_STATUS_OK, "%s", err.msg);
	wl.max_len = max_len;
	kvp_frag_config_init(&cfg);
	kvp_frag_shape_tokens(&cfg.shape, 1);
	cfg.pool_bytes = pool;
	cfg.max_len = max_len;
	cfg.requests = 10000;
	cfg.warmup = 1000;
}

static struct kvp_frag_result rows[KVP_FRAG_MAX_ROWS];
static size_t nrows;

static void run(void)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_frag_run(&cfg, &wl, rows, KVP_FRAG_MAX_ROWS, &nrows, &err) == KVP_STATUS_OK,
		      "%s: %s", err.field, err.msg);
}

static const struct kvp_frag_result *row(enum kvp_frag_policy p, int fit, uint32_t block)
{
	for (size_t i = 0; i < nrows; i++)
		if (rows[i].policy == p && (fit < 0 || (int)rows[i].fit == fit) &&
		    (block == 0 || rows[i].block_size == block))
			return &rows[i];
	ck_abort_msg("no row %s %u", kvp_frag_policy_name(p), block);
	return NULL;
}

static void only_blocks(const uint32_t *b, size_t n)
{
	memcpy(cfg.block_sizes, b, n * sizeof *b);
	cfg.nblock = n;
}

/* ------------------------------------------------------------ shape */

START_TEST(test_shape_matches_spec)
{
	/* the per-class footprint equals the model's own kvp_spec_seq_bytes,
	 * for full, sliding (Gemma 2, gpt-oss), MLA (DeepSeek-V3) and Mamba
	 * (Jamba) layer lists */
	static const char *const models[] = {"llama-3.1-8b", "gemma-2-9b", "gpt-oss-20b",
					     "deepseek-v3", "jamba-v0.1", "gemma-3-27b"};
	static const uint64_t lens[] = {0, 1, 15, 16, 17, 1000, 4095, 4096, 4097, 100000};
	static const uint32_t blocks[] = {1, 16, 32, 80, 256};
	for (size_t m = 0; m < sizeof models / sizeof models[0]; m++) {
		struct kvp_model *model = malloc(sizeof *model);
		struct kvp_spec *spec = malloc(sizeof *spec);
		struct kvp_error err = {0};
		struct kvp_frag_shape sh;
		ck_assert_msg(kvp_model_load(models[m], model, &err) == KVP_STATUS_OK, "%s", err.msg);
		ck_assert_int_eq(kvp_spec_build(model, (struct kvp_parallel){.tp = 1, .pp = 1}, KVP_DTYPE_AUTO,
						KVP_DTYPE_AUTO, spec, &err), KVP_STATUS_OK);
		ck_assert_int_eq(kvp_frag_shape_from_spec(spec, &sh, &err), KVP_STATUS_OK);
		for (size_t l = 0; l < sizeof lens / sizeof lens[0]; l++)
			for (size_t b = 0; b < sizeof blocks / sizeof blocks[0]; b++) {
				uint64_t want;
				ck_assert_int_eq(kvp_spec_seq_bytes(spec, lens[l], blocks[b], &want),
						 KVP_STATUS_OK);
				ck_assert_msg(kvp_frag_seq_bytes(&sh, lens[l], blocks[b]) == want,
					      "%s n=%llu P=%u", models[m],
					      (unsigned long long)lens[l], blocks[b]);
			}
		free(model);
		free(spec);
	}
}
END_TEST

/* ------------------------------------------------------------ arena */

START_TEST(test_arena_first_and_best_fit)
{
	/* pool 100: A = 30 at 0, B = 50 at 30, C = 20 at 80; free A and C:
	 * holes 30 at 0 and 20 at 80 */
	for (int fit = 0; fit < 2; fit++) {
		struct kvp_frag_arena *a = kvp_frag_arena_new(100, true);
		uint64_t x;
		ck_assert(kvp_frag_arena_alloc(a, 30, fit, &x) && x == 0);
		ck_assert(kvp_frag_arena_alloc(a, 50, fit, &x) && x == 30);
		ck_assert(kvp_frag_arena_alloc(a, 20, fit, &x) && x == 80);
		ck_assert(!kvp_frag_arena_alloc(a, 1, fit, &x));
		kvp_frag_arena_release(a, 0, 30);
		kvp_frag_arena_release(a, 80, 20);
		ck_assert_uint_eq(kvp_frag_arena_holes(a), 2);
		ck_assert_uint_eq(kvp_frag_arena_free_bytes(a), 50);
		ck_assert_uint_eq(kvp_frag_arena_largest_hole(a), 30);
		/* 20 bytes: first fit takes the hole at 0 (leaving 10 at 20), best
		 * fit the exact hole at 80 */
		ck_assert(kvp_frag_arena_alloc(a, 20, fit, &x));
		ck_assert_uint_eq(x, fit == KVP_FRAG_FIT_FIRST ? 0 : 80);
		/* then 30 bytes: 30 are free in both cases, but first fit has
		 * holes of 10 and 20 only -- refused with enough free memory */
		ck_assert_uint_eq(kvp_frag_arena_free_bytes(a), 30);
		ck_assert(kvp_frag_arena_alloc(a, 30, fit, &x) == (fit == KVP_FRAG_FIT_BEST));
		kvp_frag_arena_free(a);
	}
	/* coalescing: freeing the middle of three neighbours leaves one hole */
	struct kvp_frag_arena *a = kvp_frag_arena_new(90, true);
	uint64_t x, y, z;
	ck_assert(kvp_frag_arena_alloc(a, 30, KVP_FRAG_FIT_FIRST, &x));
	ck_assert(kvp_frag_arena_alloc(a, 30, KVP_FRAG_FIT_FIRST, &y));
	ck_assert(kvp_frag_arena_alloc(a, 30, KVP_FRAG_FIT_FIRST, &z));
	kvp_frag_arena_release(a, x, 30);
	kvp_frag_arena_release(a, z, 30);
	ck_assert_uint_eq(kvp_frag_arena_holes(a), 2);
	kvp_frag_arena_release(a, y, 30);
	ck_assert_uint_eq(kvp_frag_arena_holes(a), 1);
	ck_assert_uint_eq(kvp_frag_arena_largest_hole(a), 90);
	kvp_frag_arena_free(a);
}
END_TEST

/* A plain reference allocator: holes in an address-sorted array, first fit
 * and best fit by scanning, coalescing by hand. */
struct ref_arena {
	uint64_t addr[4096], size[4096];
	size_t n;
};

static void ref_remove(struct ref_arena *r, size_t i)
{
	memmove(&r->addr[i], &r->addr[i + 1], (r->n - i - 1) * sizeof r->addr[0]);
	memmove(&r->size[i], &r->size[i + 1], (r->n - i - 1) * sizeof r->size[0]);
	r->n--;
}

static bool ref_alloc(struct ref_arena *r, uint64_t want, int fit, uint64_t *at)
{
	size_t pick = r->n;
	for (size_t i = 0; i < r->n; i++)
		if (r->size[i] >= want &&
		    (pick == r->n || (fit == KVP_FRAG_FIT_BEST && r->size[i] < r->size[pick]))) {
			pick = i;
			if (fit == KVP_FRAG_FIT_FIRST)
				break;
		}
	if (pick == r->n)
		return false;
	*at = r->addr[pick];
	r->addr[pick] += want;
	r->size[pick] -= want;
	if (!r->size[pick])
		ref_remove(r, pick);
	return true;
}

static void ref_release(struct ref_arena *r, uint64_t at, uint64_t len)
{
	size_t i = 0;
	while (i < r->n && r->addr[i] < at)
		i++;
	memmove(&r->addr[i + 1], &r->addr[i], (r->n - i) * sizeof r->addr[0]);
	memmove(&r->size[i + 1], &r->size[i], (r->n - i) * sizeof r->size[0]);
	r->addr[i] = at;
	r->size[i] = len;
	r->n++;
	if (i + 1 < r->n && r->addr[i] + r->size[i] == r->addr[i + 1]) {
		r->size[i] += r->size[i + 1];
		ref_remove(r, i + 1);
	}
	if (i > 0 && r->addr[i - 1] + r->size[i - 1] == r->addr[i]) {
		r->size[i - 1] += r->size[i];
		ref_remove(r, i);
	}
}

START_TEST(test_arena_against_reference)
{
	/* 200,000 random reservations and releases on both allocators: every
	 * address, refusal, free total, largest hole and hole count must match
	 * the plain reference above */
	for (int fit = 0; fit < 2; fit++) {
		static struct ref_arena ref;
		static uint64_t live_at[512], live_len[512];
		size_t nlive = 0;
		struct kvp_frag_arena *a = kvp_frag_arena_new(1000000, true);
		struct kvp_rng rng;
		kvp_rng_seed(&rng, 11 + fit);
		ref.n = 1;
		ref.addr[0] = 0;
		ref.size[0] = 1000000;
		for (int step = 0; step < 200000; step++) {
			bool grab = nlive == 0 || (nlive < 512 && kvp_rng_uniform(&rng) < 0.5);
			if (grab) {
				uint64_t want = 1 + kvp_rng_next(&rng) % 20000, x = 0, y = 0;
				bool got = kvp_frag_arena_alloc(a, want, fit, &x);
				ck_assert_int_eq(got, ref_alloc(&ref, want, fit, &y));
				if (got) {
					ck_assert_uint_eq(x, y);
					live_at[nlive] = x;
					live_len[nlive++] = want;
				}
			} else {
				size_t k = kvp_rng_next(&rng) % nlive;
				kvp_frag_arena_release(a, live_at[k], live_len[k]);
				ref_release(&ref, live_at[k], live_len[k]);
				live_at[k] = live_at[--nlive];
				live_len[k] = live_len[nlive];
			}
			uint64_t free_total = 0, largest = 0;
			for (size_t i = 0; i < ref.n; i++) {
				free_total += ref.size[i];
				largest = ref.size[i] > largest ? ref.size[i] : largest;
			}
			ck_assert_uint_eq(kvp_frag_arena_free_bytes(a), free_total);
			ck_assert_uint_eq(kvp_frag_arena_largest_hole(a), largest);
			ck_assert_uint_eq(kvp_frag_arena_holes(a), ref.n);
		}
		kvp_frag_arena_free(a);
	}
}
END_TEST

/* ------------------------------------------------------------ exact cases */

START_TEST(test_fixed_lengths_exact)
{
	/* 40-token prompts, no output: each request lives one step.  Pool 480.
	 *   paged P=16: 3 blocks = 48 slots, 8 empty; 480 / 48 = 10 sequences;
	 *     used 400 / 480, waste 80 / 480
	 *   paged P=8: 5 blocks = 40 slots; 12 sequences, no waste
	 *   paged P=32: 2 blocks = 64 slots, 24 empty; 7 sequences (448 slots);
	 *     used 280 / 480, waste 168 / 480, free 32 / 480
	 *   contiguous-request: 40 each, 12 sequences, used 480 / 480
	 *   contiguous-max (max_len 64): 7 sequences, like P=32 */
	setup("fixed:40", "fixed:0", 480, 64);
	static const uint32_t b[] = {8, 16, 32};
	only_blocks(b, 3);
	run();
	const struct kvp_frag_result *r = row(KVP_FRAG_POLICY_PAGED, -1, 16);
	ck_assert_uint_eq(r->max_sequences, 10);
	ck_assert_double_eq_tol(r->mean_sequences, 10, 1e-12);
	ck_assert_double_eq_tol(r->used_fraction, 400.0 / 480, 1e-12);
	ck_assert_double_eq_tol(r->internal_waste_fraction, 80.0 / 480, 1e-12);
	ck_assert_double_eq_tol(r->waste_tokens_per_sequence, 8, 1e-12);
	ck_assert_double_eq_tol(r->free_fraction, 0, 1e-12);
	ck_assert_uint_eq(r->refused_with_free_memory, 0);
	ck_assert_uint_eq(r->preemptions, 0);
	/* 480 / 16 = 30 blocks */
	ck_assert_uint_eq(r->num_blocks, 30);
	/* metadata: 10 peak sequences x ceil(64 / 16) = 4 entries x 4 B = 160,
	 * plus 30 blocks x 8 B = 240 */
	ck_assert_uint_eq(r->metadata_bytes, 400);
	r = row(KVP_FRAG_POLICY_PAGED, -1, 8);
	ck_assert_uint_eq(r->max_sequences, 12);
	ck_assert_double_eq_tol(r->used_fraction, 1, 1e-12);
	ck_assert_double_eq_tol(r->waste_tokens_per_sequence, 0, 1e-12);
	r = row(KVP_FRAG_POLICY_PAGED, -1, 32);
	ck_assert_uint_eq(r->max_sequences, 7);
	ck_assert_double_eq_tol(r->used_fraction, 280.0 / 480, 1e-12);
	ck_assert_double_eq_tol(r->internal_waste_fraction, 168.0 / 480, 1e-12);
	ck_assert_double_eq_tol(r->free_fraction, 32.0 / 480, 1e-12);
	for (int fit = 0; fit < 2; fit++) {
		r = row(KVP_FRAG_POLICY_CONTIGUOUS_REQUEST, fit, 0);
		ck_assert_uint_eq(r->max_sequences, 12);
		ck_assert_double_eq_tol(r->used_fraction, 1, 1e-12);
		r = row(KVP_FRAG_POLICY_CONTIGUOUS_MAX, fit, 0);
		ck_assert_uint_eq(r->max_sequences, 7);
		ck_assert_double_eq_tol(r->used_fraction, 280.0 / 480, 1e-12);
		ck_assert_double_eq_tol(r->internal_waste_fraction, 168.0 / 480, 1e-12);
		/* the 32 free bytes are less than one reservation: not external */
		ck_assert_double_eq_tol(r->external_waste_fraction, 0, 1e-12);
		ck_assert_uint_eq(r->refused_with_free_memory, 0);
	}
	/* no shared prefix: no paged-shared rows */
	for (size_t i = 0; i < nrows; i++)
		ck_assert_int_ne(rows[i].policy, KVP_FRAG_POLICY_PAGED_SHARED);
}
END_TEST

START_TEST(test_growth_exact)
{
	/* 1-token prompts that generate 15 tokens, P = 16, pool 160 = 10 blocks.
	 * A sequence holds 1..16 tokens over its 16 steps, always in one block:
	 * the empty slots are 15, 14, ..., 0, mean 7.5 = (16 - 1) / 2.  Ten
	 * sequences live at every step; with 1,000 requests and 100 of warm-up
	 * the measured steps are whole 16-step cycles (admissions at 0, 16, ...,
	 * measured from step 144 to 1,583: 1,440 steps).
	 * used = mean length 8.5 x 10 / 160 = 0.53125; waste 75 / 160 */
	setup("fixed:1", "fixed:15", 160, 16);
	static const uint32_t b[] = {16};
	only_blocks(b, 1);
	cfg.requests = 1000;
	cfg.warmup = 100;
	run();
	const struct kvp_frag_result *r = row(KVP_FRAG_POLICY_PAGED, -1, 16);
	ck_assert_uint_eq(r->measured_steps, 1440);
	ck_assert_double_eq_tol(r->mean_sequences, 10, 1e-12);
	ck_assert_double_eq_tol(r->waste_tokens_per_sequence, 7.5, 1e-12);
	ck_assert_double_eq_tol(r->expected_waste_tokens, 7.5, 1e-12);
	ck_assert_double_eq_tol(r->used_fraction, 0.53125, 1e-12);
	ck_assert_double_eq_tol(r->internal_waste_fraction, 75.0 / 160, 1e-12);
	ck_assert_uint_eq(r->preemptions, 0);
	/* contiguous-request reserves p + o = 16: the same ten sequences */
	r = row(KVP_FRAG_POLICY_CONTIGUOUS_REQUEST, KVP_FRAG_FIT_FIRST, 0);
	ck_assert_double_eq_tol(r->mean_sequences, 10, 1e-12);
	ck_assert_double_eq_tol(r->used_fraction, 0.53125, 1e-12);
}
END_TEST

START_TEST(test_uniform_waste)
{
	/* Prompts uniform over 1..1024 (64 blocks of 16), no output: the empty
	 * slots of a request, (-p) mod P, are uniform over 0..P-1: mean
	 * (P - 1) / 2, variance (P^2 - 1) / 12.  Each request lives one step and
	 * is counted once, so the simulated mean over the n ~ 180,000 measured
	 * requests (200,000 less a tenth of warm-up) has standard error
	 * sqrt((P^2 - 1) / 12 / n):
	 *   P = 16: sqrt(21.25 / 180,000) = 0.01087; allow 4 se = 0.0435
	 *   P = 64: sqrt(341.25 / 180,000) = 0.04354; allow 4 se = 0.174
	 *   P = 1:  no waste at all */
	setup("uniform:1,1024", "fixed:0", 100000, 1024);
	static const uint32_t b[] = {1, 16, 64};
	only_blocks(b, 3);
	cfg.requests = 200000;
	cfg.warmup = 20000;
	run();
	const struct kvp_frag_result *r = row(KVP_FRAG_POLICY_PAGED, -1, 16);
	ck_assert_double_eq_tol(r->waste_tokens_per_sequence, 7.5, 0.0435);
	r = row(KVP_FRAG_POLICY_PAGED, -1, 64);
	ck_assert_double_eq_tol(r->waste_tokens_per_sequence, 31.5, 0.174);
	r = row(KVP_FRAG_POLICY_PAGED, -1, 1);
	ck_assert_double_eq_tol(r->waste_tokens_per_sequence, 0, 1e-12);
	/* mean prompt 512.5: a pool of 100,000 holds about 100,000 / (512.5 +
	 * 7.5) = 192 sequences at P = 16; check the order of magnitude */
	r = row(KVP_FRAG_POLICY_PAGED, -1, 16);
	ck_assert(r->mean_sequences > 185 && r->mean_sequences < 195);
}
END_TEST

/* ------------------------------------------------------------ sharing */

START_TEST(test_prefix_sharing)
{
	/* Prefix k = 64 tokens (4 full blocks of 16) before a 32-token prompt,
	 * on every request; no output; pool 960 = 60 blocks.
	 *   paged: 96 tokens = 6 blocks each -> 10 sequences
	 *   paged-shared: 4 shared blocks + 2 private each: 4 + 2 g <= 60 ->
	 *   g = 28; check: 28 requests alone need 28 x 6 = 168 blocks, sharing
	 *   saves (g - 1) k = 27 x 4 = 108, leaving 60 = the pool. */
	setup("fixed:32", "fixed:0", 960, 256);
	static const uint32_t b[] = {16};
	only_blocks(b, 1);
	cfg.prefix_tokens = 64;
	cfg.prefix_fraction = 1;
	run();
	ck_assert_uint_eq(row(KVP_FRAG_POLICY_PAGED, -1, 16)->max_sequences, 10);
	const struct kvp_frag_result *r = row(KVP_FRAG_POLICY_PAGED_SHARED, -1, 16);
	ck_assert_uint_eq(r->max_sequences, 28);
	ck_assert_double_eq_tol(r->mean_sequences, 28, 1e-12);
	/* 64 shared + 28 x 32 private = 960 real tokens: the pool is full */
	ck_assert_double_eq_tol(r->used_fraction, 1, 1e-12);

	/* k = 72 = 4.5 blocks: 4 shared, the partial fifth copied per request.
	 *   paged: 104 tokens = 7 blocks -> floor(60 / 7) = 8
	 *   shared: ceil(104 / 16) - 4 = 3 private: 4 + 3 g <= 60 -> g = 18 */
	cfg.prefix_tokens = 72;
	run();
	ck_assert_uint_eq(row(KVP_FRAG_POLICY_PAGED, -1, 16)->max_sequences, 8);
	ck_assert_uint_eq(row(KVP_FRAG_POLICY_PAGED_SHARED, -1, 16)->max_sequences, 18);

	/* k = 10 < P: no full block to share; 42 tokens = 3 blocks -> 20 both */
	cfg.prefix_tokens = 10;
	run();
	ck_assert_uint_eq(row(KVP_FRAG_POLICY_PAGED, -1, 16)->max_sequences, 20);
	ck_assert_uint_eq(row(KVP_FRAG_POLICY_PAGED_SHARED, -1, 16)->max_sequences, 20);
	ck_assert_double_eq_tol(row(KVP_FRAG_POLICY_PAGED_SHARED, -1, 16)->used_fraction,
				row(KVP_FRAG_POLICY_PAGED, -1, 16)->used_fraction, 1e-12);
}
END_TEST

/* ------------------------------------------------------------ dynamics */

START_TEST(test_contiguous_fragmentation)
{
	/* Equal reservations (contiguous-max) never fragment: every hole is a
	 * whole number of reservations.  Variable reservations (contiguous-
	 * request over lognormal lengths, growing outputs) leave holes too small
	 * for the next request while enough bytes are free in total. */
	setup("lognormal:300,0.8", "lognormal:100,0.8", 60000, 4096);
	cfg.requests = 50000;
	cfg.warmup = 5000;
	static const uint32_t b[] = {16};
	only_blocks(b, 1);
	run();
	for (int fit = 0; fit < 2; fit++) {
		const struct kvp_frag_result *r = row(KVP_FRAG_POLICY_CONTIGUOUS_MAX, fit, 0);
		ck_assert_uint_eq(r->refused_with_free_memory, 0);
		ck_assert_double_eq_tol(r->external_waste_fraction, 0, 1e-12);
		/* 60,000 / 4,096 = 14.6 -> 14 reservations, always */
		ck_assert_double_eq_tol(r->mean_sequences, 14, 1e-12);
		r = row(KVP_FRAG_POLICY_CONTIGUOUS_REQUEST, fit, 0);
		ck_assert_uint_gt(r->refused_with_free_memory, 0);
		ck_assert(r->external_waste_fraction > 0);
		/* fractions add up to one */
		ck_assert_double_eq_tol(r->used_fraction + r->internal_waste_fraction +
					r->external_waste_fraction + r->free_fraction, 1, 1e-9);
	}
	/* paging beats contiguous reservation of max_len by far */
	ck_assert(row(KVP_FRAG_POLICY_PAGED, -1, 16)->mean_sequences >
		  4 * row(KVP_FRAG_POLICY_CONTIGUOUS_MAX, 0, 0)->mean_sequences);
}
END_TEST

START_TEST(test_preemption)
{
	/* 1-token prompts growing to 64 tokens (4 blocks), pool 10 blocks:
	 * admission takes one block, growth runs out, the newest sequences are
	 * preempted and recomputed later.  At least 160 / 64 = 2.5 sequences
	 * fit at full length, at most 10 at one block each. */
	setup("fixed:1", "fixed:63", 160, 64);
	static const uint32_t b[] = {16};
	only_blocks(b, 1);
	cfg.policy[KVP_FRAG_POLICY_CONTIGUOUS_MAX] = false;
	cfg.policy[KVP_FRAG_POLICY_CONTIGUOUS_REQUEST] = false;
	cfg.requests = 2000;
	cfg.warmup = 200;
	run();
	const struct kvp_frag_result *r = row(KVP_FRAG_POLICY_PAGED, -1, 16);
	ck_assert_uint_gt(r->preemptions, 0);
	ck_assert_uint_eq(r->dropped, 0);
	ck_assert(r->mean_sequences >= 2.5 && r->mean_sequences <= 10);
	ck_assert(r->used_fraction <= 1 && r->internal_waste_fraction >= 0);
}
END_TEST

START_TEST(test_determinism)
{
	/* the same seed gives the same rows, bit for bit; another seed differs */
	setup("lognormal:500,1", "lognormal:200,1", 200000, 8192);
	cfg.prefix_tokens = 100;
	cfg.prefix_fraction = 0.5;
	cfg.requests = 20000;
	cfg.warmup = 2000;
	cfg.seed = 7;
	run();
	struct kvp_frag_result first[KVP_FRAG_MAX_ROWS];
	size_t n = nrows;
	memcpy(first, rows, sizeof first);
	run();
	ck_assert_uint_eq(nrows, n);
	ck_assert_int_eq(memcmp(first, rows, n * sizeof rows[0]), 0);
	cfg.seed = 8;
	run();
	ck_assert(first[n - 1].mean_sequences != rows[n - 1].mean_sequences);
	/* 4 contiguous rows, 7 paged, 7 paged-shared (prefix on half) */
	ck_assert_uint_eq(n, 18);
}
END_TEST

START_TEST(test_empty_requests)
{
	/* fixed:0 prompts and outputs: contiguous-request reserves 0 + 0 tokens,
	 * which took no hole and waited forever; now all 1,000 are admitted at
	 * the first step, where the stream ends: nothing is measured */
	setup("fixed:0", "fixed:0", 1000, 16);
	cfg.requests = 1000;
	cfg.warmup = 0;
	memset(cfg.policy, 0, sizeof cfg.policy);
	cfg.policy[KVP_FRAG_POLICY_CONTIGUOUS_REQUEST] = true;
	run();
	for (size_t i = 0; i < nrows; i++) {
		ck_assert_uint_eq(rows[i].admitted, 1000);
		ck_assert_uint_eq(rows[i].peak_sequences, 1000);
		ck_assert_uint_eq(rows[i].measured_steps, 0);
	}
}
END_TEST

START_TEST(test_drop_too_long)
{
	/* a 200-token prompt never fits a 100-token pool: dropped, not looping */
	setup("fixed:200", "fixed:5", 100, 300);
	cfg.policy[KVP_FRAG_POLICY_CONTIGUOUS_MAX] = false;
	cfg.policy[KVP_FRAG_POLICY_CONTIGUOUS_REQUEST] = false;
	cfg.requests = 50;
	cfg.warmup = 0;
	run();
	ck_assert_uint_eq(rows[0].dropped, 50);
	ck_assert_uint_eq(rows[0].admitted, 0);
}
END_TEST

START_TEST(test_recommend)
{
	/* P = 1 holds 100, P = 16 99.5 (within 1%), P = 64 90: pick 16, which
	 * has 16x fewer blocks than 1 */
	struct kvp_frag_result r[3] = {
		{.policy = KVP_FRAG_POLICY_PAGED, .block_size = 1, .mean_sequences = 100},
		{.policy = KVP_FRAG_POLICY_PAGED, .block_size = 16, .mean_sequences = 99.5},
		{.policy = KVP_FRAG_POLICY_PAGED, .block_size = 64, .mean_sequences = 90},
	};
	char why[512];
	ck_assert_int_eq(kvp_frag_recommend(r, 3, why, sizeof why), 1);
	ck_assert_ptr_nonnull(strstr(why, "block 16"));
	ck_assert_ptr_nonnull(strstr(why, "16x fewer"));
	/* now 2% below: P = 1 holds more, but not 26 % more than 98 (98 x 1.26
	 * = 123.48): the kernel cost of blocks under 16 keeps 16 */
	r[1].mean_sequences = 98;
	ck_assert_int_eq(kvp_frag_recommend(r, 3, why, sizeof why), 1);
	ck_assert_ptr_nonnull(strstr(why, "under 16 tokens"));
	r[0].mean_sequences = 124; /* 124 > 123.48: P = 1 wins */
	ck_assert_int_eq(kvp_frag_recommend(r, 3, why, sizeof why), 0);
	ck_assert_int_eq(kvp_frag_recommend(r, 0, why, sizeof why), -1);
}
END_TEST

START_TEST(test_recommend_metadata)
{
	/* pool 1,000 B.  P = 16 holds 100 but its metadata takes 500 B: 100 x
	 * (1 - 500 / 1,000) = 50; P = 32 holds 90 with 10 B: 90 x 0.99 = 89.1;
	 * P = 64 holds 80 with 5 B: 79.6, more than 1 % below 89.1 -> 32 */
	struct kvp_frag_result r[3] = {
		{.policy = KVP_FRAG_POLICY_PAGED, .block_size = 16, .mean_sequences = 100,
		 .metadata_bytes = 500, .pool_bytes = 1000},
		{.policy = KVP_FRAG_POLICY_PAGED, .block_size = 32, .mean_sequences = 90,
		 .metadata_bytes = 10, .pool_bytes = 1000},
		{.policy = KVP_FRAG_POLICY_PAGED, .block_size = 64, .mean_sequences = 80,
		 .metadata_bytes = 5, .pool_bytes = 1000},
	};
	char why[512];
	ck_assert_int_eq(kvp_frag_recommend(r, 3, why, sizeof why), 1);
	/* a table as large as the pool (the 102 GiB table of issue 14 against a
	 * smaller pool) is impossible, however many sequences it claims */
	r[1].metadata_bytes = 1000;
	r[2].metadata_bytes = 2000;
	ck_assert_int_eq(kvp_frag_recommend(r, 3, why, sizeof why), 0);
	r[0].metadata_bytes = 1000;
	ck_assert_int_eq(kvp_frag_recommend(r, 3, why, sizeof why), -1);
	ck_assert_ptr_nonnull(strstr(why, "fill the KV pool"));
}
END_TEST

/* ------------------------------------------------------------ prefix cache */

START_TEST(test_prefix_cache)
{
	struct kvp_frag_cache_config c = {.prefixes = 10, .zipf_s = 1, .prefix_tokens = 64,
					  .block_size = 16, .entry_bytes = 64,
					  .carrier_fraction = 1, .requests = 200000, .seed = 3};
	uint64_t sizes[] = {0, 64, 640};
	struct kvp_frag_cache_result out[3];
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_frag_prefix_cache(&c, sizes, 3, out, &err), KVP_STATUS_OK);
	/* no cache, no hit */
	ck_assert_double_eq(out[0].hit_rate, 0);
	/* room for one prefix: a hit when a request repeats the previous one's
	 * prefix, p = sum p_i^2 = (pi^2/6 - sum_{i>10} 1/i^2) / H_10^2 =
	 * 1.549768 / 2.928968^2 = 0.180650.  Consecutive hits are correlated:
	 * var = p (1 - p) + 2 (sum p_i^3 - p^2) = 0.148015 + 2 (0.047659 -
	 * 0.032634) = 0.178065; se = sqrt(0.178065 / 200,000) = 0.000944;
	 * allow 5 se = 0.0047 */
	ck_assert_uint_eq(out[1].capacity_prefixes, 1);
	ck_assert_double_eq_tol(out[1].hit_rate, 0.180650, 0.0047);
	/* room for all ten: only the first use of each misses */
	ck_assert_uint_eq(out[2].capacity_prefixes, 10);
	ck_assert(out[2].hit_rate >= 1 - 10.0 / 200000);
	/* a hit saves the 4 full blocks: 64 tokens */
	ck_assert_double_eq_tol(out[2].saved_prefill_tokens, 64 * out[2].hit_rate, 1e-9);
	/* a timestamp first: nothing repeats, nothing hits */
	c.unique_first_token = true;
	ck_assert_int_eq(kvp_frag_prefix_cache(&c, sizes, 3, out, &err), KVP_STATUS_OK);
	ck_assert_double_eq(out[2].hit_rate, 0);
	/* a prefix shorter than a block caches nothing */
	c.unique_first_token = false;
	c.prefix_tokens = 10;
	ck_assert_int_eq(kvp_frag_prefix_cache(&c, sizes, 3, out, &err), KVP_STATUS_OK);
	ck_assert_double_eq(out[2].hit_rate, 0);
	ck_assert_double_eq(out[2].saved_prefill_tokens, 0);
	/* one prefix, 30 % of 1,000 requests carry it: 300 lookups, all but the
	 * first hit: 299 / 300 = 0.996667; a hit saves 64 tokens: 63.786667 per
	 * carrier, x 0.3 = 19.136 per request (issue 22: F was ignored) */
	c.prefixes = 1;
	c.prefix_tokens = 64;
	c.requests = 1000;
	c.carrier_fraction = 0.3;
	ck_assert_int_eq(kvp_frag_prefix_cache(&c, sizes, 3, out, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(out[2].hit_rate, 299.0 / 300, 1e-12);
	ck_assert_double_eq_tol(out[2].saved_prefill_tokens_per_carrier, 64 * 299.0 / 300, 1e-9);
	ck_assert_double_eq_tol(out[2].saved_prefill_tokens, 0.3 * 64 * 299.0 / 300, 1e-9);
	c.carrier_fraction = 0;
	ck_assert_int_eq(kvp_frag_prefix_cache(&c, sizes, 3, out, &err), KVP_STATUS_INVALID);
}
END_TEST

/* ------------------------------------------------------------ errors */

START_TEST(test_errors)
{
	struct kvp_error err = {0};
	setup("fixed:10", "fixed:10", 1000, 100);
	cfg.max_len = 0;
	ck_assert_int_eq(kvp_frag_run(&cfg, &wl, rows, KVP_FRAG_MAX_ROWS, &nrows, &err),
			 KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "max_len");
	cfg.max_len = 100;
	cfg.pool_bytes = 0;
	ck_assert_int_eq(kvp_frag_run(&cfg, &wl, rows, KVP_FRAG_MAX_ROWS, &nrows, &err),
			 KVP_STATUS_INVALID);
	cfg.pool_bytes = 50; /* one max_len reservation (100) does not fit */
	ck_assert_int_eq(kvp_frag_run(&cfg, &wl, rows, KVP_FRAG_MAX_ROWS, &nrows, &err),
			 KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "max_len");
	cfg.pool_bytes = 1000;
	cfg.prefix_tokens = 100; /* no room left under max_len */
	cfg.prefix_fraction = 1;
	ck_assert_int_eq(kvp_frag_run(&cfg, &wl, rows, KVP_FRAG_MAX_ROWS, &nrows, &err),
			 KVP_STATUS_INVALID);
	cfg.prefix_tokens = 0;
	cfg.block_sizes[0] = 0;
	ck_assert_int_eq(kvp_frag_run(&cfg, &wl, rows, KVP_FRAG_MAX_ROWS, &nrows, &err),
			 KVP_STATUS_INVALID);
	/* 2^40 bytes per token x 2^32 tokens overflows */
	kvp_frag_config_init(&cfg);
	kvp_frag_shape_tokens(&cfg.shape, 1ULL << 40);
	cfg.pool_bytes = UINT64_MAX;
	cfg.max_len = 1ULL << 32;
	ck_assert_int_eq(kvp_frag_run(&cfg, &wl, rows, KVP_FRAG_MAX_ROWS, &nrows, &err),
			 KVP_STATUS_OVERFLOW);
	/* the cache needs prefixes and an exponent */
	struct kvp_frag_cache_config c = {.prefixes = 0, .zipf_s = 1, .block_size = 16};
	struct kvp_frag_cache_result out[1];
	uint64_t sizes[] = {0};
	ck_assert_int_eq(kvp_frag_prefix_cache(&c, sizes, 1, out, &err), KVP_STATUS_INVALID);
	/* a model without KV has no shape */
	struct kvp_spec *spec = calloc(1, sizeof *spec);
	struct kvp_frag_shape sh;
	ck_assert_int_eq(kvp_frag_shape_from_spec(spec, &sh, &err), KVP_STATUS_INVALID);
	free(spec);
}
END_TEST

/* ------------------------------------------------------------ issue 14 */

/* Every row's shares of the pool lie in [0, 1] and add up to 1. */
static void assert_shares(const struct kvp_frag_result *r, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double f[4] = {r[i].used_fraction, r[i].internal_waste_fraction,
			       r[i].external_waste_fraction, r[i].free_fraction};
		double sum = 0;
		for (int k = 0; k < 4; k++) {
			ck_assert_msg(f[k] >= 0 && f[k] <= 1, "row %zu (%s %u) share %d = %g", i,
				      kvp_frag_policy_name(r[i].policy), r[i].block_size, k, f[k]);
			sum += f[k];
		}
		ck_assert_msg(fabs(sum - 1) < 1e-9, "row %zu shares add up to %.12f", i, sum);
	}
}

/* The two command lines of issue 14, which printed used 124.6 % with
 * internal waste -42.6 %, and used 675 % with -595 %: departures pushed
 * during a step landed behind the event heap's minimum and left hundreds of
 * steps late.  kvplan frag --model qwen2.5-7b --gpu l4 ... */
START_TEST(test_issue14_event_order)
{
	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_gpu g;
	struct kvp_frag_report *rep = malloc(sizeof *rep);
	struct kvp_budget_opts bo = {.par = {1, 1}, .batch = 1};
	struct kvp_frag_opts fo;
	struct kvp_error err = {0};
	ck_assert_msg(kvp_model_load("qwen2.5-7b", m, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(kvp_gpu_load("l4", &g, &err) == KVP_STATUS_OK, "%s", err.msg);
	/* 1: --prompt lognormal:1200,0.8 --output lognormal:300,1.0 --max-len 8192
	 *    --shared-prefix 2048:0.7 (default 100,000 requests, every block size) */
	kvp_workload_free(&wl);
	memset(&wl, 0, sizeof wl);
	ck_assert_int_eq(kvp_dist_parse("lognormal:1200,0.8", "prompt", &wl.prompt, &err), 0);
	ck_assert_int_eq(kvp_dist_parse("lognormal:300,1.0", "output", &wl.output, &err), 0);
	wl.prefix_tokens = 2048;
	wl.prefix_fraction = 0.7;
	kvp_frag_opts_init(&fo);
	fo.max_len = 8192;
	ck_assert_msg(kvp_frag_plan(m, &g, &bo, &wl, &fo, rep, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(rep->nrows, 2 + 2 + 7 + 7);
	assert_shares(rep->rows, rep->nrows);
	/* with sequences leaving on time, a larger block never holds more
	 * sequences than a smaller one (it only rounds up more) */
	for (size_t i = 1; i < rep->nrows; i++)
		if (rep->rows[i].policy == rep->rows[i - 1].policy &&
		    rep->rows[i].policy >= KVP_FRAG_POLICY_PAGED)
			ck_assert_msg(rep->rows[i].mean_sequences <=
					      rep->rows[i - 1].mean_sequences * 1.005,
				      "block %u holds %.2f, block %u %.2f", rep->rows[i].block_size,
				      rep->rows[i].mean_sequences, rep->rows[i - 1].block_size,
				      rep->rows[i - 1].mean_sequences);
	ck_assert_int_ge(rep->recommended, 0);
	ck_assert_uint_gt(rep->rows[rep->recommended].block_size, 1);
	/* 2: --prompt uniform:2148,6048 --output uniform:1,2000 --block-sizes 16
	 *    --requests 20000 */
	kvp_workload_free(&wl);
	memset(&wl, 0, sizeof wl);
	ck_assert_int_eq(kvp_dist_parse("uniform:2148,6048", "prompt", &wl.prompt, &err), 0);
	ck_assert_int_eq(kvp_dist_parse("uniform:1,2000", "output", &wl.output, &err), 0);
	kvp_frag_opts_init(&fo);
	fo.max_len = 8192;
	fo.requests = 20000;
	fo.block_sizes[0] = 16;
	fo.nblock = 1;
	ck_assert_msg(kvp_frag_plan(m, &g, &bo, &wl, &fo, rep, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(rep->nrows, 2 + 2 + 1);
	assert_shares(rep->rows, rep->nrows);
	free(rep);
	free(m);
}
END_TEST

/* ------------------------------------------------------------ vLLM groups */

START_TEST(test_shape_vllm_groups)
{
	/* Gemma 3 4B (profiles/models/gemma-3-4b.yaml): 34 layers, 5 full and 29
	 * sliding (window 1,024), 4 KV heads x 256 d_h x 2 (K, V) x 2 B = 4,096 B
	 * per token per layer.  vLLM's hybrid manager (kv_cache_utils.py): group
	 * size 5 (the smaller count, as 29 >= 1.5 x 5), 1 full group and
	 * ceil(29 / 5) = 6 sliding groups, 1 padding slot: the full class holds
	 * 5 x 4,096 = 20,480 B per token, the sliding class 6 x 5 x 4,096 =
	 * 122,880 B of which 29 x 4,096 = 118,784 hold tokens. */
	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_budget *b = malloc(sizeof *b);
	struct kvp_gpu g;
	struct kvp_error err = {0};
	struct kvp_frag_shape sh;
	ck_assert_msg(kvp_model_load("gemma-3-4b", m, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(kvp_gpu_load("h100-sxm", &g, &err) == KVP_STATUS_OK, "%s", err.msg);
	struct kvp_budget_opts bo = {.par = {1, 1}, .batch = 1, .context = 4096,
				     .engine = KVP_ENGINE_VLLM};
	ck_assert_msg(kvp_budget_compute(m, &g, &bo, b, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(b->padding_layers, 1);
	ck_assert(kvp_frag_shape_vllm(b, &sh));
	ck_assert_uint_eq(sh.nclass, 2);
	ck_assert_int_eq(sh.layer[0].kind, KVP_LAYER_FULL);
	ck_assert_uint_eq(sh.token_bytes[0], 20480);
	ck_assert_uint_eq(sh.used_token_bytes[0], 20480);
	ck_assert_int_eq(sh.layer[1].kind, KVP_LAYER_SLIDING);
	ck_assert_uint_eq(sh.layer[1].window, 1024);
	ck_assert_uint_eq(sh.token_bytes[1], 122880);
	ck_assert_uint_eq(sh.used_token_bytes[1], 118784);
	/* 1,000 tokens in blocks of 16: 63 blocks = 1,008 slots in both classes
	 * (the window's cap, ceil(1,023 / 16) + 1 = 65 blocks, is not reached):
	 * 1,008 x (20,480 + 122,880) = 144,506,880 B held, 1,000 x (20,480 +
	 * 118,784) = 139,264,000 B of tokens */
	ck_assert_uint_eq(kvp_frag_seq_bytes(&sh, 1000, 16), 144506880);
	ck_assert_uint_eq(kvp_frag_used_bytes(&sh, 1000), 139264000);
	/* 4,000 tokens: the window holds 65 blocks = 1,040 slots; full 250 blocks
	 * = 4,000: 4,000 x 20,480 + 1,040 x 122,880 = 81,920,000 + 127,795,200 */
	ck_assert_uint_eq(kvp_frag_seq_bytes(&sh, 4000, 16), 209715200);
	/* the hybrid manager off: one group of all 34 layers, no padding, the
	 * windows keep every token: 34 x 4,096 = 139,264 B per token */
	bo.hybrid_off = true;
	ck_assert_msg(kvp_budget_compute(m, &g, &bo, b, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert(kvp_frag_shape_vllm(b, &sh));
	ck_assert_uint_eq(sh.nclass, 1);
	ck_assert_int_eq(sh.layer[0].kind, KVP_LAYER_FULL);
	ck_assert_uint_eq(sh.token_bytes[0], 139264);
	ck_assert_uint_eq(sh.used_token_bytes[0], 139264);
	ck_assert_uint_eq(kvp_frag_seq_bytes(&sh, 4000, 16), 4000ull * 139264);
	/* the generic engine, and a model of full layers only: the layer list */
	bo.hybrid_off = false;
	bo.engine = KVP_ENGINE_GENERIC;
	ck_assert_msg(kvp_budget_compute(m, &g, &bo, b, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert(!kvp_frag_shape_vllm(b, &sh));
	ck_assert_msg(kvp_model_load("llama-3.1-8b", m, &err) == KVP_STATUS_OK, "%s", err.msg);
	bo.engine = KVP_ENGINE_VLLM;
	ck_assert_msg(kvp_budget_compute(m, &g, &bo, b, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert(!kvp_frag_shape_vllm(b, &sh));
	free(b);
	free(m);
}
END_TEST

/* ------------------------------------------------------------ arrivals */

START_TEST(test_arrivals_little)
{
	/* A pool of 1,000,000 tokens, prompts of 100, outputs uniform 1..100 (mean
	 * 50.5), 20 requests/s, 10 ms steps, 8,192 tokens per step: a request
	 * prefills in its first step (sampling its first token), then decodes one
	 * token a step: o steps in service, 0.505 s on average; about 20 x 0.505 =
	 * 10.1 running at once, far below what the pool holds (no preemption). */
	setup("fixed:100", "uniform:1,100", 1000000, 4096);
	static const uint32_t b[] = {16};
	only_blocks(b, 1);
	memset(cfg.policy, 0, sizeof cfg.policy);
	cfg.policy[KVP_FRAG_POLICY_PAGED] = true;
	cfg.arrival_rate = 20;
	cfg.step_time_s = 0.01;
	cfg.max_batched_tokens = 8192;
	cfg.requests = 20000;
	run();
	ck_assert_uint_eq(nrows, 1);
	const struct kvp_frag_result *r = &rows[0];
	ck_assert_uint_eq(r->preemptions, 0);
	ck_assert_uint_eq(r->completed, 20000);
	/* Little's law, exactly, with the measured completion rate: every
	 * request runs (latency - queue) / dt steps and is counted in each */
	ck_assert_double_eq_tol(r->mean_live_sequences,
				r->throughput_rps * (r->mean_latency_s - r->mean_queue_s), 1e-9);
	/* and with the rate asked for, within sampling error: the arrival count
	 * over the run is Poisson, relative sd 1 / sqrt(20,000) = 0.71 %; the
	 * service time's mean 0.505 s has sd 0.289 / sqrt(20,000) s = 0.40 %;
	 * allow 5 sd of both, 4.1 % */
	ck_assert_double_eq_tol(r->mean_live_sequences, 20 * (r->mean_latency_s - r->mean_queue_s),
				0.041 * r->mean_live_sequences);
	ck_assert_double_eq_tol(r->mean_live_sequences, 20 * 0.505, 0.041 * 10.1);
	/* mostly idle: a request waits for the next step boundary, under 10 ms */
	ck_assert(r->mean_queue_s < 0.01);
	ck_assert(r->p99_queue_s <= 0.01 * 1.01);
	ck_assert_double_eq_tol(r->throughput_rps, 20, 20 * 0.036);
	/* the shares of the pool still add up */
	ck_assert_double_eq_tol(r->used_fraction + r->internal_waste_fraction +
				r->external_waste_fraction + r->free_fraction, 1, 1e-9);
}
END_TEST

START_TEST(test_arrivals_little_contiguous)
{
	/* The workload of test_arrivals_little on the contiguous rows: a
	 * reservation of 4,096 tokens (contiguous-max) leaves room for 244 in
	 * the pool of 1,000,000, one of p + o <= 200 tokens (contiguous-request)
	 * for at least 5,000; about 10 run at once, so nothing waits for memory
	 * and both allocators give the same numbers.  Little's law exactly with
	 * the measured completion rate, and about 20 x 0.505 = 10.1 running. */
	setup("fixed:100", "uniform:1,100", 1000000, 4096);
	memset(cfg.policy, 0, sizeof cfg.policy);
	cfg.policy[KVP_FRAG_POLICY_CONTIGUOUS_MAX] = true;
	cfg.policy[KVP_FRAG_POLICY_CONTIGUOUS_REQUEST] = true;
	cfg.arrival_rate = 20;
	cfg.step_time_s = 0.01;
	cfg.max_batched_tokens = 8192;
	cfg.requests = 20000;
	run();
	ck_assert_uint_eq(nrows, 4);
	for (size_t i = 0; i < nrows; i++) {
		const struct kvp_frag_result *r = &rows[i];
		ck_assert(r->over_time);
		ck_assert_uint_eq(r->completed, 20000);
		ck_assert_uint_eq(r->refused_with_free_memory, 0);
		ck_assert_double_eq_tol(r->mean_live_sequences,
					r->throughput_rps * (r->mean_latency_s - r->mean_queue_s), 1e-9);
		ck_assert_double_eq_tol(r->mean_live_sequences, 20 * 0.505, 0.041 * 10.1);
		ck_assert(r->p99_queue_s <= 0.01 * 1.01);
		/* the same requests at the same times, never held back: alike */
		ck_assert_double_eq_tol(r->mean_latency_s, rows[0].mean_latency_s, 1e-12);
		ck_assert_double_eq_tol(r->used_fraction + r->internal_waste_fraction +
					r->external_waste_fraction + r->free_fraction, 1, 1e-9);
		ck_assert_double_eq(r->external_waste_fraction, 0);
	}
	/* contiguous-max holds 4,096 tokens per running sequence: held = 4,096 x
	 * live of the 1,000,000-token pool; used = live x mean tokens held */
	const struct kvp_frag_result *mx = row(KVP_FRAG_POLICY_CONTIGUOUS_MAX, 0, 0);
	ck_assert_double_eq_tol(mx->used_fraction + mx->internal_waste_fraction,
				4096 * mx->mean_live_sequences / 1e6, 1e-9);
	/* contiguous-request holds p + o = 100 + o per sequence, under 200 */
	const struct kvp_frag_result *rq = row(KVP_FRAG_POLICY_CONTIGUOUS_REQUEST, 0, 0);
	ck_assert(rq->used_fraction + rq->internal_waste_fraction <
		  200 * rq->mean_live_sequences / 1e6);
}
END_TEST

START_TEST(test_arrivals_shared)
{
	/* paged-shared over time: every request carries a prefix of 64 tokens
	 * = 4 blocks of 16 before its 100-token prompt, and 10 output tokens;
	 * at 200 requests/s and 10 ms steps two arrive per step on average and
	 * each runs 10 steps (its prefill samples the first token, then 9
	 * decodes): about 20 at once.  A carrier
	 * admitted while another runs holds only its own 164 + 9 - 64 = 109
	 * tokens at the end (7 blocks of 16 beyond the 4 shared), where paged
	 * holds ceil(173 / 16) = 11; so paged-shared holds less, and the same
	 * requests finish (nothing preempted in a pool of 100,000 tokens). */
	setup("fixed:100", "fixed:10", 100000, 4096);
	static const uint32_t b[] = {16};
	only_blocks(b, 1);
	memset(cfg.policy, 0, sizeof cfg.policy);
	cfg.policy[KVP_FRAG_POLICY_PAGED] = true;
	cfg.policy[KVP_FRAG_POLICY_PAGED_SHARED] = true;
	cfg.prefix_tokens = 64;
	cfg.prefix_fraction = 1;
	cfg.arrival_rate = 200;
	cfg.step_time_s = 0.01;
	cfg.max_batched_tokens = 8192;
	cfg.requests = 5000;
	run();
	ck_assert_uint_eq(nrows, 2);
	const struct kvp_frag_result *pg = row(KVP_FRAG_POLICY_PAGED, -1, 16);
	const struct kvp_frag_result *sh = row(KVP_FRAG_POLICY_PAGED_SHARED, -1, 16);
	ck_assert_uint_eq(pg->completed, 5000);
	ck_assert_uint_eq(sh->completed, 5000);
	ck_assert_uint_eq(sh->preemptions, 0);
	/* the same schedule (nothing waits for memory): the same latency */
	ck_assert_double_eq_tol(sh->mean_latency_s, pg->mean_latency_s, 1e-12);
	/* held per running sequence: paged between 11 blocks at the end and
	 * ceil(164 / 16) = 11 at admission, so 11 x 16 = 176 tokens; shared
	 * 7 own blocks (112 tokens) plus the 4 shared blocks split among about
	 * 20: under 112 + 64 / 2 = 144 tokens' bytes */
	ck_assert_double_eq_tol(pg->held_bytes_per_sequence, 176, 1e-9);
	ck_assert(sh->held_bytes_per_sequence < 144);
	ck_assert(sh->held_bytes_per_sequence > 112);
	ck_assert_double_eq_tol(sh->mean_live_sequences,
				sh->throughput_rps * (sh->mean_latency_s - sh->mean_queue_s), 1e-9);
}
END_TEST

START_TEST(test_arrivals_errors)
{
	struct kvp_error err = {0};
	size_t n;
	setup("fixed:100", "fixed:10", 100000, 4096);
	cfg.step_time_s = 0.01;
	cfg.max_batched_tokens = 8192;
	cfg.arrival_rate = INFINITY;
	ck_assert_int_eq(kvp_frag_run(&cfg, &wl, rows, KVP_FRAG_MAX_ROWS, &n, &err),
			 KVP_STATUS_INVALID);
	cfg.arrival_rate = 1;
	cfg.step_time_s = 0;
	ck_assert_int_eq(kvp_frag_run(&cfg, &wl, rows, KVP_FRAG_MAX_ROWS, &n, &err),
			 KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "step_time");
	cfg.step_time_s = 0.01;
	/* no tokens per step */
	cfg.max_batched_tokens = 0;
	ck_assert_int_eq(kvp_frag_run(&cfg, &wl, rows, KVP_FRAG_MAX_ROWS, &n, &err),
			 KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "max_batched_tokens");
}
END_TEST

static Suite *frag_suite(void)
{
	Suite *s = suite_create("frag");
	TCase *core = tcase_create("core");
	tcase_add_test(core, test_shape_matches_spec);
	tcase_add_test(core, test_arena_first_and_best_fit);
	tcase_add_test(core, test_arena_against_reference);
	tcase_add_test(core, test_fixed_lengths_exact);
	tcase_add_test(core, test_growth_exact);
	tcase_add_test(core, test_uniform_waste);
	tcase_add_test(core, test_prefix_sharing);
	tcase_add_test(core, test_contiguous_fragmentation);
	tcase_add_test(core, test_preemption);
	tcase_add_test(core, test_determinism);
	tcase_add_test(core, test_drop_too_long);
	tcase_add_test(core, test_empty_requests);
	tcase_add_test(core, test_recommend);
	tcase_add_test(core, test_recommend_metadata);
	tcase_add_test(core, test_prefix_cache);
	tcase_add_test(core, test_issue14_event_order);
	tcase_add_test(core, test_shape_vllm_groups);
	tcase_add_test(core, test_arrivals_little);
	tcase_add_test(core, test_arrivals_little_contiguous);
	tcase_add_test(core, test_arrivals_shared);
	tcase_set_timeout(core, 120);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_test(errors, test_errors);
	tcase_add_test(errors, test_arrivals_errors);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(frag_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	kvp_workload_free(&wl);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
