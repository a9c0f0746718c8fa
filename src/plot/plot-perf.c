/* plot-perf.c: the perf chart: the decode step and throughput against
 * batch (the roofline's memory and compute terms beside the step), and
 * against context with the KV brought over each host link. */
#include "plot/plot-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "time/perf.h"

size_t kvp_plot_default_batches(uint64_t *out, size_t max)
{
	return kvp_plot_powers_of_two(1, 512, out, max);
}

kvp_status kvp_plot_perf(struct kvp_plot *p, const struct kvp_model *m, const struct kvp_gpu *g,
			 const struct kvp_perf_hw *hw_in, const struct kvp_budget_opts *o,
			 const uint64_t *batches, size_t nbatches, const uint64_t *contexts,
			 size_t ncontexts, struct kvp_error *err)
{
	struct kvp_budget *b = malloc(sizeof *b);
	if (!b)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	struct kvp_perf_hw hw;
	struct kvp_perf_ctx pc;
	struct kvp_perf_step step;
	kvp_status st;
	if (hw_in)
		hw = *hw_in;
	else if ((st = kvp_perf_hw_from_gpu(g, m, &hw, err)))
		goto out;
	/* the spec and the weights on one GPU, from the budget */
	if ((st = kvp_budget_compute(m, g, o, b, err)) ||
	    (st = kvp_perf_init(&pc, &b->spec, b->weights_bytes, &hw, err)))
		goto out;
	uint64_t context = b->context, batch = b->batch, fit = b->max_sequences;
	char lbl[KVP_PLOT_TITLE_MAX], n1[32], n2[32];

	/* (a) the roofline against batch */
	struct kvp_plot_panel *pa = kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES);
	struct kvp_plot_panel *pb = kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES);
	if (!pa || !pb) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "too many panels");
		goto out;
	}
	kvp_plot_token_label(context, n1, sizeof n1);
	kvp_format_u64(fit, n2, sizeof n2);
	snprintf(pa->title, sizeof pa->title,
		 "(a) one decode step, %s tokens of context each\\n%s sequences fit the KV pool",
		 n1, n2);
	snprintf(pa->xlabel, sizeof pa->xlabel, "batch (sequences decoding together)");
	snprintf(pa->ylabel, sizeof pa->ylabel, "time per decode step = per output token (ms)");
	snprintf(pa->y2label, sizeof pa->y2label, "throughput (output tokens/s, all sequences)");
	snprintf(pa->xunit, sizeof pa->xunit, "sequences");
	snprintf(pa->yunit, sizeof pa->yunit, "seconds");
	snprintf(pa->y2unit, sizeof pa->y2unit, "tokens/s");
	pa->yscale = 1e-3;
	pa->logx = pa->xtic_labels = true;
	pa->mark_x = (double)fit;
	pa->grey_past_mark = true;
	snprintf(pa->mark_label, sizeof pa->mark_label, "%s sequences fit the pool", n2);
	static const char *const roof[] = {"step time", "memory term (weights + KV read)",
					   "compute term"};
	for (size_t i = 0; i < 3; i++) {
		struct kvp_plot_series *s = kvp_plot_add_series(pa, roof[i]);
		s->color = 1;
		s->dash = i ? (int)i + 1 : 1;
		if (i)
			s->color = i == 1 ? 3 : 4;
	}
	kvp_plot_add_series(pa, "throughput (right axis)")->y2 = true;
	pa->series[3].color = 2;
	for (size_t i = 0; i < nbatches; i++) {
		size_t r;
		snprintf(lbl, sizeof lbl, "%llu", (unsigned long long)batches[i]);
		if (!kvp_plot_add_row(pa, (double)batches[i], lbl, NULL, &r))
			break;
		if ((st = kvp_perf_decode_step(&pc, batches[i], context, &step, err)))
			goto out;
		pa->y[r][0] = step.time_s;
		pa->y[r][1] = step.memory_s;
		pa->y[r][2] = step.compute_s;
		pa->y[r][3] = (double)batches[i] / step.time_s;
	}

	/* (b) offload against context, per host link */
	kvp_format_u64(batch, n1, sizeof n1);
	snprintf(pb->title, sizeof pb->title,
		 "(b) decode step of %s %s, all KV brought over a link\\n"
		 "each step, layer by layer (transfer overlaps compute)", n1,
		 batch == 1 ? "sequence" : "sequences");
	kvp_plot_axes(pb, "context (tokens per sequence, k = 1024)", "tokens",
	     "time per decode step (ms)", "seconds");
	pb->yscale = 1e-3;
	pb->logx = pb->logy = pb->xtic_labels = true;
	/* KV in GPU memory only where the batch fits the pool at that context
	 * (issue 35: the series once ran past what the pool holds) */
	uint64_t longest = 0;
	for (size_t c = 0; c < ncontexts; c++)
		longest = contexts[c] > longest ? contexts[c] : longest;
	uint64_t fit_ctx = kvp_budget_max_context(b, batch, longest);
	kvp_plot_add_series(pb, "KV in GPU memory (where it fits)")->color = 8;
	struct kvp_link links[16];
	size_t nlinks = 0;
	for (const struct kvp_link *l; nlinks < 16 && (l = kvp_link_preset_at(nlinks));)
		links[nlinks++] = *l;
	for (size_t i = 0; i < nlinks; i++) {
		char rate[32];
		kvp_format_rate(links[i].effective_bps, rate, sizeof rate);
		snprintf(lbl, sizeof lbl, "over %.31s (%.31s)", links[i].name, rate);
		struct kvp_plot_series *s = kvp_plot_add_series(pb, lbl);
		if (!s)
			break;
		s->color = (int)i + 1;
	}
	for (size_t c = 0; c < ncontexts; c++) {
		size_t r;
		if (m->max_context && contexts[c] > m->max_context)
			continue;
		kvp_plot_token_label(contexts[c], lbl, sizeof lbl);
		if (!kvp_plot_add_row(pb, (double)contexts[c], lbl, NULL, &r))
			break;
		if ((st = kvp_perf_decode_step(&pc, batch, contexts[c], &step, err)))
			goto out;
		pb->y[r][0] = contexts[c] <= fit_ctx ? step.time_s : NAN;
		for (size_t i = 0; i + 1 < pb->nseries; i++) {
			struct kvp_perf_offload off;
			kvp_perf_offload_step(&pc, &step, step.kv_bytes, &links[i], &off);
			pb->y[r][i + 1] = off.pipelined_s;
		}
	}
	char tp[48] = "";
	if (o->par.tp > 1 || o->par.pp > 1)
		snprintf(tp, sizeof tp, ", tp %u, pp %u", o->par.tp, o->par.pp);
	char bw[32];
	kvp_format_rate(hw.bandwidth_bps, bw, sizeof bw);
	snprintf(p->title, sizeof p->title,
		 "Decode roofline and KV offload: %s on %s%s, KV %s; %s x %.2f efficiency, "
		 "%.0f TFLOP/s x %.2f",
		 m->name, g->name, tp, kvp_dtype_name(b->spec.kv_dtype), bw, hw.decode_bw_efficiency,
		 hw.flops / 1e12, hw.prefill_flops_efficiency);
	st = KVP_STATUS_OK;
out:
	free(b);
	return st;
}
