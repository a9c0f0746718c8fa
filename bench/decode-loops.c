/* decode-loops.c: the CPU decode's inner loops alone, one copy (ISA)
 * against another (a measurement, not a test; bench/decode-loops.sh builds
 * and runs it).  One thread, one sequence of CONTEXT tokens whose K and V
 * fit the core's L2 (memory is not what is timed), STEPS decode steps per
 * timing; the copies alternate ROUNDS times so that a noisy machine moves
 * them alike.  Prints, per shape, dtype and copy, the thread's CPU time per
 * token and KV head (ns; best and median of the rounds) and GB/s per
 * CPU-second at the best.  Every decode is checked against the double
 * reference first (a copy that fails is reported and not timed). */
#include "decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const int context = 512, steps = 1500, rounds = argc > 1 ? atoi(argv[1]) : 5;
	static const char *isas[] = {"avx2", "avx512"};
	static const enum kvb_dtype dts[] = {KVB_DTYPE_FP32, KVB_DTYPE_BF16, KVB_DTYPE_INT8,
					     KVB_DTYPE_FP8};
	static const int heads[][2] = {{16, 4}, {4, 4}};
	if (rounds < 1 || rounds > 99) {
		fprintf(stderr, "usage: decode-loops [ROUNDS 1-99]\n");
		return 2;
	}
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
			double t[2][99];
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
					double t0 = cpu_s();
					for (int i = 0; i < steps; i++)
						kvb_cpu_decode(cpu, &kv, q, o);
					t[k][r] = (cpu_s() - t0) / steps;
				}
			for (int k = 0; k < 2; k++) {
				if (!ok[k])
					continue;
				qsort(t[k], (size_t)rounds, sizeof t[k][0], cmp_double);
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
