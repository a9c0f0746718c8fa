/* step-hw.c: the hardware and engine constants a step runs with, read from
 * the GPU profile (peaks, bandwidth, links) and the engine's time data
 * (efficiencies, fixed costs, kernel tables), and the link a collective of a
 * group takes.  Split out of step.c (its roofline uses them); declared in
 * step.h. */
#include "time/step.h"
#include "time/step-gemm.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/shape.h"
#include "base/units.h"

kvp_status kvp_perf_hw_from_gpu(const struct kvp_gpu *g, const struct kvp_model *m,
				struct kvp_perf_hw *out, struct kvp_error *err)
{
	const char *where = g->path[0] ? g->path : g->name;
	memset(out, 0, sizeof *out);
	if (!(g->bandwidth_bps > 0) || !(g->bf16_flops > 0))
		return kvp_error_set(err, KVP_STATUS_INVALID, where, 0, 0,
				     g->bandwidth_bps > 0 ? "bf16_tflops" : "bandwidth",
				     "needed for latency: give it in the GPU profile");
	if (!kvp_link_preset(g->host_link[0] ? g->host_link : "pcie4x16", &out->host_link))
		return kvp_error_set(err, KVP_STATUS_INVALID, where, 0, 0, "host_link",
				     "unknown link '%s'", g->host_link);
	out->bandwidth_bps = g->bandwidth_bps;
	/* The GEMM peak follows the weights' format: fp8 and int8 (w8a8)
	 * checkpoints multiply in that format, nvfp4/mxfp4 on fp4 tensor cores.
	 * Weight-only int4 (GPTQ, AWQ, bitsandbytes) dequantizes to bf16/fp16
	 * activations, so its GEMMs run at the 16-bit peak; fp16 too runs at the
	 * bf16 rate (engines accumulate in fp32, the GeForce rate that
	 * bf16_tflops holds).  A GPU without the format's peak gets the bf16 peak
	 * and a warning that says so, never a silent fallback. */
	out->flops = out->flops_16bit = g->bf16_flops;
	out->flops_fp8 = g->fp8_flops;
	snprintf(out->flops_dtype, sizeof out->flops_dtype, "bf16");
	const char *want = NULL;
	double peak = 0;
	switch (m ? m->weights_dtype : KVP_DTYPE_AUTO) {
	case KVP_DTYPE_FP8:
	case KVP_DTYPE_FP8_E5M2:
	case KVP_DTYPE_FP8_PTH:
		want = "fp8", peak = g->fp8_flops;
		break;
	case KVP_DTYPE_INT8:
		want = "int8", peak = g->int8_ops;
		break;
	case KVP_DTYPE_NVFP4:
	case KVP_DTYPE_MXFP4:
		want = "fp4", peak = g->fp4_flops;
		break;
	default:
		break;
	}
	if (want && peak > 0) {
		out->flops = peak;
		snprintf(out->flops_dtype, sizeof out->flops_dtype, "%s", want);
	} else if (want) {
		snprintf(out->flops_warning, sizeof out->flops_warning,
			 "%.64s: no %s peak in the profile; the bf16 peak is used for the %s "
			 "weights' GEMMs", g->name[0] ? g->name : where, want,
			 kvp_dtype_name(m->weights_dtype));
	}
	out->decode_bw_efficiency = g->decode_bw_efficiency > 0 ? g->decode_bw_efficiency
								: KVP_PERF_DECODE_BW_EFFICIENCY;
	out->prefill_flops_efficiency = g->prefill_flops_efficiency > 0
		? g->prefill_flops_efficiency : KVP_PERF_PREFILL_FLOPS_EFFICIENCY;
	kvp_status st = kvp_perf_gemm_table_find(g, m, &out->gemm, err);
	if (st || (st = kvp_perf_moe_table_find(g, m, &out->moe, err)))
		return st;
	/* profiles give NVLink both directions together (H100: 900 GB/s = 18 links
	 * x 50 GB/s); a ring all-reduce sends one way on each link */
	out->nvlink_bps = g->nvlink_bps > 0 ? g->nvlink_bps / 2 : 0;
	out->nvlink_domain = out->nvlink_bps > 0 ? g->nvlink_domain : 0;
	out->nvlink_mesh = g->nvlink_mesh;
	out->node_gpus = g->node_gpus;
	out->scale_out_bps = g->scale_out_bps;
	memcpy(out->pcie_busbw, g->pcie_busbw, sizeof out->pcie_busbw);
	out->allreduce_latency_s = KVP_PERF_ALLREDUCE_LATENCY_S;
	return KVP_STATUS_OK;
}

void kvp_perf_hw_engine(struct kvp_perf_hw *hw, const struct kvp_engine_model *e)
{
	bool data = e && e->time_given;
	double fixed = data ? e->step_fixed_s : KVP_PERF_DEFAULT_STEP_FIXED_S;
	double prefill = data ? e->prefill_fixed_s : KVP_PERF_DEFAULT_PREFILL_FIXED_S;
	double seq = data ? e->seq_step_s : KVP_PERF_DEFAULT_SEQ_STEP_S;
	double ar = data && e->allreduce_latency_s > 0 ? e->allreduce_latency_s
						      : KVP_PERF_DEFAULT_ALLREDUCE_LATENCY_S;
	if (!(hw->given & KVP_PERF_GIVEN_STEP_FIXED))
		hw->step_fixed_s = fixed;
	if (!(hw->given & KVP_PERF_GIVEN_PREFILL_FIXED))
		hw->prefill_fixed_s = prefill;
	if (!(hw->given & KVP_PERF_GIVEN_SEQ_STEP))
		hw->seq_step_s = seq;
	if (!(hw->given & KVP_PERF_GIVEN_ALLREDUCE))
		hw->allreduce_latency_s = ar;
	/* no default: 0 unless the engine's data or a calibration gives one */
	if (!(hw->given & KVP_PERF_GIVEN_REQUEST_LATENCY))
		hw->request_latency_s = data ? e->request_latency_s : 0;
	if (!(hw->given & KVP_PERF_GIVEN_KV_BW))
		hw->kv_bw_efficiency = data ? e->kv_bw_efficiency : 0;
	/* the engine's kernels, not fitted time data: from its own entry */
	hw->rotary_fused = e && e->rotary_fused;
	/* its eager attention: the launch cost is time data (borrowed with
	 * the rest), the launch counts and graph mode its own entry's */
	hw->eager_launch_s = data ? e->eager_launch_s : 0;
	hw->eager_attention_launches = e ? e->eager_attention_launches : 0;
	hw->eager_attention_launches_mla = e ? e->eager_attention_launches_mla : 0;
	hw->decode_full_graph = e && e->decode_full_graph;
	/* a pass too large for its graphs: the size is the entry's own, the
	 * host's time a layer time data */
	hw->graph_max_tokens = e ? e->graph_max_tokens : 0;
	hw->uncaptured_launch_s = data ? e->uncaptured_launch_s : 0;
	hw->uncaptured_attention_launches = e ? e->uncaptured_attention_launches : 0;
	hw->uncaptured_attention_launches_mla = e ? e->uncaptured_attention_launches_mla : 0;
	hw->uncaptured_mlp_launches = e ? e->uncaptured_mlp_launches : 0;
	hw->uncaptured_moe_launches = e ? e->uncaptured_moe_launches : 0;
	hw->uncaptured_shared_expert_launches = e ? e->uncaptured_shared_expert_launches : 0;
	hw->moe_align_layer_s = e ? e->moe_align_layer_s : 0, hw->moe_align_s = 0;
	hw->moe_align_min_experts = e ? e->moe_align_min_experts : 0;
	/* the engine's own kernels' share of the GPU's efficiencies (llama.cpp),
	 * unless a calibration measured them */
	bool scale = data && !hw->efficiency_given;
	hw->decode_bw_scale = scale && e->decode_bw_scale > 0 ? e->decode_bw_scale : 1;
	hw->decode_bw_efficiency *= hw->decode_bw_scale;
	/* as a calibration's scale: the GEMM table's rates too */
	hw->prefill_scale_from_engine = scale && e->prefill_flops_scale > 0 &&
					!(hw->prefill_flops_scale > 0);
	if (hw->prefill_scale_from_engine)
		kvp_perf_hw_prefill_scale(hw, e->prefill_flops_scale);
	hw->moe_kernel_tables = e && e->moe_kernel_tables;
	/* the engine's kernels, as moe_kernel_tables: from its own entry */
	hw->attention_serial = e && e->attention_serial;
	hw->kv_per_query_head = e && e->decode_kv_per_query_head;
	hw->decode_gemm_table = e && e->decode_gemm_table;
	if (!(hw->given & KVP_PERF_GIVEN_BAND)) {
		hw->time_ratio_low = data && e->time_ratio_low > 0 ? e->time_ratio_low
								   : KVP_PERF_DEFAULT_TIME_RATIO_LOW;
		hw->time_ratio_high = data && e->time_ratio_high > 0 ? e->time_ratio_high
								     : KVP_PERF_DEFAULT_TIME_RATIO_HIGH;
	}
	if (hw->given & ~KVP_PERF_GIVEN_BAND)
		snprintf(hw->time_source, sizeof hw->time_source, "calibration");
	else if (data && e->time_from[0])
		snprintf(hw->time_source, sizeof hw->time_source, "%s %s, with %s's time data",
			 e->kind, e->version, e->time_from);
	else if (data)
		snprintf(hw->time_source, sizeof hw->time_source, "%s %s", e->kind, e->version);
	else
		snprintf(hw->time_source, sizeof hw->time_source, "defaults");
}

void kvp_perf_hw_prefill_efficiency(struct kvp_perf_hw *hw, double eff)
{
	hw->efficiency_given = true;
	hw->prefill_flops_efficiency = eff;
	hw->prefill_flops_scale = 0;
	hw->gemm.nm = 0;
	hw->gemm.path[0] = 0;
	/* the constant now times every FLOP, the routed experts' too */
	memset(&hw->moe, 0, sizeof hw->moe);
}

void kvp_perf_hw_prefill_scale(struct kvp_perf_hw *hw, double s)
{
	double was = hw->prefill_flops_scale > 0 ? hw->prefill_flops_scale : 1;
	hw->prefill_flops_efficiency = fmin(1.0, hw->prefill_flops_efficiency / was * s);
	hw->prefill_flops_scale = s;
}

void kvp_perf_hw_host_link(struct kvp_perf_hw *hw, const struct kvp_link *link)
{
	hw->host_link = *link;
}

/* A ring or an all-to-all among the group runs at the pace of its slowest
 * hop: a group larger than the NVLink domain has hops that leave it (an RTX
 * 3090 bridge joins two cards, so eight cards talk over PCIe), and a group
 * larger than a server has hops over the network. */
void kvp_perf_collective_link(const struct kvp_perf_hw *hw, uint32_t group, struct kvp_link *out)
{
	memset(out, 0, sizeof *out);
	if (hw->nvlink_bps > 0 && hw->nvlink_domain > 1 && group <= hw->nvlink_domain) {
		snprintf(out->name, sizeof out->name, "%s", hw->nvlink_mesh ? "mesh" : "nvlink");
		out->theoretical_bps = out->effective_bps = hw->nvlink_bps;
		/* a full mesh: a group of g uses its g - 1 direct links to the
		 * others (a ring or a one-shot all-reduce spreads over them), each
		 * 1 / (domain - 1) of the GPU's rate; a group of one: one link */
		if (hw->nvlink_mesh) {
			double links = group > 1 ? group - 1 : 1;
			out->theoretical_bps = out->effective_bps =
				hw->nvlink_bps * links / (hw->nvlink_domain - 1);
		}
	} else if (hw->node_gpus == 0 || group <= hw->node_gpus || !(hw->scale_out_bps > 0)) {
		*out = hw->host_link;
	} else {
		snprintf(out->name, sizeof out->name, "scale-out");
		out->theoretical_bps = out->effective_bps = hw->scale_out_bps;
	}
}
