/* plot.c: the chart object every plot kind fills: panels of a style, their
 * series and rows, notes, and the image formats (terms).  plot-write.c
 * writes it as NAME.dat and NAME.gp, plot-render.c runs gnuplot on them, and
 * each plot-<kind>.c builds one chart from the model and budget libraries.
 * See plot.h for the file layout and the stance: the numbers are always
 * written, the image is optional. */
#include "plot/plot.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/gnuplot-writer.h"

static const char *const term_names[] = {"png", "svg", "pdf", "dumb"};

bool kvp_plot_term_parse(const char *s, enum kvp_plot_term *out)
{
	for (size_t i = 0; i < sizeof term_names / sizeof term_names[0]; i++)
		if (strcmp(s, term_names[i]) == 0) {
			*out = (enum kvp_plot_term)i;
			return true;
		}
	return false;
}

const char *kvp_plot_term_ext(enum kvp_plot_term t)
{
	return t == KVP_PLOT_TERM_DUMB ? NULL : term_names[t];
}

/* ------------------------------------------------------------ the object */

struct kvp_plot *kvp_plot_new(const char *name)
{
	struct kvp_plot *p = calloc(1, sizeof *p);
	if (p) /* a file stem: letters, digits, '.', '_', '-' (gnuplot-writer.h) */
		kvp_gp_stem(p->name, sizeof p->name, name);
	return p;
}

void kvp_plot_free(struct kvp_plot *p)
{
	free(p);
}

struct kvp_plot_panel *kvp_plot_add_panel(struct kvp_plot *p, enum kvp_plot_style style)
{
	if (p->npanels == KVP_PLOT_MAX_PANELS)
		return NULL;
	struct kvp_plot_panel *pn = &p->panel[p->npanels++];
	memset(pn, 0, sizeof *pn);
	pn->style = style;
	return pn;
}

struct kvp_plot_series *kvp_plot_add_series(struct kvp_plot_panel *pn, const char *title)
{
	if (pn->nseries == KVP_PLOT_MAX_SERIES)
		return NULL;
	struct kvp_plot_series *s = &pn->series[pn->nseries++];
	memset(s, 0, sizeof *s);
	snprintf(s->title, sizeof s->title, "%s", title);
	for (size_t r = 0; r < pn->nrows; r++)
		pn->y[r][pn->nseries - 1] = NAN;
	return s;
}

/* Copy src (NULL: empty) into dst, cut to fit. */
static void copy(char *dst, size_t size, const char *src)
{
	size_t n = src ? strlen(src) : 0;
	if (n >= size)
		n = size - 1;
	memcpy(dst, src ? src : "", n);
	dst[n] = 0;
}

bool kvp_plot_add_row(struct kvp_plot_panel *pn, double x, const char *label, const char *tag,
		      size_t *row)
{
	if (pn->nrows == KVP_PLOT_MAX_ROWS)
		return false;
	size_t r = pn->nrows++;
	pn->x[r] = x;
	copy(pn->label[r], sizeof pn->label[r], label);
	copy(pn->tag[r], sizeof pn->tag[r], tag);
	for (size_t s = 0; s < KVP_PLOT_MAX_SERIES; s++)
		pn->y[r][s] = NAN;
	if (row)
		*row = r;
	return true;
}

void kvp_plot_note(struct kvp_plot *p, const char *fmt, ...)
{
	if (p->nnotes == sizeof p->notes / sizeof p->notes[0])
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(p->notes[p->nnotes++], sizeof p->notes[0], fmt, ap);
	va_end(ap);
}
