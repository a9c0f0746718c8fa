/* fuzz-expect.c: libFuzzer target for `kvplan check` expectations files
 * (checks.h, kvp_check_load_buffer).  A file that loads and whose scenarios
 * are all budgets (frag and perf scenarios simulate and time; too slow to
 * run per input) is run; its JUnit, TAP and baseline are written; the
 * baseline must load back, and the report compared with its own baseline
 * must show no drift.  Build: fuzz/run.sh. */
#include <stdint.h>
#include <string.h>

#include "check/checks.h"
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kvp_check_file *f = NULL;
	struct kvp_error err = {0};
	kvp_status st = kvp_check_load_buffer("fuzz-expect.yaml", (const char *)data, size, &f, &err);
	if (st) {
		FUZZ_ASSERT(f == NULL, "failure left a file");
		FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
		return 0;
	}
	bool budgets = f->n <= 8;
	for (size_t i = 0; i < f->n && budgets; i++)
		budgets = strcmp(f->scenarios[i].command, "budget") == 0;
	if (!budgets) {
		kvp_check_file_free(f);
		return 0;
	}
	struct kvp_check_report *r = NULL;
	if (kvp_check_run(f, &r, &err) != KVP_STATUS_OK) {
		kvp_check_file_free(f);
		return 0;
	}
	static struct kvp_check_point pts[4096];
	size_t np = kvp_check_points(r, pts, sizeof pts / sizeof pts[0]);
	for (size_t i = 0; i < np && i < sizeof pts / sizeof pts[0]; i++)
		FUZZ_ASSERT(pts[i].scenario < f->n, "a test point of no scenario");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		abort();
	kvp_check_write_junit(m, r);
	kvp_check_write_tap(m, r);
	fclose(m);
	free(buf);
	buf = NULL;
	m = open_memstream(&buf, &len);
	if (!m)
		abort();
	kvp_check_baseline_write(m, r);
	fclose(m);
	bool ran = false;
	for (size_t i = 0; i < f->n; i++)
		ran |= r->s[i].record != NULL;
	if (ran) {
		struct kvp_check_baseline *b = NULL;
		st = kvp_check_baseline_load_buffer("written-baseline.yaml", buf, len, &b, &err);
		if (st)
			fprintf(stderr, "baseline does not load back: %s:%d:%d: %s\n%s\n", err.path,
				err.line, err.col, err.msg, buf);
		FUZZ_ASSERT(st == KVP_STATUS_OK, "a written baseline does not load back");
		struct kvp_check_pct zero = {0, 0, "0%"};
		FUZZ_ASSERT(kvp_check_compare(r, b, &zero) == KVP_STATUS_OK, "compare");
		for (size_t i = 0; i < f->n; i++)
			if (r->s[i].record)
				FUZZ_ASSERT(r->s[i].baseline == KVP_CHECK_BASELINE_SAME,
					    "a report drifts from its own baseline");
		kvp_check_baseline_free(b);
	}
	free(buf);
	kvp_check_report_free(r);
	kvp_check_file_free(f);
	return 0;
}
