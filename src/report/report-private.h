/* report-private.h: what the files of `kvplan report` (report*.c) share and
 * no caller needs: the document writer (report-doc.c), the options a
 * scenario spans and the report being written (report-sections.c), and the
 * sections kvp_report_write puts in order (report-sections.c,
 * report-charts.c).  Callers include report.h alone. */
#ifndef KVP_REPORT_PRIVATE_H
#define KVP_REPORT_PRIVATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report/report.h"

/* ---------------------------------------------------------- report-doc.c */

/* One document written twice: Markdown and HTML.  Text may hold `code` spans. */
struct report_doc {
	FILE *md, *html;
	size_t cols, first_number;  /* of the open table */
};

void kvp_report_doc_begin(struct report_doc *d, const char *title);
void kvp_report_doc_end(struct report_doc *d);
void kvp_report_doc_heading(struct report_doc *d, int level, const char *text);
/* A paragraph of class cls (NULL: none) from fmt. */
void kvp_report_doc_para_class(struct report_doc *d, const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define kvp_report_doc_para(d, ...) kvp_report_doc_para_class(d, NULL, __VA_ARGS__)
#define kvp_report_doc_note(d, ...) kvp_report_doc_para_class(d, "note", __VA_ARGS__)
/* A table of n columns; columns from `first_number` on are right-aligned numbers. */
void kvp_report_doc_table(struct report_doc *d, const char *const *head, size_t n,
			  size_t first_number);
void kvp_report_doc_row(struct report_doc *d, const char *const *cells);
void kvp_report_doc_table_end(struct report_doc *d);
void kvp_report_doc_pre(struct report_doc *d, const char *text);
void kvp_report_doc_image(struct report_doc *d, const char *alt, const char *src);

/* ----------------------------------------------------- report-sections.c */

/* One way to serve: a model on a GPU type, an engine, a split, a KV dtype. */
struct report_option {
	const struct kvp_model *m;
	const struct kvp_gpu *g;
	enum kvp_engine engine;
	uint32_t tp;
	enum kvp_dtype kv;
};

/* The report being written. */
struct report {
	const struct kvp_scenario *s;
	const struct kvp_report_opts *o;
	struct kvp_report_result *res;
	struct report_doc d;
	struct report_option *ops;
	size_t nops;
	struct kvp_budget *b;     /* scratch */
	char dir[1024];           /* DIR/plots */
	struct kvp_error *err;    /* what stops the report */
};

/* Every option of s (models x GPUs x engines x splits x KV dtypes) into out;
 * returns how many. */
size_t kvp_report_options_list(const struct kvp_scenario *s, struct report_option *out);
/* The budget options of one option under workload w (NULL: none). */
struct kvp_budget_opts kvp_report_budget_opts(const struct kvp_scenario *s, enum kvp_engine engine,
					      uint32_t tp, enum kvp_dtype kv,
					      const struct kvp_scenario_workload *w);
/* Stop the report with e (or with st when e says nothing). */
kvp_status kvp_report_fail(struct report *r, kvp_status st, const struct kvp_error *e);

void kvp_report_section_scenario(struct report *r);
kvp_status kvp_report_section_budget(struct report *r);
kvp_status kvp_report_section_summary(struct report *r);
kvp_status kvp_report_section_question(struct report *r, enum kvp_question q);
kvp_status kvp_report_section_arithmetic(struct report *r);

/* ------------------------------------------------------- report-charts.c */

kvp_status kvp_report_section_plots(struct report *r);

#endif
