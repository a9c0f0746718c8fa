/* plot-write.c: a chart written as files: its data (NAME.dat, exact values
 * in base units, one block per panel) and the gnuplot script that draws it
 * (NAME.gp: lines, stacked bars or a square scatter per panel, each in the
 * display unit of its axis), both replaced atomically; and the output
 * directory made when missing. */
#include "plot/plot-private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "base/atomic-file.h"
#include "out/gnuplot-writer.h"

/* Image sizes in pixels: one panel, and the width each further panel adds. */
#define PLOT_WIDTH 1000
#define PLOT_HEIGHT 620
#define PLOT_PANEL_WIDTH 700
/* square panels (scatter): a cell a little wider than the square, taller
 * for the key below, so no column of white opens between two panels */
#define PLOT_SQUARE_WIDTH 600
#define PLOT_SQUARE_HEIGHT 720

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
		if (pn->series[s].points) {
			kvp_gp_code(f, " with points pt 7 ps 0.9");
			put_color(f, &pn->series[s], s);
		} else if (pn->series[s].over) {
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
	/* each point named by its row's label (the .dat's column 2) */
	for (size_t s = 0; pn->point_labels && s < pn->nseries; s++) {
		put_sep(f, true);
		put_data(f, p, k);
		kvp_gp_code(f, " using 1:");
		put_y(f, pn, s);
		kvp_gp_code(f, ":2 with labels offset 0,0.9 font \",8\"");
		if (pn->series[s].y2)
			kvp_gp_code(f, " axes x1y2");
		kvp_gp_code(f, " notitle");
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
char *kvp_plot_path_join(const char *dir, const char *name, const char *ext)
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
	char *path = kvp_plot_path_join(dir, name, ext);
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
