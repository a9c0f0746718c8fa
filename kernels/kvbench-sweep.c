/* kvbench-sweep.c: the bandwidth sweep.  Every combination of the
 * option lists is one point: its lengths drawn, its cache allocated and
 * filled, the decode validated against the double reference on that very
 * cache (output poisoned first), and only then timed cold against the
 * read ceiling measured just before and after it.  Rows go to the output
 * writers (kvbench-out.c) as each point finishes. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "kvbench.h"
#include "rounds.h"
#include "timing.h"
#include "base/units.h"
#ifndef KVBENCH_STANDALONE
#include "predict.h"
#include "time/validate.h"
#endif

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef KVBENCH_STANDALONE
/* The planner's time for this point's step, on the basis kvp_bench_basis
 * picks (validate.h, as `kvplan validate` does): the --gpu profile, else a
 * CUDA run's bus rate, else the read ceiling measured beside the point.
 * Adds predicted_* columns; a failure is reported, not fatal. */
static void predict_point(struct ctx *cx, const struct kvb_shape *s, const struct kvb_paged_kv *kv,
			  double median, double read_ceil_gbps, struct kvp_record *row)
{
	struct kvb_decode_prediction p;
	struct kvp_bench_basis basis;
	char msg[512];
	double datasheet_bps = 0;
#ifdef HAVE_CUDA
	datasheet_bps = cx->gpu.datasheet_gbps * 1e9;
#endif
	kvp_bench_basis(cx->profile, cx->o->backend == BACKEND_CUDA, datasheet_bps,
			read_ceil_gbps * 1e9, &basis);
	if (!(basis.bandwidth_bps > 0))
		return;
	if (kvb_predict_decode(s, kv->seq_lens, kv->batch, basis.bandwidth_bps, basis.efficiency, &p,
			       msg, sizeof msg)) {
		fprintf(stderr, "kvbench: no prediction: %s\n", msg);
		return;
	}
	rec_str(row, "predicted_on", "%s", basis.name);
	kvp_record_u64(row, "predicted_kv_bytes", (uint64_t)(p.kv_bytes));
	kvp_record_f64(row, "predicted_s", p.time_s);
	kvp_record_f64(row, "prediction_error", rounded(median > 0 ? (p.time_s - median) / median : 0.0, 4));
}
#endif

/* B lengths for a point: kvbench's fixed or uniform around the context, or
 * draws from the --lengths distribution. */
void make_lengths(const struct opts *o, int32_t batch, int32_t context, uint64_t seed,
			 int32_t *out)
{
#ifndef KVBENCH_STANDALONE
	if (o->have_dist) {
		struct kvp_rng r;
		kvp_rng_seed(&r, seed);
		for (int32_t b = 0; b < batch; b++) {
			uint64_t n = kvp_dist_sample(&o->dist, &r);
			/* a long tail's rare draw past 2^30 is cut there */
			out[b] = (int32_t)(n < 1 ? 1 : n > (1u << 30) ? (1u << 30) : n);
		}
		return;
	}
#endif
	kvb_lengths_make(o->lengths, batch, context, seed, out);
}

void lengths_name(const struct opts *o, char *buf, size_t size)
{
#ifndef KVBENCH_STANDALONE
	if (o->have_dist) {
		kvp_dist_format(&o->dist, buf, size);
		return;
	}
#endif
	snprintf(buf, size, "%s", kvb_lengths_name(o->lengths));
}

/* Sequences to compare with the reference: all when the reference's work
 * (about 3 * len * H_q * d multiply-adds per sequence) fits a budget that
 * grows with the threads; otherwise the first, the last, the longest and
 * random others until the budget is spent. */
static int pick_seqs(const struct kvb_paged_kv *kv, int threads, uint64_t seed, int32_t *out)
{
	const double per_token = 3.0 * kv->shape.h_q * kv->shape.d;
	const double budget = 3e8 * threads;
	double total = 0;
	for (int32_t b = 0; b < kv->batch; b++)
		total += per_token * kv->seq_lens[b];
	if (total <= budget) {
		for (int32_t b = 0; b < kv->batch; b++)
			out[b] = b;
		return kv->batch;
	}
	int32_t longest = 0;
	for (int32_t b = 1; b < kv->batch; b++)
		if (kv->seq_lens[b] > kv->seq_lens[longest])
			longest = b;
	int n = 0;
	double spent = 0;
	uint64_t st = seed ^ 0x636865636bull; /* "check" */
	int32_t cand[3] = {0, kv->batch - 1, longest};
	for (int i = 0; i < 3 + 8; i++) {
		int32_t b = i < 3 ? cand[i] : (int32_t)(kvb_rng_next(&st) % (uint64_t)kv->batch);
		int dup = 0;
		for (int k = 0; k < n; k++)
			dup |= out[k] == b;
		double cost = per_token * kv->seq_lens[b];
		if (dup || (n > 0 && spent + cost > budget))
			continue;
		out[n++] = b;
		spent += cost;
	}
	return n;
}

/* The progress line of a point as it starts (--progress). */
static void say_point(int i, int n, const struct kvb_shape *s, int64_t batch, int64_t context)
{
	fprintf(stderr, "kvbench: [%d/%d] B %lld, context %lld, heads %d:%d, d %d, P %d, %s\n", i,
		n, (long long)batch, (long long)context, s->h_q, s->h_kv, s->d, s->block_size,
		kvb_dtype_name(s->dtype));
}

/* The bytes a point needs, estimated before anything is allocated, against
 * what there is: host memory (MemAvailable: the pool, its tables, Q and O;
 * on the CUDA backend the pool is built on the host first) and, on CUDA,
 * device memory (cudaMemGetInfo: the pool and tables again).  Returns 0
 * when it fits; else says why with the figures and returns -1.  *blocks,
 * *pool and *need get the estimate. */
static int point_fits(struct ctx *cx, const struct kvb_shape *s, int32_t batch,
		      const int32_t *lens, int64_t *blocks, uint64_t *pool, uint64_t *need)
{
	int64_t nb = 0, max_nb = 1;
	for (int32_t b = 0; b < batch; b++) {
		int64_t n = ((int64_t)lens[b] + s->block_size - 1) / s->block_size;
		nb += n;
		max_nb = n > max_nb ? n : max_nb;
	}
	*blocks = nb;
	uint64_t tables = 0, qo = 0;
	int ok = kvp_mul(kvb_block_bytes(s), (uint64_t)(nb > 0 ? nb : 1), pool) &&
		 kvp_mul((uint64_t)batch * 4, (uint64_t)max_nb + 1, &tables) &&
		 kvp_mul((uint64_t)batch * 8, (uint64_t)s->h_q * (uint64_t)s->d, &qo);
	if (!ok || *pool > UINT64_MAX / 2) {
		fprintf(stderr, "kvbench: B %d, %s: the cache's size overflows\n", batch,
			kvb_dtype_name(s->dtype));
		return -1;
	}
	*need = *pool + tables + qo;
	uint64_t avail = kvb_mem_available_bytes();
	if (avail && *need > avail) {
		fprintf(stderr, "kvbench: B %d, heads %d:%d, d %d, %s: needs about %llu bytes of "
			"host memory (a pool of %lld blocks, %llu bytes), %llu available "
			"(MemAvailable): not run\n", batch, s->h_q, s->h_kv, s->d,
			kvb_dtype_name(s->dtype), (unsigned long long)*need, (long long)nb,
			(unsigned long long)*pool, (unsigned long long)avail);
		return -1;
	}
#ifdef HAVE_CUDA
	uint64_t dev_free = 0;
	if (cx->o->backend == BACKEND_CUDA && kvb_cuda_free_bytes(&dev_free) == 0 &&
	    *need > dev_free) {
		fprintf(stderr, "kvbench: B %d, heads %d:%d, d %d, %s: needs about %llu bytes of "
			"device memory (a pool of %lld blocks), %llu free (cudaMemGetInfo): not "
			"run\n", batch, s->h_q, s->h_kv, s->d, kvb_dtype_name(s->dtype),
			(unsigned long long)*need, (long long)nb, (unsigned long long)dev_free);
		return -1;
	}
#else
	(void)cx;
#endif
	return 0;
}

/* How much faster than the cold read ceiling a warm read must run for the
 * warm cache to count as held by the last-level cache (LLC reads run 2-5x
 * DRAM on the servers we measure; on a 2-vCPU Sapphire Rapids VM, 1.0-1.1x). */
#define WARM_HELD 1.25

/* The decode's compute side on the CPU: the same shape and batch over a
 * cache small enough to stay in the last-level cache (a quarter of it, at
 * least 64 tokens a sequence), run warm (no flush) after one untimed run,
 * the best of 5.  What the loops do when memory is not what waits: a point
 * whose cold rate is nearer this than the read ceiling is compute-bound.
 * That holds only where the cache does hold it: a virtual machine may get a
 * small share of a shared last-level cache, and then "warm" runs come from
 * memory like the cold ones.  So a plain read of a buffer the size of the
 * warm cache is timed warm too (*read_gbps, best of 5 after one untimed
 * pass); the caller trusts the warm rate only when that read is clearly
 * faster than the cold read ceiling.
 * Returns the GB/s (same byte counting as the point) and sets *gflops_pc
 * (per thread), or 0 when the cache could not be had. */
static double warm_gbps(struct ctx *cx, const struct kvb_shape *shape, int32_t batch,
			uint64_t seed, double *gflops_pc, double *read_gbps)
{
	uint64_t llc = kvb_llc_bytes();
	const double per_token = 2.0 * shape->h_kv * shape->d * kvb_dtype_bytes(shape->dtype);
	double budget = (double)(llc ? llc : 32 * KVP_MIB) / 4;
	int64_t ctx_w = (int64_t)(budget / per_token / batch);
	if (ctx_w < 64)
		ctx_w = 64;
	if (ctx_w > (1 << 20))
		ctx_w = 1 << 20;
	struct kvb_paged_kv kv;
	int32_t *lens = malloc((size_t)batch * sizeof *lens);
	size_t nq = (size_t)batch * shape->h_q * shape->d;
	float *q = malloc(nq * sizeof *q), *out = malloc(nq * sizeof *out);
	double best = 0, rate = 0;
	uint64_t moved = 0, table = 0;
	memset(&kv, 0, sizeof kv);
	*gflops_pc = 0;
	*read_gbps = 0;
	if (!lens || !q || !out)
		goto out;
	for (int32_t b = 0; b < batch; b++)
		lens[b] = (int32_t)ctx_w;
	if (kvb_paged_kv_alloc(&kv, shape, batch, lens, seed) != 0 ||
	    kvb_paged_kv_fill(&kv, seed, cx->cpu) != 0 || kvb_paged_kv_bytes(&kv, &moved, &table) != 0)
		goto out;
	kvb_queries_fill(q, nq, seed);
	for (int r = 0; r < 6; r++) {
		double t0 = kvb_now_s();
		if (kvb_cpu_decode(cx->cpu, &kv, q, out) != 0)
			goto out;
		double t = kvb_now_s() - t0;
		if (r > 0 && (best == 0 || t < best))
			best = t;
	}
	rate = (double)moved / best / 1e9;
	*gflops_pc = 4.0 * (double)batch * (double)ctx_w * shape->h_q * shape->d / best / 1e9 /
		     kvb_cpu_threads(cx->cpu);
	void *buf = kvb_big_alloc(moved);
	if (buf) {
		memset(buf, 0, moved); /* zeros: no denormal slows the sum */
		*read_gbps = kvb_stream_cpu_read(cx->cpu, buf, moved, 5);
		kvb_big_free(buf);
	}
out:
	kvb_paged_kv_free(&kv);
	free(lens);
	free(q);
	free(out);
	return rate;
}

/* The rounds a CPU point is judged by, each timed by kvb_round_run
 * (rounds.h: wall and per-worker CPU time, redone while preempted): a
 * decode of the point's cache after a flush, one read pass over the read
 * ceiling's array, and a decode of the hot cache. */
struct decode_round {
	struct ctx *cx;
	const struct kvb_paged_kv *kv;
	const float *q;
	float *out;
};

static void flush_prep(struct kvb_cpu *cpu, void *arg)
{
	struct decode_round *d = arg;
	kvb_cpu_flush(cpu, d->cx->flush, d->cx->flush_bytes);
}

static int decode_body(struct kvb_cpu *cpu, void *arg)
{
	struct decode_round *d = arg;
	return kvb_cpu_decode(cpu, d->kv, d->q, d->out);
}

struct read_round {
	const void *buf;
	uint64_t bytes;
};

static int read_body(struct kvb_cpu *cpu, void *arg)
{
	struct read_round *rd = arg;
	kvb_cpu_flush(cpu, rd->buf, rd->bytes); /* STREAM's read-only sum (stream.c) */
	return 0;
}

/* *best becomes *cur when cur is the better: any round over none (wall_s
 * 0), a clean round over a preempted one, else the faster.  A ceiling is
 * so the fastest of its clean rounds, or of all when none was clean. */
static void keep_best(struct kvb_round *best, const struct kvb_round *cur)
{
	if (best->wall_s == 0 || (best->preempted && !cur->preempted) ||
	    (best->preempted == cur->preempted && cur->wall_s < best->wall_s))
		*best = *cur;
}

/* The read ceiling beside a point: one untimed pass over the ceiling's
 * array, then `rounds` timed ones; *best keeps the best round so far
 * (keep_best).  Returns the GB/s of *best. */
static double read_ceiling(struct ctx *cx, int rounds, struct kvb_tally *t, struct kvb_round *best)
{
	struct read_round rd = {cx->ceil_buf, cx->ceiling.array_bytes / 8 * 8};
	kvb_cpu_flush(cx->cpu, rd.buf, rd.bytes);
	for (int r = 0; r < rounds; r++) {
		struct kvb_round cur;
		kvb_round_run(cx->cpu, NULL, read_body, &rd, t, &cur);
		keep_best(best, &cur);
	}
	return best->wall_s > 0 ? (double)rd.bytes / best->wall_s / 1e9 : 0.0;
}

/* The loop's compute ceiling on the CPU (issue 39): the same decode, batch,
 * lengths and shape over kvb_paged_kv_make_hot's cache, whose every block
 * is one block and whose block's K and V are each one page seen at every
 * page of the block, so every read hits L1 (a block of all H_kv heads alone
 * is 32-512 KiB at issue 20's points, L2 for 6 of the 8):
 * what the loops reach when memory never waits.  One untimed run, then the
 * best of 5 rounds (keep_best; nothing to flush; *best gets that round).  GB/s with
 * the point's byte counting; 0 when memory is short. */
static double hot_gbps(struct ctx *cx, const struct kvb_shape *shape, int32_t batch,
		       const int32_t *lens, uint64_t seed, struct kvb_tally *t,
		       struct kvb_round *best)
{
	struct kvb_paged_kv kv;
	size_t nq = (size_t)batch * shape->h_q * shape->d;
	float *q = malloc(nq * sizeof *q), *out = malloc(nq * sizeof *out);
	uint64_t moved = 0, table = 0;
	memset(&kv, 0, sizeof kv);
	memset(best, 0, sizeof *best);
	if (!q || !out || kvb_paged_kv_make_hot(&kv, shape, batch, lens, seed, cx->cpu) != 0 ||
	    kvb_paged_kv_bytes(&kv, &moved, &table) != 0)
		goto out;
	kvb_queries_fill(q, nq, seed);
	struct decode_round d = {cx, &kv, q, out};
	if (kvb_cpu_decode(cx->cpu, &kv, q, out) != 0)
		goto out;
	for (int r = 0; r < 5; r++) {
		struct kvb_round cur;
		if (kvb_round_run(cx->cpu, NULL, decode_body, &d, t, &cur) != 0) {
			best->wall_s = 0;
			goto out;
		}
		keep_best(best, &cur);
	}
out:
	kvb_paged_kv_free(&kv);
	free(q);
	free(out);
	return best->wall_s > 0 ? (double)moved / best->wall_s / 1e9 : 0.0;
}

/* One bandwidth point: validate, then time.  Fills the row; returns 0,
 * 1 when validation failed, -1 on a run error (message printed). */
static int run_point(struct ctx *cx, const struct kvb_shape *shape, int32_t batch, int32_t context,
		     uint64_t seed, struct kvp_record *row)
{
	struct opts *o = cx->o;
	struct kvb_paged_kv kv;
	int32_t *lens = malloc((size_t)batch * sizeof *lens);
	int32_t *seqs = malloc((size_t)batch * sizeof *seqs);
	size_t nq = (size_t)batch * shape->h_q * shape->d;
	float *q = malloc(nq * sizeof *q), *out = malloc(nq * sizeof *out);
	double *times = calloc((size_t)o->repeats, sizeof *times);
	double *cpu_times = calloc((size_t)o->repeats, sizeof *cpu_times);
	struct kvb_tally t_dec = {0, 0, 0}, t_read = {0, 0, 0}, t_hot = {0, 0, 0};
	struct kvb_round read_round = {0, 0, 0, 0}, hot_round = {0, 0, 0, 0};
	int rc = -1, splits = 1, chunk = 0, nclean = 0;
	const char *kernel_name = "cpu";
	struct kvb_check chk;
	uint64_t moved = 0, table = 0, tokens = 0;
#ifdef HAVE_CUDA
	struct kvb_cuda_decode *dc = NULL;
#endif
	memset(&kv, 0, sizeof kv);
	if (!lens || !seqs || !q || !out || !times || !cpu_times) {
		fprintf(stderr, "kvbench: out of memory\n");
		goto out;
	}
	make_lengths(o, batch, context, seed, lens);
	uint64_t need_bytes = 0, pool_bytes = 0;
	int64_t need_blocks = 0;
	if (point_fits(cx, shape, batch, lens, &need_blocks, &pool_bytes, &need_bytes) != 0)
		goto out;
	if (kvb_paged_kv_alloc(&kv, shape, batch, lens, seed) != 0 ||
	    kvb_paged_kv_fill_scaled(&kv, seed, cx->cpu, (float)o->k_mul, (float)o->v_mul) != 0) {
		fprintf(stderr, "kvbench: cannot allocate the cache of B %d, context %d, %s: %lld "
			"blocks, %llu bytes of pool (%s)\n", batch, context,
			kvb_dtype_name(shape->dtype), (long long)need_blocks,
			(unsigned long long)pool_bytes,
			errno == EINVAL ? "more than 2^31 blocks or a bad shape" : strerror(errno));
		goto out;
	}
	if (o->k_mul > 1.0) /* --kv-scale: the logits keep their spread */
		kv.sm_scale = (float)(kv.sm_scale / o->k_mul);
	kvb_queries_fill(q, nq, seed);
	for (int32_t b = 0; b < batch; b++)
		tokens += (uint64_t)lens[b];
	if (kvb_paged_kv_bytes(&kv, &moved, &table) != 0) {
		fprintf(stderr, "kvbench: byte count overflows\n");
		goto out;
	}

	/* Validate on this very cache, output poisoned first. */
	kvb_poison(out, nq);
	if (o->backend == BACKEND_CPU) {
		if (kvb_cpu_decode(cx->cpu, &kv, q, out) != 0) {
			fprintf(stderr, "kvbench: out of memory in the CPU decode\n");
			goto out;
		}
	}
#ifdef HAVE_CUDA
	else {
		int st = kvb_cuda_decode_create(&kv, q, &dc);
		if (st == KVB_CUDA_OK)
			st = kvb_cuda_decode_run(dc, out);
		if (st != KVB_CUDA_OK) {
			fprintf(stderr, "kvbench: %s\n", kvb_cuda_error());
			goto out;
		}
		kvb_cuda_decode_split(dc, &splits, &chunk);
		kernel_name = kvb_cuda_decode_kernel(dc);
	}
#endif
	int nseqs = pick_seqs(&kv, kvb_cpu_threads(cx->cpu), seed, seqs);
	if (kvb_check_output(&kv, q, out, seqs, nseqs, cx->cpu, &chk) != 0) {
		fprintf(stderr, "kvbench: out of memory in the check\n");
		goto out;
	}
	int passed = kvb_check_passed(&kv, &chk);

	double median = 0, best = 0, gbps = 0, point_ceiling = 0, point_peak = 0;
	double warm = 0, warm_gflops_pc = 0, warm_read = 0, hot = 0;
	if (passed && !o->validate_only) {
		if (o->backend == BACKEND_CPU) {
			/* The ceiling again, just before and just after: on a shared
			 * machine the load can change within a sweep. */
			/* Every round of the decode and of both ceilings is timed
			 * on the wall and the workers' CPU clocks and redone while
			 * preempted (rounds.h), so the ratio compares like with like. */
			struct decode_round dr = {cx, &kv, q, out};
			point_ceiling = read_ceiling(cx, 2, &t_read, &read_round);
			point_peak = kvb_cpu_fma_peak_gflops(cx->cpu, 2);
			for (int r = 0; r < o->warmup; r++)
				kvb_cpu_decode(cx->cpu, &kv, q, out);
			for (int r = 0; r < o->repeats; r++) {
				struct kvb_round rd;
				kvb_round_run(cx->cpu, flush_prep, decode_body, &dr, &t_dec, &rd);
				times[r] = rd.wall_s;
				cpu_times[r] = rd.cpu_max_s;
				/* clean rounds first: the median and best below are
				 * over them alone when there are any */
				if (!rd.preempted) {
					times[r] = times[nclean];
					cpu_times[r] = cpu_times[nclean];
					times[nclean] = rd.wall_s;
					cpu_times[nclean++] = rd.cpu_max_s;
				}
			}
			point_ceiling = read_ceiling(cx, 2, &t_read, &read_round);
			point_peak = fmax(point_peak, kvb_cpu_fma_peak_gflops(cx->cpu, 2));
			warm = warm_gbps(cx, shape, batch, seed, &warm_gflops_pc, &warm_read);
			hot = hot_gbps(cx, shape, batch, lens, seed, &t_hot, &hot_round);
			cx->ceiling.read_gbps = fmax(cx->ceiling.read_gbps, point_ceiling);
			cx->peak_gflops = fmax(cx->peak_gflops, point_peak);
		}
#ifdef HAVE_CUDA
		else if (kvb_cuda_decode_time(dc, o->warmup, o->repeats, times) != KVB_CUDA_OK) {
			fprintf(stderr, "kvbench: %s\n", kvb_cuda_error());
			goto out;
		}
#endif
		/* on the CPU the clean rounds alone, when there are any */
		const int nt = nclean > 0 ? nclean : o->repeats;
		qsort(times, (size_t)nt, sizeof *times, kvb_cmp_double);
		best = times[0];
		median = nt % 2 ? times[nt / 2] : 0.5 * (times[nt / 2 - 1] + times[nt / 2]);
		gbps = (double)moved / median / 1e9;
	}

	rec_str(row, "backend", "%s", o->backend == BACKEND_CPU ? "cpu" : "cuda");
	kvp_record_u64(row, "batch", (uint64_t)(batch));
	kvp_record_u64(row, "context", (uint64_t)(context));
	char lname[128];
	lengths_name(o, lname, sizeof lname);
	rec_str(row, "lengths", "%s", lname);
	kvp_record_u64(row, "tokens", (uint64_t)(tokens));
	kvp_record_u64(row, "block_size", (uint64_t)(shape->block_size));
	rec_str(row, "kv_dtype", "%s", kvb_dtype_name(shape->dtype));
	kvp_record_u64(row, "num_heads", (uint64_t)(shape->h_q));
	kvp_record_u64(row, "num_kv_heads", (uint64_t)(shape->h_kv));
	kvp_record_u64(row, "group", (uint64_t)(shape->h_q / shape->h_kv));
	kvp_record_u64(row, "head_dim", (uint64_t)(shape->d));
	kvp_record_u64(row, "threads", (uint64_t)(o->backend == BACKEND_CPU ? kvb_cpu_threads(cx->cpu) : 0));
	if (o->backend == BACKEND_CPU)
		rec_str(row, "isa", "%s", kvb_cpu_isa(cx->cpu));
#ifdef HAVE_CUDA
	else
		rec_str(row, "device", "%s", cx->gpu.name);
#endif
	rec_str(row, "kernel", "%s", kernel_name);
	kvp_record_u64(row, "splits", (uint64_t)(splits));
	kvp_record_u64(row, "chunk_tokens", (uint64_t)(chunk));
	kvp_record_u64(row, "pool_bytes", (uint64_t)(kvb_pool_bytes(shape, kv.num_blocks)));
	kvp_record_u64(row, "moved_bytes", (uint64_t)(moved));
	kvp_record_u64(row, "table_bytes", (uint64_t)(table));
	if (o->k_mul != 1.0 || o->v_mul != 1.0) { /* --kv-scale, only when given */
		kvp_record_f64(row, "kv_scale_k", o->k_mul);
		kvp_record_f64(row, "kv_scale_v", o->v_mul);
	}
	rec_str(row, "validated", "%s", passed ? "pass" : "FAIL");
	kvp_record_f64(row, "max_err", chk.max_err);
	kvp_record_f64(row, "tolerance", kvb_dtype_tolerance(shape->dtype));
	kvp_record_u64(row, "nonfinite", (uint64_t)(chk.nonfinite));
	kvp_record_u64(row, "seqs_checked", (uint64_t)(chk.seqs_checked));
	if (!o->validate_only) {
		/* the CPU's read ceiling of this point, measured beside it */
		double read_ceil = point_ceiling > 0 ? point_ceiling : cx->ceiling.read_gbps;
		double ceil_gbps = o->backend == BACKEND_CPU ? read_ceil : cx->ceiling.copy_gbps;
		kvp_record_u64(row, "repeats", (uint64_t)(o->repeats));
		kvp_record_f64(row, "time_median_s", median);
		kvp_record_f64(row, "time_best_s", best);
		kvp_record_f64(row, "gbps", rounded(gbps, 2));
		/* the step's arithmetic: QK and PV, d multiply-adds each per
		 * token and query head (4 d FLOP), over the median, per core on
		 * the CPU: beside GB/s it says when a point is compute-bound */
		const double flops = 4.0 * (double)tokens * shape->h_q * shape->d;
		kvp_record_f64(row, "flop_per_byte", rounded(moved ? flops / (double)moved : 0.0, 3));
		kvp_record_f64(row, "gflops", rounded(median > 0 ? flops / median / 1e9 : 0.0, 2));
		if (o->backend == BACKEND_CPU)
			kvp_record_f64(row, "gflops_per_core",
				       rounded(median > 0 ? flops / median / 1e9 / kvb_cpu_threads(cx->cpu)
							  : 0.0, 2));
		kvp_record_f64(row, "ceiling_read_gbps", rounded(read_ceil, 2));
		kvp_record_f64(row, "ceiling_copy_gbps", rounded(cx->ceiling.copy_gbps, 2));
		kvp_record_f64(row, "ceiling_triad_gbps", rounded(cx->ceiling.triad_gbps, 2));
		/* which ceiling `ratio` divides by, and its value: the table's
		 * "ceil" column is this one, never another */
		rec_str(row, "ratio_ceiling", "%s", o->backend == BACKEND_CPU ? "read" : "copy");
		kvp_record_f64(row, "ceiling_gbps", rounded(ceil_gbps, 2));
		kvp_record_f64(row, "ratio", rounded(ceil_gbps > 0 ? gbps / ceil_gbps : 0.0, 3));
		if (o->backend == BACKEND_CPU) {
			/* the compute side: GF/s/core against the multiply-add peak
			 * measured beside the point, and the point's GB/s against the
			 * same decode run warm from the last-level cache (warm_gbps);
			 * bound names the nearer ceiling: the warm rate (compute) or
			 * the read ceiling (memory), or "unclear" when a read of the
			 * warm cache's size did not run WARM_HELD times the read
			 * ceiling (the cache did not hold it: the warm rate is one
			 * from memory too, and nearness to it proves nothing) */
			const double gpc = median > 0 ? flops / median / 1e9 / kvb_cpu_threads(cx->cpu)
						      : 0.0;
			const double cr = point_peak > 0 ? gpc / point_peak : 0.0;
			const double mr = ceil_gbps > 0 ? gbps / ceil_gbps : 0.0;
			const double wr = warm > 0 ? gbps / warm : 0.0;
			kvp_record_f64(row, "peak_gflops_per_core", rounded(point_peak, 2));
			kvp_record_f64(row, "compute_ratio", rounded(cr, 3));
			kvp_record_f64(row, "warm_gbps", rounded(warm, 2));
			kvp_record_f64(row, "warm_gflops_per_core", rounded(warm_gflops_pc, 2));
			kvp_record_f64(row, "warm_ratio", rounded(wr, 3));
			kvp_record_f64(row, "warm_read_gbps", rounded(warm_read, 2));
			rec_str(row, "bound", "%s",
				warm_read < WARM_HELD * ceil_gbps ? "unclear"
				: wr > mr			  ? "compute"
								  : "memory");
			rec_str(row, "prefetch", "%s", kvb_cpu_prefetch_name(cx->cpu));
			/* the judgement (issue 39): GB/s against the nearer of the
			 * read ceiling and the loop's own compute ceiling (hot_gbps),
			 * both measured in this run beside the point */
			const int by_compute = hot > 0 && hot < ceil_gbps;
			const double cmin = by_compute ? hot : ceil_gbps;
			kvp_record_f64(row, "compute_gbps", rounded(hot, 2));
			rec_str(row, "ceiling_min", "%s", by_compute ? "compute" : "read");
			kvp_record_f64(row, "ceiling_min_gbps", rounded(cmin, 2));
			kvp_record_f64(row, "ratio_min", rounded(cmin > 0 ? gbps / cmin : 0.0, 3));
		}
		/* the best run against the ceiling, which is a best too (STREAM) */
		kvp_record_f64(row, "gbps_best", rounded(best > 0 ? (double)moved / best / 1e9 : 0.0, 2));
		kvp_record_f64(row, "ratio_best",
			       rounded(ceil_gbps > 0 && best > 0 ? (double)moved / best / 1e9 / ceil_gbps
								 : 0.0, 3));
#ifndef KVBENCH_STANDALONE
		if (passed)
			predict_point(cx, shape, &kv, median, read_ceil, row);
#endif
		if (o->backend == BACKEND_CPU) {
			/* preemption (rounds.h): each round of the decode, the read
			 * ceiling and the compute ceiling timed on the wall clock and
			 * on the workers' CPU clocks; a round whose wall time exceeds
			 * the busiest worker's CPU time (or a worker's time inside a
			 * job its CPU time there) by more than preempt_frac of it is
			 * redone, at most KVB_ROUND_REDOS times */
			const int nc = nclean > 0 ? nclean : o->repeats;
			qsort(cpu_times, (size_t)nc, sizeof *cpu_times, kvb_cmp_double);
			const double cpu_median = nc % 2 ? cpu_times[nc / 2]
				: 0.5 * (cpu_times[nc / 2 - 1] + cpu_times[nc / 2]);
			kvp_record_f64(row, "time_median_cpu_s", cpu_median);
			kvp_record_f64(row, "read_round_s", read_round.wall_s);
			kvp_record_f64(row, "read_round_cpu_s", read_round.cpu_max_s);
			kvp_record_f64(row, "compute_round_s", hot_round.wall_s);
			kvp_record_f64(row, "compute_round_cpu_s", hot_round.cpu_max_s);
			kvp_record_u64(row, "decode_redone", (uint64_t)t_dec.redone);
			kvp_record_u64(row, "read_redone", (uint64_t)t_read.redone);
			kvp_record_u64(row, "compute_redone", (uint64_t)t_hot.redone);
			kvp_record_u64(row, "rounds_redone",
				       (uint64_t)(t_dec.redone + t_read.redone + t_hot.redone));
			kvp_record_u64(row, "rounds_preempted",
				       (uint64_t)(t_dec.preempted + t_read.preempted + t_hot.preempted));
			kvp_record_f64(row, "preempt_frac", KVB_PREEMPT_FRAC);
			/* the judgement with one statistic for all three: the
			 * fastest clean decode against min(read, compute), each
			 * ceiling the fastest of its clean rounds too */
			const double cmin_b = hot > 0 && hot < ceil_gbps ? hot : ceil_gbps;
			kvp_record_f64(row, "ratio_min_best",
				       rounded(cmin_b > 0 && best > 0 ? (double)moved / best / 1e9 / cmin_b
								      : 0.0, 3));
		}
	}
	if (!passed)
		fprintf(stderr,
			"kvbench: validation FAILED: %s B=%d ctx=%d P=%d %d:%d d=%d K x%g V x%g: max "
			"error %.3g (bound %.3g) at sequence %d head %d element %d, %lld non-finite "
			"outputs\n",
			kvb_dtype_name(shape->dtype), batch, context, shape->block_size, shape->h_q,
			shape->h_kv, shape->d, o->k_mul, o->v_mul, chk.max_err,
			kvb_dtype_tolerance(shape->dtype), chk.worst_seq, chk.worst_head, chk.worst_i, (long long)chk.nonfinite);
	rc = passed ? 0 : 1;
out:
#ifdef HAVE_CUDA
	kvb_cuda_decode_free(dc);
#endif
	kvb_paged_kv_free(&kv);
	free(lens);
	free(seqs);
	free(q);
	free(out);
	free(times);
	free(cpu_times);
	return rc;
}

/* Point k of the sweep (0 <= k < the product of the lists' lengths), in
 * the order batch, context, heads, head dim, block size, dtype (the last
 * varying fastest). */
static void sweep_at(const struct opts *o, int k, struct kvb_shape *s, int64_t *batch,
		     int64_t *context)
{
	const int it = k % o->ndtypes;
	k /= o->ndtypes;
	const int ip = k % o->block.n;
	k /= o->block.n;
	const int id = k % o->head_dim.n;
	k /= o->head_dim.n;
	const int ih = k % o->heads.n;
	k /= o->heads.n;
	const int ic = k % o->context.n;
	const int ib = k / o->context.n;
	memset(s, 0, sizeof *s);
	s->h_q = o->heads.hq[ih];
	s->h_kv = o->heads.hkv[ih];
	s->d = (int)o->head_dim.v[id];
	s->block_size = (int)o->block.v[ip];
	s->dtype = o->dtypes[it];
	*batch = o->batch.v[ib];
	*context = o->context.v[ic];
}

/* A rough cost of one point in seconds, for the plan line: filling the
 * cache with random data (assumed 0.5 GB/s per thread), the reference
 * (about 3 * tokens * H_q * d multiply-adds, at most pick_seqs' budget,
 * assumed 1e9 per second per thread) and, timed, every run at the read
 * ceiling plus the flush and the ceiling passes beside it.  An estimate to
 * say whether to wait, not a measurement. */
static double point_cost_s(const struct ctx *cx, const struct kvb_shape *s, int64_t batch,
			   int64_t context)
{
	const struct opts *o = cx->o;
	const double threads = kvb_cpu_threads(cx->cpu);
	const double tokens = (double)batch * (double)context;
	const double elem = kvb_dtype_bytes(s->dtype);
	const double kv_bytes = tokens * 2.0 * s->h_kv * s->d * elem;
	double ref = 3.0 * tokens * s->h_q * s->d;
	if (ref > 3e8 * threads)
		ref = 3e8 * threads;
	double t = kv_bytes / (0.5e9 * threads) + ref / (1e9 * threads);
	double bw = (cx->have_ceiling && cx->ceiling.read_gbps > 0 ? cx->ceiling.read_gbps : 10.0) *
		    1e9;
	/* the decode that is validated runs in either mode (issue 35: validation
	 * alone was planned without it) */
	t += kv_bytes / bw;
	if (!o->validate_only) {
		t += (o->warmup + o->repeats) * kv_bytes / bw;
		if (o->backend == BACKEND_CPU)
			t += ((double)o->repeats * (double)cx->flush_bytes +
			      4.0 * (double)cx->ceiling.array_bytes) / bw;
	}
	return t;
}

/* "N points, about T s on an idle machine" before the sweep starts
 * (stderr).  The rates assumed are those of CPUs kvbench has to itself: on a
 * shared machine the run takes as many times longer as other work takes the
 * cores (issue 35: 135 validation points planned at about 109 s ran for
 * minutes beside other builds), so the plan says so; the per-point lines'
 * time left follows the real pace. */
static void say_plan(struct ctx *cx, int total)
{
	const struct opts *o = cx->o;
	double t = 0;
	for (int k = 0; k < total; k++) {
		struct kvb_shape s;
		int64_t batch, context;
		sweep_at(o, k, &s, &batch, &context);
		t += point_cost_s(cx, &s, batch, context);
	}
	fprintf(stderr, "kvbench: %d points, about %.0f s on an idle machine (%s)\n", total, ceil(t),
		o->validate_only ? "validation only" : "validated, then timed");
}

/* The line of a point as it finishes: its result, its time, and the time
 * left at the average pace so far. */
static void say_result(struct ctx *cx, int done, int total, const struct kvp_record *row)
{
	const double spent = kvb_now_s() - cx->t_start_s;
	fprintf(stderr, "kvbench: [%d/%d] %s, max err %.2g", done, total, str(row, "validated"),
		num(row, "max_err"));
	if (kvp_record_get(row, "gbps"))
		fprintf(stderr, ", %.2f GB/s, %.1f%% of the %s ceiling", num(row, "gbps"),
			100 * num(row, "ratio"), str(row, "ratio_ceiling"));
	fprintf(stderr, "; %.1f s so far, about %.0f s left\n", spent,
		done > 0 ? spent / done * (total - done) : 0.0);
}

/* The CPU ceiling's three arrays of *bytes each against MemAvailable: an
 * --stream-bytes whose arrays exceed it is refused; the default size is
 * shrunk to half of it (the points need the rest) as long as each array
 * stays 2 x LLC (smaller would measure the cache), else refused.  False
 * when refused (said). */
static bool ceiling_fits(const struct opts *o, uint64_t llc, uint64_t *bytes)
{
	uint64_t avail = kvb_mem_available_bytes();
	if (avail == 0)
		return true; /* not known: as before */
	uint64_t need = *bytes > UINT64_MAX / 3 ? UINT64_MAX : 3 * *bytes;
	if (o->stream_bytes_set) {
		if (need <= avail)
			return true;
		fprintf(stderr, "kvbench: --stream-bytes %llu: the ceiling's three arrays need %llu "
				"bytes, %llu available (MemAvailable); lower --stream-bytes\n",
			(unsigned long long)*bytes, (unsigned long long)need,
			(unsigned long long)avail);
		return false;
	}
	if (need <= avail / 2)
		return true;
	uint64_t fit = avail / 2 / 3 / 4096 * 4096;
	if (fit < 2 * llc) {
		fprintf(stderr, "kvbench: the ceiling's three arrays need at least 2 x the last-level "
				"cache each (%llu bytes, to measure memory rather than the cache), "
				"and half of the %llu bytes available (MemAvailable) holds %llu; "
				"not run\n", (unsigned long long)(2 * llc),
			(unsigned long long)avail, (unsigned long long)fit);
		return false;
	}
	fprintf(stderr, "kvbench: the ceiling's arrays shrunk from %llu to %llu bytes each: three "
			"fit in half of the %llu bytes available (MemAvailable)\n",
		(unsigned long long)*bytes, (unsigned long long)fit, (unsigned long long)avail);
	*bytes = fit;
	return true;
}

int run_bandwidth(struct ctx *cx, struct rows *rs)
{
	struct opts *o = cx->o;
	int failed = 0, errors = 0;
	uint64_t llc = kvb_llc_bytes();
	if (llc == 0)
		llc = 32 * KVP_MIB;
	if (!o->validate_only) {
		/* The ceiling's array must not fit the last-level cache, or it
		 * measures the cache: 4 x LLC and at least 512 MiB, or for --quick
		 * 2 x LLC (the GPU's: 4 x its L2 and at least 256 MiB). */
		uint64_t bytes = o->stream_bytes;
		if (!o->stream_bytes_set)
			bytes = o->quick ? 2 * llc : 4 * llc > 512 * KVP_MIB ? 4 * llc : 512 * KVP_MIB;
		if (o->backend == BACKEND_CPU && !ceiling_fits(o, llc, &bytes))
			return EXIT_FAILED;
		int st = -1;
		if (o->backend == BACKEND_CPU)
			st = kvb_stream_cpu(cx->cpu, bytes, 5, &cx->ceiling);
#ifdef HAVE_CUDA
		else {
			if (!o->stream_bytes_set) {
				uint64_t l2 = (uint64_t)cx->gpu.l2_bytes;
				bytes = o->quick ? (4 * l2 > 256 * KVP_MIB ? 4 * l2 : 256 * KVP_MIB)
						 : 1 * KVP_GIB;
			}
			st = kvb_cuda_stream(bytes, 10, &cx->ceiling);
		}
#endif
		if (st != 0) {
			fprintf(stderr, "kvbench: the streaming ceiling could not run: %s\n",
				o->backend == BACKEND_CPU ? "out of memory"
#ifdef HAVE_CUDA
							  : kvb_cuda_error());
#else
							  : "no CUDA");
#endif
			return EXIT_FAILED;
		}
		cx->have_ceiling = 1;
	}
	stream_start(cx);
	if (!o->validate_only && o->backend == BACKEND_CPU) {
		/* A read of twice the LLC before each timed run (a cold cache),
		 * and the ceiling's array to measure it again beside each point. */
		cx->flush_bytes = 2 * llc;
		cx->flush = kvb_big_alloc(cx->flush_bytes);
		cx->ceil_buf = kvb_big_alloc(cx->ceiling.array_bytes);
		if (!cx->flush || !cx->ceil_buf) {
			fprintf(stderr, "kvbench: out of memory\n");
			kvb_big_free(cx->flush);
			kvb_big_free(cx->ceil_buf);
			return EXIT_FAILED;
		}
		memset(cx->flush, 1, cx->flush_bytes);
		memset(cx->ceil_buf, 1, cx->ceiling.array_bytes);
	}
	uint64_t seed = o->seed;
	const int total = o->batch.n * o->context.n * o->heads.n * o->head_dim.n * o->block.n *
			  o->ndtypes;
	const int progress = cx->progress;
	int done = 0;
	if (progress)
		say_plan(cx, total);
	for (int k = 0; k < total; k++) {
		struct kvb_shape s;
		int64_t batch, context;
		sweep_at(o, k, &s, &batch, &context);
		if (progress)
			say_point(++done, total, &s, batch, context);
		struct kvp_record *row = kvp_record_new();
		int rc = row ? run_point(cx, &s, (int32_t)batch, (int32_t)context, seed++, row) : -1;
		if (rc < 0 || rows_add(rs, row) != 0) {
			kvp_record_free(row);
			errors++;
			continue;
		}
		out_point(cx, row);
		if (progress)
			say_result(cx, done, total, row);
		failed += rc;
	}
	kvb_big_free(cx->flush);
	kvb_big_free(cx->ceil_buf);
	cx->flush = cx->ceil_buf = NULL;
	if (!o->validate_only) {
		/* A point whose bytes fit the last-level cache (or the GPU's L2),
		 * or that runs in under a millisecond, times overheads: its ratio
		 * and planner columns cannot show a bandwidth model wrong. */
		uint64_t small = llc;
#ifdef HAVE_CUDA
		if (o->backend == BACKEND_CUDA)
			small = (uint64_t)cx->gpu.l2_bytes;
#endif
		int tiny = 0;
		for (size_t k = 0; k < rs->n; k++)
			if (kvp_record_get(rs->r[k], "gbps") &&
			    (num(rs->r[k], "moved_bytes") < (double)small ||
			     num(rs->r[k], "time_median_s") < 1e-3))
				tiny++;
		if (tiny)
			fprintf(stderr, "kvbench: warning: %d of %zu timed points moved less than the "
				"last-level cache (%llu bytes) or ran under 1 ms: their ratio and "
				"planner columns measure overheads, not bandwidth%s\n", tiny, rs->n,
				(unsigned long long)small, o->quick ? " (--quick is for tests)" : "");
	}
	return failed || errors ? EXIT_FAILED : EXIT_OK;
}
