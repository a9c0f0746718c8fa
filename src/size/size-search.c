/* size-search.c: the purchase search over a space of deployment shapes
 * (tp x pp x dp x ep x KV dtype on one GPU) and the Pareto front of cost per
 * million tokens against TPOT and TTFT.  Each point is one kvp_size_search
 * (the fewest replicas); this file only walks the space and compares.
 *
 * Stance: dominance is plain: a is at least as good as b on every objective
 * and better on one; ties are kept on the front (two equal configurations
 * are both offered). */
#include "size/size.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The constraints a configuration fails, by name (size.h). */
static const char *const fail_names[KVP_SIZE_FAIL_BITS] = {
	"split", "weights", "context", "memory", "throughput", "ttft", "tpot", "kv_dtype", "engine"};

const char *kvp_size_fail_name(unsigned bit)
{
	for (int i = 0; i < KVP_SIZE_FAIL_BITS; i++)
		if (bit == 1u << i)
			return fail_names[i];
	return "?";
}

void kvp_size_fail_format(unsigned failed, unsigned first, char *buf, size_t size)
{
	size_t len = 0;
	buf[0] = 0;
	first &= failed;
	for (int j = 0; j < 2 * KVP_SIZE_FAIL_BITS; j++) {
		int i = j % KVP_SIZE_FAIL_BITS;
		bool in_first = (first & (1u << i)) != 0;
		if ((failed & (1u << i)) && in_first == (j < KVP_SIZE_FAIL_BITS)) {
			int k = snprintf(buf + len, size - len, "%s%s", len ? "," : "", fail_names[i]);
			if (k < 0 || (size_t)k >= size - len)
				return;
			len += (size_t)k;
		}
	}
}

size_t kvp_size_space_points(const struct kvp_size_space *sp)
{
	return sp->ntp * sp->npp * sp->ndp * sp->nep * sp->nkv * (sp->pd ? sp->npd : 1) *
	       (sp->seqs ? sp->nseqs : 1);
}

/* What kvp_size_search aims at: the curable failures and risks. */
static unsigned bad(const struct kvp_size_config *x)
{
	return (x->failed & ~x->never) | (x->risk & ~x->risk_never);
}

/* The search at cap (kvp_size_opts.max_num_seqs) from base, the same point
 * searched without one, where base decides it: a fixed failure fails at any
 * cap; a base that meets every curable constraint with no more sequences
 * than the cap is the answer too (the cap only adds the memory test C <=
 * cap, which holds there, and every count below failed already).  False:
 * search. */
static bool from_base(const struct kvp_size_config *base, uint64_t cap, struct kvp_size_config *out)
{
	if (!(base->failed & KVP_SIZE_FAIL_FIXED) && (bad(base) || base->sequences > cap))
		return false;
	*out = *base;
	out->seqs_cap = cap;
	if (!(base->failed & KVP_SIZE_FAIL_FIXED) && out->max_num_seqs > cap)
		out->max_num_seqs = cap;
	return true;
}

/* kvp_size_search's answer under o's cap, knowing that lo replicas fail
 * (the uncapped fewest, whose sequences exceed the cap): doubling from lo
 * to the first count that meets, then bisecting; the predicate is monotone
 * in the replicas, so this is the fewest, in about log2 of the answer's
 * evaluations instead of log2 of max_replicas.  When even max_replicas
 * fail, kvp_size_search says what to show. */
static kvp_status search_above(const struct kvp_model *m, const struct kvp_gpu *g,
			       const struct kvp_size_demand *d, const struct kvp_size_opts *o,
			       uint32_t tp, uint32_t lo, struct kvp_size_config *out,
			       struct kvp_error *err)
{
	uint32_t maxr = o->max_replicas ? o->max_replicas : KVP_SIZE_MAX_REPLICAS, h = lo;
	struct kvp_size_config *mid = malloc(sizeof *mid);
	kvp_status st = KVP_STATUS_OK;
	bool found = false;
	if (!mid)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	while (!found && h < maxr) {
		h = h > maxr / 2 ? maxr : 2 * h;
		if ((st = kvp_size_evaluate(m, g, d, o, tp, h, mid, err)))
			goto out;
		if (bad(mid) == 0) {
			*out = *mid;
			found = true;
		} else {
			lo = h;
		}
	}
	if (!found) {
		st = kvp_size_search(m, g, d, o, tp, out, err);
		goto out;
	}
	while (h - lo > 1) {
		uint32_t r = lo + (h - lo) / 2;
		if ((st = kvp_size_evaluate(m, g, d, o, tp, r, mid, err)))
			goto out;
		if (bad(mid) == 0) {
			h = r;
			*out = *mid;
		} else {
			lo = r;
		}
	}
out:
	free(mid);
	return st;
}

kvp_status kvp_size_search_space(const struct kvp_model *m, const struct kvp_gpu *g,
				 const struct kvp_size_demand *d, const struct kvp_size_opts *o,
				 const struct kvp_size_space *sp, struct kvp_size_config *out,
				 struct kvp_error *err)
{
	struct kvp_size_opts po = *o;
	struct kvp_size_config base;
	size_t n = 0;
	for (size_t a = 0; a < sp->ntp; a++)
		for (size_t b = 0; b < sp->npp; b++)
			for (size_t c = 0; c < sp->ndp; c++)
				for (size_t e = 0; e < sp->nep; e++)
					for (size_t k = 0; k < sp->nkv; k++)
						for (size_t q = 0; q < (sp->pd ? sp->npd : 1); q++)
						for (size_t s = 0; s < (sp->seqs ? sp->nseqs : 1); s++) {
							po.max_num_seqs = 0;
							po.budget.par.pp = sp->pp[b];
							po.budget.par.dp = sp->dp[c];
							po.budget.par.ep = sp->ep[e];
							po.budget.par.gpus = 0;
							po.budget.kv_dtype = sp->kv[k];
							po.disagg_p = sp->pd ? sp->pd[q][0] : 0;
							po.disagg_d = sp->pd ? sp->pd[q][1] : 0;
							uint64_t cap = sp->seqs ? sp->seqs[s] : 0;
							kvp_status st = KVP_STATUS_OK;
							/* uncapped once per point */
							if (s == 0)
								st = kvp_size_search(m, g, d, &po, sp->tp[a], &base, err);
							if (st)
								return st;
							if (cap == 0) {
								out[n++] = base;
								continue;
							}
							if (from_base(&base, cap, &out[n])) {
								n++;
								continue;
							}
							po.max_num_seqs = cap;
							/* base meets at its count: the capped
							 * answer lies above it */
							bool above = bad(&base) == 0 && (d->rate > 0 || d->users > 1);
							st = above ? search_above(m, g, d, &po, sp->tp[a], base.replicas,
										  &out[n++], err)
								   : kvp_size_search(m, g, d, &po, sp->tp[a], &out[n++], err);
							if (st)
								return st;
						}
	return KVP_STATUS_OK;
}

#define FRONT_FAILS (KVP_SIZE_FAIL_FIXED | KVP_SIZE_FAIL_MEMORY | KVP_SIZE_FAIL_THROUGHPUT)

static bool candidate(const struct kvp_size_config *x)
{
	return !(x->failed & FRONT_FAILS) && isfinite(x->cost_per_mtok) && isfinite(x->tpot_s) &&
	       isfinite(x->ttft_s);
}

/* a dominates b */
static bool dominates(const struct kvp_size_config *a, const struct kvp_size_config *b)
{
	bool le = a->cost_per_mtok <= b->cost_per_mtok && a->tpot_s <= b->tpot_s &&
		  a->ttft_s <= b->ttft_s;
	bool lt = a->cost_per_mtok < b->cost_per_mtok || a->tpot_s < b->tpot_s ||
		  a->ttft_s < b->ttft_s;
	return le && lt;
}

size_t kvp_size_pareto(struct kvp_size_config *c, size_t n)
{
	size_t front = 0;
	for (size_t i = 0; i < n; i++) {
		c[i].pareto = candidate(&c[i]);
		for (size_t j = 0; j < n && c[i].pareto; j++)
			if (j != i && candidate(&c[j]) && dominates(&c[j], &c[i]))
				c[i].pareto = false;
		front += c[i].pareto;
	}
	return front;
}

/* ------------------------------------------------------------- ranking
 * Meeting first, then at risk, then by how few constraints fail; then cost
 * per token, cost per hour, GPUs, TPOT and the GPU's name. */

static int popcount(unsigned x)
{
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

static double cost_key(double v) { return isnan(v) ? INFINITY : v; }

static int cmp_config(const void *pa, const void *pb)
{
	const struct kvp_size_config *a = pa, *b = pb;
	/* one basis per ranking: a configuration the basis cannot price (the
	 * profile lacks the number, or its price is of another kind) is ranked
	 * apart, after every priced one, not between them (issue 35) */
	bool pa_ok = kvp_size_priced(a), pb_ok = kvp_size_priced(b);
	if (pa_ok != pb_ok)
		return pa_ok ? -1 : 1;
	if (a->meets != b->meets)
		return a->meets ? -1 : 1;
	if (a->at_risk != b->at_risk)
		return a->at_risk ? -1 : 1;
	if (!a->meets && !a->at_risk && popcount(a->failed) != popcount(b->failed))
		return popcount(a->failed) - popcount(b->failed);
	/* per token at the configuration's own throughput: under a rate every
	 * configuration that keeps up serves the same tokens, so this orders as
	 * the price per hour does; without one each serves what it can, and a
	 * cheap slow GPU is not the cheaper buy */
	double x = cost_key(a->cost_per_mtok), y = cost_key(b->cost_per_mtok);
	if (x != y)
		return x < y ? -1 : 1;
	x = cost_key(a->cost_per_hour);
	y = cost_key(b->cost_per_hour);
	if (x != y)
		return x < y ? -1 : 1;
	if (a->count != b->count)
		return a->count < b->count ? -1 : 1;
	if (a->tpot_s != b->tpot_s)
		return a->tpot_s < b->tpot_s ? -1 : 1;
	return strcmp(a->gpu, b->gpu);
}

bool kvp_size_priced(const struct kvp_size_config *c)
{
	return c->cost_per_hour > 0 && isfinite(c->cost_per_hour);
}

void kvp_size_rank(struct kvp_size_config *c, size_t n)
{
	qsort(c, n, sizeof *c, cmp_config);
}
