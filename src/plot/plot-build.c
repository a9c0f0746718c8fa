/* plot-build.c: what the plot kinds share while they build a chart: axis
 * labels and units, the default context points, token counts and KV dtypes
 * as labels. */
#include "plot/plot-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

/* ------------------------------------------------------------ builders */

/* A panel's axis labels (with the display unit) and the base units of its
 * .dat columns. */
void kvp_plot_axes(struct kvp_plot_panel *pn, const char *xlabel, const char *xunit,
		 const char *ylabel, const char *yunit)
{
	snprintf(pn->xlabel, sizeof pn->xlabel, "%s", xlabel);
	snprintf(pn->xunit, sizeof pn->xunit, "%s", xunit);
	snprintf(pn->ylabel, sizeof pn->ylabel, "%s", ylabel);
	snprintf(pn->yunit, sizeof pn->yunit, "%s", yunit);
}

/* Powers of two from lo to hi, at most max of them. */
size_t kvp_plot_powers_of_two(uint64_t lo, uint64_t hi, uint64_t *out, size_t max)
{
	size_t n = 0;
	for (uint64_t v = lo; v <= hi && n < max; v *= 2)
		out[n++] = v;
	return n;
}

size_t kvp_plot_default_contexts(uint64_t *out, size_t max)
{
	return kvp_plot_powers_of_two(256, 131072, out, max);
}

/* "256", "4k", "128k", "1M": token counts as users type them (k = 1024). */
void kvp_plot_token_label(uint64_t n, char *buf, size_t size)
{
	if (n >= KVP_MIB && n % KVP_MIB == 0)
		snprintf(buf, size, "%lluM", (unsigned long long)(n / KVP_MIB));
	else if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, size, "%lluk", (unsigned long long)(n / 1024));
	else
		snprintf(buf, size, "%llu", (unsigned long long)n);
}

const char *kvp_plot_kv_name(const struct kvp_spec *s, enum kvp_dtype asked, char *buf, size_t size)
{
	if (asked == KVP_DTYPE_AUTO)
		snprintf(buf, size, "%s (auto)", kvp_dtype_name(s->kv_dtype));
	else
		snprintf(buf, size, "%s", kvp_dtype_name(s->kv_dtype));
	return buf;
}
