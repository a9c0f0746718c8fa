/* size-record.c: `kvplan size`'s answer as a record (size-record.h): the
 * one writer of its fields, so the CLI's JSON and CSV and the API's
 * kvplan_size_json say the same thing under the same names.  Moved here
 * from cli/cmd-size-print.c unchanged (issue 40). */
#include "size/size-record.h"

#include <math.h>
#include <stdlib.h>

struct kvp_record *kvp_size_config_record(const struct kvp_size_config *c, double latency_spread,
					  const char *latency_spread_from)
{
	struct kvp_record *x = kvp_record_new();
	char failed[128], never[128], risk[128];
	kvp_size_fail_format(c->risk, 0, risk, sizeof risk);
	kvp_size_fail_format(c->failed, c->never, failed, sizeof failed);
	kvp_size_fail_format(c->never, 0, never, sizeof never);
	bool ok = x && kvp_record_str(x, "gpu", c->gpu) && kvp_record_u64(x, "count", c->count) &&
		  kvp_record_u64(x, "tp", c->tp) && kvp_record_u64(x, "replicas", c->replicas) &&
		  kvp_record_bool(x, "meets", c->meets) && kvp_record_str(x, "failed", failed) &&
		  kvp_record_f64(x, "cost_per_hour", c->cost_per_hour) &&
		  kvp_record_f64(x, "cost_per_mtok", c->cost_per_mtok) &&
		  kvp_record_f64(x, "price_per_hour", c->price_per_hour) &&
		  kvp_record_f64(x, "rate_per_replica", c->rate) &&
		  kvp_record_f64(x, "concurrency", c->concurrency) &&
		  kvp_record_u64(x, "sequences", c->sequences) &&
		  kvp_record_f64(x, "prefill_s", c->prefill_s) &&
		  kvp_record_f64(x, "prefill_utilization", c->prefill_utilization) &&
		  kvp_record_f64(x, "queue_s", c->queue_s) &&
		  kvp_record_f64(x, "ttft_s", c->ttft_s) && kvp_record_f64(x, "tpot_s", c->tpot_s) &&
		  kvp_record_str(x, "bound", kvp_perf_bound_name(c->bound)) &&
		  kvp_record_f64(x, "tokens_per_s", c->tokens_per_s) &&
		  kvp_record_u64(x, "weights_bytes", c->weights_bytes) &&
		  kvp_record_u64(x, "kv_pool_bytes", c->kv_pool_bytes) &&
		  kvp_record_u64(x, "kv_bytes_needed", c->kv_bytes_needed) &&
		  kvp_record_u64(x, "max_sequences", c->max_sequences) &&
		  kvp_record_u64(x, "max_num_seqs", c->max_num_seqs) &&
		  kvp_record_f64(x, "utilization", c->utilization) &&
		  kvp_record_str(x, "never", never) &&
		  kvp_record_f64(x, "floor_ttft_s", c->floor_ttft_s) &&
		  kvp_record_f64(x, "floor_tpot_s", c->floor_tpot_s) &&
		  kvp_record_str(x, "cost_basis", c->basis) &&
		  kvp_record_f64(x, "cloud_price_per_hour", c->cloud_gpu_hour) &&
		  kvp_record_f64(x, "own_price_per_hour", c->own_gpu_hour) &&
		  kvp_record_u64(x, "pp", c->pp) && kvp_record_u64(x, "dp", c->dp) &&
		  kvp_record_u64(x, "ep", c->ep) &&
		  kvp_record_str(x, "kv_dtype", kvp_dtype_name(c->kv_dtype)) &&
		  kvp_record_bool(x, "pareto", c->pareto) &&
		  kvp_record_f64(x, "queue_p_s", c->queue_p_s) &&
		  kvp_record_u64(x, "disagg_p", c->disagg_p) && kvp_record_u64(x, "disagg_d", c->disagg_d) &&
		  kvp_record_f64(x, "transfer_s", c->transfer_s) &&
		  kvp_record_str(x, "risk", risk) &&
		  kvp_record_str(x, "verdict", c->meets ? "meets" : c->at_risk ? "meets at risk" : "fails") &&
		  kvp_record_f64(x, "miss_ttft_s", c->miss_ttft_s) &&
		  kvp_record_f64(x, "miss_tpot_s", c->miss_tpot_s) &&
		  kvp_record_u64(x, "miss_sequences", c->miss_sequences) &&
		  kvp_record_f64(x, "latency_spread", latency_spread) &&
		  kvp_record_str(x, "latency_spread_from", latency_spread_from) &&
		  kvp_record_bool(x, "simulated", c->simulated) &&
		  kvp_record_f64(x, "sim_capacity", c->sim_capacity);
	if (!ok) {
		kvp_record_free(x);
		return NULL;
	}
	return x;
}

/* How far c is from meeting (kvp_size_nearest). */
static double distance(const struct kvp_size_config *c, const struct kvp_size_demand *d)
{
	if (c->at_risk)
		return 0;
	if (c->failed & KVP_SIZE_FAIL_THROUGHPUT)
		return INFINITY;
	double x = 0;
	if (d->slo_ttft_s > 0)
		x += c->miss_ttft_s / d->slo_ttft_s;
	if (d->slo_tpot_s > 0)
		x += c->miss_tpot_s / d->slo_tpot_s;
	if (c->max_sequences)
		x += (double)c->miss_sequences / (double)c->max_sequences;
	else if (c->miss_sequences)
		x = INFINITY;
	return x;
}

size_t kvp_size_nearest(const struct kvp_size_config *cfg, size_t n, const struct kvp_size_demand *d,
			size_t *idx)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (cfg[i].meets || (cfg[i].failed & KVP_SIZE_FAIL_FIXED))
			continue;
		double x = distance(&cfg[i], d);
		/* insert, keeping the KVP_SIZE_NEAREST smallest in order (earlier
		 * rank wins ties) */
		size_t at = k;
		while (at > 0 && distance(&cfg[idx[at - 1]], d) > x)
			at--;
		if (at >= KVP_SIZE_NEAREST)
			continue;
		if (k < KVP_SIZE_NEAREST)
			k++;
		for (size_t j = k - 1; j > at; j--)
			idx[j] = idx[j - 1];
		idx[at] = i;
	}
	return k;
}

bool kvp_size_summary_record(const struct kvp_size_summary *s, struct kvp_record *top)
{
	const struct kvp_size_demand *d = s->d;
	const struct kvp_size_config *cfg = s->cfg, *best = s->best, *fewest = s->fewest;
	const struct kvp_size_cost *cost = s->cost;
	size_t n = s->n;
	bool ok = kvp_record_str(top, "model", s->model) &&
		  kvp_record_str(top, "workload", s->workload) &&
		  kvp_record_str(top, "engine", kvp_engine_name(s->engine)) &&
		  kvp_record_f64(top, "rate", d->rate) && kvp_record_u64(top, "users", d->users) &&
		  kvp_record_f64(top, "prompt_mean", d->prompt_mean) &&
		  kvp_record_f64(top, "output_mean", d->output_mean) &&
		  kvp_record_f64(top, "percentile", d->percentile) &&
		  kvp_record_u64(top, "prompt_percentile", d->prompt_p) &&
		  kvp_record_u64(top, "mean_context", d->mean_context) &&
		  kvp_record_u64(top, "max_model_len", d->max_model_len) &&
		  kvp_record_f64(top, "slo_ttft_s", d->slo_ttft_s) &&
		  kvp_record_f64(top, "slo_tpot_s", d->slo_tpot_s) &&
		  kvp_record_str(top, "cost", cost->basis == KVP_SIZE_BASIS_OWN ? "own"
					      : cost->kind[0] ? cost->kind : "cloud") &&
		  kvp_record_u64(top, "pareto_size", s->front) &&
		  kvp_record_bool(top, "queue_percentile", d->queue_percentile) &&
		  (fewest ? kvp_record_u64(top, "min_gpus", fewest->count)
			  : kvp_record_null(top, "min_gpus"));
	for (size_t i = 0; ok && i < n; i++) {
		struct kvp_record *x = kvp_size_config_record(&cfg[i], s->latency_spread,
							   s->latency_spread_from);
		ok = x && kvp_record_push(top, "configs", x);
	}
	if (ok && best) {
		struct kvp_record *x = kvp_size_config_record(best, s->latency_spread,
							   s->latency_spread_from);
		ok = x && kvp_record_rec(top, "chosen", x);
	} else if (ok) {
		ok = kvp_record_null(top, "chosen");
		size_t idx[KVP_SIZE_NEAREST], k = kvp_size_nearest(cfg, n, d, idx);
		for (size_t i = 0; ok && i < k; i++) {
			struct kvp_record *x = kvp_size_config_record(&cfg[idx[i]], s->latency_spread,
								   s->latency_spread_from);
			ok = x && kvp_record_push(top, "nearest", x);
		}
	}
	return ok;
}
