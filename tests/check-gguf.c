/* check-gguf.c: reading a model from a GGUF header (gguf.h).  The test writes
 * its own tiny GGUF files from the published format (ggml docs/gguf.md,
 * ggml/include/gguf.h: "GGUF", uint32 version, uint64 tensor and key counts,
 * length-prefixed strings, typed values, tensor infos of name, n_dims, dims,
 * ggml type, offset; little-endian), checks the shape and the weight bytes by
 * hand, then damages the file every way it can: every truncation, a wrong
 * magic or version, counts and lengths past the limits, bad tensor infos. */
#include <check.h>
#include <sys/stat.h>
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

/* ------------------------------------------ per-layer keys (issue 37 N4) */

static size_t at_layer_arr;

static void kv_arr_u32(struct buf *b, const char *k, const uint32_t *v, size_t n)
{
	put_str(b, k);
	at_layer_arr = b->n;  /* the value type: where the array starts */
	put(b, 9, 4);
	put(b, 4, 4);
	put(b, n, 8);
	for (size_t i = 0; i < n; i++)
		put(b, v[i], 4);
}

/* A "llama" of `blocks` layers, hidden 64, 4 heads (head_dim 64 / 4 = 16),
 * head_count_kv as the array kv[n], one tensor; `extra` adds
 * llama.ssm.state_size (recurrent state named). */
static void layered(struct buf *b, uint32_t blocks, const uint32_t *kv, size_t n, bool extra)
{
	b->n = 0;
	put(b, 0x46554747u, 4);
	put(b, 3, 4);
	put(b, 1, 8);
	put(b, extra ? 8 : 7, 8);
	kv_str(b, "general.architecture", "llama");
	kv_u32(b, "llama.block_count", blocks);
	kv_u32(b, "llama.embedding_length", 64);
	kv_u32(b, "llama.context_length", 2048);
	kv_u32(b, "llama.attention.head_count", 4);
	kv_arr_u32(b, "llama.attention.head_count_kv", kv, n);
	kv_u32(b, "llama.vocab_size", 256);
	if (extra)
		kv_u32(b, "llama.ssm.state_size", 16);
	tensor(b, "token_embd.weight", 64, 256, 1);
}

/* head_count_kv per layer: 0 is a layer without attention (no KV). */
START_TEST(test_per_layer_kv_heads)
{
	struct kvp_error err = {0};
	static const uint32_t kv[] = {2, 0, 2, 2};
	layered(&w, 4, kv, 4, false);
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(model.num_kv_heads, 2);
	ck_assert_uint_eq(model.layers[0], KVP_LAYER_FULL);
	ck_assert_uint_eq(model.layers[1], KVP_LAYER_NONE);
	ck_assert_uint_eq(model.layers[3], KVP_LAYER_FULL);
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 1},
					KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	/* 3 attention layers x 2 (K, V) x 2 KV heads x 16 x 2 B (bf16) = 384;
	 * the old reader sized 4 layers x 2 x 4 heads x 16 x 2 B = 1,024 */
	ck_assert_uint_eq(spec.token_bytes, 384);
	ck_assert_uint_eq(spec.count[KVP_LAYER_NONE], 1);
	/* tp 2: 1 KV head per rank, 3 x 2 x 1 x 16 x 2 B */
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 2, .pp = 1},
					KVP_DTYPE_AUTO, KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(spec.token_bytes, 192);
}
END_TEST

static const struct {
	const char *what;
	uint32_t blocks;
	uint32_t kv[5];
	size_t n;
	bool ssm;
	const char *msg;
} bad_layers[] = {
	{"array shorter than block_count", 4, {2, 2, 2}, 3, false,
	 "a per-layer array of 3 entries, but block_count is 4"},
	{"array longer than block_count", 2, {2, 2, 2}, 3, false,
	 "a per-layer array of 3 entries, but block_count is 2"},
	{"layers that disagree", 3, {2, 1, 2}, 3, false, "one head count for every attention layer"},
	{"KV heads that do not divide the heads", 2, {3, 3}, 2, false, "do not divide 4 heads"},
	{"no attention anywhere", 2, {0, 0}, 2, false, "no layer has attention heads"},
	{"recurrent layers", 3, {2, 0, 2}, 3, true, "llama.ssm.state_size describes recurrent state"},
	/* Falcon-H1 style: attention and a recurrent mixer in every layer */
	{"recurrent beside attention", 3, {2, 2, 2}, 3, true,
	 "llama.ssm.state_size describes recurrent state"},
};

START_TEST(test_per_layer_refused)
{
	struct kvp_error err = {0};
	char at[64];
	layered(&w, bad_layers[_i].blocks, bad_layers[_i].kv, bad_layers[_i].n, bad_layers[_i].ssm);
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "gguf");
	ck_assert_msg(strstr(err.msg, bad_layers[_i].msg), "%s: '%s' lacks '%s'",
		      bad_layers[_i].what, err.msg, bad_layers[_i].msg);
	/* the offset named is the array's, wherever the layers conflict */
	snprintf(at, sizeof at, "at byte %zu:", at_layer_arr);
	if (!strstr(bad_layers[_i].msg, "no layer") && !bad_layers[_i].ssm)
		ck_assert_msg(strstr(err.msg, at), "%s: '%s' lacks '%s'", bad_layers[_i].what,
			      err.msg, at);
}
END_TEST

/* ------------------------------------- types, ranges, duplicates (N15) */

/* tiny() with the value of `key` (a UINT32 there) replaced by type `type`
 * holding `v` in `bytes` bytes; the rest of the file moves along. */
static void retyped(const char *key, uint32_t type, uint64_t v, size_t bytes)
{
	struct buf t;
	tiny(&t);
	size_t kl = strlen(key), at = 0;
	for (size_t i = 0; i + 8 + kl <= t.n && !at; i++)
		if (t.b[i] == kl && memcmp(t.b + i + 8, key, kl) == 0)
			at = i + 8 + kl;
	ck_assert_uint_ne(at, 0);
	w.n = 0;
	memcpy(w.b, t.b, at);
	w.n = at;
	put(&w, type, 4);
	put(&w, v, bytes);
	memcpy(w.b + w.n, t.b + at + 8, t.n - at - 8);
	w.n += t.n - at - 8;
}

static const struct {
	const char *key;
	uint32_t type;
	uint64_t value;
	size_t bytes;
	const char *msg;
} bad_values[] = {
	/* BOOL 7, FLOAT32 6, INT32 5, UINT64 10, STRING 8 */
	{"llama.block_count", 7, 1, 1, "llama.block_count: a BOOL, not a whole number"},
	{"llama.attention.head_count", 6, 0x40800000u, 4, "a FLOAT32, not a whole number"},
	{"llama.embedding_length", 5, 0xffffffc0u, 4, "a negative INT32"},
	/* 2^32 + 2: the old reader cut it to 2 */
	{"llama.attention.head_count_kv", 10, (1ULL << 32) + 2, 8,
	 "= 4294967298 is out of range"},
	{"llama.feed_forward_length", 10, (1ULL << 32) + 128, 8, "= 4294967424 is out of range"},
	{"llama.block_count", 10, 4097, 8, "= 4097 is out of range (at most 4096)"},
	{"llama.context_length", 10, (1ULL << 40) + 1, 8, "is out of range"},
};

START_TEST(test_bad_values)
{
	struct kvp_error err = {0};
	retyped(bad_values[_i].key, bad_values[_i].type, bad_values[_i].value, bad_values[_i].bytes);
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "gguf");
	ck_assert_msg(strstr(err.msg, bad_values[_i].msg), "%s: '%s' lacks '%s'",
		      bad_values[_i].key, err.msg, bad_values[_i].msg);
	ck_assert_msg(strstr(err.msg, "at byte "), "%s: no offset in '%s'", bad_values[_i].key,
		      err.msg);
}
END_TEST

/* The same value as a UINT64 or INT8 in range is read (the type is an
 * integer type, the value fits). */
START_TEST(test_other_int_types)
{
	struct kvp_error err = {0};
	retyped("llama.attention.head_count_kv", 10, 2, 8);
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(model.num_kv_heads, 2);
	retyped("llama.block_count", 1, 2, 1);
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(model.num_layers, 2);
}
END_TEST

/* Put one more key after the last key of tiny(): the key count grows. */
static void add_key(struct buf *b, void (*add)(struct buf *), size_t *at)
{
	struct buf t;
	tiny(&t);
	size_t end = at_array_count + 8 + (8 + 3) + (8 + 1) + (8 + 1); /* after the tokens */
	memcpy(b->b, t.b, end);
	b->n = end;
	*at = end;
	add(b);
	memcpy(b->b + b->n, t.b + end, t.n - end);
	b->n += t.n - end;
	uint64_t nkv = 12;
	for (size_t i = 0; i < 8; i++)
		b->b[at_nkv + i] = (unsigned char)(nkv >> (8 * i));
}

static void dup_heads(struct buf *b) { kv_u32(b, "llama.attention.head_count_kv", 4); }
static void used_over(struct buf *b) { kv_u32(b, "llama.expert_used_count", 9); }

START_TEST(test_duplicate_key)
{
	struct kvp_error err = {0};
	size_t at;
	char want[64];
	add_key(&w, dup_heads, &at);
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_INVALID);
	snprintf(want, sizeof want, "at byte %zu: key", at);
	ck_assert_msg(strstr(err.msg, want), "'%s' lacks '%s'", err.msg, want);
	ck_assert_msg(strstr(err.msg, "\"llama.attention.head_count_kv\" appears a second time"),
		      "%s", err.msg);
}
END_TEST

/* expert_used_count without (or above) expert_count: llama.cpp asserts
 * n_expert_used <= n_expert, and > 0 only with experts. */
START_TEST(test_experts_used)
{
	struct kvp_error err = {0};
	size_t at;
	add_key(&w, used_over, &at);
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_INVALID);
	ck_assert_msg(strstr(err.msg, "expert_used_count = 9 with expert_count = 0"), "%s", err.msg);
}
END_TEST

START_TEST(test_duplicate_tensor)
{
	struct kvp_error err = {0};
	tiny(&w);
	/* blk.1.attn_q.weight renamed in place to blk.0.attn_q.weight: the old
	 * reader counted its bytes twice */
	unsigned char *p = NULL;
	for (size_t i = 0; i + 19 <= w.n && !p; i++)
		if (memcmp(w.b + i, "blk.1.attn_q.weight", 19) == 0)
			p = w.b + i;
	ck_assert_ptr_nonnull(p);
	p[4] = '0';
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_INVALID);
	ck_assert_msg(strstr(err.msg, "tensor \"blk.0.attn_q.weight\" appears a second time"), "%s",
		      err.msg);
}
END_TEST

/* A key of the architecture before general.architecture: the old reader
 * skipped it unread (head_count_kv 2 lost: every layer sized with all 4
 * heads); it is refused at its offset, 24 (after magic, version, counts). */
START_TEST(test_key_before_architecture)
{
	struct kvp_error err = {0};
	w.n = 0;
	put(&w, 0x46554747u, 4);
	put(&w, 3, 4);
	put(&w, 1, 8);
	put(&w, 7, 8);
	kv_u32(&w, "llama.attention.head_count_kv", 2);
	kv_str(&w, "general.architecture", "llama");
	kv_u32(&w, "llama.block_count", 2);
	kv_u32(&w, "llama.embedding_length", 64);
	kv_u32(&w, "llama.context_length", 2048);
	kv_u32(&w, "llama.attention.head_count", 4);
	kv_u32(&w, "llama.vocab_size", 256);
	tensor(&w, "token_embd.weight", 64, 256, 1);
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_INVALID);
	ck_assert_msg(strstr(err.msg, "at byte 24: key \"llama.attention.head_count_kv\" comes "
			     "before general.architecture"), "%s", err.msg);
}
END_TEST

/* ------------------------------------------- a bounded header walk (N9) */

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* A small file that claims 2^26 - 1 strings: 8 bytes each at least, 512 MiB,
 * refused before one is read. */
START_TEST(test_huge_string_array)
{
	struct kvp_error err = {0};
	tiny(&w);
	poke(at_array_count, (1u << 26) - 1, 8);
	double t0 = now_s();
	ck_assert_int_eq(kvp_gguf_load(save(&w, w.n), &model, &err), KVP_STATUS_INVALID);
	ck_assert_msg(now_s() - t0 < 1.0, "took %.3f s", now_s() - t0);
	ck_assert_msg(strstr(err.msg, "truncated: tokenizer.ggml.tokens needs 536870904 bytes"), "%s",
		      err.msg);
}
END_TEST

/* A sparse file of about 100 MiB that holds what it claims: 100 strings of
 * 1 MiB (each length written, the text left as a hole).  The walk stops at
 * the 64 MiB header bound after 63 of them, however many the file claims
 * (the red team's sparse file took 199 s in the old reader; 16,384 such
 * strings in a 16 GiB file took it 2.8 s).  Kept small: every length written
 * is a disk block, and freeing them is slow on a disk mounted with discard. */
START_TEST(test_sparse_string_array)
{
	struct kvp_error err = {0};
	tiny(&w);
	size_t head = at_array_count;
	poke(at_array_count, 100, 8);
	const char *path = save(&w, head + 8);
	int fd = open(path, O_WRONLY);
	ck_assert_int_ge(fd, 0);
	uint64_t at = head + 8;
	for (int i = 0; i < 100; i++) {
		unsigned char len[8];
		for (int b = 0; b < 8; b++)
			len[b] = (unsigned char)(((uint64_t)1 << 20) >> (8 * b));
		ck_assert_int_eq(pwrite(fd, len, 8, (off_t)at), 8);
		at += 8 + (1u << 20);
	}
	ck_assert_int_eq(ftruncate(fd, (off_t)at + 4096), 0);
	close(fd);
	double t0 = now_s();
	ck_assert_int_eq(kvp_gguf_load(path, &model, &err), KVP_STATUS_INVALID);
	ck_assert_msg(now_s() - t0 < 1.0, "took %.3f s", now_s() - t0);
	ck_assert_msg(strstr(err.msg, "takes the header past 64 MiB"), "%s", err.msg);
}
END_TEST

/* A path m->path cannot hold whole (511 bytes) is refused, not cut: the
 * path names the model in messages and launch scripts. */
START_TEST(test_long_path)
{
	struct kvp_error err = {0};
	char path[700];
	int n = snprintf(path, sizeof path, "%s/", tmpdir);
	while (n < 600)
		path[n++] = 'x';
	snprintf(path + n, sizeof path - n, ".gguf");
	ck_assert_int_eq(kvp_gguf_load(path, &model, &err), KVP_STATUS_INVALID);
	ck_assert_msg(strstr(err.msg, "longer than 511 bytes"), "%s", err.msg);
}
END_TEST

/* A FIFO is refused at once, not waited on. */
START_TEST(test_fifo)
{
	struct kvp_error err = {0};
	char path[600];
	snprintf(path, sizeof path, "%s/fifo.gguf", tmpdir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(kvp_gguf_load(path, &model, &err), KVP_STATUS_INVALID);
	ck_assert_msg(strstr(err.msg, "not a regular file"), "%s", err.msg);
}
END_TEST

static Suite *gguf_suite(void)
{
	Suite *s = suite_create("gguf");
	TCase *core = tcase_create("core");
	tcase_add_checked_fixture(core, setup, teardown);
	tcase_add_test(core, test_tiny_llama);
	tcase_add_test(core, test_per_layer_kv_heads);
	tcase_add_test(core, test_other_int_types);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_checked_fixture(errors, setup, teardown);
	tcase_set_timeout(errors, 60);
	tcase_add_test(errors, test_every_truncation);
	tcase_add_loop_test(errors, test_damaged, 0, sizeof damage / sizeof damage[0]);
	tcase_add_test(errors, test_missing_key);
	tcase_add_loop_test(errors, test_per_layer_refused, 0,
			    sizeof bad_layers / sizeof bad_layers[0]);
	tcase_add_loop_test(errors, test_bad_values, 0, sizeof bad_values / sizeof bad_values[0]);
	tcase_add_test(errors, test_duplicate_key);
	tcase_add_test(errors, test_duplicate_tensor);
	tcase_add_test(errors, test_experts_used);
	tcase_add_test(errors, test_huge_string_array);
	tcase_add_test(errors, test_sparse_string_array);
	tcase_add_test(errors, test_fifo);
	tcase_add_test(errors, test_long_path);
	tcase_add_test(errors, test_key_before_architecture);
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
