/* plot-overlap.c: series a reader cannot see because another lies on top.
 *
 * Two GPUs with 79.15 and 79.19 GiB, or fp8 KV on one GPU and bf16 on one
 * with twice the memory, give the same line: whichever gnuplot draws last
 * hides the other, and a legend entry with no visible line makes a reviewer
 * doubt the chart.  kvp_plot_mark_overlaps finds each series none of whose
 * points can be told from those of another series on the same axis (within
 * KVP_PLOT_OVERLAP_REL, about a pixel on a chart of 600 pixels spanning a few
 * decades), and marks it: the writer then draws it over the other with open,
 * larger markers and a sparse dash so both show; its legend title says which
 * series it lies on, and a note says so in words.  Nothing is moved: the
 * numbers stay exact. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot.h"

/* y's value of series s at row r, or NaN when it is not drawn there (NaN,
 * or not positive on a log axis). */
static double drawn(const struct kvp_plot_panel *pn, size_t r, size_t s)
{
	double v = pn->y[r][s];
	bool log = pn->series[s].y2 ? pn->logy2 : pn->logy;
	return isnan(v) || (log && v <= 0) ? NAN : v;
}

static bool close_to(double a, double b)
{
	double m = fmax(fabs(a), fabs(b));
	return fabs(a - b) <= KVP_PLOT_OVERLAP_REL * m;
}

/* Lines: series j lies under or over series i at every row it is drawn. */
static bool lines_cover(const struct kvp_plot_panel *pn, size_t j, size_t i)
{
	size_t n = 0;
	for (size_t r = 0; r < pn->nrows; r++) {
		double a = drawn(pn, r, j);
		if (isnan(a))
			continue;
		double b = drawn(pn, r, i);
		if (isnan(b) || !close_to(a, b))
			return false;
		n++;
	}
	return n > 0;
}

/* Scatter: every point (x, y_j) of series j falls on a point of series i. */
static bool scatter_cover(const struct kvp_plot_panel *pn, size_t j, size_t i)
{
	size_t n = 0;
	for (size_t r = 0; r < pn->nrows; r++) {
		double a = drawn(pn, r, j);
		if (isnan(a))
			continue;
		bool hit = false;
		for (size_t q = 0; q < pn->nrows && !hit; q++) {
			double b = drawn(pn, q, i);
			hit = !isnan(b) && close_to(a, b) && close_to(pn->x[r], pn->x[q]);
		}
		if (!hit)
			return false;
		n++;
	}
	return n > 0;
}

size_t kvp_plot_mark_overlaps(struct kvp_plot *p)
{
	size_t marked = 0;
	for (size_t k = 0; k < p->npanels; k++) {
		struct kvp_plot_panel *pn = &p->panel[k];
		if (pn->style == KVP_PLOT_STYLE_STACKED)
			continue;
		for (size_t j = 0; j < pn->nseries; j++) {
			struct kvp_plot_series *sj = &pn->series[j];
			if (sj->over)
				continue;
			for (size_t i = 0; i < pn->nseries; i++) {
				struct kvp_plot_series *si = &pn->series[i];
				/* one of a pair is enough: the other is the one drawn over */
				if (i == j || si->y2 != sj->y2 || si->over == j + 1)
					continue;
				bool cover = pn->style == KVP_PLOT_STYLE_SCATTER ? scatter_cover(pn, j, i)
										 : lines_cover(pn, j, i);
				/* a pair that covers both ways: mark the later, drawn last */
				if (!cover || (i > j && (pn->style == KVP_PLOT_STYLE_SCATTER
							      ? scatter_cover(pn, i, j)
							      : lines_cover(pn, i, j))))
					continue;
				sj->over = i + 1;
				kvp_plot_note(p, "'%s' lies on '%s' at every point (within %g %%): drawn "
						 "with open markers", sj->title, si->title,
					      KVP_PLOT_OVERLAP_REL * 100);
				size_t len = strlen(sj->title);
				if (len + 8 < sizeof sj->title)
					snprintf(sj->title + len, sizeof sj->title - len, " (= %s)",
						 si->title);
				marked++;
				break;
			}
		}
	}
	return marked;
}
