/* check-tmp.h: for the Check suites that write input files: a temporary
 * folder (under $TMPDIR, else /tmp), write_tmp() to put a file in it, and
 * either checked fixtures that make and remove it around each test
 * (tmp_make/tmp_remove) or a main() body that does so around one suite.
 * Inline, so a suite that uses only some of them is not warned about the rest. */
#ifndef KVP_CHECK_TMP_H
#define KVP_CHECK_TMP_H

#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

static char tmpdir[512];

/* Make tmpdir, named after `name`; false when it cannot be made. */
static inline bool tmp_try_make(const char *name)
{
	const char *t = getenv("TMPDIR");
	snprintf(tmpdir, sizeof tmpdir, "%s/%s-XXXXXX", t && *t ? t : "/tmp", name);
	return mkdtemp(tmpdir) != NULL;
}

/* The same inside a test or fixture. */
static inline void tmp_make(const char *name)
{
	ck_assert_msg(tmp_try_make(name), "mkdtemp %s", tmpdir);
}

/* Remove tmpdir and what it holds. */
static inline void tmp_remove(void)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* Write text to tmpdir/name; the path stays valid until the next call. */
static inline const char *write_tmp(const char *name, const char *text)
{
	static char path[700];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	ck_assert_msg(f != NULL, "cannot write %s", path);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Run suite s with tmpdir (named `name`) made before and removed after;
 * the exit status main() returns.  Outside a test, so no ck_assert. */
static inline int run_suite_in_tmpdir(const char *name, Suite *s)
{
	if (!tmp_try_make(name)) {
		perror(name);
		return EXIT_FAILURE;
	}
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	tmp_remove();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
