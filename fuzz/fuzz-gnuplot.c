/* fuzz-gnuplot.c: libFuzzer target for the gnuplot writer
 * (src/out/gnuplot-writer.h).  The input is one name (cut at the first NUL).
 * kvp_gp_string's output, parsed back by this target's own reader of
 * gnuplot string expressions ('...' with '' for a quote, joined by ."\n".),
 * must give the input with its line breaks and only those as "\n" and
 * control characters as '?'; nothing lies outside the single quotes but the
 * joins, so no backquote or @macro can reach gnuplot's command line.  A
 * comment stays one line without backquote, control character or backslash;
 * a .dat string stays one quoted field; a stem is safe and as long as its
 * name.  Build: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "fuzz-text.h"
#include "out/gnuplot-writer.h"

/* What kvp_gp_string should keep of s, byte by byte. */
static void expect_string(const char *s, struct ft_cps *want)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\n' || (c == '\\' && s[1] == 'n')) {
			ft_push(want, '\n');
			s += c == '\\';
		} else {
			ft_push(want, c < 0x20 || c == 0x7f ? '?' : c);
		}
	}
}

/* Read back 'lit' ( ."\n". 'lit' )*; false when the text is anything else. */
static bool read_string(const char *t, size_t n, struct ft_cps *got)
{
	static const char join[] = "'.\"\\n\".'";
	size_t i = 0;
	if (n < 2 || t[i++] != '\'')
		return false;
	for (;;) {
		if (i >= n)
			return false; /* unterminated */
		unsigned char c = (unsigned char)t[i];
		if (c == '\'') {
			if (i + 1 < n && t[i + 1] == '\'') {
				ft_push(got, '\'');
				i += 2;
				continue;
			}
			if (i + 1 == n)
				return true; /* the closing quote ends the text */
			if (strncmp(t + i, join, sizeof join - 1) != 0)
				return false;
			ft_push(got, '\n');
			i += sizeof join - 1;
			continue;
		}
		if (c < 0x20 || c == 0x7f)
			return false; /* a raw control character or line break */
		ft_push(got, c);
		i++;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	if (!s)
		return 0;
	struct ft_out o;
	struct ft_cps want = {0}, got = {0};

	ft_write(kvp_gp_string, s, &o);
	expect_string(s, &want);
	FUZZ_ASSERT(read_string(o.buf, o.len, &got), "not one gnuplot string expression");
	FUZZ_ASSERT(ft_equal(&want, &got), "the string does not read back as the name");
	free(o.buf);

	ft_write(kvp_gp_comment, s, &o);
	for (size_t i = 0; i < o.len; i++) {
		unsigned char c = (unsigned char)o.buf[i];
		FUZZ_ASSERT(c >= 0x20 && c != 0x7f && c != '`' && c != '\\', "a comment breaks out");
	}
	free(o.buf);

	ft_write(kvp_gp_dat_string, s, &o);
	FUZZ_ASSERT(o.len >= 2 && o.buf[0] == '"' && o.buf[o.len - 1] == '"', "dat field unquoted");
	for (size_t i = 1; i + 1 < o.len; i++) {
		unsigned char c = (unsigned char)o.buf[i];
		FUZZ_ASSERT(c != '"' && c >= 0x20 && c != 0x7f, "dat field split");
	}
	FUZZ_ASSERT(o.len < 3 || o.buf[o.len - 2] != '\\', "dat field's quote escaped");
	free(o.buf);

	char stem[64];
	bool fits = kvp_gp_stem(stem, sizeof stem, s);
	FUZZ_ASSERT(kvp_gp_stem_ok(stem), "unsafe stem");
	for (const char *p = stem; *p; p++)
		FUZZ_ASSERT(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", *p),
			    "stem character outside the set");
	FUZZ_ASSERT(!*s || strlen(stem) == (fits ? strlen(s) : sizeof stem - 1), "stem length");
	if (fits && *s)
		FUZZ_ASSERT(kvp_gp_stem_ok(s) == (strcmp(stem, s) == 0), "stem_ok disagrees");
	kvp_gp_file(ft_open(&o), stem, "dat");
	ft_close(&o);
	FUZZ_ASSERT(o.len == strlen(stem) + 6 && o.buf[0] == '\'' && o.buf[o.len - 1] == '\'',
		    "file name not one quoted word");
	free(o.buf);

	free(want.v);
	free(got.v);
	free(s);
	return 0;
}
