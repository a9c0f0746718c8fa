/* gemm-table.c: read a measured GEMM table and interpolate it (gemm-table.h).
 * The reader checks every field and the grid's completeness; the
 * interpolation is trilinear in log space with the clamping rules stated in
 * the header. */
#include "time/gemm-table.h"
#include "time/table-line.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS (KVP_GEMM_MAX_M * KVP_GEMM_MAX_NK * KVP_GEMM_MAX_NK)

struct row {
	double v[4]; /* m n k tflops */
	int line;
};

static const char *const fields[4] = {"m", "n", "k", "tflops"};

/* Parse one field: a positive integer (m, n, k, at most 2^31) or a positive
 * finite number (tflops). */
static int parse_field(const char *s, int which, double *out)
{
	return kvp_table_field(s, which < 3, out);
}

/* Insert v into the ascending axis a[0..*n) if absent; -1 when full. */
static int axis_add(double *a, uint32_t *n, uint32_t max, double v)
{
	uint32_t i = 0;
	while (i < *n && a[i] < v)
		i++;
	if (i < *n && a[i] == v)
		return 0;
	if (*n == max)
		return -1;
	memmove(a + i + 1, a + i, (*n - i) * sizeof *a);
	a[i] = v;
	(*n)++;
	return 0;
}

static uint32_t axis_index(const double *a, uint32_t n, double v)
{
	uint32_t i = 0;
	while (i < n && a[i] != v)
		i++;
	return i;
}

kvp_status kvp_gemm_table_load(const char *path, struct kvp_gemm_table *out,
			       struct kvp_error *err)
{
	kvp_status st = KVP_STATUS_OK;
	struct kvp_gemm_table *t = calloc(1, sizeof *t);
	struct row *rows = malloc(MAX_ROWS * sizeof *rows);
	unsigned char *seen = NULL;
	FILE *f = fopen(path, "r");
	char line[512];
	int lineno = 0, nrows = 0;
	bool header = false;
	if (!t || !rows) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, path, 0, 0, NULL, "out of memory");
		goto out;
	}
	if (!f) {
		st = kvp_error_set(err, KVP_STATUS_NOT_FOUND, path, 0, 0, NULL, "%s", strerror(errno));
		goto out;
	}
	char *tok[5];
	int nt;
	while (!(st = kvp_table_line(f, path, line, sizeof line, &lineno, tok, 4, &nt, err)) &&
	       nt > 0) {
		if (!header) {
			if (!kvp_table_header_is(tok, nt, fields, 4)) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1, "header",
						   "expected the columns 'm n k tflops'");
				goto out;
			}
			header = true;
			continue;
		}
		if (nt != 4) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1,
					   fields[nt < 4 ? nt : 3], "expected 4 fields (m n k tflops), got %s",
					   nt < 4 ? "fewer" : "more");
			goto out;
		}
		if (nrows == MAX_ROWS) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1, "m",
					   "more than %d rows", MAX_ROWS);
			goto out;
		}
		struct row *r = &rows[nrows++];
		r->line = lineno;
		for (int i = 0; i < 4; i++)
			if (parse_field(tok[i], i, &r->v[i])) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno,
						   (int)(tok[i] - line) + 1, fields[i],
						   i < 3 ? "'%s' is not a positive integer"
							 : "'%s' is not a positive number", tok[i]);
				goto out;
			}
		if (axis_add(t->m, &t->nm, KVP_GEMM_MAX_M, r->v[0]) ||
		    axis_add(t->n, &t->nn, KVP_GEMM_MAX_NK, r->v[1]) ||
		    axis_add(t->k, &t->nk, KVP_GEMM_MAX_NK, r->v[2])) {
			int i = t->nm == KVP_GEMM_MAX_M && axis_index(t->m, t->nm, r->v[0]) == t->nm ? 0
				: t->nn == KVP_GEMM_MAX_NK && axis_index(t->n, t->nn, r->v[1]) == t->nn ? 1
													: 2;
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1, fields[i],
					   "more than %d distinct values", i ? KVP_GEMM_MAX_NK : KVP_GEMM_MAX_M);
			goto out;
		}
	}
	if (st)
		goto out;
	if (!header || nrows == 0) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 0, header ? "m" : "header",
				   header ? "no rows" : "no header line 'm n k tflops'");
		goto out;
	}
	seen = calloc(MAX_ROWS, 1);
	if (!seen) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, path, 0, 0, NULL, "out of memory");
		goto out;
	}
	for (int i = 0; i < nrows; i++) {
		uint32_t a = axis_index(t->m, t->nm, rows[i].v[0]);
		uint32_t b = axis_index(t->n, t->nn, rows[i].v[1]);
		uint32_t c = axis_index(t->k, t->nk, rows[i].v[2]);
		size_t at = ((size_t)a * KVP_GEMM_MAX_NK + b) * KVP_GEMM_MAX_NK + c;
		if (seen[at]) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, rows[i].line, 1, "m",
					   "m %.0f n %.0f k %.0f given twice", rows[i].v[0],
					   rows[i].v[1], rows[i].v[2]);
			goto out;
		}
		seen[at] = 1;
		t->tflops[a][b][c] = rows[i].v[3];
	}
	for (uint32_t a = 0; a < t->nm; a++)
		for (uint32_t b = 0; b < t->nn; b++)
			for (uint32_t c = 0; c < t->nk; c++)
				if (!seen[((size_t)a * KVP_GEMM_MAX_NK + b) * KVP_GEMM_MAX_NK + c]) {
					st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 0, "m",
							   "the grid has no row for m %.0f n %.0f k %.0f",
							   t->m[a], t->n[b], t->k[c]);
					goto out;
				}
	snprintf(t->path, sizeof t->path, "%s", path);
	*out = *t;
out:
	if (f)
		fclose(f);
	free(seen);
	free(rows);
	free(t);
	return st;
}

/* Where x falls on the axis a[0..n): the lower grid index *i and the
 * fraction *w in [0, 1] towards i + 1 in log2 space, with x clamped to the
 * axis; returns the factor the throughput is scaled by (x / a[0] below the
 * axis: the edge's time held; 1 otherwise). */
static double axis_locate(const double *a, uint32_t n, double x, uint32_t *i, double *w)
{
	*w = 0;
	if (x <= a[0] || n == 1) {
		*i = 0;
		return x < a[0] ? x / a[0] : 1;
	}
	if (x >= a[n - 1]) {
		*i = n - 2, *w = 1;
		return 1;
	}
	uint32_t lo = 0, hi = n - 1; /* a[lo] <= x < a[hi] */
	while (hi - lo > 1) {
		uint32_t mid = (lo + hi) / 2;
		if (a[mid] <= x)
			lo = mid;
		else
			hi = mid;
	}
	*i = lo;
	*w = (log2(x) - log2(a[lo])) / (log2(a[hi]) - log2(a[lo]));
	return 1;
}

double kvp_gemm_table_flops(const struct kvp_gemm_table *t, double m, double n, double k)
{
	if (!t || t->nm == 0 || !(m > 0) || !(n > 0) || !(k > 0))
		return 0;
	uint32_t i, j, l;
	double wi, wj, wl;
	double scale = axis_locate(t->m, t->nm, m, &i, &wi) * axis_locate(t->n, t->nn, n, &j, &wj) *
		       axis_locate(t->k, t->nk, k, &l, &wl);
	/* one axis at a time: along K, then N, then M, on log tf */
#define LOGTF(a, b, c) log(t->tflops[a][b][c])
#define ALONG_K(a, b) (t->nk > 1 ? (1 - wl) * LOGTF(a, b, l) + wl * LOGTF(a, b, l + 1) : LOGTF(a, b, 0))
#define ALONG_N(a) (t->nn > 1 ? (1 - wj) * ALONG_K(a, j) + wj * ALONG_K(a, j + 1) : ALONG_K(a, 0))
	double lt = t->nm > 1 ? (1 - wi) * ALONG_N(i) + wi * ALONG_N(i + 1) : ALONG_N(0);
#undef ALONG_N
#undef ALONG_K
#undef LOGTF
	return exp(lt) * scale * 1e12;
}
