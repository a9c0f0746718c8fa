/* check-tmp.h: for the Check suites that write input files: a temporary
 * folder made before the suite runs and removed after, write_tmp() to put a
 * file in it, and the main() body that does both around one suite. */
#ifndef KVP_CHECK_TMP_H
#define KVP_CHECK_TMP_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>

static char tmpdir[64];

/* Write text to tmpdir/name; the path stays valid until the next call. */
static const char *write_tmp(const char *name, const char *text)
{
	static char path[256];
	snprintf(path, sizeof path, "%s/%s", tmpdir, name);
	FILE *f = fopen(path, "w");
	ck_assert(f != NULL);
	fputs(text, f);
	fclose(f);
	return path;
}

/* Run suite s (named `name`) with tmpdir made and removed around it; the
 * exit status main() returns. */
static int run_suite_in_tmpdir(const char *name, Suite *s)
{
	snprintf(tmpdir, sizeof tmpdir, "/tmp/%s-XXXXXX", name);
	if (!mkdtemp(tmpdir)) {
		perror(name);
		return EXIT_FAILURE;
	}
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "%s: could not remove %s\n", name, tmpdir);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
