/* output.h: records (ordered name -> value fields) and the table, JSON and
 * CSV writers that every command shares.
 *
 * A command builds one record per row (and records nested in records for
 * JSON objects such as a recommendation).  `kvplan check` reads fields back
 * by name, so the JSON field names are a contract (man/kvplan.1). */
#ifndef KVP_OUTPUT_H
#define KVP_OUTPUT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

enum kvp_format { KVP_FORMAT_TABLE, KVP_FORMAT_JSON, KVP_FORMAT_CSV };

enum kvp_value_type { KVP_VALUE_U64, KVP_VALUE_F64, KVP_VALUE_STR, KVP_VALUE_BOOL,
		      KVP_VALUE_NULL, KVP_VALUE_RECORD, KVP_VALUE_LIST };

struct kvp_record;

struct kvp_value {
	enum kvp_value_type type;
	uint64_t u;
	double f;
	bool b;
	char *s;
	struct kvp_record *rec;      /* KVP_VALUE_RECORD: owned */
	struct kvp_record **list;    /* KVP_VALUE_LIST: owned records */
	size_t nlist;
};

struct kvp_field_value {
	char *name;
	struct kvp_value v;
};

struct kvp_record {
	struct kvp_field_value *fields;
	size_t n, cap;
};

struct kvp_record *kvp_record_new(void);
void kvp_record_free(struct kvp_record *r);
/* Setters replace a field of the same name or append; they return false only
 * when memory runs out (the record stays valid). */
bool kvp_record_u64(struct kvp_record *r, const char *name, uint64_t v);
bool kvp_record_f64(struct kvp_record *r, const char *name, double v);
bool kvp_record_str(struct kvp_record *r, const char *name, const char *v);
bool kvp_record_bool(struct kvp_record *r, const char *name, bool v);
bool kvp_record_null(struct kvp_record *r, const char *name);
/* Takes ownership of sub. */
bool kvp_record_rec(struct kvp_record *r, const char *name, struct kvp_record *sub);
/* Sets `name` to an empty list (kept in JSON as [] so the key is always
 * there). */
bool kvp_record_list(struct kvp_record *r, const char *name);
/* Appends sub (owned) to the list field `name`, creating it. */
bool kvp_record_push(struct kvp_record *r, const char *name, struct kvp_record *sub);

/* The field `name` ("a.b" descends into nested records), or NULL. */
const struct kvp_value *kvp_record_get(const struct kvp_record *r, const char *name);

/* The version of the JSON and CSV field lists (man/kvplan.1, MACHINE
 * OUTPUT): raised when a field is renamed, removed or changes its unit;
 * added fields keep it. */
#define KVP_SCHEMA_VERSION 1

/* JSON: one object, indented, fields in insertion order, opened by
 * "schema_version"; integers exact, doubles in the shortest text that reads
 * back to the same double (at most 17 significant digits); non-finite
 * doubles are written as null.  */
void kvp_write_json(FILE *f, const struct kvp_record *r);
/* `r` as one JSON object on one line, no schema_version, no line break (an
 * engine option's value: vLLM's --kv-transfer-config); scalars only. */
void kvp_write_json_line(FILE *f, const struct kvp_record *r);
/* JSON: {"schema_version": N, "<wrap>": [rows...]}. */
void kvp_write_json_rows(FILE *f, const char *wrap, struct kvp_record *const *rows, size_t n);
/* CSV: a header of "schema_version" and rows[0]'s scalar fields, then one
 * line per row (RFC 4180 quoting), numbers as in JSON, an empty cell for a
 * null or absent field.  Nested records and lists are left out. */
void kvp_write_csv(FILE *f, struct kvp_record *const *rows, size_t n);
/* A plain aligned table of the scalar fields, one row per record (doubles
 * rounded to 6 significant digits for reading). */
void kvp_write_table(FILE *f, struct kvp_record *const *rows, size_t n);
/* `s` for a terminal in out[size]: control characters shown as \n, \t or
 * \xNN, never sent (an escape sequence in a name would drive the terminal).
 * KVP_TERM_SIZE(n) bytes hold any string of n bytes; a smaller out ends in
 * "..." where it was cut.  Returns out. */
#define KVP_TERM_SIZE(n) (4 * (n) + 1)
const char *kvp_term_text(char *out, size_t size, const char *s);
/* One value as text, exactly as JSON and CSV write it: integers exact,
 * doubles round-trip (at most 17 significant digits), null empty. */
void kvp_value_format(const struct kvp_value *v, char *buf, size_t size);

bool kvp_format_parse(const char *s, enum kvp_format *out);

#endif
