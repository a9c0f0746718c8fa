/* decode.h: the paged KV layout and the decode-attention interface of kvbench.
 *
 * One decode step: each of B sequences has one query token; every query head
 * attends over all cached tokens of its sequence through the KV head it
 * shares with its group.  The cache lives in a pool of fixed-size blocks and
 * each sequence reaches its blocks through a block table, as in vLLM.  The CPU
 * reference (decode-ref.c), the fast CPU backend (decode-cpu.c) and the CUDA
 * backend (decode-cuda.cu) all read this one layout, and each backend is
 * checked against the reference before anything is timed.
 *
 * Legend: B = sequences, H_q = query heads, H_kv = KV heads, g = H_q / H_kv
 * (query heads per KV head), d = head dim, P = block (page) size in tokens,
 * N = blocks in the pool, M = block-table row length (blocks per sequence, max).
 *
 * Layout (HND, separate K and V pools of the same shape):
 *   k_pool, v_pool  [N][H_kv][P][d]  elements of the KV dtype; one (block, KV
 *                   head) is a contiguous run of P*d elements
 *   k_scales, v_scales  int8 only: [N][H_kv][P] fp32, one per token per head
 *   k_scale, v_scale    fp8 only: one fp32 per tensor
 *   block_tables    [B][M] int32; entry j of sequence b holds tokens
 *                   [j*P, (j+1)*P) of b
 *   seq_lens        [B] int32, tokens cached per sequence
 *   q, o            [B][H_q][d] fp32; query head h reads KV head h / g
 * A stored value x means x * scale for fp8 and int8 (scale 1 otherwise).
 * Scores are (q . k) * sm_scale (1/sqrt(d) by default); the softmax runs over
 * the sequence's seq_lens[b] tokens and nothing beyond.  A sequence of length
 * 0 gets an output of zeros.  Offsets are computed in 64 bits.
 *
 * Names: kvb_ for the harness (kvbench); the planner's library uses kvp_.
 * This header is C11 and also compiles as C++ for nvcc. */
#ifndef KVB_DECODE_H
#define KVB_DECODE_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

enum kvb_dtype {
	KVB_DTYPE_FP32 = 0,
	KVB_DTYPE_FP16,
	KVB_DTYPE_BF16,
	KVB_DTYPE_FP8,  /* e4m3 (OCP "fn": no infinities, max 448), fp32 scale per tensor */
	KVB_DTYPE_INT8, /* symmetric, fp32 scale per token per KV head */
	KVB_DTYPE_COUNT
};

struct kvb_shape {
	int h_q;        /* H_q */
	int h_kv;       /* H_kv; must divide H_q */
	int d;          /* head dim */
	int block_size; /* P, tokens per block */
	enum kvb_dtype dtype;
};

struct kvb_paged_kv {
	struct kvb_shape shape;
	int32_t batch;      /* B */
	int32_t num_blocks; /* N */
	int32_t max_blocks; /* M */
	float sm_scale;     /* softmax scale, 1/sqrt(d) unless a test sets it */
	void *k_pool;       /* [N][H_kv][P][d] */
	void *v_pool;
	float *k_scales;    /* int8: [N][H_kv][P]; NULL otherwise */
	float *v_scales;
	float k_scale;      /* fp8: per tensor; 1 otherwise */
	float v_scale;
	int32_t *block_tables; /* [B][M] */
	int32_t *seq_lens;     /* [B] */
	/* 0: the pools are kvb_big_alloc's; else each is a mapping of this many
	 * bytes (the hot cache's aliased pages, kvb_paged_kv_make_hot) */
	size_t k_map_bytes, v_map_bytes;
};

/* ---------------------------------------------------------------- dtypes */

/* "fp32", "fp16", "bf16", "fp8", "int8". */
const char *kvb_dtype_name(enum kvb_dtype dtype);
/* Parse a dtype name (also "fp8_e4m3", "e4m3", "float32", "half",
 * "bfloat16"); 0 on success, -1 when unknown. */
int kvb_dtype_parse(const char *s, enum kvb_dtype *out);
/* Bytes per stored element: 4, 2, 2, 1, 1. */
size_t kvb_dtype_bytes(enum kvb_dtype dtype);
/* Largest error a backend may show against the reference for this KV
 * dtype, in the metric of struct kvb_check (error divided by
 * sum_t p_t |v_t|).  Every dtype's stored values convert to fp32 exactly,
 * so the bound is about arithmetic only: fp32 KV must be computed in fp32;
 * 16- and 8-bit KV leave room for a backend that multiplies in bf16/fp16
 * (tensor cores, packed conversions) with fp32 accumulation. */
double kvb_dtype_tolerance(enum kvb_dtype dtype);

/* ------------------------------------------------------------ conversions
 * Plain-C conversions shared by the reference, the CPU backend and the data
 * generator.  Narrowing rounds to nearest even; fp8 saturates to +-448. */

static inline float kvb_bits_to_float(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof f);
	return f;
}

static inline uint32_t kvb_float_to_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof u);
	return u;
}

static inline float kvb_bf16_to_float(uint16_t h)
{
	return kvb_bits_to_float((uint32_t)h << 16);
}

static inline uint16_t kvb_float_to_bf16(float f)
{
	uint32_t u = kvb_float_to_bits(f);
	if ((u & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it quiet and a NaN */
		return (uint16_t)((u >> 16) | 0x40);
	u += 0x7fffu + ((u >> 16) & 1u);
	return (uint16_t)(u >> 16);
}

/* a where mask is all ones, b where it is 0: a select written so that
 * compilers vectorize loops around it at -O2. */
static inline uint32_t kvb_select(uint32_t mask, uint32_t a, uint32_t b)
{
	return (a & mask) | (b & ~mask);
}

/* IEEE binary16.  Branch-free so loops over rows vectorize: the magnitude
 * bits shifted into fp32 position and rebiased (15 -> 127); subnormals
 * (exponent 0) are m * 2^-24 exactly; exponent 31 is infinity or NaN. */
static inline float kvb_fp16_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
	uint32_t exp = h & 0x7c00u;
	uint32_t mag = h & 0x7fffu;
	uint32_t normal = (mag << 13) + (112u << 23);
	uint32_t special = (mag << 13) | 0x7f800000u;
	float sub = (float)(int32_t)(h & 0x3ffu) * (1.0f / 16777216.0f);
	uint32_t bits = kvb_select(0u - (uint32_t)(exp == 0x7c00u), special, normal);
	bits = kvb_select(0u - (uint32_t)(exp == 0), kvb_float_to_bits(sub), bits);
	return kvb_bits_to_float(bits | sign);
}

static inline uint16_t kvb_float_to_fp16(float f)
{
	uint32_t u = kvb_float_to_bits(f);
	uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
	uint32_t a = u & 0x7fffffffu;
	if (a > 0x7f800000u)
		return (uint16_t)(sign | 0x7e00u);
	if (a >= 0x477ff000u) /* rounds to 65520 or more: infinity */
		return (uint16_t)(sign | 0x7c00u);
	if (a < 0x38800000u) { /* below 2^-14: subnormal half, step 2^-24 */
		float m = kvb_bits_to_float(a) * 16777216.0f; /* exact */
		uint32_t q = (uint32_t)m;
		float rem = m - (float)q;
		if (rem > 0.5f || (rem == 0.5f && (q & 1u)))
			q++;
		return (uint16_t)(sign | q);
	}
	a += 0x0fffu + ((a >> 13) & 1u);
	return (uint16_t)(sign | ((a - (112u << 23)) >> 13));
}

/* OCP fp8 e4m3fn: bias 7, 3 mantissa bits, no infinities, S.1111.111 = NaN,
 * largest finite 448 (0x7e), smallest subnormal 2^-9 (0x01). */
static inline float kvb_e4m3_to_float(uint8_t x)
{
	uint32_t sign = (uint32_t)(x & 0x80u) << 24;
	uint32_t mag = x & 0x7fu;
	uint32_t normal = (mag << 20) + (120u << 23);
	float sub = (float)(int32_t)(x & 0x7u) * (1.0f / 512.0f);
	uint32_t bits = kvb_select(0u - (uint32_t)((x & 0x78u) == 0), kvb_float_to_bits(sub), normal);
	bits = kvb_select(0u - (uint32_t)(mag == 0x7fu), 0x7fc00000u, bits);
	return kvb_bits_to_float(bits | sign);
}

static inline uint8_t kvb_float_to_e4m3(float f)
{
	uint32_t u = kvb_float_to_bits(f);
	uint8_t sign = (uint8_t)((u >> 24) & 0x80u);
	float a = fabsf(f);
	if (a != a)
		return (uint8_t)(sign | 0x7fu);
	if (a >= 448.0f)
		return (uint8_t)(sign | 0x7eu);
	if (a < 0.015625f) { /* below 2^-6: subnormal, step 2^-9 */
		float m = a * 512.0f;
		uint32_t q = (uint32_t)m;
		float rem = m - (float)q;
		if (rem > 0.5f || (rem == 0.5f && (q & 1u)))
			q++;
		return (uint8_t)(sign | q); /* q == 8 is 2^-6, the first normal */
	}
	uint32_t b = kvb_float_to_bits(a);
	b += 0x7ffffu + ((b >> 20) & 1u);
	uint32_t r = (b - (120u << 23)) >> 20;
	if (r > 0x7eu)
		r = 0x7eu;
	return (uint8_t)(sign | r);
}

/* Value of stored element i of a pool of this dtype, before any scale. */
static inline float kvb_load(enum kvb_dtype dtype, const void *pool, int64_t i)
{
	switch (dtype) {
	case KVB_DTYPE_FP32: return ((const float *)pool)[i];
	case KVB_DTYPE_FP16: return kvb_fp16_to_float(((const uint16_t *)pool)[i]);
	case KVB_DTYPE_BF16: return kvb_bf16_to_float(((const uint16_t *)pool)[i]);
	case KVB_DTYPE_FP8: return kvb_e4m3_to_float(((const uint8_t *)pool)[i]);
	case KVB_DTYPE_INT8: return (float)((const int8_t *)pool)[i];
	default: return NAN;
	}
}

/* ---------------------------------------------------------------- layout */

/* Element index of token slot `slot` (0 <= slot < P) of KV head h in block
 * `block`; the row of d elements starts there. */
static inline int64_t kvb_row_index(const struct kvb_shape *s, int32_t block, int h, int slot)
{
	return (((int64_t)block * s->h_kv + h) * s->block_size + slot) * s->d;
}

/* Index into k_scales / v_scales for the same token slot. */
static inline int64_t kvb_scale_index(const struct kvb_shape *s, int32_t block, int h, int slot)
{
	return ((int64_t)block * s->h_kv + h) * s->block_size + slot;
}

/* 0 when the shape is usable: positive fields, H_kv divides H_q, dtype known. */
int kvb_shape_check(const struct kvb_shape *s);

/* Page-aligned memory for big buffers (transparent huge pages asked for
 * when the buffer is large); NULL when short.  Free with kvb_big_free. */
void *kvb_big_alloc(uint64_t bytes);
void kvb_big_free(void *p);

/* splitmix64: the harness's one random source; deterministic per seed. */
static inline uint64_t kvb_rng_next(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1), 24 bits. */
static inline float kvb_rng_float(uint64_t *state)
{
	return (float)(kvb_rng_next(state) >> 40) * (1.0f / 16777216.0f);
}

/* ------------------------------------------------------------- instances
 * paged.c: build a paged cache for a batch, fill it with random data. */

enum kvb_lengths {
	KVB_LENGTHS_FIXED = 0, /* every sequence has `context` tokens */
	KVB_LENGTHS_UNIFORM    /* uniform on [1, 2*context - 1]: mean `context` */
};

/* "fixed" or "uniform"; 0 on success, -1 when unknown. */
int kvb_lengths_parse(const char *s, enum kvb_lengths *out);
const char *kvb_lengths_name(enum kvb_lengths dist);
/* Draw B sequence lengths (each >= 1) into out[B]. */
void kvb_lengths_make(enum kvb_lengths dist, int32_t batch, int32_t context, uint64_t seed,
		      int32_t *out);

/* Allocate a cache for `batch` sequences of lengths seq_lens[] (copied):
 * exactly sum_b ceil(len_b / P) blocks, each sequence given distinct
 * blocks in a random order (seeded), so no two sequences share memory and
 * consecutive blocks of a sequence are not neighbours in the pool.  Pools
 * are 4 KiB aligned.  Contents are unset until kvb_paged_kv_fill.  Returns
 * 0, or -1 when memory is short or a size overflows (kv is then empty and
 * safe to free).  sm_scale is set to 1/sqrt(d). */
int kvb_paged_kv_alloc(struct kvb_paged_kv *kv, const struct kvb_shape *shape, int32_t batch,
		       const int32_t *seq_lens, uint64_t seed);
void kvb_paged_kv_free(struct kvb_paged_kv *kv);

struct kvb_cpu;

/* Fill K and V with random values in (-2, 2), never zero on average (the
 * amplitude of each row is drawn in [0.25, 2]), stored in the KV dtype:
 * fp8 with a per-tensor scale, int8 with its per-row scales.  Slots past a
 * sequence's length in its last block get NaN (or a NaN scale for int8),
 * so a backend that reads beyond the length produces NaN.  Runs on `cpu`'s
 * threads when cpu is not NULL.  Deterministic for a seed whatever the
 * thread count.  Returns 0, or -1 when memory is short. */
int kvb_paged_kv_fill(struct kvb_paged_kv *kv, uint64_t seed, struct kvb_cpu *cpu);
/* The same fill with K's amplitudes multiplied by k_mul and V's by v_mul
 * (> 0; 1 and 1 is kvb_paged_kv_fill): int8's per-row scales and fp8's
 * per-tensor scales (set here to 2 mul / 448) follow, the stored codes
 * keep their range, so a backend that mishandles small or large scales
 * shows it.  The same random draws for every factor. */
int kvb_paged_kv_fill_scaled(struct kvb_paged_kv *kv, uint64_t seed, struct kvb_cpu *cpu,
			     float k_mul, float v_mul);
/* n query values uniform in (-2, 2). */
void kvb_queries_fill(float *q, size_t n, uint64_t seed);
/* A cache whose every block-table entry is the same one full block, filled
 * (no NaN slot): the decode's loops run as on a cache of these lengths and
 * this shape, but each (sequence, KV head) reads one block's P rows of K and
 * V over and over.  One block holds all H_kv heads (H_kv P d b bytes each of
 * K and V: 256 KiB at 32 heads, P 16, d 128, fp32, the core's L2), so where
 * the system has mmap the block's K and V are each one page (its first),
 * mapped at every page of the block: the loops read the same addresses as
 * over a real block, and the data sits in L1 for every shape (K and V 4 KiB
 * each), so the run measures the loops' own ceiling, not memory's or L2's.
 * Output is not checked against the reference (the reference reads the
 * same aliased blocks, so it could be).  Returns 0, or -1 when memory is
 * short or a size overflows (kv is then empty and safe to free). */
int kvb_paged_kv_make_hot(struct kvb_paged_kv *kv, const struct kvb_shape *shape, int32_t batch,
			  const int32_t *seq_lens, uint64_t seed, struct kvb_cpu *cpu);

/* Unmap a pool that kvb_paged_kv_make_hot mapped (`bytes` long). */
void kvb_pool_unmap(void *p, size_t bytes);

/* Bytes a decode step must move, the way the harness credits them: K and V
 * of the valid tokens in the stored dtype, their scales (int8: 2 floats per
 * token per KV head; fp8: 2 floats), Q and O.  *table_bytes gets the block
 * table entries read (counted apart, never credited).  -1 on overflow. */
int kvb_paged_kv_bytes(const struct kvb_paged_kv *kv, uint64_t *moved_bytes,
		       uint64_t *table_bytes);
/* Bytes the pool occupies (K + V + scales): what the cache costs in memory. */
uint64_t kvb_pool_bytes(const struct kvb_shape *shape, int64_t num_blocks);
/* Bytes of one block for all KV heads, K + V + scales. */
uint64_t kvb_block_bytes(const struct kvb_shape *shape);

/* ------------------------------------------------------------- reference
 * decode-ref.c: plain loops in double precision, two passes. */

/* The reference output of sequence b: o[H_q][d] and, beside it,
 * mag[H_q][d] = sum_t p_t |v_t[i]| (the size of the sum, which the error
 * is measured against).  Either pointer may be NULL. */
void kvb_decode_ref(const struct kvb_paged_kv *kv, const float *q, int32_t b, double *o,
		    double *mag);

struct kvb_check {
	double max_err;    /* max over checked elements of |o - ref| / mag */
	int64_t nonfinite; /* elements of the whole output that are NaN or inf */
	int32_t worst_seq, worst_head, worst_i; /* where max_err was seen */
	int32_t seqs_checked;
};

/* Check a backend's output o[B][H_q][d]: every element for finiteness (the
 * caller poisons o with NaN before the run, so unwritten elements show up
 * here), and the sequences listed in seqs[0..nseqs) (all when seqs is NULL)
 * against the reference, on cpu's threads when cpu is not NULL.  Returns 0,
 * or -1 when memory is short. */
int kvb_check_output(const struct kvb_paged_kv *kv, const float *q, const float *o,
		     const int32_t *seqs, int nseqs, struct kvb_cpu *cpu, struct kvb_check *res);
/* True when res passes the bound of the cache's dtype. */
int kvb_check_passed(const struct kvb_paged_kv *kv, const struct kvb_check *res);
/* Set n floats to NaN. */
void kvb_poison(float *o, size_t n);

/* ------------------------------------------------------------ CPU backend
 * decode-cpu.c: a pool of threads; one work unit per (sequence, KV head)
 * for its whole query group, split along the sequence when there are too
 * few units for the threads. */

/* Start `threads` workers (>= 1; the caller's thread is worker 0).
 * Returns 0, or -1 with errno set. */
int kvb_cpu_create(int threads, struct kvb_cpu **out);
void kvb_cpu_free(struct kvb_cpu *cpu);
int kvb_cpu_threads(const struct kvb_cpu *cpu);
/* Run fn(arg, tid, nthreads) on every worker and wait for all. */
void kvb_cpu_parallel(struct kvb_cpu *cpu, void (*fn)(void *arg, int tid, int nthreads),
		      void *arg);
/* The instruction set the decode's inner loops use: "base" (SSE2 on
 * x86-64, NEON on arm64, plain C elsewhere), "avx2" (AVX2, FMA, F16C) or
 * "avx512" (those and AVX-512 F, BW, DQ, VL), the widest the CPU runs unless set.  kvb_cpu_set_isa returns -1 when the CPU (or this build)
 * lacks the one named. */
const char *kvb_cpu_isa(const struct kvb_cpu *cpu);
int kvb_cpu_set_isa(struct kvb_cpu *cpu, const char *name);
/* Whether the decode prefetches the K and V rows it reads next in software:
 * KVB_PREFETCH_ALL (the default) the next head's rows of the chunk and,
 * after a unit's last head, the next chunk's; KVB_PREFETCH_JUMP only the
 * next chunk's first head (the jump to other blocks, which no hardware
 * prefetcher guesses; the heads after it lie side by side in the block,
 * a run the L2 streamer can follow); KVB_PREFETCH_OFF none.  Set from the
 * environment when the pool is made: KVB_PREFETCH=0 or jump.  Any other
 * value given to kvb_cpu_set_prefetch means ALL. */
enum { KVB_PREFETCH_OFF = 0, KVB_PREFETCH_ALL = 1, KVB_PREFETCH_JUMP = 2 };
/* "on", "off" or "jump", for the records */
const char *kvb_cpu_prefetch_name(const struct kvb_cpu *cpu);
int kvb_cpu_prefetch(const struct kvb_cpu *cpu);
void kvb_cpu_set_prefetch(struct kvb_cpu *cpu, int on);
/* KV heads per unit of work: 0 (the default unless the environment has
 * KVB_UNIT_HEADS=N when the pool is made) chooses per shape; N > 0 takes
 * N heads at a time where N divides H_kv, one head where it does not. */
int kvb_cpu_unit_heads(const struct kvb_cpu *cpu);
void kvb_cpu_set_unit_heads(struct kvb_cpu *cpu, int nh);
/* The multiply-add peak of one thread in GFLOP/s (2 FLOP per lane and
 * multiply-add) in the decode's instruction set, all threads running at
 * once: the best of `repeats` runs, averaged over the threads.  The
 * compute ceiling beside the read ceiling.  0 when memory is short. */
double kvb_cpu_fma_peak_gflops(struct kvb_cpu *cpu, int repeats);
/* One decode step: o[B][H_q][d] from q[B][H_q][d].  Returns 0, or -1 when
 * scratch memory could not be had. */
int kvb_cpu_decode(struct kvb_cpu *cpu, const struct kvb_paged_kv *kv, const float *q, float *o);
/* exp2 of n values in place, for x <= 0 (the softmax's range): relative
 * error below 1e-6, 0 for x < -126 and for -inf, NaN for NaN.  Exported
 * for tests. */
void kvb_exp2_nonpos(float *x, int n);

/* --------------------------------------------------------------- ceilings
 * stream.c (CPU) and decode-cuda.cu (GPU): streaming bandwidth measured in
 * the same run, GB/s = 10^9 bytes per second, STREAM counting (bytes named
 * by the loop: read 1x, copy 2x, triad 3x; write-allocate not credited). */

struct kvb_ceiling {
	double read_gbps;  /* read-only sum over the buffer */
	double copy_gbps;  /* a[i] = b[i] */
	double triad_gbps; /* a[i] = b[i] + s * c[i] */
	uint64_t array_bytes;
};

/* Best of `repeats` runs of each kernel over arrays of array_bytes each on
 * cpu's threads.  Returns 0, or -1 when memory is short. */
int kvb_stream_cpu(struct kvb_cpu *cpu, uint64_t array_bytes, int repeats,
		   struct kvb_ceiling *out);
/* The read-only kernel alone over an existing buffer: the best GB/s of
 * `repeats` timed passes after an untimed one.  kvbench measures it beside
 * each point, so that a machine whose load changes during a sweep is
 * compared with itself. */
double kvb_stream_cpu_read(struct kvb_cpu *cpu, const void *buf, uint64_t bytes, int repeats);
/* Bytes of the last-level cache (sysfs, then sysconf), 0 when unknown. */
uint64_t kvb_llc_bytes(void);
/* Memory the machine can give without swapping (/proc/meminfo's
 * MemAvailable), 0 when unknown. */
uint64_t kvb_mem_available_bytes(void);
/* Read `bytes` of buf on cpu's threads so the caches hold it and nothing
 * of a run before; returns a sum so the reads are kept. */
double kvb_cpu_flush(struct kvb_cpu *cpu, const void *buf, uint64_t bytes);

/* ----------------------------------------------------------- CUDA backend
 * decode-cuda.cu, built when configure finds nvcc (HAVE_CUDA).  Every call
 * returns 0 or one of these; kvb_cuda_error() says what went wrong. */

enum kvb_cuda_status {
	KVB_CUDA_OK = 0,
	KVB_CUDA_NO_DEVICE = 1,   /* no device, or no driver */
	KVB_CUDA_FAILED = 2,      /* a CUDA call failed */
	KVB_CUDA_UNSUPPORTED = 3, /* a shape the CUDA kernels do not cover */
	KVB_CUDA_NOMEM = 4,       /* device or host memory short */
	KVB_CUDA_OLD_DRIVER = 5   /* a driver older than the toolkit kvbench was built with */
};

struct kvb_cuda_info {
	char name[256];
	int cc_major, cc_minor;
	int sm_count;
	int l2_bytes;
	int mem_clock_khz;
	int bus_width_bits;
	int driver_version, runtime_version;
	uint64_t total_bytes, free_bytes;
	double datasheet_gbps; /* 2 * bus width * memory clock, as TRT-LLM XQA computes it */
};

struct kvb_cuda_decode;

/* Device 0's properties; KVB_CUDA_NO_DEVICE when there is none. */
int kvb_cuda_probe(struct kvb_cuda_info *info);
const char *kvb_cuda_error(void);
/* Head dims and dtypes the kernels are built for; 1 when covered. */
int kvb_cuda_supports(const struct kvb_shape *shape);
/* Upload the cache and the queries; choose the split of each sequence. */
int kvb_cuda_decode_create(const struct kvb_paged_kv *kv, const float *q,
			   struct kvb_cuda_decode **out);
/* Chunks each sequence is cut into (1 when not split) and tokens per chunk. */
void kvb_cuda_decode_split(const struct kvb_cuda_decode *dc, int *splits, int *chunk_tokens);
/* "tensor-core", "tensor-core-2stage" or "cuda-core": the kernel this
 * decode launches (the tensor-core one for 16- and 8-bit KV unless
 * KVBENCH_CUDA_KERNEL is cuda-core; with a 2-stage pipeline where the
 * GPU's shared memory per block cannot hold 3, and the CUDA-core one where
 * it cannot hold 2: 16-bit d 256 on sm_86/89). */
const char *kvb_cuda_decode_kernel(const struct kvb_cuda_decode *dc);
/* Poison the device output with NaN, run one step, copy o back. */
int kvb_cuda_decode_run(struct kvb_cuda_decode *dc, float *o);
/* warmup untimed runs, then `repeats` runs each timed alone with events,
 * the L2 flushed before each (a read of twice its size); times_s[repeats]. */
int kvb_cuda_decode_time(struct kvb_cuda_decode *dc, int warmup, int repeats, double *times_s);
void kvb_cuda_decode_free(struct kvb_cuda_decode *dc);
/* Read-only, copy and triad kernels over arrays of array_bytes each, timed
 * with events, best of `repeats`. */
int kvb_cuda_stream(uint64_t array_bytes, int repeats, struct kvb_ceiling *out);
/* Capacity: cudaMalloc weights_bytes (and write them), then blocks of
 * block_bytes in chunks, each written, until limit_bytes in all (weights
 * included) are allocated or cudaMalloc fails; *blocks gets the blocks
 * really allocated, *refused 1 when cudaMalloc said no while the limit
 * still had room for a block (the device's real limit was reached), 0 when
 * the limit stopped it.  Everything is freed before it returns. */
int kvb_cuda_capacity(uint64_t weights_bytes, uint64_t limit_bytes, uint64_t block_bytes,
		      int64_t *blocks, int *refused);
/* Device memory free now (cudaMemGetInfo), for a point's estimate. */
int kvb_cuda_free_bytes(uint64_t *free_bytes);

#ifdef __cplusplus
}
#endif

#endif
