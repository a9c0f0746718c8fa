/* cmd-check.c: `kvplan check FILE`: run the scenarios of an expectations
 * file, evaluate their assertions, compare with or record a baseline, and
 * report as text, JUnit XML or TAP.  Exit 0 when everything holds, 1 when an
 * assertion failed or a field drifted, 2 on usage mistakes, 3 when the
 * expectations or baseline file is invalid (or names a field that the
 * output lacks, or a scenario cannot run). */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/atomic-file.h"
#include "check/checks.h"
#include "cli/cli.h"
#include "cli/cli-options.h"
#include "frag/frag.h"
#include "read/workload.h"

static const char *const cmd = "check";

static void help(void)
{
	printf("Usage: kvplan check FILE [OPTIONS]\n\n"
	       "Run the scenarios of an expectations file and check their assertions;\n"
	       "for CI jobs that guard memory budgets.  Assertions read the fields that\n"
	       "`kvplan budget --format json` prints:\n\n"
	       "  scenarios:\n"
	       "    - name: llama8b-h100-chat\n"
	       "      model: llama-3.1-8b\n"
	       "      gpu: h100-sxm\n"
	       "      engine: vllm\n"
	       "      kv_dtype: fp8\n"
	       "      context: 8192\n"
	       "      batch: 32\n"
	       "      expect:\n"
	       "        - fits == true\n"
	       "        - max_sequences >= 64\n"
	       "        - kv_pool_bytes ~ 54.2GiB within 2%%\n\n"
	       "(79.19 GiB x 0.9 - 14.96 GiB weights - 1.12 GiB activations - 1 GiB\n"
	       "overhead = 54.19 GiB; 55,493 blocks of 16 x 64 KiB, 512 per sequence: 108.)\n\n"
	       "Options:\n"
	       "  --junit FILE              also write a JUnit XML report ('-', or the file\n"
	       "                            or pipe stdout goes to, e.g. /dev/stdout: JUnit\n"
	       "                            alone on stdout)\n"
	       "  --tap                     write TAP (version 13) on stdout instead of text\n"
	       "  --update-baseline FILE    record every scalar field of every scenario\n"
	       "  --baseline FILE           fail when a field moved from FILE beyond --tolerance\n"
	       "  --tolerance P%%            relative drift allowed (default 0%%: exact)\n"
	       "  --help                    this text\n\n"
	       "Exit status: 0 all hold, 1 an assertion failed or a field drifted,\n"
	       "2 usage (also: two outputs naming one file, an output naming an input),\n"
	       "3 invalid expectations or baseline file.  See kvplan(1).\n");
}

static const char *outcome_word(enum kvp_check_outcome o)
{
	return o == KVP_CHECK_PASS ? "ok" : o == KVP_CHECK_FAIL ? "FAIL" : "ERROR";
}

/* The fields that moved beyond the tolerance as a table, then the names of
 * the fields the baseline does not have (noted, not checked). */
static void print_drift(FILE *out, const struct kvp_check_scenario_result *res)
{
	int w = 5;
	size_t nfail = 0, nnew = 0;
	for (size_t d = 0; d < res->ndrift; d++) {
		nfail += res->drift[d].fail;
		nnew += !res->drift[d].fail;
		if (res->drift[d].fail && (int)strlen(res->drift[d].field) > w)
			w = (int)strlen(res->drift[d].field);
	}
	if (nfail)
		fprintf(out, "    %-*s  %-28s  %-28s  %s\n", w, "field", "old", "new", "change");
	for (size_t d = 0; d < res->ndrift; d++) {
		const struct kvp_check_drift *x = &res->drift[d];
		char ch[32];
		if (!x->fail)
			continue;
		if (isnan(x->change))
			snprintf(ch, sizeof ch, "changed");
		else
			snprintf(ch, sizeof ch, "%+.4g%%", x->change * 100);
		fprintf(out, "    %-*s  %-28s  %-28s  %s\n", w, x->field, x->old_value,
			x->new_value, ch);
	}
	if (!nnew)
		return;
	fprintf(out, "    not in the baseline (not checked):");
	for (size_t d = 0; d < res->ndrift; d++)
		if (!res->drift[d].fail)
			fprintf(out, " %s", res->drift[d].field);
	fprintf(out, "\n");
}

/* One scenario of the text report, as it ran. */
static void print_scenario(FILE *out, const struct kvp_check_report *r,
			   const struct kvp_check_scenario_result *res)
{
	const struct kvp_check_scenario *s = res->scenario;
	const char *path = r->file->path;
	char inputs[2048];
	kvp_check_inputs_format(s, inputs, sizeof inputs);
	char sn[KVP_TERM_SIZE(sizeof s->name)], in[KVP_TERM_SIZE(sizeof inputs)];
	fprintf(out, "\n%s  (%s)\n", kvp_term_text(sn, sizeof sn, s->name),
		kvp_term_text(in, sizeof in, inputs));
	if (!res->record) {
		char msg[1400];
		kvp_error_format(&res->err, msg, sizeof msg);
		fprintf(out, "  ERROR could not run: %s\n", msg);
		return;
	}
	int w = 0;
	for (size_t k = 0; k < s->nasserts; k++)
		if ((int)strlen(s->asserts[k].text) > w)
			w = (int)strlen(s->asserts[k].text);
	for (size_t k = 0; k < s->nasserts; k++) {
		const struct kvp_check_assert *a = &s->asserts[k];
		const struct kvp_check_result *x = &res->results[k];
		if (x->outcome == KVP_CHECK_PASS)
			fprintf(out, "  %-5s %-*s  %s\n", "ok", w, a->text, x->got);
		else if (x->outcome == KVP_CHECK_FAIL)
			fprintf(out, "  %-5s %-*s  %s  (%s:%d:%d)\n", "FAIL", w, a->text, x->why,
				path, a->line, a->col);
		else
			fprintf(out, "  %-5s %s\n", outcome_word(x->outcome), x->why);
	}
	switch (res->baseline) {
	case KVP_CHECK_BASELINE_NONE:
		break;
	case KVP_CHECK_BASELINE_MISSING:
		fprintf(out, "  FAIL  baseline: not in %s; run --update-baseline\n",
			r->baseline_path);
		break;
	case KVP_CHECK_BASELINE_SAME:
	case KVP_CHECK_BASELINE_DRIFT: {
		size_t nfail = 0;
		for (size_t d = 0; d < res->ndrift; d++)
			nfail += res->drift[d].fail;
		if (res->baseline == KVP_CHECK_BASELINE_SAME)
			fprintf(out, "  ok    baseline: every field within %s of %s\n",
				r->tolerance.text, r->baseline_path);
		else
			fprintf(out, "  FAIL  baseline: %zu field%s moved beyond %s of %s\n", nfail,
				nfail == 1 ? "" : "s", r->tolerance.text, r->baseline_path);
		if (res->ndrift)
			print_drift(out, res);
		if (res->baseline == KVP_CHECK_BASELINE_DRIFT)
			fprintf(out, "    inputs changed since the baseline: %s\n",
				res->inputs_changed[0] ? res->inputs_changed
						       : "none (a profile or kvplan changed)");
		break;
	}
	}
}

/* A scenario's errors for stderr too, as every other command reports them. */
static void print_errors(FILE *out, const struct kvp_check_scenario_result *res)
{
	const struct kvp_check_scenario *s = res->scenario;
	char msg[1400];
	if (!res->record) {
		kvp_error_format(&res->err, msg, sizeof msg);
		char sn[KVP_TERM_SIZE(sizeof s->name)], sm[KVP_TERM_SIZE(sizeof msg)];
		fprintf(out, "kvplan check: scenario '%s': %s\n",
			kvp_term_text(sn, sizeof sn, s->name), kvp_term_text(sm, sizeof sm, msg));
		return;
	}
	for (size_t k = 0; k < s->nasserts; k++) {
		char why[KVP_TERM_SIZE(sizeof res->results[k].why)];
		if (res->results[k].outcome == KVP_CHECK_ERROR)
			fprintf(out, "kvplan check: %s\n",
				kvp_term_text(why, sizeof why, res->results[k].why));
	}
}

/* What the scenarios wrote to a spool (a temporary file, already
 * unlinked: nothing is left if the process dies), copied to out; false when
 * the spool could not be written or read back. */
static bool spool_copy(FILE *spool, FILE *out)
{
	char buf[8192];
	size_t n;
	if (fflush(spool) || ferror(spool) || fseek(spool, 0, SEEK_SET))
		return false;
	while ((n = fread(buf, 1, sizeof buf, spool)) > 0)
		fwrite(buf, 1, n, out);
	return !ferror(spool);
}

/* Write head, the spooled scenarios and tail (NULL: none) through the
 * atomic writer, so a CI job never reads half a report and an input (the
 * expectations, the baseline) is never written over.  The file is opened
 * only once every scenario has run, as when the report was written whole. */
static int write_file(const char *path, const struct kvp_check_report *r, FILE *spool,
		      void (*head)(FILE *, const struct kvp_check_report *), void (*tail)(FILE *))
{
	struct kvp_error err = {0};
	if (strcmp(path, "-") == 0) {
		head(stdout, r);
		if (!spool_copy(spool, stdout))
			goto spool_failed;
		if (tail)
			tail(stdout);
		return 0;
	}
	struct kvp_afile a;
	if (kvp_afile_open(&a, path, &err))
		return kvp_cli_error(cmd, &err);
	head(a.f, r);
	if (!spool_copy(spool, a.f)) {
		kvp_afile_abort(&a);
		goto spool_failed;
	}
	if (tail)
		tail(a.f);
	if (kvp_afile_commit(&a, &err))
		return kvp_cli_error(cmd, &err);
	return 0;
spool_failed:
	kvp_error_set(&err, KVP_STATUS_IO, path, 0, 0, NULL,
		      "cannot write: its temporary spool failed: %s", strerror(errno));
	return kvp_cli_error(cmd, &err);
}

/* The folder of `path` resolved, then its last name: two spellings of one
 * file that does not exist yet ("b.yaml", "./b.yaml") agree; false when the
 * folder cannot be resolved. */
static bool resolved(const char *path, char *out, size_t size)
{
	char d[PATH_MAX], b[PATH_MAX], real[PATH_MAX];
	if (snprintf(d, sizeof d, "%s", path) >= (int)sizeof d ||
	    snprintf(b, sizeof b, "%s", path) >= (int)sizeof b || !realpath(dirname(d), real))
		return false;
	return snprintf(out, size, "%s/%s", real, basename(b)) < (int)size;
}

/* Whether two paths name one file: the same text ('-' is stdout), the same
 * device and inode (links, /dev/stdout), or the same resolved name. */
static bool same_file(const char *x, const char *y)
{
	if (strcmp(x, y) == 0)
		return true;
	if (strcmp(x, "-") == 0 || strcmp(y, "-") == 0) {
		/* a file or pipe stdout goes to; a device (/dev/null, a terminal)
		 * takes two writers without one replacing the other */
		const char *other = strcmp(x, "-") == 0 ? y : x;
		struct stat so, s1;
		return stat(other, &so) == 0 && fstat(1, &s1) == 0 && so.st_dev == s1.st_dev &&
		       so.st_ino == s1.st_ino && (S_ISREG(so.st_mode) || S_ISFIFO(so.st_mode));
	}
	struct stat sx, sy;
	if (stat(x, &sx) == 0 && stat(y, &sy) == 0)
		return sx.st_dev == sy.st_dev && sx.st_ino == sy.st_ino;
	char rx[PATH_MAX + 1], ry[PATH_MAX + 1];
	return resolved(x, rx, sizeof rx) && resolved(y, ry, sizeof ry) && strcmp(rx, ry) == 0;
}

/* Usage error when two outputs name one file (one would silently replace
 * the other) or an output names an input, before anything runs. */
static int refuse_collisions(const char *file, const char *junit, const char *update,
			     const char *baseline)
{
	const struct {
		const char *flag, *path;
	} in[] = {{"the expectations FILE", file}, {"--baseline", baseline}},
	  out[] = {{"--junit", junit}, {"--update-baseline", update}};
	if (junit && update && same_file(junit, update))
		return kvp_cli_usage_error(cmd, "--junit and --update-baseline name the same file "
					   "'%s'; each output needs its own", update);
	for (size_t o = 0; o < 2; o++)
		for (size_t i = 0; out[o].path && i < 2; i++)
			if (in[i].path && same_file(out[o].path, in[i].path))
				return kvp_cli_usage_error(cmd, "%s '%s' is %s; not writing over an "
							   "input", out[o].flag, out[o].path,
							   in[i].flag);
	return 0;
}

/* What the scenarios write as they run, one at a time, each into a spool
 * (an unlinked temporary file): the text report or TAP and the errors, put
 * on stdout and stderr after the run in the order they had when the report
 * was written whole (every error, then the report: the same bytes on each
 * stream and together); JUnit and the baseline, which need the final counts
 * at their heads or are written only when nothing erred.  Besides the
 * counts, nothing is kept per scenario but the indices of those that
 * simulate long. */
struct stream {
	bool text, tap;
	FILE *out, *err, *junit, *base;
	size_t tap_number;
	/* the frag scenarios whose simulation kvplan frag would estimate past
	 * KVP_CLI_PROGRESS_FROM_S (cli.h), ascending, and the next to run */
	size_t *slow, nslow, next;
	struct kvp_cli_progress ps;
	char label[KVP_TERM_SIZE(KVP_CHECK_NAME_MAX) + 32];
};

static kvp_status each(void *ctx, const struct kvp_check_report *r, size_t i,
		       const struct kvp_check_scenario_result *res)
{
	struct stream *st = ctx;
	print_errors(st->err, res);
	if (st->text)
		print_scenario(st->out, r, res);
	if (st->tap)
		kvp_check_tap_scenario(st->out, r, i, res, &st->tap_number);
	if (st->junit)
		kvp_check_junit_scenario(st->junit, r, i, res);
	/* once a scenario erred no baseline is written (below) */
	if (st->base && !r->errors)
		kvp_check_baseline_scenario(st->base, r, i, res);
	return KVP_STATUS_OK;
}

/* A slow frag scenario about to run: its progress on stderr. */
static void before(void *ctx, size_t i, struct kvp_check_scenario *s)
{
	struct stream *st = ctx;
	if (st->next >= st->nslow || st->slow[st->next] != i)
		return;
	st->next++;
	char sn[KVP_TERM_SIZE(KVP_CHECK_NAME_MAX)];
	snprintf(st->label, sizeof st->label, "kvplan check: scenario '%s'",
		 kvp_term_text(sn, sizeof sn, s->name));
	st->ps = (struct kvp_cli_progress){.cmd = st->label};
	s->frag.opts.progress = kvp_cli_progress;
	s->frag.opts.progress_ctx = &st->ps;
}

/* kvplan frag's estimate of a frag scenario's simulation in seconds; 0 for
 * other scenarios and when its workload cannot be loaded (the run says why). */
static double frag_estimate_s(const struct kvp_check_scenario *s)
{
	if (strcmp(s->command, "frag") != 0)
		return 0;
	struct kvp_workload w;
	struct kvp_error ignore = {0};
	memset(&w, 0, sizeof w);
	double est = 0;
	size_t rows;
	if (!kvp_workload_load(s->frag.workload, &w, &ignore)) {
		const struct kvp_frag_opts *fo = &s->frag.opts;
		est = kvp_cli_frag_estimate_s(fo, fo->nblock,
					      fo->arrival_rate > 0 || fo->step_time_s > 0, &w, &rows);
	}
	kvp_workload_free(&w);
	return est;
}

/* The slow frag scenarios, said on stderr before anything runs (issue 37
 * D20: a scenario of 10^8 requests ran for minutes in silence).  Each
 * scenario is read once more for it; fails when one cannot be. */
static kvp_status slow_runs(const struct kvp_check_file *f, struct stream *st,
			    struct kvp_error *err)
{
	struct kvp_check_scenario *s = malloc(sizeof *s);
	if (!s)
		return kvp_error_set(err, KVP_STATUS_NOMEM, f->path, 0, 0, NULL, "out of memory");
	kvp_status rc = KVP_STATUS_OK;
	size_t cap = 0;
	double total = 0;
	for (size_t i = 0; i < f->n && !rc; i++) {
		if ((rc = kvp_check_scenario_read(f, i, s, err)))
			break;
		double est = frag_estimate_s(s);
		kvp_check_scenario_clear(s);
		if (est <= KVP_CLI_PROGRESS_FROM_S)
			continue;
		if (st->nslow == cap) {
			size_t *p = realloc(st->slow, (cap ? 2 * cap : 8) * sizeof *p);
			if (!p) {
				rc = kvp_error_set(err, KVP_STATUS_NOMEM, f->path, 0, 0, NULL,
						   "out of memory");
				break;
			}
			st->slow = p;
			cap = cap ? 2 * cap : 8;
		}
		st->slow[st->nslow++] = i;
		total += est;
	}
	free(s);
	if (!rc && st->nslow)
		fprintf(stderr, "kvplan check: %zu frag scenario%s simulate%s about %.0f s; "
			"progress follows\n", st->nslow, st->nslow == 1 ? "" : "s",
			st->nslow == 1 ? "s" : "", total);
	return rc;
}

/* A temporary file for a spool: tmpfile(3), in /tmp, which glibc opens
 * with O_TMPFILE (a file that never has a name) and otherwise unlinks at
 * once, so nothing is left behind whatever ends the process; false after
 * an error message. */
static bool spool_open(FILE **out, const char *what)
{
	if ((*out = tmpfile()))
		return true;
	fprintf(stderr, "kvplan check: cannot create a temporary file for %s: %s\n", what,
		strerror(errno));
	return false;
}

int kvp_cmd_check(int argc, char **argv)
{
	const char *junit = NULL, *baseline = NULL, *update = NULL, *tolerance = NULL;
	bool tap = false;
	const struct kvp_cli_opt opts[] = {
		{.name = "junit", .kind = KVP_CLI_OPT_STRING, .dest = &junit},
		{.name = "tap", .kind = KVP_CLI_OPT_FLAG, .dest = &tap},
		{.name = "baseline", .kind = KVP_CLI_OPT_STRING, .dest = &baseline},
		{.name = "tolerance", .kind = KVP_CLI_OPT_STRING, .dest = &tolerance},
		{.name = "update-baseline", .kind = KVP_CLI_OPT_STRING, .dest = &update},
		{.name = "help", .short_name = 'h', .kind = KVP_CLI_OPT_HELP},
		{.kind = KVP_CLI_OPT_END}
	};
	int rc = kvp_cli_options_parse(cmd, argc, argv, opts, help);
	if (rc != KVP_CLI_OPTIONS_DONE ||
	    (rc = kvp_cli_one_operand(cmd, argc, argv, "missing the expectations FILE")))
		return rc;
	if (baseline && update)
		return kvp_cli_usage_error(cmd, "--baseline and --update-baseline exclude each other");
	if (tolerance && !baseline)
		return kvp_cli_usage_error(cmd, "--tolerance needs --baseline");
	/* --junit /dev/stdout (or the file or pipe stdout goes to) is --junit -:
	 * JUnit alone on stdout, not after the text report */
	if (junit && strcmp(junit, "-") != 0 && same_file(junit, "-"))
		junit = "-";
	if (tap && junit && strcmp(junit, "-") == 0)
		return kvp_cli_usage_error(cmd, "--tap and --junit - both want stdout");
	if ((rc = refuse_collisions(argv[optind], junit, update, baseline)))
		return rc;
	struct kvp_check_pct tol = {0, 0, "0%"};
	if (tolerance && kvp_check_pct_parse(tolerance, &tol))
		return kvp_cli_usage_error(cmd, "--tolerance: expected a percentage such as 1%% "
					   "or 0.5%%, got '%s'", tolerance);

	struct kvp_error err = {0};
	struct kvp_check_file *f = NULL;
	struct kvp_check_baseline *b = NULL;
	struct kvp_check_report *r = NULL;
	struct stream st = {.text = !tap && !(junit && strcmp(junit, "-") == 0), .tap = tap};
	/* read one scenario at a time: memory per scenario is the document's
	 * tree and not what a scenario's run holds (kvplan(1), CHECK) */
	if (kvp_check_open(argv[optind], &f, &err) ||
	    (baseline && kvp_check_baseline_load(baseline, &b, &err)) || slow_runs(f, &st, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	rc = KVP_EXIT_INPUT;
	if (!spool_open(&st.err, "the errors") ||
	    ((st.text || st.tap) && !spool_open(&st.out, "the report")) ||
	    (junit && !spool_open(&st.junit, "--junit")) ||
	    (update && !spool_open(&st.base, "--update-baseline")))
		goto out;
	if (kvp_check_run_each(f, b, &tol, before, each, &st, &r, &err)) {
		if (err.status == KVP_STATUS_NOMEM)
			fprintf(stderr, "kvplan check: out of memory\n");
		else
			rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	if (!spool_copy(st.err, stderr))
		goto spool_failed;
	if (st.tap)
		kvp_check_tap_head(stdout, r->passed + r->failed + r->errors);
	else if (st.text)
		printf("kvplan check: %s (%zu scenario%s)\n", f->path, f->n, f->n == 1 ? "" : "s");
	if (st.out && !spool_copy(st.out, stdout))
		goto spool_failed;
	if (st.tap)
		kvp_check_tap_tail(stdout, r);
	else if (st.text)
		printf("\n%zu passed, %zu failed, %zu error%s\n", r->passed, r->failed, r->errors,
		       r->errors == 1 ? "" : "s");
	if (junit && (rc = write_file(junit, r, st.junit, kvp_check_junit_head,
				      kvp_check_junit_tail)))
		goto out;
	/* a baseline missing the scenarios that could not run would be committed
	 * and then silently guard less: write none */
	if (update && r->errors)
		fprintf(stderr, "kvplan check: %s not written: %zu error%s above\n", update,
			r->errors, r->errors == 1 ? "" : "s");
	else if (update && (rc = write_file(update, r, st.base, kvp_check_baseline_head, NULL)))
		goto out;
	rc = r->errors ? KVP_EXIT_INPUT : r->failed ? KVP_EXIT_FAIL : KVP_EXIT_OK;
	goto out;
spool_failed:
	fprintf(stderr, "kvplan check: a temporary file failed: %s\n", strerror(errno));
	rc = KVP_EXIT_INPUT;
out:
	if (st.out)
		fclose(st.out);
	if (st.err)
		fclose(st.err);
	if (st.junit)
		fclose(st.junit);
	if (st.base)
		fclose(st.base);
	free(st.slow);
	kvp_check_report_free(r);
	kvp_check_baseline_free(b);
	kvp_check_file_free(f);
	return rc;
}
