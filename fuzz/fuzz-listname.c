/* fuzz-listname.c: libFuzzer target for what the bash and zsh completions
 * read: `kvplan list`'s names (kvp_profile_list over $KVPLAN_PROFILES, then
 * kvp_term_text, as src/cli/cmd-list.c prints them).  completion/kvplan then
 * matches those lines literally, one a line, so what it can be fed is decided
 * here.  The input (cut at the first NUL; its first byte picks the size of a
 * short output buffer) is a file name NAME.yaml made in a folder of its own
 * under $KVPLAN_PROFILES/models.  Invariants:
 *   - NAME is listed exactly once, byte for byte, and the list is sorted
 *     and has no duplicate (the built-in profiles are listed beside it);
 *   - shown in KVP_TERM_SIZE(len) bytes it is whole (never cut) and equal to
 *     this target's own escaping (\n, \t, \xNN for C0 and DEL): one name is
 *     one line and sends no control byte, so a terminal or the completion's
 *     `read -r` sees exactly one entry;
 *   - shown in a short buffer it ends inside the buffer, NUL-terminated, and
 *     where it was cut it says so with "...".
 * Names the file system cannot hold (a '/', "." or "..", over 200 bytes) are
 * skipped.  Build: fuzz/run.sh. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz-common.h"
#include "out/output.h"
#include "read/profile.h"

/* The reference: term_char in src/out/output.c written again, plainly. */
static size_t ref_escape(const char *s, char *out)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\n') {
			out[n++] = '\\', out[n++] = 'n';
		} else if (*p == '\t') {
			out[n++] = '\\', out[n++] = 't';
		} else if (*p < 0x20 || *p == 0x7f) {
			static const char hex[] = "0123456789abcdef";
			out[n++] = '\\', out[n++] = 'x';
			out[n++] = hex[*p >> 4], out[n++] = hex[*p & 15];
		} else {
			out[n++] = (char)*p;
		}
	}
	out[n] = 0;
	return n;
}

static char root[512];

static void make_root(void)
{
	if (root[0])
		return;
	const char *t = getenv("TMPDIR");
	snprintf(root, sizeof root, "%s/kvplan-listname-%ld", t && *t ? t : "/tmp", (long)getpid());
	char models[600];
	snprintf(models, sizeof models, "%s/models", root);
	if ((mkdir(root, 0700) && access(root, W_OK)) || (mkdir(models, 0700) && access(models, W_OK)))
		abort();
	if (setenv("KVPLAN_PROFILES", root, 1))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 2)
		return 0;
	size_t small = data[0] % 24; /* 0..23 bytes: cuts at every place */
	char *name = fuzz_cstring(data + 1, size - 1);
	if (!name)
		return 0;
	size_t len = strlen(name);
	if (len == 0 || len > 200 || strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, "..")) {
		free(name);
		return 0;
	}
	make_root();
	char path[900];
	snprintf(path, sizeof path, "%s/models/%s.yaml", root, name);
	FILE *f = fopen(path, "w");
	if (!f) { /* a name this file system refuses (e.g. too long in bytes) */
		free(name);
		return 0;
	}
	fclose(f);

	char *names[1024];
	size_t n = kvp_profile_list("models", names, 1024);
	size_t found = 0;
	for (size_t i = 0; i < n; i++) {
		found += strcmp(names[i], name) == 0;
		if (i)
			FUZZ_ASSERT(strcmp(names[i - 1], names[i]) < 0, "list not sorted or a duplicate");
	}
	FUZZ_ASSERT(n < 1024, "the list is full: a name may be lost");
	FUZZ_ASSERT(found == 1, "the file's name is not listed exactly once");

	char *want = malloc(4 * len + 1);
	char *shown = malloc(KVP_TERM_SIZE(len));
	if (!want || !shown)
		abort();
	size_t wl = ref_escape(name, want);
	kvp_term_text(shown, KVP_TERM_SIZE(len), name);
	FUZZ_ASSERT(strcmp(shown, want) == 0, "the name shown differs from the reference escaping");
	for (size_t i = 0; i < wl; i++)
		FUZZ_ASSERT((unsigned char)shown[i] >= 0x20 && shown[i] != 0x7f,
			    "a control byte reaches the terminal or the completion");

	/* a short buffer: cut inside it, and marked */
	char cut[32];
	memset(cut, 'Z', sizeof cut);
	kvp_term_text(cut, small, name);
	if (small) {
		size_t cl = strnlen(cut, small);
		FUZZ_ASSERT(cl < small, "not NUL-terminated inside the buffer");
		FUZZ_ASSERT(memcmp(cut, want, cl) == 0 || (cl >= 3 && !strcmp(cut + cl - 3, "...")),
			    "a cut name is neither a prefix of the whole nor marked");
		if (wl >= small && small >= 4)
			FUZZ_ASSERT(cl >= 3 && !strcmp(cut + cl - 3, "..."), "a cut name is not marked");
		if (wl < small)
			FUZZ_ASSERT(strcmp(cut, want) == 0, "a name that fits was changed");
	}
	FUZZ_ASSERT(cut[small] == 'Z', "written past the buffer");

	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(want);
	free(shown);
	unlink(path);
	free(name);
	return 0;
}
