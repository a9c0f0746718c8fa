/* frag-plan.c: one `kvplan frag` run: the budget at max_len gives the KV pool,
 * the simulator (frag-sim.c) runs every row, the recommendation picks a block
 * size; and the run as a record (the JSON/CSV output contract). */
#include "frag/frag.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "base/dist.h"
#include "time/perf.h"

void kvp_frag_opts_init(struct kvp_frag_opts *o)
{
	memset(o, 0, sizeof *o);
	o->requests = 100000;
	o->seed = 1;
	o->fit[0] = o->fit[1] = true;
}

uint64_t kvp_frag_max_len(const struct kvp_frag_opts *fo, const struct kvp_workload *w,
			  const struct kvp_budget_opts *o, const struct kvp_model *m)
{
	return fo->max_len ? fo->max_len
	       : w->max_len ? w->max_len
	       : o->context ? o->context : m->max_context;
}

/* The step time of arrivals when none is given: the perf model's decode step
 * (kvp_perf_decode_step, kvplan perf's decode row) of B sequences at the
 * decode context C = E[o (p + (o - 1) / 2)] / E[o] (the KV a decoding
 * sequence holds averaged over time, kvp_perf_held_context) plus the shared
 * prefix's share, capped at max_len.  B is
 * what the arrival rate keeps running by Little's law: a request is in
 * service about one step per output token, so B = ceil(R x mean output x
 * step), from B = 1 until it settles (both grow together, so it only rises),
 * at most the sequences of mean length the pool holds and the step's tokens. */
static kvp_status frag_step_from_perf(const struct kvp_model *m, const struct kvp_gpu *g,
				      struct kvp_frag_report *out, double R, struct kvp_error *err)
{
	struct kvp_frag_config *fc = &out->cfg;
	const struct kvp_workload *w = out->workload;
	struct kvp_perf_hw hw;
	struct kvp_perf_ctx ctx;
	kvp_status st;
	st = kvp_perf_hw_from_gpu(g, m, &hw, err);
	/* the engine's fixed costs, as perf charges them (one step cost) */
	if (!st)
		kvp_perf_hw_engine(&hw, &out->budget.engine_model);
	if (st || (st = kvp_perf_init(&ctx, &out->budget.spec, out->budget.weights_bytes, &hw, err))) {
		/* say what the step needed it for, and the way around */
		if (!err)
			return st;
		struct kvp_error e = *err;
		return kvp_error_set(err, st, e.path[0] ? e.path : NULL, e.line, e.col,
				     e.field[0] ? e.field : NULL,
				     "%s (the step time of --arrival-rate comes from the perf "
				     "model); or give --step-time", e.msg);
	}
	double prompt = kvp_dist_mean(&w->prompt) + (double)fc->prefix_tokens * fc->prefix_fraction;
	double output = kvp_dist_mean(&w->output);
	/* the KV a decoding sequence holds averaged over time, E[o (p + (o -
	 * 1) / 2)] / E[o] (perf.h), with the prefix's share (a carrier is one
	 * whatever its output) */
	double ctx_tokens = kvp_perf_held_context(w) +
			    (double)fc->prefix_tokens * fc->prefix_fraction;
	uint64_t context = ctx_tokens < (double)fc->max_len ? (uint64_t)llround(ctx_tokens) : fc->max_len;
	if (!context)
		context = 1;
	/* caps: the pool at the mean length, the step's tokens (one each) */
	double total = prompt + output < (double)fc->max_len ? prompt + output : (double)fc->max_len;
	uint64_t one = kvp_frag_seq_bytes(&fc->shape, total > 1 ? (uint64_t)llround(total) : 1, 1);
	uint64_t cap = one ? fc->pool_bytes / one : fc->max_batched_tokens;
	if (cap > fc->max_batched_tokens)
		cap = fc->max_batched_tokens;
	if (!cap)
		cap = 1;
	uint64_t B = 1;
	struct kvp_perf_step step;
	for (unsigned k = 0;; k++) {
		if ((st = kvp_perf_decode_step(&ctx, B, context, &step, err)))
			return st;
		double want = ceil(R * output * step.time_s);
		uint64_t next = want < 1 ? 1 : want >= (double)cap ? cap : (uint64_t)want;
		if (next <= B || k == 100000)
			break;
		B = next;
	}
	if (!(step.time_s > 0) || !isfinite(step.time_s))
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "step_time",
				     "the perf model gives no decode step time for this model and "
				     "GPU: give --step-time");
	fc->step_time_s = step.time_s;
	out->step_from_perf = true;
	out->step_batch = B;
	out->step_context = context;
	return KVP_STATUS_OK;
}

kvp_status kvp_frag_plan(const struct kvp_model *m, const struct kvp_gpu *g,
			 const struct kvp_budget_opts *o, struct kvp_workload *w,
			 const struct kvp_frag_opts *fo, struct kvp_frag_report *out,
			 struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	out->model = m;
	out->workload = w;
	out->recommended = -1;
	snprintf(out->gpu, sizeof out->gpu, "%s", g->name);
	uint64_t max_len = kvp_frag_max_len(fo, w, o, m);
	w->max_len = max_len;
	struct kvp_budget_opts bo = *o;
	bo.context = max_len;
	kvp_status st = kvp_budget_compute(m, g, &bo, &out->budget, err);
	if (st || !out->budget.kv_pool_bytes)
		return st;

	struct kvp_frag_config *fc = &out->cfg;
	kvp_frag_config_init(fc);
	if ((st = kvp_frag_shape_from_spec(&out->budget.spec, &fc->shape, err)))
		return st;
	/* vLLM pages the hybrid models' layers in padded groups */
	fc->has_paged_shape = kvp_frag_shape_vllm(&out->budget, &fc->paged_shape);
	fc->pool_bytes = out->budget.kv_pool_bytes;
	fc->max_len = max_len;
	fc->max_tokens = fo->max_tokens;
	fc->requests = fo->requests;
	fc->warmup = fo->has_warmup ? fo->warmup : fo->requests / 10;
	fc->seed = fo->seed;
	fc->arrival_rate = fo->arrival_rate;
	fc->step_time_s = fo->step_time_s;
	if (!fo->arrival_rate && fo->step_time_s > 0 && w->arrival_s && w->narrival)
		fc->requests = w->narrival; /* replay the file's rows, each once */
	fc->progress = fo->progress;
	fc->progress_ctx = fo->progress_ctx;
	fc->max_batched_tokens = o->max_batched_tokens ? o->max_batched_tokens : 8192;
	fc->fit[0] = fo->fit[0];
	fc->fit[1] = fo->fit[1];
	fc->prefix_tokens = w->prefix_tokens;
	fc->prefix_fraction = w->prefix_fraction;
	fc->max_seqs = 0;
	if (fo->has_policies)
		memcpy(fc->policy, fo->policy, sizeof fc->policy);
	if (fo->nblock) {
		fc->nblock = fo->nblock;
		memcpy(fc->block_sizes, fo->block_sizes, fo->nblock * sizeof fo->block_sizes[0]);
	} else if (o->block_size) {
		fc->nblock = 1;
		fc->block_sizes[0] = o->block_size;
	}
	if (fc->prefix_tokens >= max_len)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "shared_prefix",
				     "%llu tokens leave no room under max_len %llu",
				     (unsigned long long)fc->prefix_tokens, (unsigned long long)max_len);
	/* a rate without a step time: the perf model's decode step */
	if (fo->arrival_rate > 0 && !(fo->step_time_s > 0) &&
	    (st = frag_step_from_perf(m, g, out, fo->arrival_rate, err)))
		return st;
	out->max_fits = kvp_frag_seq_bytes(&fc->shape, max_len, 1) <= fc->pool_bytes;
	if (!out->max_fits)
		fc->policy[KVP_FRAG_POLICY_CONTIGUOUS_MAX] = false;
	if ((st = kvp_frag_run(fc, w, out->rows, KVP_FRAG_MAX_ROWS, &out->nrows, err)))
		return st;
	out->recommended = kvp_frag_recommend(out->rows, out->nrows, out->reason, sizeof out->reason);
	return KVP_STATUS_OK;
}

struct kvp_record *kvp_frag_row_to_record(const struct kvp_frag_result *r)
{
	struct kvp_record *x = kvp_record_new();
	bool paged = r->policy >= KVP_FRAG_POLICY_PAGED, ok = x != NULL;
	ok = ok && kvp_record_str(x, "policy", kvp_frag_policy_name(r->policy));
	ok = ok && (paged ? kvp_record_null(x, "allocator")
			  : kvp_record_str(x, "allocator", kvp_frag_fit_name(r->fit)));
	ok = ok && (paged ? kvp_record_u64(x, "block_size", r->block_size)
			  : kvp_record_null(x, "block_size"));
	ok = ok && kvp_record_f64(x, "used_fraction", r->used_fraction) &&
	     kvp_record_f64(x, "internal_waste_fraction", r->internal_waste_fraction) &&
	     kvp_record_f64(x, "external_waste_fraction", r->external_waste_fraction) &&
	     kvp_record_f64(x, "free_fraction", r->free_fraction) &&
	     kvp_record_u64(x, "metadata_bytes", r->metadata_bytes) &&
	     kvp_record_u64(x, "max_sequences", r->max_sequences) &&
	     kvp_record_f64(x, "mean_sequences", r->mean_sequences) &&
	     kvp_record_u64(x, "peak_sequences", r->peak_sequences) &&
	     kvp_record_u64(x, "refused_with_free_memory", r->refused_with_free_memory) &&
	     kvp_record_u64(x, "preemptions", r->preemptions) &&
	     kvp_record_u64(x, "dropped", r->dropped) &&
	     kvp_record_f64(x, "waste_tokens_per_sequence", r->waste_tokens_per_sequence);
	ok = ok && (paged ? kvp_record_f64(x, "expected_waste_tokens", r->expected_waste_tokens)
			  : kvp_record_null(x, "expected_waste_tokens"));
	ok = ok && (paged ? kvp_record_u64(x, "num_blocks", r->num_blocks)
			  : kvp_record_null(x, "num_blocks"));
	ok = ok && kvp_record_f64(x, "held_bytes_per_sequence", r->held_bytes_per_sequence) &&
	     kvp_record_u64(x, "measured_steps", r->measured_steps);
	if (r->over_time)
		ok = ok && kvp_record_f64(x, "arrival_rate", r->arrival_rate) &&
		     kvp_record_f64(x, "mean_queue_s", r->mean_queue_s) &&
		     kvp_record_f64(x, "p99_queue_s", r->p99_queue_s) &&
		     kvp_record_f64(x, "mean_live_sequences", r->mean_live_sequences) &&
		     kvp_record_f64(x, "mean_latency_s", r->mean_latency_s) &&
		     kvp_record_f64(x, "throughput_rps", r->throughput_rps) &&
		     kvp_record_u64(x, "completed", r->completed);
	if (!ok) {
		kvp_record_free(x);
		return NULL;
	}
	return x;
}

bool kvp_frag_to_record(const struct kvp_frag_report *rep, struct kvp_record *r)
{
	const struct kvp_budget *b = &rep->budget;
	const struct kvp_frag_config *fc = &rep->cfg;
	const struct kvp_workload *w = rep->workload;
	char spec[128];
	bool ok = kvp_record_str(r, "model", rep->model->name) && kvp_record_str(r, "gpu", rep->gpu) &&
		  kvp_record_str(r, "engine", kvp_engine_name(b->engine)) &&
		  kvp_record_u64(r, "tp", b->spec.par.tp) && kvp_record_u64(r, "pp", b->spec.par.pp) &&
		  kvp_record_str(r, "kv_dtype", kvp_dtype_name(b->spec.kv_dtype)) &&
		  kvp_record_str(r, "workload", w->name);
	kvp_dist_format(&w->prompt, spec, sizeof spec);
	ok = ok && kvp_record_str(r, "prompt", spec);
	kvp_dist_format(&w->output, spec, sizeof spec);
	ok = ok && kvp_record_str(r, "output", spec) && kvp_record_u64(r, "max_len", fc->max_len) &&
	     kvp_record_u64(r, "prefix_tokens", fc->prefix_tokens) &&
	     kvp_record_f64(r, "prefix_fraction", fc->prefix_tokens ? fc->prefix_fraction : 0) &&
	     kvp_record_u64(r, "requests", fc->requests) && kvp_record_u64(r, "seed", fc->seed) &&
	     kvp_record_u64(r, "kv_pool_bytes", fc->pool_bytes) &&
	     kvp_record_u64(r, "kv_bytes_per_token", kvp_frag_token_bytes(&fc->shape)) &&
	     kvp_record_u64(r, "engine_max_sequences", b->max_sequences) &&
	     kvp_record_bool(r, "contiguous_max_fits", rep->max_fits);
	if (ok && rep->nrows && rep->rows[0].over_time)
		ok = kvp_record_f64(r, "step_time_s", fc->step_time_s) &&
		     kvp_record_str(r, "step_time_from", rep->step_from_perf ? "perf" : "option") &&
		     (rep->step_from_perf ? kvp_record_u64(r, "step_time_batch", rep->step_batch) &&
					    kvp_record_u64(r, "step_time_context", rep->step_context)
					  : kvp_record_null(r, "step_time_batch") &&
					    kvp_record_null(r, "step_time_context"));
	/* kvp_record_push and kvp_record_rec own what they are given, even on failure */
	for (size_t i = 0; ok && i < rep->nrows; i++) {
		struct kvp_record *x = kvp_frag_row_to_record(&rep->rows[i]);
		ok = x && kvp_record_push(r, "rows", x);
	}
	struct kvp_record *rr = ok ? kvp_record_new() : NULL;
	int rec = rep->recommended;
	ok = rr && (rec >= 0 ? kvp_record_u64(rr, "recommended_block_size", rep->rows[rec].block_size)
			     : kvp_record_null(rr, "recommended_block_size")) &&
	     kvp_record_str(rr, "reason", rep->reason);
	if (!ok) {
		kvp_record_free(rr);
		return false;
	}
	return kvp_record_rec(r, "recommendation", rr);
}

