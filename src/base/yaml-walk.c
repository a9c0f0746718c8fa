/* yaml-walk.c: load a YAML/JSON document into a marked tree and read typed
 * fields from it.  See yaml-walk.h for the limits and why they exist. */
#include "base/yaml-walk.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <yaml.h>

#include "base/input-file.h"
#include "base/suggest.h"
#include "base/units.h"

static void node_free(struct kvp_node *n)
{
	if (!n)
		return;
	for (size_t i = 0; i < n->n; i++) {
		if (n->keys)
			node_free(n->keys[i]);
		node_free(n->items[i]);
	}
	free(n->keys);
	free(n->items);
	free(n->value);
	free(n);
}

void kvp_doc_free(struct kvp_doc *doc)
{
	if (!doc)
		return;
	node_free(doc->root);
	free(doc);
}

struct loader {
	yaml_parser_t parser;
	struct kvp_doc *doc;
	struct kvp_error *err;
};

static kvp_status parser_fail(struct loader *ld)
{
	yaml_parser_t *p = &ld->parser;
	const yaml_mark_t *m = p->problem ? &p->problem_mark : &p->context_mark;
	return kvp_error_set(ld->err, KVP_STATUS_PARSE, ld->doc->path, (int)m->line + 1,
			     (int)m->column + 1, NULL, "malformed document: %s%s%s",
			     p->problem ? p->problem : "unknown problem",
			     p->context ? " " : "", p->context ? p->context : "");
}

/* Append an item (and its key, for maps).  The arrays double from 4, so a
 * list of a million items costs 19 reallocations, not 250,000 (each a copy
 * under allocators that do not grow in place: quadratic), and the small
 * maps of a long list (kvplan check's scenarios, each with a few keys) do
 * not each hold room for 16 (300 of the 1,230 bytes a one-assertion
 * scenario took). */
static kvp_status push(struct kvp_node *parent, struct kvp_node *key, struct kvp_node *item)
{
	size_t n = parent->n;
	if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
		size_t cap = n ? 2 * n : 4;
		struct kvp_node **items = realloc(parent->items, cap * sizeof *items);
		if (!items)
			return KVP_STATUS_NOMEM;
		parent->items = items;
		if (parent->type == KVP_NODE_MAP) {
			struct kvp_node **keys = realloc(parent->keys, cap * sizeof *keys);
			if (!keys)
				return KVP_STATUS_NOMEM;
			parent->keys = keys;
		}
	}
	if (parent->type == KVP_NODE_MAP)
		parent->keys[parent->n] = key;
	parent->items[parent->n++] = item;
	return KVP_STATUS_OK;
}

/* The keys of one mapping being loaded, for the duplicate check: a plain
 * scan while there are few, then an open-addressing hash of their positions,
 * so a mapping of 500,000 keys costs 500,000 lookups rather than 10^11
 * comparisons (a 4 MB profile must not hang the planner). */
#define KEY_SCAN_MAX 16

struct key_index {
	size_t *slot;  /* 1 + a key's position in the map; 0: empty */
	size_t cap;    /* a power of two; 0 while the keys are scanned */
};

#if defined(__clang__)
__attribute__((no_sanitize("unsigned-integer-overflow")))
#endif
static size_t key_hash(const char *s)
{
	uint64_t h = 14695981039346656037ULL; /* FNV-1a: the wrap is the hash */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return (size_t)h;
}

/* The key of `map` equal to `key`, or NULL. */
static const struct kvp_node *key_index_find(const struct key_index *ix,
					     const struct kvp_node *map, const char *key)
{
	if (!ix->cap) {
		for (size_t i = 0; i < map->n; i++)
			if (strcmp(map->keys[i]->value, key) == 0)
				return map->keys[i];
		return NULL;
	}
	for (size_t i = key_hash(key) & (ix->cap - 1); ix->slot[i]; i = (i + 1) & (ix->cap - 1))
		if (strcmp(map->keys[ix->slot[i] - 1]->value, key) == 0)
			return map->keys[ix->slot[i] - 1];
	return NULL;
}

static void key_index_put(struct key_index *ix, const struct kvp_node *map, size_t pos)
{
	size_t i = key_hash(map->keys[pos]->value) & (ix->cap - 1);
	while (ix->slot[i])
		i = (i + 1) & (ix->cap - 1);
	ix->slot[i] = pos + 1;
}

/* Index the key just pushed (the map's last); false when memory runs out. */
static bool key_index_add(struct key_index *ix, const struct kvp_node *map)
{
	if (map->n <= KEY_SCAN_MAX)
		return true;
	if (2 * map->n > ix->cap) {
		size_t cap = ix->cap ? 2 * ix->cap : 4 * KEY_SCAN_MAX;
		size_t *slot = calloc(cap, sizeof *slot);
		if (!slot)
			return false;
		free(ix->slot);
		ix->slot = slot;
		ix->cap = cap;
		for (size_t i = 0; i + 1 < map->n; i++)
			key_index_put(ix, map, i);
	}
	key_index_put(ix, map, map->n - 1);
	return true;
}

static kvp_status load_children(struct loader *ld, struct kvp_node *n, int depth,
				struct key_index *ix);

/* Parse one node whose first event is *ev (already taken); recursion bounded by depth. */
static kvp_status load_node(struct loader *ld, yaml_event_t *ev, int depth, struct kvp_node **out)
{
	*out = NULL;
	int line = (int)ev->start_mark.line + 1, col = (int)ev->start_mark.column + 1;
	if (ev->type == YAML_ALIAS_EVENT ||
	    (ev->type == YAML_SCALAR_EVENT && ev->data.scalar.anchor) ||
	    (ev->type == YAML_SEQUENCE_START_EVENT && ev->data.sequence_start.anchor) ||
	    (ev->type == YAML_MAPPING_START_EVENT && ev->data.mapping_start.anchor))
		return kvp_error_set(ld->err, KVP_STATUS_PARSE, ld->doc->path, line, col, NULL,
				     "anchors and aliases are not supported");
	if (depth > KVP_DOC_MAX_DEPTH)
		return kvp_error_set(ld->err, KVP_STATUS_PARSE, ld->doc->path, line, col, NULL,
				     "nesting deeper than %d levels", KVP_DOC_MAX_DEPTH);
	if (++ld->doc->nodes > KVP_DOC_MAX_NODES)
		return kvp_error_set(ld->err, KVP_STATUS_PARSE, ld->doc->path, line, col, NULL,
				     "more than %u nodes", KVP_DOC_MAX_NODES);
	struct kvp_node *n = calloc(1, sizeof *n);
	if (!n)
		return kvp_error_set(ld->err, KVP_STATUS_NOMEM, ld->doc->path, line, col, NULL,
				     "out of memory");
	n->line = line;
	n->col = col;
	*out = n;
	if (ev->type == YAML_SCALAR_EVENT) {
		n->type = KVP_NODE_SCALAR;
		n->quoted = ev->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
			    ev->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE;
		n->value = strndup((const char *)ev->data.scalar.value, ev->data.scalar.length);
		if (!n->value)
			return kvp_error_set(ld->err, KVP_STATUS_NOMEM, ld->doc->path, line, col,
					     NULL, "out of memory");
		return KVP_STATUS_OK;
	}
	if (ev->type != YAML_MAPPING_START_EVENT && ev->type != YAML_SEQUENCE_START_EVENT)
		return kvp_error_set(ld->err, KVP_STATUS_PARSE, ld->doc->path, line, col, NULL,
				     "unexpected YAML event");
	n->type = ev->type == YAML_MAPPING_START_EVENT ? KVP_NODE_MAP : KVP_NODE_SEQ;
	struct key_index ix = {NULL, 0};
	kvp_status st = load_children(ld, n, depth, &ix);
	free(ix.slot);
	return st;
}

/* The items (and keys) of mapping or sequence n, up to its end event. */
static kvp_status load_children(struct loader *ld, struct kvp_node *n, int depth,
				struct key_index *ix)
{
	bool is_map = n->type == KVP_NODE_MAP;
	yaml_event_type_t end = is_map ? YAML_MAPPING_END_EVENT : YAML_SEQUENCE_END_EVENT;
	for (;;) {
		yaml_event_t child;
		if (!yaml_parser_parse(&ld->parser, &child))
			return parser_fail(ld);
		if (child.type == end) {
			yaml_event_delete(&child);
			return KVP_STATUS_OK;
		}
		struct kvp_node *key = NULL, *value = NULL;
		kvp_status st = load_node(ld, &child, depth + 1, is_map ? &key : &value);
		yaml_event_delete(&child);
		if (st) {
			node_free(key);
			node_free(value);
			return st;
		}
		if (is_map) {
			if (key->type != KVP_NODE_SCALAR) {
				st = kvp_error_set(ld->err, KVP_STATUS_PARSE, ld->doc->path,
						   key->line, key->col, NULL,
						   "mapping keys must be plain strings");
				node_free(key);
				return st;
			}
			const struct kvp_node *first = key_index_find(ix, n, key->value);
			if (first) {
				st = kvp_error_set(ld->err, KVP_STATUS_PARSE, ld->doc->path,
						   key->line, key->col, key->value,
						   "duplicate key (first at line %d)", first->line);
				node_free(key);
				return st;
			}
			if (!yaml_parser_parse(&ld->parser, &child)) {
				node_free(key);
				return parser_fail(ld);
			}
			st = load_node(ld, &child, depth + 1, &value);
			yaml_event_delete(&child);
			if (st) {
				node_free(key);
				node_free(value);
				return st;
			}
		}
		if (push(n, key, value)) {
			node_free(key);
			node_free(value);
			return kvp_error_set(ld->err, KVP_STATUS_NOMEM, ld->doc->path, n->line,
					     n->col, NULL, "out of memory");
		}
		if (is_map && !key_index_add(ix, n))
			return kvp_error_set(ld->err, KVP_STATUS_NOMEM, ld->doc->path, n->line,
					     n->col, NULL, "out of memory");
	}
}

kvp_status kvp_doc_load_buffer(const char *name, const char *buf, size_t len,
			       struct kvp_doc **out, struct kvp_error *err)
{
	*out = NULL;
	if (len > KVP_DOC_MAX_BYTES)
		return kvp_error_set(err, KVP_STATUS_INVALID, name, 0, 0, NULL,
				     "file is larger than %u MiB", KVP_DOC_MAX_BYTES >> 20);
	struct loader ld = {.err = err};
	ld.doc = calloc(1, sizeof *ld.doc);
	if (!ld.doc)
		return kvp_error_set(err, KVP_STATUS_NOMEM, name, 0, 0, NULL, "out of memory");
	snprintf(ld.doc->path, sizeof ld.doc->path, "%s", name);
	if (!yaml_parser_initialize(&ld.parser)) {
		free(ld.doc);
		return kvp_error_set(err, KVP_STATUS_NOMEM, name, 0, 0, NULL, "out of memory");
	}
	yaml_parser_set_input_string(&ld.parser, (const unsigned char *)buf, len);
	kvp_status st = KVP_STATUS_OK;
	bool in_doc = false, done = false;
	int ndocs = 0;
	while (!done && !st) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&ld.parser, &ev)) {
			st = parser_fail(&ld);
			break;
		}
		switch (ev.type) {
		case YAML_STREAM_START_EVENT:
		case YAML_DOCUMENT_END_EVENT:
			in_doc = false;
			break;
		case YAML_DOCUMENT_START_EVENT:
			if (++ndocs > 1)
				st = kvp_error_set(err, KVP_STATUS_PARSE, name,
						   (int)ev.start_mark.line + 1,
						   (int)ev.start_mark.column + 1, NULL,
						   "more than one document in the file");
			in_doc = true;
			break;
		case YAML_STREAM_END_EVENT:
			done = true;
			break;
		default:
			if (in_doc && !ld.doc->root)
				st = load_node(&ld, &ev, 1, &ld.doc->root);
			break;
		}
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&ld.parser);
	if (st) {
		kvp_doc_free(ld.doc);
		return st;
	}
	*out = ld.doc;
	return KVP_STATUS_OK;
}

kvp_status kvp_doc_load_file(const char *path, struct kvp_doc **out, struct kvp_error *err)
{
	*out = NULL;
	FILE *f;
	kvp_status ost = kvp_input_open(path, &f, err);
	if (ost)
		return ost;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	kvp_status st = KVP_STATUS_OK;
	/* a regular file over the limit is refused unread (a 100 MB profile
	 * costs nothing); other files are read up to twice the limit */
	struct stat sb;
	if (fstat(fileno(f), &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_size > KVP_DOC_MAX_BYTES) {
		fclose(f);
		return kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, NULL,
				     "file is larger than %u MiB", KVP_DOC_MAX_BYTES >> 20);
	}
	for (;;) {
		if (len == cap) {
			if (cap > KVP_DOC_MAX_BYTES) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, NULL,
						   "file is larger than %u MiB",
						   KVP_DOC_MAX_BYTES >> 20);
				break;
			}
			cap = cap ? cap * 2 : 65536;
			char *nb = realloc(buf, cap);
			if (!nb) {
				st = kvp_error_set(err, KVP_STATUS_NOMEM, path, 0, 0, NULL,
						   "out of memory");
				break;
			}
			buf = nb;
		}
		size_t got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0) {
			if (ferror(f))
				st = kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL,
						   "read error: %s", strerror(errno));
			break;
		}
	}
	fclose(f);
	if (!st)
		st = kvp_doc_load_buffer(path, buf ? buf : "", len, out, err);
	free(buf);
	return st;
}

bool kvp_node_is_null(const struct kvp_node *node)
{
	if (!node)
		return true;
	if (node->type != KVP_NODE_SCALAR || node->quoted)
		return false;
	const char *v = node->value;
	return v[0] == '\0' || strcmp(v, "null") == 0 || strcmp(v, "~") == 0 ||
	       strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0;
}

const struct kvp_node *kvp_map_get(const struct kvp_node *map, const char *key)
{
	if (!map || map->type != KVP_NODE_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (strcmp(map->keys[i]->value, key) == 0)
			return kvp_node_is_null(map->items[i]) ? NULL : map->items[i];
	return NULL;
}

kvp_status kvp_node_fail(const struct kvp_doc *doc, const struct kvp_node *node,
			 struct kvp_error *err, kvp_status status, const char *field,
			 const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return kvp_error_set(err, status, doc ? doc->path : NULL, node ? node->line : 0,
			     node ? node->col : 0, field, "%s", msg);
}

kvp_status kvp_map_only(const struct kvp_doc *doc, const struct kvp_node *map,
			const char *const *allowed, struct kvp_error *err)
{
	for (size_t i = 0; i < map->n; i++) {
		const char *k = map->keys[i]->value;
		bool ok = false;
		for (const char *const *a = allowed; *a && !ok; a++)
			ok = strcmp(*a, k) == 0;
		if (!ok) {
			size_t na = 0;
			while (allowed[na])
				na++;
			char near[256];
			kvp_suggest_text(k, allowed, na, "", near, sizeof near);
			return kvp_node_fail(doc, map->keys[i], err, KVP_STATUS_INVALID, k,
					     "unknown key%s", near);
		}
	}
	return KVP_STATUS_OK;
}

static const char *type_name(enum kvp_node_type t)
{
	return t == KVP_NODE_MAP ? "a mapping" : t == KVP_NODE_SEQ ? "a list" : "a scalar";
}

kvp_status kvp_node_expect(const struct kvp_doc *doc, const struct kvp_node *node,
			   const char *field, enum kvp_node_type type, struct kvp_error *err)
{
	if (node->type != type)
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, field,
				     "expected %s, found %s", type_name(type),
				     type_name(node->type));
	return KVP_STATUS_OK;
}

static kvp_status scalar(const struct kvp_doc *doc, const struct kvp_node *node,
			 const char *field, struct kvp_error *err)
{
	return kvp_node_expect(doc, node, field, KVP_NODE_SCALAR, err);
}

/* A scalar without a sign: numbers in profiles are never negative. */
static kvp_status unsigned_scalar(const struct kvp_doc *doc, const struct kvp_node *node,
				  const char *field, struct kvp_error *err)
{
	kvp_status st = scalar(doc, node, field, err);
	if (st)
		return st;
	if (node->value[0] == '-')
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, field,
				     "must not be negative (got %s)", node->value);
	return KVP_STATUS_OK;
}

/* Turn a units.h parser's result (0, -1 malformed, -2 out of range, -4 a
 * bare K/M/G/T, whose two readings it names) into a located error: `range`
 * ends "does not fit in 64 bits" or "is out of range", `expected` says what
 * a good value looks like. */
static kvp_status parsed(const struct kvp_doc *doc, const struct kvp_node *node,
			 const char *field, struct kvp_error *err, int rc, const char *range,
			 const char *expected)
{
	if (rc == -2)
		return kvp_node_fail(doc, node, err, KVP_STATUS_OVERFLOW, field, "%s %s",
				     node->value, range);
	char readings[KVP_BYTES_READINGS_SIZE];
	if (rc == -4 && kvp_bytes_readings(node->value, readings, sizeof readings))
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, field,
				     "'%s' is ambiguous: %s?", node->value, readings);
	if (rc)
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, field,
				     "expected %s, got '%s'", expected, node->value);
	return KVP_STATUS_OK;
}

static const char fit64[] = "does not fit in 64 bits", range[] = "is out of range";

kvp_status kvp_node_u64(const struct kvp_doc *doc, const struct kvp_node *node,
			const char *field, uint64_t *out, struct kvp_error *err)
{
	kvp_status st = unsigned_scalar(doc, node, field, err);
	return st ? st : parsed(doc, node, field, err, kvp_parse_u64(node->value, out), fit64,
				"a whole number");
}

kvp_status kvp_node_double(const struct kvp_doc *doc, const struct kvp_node *node,
			   const char *field, double *out, struct kvp_error *err)
{
	kvp_status st = unsigned_scalar(doc, node, field, err);
	return st ? st : parsed(doc, node, field, err, kvp_parse_double(node->value, out), range,
				"a number");
}

kvp_status kvp_node_bool(const struct kvp_doc *doc, const struct kvp_node *node,
			 const char *field, bool *out, struct kvp_error *err)
{
	kvp_status st = scalar(doc, node, field, err);
	if (st)
		return st;
	if (!node->quoted && (strcmp(node->value, "true") == 0 || strcmp(node->value, "True") == 0))
		*out = true;
	else if (!node->quoted &&
		 (strcmp(node->value, "false") == 0 || strcmp(node->value, "False") == 0))
		*out = false;
	else
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, field,
				     "expected true or false, got '%s'", node->value);
	return KVP_STATUS_OK;
}

kvp_status kvp_node_str(const struct kvp_doc *doc, const struct kvp_node *node,
			const char *field, char *buf, size_t size, struct kvp_error *err)
{
	kvp_status st = scalar(doc, node, field, err);
	if (st)
		return st;
	if (strlen(node->value) >= size)
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, field,
				     "longer than %zu characters", size - 1);
	memcpy(buf, node->value, strlen(node->value) + 1);
	return KVP_STATUS_OK;
}

kvp_status kvp_node_bytes(const struct kvp_doc *doc, const struct kvp_node *node,
			  const char *field, uint64_t *out, struct kvp_error *err)
{
	kvp_status st = unsigned_scalar(doc, node, field, err);
	return st ? st : parsed(doc, node, field, err, kvp_parse_bytes(node->value, out), fit64,
				"a size such as 80GiB or 81559MiB");
}

kvp_status kvp_node_rate(const struct kvp_doc *doc, const struct kvp_node *node,
			 const char *field, double *out, struct kvp_error *err)
{
	kvp_status st = unsigned_scalar(doc, node, field, err);
	return st ? st : parsed(doc, node, field, err, kvp_parse_rate(node->value, out), range,
				"a rate such as 3.35TB/s");
}
