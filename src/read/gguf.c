/* gguf.c: reads a GGUF header into a kvp_model (see gguf.h): the metadata,
 * then every tensor's info for the exact weight bytes; the tensor data is
 * never read.  The file is hostile until proven otherwise: every count and
 * length it claims is weighed against the bytes the file holds (and the
 * header bound KVP_GGUF_MAX_HEADER) before anything is read or skipped, every
 * integer kvplan uses is checked for its type and range, and a duplicate key
 * or tensor is refused, so a damaged file gets an error with the byte offset,
 * never a crash, a huge allocation, a long walk or a silently wrong number. */
#define _FILE_OFFSET_BITS 64
#include "read/gguf.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/units.h"

enum { T_U8, T_I8, T_U16, T_I16, T_U32, T_I32, T_F32, T_BOOL, T_STR, T_ARR, T_U64, T_I64,
       T_F64, T_COUNT };

static const char *const type_names[T_COUNT] = {
	"UINT8", "INT8", "UINT16", "INT16", "UINT32", "INT32", "FLOAT32", "BOOL", "STRING",
	"ARRAY", "UINT64", "INT64", "FLOAT64",
};
/* bytes of one scalar; strings and arrays are sized as they are read */
static const uint32_t scalar_size[T_COUNT] = {1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

static bool is_int_type(uint32_t t)
{
	return t == T_U8 || t == T_I8 || t == T_U16 || t == T_I16 || t == T_U32 || t == T_I32 ||
	       t == T_U64 || t == T_I64;
}

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
	uint64_t off;   /* bytes read so far */
	uint64_t size;  /* the file's size */
	struct kvp_error *err;
	char *scratch;  /* KVP_GGUF_MAX_NAME + 1 bytes: a key or a tensor name */
};

static kvp_status fail_at(struct reader *r, uint64_t at, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static kvp_status fail_at(struct reader *r, uint64_t at, const char *fmt, ...)
{
	char msg[440];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	return kvp_error_set(r->err, KVP_STATUS_INVALID, r->path, 0, 0, "gguf", "at byte %llu: %s",
			     (unsigned long long)at, msg);
}
#define fail(r, ...) fail_at((r), (r)->off, __VA_ARGS__)

/* A name from the file as it may be printed: printable ASCII kept, other
 * bytes as \xNN, cut to about 80 characters with "..." (never silently). */
static const char *shown(const char *s, size_t n, char *buf, size_t size)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (o + 8 >= size || o >= 80) {
			memcpy(buf + o, "...", 4);
			return buf;
		}
		if (c >= 0x20 && c < 0x7f && c != '\\')
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
	}
	buf[o] = '\0';
	return buf;
}

/* The next n bytes must be in the file and inside the header bound. */
static kvp_status room(struct reader *r, uint64_t n, const char *what)
{
	uint64_t end;
	if (!kvp_add(r->off, n, &end) || end > r->size)
		return fail(r, "truncated: %s needs %llu bytes, the file has %llu left", what,
			    (unsigned long long)n, (unsigned long long)(r->size - r->off));
	if (end > KVP_GGUF_MAX_HEADER)
		return fail(r, "%s of %llu bytes takes the header past %llu MiB, kvplan's bound on "
			    "a GGUF header", what, (unsigned long long)n,
			    (unsigned long long)(KVP_GGUF_MAX_HEADER >> 20));
	return KVP_STATUS_OK;
}

static kvp_status get(struct reader *r, void *buf, size_t n, const char *what)
{
	kvp_status st = room(r, n, what);
	if (st)
		return st;
	if (fread(buf, 1, n, r->f) != n)
		return fail(r, "truncated while reading %s", what);
	r->off += n;
	return KVP_STATUS_OK;
}

/* Skip n bytes already proven present by room(): small runs through the
 * stdio buffer, larger ones by one seek. */
static kvp_status skip(struct reader *r, uint64_t n, const char *what)
{
	kvp_status st = room(r, n, what);
	if (st)
		return st;
	if (n <= 4096) {
		char b[4096];
		if (n && fread(b, 1, (size_t)n, r->f) != n)
			return fail(r, "truncated while skipping %s", what);
	} else if (fseeko(r->f, (off_t)n, SEEK_CUR) != 0) {
		return fail(r, "cannot seek past %s", what);
	}
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

/* A string of at most `max` bytes: its first size - 1 bytes into buf (NUL
 * ended, *len the whole length), the rest skipped; buf NULL skips it all. */
static kvp_status str(struct reader *r, char *buf, size_t size, uint64_t max, uint64_t *len,
		      const char *what)
{
	uint64_t n;
	kvp_status st = u64(r, &n, what);
	if (st)
		return st;
	if (n > max)
		return fail_at(r, r->off - 8, "%s: a string of %llu bytes is past the limit (%llu)",
			       what, (unsigned long long)n, (unsigned long long)max);
	if ((st = room(r, n, what)))
		return st;
	if (len)
		*len = n;
	if (!buf)
		return skip(r, n, what);
	size_t keep = n < size - 1 ? (size_t)n : size - 1;
	if ((st = get(r, buf, keep, what)))
		return st;
	buf[keep] = '\0';
	return skip(r, n - keep, what);
}

/* One whole number of integer type t: *v, or an error naming the key when it
 * is negative. */
static kvp_status whole(struct reader *r, uint32_t t, uint64_t *v, const char *key)
{
	unsigned char b[8];
	uint64_t at = r->off;
	kvp_status st = get(r, b, scalar_size[t], key);
	if (st)
		return st;
	uint64_t x = le(b, scalar_size[t]);
	unsigned bits = scalar_size[t] * 8;
	bool is_signed = t == T_I8 || t == T_I16 || t == T_I32 || t == T_I64;
	if (is_signed && (x >> (bits - 1)) & 1)
		return fail_at(r, at, "%s: a negative %s", key, type_names[t]);
	*v = x;
	return KVP_STATUS_OK;
}

/* Skip the n elements of type et of an array whose element type sits at
 * byte `at`, every length weighed against what is left before it is walked. */
static kvp_status skip_elements(struct reader *r, uint64_t at, uint32_t et, uint64_t n,
				const char *key)
{
	uint64_t bytes;
	kvp_status st;
	if (et >= T_COUNT || et == T_ARR)
		return fail_at(r, at, "%s: arrays of type %u are not read", key, et);
	if (n > KVP_GGUF_MAX_ARRAY)
		return fail_at(r, at + 4, "%s: an array of %llu elements is past the limit", key,
			       (unsigned long long)n);
	/* a string takes at least its 8-byte length: refuse before walking */
	if (!kvp_mul(n, et == T_STR ? 8 : scalar_size[et], &bytes))
		return fail_at(r, at + 4, "%s: an array of %llu elements passes 2^64 bytes", key,
			       (unsigned long long)n);
	if ((st = room(r, bytes, key)))
		return st;
	if (et != T_STR)
		return skip(r, bytes, key);
	for (uint64_t i = 0; i < n; i++)
		if ((st = str(r, NULL, 0, KVP_GGUF_MAX_STRING, NULL, key)))
			return st;
	return KVP_STATUS_OK;
}

/* Skip one value of type t (arrays: element type, count, elements). */
static kvp_status skip_value(struct reader *r, uint32_t t, const char *key)
{
	if (t >= T_COUNT)
		return fail_at(r, r->off - 4, "%s: unknown value type %u", key, t);
	if (t == T_STR)
		return str(r, NULL, 0, KVP_GGUF_MAX_STRING, NULL, key);
	if (t != T_ARR)
		return skip(r, scalar_size[t], key);
	uint32_t et;
	uint64_t n, at = r->off;
	kvp_status st;
	if ((st = u32(r, &et, key)) || (st = u64(r, &n, key)))
		return st;
	return skip_elements(r, at, et, n, key);
}

/* ------------------------------------------------------ names seen once */

/* Keys and tensor names already read, to refuse a second of either (ggml's
 * gguf_init_from_file refuses both).  Open addressing on FNV-1a; the names
 * themselves are kept and compared, so a hash collision is never a duplicate. */
struct names {
	char *text;
	size_t used, cap;
	struct slot {
		uint64_t hash;
		size_t at, len;
	} *slot;
	size_t nslot, count;
};

static uint64_t fnv1a(const char *s, size_t n)
{
	uint64_t h = 14695981039346656037ULL;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * 1099511628211ULL;
	return h | 1; /* 0 marks an empty slot */
}

/* Add s (n bytes): 1 when new, 0 when already there, -1 out of memory. */
static int names_add(struct names *t, const char *s, size_t n)
{
	if (2 * (t->count + 1) > t->nslot) {
		size_t ns = t->nslot ? 2 * t->nslot : 64;
		struct slot *sl = calloc(ns, sizeof *sl);
		if (!sl)
			return -1;
		for (size_t i = 0; i < t->nslot; i++)
			if (t->slot[i].hash) {
				size_t j = t->slot[i].hash & (ns - 1);
				while (sl[j].hash)
					j = (j + 1) & (ns - 1);
				sl[j] = t->slot[i];
			}
		free(t->slot);
		t->slot = sl;
		t->nslot = ns;
	}
	uint64_t h = fnv1a(s, n);
	size_t j = h & (t->nslot - 1);
	for (; t->slot[j].hash; j = (j + 1) & (t->nslot - 1))
		if (t->slot[j].hash == h && t->slot[j].len == n &&
		    memcmp(t->text + t->slot[j].at, s, n) == 0)
			return 0;
	if (!t->text || t->used + n > t->cap) {
		size_t nc = t->cap ? t->cap : 4096;
		while (nc < t->used + n)
			nc *= 2;
		char *nt = realloc(t->text, nc);
		if (!nt)
			return -1;
		t->text = nt;
		t->cap = nc;
	}
	memcpy(t->text + t->used, s, n);
	t->slot[j] = (struct slot){.hash = h, .at = t->used, .len = n};
	t->used += n;
	t->count++;
	return 1;
}

static void names_free(struct names *t)
{
	free(t->text);
	free(t->slot);
}

/* ------------------------------------------------ the hyperparameters */

/* The architecture's hyperparameters, by key suffix after "ARCH.", each
 * with the largest value kvplan accepts; PER_LAYER keys may also be arrays
 * of one whole number per layer (llama.cpp get_key_or_arr). */
enum hp_key { K_BLOCKS, K_EMBD, K_FFN, K_CTX, K_HEADS, K_KV_HEADS, K_KEY_LEN, K_VALUE_LEN,
	      K_VOCAB, K_EXPERTS, K_EXPERTS_USED, K_EXPERT_FFN, K_KV_LORA, K_ROPE_DIM, K_COUNT };

static const struct {
	const char *suffix;
	uint64_t max;
	bool per_layer;
} hp_keys[K_COUNT] = {
	[K_BLOCKS] = {"block_count", KVP_MAX_LAYERS, false},
	[K_EMBD] = {"embedding_length", UINT32_MAX, false},
	[K_FFN] = {"feed_forward_length", UINT32_MAX, true},
	[K_CTX] = {"context_length", (uint64_t)1 << 40, false},
	[K_HEADS] = {"attention.head_count", UINT32_MAX, true},
	[K_KV_HEADS] = {"attention.head_count_kv", UINT32_MAX, true},
	[K_KEY_LEN] = {"attention.key_length", UINT32_MAX, false},
	[K_VALUE_LEN] = {"attention.value_length", UINT32_MAX, false},
	[K_VOCAB] = {"vocab_size", UINT32_MAX, false},
	[K_EXPERTS] = {"expert_count", UINT32_MAX, false},
	[K_EXPERTS_USED] = {"expert_used_count", UINT32_MAX, false},
	[K_EXPERT_FFN] = {"expert_feed_forward_length", UINT32_MAX, false},
	[K_KV_LORA] = {"attention.kv_lora_rank", UINT32_MAX, false},
	[K_ROPE_DIM] = {"rope.dimension_count", UINT32_MAX, false},
};

#define LAYERED(k) ((k) == K_FFN ? 0 : (k) == K_HEADS ? 1 : 2)

struct hp {
	uint64_t v[K_COUNT];
	bool has[K_COUNT];
	/* per-layer arrays (K_FFN, K_HEADS, K_KV_HEADS: LAYERED()): their
	 * entries, length and where they start */
	uint32_t arr[3][KVP_MAX_LAYERS];
	uint64_t arr_len[K_COUNT];
	uint64_t at[K_COUNT];  /* where each key's value type sits, for messages */
	bool is_arr[K_COUNT];
	uint64_t tokens;
	bool has_tokens;
	/* a key of recurrent state (ARCH.ssm.*, .shortconv.*, .wkv.*): layers
	 * without KV heads are then recurrent, not empty */
	char recurrent_key[96];
	uint64_t recurrent_at;
};

/* Read the value of hyperparameter k (its type t just read). */
static kvp_status take(struct reader *r, struct hp *h, enum hp_key k, uint32_t t, const char *key)
{
	uint64_t at = r->off - 4;
	kvp_status st;
	if (is_int_type(t)) {
		uint64_t v;
		if ((st = whole(r, t, &v, key)))
			return st;
		if (v > hp_keys[k].max)
			return fail_at(r, at + 4, "%s = %llu is out of range (at most %llu)", key,
				       (unsigned long long)v, (unsigned long long)hp_keys[k].max);
		h->v[k] = v;
		h->has[k] = true;
		h->at[k] = at;
		return KVP_STATUS_OK;
	}
	if (t == T_ARR && hp_keys[k].per_layer) {
		uint32_t et;
		uint64_t n;
		if ((st = u32(r, &et, key)) || (st = u64(r, &n, key)))
			return st;
		if (!is_int_type(et))
			return fail_at(r, at + 4, "%s: a per-layer array of %s, not of whole numbers",
				       key, et < T_COUNT ? type_names[et] : "an unknown type");
		if (n == 0 || n > KVP_MAX_LAYERS)
			return fail_at(r, at + 8, "%s: a per-layer array of %llu entries (kvplan reads "
				       "1 to %u layers)", key, (unsigned long long)n, KVP_MAX_LAYERS);
		for (uint64_t i = 0; i < n; i++) {
			uint64_t v, vat = r->off;
			if ((st = whole(r, et, &v, key)))
				return st;
			if (v > hp_keys[k].max)
				return fail_at(r, vat, "%s[%llu] = %llu is out of range (at most %llu)",
					       key, (unsigned long long)i, (unsigned long long)v,
					       (unsigned long long)hp_keys[k].max);
			h->arr[LAYERED(k)][i] = (uint32_t)v;
		}
		h->is_arr[k] = h->has[k] = true;
		h->arr_len[k] = n;
		h->at[k] = at;
		return KVP_STATUS_OK;
	}
	return fail_at(r, at, "%s: a %s, not a whole number%s", key,
		       t < T_COUNT ? type_names[t] : "value of unknown type",
		       hp_keys[k].per_layer ? " (or an array of one per layer)" : "");
}

static kvp_status need(struct reader *r, const struct hp *h, enum hp_key k, const char *arch)
{
	if (!h->has[k] || (!h->is_arr[k] && h->v[k] == 0))
		return kvp_error_set(r->err, KVP_STATUS_INVALID, r->path, 0, 0, "gguf",
				     "metadata %s.%s is missing (or zero)", arch, hp_keys[k].suffix);
	return KVP_STATUS_OK;
}

/* Entry i of a per-layer key: its array's, else its scalar. */
static uint64_t at_layer(const struct hp *h, enum hp_key k, uint32_t i)
{
	return h->is_arr[k] ? h->arr[LAYERED(k)][i] : h->v[k];
}

/* The layer list from the per-layer head counts (llama.cpp: n_head_kv
 * defaults to n_head per layer; a layer with no heads or no KV heads has no
 * KV).  The hybrid families, which name their recurrent state under ssm.*,
 * shortconv.* or wkv.* (and mark recurrent layers by 0 KV heads), are
 * refused.  kvplan models one (query, KV) head count per model, so the
 * attention layers must agree. */
static kvp_status layers(struct reader *r, struct hp *h, const char *arch, struct kvp_model *m,
			 enum kvp_layer_kind attention)
{
	uint64_t L = h->v[K_BLOCKS];
	/* whether recurrent layers stand beside attention (Jamba: 0 KV heads in
	 * those layers) or inside every layer (Falcon-H1), their state is not in
	 * the header's attention keys: refused rather than left out */
	if (h->recurrent_key[0])
		return fail_at(r, h->recurrent_at, "%s describes recurrent state (Mamba, RWKV, short "
			       "convolutions) that a model keeps per sequence and kvplan does not "
			       "read from a GGUF header (give the model's config.json)",
			       h->recurrent_key);
	static const enum hp_key per_layer[] = {K_FFN, K_HEADS, K_KV_HEADS};
	for (size_t j = 0; j < sizeof per_layer / sizeof per_layer[0]; j++) {
		enum hp_key k = per_layer[j];
		if (h->is_arr[k] && h->arr_len[k] != L)
			return fail_at(r, h->at[k], "%s.%s: a per-layer array of %llu entries, but "
				       "block_count is %llu", arch, hp_keys[k].suffix,
				       (unsigned long long)h->arr_len[k], (unsigned long long)L);
	}
	uint32_t first = UINT32_MAX;
	uint64_t ffn_max = 0;
	for (uint32_t i = 0; i < L; i++) {
		uint64_t q = at_layer(h, K_HEADS, i);
		uint64_t kv = h->has[K_KV_HEADS] ? at_layer(h, K_KV_HEADS, i) : q;
		if (at_layer(h, K_FFN, i) > ffn_max)
			ffn_max = at_layer(h, K_FFN, i);
		if (q == 0 || kv == 0) {
			m->layers[i] = KVP_LAYER_NONE;
			continue;
		}
		m->layers[i] = (uint8_t)attention;
		uint64_t at = h->at[h->is_arr[K_KV_HEADS] ? K_KV_HEADS : K_HEADS];
		if (kv > q || q % kv)
			return fail_at(r, at, "layer %u: %llu KV heads do not divide %llu heads", i,
				       (unsigned long long)kv, (unsigned long long)q);
		if (first == UINT32_MAX) {
			first = i;
			m->num_heads = (uint32_t)q;
			m->num_kv_heads = (uint32_t)kv;
		} else if (q != m->num_heads || kv != m->num_kv_heads) {
			return fail_at(r, at, "layer %u has %llu heads and %llu KV heads, layer %u %u and "
				       "%u: kvplan models one head count for every attention layer",
				       i, (unsigned long long)q, (unsigned long long)kv, first,
				       m->num_heads, m->num_kv_heads);
		}
	}
	if (first == UINT32_MAX)
		return kvp_error_set(r->err, KVP_STATUS_INVALID, r->path, 0, 0, "gguf",
				     "metadata %s.attention.head_count%s: no layer has attention heads",
				     arch, h->has[K_KV_HEADS] ? "(_kv)" : "");
	m->intermediate_size = (uint32_t)ffn_max;  /* the widest layer, for the activations */
	return KVP_STATUS_OK;
}

/* --------------------------------------------------------------- load */

kvp_status kvp_gguf_load(const char *path, struct kvp_model *m, struct kvp_error *err)
{
	struct reader r = {.path = path, .err = err};
	struct names keys = {0}, tensors = {0};
	struct hp *h = calloc(1, sizeof *h);
	char arch[64] = "", name[KVP_NAME_MAX] = "", shown_buf[400];
	uint64_t ntensors, nkv, routed_elems = 0, total_elems = 0, embd_rows = 0, name_len = 0;
	uint64_t b_embed = 0, b_dense = 0, b_shared = 0, b_routed = 0;
	uint32_t magic, version;
	kvp_status st;
	struct {
		char key[128];  /* the longest known key is ARCH (63) + "." + 26 */
		uint64_t at;
	} early[16];
	size_t n_early = 0;
	memset(m, 0, sizeof *m);
	r.scratch = malloc(KVP_GGUF_MAX_NAME + 1);
	if (!h || !r.scratch) {
		free(h);
		free(r.scratch);
		return kvp_error_set(err, KVP_STATUS_NOMEM, path, 0, 0, "gguf", "out of memory");
	}
	if (strlen(path) >= sizeof m->path) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "gguf",
				   "the path is longer than %zu bytes", sizeof m->path - 1);
		goto out_mem;
	}
	/* O_NONBLOCK: a FIFO is refused below instead of waiting for a writer */
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat sb;
	if (fd < 0) {
		st = kvp_error_set(err, KVP_STATUS_NOT_FOUND, path, 0, 0, NULL, "%s", strerror(errno));
		goto out_mem;
	}
	if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
		close(fd);
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "gguf",
				   "not a regular file (a GGUF header is read from a file)");
		goto out_mem;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	r.size = (uint64_t)sb.st_size;
	r.f = fdopen(fd, "rb");
	if (!r.f) {
		close(fd);
		st = kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL, "%s", strerror(errno));
		goto out_mem;
	}
	if ((st = u32(&r, &magic, "the magic")))
		goto out;
	if (magic != 0x46554747u) { /* "GGUF" little-endian */
		st = fail_at(&r, 0, "not a GGUF file (the magic is not \"GGUF\")");
		goto out;
	}
	if ((st = u32(&r, &version, "the version")))
		goto out;
	if (version != 2 && version != 3) {
		st = fail_at(&r, 4, "GGUF version %u; kvplan reads versions 2 and 3", version);
		goto out;
	}
	if ((st = u64(&r, &ntensors, "the tensor count")) || (st = u64(&r, &nkv, "the key count")))
		goto out;
	if (ntensors > KVP_GGUF_MAX_TENSORS || nkv > KVP_GGUF_MAX_KV) {
		bool t = ntensors > KVP_GGUF_MAX_TENSORS;
		st = fail_at(&r, t ? 8 : 16, "the %s count %llu is past the limit", t ? "tensor" : "key",
			     (unsigned long long)(t ? ntensors : nkv));
		goto out;
	}
	/* each key takes at least 13 bytes (length, one byte, type, a one-byte
	 * value), each tensor info 32 (length, n_dims, one dim, type, offset) */
	uint64_t least_kv, least_t, least;
	if (!kvp_mul(nkv, 13, &least_kv) || !kvp_mul(ntensors, 32, &least_t) ||
	    !kvp_add(least_kv, least_t, &least) || (st = room(&r, least, "the keys and tensor infos")))
		goto out;
	for (uint64_t i = 0; i < nkv; i++) {
		uint32_t t;
		uint64_t klen, kat = r.off;
		if ((st = str(&r, r.scratch, KVP_GGUF_MAX_NAME + 1, KVP_GGUF_MAX_NAME, &klen, "a key")))
			goto out;
		const char *key = r.scratch;
		const char *k_shown = shown(key, (size_t)klen, shown_buf, sizeof shown_buf);
		if (klen == 0 || memchr(key, '\0', (size_t)klen)) {
			st = fail_at(&r, kat, "key \"%s\": empty or with a NUL byte", k_shown);
			goto out;
		}
		int added = names_add(&keys, key, (size_t)klen);
		if (added < 0) {
			st = kvp_error_set(err, KVP_STATUS_NOMEM, path, 0, 0, "gguf", "out of memory");
			goto out;
		}
		if (added == 0) {
			st = fail_at(&r, kat, "key \"%s\" appears a second time", k_shown);
			goto out;
		}
		if ((st = u32(&r, &t, k_shown)))
			goto out;
		size_t al = strlen(arch);
		if (strcmp(key, "general.architecture") == 0 || strcmp(key, "general.name") == 0) {
			bool is_arch = key[8] == 'a';
			uint64_t len;
			if (t != T_STR) {
				st = fail_at(&r, r.off - 4, "%s: a %s, not a STRING", key,
					     t < T_COUNT ? type_names[t] : "value of unknown type");
				goto out;
			}
			uint64_t vat = r.off;
			if ((st = str(&r, is_arch ? arch : name, is_arch ? sizeof arch : sizeof name,
				      KVP_GGUF_MAX_STRING, &len, key)))
				goto out;
			if (is_arch && (len == 0 || len >= sizeof arch || strlen(arch) != len)) {
				st = fail_at(&r, vat, "general.architecture: %llu bytes (1 to %zu, no NUL)",
					     (unsigned long long)len, sizeof arch - 1);
				goto out;
			}
			name_len = is_arch ? name_len : len;
		} else if (strcmp(key, "tokenizer.ggml.tokens") == 0) {
			uint32_t et = 0;
			uint64_t at = r.off;
			if (t != T_ARR || (st = u32(&r, &et, key)) || et != T_STR) {
				st = st ? st : fail_at(&r, at, "%s: not an array of strings", key);
				goto out;
			}
			if ((st = u64(&r, &h->tokens, key)) ||
			    (st = skip_elements(&r, at, et, h->tokens, key)))
				goto out;
			h->has_tokens = true;
		} else if (al && strncmp(key, arch, al) == 0 && key[al] == '.') {
			const char *suffix = key + al + 1;
			int k = -1;
			for (int j = 0; j < K_COUNT && k < 0; j++)
				if (strcmp(suffix, hp_keys[j].suffix) == 0)
					k = j;
			if ((strncmp(suffix, "ssm.", 4) == 0 || strncmp(suffix, "shortconv.", 10) == 0 ||
			     strncmp(suffix, "wkv.", 4) == 0) && !h->recurrent_key[0]) {
				snprintf(h->recurrent_key, sizeof h->recurrent_key, "%.95s", k_shown);
				h->recurrent_at = kat;
			}
			if ((st = k >= 0 ? take(&r, h, (enum hp_key)k, t, key) : skip_value(&r, t, k_shown)))
				goto out;
		} else {
			/* a key read by suffix, met before general.architecture says
			 * which prefix is read: kept to be refused below if it is the
			 * architecture's (gguf-py writes the architecture first) */
			const char *dot = strchr(key, '.');
			bool known = dot && !arch[0] && (strncmp(dot + 1, "ssm.", 4) == 0 ||
							 strncmp(dot + 1, "shortconv.", 10) == 0 ||
							 strncmp(dot + 1, "wkv.", 4) == 0);
			for (int j = 0; dot && !arch[0] && j < K_COUNT && !known; j++)
				known = strcmp(dot + 1, hp_keys[j].suffix) == 0;
			if (known && n_early == sizeof early / sizeof early[0]) {
				st = fail_at(&r, kat, "key \"%s\": more than %zu keys of an architecture "
					     "before general.architecture", k_shown,
					     sizeof early / sizeof early[0]);
				goto out;
			}
			if (known) {
				snprintf(early[n_early].key, sizeof early[0].key, "%s", key);
				early[n_early++].at = kat;
			}
			if ((st = skip_value(&r, t, k_shown)))
				goto out;
		}
	}
	for (uint64_t i = 0; i < ntensors; i++) {
		uint32_t nd, type;
		uint64_t dims[4] = {1, 1, 1, 1}, elems = 1, off, bytes, nlen, tat = r.off;
		if ((st = str(&r, r.scratch, KVP_GGUF_MAX_NAME + 1, KVP_GGUF_MAX_NAME, &nlen,
			      "a tensor name")))
			goto out;
		const char *tname = r.scratch;
		const char *t_shown = shown(tname, (size_t)nlen, shown_buf, sizeof shown_buf);
		int added = names_add(&tensors, tname, (size_t)nlen);
		if (added < 0) {
			st = kvp_error_set(err, KVP_STATUS_NOMEM, path, 0, 0, "gguf", "out of memory");
			goto out;
		}
		if (added == 0) {
			st = fail_at(&r, tat, "tensor \"%s\" appears a second time", t_shown);
			goto out;
		}
		if ((st = u32(&r, &nd, t_shown)))
			goto out;
		if (nd == 0 || nd > 4) {
			st = fail_at(&r, r.off - 4, "%s: %u dimensions (GGML has 1 to 4)", t_shown, nd);
			goto out;
		}
		for (uint32_t d = 0; d < nd; d++) {
			if ((st = u64(&r, &dims[d], t_shown)))
				goto out;
			/* ggml keeps dims and their product as int64_t */
			if (dims[d] > INT64_MAX || !kvp_mul(elems, dims[d], &elems) || elems > INT64_MAX) {
				st = fail_at(&r, r.off - 8, "%s: the element count passes 2^63", t_shown);
				goto out;
			}
		}
		if ((st = u32(&r, &type, t_shown)) || (st = u64(&r, &off, t_shown)))
			goto out;
		const struct ggml_type *gt = NULL;
		for (size_t k = 0; k < sizeof types / sizeof types[0] && !gt; k++)
			if (types[k].id == type)
				gt = &types[k];
		if (!gt) {
			st = fail_at(&r, r.off - 12, "%s: ggml tensor type %u is not one kvplan sizes",
				     t_shown, type);
			goto out;
		}
		if (dims[0] % gt->block) {
			st = fail_at(&r, tat, "%s: rows of %llu values do not fill whole %s blocks of %u",
				     t_shown, (unsigned long long)dims[0], gt->name, gt->block);
			goto out;
		}
		if (!kvp_mul(elems / gt->block, gt->bytes, &bytes) ||
		    !kvp_add(total_elems, elems, &total_elems)) {
			st = fail_at(&r, tat, "%s: the byte count passes 2^64", t_shown);
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
			routed_elems += elems;  /* <= total_elems, checked above */
		} else if (strstr(tname, "_shexp.")) {
			acc = &b_shared;
		}
		if (!kvp_add(*acc, bytes, acc)) {
			st = fail_at(&r, tat, "%s: the byte count passes 2^64", t_shown);
			goto out;
		}
	}
	if (!arch[0]) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "gguf",
				   "metadata general.architecture is missing (or after the keys it names)");
		goto out;
	}
	for (size_t j = 0; j < n_early; j++) {
		size_t al = strlen(arch);
		if (strncmp(early[j].key, arch, al) == 0 && early[j].key[al] == '.') {
			st = fail_at(&r, early[j].at, "key \"%s\" comes before general.architecture, "
				     "which must come first (as gguf-py writes it) for kvplan to read "
				     "it", early[j].key);
			goto out;
		}
	}
	if ((st = need(&r, h, K_BLOCKS, arch)) || (st = need(&r, h, K_EMBD, arch)) ||
	    (st = need(&r, h, K_HEADS, arch)) || (st = need(&r, h, K_CTX, arch)))
		goto out;
	/* a length given as 0 is not "absent" */
	static const enum hp_key positive[] = {K_KEY_LEN, K_VALUE_LEN, K_VOCAB, K_EXPERTS,
					       K_EXPERT_FFN, K_KV_LORA, K_ROPE_DIM};
	for (size_t j = 0; j < sizeof positive / sizeof positive[0]; j++)
		if (h->has[positive[j]] && h->v[positive[j]] == 0) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "gguf",
					   "metadata %s.%s is 0", arch, hp_keys[positive[j]].suffix);
			goto out;
		}
	/* llama.cpp llama_model::load_hparams: n_expert_used <= n_expert, and
	 * n_expert_used > 0 exactly when n_expert > 0 */
	if (h->v[K_EXPERTS_USED] > h->v[K_EXPERTS] || (h->v[K_EXPERTS] && !h->v[K_EXPERTS_USED])) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "gguf",
				   "metadata %s.expert_used_count = %llu with expert_count = %llu "
				   "(llama.cpp needs 1 <= used <= count when there are experts, "
				   "else 0)", arch, (unsigned long long)h->v[K_EXPERTS_USED],
				   (unsigned long long)h->v[K_EXPERTS]);
		goto out;
	}
	if (h->v[K_KV_LORA] && !h->v[K_ROPE_DIM]) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "gguf",
				   "metadata %s.attention.kv_lora_rank without %s.rope.dimension_count "
				   "(MLA caches both)", arch, arch);
		goto out;
	}
	uint64_t vocab = h->has[K_VOCAB] ? h->v[K_VOCAB] : h->has_tokens ? h->tokens : embd_rows;
	if (vocab == 0 || vocab > UINT32_MAX) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "gguf",
				   "metadata %s.vocab_size (or tokenizer.ggml.tokens) is missing, zero "
				   "or past 2^32", arch);
		goto out;
	}
	enum kvp_layer_kind kind = h->v[K_KV_LORA] ? KVP_LAYER_MLA : KVP_LAYER_FULL;
	if ((st = layers(&r, h, arch, m, kind)))
		goto out;
	if (!h->has[K_KEY_LEN] && h->v[K_EMBD] % m->num_heads) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "gguf",
				   "metadata %s.embedding_length %llu is not a multiple of head_count "
				   "%u and attention.key_length is not given", arch,
				   (unsigned long long)h->v[K_EMBD], m->num_heads);
		goto out;
	}

	const char *base = strrchr(path, '/');
	if (name_len >= sizeof m->name && m->num_warnings < KVP_MODEL_WARNINGS)
		snprintf(m->warnings[m->num_warnings++], KVP_WARNING_MAX,
			 "%s: warning: general.name: %llu bytes, shown cut to %zu", path,
			 (unsigned long long)name_len, sizeof m->name - 1);
	snprintf(m->name, sizeof m->name, "%s", name[0] ? name : base ? base + 1 : path);
	snprintf(m->path, sizeof m->path, "%s", path);
	snprintf(m->family, sizeof m->family, "%s", arch);
	m->dtype = KVP_DTYPE_BF16;  /* the activations and KV; the weights are the file's */
	m->num_layers = (uint32_t)h->v[K_BLOCKS];
	m->hidden_size = (uint32_t)h->v[K_EMBD];
	m->head_dim = (uint32_t)(h->has[K_KEY_LEN] ? h->v[K_KEY_LEN] : h->v[K_EMBD] / m->num_heads);
	m->head_dim_v = (uint32_t)(h->has[K_VALUE_LEN] ? h->v[K_VALUE_LEN] : m->head_dim);
	m->vocab_size = (uint32_t)vocab;
	m->max_context = h->v[K_CTX];
	if (kind == KVP_LAYER_MLA) {
		m->mla_kv_lora_rank = (uint32_t)h->v[K_KV_LORA];
		m->mla_rope_dim = (uint32_t)h->v[K_ROPE_DIM];
	}
	if (h->v[K_EXPERTS]) {
		m->moe_num_experts = (uint32_t)h->v[K_EXPERTS];
		m->moe_experts_per_token = (uint32_t)h->v[K_EXPERTS_USED];
		m->moe_intermediate_size = (uint32_t)h->v[K_EXPERT_FFN];
	}
	m->params = total_elems;
	m->expert_params = routed_elems;
	m->active_params = total_elems - routed_elems +
		(h->v[K_EXPERTS] ? routed_elems / h->v[K_EXPERTS] * m->moe_experts_per_token
				 : routed_elems);
	m->file_embed_bytes = b_embed;
	m->file_dense_bytes = b_dense;
	m->file_shared_bytes = b_shared;
	m->file_routed_bytes = b_routed;
	st = kvp_model_validate(m, err);
out:
	fclose(r.f);
out_mem:
	names_free(&keys);
	names_free(&tensors);
	free(r.scratch);
	free(h);
	return st;
}
