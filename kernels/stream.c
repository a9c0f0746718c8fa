/* stream.c: the CPU's streaming ceiling, measured in the same run as the
 * decode and on the same threads: a read-only sum (decode is almost all
 * reads), a copy and a STREAM triad, over arrays each at least 4x the
 * last-level cache.  STREAM's rules: bytes are those the loop names (no
 * credit for write-allocate traffic), GB = 10^9 bytes, the best of the
 * timed repeats after one untimed pass, first touch on the threads that use
 * the data. */
#include "decode.h"
#include "timing.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LANES 8

enum stream_op { STREAM_INIT, STREAM_READ, STREAM_COPY, STREAM_TRIAD };

struct stream_job {
	enum stream_op op;
	double *a, *b, *c;
	const double *src; /* STREAM_READ */
	uint64_t n;        /* doubles per array */
	double sums[256];  /* per-thread result of STREAM_READ */
};

static void range(uint64_t n, int tid, int nthreads, uint64_t *lo, uint64_t *hi)
{
	/* Split on 64-byte lines so no two threads write one line. */
	uint64_t lines = n / 8;
	*lo = lines * (uint64_t)tid / (uint64_t)nthreads * 8;
	*hi = tid == nthreads - 1 ? n : lines * (uint64_t)(tid + 1) / (uint64_t)nthreads * 8;
}

#if defined(__GNUC__)
/* Eight sums in registers (GNU vector extension; see decode-cpu-attend.h
 * for why plain C does not get there at -O2), and each line asked for 8 KiB
 * ahead: the decode prefetches its rows, so a ceiling without prefetching
 * would be one the decode can pass (on one Ice Lake core, 7.0 GB/s without,
 * 8-10 GB/s with). */
typedef double v2d __attribute__((vector_size(16)));

static inline v2d v2_load(const double *p)
{
	v2d v;
	memcpy(&v, p, sizeof v);
	return v;
}

static double read_sum(const double *restrict x, uint64_t lo, uint64_t hi)
{
	v2d a0 = {0}, a1 = {0}, a2 = {0}, a3 = {0};
	uint64_t i = lo;
	for (; i + LANES <= hi; i += LANES) { /* LANES doubles: one 64-byte line */
		__builtin_prefetch(x + i + 1024, 0, 3);
		a0 += v2_load(x + i);
		a1 += v2_load(x + i + 2);
		a2 += v2_load(x + i + 4);
		a3 += v2_load(x + i + 6);
	}
	a0 = (a0 + a1) + (a2 + a3);
	double s = a0[0] + a0[1];
	for (; i < hi; i++)
		s += x[i];
	return s;
}
#else
static double read_sum(const double *restrict x, uint64_t lo, uint64_t hi)
{
	double s = 0;
	for (uint64_t i = lo; i < hi; i++)
		s += x[i];
	return s;
}
#endif

static void stream_worker(void *arg, int tid, int nthreads)
{
	struct stream_job *job = arg;
	uint64_t lo, hi;
	range(job->n, tid, nthreads, &lo, &hi);
	double *restrict a = job->a, *restrict b = job->b, *restrict c = job->c;
	switch (job->op) {
	case STREAM_INIT:
		for (uint64_t i = lo; i < hi; i++) {
			a[i] = 1.0;
			b[i] = 2.0;
			c[i] = 0.5;
		}
		break;
	case STREAM_READ:
		job->sums[tid % 256] = read_sum(job->src, lo, hi);
		break;
	case STREAM_COPY:
		for (uint64_t i = lo; i < hi; i++)
			a[i] = b[i];
		break;
	case STREAM_TRIAD:
		for (uint64_t i = lo; i < hi; i++)
			a[i] = b[i] + 3.0 * c[i];
		break;
	}
}

static double run_best(struct kvb_cpu *cpu, struct stream_job *job, enum stream_op op, int repeats)
{
	double best = INFINITY;
	job->op = op;
	for (int r = 0; r <= repeats; r++) {
		double t0 = kvb_now_s();
		kvb_cpu_parallel(cpu, stream_worker, job);
		double dt = kvb_now_s() - t0;
		if (r > 0 && dt < best) /* pass 0 is the untimed warm-up */
			best = dt;
	}
	return best;
}

double kvb_cpu_flush(struct kvb_cpu *cpu, const void *buf, uint64_t bytes)
{
	struct stream_job job = {.op = STREAM_READ, .src = buf, .n = bytes / sizeof(double)};
	double s = 0;
	kvb_cpu_parallel(cpu, stream_worker, &job);
	for (int i = 0; i < kvb_cpu_threads(cpu) && i < 256; i++)
		s += job.sums[i];
	return s;
}

double kvb_stream_cpu_read(struct kvb_cpu *cpu, const void *buf, uint64_t bytes, int repeats)
{
	struct stream_job job = {.src = buf, .n = bytes / sizeof(double)};
	return (double)(job.n * sizeof(double)) / run_best(cpu, &job, STREAM_READ, repeats) / 1e9;
}

int kvb_stream_cpu(struct kvb_cpu *cpu, uint64_t array_bytes, int repeats, struct kvb_ceiling *out)
{
	struct stream_job job = {.n = array_bytes / sizeof(double)};
	int rc = -1;
	if (repeats < 1)
		repeats = 1;
	job.a = kvb_big_alloc(job.n * sizeof(double));
	job.b = kvb_big_alloc(job.n * sizeof(double));
	job.c = kvb_big_alloc(job.n * sizeof(double));
	if (!job.a || !job.b || !job.c || job.n == 0)
		goto out;
	job.op = STREAM_INIT;
	kvb_cpu_parallel(cpu, stream_worker, &job);

	const double bytes = (double)job.n * sizeof(double);
	job.src = job.b;
	out->read_gbps = bytes / run_best(cpu, &job, STREAM_READ, repeats) / 1e9;
	out->copy_gbps = 2 * bytes / run_best(cpu, &job, STREAM_COPY, repeats) / 1e9;
	out->triad_gbps = 3 * bytes / run_best(cpu, &job, STREAM_TRIAD, repeats) / 1e9;
	out->array_bytes = job.n * sizeof(double);
	/* Check the work was done: b stays 2 after the copy, a = 2 + 3 * 0.5. */
	if (job.a[job.n - 1] != 3.5 || job.sums[0] == 0)
		goto out;
	rc = 0;
out:
	kvb_big_free(job.a);
	kvb_big_free(job.b);
	kvb_big_free(job.c);
	return rc;
}

uint64_t kvb_llc_bytes(void)
{
	uint64_t best = 0;
	int best_level = 0;
	for (int i = 0; i < 16; i++) {
		char path[128], buf[64];
		int level = 0;
		unsigned long long size = 0;
		char unit = 0;
		FILE *f;
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		if (!(f = fopen(path, "r")))
			break;
		if (fscanf(f, "%d", &level) != 1)
			level = 0;
		fclose(f);
		snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		if (!(f = fopen(path, "r")))
			continue;
		if (fgets(buf, sizeof buf, f) && sscanf(buf, "%llu%c", &size, &unit) >= 1) {
			if (unit == 'K')
				size <<= 10;
			else if (unit == 'M')
				size <<= 20;
			if (level > best_level || (level == best_level && size > best)) {
				best_level = level;
				best = size;
			}
		}
		fclose(f);
	}
#ifdef _SC_LEVEL3_CACHE_SIZE
	if (best == 0) {
		long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
		if (v > 0)
			best = (uint64_t)v;
	}
#endif
	return best;
}

uint64_t kvb_mem_available_bytes(void)
{
	/* KVB_MEMINFO: another file of /proc/meminfo's form, for the tests
	 * of what kvbench refuses on a machine short of memory */
	const char *path = getenv("KVB_MEMINFO");
	FILE *f = fopen(path && *path ? path : "/proc/meminfo", "r");
	char line[256];
	unsigned long long kib = 0;
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	fclose(f);
	return (uint64_t)kib * 1024;
}
