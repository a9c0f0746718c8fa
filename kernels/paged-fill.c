/* paged-fill.c: the harness's random fill of a paged KV cache
 * (kvb_paged_kv_fill, decode.h), run on the CPU backend's threads.  It sits
 * above both the paged layout (paged.c) and the CPU backend (decode-cpu.c),
 * so neither calls the other's file back.  What the contents are, and why
 * (no zeros, NaN past each length), is said in decode.h and paged.c. */
#include "decode.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#include <unistd.h>
#endif

struct fill_job {
	struct kvb_paged_kv *kv;
	const int32_t *valid; /* [N] valid slots of each block */
	uint64_t seed;
	float k_mul, v_mul;   /* amplitude factors of K and V */
};

/* One row of d values, amplitude drawn in [0.25, 2] times mul; fp8 stores
 * value / tensor_scale (the pool's k_scale or v_scale). */
static void fill_row(const struct kvb_paged_kv *kv, void *pool, float *scales, int64_t row,
		     int64_t srow, int valid, uint64_t *st, float mul, float tensor_scale)
{
	const int d = kv->shape.d;
	float amp = (0.25f + 1.75f * kvb_rng_float(st)) * mul;
	float inv = 1.0f; /* stored = value * inv */
	if (kv->shape.dtype == KVB_DTYPE_FP8)
		inv = 1.0f / tensor_scale;
	if (kv->shape.dtype == KVB_DTYPE_INT8) {
		scales[srow] = valid ? amp / 127.0f : NAN;
		inv = 127.0f / amp;
	}
	for (int i = 0; i < d; i++) {
		float x = amp * (2.0f * kvb_rng_float(st) - 1.0f);
		int64_t e = row + i;
		switch (kv->shape.dtype) {
		case KVB_DTYPE_FP32:
			((float *)pool)[e] = valid ? x : NAN;
			break;
		case KVB_DTYPE_FP16:
			((uint16_t *)pool)[e] = valid ? kvb_float_to_fp16(x) : 0x7e00u;
			break;
		case KVB_DTYPE_BF16:
			((uint16_t *)pool)[e] = valid ? kvb_float_to_bf16(x) : 0x7fc0u;
			break;
		case KVB_DTYPE_FP8:
			((uint8_t *)pool)[e] = valid ? kvb_float_to_e4m3(x * inv) : 0x7fu;
			break;
		case KVB_DTYPE_INT8: {
			float r = nearbyintf(x * inv);
			r = r > 127.0f ? 127.0f : r < -127.0f ? -127.0f : r;
			((int8_t *)pool)[e] = (int8_t)r;
			break;
		}
		default:
			break;
		}
	}
}

static void fill_worker(void *arg, int tid, int nthreads)
{
	struct fill_job *job = arg;
	struct kvb_paged_kv *kv = job->kv;
	const struct kvb_shape *s = &kv->shape;
	int32_t lo = (int32_t)((int64_t)kv->num_blocks * tid / nthreads);
	int32_t hi = (int32_t)((int64_t)kv->num_blocks * (tid + 1) / nthreads);
	for (int32_t blk = lo; blk < hi; blk++)
		for (int h = 0; h < s->h_kv; h++) {
			/* One stream per (block, head): the same data for any thread count. */
			uint64_t st = job->seed ^ (((uint64_t)blk << 20) + (uint64_t)h) * 0x9e3779b97f4a7c15ull;
			for (int slot = 0; slot < s->block_size; slot++) {
				int valid = slot < job->valid[blk];
				int64_t row = kvb_row_index(s, blk, h, slot);
				int64_t srow = kvb_scale_index(s, blk, h, slot);
				fill_row(kv, kv->k_pool, kv->k_scales, row, srow, valid, &st,
					 job->k_mul, kv->k_scale);
				fill_row(kv, kv->v_pool, kv->v_scales, row, srow, valid, &st,
					 job->v_mul, kv->v_scale);
			}
		}
}

int kvb_paged_kv_fill(struct kvb_paged_kv *kv, uint64_t seed, struct kvb_cpu *cpu)
{
	return kvb_paged_kv_fill_scaled(kv, seed, cpu, 1.0f, 1.0f);
}

int kvb_paged_kv_fill_scaled(struct kvb_paged_kv *kv, uint64_t seed, struct kvb_cpu *cpu,
			     float k_mul, float v_mul)
{
	const int P = kv->shape.block_size;
	int32_t *valid = calloc((size_t)kv->num_blocks, sizeof *valid);
	struct fill_job job = {kv, valid, seed, k_mul, v_mul};
	if (!valid)
		return -1;
	if (kv->shape.dtype == KVB_DTYPE_FP8) {
		/* values lie in (-2 mul, 2 mul): 448, e4m3's largest, stands for 2 mul */
		kv->k_scale = 2.0f * k_mul / 448.0f;
		kv->v_scale = 2.0f * v_mul / 448.0f;
	}
	for (int32_t b = 0; b < kv->batch; b++) {
		int64_t nb = ((int64_t)kv->seq_lens[b] + P - 1) / P;
		for (int64_t j = 0; j < nb; j++) {
			int64_t left = kv->seq_lens[b] - j * P;
			valid[kv->block_tables[(int64_t)b * kv->max_blocks + j]] =
				(int32_t)(left < P ? left : P);
		}
	}
	if (cpu)
		kvb_cpu_parallel(cpu, fill_worker, &job);
	else
		fill_worker(&job, 0, 1);
	free(valid);
	return 0;
}


/* A mapping of `span` bytes whose every page is the same physical page,
 * holding src's first page (the hot cache's pools, kvb_paged_kv_make_hot):
 * the caches are indexed and tagged by physical address, so reading any of
 * the span reads that one page, and the loop over a whole block of H_kv
 * heads (32 heads x 16 rows x 128 x 4 bytes is 256 KiB, the core's L2, not
 * its L1) runs on data in L1.  A temporary file's page mapped at each page
 * of a reserved range; *bytes gets the range's size for munmap.  NULL where
 * the system has no mmap, where the span is one page or less, or on any
 * failure: the caller keeps its plain pools then. */
static void *alias_pages(const void *src, size_t span, size_t *bytes)
{
#if (defined(__unix__) || defined(__APPLE__)) && defined(MAP_ANONYMOUS) && defined(MAP_FIXED)
	const long ps = sysconf(_SC_PAGESIZE);
	if (ps <= 0 || span <= (size_t)ps)
		return NULL;
	const size_t page = (size_t)ps, total = (span + page - 1) / page * page;
	FILE *f = tmpfile();
	if (!f)
		return NULL;
	const int fd = fileno(f);
	char *base = MAP_FAILED;
	if (fd >= 0 && ftruncate(fd, (off_t)page) == 0)
		base = mmap(NULL, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (size_t o = 0; base != MAP_FAILED && o < total; o += page)
		if (mmap(base + o, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
			munmap(base, total);
			base = MAP_FAILED;
		}
	fclose(f); /* the mappings hold the file's page */
	if (base == MAP_FAILED)
		return NULL;
	memcpy(base, src, page);
	*bytes = total;
	return base;
#else
	(void)src;
	(void)span;
	(void)bytes;
	return NULL;
#endif
}

int kvb_paged_kv_make_hot(struct kvb_paged_kv *kv, const struct kvb_shape *shape, int32_t batch,
			  const int32_t *seq_lens, uint64_t seed, struct kvb_cpu *cpu)
{
	const int32_t one = shape->block_size; /* one full block: no NaN slot in it */
	int32_t *lens = NULL, *tables = NULL;
	int64_t max_blocks = 1;
	if (batch <= 0 || kvb_paged_kv_alloc(kv, shape, 1, &one, seed) != 0)
		return -1;
	if (kvb_paged_kv_fill(kv, seed, cpu) != 0)
		goto fail;
	/* K and V of the one block as one page each, seen at every page of the
	 * block (alias_pages): in L1 whatever H_kv, P and d are */
	const size_t span = (size_t)shape->h_kv * (size_t)one * (size_t)shape->d *
			    kvb_dtype_bytes(shape->dtype);
	size_t kb = 0, vb = 0;
	void *ka = alias_pages(kv->k_pool, span, &kb);
	void *va = ka ? alias_pages(kv->v_pool, span, &vb) : NULL;
	if (ka && va) {
		kvb_big_free(kv->k_pool);
		kvb_big_free(kv->v_pool);
		kv->k_pool = ka;
		kv->v_pool = va;
		kv->k_map_bytes = kb;
		kv->v_map_bytes = vb;
	} else if (ka) {
		kvb_pool_unmap(ka, kb);
	}
	for (int32_t b = 0; b < batch; b++) {
		int64_t nb = ((int64_t)seq_lens[b] + shape->block_size - 1) / shape->block_size;
		if (seq_lens[b] < 0)
			goto fail;
		max_blocks = nb > max_blocks ? nb : max_blocks;
	}
	if ((int64_t)batch * max_blocks > INT32_MAX)
		goto fail;
	lens = malloc((size_t)batch * sizeof *lens);
	tables = calloc((size_t)batch * (size_t)max_blocks, sizeof *tables); /* all block 0 */
	if (!lens || !tables)
		goto fail;
	memcpy(lens, seq_lens, (size_t)batch * sizeof *lens);
	free(kv->seq_lens);
	free(kv->block_tables);
	kv->seq_lens = lens;
	kv->block_tables = tables;
	kv->batch = batch;
	kv->max_blocks = (int32_t)max_blocks;
	return 0;
fail:
	free(lens);
	free(tables);
	kvb_paged_kv_free(kv);
	return -1;
}
