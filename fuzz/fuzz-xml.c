/* fuzz-xml.c: libFuzzer target for the XML writer (src/out/xml-writer.h, the
 * JUnit report's text).  The input (cut at the first NUL) is written as an
 * attribute value and as character data.  This target's own reader requires
 * well-formed XML 1.0 text: UTF-8, only the characters XML allows, no raw
 * < > " ' or line break, & only in the five entities and the three character
 * references the writer uses; decoded, it must give the input with a byte
 * that is not UTF-8 as U+FFFD and a character XML forbids as '?'.
 * Build: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "fuzz-text.h"
#include "out/xml-writer.h"

static bool xml_char(uint32_t c)
{
	return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
	       (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

static bool read_text(const char *t, size_t n, struct ft_cps *out)
{
	static const struct {
		const char *ref;
		uint32_t cp;
	} refs[] = {{"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'},
		    {"&apos;", '\''}, {"&#10;", '\n'}, {"&#9;", '\t'}, {"&#13;", '\r'}};
	for (size_t i = 0; i < n;) {
		const unsigned char *p = (const unsigned char *)t + i;
		if (*p == '&') {
			size_t r = 0;
			while (r < sizeof refs / sizeof refs[0] &&
			       strncmp(t + i, refs[r].ref, strlen(refs[r].ref)) != 0)
				r++;
			if (r == sizeof refs / sizeof refs[0])
				return false;
			ft_push(out, refs[r].cp);
			i += strlen(refs[r].ref);
			continue;
		}
		if (strchr("<>\"'\n\r\t", *p))
			return false; /* raw: would end the attribute or be normalised */
		uint32_t cp;
		size_t len = ft_seq(p, n - i, &cp);
		if (!len || !xml_char(cp))
			return false;
		ft_push(out, cp);
		i += len;
	}
	return true;
}

/* The characters XML 1.0 forbids as '?'. */
static uint32_t xml_map(uint32_t c)
{
	return (c < 0x20 && c != '\n' && c != '\t' && c != '\r') || c == 0xfffe || c == 0xffff ? '?'
												  : c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	if (!s)
		return 0;
	struct ft_cps want = {0}, got = {0};
	ft_expect(s, xml_map, &want);
	struct ft_out o;
	ft_write(kvp_xml_text, s, &o);
	FUZZ_ASSERT(read_text(o.buf, o.len, &got), "not well-formed XML text");
	FUZZ_ASSERT(ft_equal(&want, &got), "the text does not read back");
	free(o.buf);
	free(want.v);
	free(got.v);
	free(s);
	return 0;
}
