/* check-tap.c: a `kvplan check` report as TAP version 13 (--tap): one test
 * point per assertion and baseline, a YAML block beside each failure. */
#include "check/check-private.h"

#include <stdlib.h>

#include "out/tap-writer.h"
#include "out/yaml-writer.h"

void kvp_check_tap_head(FILE *f, size_t npoints)
{
	fprintf(f, "TAP version 13\n1..%zu\n", npoints);
}

void kvp_check_tap_tail(FILE *f, const struct kvp_check_report *r)
{
	fprintf(f, "# %zu passed, %zu failed, %zu errors\n", r->passed, r->failed, r->errors);
}

void kvp_check_tap_scenario(FILE *f, const struct kvp_check_report *r, size_t i,
			    const struct kvp_check_scenario_result *res, size_t *number)
{
	const struct kvp_check_scenario *s = kvp_check_ran(r, i, res);
	size_t n = kvp_check_scenario_points(r, i, res, NULL, 0);
	struct kvp_check_point *pts = calloc(n ? n : 1, sizeof *pts);
	if (!pts)
		return;
	kvp_check_scenario_points(r, i, res, pts, n);
	for (size_t j = 0; j < n; j++) {
		char name[KVP_CHECK_TEXT_MAX], msg[1400];
		kvp_check_point_text(r, res, &pts[j], name, sizeof name, msg, sizeof msg);
		fprintf(f, "%sok %zu - ", pts[j].outcome == KVP_CHECK_PASS ? "" : "not ", ++*number);
		kvp_tap_text(f, s->name);
		fputs(": ", f);
		kvp_tap_text(f, name);
		fputc('\n', f);
		if (pts[j].outcome == KVP_CHECK_PASS)
			continue;
		fputs("  ---\n  message: ", f);
		kvp_yaml_str(f, msg);
		fprintf(f, "\n  severity: %s\n", pts[j].outcome == KVP_CHECK_ERROR ? "error" : "fail");
		if (pts[j].kind == KVP_CHECK_POINT_ASSERT) {
			const struct kvp_check_assert *a = &s->asserts[pts[j].index];
			char at[sizeof r->file->path + 32];
			snprintf(at, sizeof at, "%s:%d:%d", r->file->path, a->line, a->col);
			fputs("  at: ", f);
			kvp_yaml_str(f, at);
			fputs("\n  field: ", f);
			kvp_yaml_str(f, a->field);
			fputs("\n  got: ", f);
			kvp_yaml_str(f, res->results[pts[j].index].got);
			fputs("\n", f);
		}
		if (pts[j].kind == KVP_CHECK_POINT_BASELINE) {
			if (res->inputs_changed[0]) {
				fputs("  inputs_changed: ", f);
				kvp_yaml_str(f, res->inputs_changed);
				fputc('\n', f);
			}
			if (res->ndrift)
				fputs("  drift:\n", f);
			for (size_t d = 0; d < res->ndrift; d++) {
				char ch[32];
				kvp_check_drift_change(&res->drift[d], ch, sizeof ch);
				fputs("    - field: ", f);
				kvp_yaml_str(f, res->drift[d].field);
				fputs("\n      old: ", f);
				kvp_yaml_str(f, res->drift[d].old_value);
				fputs("\n      new: ", f);
				kvp_yaml_str(f, res->drift[d].new_value);
				fputs("\n      change: ", f);
				kvp_yaml_str(f, ch);
				fputc('\n', f);
			}
		}
		fputs("  ...\n", f);
	}
	free(pts);
}

void kvp_check_write_tap(FILE *f, const struct kvp_check_report *r)
{
	kvp_check_tap_head(f, kvp_check_points(r, NULL, 0));
	size_t number = 0;
	for (size_t i = 0; i < r->file->n; i++)
		kvp_check_tap_scenario(f, r, i, &r->s[i], &number);
	kvp_check_tap_tail(f, r);
}
