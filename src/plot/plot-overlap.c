/* plot-overlap.c: series a reader cannot see because another lies on top.
 *
 * Two GPUs with 79.15 and 79.19 GiB, or fp8 KV on one GPU and bf16 on one
 * with twice the memory, give the same line: whichever gnuplot draws last
 * hides the other, and a legend entry with no visible line makes a reviewer
 * doubt the chart.  kvp_plot_mark_overlaps finds each series none of whose
 * points can be told from a point of another series on the same axis (within
 * KVP_PLOT_OVERLAP_REL, about a pixel on a chart of 600 pixels spanning a few
 * decades), and marks it: the writer then draws it over the other with open,
 * larger markers and a sparse dash so both show; its legend title says which
 * series it lies on, and a note says so in words.  Nothing is moved: the
 * numbers stay exact. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "plot/plot.h"

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

/* The first unmarked series other than j, on j's axis, with a point on
 * series j's point at row r (lines: at the same x; scatter: anywhere); -1
 * when none. */
static long cover_at(const struct kvp_plot_panel *pn, size_t j, size_t r)
{
	double a = drawn(pn, r, j);
	for (size_t i = 0; i < pn->nseries; i++) {
		const struct kvp_plot_series *si = &pn->series[i];
		if (i == j || si->over || si->y2 != pn->series[j].y2)
			continue;
		if (pn->style != KVP_PLOT_STYLE_SCATTER) {
			double b = drawn(pn, r, i);
			if (!isnan(b) && close_to(a, b))
				return (long)i;
			continue;
		}
		for (size_t q = 0; q < pn->nrows; q++) {
			double b = drawn(pn, q, i);
			if (!isnan(b) && close_to(a, b) && close_to(pn->x[r], pn->x[q]))
				return (long)i;
		}
	}
	return -1;
}

/* Mark series j when each of its drawn points lies on a point of another
 * unmarked series; its title and a note name them (two, then "..."). */
static bool mark_one(struct kvp_plot *p, struct kvp_plot_panel *pn, size_t j)
{
	size_t on[KVP_PLOT_MAX_SERIES], non = 0, drawn_n = 0;
	for (size_t r = 0; r < pn->nrows; r++) {
		if (isnan(drawn(pn, r, j)))
			continue;
		drawn_n++;
		long i = cover_at(pn, j, r);
		if (i < 0)
			return false;
		size_t k = 0;
		while (k < non && on[k] != (size_t)i)
			k++;
		if (k == non)
			on[non++] = (size_t)i;
	}
	if (!drawn_n)
		return false;
	struct kvp_plot_series *sj = &pn->series[j];
	char names[2 * KVP_PLOT_TITLE_MAX + 16];
	snprintf(names, sizeof names, "%s%s%s%s", pn->series[on[0]].title, non > 1 ? ", " : "",
		 non > 1 ? pn->series[on[1]].title : "", non > 2 ? ", ..." : "");
	kvp_plot_note(p, "'%s' lies on '%s' at every point (within %g %%): drawn with open "
			 "markers", sj->title, names, KVP_PLOT_OVERLAP_REL * 100);
	sj->over = on[0] + 1;
	size_t len = strlen(sj->title);
	if (len + 8 < sizeof sj->title)
		snprintf(sj->title + len, sizeof sj->title - len, " (= %.*s)",
			 (int)(sizeof sj->title - len - 6), names);
	return true;
}

size_t kvp_plot_mark_overlaps(struct kvp_plot *p)
{
	size_t marked = 0;
	for (size_t k = 0; k < p->npanels; k++) {
		struct kvp_plot_panel *pn = &p->panel[k];
		if (pn->style == KVP_PLOT_STYLE_STACKED)
			continue;
		/* last drawn first: of two that coincide the later is marked and
		 * drawn open over the earlier, which then counts as seen */
		for (size_t j = pn->nseries; j-- > 0;)
			marked += mark_one(p, pn, j);
	}
	return marked;
}
