/* calibrate-fit.c: the constants of the step model fitted to measured
 * benchmark runs, their jackknife spread and each observation's residual.
 * See calibrate-fit.h for the stance: every prediction is the step model's
 * own, on a kvp_perf_hw with the fit's constants. */
#include "time/calibrate-fit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "model/shape.h"
#include "time/calibrate-checks.h"
#include "time/ttft-load.h"

static const char *const param_names[KVP_CALIB_NPARAMS] = {
	"decode_bw_efficiency", "prefill_flops_efficiency", "kv_bw_efficiency", "step_fixed_s",
	"seq_step_s", "prefill_fixed_s", "allreduce_latency_s", "request_latency_s"};

/* Bounds of each constant and, for a fixed cost the GPU's hw leaves at 0,
 * where the search starts (a log search cannot start at 0). */
static const double lo_bound[KVP_CALIB_NPARAMS] = {0.02, 0.02, 0.02, 1e-7, 1e-9, 1e-7, 1e-7, 1e-7};
static const double hi_bound[KVP_CALIB_NPARAMS] = {1, 1, 1, 0.5, 0.05, 0.5, 1e-2, 1};
/* request_latency_s probed at 10 ms: tens of ms a request is what the
 * SGLang sets' TTFTs held (reports/calibrate-public.md, third pass) */
static const double probe[KVP_CALIB_NPARAMS] = {0, 0, 0, 1e-3, 1e-5, 1e-3, 1e-5, 1e-2};

const char *kvp_calib_param_name(enum kvp_calib_param p)
{
	return p < KVP_CALIB_NPARAMS ? param_names[p] : "unknown";
}

int kvp_calib_param_from_name(const char *name)
{
	for (int i = 0; i < KVP_CALIB_NPARAMS; i++)
		if (strcmp(name, param_names[i]) == 0)
			return i;
	/* the same slot where a GEMM table times the prefill (calibrate-fit.h) */
	if (strcmp(name, "prefill_flops_scale") == 0)
		return KVP_CALIB_PREFILL_FLOPS_EFFICIENCY;
	return -1;
}

const char *kvp_calib_result_param_name(const struct kvp_calib_result *r,
					enum kvp_calib_param p)
{
	return p == KVP_CALIB_PREFILL_FLOPS_EFFICIENCY && r->prefill_scale ? "prefill_flops_scale"
									   : kvp_calib_param_name(p);
}

bool kvp_calib_result_spread_known(const struct kvp_calib_result *r)
{
	for (int k = 0; k < KVP_CALIB_NPARAMS; k++)
		if (r->fitted[k])
			return r->loo_refits > 0;
	return true;
}

const char *kvp_calib_obs_name(enum kvp_calib_obs_kind k)
{
	static const char *const n[] = {"ttft", "tpot", "prefill", "decode_step", "latency"};
	return k <= KVP_CALIB_LATENCY ? n[k] : "unknown";
}

static void get_params(const struct kvp_perf_hw *hw, double *t)
{
	t[KVP_CALIB_DECODE_BW_EFFICIENCY] = hw->decode_bw_efficiency;
	/* with a measured GEMM table the prefill's constant is a scale on it
	 * (calibrate-fit.h), 1 before any calibration */
	t[KVP_CALIB_PREFILL_FLOPS_EFFICIENCY] =
		!hw->gemm.nm ? hw->prefill_flops_efficiency
		: hw->prefill_flops_scale > 0 ? hw->prefill_flops_scale : 1;
	/* 0 reads the KV at the weights' efficiency: the same figure, fitted
	 * apart from there */
	t[KVP_CALIB_KV_BW_EFFICIENCY] = hw->kv_bw_efficiency > 0 ? hw->kv_bw_efficiency
								  : hw->decode_bw_efficiency;
	t[KVP_CALIB_STEP_FIXED_S] = hw->step_fixed_s;
	t[KVP_CALIB_SEQ_STEP_S] = hw->seq_step_s;
	t[KVP_CALIB_PREFILL_FIXED_S] = hw->prefill_fixed_s;
	t[KVP_CALIB_ALLREDUCE_LATENCY_S] = hw->allreduce_latency_s;
	t[KVP_CALIB_REQUEST_LATENCY_S] = hw->request_latency_s;
}

static void set_params(struct kvp_perf_hw *hw, const double *t)
{
	hw->decode_bw_efficiency = t[KVP_CALIB_DECODE_BW_EFFICIENCY];
	if (hw->gemm.nm)
		kvp_perf_hw_prefill_scale(hw, t[KVP_CALIB_PREFILL_FLOPS_EFFICIENCY]);
	else
		kvp_perf_hw_prefill_efficiency(hw, t[KVP_CALIB_PREFILL_FLOPS_EFFICIENCY]);
	hw->kv_bw_efficiency = t[KVP_CALIB_KV_BW_EFFICIENCY];
	hw->step_fixed_s = t[KVP_CALIB_STEP_FIXED_S];
	hw->seq_step_s = t[KVP_CALIB_SEQ_STEP_S];
	hw->prefill_fixed_s = t[KVP_CALIB_PREFILL_FIXED_S];
	hw->allreduce_latency_s = t[KVP_CALIB_ALLREDUCE_LATENCY_S];
	hw->request_latency_s = t[KVP_CALIB_REQUEST_LATENCY_S];
}

void kvp_calib_apply(const struct kvp_calib_result *r, struct kvp_perf_hw *hw)
{
	double t[KVP_CALIB_NPARAMS];
	get_params(hw, t);
	for (int i = 0; i < KVP_CALIB_NPARAMS; i++)
		if (r->fitted[i])
			t[i] = r->value[i];
	set_params(hw, t);
}

/* One run as the step model sees it: its budget (spec, weights, the
 * engine's token budget per step) and its shape. */
struct run_shape {
	struct kvp_budget b;
	uint64_t total, rank;     /* sequences of the deployment, of the fullest DP rank */
	uint64_t p, o, dctx;      /* prompt, output, mean decode context p + (o - 1) / 2 */
	/* a serving run's sequences that run (at most what the pool holds,
	 * ttft-load.h "queue"): of the deployment, of the fullest rank; and
	 * the requests in flight beyond them, waiting (0: none) */
	uint64_t run_total, run_rank;
	double queued;
	double rps;               /* the run's requests a second on the fullest rank */
};

struct fit_state {
	const struct kvp_perf_hw *hw;
	struct run_shape *rs;
	struct kvp_calib_obs *obs;
	size_t nobs;
	const bool *use;          /* the observations the objective sums; NULL: the train ones */
	struct kvp_error *err;
	kvp_status st;            /* the first error a prediction met */
	/* hw reads the KV at the weights' efficiency (kv_bw_efficiency 0):
	 * while the KV constant stays at its start it follows decode's */
	bool kv_follows;
	double kv_start;
	/* each constant's bounds (lo_bound, hi_bound; a prefill scale's
	 * top keeps prefill_flops_efficiency x it within 1) */
	double lo[KVP_CALIB_NPARAMS], hi[KVP_CALIB_NPARAMS];
};

/* fs's bounds for its hw */
static void set_bounds(struct fit_state *fs)
{
	memcpy(fs->lo, lo_bound, sizeof fs->lo);
	memcpy(fs->hi, hi_bound, sizeof fs->hi);
	if (fs->hw->gemm.nm) {
		double s = fs->hw->prefill_flops_scale > 0 ? fs->hw->prefill_flops_scale : 1;
		fs->hi[KVP_CALIB_PREFILL_FLOPS_EFFICIENCY] = s / fs->hw->prefill_flops_efficiency;
	}
}

/* Every observation's prediction at constants t, into pred[]. */
static kvp_status predict(struct fit_state *fs, const double *t, double *pred)
{
	struct kvp_perf_hw hw = *fs->hw;
	set_params(&hw, t);
	if (fs->kv_follows && t[KVP_CALIB_KV_BW_EFFICIENCY] == fs->kv_start)
		hw.kv_bw_efficiency = 0;
	struct kvp_perf_ctx c;
	size_t last = (size_t)-1;
	for (size_t i = 0; i < fs->nobs; i++) {
		const struct kvp_calib_obs *ob = &fs->obs[i];
		const struct run_shape *r = &fs->rs[ob->run];
		kvp_status st;
		if (ob->run != last && (st = kvp_perf_init(&c, &r->b.spec, r->b.weights_bytes, &hw,
							   fs->err)))
			return st;
		last = ob->run;
		struct kvp_perf_step pre, dec;
		struct kvp_perf_loaded ld;
		switch (ob->kind) {
		case KVP_CALIB_TTFT:
			/* as the engine's scheduler serves a first token under
			 * load (ttft-load.h: vLLM chunked, SGLang alone) to one
			 * of the sequences that run; the waiting ones wait for
			 * the running ones to finish first */
			st = kvp_perf_loaded_ttft(&c, &r->b.engine_model, r->run_rank, r->run_total,
						  r->p, r->dctx, r->b.max_batched_tokens, r->rps, &ld,
						  fs->err);
			pred[i] = ld.ttft_s;
			if (!st && r->queued > 0 &&
			    !(st = kvp_perf_decode_step_dp(&c, r->run_rank, r->run_total, r->dctx,
							   &dec, fs->err)))
				pred[i] += kvp_perf_queue_wait_s(r->queued, (double)r->run_total,
								 ld.ttft_s, dec.time_s, r->o);
			break;
		case KVP_CALIB_TPOT:
			/* the sequences that run decode; the waiting ones make
			 * no tokens yet */
			st = kvp_perf_decode_step_dp(&c, r->run_rank, r->run_total, r->dctx, &dec,
						     fs->err);
			pred[i] = dec.time_s;
			break;
		case KVP_CALIB_DECODE_STEP:
			st = kvp_perf_decode_step_dp(&c, r->rank, r->total, r->dctx, &dec, fs->err);
			pred[i] = dec.time_s;
			break;
		case KVP_CALIB_PREFILL:
			st = kvp_perf_prefill_dp(&c, r->rank, r->total, r->p, &pre, fs->err);
			pred[i] = pre.time_s;
			break;
		default:
			if (!(st = kvp_perf_prefill_dp(&c, r->rank, r->total, r->p, &pre, fs->err)))
				st = kvp_perf_decode_step_dp(&c, r->rank, r->total, r->dctx, &dec,
							     fs->err);
			/* the whole batch end to end, as perf's e2e: with the
			 * request's latency outside the steps (step.h) once */
			pred[i] = kvp_perf_request_s(&hw, pre.time_s +
							   (double)(r->o - 1) * dec.time_s);
			break;
		}
		if (st)
			return st;
	}
	return KVP_STATUS_OK;
}

/* The objective at t: sum of log(measured / predicted)^2 over the
 * observations in use; INFINITY where a prediction fails or is not finite. */
static double objective(struct fit_state *fs, const double *t)
{
	double pred[KVP_CALIB_MAX_OBS];
	kvp_status st = predict(fs, t, pred);
	if (st) {
		if (!fs->st)
			fs->st = st;
		return INFINITY;
	}
	double s = 0;
	for (size_t i = 0; i < fs->nobs; i++) {
		bool in = fs->use ? fs->use[i] : fs->obs[i].train;
		if (!in)
			continue;
		if (!(pred[i] > 0) || !isfinite(pred[i]))
			return INFINITY;
		double l = log(fs->obs[i].measured_s / pred[i]);
		s += l * l;
	}
	return s;
}

/* Coordinate search on log t[k] for the constants in `on`: each sweep
 * tries t x f and t / f for each in turn and keeps what lowers the
 * objective; a sweep that keeps nothing takes f to its square root, down to
 * 1 + 1e-6.  Monotone: the answer is never worse than the start. */
static double coord_search(struct fit_state *fs, const bool *on, double *t)
{
	double best = objective(fs, t), f = 2;
	for (int evals = 0; f > 1 + 1e-6 && evals < 20000;) {
		bool moved = false;
		for (int k = 0; k < KVP_CALIB_NPARAMS; k++) {
			if (!on[k])
				continue;
			for (int dir = 0; dir < 2; dir++) {
				double old = t[k], v = dir ? old / f : old * f;
				v = fmin(fmax(v, fs->lo[k]), fs->hi[k]);
				if (v == old)
					continue;
				t[k] = v;
				double o = objective(fs, t);
				evals++;
				if (o < best) {
					best = o;
					moved = true;
					break;
				}
				t[k] = old;
			}
		}
		if (!moved)
			f = sqrt(f);
	}
	return best;
}

/* t with u[j] = log t[k] for the j-th constant in `on`, within bounds. */
static void from_log(const struct fit_state *fs, const bool *on, const double *u, double *t)
{
	for (int k = 0, j = 0; k < KVP_CALIB_NPARAMS; k++)
		if (on[k]) {
			t[k] = fmin(fmax(exp(u[j]), fs->lo[k]), fs->hi[k]);
			j++;
		}
}

/* Nelder-Mead on the logs of the constants in `on` (reflection 1,
 * expansion 2, contraction 1/2, shrink 1/2), from t; its answer in t when
 * better.  The roofline's max() puts kinks and narrow valleys in the
 * objective, where a search along the axes alone stalls; the simplex turns
 * along them. */
static double simplex_search(struct fit_state *fs, const bool *on, double *t)
{
	enum { D = KVP_CALIB_NPARAMS };
	double x[D + 1][D], f[D + 1], tt[KVP_CALIB_NPARAMS];
	int d = 0;
	for (int k = 0; k < KVP_CALIB_NPARAMS; k++)
		if (on[k])
			x[0][d++] = log(t[k]);
	double best0 = objective(fs, t);
	if (!d)
		return best0;
	for (int i = 1; i <= d; i++) {
		memcpy(x[i], x[0], sizeof x[0]);
		x[i][i - 1] += log(1.3);
	}
	for (int i = 0; i <= d; i++) {
		memcpy(tt, t, sizeof tt);
		from_log(fs, on, x[i], tt);
		f[i] = objective(fs, tt);
	}
	for (int it = 0; it < 4000; it++) {
		int hi = 0, lo = 0;
		for (int i = 1; i <= d; i++) {
			if (f[i] > f[hi])
				hi = i;
			if (f[i] < f[lo])
				lo = i;
		}
		int nh = lo;
		for (int i = 0; i <= d; i++)
			if (i != hi && f[i] >= f[nh])
				nh = i;
		double size = 0;
		for (int i = 0; i <= d; i++)
			for (int j = 0; j < d; j++)
				size = fmax(size, fabs(x[i][j] - x[lo][j]));
		if (size < 1e-9 || !(f[hi] - f[lo] > 1e-15 * (1 + f[lo])))
			break;
		double c[D] = {0}, xr[D], xe[D], fr, fe;
		for (int i = 0; i <= d; i++)
			for (int j = 0; j < d && i != hi; j++)
				c[j] += x[i][j] / d;
#define TRY(dst, coef, fv)                                             \
	do {                                                           \
		for (int j = 0; j < d; j++)                            \
			dst[j] = c[j] + (coef) * (x[hi][j] - c[j]);    \
		memcpy(tt, t, sizeof tt);                              \
		from_log(fs, on, dst, tt);                                 \
		fv = objective(fs, tt);                                \
	} while (0)
		TRY(xr, -1.0, fr);
		if (fr < f[lo]) {
			TRY(xe, -2.0, fe);
			if (fe < fr) {
				memcpy(x[hi], xe, sizeof xe);
				f[hi] = fe;
			} else {
				memcpy(x[hi], xr, sizeof xr);
				f[hi] = fr;
			}
		} else if (fr < f[nh]) {
			memcpy(x[hi], xr, sizeof xr);
			f[hi] = fr;
		} else {
			double xc[D], fc;
			if (fr < f[hi])
				TRY(xc, -0.5, fc);
			else
				TRY(xc, 0.5, fc);
			if (fc < fmin(fr, f[hi])) {
				memcpy(x[hi], xc, sizeof xc);
				f[hi] = fc;
			} else {
				for (int i = 0; i <= d; i++) {
					if (i == lo)
						continue;
					for (int j = 0; j < d; j++)
						x[i][j] = x[lo][j] + 0.5 * (x[i][j] - x[lo][j]);
					memcpy(tt, t, sizeof tt);
					from_log(fs, on, x[i], tt);
					f[i] = objective(fs, tt);
				}
			}
		}
#undef TRY
	}
	int lo = 0;
	for (int i = 1; i <= d; i++)
		if (f[i] < f[lo])
			lo = i;
	if (!(f[lo] < best0))
		return best0;
	from_log(fs, on, x[lo], t);
	return objective(fs, t);
}

/* The fit: the simplex, then the axes to polish, then the simplex again
 * from there while either still gains; never worse than the start. */
static double search(struct fit_state *fs, const bool *on, double *t)
{
	double best = objective(fs, t);
	for (int round = 0; round < 4; round++) {
		double before = best;
		best = simplex_search(fs, on, t);
		best = coord_search(fs, on, t);
		if (!(best < before * (1 - 1e-9)))
			break;
	}
	return best;
}

static double median_abs(const double *v, size_t n)
{
	if (!n)
		return 0;
	double *s = malloc(n * sizeof *s);
	if (!s)
		return INFINITY;
	memcpy(s, v, n * sizeof *s);
	for (size_t i = 1; i < n; i++) /* insertion sort: n is a few hundred at most */
		for (size_t j = i; j > 0 && s[j - 1] > s[j]; j--) {
			double x = s[j];
			s[j] = s[j - 1];
			s[j - 1] = x;
		}
	double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
	free(s);
	return m;
}

/* The largest |measured / pred - 1| of the training observations. */
static double worst_residual(const struct kvp_calib_obs *obs, size_t n, const double *pred)
{
	double w = 0;
	for (size_t i = 0; i < n; i++)
		if (obs[i].train && pred[i] > 0)
			w = fmax(w, fabs(obs[i].measured_s / pred[i] - 1));
	return w;
}

/* The median |measured / pred - 1| of the observations with train == want. */
static double median_residual(const struct kvp_calib_obs *obs, size_t n, const double *pred,
			      bool want)
{
	double r[KVP_CALIB_MAX_OBS];
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (obs[i].train == want)
			r[k++] = fabs(obs[i].measured_s / pred[i] - 1);
	return median_abs(r, k);
}

/* Runs of the same shape whose same measure differs by more than 1.5x. */
static kvp_status check_contradictions(const struct kvp_bench_run *runs,
				       const struct kvp_calib_obs *obs, size_t nobs,
				       struct kvp_error *err)
{
	for (size_t i = 0; i < nobs; i++)
		for (size_t j = 0; j < i; j++) {
			const struct kvp_bench_run *a = &runs[obs[j].run], *b = &runs[obs[i].run];
			if (obs[i].kind != obs[j].kind || a->prompt_tokens != b->prompt_tokens ||
			    a->output_tokens != b->output_tokens || a->tp != b->tp ||
			    fabs(a->batch - b->batch) > 0.05 * fmax(a->batch, b->batch))
				continue;
			double x = obs[i].measured_s, y = obs[j].measured_s;
			if (fmax(x, y) > 1.5 * fmin(x, y))
				return kvp_error_set(err, KVP_STATUS_INVALID, b->path, b->line, 1,
						     kvp_calib_obs_name(obs[i].kind),
						     "%.6g s contradicts %.6g s of %s:%d at the same "
						     "shape (batch %.4g, %llu + %llu tokens): the "
						     "same runs should agree within 1.5x", x, y,
						     a->path, a->line, b->batch,
						     (unsigned long long)b->prompt_tokens,
						     (unsigned long long)b->output_tokens);
		}
	return KVP_STATUS_OK;
}

static kvp_status add_obs(struct kvp_calib_result *out, size_t run, enum kvp_calib_obs_kind k,
			  double v, const struct kvp_bench_run *r, bool train,
			  struct kvp_error *err)
{
	if (!(v > 0))
		return KVP_STATUS_OK;
	if (out->nobs >= KVP_CALIB_MAX_OBS)
		return kvp_error_set(err, KVP_STATUS_INVALID, r->path, r->line, 1, NULL,
				     "more than %d runs", KVP_CALIB_MAX_RUNS);
	out->obs[out->nobs++] = (struct kvp_calib_obs){.run = run, .kind = k, .measured_s = v,
						     .train = train};
	out->ntrain += train;
	return KVP_STATUS_OK;
}

/* Which constants the training observations tell apart: Gram-Schmidt over
 * the columns d log(pred) / d log(t_k).  The constants in `cand` (the ones
 * to be fitted: --fit's list, or all of them when none is asked for) are
 * taken in priority order, each judged against the candidates before it
 * that were kept: a constant not asked for neither counts against one that
 * is nor is counted against.  The others are judged afterwards against
 * every kept candidate (could it be fitted beside them?) and join no
 * basis. */
static kvp_status supported(struct fit_state *fs, const double *t0, const bool *cand, bool *sup)
{
	double base[KVP_CALIB_MAX_OBS], moved[KVP_CALIB_MAX_OBS];
	double (*col)[KVP_CALIB_MAX_OBS] = malloc((KVP_CALIB_NPARAMS + 1) * sizeof *col);
	if (!col)
		return kvp_error_set(fs->err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	kvp_status st = predict(fs, t0, base);
	if (st)
		goto out;
	int kept = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int k = 0; k < KVP_CALIB_NPARAMS; k++) {
			if (cand[k] != (pass == 0))
				continue;
			double t[KVP_CALIB_NPARAMS];
			memcpy(t, t0, sizeof t);
			double h = t0[k] > 0 ? 0.1 : 1; /* a fixed cost at 0: probe it */
			t[k] = t0[k] > 0 ? t0[k] * (1 + h) : probe[k];
			if ((st = predict(fs, t, moved)))
				goto out;
			/* col[kept] is scratch until the constant is kept */
			double norm0 = 0, norm = 0;
			for (size_t i = 0; i < fs->nobs; i++) {
				double v = fs->obs[i].train && base[i] > 0 && moved[i] > 0
					   ? log(moved[i] / base[i]) : 0;
				col[kept][i] = v;
				norm0 += v * v;
			}
			for (int j = 0; j < kept; j++) {
				double d = 0;
				for (size_t i = 0; i < fs->nobs; i++)
					d += col[kept][i] * col[j][i];
				for (size_t i = 0; i < fs->nobs; i++)
					col[kept][i] -= d * col[j][i];
			}
			for (size_t i = 0; i < fs->nobs; i++)
				norm += col[kept][i] * col[kept][i];
			sup[k] = norm0 > 1e-18 && norm > 0.05 * 0.05 * norm0;
			if (sup[k] && pass == 0) {
				for (size_t i = 0; i < fs->nobs; i++)
					col[kept][i] /= sqrt(norm);
				kept++;
			}
		}
out:
	free(col);
	return st;
}

/* Each run's budget and shape in rs[], its measured times in out->obs
 * (held-out ones as fo says), and the contradiction check. */
static kvp_status prepare(const struct kvp_model *m, const struct kvp_gpu *g,
			  const struct kvp_budget_opts *o, const struct kvp_bench_run *runs, size_t n,
			  const struct kvp_calib_opts *fo, const struct kvp_calib_seen *seen,
			  size_t nseen, struct run_shape *rs, struct kvp_calib_result *out,
			  struct kvp_error *err)
{
	kvp_status st = KVP_STATUS_OK;
	uint32_t dp = kvp_shape_dp(&o->par);
	for (size_t i = 0; !st && i < n; i++) {
		const struct kvp_bench_run *r = &runs[i];
		struct run_shape *s = &rs[i];
		bool train = !(fo && fo->held_out && fo->held_out[i]);
		s->p = r->prompt_tokens;
		s->o = r->output_tokens;
		/* the mean context of the running batch: p + (o - 1) / 2 at the
		 * mean lengths, or the reader's where the file records how the
		 * lengths were spread (bench.h decode_context) */
		s->dctx = r->decode_context >= 1 ? (uint64_t)floor(r->decode_context + 0.5)
						 : s->p + (s->o - 1) / 2;
		s->total = (uint64_t)floor(r->batch + 0.5);
		if (s->total < 1)
			s->total = 1;
		s->rank = kvp_cdiv(s->total, dp);
		struct kvp_budget_opts bo = *o;
		if (!kvp_add(s->p, s->o, &bo.context) || s->p > (1ULL << 40) || s->o > (1ULL << 40))
			return kvp_error_set(err, KVP_STATUS_OVERFLOW, r->path, r->line, 1,
					     "prompt_tokens", "too many tokens");
		bo.batch = s->rank;
		const struct kvp_bench_measured *me = &r->m;
		if ((st = kvp_budget_compute(m, g, &bo, &s->b, err)))
			return st;
		/* a serving run asks for `batch` in flight; the engine runs as
		 * many as its KV pool holds and the rest wait (ttft-load.h
		 * "queue").  Under continuous batching the running sequences
		 * stand at every point of their output, and one that ends
		 * gives its p + o tokens to one that starts with p: the pool
		 * holds them at their mean context p + (o - 1) / 2, the one
		 * the decode step charges (the budget's max_sequences there,
		 * per rank).  The engines admit against the same sum: SGLang's
		 * PrefillAdder takes a request while the pool's free tokens
		 * cover its prompt and output beside the running ones' left
		 * to make (srt/managers/schedule_policy.py, 0.4.0.post1
		 * l.121-181, 214-290), vLLM allocates blocks as tokens come and
		 * preempts when none is left.  Offline runs give their batch
		 * to the engine as one: left as asked. */
		s->run_total = s->total;
		s->run_rank = s->rank;
		s->rps = r->throughput_rps / dp;
		struct kvp_budget_opts bm = bo;
		bm.context = s->dctx ? s->dctx : 1;
		bm.batch = 1;
		struct kvp_budget mean;
		if ((st = kvp_budget_compute(m, g, &bm, &mean, err)))
			return st;
		uint64_t cap = mean.max_sequences, cap_total;
		/* vLLM runs no more than max_num_seqs at once whatever the
		 * pool holds (vllm/v1/core/sched/scheduler.py at 00024d3:
		 * max_num_running_reqs = scheduler_config.max_num_seqs, and
		 * schedule() admits none while len(self.running) equals it);
		 * SGLang's request-slot cap (max_running_requests) is sized
		 * from the pool and not below 2,048, so its pool governs */
		if (s->b.engine == KVP_ENGINE_VLLM && s->b.max_num_seqs && cap > s->b.max_num_seqs)
			cap = s->b.max_num_seqs;
		if (!kvp_mul(cap, dp, &cap_total))
			cap_total = UINT64_MAX;
		if ((r->m.ttft_s > 0 || r->m.tpot_s > 0) && cap >= 1 && s->rank > cap) {
			s->run_rank = cap;
			s->run_total = s->total < cap_total ? s->total : cap_total;
			s->queued = r->batch - (double)s->run_total;
			if (s->queued < 0)
				s->queued = 0;
		}
		if ((st = add_obs(out, i, KVP_CALIB_TTFT, me->ttft_s, r, train, err)) ||
		    (st = add_obs(out, i, KVP_CALIB_TPOT, me->tpot_s, r, train, err)) ||
		    (st = add_obs(out, i, KVP_CALIB_PREFILL, me->prefill_s, r, train, err)) ||
		    (st = add_obs(out, i, KVP_CALIB_DECODE_STEP, me->decode_step_s, r, train, err)) ||
		    (st = add_obs(out, i, KVP_CALIB_LATENCY, me->latency_s, r, train, err)))
			return st;
	}
	for (size_t i = 0; i < out->nobs; i++)
		out->obs[i].queued = rs[out->obs[i].run].queued;
	kvp_calib_check_runs(g, o, runs, n, seen, nseen, out->warning, &out->nwarn);
	return check_contradictions(runs, out->obs, out->nobs, err);
}

/* hw with the engine's time data (its fixed costs, all-reduce latency and
 * band) where no calibration gave them, as kvp_perf_run takes them: the
 * runs share one engine, and the first run's budget holds its entry. */
static void engine_hw(const struct kvp_perf_hw *hw, const struct run_shape *rs,
		      struct kvp_perf_hw *out)
{
	*out = *hw;
	const struct kvp_engine_model *e = &rs[0].b.engine_model;
	kvp_perf_hw_engine(out, e);
}

kvp_status kvp_calib_evaluate(const struct kvp_model *m, const struct kvp_gpu *g,
			      const struct kvp_budget_opts *o, const struct kvp_perf_hw *hw,
			      const struct kvp_bench_run *runs, size_t n,
			      const struct kvp_calib_seen *seen, size_t nseen,
			      struct kvp_calib_result *out, struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	if (n > KVP_CALIB_MAX_RUNS)
		return kvp_error_set(err, KVP_STATUS_INVALID, runs[n - 1].path, runs[n - 1].line, 1,
				     NULL, "more than %d runs", KVP_CALIB_MAX_RUNS);
	struct run_shape *rs = calloc(n ? n : 1, sizeof *rs);
	if (!rs)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	double pred[KVP_CALIB_MAX_OBS];
	struct kvp_perf_hw eh;
	kvp_status st = prepare(m, g, o, runs, n, NULL, seen, nseen, rs, out, err);
	if (!st) {
		engine_hw(hw, rs, &eh);
		out->band_low = eh.time_ratio_low;
		out->band_high = eh.time_ratio_high;
	}
	struct fit_state fs = {.hw = &eh, .rs = rs, .obs = out->obs, .nobs = out->nobs, .err = err};
	set_bounds(&fs);
	out->prefill_scale = eh.gemm.nm > 0;
	get_params(st ? hw : &eh, out->start);
	fs.kv_follows = !st && !(eh.kv_bw_efficiency > 0);
	fs.kv_start = out->start[KVP_CALIB_KV_BW_EFFICIENCY];
	memcpy(out->value, out->start, sizeof out->value);
	if (!st)
		st = predict(&fs, out->start, pred);
	for (size_t i = 0; !st && i < out->nobs; i++)
		out->obs[i].uncalibrated_s = out->obs[i].predicted_s = pred[i];
	if (!st) {
		out->median_uncalibrated = out->median_calibrated =
			median_residual(out->obs, out->nobs, pred, true);
		out->latency_spread = worst_residual(out->obs, out->nobs, pred);
	}
	free(rs);
	return st;
}

kvp_status kvp_calib_run(const struct kvp_model *m, const struct kvp_gpu *g,
		       const struct kvp_budget_opts *o, const struct kvp_perf_hw *hw,
		       const struct kvp_bench_run *runs, size_t n, const struct kvp_calib_opts *fo,
		       struct kvp_calib_result *out, struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	if (n > KVP_CALIB_MAX_RUNS)
		return kvp_error_set(err, KVP_STATUS_INVALID, runs[n - 1].path, runs[n - 1].line, 1,
				     NULL, "more than %d runs", KVP_CALIB_MAX_RUNS);
	struct run_shape *rs = calloc(n ? n : 1, sizeof *rs);
	if (!rs)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	kvp_status st = prepare(m, g, o, runs, n, fo, NULL, 0, rs, out, err);
	size_t train_runs = 0;
	for (size_t i = 0; i < n; i++)
		train_runs += !(fo && fo->held_out && fo->held_out[i]);
	if (!st && (out->ntrain < 2 || train_runs < 2))
		st = kvp_error_set(err, KVP_STATUS_INVALID, n ? runs[0].path : NULL, 0, 0, "runs",
				   "too few runs: %zu run%s (%zu measured time%s) to fit from; a "
				   "calibration needs at least 2 runs, so that each constant's spread "
				   "over the runs shows", train_runs, train_runs == 1 ? "" : "s",
				   out->ntrain, out->ntrain == 1 ? "" : "s");
	if (st)
		goto done;

	struct kvp_perf_hw eh;
	engine_hw(hw, rs, &eh);
	out->band_low = eh.time_ratio_low;
	out->band_high = eh.time_ratio_high;
	struct fit_state fs = {.hw = &eh, .rs = rs, .obs = out->obs, .nobs = out->nobs, .err = err};
	set_bounds(&fs);
	out->prefill_scale = eh.gemm.nm > 0;
	double t[KVP_CALIB_NPARAMS], pred[KVP_CALIB_MAX_OBS];
	get_params(&eh, out->start);
	fs.kv_follows = !(eh.kv_bw_efficiency > 0);
	fs.kv_start = out->start[KVP_CALIB_KV_BW_EFFICIENCY];
	bool any = false, cand[KVP_CALIB_NPARAMS];
	for (int k = 0; fo && k < KVP_CALIB_NPARAMS; k++)
		any |= fo->want[k];
	for (int k = 0; k < KVP_CALIB_NPARAMS; k++)
		cand[k] = any ? fo->want[k] : true;
	if ((st = supported(&fs, out->start, cand, out->supported)))
		goto done;
	size_t nfit = 0;
	for (int k = 0; k < KVP_CALIB_NPARAMS; k++) {
		bool want = any ? fo->want[k] : out->supported[k] && nfit + 1 < out->ntrain;
		if (want && !out->supported[k]) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, runs[0].path, 0, 0,
					   kvp_calib_param_name(k), "these runs cannot tell it apart: "
					   "the step model's predictions of them do not move with it, "
					   "or move as the constants before it do; add runs that vary "
					   "%s", k == KVP_CALIB_DECODE_BW_EFFICIENCY ? "the batch and context"
					   : k == KVP_CALIB_PREFILL_FLOPS_EFFICIENCY ? "the prompt length"
					   : k == KVP_CALIB_ALLREDUCE_LATENCY_S ? "the tensor-parallel size"
					   : k == KVP_CALIB_KV_BW_EFFICIENCY ? "the batch and context apart"
					   : "the batch");
			goto done;
		}
		out->fitted[k] = want;
		nfit += want;
	}
	if (nfit + 1 > out->ntrain || !nfit) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, runs[0].path, 0, 0, "runs",
				   "too few runs for the constants fitted: %zu measured times "
				   "for %zu constant%s; fitting k constants needs k + 1 times",
				   out->ntrain, nfit, nfit == 1 ? "" : "s");
		goto done;
	}
	for (int k = 0; k < KVP_CALIB_NPARAMS; k++)
		t[k] = out->fitted[k] && !(out->start[k] > 0) ? probe[k] : out->start[k];
	search(&fs, out->fitted, t);
	if (fs.st) {
		st = fs.st;
		goto done;
	}
	memcpy(out->value, t, sizeof t);

	/* the jackknife: leave each training run out in turn */
	for (int k = 0; k < KVP_CALIB_NPARAMS; k++)
		out->lo[k] = out->hi[k] = t[k];
	bool use[KVP_CALIB_MAX_OBS];
	for (size_t leave = 0; leave < n; leave++) {
		size_t left = 0;
		bool present = false;
		for (size_t i = 0; i < out->nobs; i++) {
			use[i] = out->obs[i].train && out->obs[i].run != leave;
			present |= out->obs[i].train && out->obs[i].run == leave;
			left += use[i];
		}
		if (!present || left < nfit)
			continue;
		out->loo_refits++;
		double tj[KVP_CALIB_NPARAMS];
		memcpy(tj, t, sizeof tj);
		fs.use = use;
		search(&fs, out->fitted, tj);
		for (int k = 0; k < KVP_CALIB_NPARAMS; k++) {
			out->lo[k] = fmin(out->lo[k], tj[k]);
			out->hi[k] = fmax(out->hi[k], tj[k]);
		}
		/* the left-out run's times as the refit without it predicts them */
		if ((st = predict(&fs, tj, pred)))
			goto done;
		for (size_t i = 0; i < out->nobs; i++)
			if (out->obs[i].train && out->obs[i].run == leave && pred[i] > 0)
				out->loo_spread = fmax(out->loo_spread,
						       fabs(out->obs[i].measured_s / pred[i] - 1));
	}
	fs.use = NULL;

	if ((st = predict(&fs, out->start, pred)))
		goto done;
	for (size_t i = 0; i < out->nobs; i++)
		out->obs[i].uncalibrated_s = pred[i];
	out->median_uncalibrated = median_residual(out->obs, out->nobs, pred, true);
	if ((st = predict(&fs, t, pred)))
		goto done;
	for (size_t i = 0; i < out->nobs; i++)
		out->obs[i].predicted_s = pred[i];
	out->median_calibrated = median_residual(out->obs, out->nobs, pred, true);
	out->latency_spread = worst_residual(out->obs, out->nobs, pred);
	out->median_held_out = median_residual(out->obs, out->nobs, pred, false);
	out->worse = out->median_calibrated > out->median_uncalibrated;
done:
	free(rs);
	return st;
}
