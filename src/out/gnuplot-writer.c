/* gnuplot-writer.c: quoting for gnuplot scripts and data files.  See
 * gnuplot-writer.h for the stance: input text reaches a script only as a
 * single-quoted string, a file name only as a reduced stem. */
#include "out/gnuplot-writer.h"

#include <assert.h>
#include <stdarg.h>
#include <string.h>

#define STEM_MAX 200

/* Whether a printf format converts a string or a character. */
static bool format_has_text(const char *fmt)
{
	for (const char *p = fmt; (p = strchr(p, '%')) != NULL;) {
		p++;
		if (*p == '%') {
			p++;
			continue;
		}
		p += strspn(p, "-+ #0123456789.*lhzjtL");
		if (*p == 's' || *p == 'c' || *p == 'S' || *p == 'C')
			return true;
	}
	return false;
}

void kvp_gp_code(FILE *f, const char *fmt, ...)
{
	assert(!format_has_text(fmt));
	va_list ap;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
}

static bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

void kvp_gp_string(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\n' || (c == '\\' && s[1] == 'n')) {
			fputs("'.\"\\n\".'", f);
			if (c == '\\')
				s++;
		} else if (c == '\'') {
			fputs("''", f);
		} else {
			fputc(is_control(c) ? '?' : c, f);
		}
	}
	fputc('\'', f);
}

void kvp_gp_file(FILE *f, const char *stem, const char *ext)
{
	assert(kvp_gp_stem_ok(stem));
	assert(ext && kvp_gp_stem_ok(ext));
	fputc('\'', f);
	fputs(stem, f);
	fputc('.', f);
	fputs(ext, f);
	fputc('\'', f);
}

void kvp_gp_comment(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '\\' && s[1] == 'n') {
			fputs("; ", f);
			s++;
		} else if (c == '\n') {
			fputs("; ", f);
		} else if (c == '`') {
			fputc('\'', f);
		} else if (c == '\\') {
			fputc('/', f);
		} else {
			fputc(is_control(c) ? '?' : c, f);
		}
	}
}

void kvp_gp_dat_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"')
			fputc('\'', f);
		else if (c == '\n' || c == '\r')
			fputc(' ', f);
		else if (c == '\\' && s[1] != 'n')
			fputc('/', f); /* a trailing \ would escape the closing quote */
		else
			fputc(is_control(c) ? '?' : c, f);
	}
	fputc('"', f);
}

static bool stem_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-';
}

bool kvp_gp_stem_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	if (n == 0 || n > STEM_MAX || s[0] == '.' || s[0] == '-')
		return false;
	for (size_t i = 0; i < n; i++)
		if (!stem_char((unsigned char)s[i]))
			return false;
	return true;
}

bool kvp_gp_stem(char *out, size_t size, const char *name)
{
	assert(size >= 2);
	if (!name || !*name)
		name = "plot";
	size_t cap = size - 1 < STEM_MAX ? size - 1 : STEM_MAX;
	size_t n = 0;
	for (; name[n] && n < cap; n++) {
		unsigned char c = (unsigned char)name[n];
		out[n] = stem_char(c) && !(n == 0 && (c == '.' || c == '-')) ? (char)c : '_';
	}
	out[n] = 0;
	return name[n] == 0;
}
