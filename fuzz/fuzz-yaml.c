/* fuzz-yaml.c: libFuzzer target for the document loader of yaml-walk.h and
 * its typed readers.  The input is a YAML or JSON document; every node of the
 * loaded tree is read as each type (u64, double, bool, string, size, rate)
 * and every map is looked up and checked against a key list, so the readers
 * meet every shape of node.  Beyond "no crash": a loaded tree respects the
 * walker's limits (depth, node count), every scalar has a value and a mark,
 * and a failure always fills the error.  Build: fuzz/run.sh. */
#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"
#include "base/yaml-walk.h"

static size_t visit(const struct kvp_doc *doc, const struct kvp_node *n, int depth)
{
	FUZZ_ASSERT(depth <= KVP_DOC_MAX_DEPTH, "tree deeper than the limit");
	FUZZ_ASSERT(n->line >= 1 && n->col >= 1, "node without a mark");
	struct kvp_error err = {0};
	uint64_t u;
	double d;
	bool b;
	char buf[64];
	kvp_status st;
	if ((st = kvp_node_u64(doc, n, "f", &u, &err)))
		FUZZ_ASSERT(err.status == st && err.msg[0], "u64 failure without a message");
	if ((st = kvp_node_double(doc, n, "f", &d, &err)) == KVP_STATUS_OK)
		FUZZ_ASSERT(d >= 0 && d == d && d - d == 0, "double not finite and non-negative");
	kvp_node_bool(doc, n, "f", &b, &err);
	kvp_node_str(doc, n, "f", buf, sizeof buf, &err);
	kvp_node_str(doc, n, "f", buf, 1, &err);
	kvp_node_bytes(doc, n, "f", &u, &err);
	if (kvp_node_rate(doc, n, "f", &d, &err) == KVP_STATUS_OK)
		FUZZ_ASSERT(d >= 0 && d - d == 0, "rate not finite and non-negative");
	kvp_node_is_null(n);
	size_t count = 1;
	if (n->type == KVP_NODE_SCALAR) {
		FUZZ_ASSERT(n->value != NULL, "scalar without a value");
		return count;
	}
	if (n->type == KVP_NODE_MAP) {
		static const char *const allowed[] = {"name", "memory", "num_layers", NULL};
		kvp_map_only(doc, n, allowed, &err);
		kvp_map_get(n, "name");
		for (size_t i = 0; i < n->n; i++) {
			FUZZ_ASSERT(n->keys[i]->type == KVP_NODE_SCALAR, "key not a scalar");
			kvp_map_get(n, n->keys[i]->value);
			count += visit(doc, n->keys[i], depth + 1) - 1;
		}
	}
	for (size_t i = 0; i < n->n; i++)
		count += visit(doc, n->items[i], depth + 1);
	return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kvp_doc *doc = NULL;
	struct kvp_error err = {0};
	kvp_status st = kvp_doc_load_buffer("fuzz.yaml", (const char *)data, size, &doc, &err);
	if (st) {
		FUZZ_ASSERT(doc == NULL, "failure left a document");
		FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
		char msg[1400];
		kvp_error_format(&err, msg, sizeof msg);
		return 0;
	}
	if (doc->root) {
		size_t n = visit(doc, doc->root, 1);
		FUZZ_ASSERT(n <= KVP_DOC_MAX_NODES, "more nodes than the limit");
	}
	kvp_doc_free(doc);
	return 0;
}
