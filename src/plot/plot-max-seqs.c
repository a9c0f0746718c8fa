/* plot-max-seqs.c: the max-seqs chart: the concurrent sequences the budget
 * admits against context, one line per GPU and KV dtype. */
#include "plot/plot-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

kvp_status kvp_plot_max_seqs(struct kvp_plot *p, const struct kvp_model *m,
			     const struct kvp_gpu *gpus, size_t ngpus, const enum kvp_dtype *kv,
			     size_t nkv, const uint64_t *contexts, size_t ncontexts,
			     const struct kvp_budget_opts *o, struct kvp_error *err)
{
	struct kvp_budget *b = malloc(sizeof *b);
	if (!b)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	kvp_status st = KVP_STATUS_OK;
	struct kvp_plot_panel *pn = kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES);
	if (!pn) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "too many panels");
		goto out;
	}
	kvp_plot_axes(pn, "context (tokens per sequence, k = 1024)", "tokens",
	     "max concurrent sequences", "sequences");
	pn->logx = pn->logy = pn->xtic_labels = true;
	char lbl[KVP_PLOT_TITLE_MAX];
	uint64_t row_ctx[KVP_PLOT_MAX_ROWS]; /* each row's context as an integer */
	for (size_t c = 0; c < ncontexts; c++) {
		if (m->max_context && contexts[c] > m->max_context)
			continue;
		kvp_plot_token_label(contexts[c], lbl, sizeof lbl);
		if (pn->nrows == KVP_PLOT_MAX_ROWS)
			break;
		row_ctx[pn->nrows] = contexts[c];
		if (!kvp_plot_add_row(pn, (double)contexts[c], lbl, NULL, NULL))
			break;
	}
	if (pn->nrows == 0) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "context",
				   "every context is beyond %s's max_context %llu", m->name,
				   (unsigned long long)m->max_context);
		goto out;
	}
	for (size_t gi = 0; gi < ngpus; gi++) {
		for (size_t ki = 0; ki < nkv; ki++) {
			struct kvp_budget_opts oo = *o;
			oo.kv_dtype = kv[ki];
			char kvn[32] = "";
			size_t col = pn->nseries;
			bool fits = true;
			for (size_t r = 0; r < pn->nrows; r++) {
				oo.context = row_ctx[r];
				st = kvp_budget_compute(m, &gpus[gi], &oo, b, err);
				if (st)
					goto out;
				if (!kvn[0]) {
					kvp_plot_kv_name(&b->spec, kv[ki], kvn, sizeof kvn);
					snprintf(lbl, sizeof lbl, "%s, KV %s", gpus[gi].name, kvn);
					struct kvp_plot_series *ser = kvp_plot_add_series(pn, lbl);
					if (!ser) {
						kvp_plot_note(p, "more than %d lines: %s left out",
							      KVP_PLOT_MAX_SERIES, lbl);
						goto done;
					}
					ser->color = (int)gi + 1;
					ser->dash = (int)ki + 1;
				}
				fits &= b->weights_fit;
				pn->y[r][col] = (double)b->max_sequences;
			}
			if (!fits) {
				kvp_plot_note(p, "%s: the weights do not fit, no line", lbl);
				size_t n = strlen(pn->series[col].title);
				snprintf(pn->series[col].title + n, sizeof pn->series[col].title - n,
					 " (weights do not fit)");
			}
		}
	}
done:;
	char tp[48] = "";
	if (o->par.tp > 1 || o->par.pp > 1)
		snprintf(tp, sizeof tp, ", tp %u, pp %u", o->par.tp, o->par.pp);
	snprintf(p->title, sizeof p->title,
		 "Max concurrent sequences against context: %s, engine %s%s, block %u\\n"
		 "line colour: GPU; dash: KV dtype; a line stops where no sequence fits, or at max_context %llu",
		 m->name, kvp_engine_name(o->engine), tp, b->block_size,
		 (unsigned long long)m->max_context);
out:
	free(b);
	return st;
}
