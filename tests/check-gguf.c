/* check-gguf.c: reading a model from a GGUF header (gguf.h).  The test writes
 * its own tiny GGUF files from the published format (ggml docs/gguf.md,
 * ggml/include/gguf.h: "GGUF", uint32 version, uint64 tensor and key counts,
 * length-prefixed strings, typed values, tensor infos of name, n_dims, dims,
 * ggml type, offset; little-endian), checks the shape and the weight bytes by
 * hand, then damages the file every way it can: every truncation, a wrong
 * magic or version, counts and lengths past the limits, bad tensor infos. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check-tmp.h"
#include "read/gguf.h"
#include "model/model.h"
#include "read/profile.h"
#include "model/spec.h"

/* ---------------------------------------------------------- a tiny writer */

struct buf {
	unsigned char b[8192];
	size_t n;
};

static void put(struct buf *w, uint64_t v, size_t bytes)
{
	for (size_t i = 0; i < bytes; i++)
		w->b[w->n++] = (unsigned char)(v >> (8 * i));
}

static void put_str(struct buf *w, const char *s)
{
	put(w, strlen(s), 8);
	memcpy(w->b + w->n, s, strlen(s));
	w->n += strlen(s);
}

/* value types: UINT32 4, FLOAT32 6, STRING 8, ARRAY 9 */
static void kv_u32(struct buf *w, const char *k, uint32_t v)
{
	put_str(w, k);
	put(w, 4, 4);
	put(w, v, 4);
}

static void kv_str(struct buf *w, const char *k, const char *v)
{
	put_str(w, k);
	put(w, 8, 4);
	put_str(w, v);
}

static void tensor(struct buf *w, const char *name, uint64_t d0, uint64_t d1, uint32_t type)
{
	put_str(w, name);
	put(w, d1 ? 2 : 1, 4);
	put(w, d0, 8);
	if (d1)
		put(w, d1, 8);
	put(w, type, 4);
	put(w, 0, 8); /* offset: the data is never read */
}

/* Where the header fields sit, for the damage tests. */
static size_t at_version, at_ntensors, at_nkv, at_first_key, at_ndims, at_type, at_array_count;

/* A 2-layer "llama": hidden 64, 4 heads, 2 KV heads, context 2048, vocab 256,
 * 11 keys (one float, one array of 3 token strings) and 6 tensors:
 *   token_embd.weight  [64, 256] F16   16,384 x 2 B            = 32,768 B
 *   output.weight      [64, 256] Q8_0  16,384 / 32 x 34 B      = 17,408 B
 *   blk.0.attn_q       [64, 64]  Q4_0   4,096 / 32 x 18 B      =  2,304 B
 *   blk.0.ffn_up       [256,128] Q6_K  32,768 / 256 x 210 B    = 26,880 B
 *   blk.1.attn_q       [64, 64]  BF16   4,096 x 2 B            =  8,192 B
 *   blk.0.attn_norm    [64]      F32       64 x 4 B            =    256 B
 * (block sizes: ggml-common.h block_q8_0 = 2 + 32, block_q4_0 = 2 + 16,
 * block_q6_K = 128 + 64 + 16 + 2). */
static void tiny(struct buf *w)
{
	w->n = 0;
	put(w, 0x46554747u, 4); /* "GGUF" */
	at_version = w->n;
	put(w, 3, 4);
	at_ntensors = w->n;
	put(w, 6, 8);
	at_nkv = w->n;
	put(w, 11, 8);
	at_first_key = w->n;
	kv_str(w, "general.architecture", "llama");
	kv_str(w, "general.name", "tiny-llama");
	kv_u32(w, "llama.block_count", 2);
	kv_u32(w, "llama.embedding_length", 64);
	kv_u32(w, "llama.feed_forward_length", 128);
	kv_u32(w, "llama.context_length", 2048);
	kv_u32(w, "llama.attention.head_count", 4);
	kv_u32(w, "llama.attention.head_count_kv", 2);
	kv_u32(w, "llama.vocab_size", 256);
	put_str(w, "llama.rope.freq_base"); /* FLOAT32 10000 */
	put(w, 6, 4);
	put(w, 0x461c4000u, 4);
	put_str(w, "tokenizer.ggml.tokens"); /* ARRAY of 3 STRING */
	put(w, 9, 4);
	put(w, 8, 4);
	at_array_count = w->n;
	put(w, 3, 8);
	put_str(w, "<s>");
	put_str(w, "a");
	put_str(w, "b");
	tensor(w, "token_embd.weight", 64, 256, 1);
	tensor(w, "output.weight", 64, 256, 8);
	at_ndims = w->n + 8 + strlen("blk.0.attn_q.weight");
	tensor(w, "blk.0.attn_q.weight", 64, 64, 2);
	at_type = w->n + 8 + strlen("blk.0.ffn_up.weight") + 4 + 16;
	tensor(w, "blk.0.ffn_up.weight", 256, 128, 14);
	tensor(w, "blk.1.attn_q.weight", 64, 64, 30);
	tensor(w, "blk.0.attn_norm.weight", 64, 0, 0);
}

static const char *save(const struct buf *w, size_t n)
{
	static char path[600];
	snprintf(path, sizeof path, "%s/m.gguf", tmpdir);
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(w->b, 1, n, f), n);
	fclose(f);
	return path;
}

static struct buf w;
static struct kvp_model model;
static struct kvp_spec spec;

static void setup(void) { tmp_make("kvplan-gguf"); }
static void teardown(void) { tmp_remove(); }

START_TEST(test_tiny_llama)
{
	struct kvp_error err = {0};
	tiny(&w);
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_OK);
	ck_assert_str_eq(model.name, "tiny-llama");
	ck_assert_str_eq(model.family, "llama");
	ck_assert_uint_eq(model.num_layers, 2);
	ck_assert_uint_eq(model.hidden_size, 64);
	ck_assert_uint_eq(model.num_heads, 4);
	ck_assert_uint_eq(model.num_kv_heads, 2);
	ck_assert_uint_eq(model.head_dim, 16);  /* 64 / 4: no key_length given */
	ck_assert_uint_eq(model.vocab_size, 256);
	ck_assert_uint_eq(model.max_context, 2048);
	/* 16,384 + 16,384 + 4,096 + 32,768 + 4,096 + 64 elements */
	ck_assert_uint_eq(model.params, 73792);
	ck_assert_uint_eq(model.file_embed_bytes, 32768 + 17408);
	ck_assert_uint_eq(model.file_dense_bytes, 2304 + 26880 + 8192 + 256);
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 1},
					KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	/* KV: 2 layers x 2 (K, V) x 2 KV heads x 16 x 2 B (bf16) */
	ck_assert_uint_eq(spec.token_bytes, 256);
	ck_assert_uint_eq(spec.weights_bytes, 50176 + 37632);
	/* tp 2: each part halved */
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 2, .pp = 1},
					KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(spec.weights_bytes, 25088 + 18816);
	ck_assert_uint_eq(spec.token_bytes, 128);
	/* --model FILE.gguf goes through the same loader */
	ck_assert_int_eq(kvp_model_load(save(&w, w.n), &model, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(model.num_layers, 2);
}
END_TEST

/* Every prefix of the file is an error, never a crash: the header, a key, a
 * string, the token array and a tensor info can each end early. */
START_TEST(test_every_truncation)
{
	struct kvp_error err = {0};
	tiny(&w);
	for (size_t n = 0; n < w.n; n++) {
		kvp_status st = kvp_gguf_load(save(&w, n), &model, &err);
		ck_assert_msg(st == KVP_STATUS_INVALID, "prefix of %zu bytes: status %d", n, st);
		ck_assert_str_eq(err.field, "gguf");
	}
}
END_TEST

static void poke(size_t at, uint64_t v, size_t bytes)
{
	for (size_t i = 0; i < bytes; i++)
		w.b[at + i] = (unsigned char)(v >> (8 * i));
}

static const struct {
	const char *what;
	int which;
	uint64_t value;
	const char *msg;
} damage[] = {
	{"magic", 0, 0x4c4d4747u, "not a GGUF file"},
	{"version 1", 1, 1, "GGUF version 1"},
	{"huge tensor count", 2, 1ULL << 40, "tensor count 1099511627776 is past the limit"},
	{"huge key count", 3, 1ULL << 33, "key count 8589934592 is past the limit"},
	{"huge key length", 4, 1ULL << 50, "past the limit"},
	{"huge array", 5, 1ULL << 40, "an array of 1099511627776 elements"},
	{"nine dimensions", 6, 9, "9 dimensions"},
	{"unknown tensor type", 7, 99, "ggml tensor type 99"},
};

START_TEST(test_damaged)
{
	struct kvp_error err = {0};
	static const size_t *at[] = {NULL, &at_version, &at_ntensors, &at_nkv, &at_first_key,
				     &at_array_count, &at_ndims, &at_type};
	static const size_t width[] = {4, 4, 8, 8, 8, 8, 4, 4};
	tiny(&w);
	int k = damage[_i].which;
	poke(k ? *at[k] : 0, damage[_i].value, width[k]);
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "gguf");
	ck_assert_msg(strstr(err.msg, damage[_i].msg), "%s: '%s' lacks '%s'", damage[_i].what,
		      err.msg, damage[_i].msg);
}
END_TEST

/* A required key missing: no block_count (its key renamed in place). */
START_TEST(test_missing_key)
{
	struct kvp_error err = {0};
	tiny(&w);
	unsigned char *p = NULL;
	for (size_t i = 0; i + 17 <= w.n && !p; i++)
		if (memcmp(w.b + i, "llama.block_count", 17) == 0)
			p = w.b + i;
	ck_assert_ptr_nonnull(p);
	memcpy(p, "llama.block_coun_", 17);
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_INVALID);
	ck_assert_msg(strstr(err.msg, "llama.block_count is missing"), "%s", err.msg);
}
END_TEST

static Suite *gguf_suite(void)
{
	Suite *s = suite_create("gguf");
	TCase *core = tcase_create("core");
	tcase_add_checked_fixture(core, setup, teardown);
	tcase_add_test(core, test_tiny_llama);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_checked_fixture(errors, setup, teardown);
	tcase_set_timeout(errors, 60);
	tcase_add_test(errors, test_every_truncation);
	tcase_add_loop_test(errors, test_damaged, 0, sizeof damage / sizeof damage[0]);
	tcase_add_test(errors, test_missing_key);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(gguf_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
