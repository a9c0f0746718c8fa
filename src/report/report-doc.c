/* report-doc.c: one document written twice, as Markdown and as HTML:
 * headings, paragraphs and notes (text may hold `code` spans), tables with
 * right-aligned number columns, preformatted blocks and images, each escaped
 * for its format. */
#include "report/report-private.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ================================================================ the document */

static void html_text(FILE *f, const char *s, bool code_spans)
{
	bool code = false;
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '`':
			if (code_spans) {
				fputs(code ? "</code>" : "<code>", f);
				code = !code;
				break;
			}
			/* fall through */
		default: fputc(*s, f);
		}
	}
	if (code)
		fputs("</code>", f);
}

/* Markdown text: '<', which opens every HTML tag a renderer would pass
 * through, as &lt;, so no name becomes a tag or a script (& and > open
 * none, and stay readable inside `code` spans); outside `code` spans, [ ]
 * and \ backslash-escaped, so no name becomes a link, an image or a link
 * reference ([x](javascript:...), ![x](http://...), [x]: url), nor escapes
 * those escapes (a renderer shows \[ as [; inside a code span nothing is a
 * link and a backslash would show); in a table cell (`cell`) also | as \|
 * and a line break as a space; in a heading (`line`) a line break as a
 * space. */
static void md_put(FILE *f, const char *s, bool cell, bool line)
{
	bool code = false;
	for (; *s; s++) {
		switch (*s) {
		case '`':
			code = !code;
			fputc('`', f);
			break;
		case '[':
		case ']':
		case '\\':
			if (!code)
				fputc('\\', f);
			fputc(*s, f);
			break;
		case '<': fputs("&lt;", f); break;
		case '|':
			fputs(cell ? "\\|" : "|", f);
			break;
		case '\n':
		case '\r':
			fputc(cell || line ? ' ' : *s, f);
			break;
		default: fputc(*s, f);
		}
	}
}

static void md_cell(FILE *f, const char *s)
{
	md_put(f, s, true, true);
}

void kvp_report_doc_begin(struct report_doc *d, const char *title)
{
	fprintf(d->html, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
			 "<title>");
	html_text(d->html, title, false);
	fprintf(d->html,
		"</title>\n<style>\n"
		"body { font-family: sans-serif; max-width: 1200px; margin: 2em auto; padding: 0 1em;"
		" color: #222; line-height: 1.45; }\n"
		"table { border-collapse: collapse; margin: 1em 0; font-size: 0.92em; }\n"
		"th, td { border: 1px solid #bbb; padding: 0.25em 0.6em; }\n"
		"th { background: #eee; }\n"
		"td.n { text-align: right; font-variant-numeric: tabular-nums; }\n"
		"pre { background: #f6f6f6; padding: 0.8em; overflow-x: auto; }\n"
		"img { max-width: 100%%; border: 1px solid #ddd; }\n"
		".note { color: #555; font-size: 0.92em; }\n"
		"</style>\n</head>\n<body>\n");
}

void kvp_report_doc_end(struct report_doc *d)
{
	fprintf(d->html, "</body>\n</html>\n");
}

void kvp_report_doc_heading(struct report_doc *d, int level, const char *text)
{
	fprintf(d->md, "%.*s ", level, "######");
	md_put(d->md, text, false, true);
	fputs("\n\n", d->md);
	fprintf(d->html, "<h%d>", level);
	html_text(d->html, text, true);
	fprintf(d->html, "</h%d>\n", level);
}

void kvp_report_doc_para_class(struct report_doc *d, const char *cls, const char *fmt, ...)
{
	char buf[4096];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	fputs(cls ? "*" : "", d->md);
	md_put(d->md, buf, false, false);
	fputs(cls ? "*\n\n" : "\n\n", d->md);
	fprintf(d->html, cls ? "<p class=\"%s\">" : "<p>", cls);
	html_text(d->html, buf, true);
	fprintf(d->html, "</p>\n");
}

/* Columns from `first_number` on are right-aligned numbers. */
void kvp_report_doc_table(struct report_doc *d, const char *const *head, size_t n, size_t first_number)
{
	d->cols = n;
	d->first_number = first_number;
	fprintf(d->md, "|");
	for (size_t i = 0; i < n; i++) {
		fputc(' ', d->md);
		md_cell(d->md, head[i]);
		fprintf(d->md, " |");
	}
	fprintf(d->md, "\n|");
	for (size_t i = 0; i < n; i++)
		fprintf(d->md, "%s|", i >= first_number ? "---:" : "---");
	fprintf(d->md, "\n");
	fprintf(d->html, "<table>\n<tr>");
	for (size_t i = 0; i < n; i++) {
		fprintf(d->html, "<th>");
		html_text(d->html, head[i], false);
		fprintf(d->html, "</th>");
	}
	fprintf(d->html, "</tr>\n");
}

void kvp_report_doc_row(struct report_doc *d, const char *const *cells)
{
	size_t n = d->cols, first_number = d->first_number;
	fprintf(d->md, "|");
	fprintf(d->html, "<tr>");
	for (size_t i = 0; i < n; i++) {
		fputc(' ', d->md);
		md_cell(d->md, cells[i]);
		fprintf(d->md, " |");
		fprintf(d->html, i >= first_number ? "<td class=\"n\">" : "<td>");
		html_text(d->html, cells[i], false);
		fprintf(d->html, "</td>");
	}
	fprintf(d->md, "\n");
	fprintf(d->html, "</tr>\n");
}

void kvp_report_doc_table_end(struct report_doc *d)
{
	fprintf(d->md, "\n");
	fprintf(d->html, "</table>\n");
	d->cols = 0;
}

void kvp_report_doc_pre(struct report_doc *d, const char *text)
{
	/* a fence longer than any run of backquotes inside, so none closes it */
	size_t run = 0, longest = 0;
	for (const char *p = text; *p; p++)
		longest = (run = *p == '`' ? run + 1 : 0) > longest ? run : longest;
	int fence = longest < 3 ? 3 : (int)longest + 1;
	fprintf(d->md, "%.*s\n%s%.*s\n\n", fence, "````````````````````````````````", text,
		fence, "````````````````````````````````");
	fprintf(d->html, "<pre>");
	html_text(d->html, text, false);
	fprintf(d->html, "</pre>\n");
}

void kvp_report_doc_image(struct report_doc *d, const char *alt, const char *src)
{
	fputs("![", d->md);
	md_put(d->md, alt, true, true);
	fprintf(d->md, "](%s)\n\n", src); /* plots/STEM.EXT: a safe stem */
	fprintf(d->html, "<p><img src=\"");
	html_text(d->html, src, false);
	fprintf(d->html, "\" alt=\"");
	html_text(d->html, alt, false);
	fprintf(d->html, "\"></p>\n");
}
