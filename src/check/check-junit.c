/* check-junit.c: a `kvplan check` report as JUnit XML (--junit FILE): one
 * testsuite per scenario, one testcase per assertion and baseline. */
#include "check/check-private.h"

#include <stdlib.h>
#include <string.h>

#include "out/xml-writer.h"

void kvp_check_junit_head(FILE *f, const struct kvp_check_report *r)
{
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"kvplan check ");
	kvp_xml_text(f, r->file->path);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n",
		r->passed + r->failed + r->errors, r->failed, r->errors, r->time_s);
}

void kvp_check_junit_tail(FILE *f)
{
	fputs("</testsuites>\n", f);
}

void kvp_check_junit_scenario(FILE *f, const struct kvp_check_report *r, size_t i,
			      const struct kvp_check_scenario_result *res)
{
	const struct kvp_check_scenario *s = kvp_check_ran(r, i, res);
	size_t n = kvp_check_scenario_points(r, i, res, NULL, 0);
	struct kvp_check_point *pts = calloc(n ? n : 1, sizeof *pts);
	if (!pts)
		return;
	kvp_check_scenario_points(r, i, res, pts, n);
	size_t failures = 0, errors = 0;
	for (size_t k = 0; k < n; k++) {
		failures += pts[k].outcome == KVP_CHECK_FAIL;
		errors += pts[k].outcome == KVP_CHECK_ERROR;
	}
	fputs("  <testsuite name=\"", f);
	kvp_xml_text(f, s->name);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" skipped=\"0\" "
		   "time=\"%.3f\">\n    <properties>\n", n, failures, errors, res->time_s);
	fputs("      <property name=\"command\" value=\"", f);
	kvp_xml_text(f, s->command);
	fputs("\"/>\n", f);
	for (size_t j = 0; j < s->ninputs; j++) {
		if (strcmp(s->inputs[j].key, "command") == 0)
			continue;
		fputs("      <property name=\"", f);
		kvp_xml_text(f, s->inputs[j].key);
		fputs("\" value=\"", f);
		kvp_xml_text(f, s->inputs[j].value);
		fputs("\"/>\n", f);
	}
	fputs("    </properties>\n", f);
	for (size_t j = 0; j < n; j++) {
		char name[KVP_CHECK_TEXT_MAX], msg[1400];
		kvp_check_point_text(r, res, &pts[j], name, sizeof name, msg, sizeof msg);
		fputs("    <testcase classname=\"", f);
		kvp_xml_text(f, s->name);
		fputs("\" name=\"", f);
		kvp_xml_text(f, name);
		if (pts[j].outcome == KVP_CHECK_PASS) {
			fputs("\"/>\n", f);
			continue;
		}
		bool err = pts[j].outcome == KVP_CHECK_ERROR;
		fprintf(f, "\">\n      <%s type=\"%s\" message=\"", err ? "error" : "failure",
			err ? "invalid" : pts[j].kind == KVP_CHECK_POINT_BASELINE ? "drift"
										: "assertion");
		kvp_xml_text(f, msg);
		fputs("\">", f);
		kvp_xml_text(f, msg);
		if (pts[j].kind == KVP_CHECK_POINT_BASELINE) {
			for (size_t d = 0; d < res->ndrift; d++) {
				char ch[32], line[800];
				kvp_check_drift_change(&res->drift[d], ch, sizeof ch);
				snprintf(line, sizeof line, "\n%s: %s -> %s (%s)", res->drift[d].field,
					 res->drift[d].old_value, res->drift[d].new_value, ch);
				kvp_xml_text(f, line);
			}
			if (res->inputs_changed[0]) {
				fputs("\ninputs changed: ", f);
				kvp_xml_text(f, res->inputs_changed);
			}
		}
		fprintf(f, "</%s>\n    </testcase>\n", err ? "error" : "failure");
	}
	fputs("  </testsuite>\n", f);
	free(pts);
}

void kvp_check_write_junit(FILE *f, const struct kvp_check_report *r)
{
	kvp_check_junit_head(f, r);
	for (size_t i = 0; i < r->file->n; i++)
		kvp_check_junit_scenario(f, r, i, &r->s[i]);
	kvp_check_junit_tail(f);
}
