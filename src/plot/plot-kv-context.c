/* plot-kv-context.c: the kv-context chart: the KV bytes of one sequence
 * against context, one line per model, labelled with its attention kind
 * and layer mix. */
#include "plot/plot-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "model/spec.h"

/* "MHA", "GQA 8/32", "MLA", and the layer mix: ", sliding 4096",
 * ", 21 full + 21 sliding 4096", ", 4 attention + 28 Mamba". */
static void arch_label(const struct kvp_spec *s, char *buf, size_t size)
{
	const struct kvp_model *m = s->model;
	const uint32_t *c = s->count;
	uint32_t window = 0;
	for (uint32_t i = 0; i < s->num_layers && !window; i++)
		window = s->layers[i].window;
	int n;
	if (c[KVP_LAYER_MLA])
		n = snprintf(buf, size, "MLA");
	else if (m->num_kv_heads == m->num_heads)
		n = snprintf(buf, size, "MHA");
	else if (m->num_kv_heads == 1)
		n = snprintf(buf, size, "MQA");
	else
		n = snprintf(buf, size, "GQA %u/%u", m->num_kv_heads, m->num_heads);
	if (n < 0 || (size_t)n >= size)
		return;
	uint32_t local = c[KVP_LAYER_SLIDING] + c[KVP_LAYER_CHUNKED];
	const char *lname = c[KVP_LAYER_SLIDING] ? "sliding" : "chunked";
	uint32_t attn = c[KVP_LAYER_FULL] + c[KVP_LAYER_MLA] + local;
	if (local && attn == local)
		snprintf(buf + n, size - n, ", %s %u", lname, window);
	else if (local)
		snprintf(buf + n, size - n, ", %u full + %u %s %u", attn - local, local, lname, window);
	else if (c[KVP_LAYER_MAMBA])
		snprintf(buf + n, size - n, ", %u attention + %u Mamba", attn, c[KVP_LAYER_MAMBA]);
}

kvp_status kvp_plot_kv_context(struct kvp_plot *p, const struct kvp_model *models,
			       size_t nmodels, const uint64_t *contexts, size_t ncontexts,
			       struct kvp_parallel par, enum kvp_dtype kv_dtype, uint32_t block,
			       struct kvp_error *err)
{
	struct kvp_spec *s = malloc(sizeof *s);
	if (!s)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	kvp_status st = KVP_STATUS_OK;
	struct kvp_plot_panel *pn = kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES);
	if (!pn) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "too many panels");
		goto out;
	}
	if (block == 0)
		block = 1;
	kvp_plot_axes(pn, "context (tokens per sequence, k = 1024)", "tokens",
	     "KV cache of one sequence on one GPU (GiB)", "bytes");
	pn->yscale = (double)KVP_GIB;
	pn->logx = pn->logy = pn->xtic_labels = true;
	char lbl[32];
	for (size_t c = 0; c < ncontexts; c++) {
		kvp_plot_token_label(contexts[c], lbl, sizeof lbl);
		if (!kvp_plot_add_row(pn, (double)contexts[c], lbl, NULL, NULL))
			break;
	}
	char kv[32] = "";
	for (size_t i = 0; i < nmodels; i++) {
		struct kvp_error e = {0};
		st = kvp_spec_build(&models[i], par, KVP_DTYPE_AUTO, kv_dtype, s, &e);
		if (st == KVP_STATUS_INVALID) {
			kvp_plot_note(p, "%s left out: %s: %s", models[i].name, e.field, e.msg);
			st = KVP_STATUS_OK;
			continue;
		}
		if (st) {
			*err = e;
			goto out;
		}
		char arch[96], per[32], title[KVP_PLOT_TITLE_MAX];
		arch_label(s, arch, sizeof arch);
		kvp_format_u64(s->token_bytes, per, sizeof per);
		snprintf(title, sizeof title, "%s (%s; %s B/token)", models[i].name, arch, per);
		struct kvp_plot_series *ser = kvp_plot_add_series(pn, title);
		if (!ser) {
			kvp_plot_note(p, "more than %d models: %s and later left out",
				      KVP_PLOT_MAX_SERIES, models[i].name);
			break;
		}
		if (!kv[0])
			kvp_plot_kv_name(s, kv_dtype, kv, sizeof kv);
		size_t col = pn->nseries - 1;
		for (size_t r = 0; r < pn->nrows; r++) {
			/* the integer, not the double x: 2^64 - 1 does not survive a
			 * round trip through a double (UB past 2^64) */
			uint64_t n = contexts[r], bytes;
			if (models[i].max_context && n > models[i].max_context)
				continue;
			if (kvp_spec_seq_bytes(s, n, block, &bytes)) {
				st = kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "context",
						   "%s: KV bytes of %llu tokens overflow",
						   models[i].name, (unsigned long long)n);
				goto out;
			}
			pn->y[r][col] = (double)bytes;
		}
	}
	if (pn->nseries == 0) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "model",
				   "no model to plot: %s", p->nnotes ? p->notes[0] : "none given");
		goto out;
	}
	if (block == 1)
		snprintf(lbl, sizeof lbl, "exact tokens");
	else
		snprintf(lbl, sizeof lbl, "blocks of %u tokens", block);
	snprintf(p->title, sizeof p->title,
		 "KV cache of one sequence against context: tp %u, pp %u, KV %s, %s\\n"
		 "each line ends at the model's max_context",
		 par.tp, par.pp, nmodels == 1 || kv_dtype != KVP_DTYPE_AUTO ? kv : "auto (serving dtype)",
		 lbl);
out:
	free(s);
	return st;
}
