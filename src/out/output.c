/* output.c: records and the table, JSON and CSV writers.  See output.h. */
#include "out/output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"

struct kvp_record *kvp_record_new(void) { return calloc(1, sizeof(struct kvp_record)); }

static void value_clear(struct kvp_value *v)
{
	free(v->s);
	kvp_record_free(v->rec);
	for (size_t i = 0; i < v->nlist; i++)
		kvp_record_free(v->list[i]);
	free(v->list);
	memset(v, 0, sizeof *v);
}

void kvp_record_free(struct kvp_record *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->n; i++) {
		free(r->fields[i].name);
		value_clear(&r->fields[i].v);
	}
	free(r->fields);
	free(r);
}

/* The slot for `name`, cleared, or NULL when out of memory. */
static struct kvp_value *slot(struct kvp_record *r, const char *name)
{
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->fields[i].name, name) == 0) {
			value_clear(&r->fields[i].v);
			return &r->fields[i].v;
		}
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct kvp_field_value *nf = realloc(r->fields, cap * sizeof *nf);
		if (!nf)
			return NULL;
		r->fields = nf;
		r->cap = cap;
	}
	char *nm = strdup(name);
	if (!nm)
		return NULL;
	r->fields[r->n].name = nm;
	memset(&r->fields[r->n].v, 0, sizeof r->fields[r->n].v);
	return &r->fields[r->n++].v;
}

bool kvp_record_u64(struct kvp_record *r, const char *name, uint64_t v)
{
	struct kvp_value *s = slot(r, name);
	if (!s)
		return false;
	s->type = KVP_VALUE_U64;
	s->u = v;
	return true;
}

bool kvp_record_f64(struct kvp_record *r, const char *name, double v)
{
	struct kvp_value *s = slot(r, name);
	if (!s)
		return false;
	s->type = KVP_VALUE_F64;
	s->f = v;
	return true;
}

bool kvp_record_str(struct kvp_record *r, const char *name, const char *v)
{
	struct kvp_value *s = slot(r, name);
	if (!s)
		return false;
	s->type = KVP_VALUE_STR;
	s->s = strdup(v ? v : "");
	return s->s != NULL;
}

bool kvp_record_bool(struct kvp_record *r, const char *name, bool v)
{
	struct kvp_value *s = slot(r, name);
	if (!s)
		return false;
	s->type = KVP_VALUE_BOOL;
	s->b = v;
	return true;
}

bool kvp_record_null(struct kvp_record *r, const char *name)
{
	struct kvp_value *s = slot(r, name);
	if (!s)
		return false;
	s->type = KVP_VALUE_NULL;
	return true;
}

bool kvp_record_rec(struct kvp_record *r, const char *name, struct kvp_record *sub)
{
	struct kvp_value *s = slot(r, name);
	if (!s) {
		kvp_record_free(sub);
		return false;
	}
	s->type = KVP_VALUE_RECORD;
	s->rec = sub;
	return true;
}

bool kvp_record_list(struct kvp_record *r, const char *name)
{
	struct kvp_value *s = slot(r, name);
	if (!s)
		return false;
	s->type = KVP_VALUE_LIST;
	return true;
}

bool kvp_record_push(struct kvp_record *r, const char *name, struct kvp_record *sub)
{
	struct kvp_value *s = NULL;
	for (size_t i = 0; i < r->n; i++)
		if (strcmp(r->fields[i].name, name) == 0 && r->fields[i].v.type == KVP_VALUE_LIST)
			s = &r->fields[i].v;
	if (!s) {
		s = slot(r, name);
		if (!s) {
			kvp_record_free(sub);
			return false;
		}
		s->type = KVP_VALUE_LIST;
	}
	struct kvp_record **nl = realloc(s->list, (s->nlist + 1) * sizeof *nl);
	if (!nl) {
		kvp_record_free(sub);
		return false;
	}
	s->list = nl;
	s->list[s->nlist++] = sub;
	return true;
}

const struct kvp_value *kvp_record_get(const struct kvp_record *r, const char *name)
{
	const char *dot = strchr(name, '.');
	size_t len = dot ? (size_t)(dot - name) : strlen(name);
	for (size_t i = 0; r && i < r->n; i++) {
		if (strlen(r->fields[i].name) != len || strncmp(r->fields[i].name, name, len) != 0)
			continue;
		if (!dot)
			return &r->fields[i].v;
		if (r->fields[i].v.type == KVP_VALUE_RECORD)
			return kvp_record_get(r->fields[i].v.rec, dot + 1);
		return NULL;
	}
	return NULL;
}

/* A JSON string that is valid UTF-8 whatever s holds: a byte that starts no
 * valid sequence becomes U+FFFD, control characters (and U+2028, U+2029,
 * which end a line in JavaScript) are escaped. */
static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	while (*s) {
		const char *at = s;
		int valid;
		uint32_t cp = kvp_utf8_take(&s, &valid);
		switch (valid ? cp : 0) {
		case 0: fputs("\\ufffd", f); break;
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\t': fputs("\\t", f); break;
		case '\r': fputs("\\r", f); break;
		default:
			if (cp < 0x20 || cp == 0x7f || cp == 0x2028 || cp == 0x2029)
				fprintf(f, "\\u%04x", (unsigned)cp);
			else
				fwrite(at, 1, (size_t)(s - at), f);
		}
	}
	fputc('"', f);
}

/* The shortest "%.Ng" (N = 1..17) that strtod reads back to x exactly:
 * 17 significant digits always do for a binary64 double. */
static void format_f64(double x, char *buf, size_t size)
{
	/* a whole number (bytes, FLOPs held in a double) in plain digits:
	 * below 2^53 every integer is exact */
	if (x == floor(x) && fabs(x) < 9007199254740992.0) {
		snprintf(buf, size, "%.0f", x);
		return;
	}
	for (int digits = 1; digits <= 17; digits++) {
		snprintf(buf, size, "%.*g", digits, x);
		if (strtod(buf, NULL) == x)
			return;
	}
}

static void json_record(FILE *f, const struct kvp_record *r, int indent);

/* a value kvp_write_json_line writes: no record or list (they break lines) */
static bool scalar_json(const struct kvp_value *v)
{
	return v->type != KVP_VALUE_RECORD && v->type != KVP_VALUE_LIST;
}

static void json_value(FILE *f, const struct kvp_value *v, int indent)
{
	switch (v->type) {
	case KVP_VALUE_U64: fprintf(f, "%llu", (unsigned long long)v->u); break;
	case KVP_VALUE_F64:
		if (isfinite(v->f)) {
			char buf[40];
			format_f64(v->f, buf, sizeof buf);
			fputs(buf, f);
		} else {
			fputs("null", f);
		}
		break;
	case KVP_VALUE_STR: json_string(f, v->s); break;
	case KVP_VALUE_BOOL: fputs(v->b ? "true" : "false", f); break;
	case KVP_VALUE_NULL: fputs("null", f); break;
	case KVP_VALUE_RECORD: json_record(f, v->rec, indent); break;
	case KVP_VALUE_LIST:
		fputs("[", f);
		for (size_t i = 0; i < v->nlist; i++) {
			fprintf(f, "%s\n%*s", i ? "," : "", indent + 2, "");
			json_record(f, v->list[i], indent + 2);
		}
		fprintf(f, "%s]", v->nlist ? "\n" : "");
		break;
	}
}

/* An object; the top-level one (version set) opens with schema_version. */
static void json_object(FILE *f, const struct kvp_record *r, int indent, bool version)
{
	fputs("{", f);
	if (version)
		fprintf(f, "\n%*s\"schema_version\": %d", indent + 2, "", KVP_SCHEMA_VERSION);
	for (size_t i = 0; i < r->n; i++) {
		fprintf(f, "%s\n%*s", i || version ? "," : "", indent + 2, "");
		json_string(f, r->fields[i].name);
		fputs(": ", f);
		json_value(f, &r->fields[i].v, indent + 2);
	}
	fprintf(f, "\n%*s}", indent, "");
}

static void json_record(FILE *f, const struct kvp_record *r, int indent)
{
	json_object(f, r, indent, false);
}

void kvp_write_json(FILE *f, const struct kvp_record *r)
{
	json_object(f, r, 0, true);
	fputc('\n', f);
}

void kvp_write_json_line(FILE *f, const struct kvp_record *r)
{
	fputc('{', f);
	for (size_t i = 0; i < r->n; i++) {
		if (i)
			fputc(',', f);
		json_string(f, r->fields[i].name);
		fputc(':', f);
		if (scalar_json(&r->fields[i].v))
			json_value(f, &r->fields[i].v, 0);
		else
			fputs("null", f);
	}
	fputc('}', f);
}

void kvp_write_json_rows(FILE *f, const char *wrap, struct kvp_record *const *rows, size_t n)
{
	fprintf(f, "{\n  \"schema_version\": %d,\n  ", KVP_SCHEMA_VERSION);
	json_string(f, wrap);
	fputs(": [", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\n    ", i ? "," : "");
		json_record(f, rows[i], 4);
	}
	fprintf(f, "%s]\n}\n", n ? "\n  " : "");
}

void kvp_value_format(const struct kvp_value *v, char *buf, size_t size)
{
	switch (v->type) {
	case KVP_VALUE_U64: snprintf(buf, size, "%llu", (unsigned long long)v->u); break;
	case KVP_VALUE_F64: format_f64(v->f, buf, size); break;
	case KVP_VALUE_STR: snprintf(buf, size, "%s", v->s); break;
	case KVP_VALUE_BOOL: snprintf(buf, size, "%s", v->b ? "true" : "false"); break;
	default: snprintf(buf, size, "%s", ""); break;
	}
}

static bool scalar(const struct kvp_value *v)
{
	return v->type != KVP_VALUE_RECORD && v->type != KVP_VALUE_LIST;
}

/* The text of a scalar: a string as it is (never cut), others formatted in buf. */
static const char *value_text(const struct kvp_value *v, char *buf, size_t size)
{
	if (v->type == KVP_VALUE_STR)
		return v->s ? v->s : "";
	kvp_value_format(v, buf, size);
	return buf;
}

/* The text of a CSV cell: valid UTF-8 whatever the input (a byte that
 * starts no valid sequence as U+FFFD), and no control character (a line
 * break as \n, a tab \t, a carriage return \r, the rest \xNN, as the
 * terminal shows them; a C1 control U+0080-U+009F as \uNNNN), so one record
 * stays one line for every reader;
 * `quoted`: " doubled. */
static void csv_text(FILE *f, const char *s, bool quoted)
{
	while (*s) {
		const char *at = s;
		int valid;
		uint32_t cp = kvp_utf8_take(&s, &valid);
		if (!valid)
			fputs(KVP_UTF8_REPLACEMENT, f);
		else if (cp == '"' && quoted)
			fputs("\"\"", f);
		else if (cp == '\n')
			fputs("\\n", f);
		else if (cp == '\t')
			fputs("\\t", f);
		else if (cp == '\r')
			fputs("\\r", f);
		else if (cp < 0x20 || cp == 0x7f)
			fprintf(f, "\\x%02x", (unsigned)cp);
		else if (cp >= 0x80 && cp <= 0x9f) /* C1 controls (NEL, CSI) */
			fprintf(f, "\\u%04x", (unsigned)cp);
		else
			fwrite(at, 1, (size_t)(s - at), f);
	}
}

/* One CSV cell (RFC 4180), its text as csv_text writes it.  A string that
 * begins with = + - @ (or a tab or carriage return) would be a formula to a
 * spreadsheet: it is written after a ' and quoted (OWASP's CSV injection
 * advice); numbers are not strings. */
static void csv_cell(FILE *f, const char *s, bool str)
{
	bool formula = str && *s && strchr("=+-@\t\r", *s);
	if (formula || strpbrk(s, ",\"\n\r")) {
		fputc('"', f);
		if (formula)
			fputc('\'', f);
		csv_text(f, s, true);
		fputc('"', f);
	} else {
		csv_text(f, s, false);
	}
}

void kvp_write_csv(FILE *f, struct kvp_record *const *rows, size_t n)
{
	if (n == 0)
		return;
	const struct kvp_record *h = rows[0];
	fputs("schema_version", f);
	for (size_t i = 0; i < h->n; i++) {
		if (!scalar(&h->fields[i].v))
			continue;
		fputc(',', f);
		csv_cell(f, h->fields[i].name, false);
	}
	fputc('\n', f);
	for (size_t r = 0; r < n; r++) {
		fprintf(f, "%d", KVP_SCHEMA_VERSION);
		for (size_t i = 0; i < h->n; i++) {
			if (!scalar(&h->fields[i].v))
				continue;
			const struct kvp_value *v = kvp_record_get(rows[r], h->fields[i].name);
			char buf[64] = "";
			const char *text = v ? value_text(v, buf, sizeof buf) : "";
			fputc(',', f);
			csv_cell(f, text, v && v->type == KVP_VALUE_STR);
		}
		fputc('\n', f);
	}
}

/* One byte on a terminal: control characters shown as \n, \t or \xNN,
 * never sent (an escape sequence in a name would drive the terminal). */
static void term_char(unsigned char c, char esc[8])
{
	if (c == '\n' || c == '\t')
		snprintf(esc, 8, "\\%c", c == '\n' ? 'n' : 't');
	else if (c < 0x20 || c == 0x7f)
		snprintf(esc, 8, "\\x%02x", c);
	else
		esc[0] = (char)c, esc[1] = 0;
}

/* A table cell on a terminal (term_char); returns the width written; f NULL
 * only measures. */
static size_t table_text(FILE *f, const char *s)
{
	size_t w = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8];
		term_char(*p, esc);
		if (f)
			fputs(esc, f);
		w += strlen(esc);
	}
	return w;
}

const char *kvp_term_text(char *out, size_t size, const char *s)
{
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		char esc[8];
		term_char(*p, esc);
		size_t l = strlen(esc);
		if (n + l + 1 > size) { /* cut, and say so */
			n = size >= 4 ? size - 4 : 0;
			memcpy(out + n, "...", size >= 4 ? 3 : 0);
			n += size >= 4 ? 3 : 0;
			break;
		}
		memcpy(out + n, esc, l);
		n += l;
	}
	if (size)
		out[n < size ? n : size - 1] = 0;
	return out;
}

/* A value for reading: strings as they are, doubles to 6 significant digits. */
static const char *table_value(const struct kvp_value *v, char *buf, size_t size)
{
	if (v->type == KVP_VALUE_F64) {
		snprintf(buf, size, "%.6g", v->f);
		return buf;
	}
	return value_text(v, buf, size);
}

void kvp_write_table(FILE *f, struct kvp_record *const *rows, size_t n)
{
	if (n == 0)
		return;
	const struct kvp_record *h = rows[0];
	size_t *width = calloc(h->n, sizeof *width);
	if (!width)
		return;
	char buf[64];
	for (size_t i = 0; i < h->n; i++) {
		width[i] = strlen(h->fields[i].name);
		for (size_t r = 0; r < n; r++) {
			const struct kvp_value *v = kvp_record_get(rows[r], h->fields[i].name);
			if (v && scalar(v)) {
				size_t w = table_text(NULL, table_value(v, buf, sizeof buf));
				if (w > width[i])
					width[i] = w;
			}
		}
	}
	for (size_t i = 0; i < h->n; i++)
		if (scalar(&h->fields[i].v))
			fprintf(f, "%-*s  ", (int)width[i], h->fields[i].name);
	fputc('\n', f);
	for (size_t r = 0; r < n; r++) {
		for (size_t i = 0; i < h->n; i++) {
			if (!scalar(&h->fields[i].v))
				continue;
			const struct kvp_value *v = kvp_record_get(rows[r], h->fields[i].name);
			const char *text = v ? table_value(v, buf, sizeof buf) : "";
			bool num = v && (v->type == KVP_VALUE_U64 || v->type == KVP_VALUE_F64);
			size_t w = table_text(NULL, text);
			if (num)
				fprintf(f, "%*s", (int)(width[i] - w), "");
			table_text(f, text);
			fprintf(f, "%*s  ", num ? 0 : (int)(width[i] - w), "");
		}
		fputc('\n', f);
	}
	free(width);
}

bool kvp_format_parse(const char *s, enum kvp_format *out)
{
	if (strcmp(s, "table") == 0)
		*out = KVP_FORMAT_TABLE;
	else if (strcmp(s, "json") == 0)
		*out = KVP_FORMAT_JSON;
	else if (strcmp(s, "csv") == 0)
		*out = KVP_FORMAT_CSV;
	else
		return false;
	return true;
}
