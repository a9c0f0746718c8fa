/* decode-cpu.c: the fast CPU backend of the decode, and the thread pool the
 * harness runs everything parallel on.
 *
 * Stance: decode is a stream over the KV cache, so the job is to read each
 * K and V row once and keep the cores busy enough to saturate memory.  One
 * work unit is a sequence and nh consecutive KV heads (nh 1 where units are
 * few, else up to 16 query heads' worth: a block stores its heads side by
 * side, so each chunk taken for the nh heads in turn reads one long run
 * per block that the hardware prefetchers follow): it scales the g query rows of each
 * group once, then walks the sequence in chunks of CHUNK tokens (16, 32 or 64), resolving
 * block-table entries for a whole chunk up front and applying each K and V
 * row to all g query heads (rows are read in place and widened inside the
 * products: fp32 and bf16 always, fp16, int8 and fp8 in the AVX2 copy;
 * in the baseline copy those three are converted into an L1-sized tile
 * first), a block of K rows times a block of heads at a time (4 x 2 for
 * GQA, 1 x 4 for MHA), with an online softmax in fp32 and base-2
 * exponentials (log2(e) folded into the query).  When
 * there are fewer units than about four per thread, sequences are cut into
 * chunks of at least MIN_SPLIT tokens whose partial (max, sum, accumulator)
 * states are merged afterwards.  The rows read next (the next head's of
 * the chunk, or the next chunk's) are prefetched while these compute: a
 * sequence's blocks are scattered, so no hardware prefetcher guesses the
 * jump to the next block.  The inner loops
 * (decode-cpu-attend.h) are built for the baseline ISA and, on x86-64, for
 * AVX2 + FMA + F16C and for AVX-512, chosen at run time: the default -O2
 * build assumes nothing about the CPU yet uses what it has. */
#include "decode.h"
#include "rounds.h"
#include "timing.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LANES 16      /* width of the unrolled inner loops */
#define CHUNK_MAX 64  /* tokens per softmax update, the larger of the copies' CHUNK */
#define MIN_SPLIT 512 /* fewest tokens worth a split of their own */
#define LOG2E 1.4426950408889634f

/* ------------------------------------------------------------- the pool */

struct kvb_cpu {
	int threads;
	pthread_t *tids;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	unsigned long generation; /* bumped for each job */
	int pending;              /* workers still running the job */
	int quit;
	void (*fn)(void *, int, int);
	void *arg;
	int isa; /* index into isas[] */
	/* per worker, 8 doubles apart (a line each): the CPU and wall seconds
	 * spent inside jobs since kvb_cpu_round_begin (rounds.h) */
	double *busy;
	double round_t0_s;
	/* the test hook (kvb_cpu_stall): the next job's last worker first
	 * sleeps (or spins, stall_spin) stall_s inside its accounted time */
	double stall_s;
	int stall_spin;
	int prefetch; /* KVB_PREFETCH_*: software prefetch of the rows read next (KVB_PREFETCH) */
	int unit_heads; /* KV heads per unit of work, 0: chosen per shape (KVB_UNIT_HEADS) */
	/* decode scratch, grown on demand */
	float *scratch;       /* threads * scratch_floats */
	size_t scratch_floats;
	struct unit *units;
	size_t units_cap;
	float *partials;
	size_t partials_cap;
};

struct worker_arg {
	struct kvb_cpu *cpu;
	int tid;
};

#define BUSY_STRIDE 8 /* doubles per worker in busy[]: cpu s, wall s, padding */

/* Lose `s` seconds off the CPU (nanosleep) or on it (a spin on the thread's
 * CPU clock): the two faces of a slow worker that kvb_round_preempted must
 * tell apart. */
static void stall(double s, int spin)
{
	if (spin) {
		const double c0 = kvb_thread_cpu_s();
		while (kvb_thread_cpu_s() - c0 < s)
			;
		return;
	}
	struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
	while (nanosleep(&ts, &ts) != 0)
		;
}

/* fn on worker tid, its CPU and wall time added to busy[tid]; stall_s is
 * what the hook asks this worker to lose first (0: nothing). */
static void run_job(struct kvb_cpu *cpu, void (*fn)(void *, int, int), void *arg, int tid,
		    double stall_s, int stall_spin)
{
	const double w0 = kvb_now_s(), c0 = kvb_thread_cpu_s();
	if (stall_s > 0)
		stall(stall_s, stall_spin);
	fn(arg, tid, cpu->threads);
	double *b = cpu->busy + (size_t)tid * BUSY_STRIDE;
	b[0] += kvb_thread_cpu_s() - c0;
	b[1] += kvb_now_s() - w0;
}

static void *worker_main(void *p)
{
	struct worker_arg *wa = p;
	struct kvb_cpu *cpu = wa->cpu;
	int tid = wa->tid;
	unsigned long seen = 0;
	free(wa);
	pthread_mutex_lock(&cpu->mu);
	for (;;) {
		while (!cpu->quit && cpu->generation == seen)
			pthread_cond_wait(&cpu->go, &cpu->mu);
		if (cpu->quit)
			break;
		seen = cpu->generation;
		void (*fn)(void *, int, int) = cpu->fn;
		void *arg = cpu->arg;
		double st = 0;
		if (tid == cpu->threads - 1) { /* the hook's worker takes its stall */
			st = cpu->stall_s;
			cpu->stall_s = 0;
		}
		const int spin = cpu->stall_spin;
		pthread_mutex_unlock(&cpu->mu);
		run_job(cpu, fn, arg, tid, st, spin);
		pthread_mutex_lock(&cpu->mu);
		if (--cpu->pending == 0)
			pthread_cond_signal(&cpu->done);
	}
	pthread_mutex_unlock(&cpu->mu);
	return NULL;
}

int kvb_cpu_create(int threads, struct kvb_cpu **out)
{
	struct kvb_cpu *cpu = calloc(1, sizeof *cpu);
	int started = 0, rc;
	*out = NULL;
	if (!cpu)
		return -1;
	if (threads < 1)
		threads = 1;
	cpu->threads = threads;
	kvb_cpu_set_isa(cpu, NULL); /* the widest this CPU runs */
	const char *pf = getenv("KVB_PREFETCH");
	cpu->prefetch = pf && strcmp(pf, "0") == 0 ? KVB_PREFETCH_OFF
		      : pf && strcmp(pf, "jump") == 0 ? KVB_PREFETCH_JUMP : KVB_PREFETCH_ALL;
	const char *uh = getenv("KVB_UNIT_HEADS");
	cpu->unit_heads = uh ? atoi(uh) : 0;
	if (cpu->unit_heads < 0)
		cpu->unit_heads = 0;
	cpu->tids = calloc((size_t)threads, sizeof *cpu->tids);
	cpu->busy = aligned_alloc(64, (size_t)threads * BUSY_STRIDE * sizeof *cpu->busy);
	if (!cpu->tids || !cpu->busy) {
		free(cpu->tids);
		free(cpu->busy);
		free(cpu);
		return -1;
	}
	memset(cpu->busy, 0, (size_t)threads * BUSY_STRIDE * sizeof *cpu->busy);
	pthread_mutex_init(&cpu->mu, NULL);
	pthread_cond_init(&cpu->go, NULL);
	pthread_cond_init(&cpu->done, NULL);
	for (started = 1; started < threads; started++) {
		struct worker_arg *wa = malloc(sizeof *wa);
		if (!wa)
			goto fail;
		wa->cpu = cpu;
		wa->tid = started;
		rc = pthread_create(&cpu->tids[started], NULL, worker_main, wa);
		if (rc != 0) {
			free(wa);
			errno = rc;
			goto fail;
		}
	}
	*out = cpu;
	return 0;
fail:
	cpu->threads = started; /* join only those that run */
	rc = errno;
	kvb_cpu_free(cpu);
	errno = rc;
	return -1;
}

void kvb_cpu_free(struct kvb_cpu *cpu)
{
	if (!cpu)
		return;
	pthread_mutex_lock(&cpu->mu);
	cpu->quit = 1;
	pthread_cond_broadcast(&cpu->go);
	pthread_mutex_unlock(&cpu->mu);
	for (int i = 1; i < cpu->threads; i++)
		pthread_join(cpu->tids[i], NULL);
	pthread_cond_destroy(&cpu->go);
	pthread_cond_destroy(&cpu->done);
	pthread_mutex_destroy(&cpu->mu);
	free(cpu->tids);
	free(cpu->busy);
	free(cpu->scratch);
	free(cpu->units);
	free(cpu->partials);
	free(cpu);
}

int kvb_cpu_threads(const struct kvb_cpu *cpu)
{
	return cpu->threads;
}

void kvb_cpu_parallel(struct kvb_cpu *cpu, void (*fn)(void *arg, int tid, int nthreads), void *arg)
{
	if (cpu->threads == 1) {
		const double st = cpu->stall_s;
		cpu->stall_s = 0;
		run_job(cpu, fn, arg, 0, st, cpu->stall_spin);
		return;
	}
	pthread_mutex_lock(&cpu->mu);
	cpu->fn = fn;
	cpu->arg = arg;
	cpu->pending = cpu->threads - 1;
	cpu->generation++;
	pthread_cond_broadcast(&cpu->go);
	pthread_mutex_unlock(&cpu->mu);
	run_job(cpu, fn, arg, 0, 0, 0);
	pthread_mutex_lock(&cpu->mu);
	while (cpu->pending > 0)
		pthread_cond_wait(&cpu->done, &cpu->mu);
	pthread_mutex_unlock(&cpu->mu);
}

void kvb_cpu_round_begin(struct kvb_cpu *cpu)
{
	memset(cpu->busy, 0, (size_t)cpu->threads * BUSY_STRIDE * sizeof *cpu->busy);
	cpu->round_t0_s = kvb_now_s();
}

void kvb_cpu_round_end(struct kvb_cpu *cpu, struct kvb_round *r)
{
	r->wall_s = kvb_now_s() - cpu->round_t0_s;
	r->cpu_max_s = 0;
	r->off_max_s = 0;
	for (int t = 0; t < cpu->threads; t++) {
		const double *b = cpu->busy + (size_t)t * BUSY_STRIDE;
		r->cpu_max_s = b[0] > r->cpu_max_s ? b[0] : r->cpu_max_s;
		r->off_max_s = b[1] - b[0] > r->off_max_s ? b[1] - b[0] : r->off_max_s;
	}
	r->preempted = -1; /* the verdict is rounds.c's (kvb_round_preempted) */
}

void kvb_cpu_stall(struct kvb_cpu *cpu, double seconds, int spin)
{
	pthread_mutex_lock(&cpu->mu);
	cpu->stall_s = seconds > 0 ? seconds : 0;
	cpu->stall_spin = spin != 0;
	pthread_mutex_unlock(&cpu->mu);
}

/* ------------------------------------------------------------ row math */

/* y += a * x (the merge of split sequences). */
static inline void axpy(float *restrict y, float a, const float *restrict x, int d)
{
	for (int i = 0; i < d; i++)
		y[i] += a * x[i];
}

static inline void scale_row(float *restrict y, float a, int d)
{
	for (int i = 0; i < d; i++)
		y[i] *= a;
}

/* Apply BODY(k) for k in [0, n): LANES at a time, then the tail, so the
 * compiler sees fixed-width loops it vectorizes even at -O2. */
#define FOR_LANES(n, k, BODY)                                   \
	do {                                                    \
		int i_ = 0;                                     \
		for (; i_ + LANES <= (n); i_ += LANES)          \
			for (int l_ = 0; l_ < LANES; l_++) {    \
				int k = i_ + l_;                \
				BODY;                           \
			}                                       \
		for (; i_ < (n); i_++) {                        \
			int k = i_;                             \
			BODY;                                   \
		}                                               \
	} while (0)

/* 2^x for x <= 0: x = n + f with n = round(x), |f| <= 1/2; 2^f by its
 * Taylor series in f*ln2 to degree 7 (error below (ln2/2)^8/8! ~ 5e-9),
 * 2^n put straight into the exponent field.  The rounding uses the
 * 1.5*2^23 trick, which plain (non-fast-math) C keeps as written.  Below
 * -126 (and -inf) gives 0; NaN stays NaN, so a NaN score read from a
 * broken cache shows in the output. */
static inline float exp2_nonpos(float v)
{
	uint32_t nan = 0u - (uint32_t)(v != v);
	uint32_t small = 0u - (uint32_t)(v < -126.0f);
	uint32_t vb = kvb_select(small | nan, kvb_float_to_bits(-126.0f), kvb_float_to_bits(v));
	v = kvb_bits_to_float(vb);
	float r = (v + 12582912.0f) - 12582912.0f;
	float f = (v - r) * 0.69314718055994531f;
	float p = 1.0f / 5040.0f;
	p = p * f + 1.0f / 720.0f;
	p = p * f + 1.0f / 120.0f;
	p = p * f + 1.0f / 24.0f;
	p = p * f + 1.0f / 6.0f;
	p = p * f + 0.5f;
	p = p * f + 1.0f;
	p = p * f + 1.0f;
	int32_t e = (int32_t)r + 127;
	float two_n = kvb_bits_to_float((uint32_t)e << 23);
	uint32_t y = kvb_float_to_bits(p * two_n) & ~small;
	return kvb_bits_to_float(kvb_select(nan, 0x7fc00000u, y));
}

void kvb_exp2_nonpos(float *x, int n)
{
	FOR_LANES(n, i, x[i] = exp2_nonpos(x[i]));
}

/* ------------------------------------------------------------ the decode */

struct unit {
	int32_t b, t0, t1; /* sequence and its tokens [t0, t1) */
	int32_t h, nh;     /* KV heads [h, h + nh) */
	int64_t part;      /* head h's partial slot (head h + x's is x * splits[b]
			    * further), or -1: write o directly */
};

struct job {
	const struct kvb_paged_kv *kv;
	const float *q;
	float *o;
	struct kvb_cpu *cpu;
	struct unit *units;
	int64_t nunits;
	atomic_llong next;
	int32_t *splits;   /* [B] chunks per sequence */
	int64_t *part0;    /* [B] first partial slot of sequence b, per head */
	float *partials;   /* [slots][g][d + 2] */
	int32_t chunk_tokens;
};

/* Scratch floats one worker needs for a shape, nh KV heads a unit. */
static size_t scratch_need(const struct kvb_shape *s, int nh)
{
	size_t g = (size_t)(s->h_q / s->h_kv), d = (size_t)s->d, gh = g * (size_t)nh;
	/* qs, acc: nh*g*d; S: g*CHUNK; m, l: nh*g; K, V tiles: CHUNK*d; int8 scales: 2*CHUNK;
	 * VNNI's int16 query rows (2 per head: gh*d floats' room) and steps (gh) */
	size_t n = 2 * gh * d + g * CHUNK_MAX + 2 * gh + 2 * CHUNK_MAX * d + 2 * CHUNK_MAX + gh * d + gh;
	return (n + 15) / 16 * 16 + 16; /* keep each worker's block 64-byte aligned */
}

/* How the inner loops read a K or V row (decode-cpu-attend.h). */
enum { ROW_F32, ROW_BF16, ROW_FP16, ROW_INT8, ROW_FP8 };
/* What an fp8 row read in place (ROW_FP8) gives: the value times 2^-8. */
#define FP8_IN_PLACE 0x1p-8f

/* The inner loops, once per instruction set. */
#define CAT2_(a, b) a##b
#define CAT_(a, b) CAT2_(a, b)

/* CHUNK, tokens per softmax update: 16 in the baseline copy, whose K and V
 * tiles (16 KiB each at d 128) must stay in L1; 32 in the AVX2 copy, which
 * reads every dtype in place, so that the softmax's cost per chunk and
 * head is spread over more rows (3-15% per row in cache). */
#define VW 4
#define CHUNK 16
#define SFX(name) CAT_(name, _base)
#include "decode-cpu-attend.h"
#undef SFX
#undef CHUNK
#undef VW

/* On x86-64 two more copies: AVX2 with FMA and F16C (VW 8), and AVX-512
 * (VW 16, below), picked when the CPU has them.  Fused multiply-adds are
 * allowed there (fp-contract): they round once where a multiply and an add
 * round twice, so results only get closer to the reference. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(KVB_NO_DISPATCH)
#define KVB_X86_WIDE 1
#include <immintrin.h>
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
#pragma GCC optimize("fp-contract=fast")
#endif
#define VW 8
#define CHUNK 32
#define SFX(name) CAT_(name, _avx2)
#define KVB_F16C 1
#include "decode-cpu-attend.h"
#undef KVB_F16C
#undef SFX
#undef CHUNK
#undef VW
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

/* The AVX-512 copy (VW 16), picked over AVX2 where the CPU has AVX-512
 * F, BW, DQ and VL: each K or V row is read in half as many vectors, each
 * widening (int8, fp8, bf16) covers 16 values, and the 32 registers hold
 * 16 running sums (4 heads x 4 rows for GQA).  On a Sapphire Rapids (2
 * vCPUs) it read GQA-4 8-bit and bf16 KV a third to a half faster than the
 * AVX2 copy.  (An earlier AVX-512 copy with 8 sums measured slower on an
 * Ice Lake server.) */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")
#pragma GCC optimize("fp-contract=fast")
#endif
#define VW 16
/* 64: the softmax, the row setup and the calls per chunk spread over
 * twice the rows of the AVX2 copy's 32 (4-7% less per token in L1 for MHA
 * int8 and GQA-4 bf16, one thread's CPU time on an Emerald Rapids) */
#define CHUNK 64
#define SFX(name) CAT_(name, _avx512)
#define KVB_F16C 1
#define KVB_AVX512 1
#include "decode-cpu-attend.h"
#undef KVB_AVX512
#undef KVB_F16C
#undef SFX
#undef CHUNK
#undef VW
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif

/* The AVX-512 copy again with AVX512-VNNI (Cascade Lake, Ice Lake,
 * Sapphire Rapids, Zen 4 and later): int8 scores as integer dot products
 * (qk_block_vnni in decode-cpu-vec.h); every other dtype compiles as in
 * the avx512 copy.  Picked over it where the CPU has VNNI; "avx512" still
 * runs the fp32 widening path, to measure one against the other. */
#if defined(__clang__)
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx2,fma,f16c"))), apply_to = function)
#else
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx512vnni,avx2,fma,f16c")
#pragma GCC optimize("fp-contract=fast")
#endif
#define VW 16
#define CHUNK 64
#define SFX(name) CAT_(name, _avx512vnni)
#define KVB_F16C 1
#define KVB_AVX512 1
#define KVB_VNNI 1
#include "decode-cpu-attend.h"
#undef KVB_VNNI
#undef KVB_AVX512
#undef KVB_F16C
#undef SFX
#undef CHUNK
#undef VW
#if defined(__clang__)
#pragma clang attribute pop
#else
#pragma GCC pop_options
#endif
#endif

typedef void attend_fn(const struct kvb_paged_kv *, const float *, const struct unit *, int,
		       float *, float **, float **, float **);

static const struct {
	const char *name;
	attend_fn *fn;
	double (*fma_peak)(long iters);
} isas[] = {
	/* the default is the last one the CPU runs */
	{"base", attend_base, fma_peak_base},
#ifdef KVB_X86_WIDE
#if defined(__clang__)
	/* clang 14 compiles the AVX-512 copy 5-20% slower per row than the
	 * AVX2 one (Sapphire Rapids, in cache): there AVX2 stays the
	 * default and "avx512" is used only when asked for */
	{"avx512vnni", attend_avx512vnni, fma_peak_avx512vnni},
	{"avx512", attend_avx512, fma_peak_avx512},
	{"avx2", attend_avx2, fma_peak_avx2},
#else
	{"avx2", attend_avx2, fma_peak_avx2},
	{"avx512", attend_avx512, fma_peak_avx512},
	{"avx512vnni", attend_avx512vnni, fma_peak_avx512vnni},
#endif
#endif
};

static int isa_runs(int i)
{
#ifdef KVB_X86_WIDE
	__builtin_cpu_init();
	/* F16C came before AVX2 (Ivy Bridge, Piledriver); clang 14
	 * cannot ask for it, GCC can */
	int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")
#if !defined(__clang__)
		   && __builtin_cpu_supports("f16c")
#endif
		;
	if (isas[i].fn == attend_avx2)
		return avx2;
	int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
		     __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
	if (isas[i].fn == attend_avx512)
		return avx512;
	if (isas[i].fn == attend_avx512vnni)
		return avx512 && __builtin_cpu_supports("avx512vnni");
#endif
	return i == 0;
}

int kvb_cpu_set_isa(struct kvb_cpu *cpu, const char *name)
{
	for (int i = 0; i < (int)(sizeof isas / sizeof isas[0]); i++)
		if ((name == NULL || strcmp(name, isas[i].name) == 0) && isa_runs(i)) {
			cpu->isa = i;
			if (name)
				return 0;
		}
	return name ? -1 : 0;
}

const char *kvb_cpu_isa(const struct kvb_cpu *cpu)
{
	return isas[cpu->isa].name;
}

int kvb_cpu_prefetch(const struct kvb_cpu *cpu)
{
	return cpu->prefetch;
}

const char *kvb_cpu_prefetch_name(const struct kvb_cpu *cpu)
{
	return cpu->prefetch == KVB_PREFETCH_OFF ? "off" : cpu->prefetch == KVB_PREFETCH_JUMP ? "jump" : "on";
}

void kvb_cpu_set_prefetch(struct kvb_cpu *cpu, int on)
{
	cpu->prefetch = on == KVB_PREFETCH_OFF || on == KVB_PREFETCH_JUMP ? on : KVB_PREFETCH_ALL;
}

int kvb_cpu_unit_heads(const struct kvb_cpu *cpu)
{
	return cpu->unit_heads;
}

void kvb_cpu_set_unit_heads(struct kvb_cpu *cpu, int nh)
{
	cpu->unit_heads = nh > 0 ? nh : 0;
}

struct peak_job {
	int isa;
	long iters;
	double *s; /* [threads]: each thread's seconds */
	double flop;
};

static void peak_worker(void *arg, int tid, int nthreads)
{
	struct peak_job *pj = arg;
	(void)nthreads;
	double t0 = kvb_now_s();
	double flop = isas[pj->isa].fma_peak(pj->iters);
	pj->s[tid] = kvb_now_s() - t0;
	if (tid == 0)
		pj->flop = flop;
}

double kvb_cpu_fma_peak_gflops(struct kvb_cpu *cpu, int repeats)
{
	double best = 0;
	double *s = calloc((size_t)cpu->threads, sizeof *s);
	if (!s)
		return 0;
	/* about 2^21 steps of 12 vectors: a few ms a run on a 2020s core */
	struct peak_job pj = {.isa = cpu->isa, .iters = 1L << 21, .s = s};
	for (int r = 0; r < repeats + 1; r++) {
		kvb_cpu_parallel(cpu, peak_worker, &pj);
		if (r == 0)
			continue; /* untimed: clocks and caches settle */
		double sum = 0;
		for (int t = 0; t < cpu->threads; t++)
			sum += pj.flop / s[t] / 1e9;
		best = sum / cpu->threads > best ? sum / cpu->threads : best;
	}
	free(s);
	return best;
}

static void decode_worker(void *arg, int tid, int nthreads)
{
	struct job *job = arg;
	const struct kvb_paged_kv *kv = job->kv;
	const struct kvb_shape *s = &kv->shape;
	const int g = s->h_q / s->h_kv, d = s->d;
	const float vscale = s->dtype == KVB_DTYPE_FP8 ? kv->v_scale : 1.0f;
	float *ws = job->cpu->scratch + (size_t)tid * job->cpu->scratch_floats;
	(void)nthreads;
	for (;;) {
		long long k = atomic_fetch_add_explicit(&job->next, 1, memory_order_relaxed);
		if (k >= job->nunits)
			break;
		const struct unit *u = &job->units[k];
		float *acc, *m, *l;
		isas[job->cpu->isa].fn(kv, job->q, u, job->cpu->prefetch, ws, &acc, &m, &l);
		if (u->part < 0) { /* the unit's nh * g query heads are consecutive in o */
			float *ob = job->o + ((int64_t)u->b * s->h_q + (int64_t)u->h * g) * d;
			for (int j = 0; j < u->nh * g; j++) {
				float inv = l[j] > 0 ? vscale / l[j] : 0.0f; /* length 0: zeros */
				for (int i = 0; i < d; i++)
					ob[(size_t)j * d + i] = acc[(size_t)j * d + i] * inv;
			}
		} else {
			for (int x = 0; x < u->nh; x++) {
				float *p = job->partials +
					(u->part + (int64_t)x * job->splits[u->b]) * (int64_t)g * (d + 2);
				for (int j = 0; j < g; j++) {
					const int hj = x * g + j;
					float *pj = p + (size_t)j * (d + 2);
					memcpy(pj, acc + (size_t)hj * d, (size_t)d * sizeof *pj);
					pj[d] = m[hj];
					pj[d + 1] = l[hj];
				}
			}
		}
	}
}

/* Merge the partial states of split sequences: with M the largest max,
 * o = sum_c acc_c 2^(m_c - M) / sum_c l_c 2^(m_c - M). */
static void merge_worker(void *arg, int tid, int nthreads)
{
	struct job *job = arg;
	const struct kvb_paged_kv *kv = job->kv;
	const struct kvb_shape *s = &kv->shape;
	const int g = s->h_q / s->h_kv, d = s->d;
	const float vscale = s->dtype == KVB_DTYPE_FP8 ? kv->v_scale : 1.0f;
	for (int32_t b = tid; b < kv->batch; b += nthreads) {
		int32_t nc = job->splits[b];
		if (nc <= 1)
			continue;
		for (int h = 0; h < s->h_kv; h++)
			for (int j = 0; j < g; j++) {
				float *ob = job->o + ((int64_t)b * s->h_q + (int64_t)h * g + j) * d;
				const float *first = job->partials +
					((job->part0[b] + (int64_t)h * nc) * g + j) * (int64_t)(d + 2);
				const int64_t stride = (int64_t)g * (d + 2);
				float M = -INFINITY, L = 0;
				for (int32_t c = 0; c < nc; c++) {
					float mc = first[c * stride + d];
					M = mc > M ? mc : M;
				}
				for (int i = 0; i < d; i++)
					ob[i] = 0;
				for (int32_t c = 0; c < nc; c++) {
					const float *pc = first + c * stride;
					float w = exp2_nonpos(pc[d] - M);
					L += pc[d + 1] * w;
					axpy(ob, w, pc, d);
				}
				float inv = L > 0 ? vscale / L : 0.0f;
				scale_row(ob, inv, d);
			}
	}
}

static int unit_longer(const void *a, const void *b)
{
	const struct unit *x = a, *y = b;
	int32_t lx = x->t1 - x->t0, ly = y->t1 - y->t0;
	return (lx < ly) - (lx > ly);
}

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return 0;
	void *n = realloc(*p, need * elem);
	if (!n)
		return -1;
	*p = n;
	*cap = need;
	return 0;
}

int kvb_cpu_decode(struct kvb_cpu *cpu, const struct kvb_paged_kv *kv, const float *q, float *o)
{
	const struct kvb_shape *s = &kv->shape;
	const int T = cpu->threads, g = s->h_q / s->h_kv, d = s->d;
	int32_t *splits = malloc((size_t)kv->batch * sizeof *splits);
	int64_t *part0 = malloc((size_t)kv->batch * sizeof *part0);
	int rc = -1;
	if (!splits || !part0)
		goto out;

	/* Split sequences only when (sequence, head) units are too few to
	 * balance T threads; aim for about 4 units per thread. */
	int64_t tokens = 0;
	for (int32_t b = 0; b < kv->batch; b++)
		tokens += kv->seq_lens[b];
	int64_t chunk = INT32_MAX;
	if ((int64_t)kv->batch * s->h_kv < 4 * (int64_t)T && T > 1) {
		chunk = (tokens * s->h_kv + 4 * (int64_t)T - 1) / (4 * (int64_t)T);
		if (chunk < MIN_SPLIT)
			chunk = MIN_SPLIT;
	}
	/* KV heads per unit (kvb_cpu_unit_heads): consecutive heads of a
	 * block lie side by side in the pool, so a unit of nh heads reads runs
	 * nh times longer (attend).  Where the units are plenty (8 a thread
	 * or more) without splitting, the most heads that keep that many
	 * units, divide H_kv and hold at most 16 query heads' state (qs and
	 * acc, 16 KiB at d 128, in L1 beside the rows). */
	int nh = 1;
	if (cpu->unit_heads > 0 && s->h_kv % cpu->unit_heads == 0)
		nh = cpu->unit_heads;
	else if (cpu->unit_heads == 0 && chunk == INT32_MAX)
		for (int x = s->h_kv; x > 1; x--)
			if (s->h_kv % x == 0 && x * g <= 16 &&
			    (int64_t)kv->batch * (s->h_kv / x) >= 8 * (int64_t)T) {
				nh = x;
				break;
			}
	int64_t nunits = 0, slots = 0;
	for (int32_t b = 0; b < kv->batch; b++) {
		int64_t nc = kv->seq_lens[b] > chunk ? (kv->seq_lens[b] + chunk - 1) / chunk : 1;
		splits[b] = (int32_t)nc;
		part0[b] = nc > 1 ? slots : -1;
		if (nc > 1)
			slots += nc * s->h_kv;
		nunits += nc * (s->h_kv / nh);
	}
	size_t need = scratch_need(s, nh);
	if (need > cpu->scratch_floats) {
		free(cpu->scratch);
		cpu->scratch = aligned_alloc(64, need * (size_t)T * sizeof(float));
		cpu->scratch_floats = cpu->scratch ? need : 0;
		if (!cpu->scratch)
			goto out;
	}
	if (grow((void **)&cpu->units, &cpu->units_cap, (size_t)nunits, sizeof *cpu->units) ||
	    grow((void **)&cpu->partials, &cpu->partials_cap,
		 (size_t)(slots * g * (d + 2)), sizeof(float)))
		goto out;
	int64_t k = 0;
	for (int32_t b = 0; b < kv->batch; b++)
		for (int h = 0; h < s->h_kv; h += nh)
			for (int32_t c = 0; c < splits[b]; c++) {
				struct unit *u = &cpu->units[k++];
				u->b = b;
				u->h = h;
				u->nh = nh;
				u->t0 = (int32_t)(c * (splits[b] > 1 ? chunk : 0));
				u->t1 = splits[b] > 1 && (c + 1) * chunk < kv->seq_lens[b]
						? (int32_t)((c + 1) * chunk) : kv->seq_lens[b];
				u->part = splits[b] > 1 ? part0[b] + (int64_t)h * splits[b] + c : -1;
			}
	/* Longest first, so the last units to start are short ones. */
	qsort(cpu->units, (size_t)nunits, sizeof *cpu->units, unit_longer);

	struct job job = {
		.kv = kv, .q = q, .o = o, .cpu = cpu, .units = cpu->units, .nunits = nunits,
		.splits = splits, .part0 = part0, .partials = cpu->partials,
		.chunk_tokens = (int32_t)(chunk < INT32_MAX ? chunk : 0),
	};
	atomic_init(&job.next, 0);
	kvb_cpu_parallel(cpu, decode_worker, &job);
	if (slots > 0)
		kvb_cpu_parallel(cpu, merge_worker, &job);
	rc = 0;
out:
	free(splits);
	free(part0);
	return rc;
}
