/* report-charts.c: the report's charts: each chart the scenario asks for
 * built by the plot kinds, written and rendered under DIR/plots, and shown
 * in the document; a render failure is counted, not fatal. */
#include "report/report-private.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


/* Write, render and show one chart; a render failure is kept, not returned. */
static kvp_status show_plot(struct report *r, struct kvp_plot *p, const char *caption)
{
	struct kvp_error err = {0};
	kvp_plot_mark_overlaps(p);
	kvp_status st = kvp_plot_write(p, r->dir, r->o->term, &err);
	if (st)
		return kvp_report_fail(r, st, &err);
	r->res->plots++;
	const char *ext = kvp_plot_term_ext(r->o->term);
	char src[sizeof p->name + 16];
	snprintf(src, sizeof src, "plots/%s.%s", p->name, ext);
	kvp_report_doc_heading(&r->d, 3, caption);
	st = kvp_plot_render(p, r->dir, r->o->term, r->o->gnuplot, &err);
	if (st) {
		if (!r->res->render.status)
			r->res->render = err;
		kvp_report_doc_note(&r->d, "No image: gnuplot could not draw it. The data is `plots/%s.dat` "
				"and the script `plots/%s.gp`: `cd plots && gnuplot %s.gp`.",
			 p->name, p->name, p->name);
	} else {
		r->res->images++;
		kvp_report_doc_image(&r->d, caption, src);
		kvp_report_doc_note(&r->d, "Data: `plots/%s.dat`; script: `plots/%s.gp`.", p->name, p->name);
	}
	for (size_t i = 0; i < p->nnotes; i++)
		kvp_report_doc_note(&r->d, "%s", p->notes[i]);
	return KVP_STATUS_OK;
}

/* The split the sequences, roofline and block-size charts use: the smallest
 * in the scenario at which the first workload (its batch at its context)
 * fits every GPU, so each chart shows the model with room; else the
 * smallest at which the weights fit every GPU; else the largest (issue 35:
 * the report drew 70B at tp 2, where an H100 holds one sequence). */
static uint32_t chart_tp(struct report *r, const struct kvp_model *m)
{
	const struct kvp_scenario *s = r->s;
	uint32_t room = 0, best = 0, largest = 0;
	for (size_t t = 0; t < s->ntp; t++) {
		bool all = true, roomy = s->nworkloads > 0, valid = true;
		for (size_t g = 0; g < s->ngpus && all; g++) {
			struct kvp_budget_opts o = kvp_report_budget_opts(
				s, s->engines[0], s->tp[t], s->kv[0],
				s->nworkloads ? &s->workloads[0] : NULL);
			struct kvp_error e = {0};
			kvp_status st = kvp_budget_compute(m, &s->gpus[g], &o, r->b, &e);
			valid = st == KVP_STATUS_OK;
			all = valid && r->b->weights_fit;
			roomy = roomy && all && r->b->fits;
		}
		if (valid && s->tp[t] > largest)
			largest = s->tp[t];
		if (all && (!best || s->tp[t] < best))
			best = s->tp[t];
		if (roomy && (!room || s->tp[t] < room))
			room = s->tp[t];
	}
	return room ? room : best ? best : largest;
}

/* The first GPU of the scenario on which the model's weights leave a pool at
 * split tp (the block-size chart's), else the first. */
static size_t chart_gpu(struct report *r, const struct kvp_model *m, uint32_t tp)
{
	const struct kvp_scenario *s = r->s;
	for (size_t g = 0; g < s->ngpus; g++) {
		struct kvp_budget_opts o = kvp_report_budget_opts(s, s->engines[0], tp, s->kv[0], NULL);
		struct kvp_error e = {0};
		if (!kvp_budget_compute(m, &s->gpus[g], &o, r->b, &e) && r->b->weights_fit)
			return g;
	}
	return 0;
}

/* Show a chart its builder returned st for: drawn when OK, a note when the
 * scenario cannot have it (INVALID), the report stopped otherwise.  Frees p. */
static kvp_status finish_chart(struct report *r, struct kvp_plot *p, kvp_status st,
			       const struct kvp_error *err, const char *caption)
{
	snprintf(p->source, sizeof p->source, "%s", r->o->source ? r->o->source : "kvplan report");
	if (!st) {
		st = show_plot(r, p, caption);
	} else if (st == KVP_STATUS_INVALID) {
		kvp_report_doc_note(&r->d, "No chart \"%s\": %s%s%s", caption, err->field,
			 err->field[0] ? ": " : "", err->msg);
		st = KVP_STATUS_OK;
	} else if (!r->err->status) {
		kvp_report_fail(r, st, err);
	}
	kvp_plot_free(p);
	return st;
}

/* The stems the report's charts have taken.  Two names can make one stem
 * (two quantizations of a model with one general.name; names that differ in
 * punctuation only, which a stem writes as '_'; names alike but for case,
 * one file on a case-blind disk): the later chart gets -2, -3, ... so none
 * overwrites another's files and each heading shows its own image. */
struct stems {
	char (*v)[sizeof ((struct kvp_plot *)0)->name];
	size_t n, cap;
};

/* Make p->name a stem no earlier chart has (compared ignoring case) and
 * take it; false when memory runs out. */
static bool stem_take(struct stems *u, struct kvp_plot *p)
{
	enum { STEM_LIMIT = 200 }; /* the longest stem kvp_gp_stem_ok takes */
	char base[sizeof p->name];
	snprintf(base, sizeof base, "%s", p->name);
	for (unsigned k = 2;; k++) {
		bool taken = false;
		for (size_t i = 0; i < u->n && !taken; i++)
			taken = strcasecmp(u->v[i], p->name) == 0;
		if (!taken)
			break;
		char suffix[16];
		size_t ls = (size_t)snprintf(suffix, sizeof suffix, "-%u", k), keep = strlen(base);
		if (keep + ls > STEM_LIMIT)
			keep = STEM_LIMIT - ls; /* cut the base, never the suffix */
		snprintf(p->name, sizeof p->name, "%.*s%s", (int)keep, base, suffix);
	}
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 16;
		void *v = realloc(u->v, cap * sizeof u->v[0]);
		if (!v)
			return false;
		u->v = v;
		u->cap = cap;
	}
	memcpy(u->v[u->n++], p->name, sizeof u->v[0]);
	return true; /* a stem (kvp_gp_stem) with "-k" after at most STEM_LIMIT - 2 bytes of it */
}

/* A new chart named by fmt, its stem unique among `u`, err cleared for its
 * builder; NULL: no memory. */
static struct kvp_plot *new_chart(struct stems *u, struct kvp_error *err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static struct kvp_plot *new_chart(struct stems *u, struct kvp_error *err, const char *fmt, ...)
{
	char name[2 * KVP_NAME_MAX + 16];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(name, sizeof name, fmt, ap);
	va_end(ap);
	memset(err, 0, sizeof *err);
	struct kvp_plot *p = kvp_plot_new(name);
	if (p && !stem_take(u, p)) {
		kvp_plot_free(p);
		return NULL;
	}
	return p;
}

static kvp_status section_plots(struct report *r, struct stems *up);

kvp_status kvp_report_section_plots(struct report *r)
{
	struct stems u = {0};
	kvp_status st = section_plots(r, &u);
	free(u.v);
	return st;
}

/* The charts, their stems taken in `up`. */
static kvp_status section_plots(struct report *r, struct stems *up)
{
	const struct kvp_scenario *s = r->s;
	if (!s->plots)
		return KVP_STATUS_OK;
	kvp_report_doc_heading(&r->d, 2, "Charts");
	uint64_t ctx[KVP_PLOT_MAX_ROWS], batches[KVP_PLOT_MAX_ROWS];
	size_t nctx = kvp_plot_default_contexts(ctx, KVP_PLOT_MAX_ROWS);
	size_t nb = kvp_plot_default_batches(batches, KVP_PLOT_MAX_ROWS);
	kvp_status st = KVP_STATUS_OK;
	char caption[512];
	struct kvp_error err = {0};
	struct kvp_plot *p;
	for (size_t i = 0; i < s->nmodels && (s->plots & KVP_REPORT_PLOT_BUDGET); i++) {
		const struct kvp_model *m = &s->models[i];
		if (!(p = new_chart(up, &err, "budget-%s", m->name)))
			return kvp_report_fail(r, KVP_STATUS_NOMEM, NULL);
		struct kvp_budget_opts o = kvp_report_budget_opts(s, s->engines[0], 1, s->kv[0], &s->workloads[0]);
		st = kvp_plot_budget(p, m, s->gpus, s->ngpus, s->tp, s->ntp, &o, &err);
		snprintf(caption, sizeof caption, "Memory budget: %s (%s, workload %s)", m->name,
			 kvp_engine_name(s->engines[0]), s->workloads[0].name);
		if ((st = finish_chart(r, p, st, &err, caption)))
			return st;
	}
	if (s->plots & KVP_REPORT_PLOT_KV_CONTEXT) {
		if (!(p = new_chart(up, &err, "kv-context")))
			return kvp_report_fail(r, KVP_STATUS_NOMEM, NULL);
		st = kvp_plot_kv_context(p, s->models, s->nmodels, ctx, nctx,
					 (struct kvp_parallel){.tp = 1, .pp = 1}, s->kv[0], 1, &err);
		if ((st = finish_chart(r, p, st, &err, "KV cache of one sequence against context")))
			return st;
	}
	/* sequences, roofline and block size at the smallest split that holds
	 * the first workload on every GPU (chart_tp) */
	const struct kvp_scenario_workload *lw = NULL;  /* the first with lengths */
	for (size_t k = 0; k < s->nworkloads && !lw; k++)
		if (s->workloads[k].lengths)
			lw = &s->workloads[k];
	for (size_t i = 0; i < s->nmodels; i++) {
		const struct kvp_model *m = &s->models[i];
		uint32_t tp = chart_tp(r, m);
		if (s->plots & KVP_REPORT_PLOT_MAX_SEQS) {
			if (!(p = new_chart(up, &err, "max-seqs-%s", m->name)))
				return kvp_report_fail(r, KVP_STATUS_NOMEM, NULL);
			struct kvp_budget_opts o = kvp_report_budget_opts(s, s->engines[0], tp ? tp : 1, s->kv[0],
							       NULL);
			st = tp ? kvp_plot_max_seqs(p, m, s->gpus, s->ngpus, s->kv, s->nkv, ctx, nctx,
						    &o, &err)
				: kvp_error_set(&err, KVP_STATUS_INVALID, NULL, 0, 0, "tp",
						"no split in the scenario can hold it");
			snprintf(caption, sizeof caption, "Max concurrent sequences: %s (%s, tp %u)",
				 m->name, kvp_engine_name(s->engines[0]), tp);
			if ((st = finish_chart(r, p, st, &err, caption)))
				return st;
		}
		tp = tp ? tp : 1;
		/* the decode roofline and offload on each GPU, at the first
		 * workload's context and batch */
		for (size_t gi = 0; gi < s->ngpus && (s->plots & KVP_REPORT_PLOT_PERF); gi++) {
			if (!(p = new_chart(up, &err, "perf-%s-%s", m->name, s->gpus[gi].name)))
				return kvp_report_fail(r, KVP_STATUS_NOMEM, NULL);
			struct kvp_budget_opts o = kvp_report_budget_opts(s, s->engines[0], tp, s->kv[0],
							       &s->workloads[0]);
			st = kvp_plot_perf(p, m, &s->gpus[gi], NULL, &o, batches, nb, ctx, nctx, &err);
			snprintf(caption, sizeof caption, "Decode roofline and KV offload: %s on %u x %s",
				 m->name, tp, s->gpus[gi].name);
			if ((st = finish_chart(r, p, st, &err, caption)))
				return st;
		}
		/* the block size on the first GPU that holds the model */
		if (lw && (s->plots & KVP_REPORT_PLOT_BLOCK_SIZE)) {
			size_t gi = chart_gpu(r, m, tp);
			if (!(p = new_chart(up, &err, "block-size-%s", m->name)))
				return kvp_report_fail(r, KVP_STATUS_NOMEM, NULL);
			struct kvp_budget_opts o = kvp_report_budget_opts(s, s->engines[0], tp, s->kv[0], NULL);
			st = kvp_plot_block_size(p, m, &s->gpus[gi], &o, lw->lengths, NULL, 0, 0, NULL, NULL,
						 &err);
			snprintf(caption, sizeof caption, "Block size: %s on %u x %s, workload %s",
				 m->name, tp, s->gpus[gi].name, lw->name);
			if ((st = finish_chart(r, p, st, &err, caption)))
				return st;
		}
	}
	if (s->plots & KVP_REPORT_PLOT_VALIDATE) {
		const char *paths[KVP_SCENARIO_MAX];
		for (size_t k = 0; k < s->nresults; k++)
			paths[k] = s->results[k];
		if (!(p = new_chart(up, &err, "validate")))
			return kvp_report_fail(r, KVP_STATUS_NOMEM, NULL);
		st = kvp_plot_validate(p, paths, s->nresults, NULL, 0, 0.2, &err);
		if ((st = finish_chart(r, p, st, &err,
				       "kvplan's predictions against kvbench's measurements")))
			return st;
	}
	return KVP_STATUS_OK;
}
