/* plot.c: write a chart's data (.dat) and gnuplot script (.gp), run gnuplot
 * on them, and build the planner's charts from the model and budget
 * libraries.  See plot.h for the file layout and the stance: the numbers are
 * always written, the image is optional. */
#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "atomic-file.h"
#include "frag.h"
#include "gnuplot-writer.h"
#include "perf.h"
#include "units.h"
#include "validate.h"
#include "yaml-walk.h"

/* Image sizes in pixels: one panel, and the width each further panel adds. */
#define PLOT_WIDTH 1000
#define PLOT_HEIGHT 620
#define PLOT_PANEL_WIDTH 700
/* square panels (scatter): a cell a little wider than the square, taller
 * for the key below, so no column of white opens between two panels */
#define PLOT_SQUARE_WIDTH 600
#define PLOT_SQUARE_HEIGHT 720

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

/* ------------------------------------------------------------ writing */

/* A number as data: integers exactly (bytes up to 2^53), others to 10 digits. */
static void put_number(FILE *f, double v)
{
	if (isnan(v))
		kvp_gp_code(f, "NaN");
	else if (v == floor(v) && fabs(v) < 9007199254740992.0)
		kvp_gp_code(f, "%.0f", v);
	else
		kvp_gp_code(f, "%.10g", v);
}

/* The separator before the second and later terms of a plot command. */
static void put_sep(FILE *f, bool more)
{
	if (more)
		kvp_gp_code(f, ", \\\n     ");
}

static double scale_of(double s)
{
	return s > 0 ? s : 1;
}

static void write_dat(const struct kvp_plot *p, FILE *f)
{
	kvp_gp_code(f, "# kvplan plot ");
	kvp_gp_comment(f, p->name);
	kvp_gp_code(f, ": ");
	kvp_gp_comment(f, p->title);
	kvp_gp_code(f, "\n");
	if (p->source[0]) {
		kvp_gp_code(f, "# made by: ");
		kvp_gp_comment(f, p->source);
		kvp_gp_code(f, "\n");
	}
	for (size_t i = 0; i < p->nnotes; i++) {
		kvp_gp_code(f, "# note: ");
		kvp_gp_comment(f, p->notes[i]);
		kvp_gp_code(f, "\n");
	}
	kvp_gp_code(f, "# Drawn by ");
	kvp_gp_comment(f, p->name);
	kvp_gp_code(f, ".gp (gnuplot ");
	kvp_gp_comment(f, p->name);
	kvp_gp_code(f, ".gp in this directory).  One block per panel\n"
		       "# (gnuplot index N); values in base units, NaN where none exists.\n");
	for (size_t k = 0; k < p->npanels; k++) {
		const struct kvp_plot_panel *pn = &p->panel[k];
		if (k)
			kvp_gp_code(f, "\n\n");
		kvp_gp_code(f, "#\n# panel %zu: ", k);
		kvp_gp_comment(f, pn->title[0] ? pn->title : p->title);
		kvp_gp_code(f, "\n# columns: 1 x (");
		kvp_gp_comment(f, pn->xunit[0] ? pn->xunit : "-");
		kvp_gp_code(f, "); 2 label; 3 tag");
		for (size_t s = 0; s < pn->nseries; s++) {
			const char *unit = pn->series[s].y2 ? pn->y2unit : pn->yunit;
			kvp_gp_code(f, "; %zu ", s + 4);
			kvp_gp_comment(f, pn->series[s].title);
			kvp_gp_code(f, " (");
			kvp_gp_comment(f, unit[0] ? unit : "-");
			kvp_gp_code(f, ")");
		}
		kvp_gp_code(f, "\n");
		for (size_t r = 0; r < pn->nrows; r++) {
			put_number(f, pn->x[r]);
			kvp_gp_code(f, " ");
			kvp_gp_dat_string(f, pn->label[r]);
			kvp_gp_code(f, " ");
			kvp_gp_dat_string(f, pn->tag[r]);
			for (size_t s = 0; s < pn->nseries; s++) {
				kvp_gp_code(f, " ");
				put_number(f, pn->y[r][s]);
			}
			kvp_gp_code(f, "\n");
		}
	}
}

/* Room for the bars: about 90 pixels each beyond ten. */
static unsigned bars_width(const struct kvp_plot *p)
{
	unsigned w = 0;
	for (size_t k = 0; k < p->npanels; k++)
		if (p->panel[k].style == KVP_PLOT_STYLE_STACKED && p->panel[k].nrows > 10)
			w += (unsigned)(p->panel[k].nrows - 10) * 90;
	return w;
}

static void write_terminal(const struct kvp_plot *p, FILE *f, enum kvp_plot_term term)
{
	unsigned w = PLOT_WIDTH + (p->npanels > 1 ? (unsigned)(p->npanels - 1) * PLOT_PANEL_WIDTH : 0) +
		     bars_width(p);
	unsigned h = PLOT_HEIGHT;
	bool square = p->npanels > 0;
	for (size_t k = 0; k < p->npanels; k++)
		square = square && p->panel[k].style == KVP_PLOT_STYLE_SCATTER;
	if (square) {
		w = (unsigned)p->npanels * PLOT_SQUARE_WIDTH;
		h = PLOT_SQUARE_HEIGHT;
	}
	switch (term) {
	case KVP_PLOT_TERM_PNG:
		kvp_gp_code(f, "set terminal pngcairo noenhanced size %u,%u font \"sans,11\"\n", w, h);
		break;
	case KVP_PLOT_TERM_SVG:
		kvp_gp_code(f, "set terminal svg noenhanced size %u,%u font \"sans,11\" background \"white\"\n",
			    w, h);
		break;
	case KVP_PLOT_TERM_PDF:
		kvp_gp_code(f, "set terminal pdfcairo noenhanced size %.2fin,%.2fin font \"sans,9\"\n",
			    w / 100.0, h / 100.0);
		break;
	case KVP_PLOT_TERM_DUMB:
		kvp_gp_code(f, "set terminal dumb size %u,32\n", 100 + (unsigned)(p->npanels - 1) * 70);
		break;
	}
	if (term != KVP_PLOT_TERM_DUMB) {
		kvp_gp_code(f, "set output ");
		kvp_gp_file(f, p->name, kvp_plot_term_ext(term));
		kvp_gp_code(f, "\n");
	}
}

/* The y value of series s of the panel, scaled for display, as a gnuplot
 * expression; on a log axis values <= 0 are left undefined. */
static void put_y(FILE *f, const struct kvp_plot_panel *pn, size_t s)
{
	bool y2 = pn->series[s].y2;
	double scale = scale_of(y2 ? pn->y2scale : pn->yscale);
	bool log = y2 ? pn->logy2 : pn->logy;
	if (log)
		kvp_gp_code(f, "($%zu > 0 ? $%zu/%.17g : NaN)", s + 4, s + 4, scale);
	else
		kvp_gp_code(f, "($%zu/%.17g)", s + 4, scale);
}

static void put_color(FILE *f, const struct kvp_plot_series *s, size_t i)
{
	if (s->rgb)
		kvp_gp_code(f, " lc rgb \"#%06x\"", s->rgb & 0xffffff);
	else
		kvp_gp_code(f, " lc %d", s->color ? s->color : (int)i + 1);
}

static void put_style(FILE *f, const struct kvp_plot_series *s, size_t i)
{
	put_color(f, s, i);
	kvp_gp_code(f, " dt %d", s->dash ? s->dash : 1);
}

/* 'NAME.dat' index K: the data of panel k. */
static void put_data(FILE *f, const struct kvp_plot *p, size_t k)
{
	kvp_gp_file(f, p->name, "dat");
	kvp_gp_code(f, " index %zu", k);
}

static void write_lines(FILE *f, const struct kvp_plot *p, size_t k)
{
	const struct kvp_plot_panel *pn = &p->panel[k];
	if (pn->xtic_labels && pn->nrows) {
		kvp_gp_code(f, "set xtics (");
		for (size_t r = 0; r < pn->nrows; r++) {
			if (r)
				kvp_gp_code(f, ", ");
			kvp_gp_string(f, pn->label[r]);
			kvp_gp_code(f, " ");
			put_number(f, pn->x[r]);
		}
		kvp_gp_code(f, ")\n");
		/* a margin, so the end points and their tic labels are not cut */
		double lo = pn->x[0], hi = pn->x[pn->nrows - 1];
		if (pn->logx)
			kvp_gp_code(f, "set xrange [%.10g:%.10g]\n", lo / 1.15, hi * 1.15);
		else
			kvp_gp_code(f, "set xrange [%.10g:%.10g]\n", lo - (hi - lo) * 0.03,
				    hi + (hi - lo) * 0.03);
	}
	/* the mark, when it falls among the rows; the key names it */
	bool mark = pn->mark_x > 0 && pn->nrows && pn->mark_x >= pn->x[0] &&
		    pn->mark_x <= pn->x[pn->nrows - 1];
	if (mark)
		kvp_gp_code(f, "set arrow from %.10g, graph 0 to %.10g, graph 1 nohead dt 3 lw 1.5 "
			       "lc rgb \"gray30\"\n", pn->mark_x, pn->mark_x);
	/* log axes: the data's own range and a margin, so no point sits on the
	 * frame; linear axes (times, rates, counts) start at zero */
	if (pn->logy)
		kvp_gp_code(f, "set autoscale yfix\nset offsets 0, 0, graph 0.06, graph 0.06\n");
	else
		kvp_gp_code(f, "set yrange [0:*]\n");
	kvp_gp_code(f, pn->logy2 ? "set autoscale y2fix\n" : "set y2range [0:*]\n");
	/* past the mark, grey: each series in colour up to the last row within
	 * the mark, then again in grey from that row on (so the two join) */
	bool grey = mark && pn->grey_past_mark;
	double last_in = pn->x[0];
	for (size_t r = 0; grey && r < pn->nrows; r++)
		if (pn->x[r] <= pn->mark_x)
			last_in = pn->x[r];
	kvp_gp_code(f, "plot ");
	for (size_t s = 0; s < pn->nseries; s++) {
		put_sep(f, s);
		put_data(f, p, k);
		kvp_gp_code(f, " using 1:");
		if (grey)
			kvp_gp_code(f, "($1 <= %.10g ? ", pn->mark_x);
		put_y(f, pn, s);
		if (grey)
			kvp_gp_code(f, " : NaN)");
		/* a series lying on another: open markers around the other's filled
		 * ones, and gaps in its line that let the other's colour show */
		if (pn->series[s].over) {
			kvp_gp_code(f, " with linespoints lw 1.5 pt %zu ps 1.9", 4 + 2 * (s % 4));
			put_color(f, &pn->series[s], s);
			kvp_gp_code(f, " dt (3,9)");
		} else {
			kvp_gp_code(f, " with linespoints lw 2 pt %zu ps 0.8", 4 + 2 * (s % 4) + 1);
			put_style(f, &pn->series[s], s);
		}
		if (pn->series[s].y2)
			kvp_gp_code(f, " axes x1y2");
		kvp_gp_code(f, " title ");
		kvp_gp_string(f, pn->series[s].title);
	}
	for (size_t s = 0; grey && s < pn->nseries; s++) {
		put_sep(f, true);
		put_data(f, p, k);
		kvp_gp_code(f, " using 1:($1 >= %.10g ? ", last_in);
		put_y(f, pn, s);
		kvp_gp_code(f, " : NaN) with linespoints lw 1 pt %zu ps 0.8 lc rgb \"gray70\" dt 1",
			    4 + 2 * (s % 4));
		if (pn->series[s].y2)
			kvp_gp_code(f, " axes x1y2");
		kvp_gp_code(f, " notitle");
	}
	if (mark) {
		kvp_gp_code(f, ", \\\n     NaN with lines dt 3 lw 1.5 lc rgb \"gray30\" title ");
		kvp_gp_string(f, pn->mark_label);
	}
	if (grey)
		kvp_gp_code(f, ", \\\n     NaN with linespoints lw 1 pt 6 ps 0.8 lc rgb \"gray70\" "
			       "title 'grey: beyond the pool, cannot run'");
	kvp_gp_code(f, "\n");
}

static void write_stacked(FILE *f, const struct kvp_plot *p, size_t k)
{
	const struct kvp_plot_panel *pn = &p->panel[k];
	double scale = scale_of(pn->yscale);
	size_t stack[KVP_PLOT_MAX_SERIES], nstack = 0, outline = SIZE_MAX;
	for (size_t s = 0; s < pn->nseries; s++) {
		if (pn->series[s].outline)
			outline = s;
		else
			stack[nstack++] = s;
	}
	kvp_gp_code(f, "set style fill solid 0.85 border lc rgb \"gray30\"\n"
		       "set boxwidth 0.6\n"
		       "set xrange [-0.6:%.1f]\n"
		       "set yrange [0:*]\n"
		       "set offsets 0, 0, graph 0.08, 0\n"
		       "set xtics nomirror\n"
		       "set grid noxtics ytics\n",
		    pn->nrows ? pn->nrows - 0.4 : 0.6);
	/* labels of two lines ("gpu\ntp N") push the axis label down */
	for (size_t r = 0; r < pn->nrows; r++)
		if (strstr(pn->label[r], "\\n")) {
			kvp_gp_code(f, "set xlabel offset 0,-1\n");
			break;
		}
	kvp_gp_code(f, "plot ");
	/* the cumulative sums, tallest first, so each box covers the one above */
	for (size_t i = nstack; i-- > 0;) {
		put_sep(f, i + 1 < nstack);
		put_data(f, p, k);
		kvp_gp_code(f, " using 0:((");
		for (size_t j = 0; j <= i; j++)
			kvp_gp_code(f, j ? "+$%zu" : "$%zu", stack[j] + 4);
		kvp_gp_code(f, ")/%.17g)", scale);
		if (i + 1 == nstack)
			kvp_gp_code(f, ":xtic(2)");
		kvp_gp_code(f, " with boxes");
		put_style(f, &pn->series[stack[i]], stack[i]);
		kvp_gp_code(f, " title ");
		kvp_gp_string(f, pn->series[stack[i]].title);
	}
	if (outline != SIZE_MAX) {
		put_sep(f, true);
		put_data(f, p, k);
		kvp_gp_code(f, " using 0:($%zu/%.17g) with boxes fs empty lc rgb \"black\" lw 2 title ",
			    outline + 4, scale);
		kvp_gp_string(f, pn->series[outline].title);
	}
	/* the tags, above the taller of the stack and the outline */
	put_sep(f, true);
	put_data(f, p, k);
	kvp_gp_code(f, " using 0:(t = ");
	for (size_t j = 0; j < nstack; j++)
		kvp_gp_code(f, j ? "+$%zu" : "$%zu", stack[j] + 4);
	if (outline != SIZE_MAX)
		kvp_gp_code(f, ", (t > $%zu ? t : $%zu)", outline + 4, outline + 4);
	else
		kvp_gp_code(f, ", t");
	kvp_gp_code(f, ")/%.17g:3 with labels offset 0,0.8 font \",10\" notitle\n", scale);
}

static void write_scatter(FILE *f, const struct kvp_plot *p, size_t k)
{
	const struct kvp_plot_panel *pn = &p->panel[k];
	double scale = scale_of(pn->yscale);
	/* one range on both axes, square, so y = x is the diagonal */
	double lo = INFINITY, hi = -INFINITY;
	for (size_t r = 0; r < pn->nrows; r++)
		for (size_t s = 0; s < pn->nseries; s++) {
			double v[2] = {pn->x[r], pn->y[r][s]};
			if (isnan(v[1]))
				continue;
			for (int k = 0; k < 2; k++)
				if (!pn->logy || v[k] > 0) {
					lo = fmin(lo, v[k] / scale);
					hi = fmax(hi, v[k] / scale);
				}
		}
	/* log axes where the values span a factor of 4 or more: there the band
	 * lines run parallel to y = x and stay on the chart, where on linear
	 * axes they fan out of it */
	bool log = (pn->logx || pn->logy) && lo > 0 && hi / lo >= 4;
	if (lo <= hi) {
		if (log) {
			lo /= 1.4;
			hi *= 1.4;
		} else {
			double pad = fmax((hi - lo) * 0.1, fabs(hi) * 0.1);
			lo -= pad;
			hi += pad;
		}
		kvp_gp_code(f, "set xrange [%.10g:%.10g]\nset yrange [%.10g:%.10g]\n", lo, hi, lo, hi);
	}
	kvp_gp_code(f, "unset logscale\nset size square\n");
	if (log)
		kvp_gp_code(f, "set logscale xy 10\n");
	/* less than two decades: tics at 1, 2, 5 x 10^d, not only at the decades */
	if (log && lo <= hi && hi / lo < 100) {
		for (int axis = 0; axis < 2; axis++) {
			kvp_gp_code(f, axis ? "set ytics (" : "set xtics (");
			bool first = true;
			for (double d = pow(10, floor(log10(lo))); d <= hi; d *= 10)
				for (int m = 0; m < 3; m++) {
					double t = d * (m == 0 ? 1 : m == 1 ? 2 : 5);
					if (t < lo || t > hi)
						continue;
					kvp_gp_code(f, first ? "%.10g" : ", %.10g", t);
					first = false;
				}
			kvp_gp_code(f, ")\n");
		}
	}
	kvp_gp_code(f, "plot ");
	for (size_t s = 0; s < pn->nseries; s++) {
		put_sep(f, s);
		put_data(f, p, k);
		kvp_gp_code(f, " using ($1/%.17g):", scale);
		put_y(f, pn, s);
		int pt = pn->series[s].point ? pn->series[s].point : 7;
		/* lying on another: the open form (gnuplot's open types are one less) */
		if (pn->series[s].over)
			kvp_gp_code(f, " with points pt %d ps 2.2", pt - 1);
		else
			kvp_gp_code(f, " with points pt %d ps 1.2", pt);
		put_style(f, &pn->series[s], s);
		kvp_gp_code(f, " title ");
		kvp_gp_string(f, pn->series[s].title);
	}
	kvp_gp_code(f, ", \\\n     x with lines lc rgb \"black\" lw 1 title \"y = x\"");
	if (pn->band > 0)
		kvp_gp_code(f, ", \\\n     x * %.6g with lines lc rgb \"gray50\" dt 2 title \"+/- %g %%\""
			       ", \\\n     x * %.6g with lines lc rgb \"gray50\" dt 2 notitle",
			    1 + pn->band, pn->band * 100, 1 - pn->band);
	kvp_gp_code(f, "\n");
}

/* linetypes 1 to 8: purple, green, blue, vermillion, brown, magenta, red,
 * black; each at least 4.1:1 against white (WCAG contrast ratio) */
static const unsigned palette[] = {0x9400d3, 0x008560, 0x0072b2, 0xc85000,
				   0x8c564b, 0xe7298a, 0xc41a0e, 0x000000};

static void write_gp(const struct kvp_plot *p, FILE *f, enum kvp_plot_term term)
{
	kvp_gp_code(f, "# ");
	kvp_gp_comment(f, p->name);
	kvp_gp_code(f, ".gp: ");
	kvp_gp_comment(f, p->title);
	kvp_gp_code(f, "\n# Written by kvplan; edit it and re-render with 'gnuplot ");
	kvp_gp_comment(f, p->name);
	kvp_gp_code(f, ".gp' in this\n# directory.  Data: ");
	kvp_gp_comment(f, p->name);
	kvp_gp_code(f, ".dat, one block per panel (index N), base units.\n");
	write_terminal(p, f, term);
	kvp_gp_code(f, "set encoding utf8\nset grid\n");
	/* gnuplot's own colours 3, 4 and 5 (sky blue, orange, yellow) are faint
	 * on white: eight that all stand out, told apart by colour-blind eyes
	 * too (Okabe-Ito's darker hues, then red, brown, magenta, black) */
	for (size_t i = 0; i < sizeof palette / sizeof palette[0]; i++)
		kvp_gp_code(f, "set linetype %zu lc rgb \"#%06x\"\n", i + 1, palette[i]);
	bool multi = p->npanels > 1;
	if (multi) {
		kvp_gp_code(f, "set multiplot layout 1,%zu title ", p->npanels);
		kvp_gp_string(f, p->title);
		kvp_gp_code(f, " font \",12\"\n");
	}
	for (size_t k = 0; k < p->npanels; k++) {
		const struct kvp_plot_panel *pn = &p->panel[k];
		bool has_y2 = false;
		for (size_t s = 0; s < pn->nseries; s++)
			has_y2 |= pn->series[s].y2;
		kvp_gp_code(f, "\n# panel %zu\n", k);
		kvp_gp_code(f, "unset logscale\nunset y2tics\nunset y2label\nunset arrow\nunset label\n"
			       "set autoscale\n"
			       "set format y \"%% h\"\n"
			       "set xtics autofreq norotate\nset ytics mirror\nset size noratio\n"
			       "set offsets 0, 0, 0, 0\nset xlabel offset 0,0\nset key below Left reverse height 1\n");
		kvp_gp_code(f, "set title ");
		kvp_gp_string(f, multi ? pn->title : p->title);
		kvp_gp_code(f, "\nset xlabel ");
		kvp_gp_string(f, pn->xlabel);
		kvp_gp_code(f, "\nset ylabel ");
		kvp_gp_string(f, pn->ylabel);
		kvp_gp_code(f, "\n");
		if (has_y2) {
			kvp_gp_code(f, "set y2label ");
			kvp_gp_string(f, pn->y2label);
			kvp_gp_code(f, "\nset ytics nomirror\nset y2tics\n");
		}
		if (pn->logx)
			kvp_gp_code(f, "set logscale x 2\n");
		if (pn->logy)  /* 1000000, not 1e+06 */
			kvp_gp_code(f, "set logscale y\nset format y \"%%.10g\"\n");
		if (pn->logy2 && has_y2)
			kvp_gp_code(f, "set logscale y2\n");
		switch (pn->style) {
		case KVP_PLOT_STYLE_LINES:
			write_lines(f, p, k);
			break;
		case KVP_PLOT_STYLE_STACKED:
			write_stacked(f, p, k);
			break;
		case KVP_PLOT_STYLE_SCATTER:
			write_scatter(f, p, k);
			break;
		}
	}
	if (multi)
		kvp_gp_code(f, "unset multiplot\n");
}

/* "DIR/NAME.EXT" (EXT NULL: "DIR/NAME") in memory of its own size, so no
 * path is ever cut to a different file's; NULL when memory runs out. */
static char *path_join(const char *dir, const char *name, const char *ext)
{
	size_t size = strlen(dir) + strlen(name) + (ext ? strlen(ext) : 0) + 3;
	char *path = malloc(size);
	if (path)
		snprintf(path, size, ext ? "%s/%s.%s" : "%s/%s", dir, name, ext ? ext : "");
	return path;
}

static kvp_status write_file(const char *dir, const char *name, const char *ext,
			     const struct kvp_plot *p, enum kvp_plot_term term, struct kvp_error *err)
{
	char *path = path_join(dir, name, ext);
	if (!path)
		return kvp_error_set(err, KVP_STATUS_NOMEM, dir, 0, 0, NULL, "out of memory");
	struct kvp_afile a;
	kvp_status st = kvp_afile_open(&a, path, err);
	free(path);
	if (st)
		return st;
	if (strcmp(ext, "dat") == 0)
		write_dat(p, a.f);
	else
		write_gp(p, a.f, term);
	return kvp_afile_commit(&a, err);
}

kvp_status kvp_plot_write(const struct kvp_plot *p, const char *dir, enum kvp_plot_term term,
			  struct kvp_error *err)
{
	kvp_status st = write_file(dir, p->name, "dat", p, term, err);
	return st ? st : write_file(dir, p->name, "gp", p, term, err);
}

kvp_status kvp_plot_mkdir(const char *dir, struct kvp_error *err)
{
	char *path = strdup(dir); /* any length: never a different, cut folder */
	if (!path)
		return kvp_error_set(err, KVP_STATUS_NOMEM, dir, 0, 0, NULL, "out of memory");
	kvp_status st = KVP_STATUS_OK;
	for (char *s = path[0] ? path + 1 : path;; s++) {
		if (*s != '/' && *s)
			continue;
		char c = *s;
		*s = 0;
		if (mkdir(path, 0777) != 0 && errno != EEXIST) {
			st = kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL,
					   "cannot create directory: %s", strerror(errno));
			goto out;
		}
		*s = c;
		if (!c)
			break;
	}
	struct stat sb;
	if (stat(path, &sb) != 0 || !S_ISDIR(sb.st_mode))
		st = kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL, "not a directory");
out:
	free(path);
	return st;
}

/* ------------------------------------------------------------ rendering */

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

kvp_status kvp_plot_render(const struct kvp_plot *p, const char *dir, enum kvp_plot_term term,
			   const char *gnuplot, struct kvp_error *err)
{
	/* the program and image paths in memory of their own size: never cut */
	char *prog = NULL, *image = NULL, script[sizeof p->name + 8];
	const char *ext = kvp_plot_term_ext(term);
	kvp_status st = KVP_STATUS_OK;
	if (!gnuplot || !*gnuplot)
		gnuplot = "gnuplot";
	/* the child runs in DIR: a relative program path must not move with it */
	if (gnuplot[0] != '/' && strchr(gnuplot, '/')) {
		char *cwd = getcwd(NULL, 0);
		if (!cwd)
			return kvp_error_set(err, KVP_STATUS_IO, NULL, 0, 0, NULL,
					     "cannot find the current directory: %s", strerror(errno));
		prog = path_join(cwd, gnuplot, NULL);
		free(cwd);
	} else {
		prog = strdup(gnuplot);
	}
	if (!prog || (ext && !(image = path_join(dir, p->name, ext)))) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	snprintf(script, sizeof script, "%s.gp", p->name);
	if (image)
		unlink(image); /* a stale image must not pass for a new one */

	int errp[2] = {-1, -1}, execp[2] = {-1, -1};
	if (pipe(errp) != 0 || pipe(execp) != 0 || fcntl(execp[1], F_SETFD, FD_CLOEXEC) != 0) {
		close_fd(&errp[0]), close_fd(&errp[1]), close_fd(&execp[0]), close_fd(&execp[1]);
		st = kvp_error_set(err, KVP_STATUS_IO, NULL, 0, 0, NULL, "pipe: %s", strerror(errno));
		goto out;
	}
	fflush(stdout);
	pid_t pid = fork();
	if (pid < 0) {
		close_fd(&errp[0]), close_fd(&errp[1]), close_fd(&execp[0]), close_fd(&execp[1]);
		st = kvp_error_set(err, KVP_STATUS_IO, NULL, 0, 0, NULL, "fork: %s", strerror(errno));
		goto out;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, 0);
		dup2(errp[1], 2);
		close(errp[0]);
		close(execp[0]);
		int e = 0;
		if (chdir(dir) != 0)
			e = errno;
		else
			execlp(prog, prog, script, (char *)NULL);
		if (!e)
			e = errno;
		if (write(execp[1], &e, sizeof e) < 0)
			_exit(126);
		_exit(127);
	}
	close_fd(&errp[1]);
	close_fd(&execp[1]);
	/* keep the tail of what gnuplot says, for the message */
	char said[4096];
	size_t nsaid = 0;
	for (;;) {
		char buf[1024];
		ssize_t n = read(errp[0], buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n; i++) {
			if (nsaid == sizeof said - 1) {
				memmove(said, said + sizeof said / 2, sizeof said / 2 - 1);
				nsaid = sizeof said / 2 - 1;
			}
			said[nsaid++] = buf[i];
		}
	}
	said[nsaid] = 0;
	int exec_errno = 0;
	ssize_t got = read(execp[0], &exec_errno, sizeof exec_errno);
	close_fd(&errp[0]);
	close_fd(&execp[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (got == (ssize_t)sizeof exec_errno) {
		st = kvp_error_set(err, KVP_STATUS_NOT_FOUND, NULL, 0, 0, NULL, "cannot run %s: %s",
				   prog, strerror(exec_errno));
		goto out;
	}
	/* the last non-empty line gnuplot printed */
	while (nsaid && (said[nsaid - 1] == '\n' || said[nsaid - 1] == ' '))
		said[--nsaid] = 0;
	const char *last = strrchr(said, '\n');
	last = last ? last + 1 : said;
	struct stat sb;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		st = kvp_error_set(err, KVP_STATUS_IO, NULL, 0, 0, NULL, "%s %s failed%s%s", prog,
				   script, *last ? ": " : "", last);
	else if (image && (stat(image, &sb) != 0 || sb.st_size == 0))
		st = kvp_error_set(err, KVP_STATUS_IO, image, 0, 0, NULL, "%s wrote no image%s%s",
				   prog, *last ? ": " : "", last);
out:
	free(prog);
	free(image);
	return st;
}

/* ------------------------------------------------------------ builders */

/* A panel's axis labels (with the display unit) and the base units of its
 * .dat columns. */
static void axes(struct kvp_plot_panel *pn, const char *xlabel, const char *xunit,
		 const char *ylabel, const char *yunit)
{
	snprintf(pn->xlabel, sizeof pn->xlabel, "%s", xlabel);
	snprintf(pn->xunit, sizeof pn->xunit, "%s", xunit);
	snprintf(pn->ylabel, sizeof pn->ylabel, "%s", ylabel);
	snprintf(pn->yunit, sizeof pn->yunit, "%s", yunit);
}

/* Powers of two from lo to hi, at most max of them. */
static size_t powers_of_two(uint64_t lo, uint64_t hi, uint64_t *out, size_t max)
{
	size_t n = 0;
	for (uint64_t v = lo; v <= hi && n < max; v *= 2)
		out[n++] = v;
	return n;
}

size_t kvp_plot_default_contexts(uint64_t *out, size_t max)
{
	return powers_of_two(256, 131072, out, max);
}

/* "256", "4k", "128k", "1M": token counts as users type them (k = 1024). */
static void token_label(uint64_t n, char *buf, size_t size)
{
	if (n >= KVP_MIB && n % KVP_MIB == 0)
		snprintf(buf, size, "%lluM", (unsigned long long)(n / KVP_MIB));
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, size, "%lluk", (unsigned long long)(n / 1024));
	else
		snprintf(buf, size, "%llu", (unsigned long long)n);
}

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

static const char *kv_name(const struct kvp_spec *s, enum kvp_dtype asked, char *buf, size_t size)
{
	if (asked == KVP_DTYPE_AUTO)
		snprintf(buf, size, "%s (auto)", kvp_dtype_name(s->kv_dtype));
	else
		snprintf(buf, size, "%s", kvp_dtype_name(s->kv_dtype));
	return buf;
}

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
	axes(pn, "GPU and tensor-parallel size (memory of one GPU)", "bar",
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
				kv_name(&b->spec, o->kv_dtype, kv, sizeof kv);
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
	token_label(context, ctx, sizeof ctx);
	snprintf(p->title, sizeof p->title,
		 "Memory budget of one GPU: %s, engine %s, KV %s, block %u\\n"
		 "max sequences of %s tokens above each bar",
		 m->name, kvp_engine_name(engine), kv, block, ctx);
out:
	free(b);
	return st;
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
	axes(pn, "context (tokens per sequence, k = 1024)", "tokens",
	     "KV cache of one sequence on one GPU (GiB)", "bytes");
	pn->yscale = (double)KVP_GIB;
	pn->logx = pn->logy = pn->xtic_labels = true;
	char lbl[32];
	for (size_t c = 0; c < ncontexts; c++) {
		token_label(contexts[c], lbl, sizeof lbl);
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
			kv_name(s, kv_dtype, kv, sizeof kv);
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
	axes(pn, "context (tokens per sequence, k = 1024)", "tokens",
	     "max concurrent sequences", "sequences");
	pn->logx = pn->logy = pn->xtic_labels = true;
	char lbl[KVP_PLOT_TITLE_MAX];
	uint64_t row_ctx[KVP_PLOT_MAX_ROWS]; /* each row's context as an integer */
	for (size_t c = 0; c < ncontexts; c++) {
		if (m->max_context && contexts[c] > m->max_context)
			continue;
		token_label(contexts[c], lbl, sizeof lbl);
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
					kv_name(&b->spec, kv[ki], kvn, sizeof kvn);
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

size_t kvp_plot_default_batches(uint64_t *out, size_t max)
{
	return powers_of_two(1, 512, out, max);
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
	token_label(context, n1, sizeof n1);
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
	axes(pb, "context (tokens per sequence, k = 1024)", "tokens",
	     "time per decode step (ms)", "seconds");
	pb->yscale = 1e-3;
	pb->logx = pb->logy = pb->xtic_labels = true;
	kvp_plot_add_series(pb, "KV in GPU memory")->color = 8;
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
		token_label(contexts[c], lbl, sizeof lbl);
		if (!kvp_plot_add_row(pb, (double)contexts[c], lbl, NULL, &r))
			break;
		if ((st = kvp_perf_decode_step(&pc, batch, contexts[c], &step, err)))
			goto out;
		pb->y[r][0] = step.time_s;
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

kvp_status kvp_plot_block_size(struct kvp_plot *p, const struct kvp_model *m,
			       const struct kvp_gpu *g, const struct kvp_budget_opts *o,
			       const struct kvp_workload *w, const uint32_t *blocks, size_t nblocks,
			       uint64_t requests, struct kvp_error *err)
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
static double panel_median_error(const struct kvp_plot_panel *pn)
{
	double errs[KVP_PLOT_MAX_ROWS * 2];
	size_t n = 0;
	for (size_t r = 0; r < pn->nrows; r++)
		for (size_t s = 0; s < pn->nseries && n < sizeof errs / sizeof errs[0]; s++)
			if (!isnan(pn->y[r][s]) && pn->y[r][s] > 0)
				errs[n++] = fabs(pn->x[r] - pn->y[r][s]) / pn->y[r][s];
	for (size_t i = 1; i < n; i++)  /* insertion sort: at most 256 */
		for (size_t j = i; j > 0 && errs[j - 1] > errs[j]; j--) {
			double t = errs[j];
			errs[j] = errs[j - 1];
			errs[j - 1] = t;
		}
	return n ? (n % 2 ? errs[n / 2] : (errs[n / 2 - 1] + errs[n / 2]) / 2) : 0;
}

static bool validate_point(struct kvp_plot_panel *a, struct kvp_plot_panel *b,
			   const struct kvp_vpoint *v)
{
	bool dec = v->kind == KVP_VPOINT_DECODE;
	struct kvp_plot_panel *pn = dec ? a : b;
	const char *slash = strrchr(v->file, '/');
	char title[KVP_PLOT_TITLE_MAX], label[KVP_PLOT_LABEL_MAX];
	/* MHA and GQA (and MQA) steps differ in what they read per query head:
	 * separate legend entries */
	uint32_t hq = v->shape.num_heads, hkv = v->shape.num_kv_heads;
	const char *attn = hkv == hq ? "MHA" : hkv == 1 ? "MQA" : "GQA";
	snprintf(title, sizeof title, "%.40s, %s, %s (%.64s)", v->device[0] ? v->device : v->backend,
		 kvp_dtype_name(v->shape.kv_dtype), attn, slash ? slash + 1 : v->file);
	size_t s = 0;
	while (s < pn->nseries && strcmp(pn->series[s].title, title) != 0)
		s++;
	if (s == pn->nseries) {
		/* colour by KV dtype, in the order first seen; shape by attention */
		char dt[48];
		snprintf(dt, sizeof dt, ", %s, ", kvp_dtype_name(v->shape.kv_dtype));
		int color = 0, most = 0;
		for (size_t i = 0; i < pn->nseries; i++) {
			if (!color && strstr(pn->series[i].title, dt))
				color = pn->series[i].color;
			most = pn->series[i].color > most ? pn->series[i].color : most;
		}
		struct kvp_plot_series *ns = kvp_plot_add_series(pn, title);
		if (!ns)
			return true; /* too many series: the point is left out, the rest go on */
		ns->color = color ? color : most + 1;
		ns->point = hkv == hq ? 7 : hkv == 1 ? 5 : 9;   /* circle, square, triangle */
	}
	if (dec)
		snprintf(label, sizeof label, "B %llu, n %llu, P %u", (unsigned long long)v->batch,
			 (unsigned long long)v->context, v->shape.block_size);
	else
		snprintf(label, sizeof label, "%u:%u, ctx %llu", v->shape.num_heads,
			 v->shape.num_kv_heads, (unsigned long long)v->context);
	size_t r;
	if (!kvp_plot_add_row(pn, dec ? v->predicted_s : (double)v->predicted.num_blocks, label, NULL,
			      &r))
		return false;
	pn->y[r][s] = dec ? v->measured_s : (double)v->blocks;
	return true;
}

kvp_status kvp_plot_validate(struct kvp_plot *p, const char *const *paths, size_t npaths,
			     const struct kvp_gpu *gpu, double efficiency, double band,
			     struct kvp_error *err)
{
	/* both panels, the empty one dropped at the end */
	size_t first = p->npanels;
	struct kvp_plot_panel *a = kvp_plot_add_panel(p, KVP_PLOT_STYLE_SCATTER);
	struct kvp_plot_panel *b = kvp_plot_add_panel(p, KVP_PLOT_STYLE_SCATTER);
	if (!a || !b)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "too many panels");
	struct kvp_validation v = {0};
	kvp_status st = KVP_STATUS_OK;
	for (size_t i = 0; i < npaths && !st; i++)
		st = kvp_validation_load(&v, paths[i], gpu, err);
	if (!st && !v.n)
		st = kvp_error_set(err, KVP_STATUS_INVALID, npaths ? paths[0] : NULL, 0, 0, "points",
				   "no point that passed validation and was timed");
	if (st) {
		kvp_validation_free(&v);
		return st;
	}
	kvp_validation_evaluate(&v, efficiency, 1, 1);
	size_t used = 0;
	for (; used < v.n; used++)
		if (!validate_point(a, b, &v.points[used])) {
			kvp_plot_note(p, "more than %d points of a kind: the rest left out",
				      KVP_PLOT_MAX_ROWS);
			break;
		}
	if (v.skipped)
		kvp_plot_note(p, "%zu point(s) that failed validation or were not timed left out",
			      v.skipped);
	if (v.decode_n)
		kvp_plot_note(p, "decode predicted on %s at efficiency %.3g%s", v.points[0].basis,
			      efficiency > 0 ? efficiency : v.points[0].base_efficiency,
			      efficiency > 0 ? " (calibrated)" : "");
	kvp_validation_free(&v);
	/* the median relative error of each panel: time and blocks are
	 * different questions, one median over both would answer neither */
	double med_a = panel_median_error(a), med_b = panel_median_error(b);
	if (a->nrows) {
		struct kvp_plot_panel *pn = a;
		snprintf(pn->title, sizeof pn->title, "decode step time: %zu point%s, median |error| "
			 "%.1f %%", a->nrows, a->nrows == 1 ? "" : "s", 100 * med_a);
		axes(pn, "predicted by kvplan (ms)", "seconds",
		     "measured by kvbench, median (ms)", "seconds");
		pn->yscale = 1e-3;
		pn->logx = pn->logy = true;
		pn->band = band;
	}
	if (b->nrows) {
		struct kvp_plot_panel *pn = b;
		snprintf(pn->title, sizeof pn->title, "KV pool capacity: %zu point%s, median |error| "
			 "%.2f %%", b->nrows, b->nrows == 1 ? "" : "s", 100 * med_b);
		axes(pn, "predicted KV blocks", "blocks",
		     "blocks kvbench allocated", "blocks");
		pn->logx = pn->logy = true;
		pn->band = band;
	}
	if (!b->nrows)
		p->npanels--;
	else if (!a->nrows) {
		memmove(&p->panel[first], b, sizeof *b);
		p->npanels--;
	}
	char files[256] = "";
	for (size_t i = 0; i < npaths && strlen(files) < 200; i++) {
		const char *slash = strrchr(paths[i], '/');
		snprintf(files + strlen(files), sizeof files - strlen(files), "%s%s", i ? ", " : "",
			 slash ? slash + 1 : paths[i]);
	}
	char meds[160] = "";
	if (a->nrows)
		snprintf(meds, sizeof meds, "decode time: median |error| %.1f %% over %zu point%s",
			 100 * med_a, a->nrows, a->nrows == 1 ? "" : "s");
	if (b->nrows)
		snprintf(meds + strlen(meds), sizeof meds - strlen(meds),
			 "%scapacity: median |error| %.2f %% over %zu point%s", a->nrows ? "; " : "",
			 100 * med_b, b->nrows, b->nrows == 1 ? "" : "s");
	snprintf(p->title, sizeof p->title,
		 "kvplan's predictions against kvbench's measurements: %s\\n%s; band +/- %g %%",
		 files, meds, 100 * band);
	return KVP_STATUS_OK;
}
