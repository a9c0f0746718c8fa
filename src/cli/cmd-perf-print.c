/* cmd-perf-print.c: how `kvplan perf` prints a run (cmd-perf-print.h): the
 * table, each term of the roofline arithmetic shown, and the JSON and CSV
 * rows of the output contract.  cmd-perf.c parses and runs; this prints. */
#include "cli/cmd-perf-print.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "out/output.h"
#include "model/shape.h"
#include "time/step-collective.h"
#include "base/units.h"

void kvp_perf_fmt_s(double s, char *buf, size_t size)
{
	if (!isfinite(s))
		snprintf(buf, size, "-");
	else if (s >= 1)
		kvp_format_fixed(s, 3, " s", buf, size); /* 1e61 s: never cut */
	else if (s >= 1e-3)
		snprintf(buf, size, "%.2f ms", s * 1e3);
	else
		snprintf(buf, size, "%.1f us", s * 1e6);
}

/* Data-parallel attention and the experts' exchange (shape.h), when used. */
/* The engine's eager attention (step.h kvp_perf_eager_s), where it has
 * any: the launches a pass makes from the host and what they cost. */
static void print_eager(const struct kvp_perf_result *run, const struct kvp_perf_hw *hw)
{
	const struct kvp_perf_ctx *c = &run->ctx;
	double launches = kvp_perf_eager_launches(c);
	char shared[48] = "";
	if (c->model->shared_expert_params && hw->uncaptured_shared_expert_launches)
		snprintf(shared, sizeof shared, " + %u shared experts",
			 hw->uncaptured_shared_expert_launches);
	double uncaptured_s = kvp_perf_uncaptured_host_s(c);
	if (uncaptured_s > 0)
		printf("  a pass of more than %u tokens replays no CUDA graph: %u layers, %.0f "
		       "launches (attention %u dense / %u MLA, FFN %u MLP / %u MoE%s a layer%s) x "
		       "%.1f us = %.2f ms of host time a pass, in place of the eager attention's; "
		       "the GPU waits for what its own work does not hide\n",
		       hw->graph_max_tokens, c->model->num_layers, c->uncaptured_launches,
		       hw->uncaptured_attention_launches, hw->uncaptured_attention_launches_mla,
		       hw->uncaptured_mlp_launches, hw->uncaptured_moe_launches, shared,
		       c->spec->par.tp > 1 ? ", + 2 all-reduces" : "", hw->uncaptured_launch_s * 1e6,
		       uncaptured_s * 1e3);
	if (!(launches > 0 && hw->eager_launch_s > 0))
		return;
	printf("  eager attention (outside the CUDA graphs, %s): %u dense x %u + %u MLA x %u "
	       "= %.0f launches x %.1f us = %.2f ms of host time a pass%s; the GPU waits for "
	       "what its own work does not hide\n",
	       hw->decode_full_graph ? "passes with a prefill" : "every pass",
	       c->dense_attention_layers, hw->eager_attention_launches, c->mla_layers,
	       hw->eager_attention_launches_mla, launches, hw->eager_launch_s * 1e6,
	       launches * hw->eager_launch_s * 1e3,
	       hw->decode_full_graph ? " (decodes alone replay a full graph)" : "");
}

/* " + NAME T" (a step term: elementwise, experts, eager attention) after what buf holds,
 * when the term is not 0. */
static void append_term(char *buf, size_t size, const char *name, double s)
{
	if (!(s > 0))
		return;
	char e[64];
	kvp_perf_fmt_s(s, e, sizeof e);
	size_t n = strlen(buf);
	snprintf(buf + n, size - n, " + %s %.24s", name, e);
}

static void print_shape(const struct kvp_perf_result *run, const struct kvp_perf_hw *hw)
{
	const struct kvp_spec *s = &run->budget.spec;
	const struct kvp_model *m = s->model;
	uint32_t dp = kvp_shape_dp(&s->par), ep = kvp_shape_ep(&s->par);
	if (dp <= 1)
		return;
	const struct kvp_perf_row *r = &run->rows[0];
	char t1[64];
	printf("  %u DP ranks x tp %u x pp %u = %u GPUs; each rank its own requests and their KV;\n"
	       "  a batch B is spread over the ranks, the fullest holding ceil(B/%u) (batch %llu: %llu,"
	       " balance %.2f)\n", dp, s->par.tp, s->par.pp, run->gpus, dp,
	       (unsigned long long)r->batch, (unsigned long long)r->rank_batch, r->dp_balance);
	if (!m->moe_num_experts)
		return;
	const struct kvp_link *l = &run->ctx.moe_link;
	kvp_format_rate(l->effective_bps, t1, sizeof t1);
	if (ep > 1)
		printf("  experts' all-to-all over %s (%u GPUs), %s per direction: dispatch and combine"
		       " each\n  k %u x H %u x %u B x (ep %u - 1)/%u per token, %u MoE layers\n",
		       l->name, s->par.tp * dp, t1, m->moe_experts_per_token, m->hidden_size,
		       kvp_dtype_info(s->serving_dtype)->bits / 8, ep, ep, kvp_shape_moe_layers(m));
	else
		printf("  experts' all-gather and reduce-scatter over %s (%u GPUs), %s per direction:"
		       "\n  (dp %u - 1) x H %u x %u B per token each way, %u MoE layers\n", l->name,
		       s->par.tp * dp, t1, dp, m->hidden_size,
		       kvp_dtype_info(s->serving_dtype)->bits / 8, kvp_shape_moe_layers(m));
	if (strcmp(l->name, "nvlink") != 0 && strcmp(l->name, "mesh") != 0 && hw->nvlink_domain > 1)
		printf("  (%u GPUs are more than the NVLink domain of %u)\n", s->par.tp * dp,
		       hw->nvlink_domain);
}

static void fmt_flops(double f, char *buf, size_t size)
{
	if (f >= 1e15)
		kvp_format_fixed(f / 1e15, 3, " PFLOP", buf, size);
	else if (f >= 1e12)
		snprintf(buf, size, "%.3f TFLOP", f / 1e12);
	else
		snprintf(buf, size, "%.3f GFLOP", f / 1e9);
}

void kvp_perf_print_table(const struct kvp_perf_result *run, const struct kvp_gpu *g,
			  const struct kvp_calibration *cal, const struct kvp_cli_calibration *cf,
			  const char *spec_draft, const struct kvp_speculative *sp)
{
	const struct kvp_model *m = run->model;
	const struct kvp_perf_hw *hw = &run->hw;
	const struct kvp_offload *off = &run->opts.offload;
	uint64_t prompt = run->opts.prompt, output = run->opts.output, prefix = run->opts.prefix;
	size_t nbatch = run->opts.nbatch;
	const struct kvp_budget *b = &run->budget;
	const struct kvp_perf_row *rows = run->rows;
	const struct kvp_link *plink = &run->prefix_link;
	uint64_t total = prompt + output, n_dec = run->decode_context, max_batch = run->max_batch;
	uint64_t kv1 = run->kv_1x_bytes, kv2 = run->kv_2x_bytes, breakeven = run->prefix_breakeven;
	uint64_t limit = run->prefix_limit;
	double att1 = run->attention_1x_flops, att2 = run->attention_2x_flops;
	double reload_s = run->prefix_reload_s, recompute_s = run->prefix_recompute_s;
	uint32_t gpus = run->gpus;
	bool all_fit = run->all_fit;
	const struct kvp_spec *s = &b->spec;
	char t1[64], t2[64], t3[64], t4[64];
	char mn[KVP_TERM_SIZE(sizeof m->name)], gn[KVP_TERM_SIZE(sizeof g->name)];
	printf("kvplan perf: %s on %s, engine %s%s%s, tp %u, pp %u, dp %u, ep %u, dtype %s, KV %s\n\n",
	       kvp_term_text(mn, sizeof mn, m->name), kvp_term_text(gn, sizeof gn, g->name),
	       kvp_engine_name(b->engine), b->engine_model.version[0] ? " " : "",
	       b->engine_model.version,
	       s->par.tp, s->par.pp, kvp_shape_dp(&s->par), kvp_shape_ep(&s->par),
	       kvp_dtype_name(s->serving_dtype), kvp_dtype_name(s->kv_dtype));
	kvp_format_rate(hw->bandwidth_bps, t1, sizeof t1);
	kvp_format_rate(hw->bandwidth_bps * hw->decode_bw_efficiency, t2, sizeof t2);
	printf("Hardware (one GPU)\n");
	printf("  memory bandwidth %s x efficiency %.2f = %s", t1, hw->decode_bw_efficiency, t2);
	if (hw->kv_bw_efficiency > 0 && hw->kv_bw_efficiency != hw->decode_bw_efficiency) {
		kvp_format_rate(hw->bandwidth_bps * hw->kv_bw_efficiency, t2, sizeof t2);
		printf(" (the KV cache at %.2f = %s)", hw->kv_bw_efficiency, t2);
	}
	/* an engine's own kernels' share (engine.h decode_bw_scale) */
	if (hw->decode_bw_scale > 0 && hw->decode_bw_scale != 1)
		printf(" (the GPU's %.2f x the engine's %.3f)",
		       hw->decode_bw_efficiency / hw->decode_bw_scale, hw->decode_bw_scale);
	printf("\n");
	printf("  peak %.1f TFLOP/s x efficiency %.2f = %.1f TFLOP/s", hw->flops / 1e12,
	       hw->prefill_flops_efficiency, hw->flops * hw->prefill_flops_efficiency / 1e12);
	if (hw->prefill_scale_from_engine && hw->prefill_flops_scale != 1)
		printf(" (the GPU's %.2f x the engine's %.3f)",
		       hw->prefill_flops_efficiency / hw->prefill_flops_scale, hw->prefill_flops_scale);
	printf("\n");
	if (run->ctx.hw.attention_flops > 0 && run->ctx.hw.attention_flops < hw->flops)
		printf("  attention (QK^T, PV) at %.1f TFLOP/s x efficiency %.2f: the KV cache's "
		       "dtype's peak, not the weights'\n", run->ctx.hw.attention_flops / 1e12,
		       hw->prefill_flops_efficiency);
	if (hw->gemm.nm) {
		/* a file name found under the profile folders: escaped for the terminal */
		const char *g = strrchr(hw->gemm.path, '/');
		char cg[KVP_TERM_SIZE(sizeof hw->gemm.path)];
		printf("  prefill's linear layers at the measured GEMM table %s (profiles/kernels, "
		       "interpolated at their shapes)",
		       kvp_term_text(cg, sizeof cg, g ? g + 1 : hw->gemm.path));
		if (hw->prefill_flops_scale > 0 && hw->prefill_flops_scale != 1)
			printf(" x %.3g, the %s's prefill_flops_scale (the efficiency "
			       "above too)", hw->prefill_flops_scale,
			       hw->prefill_scale_from_engine ? "engine" : "calibration");
		printf("; attention at the efficiency above\n");
	}
	if (run->ctx.moe_curve.n) {
		/* the routed experts from the measured MoE table (step.h moe_s) */
		const char *g = strrchr(hw->moe.path, '/');
		char cg[KVP_TERM_SIZE(sizeof hw->moe.path)];
		printf("  routed experts at the measured MoE table %s (profiles/kernels; moe_tp %u, "
		       "moe_ep %u; interpolated in the step's tokens), after the rest of the step\n",
		       kvp_term_text(cg, sizeof cg, g ? g + 1 : hw->moe.path),
		       run->ctx.moe_curve.moe_tp, run->ctx.moe_curve.moe_ep);
	}
	if (cal->decode_bw_efficiency > 0 || cal->prefill_flops_efficiency > 0 ||
	    cal->prefill_flops_scale > 0) {
		/* the path and the GPU are input text: escaped for the terminal */
		char cp[KVP_TERM_SIZE(256)], cg[KVP_TERM_SIZE(sizeof cal->gpu)];
		const char *label = kvp_cli_calibration_label(cf, cal);
		printf("  efficiencies calibrated from %s%s%s\n",
		       kvp_term_text(cp, sizeof cp, label ? label : ""),
		       cal->gpu[0] ? " for " : "", kvp_term_text(cg, sizeof cg, cal->gpu));
	}
	kvp_cli_calibration_print(cf, cal, "  ");
	if (s->par.tp > 1) {
		const struct kvp_link *tl = &run->ctx.tp_link;
		kvp_format_rate(tl->effective_bps, t1, sizeof t1);
		printf("  tp all-reduce over %s, %s per direction, %.0f us latency each",
		       tl->name, t1, hw->allreduce_latency_s * 1e6);
		if (strcmp(tl->name, "nvlink") != 0 && strcmp(tl->name, "mesh") != 0 &&
		    hw->nvlink_domain > 1)
			printf(" (tp %u is larger than the NVLink domain of %u GPUs)",
			       s->par.tp, hw->nvlink_domain);
		if (strcmp(tl->name, hw->host_link.name) == 0 &&
		    kvp_pcie_ring_busbw(hw->pcie_busbw, s->par.tp) > 0)
			printf(" (NCCL's ring over PCIe: the profile's measured bus bandwidth)");
		printf("\n");
	}
	printf("  engine fixed costs (%s): %.0f us a step + %.1f us a sequence; a prefill pass "
	       "+%.0f us\n", hw->time_source, hw->step_fixed_s * 1e6, hw->seq_step_s * 1e6,
	       hw->prefill_fixed_s * 1e6);
	if (run->ctx.hw.moe_align_s > 0)
		printf("  serial MoE align kernel (every pass): %u MoE layers x %.0f us = %.2f ms\n",
		       kvp_shape_moe_layers(m), hw->moe_align_layer_s * 1e6,
		       run->ctx.hw.moe_align_s * 1e3);
	print_eager(run, hw);
	printf("  band on times: x%.2f to x%.2f of each time printed%s\n", hw->time_ratio_low,
	       hw->time_ratio_high, hw->given & KVP_PERF_GIVEN_BAND
	       ? " (1 -/+ the calibration's spread)" : "");
	print_shape(run, hw);
	kvp_format_bytes(b->weights_bytes, t1, sizeof t1);
	kvp_format_u64(s->token_bytes, t2, sizeof t2);
	printf("  weights on one GPU %s; KV %s B per token on one GPU\n\n", t1, t2);

	const struct kvp_perf_row *r0 = &rows[0];
	kvp_format_u64(prompt, t1, sizeof t1);
	printf("Prefill of %s tokens (one sequence, whole model)\n", t1);
	fmt_flops(2.0 * (double)m->active_params * (double)prompt, t2, sizeof t2);
	fmt_flops(att1, t3, sizeof t3);
	fmt_flops(kvp_perf_prefill_flops(m, prompt), t4, sizeof t4);
	printf("  2 x %.3g active params x %s tokens = %s; causal attention %s; total %s\n",
	       (double)m->active_params, t1, t2, t3, t4);
	kvp_perf_fmt_s(r0->prefill.compute_s, t1, sizeof t1);
	kvp_perf_fmt_s(r0->prefill.memory_s, t2, sizeof t2);
	kvp_perf_fmt_s(r0->prefill.comm_s, t3, sizeof t3);
	kvp_perf_fmt_s(r0->prefill.time_s, t4, sizeof t4);
	char tf[64];
	kvp_perf_fmt_s(r0->prefill.fixed_s, tf, sizeof tf);
	/* with offload these are the GPU's figures; the offloaded TTFTs follow
	 * (a line never gives as TTFT what the table does not) */
	/* a request's latency outside the steps (step.h request_latency_s),
	 * when a calibration or the engine gives one, follows each TTFT */
	double lat = hw->request_latency_s;
	char tl[64], tt[64];
	kvp_perf_fmt_s(lat, tl, sizeof tl);
	kvp_perf_fmt_s(r0->ttft_s, tt, sizeof tt);
	/* the elementwise kernels' term where there is one (a GEMM table),
	 * the routed experts' where the MoE table times them */
	char te[160] = "";
	append_term(te, sizeof te, "elementwise", r0->prefill.elementwise_s);
	append_term(te, sizeof te, "experts", r0->prefill.moe_s);
	append_term(te, sizeof te, r0->prefill.uncaptured ? "host launches (no graph)" : "eager attention",
		    r0->prefill.eager_s);
	printf("  batch %llu at once: compute %s, memory %s -> %s-bound; + communication %s + "
	       "fixed %s%s = %s%s\n", (unsigned long long)r0->batch, t1, t2,
	       kvp_perf_bound_name(r0->prefill.bound), t3, tf, te,
	       r0->offload || lat > 0 ? "on the GPU " : "TTFT ", t4);
	if (hw->gemm.nm && r0->prefill.compute_s > 0)
		/* what the table made of the step: its FLOPs over its compute time */
		printf("    (compute: one GPU's %.3f TFLOP at %.1f TFLOP/s, %.2f of the peak: the "
		       "linear layers at the table's rate, attention at %.2f)\n",
		       r0->prefill.gpu_flops / 1e12, r0->prefill.gpu_flops / r0->prefill.compute_s / 1e12,
		       r0->prefill.gpu_flops / r0->prefill.compute_s / hw->flops,
		       hw->prefill_flops_efficiency);
	if (lat > 0 && !r0->offload)
		printf("  + %s a request outside the steps = TTFT %s\n", tl, tt);
	const struct kvp_perf_row *rl = &rows[nbatch - 1];
	if (isfinite(rl->chunked.ttft_s)) {
		char t5[64];
		kvp_format_u64(rl->chunked.chunk_tokens, t1, sizeof t1);
		kvp_perf_fmt_s(rl->chunked.compute_s, t2, sizeof t2);
		kvp_perf_fmt_s(rl->chunked.memory_s, t3, sizeof t3);
		kvp_perf_fmt_s(rl->chunked.comm_s, t4, sizeof t4);
		kvp_perf_fmt_s(rl->chunked.offload ? rl->chunked.gpu_ttft_s
						   : rl->chunked.ttft_s - (lat > 0 ? lat : 0), t5, sizeof t5);
		kvp_perf_fmt_s(rl->chunked.fixed_s, tf, sizeof tf);
		char tc[160] = "";
		append_term(tc, sizeof tc, "elementwise", rl->chunked.elementwise_s);
		append_term(tc, sizeof tc, "experts", rl->chunked.moe_s);
		append_term(tc, sizeof tc,
			    rl->chunked.uncaptured ? "host launches (no graph)" : "eager attention",
			    rl->chunked.eager_s);
		printf("  chunked, joining %llu decoding: chunks of %s tokens (max-batched-tokens "
		       "%llu - %llu), %llu step%s x (max(compute %s, memory %s) + all-reduce %s + "
		       "fixed %s%s) = %s%s\n", (unsigned long long)(rl->batch - 1), t1,
		       (unsigned long long)b->max_batched_tokens,
		       (unsigned long long)(rl->batch - 1), (unsigned long long)rl->chunked.steps,
		       rl->chunked.steps == 1 ? "" : "s", t2, t3, t4, tf, tc,
		       rl->chunked.offload || lat > 0 ? "on the GPU " : "TTFT ", t5);
		if (lat > 0 && !rl->chunked.offload) {
			kvp_perf_fmt_s(rl->chunked.ttft_s, t5, sizeof t5);
			printf("  + %s a request outside the steps = TTFT %s\n", tl, t5);
		}
		if (rl->chunked.offload) {
			char t6[64];
			kvp_perf_fmt_s(rl->chunked.gpu_ttft_s, t1, sizeof t1);
			kvp_format_bytes(rl->chunked.transfer_bytes, t2, sizeof t2);
			kvp_perf_fmt_s(rl->chunked.transfer_s, t3, sizeof t3);
			kvp_perf_fmt_s(rl->chunked.ttft_s, t4, sizeof t4);
			kvp_perf_fmt_s(rl->prefill_off.transfer_s, t5, sizeof t5);
			kvp_perf_fmt_s(rl->ttft_s, t6, sizeof t6);
			printf("  offloaded: each chunk's step moves the KV beyond the pool that it reads"
			       " (the\n  decodes' and the prompt's chunks so far): %s over %llu steps, "
			       "%s;\n  layer-pipelined with the GPU's %s: TTFT %s; the batch at once "
			       "writes its\n  KV beyond the pool out (%s): TTFT %s\n\n", t2,
			       (unsigned long long)rl->chunked.steps, t3, t1, t4, t5, t6);
			if (lat > 0)
				printf("  (each TTFT holds + %s a request outside the steps)\n\n", tl);
		} else {
			printf("\n");
		}
	} else {
		printf("  chunked, joining %llu decoding: no prompt token fits a step of "
		       "max-batched-tokens %llu\n\n", (unsigned long long)(rl->batch - 1),
		       (unsigned long long)b->max_batched_tokens);
	}

	kvp_format_u64(n_dec, t1, sizeof t1);
	printf("Decode step at the mean context %s tokens\n", t1);
	kvp_format_bytes(r0->decode.weights_bytes, t2, sizeof t2);
	kvp_format_bytes(r0->decode.kv_bytes, t3, sizeof t3);
	printf("  batch %llu reads weights %s + KV %s on one GPU", (unsigned long long)r0->batch, t2, t3);
	kvp_perf_fmt_s(r0->decode.memory_s, t2, sizeof t2);
	kvp_perf_fmt_s(r0->decode.compute_s, t3, sizeof t3);
	printf(": memory %s, compute %s\n", t2, t3);
	kvp_perf_fmt_s(fmax(r0->decode.memory_s, r0->decode.compute_s), t1, sizeof t1);
	kvp_perf_fmt_s(r0->decode.comm_s, t2, sizeof t2);
	kvp_perf_fmt_s(r0->decode.fixed_s, t3, sizeof t3);
	kvp_perf_fmt_s(r0->decode.time_s, t4, sizeof t4);
	/* the step as the sum step.h composes: the experts from the MoE table
	 * and the eager attention after the fixed costs where they are not 0 */
	char td[160] = "";
	append_term(td, sizeof td, "experts", r0->decode.moe_s);
	append_term(td, sizeof td, r0->decode.uncaptured ? "host launches (no graph)" : "eager attention",
		    r0->decode.eager_s);
	printf("  step = max(memory, compute) %s + communication %s + fixed %s%s = %s",
	       t1, t2, t3, td, t4);
	if (r0->micro_batches > 1)
		printf(" (a micro-batch of %llu of %u in flight, through %u stages)",
		       (unsigned long long)r0->micro_batch, r0->micro_batches, s->par.pp);
	printf("\n");
	kvp_format_u64(total, t1, sizeof t1);
	kvp_format_u64(max_batch, t2, sizeof t2);
	printf("  memory holds %s sequences of %s tokens (kvplan budget)\n", t2, t1);
	if (r0->speculative) {
		kvp_perf_fmt_s(r0->verify_s, t1, sizeof t1);
		kvp_perf_fmt_s(r0->draft_s, t2, sizeof t2);
		kvp_perf_fmt_s(r0->tpot_s, t3, sizeof t3);
		if (sp->accept_kind == KVP_SPEC_ACCEPT_SHARE)
			printf("  speculative (%s, K %u, accepted / drafted r %.2f): 1 + r K = %.4f "
			       "tokens per step;\n", spec_draft, sp->k, sp->accept,
			       r0->tokens_per_step);
		else
			printf("  speculative (%s, K %u, per-position acceptance a %.2f): (1 - a^(K+1))"
			       " / (1 - a) = %.4f tokens per step;\n", spec_draft, sp->k, sp->accept,
			       r0->tokens_per_step);
		printf("  batch %llu: verify %s + %u x draft %s, / %.4f = TPOT %s\n",
		       (unsigned long long)r0->batch, t1, sp->k, t2, r0->tokens_per_step, t3);
	}
	printf("\n");

	struct kvp_record **tab = calloc(nbatch, sizeof *tab);
	for (size_t i = 0; tab && i < nbatch; i++) {
		const struct kvp_perf_row *r = &rows[i];
		struct kvp_record *x = tab[i] = kvp_record_new();
		if (!x)
			break;
		kvp_record_u64(x, "batch", r->batch);
		kvp_perf_fmt_s(r->ttft_s, t1, sizeof t1);
		kvp_record_str(x, "ttft_batch", t1);
		kvp_perf_fmt_s(r->chunked.ttft_s, t1, sizeof t1);
		kvp_record_str(x, "ttft_chunked", t1);
		if (r->offload) {
			kvp_perf_fmt_s(r->decode.time_s, t1, sizeof t1);
			kvp_record_str(x, "step_on_gpu", t1);
			kvp_format_bytes(r->off.transfer_bytes, t1, sizeof t1);
			kvp_record_str(x, "offloaded_kv", t1);
			kvp_perf_fmt_s(r->off.transfer_s, t1, sizeof t1);
			kvp_record_str(x, "transfer", t1);
			kvp_record_str(x, "offload_bound", r->off.transfer_bound ? "transfer" : "compute");
		}
		kvp_perf_fmt_s(r->tpot_s, t1, sizeof t1);
		kvp_record_str(x, "tpot", t1);
		kvp_perf_fmt_s(r->e2e_s, t1, sizeof t1);
		kvp_record_str(x, "e2e", t1);
		kvp_format_fixed(r->output_tokens_per_s, 1, "", t1, sizeof t1);
		kvp_record_str(x, "output_tok/s", t1);
		kvp_format_fixed(r->output_tokens_per_s / gpus, 1, "", t1, sizeof t1);
		kvp_record_str(x, "per_gpu", t1);
		kvp_format_fixed(r->tokens_per_s, 1, "", t1, sizeof t1);
		kvp_record_str(x, "decode_tok/s", t1);
		kvp_record_str(x, "bound", kvp_perf_bound_name(r->decode.bound));
		kvp_record_str(x, "memory", r->offload ? (r->off.transfer_bytes ? "offload" : "fits")
						       : r->fits ? "fits" : "DOES NOT FIT");
	}
	if (tab) {
		kvp_write_table(stdout, tab, nbatch);
		for (size_t i = 0; i < nbatch; i++)
			kvp_record_free(tab[i]);
		free(tab);
	}
	if (off->tier != KVP_OFFLOAD_NONE) {
		kvp_format_rate(off->link.effective_bps, t1, sizeof t1);
		kvp_format_rate(off->link.theoretical_bps, t2, sizeof t2);
		printf("\nOffload to %s over %s: effective %s (theoretical %s)\n",
		       off->tier == KVP_OFFLOAD_CPU ? "host memory" : "disk", off->link.name, t1, t2);
		printf("  each step moves the offloaded KV; layer i+1's KV moves while layer i\n"
		       "  computes, which hides it only while a layer's compute outlasts its transfer\n");
	}
	printf("\nDoubling the context (%llu -> %llu tokens): KV x%.2f, decode KV bytes x%.2f, "
	       "prefill attention FLOPs x%.2f\n", (unsigned long long)prompt,
	       (unsigned long long)(2 * prompt), (double)kv2 / (double)kv1,
	       (double)kv2 / (double)kv1, att2 / att1);
	kvp_perf_fmt_s(reload_s, t1, sizeof t1);
	kvp_perf_fmt_s(recompute_s, t2, sizeof t2);
	kvp_format_u64(prefix, t3, sizeof t3);
	printf("Prefix of %s tokens: reload over %s %s, recompute %s -> %s\n", t3, plink->name, t1,
	       t2, reload_s < recompute_s ? "reload" : "recompute");
	if (breakeven == 1)
		printf("  reloading beats recomputing from the first token\n");
	else if (breakeven)
		printf("  reloading beats recomputing from %llu tokens on\n",
		       (unsigned long long)breakeven);
	else
		printf("  recomputing stays faster up to %llu tokens\n", (unsigned long long)limit);
	if (!all_fit)
		printf("\nSome batches do not fit in memory (see kvplan budget, or --kv-offload).\n");
}

bool kvp_perf_print_records(const struct kvp_perf_result *run, enum kvp_format format,
			    const struct kvp_cli_warnings *warn)
{
	size_t nbatch = run->opts.nbatch;
	struct kvp_record *top = kvp_record_new();
	struct kvp_record **recs = calloc(nbatch, sizeof *recs);
	bool ok = top != NULL && recs != NULL;
	if (format == KVP_FORMAT_CSV)
		for (size_t i = 0; ok && i < nbatch; i++)
			ok = (recs[i] = kvp_perf_row_to_record(run, i)) != NULL;
	else
		ok = ok && kvp_perf_to_record(run, top) && kvp_cli_warnings_to_record(warn, top);
	if (ok && format == KVP_FORMAT_CSV)
		kvp_write_csv(stdout, recs, nbatch);
	else if (ok)
		kvp_write_json(stdout, top);
	for (size_t i = 0; recs && i < nbatch; i++)
		kvp_record_free(recs[i]);
	free(recs);
	kvp_record_free(top);
	return ok;
}
