/* frag-ref.h: the plain reference simulator of `kvplan frag`, for tests only.
 *
 * It re-reads the policies and the time model of src/frag/frag.h and implements
 * them the slowest obvious way: an array of live sequences scanned every
 * step, bytes recomputed from each sequence's length through the model's
 * kvp_spec_layer_tokens, contiguous holes in a sorted array.  It shares no
 * event, bucket or allocator code with src/frag*.c, so that check-frag-ref
 * comparing the two on random workloads can catch a bug in either. */
#ifndef KVP_FRAG_REF_H
#define KVP_FRAG_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "frag/frag.h"

/* What one row of the reference reports (the same definitions as
 * struct kvp_frag_result's fields of the same names). */
struct frag_ref_row {
	double used_fraction, internal_waste_fraction, external_waste_fraction, free_fraction;
	double mean_sequences;
	uint64_t peak_sequences, refused_with_free_memory, preemptions, dropped, admitted;
	uint64_t measured_steps;
	/* arrivals over time (frag_ref_arrivals); p99_queue_s exact, by sorting */
	double mean_queue_s, p99_queue_s, mean_live_sequences, mean_latency_s, throughput_rps;
	uint64_t completed;
};

/* Simulate one row (policy, with fit for contiguous or block for paged) of
 * cfg over w's request stream.  false when memory runs out. */
bool frag_ref_run(const struct kvp_frag_config *cfg, const struct kvp_workload *w,
		  enum kvp_frag_policy policy, enum kvp_frag_fit fit, uint32_t block,
		  struct frag_ref_row *out);

/* The same row with requests arriving over time (cfg->arrival_rate > 0,
 * cfg->step_time_s, cfg->max_batched_tokens), any policy; in paged-shared a
 * carrier admitted while another runs starts past the shared prefix's
 * blocks.  false when memory runs out. */
bool frag_ref_arrivals(const struct kvp_frag_config *cfg, const struct kvp_workload *w,
		       enum kvp_frag_policy policy, enum kvp_frag_fit fit, uint32_t block,
		       struct frag_ref_row *out);

#endif
