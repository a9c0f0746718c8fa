/* json-read.h: a small strict JSON reader (RFC 8259) into yaml-walk.h's
 * marked tree, for the benchmark result files the engines write.
 *
 * Stance: the tree is yaml-walk's (struct kvp_doc of struct kvp_node, freed
 * by kvp_doc_free), so every typed reader and its file:line:col messages
 * serve JSON as they serve YAML.  libyaml would parse JSON too, but a
 * benchmark_serving result saved with --save-detailed carries every request's
 * inter-token gaps (a million numbers for 10,000 requests): this reader
 * validates such values without keeping them (the `skip` keys) and runs at
 * memory speed.  Strict: no comments, no trailing commas, no NaN or Infinity
 * (Python's json.dump writes them for a float('nan'); they are reported, not
 * read as numbers), no duplicate keys in one object, strings valid UTF-8 with
 * their escapes checked; the limits are KVP_JSON_MAX_BYTES, KVP_DOC_MAX_DEPTH
 * and KVP_DOC_MAX_NODES kept nodes. */
#ifndef KVP_JSON_READ_H
#define KVP_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/yaml-walk.h"

#define KVP_JSON_MAX_BYTES (512u * 1024u * 1024u)

struct kvp_json_opts {
	/* object keys (at any depth) whose values are checked but not kept:
	 * the key stays out of the tree too; NULL-terminated, or NULL */
	const char *const *skip;
	/* read a sequence of JSON texts separated by white space (JSON Lines,
	 * vLLM's --append-result): the root is a sequence of them.  Without it
	 * anything after the one text is an error. */
	bool lines;
};

/* Read the file at `path` (a regular file, base/input-file.h), or the buffer
 * buf[0..len) named `name` in messages.  On success *out owns the tree (an
 * empty file: root NULL); on failure *out is NULL and err holds
 * file:line:col and what was expected there (PARSE), or NOMEM / IO. */
kvp_status kvp_json_load_file(const char *path, const struct kvp_json_opts *o,
			      struct kvp_doc **out, struct kvp_error *err);
kvp_status kvp_json_load_buffer(const char *name, const char *buf, size_t len,
				const struct kvp_json_opts *o, struct kvp_doc **out,
				struct kvp_error *err);

#endif
