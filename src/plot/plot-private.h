/* plot-private.h: what the plot files (plot*.c) share and no caller needs:
 * a file's path in the chart's directory (plot-write.c) and the builders'
 * helpers (plot-build.c).  Callers include plot.h alone. */
#ifndef KVP_PLOT_PRIVATE_H
#define KVP_PLOT_PRIVATE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"
#include "plot/plot.h"

/* DIR/NAME.EXT (DIR/NAME when ext is NULL), malloc'd; NULL when out of memory. */
char *kvp_plot_path_join(const char *dir, const char *name, const char *ext);

/* A panel's axis labels (with the display unit) and the base units of its
 * .dat columns. */
void kvp_plot_axes(struct kvp_plot_panel *pn, const char *xlabel, const char *xunit,
		   const char *ylabel, const char *yunit);
/* Powers of two from lo to hi, at most max of them. */
size_t kvp_plot_powers_of_two(uint64_t lo, uint64_t hi, uint64_t *out, size_t max);
/* "256", "4k", "128k", "1M": token counts as users type them (k = 1024). */
void kvp_plot_token_label(uint64_t n, char *buf, size_t size);
/* The KV dtype of s by name, "(auto)" after it when asked was auto; returns buf. */
const char *kvp_plot_kv_name(const struct kvp_spec *s, enum kvp_dtype asked, char *buf,
			     size_t size);

#endif
