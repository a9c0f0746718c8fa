/* plot-block-size.c: the block-size chart: internal waste, block metadata
 * and live sequences against the paged block size, simulated over a
 * workload by kvplan frag's simulator. */
#include "plot/plot-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "frag/frag.h"

kvp_status kvp_plot_block_size(struct kvp_plot *p, const struct kvp_model *m,
			       const struct kvp_gpu *g, const struct kvp_budget_opts *o,
			       const struct kvp_workload *w, const uint32_t *blocks, size_t nblocks,
			       uint64_t requests,
			       void (*progress)(void *ctx, uint64_t done, uint64_t total),
			       void *progress_ctx, struct kvp_error *err)
{
	struct kvp_budget *b = malloc(sizeof *b);
	struct kvp_frag_config *cfg = malloc(sizeof *cfg);
	struct kvp_frag_result *rows = calloc(KVP_FRAG_MAX_ROWS, sizeof *rows);
	kvp_status st = KVP_STATUS_OK;
	if (!b || !cfg || !rows) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	if ((st = kvp_budget_compute(m, g, o, b, err)))
		goto out;
	kvp_frag_config_init(cfg);
	if ((st = kvp_frag_shape_from_spec(&b->spec, &cfg->shape, err)))
		goto out;
	cfg->pool_bytes = b->kv_pool_bytes;
	cfg->max_len = w->max_len ? w->max_len : m->max_context;
	for (int k = 0; k < KVP_FRAG_POLICY_COUNT; k++)
		cfg->policy[k] = k == KVP_FRAG_POLICY_PAGED || k == KVP_FRAG_POLICY_PAGED_SHARED;
	cfg->prefix_tokens = w->prefix_tokens;
	cfg->prefix_fraction = w->prefix_fraction;
	if (requests) {
		cfg->requests = requests;
		cfg->warmup = requests / 10;
	}
	cfg->progress = progress;
	cfg->progress_ctx = progress_ctx;
	if (nblocks) {
		cfg->nblock = nblocks < KVP_FRAG_MAX_BLOCK_SIZES ? nblocks : KVP_FRAG_MAX_BLOCK_SIZES;
		memcpy(cfg->block_sizes, blocks, cfg->nblock * sizeof *blocks);
	}
	size_t n = 0;
	if ((st = kvp_frag_run(cfg, w, rows, KVP_FRAG_MAX_ROWS, &n, err)))
		goto out;
	char reason[512], pool[32], num[32];
	int pick = kvp_frag_recommend(rows, n, reason, sizeof reason);
	uint32_t zero_waste = 0;

	struct kvp_plot_panel *pa = kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES);
	struct kvp_plot_panel *pb = kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES);
	if (!pa || !pb) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "too many panels");
		goto out;
	}
	/* waste and metadata in one unit, the share of the pool each takes, on a
	 * log axis: 13 MiB of tables beside 3.6 GiB of waste reads as what it
	 * is, 0.02 % against 6.7 % (two axes in MiB and % made them look alike) */
	snprintf(pa->title, sizeof pa->title, "(a) what the pool loses to blocks, %% of the pool");
	snprintf(pa->ylabel, sizeof pa->ylabel, "share of the KV pool (%%, log scale)");
	snprintf(pa->yunit, sizeof pa->yunit, "fraction of the pool");
	pa->yscale = 0.01;
	pa->logy = true;
	snprintf(pb->title, sizeof pb->title, "(b) what the pool holds");
	snprintf(pb->ylabel, sizeof pb->ylabel, "live sequences (time average)");
	snprintf(pb->yunit, sizeof pb->yunit, "sequences");
	struct kvp_plot_panel *both[] = {pa, pb};
	for (size_t k = 0; k < 2; k++) {
		snprintf(both[k]->xlabel, sizeof both[k]->xlabel, "block size P (tokens per block)");
		snprintf(both[k]->xunit, sizeof both[k]->xunit, "tokens");
		both[k]->logx = both[k]->xtic_labels = true;
	}
	/* one column per paged policy that ran, rows by block size in order */
	enum kvp_frag_policy pols[2];
	size_t npol = 0;
	for (size_t i = 0; i < n; i++)
		if (!npol || pols[npol - 1] != rows[i].policy)
			pols[npol++] = rows[i].policy;
	for (size_t k = 0; k < npol; k++) {
		const char *pname = kvp_frag_policy_name(pols[k]);
		char t[KVP_PLOT_TITLE_MAX];
		snprintf(t, sizeof t, "internal waste, %s", pname);
		kvp_plot_add_series(pa, t)->color = (int)k + 1;
		snprintf(t, sizeof t, "metadata (block tables + allocator), %s", pname);
		struct kvp_plot_series *s = kvp_plot_add_series(pa, t);
		s->color = 4 + 3 * (int)k;
		s->dash = 2;
		snprintf(t, sizeof t, "live sequences, %s", pname);
		kvp_plot_add_series(pb, t)->color = (int)k + 1;
	}
	for (size_t i = 0; i < n; i++) {
		size_t k = 0, r = SIZE_MAX;
		while (pols[k] != rows[i].policy)
			k++;
		for (size_t j = 0; j < pa->nrows; j++)
			if (pa->x[j] == rows[i].block_size)
				r = j;
		if (r == SIZE_MAX) {
			snprintf(num, sizeof num, "%u", rows[i].block_size);
			if (!kvp_plot_add_row(pa, rows[i].block_size, num, NULL, &r) ||
			    !kvp_plot_add_row(pb, rows[i].block_size, num, NULL, NULL))
				break;
		}
		pa->y[r][2 * k] = rows[i].internal_waste_fraction;
		pa->y[r][2 * k + 1] = cfg->pool_bytes
			? (double)rows[i].metadata_bytes / (double)cfg->pool_bytes : NAN;
		if (rows[i].internal_waste_fraction <= 0)
			zero_waste = rows[i].block_size;
		pb->y[r][k] = rows[i].mean_sequences;
	}
	if (zero_waste) {
		kvp_plot_note(p, "internal waste is 0 at P = %u: off the log axis", zero_waste);
		for (size_t k = 0; k < npol; k++) {
			size_t len = strlen(pa->series[2 * k].title);
			snprintf(pa->series[2 * k].title + len, sizeof pa->series[0].title - len,
				 " (0 at P = %u, off the log axis)", zero_waste);
		}
	}
	if (pick >= 0) {
		pb->mark_x = rows[pick].block_size;
		snprintf(pb->mark_label, sizeof pb->mark_label, "recommended: P = %u",
			 rows[pick].block_size);
		kvp_plot_note(p, "recommended block size: %s", reason);
	}
	kvp_format_bytes(b->kv_pool_bytes, pool, sizeof pool);
	kvp_format_u64(cfg->requests, num, sizeof num);
	snprintf(p->title, sizeof p->title,
		 "Block size: %s on %s, engine %s, tp %u, KV %s, pool %s\\nworkload %s "
		 "(%s requests simulated, max_len %llu)",
		 m->name, g->name, kvp_engine_name(o->engine), o->par.tp,
		 kvp_dtype_name(b->spec.kv_dtype), pool, w->name, num,
		 (unsigned long long)cfg->max_len);
out:
	free(b);
	free(cfg);
	free(rows);
	return st;
}

/* One point into its panel (a: decode time, b: capacity blocks), in the
 * series of its file and KV dtype; false when the panel is full. */
/* The median of |predicted - measured| / measured over a scatter panel's
 * points (x predicted, y measured); 0 without points. */
