/* hf-read.c: the JSON readers every part of the config.json importer uses.
 *
 * A config.json is read by the YAML loader (a JSON file is a YAML flow
 * document) and JSON null reads as absent.  These helpers turn its nodes into
 * numbers and flags with the importer's stance: a quoted number, a negative
 * or oversized value, or a missing required field fails with the file, the
 * line and column (of the value, or of the enclosing object when the field is
 * missing) and the field's name; a doubt that is not fatal becomes a warning
 * on the model (hf_warn). */
#include "read/hf-private.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Record a doubt about the file at `node` (NULL: the file) in the model's
 * warnings, "path:line:col: warning: field: message"; past
 * KVP_MODEL_WARNINGS the last slot says how many more were dropped. */
void hf_warn(struct hf *h, const struct kvp_node *node, const char *field, const char *fmt, ...)
{
	struct kvp_model *m = h->m;
	if (m->num_warnings >= KVP_MODEL_WARNINGS) {
		m->num_warnings++;
		snprintf(m->warnings[KVP_MODEL_WARNINGS - 1], KVP_WARNING_MAX,
			 "%s: warning: %u more warnings not shown", h->doc->path,
			 m->num_warnings - KVP_MODEL_WARNINGS + 1);
		return;
	}
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	const struct kvp_node *at = node ? node : h->cfg;
	snprintf(m->warnings[m->num_warnings++], KVP_WARNING_MAX, "%s:%d:%d: warning: %s: %s",
		 h->doc->path, at ? at->line : 0, at ? at->col : 0, field, msg);
}

/* ------------------------------------------------------------ readers */

bool hf_is_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* The first of `keys` present (and not null) in map; *which names it. */
const struct kvp_node *hf_get_any(const struct kvp_node *map, const char *const *keys,
				  const char **which)
{
	for (; *keys; keys++) {
		const struct kvp_node *n = kvp_map_get(map, *keys);
		if (n) {
			if (which)
				*which = *keys;
			return n;
		}
	}
	return NULL;
}

/* A whole number in [0, max]; a quoted "4096" is a string, not a number. */
kvp_status hf_node_uint(struct hf *h, const struct kvp_node *n, const char *field,
			uint64_t max, uint64_t *out)
{
	if (n->type == KVP_NODE_SCALAR && n->quoted)
		return kvp_node_fail(h->doc, n, h->err, KVP_STATUS_INVALID, field,
				     "expected a number, got the string \"%s\"", n->value);
	kvp_status st = kvp_node_u64(h->doc, n, field, out, h->err);
	if (st)
		return st;
	/* JSON has no leading zeros (Python's json refuses 032, so transformers
	 * cannot read it; YAML 1.1 would read it as octal 26) */
	const char *d = n->value[0] == '-' || n->value[0] == '+' ? n->value + 1 : n->value;
	if (d[0] == '0' && d[1])
		return kvp_node_fail(h->doc, n, h->err, KVP_STATUS_INVALID, field,
				     "%s: a number with a leading zero is not JSON", n->value);
	if (*out > max)
		return kvp_node_fail(h->doc, n, h->err, KVP_STATUS_OVERFLOW, field,
				     "%s is larger than %llu", n->value, (unsigned long long)max);
	return KVP_STATUS_OK;
}

kvp_status hf_node_positive(struct hf *h, const struct kvp_node *n, const char *field,
			    uint64_t max, uint64_t *out)
{
	kvp_status st = hf_node_uint(h, n, field, max, out);
	if (!st && *out == 0)
		return kvp_node_fail(h->doc, n, h->err, KVP_STATUS_INVALID, field,
				     "must be positive (got 0)");
	return st;
}

/* Optional number `key` of map: *out keeps its default when the key is
 * absent; *found (may be NULL) says which. */
kvp_status hf_opt_uint(struct hf *h, const struct kvp_node *map, const char *key,
		       bool positive, uint32_t *out, bool *found)
{
	const struct kvp_node *n = kvp_map_get(map, key);
	if (found)
		*found = n != NULL;
	if (!n)
		return KVP_STATUS_OK;
	uint64_t v;
	kvp_status st = positive ? hf_node_positive(h, n, key, UINT32_MAX, &v)
				 : hf_node_uint(h, n, key, UINT32_MAX, &v);
	if (!st)
		*out = (uint32_t)v;
	return st;
}

kvp_status hf_opt_bool(struct hf *h, const struct kvp_node *map, const char *key, bool *out)
{
	const struct kvp_node *n = kvp_map_get(map, key);
	return n ? kvp_node_bool(h->doc, n, key, out, h->err) : KVP_STATUS_OK;
}

/* A required positive number read under any of `keys` (keys[0] is the name
 * in messages); when none is present, `dflt` (0: none) applies or the error
 * points at the enclosing object. */
kvp_status hf_req_uint(struct hf *h, const char *const *keys, uint32_t dflt, uint32_t *out,
		       const struct kvp_node **where)
{
	const char *which = keys[0];
	const struct kvp_node *n = hf_get_any(h->cfg, keys, &which);
	if (where)
		*where = n;
	if (!n) {
		if (dflt) {
			*out = dflt;
			return KVP_STATUS_OK;
		}
		char also[128] = "";
		for (size_t i = 1, len = 0; keys[i] && len < sizeof also; i++)
			len += (size_t)snprintf(also + len, sizeof also - len, "%s%s",
						i == 1 ? " (also read as " : ", ", keys[i]);
		if (keys[1])
			strncat(also, ")", sizeof also - strlen(also) - 1);
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID, keys[0],
				     "required field is missing%s", also);
	}
	uint64_t v;
	kvp_status st = hf_node_positive(h, n, which, UINT32_MAX, &v);
	if (!st)
		*out = (uint32_t)v;
	return st;
}
