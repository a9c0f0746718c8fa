/* fuzz-common.h: what kvplan's libFuzzer targets share: writing the input to a
 * file (the loaders take paths, as the CLI does), and running the budget of a
 * loaded model on a GPU under every engine and a few tp/pp splits while
 * checking invariants that a wrapped number would break.
 *
 * The sanitizers catch crashes and undefined behaviour; these checks catch
 * what they cannot see: an unsigned product that wrapped and left a pool
 * larger than the GPU, a block count whose bytes exceed the pool, a fit that
 * does not fit, a NaN or negative utilization.  A broken invariant aborts, so
 * libFuzzer saves the input as a crash.  Header-only: each target includes it
 * once. */
#ifndef KVP_FUZZ_COMMON_H
#define KVP_FUZZ_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "memory/budget.h"
#include "out/output.h"
#include "read/profile.h"

#define FUZZ_ASSERT(cond, what)                                                        \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: invariant broken: %s (%s)\n", __FILE__, \
				__LINE__, what, #cond);                                \
			abort();                                                       \
		}                                                                      \
	} while (0)

/* Write the input to a per-process file named `stem` with `suffix` (may be
 * "": no .yaml suffix, so a model profile's name need not match the file);
 * returns the path (static, rewritten by the next call). */
static const char *fuzz_write_file(const char *stem, const char *suffix, const uint8_t *data,
				   size_t size)
{
	static char path[600];
	const char *dir = getenv("TMPDIR");
	snprintf(path, sizeof path, "%s/kvplan-%s-%ld%s%s", dir && *dir ? dir : "/tmp", stem,
		 (long)getpid(), suffix[0] ? "." : "", suffix);
	FILE *f = fopen(path, "wb");
	if (!f)
		abort();
	if (size && fwrite(data, 1, size, f) != size)
		abort();
	fclose(f);
	return path;
}

static const char *fuzz_write_input(const char *stem, const uint8_t *data, size_t size)
{
	return fuzz_write_file(stem, "", data, size);
}

/* Inputs whose first byte picks the file's form: even `even`, odd `odd`;
 * the rest is the file.  NULL for an empty input. */
static const char *fuzz_write_picked(const char *stem, const char *even, const char *odd,
				     const uint8_t *data, size_t size)
{
	if (size == 0)
		return NULL;
	return fuzz_write_file(stem, data[0] & 1 ? odd : even, data + 1, size - 1);
}

/* The input as a C string (cut at its first NUL), malloc'd; NULL when memory
 * runs out. */
static char *fuzz_cstring(const uint8_t *data, size_t size)
{
	char *s = malloc(size + 1);
	if (s) {
		memcpy(s, data, size);
		s[size] = '\0';
	}
	return s;
}

/* Write a record in all three formats to a sink, as the CLI would. */
static void fuzz_write_record(struct kvp_record *r)
{
	static FILE *sink;
	if (!sink)
		sink = fopen("/dev/null", "w");
	kvp_write_json(sink, r);
	kvp_write_csv(sink, &r, 1);
	kvp_write_table(sink, &r, 1);
}

/* The invariants of one computed budget. */
static void fuzz_check_budget(const struct kvp_budget *b)
{
	uint64_t t;
	FUZZ_ASSERT(b->kv_pool_bytes <= b->gpu_memory_bytes, "pool larger than the GPU");
	FUZZ_ASSERT(b->usable_bytes <= b->gpu_memory_bytes || b->engine == KVP_ENGINE_TRTLLM,
		    "usable larger than the GPU");
	FUZZ_ASSERT(b->headroom_bytes <= b->gpu_memory_bytes, "headroom larger than the GPU");
	uint64_t slot = b->page_bytes;
	if (b->engine == KVP_ENGINE_VLLM)
		FUZZ_ASSERT(!__builtin_mul_overflow(slot, (uint64_t)b->group_size, &slot),
			    "page x group size wrapped");
	/* TensorRT-LLM rounds its blocks up (kvCacheManager.cpp: ceilDiv(floor(pool /
	 * B per token), tokens per block)): up to one block less a token over */
	uint64_t over = b->engine == KVP_ENGINE_TRTLLM && slot > b->spec.token_bytes
		? slot - b->spec.token_bytes : 0;
	FUZZ_ASSERT(!__builtin_mul_overflow(b->num_blocks, slot, &t) &&
			    (t <= b->kv_pool_bytes || t - b->kv_pool_bytes <= over),
		    "blocks hold more than the pool");
	FUZZ_ASSERT(b->weights_fit || b->kv_pool_bytes == 0, "pool without the weights");
	FUZZ_ASSERT(!b->fits || b->weights_fit, "fits without the weights");
	/* B sequences fit: their exact KV is in the pool, their paged share too */
	if (b->fits) {
		FUZZ_ASSERT(b->kv_bytes <= b->kv_pool_bytes, "fits, but the KV exceeds the pool");
		FUZZ_ASSERT(!__builtin_mul_overflow(b->seq_bytes, b->batch, &t) &&
				    t <= b->kv_pool_bytes,
			    "fits, but the paged KV exceeds the pool");
	}
	FUZZ_ASSERT(b->max_sequences >= b->batch || !b->fits, "fits beyond max_sequences");
	FUZZ_ASSERT(b->spec.token_bytes <= b->spec.token_bytes_total,
		    "one GPU holds more KV per token than the whole model");
	FUZZ_ASSERT(b->spec.weights_bytes <= b->spec.weights_bytes_total,
		    "one GPU holds more weights than the whole model");
	/* SGLang's default fraction is 0 on a GPU smaller than its reserve */
	FUZZ_ASSERT(b->utilization >= 0 && b->utilization <= 1, "utilization outside [0, 1]");
	FUZZ_ASSERT(b->utilization > 0 || !b->weights_fit, "a pool from a zero fraction");
}

/* Every engine under a few splits and KV dtypes; the inverse questions once per
 * engine.  `gpu` is the GPU to plan on. */
static void fuzz_budgets(const struct kvp_model *m, const struct kvp_gpu *gpu, uint64_t context)
{
	static struct kvp_budget b;
	static const struct kvp_parallel splits[] = {{1, 1}, {2, 1}, {8, 2}, {1, 3}};
	static const enum kvp_dtype kvs[] = {KVP_DTYPE_AUTO, KVP_DTYPE_FP8, KVP_DTYPE_INT4};
	for (int e = KVP_ENGINE_GENERIC; e <= KVP_ENGINE_TRTLLM; e++)
		for (size_t s = 0; s < sizeof splits / sizeof splits[0]; s++)
			for (size_t k = 0; k < sizeof kvs / sizeof kvs[0]; k++) {
				if (k && s)
					continue; /* dtypes at tp = pp = 1 only: keep it fast */
				struct kvp_budget_opts o = {0};
				o.engine = (enum kvp_engine)e;
				o.par = splits[s];
				o.kv_dtype = kvs[k];
				o.context = context;
				o.batch = 1 + (context & 7);
				struct kvp_error err = {0};
				if (kvp_budget_compute(m, gpu, &o, &b, &err) != KVP_STATUS_OK) {
					char msg[1400];
					kvp_error_format(&err, msg, sizeof msg);
					continue;
				}
				fuzz_check_budget(&b);
				if (s == 0 && k == 0) {
					uint64_t mc = kvp_budget_max_context(&b, b.batch, 1ULL << 40);
					uint64_t per;
					if (mc && kvp_budget_pool_for(&b, mc, b.batch, &per) == KVP_STATUS_OK)
						FUZZ_ASSERT(per <= b.kv_pool_bytes,
							    "max context does not fit");
					double u = kvp_budget_utilization_for(&b, b.context, b.batch);
					FUZZ_ASSERT(!isnan(u) && u >= 0, "utilization needed is NaN or negative");
				}
				struct kvp_record *r = kvp_record_new();
				if (r && kvp_budget_to_record(&b, gpu->name, r))
					fuzz_write_record(r);
				kvp_record_free(r);
			}
}

#endif
