/* moe-table.c: read a measured MoE layer table and interpolate it
 * (moe-table.h).  Every row is checked; the curves of one expert shape are
 * kept, sorted by tokens, and interpolated log-log with the clamping rules
 * stated in the header. */
#include "time/moe-table.h"
#include "time/table-line.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NFIELDS 8

static const char *const fields[NFIELDS] = {"hidden", "inter",  "topk",   "experts",
					    "moe_tp", "moe_ep", "tokens", "latency_us"};

/* The first seven fields: positive integers up to 2^31; the last a
 * positive finite number. */
static int parse_field(const char *s, int which, double *out)
{
	return kvp_table_field(s, which < NFIELDS - 1, out);
}

/* Add (tokens, s) to t's curve of (tp, ep), keeping T ascending.  -1: too
 * many curves, -2: too many points, -3: T already there. */
static int curve_add(struct kvp_moe_table *t, uint32_t tp, uint32_t ep, double tokens, double s)
{
	struct kvp_moe_curve *c = NULL;
	for (uint32_t i = 0; i < t->ncurves; i++)
		if (t->curves[i].moe_tp == tp && t->curves[i].moe_ep == ep)
			c = &t->curves[i];
	if (!c) {
		if (t->ncurves == KVP_MOE_MAX_CURVES)
			return -1;
		c = &t->curves[t->ncurves++];
		c->moe_tp = tp, c->moe_ep = ep, c->n = 0;
	}
	uint32_t i = 0;
	while (i < c->n && c->tokens[i] < tokens)
		i++;
	if (i < c->n && c->tokens[i] == tokens)
		return -3;
	if (c->n == KVP_MOE_MAX_POINTS)
		return -2;
	memmove(c->tokens + i + 1, c->tokens + i, (c->n - i) * sizeof *c->tokens);
	memmove(c->s + i + 1, c->s + i, (c->n - i) * sizeof *c->s);
	c->tokens[i] = tokens;
	c->s[i] = s;
	c->n++;
	return 0;
}

kvp_status kvp_moe_table_load(const char *path, uint32_t hidden, uint32_t inter, uint32_t topk,
			      uint32_t experts, struct kvp_moe_table *out, struct kvp_error *err)
{
	kvp_status st = KVP_STATUS_OK;
	struct kvp_moe_table *t = calloc(1, sizeof *t);
	FILE *f = fopen(path, "r");
	char line[512];
	int lineno = 0;
	bool header = false;
	if (!t) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, path, 0, 0, NULL, "out of memory");
		goto out;
	}
	if (!f) {
		st = kvp_error_set(err, KVP_STATUS_NOT_FOUND, path, 0, 0, NULL, "%s", strerror(errno));
		goto out;
	}
	char *tok[NFIELDS + 1];
	int nt;
	while (!(st = kvp_table_line(f, path, line, sizeof line, &lineno, tok, NFIELDS, &nt, err)) &&
	       nt > 0) {
		if (!header) {
			if (!kvp_table_header_is(tok, nt, fields, NFIELDS)) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1, "header",
						   "expected the columns 'hidden inter topk experts "
						   "moe_tp moe_ep tokens latency_us'");
				goto out;
			}
			header = true;
			continue;
		}
		if (nt != NFIELDS) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1,
					   fields[nt < NFIELDS ? nt : NFIELDS - 1],
					   "expected %d fields, got %s", NFIELDS,
					   nt < NFIELDS ? "fewer" : "more");
			goto out;
		}
		double v[NFIELDS];
		for (int i = 0; i < NFIELDS; i++)
			if (parse_field(tok[i], i, &v[i])) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno,
						   (int)(tok[i] - line) + 1, fields[i],
						   i < NFIELDS - 1 ? "'%s' is not a positive integer"
								   : "'%s' is not a positive number",
						   tok[i]);
				goto out;
			}
		if (v[0] != hidden || v[1] != inter || v[2] != topk || v[3] != experts)
			continue;
		int rc = curve_add(t, (uint32_t)v[4], (uint32_t)v[5], v[6], v[7] * 1e-6);
		if (rc) {
			int col = (int)(tok[rc == -1 ? 4 : 6] - line) + 1;
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, col,
					   fields[rc == -1 ? 4 : 6],
					   rc == -1 ? "more than %d groups (moe_tp, moe_ep) for one shape"
					   : rc == -2 ? "more than %d token counts in one curve"
						      : "token count given twice in one curve",
					   rc == -1 ? KVP_MOE_MAX_CURVES : KVP_MOE_MAX_POINTS);
			goto out;
		}
	}
	if (st)
		goto out;
	if (!header) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1, "header",
				   "no header line");
		goto out;
	}
	t->hidden = hidden, t->inter = inter, t->topk = topk, t->experts = experts;
	snprintf(t->path, sizeof t->path, "%s", path);
	*out = *t;
out:
	if (f)
		fclose(f);
	free(t);
	return st;
}

const struct kvp_moe_curve *kvp_moe_table_curve(const struct kvp_moe_table *t, uint32_t moe_tp,
						uint32_t moe_ep)
{
	for (uint32_t i = 0; i < t->ncurves; i++)
		if (t->curves[i].moe_tp == moe_tp && t->curves[i].moe_ep == moe_ep)
			return &t->curves[i];
	return NULL;
}

double kvp_moe_curve_s(const struct kvp_moe_curve *c, double tokens)
{
	if (!c || !c->n || !(tokens > 0))
		return 0;
	if (tokens <= c->tokens[0])
		return c->s[0];
	uint32_t last = c->n - 1;
	if (tokens >= c->tokens[last])
		return c->s[last] * tokens / c->tokens[last];
	uint32_t i = 0;
	while (c->tokens[i + 1] < tokens)
		i++;
	double x = (log(tokens) - log(c->tokens[i])) / (log(c->tokens[i + 1]) - log(c->tokens[i]));
	return exp(log(c->s[i]) + x * (log(c->s[i + 1]) - log(c->s[i])));
}
