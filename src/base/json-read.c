/* json-read.c: a strict JSON reader into yaml-walk's marked tree, values
 * under `skip` keys checked and dropped.  See json-read.h for the stance. */
#include "base/json-read.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/input-file.h"

struct reader {
	const char *p, *end;
	const char *line_start;
	int line;
	struct kvp_doc *doc;
	const struct kvp_json_opts *o;
	struct kvp_error *err;
	char *buf;        /* scratch for a decoded string */
	size_t cap;
};

static kvp_status fail(struct reader *r, const char *at, const char *fmt, const char *what)
{
	return kvp_error_set(r->err, KVP_STATUS_PARSE, r->doc->path, r->line,
			     (int)(at - r->line_start) + 1, NULL, fmt, what);
}

static kvp_status nomem(struct reader *r)
{
	return kvp_error_set(r->err, KVP_STATUS_NOMEM, r->doc->path, r->line, 0, NULL,
			     "out of memory");
}

static void skip_ws(struct reader *r)
{
	for (; r->p < r->end; r->p++) {
		char c = *r->p;
		if (c == '\n') {
			r->line++;
			r->line_start = r->p + 1;
		} else if (c != ' ' && c != '\t' && c != '\r') {
			return;
		}
	}
}

static kvp_status expected(struct reader *r, const char *what)
{
	if (r->p >= r->end)
		return fail(r, r->p, "truncated JSON: the file ends where %s was expected", what);
	return fail(r, r->p, "malformed JSON: expected %s", what);
}

static bool put(struct reader *r, size_t *n, char c)
{
	if (*n + 1 >= r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 256;
		char *b = realloc(r->buf, cap);
		if (!b)
			return false;
		r->buf = b;
		r->cap = cap;
	}
	r->buf[(*n)++] = c;
	return true;
}

static bool put_utf8(struct reader *r, size_t *n, uint32_t cp)
{
	if (cp < 0x80)
		return put(r, n, (char)cp);
	if (cp < 0x800)
		return put(r, n, (char)(0xc0 | cp >> 6)) && put(r, n, (char)(0x80 | (cp & 0x3f)));
	if (cp < 0x10000)
		return put(r, n, (char)(0xe0 | cp >> 12)) &&
		       put(r, n, (char)(0x80 | ((cp >> 6) & 0x3f))) &&
		       put(r, n, (char)(0x80 | (cp & 0x3f)));
	return put(r, n, (char)(0xf0 | cp >> 18)) && put(r, n, (char)(0x80 | ((cp >> 12) & 0x3f))) &&
	       put(r, n, (char)(0x80 | ((cp >> 6) & 0x3f))) && put(r, n, (char)(0x80 | (cp & 0x3f)));
}

static int hex4(const char *p, const char *end, uint32_t *out)
{
	if (end - p < 4)
		return -1;
	uint32_t v = 0;
	for (int i = 0; i < 4; i++) {
		char c = p[i];
		int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
			: c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (d < 0)
			return -1;
		v = v << 4 | (uint32_t)d;
	}
	*out = v;
	return 0;
}

/* The length of the UTF-8 sequence at p (well-formed, shortest form, no
 * surrogates), or 0. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	size_t n = c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
	if (!n || (size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	if ((c == 0xe0 && p[1] < 0xa0) || (c == 0xed && p[1] > 0x9f) ||
	    (c == 0xf0 && p[1] < 0x90) || (c == 0xf4 && p[1] > 0x8f))
		return 0;
	return n;
}

/* A string at r->p (the opening quote); its decoded bytes in r->buf[0..*len)
 * when `keep`. */
static kvp_status string(struct reader *r, bool keep, size_t *len)
{
	const char *start = r->p++;
	size_t n = 0;
	while (r->p < r->end && *r->p != '"') {
		unsigned char c = (unsigned char)*r->p;
		if (c < 0x20)
			return fail(r, r->p, "malformed JSON: %s inside a string", c == '\n'
				    ? "a line break" : "a raw control character");
		if (c == '\\') {
			const char *esc = r->p++;
			if (r->p >= r->end)
				break;
			const char *s = strchr("\"\\/bfnrt", *r->p);
			if (*r->p && s) {
				if (keep && !put(r, &n, "\"\\/\b\f\n\r\t"[s - "\"\\/bfnrt"]))
					return nomem(r);
				r->p++;
				continue;
			}
			uint32_t cp, lo;
			if (*r->p != 'u' || hex4(r->p + 1, r->end, &cp))
				return fail(r, esc, "malformed JSON: %s", "a bad escape in a string");
			r->p += 5;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return fail(r, esc, "malformed JSON: %s", "a lone low surrogate");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (r->end - r->p < 6 || r->p[0] != '\\' || r->p[1] != 'u' ||
				    hex4(r->p + 2, r->end, &lo) || lo < 0xdc00 || lo > 0xdfff)
					return fail(r, esc, "malformed JSON: %s", "a lone high surrogate");
				r->p += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			if (cp == 0)
				return fail(r, esc, "malformed JSON: %s", "\\u0000 in a string");
			if (keep && !put_utf8(r, &n, cp))
				return nomem(r);
			continue;
		}
		size_t k = c < 0x80 ? 1 : utf8_len((const unsigned char *)r->p,
						   (const unsigned char *)r->end);
		if (!k)
			return fail(r, r->p, "malformed JSON: %s", "bytes that are not UTF-8");
		for (size_t i = 0; i < k; i++)
			if (keep && !put(r, &n, r->p[i]))
				return nomem(r);
		r->p += k;
	}
	if (r->p >= r->end)
		return fail(r, start, "truncated JSON: %s", "a string is not closed");
	r->p++;
	if (keep) {
		if (!put(r, &n, 0))
			return nomem(r);
		*len = n - 1;
	}
	return KVP_STATUS_OK;
}

/* A number's text at r->p, as RFC 8259 spells it. */
static kvp_status number(struct reader *r)
{
	const char *s = r->p, *p = r->p, *e = r->end;
	if (p < e && *p == '-')
		p++;
	if (p < e && *p == '0')
		p++;
	else if (p < e && *p >= '1' && *p <= '9')
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	else
		return fail(r, s, "malformed JSON: %s", "a number needs a digit");
	if (p < e && *p == '.') {
		if (++p >= e || *p < '0' || *p > '9')
			return fail(r, s, "malformed JSON: %s", "a digit after the decimal point");
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	if (p < e && (*p == 'e' || *p == 'E')) {
		p++;
		if (p < e && (*p == '+' || *p == '-'))
			p++;
		if (p >= e || *p < '0' || *p > '9')
			return fail(r, s, "malformed JSON: %s", "a digit in the exponent");
		while (p < e && *p >= '0' && *p <= '9')
			p++;
	}
	r->p = p;
	return KVP_STATUS_OK;
}

static struct kvp_node *node_new(struct reader *r, enum kvp_node_type t, const char *at)
{
	if (r->doc->nodes >= KVP_DOC_MAX_NODES)
		return NULL;
	struct kvp_node *n = calloc(1, sizeof *n);
	if (n) {
		r->doc->nodes++;
		n->type = t;
		n->line = r->line;
		n->col = (int)(at - r->line_start) + 1;
	}
	return n;
}

static kvp_status too_many(struct reader *r, const char *at)
{
	if (r->doc->nodes >= KVP_DOC_MAX_NODES)
		return fail(r, at, "%s", "more than a million values kept");
	return nomem(r);
}

/* Append item (and key) to a map or sequence; capacities double from 8. */
static bool push(struct kvp_node *parent, struct kvp_node *key, struct kvp_node *item)
{
	size_t n = parent->n;
	if (n == 0 || (n >= 8 && (n & (n - 1)) == 0)) {
		size_t cap = n ? 2 * n : 8;
		struct kvp_node **items = realloc(parent->items, cap * sizeof *items);
		if (!items)
			return false;
		parent->items = items;
		if (parent->type == KVP_NODE_MAP) {
			struct kvp_node **keys = realloc(parent->keys, cap * sizeof *keys);
			if (!keys)
				return false;
			parent->keys = keys;
		}
	}
	if (parent->type == KVP_NODE_MAP)
		parent->keys[n] = key;
	parent->items[parent->n++] = item;
	return true;
}

static void node_drop(struct kvp_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		if (n->keys)
			node_drop(n->keys[i]);
		node_drop(n->items[i]);
	}
	free(n->keys);
	free(n->items);
	free(n->value);
	free(n);
}

static bool skipped(const struct reader *r, const char *key)
{
	for (const char *const *s = r->o && r->o->skip ? r->o->skip : NULL; s && *s; s++)
		if (strcmp(*s, key) == 0)
			return true;
	return false;
}

static int key_cmp(const void *a, const void *b)
{
	const struct kvp_node *x = *(const struct kvp_node *const *)a;
	const struct kvp_node *y = *(const struct kvp_node *const *)b;
	int c = strcmp(x->value, y->value);
	return c ? c : x->line != y->line ? x->line - y->line : x->col - y->col;
}

/* A key given twice in map: the later one, or NULL.  Small objects are
 * scanned; a large one is sorted (n log n, not n^2). */
static const struct kvp_node *duplicate(const struct kvp_node *map, const char *key, bool *nomem_)
{
	if (map->n < 32) {
		for (size_t i = 0; i < map->n; i++)
			if (strcmp(map->keys[i]->value, key) == 0)
				return map->keys[i];
		return NULL;
	}
	(void)key;
	struct kvp_node **k = malloc(map->n * sizeof *k);
	if (!k) {
		*nomem_ = true;
		return NULL;
	}
	memcpy(k, map->keys, map->n * sizeof *k);
	qsort(k, map->n, sizeof *k, key_cmp);
	const struct kvp_node *d = NULL;
	for (size_t i = 1; i < map->n && !d; i++)
		if (strcmp(k[i - 1]->value, k[i]->value) == 0)
			d = k[i];
	free(k);
	return d;
}

static kvp_status value(struct reader *r, int depth, bool keep, struct kvp_node **out);

static kvp_status object(struct reader *r, int depth, struct kvp_node *n)
{
	r->p++; /* { */
	skip_ws(r);
	if (r->p < r->end && *r->p == '}') {
		r->p++;
		return KVP_STATUS_OK;
	}
	for (;;) {
		skip_ws(r);
		if (r->p >= r->end || *r->p != '"')
			return expected(r, "a key in double quotes");
		const char *at = r->p;
		int line = r->line;
		size_t len = 0;
		kvp_status st = string(r, true, &len);
		if (st)
			return st;
		bool keep = n && !skipped(r, r->buf);
		struct kvp_node *key = NULL;
		if (keep) {
			if (!(key = node_new(r, KVP_NODE_SCALAR, at)))
				return too_many(r, at);
			key->line = line;
			key->quoted = true;
			if (!(key->value = malloc(len + 1))) {
				free(key);
				return nomem(r);
			}
			memcpy(key->value, r->buf, len + 1);
			if (n->n < 32) {
				bool nm = false;
				if (duplicate(n, key->value, &nm)) {
					node_drop(key);
					return fail(r, at, "malformed JSON: the key '%s' is given twice",
						    r->buf);
				}
			}
		}
		skip_ws(r);
		if (r->p >= r->end || *r->p != ':') {
			node_drop(key);
			return expected(r, "':' after a key");
		}
		r->p++;
		struct kvp_node *v = NULL;
		if ((st = value(r, depth + 1, keep, &v))) {
			node_drop(key);
			return st;
		}
		if (keep && !push(n, key, v)) {
			node_drop(key);
			node_drop(v);
			return nomem(r);
		}
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == '}') {
			r->p++;
			break;
		}
		return expected(r, "',' or '}' in an object");
	}
	if (n && n->n >= 32) {
		bool nm = false;
		const struct kvp_node *d = duplicate(n, NULL, &nm);
		if (nm)
			return nomem(r);
		if (d)
			return kvp_error_set(r->err, KVP_STATUS_PARSE, r->doc->path, d->line, d->col,
					     NULL, "malformed JSON: the key '%s' is given twice",
					     d->value);
	}
	return KVP_STATUS_OK;
}

static kvp_status array(struct reader *r, int depth, struct kvp_node *n)
{
	r->p++; /* [ */
	skip_ws(r);
	if (r->p < r->end && *r->p == ']') {
		r->p++;
		return KVP_STATUS_OK;
	}
	for (;;) {
		struct kvp_node *v = NULL;
		kvp_status st = value(r, depth + 1, n != NULL, &v);
		if (st)
			return st;
		if (n && !push(n, NULL, v)) {
			node_drop(v);
			return nomem(r);
		}
		skip_ws(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == ']') {
			r->p++;
			return KVP_STATUS_OK;
		}
		return expected(r, "',' or ']' in an array");
	}
}

static kvp_status value(struct reader *r, int depth, bool keep, struct kvp_node **out)
{
	*out = NULL;
	skip_ws(r);
	if (r->p >= r->end)
		return expected(r, "a value");
	const char *at = r->p;
	if (depth > KVP_DOC_MAX_DEPTH)
		return fail(r, at, "nesting deeper than %s levels", "64");
	char c = *r->p;
	kvp_status st;
	if (c == '{' || c == '[') {
		struct kvp_node *n = NULL;
		if (keep && !(n = node_new(r, c == '{' ? KVP_NODE_MAP : KVP_NODE_SEQ, at)))
			return too_many(r, at);
		st = c == '{' ? object(r, depth, n) : array(r, depth, n);
		if (st) {
			node_drop(n);
			return st;
		}
		*out = n;
		return KVP_STATUS_OK;
	}
	size_t len = 0;
	bool quoted = c == '"';
	if (quoted) {
		if ((st = string(r, keep, &len)))
			return st;
	} else if (c == '-' || (c >= '0' && c <= '9')) {
		if ((st = number(r)))
			return st;
	} else {
		static const char *const words[] = {"true", "false", "null"};
		size_t k = 0;
		for (; k < 3; k++) {
			size_t l = strlen(words[k]);
			if ((size_t)(r->end - r->p) >= l && memcmp(r->p, words[k], l) == 0) {
				r->p += l;
				break;
			}
		}
		if (k == 3) {
			if ((r->end - r->p >= 3 && memcmp(r->p, "NaN", 3) == 0) ||
			    (r->end - r->p >= 8 && memcmp(r->p, "Infinity", 8) == 0) ||
			    (r->end - r->p >= 9 && memcmp(r->p, "-Infinity", 9) == 0))
				return fail(r, at, "malformed JSON: %s", "NaN or Infinity is not a "
					    "JSON number (Python's json.dump writes it for a "
					    "float('nan'))");
			return expected(r, "a value");
		}
	}
	if (!keep)
		return KVP_STATUS_OK;
	struct kvp_node *n = node_new(r, KVP_NODE_SCALAR, at);
	if (!n)
		return too_many(r, at);
	n->quoted = quoted;
	if (!quoted)
		len = (size_t)(r->p - at);
	if (!(n->value = malloc(len + 1))) {
		free(n);
		return nomem(r);
	}
	memcpy(n->value, quoted ? r->buf : at, len);
	n->value[len] = 0;
	*out = n;
	return KVP_STATUS_OK;
}

kvp_status kvp_json_load_buffer(const char *name, const char *buf, size_t len,
				const struct kvp_json_opts *o, struct kvp_doc **out,
				struct kvp_error *err)
{
	*out = NULL;
	struct reader r = {.p = buf, .end = buf + len, .line_start = buf, .line = 1, .o = o,
			   .err = err};
	if (!(r.doc = calloc(1, sizeof *r.doc)))
		return kvp_error_set(err, KVP_STATUS_NOMEM, name, 0, 0, NULL, "out of memory");
	snprintf(r.doc->path, sizeof r.doc->path, "%s", name);
	if (len > KVP_JSON_MAX_BYTES) {
		kvp_doc_free(r.doc);
		return kvp_error_set(err, KVP_STATUS_PARSE, name, 0, 0, NULL,
				     "file is larger than %u MiB", KVP_JSON_MAX_BYTES >> 20);
	}
	kvp_status st = KVP_STATUS_OK;
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0)
		r.p = r.line_start = buf + 3;
	skip_ws(&r);
	if (o && o->lines) {
		if (!(r.doc->root = node_new(&r, KVP_NODE_SEQ, r.p)))
			st = too_many(&r, r.p);
		while (!st && r.p < r.end) {
			struct kvp_node *v;
			if (!(st = value(&r, 1, true, &v)) && !push(r.doc->root, NULL, v)) {
				node_drop(v);
				st = nomem(&r);
			}
			skip_ws(&r);
		}
	} else if (r.p < r.end) {
		st = value(&r, 1, true, &r.doc->root);
		skip_ws(&r);
		if (!st && r.p < r.end)
			st = fail(&r, r.p, "malformed JSON: %s", "more after the end of the document "
				  "(JSON Lines? one object per line is read only where the tool "
				  "writes it)");
	}
	free(r.buf);
	if (st) {
		kvp_doc_free(r.doc);
		return st;
	}
	*out = r.doc;
	return KVP_STATUS_OK;
}

kvp_status kvp_json_load_file(const char *path, const struct kvp_json_opts *o,
			      struct kvp_doc **out, struct kvp_error *err)
{
	*out = NULL;
	FILE *f;
	kvp_status st = kvp_input_open(path, &f, err);
	if (st)
		return st;
	struct stat sb;
	char *buf = NULL;
	size_t n = 0;
	if (fstat(fileno(f), &sb) != 0 || sb.st_size < 0 ||
	    (uint64_t)sb.st_size > KVP_JSON_MAX_BYTES) {
		fclose(f);
		return kvp_error_set(err, KVP_STATUS_PARSE, path, 0, 0, NULL,
				     "file is larger than %u MiB", KVP_JSON_MAX_BYTES >> 20);
	}
	size_t cap = (size_t)sb.st_size + 1;
	if (!(buf = malloc(cap))) {
		fclose(f);
		return kvp_error_set(err, KVP_STATUS_NOMEM, path, 0, 0, NULL, "out of memory");
	}
	n = fread(buf, 1, cap, f);
	bool bad = ferror(f) || n == cap; /* grew while read: refuse rather than cut */
	fclose(f);
	if (bad) {
		free(buf);
		return kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL,
				     n == cap ? "the file grew while it was read" : "read error");
	}
	st = kvp_json_load_buffer(path, buf, n, o, out, err);
	free(buf);
	return st;
}
