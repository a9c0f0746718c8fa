/* yaml-walk.h: load a small YAML (or JSON) document into a tree with source
 * marks, and read typed fields from it with located errors.
 *
 * The whole document is loaded first (libyaml's event parser), then walked.
 * Every node keeps its 1-based line and column so each message can point at
 * the offending value.  Anchors and aliases are refused (no "billion laughs"),
 * as are duplicate keys; documents over KVP_DOC_MAX_BYTES, deeper than
 * KVP_DOC_MAX_DEPTH or with more than KVP_DOC_MAX_NODES nodes are refused
 * before they can exhaust memory.  JSON is read by the same parser (a JSON
 * file is a YAML flow document). */
#ifndef KVP_YAML_WALK_H
#define KVP_YAML_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

#define KVP_DOC_MAX_BYTES (16u * 1024u * 1024u)
#define KVP_DOC_MAX_DEPTH 64
#define KVP_DOC_MAX_NODES 1000000u

enum kvp_node_type {
	KVP_NODE_SCALAR,
	KVP_NODE_MAP,
	KVP_NODE_SEQ
};

struct kvp_node {
	enum kvp_node_type type;
	int line, col;         /* 1-based */
	char *value;           /* scalars */
	bool quoted;           /* scalar was quoted: never null, bool or number */
	size_t n;              /* map entries or sequence items */
	struct kvp_node **keys;   /* maps: scalar keys */
	struct kvp_node **items;  /* maps: values; sequences: items */
};

struct kvp_doc {
	char path[512];
	struct kvp_node *root;  /* NULL for an empty document */
	size_t nodes;
};

/* Load a file, or a buffer named `name` in messages.  On success *out owns the
 * tree (free with kvp_doc_free); on failure *out is NULL and err is filled. */
kvp_status kvp_doc_load_file(const char *path, struct kvp_doc **out, struct kvp_error *err);
kvp_status kvp_doc_load_buffer(const char *name, const char *buf, size_t len,
			       struct kvp_doc **out, struct kvp_error *err);
void kvp_doc_free(struct kvp_doc *doc);

/* The value of `key` in a map, or NULL when absent.  A plain scalar null
 * (null, ~, empty) counts as absent, as JSON null does in Hugging Face configs. */
const struct kvp_node *kvp_map_get(const struct kvp_node *map, const char *key);
bool kvp_node_is_null(const struct kvp_node *node);

/* Refuse keys of `map` not in the NULL-terminated list `allowed`. */
kvp_status kvp_map_only(const struct kvp_doc *doc, const struct kvp_node *map,
			const char *const *allowed, struct kvp_error *err);

/* Typed readers.  `field` names the value in messages.  Each checks the node
 * type and range and reports at the node's mark. */
kvp_status kvp_node_u64(const struct kvp_doc *doc, const struct kvp_node *node,
			const char *field, uint64_t *out, struct kvp_error *err);
kvp_status kvp_node_double(const struct kvp_doc *doc, const struct kvp_node *node,
			   const char *field, double *out, struct kvp_error *err);
kvp_status kvp_node_bool(const struct kvp_doc *doc, const struct kvp_node *node,
			 const char *field, bool *out, struct kvp_error *err);
kvp_status kvp_node_str(const struct kvp_doc *doc, const struct kvp_node *node,
			const char *field, char *buf, size_t size, struct kvp_error *err);
kvp_status kvp_node_bytes(const struct kvp_doc *doc, const struct kvp_node *node,
			  const char *field, uint64_t *out, struct kvp_error *err);
kvp_status kvp_node_rate(const struct kvp_doc *doc, const struct kvp_node *node,
			 const char *field, double *out, struct kvp_error *err);
kvp_status kvp_node_expect(const struct kvp_doc *doc, const struct kvp_node *node,
			   const char *field, enum kvp_node_type type, struct kvp_error *err);

/* Fill err with a message located at node (at the document when node is NULL). */
kvp_status kvp_node_fail(const struct kvp_doc *doc, const struct kvp_node *node,
			 struct kvp_error *err, kvp_status status, const char *field,
			 const char *fmt, ...) __attribute__((format(printf, 6, 7)));

#endif
