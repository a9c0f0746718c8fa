/* shell-quote.c: single-quoted shell words and one-line comments.  See
 * shell-quote.h. */
#include "out/shell-quote.h"

void kvp_sh_word(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; s && *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

void kvp_sh_comment(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		fputc(c < 0x20 || c == 0x7f ? '?' : c, f);
	}
}
