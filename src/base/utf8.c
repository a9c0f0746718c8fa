/* utf8.c: validate UTF-8 one sequence at a time (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF).  See utf8.h. */
#include "base/utf8.h"

#include <string.h>

size_t kvp_utf8_next(const char *s, uint32_t *cp)
{
	const unsigned char *p = (const unsigned char *)s;
	uint32_t c = p[0], min;
	size_t n;
	if (c == 0)
		return 0;
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2, c &= 0x1f, min = 0x80;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3, c &= 0x0f, min = 0x800;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4, c &= 0x07, min = 0x10000;
	} else {
		return 0; /* a continuation byte, 0xc0, 0xc1 or 0xf5.. */
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0; /* also stops at the NUL */
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

uint32_t kvp_utf8_take(const char **s, int *valid)
{
	uint32_t cp;
	size_t n = kvp_utf8_next(*s, &cp);
	*valid = n != 0;
	*s += n ? n : 1;
	return n ? cp : 0xfffd;
}

void kvp_utf8_trim(char *s)
{
	size_t len = strlen(s);
	/* the last lead byte within the final three bytes */
	for (size_t back = 1; back <= 4 && back <= len; back++) {
		unsigned char c = (unsigned char)s[len - back];
		if ((c & 0xc0) == 0x80)
			continue; /* a continuation byte: look further back */
		if (c >= 0xc0) {
			size_t want = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : 2;
			if (want > back)
				s[len - back] = 0;
		}
		return;
	}
}
