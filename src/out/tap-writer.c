/* tap-writer.c: escape text for a TAP description.  See tap-writer.h. */
#include "out/tap-writer.h"

#include <stdint.h>

#include "base/utf8.h"

void kvp_tap_text(FILE *f, const char *s)
{
	while (*s) {
		const char *at = s;
		int valid;
		uint32_t cp = kvp_utf8_take(&s, &valid);
		if (!valid)
			fputs(KVP_UTF8_REPLACEMENT, f);
		else if (cp == '#' || cp == '\\')
			fprintf(f, "\\%c", (char)cp);
		else if (cp == '\n' || cp == '\r')
			fputc(' ', f);
		else if (cp < 0x20 || cp == 0x7f)
			fputc('?', f);
		else
			fwrite(at, 1, (size_t)(s - at), f);
	}
}
