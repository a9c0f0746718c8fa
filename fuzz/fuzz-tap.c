/* fuzz-tap.c: libFuzzer target for the TAP writer (src/out/tap-writer.h, the
 * description of an `ok N - ...` line).  The input (cut at the first NUL)
 * must come out as one line of UTF-8 where every '#' is escaped (so no name
 * starts a directive such as # SKIP or # TODO) and, with \# and \\
 * unescaped, gives the input with a byte that is not UTF-8 as U+FFFD, a line
 * break as a space and other control characters as '?'.  Build: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "fuzz-text.h"
#include "out/tap-writer.h"

/* A line break as a space, other control characters as '?'. */
static uint32_t tap_map(uint32_t c)
{
	return c == '\n' || c == '\r' ? ' ' : c < 0x20 || c == 0x7f ? '?' : c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	if (!s)
		return 0;
	struct ft_cps want = {0}, got = {0};
	ft_expect(s, tap_map, &want);
	struct ft_out o;
	ft_write(kvp_tap_text, s, &o);
	for (size_t i = 0; i < o.len;) {
		const unsigned char *p = (const unsigned char *)o.buf + i;
		FUZZ_ASSERT(*p >= 0x20 && *p != 0x7f, "a control character or line break");
		if (*p == '\\') {
			FUZZ_ASSERT(i + 1 < o.len && (p[1] == '#' || p[1] == '\\'), "a lone backslash");
			ft_push(&got, p[1]);
			i += 2;
			continue;
		}
		FUZZ_ASSERT(*p != '#', "an unescaped # (a directive)");
		uint32_t cp;
		size_t len = ft_seq(p, o.len - i, &cp);
		FUZZ_ASSERT(len, "not UTF-8");
		ft_push(&got, cp);
		i += len;
	}
	FUZZ_ASSERT(ft_equal(&want, &got), "the description does not read back");
	free(o.buf);
	free(want.v);
	free(got.v);
	free(s);
	return 0;
}
