/* serve-sim-stats.c: the simulator's helpers: per-length tables over the
 * budget and the step model, latency histograms, the KV series, and the
 * result as a record named like vLLM's benchmark_serving result
 * (../shared/reference/time-model.md 5.1). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "time/serve-sim-private.h"

/* ------------------------------------------------------------ tables */

kvp_status serve_tables_init(struct serve_tables *t, const struct kvp_budget *b,
			     const struct kvp_perf_ctx *pc)
{
	memset(t, 0, sizeof *t);
	t->b = b;
	t->pc = pc;
	t->unit_bytes = b->engine == KVP_ENGINE_VLLM ? b->page_bytes * b->group_size : b->page_bytes;
	return t->unit_bytes ? KVP_STATUS_OK : KVP_STATUS_INVALID;
}

void serve_tables_free(struct serve_tables *t)
{
	free(t->blocks);
	free(t->kv);
	free(t->flops);
	memset(t, 0, sizeof *t);
}

static kvp_status tables_fit(struct serve_tables *t, uint64_t n)
{
	if (n < t->cap)
		return KVP_STATUS_OK;
	if (n > KVP_DIST_MAX_TOKENS * 2)
		return KVP_STATUS_OVERFLOW;
	size_t cap = t->cap ? t->cap : 1024;
	while (cap <= n)
		cap *= 2;
	uint64_t *b = realloc(t->blocks, cap * sizeof *b);
	if (b)
		t->blocks = b;
	uint64_t *k = realloc(t->kv, cap * sizeof *k);
	if (k)
		t->kv = k;
	double *f = realloc(t->flops, cap * sizeof *f);
	if (f)
		t->flops = f;
	if (!b || !k || !f)
		return KVP_STATUS_NOMEM;
	for (size_t i = t->cap; i < cap; i++) {
		t->blocks[i] = t->kv[i] = UINT64_MAX;
		t->flops[i] = -1;
	}
	t->cap = cap;
	return KVP_STATUS_OK;
}

kvp_status serve_blocks(struct serve_tables *t, uint64_t n, uint64_t *out)
{
	kvp_status st = tables_fit(t, n);
	if (st)
		return st;
	if (t->blocks[n] == UINT64_MAX) {
		uint64_t bytes = 0;
		if (n && (st = kvp_budget_pool_for(t->b, n, 1, &bytes)))
			return st;
		t->blocks[n] = kvp_cdiv(bytes, t->unit_bytes);
	}
	*out = t->blocks[n];
	return KVP_STATUS_OK;
}

kvp_status serve_kv_bytes(struct serve_tables *t, uint64_t n, uint64_t *out)
{
	kvp_status st = tables_fit(t, n);
	if (st)
		return st;
	if (t->kv[n] == UINT64_MAX && (st = kvp_spec_seq_bytes(t->pc->spec, n, 1, &t->kv[n])))
		return st;
	*out = t->kv[n];
	return KVP_STATUS_OK;
}

kvp_status serve_decode_flops(struct serve_tables *t, uint64_t n, double *out)
{
	kvp_status st = tables_fit(t, n);
	if (st)
		return st;
	if (t->flops[n] < 0)
		t->flops[n] = kvp_perf_decode_flops(t->pc->model, n);
	*out = t->flops[n];
	return KVP_STATUS_OK;
}

/* ------------------------------------------------------------ histograms */

static uint64_t dbits(double x)
{
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u;
}

static double bits_d(uint64_t u)
{
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

#define HIST_LO 9.313225746154785e-10  /* 2^-30 */

void serve_hist_add(struct serve_hist *h, double x)
{
	if (h->n == 0 || x < h->min)
		h->min = x;
	if (h->n == 0 || x > h->max)
		h->max = x;
	h->n++;
	h->sum += x;
	h->sumsq += x * x;
	size_t i = 0;
	if (x > HIST_LO) {
		uint64_t k = (dbits(x) >> SERVE_HIST_SHIFT) - (dbits(HIST_LO) >> SERVE_HIST_SHIFT);
		i = k < SERVE_HIST_BINS ? (size_t)k : SERVE_HIST_BINS - 1;
	}
	h->count[i]++;
}

/* The value of nearest rank ceil(q n): the middle of its bin. */
static double hist_quantile(const struct serve_hist *h, double q)
{
	uint64_t rank = (uint64_t)ceil(q * (double)h->n);
	if (rank < 1)
		rank = 1;
	uint64_t seen = 0;
	for (size_t i = 0; i < SERVE_HIST_BINS; i++) {
		seen += h->count[i];
		if (seen >= rank) {
			uint64_t base = (dbits(HIST_LO) >> SERVE_HIST_SHIFT) + i;
			double mid = bits_d((base << SERVE_HIST_SHIFT) | (1ULL << (SERVE_HIST_SHIFT - 1)));
			return fmin(fmax(mid, h->min), h->max);
		}
	}
	return h->max;
}

void serve_hist_stat(const struct serve_hist *h, struct kvp_serve_stat *out)
{
	memset(out, 0, sizeof *out);
	out->n = h->n;
	if (!h->n) {
		out->mean = out->std = out->min = out->max = out->p50 = out->p90 = out->p99 = NAN;
		return;
	}
	double n = (double)h->n;
	out->mean = h->sum / n;
	out->std = sqrt(fmax(0, h->sumsq / n - out->mean * out->mean));
	out->min = h->min;
	out->max = h->max;
	out->p50 = hist_quantile(h, 0.50);
	out->p90 = hist_quantile(h, 0.90);
	out->p99 = hist_quantile(h, 0.99);
}

/* ------------------------------------------------------------ series */

void serve_series_init(struct serve_series *s, double origin)
{
	memset(s, 0, sizeof *s);
	s->origin = origin;
	s->width = 1e-3;
}

void serve_series_add(struct serve_series *s, double t0, double t1, double util)
{
	while (t1 - s->origin > s->width * KVP_SERVE_SERIES) {
		for (size_t i = 0; i < KVP_SERVE_SERIES / 2; i++)
			s->area[i] = s->area[2 * i] + s->area[2 * i + 1];
		memset(s->area + KVP_SERVE_SERIES / 2, 0, sizeof s->area / 2);
		s->width *= 2;
	}
	size_t i = (size_t)((t0 - s->origin) / s->width);
	for (; i < KVP_SERVE_SERIES; i++) {
		double lo = s->origin + (double)i * s->width, hi = lo + s->width;
		double a = fmax(lo, t0), b = fmin(hi, t1);
		if (b > a)
			s->area[i] += util * (b - a);
		if (hi >= t1)
			break;
	}
}

size_t serve_series_out(const struct serve_series *s, double end, double *t, double *util)
{
	size_t n = 0;
	for (size_t i = 0; i < KVP_SERVE_SERIES; i++) {
		double lo = s->origin + (double)i * s->width;
		if (lo >= end)
			break;
		double hi = fmin(lo + s->width, end);
		t[n] = 0.5 * (lo + hi);
		util[n] = s->area[i] / (hi - lo);
		n++;
	}
	return n;
}

/* ------------------------------------------------------------ record */

static bool stat_ms(struct kvp_record *r, const char *m, const struct kvp_serve_stat *s)
{
	char k[32];
	const char *fmt[] = {"mean_%s_ms", "median_%s_ms", "std_%s_ms", "p90_%s_ms", "p99_%s_ms"};
	double v[] = {s->mean, s->p50, s->std, s->p90, s->p99};
	for (size_t i = 0; i < 5; i++) {
		snprintf(k, sizeof k, fmt[i], m);
		if (!(s->n ? kvp_record_f64(r, k, v[i] * 1e3) : kvp_record_null(r, k)))
			return false;
	}
	return true;
}

bool kvp_serve_to_record(const struct kvp_serve_result *r, struct kvp_record *rec, bool series)
{
	bool ok = kvp_record_f64(rec, "duration", r->duration_s) &&
		  kvp_record_u64(rec, "completed", r->completed) &&
		  kvp_record_u64(rec, "failed", 0) &&
		  kvp_record_u64(rec, "total_input_tokens", r->total_input_tokens) &&
		  kvp_record_u64(rec, "total_output_tokens", r->total_output_tokens) &&
		  kvp_record_f64(rec, "request_throughput", r->request_throughput) &&
		  (isnan(r->request_goodput) ? kvp_record_null(rec, "request_goodput")
					     : kvp_record_f64(rec, "request_goodput", r->request_goodput)) &&
		  kvp_record_f64(rec, "output_throughput", r->output_throughput) &&
		  kvp_record_f64(rec, "total_token_throughput", r->total_token_throughput) &&
		  kvp_record_u64(rec, "max_concurrent_requests", r->max_running) &&
		  stat_ms(rec, "ttft", &r->ttft) && stat_ms(rec, "tpot", &r->tpot) &&
		  stat_ms(rec, "itl", &r->itl) && stat_ms(rec, "e2el", &r->e2el) &&
		  kvp_record_u64(rec, "steps", r->steps) &&
		  kvp_record_f64(rec, "mean_batch_tokens", r->mean_batch_tokens) &&
		  kvp_record_f64(rec, "mean_step_ms", r->steps ? 1e3 * r->busy_s / (double)r->steps : 0) &&
		  kvp_record_f64(rec, "busy_fraction", r->duration_s > 0 ? r->busy_s / r->duration_s : 0) &&
		  kvp_record_u64(rec, "preemptions", r->preemptions) &&
		  kvp_record_u64(rec, "recomputed_tokens", r->recomputed_tokens) &&
		  kvp_record_u64(rec, "prefix_hits", r->prefix_hits) &&
		  kvp_record_u64(rec, "num_blocks", r->num_blocks) &&
		  kvp_record_u64(rec, "block_size", r->block_size) &&
		  kvp_record_u64(rec, "pinned_blocks", r->pinned_blocks) &&
		  kvp_record_u64(rec, "max_num_seqs", r->max_num_seqs) &&
		  kvp_record_u64(rec, "max_num_batched_tokens", r->max_batched_tokens) &&
		  kvp_record_f64(rec, "mean_kv_utilization", r->kv_mean_util) &&
		  kvp_record_f64(rec, "max_kv_utilization", r->kv_max_util) &&
		  kvp_record_f64(rec, "mean_requests_in_system", r->mean_in_system);
	if (!ok || !series)
		return ok;
	if (!kvp_record_list(rec, "kv_utilization_series"))
		return false;
	for (size_t i = 0; i < r->nseries; i++) {
		struct kvp_record *p = kvp_record_new();
		if (!p || !kvp_record_f64(p, "t_s", r->series_t[i] - r->start_s) ||
		    !kvp_record_f64(p, "utilization", r->series_util[i])) {
			kvp_record_free(p);
			return false;
		}
		if (!kvp_record_push(rec, "kv_utilization_series", p))   /* frees p */
			return false;
	}
	return true;
}
