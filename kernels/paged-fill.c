/* paged-fill.c: the harness's random fill of a paged KV cache
 * (kvb_paged_kv_fill, decode.h), run on the CPU backend's threads.  It sits
 * above both the paged layout (paged.c) and the CPU backend (decode-cpu.c),
 * so neither calls the other's file back.  What the contents are, and why
 * (no zeros, NaN past each length), is said in decode.h and paged.c. */
#include "decode.h"

#include <stdlib.h>

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

