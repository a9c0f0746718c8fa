/* yaml-writer.c: double-quoted YAML scalars and key lines for the engine
 * config files kvplan emits.  See yaml-writer.h for the stance. */
#include "yaml-writer.h"

void kvp_yaml_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p == '\n')
			fputs("\\n", f);
		else if (*p == '\t')
			fputs("\\t", f);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\x%02x", *p);
		else
			fputc(*p, f); /* UTF-8 bytes as they are: YAML text is UTF-8 */
	}
	fputc('"', f);
}

void kvp_yaml_kv_str(FILE *f, int indent, const char *key, const char *value)
{
	fprintf(f, "%*s%s: ", indent, "", key);
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
