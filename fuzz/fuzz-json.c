/* fuzz-json.c: libFuzzer target for the JSON writer (kvp_write_json,
 * src/out/output.c).  The input (cut at the first NUL) is a string value and a
 * field name of one record.  The output, read by this target's own JSON
 * reader (an object of string keys and string or integer values), must be
 * well-formed UTF-8 with no raw control character, and give back the input
 * with each byte that starts no well-formed UTF-8 sequence as U+FFFD and
 * nothing else changed.  Build: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz-common.h"
#include "fuzz-text.h"
#include "out/output.h"

struct reader {
	const char *t;
	size_t n, i;
};

static void skip_ws(struct reader *r)
{
	while (r->i < r->n && strchr(" \n\t\r", r->t[r->i]))
		r->i++;
}

static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A JSON string at r, decoded into out; false when malformed. */
static bool read_string(struct reader *r, struct ft_cps *out)
{
	if (r->i >= r->n || r->t[r->i] != '"')
		return false;
	r->i++;
	while (r->i < r->n) {
		const unsigned char *p = (const unsigned char *)r->t + r->i;
		if (*p == '"') {
			r->i++;
			return true;
		}
		if (*p < 0x20)
			return false; /* a raw control character */
		if (*p == '\\') {
			if (r->i + 1 >= r->n)
				return false;
			char e = r->t[r->i + 1];
			const char *simple = strchr("\"\\/bfnrt", e);
			if (simple && e) {
				static const char to[] = "\"\\/\b\f\n\r\t";
				ft_push(out, (unsigned char)to[simple - "\"\\/bfnrt"]);
				r->i += 2;
				continue;
			}
			if (e != 'u' || r->i + 6 > r->n)
				return false;
			uint32_t v = 0;
			for (int k = 2; k < 6; k++) {
				int h = hex(r->t[r->i + k]);
				if (h < 0)
					return false;
				v = v << 4 | (uint32_t)h;
			}
			if (v >= 0xd800 && v <= 0xdfff)
				return false; /* the writer never needs a surrogate */
			ft_push(out, v);
			r->i += 6;
			continue;
		}
		uint32_t cp;
		size_t len = ft_seq(p, r->n - r->i, &cp);
		if (!len)
			return false; /* not UTF-8 */
		ft_push(out, cp);
		r->i += len;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	if (!s)
		return 0;
	struct kvp_record *rec = kvp_record_new();
	bool as_key = strcmp(s, "value") != 0; /* a key "value" would replace it */
	if (!rec || !kvp_record_str(rec, "value", s) || (as_key && !kvp_record_u64(rec, s, 7)))
		abort();
	struct ft_out o;
	kvp_write_json(ft_open(&o), rec);
	ft_close(&o);
	struct ft_cps want = {0}, got = {0}, key = {0}, value_key = {0}, version_key = {0};
	ft_decode_lossy(s, &want);
	ft_decode_lossy("value", &value_key);
	ft_decode_lossy("schema_version", &version_key);

	struct reader r = {o.buf, o.len, 0};
	skip_ws(&r);
	FUZZ_ASSERT(r.i < r.n && r.t[r.i++] == '{', "not an object");
	skip_ws(&r);
	/* the object opens with the schema version (output.h): a whole number */
	FUZZ_ASSERT(read_string(&r, &key) && ft_equal(&key, &version_key), "schema_version first");
	skip_ws(&r);
	FUZZ_ASSERT(r.i < r.n && r.t[r.i++] == ':', "colon");
	skip_ws(&r);
	FUZZ_ASSERT(r.i < r.n && r.t[r.i] >= '1' && r.t[r.i] <= '9', "schema_version number");
	while (r.i < r.n && r.t[r.i] >= '0' && r.t[r.i] <= '9')
		r.i++;
	skip_ws(&r);
	FUZZ_ASSERT(r.i < r.n && r.t[r.i++] == ',', "comma");
	skip_ws(&r);
	key.n = 0;
	FUZZ_ASSERT(read_string(&r, &key) && ft_equal(&key, &value_key), "first key");
	skip_ws(&r);
	FUZZ_ASSERT(r.i < r.n && r.t[r.i++] == ':', "colon");
	skip_ws(&r);
	FUZZ_ASSERT(read_string(&r, &got), "value is not a JSON string");
	FUZZ_ASSERT(ft_equal(&want, &got), "value does not read back");
	skip_ws(&r);
	if (as_key) {
		FUZZ_ASSERT(r.i < r.n && r.t[r.i++] == ',', "comma");
		skip_ws(&r);
		key.n = 0;
		FUZZ_ASSERT(read_string(&r, &key), "key is not a JSON string");
		FUZZ_ASSERT(ft_equal(&want, &key), "key does not read back");
		skip_ws(&r);
		FUZZ_ASSERT(r.i + 1 < r.n && r.t[r.i] == ':', "colon");
		r.i++;
		skip_ws(&r);
		FUZZ_ASSERT(r.i < r.n && r.t[r.i++] == '7', "the number");
		skip_ws(&r);
	}
	FUZZ_ASSERT(r.i < r.n && r.t[r.i++] == '}', "not closed");
	skip_ws(&r);
	FUZZ_ASSERT(r.i == r.n, "text after the object");
	free(o.buf);
	free(want.v);
	free(got.v);
	free(key.v);
	free(value_key.v);
	free(version_key.v);
	kvp_record_free(rec);
	free(s);
	return 0;
}
