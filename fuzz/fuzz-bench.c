/* fuzz-bench.c: libFuzzer target for the strict JSON reader (base/json-read.h)
 * and the benchmark readers over it (read/bench.h).  The input is a JSON
 * document or JSON Lines.  Beyond "no crash": a loaded tree respects the
 * limits and has a mark on every node, a failure always fills the error and
 * leaves no tree, a duplicate key never survives in one object, and every
 * run read has a positive, finite shape and measure.  Build: fuzz/run.sh. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "fuzz-common.h"
#include "base/json-read.h"
#include "read/bench.h"

static size_t visit(const struct kvp_node *n, int depth)
{
	FUZZ_ASSERT(depth <= KVP_DOC_MAX_DEPTH + 1, "tree deeper than the limit");
	FUZZ_ASSERT(n->line >= 1 && n->col >= 1, "node without a mark");
	size_t count = 1;
	if (n->type == KVP_NODE_SCALAR) {
		FUZZ_ASSERT(n->value != NULL, "scalar without a value");
		return count;
	}
	for (size_t i = 0; i < n->n; i++) {
		if (n->type == KVP_NODE_MAP) {
			FUZZ_ASSERT(n->keys[i]->quoted, "a key that was not a string");
			for (size_t j = 0; j < i && j < 64; j++)
				FUZZ_ASSERT(strcmp(n->keys[i]->value, n->keys[j]->value) != 0,
					    "a key kept twice");
			count++; /* the key's own node */
		}
		count += visit(n->items[i], depth + 1);
	}
	return count;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const skip[] = {"itls", "ttfts", NULL};
	for (int lines = 0; lines < 2; lines++) {
		struct kvp_json_opts o = {.skip = lines ? skip : NULL, .lines = lines};
		struct kvp_doc *doc = NULL;
		struct kvp_error err = {0};
		kvp_status st = kvp_json_load_buffer("fuzz.json", (const char *)data, size, &o, &doc,
						     &err);
		if (st) {
			FUZZ_ASSERT(doc == NULL, "failure left a document");
			FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
			continue;
		}
		if (doc->root)
			FUZZ_ASSERT(visit(doc->root, 1) == doc->nodes, "nodes miscounted");
		kvp_doc_free(doc);
	}
	const char *path = fuzz_write_input("bench", data, size);
	struct kvp_bench_given g = {.batch = 8, .prompt_tokens = 32, .output_tokens = 128};
	struct kvp_bench_runs runs = {0};
	struct kvp_error err = {0};
	kvp_status st = kvp_bench_load(path, &g, &runs, &err);
	if (st) {
		FUZZ_ASSERT(runs.n == 0, "failure left runs");
		FUZZ_ASSERT(err.msg[0], "failure without a message");
	}
	for (size_t i = 0; i < runs.n; i++) {
		const struct kvp_bench_run *r = &runs.v[i];
		FUZZ_ASSERT(r->batch >= 1 && isfinite(r->batch), "batch not a count");
		FUZZ_ASSERT(r->prompt_tokens >= 1 && r->output_tokens >= 1, "no tokens");
		const double *m = &r->m.ttft_s;
		for (int k = 0; k < 5; k++)
			FUZZ_ASSERT(m[k] >= 0 && isfinite(m[k]), "a measure negative or not finite");
	}
	kvp_bench_runs_free(&runs);
	return 0;
}
