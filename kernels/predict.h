/* predict.h: the planner's predictions for kvbench's points, asked of the
 * library (model.h, budget.h, perf.h) and never recomputed in kernels/.
 *
 * kvbench's shape (H_q, H_kv, d, KV dtype, P, layers) is handed to the
 * planner as a model of `layers` full-attention layers; the planner then
 * does its own arithmetic on it, which is what the measurement checks.
 * Not built into a -DKVBENCH_STANDALONE kvbench (no libyaml there). */
#ifndef KVB_PREDICT_H
#define KVB_PREDICT_H

#include <stddef.h>
#include <stdint.h>

#include "decode.h"

struct kvb_capacity_prediction {
	uint64_t page_bytes;    /* one block, all layers (budget's page_bytes) */
	uint64_t num_blocks;
	uint64_t max_tokens;    /* blocks x P */
	uint64_t max_sequences; /* of `context` tokens */
};

/* The generic engine's budget: memory x utilization - weights, no
 * activations or overhead (the harness allocates nothing else), blocks of
 * P tokens.  0, or -1 with msg filled. */
int kvb_predict_capacity(const struct kvb_shape *s, int layers, uint64_t memory_bytes,
			 double utilization, uint64_t weights_bytes, uint64_t context,
			 struct kvb_capacity_prediction *out, char *msg, size_t msgsz);

struct kvb_decode_prediction {
	uint64_t kv_bytes; /* the planner's KV bytes of the step */
	double time_s;     /* its roofline time */
};

/* One decode step of the batch's lengths (one layer), timed by the perf
 * model at bandwidth_bps x efficiency (kvp_bench_decode: no compute roof;
 * the basis from kvp_bench_basis).  0, or -1 with msg filled. */
int kvb_predict_decode(const struct kvb_shape *s, const int32_t *lens, int32_t batch,
		       double bandwidth_bps, double efficiency, struct kvb_decode_prediction *out,
		       char *msg, size_t msgsz);

#endif
