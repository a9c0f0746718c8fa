/* gguf.c: reads a GGUF header into a kvp_model (see gguf.h): the metadata,
 * then every tensor's info for the exact weight bytes; the tensor data is
 * never read.  Every count the file claims is bounded before it is used and
 * every read is checked, so a damaged or hostile file gets an error with the
 * byte offset, never a crash or a huge allocation. */
#include "read/gguf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

enum { T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STR, T_ARR, T_U64, T_I64,
       T_F64, T_COUNT };

/* ggml tensor types kvplan knows: elements per block and bytes per block
 * (ggml/src/ggml-common.h block structs, e.g. block_q4_K = 2 halves + 12 scale
 * bytes + 128 quant bytes = 144 B for 256 values; block_q8_0 = 1 half + 32 B). */
static const struct ggml_type {
	uint32_t id;
	const char *name;
	uint32_t block, bytes;
} types[] = {
	{0, "F32", 1, 4},      {1, "F16", 1, 2},       {2, "Q4_0", 32, 18},
	{3, "Q4_1", 32, 20},   {6, "Q5_0", 32, 22},    {7, "Q5_1", 32, 24},
	{8, "Q8_0", 32, 34},   {10, "Q2_K", 256, 84},  {11, "Q3_K", 256, 110},
	{12, "Q4_K", 256, 144}, {13, "Q5_K", 256, 176}, {14, "Q6_K", 256, 210},
	{15, "Q8_K", 256, 292}, {20, "IQ4_NL", 32, 18}, {23, "IQ4_XS", 256, 136},
	{24, "I8", 1, 1},      {25, "I16", 1, 2},      {26, "I32", 1, 4},
	{27, "I64", 1, 8},     {28, "F64", 1, 8},      {30, "BF16", 1, 2},
	{39, "MXFP4", 32, 17},
};

struct reader {
	FILE *f;
	const char *path;
	uint64_t off;
	struct kvp_error *err;
};

static kvp_status fail(struct reader *r, const char *fmt, const char *what, uint64_t n)
{
	char msg[600];
	snprintf(msg, sizeof msg, fmt, what, (unsigned long long)n);
	return kvp_error_set(r->err, KVP_STATUS_INVALID, r->path, 0, 0, "gguf", "at byte %llu: %s",
			     (unsigned long long)r->off, msg);
}

static kvp_status get(struct reader *r, void *buf, size_t n, const char *what)
{
	if (fread(buf, 1, n, r->f) != n)
		return fail(r, "truncated while reading %s%.0llu", what, 0);
	r->off += n;
	return KVP_STATUS_OK;
}

static uint64_t le(const unsigned char *b, size_t n)
{
	uint64_t v = 0;
	for (size_t i = n; i-- > 0;)
		v = v << 8 | b[i];
	return v;
}

static kvp_status u32(struct reader *r, uint32_t *v, const char *what)
{
	unsigned char b[4];
	kvp_status st = get(r, b, 4, what);
	if (!st)
		*v = (uint32_t)le(b, 4);
	return st;
}

static kvp_status u64(struct reader *r, uint64_t *v, const char *what)
{
	unsigned char b[8];
	kvp_status st = get(r, b, 8, what);
	if (!st)
		*v = le(b, 8);
	return st;
}

static kvp_status skip(struct reader *r, uint64_t n, const char *what)
{
	/* seek, then prove the bytes exist by reading the last one */
	if (n == 0)
		return KVP_STATUS_OK;
	if (n > (uint64_t)1 << 40 || fseek(r->f, (long)(n - 1), SEEK_CUR) != 0)
		return fail(r, "truncated while skipping %s%.0llu", what, 0);
	unsigned char c;
	if (fread(&c, 1, 1, r->f) != 1)
		return fail(r, "truncated while skipping %s%.0llu", what, 0);
	r->off += n;
	return KVP_STATUS_OK;
}

/* A string into buf (cut to size - 1), or skipped when buf is NULL. */
static kvp_status str(struct reader *r, char *buf, size_t size, const char *what)
{
	uint64_t n;
	kvp_status st = u64(r, &n, what);
	if (st)
		return st;
	if (n > KVP_GGUF_MAX_STRING)
		return fail(r, "%s: a string of %llu bytes is past the limit", what, n);
	if (!buf)
		return skip(r, n, what);
	size_t keep = n < size - 1 ? (size_t)n : size - 1;
	if ((st = get(r, buf, keep, what)))
		return st;
	buf[keep] = '\0';
	return skip(r, n - keep, what);
}

static const uint32_t scalar_size[T_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

/* One value of type t: a whole number into *num when it is one, the
 * element count of an array into *num, else skipped. */
static kvp_status value(struct reader *r, uint32_t t, uint64_t *num, bool *is_num,
			char *s, size_t ssize, const char *key)
{
	*is_num = false;
	if (t >= T_COUNT)
		return fail(r, "%s: unknown value type %llu", key, t);
	if (t == T_STR)
		return str(r, s, ssize, key);
	if (t == T_ARR) {
		uint32_t et;
		uint64_t n;
		kvp_status st;
		if ((st = u32(r, &et, key)) || (st = u64(r, &n, key)))
			return st;
		if (et >= T_COUNT || et == T_ARR)
			return fail(r, "%s: arrays of type %llu are not read", key, et);
		if (n > KVP_GGUF_MAX_ARRAY)
			return fail(r, "%s: an array of %llu elements is past the limit", key, n);
		*num = n;
		if (et == T_STR) {
			for (uint64_t i = 0; i < n; i++)
				if ((st = str(r, NULL, 0, key)))
					return st;
			return KVP_STATUS_OK;
		}
		return skip(r, n * scalar_size[et], key);
	}
	unsigned char b[8];
	kvp_status st = get(r, b, scalar_size[t], key);
	if (st)
		return st;
	if (t == T_U8 || t == T_U16 || t == T_U32 || t == T_U64 || t == T_BOOL) {
		*num = le(b, scalar_size[t]);
		*is_num = true;
	} else if (t == T_I8 || t == T_I16 || t == T_I32 || t == T_I64) {
		uint64_t v = le(b, scalar_size[t]);
		unsigned bits = scalar_size[t] * 8;
		bool neg = bits < 64 ? (v >> (bits - 1)) & 1 : (v >> 63) & 1;
		if (!neg) {
			*num = v;
			*is_num = true;
		}
	}
	return KVP_STATUS_OK;
}

/* The architecture's hyperparameters, by key suffix after "ARCH.". */
struct hp {
	uint64_t block_count, embedding, ffn, context, heads, kv_heads, key_len, value_len;
	uint64_t vocab, experts, experts_used, expert_ffn, kv_lora, rope_dim, tokens;
	bool has_kv_heads;
};

static void take(struct hp *h, const char *suffix, uint64_t v)
{
	static const struct {
		const char *suffix;
		size_t off;
	} keys[] = {
		{"block_count", offsetof(struct hp, block_count)},
		{"embedding_length", offsetof(struct hp, embedding)},
		{"feed_forward_length", offsetof(struct hp, ffn)},
		{"context_length", offsetof(struct hp, context)},
		{"attention.head_count", offsetof(struct hp, heads)},
		{"attention.head_count_kv", offsetof(struct hp, kv_heads)},
		{"attention.key_length", offsetof(struct hp, key_len)},
		{"attention.value_length", offsetof(struct hp, value_len)},
		{"vocab_size", offsetof(struct hp, vocab)},
		{"expert_count", offsetof(struct hp, experts)},
		{"expert_used_count", offsetof(struct hp, experts_used)},
		{"expert_feed_forward_length", offsetof(struct hp, expert_ffn)},
		{"attention.kv_lora_rank", offsetof(struct hp, kv_lora)},
		{"rope.dimension_count", offsetof(struct hp, rope_dim)},
	};
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
		if (strcmp(suffix, keys[i].suffix) == 0) {
			*(uint64_t *)((char *)h + keys[i].off) = v;
			if (keys[i].off == offsetof(struct hp, kv_heads))
				h->has_kv_heads = true;
		}
}

static kvp_status need(struct reader *r, uint64_t v, const char *arch, const char *key,
		       uint64_t max)
{
	char k[160];
	snprintf(k, sizeof k, "%s.%s", arch, key);
	if (v == 0)
		return kvp_error_set(r->err, KVP_STATUS_INVALID, r->path, 0, 0, "gguf",
				     "metadata %s is missing (or zero)", k);
	if (v > max)
		return kvp_error_set(r->err, KVP_STATUS_INVALID, r->path, 0, 0, "gguf",
				     "metadata %s = %llu is out of range", k, (unsigned long long)v);
	return KVP_STATUS_OK;
}

kvp_status kvp_gguf_load(const char *path, struct kvp_model *m, struct kvp_error *err)
{
	struct reader r = {.path = path, .err = err};
	struct hp h = {0};
	char arch[KVP_NAME_MAX] = "", name[KVP_NAME_MAX] = "", key[256];
	uint64_t ntensors, nkv, routed_elems = 0, total_elems = 0, embd_rows = 0;
	uint64_t b_embed = 0, b_dense = 0, b_shared = 0, b_routed = 0;
	uint32_t magic, version;
	kvp_status st;
	memset(m, 0, sizeof *m);
	r.f = fopen(path, "rb");
	if (!r.f)
		return kvp_error_set(err, KVP_STATUS_NOT_FOUND, path, 0, 0, NULL, "%s", strerror(errno));
	if ((st = u32(&r, &magic, "the magic")))
		goto out;
	if (magic != 0x46554747u) { /* "GGUF" little-endian */
		r.off = 0;
		st = fail(&r, "not a GGUF file (the magic is not \"GGUF\")%s%.0llu", "", 0);
		goto out;
	}
	if ((st = u32(&r, &version, "the version")))
		goto out;
	if (version != 2 && version != 3) {
		st = fail(&r, "GGUF version %s%llu; kvplan reads versions 2 and 3", "", version);
		goto out;
	}
	if ((st = u64(&r, &ntensors, "the tensor count")) || (st = u64(&r, &nkv, "the key count")))
		goto out;
	if (ntensors > KVP_GGUF_MAX_TENSORS || nkv > KVP_GGUF_MAX_KV) {
		st = fail(&r, "%s count %llu is past the limit", ntensors > KVP_GGUF_MAX_TENSORS
			  ? "the tensor" : "the key", ntensors > KVP_GGUF_MAX_TENSORS ? ntensors : nkv);
		goto out;
	}
	for (uint64_t i = 0; i < nkv; i++) {
		uint32_t t;
		uint64_t v = 0;
		bool is_num;
		char sval[KVP_NAME_MAX] = "";
		if ((st = str(&r, key, sizeof key, "a key")) || (st = u32(&r, &t, key)) ||
		    (st = value(&r, t, &v, &is_num, sval, sizeof sval, key)))
			goto out;
		size_t al = strlen(arch);
		if (strcmp(key, "general.architecture") == 0 && t == T_STR)
			snprintf(arch, sizeof arch, "%s", sval);
		else if (strcmp(key, "general.name") == 0 && t == T_STR)
			snprintf(name, sizeof name, "%s", sval);
		else if (strcmp(key, "tokenizer.ggml.tokens") == 0 && t == T_ARR)
			h.tokens = v;
		else if (is_num && al && strncmp(key, arch, al) == 0 && key[al] == '.')
			take(&h, key + al + 1, v);
	}
	for (uint64_t i = 0; i < ntensors; i++) {
		uint32_t nd, type;
		uint64_t dims[4] = {1, 1, 1, 1}, elems = 1, off, bytes;
		char tname[128];
		if ((st = str(&r, tname, sizeof tname, "a tensor name")) ||
		    (st = u32(&r, &nd, tname)))
			goto out;
		if (nd == 0 || nd > 4) {
			st = fail(&r, "%s: %llu dimensions (GGML has 1 to 4)", tname, nd);
			goto out;
		}
		for (uint32_t d = 0; d < nd; d++) {
			if ((st = u64(&r, &dims[d], tname)))
				goto out;
			if (!kvp_mul(elems, dims[d], &elems)) {
				st = fail(&r, "%s: the element count passes 2^64%.0llu", tname, 0);
				goto out;
			}
		}
		if ((st = u32(&r, &type, tname)) || (st = u64(&r, &off, tname)))
			goto out;
		const struct ggml_type *gt = NULL;
		for (size_t k = 0; k < sizeof types / sizeof types[0] && !gt; k++)
			if (types[k].id == type)
				gt = &types[k];
		if (!gt) {
			st = fail(&r, "%s: ggml tensor type %llu is not one kvplan sizes", tname, type);
			goto out;
		}
		if (dims[0] % gt->block) {
			st = fail(&r, "%s: rows of %llu values do not fill whole blocks", tname, dims[0]);
			goto out;
		}
		if (!kvp_mul(elems / gt->block, gt->bytes, &bytes) ||
		    !kvp_add(total_elems, elems, &total_elems)) {
			st = fail(&r, "%s: the byte count passes 2^64%.0llu", tname, 0);
			goto out;
		}
		/* llama.cpp tensor names: token_embd / output, *_exps routed experts,
		 * *_shexp shared experts */
		uint64_t *acc = &b_dense;
		if (strcmp(tname, "token_embd.weight") == 0 || strcmp(tname, "output.weight") == 0) {
			acc = &b_embed;
			if (strcmp(tname, "token_embd.weight") == 0 && nd >= 2)
				embd_rows = dims[1];
		} else if (strstr(tname, "_exps.")) {
			acc = &b_routed;
			routed_elems += elems;
		} else if (strstr(tname, "_shexp.")) {
			acc = &b_shared;
		}
		if (!kvp_add(*acc, bytes, acc)) {
			st = fail(&r, "%s: the byte count passes 2^64%.0llu", tname, 0);
			goto out;
		}
	}
	if (!arch[0]) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "gguf",
				   "metadata general.architecture is missing");
		goto out;
	}
	if ((st = need(&r, h.block_count, arch, "block_count", KVP_MAX_LAYERS)) ||
	    (st = need(&r, h.embedding, arch, "embedding_length", UINT32_MAX)) ||
	    (st = need(&r, h.heads, arch, "attention.head_count", UINT32_MAX)) ||
	    (st = need(&r, h.context, arch, "context_length", (uint64_t)1 << 40)))
		goto out;
	uint64_t vocab = h.vocab ? h.vocab : h.tokens ? h.tokens : embd_rows;
	if ((st = need(&r, vocab, arch, "vocab_size (or tokenizer.ggml.tokens)", UINT32_MAX)))
		goto out;

	const char *base = strrchr(path, '/');
	snprintf(m->name, sizeof m->name, "%s", name[0] ? name : base ? base + 1 : path);
	snprintf(m->path, sizeof m->path, "%s", path);
	snprintf(m->family, sizeof m->family, "%.63s", arch);
	m->dtype = KVP_DTYPE_BF16;  /* the activations and KV; the weights are the file's */
	m->num_layers = (uint32_t)h.block_count;
	m->hidden_size = (uint32_t)h.embedding;
	m->num_heads = (uint32_t)h.heads;
	m->num_kv_heads = (uint32_t)(h.has_kv_heads && h.kv_heads ? h.kv_heads : h.heads);
	m->head_dim = (uint32_t)(h.key_len ? h.key_len : h.embedding / h.heads);
	m->head_dim_v = (uint32_t)(h.value_len ? h.value_len : m->head_dim);
	m->intermediate_size = (uint32_t)(h.ffn <= UINT32_MAX ? h.ffn : 0);
	m->vocab_size = (uint32_t)vocab;
	m->max_context = h.context;
	enum kvp_layer_kind kind = KVP_LAYER_FULL;
	if (h.kv_lora && h.rope_dim) {
		kind = KVP_LAYER_MLA;
		m->mla_kv_lora_rank = (uint32_t)h.kv_lora;
		m->mla_rope_dim = (uint32_t)h.rope_dim;
	}
	for (uint32_t i = 0; i < m->num_layers; i++)
		m->layers[i] = (uint8_t)kind;
	if (h.experts) {
		m->moe_num_experts = (uint32_t)h.experts;
		m->moe_experts_per_token = (uint32_t)(h.experts_used ? h.experts_used : 1);
		m->moe_intermediate_size = (uint32_t)h.expert_ffn;
	}
	m->params = total_elems;
	m->expert_params = routed_elems;
	m->active_params = total_elems - routed_elems +
		(h.experts ? routed_elems / h.experts * m->moe_experts_per_token : routed_elems);
	m->file_embed_bytes = b_embed;
	m->file_dense_bytes = b_dense;
	m->file_shared_bytes = b_shared;
	m->file_routed_bytes = b_routed;
	st = kvp_model_validate(m, err);
out:
	fclose(r.f);
	return st;
}
