/* predict.c: kvbench's shape handed to the planner's library (validate.h,
 * which `kvplan validate` asks too), and its answers handed back.  See
 * predict.h. */
#include "predict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "time/validate.h"

static enum kvp_dtype kv_dtype_of(enum kvb_dtype dt)
{
	switch (dt) {
	case KVB_DTYPE_FP32: return KVP_DTYPE_FP32;
	case KVB_DTYPE_FP16: return KVP_DTYPE_FP16;
	case KVB_DTYPE_BF16: return KVP_DTYPE_BF16;
	case KVB_DTYPE_FP8: return KVP_DTYPE_FP8;   /* per-tensor scales: no bytes per token */
	default: return KVP_DTYPE_INT8;             /* an fp32 scale per token and head */
	}
}

static struct kvp_bench_shape shape_of(const struct kvb_shape *s, int layers)
{
	return (struct kvp_bench_shape){
		.num_heads = (uint32_t)s->h_q,
		.num_kv_heads = (uint32_t)s->h_kv,
		.head_dim = (uint32_t)s->d,
		.block_size = (uint32_t)s->block_size,
		.layers = (uint32_t)layers,
		.kv_dtype = kv_dtype_of(s->dtype),
	};
}

static int fail(char *msg, size_t msgsz, const struct kvp_error *err, const char *what)
{
	char buf[1024];
	kvp_error_format(err, buf, sizeof buf);
	snprintf(msg, msgsz, "%s: %s", what, buf);
	return -1;
}

int kvb_predict_capacity(const struct kvb_shape *s, int layers, uint64_t memory_bytes,
			 double utilization, uint64_t weights_bytes, uint64_t context,
			 struct kvb_capacity_prediction *out, char *msg, size_t msgsz)
{
	struct kvp_error err = {0};
	struct kvp_bench_shape bs = shape_of(s, layers);
	struct kvp_bench_capacity c;
	if (kvp_bench_capacity(&bs, memory_bytes, utilization, weights_bytes, context, &c, &err))
		return fail(msg, msgsz, &err, "budget");
	out->page_bytes = c.page_bytes;
	out->num_blocks = c.num_blocks;
	out->max_tokens = c.max_tokens;
	out->max_sequences = c.max_sequences;
	return 0;
}

int kvb_predict_decode(const struct kvb_shape *s, const int32_t *lens, int32_t batch,
		       double bandwidth_bps, double efficiency, struct kvb_decode_prediction *out,
		       char *msg, size_t msgsz)
{
	struct kvp_error err = {0};
	struct kvp_bench_shape bs = shape_of(s, 1);
	uint64_t *ul = malloc((size_t)batch * sizeof *ul);
	if (!ul) {
		snprintf(msg, msgsz, "perf: out of memory");
		return -1;
	}
	for (int32_t i = 0; i < batch; i++)
		ul[i] = (uint64_t)lens[i];
	kvp_status st = kvp_bench_decode(&bs, ul, (size_t)batch, bandwidth_bps, efficiency,
					 &out->kv_bytes, &out->time_s, &err);
	free(ul);
	return st ? fail(msg, msgsz, &err, "perf") : 0;
}
