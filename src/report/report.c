/* report.c: `kvplan report`'s writer: report.md and report.html under the
 * output directory, both replaced atomically or neither, the sections in
 * their order (report-sections.c, report-charts.c) over the document writer
 * (report-doc.c); the scenario is read by report-scenario.c.  See report.h. */
#include "report/report-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "base/atomic-file.h"

/* Start DIR/NAME through the atomic writer; *f is where its text goes. */
static kvp_status open_out(const char *dir, const char *name, struct kvp_afile *a, FILE **f,
			   struct kvp_error *err)
{
	char path[1200];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	kvp_status st = kvp_afile_open(a, path, err);
	*f = a->f;
	return st;
}

kvp_status kvp_report_write(const struct kvp_scenario *s, const struct kvp_report_opts *o,
			    struct kvp_report_result *res, struct kvp_error *err)
{
	memset(res, 0, sizeof *res);
	struct report r = {.s = s, .o = o, .res = res, .err = err};
	kvp_status st;
	if ((size_t)snprintf(r.dir, sizeof r.dir, "%s/plots", o->dir) >= sizeof r.dir)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "-o",
				     "a folder of at most %zu bytes", sizeof r.dir - 8);
	if ((st = kvp_plot_mkdir(r.dir, err)))
		return st;
	r.ops = calloc(KVP_SCENARIO_MAX_OPTIONS, sizeof *r.ops);
	r.b = malloc(sizeof *r.b);
	if (!r.ops || !r.b) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	r.nops = kvp_report_options_list(s, r.ops);
	struct kvp_afile md = {0}, html = {0};
	if ((st = open_out(o->dir, "report.md", &md, &r.d.md, err)) ||
	    (st = open_out(o->dir, "report.html", &html, &r.d.html, err)))
		goto out;

	kvp_report_doc_begin(&r.d, s->title);
	kvp_report_doc_heading(&r.d, 1, s->title);
	/* the description, paragraph by paragraph */
	char desc[sizeof s->description];
	snprintf(desc, sizeof desc, "%s", s->description);
	for (char *para = desc, *next; para && *para; para = next) {
		next = strstr(para, "\n\n");
		if (next) {
			*next = 0;
			next += 2;
		}
		if (*para)
			kvp_report_doc_para(&r.d, "%s", para);
	}
	kvp_report_doc_note(&r.d, "Made by kvplan %s from `%s` (`%s`). Every number comes from kvplan's "
		       "model and budget library; the last section shows the arithmetic. "
		       "Sizes are binary (GiB = 2^30 bytes); contexts count tokens (k = 1024).",
		 PACKAGE_VERSION, s->path, o->source ? o->source : "kvplan report");
	kvp_report_section_scenario(&r);
	if ((st = kvp_report_section_summary(&r)) || (st = kvp_report_section_budget(&r)))
		goto out;
	static const enum kvp_question qs[] = {KVP_QUESTION_FIT, KVP_QUESTION_MAX_CONTEXT,
					       KVP_QUESTION_UTILIZATION};
	for (size_t i = 0; i < sizeof qs / sizeof qs[0]; i++)
		if ((s->questions & qs[i]) && (st = kvp_report_section_question(&r, qs[i])))
			goto out;
	if ((st = kvp_report_section_plots(&r)) || (st = kvp_report_section_arithmetic(&r)))
		goto out;
	kvp_report_doc_end(&r.d);
out:
	/* both written, or neither replaced */
	if (!st)
		st = kvp_afile_commit(&md, err);
	if (!st)
		st = kvp_afile_commit(&html, err);
	kvp_afile_abort(&md);
	kvp_afile_abort(&html);
	free(r.ops);
	free(r.b);
	return st;
}
