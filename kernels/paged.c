/* paged.c: building a paged KV cache for the harness: dtype names, lengths,
 * allocation with distinct randomly ordered blocks per sequence, random
 * fill, and the byte counts a decode step is credited with.
 *
 * Stance: the cache must look like a serving engine's after some churn —
 * a sequence's blocks scattered over the pool, never shared — and its
 * contents must make wrong kernels fail loudly: no zeros, and NaN in the
 * slots past each sequence's length so a kernel that reads them is caught. */
#include "decode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

static const struct {
	const char *name;
	size_t bytes;
	double tolerance;
} dtype_info[KVB_DTYPE_COUNT] = {
	/* fp32 in fp32: a few ulps of the score times the sum's size */
	[KVB_DTYPE_FP32] = {"fp32", 4, 1e-4},
	/* products in fp16: 2^-11 per operand, twice */
	[KVB_DTYPE_FP16] = {"fp16", 2, 2e-3},
	/* products in bf16: 2^-8 per operand, twice */
	[KVB_DTYPE_BF16] = {"bf16", 2, 1e-2},
	[KVB_DTYPE_FP8] = {"fp8", 1, 1e-2},
	[KVB_DTYPE_INT8] = {"int8", 1, 1e-2},
};

const char *kvb_dtype_name(enum kvb_dtype dtype)
{
	return (unsigned)dtype < KVB_DTYPE_COUNT ? dtype_info[dtype].name : "?";
}

size_t kvb_dtype_bytes(enum kvb_dtype dtype)
{
	return (unsigned)dtype < KVB_DTYPE_COUNT ? dtype_info[dtype].bytes : 0;
}

double kvb_dtype_tolerance(enum kvb_dtype dtype)
{
	return (unsigned)dtype < KVB_DTYPE_COUNT ? dtype_info[dtype].tolerance : 0;
}

int kvb_dtype_parse(const char *s, enum kvb_dtype *out)
{
	static const struct {
		const char *alias;
		enum kvb_dtype dtype;
	} aliases[] = {
		{"float32", KVB_DTYPE_FP32}, {"float", KVB_DTYPE_FP32},
		{"float16", KVB_DTYPE_FP16}, {"half", KVB_DTYPE_FP16},
		{"bfloat16", KVB_DTYPE_BF16}, {"fp8_e4m3", KVB_DTYPE_FP8},
		{"e4m3", KVB_DTYPE_FP8},
	};
	for (int i = 0; i < KVB_DTYPE_COUNT; i++)
		if (strcasecmp(s, dtype_info[i].name) == 0) {
			*out = (enum kvb_dtype)i;
			return 0;
		}
	for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
		if (strcasecmp(s, aliases[i].alias) == 0) {
			*out = aliases[i].dtype;
			return 0;
		}
	return -1;
}

int kvb_shape_check(const struct kvb_shape *s)
{
	if (s->h_q <= 0 || s->h_kv <= 0 || s->d <= 0 || s->block_size <= 0)
		return -1;
	if (s->h_q % s->h_kv != 0 || (unsigned)s->dtype >= KVB_DTYPE_COUNT)
		return -1;
	return 0;
}

int kvb_lengths_parse(const char *s, enum kvb_lengths *out)
{
	if (strcmp(s, "fixed") == 0)
		*out = KVB_LENGTHS_FIXED;
	else if (strcmp(s, "uniform") == 0)
		*out = KVB_LENGTHS_UNIFORM;
	else
		return -1;
	return 0;
}

const char *kvb_lengths_name(enum kvb_lengths dist)
{
	return dist == KVB_LENGTHS_UNIFORM ? "uniform" : "fixed";
}

void kvb_lengths_make(enum kvb_lengths dist, int32_t batch, int32_t context, uint64_t seed,
		      int32_t *out)
{
	uint64_t st = seed ^ 0x6c656e67746873ull; /* "lengths" */
	for (int32_t b = 0; b < batch; b++) {
		if (dist == KVB_LENGTHS_FIXED || context <= 1) {
			out[b] = context > 0 ? context : 1;
			continue;
		}
		uint64_t span = 2 * (uint64_t)context - 1; /* values 1 .. 2c-1 */
		out[b] = (int32_t)(1 + kvb_rng_next(&st) % span);
	}
}

void *kvb_big_alloc(uint64_t bytes)
{
	const uint64_t huge = 2ull << 20;
	uint64_t align = bytes >= 4 * huge ? huge : 4096;
	uint64_t size = (bytes + align - 1) / align * align;
	void *p = NULL;
	if (size == 0)
		size = align;
	if (size < bytes || posix_memalign(&p, align, size) != 0)
		return NULL;
#ifdef MADV_HUGEPAGE
	if (align == huge)
		(void)madvise(p, size, MADV_HUGEPAGE);
#endif
	return p;
}

void kvb_big_free(void *p)
{
	free(p);
}

uint64_t kvb_block_bytes(const struct kvb_shape *s)
{
	uint64_t per_token = (uint64_t)s->d * kvb_dtype_bytes(s->dtype);
	if (s->dtype == KVB_DTYPE_INT8)
		per_token += sizeof(float);
	return 2 * (uint64_t)s->h_kv * s->block_size * per_token;
}

uint64_t kvb_pool_bytes(const struct kvb_shape *s, int64_t num_blocks)
{
	return kvb_block_bytes(s) * (uint64_t)num_blocks;
}

void kvb_pool_unmap(void *p, size_t bytes)
{
#if defined(__unix__) || defined(__APPLE__)
	if (p)
		munmap(p, bytes);
#else
	(void)p;
	(void)bytes;
#endif
}

void kvb_paged_kv_free(struct kvb_paged_kv *kv)
{
	if (kv->k_map_bytes)
		kvb_pool_unmap(kv->k_pool, kv->k_map_bytes);
	else
		kvb_big_free(kv->k_pool);
	if (kv->v_map_bytes)
		kvb_pool_unmap(kv->v_pool, kv->v_map_bytes);
	else
		kvb_big_free(kv->v_pool);
	free(kv->k_scales);
	free(kv->v_scales);
	free(kv->block_tables);
	free(kv->seq_lens);
	memset(kv, 0, sizeof *kv);
}

int kvb_paged_kv_alloc(struct kvb_paged_kv *kv, const struct kvb_shape *shape, int32_t batch,
		       const int32_t *seq_lens, uint64_t seed)
{
	int32_t *perm = NULL;
	memset(kv, 0, sizeof *kv);
	if (kvb_shape_check(shape) != 0 || batch <= 0) {
		errno = EINVAL;
		return -1;
	}
	kv->shape = *shape;
	kv->batch = batch;
	kv->sm_scale = 1.0f / sqrtf((float)shape->d);
	kv->k_scale = kv->v_scale = 1.0f;
	if (shape->dtype == KVB_DTYPE_FP8)
		kv->k_scale = kv->v_scale = 2.0f / 448.0f; /* values lie in (-2, 2) */

	const int P = shape->block_size;
	int64_t total = 0, max_blocks = 1;
	for (int32_t b = 0; b < batch; b++) {
		if (seq_lens[b] < 0)
			goto fail;
		int64_t nb = ((int64_t)seq_lens[b] + P - 1) / P;
		total += nb;
		if (nb > max_blocks)
			max_blocks = nb;
	}
	if (total > INT32_MAX - 1 || (int64_t)batch * max_blocks > INT32_MAX)
		goto fail;
	kv->num_blocks = (int32_t)(total > 0 ? total : 1);
	kv->max_blocks = (int32_t)max_blocks;

	uint64_t elems = (uint64_t)kv->num_blocks * shape->h_kv * P * shape->d;
	uint64_t pool = elems * kvb_dtype_bytes(shape->dtype);
	if (pool / kvb_dtype_bytes(shape->dtype) != elems)
		goto fail;
	kv->k_pool = kvb_big_alloc(pool);
	kv->v_pool = kvb_big_alloc(pool);
	kv->seq_lens = malloc((size_t)batch * sizeof *kv->seq_lens);
	kv->block_tables = malloc((size_t)batch * max_blocks * sizeof *kv->block_tables);
	perm = malloc((size_t)kv->num_blocks * sizeof *perm);
	if (!kv->k_pool || !kv->v_pool || !kv->seq_lens || !kv->block_tables || !perm)
		goto fail;
	if (shape->dtype == KVB_DTYPE_INT8) {
		size_t n = (size_t)kv->num_blocks * shape->h_kv * P;
		kv->k_scales = malloc(n * sizeof(float));
		kv->v_scales = malloc(n * sizeof(float));
		if (!kv->k_scales || !kv->v_scales)
			goto fail;
	}
	memcpy(kv->seq_lens, seq_lens, (size_t)batch * sizeof *seq_lens);

	/* Fisher-Yates: every block used once, in random order. */
	uint64_t st = seed ^ 0x626c6f636b73ull; /* "blocks" */
	for (int32_t i = 0; i < kv->num_blocks; i++)
		perm[i] = i;
	for (int32_t i = kv->num_blocks - 1; i > 0; i--) {
		int32_t j = (int32_t)(kvb_rng_next(&st) % (uint64_t)(i + 1));
		int32_t t = perm[i];
		perm[i] = perm[j];
		perm[j] = t;
	}
	int64_t next = 0;
	for (int32_t b = 0; b < batch; b++) {
		int64_t nb = ((int64_t)seq_lens[b] + P - 1) / P;
		int32_t *row = kv->block_tables + (int64_t)b * max_blocks;
		for (int64_t j = 0; j < max_blocks; j++)
			row[j] = j < nb ? perm[next++] : -1; /* -1: never to be read */
	}
	free(perm);
	return 0;
fail:
	free(perm);
	kvb_paged_kv_free(kv);
	errno = ENOMEM;
	return -1;
}

void kvb_queries_fill(float *q, size_t n, uint64_t seed)
{
	uint64_t st = seed ^ 0x71756572696573ull; /* "queries" */
	for (size_t i = 0; i < n; i++)
		q[i] = 4.0f * kvb_rng_float(&st) - 2.0f;
}

int kvb_paged_kv_bytes(const struct kvb_paged_kv *kv, uint64_t *moved_bytes,
		       uint64_t *table_bytes)
{
	const struct kvb_shape *s = &kv->shape;
	uint64_t tokens = 0, blocks = 0;
	for (int32_t b = 0; b < kv->batch; b++) {
		tokens += (uint64_t)kv->seq_lens[b];
		blocks += ((uint64_t)kv->seq_lens[b] + s->block_size - 1) / s->block_size;
	}
	/* per token: K and V rows for every KV head (+ int8's two scales) */
	uint64_t per_token = 2 * (uint64_t)s->h_kv * s->d * kvb_dtype_bytes(s->dtype);
	if (s->dtype == KVB_DTYPE_INT8)
		per_token += 2 * (uint64_t)s->h_kv * sizeof(float);
	uint64_t qo = 2 * (uint64_t)kv->batch * s->h_q * s->d * sizeof(float);
	uint64_t kvb, sum;
	if (__builtin_mul_overflow(tokens, per_token, &kvb) || __builtin_add_overflow(kvb, qo, &sum))
		return -1;
	if (s->dtype == KVB_DTYPE_FP8)
		sum += 2 * sizeof(float);
	*moved_bytes = sum;
	if (table_bytes)
		*table_bytes = (blocks + (uint64_t)kv->batch) * sizeof(int32_t);
	return 0;
}
