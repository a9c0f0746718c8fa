/* yaml-writer.c: double-quoted YAML scalars and key lines for the engine
 * config files kvplan emits and the baselines and TAP diagnostics of
 * `kvplan check`.  See yaml-writer.h for the stance. */
#include "out/yaml-writer.h"

#include <stdbool.h>

#include "base/utf8.h"

/* A code point past ASCII that YAML 1.2 takes as written inside a quoted
 * scalar (c-printable, no line break, no byte order mark): not the C1
 * controls U+0080-U+009F (U+0085 is a YAML line break), not U+2028 and
 * U+2029 (line and paragraph separators: YAML folds them as line breaks),
 * not U+FEFF, U+FFFE, U+FFFF. */
static bool yaml_printable(uint32_t cp)
{
	return !(cp <= 0x9f || cp == 0x2028 || cp == 0x2029 || cp == 0xfeff || cp == 0xfffe ||
		 cp == 0xffff);
}

void kvp_yaml_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		uint32_t cp;
		size_t n = *p < 0x80 ? 1 : kvp_utf8_next((const char *)p, &cp);
		if (n == 0) { /* not UTF-8: U+FFFD, so the file stays valid YAML */
			fputs("\\ufffd", f);
		} else if (n > 1 && !yaml_printable(cp)) {
			fprintf(f, "\\u%04x", (unsigned)cp);
			p += n - 1;
		} else if (n > 1) { /* a UTF-8 sequence as it is: YAML text is UTF-8 */
			fwrite(p, 1, n, f);
			p += n - 1;
		} else if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

void kvp_yaml_kv_str(FILE *f, int indent, const char *key, const char *value)
{
	fprintf(f, "%*s%s: ", indent, "", key);
	kvp_yaml_str(f, value);
	fputc('\n', f);
}

void kvp_yaml_item_str(FILE *f, int indent, const char *value)
{
	fprintf(f, "%*s- ", indent, "");
	kvp_yaml_str(f, value);
	fputc('\n', f);
}

void kvp_yaml_kv_u64(FILE *f, int indent, const char *key, uint64_t value)
{
	fprintf(f, "%*s%s: %llu\n", indent, "", key, (unsigned long long)value);
}

void kvp_yaml_kv_f64(FILE *f, int indent, const char *key, double value)
{
	fprintf(f, "%*s%s: %.4f\n", indent, "", key, value);
}

void kvp_yaml_kv_bool(FILE *f, int indent, const char *key, int value)
{
	fprintf(f, "%*s%s: %s\n", indent, "", key, value ? "true" : "false");
}

void kvp_yaml_map(FILE *f, int indent, const char *key)
{
	fprintf(f, "%*s%s:\n", indent, "", key);
}

void kvp_yaml_kv_num(FILE *f, int indent, const char *key, double value)
{
	fprintf(f, "%*s%s: %.9g\n", indent, "", key, value);
}
