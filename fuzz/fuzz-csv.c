/* fuzz-csv.c: libFuzzer target for the CSV writer (kvp_write_csv,
 * src/out/output.c).  The input (cut at the first NUL) is a string field of one
 * row beside a number and the same string again.  This target's own RFC 4180
 * reader must find a header and one row of three cells; each string cell is
 * the input, after a ' when the input begins with = + - @ tab or CR (a
 * spreadsheet formula otherwise), and the number is the number.
 * Build: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "fuzz-text.h"
#include "out/output.h"

/* One record of RFC 4180 CSV at t[*i..n) into cells (each malloc'd);
 * false when malformed. */
static bool read_record(const char *t, size_t n, size_t *i, char **cells, size_t max,
			size_t *ncells)
{
	*ncells = 0;
	for (;;) {
		size_t cap = n - *i + 1, k = 0;
		char *c = malloc(cap);
		if (!c)
			abort();
		if (*i < n && t[*i] == '"') {
			(*i)++;
			for (;;) {
				if (*i >= n) {
					free(c);
					return false;
				}
				if (t[*i] == '"') {
					if (*i + 1 < n && t[*i + 1] == '"') {
						c[k++] = '"';
						*i += 2;
						continue;
					}
					(*i)++;
					break;
				}
				c[k++] = t[(*i)++];
			}
		} else {
			while (*i < n && t[*i] != ',' && t[*i] != '\n') {
				if (t[*i] == '"' || t[*i] == '\r') {
					free(c);
					return false; /* a quote or CR in an unquoted cell */
				}
				c[k++] = t[(*i)++];
			}
		}
		c[k] = 0;
		if (*ncells == max) {
			free(c);
			return false;
		}
		cells[(*ncells)++] = c;
		if (*i < n && t[*i] == ',') {
			(*i)++;
			continue;
		}
		if (*i < n && t[*i] == '\n') {
			(*i)++;
			return true;
		}
		return false; /* a record ends with its line break */
	}
}

/* What a CSV cell holds for the string s, written here from the contract in
 * output.c's comment and RFC 3629, sharing none of its code: well-formed
 * UTF-8 (no overlong forms, no surrogates, nothing past U+10FFFF) is kept, a
 * byte that starts no such sequence becomes U+FFFD (one byte consumed), a
 * line break, tab and carriage return \\n \\t \\r, the other C0 controls
 * and DEL \\xNN, the C1 controls \\uNNNN.  The caller frees the result. */
static char *expected_cell(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(n * 6 + 1), *o = out;
	if (!out)
		abort();
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0;
	while (i < n) {
		unsigned c = u[i];
		size_t len = c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
			   : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		unsigned long cp = len == 1 ? c : len == 2 ? c & 0x1f : len == 3 ? c & 0x0f : c & 0x07;
		bool ok = len > 0 && i + len <= n;
		for (size_t k = 1; ok && k < len; k++) {
			ok = (u[i + k] & 0xc0) == 0x80;
			cp = cp << 6 | (u[i + k] & 0x3f);
		}
		if (ok && ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
			   (len == 4 && (cp < 0x10000 || cp > 0x10ffff))))
			ok = false;
		if (!ok) {
			o += sprintf(o, "\xef\xbf\xbd");
			i++;
			continue;
		}
		if (cp == '\n')
			o += sprintf(o, "\\n");
		else if (cp == '\t')
			o += sprintf(o, "\\t");
		else if (cp == '\r')
			o += sprintf(o, "\\r");
		else if (cp < 0x20 || cp == 0x7f)
			o += sprintf(o, "\\x%02x", (unsigned)cp);
		else if (cp >= 0x80 && cp <= 0x9f)
			o += sprintf(o, "\\u%04x", (unsigned)cp);
		else {
			memcpy(o, s + i, len);
			o += len;
		}
		i += len;
	}
	*o = 0;
	return out;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	if (!s)
		return 0;
	struct kvp_record *rec = kvp_record_new();
	if (!rec || !kvp_record_str(rec, "a", s) || !kvp_record_u64(rec, "b", 7) ||
	    !kvp_record_str(rec, "c", s))
		abort();
	struct ft_out o;
	kvp_write_csv(ft_open(&o), &rec, 1);
	ft_close(&o);
	FUZZ_ASSERT(strlen(o.buf) == o.len, "a NUL in the CSV");
	char *head[4], *row[4];
	size_t nh = 0, nr = 0, i = 0;
	FUZZ_ASSERT(read_record(o.buf, o.len, &i, head, 4, &nh), "header malformed");
	FUZZ_ASSERT(read_record(o.buf, o.len, &i, row, 4, &nr), "row malformed");
	FUZZ_ASSERT(i == o.len, "more than one row");
	/* the first column is the schema version (output.h) */
	FUZZ_ASSERT(nh == 4 && !strcmp(head[0], "schema_version") && !strcmp(head[1], "a") &&
		    !strcmp(head[2], "b") && !strcmp(head[3], "c"), "header");
	FUZZ_ASSERT(nr == 4 && !strcmp(row[2], "7"), "the number");
	bool formula = *s && strchr("=+-@\t\r", *s);
	char *want = expected_cell(s);
	for (int k = 1; k < 4; k += 2) {
		const char *cell = row[k];
		FUZZ_ASSERT(!*cell || !strchr("=+-@\t\r", *cell), "a formula reaches the spreadsheet");
		if (formula)
			FUZZ_ASSERT(cell[0] == '\'' && !strcmp(cell + 1, want), "neutralised cell");
		else
			FUZZ_ASSERT(!strcmp(cell, want), "cell does not read back as its escaped text");
	}
	free(want);
	for (size_t k = 0; k < nh; k++)
		free(head[k]);
	for (size_t k = 0; k < nr; k++)
		free(row[k]);
	free(o.buf);
	kvp_record_free(rec);
	free(s);
	return 0;
}
