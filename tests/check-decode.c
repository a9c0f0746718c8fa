/* check-decode.c: the decode harness's CPU side (kernels/): the dtype
 * conversions, the paged cache, the reference, the check that judges
 * backends, and the CPU backend against the reference over a table of
 * shapes (every KV dtype, MHA / GQA-4 / GQA-8 / MQA, head dims 64, 128,
 * 256 and odd ones, block sizes 1, 16 and 7) on every instruction set the
 * machine runs, and the GQA path's edges (groups 1, 2, 4, 8; lengths 0, 1,
 * block and chunk +-1; prefetch on and off).  Expected values are worked out by hand beside each
 * assertion. */
#include "decode.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------- helpers */

struct instance {
	struct kvb_paged_kv kv;
	float *q, *o;
	size_t n;
};

static void instance_make(struct instance *in, const struct kvb_shape *s, int32_t batch,
			  const int32_t *lens, uint64_t seed, struct kvb_cpu *cpu)
{
	ck_assert_int_eq(kvb_paged_kv_alloc(&in->kv, s, batch, lens, seed), 0);
	ck_assert_int_eq(kvb_paged_kv_fill(&in->kv, seed, cpu), 0);
	in->n = (size_t)batch * s->h_q * s->d;
	in->q = malloc(in->n * sizeof *in->q);
	in->o = malloc(in->n * sizeof *in->o);
	ck_assert_ptr_nonnull(in->q);
	ck_assert_ptr_nonnull(in->o);
	kvb_queries_fill(in->q, in->n, seed);
	kvb_poison(in->o, in->n);
}

static void instance_free(struct instance *in)
{
	kvb_paged_kv_free(&in->kv);
	free(in->q);
	free(in->o);
}

/* A hot cache's decode (n query floats from seed) agrees with the
 * reference; the cache is freed. */
static void hot_decode_validates(struct kvb_cpu *cpu, struct kvb_paged_kv *kv, float *q, float *o,
				 size_t n, uint64_t seed)
{
	struct kvb_check chk;
	kvb_queries_fill(q, n, seed);
	kvb_poison(o, n);
	ck_assert_int_eq(kvb_cpu_decode(cpu, kv, q, o), 0);
	ck_assert_int_eq(kvb_check_output(kv, q, o, NULL, 0, cpu, &chk), 0);
	ck_assert(kvb_check_passed(kv, &chk));
	kvb_paged_kv_free(kv);
}

/* The ISAs this machine runs, widest last: "base" always. */
static int isas(const char **names)
{
	struct kvb_cpu *cpu;
	int n = 0;
	ck_assert_int_eq(kvb_cpu_create(1, &cpu), 0);
	names[n++] = "base";
	if (kvb_cpu_set_isa(cpu, "avx2") == 0)
		names[n++] = "avx2";
	if (kvb_cpu_set_isa(cpu, "avx512") == 0)
		names[n++] = "avx512";
	if (kvb_cpu_set_isa(cpu, "avx512vnni") == 0)
		names[n++] = "avx512vnni";
	kvb_cpu_free(cpu);
	return n;
}

/* ------------------------------------------------------- the shape table */

static const enum kvb_dtype t_dtypes[] = {KVB_DTYPE_FP32, KVB_DTYPE_FP16, KVB_DTYPE_BF16,
					  KVB_DTYPE_FP8, KVB_DTYPE_INT8};
/* MHA, GQA-4, GQA-8, MQA, and a group of 3 (odd, not a power of two) */
static const int t_heads[][2] = {{4, 4}, {8, 2}, {16, 2}, {8, 1}, {6, 2}};
static const int t_dims[] = {64, 128, 256, 2, 17};
static const int t_blocks[] = {1, 16, 7};
#define N_DT (int)(sizeof t_dtypes / sizeof t_dtypes[0])
#define N_HEADS (int)(sizeof t_heads / sizeof t_heads[0])
#define N_DIMS (int)(sizeof t_dims / sizeof t_dims[0])
#define N_BLOCKS (int)(sizeof t_blocks / sizeof t_blocks[0])
#define N_SHAPES (N_DT * N_HEADS * N_DIMS * N_BLOCKS)

/* Shape i of the table, all combinations. */
static struct kvb_shape shape_at(int i)
{
	struct kvb_shape s;
	s.block_size = t_blocks[i % N_BLOCKS];
	i /= N_BLOCKS;
	s.d = t_dims[i % N_DIMS];
	i /= N_DIMS;
	s.h_q = t_heads[i % N_HEADS][0];
	s.h_kv = t_heads[i % N_HEADS][1];
	i /= N_HEADS;
	s.dtype = t_dtypes[i];
	return s;
}

/* Lengths: 1 token, one partial block, an odd length spanning blocks. */
START_TEST(test_cpu_matches_reference)
{
	const struct kvb_shape s = shape_at(_i);
	const int32_t lens[] = {1, 5, 150};
	const char *names[4];
	int nisa = isas(names);
	for (int k = 0; k < nisa; k++) {
		struct kvb_cpu *cpu;
		struct instance in;
		struct kvb_check chk;
		ck_assert_int_eq(kvb_cpu_create(2, &cpu), 0);
		ck_assert_int_eq(kvb_cpu_set_isa(cpu, names[k]), 0);
		instance_make(&in, &s, 3, lens, 1000 + (uint64_t)_i, cpu);
		ck_assert_int_eq(kvb_cpu_decode(cpu, &in.kv, in.q, in.o), 0);
		ck_assert_int_eq(kvb_check_output(&in.kv, in.q, in.o, NULL, 0, cpu, &chk), 0);
		ck_assert_msg(kvb_check_passed(&in.kv, &chk),
			      "%s %s %d:%d d=%d P=%d: max error %g (bound %g), %lld NaN",
			      names[k], kvb_dtype_name(s.dtype), s.h_q, s.h_kv, s.d, s.block_size,
			      chk.max_err, kvb_dtype_tolerance(s.dtype), (long long)chk.nonfinite);
		/* The CPU backend computes in fp32 whatever the KV dtype: far
		 * inside even the fp32 bound. */
		ck_assert_double_lt(chk.max_err, 1e-5);
		ck_assert_int_eq(chk.seqs_checked, 3);
		instance_free(&in);
		kvb_cpu_free(cpu);
	}
}
END_TEST

/* One long sequence over 4 threads: 2 KV heads are fewer units than 4
 * per thread, so the sequence is cut (chunks of at least 512 tokens: 1500
 * tokens -> 3 chunks) and the partial states merged. */
START_TEST(test_cpu_split_sequences)
{
	static const struct kvb_shape s = {8, 2, 128, 16, KVB_DTYPE_BF16};
	const int32_t lens[] = {1500};
	struct kvb_cpu *cpu;
	struct instance in;
	struct kvb_check chk;
	ck_assert_int_eq(kvb_cpu_create(4, &cpu), 0);
	instance_make(&in, &s, 1, lens, 7, cpu);
	ck_assert_int_eq(kvb_cpu_decode(cpu, &in.kv, in.q, in.o), 0);
	ck_assert_int_eq(kvb_check_output(&in.kv, in.q, in.o, NULL, 0, cpu, &chk), 0);
	ck_assert_int_eq(chk.nonfinite, 0);
	ck_assert_double_lt(chk.max_err, 1e-5);
	instance_free(&in);
	kvb_cpu_free(cpu);
}
END_TEST

/* A length-0 sequence attends to nothing: its output is defined as 0. */
START_TEST(test_cpu_empty_sequence)
{
	static const struct kvb_shape s = {4, 2, 64, 16, KVB_DTYPE_FP32};
	const int32_t lens[] = {0, 20};
	struct kvb_cpu *cpu;
	struct instance in;
	struct kvb_check chk;
	ck_assert_int_eq(kvb_cpu_create(2, &cpu), 0);
	instance_make(&in, &s, 2, lens, 3, cpu);
	ck_assert_int_eq(kvb_cpu_decode(cpu, &in.kv, in.q, in.o), 0);
	for (int i = 0; i < 4 * 64; i++)
		ck_assert_float_eq(in.o[i], 0.0f);
	ck_assert_int_eq(kvb_check_output(&in.kv, in.q, in.o, NULL, 0, cpu, &chk), 0);
	ck_assert(kvb_check_passed(&in.kv, &chk));
	instance_free(&in);
	kvb_cpu_free(cpu);
}
END_TEST

/* The register-blocked GQA path at its edges: groups 1, 2, 4 and 8 (the
 * head blocks of 1, 2 and 4 heads: block_heads in decode-cpu-attend.h),
 * every dtype, on every ISA, with the software prefetch on and off, over
 * lengths 0, 1, a block (16) minus, at and plus one, the AVX2 copy's
 * softmax chunk (32) and the AVX-512 copy's (64) minus, at and plus one,
 * and a long one that crosses many chunks.  Length 0 gives zeros (no token: an empty softmax), the rest
 * must match the double reference to 1e-5 (the CPU computes in fp32). */
static const int t_groups[] = {1, 2, 4, 8};
#define N_GROUPS (int)(sizeof t_groups / sizeof t_groups[0])

START_TEST(test_cpu_gqa_edges)
{
	const struct kvb_shape s = {2 * t_groups[_i % N_GROUPS], 2, 128, 16,
				    t_dtypes[_i / N_GROUPS]};
	const int32_t lens[] = {0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 300};
	const int32_t batch = (int32_t)(sizeof lens / sizeof lens[0]);
	const char *names[4];
	int nisa = isas(names);
	for (int k = 0; k < nisa; k++)
		for (int pf = 0; pf < 2; pf++) {
			struct kvb_cpu *cpu;
			struct instance in;
			struct kvb_check chk;
			ck_assert_int_eq(kvb_cpu_create(2, &cpu), 0);
			ck_assert_int_eq(kvb_cpu_set_isa(cpu, names[k]), 0);
			kvb_cpu_set_prefetch(cpu, pf);
			ck_assert_int_eq(kvb_cpu_prefetch(cpu), pf);
			instance_make(&in, &s, batch, lens, 2000 + (uint64_t)_i, cpu);
			ck_assert_int_eq(kvb_cpu_decode(cpu, &in.kv, in.q, in.o), 0);
			/* sequence 0 has no token: all its H_q x d outputs are 0 */
			for (int i = 0; i < s.h_q * s.d; i++)
				ck_assert_float_eq(in.o[i], 0.0f);
			ck_assert_int_eq(kvb_check_output(&in.kv, in.q, in.o, NULL, 0, cpu, &chk), 0);
			ck_assert_msg(kvb_check_passed(&in.kv, &chk) && chk.max_err < 1e-5,
				      "%s prefetch %d %s %d:%d: max error %g at sequence %d head %d, "
				      "%lld NaN", names[k], pf, kvb_dtype_name(s.dtype), s.h_q,
				      s.h_kv, chk.max_err, chk.worst_seq, chk.worst_head,
				      (long long)chk.nonfinite);
			ck_assert_int_eq(chk.seqs_checked, batch);
			instance_free(&in);
			kvb_cpu_free(cpu);
		}
}
END_TEST

/* Units of several KV heads (kvb_cpu_set_unit_heads; attend in
 * decode-cpu-attend.h): the chosen count (0), 2 and 4 heads a unit, and 3,
 * which divides none of these H_kv (4, 8) and so means one head, for MHA
 * 8:8, GQA-2 8:4 and GQA-4 16:4, every dtype, every ISA, prefetch off, on
 * and jump (the next chunk's rows alone), over the lengths of test_cpu_gqa_edges.  A unit that read head h's
 * rows for head h + 1 (the P-row step between heads of a block) or wrote
 * a head's output to its neighbour would miss the double reference by far
 * more than 1e-5: each head's K and V are drawn independently. */
static const int t_unit_heads[] = {0, 2, 4, 3};
static const int t_uh_shapes[][2] = {{8, 8}, {8, 4}, {16, 4}};
#define N_UH (int)(sizeof t_unit_heads / sizeof t_unit_heads[0])
#define N_UH_SHAPES (int)(sizeof t_uh_shapes / sizeof t_uh_shapes[0])

START_TEST(test_cpu_unit_heads)
{
	const int sh = _i % N_UH_SHAPES;
	const struct kvb_shape s = {t_uh_shapes[sh][0], t_uh_shapes[sh][1], 128, 16,
				    t_dtypes[_i / N_UH_SHAPES]};
	const int32_t lens[] = {0, 1, 15, 16, 17, 31, 32, 33, 63, 64, 65, 300};
	const int32_t batch = (int32_t)(sizeof lens / sizeof lens[0]);
	const char *names[4];
	int nisa = isas(names);
	for (int k = 0; k < nisa; k++)
		for (int u = 0; u < N_UH; u++)
			for (int pf = KVB_PREFETCH_OFF; pf <= KVB_PREFETCH_JUMP; pf++) {
				struct kvb_cpu *cpu;
				struct instance in;
				struct kvb_check chk;
				ck_assert_int_eq(kvb_cpu_create(2, &cpu), 0);
				ck_assert_int_eq(kvb_cpu_set_isa(cpu, names[k]), 0);
				kvb_cpu_set_prefetch(cpu, pf);
				ck_assert_int_eq(kvb_cpu_prefetch(cpu), pf);
				kvb_cpu_set_unit_heads(cpu, t_unit_heads[u]);
				ck_assert_int_eq(kvb_cpu_unit_heads(cpu), t_unit_heads[u]);
				instance_make(&in, &s, batch, lens, 3000 + (uint64_t)_i, cpu);
				ck_assert_int_eq(kvb_cpu_decode(cpu, &in.kv, in.q, in.o), 0);
				for (int i = 0; i < s.h_q * s.d; i++) /* sequence 0: no token */
					ck_assert_float_eq(in.o[i], 0.0f);
				ck_assert_int_eq(kvb_check_output(&in.kv, in.q, in.o, NULL, 0, cpu, &chk), 0);
				ck_assert_msg(kvb_check_passed(&in.kv, &chk) && chk.max_err < 1e-5,
					      "%s %d heads a unit, prefetch %d, %s %d:%d: max error %g at "
					      "sequence %d head %d, %lld NaN", names[k], t_unit_heads[u],
					      pf, kvb_dtype_name(s.dtype), s.h_q, s.h_kv, chk.max_err,
					      chk.worst_seq, chk.worst_head, (long long)chk.nonfinite);
				instance_free(&in);
				kvb_cpu_free(cpu);
			}
}
END_TEST

/* Units of 2 KV heads on a split sequence: 4 threads, 4 KV heads, one
 * sequence of 1500 tokens: 4 units are fewer than 4 per thread, so it is
 * cut into chunks of max(1500 * 4 / 16, 512) = 512 tokens (3 chunks), and
 * each unit of 2 heads leaves a partial state per head (slots of head
 * h + 1 lie 3 further on) for the merge.  A negative count means 0. */
START_TEST(test_cpu_unit_heads_split)
{
	static const struct kvb_shape s = {8, 4, 128, 16, KVB_DTYPE_BF16};
	const int32_t lens[] = {1500};
	struct kvb_cpu *cpu;
	struct instance in;
	struct kvb_check chk;
	ck_assert_int_eq(kvb_cpu_create(4, &cpu), 0);
	kvb_cpu_set_unit_heads(cpu, -1);
	ck_assert_int_eq(kvb_cpu_unit_heads(cpu), 0);
	kvb_cpu_set_unit_heads(cpu, 2);
	instance_make(&in, &s, 1, lens, 11, cpu);
	ck_assert_int_eq(kvb_cpu_decode(cpu, &in.kv, in.q, in.o), 0);
	ck_assert_int_eq(kvb_check_output(&in.kv, in.q, in.o, NULL, 0, cpu, &chk), 0);
	ck_assert_int_eq(chk.nonfinite, 0);
	ck_assert_double_lt(chk.max_err, 1e-5);
	instance_free(&in);
	kvb_cpu_free(cpu);
}
END_TEST

/* The multiply-add peak: positive and finite on every ISA, and not past
 * what any x86 or arm64 core of today does per thread (2 FMA ports x 16
 * lanes x 2 FLOP x 6 GHz = 384 GFLOP/s). */
START_TEST(test_cpu_fma_peak)
{
	const char *names[4];
	int nisa = isas(names);
	for (int k = 0; k < nisa; k++) {
		struct kvb_cpu *cpu;
		ck_assert_int_eq(kvb_cpu_create(2, &cpu), 0);
		ck_assert_int_eq(kvb_cpu_set_isa(cpu, names[k]), 0);
		double peak = kvb_cpu_fma_peak_gflops(cpu, 1);
		ck_assert_msg(peak > 0.1 && peak < 384, "%s: %g GFLOP/s", names[k], peak);
		kvb_cpu_free(cpu);
	}
}
END_TEST

/* ------------------------------------------------------- known answers */

/* One sequence, one head, d = 2, two tokens in one block, softmax scale 1:
 *   q = (ln 3, 0), k0 = (1, 0), k1 = (0, 1)
 *   scores ln 3 and 0, weights e^ln3 / (3 + 1) = 3/4 and 1/4
 *   v0 = (4, 0), v1 = (0, 8)
 *   o = 3/4 (4, 0) + 1/4 (0, 8) = (3, 2).
 * Stored per dtype: fp8 with scales 1/2 (stored values doubled), int8 with
 * a scale of 1/4 per token (stored values times 4); all exactly
 * representable. */
static void known_answer(enum kvb_dtype dt, const float *expect, double tol)
{
	const struct kvb_shape s = {1, 1, 2, 2, dt};
	const int32_t lens[] = {2};
	const float k[2][2] = {{1, 0}, {0, 1}}, v[2][2] = {{4, 0}, {0, 8}};
	struct kvb_paged_kv kv;
	struct kvb_cpu *cpu;
	float q[2] = {logf(3.0f), 0}, o[2] = {NAN, NAN};
	float mul = dt == KVB_DTYPE_FP8 ? 2.0f : dt == KVB_DTYPE_INT8 ? 4.0f : 1.0f;
	ck_assert_int_eq(kvb_paged_kv_alloc(&kv, &s, 1, lens, 1), 0);
	kv.sm_scale = 1.0f;
	if (dt == KVB_DTYPE_FP8)
		kv.k_scale = kv.v_scale = 0.5f;
	for (int t = 0; t < 2; t++) {
		int64_t row = kvb_row_index(&s, kv.block_tables[0], 0, t);
		if (dt == KVB_DTYPE_INT8) {
			kv.k_scales[kvb_scale_index(&s, kv.block_tables[0], 0, t)] = 0.25f;
			kv.v_scales[kvb_scale_index(&s, kv.block_tables[0], 0, t)] = 0.25f;
		}
		for (int i = 0; i < 2; i++) {
			float kx = k[t][i] * mul, vx = v[t][i] * mul;
			switch (dt) {
			case KVB_DTYPE_FP32:
				((float *)kv.k_pool)[row + i] = kx;
				((float *)kv.v_pool)[row + i] = vx;
				break;
			case KVB_DTYPE_FP16:
				((uint16_t *)kv.k_pool)[row + i] = kvb_float_to_fp16(kx);
				((uint16_t *)kv.v_pool)[row + i] = kvb_float_to_fp16(vx);
				break;
			case KVB_DTYPE_BF16:
				((uint16_t *)kv.k_pool)[row + i] = kvb_float_to_bf16(kx);
				((uint16_t *)kv.v_pool)[row + i] = kvb_float_to_bf16(vx);
				break;
			case KVB_DTYPE_FP8:
				((uint8_t *)kv.k_pool)[row + i] = kvb_float_to_e4m3(kx);
				((uint8_t *)kv.v_pool)[row + i] = kvb_float_to_e4m3(vx);
				break;
			default:
				((int8_t *)kv.k_pool)[row + i] = (int8_t)kx;
				((int8_t *)kv.v_pool)[row + i] = (int8_t)vx;
				break;
			}
		}
	}
	double ref[2];
	kvb_decode_ref(&kv, q, 0, ref, NULL);
	ck_assert_double_eq_tol(ref[0], expect[0], 1e-6);
	ck_assert_double_eq_tol(ref[1], expect[1], 1e-6);
	ck_assert_int_eq(kvb_cpu_create(1, &cpu), 0);
	ck_assert_int_eq(kvb_cpu_decode(cpu, &kv, q, o), 0);
	ck_assert_double_eq_tol(o[0], expect[0], tol);
	ck_assert_double_eq_tol(o[1], expect[1], tol);
	kvb_cpu_free(cpu);
	kvb_paged_kv_free(&kv);
}

START_TEST(test_known_answer)
{
	/* q holds ln 3 rounded to fp32 (off by < 3e-8), so even the double
	 * reference lands within 1e-7 of (3, 2), not on it. */
	static const float expect[2] = {3.0f, 2.0f};
	known_answer(t_dtypes[_i], expect, 1e-5);
}
END_TEST

/* Equal scores split the weight evenly: q = (1, 1), k0 = (1, 0), k1 =
 * (0, 1) give scores 1 and 1, weights 1/2 each; v0 = (2, 4), v1 = (6, -8)
 * give o = ((2 + 6) / 2, (4 - 8) / 2) = (4, -2). */
START_TEST(test_known_answer_even)
{
	const struct kvb_shape s = {1, 1, 2, 16, KVB_DTYPE_FP32};
	const int32_t lens[] = {2};
	struct kvb_paged_kv kv;
	struct kvb_cpu *cpu;
	float q[2] = {1, 1}, o[2] = {NAN, NAN};
	ck_assert_int_eq(kvb_paged_kv_alloc(&kv, &s, 1, lens, 1), 0);
	float *k = kv.k_pool, *v = kv.v_pool;
	int64_t r0 = kvb_row_index(&s, kv.block_tables[0], 0, 0);
	int64_t r1 = kvb_row_index(&s, kv.block_tables[0], 0, 1);
	k[r0] = 1, k[r0 + 1] = 0, k[r1] = 0, k[r1 + 1] = 1;
	v[r0] = 2, v[r0 + 1] = 4, v[r1] = 6, v[r1 + 1] = -8;
	ck_assert_int_eq(kvb_cpu_create(1, &cpu), 0);
	ck_assert_int_eq(kvb_cpu_decode(cpu, &kv, q, o), 0);
	ck_assert_double_eq_tol(o[0], 4.0, 1e-6);
	ck_assert_double_eq_tol(o[1], -2.0, 1e-6);
	kvb_cpu_free(cpu);
	kvb_paged_kv_free(&kv);
}
END_TEST

/* ------------------------------------------------------------ conversions */

START_TEST(test_conversions)
{
	/* bf16: the top half of fp32; 1 + 2^-8 is halfway between 1 and
	 * 1 + 2^-7 and rounds to even (1.0, 0x3f80) */
	ck_assert_uint_eq(kvb_float_to_bf16(1.0f), 0x3f80);
	ck_assert_uint_eq(kvb_float_to_bf16(1.0f + 1.0f / 256), 0x3f80);
	ck_assert_uint_eq(kvb_float_to_bf16(1.0f + 3.0f / 256), 0x3f82);
	ck_assert_float_eq(kvb_bf16_to_float(0xc040), -3.0f);
	/* fp16: 1 = 0x3c00, 65504 = 0x7bff (largest), 65520 rounds up to
	 * infinity, 2^-24 = 0x0001 (smallest subnormal), 2^-14 = 0x0400 */
	ck_assert_uint_eq(kvb_float_to_fp16(1.0f), 0x3c00);
	ck_assert_uint_eq(kvb_float_to_fp16(65504.0f), 0x7bff);
	ck_assert_uint_eq(kvb_float_to_fp16(65520.0f), 0x7c00);
	ck_assert_uint_eq(kvb_float_to_fp16(ldexpf(1, -24)), 0x0001);
	ck_assert_uint_eq(kvb_float_to_fp16(ldexpf(1, -14)), 0x0400);
	ck_assert_uint_eq(kvb_float_to_fp16(-2.0f), 0xc000);
	ck_assert_float_eq(kvb_fp16_to_float(0x3555), 0x1.554p-2f); /* 0.333251953125 */
	ck_assert(isinf(kvb_fp16_to_float(0x7c00)));
	ck_assert(isnan(kvb_fp16_to_float(0x7e00)));
	/* e4m3: 1 = 0.0111.000 = 0x38; 448 = 0.1111.110 = 0x7e (largest);
	 * 2^-9 = 0x01 (smallest subnormal); 1.0625 is halfway between 1 and
	 * 1.125 and rounds to even (0x38), 1.1875 between 1.125 and 1.25 to
	 * 0x3a; 1000 saturates to 448; 0x7f is NaN */
	ck_assert_uint_eq(kvb_float_to_e4m3(1.0f), 0x38);
	ck_assert_uint_eq(kvb_float_to_e4m3(448.0f), 0x7e);
	ck_assert_uint_eq(kvb_float_to_e4m3(1000.0f), 0x7e);
	ck_assert_uint_eq(kvb_float_to_e4m3(-448.0f), 0xfe);
	ck_assert_uint_eq(kvb_float_to_e4m3(ldexpf(1, -9)), 0x01);
	ck_assert_uint_eq(kvb_float_to_e4m3(1.0625f), 0x38);
	ck_assert_uint_eq(kvb_float_to_e4m3(1.1875f), 0x3a);
	ck_assert_float_eq(kvb_e4m3_to_float(0x7e), 448.0f);
	ck_assert_float_eq(kvb_e4m3_to_float(0x08), 0.015625f); /* 2^-6, first normal */
	ck_assert_float_eq(kvb_e4m3_to_float(0x07), 7.0f / 512);
	ck_assert_float_eq(kvb_e4m3_to_float(0xb8), -1.0f);
	ck_assert(isnan(kvb_e4m3_to_float(0x7f)));
	ck_assert(isnan(kvb_e4m3_to_float(0xff)));
	/* Every finite code survives the round trip. */
	for (unsigned x = 0; x < 256; x++)
		if ((x & 0x7f) != 0x7f)
			ck_assert_uint_eq(kvb_float_to_e4m3(kvb_e4m3_to_float((uint8_t)x)), x);
	for (unsigned x = 0; x < 65536; x++) {
		if ((x & 0x7c00) != 0x7c00 || (x & 0x3ff) == 0)
			ck_assert_uint_eq(kvb_float_to_fp16(kvb_fp16_to_float((uint16_t)x)), x);
		if ((x & 0x7f80) != 0x7f80 || (x & 0x7f) == 0)
			ck_assert_uint_eq(kvb_float_to_bf16(kvb_bf16_to_float((uint16_t)x)), x);
	}
}
END_TEST

START_TEST(test_exp2)
{
	float x[6] = {0.0f, -1.0f, -0.5f, -200.0f, -INFINITY, NAN};
	kvb_exp2_nonpos(x, 6);
	ck_assert_float_eq(x[0], 1.0f);
	ck_assert_float_eq_tol(x[1], 0.5f, 1e-7f);
	ck_assert_float_eq_tol(x[2], 0.70710678f, 1e-6f); /* 2^-1/2 = 1/sqrt 2 */
	ck_assert_float_eq(x[3], 0.0f);                    /* below 2^-126: 0 */
	ck_assert_float_eq(x[4], 0.0f);
	ck_assert(isnan(x[5])); /* a NaN score must spoil the output, not vanish */
	for (int i = 0; i <= 12500; i++) {
		float v = -0.01f * (float)i, y = v;
		kvb_exp2_nonpos(&y, 1);
		double want = exp2((double)v);
		ck_assert_msg(fabs(y - want) <= 1e-6 * want, "2^%g: %g, want %g", v, y, want);
	}
}
END_TEST

/* Bytes credited, by hand: B = 2 sequences of 10 and 20 tokens, H_q 4,
 * H_kv 2, d 8, P 16.
 *   bf16: K+V 30 tokens * 2 heads * 8 * 2 B * 2 = 1920; Q+O 2 * 4 * 8 * 4 B
 *         * 2 = 512; moved 2432.  Tables: 1 + 2 blocks + 2 lengths = 5 * 4 B.
 *   int8: K+V 30 * 2 * 8 * 1 * 2 = 960, scales 30 * 2 * 2 * 4 = 480; 1952.
 *   fp8:  960 + 512 + 2 per-tensor scales * 4 B = 1480. */
START_TEST(test_bytes)
{
	struct kvb_shape s = {4, 2, 8, 16, KVB_DTYPE_BF16};
	const int32_t lens[] = {10, 20};
	struct kvb_paged_kv kv;
	uint64_t moved, table;
	ck_assert_int_eq(kvb_paged_kv_alloc(&kv, &s, 2, lens, 1), 0);
	ck_assert_int_eq(kvb_paged_kv_bytes(&kv, &moved, &table), 0);
	ck_assert_uint_eq(moved, 2432);
	ck_assert_uint_eq(table, 20);
	ck_assert_int_eq(kv.num_blocks, 3);
	ck_assert_int_eq(kv.max_blocks, 2);
	kvb_paged_kv_free(&kv);
	s.dtype = KVB_DTYPE_INT8;
	ck_assert_int_eq(kvb_paged_kv_alloc(&kv, &s, 2, lens, 1), 0);
	ck_assert_int_eq(kvb_paged_kv_bytes(&kv, &moved, &table), 0);
	ck_assert_uint_eq(moved, 1952);
	kvb_paged_kv_free(&kv);
	s.dtype = KVB_DTYPE_FP8;
	ck_assert_int_eq(kvb_paged_kv_alloc(&kv, &s, 2, lens, 1), 0);
	ck_assert_int_eq(kvb_paged_kv_bytes(&kv, &moved, &table), 0);
	ck_assert_uint_eq(moved, 1480);
	kvb_paged_kv_free(&kv);
	/* A block: 2 (K, V) * 2 heads * 16 tokens * 8 * 2 B = 1024 for bf16;
	 * int8 adds a 4-byte scale per token and head: 2 * 2 * 16 * (8 + 4) = 768 */
	s.dtype = KVB_DTYPE_BF16;
	ck_assert_uint_eq(kvb_block_bytes(&s), 1024);
	s.dtype = KVB_DTYPE_INT8;
	ck_assert_uint_eq(kvb_block_bytes(&s), 768);
}
END_TEST

/* Every block belongs to one sequence, once. */
START_TEST(test_blocks_distinct)
{
	static const struct kvb_shape s = {2, 1, 4, 3, KVB_DTYPE_FP32};
	const int32_t lens[] = {7, 1, 9, 3}; /* 3 + 1 + 3 + 1 = 8 blocks of 3 */
	struct kvb_paged_kv kv;
	int seen[8] = {0};
	ck_assert_int_eq(kvb_paged_kv_alloc(&kv, &s, 4, lens, 5), 0);
	ck_assert_int_eq(kv.num_blocks, 8);
	for (int b = 0; b < 4; b++)
		for (int j = 0; j < kv.max_blocks; j++) {
			int32_t id = kv.block_tables[b * kv.max_blocks + j];
			if (j < (lens[b] + 2) / 3) {
				ck_assert(id >= 0 && id < 8);
				seen[id]++;
			} else {
				ck_assert_int_eq(id, -1);
			}
		}
	for (int i = 0; i < 8; i++)
		ck_assert_int_eq(seen[i], 1);
	kvb_paged_kv_free(&kv);
}
END_TEST

/* The scaled fill: the same draws times the factor.  int8's per-row
 * scales follow the factor (amp x mul / 127 against amp / 127: the ratio
 * is mul up to a float rounding or two), fp8's per-tensor scales are 2 mul /
 * 448 (1e-6: 4.4642857e-9; 1e3: 4.4642857), and the CPU decode still
 * validates at 1e-6 and 1e3 on every dtype. */
START_TEST(test_fill_scaled)
{
	const int32_t lens[] = {5, 40};
	const float muls[] = {1e-6f, 1e3f};
	struct kvb_shape s = {4, 2, 16, 16, KVB_DTYPE_INT8};
	struct kvb_paged_kv a, b;
	ck_assert_int_eq(kvb_paged_kv_alloc(&a, &s, 2, lens, 3), 0);
	ck_assert_int_eq(kvb_paged_kv_alloc(&b, &s, 2, lens, 3), 0);
	ck_assert_int_eq(kvb_paged_kv_fill(&a, 3, NULL), 0);
	ck_assert_int_eq(kvb_paged_kv_fill_scaled(&b, 3, NULL, 1.0f, 1e-6f), 0);
	for (int64_t i = 0; i < (int64_t)a.num_blocks * 2 * 16; i++) {
		if (isnan(a.v_scales[i]))
			continue; /* past a length */
		ck_assert_float_eq(a.k_scales[i], b.k_scales[i]);
		ck_assert(fabs(b.v_scales[i] / a.v_scales[i] / 1e-6 - 1) < 1e-6);
	}
	kvb_paged_kv_free(&a);
	kvb_paged_kv_free(&b);
	for (int dt = 0; dt < KVB_DTYPE_COUNT; dt++)
		for (int m = 0; m < 2; m++) {
			struct kvb_cpu *cpu;
			struct kvb_check chk;
			float q[2 * 4 * 16], o[2 * 4 * 16];
			s.dtype = (enum kvb_dtype)dt;
			ck_assert_int_eq(kvb_paged_kv_alloc(&a, &s, 2, lens, 7), 0);
			ck_assert_int_eq(kvb_paged_kv_fill_scaled(&a, 7, NULL, muls[m], muls[m]), 0);
			if (dt == KVB_DTYPE_FP8) {
				ck_assert_float_eq_tol(a.k_scale, 2.0f * muls[m] / 448.0f, 1e-6f * a.k_scale);
				ck_assert_float_eq(a.k_scale, a.v_scale);
			}
			if (muls[m] > 1.0f)
				a.sm_scale /= muls[m]; /* the logits keep their spread */
			kvb_queries_fill(q, 2 * 4 * 16, 7);
			kvb_poison(o, 2 * 4 * 16);
			ck_assert_int_eq(kvb_cpu_create(1, &cpu), 0);
			ck_assert_int_eq(kvb_cpu_decode(cpu, &a, q, o), 0);
			ck_assert_int_eq(kvb_check_output(&a, q, o, NULL, 0, NULL, &chk), 0);
			ck_assert_msg(kvb_check_passed(&a, &chk), "%s x %g: error %g",
				      kvb_dtype_name(s.dtype), (double)muls[m], chk.max_err);
			kvb_cpu_free(cpu);
			kvb_paged_kv_free(&a);
		}
}
END_TEST

/* The hot cache (the loop's compute ceiling): every table entry of every
 * sequence is the one full block, no NaN anywhere, and the CPU decode over
 * it still agrees with the reference (which reads the same aliased
 * block).  Lengths 0, 17 and 100 at P 16: 1 + 2 ... max ceil(100/16) = 7
 * entries per row. */
START_TEST(test_hot_cache)
{
	const struct kvb_shape s = {8, 2, 64, 16, KVB_DTYPE_BF16};
	const int32_t lens[] = {0, 17, 100};
	struct kvb_paged_kv kv;
	struct kvb_cpu *cpu;
	float q[3 * 8 * 64], o[3 * 8 * 64];
	ck_assert_int_eq(kvb_cpu_create(2, &cpu), 0);
	ck_assert_int_eq(kvb_paged_kv_make_hot(&kv, &s, 3, lens, 9, cpu), 0);
	ck_assert_int_eq(kv.batch, 3);
	ck_assert_int_eq(kv.num_blocks, 1);
	ck_assert_int_eq(kv.max_blocks, 7);
	for (int i = 0; i < 3 * 7; i++)
		ck_assert_int_eq(kv.block_tables[i], 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(kv.seq_lens[i], lens[i]);
	const uint16_t *k = kv.k_pool;
	for (int i = 0; i < 2 * 16 * 64; i++)
		ck_assert(!isnan(kvb_bf16_to_float(k[i])));
	hot_decode_validates(cpu, &kv, q, o, 3 * 8 * 64, 9);
	kvb_cpu_free(cpu);
}
END_TEST

/* The hot cache of a block larger than a page (issue 39: "the same loop
 * over L1-resident data"): MHA 32:32, d 128, P 16 is 32 x 16 x 128 x 4 =
 * 256 KiB of K per block in fp32 (64 pages of 4 KiB), 64 KiB in int8, past
 * any L1.  Every page of K and of V must be the same memory: a byte written
 * through the last page reads back through the first, which a copy of the
 * first page (or the random fill, whose pages all differ) would not show.
 * The decode over it still agrees with the reference, for each dtype. */
START_TEST(test_hot_cache_aliased)
{
	static const enum kvb_dtype dts[] = {KVB_DTYPE_FP32, KVB_DTYPE_BF16, KVB_DTYPE_INT8,
					     KVB_DTYPE_FP8};
	const int32_t lens[] = {100};
	const long page = sysconf(_SC_PAGESIZE);
	struct kvb_cpu *cpu;
	static float q[32 * 128], o[32 * 128];
	ck_assert_int_eq(kvb_cpu_create(2, &cpu), 0);
	for (size_t i = 0; i < sizeof dts / sizeof dts[0]; i++) {
		const struct kvb_shape s = {32, 32, 128, 16, dts[i]};
		const size_t span = (size_t)32 * 16 * 128 * kvb_dtype_bytes(dts[i]);
		struct kvb_paged_kv kv;
		ck_assert_int_eq(kvb_paged_kv_make_hot(&kv, &s, 1, lens, 5, cpu), 0);
		ck_assert(page > 0 && span % (size_t)page == 0 && span / (size_t)page >= 16);
		ck_assert_uint_eq(kv.k_map_bytes, span);
		ck_assert_uint_eq(kv.v_map_bytes, span);
		for (int pool = 0; pool < 2; pool++) {
			unsigned char *p = pool ? kv.v_pool : kv.k_pool;
			for (size_t x = 1; x < span / (size_t)page; x++)
				ck_assert_int_eq(memcmp(p, p + x * (size_t)page, (size_t)page), 0);
			const unsigned char keep = p[7];
			p[span - (size_t)page + 7] = (unsigned char)(keep ^ 0x01);
			ck_assert_int_eq(p[7], keep ^ 0x01);
			p[span - (size_t)page + 7] = keep;
			ck_assert_int_eq(p[7], keep);
		}
		hot_decode_validates(cpu, &kv, q, o, 32 * 128, 5);
	}
	kvb_cpu_free(cpu);
}
END_TEST

START_TEST(test_stream_ceiling)
{
	struct kvb_cpu *cpu;
	struct kvb_ceiling c;
	ck_assert_int_eq(kvb_cpu_create(2, &cpu), 0);
	ck_assert_int_eq(kvb_stream_cpu(cpu, 1 << 20, 2, &c), 0);
	ck_assert_uint_eq(c.array_bytes, 1 << 20);
	ck_assert(c.read_gbps > 0 && c.copy_gbps > 0 && c.triad_gbps > 0);
	kvb_cpu_free(cpu);
}
END_TEST

/* ----------------------------------------------------------------- errors
 * The check must catch what a broken backend does. */

static void decode_small(struct instance *in, struct kvb_cpu **cpu, enum kvb_dtype dt)
{
	static struct kvb_shape s = {4, 2, 16, 4, KVB_DTYPE_FP32};
	const int32_t lens[] = {5, 6}; /* last blocks partial: slots past them are NaN */
	s.dtype = dt;
	ck_assert_int_eq(kvb_cpu_create(1, cpu), 0);
	instance_make(in, &s, 2, lens, 11, *cpu);
	ck_assert_int_eq(kvb_cpu_decode(*cpu, &in->kv, in->q, in->o), 0);
}

START_TEST(test_error_unwritten_element)
{
	struct instance in;
	struct kvb_cpu *cpu;
	struct kvb_check chk;
	decode_small(&in, &cpu, KVB_DTYPE_BF16);
	in.o[in.n - 1] = NAN; /* as if the backend never wrote it */
	ck_assert_int_eq(kvb_check_output(&in.kv, in.q, in.o, NULL, 0, NULL, &chk), 0);
	ck_assert_int_eq(chk.nonfinite, 1);
	ck_assert(!kvb_check_passed(&in.kv, &chk));
	/* a NaN in an unchecked sequence is still counted */
	const int32_t first[] = {0};
	ck_assert_int_eq(kvb_check_output(&in.kv, in.q, in.o, first, 1, NULL, &chk), 0);
	ck_assert_int_eq(chk.nonfinite, 1);
	ck_assert_int_eq(chk.seqs_checked, 1);
	instance_free(&in);
	kvb_cpu_free(cpu);
}
END_TEST

START_TEST(test_error_missing_token)
{
	struct instance in;
	struct kvb_cpu *cpu;
	struct kvb_check chk;
	decode_small(&in, &cpu, t_dtypes[_i]);
	/* A backend that drops the last token of sequence 1 (an off-by-one):
	 * run with the length one short, judge with the true length. */
	in.kv.seq_lens[1]--;
	kvb_poison(in.o, in.n);
	ck_assert_int_eq(kvb_cpu_decode(cpu, &in.kv, in.q, in.o), 0);
	in.kv.seq_lens[1]++;
	ck_assert_int_eq(kvb_check_output(&in.kv, in.q, in.o, NULL, 0, NULL, &chk), 0);
	ck_assert_int_eq(chk.nonfinite, 0);
	ck_assert_int_eq(chk.worst_seq, 1);
	ck_assert(!kvb_check_passed(&in.kv, &chk));
	instance_free(&in);
	kvb_cpu_free(cpu);
}
END_TEST

START_TEST(test_error_reads_past_length)
{
	struct instance in;
	struct kvb_cpu *cpu;
	struct kvb_check chk;
	decode_small(&in, &cpu, t_dtypes[_i]);
	/* A backend that reads one slot past the length meets the NaN the
	 * fill put there (sequence 0: 5 tokens in blocks of 4, slot 5 unused). */
	in.kv.seq_lens[0]++;
	kvb_poison(in.o, in.n);
	ck_assert_int_eq(kvb_cpu_decode(cpu, &in.kv, in.q, in.o), 0);
	in.kv.seq_lens[0]--;
	ck_assert_int_eq(kvb_check_output(&in.kv, in.q, in.o, NULL, 0, NULL, &chk), 0);
	ck_assert_int_gt(chk.nonfinite, 0);
	ck_assert(!kvb_check_passed(&in.kv, &chk));
	instance_free(&in);
	kvb_cpu_free(cpu);
}
END_TEST

START_TEST(test_error_wrong_head)
{
	struct instance in;
	struct kvb_cpu *cpu;
	struct kvb_check chk;
	decode_small(&in, &cpu, KVB_DTYPE_FP16);
	/* Query head 2 given KV head 0's answer (head 0's output): a GQA
	 * mapping bug.  Heads 0-1 read KV head 0, heads 2-3 KV head 1. */
	memcpy(in.o + 2 * 16, in.o, 16 * sizeof(float));
	ck_assert_int_eq(kvb_check_output(&in.kv, in.q, in.o, NULL, 0, NULL, &chk), 0);
	ck_assert_int_eq(chk.worst_seq, 0);
	ck_assert_int_eq(chk.worst_head, 2);
	ck_assert(!kvb_check_passed(&in.kv, &chk));
	instance_free(&in);
	kvb_cpu_free(cpu);
}
END_TEST

START_TEST(test_error_bad_input)
{
	struct kvb_paged_kv kv;
	const int32_t lens[] = {4};
	const int32_t neg[] = {-1};
	struct kvb_shape s = {6, 4, 8, 16, KVB_DTYPE_FP32}; /* 4 does not divide 6 */
	enum kvb_dtype dt;
	enum kvb_lengths ld;
	ck_assert_int_eq(kvb_paged_kv_alloc(&kv, &s, 1, lens, 1), -1);
	s.h_kv = 2;
	ck_assert_int_eq(kvb_paged_kv_alloc(&kv, &s, 0, lens, 1), -1); /* no sequence */
	ck_assert_int_eq(kvb_paged_kv_alloc(&kv, &s, 1, neg, 1), -1);
	s.block_size = 0;
	ck_assert_int_eq(kvb_paged_kv_alloc(&kv, &s, 1, lens, 1), -1);
	kvb_paged_kv_free(&kv); /* safe after a failure */
	ck_assert_int_eq(kvb_dtype_parse("bf16", &dt), 0);
	ck_assert_int_eq(dt, KVB_DTYPE_BF16);
	ck_assert_int_eq(kvb_dtype_parse("e4m3", &dt), 0);
	ck_assert_int_eq(dt, KVB_DTYPE_FP8);
	ck_assert_int_eq(kvb_dtype_parse("int4", &dt), -1);
	ck_assert_int_eq(kvb_dtype_parse("", &dt), -1);
	ck_assert_int_eq(kvb_lengths_parse("zipf", &ld), -1);
	struct kvb_cpu *cpu;
	ck_assert_int_eq(kvb_cpu_create(1, &cpu), 0);
	ck_assert_int_eq(kvb_cpu_set_isa(cpu, "sve2"), -1);
	ck_assert_str_eq(kvb_cpu_isa(cpu), kvb_cpu_isa(cpu)); /* unchanged, valid */
	kvb_cpu_free(cpu);
}
END_TEST

/* Uniform lengths lie in [1, 2c - 1] with mean about c; fixed are all c. */
START_TEST(test_lengths)
{
	int32_t l[1000];
	double sum = 0;
	kvb_lengths_make(KVB_LENGTHS_UNIFORM, 1000, 100, 9, l);
	for (int i = 0; i < 1000; i++) {
		ck_assert(l[i] >= 1 && l[i] <= 199);
		sum += l[i];
	}
	/* mean 100, sd of the mean about 57 / sqrt(1000) = 1.8: 6 sd is 11 */
	ck_assert_double_eq_tol(sum / 1000, 100, 11);
	kvb_lengths_make(KVB_LENGTHS_FIXED, 3, 42, 9, l);
	ck_assert(l[0] == 42 && l[1] == 42 && l[2] == 42);
}
END_TEST

/* An fp8 NaN code (S.1111.111: 0x7f and 0xff) in a token's K or V must
 * reach the output on every ISA: the in-place widening (FP8_FP16_BITS in
 * decode-cpu-vec.h) turns the codes into fp16 bits, where a NaN code read
 * as a number would pass for +-480 and vanish into the softmax.  One code
 * at token 3 of head 1, element 37, of a 20-token sequence (MHA 2:2, P
 * 16), at d 128 (the 32-wide reads) and d 48 (32 + 16): a K NaN spoils
 * head 1's score and so its output, a V NaN its element 37; head 0 stays
 * finite in both. */
START_TEST(test_fp8_nan_reaches_output)
{
	const int dims[] = {128, 48};
	const uint8_t codes[] = {0x7f, 0xff};
	const int32_t lens[] = {20};
	const char *names[4];
	const int nisa = isas(names);
	for (int k = 0; k < nisa; k++)
		for (int di = 0; di < 2; di++)
			for (int c = 0; c < 2; c++)
				for (int in_v = 0; in_v < 2; in_v++) {
					const struct kvb_shape s = {2, 2, dims[di], 16, KVB_DTYPE_FP8};
					struct kvb_cpu *cpu;
					struct instance in;
					ck_assert_int_eq(kvb_cpu_create(1, &cpu), 0);
					ck_assert_int_eq(kvb_cpu_set_isa(cpu, names[k]), 0);
					instance_make(&in, &s, 1, lens, 77, cpu);
					const int64_t e = kvb_row_index(&s, in.kv.block_tables[0], 1, 3) + 37;
					uint8_t *pool = in_v ? in.kv.v_pool : in.kv.k_pool;
					pool[e] = codes[c];
					ck_assert_int_eq(kvb_cpu_decode(cpu, &in.kv, in.q, in.o), 0);
					int head0_nan = 0, head1_nan = 0;
					for (int j = 0; j < s.d; j++) {
						head0_nan += isnan(in.o[j]) != 0;
						head1_nan += isnan(in.o[s.d + j]) != 0;
					}
					ck_assert_msg(head0_nan == 0, "%s d %d code 0x%02x in %s: head 0 has %d NaN",
						      names[k], s.d, codes[c], in_v ? "V" : "K", head0_nan);
					if (in_v)
						ck_assert_msg(isnan(in.o[s.d + 37]),
							      "%s d %d code 0x%02x in V: element 37 is %g", names[k],
							      s.d, codes[c], in.o[s.d + 37]);
					else
						ck_assert_msg(head1_nan == s.d,
							      "%s d %d code 0x%02x in K: %d of %d outputs NaN",
							      names[k], s.d, codes[c], head1_nan, s.d);
					instance_free(&in);
					kvb_cpu_free(cpu);
				}
}
END_TEST

static Suite *decode_suite(void)
{
	Suite *s = suite_create("decode");
	TCase *core = tcase_create("core");
	TCase *errors = tcase_create("errors");
	tcase_set_timeout(core, 120);
	tcase_add_loop_test(core, test_cpu_matches_reference, 0, N_SHAPES);
	tcase_add_test(core, test_cpu_split_sequences);
	tcase_add_test(core, test_cpu_empty_sequence);
	tcase_add_loop_test(core, test_cpu_gqa_edges, 0, N_DT * N_GROUPS);
	tcase_add_loop_test(core, test_cpu_unit_heads, 0, N_DT * N_UH_SHAPES);
	tcase_add_test(core, test_cpu_unit_heads_split);
	tcase_add_test(core, test_cpu_fma_peak);
	tcase_add_loop_test(core, test_known_answer, 0, N_DT);
	tcase_add_test(core, test_known_answer_even);
	tcase_add_test(core, test_conversions);
	tcase_add_test(core, test_fp8_nan_reaches_output);
	tcase_add_test(core, test_exp2);
	tcase_add_test(core, test_bytes);
	tcase_add_test(core, test_blocks_distinct);
	tcase_add_test(core, test_fill_scaled);
	tcase_add_test(core, test_hot_cache);
	tcase_add_test(core, test_hot_cache_aliased);
	tcase_add_test(core, test_stream_ceiling);
	tcase_add_test(core, test_lengths);
	tcase_add_test(errors, test_error_unwritten_element);
	tcase_add_loop_test(errors, test_error_missing_token, 0, N_DT);
	tcase_add_loop_test(errors, test_error_reads_past_length, 0, N_DT);
	tcase_add_test(errors, test_error_wrong_head);
	tcase_add_test(errors, test_error_bad_input);
	suite_add_tcase(s, core);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(decode_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
