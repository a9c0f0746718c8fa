/* kvbench-capacity.c: kvbench --capacity, the measured side of the
 * planner's capacity numbers: the weights and then a KV pool of whole
 * blocks allocated for real and touched (malloc on the CPU, cudaMalloc on
 * a GPU) up to the memory limit, sequences admitted first come first
 * served while their blocks fit, and the planner's prediction beside it.
 * A pool the allocator stops short of the limit fails the run. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "kvbench.h"
#include "base/units.h"
#ifndef KVBENCH_STANDALONE
#include "predict.h"
#endif

#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- capacity
 * The measured side of the planner's capacity numbers: allocate what the
 * budget allows for real and count what fits. */

/* Allocate, for real and touched, `weights` bytes and then pool chunks of
 * whole blocks while the total stays within `limit`.  Returns blocks. */
static int64_t cpu_capacity(uint64_t weights, uint64_t limit, uint64_t block_bytes, int *err,
			    int *refused)
{
	enum { MAXCHUNKS = 4096 };
	void *chunk[MAXCHUNKS];
	int nchunks = 0;
	int64_t blocks = 0;
	uint64_t used = 0;
	const uint64_t chunk_max = 256 * KVP_MIB;
	void *w = NULL;
	*err = 0;
	*refused = 0;
	if (weights > limit)
		return 0;
	if (weights) {
		w = kvb_big_alloc(weights);
		if (!w) {
			*err = 1;
			return 0;
		}
		memset(w, 0x5a, weights);
		used = weights;
	}
	while (used + block_bytes <= limit && nchunks < MAXCHUNKS) {
		uint64_t room = limit - used;
		uint64_t n = (room < chunk_max ? room : chunk_max) / block_bytes;
		if (n == 0)
			n = 1; /* a block larger than a chunk still gets its own */
		void *p = kvb_big_alloc(n * block_bytes);
		if (!p) {
			*refused = 1; /* the machine said no before the limit did */
			break;
		}
		memset(p, 0xa5, n * block_bytes);
		chunk[nchunks++] = p;
		used += n * block_bytes;
		blocks += (int64_t)n;
	}
	if (nchunks == MAXCHUNKS && used + block_bytes <= limit)
		*refused = 1;
	for (int i = 0; i < nchunks; i++)
		kvb_big_free(chunk[i]);
	kvb_big_free(w);
	return blocks;
}

int run_capacity(struct ctx *cx, struct rows *rs)
{
	struct opts *o = cx->o;
	uint64_t cap = o->gpu_memory_set ? o->gpu_memory : KVP_GIB;
#ifdef HAVE_CUDA
	if (o->backend == BACKEND_CUDA && !o->gpu_memory_set)
		cap = cx->gpu.total_bytes;
#endif
	uint64_t limit = (uint64_t)((double)cap * o->utilization);
	int errors = 0, short_of_limit = 0, limit_only = 0;
	if (o->backend == BACKEND_CPU) {
		/* touched pages past what the machine has end in the OOM killer,
		 * not in a refusal: refuse first, with the figures */
		uint64_t avail = kvb_mem_available_bytes();
		if (avail && limit > avail) {
			fprintf(stderr, "kvbench: capacity: the limit is %llu bytes (%.4g x %llu) but "
				"the machine has %llu available (MemAvailable); lower --gpu-memory "
				"or --utilization\n", (unsigned long long)limit, o->utilization,
				(unsigned long long)cap, (unsigned long long)avail);
			return EXIT_FAILED;
		}
	}
	stream_start(cx);
	for (int ih = 0; ih < o->heads.n; ih++)
		for (int id = 0; id < o->head_dim.n; id++)
			for (int ip = 0; ip < o->block.n; ip++)
				for (int it = 0; it < o->ndtypes; it++)
					for (int ic = 0; ic < o->context.n; ic++) {
		struct kvb_shape s = {.h_q = o->heads.hq[ih], .h_kv = o->heads.hkv[ih],
				      .d = (int)o->head_dim.v[id], .block_size = (int)o->block.v[ip],
				      .dtype = o->dtypes[it]};
		uint64_t block_bytes;
		if (!kvp_mul(kvb_block_bytes(&s), (uint64_t)o->layers, &block_bytes)) {
			fprintf(stderr, "kvbench: block size overflows\n");
			errors++;
			continue;
		}
		int64_t blocks = 0;
		int err = 0, refused = 0;
		if (o->backend == BACKEND_CPU)
			blocks = cpu_capacity(o->weights_bytes, limit, block_bytes, &err, &refused);
#ifdef HAVE_CUDA
		else if (kvb_cuda_capacity(o->weights_bytes, limit, block_bytes, &blocks,
					   &refused) != 0) {
			fprintf(stderr, "kvbench: %s\n", kvb_cuda_error());
			err = 1;
		}
#endif
		if (err) {
			fprintf(stderr, "kvbench: the weights (%llu bytes) could not be allocated\n",
				(unsigned long long)o->weights_bytes);
			errors++;
			continue;
		}
		/* Admit sequences in order while their blocks fit (first come,
		 * first served, as a serving engine's scheduler does). */
		int64_t free_blocks = blocks, seqs = 0, admitted_tokens = 0;
		uint64_t st = o->seed;
		for (;;) {
			int32_t len;
			make_lengths(o, 1, (int32_t)o->context.v[ic], kvb_rng_next(&st), &len);
			int64_t need = ((int64_t)len + s.block_size - 1) / s.block_size;
			if (need > free_blocks)
				break;
			free_blocks -= need;
			admitted_tokens += len;
			seqs++;
		}
		struct kvp_record *row = kvp_record_new();
		if (!row) {
			errors++;
			continue;
		}
		rec_str(row, "backend", "%s", o->backend == BACKEND_CPU ? "cpu" : "cuda");
		kvp_record_u64(row, "memory_bytes", (uint64_t)(cap));
		kvp_record_f64(row, "utilization", o->utilization);
		kvp_record_u64(row, "limit_bytes", (uint64_t)(limit));
		kvp_record_u64(row, "weights_bytes", (uint64_t)(o->weights_bytes));
		kvp_record_u64(row, "layers", (uint64_t)(o->layers));
		kvp_record_u64(row, "num_heads", (uint64_t)(s.h_q));
		kvp_record_u64(row, "num_kv_heads", (uint64_t)(s.h_kv));
		kvp_record_u64(row, "head_dim", (uint64_t)(s.d));
		rec_str(row, "kv_dtype", "%s", kvb_dtype_name(s.dtype));
		kvp_record_u64(row, "block_size", (uint64_t)(s.block_size));
		kvp_record_u64(row, "block_bytes", (uint64_t)(block_bytes));
		kvp_record_u64(row, "context", (uint64_t)(o->context.v[ic]));
		char lname[128];
		lengths_name(o, lname, sizeof lname);
		rec_str(row, "lengths", "%s", lname);
		kvp_record_u64(row, "blocks", (uint64_t)(blocks));
		/* what ended the pool: the limit (then blocks are the limit's
		 * arithmetic) or the allocator (the machine's real limit) */
		rec_str(row, "stopped_by", "%s", refused ? "allocator" : "limit");
		kvp_record_u64(row, "token_slots", (uint64_t)(blocks * s.block_size));
		kvp_record_u64(row, "sequences", (uint64_t)(seqs));
		kvp_record_u64(row, "tokens", (uint64_t)(admitted_tokens));
#ifndef KVBENCH_STANDALONE
		struct kvb_capacity_prediction cp;
		char msg[512];
		if (kvb_predict_capacity(&s, o->layers, cap, o->utilization, o->weights_bytes,
					 (uint64_t)o->context.v[ic], &cp, msg, sizeof msg) == 0) {
			kvp_record_u64(row, "predicted_block_bytes", (uint64_t)(cp.page_bytes));
			kvp_record_u64(row, "predicted_blocks", (uint64_t)(cp.num_blocks));
			kvp_record_u64(row, "predicted_token_slots", (uint64_t)(cp.max_tokens));
			/* the planner's sequences are all of the context's length */
			if (o->lengths == KVB_LENGTHS_FIXED
#ifndef KVBENCH_STANDALONE
			    && !o->have_dist
#endif
			)
				kvp_record_u64(row, "predicted_sequences", (uint64_t)(cp.max_sequences));
			kvp_record_f64(row, "blocks_diff", (double)blocks - (double)cp.num_blocks);
		} else {
			fprintf(stderr, "kvbench: no prediction: %s\n", msg);
		}
#endif
		if (rows_add(rs, row) != 0) {
			kvp_record_free(row);
			errors++;
			continue;
		}
		out_point(cx, row);
		const uint64_t pool = (uint64_t)blocks * block_bytes;
		if (refused) {
			fprintf(stderr, "kvbench: capacity %s: the allocator refused after %llu bytes "
				"(weights %llu + %lld blocks of %llu), %llu bytes short of the limit "
				"%llu: the pool is what the %s gave, not what was asked\n",
				kvb_dtype_name(s.dtype),
				(unsigned long long)(o->weights_bytes + pool),
				(unsigned long long)o->weights_bytes, (long long)blocks,
				(unsigned long long)block_bytes,
				(unsigned long long)(limit - o->weights_bytes - pool),
				(unsigned long long)limit,
				o->backend == BACKEND_CPU ? "machine" : "device");
			short_of_limit++;
		} else {
			limit_only++;
		}
	}
	if (limit_only)
		fprintf(stderr, "kvbench: warning: %d capacity point%s stopped at the limit (%.4g of "
			"%llu bytes) and never reached the allocator's: their blocks are the "
			"limit's arithmetic, which cannot disagree with the planner's%s\n",
			limit_only, limit_only == 1 ? "" : "s", o->utilization,
			(unsigned long long)cap,
			o->backend == BACKEND_CUDA ? "; --utilization 1 measures the device's limit"
						   : "");
	return errors || short_of_limit ? EXIT_FAILED : EXIT_OK;
}
