/* check-writers.c: the writers of issue 17 and what they stand on, by hand:
 * UTF-8 (utf8.h), XML and TAP text, shell words, the name index (against a
 * plain linear scan on many random cases), the input opener and the atomic
 * writer (a target left whole on abort, an input refused, no temporary file
 * left behind; a FIFO, a device and stdout streamed to and never renamed
 * over, a link to a file kept while its target is replaced, a dangling link
 * refused, the temporary removed when SIGTERM ends the process: issue 37). */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/atomic-file.h"
#include "out/yaml-writer.h"
#include "check-tmp.h"
#include "base/input-file.h"
#include "base/name-index.h"
#include "out/shell-quote.h"
#include "out/tap-writer.h"
#include "base/utf8.h"
#include "out/xml-writer.h"

/* RFC 3629 by hand: lengths, code points, and what is not UTF-8. */
static const struct {
	const char *s;
	size_t len;
	uint32_t cp;
} utf8_cases[] = {
	{"A", 1, 0x41},
	{"\xc3\xa9", 2, 0xe9},                /* e-acute */
	{"\xe2\x82\xac", 3, 0x20ac},          /* euro sign */
	{"\xf0\x9d\x84\x9e", 4, 0x1d11e},     /* G clef */
	{"\xef\xbf\xbd", 3, 0xfffd},
	{"\xc0\x80", 0, 0},                   /* overlong NUL */
	{"\xe0\x80\xaf", 0, 0},               /* overlong '/' */
	{"\xed\xa0\x80", 0, 0},               /* a surrogate, U+D800 */
	{"\xf4\x90\x80\x80", 0, 0},           /* U+110000, past the last */
	{"\x80", 0, 0},                       /* a stray continuation byte */
	{"\xe2\x82", 0, 0},                   /* cut short */
	{"\xff", 0, 0},
};

START_TEST(test_utf8_next)
{
	uint32_t cp = 0;
	ck_assert_uint_eq(kvp_utf8_next(utf8_cases[_i].s, &cp), utf8_cases[_i].len);
	if (utf8_cases[_i].len)
		ck_assert_uint_eq(cp, utf8_cases[_i].cp);
}
END_TEST

START_TEST(test_utf8_trim)
{
	static const struct {
		const char *in, *out;
	} t[] = {
		{"abc", "abc"}, {"ab\xc3\xa9", "ab\xc3\xa9"}, {"ab\xc3", "ab"},
		{"a\xe2\x82", "a"}, {"a\xf0\x9d\x84", "a"}, {"a\xf0\x9d\x84\x9e", "a\xf0\x9d\x84\x9e"},
		{"", ""},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		char buf[16];
		snprintf(buf, sizeof buf, "%s", t[i].in);
		kvp_utf8_trim(buf);
		ck_assert_str_eq(buf, t[i].out);
	}
}
END_TEST

static char *capture(void (*w)(FILE *, const char *), const char *s)
{
	static char buf[256];
	memset(buf, 0, sizeof buf);
	FILE *f = fmemopen(buf, sizeof buf - 1, "w");
	ck_assert_ptr_nonnull(f);
	w(f, s);
	fclose(f);
	return buf;
}

/* The escapes by hand. */
static const struct {
	const char *in, *xml, *tap, *sh;
} text_cases[] = {
	{"plain", "plain", "plain", "'plain'"},
	{"", "", "", "''"},
	{"a<b>&\"c'", "a&lt;b&gt;&amp;&quot;c&apos;", "a<b>&\"c'", "'a<b>&\"c'\\'''"},
	{"x # SKIP", "x # SKIP", "x \\# SKIP", "'x # SKIP'"},
	{"a\\b", "a\\b", "a\\\\b", "'a\\b'"},
	{"l1\nl2\tt\r", "l1&#10;l2&#9;t&#13;", "l1 l2?t ", "'l1\nl2\tt\r'"},
	{"\x01\x1b", "??", "??", "'\x01\x1b'"},
	{"bad\xff", "bad\xef\xbf\xbd", "bad\xef\xbf\xbd", "'bad\xff'"},
	{"\xef\xbf\xbe", "?", "\xef\xbf\xbe", "'\xef\xbf\xbe'"},   /* U+FFFE */
	{"$(id) `id`", "$(id) `id`", "$(id) `id`", "'$(id) `id`'"},
};

START_TEST(test_text_escapes)
{
	ck_assert_str_eq(capture(kvp_xml_text, text_cases[_i].in), text_cases[_i].xml);
	ck_assert_str_eq(capture(kvp_tap_text, text_cases[_i].in), text_cases[_i].tap);
	ck_assert_str_eq(capture(kvp_sh_word, text_cases[_i].in), text_cases[_i].sh);
}
END_TEST

/* YAML double-quoted scalars by hand (YAML 1.2 5.7 escapes; c-printable
 * excludes C1 controls, and U+0085, U+2028, U+2029 are line breaks that a
 * plain copy would fold into the value) */
static const struct {
	const char *in, *yaml;
} yaml_cases[] = {
	{"org/model", "\"org/model\""},
	{"a\"b\\c", "\"a\\\"b\\\\c\""},
	{"x\ny", "\"x\\ny\""},
	{"nel\xc2\x85x", "\"nel\\u0085x\""},          /* U+0085 NEL */
	{"ls\xe2\x80\xa8ps\xe2\x80\xa9", "\"ls\\u2028ps\\u2029\""},
	{"\xef\xbb\xbf" "bom", "\"\\ufeffbom\""},         /* U+FEFF */
	{"c1\xc2\x9b", "\"c1\\u009b\""},              /* U+009B CSI */
	{"caf\xc3\xa9 \xe2\x82\xac", "\"caf\xc3\xa9 \xe2\x82\xac\""}, /* é € kept */
	{"bad\xff", "\"bad\\ufffd\""},
};

START_TEST(test_yaml_escapes)
{
	ck_assert_str_eq(capture(kvp_yaml_str, yaml_cases[_i].in), yaml_cases[_i].yaml);
}
END_TEST

/* The index against a plain scan: 20,000 random adds and finds of names
 * from a small alphabet (so many repeat), with the invariant n <= cap / 2. */
START_TEST(test_name_index_random)
{
	enum { N = 20000 };
	static char names[N][8];
	static size_t pos[N];
	size_t n = 0;
	struct kvp_name_index ix;
	kvp_name_index_init(&ix);
	srand(17);
	for (int op = 0; op < N; op++) {
		char name[8];
		int len = 1 + rand() % 4;
		for (int k = 0; k < len; k++)
			name[k] = "abcd"[rand() % 4];
		name[len] = 0;
		size_t want = SIZE_MAX;
		for (size_t i = 0; i < n && want == SIZE_MAX; i++)
			if (strcmp(names[i], name) == 0)
				want = pos[i];
		ck_assert_uint_eq(kvp_name_index_find(&ix, name), want);
		if (want == SIZE_MAX && rand() % 2) {
			memcpy(names[n], name, sizeof name);
			pos[n] = (size_t)op;
			ck_assert(kvp_name_index_add(&ix, names[n], (size_t)op));
			n++;
		}
		ck_assert_uint_eq(ix.n, n);
		ck_assert(ix.cap == 0 || 2 * ix.n <= ix.cap);
	}
	ck_assert_uint_gt(n, 100); /* 4 + 16 + 64 + 256 = 340 names exist */
	kvp_name_index_free(&ix);
}
END_TEST

static size_t temp_files(void)
{
	size_t n = 0;
	DIR *d = opendir(tmpdir);
	ck_assert_ptr_nonnull(d);
	for (struct dirent *e; (e = readdir(d)) != NULL;)
		n += e->d_name[0] == '.' && strstr(e->d_name, ".tmp") != NULL;
	closedir(d);
	return n;
}

static char *slurp(const char *path)
{
	static char buf[256];
	memset(buf, 0, sizeof buf);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	size_t got = fread(buf, 1, sizeof buf - 1, f);
	buf[got] = 0;
	fclose(f);
	return buf;
}

START_TEST(test_atomic_file)
{
	char path[700];
	snprintf(path, sizeof path, "%s", write_tmp("out.txt", "old\n"));
	struct kvp_afile a;
	struct kvp_error err = {0};
	/* abandoned: the target is as it was, no temporary file */
	ck_assert_int_eq(kvp_afile_open(&a, path, &err), KVP_STATUS_OK);
	fputs("half", a.f);
	ck_assert_uint_eq(temp_files(), 1);
	ck_assert_str_eq(slurp(path), "old\n");
	kvp_afile_abort(&a);
	ck_assert_str_eq(slurp(path), "old\n");
	ck_assert_uint_eq(temp_files(), 0);
	/* committed: the new text, the old mode kept */
	chmod(path, 0640);
	ck_assert_int_eq(kvp_afile_open(&a, path, &err), KVP_STATUS_OK);
	fputs("new\n", a.f);
	ck_assert_int_eq(kvp_afile_commit(&a, &err), KVP_STATUS_OK);
	ck_assert_str_eq(slurp(path), "new\n");
	struct stat sb;
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0640);
	ck_assert_uint_eq(temp_files(), 0);
}
END_TEST

START_TEST(test_input_refused)
{
	char path[700];
	snprintf(path, sizeof path, "%s", write_tmp("in.yaml", "x: 1\n"));
	FILE *f;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_input_open(path, &f, &err), KVP_STATUS_OK);
	fclose(f);
	struct kvp_afile a;
	ck_assert_int_eq(kvp_afile_open(&a, path, &err), KVP_STATUS_USAGE);
	ck_assert_str_eq(err.msg, "is one of this command's inputs; not writing over it");
	ck_assert_str_eq(slurp(path), "x: 1\n");
	ck_assert_uint_eq(temp_files(), 0);
}
END_TEST

/* Not regular files: named, and a FIFO with no writer does not block. */
START_TEST(test_input_kinds)
{
	char fifo[700];
	snprintf(fifo, sizeof fifo, "%s/fifo", tmpdir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	static const struct {
		const char *path, *msg;
	} t[] = {
		{NULL, "cannot open: a FIFO, not a regular file"},
		{"/", "cannot open: a directory, not a regular file"},
		{"/dev/null", "cannot open: a character device, not a regular file"},
		{"/nonexistent/x.yaml", "cannot open: no such file"},
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		FILE *f = NULL;
		struct kvp_error err = {0};
		ck_assert_int_eq(kvp_input_open(t[i].path ? t[i].path : fifo, &f, &err), KVP_STATUS_IO);
		ck_assert_ptr_null(f);
		ck_assert_str_eq(err.msg, t[i].msg);
	}
}
END_TEST

/* A FIFO is streamed to (its reader gets the text) and stays a FIFO. */
START_TEST(test_afile_fifo)
{
	char fifo[700];
	snprintf(fifo, sizeof fifo, "%s/fifo", tmpdir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	int rd = open(fifo, O_RDONLY | O_NONBLOCK); /* the reader, so the open does not wait */
	ck_assert_int_ge(rd, 0);
	struct kvp_afile a;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_afile_open(&a, fifo, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(temp_files(), 0);
	fputs("<testsuites/>\n", a.f);
	ck_assert_int_eq(kvp_afile_commit(&a, &err), KVP_STATUS_OK);
	char buf[64] = {0};
	ck_assert_int_eq(read(rd, buf, sizeof buf - 1), 14);
	ck_assert_str_eq(buf, "<testsuites/>\n");
	close(rd);
	struct stat sb;
	ck_assert_int_eq(lstat(fifo, &sb), 0);
	ck_assert(S_ISFIFO(sb.st_mode));
	ck_assert_int_eq(kvp_afile_pending(), 0);
}
END_TEST

/* A character device (a null device made here, 1:3 as in Linux's
 * Documentation/admin-guide/devices.txt) stays a device; skipped where
 * mknod is not allowed. */
START_TEST(test_afile_device)
{
	char dev[700];
	snprintf(dev, sizeof dev, "%s/null", tmpdir);
	if (mknod(dev, S_IFCHR | 0666, makedev(1, 3)) != 0) {
		fprintf(stderr, "test_afile_device: skipped, mknod: %s\n", strerror(errno));
		return;
	}
	struct kvp_afile a;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_afile_open(&a, dev, &err), KVP_STATUS_OK);
	fputs("gone\n", a.f);
	ck_assert_int_eq(kvp_afile_commit(&a, &err), KVP_STATUS_OK);
	struct stat sb;
	ck_assert_int_eq(lstat(dev, &sb), 0);
	ck_assert(S_ISCHR(sb.st_mode));
	ck_assert_uint_eq(temp_files(), 0);
}
END_TEST

/* A link to a file is replaced by the new file, its target never written
 * (a planted link cannot aim the write elsewhere); a dangling link the
 * same, nothing created where it pointed; a directory is refused. */
START_TEST(test_afile_links)
{
	char real[700], link[700], dangling[700], none[700];
	snprintf(real, sizeof real, "%s", write_tmp("precious", "old\n"));
	snprintf(link, sizeof link, "%s/link.xml", tmpdir);
	ck_assert_int_eq(symlink("precious", link), 0);
	struct kvp_afile a;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_afile_open(&a, link, &err), KVP_STATUS_OK);
	fputs("new\n", a.f);
	ck_assert_int_eq(kvp_afile_commit(&a, &err), KVP_STATUS_OK);
	struct stat sb;
	ck_assert_int_eq(lstat(link, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
	ck_assert_str_eq(slurp(link), "new\n");
	ck_assert_str_eq(slurp(real), "old\n");

	snprintf(dangling, sizeof dangling, "%s/dangling.xml", tmpdir);
	ck_assert_int_eq(symlink("none.xml", dangling), 0);
	ck_assert_int_eq(kvp_afile_open(&a, dangling, &err), KVP_STATUS_OK);
	fputs("new\n", a.f);
	ck_assert_int_eq(kvp_afile_commit(&a, &err), KVP_STATUS_OK);
	ck_assert_int_eq(lstat(dangling, &sb), 0);
	ck_assert(S_ISREG(sb.st_mode));
	snprintf(none, sizeof none, "%s/none.xml", tmpdir);
	ck_assert_int_ne(access(none, F_OK), 0);

	ck_assert_int_eq(kvp_afile_open(&a, tmpdir, &err), KVP_STATUS_IO);
	ck_assert_str_eq(err.msg, "a directory, not a file to write");
	ck_assert_uint_eq(temp_files(), 0);
	ck_assert_int_eq(kvp_afile_pending(), 0);
}
END_TEST

/* The file stdout goes to (`--junit log > log`, or /dev/stdout): written
 * through stdout after what was printed, never renamed over (stdout would
 * then write into a removed file) and never truncated. */
START_TEST(test_afile_stdout)
{
	char path[700];
	snprintf(path, sizeof path, "%s", write_tmp("log", ""));
	fflush(stdout);
	int saved = dup(1);
	int fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	dup2(fd, 1);
	close(fd);
	struct stat before, after;
	ck_assert_int_eq(stat(path, &before), 0);
	printf("text\n");
	struct kvp_afile a;
	struct kvp_error err = {0};
	kvp_status st = kvp_afile_open(&a, path, &err);
	if (!st) {
		fputs("junit\n", a.f);
		st = kvp_afile_commit(&a, &err);
	}
	printf("after\n");
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	ck_assert_int_eq(st, KVP_STATUS_OK);
	ck_assert_str_eq(slurp(path), "text\njunit\nafter\n");
	ck_assert_int_eq(stat(path, &after), 0);
	ck_assert_uint_eq(after.st_ino, before.st_ino); /* the same file, not a new one */
	ck_assert_uint_eq(temp_files(), 0);
}
END_TEST

/* SIGTERM between open and commit: the process dies of it as before, the
 * temporary file is gone and the target is as it was. */
START_TEST(test_afile_sigterm)
{
	char path[700];
	snprintf(path, sizeof path, "%s", write_tmp("out.txt", "old\n"));
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		signal(SIGTERM, SIG_DFL);
		struct kvp_afile a;
		struct kvp_error err = {0};
		if (kvp_afile_open(&a, path, &err) || kvp_afile_pending() != 1)
			_exit(3);
		fputs("half", a.f);
		fflush(a.f);
		raise(SIGTERM);
		_exit(4); /* not reached */
	}
	int status = 0;
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM, "status %#x", status);
	ck_assert_uint_eq(temp_files(), 0);
	ck_assert_str_eq(slurp(path), "old\n");
}
END_TEST

static void setup(void)
{
	tmp_make("check-writers");
}

static void teardown(void)
{
	tmp_remove();
}

static Suite *writers_suite(void)
{
	Suite *s = suite_create("writers");
	TCase *core = tcase_create("core");
	tcase_add_loop_test(core, test_utf8_next, 0, sizeof utf8_cases / sizeof utf8_cases[0]);
	tcase_add_test(core, test_utf8_trim);
	tcase_add_loop_test(core, test_text_escapes, 0, sizeof text_cases / sizeof text_cases[0]);
	tcase_add_loop_test(core, test_yaml_escapes, 0, sizeof yaml_cases / sizeof yaml_cases[0]);
	tcase_add_test(core, test_name_index_random);
	suite_add_tcase(s, core);
	TCase *files = tcase_create("files");
	tcase_add_checked_fixture(files, setup, teardown);
	tcase_add_test(files, test_atomic_file);
	tcase_add_test(files, test_input_refused);
	tcase_add_test(files, test_input_kinds);
	tcase_add_test(files, test_afile_fifo);
	tcase_add_test(files, test_afile_device);
	tcase_add_test(files, test_afile_links);
	tcase_add_test(files, test_afile_stdout);
	tcase_add_test(files, test_afile_sigterm);
	suite_add_tcase(s, files);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(writers_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
