/* decode-ref.c: the double-precision reference decode and the check every
 * backend's output goes through.
 *
 * Stance: obviously right rather than fast.  Plain loops, two passes over
 * the sequence (the max score, then the weights and the sums), all in
 * double, reading the stored K/V elements through the same conversions as
 * the backends so that only the backends' arithmetic is being judged. */
#include "decode.h"

#include <stdlib.h>

/* Stored element e of the K or V pool times its scale. */
static double kv_value(const struct kvb_paged_kv *kv, const void *pool, const float *scales,
		       float tensor_scale, int64_t e, int64_t srow)
{
	double x = kvb_load(kv->shape.dtype, pool, e);
	if (kv->shape.dtype == KVB_DTYPE_FP8)
		x *= tensor_scale;
	else if (kv->shape.dtype == KVB_DTYPE_INT8)
		x *= scales[srow];
	return x;
}

/* Score of query head hq against token t of sequence b. */
static double score(const struct kvb_paged_kv *kv, const float *qh, int32_t b, int h, int32_t t)
{
	const struct kvb_shape *s = &kv->shape;
	int32_t blk = kv->block_tables[(int64_t)b * kv->max_blocks + t / s->block_size];
	int slot = t % s->block_size;
	int64_t row = kvb_row_index(s, blk, h, slot);
	int64_t srow = kvb_scale_index(s, blk, h, slot);
	double acc = 0;
	for (int i = 0; i < s->d; i++)
		acc += (double)qh[i] * kv_value(kv, kv->k_pool, kv->k_scales, kv->k_scale, row + i, srow);
	return acc * (double)kv->sm_scale;
}

void kvb_decode_ref(const struct kvb_paged_kv *kv, const float *q, int32_t b, double *o,
		    double *mag)
{
	const struct kvb_shape *s = &kv->shape;
	const int g = s->h_q / s->h_kv, d = s->d;
	const int32_t len = kv->seq_lens[b];
	for (int hq = 0; hq < s->h_q; hq++) {
		const int h = hq / g;
		const float *qh = q + ((int64_t)b * s->h_q + hq) * d;
		double *oh = o ? o + (int64_t)hq * d : NULL;
		double *mh = mag ? mag + (int64_t)hq * d : NULL;
		for (int i = 0; i < d; i++) {
			if (oh)
				oh[i] = 0;
			if (mh)
				mh[i] = 0;
		}
		if (len == 0)
			continue;
		/* pass 1: the largest score */
		double m = -INFINITY;
		for (int32_t t = 0; t < len; t++) {
			double x = score(kv, qh, b, h, t);
			if (x > m)
				m = x;
		}
		/* pass 2: weights exp(x - m), their sum, and the weighted V rows */
		double l = 0;
		for (int32_t t = 0; t < len; t++) {
			double w = exp(score(kv, qh, b, h, t) - m);
			int32_t blk = kv->block_tables[(int64_t)b * kv->max_blocks + t / s->block_size];
			int slot = t % s->block_size;
			int64_t row = kvb_row_index(s, blk, h, slot);
			int64_t srow = kvb_scale_index(s, blk, h, slot);
			l += w;
			for (int i = 0; i < d; i++) {
				double v = kv_value(kv, kv->v_pool, kv->v_scales, kv->v_scale, row + i, srow);
				if (oh)
					oh[i] += w * v;
				if (mh)
					mh[i] += w * fabs(v);
			}
		}
		for (int i = 0; i < d; i++) {
			if (oh)
				oh[i] /= l;
			if (mh)
				mh[i] /= l;
		}
	}
}

void kvb_poison(float *o, size_t n)
{
	for (size_t i = 0; i < n; i++)
		o[i] = NAN;
}

struct check_job {
	const struct kvb_paged_kv *kv;
	const float *q, *o;
	const int32_t *seqs;
	int nseqs;
	int nomem;
	struct kvb_check part[]; /* one per worker */
};

static void check_seqs(void *arg, int tid, int nthreads)
{
	struct check_job *job = arg;
	const struct kvb_paged_kv *kv = job->kv;
	const struct kvb_shape *s = &kv->shape;
	const int64_t per_seq = (int64_t)s->h_q * s->d;
	struct kvb_check *res = &job->part[tid];
	double *ref = malloc((size_t)per_seq * sizeof *ref);
	double *mag = malloc((size_t)per_seq * sizeof *mag);
	if (!ref || !mag) {
		job->nomem = 1;
		goto out;
	}
	for (int k = tid; k < job->nseqs; k += nthreads) {
		int32_t b = job->seqs ? job->seqs[k] : k;
		if (b < 0 || b >= kv->batch)
			continue;
		kvb_decode_ref(kv, job->q, b, ref, mag);
		const float *ob = job->o + (int64_t)b * per_seq;
		for (int64_t i = 0; i < per_seq; i++) {
			/* A length-0 sequence must come out exactly 0: mag is 0 there. */
			double den = mag[i] > 1e-300 ? mag[i] : 1e-300;
			double err = fabs((double)ob[i] - ref[i]) / den;
			if (!(err <= res->max_err)) { /* also takes NaN */
				res->max_err = isnan(err) ? INFINITY : err;
				res->worst_seq = b;
				res->worst_head = (int32_t)(i / s->d);
				res->worst_i = (int32_t)(i % s->d);
			}
		}
		res->seqs_checked++;
	}
out:
	free(ref);
	free(mag);
}

int kvb_check_output(const struct kvb_paged_kv *kv, const float *q, const float *o,
		     const int32_t *seqs, int nseqs, struct kvb_cpu *cpu, struct kvb_check *res)
{
	const int64_t n = (int64_t)kv->batch * kv->shape.h_q * kv->shape.d;
	int workers = cpu ? kvb_cpu_threads(cpu) : 1;
	struct check_job *job = calloc(1, sizeof *job + (size_t)workers * sizeof job->part[0]);
	memset(res, 0, sizeof *res);
	res->worst_seq = res->worst_head = res->worst_i = -1;
	if (!job)
		goto fail;
	job->kv = kv;
	job->q = q;
	job->o = o;
	job->seqs = seqs;
	job->nseqs = seqs ? nseqs : kv->batch;
	for (int t = 0; t < workers; t++)
		job->part[t].worst_seq = -1;
	if (cpu)
		kvb_cpu_parallel(cpu, check_seqs, job);
	else
		check_seqs(job, 0, 1);
	if (job->nomem)
		goto fail;
	for (int t = 0; t < workers; t++) {
		const struct kvb_check *p = &job->part[t];
		if (p->worst_seq >= 0 && !(p->max_err <= res->max_err)) {
			res->max_err = p->max_err;
			res->worst_seq = p->worst_seq;
			res->worst_head = p->worst_head;
			res->worst_i = p->worst_i;
		}
		res->seqs_checked += p->seqs_checked;
	}
	for (int64_t i = 0; i < n; i++)
		if (!isfinite(o[i]))
			res->nonfinite++;
	free(job);
	return 0;
fail:
	free(job);
	return -1;
}

int kvb_check_passed(const struct kvb_paged_kv *kv, const struct kvb_check *res)
{
	return res->nonfinite == 0 && res->max_err <= kvb_dtype_tolerance(kv->shape.dtype);
}
