/* check-yaml.c: the document loader and the profile walkers: well-formed
 * documents, JSON, and the corpus of bad inputs in tests/data/bad/, each with
 * the status, line and field its message must name (read off the file by
 * hand: the line of the offending key or value). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/profile.h"
#include "base/yaml-walk.h"

#define DATA KVP_SRCDIR "/tests/data/"

START_TEST(test_load_tree)
{
	static const char doc[] = "a: 1\nb: [x, 'y', null]\nc: {d: true}\ne: ~\n";
	struct kvp_doc *d;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_doc_load_buffer("t", doc, sizeof doc - 1, &d, &err), KVP_STATUS_OK);
	ck_assert_int_eq(d->root->type, KVP_NODE_MAP);
	ck_assert_uint_eq(d->root->n, 4);
	const struct kvp_node *b = kvp_map_get(d->root, "b");
	ck_assert_int_eq(b->type, KVP_NODE_SEQ);
	ck_assert_uint_eq(b->n, 3);
	ck_assert(b->items[1]->quoted);
	ck_assert(kvp_node_is_null(b->items[2]));
	ck_assert_int_eq(b->line, 2);
	ck_assert_int_eq(b->col, 4);
	ck_assert_ptr_null(kvp_map_get(d->root, "e")); /* null reads as absent */
	ck_assert_ptr_null(kvp_map_get(d->root, "zz"));
	uint64_t v;
	ck_assert_int_eq(kvp_node_u64(d, kvp_map_get(d->root, "a"), "a", &v, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(v, 1);
	bool t;
	ck_assert_int_eq(kvp_node_bool(d, kvp_map_get(kvp_map_get(d->root, "c"), "d"), "d", &t, &err),
			 KVP_STATUS_OK);
	ck_assert(t);
	kvp_doc_free(d);
}
END_TEST

START_TEST(test_load_json)
{
	static const char doc[] = "{\n  \"num_hidden_layers\": 32,\n  \"head_dim\": null,\n"
				  "  \"rope_scaling\": {\"factor\": 8.0},\n  \"x\": [1, 2]\n}\n";
	struct kvp_doc *d;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_doc_load_buffer("c.json", doc, sizeof doc - 1, &d, &err), KVP_STATUS_OK);
	const struct kvp_node *n = kvp_map_get(d->root, "num_hidden_layers");
	ck_assert_str_eq(n->value, "32");
	ck_assert_int_eq(n->line, 2);
	ck_assert_ptr_null(kvp_map_get(d->root, "head_dim"));
	kvp_doc_free(d);
}
END_TEST

START_TEST(test_limits)
{
	struct kvp_doc *d;
	struct kvp_error err = {0};
	/* a billion-laughs document is refused at its first anchor */
	static const char laughs[] = "a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n";
	ck_assert_int_eq(kvp_doc_load_buffer("l", laughs, sizeof laughs - 1, &d, &err),
			 KVP_STATUS_PARSE);
	ck_assert_int_eq(err.line, 1);
	ck_assert_ptr_null(d);
	/* 65 nested lists: one past the limit */
	char deep[200];
	int k = 0;
	for (int i = 0; i < 65; i++)
		deep[k++] = '[';
	for (int i = 0; i < 65; i++)
		deep[k++] = ']';
	ck_assert_int_eq(kvp_doc_load_buffer("d", deep, (size_t)k, &d, &err), KVP_STATUS_PARSE);
	ck_assert(strstr(err.msg, "deeper") != NULL);
	/* 64 is fine */
	ck_assert_int_eq(kvp_doc_load_buffer("d", deep + 1, (size_t)k - 2, &d, &err), KVP_STATUS_OK);
	kvp_doc_free(d);
	/* larger than 16 MiB is refused before parsing */
	ck_assert_int_eq(kvp_doc_load_buffer("big", deep, KVP_DOC_MAX_BYTES + 1, &d, &err),
			 KVP_STATUS_INVALID);
	/* empty document: loads, with no root */
	ck_assert_int_eq(kvp_doc_load_buffer("e", "", 0, &d, &err), KVP_STATUS_OK);
	ck_assert_ptr_null(d->root);
	kvp_doc_free(d);
	ck_assert_int_eq(kvp_doc_load_file(DATA "no-such-file.yaml", &d, &err), KVP_STATUS_IO);
}
END_TEST

/* The corpus: file, kind, status, line (0: none), field ("" when none). */
static const struct {
	const char *file;
	int gpu;
	kvp_status status;
	int line;
	const char *field;
} bad[] = {
	{"model-unknown-key.yaml", 0, KVP_STATUS_INVALID, 15, "parameters"},
	{"model-missing-layers.yaml", 0, KVP_STATUS_INVALID, 3, "num_layers"},
	{"model-missing-params.yaml", 0, KVP_STATUS_INVALID, 3, "params"},
	{"model-negative-heads.yaml", 0, KVP_STATUS_INVALID, 7, "num_heads"},
	{"model-zero-layers.yaml", 0, KVP_STATUS_INVALID, 5, "num_layers"},
	{"model-zero-headdim.yaml", 0, KVP_STATUS_INVALID, 9, "head_dim"},
	{"model-string-layers.yaml", 0, KVP_STATUS_INVALID, 5, "num_layers"},
	{"model-float-layers.yaml", 0, KVP_STATUS_INVALID, 5, "num_layers"},
	{"model-overflow-params.yaml", 0, KVP_STATUS_OVERFLOW, 14, "params"},
	{"model-overflow-u32.yaml", 0, KVP_STATUS_OVERFLOW, 6, "hidden_size"},
	{"model-kv-not-divide.yaml", 0, KVP_STATUS_INVALID, 8, "num_kv_heads"},
	{"model-kv-more-than-heads.yaml", 0, KVP_STATUS_INVALID, 8, "num_kv_heads"},
	{"model-bad-dtype.yaml", 0, KVP_STATUS_INVALID, 4, "dtype"},
	{"model-bad-bool.yaml", 0, KVP_STATUS_INVALID, 12, "tie_word_embeddings"},
	{"model-sliding-no-window.yaml", 0, KVP_STATUS_INVALID, 3, "sliding_window"},
	{"model-bad-kind.yaml", 0, KVP_STATUS_INVALID, 14, "layer_pattern"},
	{"model-pattern-not-list.yaml", 0, KVP_STATUS_INVALID, 14, "layer_pattern"},
	{"model-mla-missing.yaml", 0, KVP_STATUS_INVALID, 3, "mla"},
	{"model-mla-bad-key.yaml", 0, KVP_STATUS_INVALID, 15, "rope"},
	{"model-mamba-zero.yaml", 0, KVP_STATUS_INVALID, 15, "d_state"},
	{"model-active-gt-total.yaml", 0, KVP_STATUS_INVALID, 15, "active_params"},
	{"model-wrong-name.yaml", 0, KVP_STATUS_INVALID, 3, "name"},
	{"model-duplicate-key.yaml", 0, KVP_STATUS_PARSE, 7, "hidden_size"},
	{"model-heads-list.yaml", 0, KVP_STATUS_INVALID, 7, "num_heads"},
	{"model-negative-context.yaml", 0, KVP_STATUS_INVALID, 13, "max_context"},
	{"model-weights-dtype-kv.yaml", 0, KVP_STATUS_INVALID, 15, "weights_dtype"},
	{"model-malformed.yaml", 0, KVP_STATUS_PARSE, 3, ""},
	{"model-alias.yaml", 0, KVP_STATUS_PARSE, 1, ""},
	{"model-empty.yaml", 0, KVP_STATUS_INVALID, 0, ""},
	{"model-not-mapping.yaml", 0, KVP_STATUS_INVALID, 1, ""},
	{"model-tab.yaml", 0, KVP_STATUS_PARSE, 2, ""},
	{"model-deep.yaml", 0, KVP_STATUS_PARSE, 1, ""},
	{"model-two-docs.yaml", 0, KVP_STATUS_PARSE, 2, ""},
	{"gpu-missing-memory.yaml", 1, KVP_STATUS_INVALID, 2, "memory"},
	{"gpu-bad-memory.yaml", 1, KVP_STATUS_INVALID, 3, "memory"},
	{"gpu-zero-memory.yaml", 1, KVP_STATUS_INVALID, 3, "memory"},
	{"gpu-negative-bandwidth.yaml", 1, KVP_STATUS_INVALID, 4, "bandwidth"},
	{"gpu-bad-rate.yaml", 1, KVP_STATUS_INVALID, 4, "bandwidth"},
	{"gpu-bad-link.yaml", 1, KVP_STATUS_INVALID, 6, "host_link"},
	{"gpu-nan-tflops.yaml", 1, KVP_STATUS_INVALID, 5, "bf16_tflops"},
	{"gpu-inf-tflops.yaml", 1, KVP_STATUS_OVERFLOW, 5, "bf16_tflops"},
	{"gpu-overflow-memory.yaml", 1, KVP_STATUS_OVERFLOW, 3, "memory"},
	{"gpu-unknown-key.yaml", 1, KVP_STATUS_INVALID, 7, "colour"},
	{"gpu-calibration-range.yaml", 1, KVP_STATUS_INVALID, 7, "calibration"},
};

START_TEST(test_bad_inputs)
{
	char path[1024];
	snprintf(path, sizeof path, DATA "bad/%s", bad[_i].file);
	struct kvp_error err = {0};
	kvp_status st;
	if (bad[_i].gpu) {
		struct kvp_gpu g;
		st = kvp_gpu_load(path, &g, &err);
	} else {
		static struct kvp_model m;
		st = kvp_model_load(path, &m, &err);
	}
	ck_assert_msg(st == bad[_i].status, "%s: status %d, want %d (%s)", bad[_i].file, st,
		      bad[_i].status, err.msg);
	ck_assert_msg(err.line == bad[_i].line, "%s: line %d, want %d", bad[_i].file, err.line,
		      bad[_i].line);
	ck_assert_str_eq(err.field, bad[_i].field);
	ck_assert(strstr(err.path, bad[_i].file) != NULL);
	ck_assert(err.msg[0] != '\0');
}
END_TEST

START_TEST(test_good_fixture)
{
	struct kvp_model m;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_model_load(DATA "good/tiny.yaml", &m, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(m.num_layers, 4);
	ck_assert_uint_eq(m.head_dim_v, 64); /* defaults to head_dim */
	ck_assert_uint_eq(m.active_params, m.params);
	struct kvp_gpu g;
	ck_assert_int_eq(kvp_gpu_load(DATA "good/tinygpu.yaml", &g, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(g.memory_bytes, 1ULL << 30);
	ck_assert_double_eq_tol(g.bf16_flops, 100e12, 1);
}
END_TEST

static Suite *yaml_suite(void)
{
	Suite *s = suite_create("yaml");
	TCase *core = tcase_create("core");
	tcase_add_test(core, test_load_tree);
	tcase_add_test(core, test_load_json);
	tcase_add_test(core, test_good_fixture);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_test(errors, test_limits);
	tcase_add_loop_test(errors, test_bad_inputs, 0, sizeof bad / sizeof bad[0]);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(yaml_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
