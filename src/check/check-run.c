/* check-run.c: running an expectations file: every scenario's command and
 * every assertion, never stopping at the first failure, errors pointed at
 * the input they name; the report's test points, and each point's name and
 * message as the JUnit and TAP writers print them. */
#include "check/check-private.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/utf8.h"

static void relocate(const struct kvp_check_file *f, const struct kvp_check_scenario *s,
		     struct kvp_error *e)
{
	if (e->line > 0)
		return;
	static const char *const alias[][2] = {
		{"models", "model"}, {"gpus", "gpu"}, {"workloads", "workload"}};
	char key[128];
	snprintf(key, sizeof key, "%s", e->field);
	for (size_t i = 0; i < sizeof alias / sizeof alias[0]; i++)
		if (strcmp(key, alias[i][0]) == 0)
			snprintf(key, sizeof key, "%s", alias[i][1]);
	const struct kvp_check_input *in = kvp_check_input_get(s, key);
	char msg[sizeof e->msg];
	if (e->path[0] && strcmp(e->path, f->path) != 0)
		snprintf(msg, sizeof msg, "%.300s (%.200s)", e->msg, e->path);
	else
		snprintf(msg, sizeof msg, "%s", e->msg);
	kvp_error_set(e, e->status, f->path, in ? in->line : s->line, in ? in->col : s->col,
		      in ? key : e->field, "%s", msg);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Run scenario s into res (zeroed by the caller) and count its points.
 * Fails only when memory runs out. */
static kvp_status run_one(struct kvp_check_report *r, const struct kvp_check_scenario *s,
			  struct kvp_check_scenario_result *res, struct kvp_error *err)
{
	const struct kvp_check_file *f = r->file;
	double ts = now_s();
	res->scenario = s;
	struct kvp_record *rec = kvp_record_new();
	res->results = calloc(s->nasserts ? s->nasserts : 1, sizeof *res->results);
	if (!rec || !res->results) {
		kvp_record_free(rec);
		return kvp_error_set(err, KVP_STATUS_NOMEM, f->path, 0, 0, NULL, "out of memory");
	}
	if (s->run(s, rec, &res->err)) {
		kvp_record_free(rec);
		if (res->err.status == KVP_STATUS_NOMEM) {
			*err = res->err;
			return KVP_STATUS_NOMEM;
		}
		relocate(f, s, &res->err);
		r->errors++;
	} else {
		res->record = rec;
		for (size_t k = 0; k < s->nasserts; k++) {
			kvp_check_eval(f->path, &s->asserts[k], rec, &res->results[k]);
			switch (res->results[k].outcome) {
			case KVP_CHECK_PASS: r->passed++; break;
			case KVP_CHECK_FAIL: r->failed++; break;
			case KVP_CHECK_ERROR: r->errors++; break;
			}
		}
	}
	res->time_s = now_s() - ts;
	return KVP_STATUS_OK;
}

static void result_free(struct kvp_check_scenario_result *res)
{
	kvp_record_free(res->record);
	free(res->results);
	free(res->drift);
	memset(res, 0, sizeof *res);
}

static struct kvp_check_report *report_new(const struct kvp_check_file *f, struct kvp_error *err)
{
	struct kvp_check_report *r = calloc(1, sizeof *r);
	if (!r)
		kvp_error_set(err, KVP_STATUS_NOMEM, f->path, 0, 0, NULL, "out of memory");
	else
		r->file = f;
	return r;
}

kvp_status kvp_check_run(const struct kvp_check_file *f, struct kvp_check_report **out,
			 struct kvp_error *err)
{
	struct kvp_check_report *r = report_new(f, err);
	*out = NULL;
	if (!r)
		return KVP_STATUS_NOMEM;
	if (!(r->s = calloc(f->n ? f->n : 1, sizeof *r->s))) {
		free(r);
		return kvp_error_set(err, KVP_STATUS_NOMEM, f->path, 0, 0, NULL, "out of memory");
	}
	double t0 = now_s();
	for (size_t i = 0; i < f->n; i++)
		if (run_one(r, &f->scenarios[i], &r->s[i], err)) {
			kvp_check_report_free(r);
			return KVP_STATUS_NOMEM;
		}
	r->time_s = now_s() - t0;
	*out = r;
	return KVP_STATUS_OK;
}

kvp_status kvp_check_run_each(const struct kvp_check_file *f, const struct kvp_check_baseline *b,
			      const struct kvp_check_pct *tolerance, kvp_check_before_fn before,
			      kvp_check_each_fn each, void *ctx, struct kvp_check_report **out,
			      struct kvp_error *err)
{
	struct kvp_check_report *r = report_new(f, err);
	struct kvp_check_compare *cmp = NULL;
	/* the one scenario held: read again, or a shallow copy of a kept one */
	struct kvp_check_scenario *s = r ? malloc(sizeof *s) : NULL;
	*out = NULL;
	if (!r)
		return KVP_STATUS_NOMEM;
	if (!s || (b && !(cmp = kvp_check_compare_begin(r, b, tolerance)))) {
		free(s);
		free(r);
		return kvp_error_set(err, KVP_STATUS_NOMEM, f->path, 0, 0, NULL, "out of memory");
	}
	struct kvp_check_scenario_result res = {0};
	kvp_status st = KVP_STATUS_OK;
	double t0 = now_s();
	for (size_t i = 0; i < f->n && !st; i++) {
		if (f->scenarios)
			*s = f->scenarios[i];
		else if ((st = kvp_check_scenario_read(f, i, s, err)))
			break;
		if (before)
			before(ctx, i, s);
		if (!(st = run_one(r, s, &res, err)) && cmp && kvp_check_compare_one(cmp, i, &res))
			st = kvp_error_set(err, KVP_STATUS_NOMEM, f->path, 0, 0, NULL,
					   "out of memory");
		if (!st)
			st = each(ctx, r, i, &res);
		result_free(&res);
		if (!f->scenarios)
			kvp_check_scenario_clear(s);
	}
	free(s);
	r->time_s = now_s() - t0;
	kvp_check_compare_end(cmp);
	if (st) {
		kvp_check_report_free(r);
		return st;
	}
	*out = r;
	return KVP_STATUS_OK;
}

void kvp_check_report_free(struct kvp_check_report *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->s && i < r->file->n; i++)
		result_free(&r->s[i]);
	free(r->s);
	free(r);
}

size_t kvp_check_scenario_points(const struct kvp_check_report *r, size_t i,
				 const struct kvp_check_scenario_result *res,
				 struct kvp_check_point *pts, size_t max)
{
	size_t n = 0;
#define POINT(k, ix, oc)                                                                      \
	do {                                                                                   \
		if (n < max)                                                                   \
			pts[n] = (struct kvp_check_point){(k), i, (ix), (oc)};                 \
		n++;                                                                           \
	} while (0)
	if (!res->record) {
		POINT(KVP_CHECK_POINT_RUN, 0, KVP_CHECK_ERROR);
		return n;
	}
	for (size_t k = 0; k < kvp_check_ran(r, i, res)->nasserts; k++)
		POINT(KVP_CHECK_POINT_ASSERT, k, res->results[k].outcome);
	if (res->baseline != KVP_CHECK_BASELINE_NONE)
		POINT(KVP_CHECK_POINT_BASELINE, 0,
		      res->baseline == KVP_CHECK_BASELINE_SAME ? KVP_CHECK_PASS : KVP_CHECK_FAIL);
#undef POINT
	return n;
}

size_t kvp_check_points(const struct kvp_check_report *r, struct kvp_check_point *pts, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < r->file->n; i++)
		n += kvp_check_scenario_points(r, i, &r->s[i], n < max ? pts + n : NULL,
					       n < max ? max - n : 0);
	return n;
}

/* ------------------------------------------------------------ points as text */

/* The name of a test point and, when it did not pass, its message and detail. */
void kvp_check_point_text(const struct kvp_check_report *r,
			  const struct kvp_check_scenario_result *res,
			  const struct kvp_check_point *p, char *name, size_t nsize, char *msg,
			  size_t msize)
{
	const struct kvp_check_scenario *s = kvp_check_ran(r, p->scenario, res);
	msg[0] = '\0';
	switch (p->kind) {
	case KVP_CHECK_POINT_RUN:
		snprintf(name, nsize, "run");
		kvp_error_format(&res->err, msg, msize);
		break;
	case KVP_CHECK_POINT_ASSERT: {
		const struct kvp_check_assert *a = &s->asserts[p->index];
		const struct kvp_check_result *x = &res->results[p->index];
		snprintf(name, nsize, "%s", a->text);
		if (x->outcome == KVP_CHECK_FAIL)
			snprintf(msg, msize, "%.300s:%d:%d: %.255s: %.640s", r->file->path, a->line, a->col,
				 a->text, x->why);
		else if (x->outcome == KVP_CHECK_ERROR)
			snprintf(msg, msize, "%s", x->why);
		break;
	}
	case KVP_CHECK_POINT_BASELINE: {
		snprintf(name, nsize, "baseline");
		size_t nfail = 0;
		for (size_t k = 0; k < res->ndrift; k++)
			nfail += res->drift[k].fail;
		if (res->baseline == KVP_CHECK_BASELINE_MISSING)
			snprintf(msg, msize, "scenario '%s' is not in the baseline %s; run "
				 "--update-baseline", s->name, r->baseline_path);
		else if (res->baseline == KVP_CHECK_BASELINE_DRIFT)
			snprintf(msg, msize, "%zu field%s moved beyond %s of the baseline %s", nfail,
				 nfail == 1 ? "" : "s", r->tolerance.text, r->baseline_path);
		break;
	}
	}
	/* a cut never splits a character */
	kvp_utf8_trim(name);
	kvp_utf8_trim(msg);
}

void kvp_check_drift_change(const struct kvp_check_drift *d, char *buf, size_t size)
{
	if (isnan(d->change))
		snprintf(buf, size, "%s", d->fail ? "changed" : "new");
	else
		snprintf(buf, size, "%+.4g%%", d->change * 100);
}
