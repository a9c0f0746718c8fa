/* step.c: the roofline model of prefill, decode, tensor-parallel all-reduces,
 * KV offload and prefix reuse.  See step.h for the model; the sources of
 * every constant are here and in kvplan(1).  The files that replace its
 * efficiencies with measured ones are read by calibration.c.
 *
 * Stance: a step's bytes come from the budget and the layer list (model.h),
 * never from a formula of our own; FLOPs are whole-model counts divided by tp;
 * times are a roofline plus communication, nothing hidden. */
#include "time/step.h"
#include "time/step-collective.h"
#include "time/step-eager.h"
#include "time/step-elementwise.h"
#include "time/step-gemm.h"
#include "time/step-gqa.h"
#include "time/step-moe.h"
#include "time/step-moe-align.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/shape.h"
#include "base/units.h"

const char *kvp_perf_bound_name(enum kvp_perf_bound b)
{
	return b == KVP_PERF_BOUND_COMPUTE ? "compute" : "bandwidth";
}

/* The measured MoE curve of c's deployment (kvp_moe_curve_pick), where
 * its engine runs the kernels the table measured.  None found: the roofline
 * keeps the experts, a warning says so and the band is widened, each end
 * twice as far from 1 (a shape the data never covered, issue 32's bad
 * input). */
static void moe_curve_pick(struct kvp_perf_ctx *c)
{
	memset(&c->moe_curve, 0, sizeof c->moe_curve);
	c->moe_warning[0] = 0;
	if (!c->model->moe_num_experts || !c->hw.moe_kernel_tables || !c->expert_bytes ||
	    kvp_moe_curve_pick(&c->hw.moe, &c->spec->par, &c->moe_curve, c->moe_warning,
			       sizeof c->moe_warning))
		return;
	if (!(c->hw.given & KVP_PERF_GIVEN_BAND)) {
		if (c->hw.time_ratio_low > 0)
			c->hw.time_ratio_low = fmax(0.05, 2 * c->hw.time_ratio_low - 1);
		if (c->hw.time_ratio_high > 0)
			c->hw.time_ratio_high = 2 * c->hw.time_ratio_high - 1;
	}
}

double kvp_perf_moe_table_s(const struct kvp_perf_ctx *c, double tokens)
{
	return kvp_moe_step_s(&c->moe_curve, c->model, tokens);
}

kvp_status kvp_perf_init(struct kvp_perf_ctx *c, const struct kvp_spec *s, uint64_t weights_bytes,
			 const struct kvp_perf_hw *hw, struct kvp_error *err)
{
	const struct kvp_model *m = s->model;
	memset(c, 0, sizeof *c);
	if (!(hw->bandwidth_bps > 0) || !(hw->flops > 0) || !(hw->decode_bw_efficiency > 0) ||
	    !(hw->prefill_flops_efficiency > 0) || hw->decode_bw_efficiency > 1 ||
	    hw->prefill_flops_efficiency > 1)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "gpu",
				     "bandwidth, peak FLOP/s and link rates must be positive and "
				     "efficiencies in (0, 1]");
	kvp_perf_collective_link(hw, s->par.tp, &c->tp_link);
	kvp_pcie_ring_apply(hw->pcie_busbw, hw->host_link.name, s->par.tp, c->tp_link.name,
			    &c->tp_link.effective_bps);
	if (s->par.tp > 1 && !(c->tp_link.effective_bps > 0))
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "gpu",
				     "the %s link an all-reduce of tp %u crosses has no rate",
				     c->tp_link.name, s->par.tp);
	c->model = m;
	c->spec = s;
	c->hw = *hw;
	c->hw.attention_flops = kvp_gemm_attention_peak(hw->flops, hw->flops_16bit, hw->flops_fp8,
							s->kv_dtype);
	c->weights_bytes = weights_bytes;
	/* the routed experts' share of this GPU's weights (shape.c's split; an
	 * override of the total keeps the share) */
	if (m->moe_num_experts && s->weights_bytes) {
		double share = (double)s->weights_split.routed_bytes / (double)s->weights_bytes;
		c->expert_bytes = (uint64_t)llround(fmin(share, 1.0) * (double)weights_bytes);
	}
	kvp_perf_eager_layers(m, &c->dense_attention_layers, &c->mla_layers);
	c->uncaptured_launches = kvp_perf_uncaptured_launches(
		m, s->par.tp, hw->uncaptured_attention_launches, hw->uncaptured_attention_launches_mla,
		hw->uncaptured_mlp_launches, hw->uncaptured_moe_launches,
		hw->uncaptured_shared_expert_launches);
	moe_curve_pick(c);
	c->hw.moe_align_s = kvp_moe_align_step_s(m, hw->moe_align_layer_s, hw->moe_align_min_experts);
	kvp_perf_collective_link(hw, s->par.tp * kvp_shape_dp(&s->par), &c->moe_link);
	kvp_pcie_ring_apply(hw->pcie_busbw, hw->host_link.name, s->par.tp * kvp_shape_dp(&s->par),
			    c->moe_link.name, &c->moe_link.effective_bps);
	if (kvp_shape_moe_exchange_bytes(m, &s->par, s->serving_dtype, 1) > 0 &&
	    !(c->moe_link.effective_bps > 0))
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "gpu",
				     "the %s link the experts' exchange crosses has no rate",
				     c->moe_link.name);
	return KVP_STATUS_OK;
}

/* ------------------------------------------------------------------ FLOPs
 * Per layer and per (query, key) pair: QK^T 2 d_qk and PV 2 d_v FLOPs per query
 * head.  d_qk = d_h (+ d_rope for MLA, whose heads attend over the
 * decompressed keys), d_v = head_dim_v. */
static double pair_flops(const struct kvp_model *m, enum kvp_layer_kind k)
{
	double dqk = m->head_dim, dv = m->head_dim_v ? m->head_dim_v : m->head_dim;
	if (k == KVP_LAYER_MLA)
		dqk += m->mla_rope_dim;
	return 2.0 * m->num_heads * (dqk + dv);
}

/* Causal pairs of a prefill of n tokens in a layer of kind k. */
static double prefill_pairs(const struct kvp_model *m, enum kvp_layer_kind k, uint64_t n)
{
	double dn = (double)n;
	switch (k) {
	case KVP_LAYER_FULL:
	case KVP_LAYER_MLA:
		return dn * (dn + 1) / 2;
	case KVP_LAYER_SLIDING: {
		double w = m->sliding_window ? m->sliding_window : dn;
		if (dn <= w)
			return dn * (dn + 1) / 2;
		return w * (w + 1) / 2 + (dn - w) * w;
	}
	case KVP_LAYER_CHUNKED: {
		uint64_t c = m->chunk_size ? m->chunk_size : n;
		double full = (double)(n / c), r = (double)(n % c), dc = (double)c;
		return full * dc * (dc + 1) / 2 + r * (r + 1) / 2;
	}
	default:
		return 0;
	}
}

/* Keys one decode token attends to over `context` tokens. */
static double decode_keys(const struct kvp_model *m, enum kvp_layer_kind k, uint64_t context)
{
	switch (k) {
	case KVP_LAYER_FULL:
	case KVP_LAYER_MLA:
		return (double)context;
	case KVP_LAYER_SLIDING:
		return (double)(m->sliding_window && context > m->sliding_window ? m->sliding_window
										 : context);
	case KVP_LAYER_CHUNKED:
		return (double)(m->chunk_size && context ? (context - 1) % m->chunk_size + 1 : context);
	default:
		return 0;
	}
}

double kvp_perf_attention_flops(const struct kvp_model *m, uint64_t n)
{
	double f = 0;
	for (uint32_t i = 0; i < m->num_layers; i++) {
		enum kvp_layer_kind k = (enum kvp_layer_kind)m->layers[i];
		f += pair_flops(m, k) * prefill_pairs(m, k, n);
	}
	return f;
}

double kvp_perf_prefill_flops(const struct kvp_model *m, uint64_t n)
{
	return 2.0 * (double)m->active_params * (double)n + kvp_perf_attention_flops(m, n);
}

double kvp_perf_decode_flops(const struct kvp_model *m, uint64_t context)
{
	double f = 2.0 * (double)m->active_params;
	for (uint32_t i = 0; i < m->num_layers; i++) {
		enum kvp_layer_kind k = (enum kvp_layer_kind)m->layers[i];
		f += pair_flops(m, k) * decode_keys(m, k, context);
	}
	return f;
}

/* ------------------------------------------------------------------- steps */

double kvp_perf_flops_efficiency(const struct kvp_perf_ctx *c, double flops, double attn_flops,
				 double tokens, double total)
{
	/* a calibration's scale (kvp_perf_hw_prefill_scale) multiplies the
	 * table's rates and the constant alike: the mix at the constant before
	 * it, times s (flops / ((F - o) / (s g) + o / (s c)) = s x the mix) */
	double s = c->hw.prefill_flops_scale > 0 ? c->hw.prefill_flops_scale : 1;
	double e = kvp_gemm_step_efficiency(&c->hw.gemm, c->model, &c->spec->par, c->hw.flops,
					    c->hw.attention_flops, c->hw.prefill_flops_efficiency / s,
					    flops, attn_flops, tokens, total);
	return fmin(1.0, s * e);
}

double kvp_perf_flops_efficiency_routed(const struct kvp_perf_ctx *c, double flops,
					double attn_flops, double tokens, double routed)
{
	double s = c->hw.prefill_flops_scale > 0 ? c->hw.prefill_flops_scale : 1;
	double e = kvp_gemm_step_efficiency_routed(&c->hw.gemm, c->model, &c->spec->par,
						   c->hw.flops, c->hw.attention_flops,
						   c->hw.prefill_flops_efficiency / s, flops,
						   attn_flops, tokens, routed);
	return fmin(1.0, s * e);
}

double kvp_perf_memory_s(const struct kvp_perf_hw *hw, uint64_t weights, uint64_t kv, double eff_bw)
{
	double eff_kv = hw->kv_bw_efficiency > 0 ? hw->kv_bw_efficiency : eff_bw;
	return (double)weights / (hw->bandwidth_bps * eff_bw) +
	       (double)kv / (hw->bandwidth_bps * eff_kv);
}

double kvp_perf_elementwise_s(const struct kvp_perf_ctx *c, double tokens)
{
	/* only beside a measured GEMM table: the constant prefill efficiency
	 * is a whole pass's share of the peak, its elementwise kernels inside */
	if (!c->hw.gemm.nm)
		return 0;
	double elem = kvp_dtype_info(c->spec->serving_dtype)->bits / 8.0;
	double bytes = kvp_perf_elementwise_bytes(c->model, c->spec->par.tp, elem, tokens,
						  !c->hw.rotary_fused);
	return bytes > 0 ? bytes / (c->hw.bandwidth_bps * c->hw.decode_bw_efficiency) : 0;
}

double kvp_perf_eager_launches(const struct kvp_perf_ctx *c)
{
	return (double)c->dense_attention_layers * c->hw.eager_attention_launches +
	       (double)c->mla_layers * c->hw.eager_attention_launches_mla;
}

double kvp_perf_uncaptured_host_s(const struct kvp_perf_ctx *c)
{
	return c->hw.uncaptured_launch_s > 0 && c->uncaptured_launches > 0 &&
			       c->hw.graph_max_tokens > 0
		       ? c->uncaptured_launches * c->hw.uncaptured_launch_s
		       : 0;
}

bool kvp_perf_uncaptured(const struct kvp_perf_ctx *c, double tokens)
{
	return kvp_perf_uncaptured_host_s(c) > 0 && tokens > (double)c->hw.graph_max_tokens;
}

double kvp_perf_eager_s(const struct kvp_perf_ctx *c, double gpu_s, bool prefill, double tokens,
			double *host)
{
	const struct kvp_perf_hw *hw = &c->hw;
	double h = kvp_perf_uncaptured(c, tokens)
			   ? kvp_perf_uncaptured_host_s(c)
		   : !prefill && hw->decode_full_graph
			   ? 0
			   : kvp_perf_eager_launches(c) * hw->eager_launch_s;
	if (host)
		*host = h;
	return h > gpu_s ? h - gpu_s : 0;
}

/* The eager launches' excess over the step's GPU time so far, added to it;
 * `tokens` the pass's on one rank. */
static void add_eager(const struct kvp_perf_ctx *c, struct kvp_perf_step *st, bool prefill,
		      double tokens)
{
	st->uncaptured = kvp_perf_uncaptured(c, tokens);
	st->eager_s = kvp_perf_eager_s(c, st->time_s, prefill, tokens, &st->eager_launch_s);
	st->time_s += st->eager_s;
}

double kvp_perf_fixed_s(const struct kvp_perf_hw *hw, double seqs, bool prefill)
{
	return hw->step_fixed_s + seqs * hw->seq_step_s + (prefill ? hw->prefill_fixed_s : 0) +
	       hw->moe_align_s;
}

double kvp_perf_request_s(const struct kvp_perf_hw *hw, double gpu_s)
{
	return gpu_s + hw->request_latency_s;
}

static void add_fixed(const struct kvp_perf_ctx *c, struct kvp_perf_step *st, double seqs,
		      bool prefill)
{
	st->fixed_s = kvp_perf_fixed_s(&c->hw, seqs, prefill);
	st->time_s += st->fixed_s;
}

/* The routed experts from the measured MoE table (moe_s >= 0), after the
 * step's other kernels: TensorRT-LLM runs the MoE layer between attention's
 * all-reduce and the next layer, not beside them. */
static void add_moe(struct kvp_perf_step *st, double moe_s)
{
	if (moe_s >= 0) {
		st->moe_s = moe_s;
		st->time_s += moe_s;
	}
}

/* Two ring all-reduces of `tokens` hidden states per layer of m, every layer
 * of every stage in turn (Megatron-LM's tensor parallelism: one after
 * attention, one after the MLP; Shoeybi et al. 2019, section 3).  m is the
 * model the step runs: the target, or a draft (an EAGLE head has one layer). */
static double allreduce_s(const struct kvp_perf_ctx *c, const struct kvp_model *m, double tokens)
{
	uint32_t tp = c->spec->par.tp;
	if (tp <= 1)
		return 0;
	double elem = kvp_dtype_info(c->spec->serving_dtype)->bits / 8.0;
	double msg = tokens * m->hidden_size * elem;
	double one = 2.0 * (tp - 1) / tp * msg / c->tp_link.effective_bps + c->hw.allreduce_latency_s;
	return 2.0 * m->num_layers * one;
}

/* The experts' exchange with data-parallel attention (shape.h): dispatch
 * and combine, each `bytes` out and in, per MoE layer of m, every stage in turn. */
static double moe_exchange_s(const struct kvp_perf_ctx *c, const struct kvp_model *m, double tokens)
{
	const struct kvp_spec *s = c->spec;
	double bytes = kvp_shape_moe_exchange_bytes(m, &s->par, s->serving_dtype, tokens);
	if (!(bytes > 0))
		return 0;
	double one = bytes / c->moe_link.effective_bps + c->hw.allreduce_latency_s;
	return 2.0 * kvp_shape_moe_layers(m) * one;
}

double kvp_perf_step_time(const struct kvp_perf_hw *hw, double compute_s, double memory_s,
			  double kv_s)
{
	if (!hw->attention_serial)
		return fmax(compute_s, memory_s);
	/* the GEMMs (FLOPs, or their weights' reads), then the KV's reads; the
	 * attention's own FLOPs stay in compute_s (slower, never faster) */
	double rest = memory_s > kv_s ? memory_s - kv_s : 0;
	return fmax(compute_s, rest) + fmin(kv_s, memory_s);
}

kvp_status kvp_perf_step_roofline(const struct kvp_perf_ctx *c, double flops, double eff_flops,
				  uint64_t weights, uint64_t kv, double eff_bw, double tokens,
				  struct kvp_perf_step *out, struct kvp_error *err)
{
	return kvp_perf_step_roofline_of(c, c->model, flops, eff_flops, weights, kv, eff_bw, tokens,
					 out, err);
}

kvp_status kvp_perf_step_roofline_of(const struct kvp_perf_ctx *c, const struct kvp_model *m,
				     double flops, double eff_flops, uint64_t weights, uint64_t kv,
				     double eff_bw, double tokens, struct kvp_perf_step *out,
				     struct kvp_error *err)
{
	uint32_t pp = c->spec->par.pp;
	uint64_t w, k, b;
	if (!kvp_mul(weights, pp, &w) || !kvp_mul(kv, pp, &k) || !kvp_add(w, k, &b))
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "bytes",
				     "a step's bytes do not fit in 64 bits");
	out->flops = flops;
	out->gpu_flops = flops / c->spec->par.tp;
	out->weights_bytes = w;
	out->kv_bytes = k;
	out->bytes = b;
	out->compute_s = out->gpu_flops / (c->hw.flops * eff_flops);
	out->memory_s = kvp_perf_memory_s(&c->hw, w, k, eff_bw);
	out->bound = out->compute_s > out->memory_s ? KVP_PERF_BOUND_COMPUTE
						    : KVP_PERF_BOUND_BANDWIDTH;
	out->moe_comm_s = moe_exchange_s(c, m, tokens);
	out->comm_s = allreduce_s(c, m, tokens) + out->moe_comm_s;
	out->time_s = kvp_perf_step_time(&c->hw, out->compute_s, out->memory_s,
					 kvp_perf_memory_s(&c->hw, 0, k, eff_bw)) + out->comm_s;
	return KVP_STATUS_OK;
}

/* With data-parallel attention the routed experts are spread over the tp x
 * dp GPUs of the expert group (owned whole with ep, sliced without): a GPU
 * computes its rank's dense and attention FLOPs / tp and 1 / (tp x dp) of
 * the routed FLOPs of every rank's tokens.  `flops` are the rank's
 * whole-model FLOPs over `rank_tokens` tokens, `total_tokens` the
 * deployment's: the whole-model figure the roofline divides by tp.  Equal to
 * `flops` when every rank holds as many (total = rank x dp). */
static double dp_flops(const struct kvp_perf_ctx *c, double flops, double rank_tokens,
		       double total_tokens)
{
	uint32_t dp = kvp_shape_dp(&c->spec->par);
	double r = kvp_perf_routed_token_flops(c->model);
	if (dp <= 1 || !(r > 0))
		return flops;
	return flops - r * rank_tokens + r * total_tokens / dp;
}

static kvp_status check_total(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t total,
			      struct kvp_error *err)
{
	uint64_t dp = kvp_shape_dp(&c->spec->par), most;
	if (!kvp_mul(batch, dp, &most))
		most = UINT64_MAX;
	if (total < batch || total > most)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "batch",
				     "%llu sequences in all cannot fill a rank with %llu over %llu "
				     "DP ranks", (unsigned long long)total, (unsigned long long)batch,
				     (unsigned long long)dp);
	return KVP_STATUS_OK;
}

kvp_status kvp_perf_prefill(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t n,
			    struct kvp_perf_step *out, struct kvp_error *err)
{
	uint64_t total;
	if (!kvp_mul(batch, kvp_shape_dp(&c->spec->par), &total))
		total = UINT64_MAX;
	return kvp_perf_prefill_dp(c, batch, total, n, out, err);
}

kvp_status kvp_perf_prefill_dp(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t total,
			       uint64_t n, struct kvp_perf_step *out, struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	if (batch == 0 || n == 0)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, batch ? "prompt" : "batch",
				     "must be at least 1");
	uint64_t one, kv;
	kvp_status st = kvp_spec_seq_bytes(c->spec, n, 1, &one);
	if (st)
		return kvp_error_set(err, st, NULL, 0, 0, "prompt", "KV bytes overflow");
	if (!kvp_mul(one, batch, &kv))
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "batch",
				     "KV bytes overflow");
	kvp_status st2 = check_total(c, batch, total, err);
	if (st2)
		return st2;
	double flops = (double)batch * kvp_perf_prefill_flops(c->model, n);
	double dn = (double)n, eff = dp_flops(c, flops, (double)batch * dn, (double)total * dn);
	/* all experts are touched by a prefill of many tokens */
	double attn = (double)batch * kvp_perf_attention_flops(c->model, n);
	double moe_s = kvp_perf_moe_table_s(c, (double)total * dn), eff_flops;
	uint64_t weights = c->weights_bytes;
	if (moe_s >= 0) {
		/* the routed experts from the measured table, after the rest:
		 * their FLOPs and weights out of the roofline */
		eff = flops - kvp_perf_routed_token_flops(c->model) * (double)batch * dn;
		weights -= c->expert_bytes;
		eff_flops = kvp_perf_flops_efficiency_routed(c, eff, attn, (double)batch * dn, 0);
	} else {
		eff_flops = kvp_perf_flops_efficiency(c, eff, attn, (double)batch * dn,
						      (double)total * dn);
	}
	st2 = kvp_perf_step_roofline(c, eff, eff_flops, weights, kv,
				     c->hw.decode_bw_efficiency, (double)batch * dn, out, err);
	out->flops = flops;   /* the rank's; gpu_flops holds the spread */
	if (moe_s >= 0) {
		out->moe_s = moe_s;
		out->time_s += moe_s;
	}
	out->elementwise_s = kvp_perf_elementwise_s(c, (double)batch * dn);
	out->time_s += out->elementwise_s;
	add_eager(c, out, true, (double)batch * dn);
	add_fixed(c, out, (double)batch, true);
	return st2;
}

/* A decode step's share of the peak: prefill_flops_efficiency, or with
 * decode_gemm_table its linear layers at the GEMM table's rate for M =
 * `batch` rows, as a prefill's; attention (all but 2 x active params a
 * token) and routed experts at the constant.  `flops` as the roofline's. */
static double decode_flops_efficiency(const struct kvp_perf_ctx *c, double flops,
				      double all_flops, double batch, double total, bool moe_table)
{
	if (!c->hw.decode_gemm_table)
		return c->hw.prefill_flops_efficiency;
	double attn = fmax(0, all_flops - batch * 2.0 * (double)c->model->active_params);
	return moe_table ? kvp_perf_flops_efficiency_routed(c, flops, attn, batch, 0)
			 : kvp_perf_flops_efficiency(c, flops, attn, batch, total);
}

/* Weights a decode step reads: dense weights, and of the experts the expected
 * share that T tokens, each routed to k of E experts, touch in a layer:
 * 1 - (1 - k/E)^T.  T counts every DP rank's tokens, which all reach the
 * experts (shape.h): the deployment's batch, not the fullest rank's x dp
 * (one sequence over 8 ranks is one token: k/E, not 1 - (1 - k/E)^8). */
static uint64_t decode_weights(const struct kvp_perf_ctx *c, uint64_t total)
{
	const struct kvp_model *m = c->model;
	if (!c->expert_bytes || !m->moe_num_experts)
		return c->weights_bytes;
	double k = m->moe_experts_per_token ? m->moe_experts_per_token : 1;
	double tokens = (double)total;
	double frac = 1 - pow(1 - fmin(1.0, k / m->moe_num_experts), tokens);
	uint64_t dense = c->weights_bytes - c->expert_bytes;
	return dense + (uint64_t)llround(frac * (double)c->expert_bytes);
}

kvp_status kvp_perf_decode_step_lens(const struct kvp_perf_ctx *c, const uint64_t *lens, size_t n,
				     struct kvp_perf_step *out, struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	if (n == 0)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "batch", "must be at least 1");
	uint64_t kv = 0, one;
	double flops = 0;
	for (size_t i = 0; i < n; i++) {
		kvp_status st = kvp_spec_seq_bytes(c->spec, lens[i], 1, &one);
		if (st || !kvp_add(kv, one, &kv))
			return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "context",
					     "KV bytes overflow");
		flops += kvp_perf_decode_flops(c->model, lens[i]);
	}
	uint64_t total;
	if (!kvp_mul((uint64_t)n, kvp_shape_dp(&c->spec->par), &total))
		total = UINT64_MAX;
	double moe_s = kvp_perf_moe_table_s(c, (double)total);
	uint64_t weights = decode_weights(c, total);
	double all = flops;
	if (moe_s >= 0) {
		flops -= kvp_perf_routed_token_flops(c->model) * (double)n;
		weights = c->weights_bytes - c->expert_bytes;
	}
	double eff_flops = decode_flops_efficiency(c, flops, all, (double)n, (double)total,
						   moe_s >= 0);
	kv = kvp_perf_decode_kv_loads(c->model, c->spec->par.tp, c->hw.kv_per_query_head, kv);
	kvp_status st = kvp_perf_step_roofline(c, flops, eff_flops,
					       weights, kv,
					       c->hw.decode_bw_efficiency, (double)n, out, err);
	add_moe(out, moe_s);
	/* after the experts: the GPU's whole step hides the launches */
	add_eager(c, out, false, (double)n);
	add_fixed(c, out, (double)n, false);
	return st;
}

kvp_status kvp_perf_decode_step(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t context,
				struct kvp_perf_step *out, struct kvp_error *err)
{
	uint64_t total;
	if (!kvp_mul(batch, kvp_shape_dp(&c->spec->par), &total))
		total = UINT64_MAX;
	return kvp_perf_decode_step_dp(c, batch, total, context, out, err);
}

kvp_status kvp_perf_decode_step_dp(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t total,
				   uint64_t context, struct kvp_perf_step *out,
				   struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	if (batch == 0)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "batch", "must be at least 1");
	kvp_status st = check_total(c, batch, total, err);
	if (st)
		return st;
	uint64_t one, kv;
	st = kvp_spec_seq_bytes(c->spec, context, 1, &one);
	if (st || !kvp_mul(one, batch, &kv))
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "context",
				     "KV bytes overflow");
	double flops = (double)batch * kvp_perf_decode_flops(c->model, context);
	double eff = dp_flops(c, flops, (double)batch, (double)total);
	double moe_s = kvp_perf_moe_table_s(c, (double)total);
	uint64_t weights = decode_weights(c, total);
	if (moe_s >= 0) {
		eff = flops - kvp_perf_routed_token_flops(c->model) * (double)batch;
		weights = c->weights_bytes - c->expert_bytes;
	}
	double eff_flops = decode_flops_efficiency(c, eff, flops, (double)batch, (double)total,
						   moe_s >= 0);
	kv = kvp_perf_decode_kv_loads(c->model, c->spec->par.tp, c->hw.kv_per_query_head, kv);
	st = kvp_perf_step_roofline(c, eff, eff_flops, weights, kv,
				    c->hw.decode_bw_efficiency, (double)batch, out, err);
	out->flops = flops;   /* the rank's; gpu_flops holds the spread */
	add_moe(out, moe_s);
	/* after the experts: the GPU's whole step hides the launches */
	add_eager(c, out, false, (double)batch);
	add_fixed(c, out, (double)batch, false);
	return st;
}

kvp_status kvp_perf_chunked_ttft(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t n,
				 uint64_t context, uint64_t max_batched_tokens,
				 struct kvp_perf_chunked *out, struct kvp_error *err)
{
	uint64_t total;
	if (!kvp_mul(batch, kvp_shape_dp(&c->spec->par), &total))
		total = UINT64_MAX;
	return kvp_perf_chunked_ttft_dp(c, batch, total, n, context, max_batched_tokens, out, err);
}

kvp_status kvp_perf_chunked_ttft_dp(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t total,
				    uint64_t n, uint64_t context, uint64_t max_batched_tokens,
				    struct kvp_perf_chunked *out, struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	if (batch == 0 || n == 0 || max_batched_tokens == 0)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0,
				     !batch ? "batch" : !n ? "prompt" : "max-batched-tokens",
				     "must be at least 1");
	uint64_t others = batch - 1;
	if (others >= max_batched_tokens) {
		out->ttft_s = out->step_s = INFINITY;
		return KVP_STATUS_OK;
	}
	out->chunk_tokens = max_batched_tokens - others;
	out->steps = kvp_cdiv(n, out->chunk_tokens);
	double k = (double)out->steps;
	struct kvp_perf_step pre, dec = {0}, comm;
	kvp_status st;
	/* the prompt is the only one prefilling: its routed FLOPs spread over
	 * the expert group; the deployment's other total - 1 sequences decode
	 * (as many as dp ranks of `others` hold at most) */
	uint64_t dp = kvp_shape_dp(&c->spec->par), most, dec_total = total > batch ? total - 1 : others;
	if (!kvp_mul(others, dp, &most))
		most = UINT64_MAX;
	dec_total = dec_total < others ? others : dec_total > most ? most : dec_total;
	if ((st = kvp_perf_prefill_dp(c, 1, 1, n, &pre, err)) ||
	    (others && (st = kvp_perf_decode_step_dp(c, others, dec_total, context, &dec, err))) ||
	    (st = kvp_perf_prefill(c, 1, kvp_cdiv(n, out->steps) + others, &comm, err)))
		return st;
	/* pre.weights_bytes: all of them (a chunk of many tokens touches every
	 * expert); pre.kv_bytes the prompt's KV, written over the k steps.
	 * With a measured GEMM table a chunk's linear layers run at the
	 * throughput of its own ceil(n / k) rows, not the whole prompt's */
	double pre_s = pre.compute_s;
	if (c->hw.gemm.nm && out->steps > 1) {
		double rows = (double)kvp_cdiv(n, out->steps);
		double attn = kvp_perf_attention_flops(c->model, n);
		double eff = c->moe_curve.n
			? kvp_perf_flops_efficiency_routed(c, pre.gpu_flops * c->spec->par.tp, attn,
							   rows, 0)
			: kvp_perf_flops_efficiency(c, pre.flops, attn, rows, rows);
		pre_s = pre.gpu_flops / (c->hw.flops * eff);
	}
	out->compute_s = pre_s / k + dec.compute_s;
	/* the decodes' KV and a k-th of the prompt's, at the KV's share of the bandwidth */
	double kv_s = ((double)dec.kv_bytes + (double)pre.kv_bytes / k) /
		      (c->hw.bandwidth_bps * (c->hw.kv_bw_efficiency > 0 ? c->hw.kv_bw_efficiency
									 : c->hw.decode_bw_efficiency));
	out->memory_s =
		kvp_perf_memory_s(&c->hw, pre.weights_bytes, 0, c->hw.decode_bw_efficiency) + kv_s;
	out->comm_s = comm.comm_s;
	/* every step is a pass with a prefill chunk and B - 1 decodes */
	out->fixed_s = kvp_perf_fixed_s(&c->hw, (double)batch, true);
	/* the chunk's rows and the decodes' beside it, as the comm step's */
	double pass_tokens = (double)(kvp_cdiv(n, out->steps) + others);
	out->elementwise_s = kvp_perf_elementwise_s(c, pass_tokens);
	/* the measured MoE table: the chunk's rows and every rank's decodes in
	 * one MoE pass (pre and dec left their experts out of the roofline) */
	double moe_s = kvp_perf_moe_table_s(c, (double)(kvp_cdiv(n, out->steps) + dec_total));
	out->moe_s = moe_s >= 0 ? moe_s : 0;
	double gpu = kvp_perf_step_time(&c->hw, out->compute_s, out->memory_s, kv_s) +
		     out->comm_s + out->elementwise_s + out->moe_s;
	out->uncaptured = kvp_perf_uncaptured(c, pass_tokens);
	out->eager_s = kvp_perf_eager_s(c, gpu, true, pass_tokens, NULL);
	out->step_s = gpu + out->eager_s + out->fixed_s;
	out->ttft_s = k * out->step_s;
	return KVP_STATUS_OK;
}

kvp_status kvp_perf_chunked_offload(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t n,
				    uint64_t context, double fraction, uint64_t pool_bytes,
				    const struct kvp_link *link, struct kvp_perf_chunked *ch,
				    struct kvp_error *err)
{
	if (!ch->steps || !isfinite(ch->ttft_s))
		return KVP_STATUS_OK; /* no prompt token fits a step: nothing to time */
	const uint32_t pp = c->spec->par.pp ? c->spec->par.pp : 1;
	uint64_t one, others;
	if (kvp_spec_seq_bytes(c->spec, context, 1, &one) || !kvp_mul(one, batch - 1, &others))
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "context",
				     "KV bytes overflow");
	const uint64_t k = ch->steps, runs = k < 4096 ? k : 4096, per = kvp_cdiv(k, runs);
	struct kvp_perf_step gpu = {.time_s = ch->step_s};
	double ttft = 0, xs = 0;
	uint64_t total = 0;
	for (uint64_t j0 = 0; j0 < k; j0 += per) {
		/* steps j0 + 1 .. j_end, each timed as j_end, the run's largest */
		uint64_t j_end = j0 + per < k ? j0 + per : k, count = j_end - j0;
		uint64_t held = ch->chunk_tokens > n / j_end ? n : j_end * ch->chunk_tokens;
		uint64_t prompt, stage, x, all, run_bytes;
		if (kvp_spec_seq_bytes(c->spec, held, 1, &prompt) || !kvp_add(others, prompt, &stage))
			return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "prompt",
					     "KV bytes overflow");
		if (fraction >= 0)
			x = (uint64_t)ceil(fmin(fraction, 1.0) * (double)stage);
		else
			x = stage > pool_bytes ? stage - pool_bytes : 0;
		/* every stage moves its own share, in turn (as perf.c's TPOT) */
		if (!kvp_mul(x, pp, &all) || !kvp_mul(all, count, &run_bytes) ||
		    !kvp_add(total, run_bytes, &total))
			return kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "prompt",
					     "the offloaded KV bytes overflow");
		struct kvp_perf_offload off;
		kvp_perf_offload_step(c, &gpu, all, link, &off);
		ttft += (double)count * off.pipelined_s;
		xs += (double)count * off.transfer_s;
	}
	ch->transfer_bytes = total;
	ch->offload = true;
	ch->gpu_ttft_s = ch->ttft_s;
	ch->transfer_s = xs;
	ch->ttft_s = ttft;
	return KVP_STATUS_OK;
}

/* ---------------------------------------------------------------- offload */

void kvp_perf_offload_step(const struct kvp_perf_ctx *c, const struct kvp_perf_step *gpu,
			   uint64_t transfer_bytes, const struct kvp_link *link,
			   struct kvp_perf_offload *out)
{
	memset(out, 0, sizeof *out);
	out->transfer_bytes = transfer_bytes;
	out->transfer_s = (double)transfer_bytes / link->effective_bps;
	out->gpu_s = gpu->time_s;
	out->serial_s = out->transfer_s + out->gpu_s;
	/* L layers in turn: layer i+1's KV crosses the link while layer i computes.
	 * The first layer's transfer and the last layer's compute cannot be
	 * hidden; in between each layer takes the longer of the two:
	 * x + (L - 1) max(x, g) + g, never more than the serial x L + g L. */
	double layers = (double)c->spec->num_layers * c->spec->par.pp;
	if (layers < 1)
		layers = 1;
	double x = out->transfer_s / layers, g = out->gpu_s / layers;
	out->transfer_bound = x > g;
	out->pipelined_s = transfer_bytes ? x + (layers - 1) * fmax(x, g) + g : out->gpu_s;
}
