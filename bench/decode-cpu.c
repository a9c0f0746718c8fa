/* decode-cpu.c: two measurements of the CPU decode (not tests;
 * bench/decode-cpu.sh builds and runs them).  Every decode is checked
 * against the double reference before it is timed.
 *
 * loops: the inner loops alone, one copy (ISA) against another.  One
 * thread, one sequence of 512 tokens whose K and V fit the core's L2
 * (memory is not what is timed), 1500 decode steps per timing; the copies
 * alternate ROUNDS times so that a noisy machine moves them alike.  Prints,
 * per shape, dtype and copy, the thread's CPU time per token and KV head
 * (ns; best and median of the rounds) and GB/s per CPU-second at the best.
 *
 * memory: the decode from memory against the read ceiling, paired round by
 * round.  On a shared machine the read ceiling moves by a factor of two
 * within minutes, so kvbench's ratio of a median decode to a best ceiling
 * swings with it; here each round times one read of a buffer 4x the
 * last-level cache (which also flushes the cache) and then one decode, with
 * the software prefetch on and then off, and the figures are the median and
 * quartiles over the rounds of decode GB/s / that round's read GB/s.  With
 * prefetch on, each round also times the same decode over a cache whose
 * every block is one block (kvb_paged_kv_make_hot: one page of K and one
 * of V seen at every page of the block, so the data is in L1, the
 * loop's compute ceiling, "hot"), and decode / min(read, hot) of the round
 * is issue 39's judgement of a CPU point.  Every read, decode and hot
 * decode is a round of kernels/rounds.h: timed on the wall clock and on
 * each worker's CPU clock and run again (at most 3 times) when another
 * task took a worker's CPU; "redone" counts those, "clean" the rounds
 * whose read, decodes and hot decode all ended clean, and the figures are
 * over those rounds alone (over all when none is: then say so).  A redone decode is preceded by a read of the
 * buffer again, untimed, so it starts from a cold cache too.  The
 * points are issue 20's: batch 8, context 4096, d 128, block 16, MHA 32:32
 * and GQA-4 32:8, fp32, bf16, int8 and fp8, on every CPU.  With
 * DECODE_CPU_ROUNDS set in the environment each round's figures and
 * whether it was clean also go to stderr, one line a round, so that the
 * clean rounds of several runs in a busy machine's quiet moments can be
 * pooled. */
#include "decode.h"
#include "rounds.h"
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ROUNDS 99

/* Quartile q (1, 2 or 3: the element at n * q / 4 once sorted) of x[0, n). */
static double quartile(double *x, int n, int q)
{
	qsort(x, (size_t)n, sizeof *x, kvb_cmp_double);
	int i = n * q / 4;
	return x[i < n ? i : n - 1];
}

static int loops(int rounds)
{
	const int context = 512, steps = 1500;
	static const char *isas[] = {"avx2", "avx512"};
	static const enum kvb_dtype dts[] = {KVB_DTYPE_FP32, KVB_DTYPE_BF16, KVB_DTYPE_INT8,
					     KVB_DTYPE_FP8};
	static const int heads[][2] = {{16, 4}, {4, 4}};
	struct kvb_cpu *cpu;
	if (kvb_cpu_create(1, &cpu) != 0)
		return 1;
	printf("%-10s %-5s %-11s %8s %8s %8s\n", "shape", "dtype", "isa", "best_ns", "med_ns",
	       "GB/s");
	for (size_t ih = 0; ih < sizeof heads / sizeof heads[0]; ih++)
		for (size_t id = 0; id < sizeof dts / sizeof dts[0]; id++) {
			struct kvb_shape s = {heads[ih][0], heads[ih][1], 128, 16, dts[id]};
			struct kvb_paged_kv kv;
			int32_t len = context;
			size_t nq = (size_t)s.h_q * s.d;
			float *q = malloc(nq * sizeof *q), *o = malloc(nq * sizeof *o);
			if (!q || !o || kvb_paged_kv_alloc(&kv, &s, 1, &len, 1) != 0 ||
			    kvb_paged_kv_fill(&kv, 1, cpu) != 0)
				return 1;
			kvb_queries_fill(q, nq, 1);
			uint64_t moved, table;
			kvb_paged_kv_bytes(&kv, &moved, &table);
			double t[2][MAX_ROUNDS];
			int ok[2] = {0, 0};
			for (int k = 0; k < 2; k++) {
				struct kvb_check chk;
				if (kvb_cpu_set_isa(cpu, isas[k]) != 0)
					continue;
				kvb_cpu_decode(cpu, &kv, q, o);
				kvb_check_output(&kv, q, o, NULL, 0, cpu, &chk);
				ok[k] = kvb_check_passed(&kv, &chk) && chk.max_err < 1e-5;
				if (!ok[k])
					printf("%d:%d %s %s: FAILED, max error %g\n", s.h_q, s.h_kv,
					       kvb_dtype_name(s.dtype), isas[k], chk.max_err);
			}
			for (int r = 0; r < rounds; r++)
				for (int k = 0; k < 2; k++) {
					if (!ok[k])
						continue;
					kvb_cpu_set_isa(cpu, isas[k]);
					double t0 = kvb_thread_cpu_s();
					for (int i = 0; i < steps; i++)
						kvb_cpu_decode(cpu, &kv, q, o);
					t[k][r] = (kvb_thread_cpu_s() - t0) / steps;
				}
			for (int k = 0; k < 2; k++) {
				if (!ok[k])
					continue;
				qsort(t[k], (size_t)rounds, sizeof t[k][0], kvb_cmp_double);
				double per = 1e9 / ((double)context * s.h_kv);
				char shape[16];
				snprintf(shape, sizeof shape, "%d:%d", s.h_q, s.h_kv);
				printf("%-10s %-5s %-11s %8.1f %8.1f %8.2f\n", shape,
				       kvb_dtype_name(s.dtype), isas[k], t[k][0] * per,
				       t[k][rounds / 2] * per, (double)moved / t[k][0] / 1e9);
			}
			kvb_paged_kv_free(&kv);
			free(q);
			free(o);
		}
	kvb_cpu_free(cpu);
	return 0;
}

/* The rounds of memory(): a read pass over the buffer (which also flushes
 * the cache), and a decode of kv (after an untimed read pass, flush_prep,
 * when it is a redo). */
struct round_arg {
	const void *buf;
	uint64_t bytes;
	const struct kvb_paged_kv *kv;
	const float *q;
	float *o;
	int cold; /* the cache was just flushed: flush_prep's first call skips it */
};

static int read_body(struct kvb_cpu *cpu, void *arg)
{
	const struct round_arg *a = arg;
	kvb_cpu_flush(cpu, a->buf, a->bytes);
	return 0;
}

static void flush_prep(struct kvb_cpu *cpu, void *arg)
{
	struct round_arg *a = arg;
	if (a->cold) /* the read round just before flushed it */
		a->cold = 0;
	else
		kvb_cpu_flush(cpu, a->buf, a->bytes);
}

static int decode_body(struct kvb_cpu *cpu, void *arg)
{
	const struct round_arg *a = arg;
	return kvb_cpu_decode(cpu, a->kv, a->q, a->o);
}

static int memory(int rounds, const char *only_heads, const char *only_dtype)
{
	static const enum kvb_dtype dts[] = {KVB_DTYPE_FP32, KVB_DTYPE_BF16, KVB_DTYPE_INT8,
					     KVB_DTYPE_FP8};
	static const int heads[][2] = {{32, 32}, {32, 8}};
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	struct kvb_cpu *cpu;
	if (kvb_cpu_create(ncpu > 0 ? (int)ncpu : 1, &cpu) != 0)
		return 1;
	uint64_t llc = kvb_llc_bytes(), rb = 4 * (llc ? llc : 32u << 20);
	char *buf = kvb_big_alloc(rb);
	if (!buf)
		return 1;
	memset(buf, 1, rb);
	/* "on" is the environment's mode (KVB_PREFETCH=jump: the jumps alone),
	 * or all the rows read next */
	const int pf_on = kvb_cpu_prefetch(cpu) == KVB_PREFETCH_OFF ? KVB_PREFETCH_ALL : kvb_cpu_prefetch(cpu);
	kvb_cpu_set_prefetch(cpu, pf_on);
	printf("%d threads, %s loops, prefetch on = %s, read buffer %llu MiB, %d rounds\n",
	       kvb_cpu_threads(cpu), kvb_cpu_isa(cpu), pf_on == KVB_PREFETCH_JUMP ? "jump" : "all",
	       (unsigned long long)(rb >> 20), rounds);
	printf("%-7s %-5s %7s %7s %7s | %-24s | %-24s | %-24s | %-13s\n", "shape", "dtype", "read",
	       "decode", "hot", "of read, prefetch on", "of read, prefetch off",
	       "of min(read, hot), on", "preempted");
	printf("%-7s %-5s %7s %7s %7s | %7s %7s %8s | %7s %7s %8s | %7s %7s %8s | %6s %6s\n", "", "",
	       "GB/s", "GB/s", "GB/s", "q1", "median", "q3", "q1", "median", "q3", "q1", "median", "q3",
	       "redone", "clean");
	for (size_t ih = 0; ih < sizeof heads / sizeof heads[0]; ih++)
		for (size_t id = 0; id < sizeof dts / sizeof dts[0]; id++) {
			const struct kvb_shape s = {heads[ih][0], heads[ih][1], 128, 16, dts[id]};
			char hname[16];
			snprintf(hname, sizeof hname, "%d:%d", s.h_q, s.h_kv);
			if ((only_heads && strcmp(only_heads, hname) != 0) ||
			    (only_dtype && strcmp(only_dtype, kvb_dtype_name(s.dtype)) != 0))
				continue;
			int32_t lens[8];
			for (int b = 0; b < 8; b++)
				lens[b] = 4096;
			struct kvb_paged_kv kv;
			size_t nq = (size_t)8 * s.h_q * s.d;
			float *q = malloc(nq * sizeof *q), *o = malloc(nq * sizeof *o);
			if (!q || !o || kvb_paged_kv_alloc(&kv, &s, 8, lens, 1) != 0 ||
			    kvb_paged_kv_fill(&kv, 1, cpu) != 0)
				return 1;
			kvb_queries_fill(q, nq, 1);
			uint64_t moved, table;
			kvb_paged_kv_bytes(&kv, &moved, &table);
			struct kvb_check chk;
			kvb_cpu_decode(cpu, &kv, q, o);
			kvb_check_output(&kv, q, o, NULL, 0, cpu, &chk);
			if (!kvb_check_passed(&kv, &chk) || chk.max_err >= 1e-5) {
				printf("%d:%d %s: FAILED, max error %g\n", s.h_q, s.h_kv,
				       kvb_dtype_name(s.dtype), chk.max_err);
				return 1;
			}
			/* the loop's compute ceiling: the same decode over one
			 * block aliased by every table entry, its pages by one
			 * page (L1), each round
			 * beside the read and the decode it judges */
			struct kvb_paged_kv hot;
			if (kvb_paged_kv_make_hot(&hot, &s, 8, lens, 1, cpu) != 0)
				return 1;
			kvb_cpu_decode(cpu, &hot, q, o); /* untimed: pages and caches */
			double read[MAX_ROUNDS], dec[MAX_ROUNDS], on[MAX_ROUNDS], off[MAX_ROUNDS];
			double hotg[MAX_ROUNDS], onmin[MAX_ROUNDS];
			int clean[MAX_ROUNDS];
			struct kvb_tally tally = {0, 0, 0};
			struct round_arg ra = {buf, rb, &kv, q, o, 0};
			struct round_arg rh = {buf, rb, &hot, q, o, 0};
			kvb_cpu_flush(cpu, buf, rb); /* untimed: the buffer's pages */
			for (int r = 0; r < rounds; r++)
				for (int pf = 1; pf >= 0; pf--) {
					struct kvb_round rr, rd, rhot;
					kvb_round_run(cpu, NULL, read_body, &ra, &tally, &rr);
					double g = (double)rb / rr.wall_s / 1e9;
					kvb_cpu_set_prefetch(cpu, pf ? pf_on : KVB_PREFETCH_OFF);
					ra.cold = 1;
					kvb_round_run(cpu, flush_prep, decode_body, &ra, &tally, &rd);
					double gd = (double)moved / rd.wall_s / 1e9;
					if (pf) {
						kvb_round_run(cpu, NULL, decode_body, &rh, &tally, &rhot);
						double gh = (double)moved / rhot.wall_s / 1e9;
						clean[r] = !rr.preempted && !rd.preempted && !rhot.preempted;
						read[r] = g;
						dec[r] = gd;
						hotg[r] = gh;
						on[r] = gd / g;
						onmin[r] = gd / (gh < g ? gh : g);
					} else {
						clean[r] = clean[r] && !rr.preempted && !rd.preempted;
						off[r] = gd / g;
					}
				}
			kvb_paged_kv_free(&hot);
			/* DECODE_CPU_ROUNDS=1: every round on stderr too, so that the
			 * clean rounds of several runs can be pooled */
			if (getenv("DECODE_CPU_ROUNDS"))
				for (int r = 0; r < rounds; r++)
					fprintf(stderr, "round %d:%d %s %d clean %d read %.3f decode %.3f hot %.3f "
						"of_min %.4f off %.4f\n", s.h_q, s.h_kv,
						kvb_dtype_name(s.dtype), r, clean[r], read[r], dec[r], hotg[r],
						onmin[r], off[r]);
			/* the quartiles over the clean rounds (read, decodes and hot
			 * all clean) when there are any, else over all */
			int nc = 0;
			for (int r = 0; r < rounds; r++)
				if (clean[r]) {
					read[nc] = read[r];
					dec[nc] = dec[r];
					hotg[nc] = hotg[r];
					on[nc] = on[r];
					off[nc] = off[r];
					onmin[nc++] = onmin[r];
				}
			const int n = nc > 0 ? nc : rounds;
			char shape[16];
			snprintf(shape, sizeof shape, "%d:%d", s.h_q, s.h_kv);
			printf("%-7s %-5s %7.2f %7.2f %7.2f | %6.1f%% %6.1f%% %7.1f%% | %6.1f%% %6.1f%% "
			       "%7.1f%% | %6.1f%% %6.1f%% %7.1f%% | %6d %6d\n",
			       shape, kvb_dtype_name(s.dtype), quartile(read, n, 2),
			       quartile(dec, n, 2), quartile(hotg, n, 2),
			       100 * quartile(on, n, 1), 100 * quartile(on, n, 2),
			       100 * quartile(on, n, 3), 100 * quartile(off, n, 1),
			       100 * quartile(off, n, 2), 100 * quartile(off, n, 3),
			       100 * quartile(onmin, n, 1), 100 * quartile(onmin, n, 2),
			       100 * quartile(onmin, n, 3), tally.redone, nc);
			fflush(stdout);
			kvb_paged_kv_free(&kv);
			free(q);
			free(o);
		}
	kvb_big_free(buf);
	kvb_cpu_free(cpu);
	return 0;
}

int main(int argc, char **argv)
{
	const int is_loops = argc > 1 && strcmp(argv[1], "loops") == 0;
	const int is_memory = argc > 1 && strcmp(argv[1], "memory") == 0;
	const int rounds = argc > 2 ? atoi(argv[2]) : is_loops ? 5 : 11;
	if ((!is_loops && !is_memory) || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: decode-cpu loops|memory [ROUNDS 1-%d [HQ:HKV [DTYPE]]]\n",
			MAX_ROUNDS);
		return 2;
	}
	/* memory's points can be run one at a time (HQ:HKV, DTYPE), e.g. in
	 * the quiet moments of a shared machine */
	return is_loops ? loops(rounds)
			: memory(rounds, argc > 3 ? argv[3] : NULL, argc > 4 ? argv[4] : NULL);
}
