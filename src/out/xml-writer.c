/* xml-writer.c: escape text for XML 1.0.  See xml-writer.h. */
#include "out/xml-writer.h"

#include <stdint.h>

#include "base/utf8.h"

void kvp_xml_text(FILE *f, const char *s)
{
	while (*s) {
		const char *at = s;
		int valid;
		uint32_t cp = kvp_utf8_take(&s, &valid);
		switch (valid ? cp : 0) {
		case 0: fputs(KVP_UTF8_REPLACEMENT, f); break;
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '\n': fputs("&#10;", f); break;
		case '\t': fputs("&#9;", f); break;
		case '\r': fputs("&#13;", f); break;
		default:
			if (cp < 0x20 || cp == 0xfffe || cp == 0xffff)
				fputc('?', f);
			else
				fwrite(at, 1, (size_t)(s - at), f);
		}
	}
}
