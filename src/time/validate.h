/* validate.h: kvbench's shapes as the planner sees them, the planner's
 * predictions for them, and kvbench's results read back and set beside those
 * predictions (`kvplan validate`).
 *
 * kvbench (kernels/predict.c) asks the same two prediction functions, so a
 * results file and `kvplan validate` never disagree on what the planner said
 * for the same basis.  A kvbench shape is a model of `layers` full-attention
 * layers of its heads; the weights are given to the budget as a size. */
#ifndef KVP_VALIDATE_H
#define KVP_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "model/model.h"
#include "read/profile.h"

struct kvp_bench_shape {
	uint32_t num_heads, num_kv_heads, head_dim;
	uint32_t block_size; /* tokens per block */
	uint32_t layers;     /* full-attention layers whose KV a block holds */
	enum kvp_dtype kv_dtype;
};

struct kvp_bench_capacity {
	uint64_t page_bytes;    /* one block, all layers */
	uint64_t num_blocks;
	uint64_t max_tokens;    /* blocks x P */
	uint64_t max_sequences; /* of `context` tokens */
};

/* The generic engine's budget: memory x utilization - weights, no
 * activations or overhead (kvbench allocates nothing else), blocks of P. */
kvp_status kvp_bench_capacity(const struct kvp_bench_shape *s, uint64_t memory_bytes,
			      double utilization, uint64_t weights_bytes, uint64_t context,
			      struct kvp_bench_capacity *out, struct kvp_error *err);

/* What a kvbench point's decode time is predicted on: the GPU profile's
 * bandwidth at its calibrated decode efficiency (else the planner's default)
 * when one is named; else a CUDA run's bus rate (datasheet) at the default;
 * else the read ceiling measured beside the point at efficiency 1.  kvbench
 * and `kvplan validate` both choose it here. */
struct kvp_bench_basis {
	char name[KVP_NAME_MAX];   /* the profile's name, "bus-rate" or "read-ceiling" */
	double bandwidth_bps;      /* 0: nothing to predict on */
	double efficiency;
};
void kvp_bench_basis(const struct kvp_gpu *gpu, bool cuda, double datasheet_bps,
		     double read_ceiling_bps, struct kvp_bench_basis *out);

/* One decode step (one layer) over sequences of lens[0..n), timed by the
 * perf model at bandwidth_bps x efficiency.  The compute roof is left out:
 * the attention of a decode step does 2 x group FLOPs per KV byte of its
 * dtype (16 for GQA-8 in fp8), far under any GPU's FLOP-to-byte ratio, and
 * without it the time scales as 1 / efficiency, which calibration uses.
 * kv_bytes: the planner's KV bytes of the step. */
kvp_status kvp_bench_decode(const struct kvp_bench_shape *s, const uint64_t *lens, size_t n,
			    double bandwidth_bps, double efficiency, uint64_t *kv_bytes,
			    double *time_s, struct kvp_error *err);

/* ------------------------------------------------ results read back */

enum kvp_vpoint_kind { KVP_VPOINT_DECODE, KVP_VPOINT_CAPACITY };

/* One measured point of a kvbench results file and the planner's answer. */
struct kvp_vpoint {
	char file[256];
	int line;                  /* the point's first line in the file */
	enum kvp_vpoint_kind kind;
	char backend[16];
	char device[KVP_NAME_MAX]; /* the GPU's name (device, else the run's gpu), or "" */
	char lengths[64];
	struct kvp_bench_shape shape;
	uint64_t batch, context, tokens;
	/* decode: the median time and the planner's time on `basis` */
	double measured_s;
	char basis[KVP_NAME_MAX];  /* "read-ceiling", "bus-rate" or a GPU profile */
	double bandwidth_bps;      /* the basis' rate */
	double base_efficiency;    /* the planner's efficiency on it, uncalibrated */
	double unit_s;             /* the planner's time at efficiency 1 */
	uint64_t kv_bytes;
	/* capacity: what was allocated and admitted, and the budget's answer */
	uint64_t memory_bytes, weights_bytes;
	double utilization;
	uint64_t blocks, sequences;
	struct kvp_bench_capacity predicted;
	/* kvp_validation_evaluate's */
	double efficiency;         /* decode: the efficiency the prediction used */
	double predicted_s;
	double error;              /* (predicted - measured) / measured: time or blocks */
	double sequences_error;    /* capacity */
	bool within;
	double fit_efficiency;     /* decode: its group's, from kvp_validation_fit_by */
	bool large;                /* decode: moves at least a quarter of the KV bytes of the
				    * largest point of its shape (backend, heads, head dim,
				    * block, KV dtype); the smaller steps are fixed costs */
};

struct kvp_validation {
	struct kvp_vpoint *points;
	size_t n, cap;
	size_t skipped;           /* failed validation, or not timed */
	/* kvp_validation_evaluate's summary */
	double efficiency;        /* the calibrated one, 0 when each basis' default */
	size_t decode_n, decode_outside, capacity_n, capacity_outside;
	double decode_median_abs, decode_max_abs, capacity_max_abs;
	size_t large_n, large_outside;   /* the large decode points alone */
	double large_median_abs, large_max_abs;
	size_t worst;             /* the decode point of largest |error| */
};

/* Append the points of a kvbench results file (--out .yaml/.yml or .csv).
 * Decode points are predicted on the GPU profile `gpu` when given (its
 * bandwidth at its calibrated efficiency, else the planner's default); else
 * a CUDA run's bus rate (datasheet_gbps, YAML only) at the default 0.80;
 * else the read ceiling measured beside the point at efficiency 1, as
 * kvbench does.  Errors name the file, line, column and field. */
kvp_status kvp_validation_load(struct kvp_validation *v, const char *path,
			       const struct kvp_gpu *gpu, struct kvp_error *err);

/* The efficiency that makes the planner's decode time right: the median of
 * unit_s / measured_s over the large decode points (see kvp_vpoint.large),
 * where fixed costs no longer dominate.  0 when no decode point; *used says
 * how many entered. */
double kvp_validation_fit(struct kvp_validation *v, size_t *used);

/* One efficiency per group of decode points instead: per backend and KV
 * dtype (KVP_FIT_DTYPE) or per shape (KVP_FIT_SHAPE: backend, heads, head
 * dim, block, KV dtype), each the median over its large points as above,
 * into each point's fit_efficiency.  A whole-file fit asks whether one
 * figure describes the hardware; a per-shape fit asks whether the step time
 * follows the KV bytes within a shape (batch x context), which is what the
 * bandwidth model claims.  Returns the number of groups. */
enum kvp_fit_by { KVP_FIT_ALL, KVP_FIT_DTYPE, KVP_FIT_SHAPE };
size_t kvp_validation_fit_by(struct kvp_validation *v, enum kvp_fit_by by);

/* What an in-sample fit of v by `by` can prove: *parameters, the groups with
 * at least one large decode point (one fitted efficiency each); *points, the
 * large points they rest on; *exact, the groups resting on exactly one point,
 * which the fit reproduces by construction (error 0, proving nothing).  With
 * *parameters == *points every fitted point is exact by construction. */
void kvp_validation_fit_degrees(struct kvp_validation *v, enum kvp_fit_by by,
				size_t *parameters, size_t *points, size_t *exact);

/* Out of sample: give each decode point of v the fit_efficiency of its group
 * in c (fitted with kvp_validation_fit_by(c, by)); a point whose group c
 * lacks gets `fallback`.  Returns how many fell back, or (size_t)-1 when
 * memory runs out. */
size_t kvp_validation_apply_fit(struct kvp_validation *v, struct kvp_validation *c,
				enum kvp_fit_by by, double fallback);

/* Predict every point (decode at `efficiency`; at each point's
 * base_efficiency when 0; at its fit_efficiency when < 0), its relative
 * error, whether it lies within tolerance (decode) or capacity_tolerance
 * (blocks), and the summary. */
void kvp_validation_evaluate(struct kvp_validation *v, double efficiency, double tolerance,
			     double capacity_tolerance);

void kvp_validation_free(struct kvp_validation *v);

#endif
