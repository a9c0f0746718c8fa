/* plot-budget.c: the budget chart: one GPU's memory as stacked bars
 * (weights, activations, overhead, KV pool, free), one bar per GPU and
 * tensor-parallel degree. */
#include "plot/plot-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

kvp_status kvp_plot_budget(struct kvp_plot *p, const struct kvp_model *m,
			   const struct kvp_gpu *gpus, size_t ngpus, const uint32_t *tps,
			   size_t ntps, const struct kvp_budget_opts *o, struct kvp_error *err)
{
	struct kvp_budget *b = malloc(sizeof *b);
	if (!b)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	kvp_status st = KVP_STATUS_OK;
	struct kvp_plot_panel *pn = kvp_plot_add_panel(p, KVP_PLOT_STYLE_STACKED);
	static const char *const parts[] = {
		"weights", "activation peak", "overhead (CUDA context, NCCL, graphs)", "KV pool",
		"free (headroom)", "GPU memory"};
	for (size_t i = 0; pn && i < sizeof parts / sizeof parts[0]; i++) {
		struct kvp_plot_series *s = kvp_plot_add_series(pn, parts[i]);
		s->outline = i == 5;
		/* weights blue, activations orange, overhead grey, KV green, free pale */
		static const unsigned rgb[] = {0x4e79a7, 0xf28e2b, 0x9c9c9c, 0x59a14f, 0xf1ead0, 0};
		s->rgb = rgb[i];
	}
	if (!pn) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "too many panels");
		goto out;
	}
	kvp_plot_axes(pn, "GPU and tensor-parallel size (memory of one GPU)", "bar",
	     "memory per GPU (GiB)", "bytes");
	pn->yscale = (double)KVP_GIB;
	char ctx[32], kv[32] = "", lbl[KVP_PLOT_LABEL_MAX], tag[KVP_PLOT_LABEL_MAX], num[32];
	bool any = false;
	enum kvp_engine engine = o->engine;
	uint64_t context = 0;
	uint32_t block = 0;
	for (size_t gi = 0; gi < ngpus; gi++) {
		for (size_t ti = 0; ti < ntps; ti++) {
			struct kvp_budget_opts oo = *o;
			oo.par.tp = tps[ti];
			struct kvp_error e = {0};
			st = kvp_budget_compute(m, &gpus[gi], &oo, b, &e);
			if (st == KVP_STATUS_INVALID) {
				kvp_plot_note(p, "%s tp %u left out: %s: %s", gpus[gi].name, tps[ti],
					      e.field, e.msg);
				st = KVP_STATUS_OK;
				continue;
			}
			if (st) {
				*err = e;
				goto out;
			}
			if (ntps == 1 && tps[ti] == 1)
				snprintf(lbl, sizeof lbl, "%s", gpus[gi].name);
			else
				snprintf(lbl, sizeof lbl, "%s\\ntp %u", gpus[gi].name, tps[ti]);
			kvp_format_u64(b->max_sequences, num, sizeof num);
			if (b->weights_fit)
				snprintf(tag, sizeof tag, "%s seqs", num);
			else
				snprintf(tag, sizeof tag, "does not fit");
			size_t r;
			if (!kvp_plot_add_row(pn, (double)pn->nrows, lbl, tag, &r)) {
				kvp_plot_note(p, "more than %d bars: the rest left out", KVP_PLOT_MAX_ROWS);
				break;
			}
			double used = (double)b->weights_bytes + (double)b->activation_bytes +
				      (double)b->overhead_bytes + (double)b->kv_pool_bytes;
			double gpu = (double)b->gpu_memory_bytes;
			pn->y[r][0] = (double)b->weights_bytes;
			pn->y[r][1] = (double)b->activation_bytes;
			pn->y[r][2] = (double)b->overhead_bytes;
			pn->y[r][3] = (double)b->kv_pool_bytes;
			pn->y[r][4] = gpu > used ? gpu - used : 0;
			pn->y[r][5] = gpu;
			if (!any)
				kvp_plot_kv_name(&b->spec, o->kv_dtype, kv, sizeof kv);
			any = true;
			context = b->context;
			block = b->block_size;
		}
	}
	if (!any) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "tp",
				   "no GPU and tensor-parallel size can hold %s: %s", m->name,
				   p->nnotes ? p->notes[0] : "nothing to plot");
		goto out;
	}
	kvp_plot_token_label(context, ctx, sizeof ctx);
	snprintf(p->title, sizeof p->title,
		 "Memory budget of one GPU: %s, engine %s, KV %s, block %u\\n"
		 "max sequences of %s tokens above each bar",
		 m->name, kvp_engine_name(engine), kv, block, ctx);
out:
	free(b);
	return st;
}
