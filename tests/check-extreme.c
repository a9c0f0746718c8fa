/* check-extreme.c: the limits of every input, one case per limit, each with a
 * clear error or a correct answer, never a crash or a wrapped number.
 *
 * Zero, one, the largest uint64_t, 10^9-token contexts, 10^6 GPUs (tp/pp),
 * NaN and infinity in floats, negative numbers in unsigned fields, a 100 MB
 * profile (written to a temporary directory and removed), deep nesting,
 * anchors and aliases (billion laughs), a mapping of 300,000 keys.  Correct
 * answers carry their hand arithmetic beside the assertion.  Cases marked
 * "regression" failed before the fix named there (fuzz/regress/ holds the
 * inputs the fuzzers found; reports/fuzzing.md tells the story).
 * Legend: L = layers, n = tokens, H_kv = KV heads, d_h = head dim,
 * b = bytes per element, P = block size, T = max batched tokens. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check-tmp.h"
#include "memory/budget.h"
#include "read/hf-config.h"
#include "read/profile.h"
#include "base/units.h"
#include "base/yaml-walk.h"
#include "model/spec.h"

/* ------------------------------------------------------------ helpers */

static void tmp_setup(void)
{
	tmp_make("kvplan-extreme");
}

/* The smallest model: every size 1, one full-attention layer, bf16. */
static void model_one(struct kvp_model *m)
{
	memset(m, 0, sizeof *m);
	strcpy(m->name, "one");
	m->dtype = KVP_DTYPE_BF16;
	m->num_layers = 1;
	m->hidden_size = m->num_heads = m->num_kv_heads = m->head_dim = m->head_dim_v = 1;
	m->intermediate_size = m->vocab_size = 1;
	m->max_context = 1;
	m->params = m->active_params = 1;
	m->layers[0] = KVP_LAYER_FULL;
}

static struct kvp_budget_opts opts_on(enum kvp_engine e, uint64_t gpu_bytes, uint64_t n)
{
	struct kvp_budget_opts o = {0};
	o.engine = e;
	o.par.tp = o.par.pp = 1;
	o.context = n;
	o.has_gpu_memory = true;
	o.gpu_memory_bytes = gpu_bytes;
	return o;
}

static struct kvp_model model;
static struct kvp_gpu gpu;
static struct kvp_budget b;
static struct kvp_spec spec;

/* ------------------------------------------------------------ units */

enum parser { P_U64, P_BYTES, P_TOKENS, P_DOUBLE, P_FRACTION, P_RATE };

static const struct {
	enum parser p;
	const char *s;
	int rc;        /* 0, -1 malformed, -2 out of range */
	uint64_t u;    /* integer parsers */
	double d;      /* double parsers (relative tolerance 1e-12) */
} units[] = {
	{P_U64, "0", 0, 0, 0},
	{P_U64, "1", 0, 1, 0},
	{P_U64, "18446744073709551615", 0, UINT64_MAX, 0},          /* 2^64 - 1 */
	{P_U64, "18446744073709551616", -2, 0, 0},                  /* 2^64 */
	{P_U64, "99999999999999999999999", -2, 0, 0},
	{P_U64, "-1", -1, 0, 0},
	{P_U64, "+1", -1, 0, 0},
	{P_U64, "", -1, 0, 0},
	{P_U64, "nan", -1, 0, 0},
	{P_BYTES, "0", 0, 0, 0},
	{P_BYTES, "1B", 0, 1, 0},
	{P_BYTES, "18446744073709551615B", 0, UINT64_MAX, 0},
	/* (2^24 - 1) * 2^40 = 2^64 - 2^40 */
	{P_BYTES, "16777215TiB", 0, 18446742974197923840ULL, 0},
	{P_BYTES, "16777216TiB", -2, 0, 0},                         /* 2^24 * 2^40 = 2^64 */
	{P_BYTES, "18446744073.709551616GB", -2, 0, 0},             /* 2^64 by the decimal path */
	{P_BYTES, "-1GiB", -1, 0, 0},
	{P_BYTES, "nanGiB", -1, 0, 0},
	{P_BYTES, "infGiB", -1, 0, 0},
	{P_BYTES, "1e3GiB", -1, 0, 0},
	{P_TOKENS, "0", 0, 0, 0},
	{P_TOKENS, "1", 0, 1, 0},
	{P_TOKENS, "1000000000", 0, 1000000000, 0},                 /* 10^9 tokens */
	{P_TOKENS, "1m", 0, 1048576, 0},
	{P_TOKENS, "17592186044415M", 0, 18446744073708503040ULL, 0}, /* (2^44 - 1) * 2^20 */
	{P_TOKENS, "17592186044416M", -2, 0, 0},                    /* 2^44 * 2^20 = 2^64 */
	{P_TOKENS, "-8k", -1, 0, 0},
	{P_DOUBLE, "0", 0, 0, 0},
	{P_DOUBLE, "1e308", 0, 0, 1e308},
	{P_DOUBLE, "1e309", -2, 0, 0},                              /* past DBL_MAX: inf */
	{P_DOUBLE, "nan", -1, 0, 0},
	{P_DOUBLE, "inf", -1, 0, 0},
	{P_DOUBLE, "infinity", -1, 0, 0},
	{P_DOUBLE, ".nan", -1, 0, 0},
	{P_DOUBLE, ".inf", -1, 0, 0},
	{P_DOUBLE, "-0.5", -1, 0, 0},
	{P_FRACTION, "1", 0, 0, 1},
	{P_FRACTION, "100%", 0, 0, 1},
	{P_FRACTION, "0", -2, 0, 0},
	{P_FRACTION, "0%", -2, 0, 0},
	{P_FRACTION, "1.0000001", -2, 0, 0},
	{P_FRACTION, "1e-400", -2, 0, 0},                           /* underflows: ERANGE */
	{P_FRACTION, "nan", -1, 0, 0},
	{P_FRACTION, "inf%", -1, 0, 0},
	{P_RATE, "0TB/s", 0, 0, 0},
	{P_RATE, "3.35TB/s", 0, 0, 3.35e12},
	{P_RATE, "nanTB/s", -1, 0, 0},
	{P_RATE, "infTB/s", -1, 0, 0},
	{P_RATE, "1e400TB/s", -1, 0, 0},
	{P_RATE, "-1TB/s", -1, 0, 0},
	/* 62 nines: 10^62 TB/s = 10^74 B/s, finite */
	{P_RATE, "99999999999999999999999999999999999999999999999999999999999999TB/s", 0, 0, 1e74},
};

START_TEST(test_units)
{
	uint64_t u = 12345;
	double d = -1;
	int rc = 0;
	switch (units[_i].p) {
	case P_U64: rc = kvp_parse_u64(units[_i].s, &u); break;
	case P_BYTES: rc = kvp_parse_bytes(units[_i].s, &u); break;
	case P_TOKENS: rc = kvp_parse_tokens(units[_i].s, &u); break;
	case P_DOUBLE: rc = kvp_parse_double(units[_i].s, &d); break;
	case P_FRACTION: rc = kvp_parse_fraction(units[_i].s, &d); break;
	case P_RATE: rc = kvp_parse_rate(units[_i].s, &d); break;
	}
	ck_assert_msg(rc == units[_i].rc, "'%s': rc %d, want %d", units[_i].s, rc, units[_i].rc);
	if (rc)
		return;
	if (units[_i].p <= P_TOKENS)
		ck_assert_uint_eq(u, units[_i].u);
	else
		ck_assert_msg(fabs(d - units[_i].d) <= 1e-12 * units[_i].d, "'%s': %g, want %g",
			      units[_i].s, d, units[_i].d);
}
END_TEST

START_TEST(test_format)
{
	char buf[64];
	kvp_format_u64(UINT64_MAX, buf, sizeof buf);
	ck_assert_str_eq(buf, "18,446,744,073,709,551,615");
	kvp_format_u64(0, buf, sizeof buf);
	ck_assert_str_eq(buf, "0");
	/* (2^64 - 1) / 2^60 = 15.99999... EiB */
	kvp_format_bytes(UINT64_MAX, buf, sizeof buf);
	ck_assert_str_eq(buf, "16.00 EiB");
	kvp_format_bytes(1023, buf, sizeof buf);
	ck_assert_str_eq(buf, "1023 B");
	kvp_format_bytes(1024, buf, sizeof buf);
	ck_assert_str_eq(buf, "1.00 KiB");
	/* regression (fuzz/regress/units/rate-printed-cut-off): 10^74 B/s is
	 * 10^59 PB/s, whose 60 digits "%.2f" cut off at the buffer's end */
	kvp_format_rate(1e74, buf, sizeof buf);
	ck_assert_str_eq(buf, "1.000e+59 PB/s");
	kvp_format_rate(999999999e15, buf, sizeof buf);
	ck_assert_str_eq(buf, "999999999.00 PB/s");
	kvp_format_rate(0, buf, sizeof buf);
	ck_assert_str_eq(buf, "0.00 B/s");
}
END_TEST

/* ------------------------------------------------------------ model */

START_TEST(test_model_one)
{
	struct kvp_error err = {0};
	model_one(&model);
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	/* 2 (K and V) * 1 head * 1 d_h * 2 B = 4 B per token */
	ck_assert_uint_eq(spec.token_bytes, 4);
	ck_assert_uint_eq(spec.token_bytes_total, 4);
	/* embeddings 2 * V * H = 2 exceed params = 1, so none are counted:
	 * 1 parameter * 2 B */
	ck_assert_uint_eq(spec.weights_bytes, 2);
	/* one token, one sequence: 4 B exactly; in a block of 16: 64 B */
	uint64_t v;
	ck_assert_int_eq(kvp_spec_seq_bytes(&spec, 1, 1, &v), KVP_STATUS_OK);
	ck_assert_uint_eq(v, 4);
	ck_assert_int_eq(kvp_spec_seq_bytes(&spec, 1, 16, &v), KVP_STATUS_OK);
	ck_assert_uint_eq(v, 64);
	ck_assert_int_eq(kvp_spec_seq_bytes(&spec, 0, 16, &v), KVP_STATUS_OK);
	ck_assert_uint_eq(v, 0);
	/* a one-byte GPU: usable floor(0.9) = 0, no pool, 1 B of headroom */
	struct kvp_budget_opts o = opts_on(KVP_ENGINE_GENERIC, 1, 1);
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(b.usable_bytes, 0);
	ck_assert_uint_eq(b.kv_pool_bytes, 0);
	ck_assert_uint_eq(b.headroom_bytes, 1);
	ck_assert(!b.weights_fit && !b.fits);
	/* the activation estimate: per token 2H + (H_q + 2 H_kv) d_h + 3I =
	 * 2 + 3 + 3 = 8 elements * 2 B * 8192 tokens = 131,072 B, plus the
	 * sampler's 256 sequences * 8 * V = 2,048 B: 133,120 B */
	ck_assert_uint_eq(b.activation_bytes, 133120);
}
END_TEST

START_TEST(test_million_gpus)
{
	struct kvp_error err = {0};
	model_one(&model);
	/* H = H_kv = 10^6 heads of d_h 128, hidden 1.28 * 10^8, 10^12 parameters */
	model.num_heads = model.num_kv_heads = 1000000;
	model.head_dim = model.head_dim_v = 128;
	model.hidden_size = 128000000;
	model.params = model.active_params = 1000000000000ULL;
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1000000, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	/* tp = 10^6: one KV head per GPU, 2 * 1 * 128 * 2 B = 512 B per token;
	 * whole model 2 * 10^6 * 128 * 2 = 512,000,000 B per token */
	ck_assert_uint_eq(spec.kv_heads_per_gpu, 1);
	ck_assert_uint_eq(spec.token_bytes, 512);
	ck_assert_uint_eq(spec.token_bytes_total, 512000000);
	/* weights: 10^12 parameters * 2 B = 2 * 10^12 B in all, / 10^6 GPUs */
	ck_assert_uint_eq(spec.weights_bytes_total, 2000000000000ULL);
	ck_assert_uint_eq(spec.weights_bytes, 2000000);
	/* 10^6 pipeline stages of a 4096-layer model: a clear error */
	model.num_layers = KVP_MAX_LAYERS;
	for (int i = 0; i < KVP_MAX_LAYERS; i++)
		model.layers[i] = KVP_LAYER_FULL;
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 1000000}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "pp");
	/* 4096 stages of 4096 layers: one layer each, 2 * 10^6 * 128 * 2 B */
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 4096}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(spec.num_layers, 1);
	ck_assert_uint_eq(spec.token_bytes, 512000000);
	/* tp 10^6 on 32 heads, and tp 0 */
	struct kvp_model *m = malloc(sizeof *m);
	ck_assert_int_eq(kvp_model_load("llama-3.1-8b", m, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_spec_build(m, (struct kvp_parallel){.tp = 1000000, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "tp");
	ck_assert_int_eq(kvp_spec_build(m, (struct kvp_parallel){.tp = 0, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_USAGE);
	free(m);
}
END_TEST

START_TEST(test_u32_limits)
{
	struct kvp_error err = {0};
	model_one(&model);
	/* H_kv = 2^32 - 1 heads of d_h 2^32 - 1: (2^32 - 1) * 2 (2^32 - 1)
	 * elements per token passes 2^64: an overflow, not a number */
	model.num_heads = model.num_kv_heads = UINT32_MAX;
	model.head_dim = model.head_dim_v = UINT32_MAX;
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OVERFLOW);
	/* regression (activation estimate): one KV head, H_q = 2^32 - 1:
	 * (H_q + 2 H_kv) d_h = (2^32 + 1)(2^32 - 1) = 2^64 - 1, and + 3I + 2H
	 * wrapped to 4 elements per token before the fix */
	model.num_kv_heads = 1;
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(kvp_budget_activation_estimate(&spec, 8192, 256), UINT64_MAX);
	struct kvp_budget_opts o = opts_on(KVP_ENGINE_VLLM, 80ULL << 30, 1);
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OVERFLOW);
	ck_assert_str_eq(err.field, "max-batched-tokens");
	/* the largest parameter count: 2^64 - 1 parameters of 2 B overflow */
	model_one(&model);
	model.params = model.active_params = UINT64_MAX;
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OVERFLOW);
	ck_assert_str_eq(err.field, "params");
	/* the largest max_context, used as the default context */
	model_one(&model);
	model.max_context = UINT64_MAX;
	o = opts_on(KVP_ENGINE_GENERIC, 80ULL << 30, 0);
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OVERFLOW);
	ck_assert_str_eq(err.field, "context");
}
END_TEST

/* ------------------------------------------------------------ budget */

START_TEST(test_billion_tokens)
{
	struct kvp_error err = {0};
	struct kvp_gpu g;
	ck_assert_int_eq(kvp_model_load("llama-3.1-8b", &model, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_gpu_load("h100-sxm", &g, &err), KVP_STATUS_OK);
	struct kvp_budget_opts o = {.engine = KVP_ENGINE_GENERIC, .par = {.tp = 1, .pp = 1},
				    .context = 1000000000};
	ck_assert_int_eq(kvp_budget_compute(&model, &g, &o, &b, &err), KVP_STATUS_OK);
	/* 32 layers * 2 * 8 KV heads * 128 * 2 B = 131,072 B per token;
	 * 10^9 tokens: 131,072,000,000,000 B (119.2 TiB): no GPU holds one */
	ck_assert_uint_eq(b.spec.token_bytes, 131072);
	ck_assert_uint_eq(b.kv_bytes, 131072000000000ULL);
	ck_assert_uint_eq(b.max_sequences, 0);
	ck_assert(!b.fits);
	/* the longest context for one sequence: whole 16-token pages of
	 * 16 * 131,072 B = 2 MiB in the pool */
	ck_assert_uint_eq(kvp_budget_max_context(&b, 1, 1ULL << 40),
			  b.kv_pool_bytes / (2 * KVP_MIB) * 16);
	/* 2^64 - 1 tokens: rounded up to a block they pass 2^64 */
	o.context = UINT64_MAX;
	ck_assert_int_eq(kvp_budget_compute(&model, &g, &o, &b, &err), KVP_STATUS_OVERFLOW);
	ck_assert_str_eq(err.field, "context");
	/* 2^64 - 1 sequences of one token */
	o.context = 1;
	o.batch = UINT64_MAX;
	ck_assert_int_eq(kvp_budget_compute(&model, &g, &o, &b, &err), KVP_STATUS_OVERFLOW);
}
END_TEST

START_TEST(test_layer_tokens_saturate)
{
	/* regression (model.c): n = 2^64 - 1 in blocks of 16 is 2^60 blocks,
	 * 2^64 tokens, which wrapped to 0 tokens and 0 bytes */
	struct kvp_spec_layer l = {.kind = KVP_LAYER_FULL, .token_bytes = 4};
	ck_assert_uint_eq(kvp_spec_layer_tokens(&l, UINT64_MAX, 16), UINT64_MAX);
	ck_assert_uint_eq(kvp_spec_layer_tokens(&l, UINT64_MAX, 1), UINT64_MAX);
	/* 2^64 - 16 is a whole number of blocks */
	ck_assert_uint_eq(kvp_spec_layer_tokens(&l, UINT64_MAX - 15, 16), UINT64_MAX - 15);
	/* a sliding window of 4096 keeps ceil(4095 / 16) + 1 = 257 blocks */
	l.kind = KVP_LAYER_SLIDING;
	l.window = 4096;
	ck_assert_uint_eq(kvp_spec_layer_tokens(&l, UINT64_MAX, 16), 257 * 16);
	struct kvp_error err = {0};
	model_one(&model);
	ck_assert_int_eq(kvp_spec_build(&model, (struct kvp_parallel){.tp = 1, .pp = 1}, KVP_DTYPE_AUTO,
					KVP_DTYPE_AUTO, &spec, &err), KVP_STATUS_OK);
	uint64_t v;
	ck_assert_int_eq(kvp_spec_seq_bytes(&spec, UINT64_MAX, 16, &v), KVP_STATUS_OVERFLOW);
}
END_TEST

START_TEST(test_vllm_window_saturates)
{
	/* regression (budget.c vllm_blocks): T = 2^64 - 1 batched tokens
	 * (activations given, so the estimate does not refuse it) made
	 * W - 1 + T wrap to W - 2, and a sliding layer counted ~W tokens for
	 * a 32k context.  One sliding (W 4096) and one full layer, 4 B/token:
	 * full  ceil(32768 / 16) = 2048 blocks
	 * slide ceil(min(W - 1 + T, n) / 16) + 1 = 2048 + 1 = 2049 blocks */
	struct kvp_error err = {0};
	model_one(&model);
	model.num_layers = 2;
	model.layers[0] = KVP_LAYER_SLIDING;
	model.layers[1] = KVP_LAYER_FULL;
	model.sliding_window = 4096;
	model.max_context = 32768;
	struct kvp_budget_opts o = opts_on(KVP_ENGINE_VLLM, 80ULL << 30, 32768);
	o.max_batched_tokens = UINT64_MAX;
	o.has_activation = true;
	o.activation_bytes = 0;
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(b.group[KVP_LAYER_FULL].blocks_per_seq, 2048);
	ck_assert_uint_eq(b.group[KVP_LAYER_SLIDING].blocks_per_seq, 2049);
	/* group size 1, page 16 * 4 B = 64 B: (2048 + 2049) * 64 = 262,208 B */
	ck_assert_uint_eq(b.page_bytes, 64);
	ck_assert_uint_eq(b.seq_bytes, 262208);
	/* 2^64 - 1 tokens at P = 1: the full layer's 2^64 - 1 blocks plus the
	 * sliding layer's do not fit in 64 bits: an overflow */
	o.context = UINT64_MAX;
	o.block_size = 1;
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OVERFLOW);
}
END_TEST

START_TEST(test_vllm_mamba_block)
{
	/* regression (budget.c vllm_groups): vLLM grows the attention block in
	 * steps of 16 tokens until a page holds one Mamba state; past 2^32
	 * tokens the block size was truncated to 32 bits (to 0: a division by
	 * zero).  One Mamba layer (expand 1, hidden 2^20, d_conv 1, d_state S)
	 * holds 2^20 * S elements * 2 B; one full layer takes 4 B per token. */
	struct kvp_error err = {0};
	model_one(&model);
	model.num_layers = 2;
	model.layers[0] = KVP_LAYER_MAMBA;
	model.layers[1] = KVP_LAYER_FULL;
	model.hidden_size = 1u << 20;
	model.mamba_expand = 1;
	model.mamba_d_conv = 1;
	model.mamba_d_state = 4096;
	model.params = model.active_params = 1000000000;
	struct kvp_budget_opts o = opts_on(KVP_ENGINE_VLLM, 80ULL << 30, 1024);
	/* S = 4096: state 2^20 * 2^12 * 2 B = 2^33 B; block = 16 * ceil(2^33 /
	 * (16 * 4)) = 2^31 tokens, page 2^31 * 4 B = 2^33 B */
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(b.spec.seq_bytes, 1ULL << 33);
	ck_assert_uint_eq(b.block_size, 1u << 31);
	ck_assert_uint_eq(b.page_bytes, 1ULL << 33);
	/* S = 8192: the block would be 2^32 tokens, past a 32-bit block size */
	model.mamba_d_state = 8192;
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OVERFLOW);
	ck_assert_str_eq(err.field, "block-size");
}
END_TEST

START_TEST(test_gpu_memory_limits)
{
	struct kvp_error err = {0};
	model_one(&model);
	/* the largest GPU, all of it: usable 2^64 - 1 exactly (the double
	 * 2^64 it rounds to was cast out of range before the fix) */
	struct kvp_budget_opts o = opts_on(KVP_ENGINE_GENERIC, UINT64_MAX, 1);
	o.utilization = 1;
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(b.usable_bytes, UINT64_MAX);
	ck_assert_uint_eq(b.headroom_bytes, 0);
	ck_assert_uint_eq(b.kv_pool_bytes, UINT64_MAX - b.weights_bytes - b.activation_bytes -
						   b.overhead_bytes);
	ck_assert(b.fits);
	/* 0.9 of it: 0.9 * (2^64 - 1) = 16,602,069,666,338,596,453.5, within
	 * the 2,048 B a double resolves at that size */
	o.utilization = 0;
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OK);
	ck_assert(b.usable_bytes <= UINT64_MAX);
	ck_assert_uint_ge(b.usable_bytes, 16602069666338596453ULL - 4096);
	ck_assert_uint_le(b.usable_bytes, 16602069666338596453ULL + 4096);
	ck_assert_uint_eq(b.headroom_bytes, UINT64_MAX - b.usable_bytes);
	for (int e = KVP_ENGINE_GENERIC; e <= KVP_ENGINE_TRTLLM; e++) {
		o.engine = (enum kvp_engine)e;
		ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OK);
		ck_assert(b.kv_pool_bytes <= b.usable_bytes && b.usable_bytes <= UINT64_MAX);
		ck_assert(b.fits);
	}
}
END_TEST

START_TEST(test_sglang_small_gpu)
{
	/* regression (budget.c, fuzz/regress/gpu/sglang-1gib-negative-fraction.yaml):
	 * SGLang's default mem_fraction_static on a 1 GiB GPU is
	 * (1024 - 13,440) / 1024 MiB < 0 (reserve 512 + 8192 * 1.5 + 256 * 2
	 * + 1/8 * 1024 = 13,440 MiB); the negative usable bytes were cast to a
	 * 16 EiB pool.  Now the fraction is 0, no pool, nothing fits. */
	struct kvp_error err = {0};
	model_one(&model);
	struct kvp_budget_opts o = opts_on(KVP_ENGINE_SGLANG, 1ULL << 30, 1);
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OK);
	ck_assert(b.utilization == 0);
	ck_assert_uint_eq(b.usable_bytes, 0);
	ck_assert_uint_eq(b.kv_pool_bytes, 0);
	ck_assert(!b.weights_fit && !b.fits);
	/* the fraction it would need, with SGLang's page of 1 token:
	 * (KV 4 B + weights 2 B + SGLang's fp32 rotary cache of 1 position x 1
	 * dim x 4 B) / (1 GiB - 512 MiB of context) */
	double u = kvp_budget_utilization_for(&b, 1, 1);
	ck_assert_double_eq_tol(u, 10.0 / (512.0 * KVP_MIB), 1e-18);
	/* a GPU smaller than the 512 MiB context: no fraction is enough */
	o.gpu_memory_bytes = 256 * KVP_MIB;
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(b.kv_pool_bytes, 0);
	ck_assert(isinf(kvp_budget_utilization_for(&b, 1, 1)));
	/* the same GPU with a given fraction: free memory before load is 0 */
	o.utilization = 0.9;
	ck_assert_int_eq(kvp_budget_compute(&model, &gpu, &o, &b, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(b.usable_bytes, 0);
	ck_assert_uint_eq(b.kv_pool_bytes, 0);
}
END_TEST

/* ------------------------------------------------------------ documents */

START_TEST(test_hundred_mb_profile)
{
	/* 100 MB: a valid header, then comment lines; refused by its size
	 * before it is read, by each loader */
	char path[700];
	snprintf(path, sizeof path, "%s/huge.yaml", tmpdir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs("name: huge\ndtype: bf16\n", f);
	static char line[1000];
	memset(line, '#', sizeof line - 1);
	line[sizeof line - 2] = '\n';
	for (int i = 0; i < 100000; i++)
		fputs(line, f);
	fclose(f);
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_model_load(path, &model, &err), KVP_STATUS_INVALID);
	ck_assert(strstr(err.msg, "larger than 16 MiB") != NULL);
	struct kvp_gpu g;
	ck_assert_int_eq(kvp_gpu_load(path, &g, &err), KVP_STATUS_INVALID);
	ck_assert(strstr(err.msg, "larger than 16 MiB") != NULL);
	ck_assert_int_eq(kvp_hf_config_load(path, &model, &err), KVP_STATUS_INVALID);
	ck_assert(strstr(err.msg, "larger than 16 MiB") != NULL);
}
END_TEST

/* Documents that must be refused: text, line of the error, words in it. */
static const struct {
	const char *name;
	const char *text;
	int line;
	const char *msg;
} refused[] = {
	/* the billion laughs: nine levels of ten aliases would be 10^9 "lol"s */
	{"billion laughs",
	 "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	 "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
	 "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
	 "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
	 "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
	 "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
	 "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
	 "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
	 "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h, *h]\n",
	 1, "anchors and aliases"},
	{"alias without anchor", "name: x\nnum_layers: *n\n", 2, "anchors and aliases"},
	{"merge key", "base: &b {num_heads: 8}\nm:\n  <<: *b\n", 1, "anchors and aliases"},
	{"anchored key", "&k name: x\n", 1, "anchors and aliases"},
	{"anchored scalar", "name: &n x\nalso: *n\n", 1, "anchors and aliases"},
	{"two documents", "name: a\n---\nname: b\n", 2, "more than one document"},
	{"tab indent", "a:\n\tb: 1\n", 2, "malformed"},
	{"unclosed flow", "a: [1, 2\n", 2, "malformed"},
};

START_TEST(test_refused)
{
	struct kvp_doc *d = (struct kvp_doc *)1;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_doc_load_buffer("t.yaml", refused[_i].text, strlen(refused[_i].text),
					     &d, &err), KVP_STATUS_PARSE);
	ck_assert_ptr_null(d);
	ck_assert_msg(err.line == refused[_i].line, "%s: line %d, want %d", refused[_i].name,
		      err.line, refused[_i].line);
	ck_assert_msg(strstr(err.msg, refused[_i].msg) != NULL, "%s: %s", refused[_i].name, err.msg);
}
END_TEST

START_TEST(test_deep_nesting)
{
	struct kvp_doc *d;
	struct kvp_error err = {0};
	/* a million open brackets: refused at depth 65, on line 1 */
	size_t n = 1000000;
	char *buf = malloc(n);
	memset(buf, '[', n);
	ck_assert_int_eq(kvp_doc_load_buffer("deep", buf, n, &d, &err), KVP_STATUS_PARSE);
	ck_assert(strstr(err.msg, "deeper than 64") != NULL);
	ck_assert_int_eq(err.line, 1);
	free(buf);
	/* 2,000 nested block mappings, one key per line, each indented one
	 * more: the key on line k holds the mapping of depth k + 1, so the
	 * error points at line 64, whose value would be the 65th level */
	size_t cap = 2000 * 2004, len = 0;
	buf = malloc(cap);
	for (int k = 0; k < 2000; k++) {
		memset(buf + len, ' ', (size_t)k);
		len += (size_t)k;
		memcpy(buf + len, "a:\n", 3);
		len += 3;
	}
	ck_assert_int_eq(kvp_doc_load_buffer("deep", buf, len, &d, &err), KVP_STATUS_PARSE);
	ck_assert(strstr(err.msg, "deeper than 64") != NULL);
	ck_assert_int_eq(err.line, 64);
	free(buf);
}
END_TEST

START_TEST(test_wide_documents)
{
	struct kvp_doc *d;
	struct kvp_error err = {0};
	/* regression (yaml-walk.c): 300,000 keys were checked for duplicates
	 * pairwise, 4.5 * 10^10 comparisons: a 3.5 MB profile hung the
	 * planner.  Now a hash: this loads in well under the test's timeout. */
	size_t keys = 300000, cap = keys * 16 + 32, len = 0;
	char *buf = malloc(cap);
	for (size_t i = 0; i < keys; i++)
		len += (size_t)snprintf(buf + len, cap - len, "k%zu: 1\n", i);
	ck_assert_int_eq(kvp_doc_load_buffer("wide", buf, len, &d, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(d->root->n, keys);
	ck_assert_str_eq(d->root->keys[keys - 1]->value, "k299999");
	kvp_doc_free(d);
	/* and a duplicate at the end is still found, with both lines */
	len += (size_t)snprintf(buf + len, cap - len, "k123456: 2\n");
	ck_assert_int_eq(kvp_doc_load_buffer("wide", buf, len, &d, &err), KVP_STATUS_PARSE);
	ck_assert_int_eq(err.line, 300001);
	ck_assert_str_eq(err.field, "k123456");
	ck_assert(strstr(err.msg, "first at line 123457") != NULL);
	free(buf);
	/* a flat list of 1,000,001 items: one node past the limit with its list */
	len = 0;
	cap = 2 * 1000001 + 8;
	buf = malloc(cap);
	buf[len++] = '[';
	for (int i = 0; i < 1000001; i++) {
		buf[len++] = '0';
		buf[len++] = ',';
	}
	buf[len - 1] = ']';
	ck_assert_int_eq(kvp_doc_load_buffer("flat", buf, len, &d, &err), KVP_STATUS_PARSE);
	ck_assert(strstr(err.msg, "more than 1000000 nodes") != NULL);
	free(buf);
}
END_TEST

/* ------------------------------------------------------------ fields */

/* A valid profile of each kind, one key per line; a case replaces the value
 * of one key (its line is its index + 1) or adds one at the end. */
static const char *const model_lines[] = {
	"name: x", "dtype: bf16", "num_layers: 4", "hidden_size: 512", "num_heads: 8",
	"num_kv_heads: 2", "head_dim: 64", "intermediate_size: 1024", "vocab_size: 1000",
	"tie_word_embeddings: false", "max_context: 4096", "params: 10000000", NULL};
static const char *const gpu_lines[] = {
	"name: g", "memory: 80GiB", "bandwidth: 3.35TB/s", "bf16_tflops: 989",
	"host_link: pcie5x16", NULL};
static const char *const hf_lines[] = {
	"{\"model_type\": \"llama\",", "\"num_hidden_layers\": 4,", "\"hidden_size\": 512,",
	"\"num_attention_heads\": 8,", "\"num_key_value_heads\": 2,",
	"\"intermediate_size\": 1024,", "\"vocab_size\": 1000,",
	"\"max_position_embeddings\": 4096,", "\"torch_dtype\": \"bfloat16\"}", NULL};

enum kind { K_MODEL, K_GPU, K_HF };

static const struct {
	enum kind kind;
	const char *key;     /* key replaced, or added when absent from the base */
	const char *value;
	kvp_status status;
	const char *msg;     /* words of the message */
} fields[] = {
	/* negative numbers in unsigned fields */
	{K_MODEL, "num_layers", "-1", KVP_STATUS_INVALID, "must not be negative"},
	{K_MODEL, "num_layers", "-0", KVP_STATUS_INVALID, "must not be negative"},
	{K_MODEL, "num_heads", "'-8'", KVP_STATUS_INVALID, "must not be negative"},
	{K_MODEL, "max_context", "-4096", KVP_STATUS_INVALID, "must not be negative"},
	{K_MODEL, "params", "-1", KVP_STATUS_INVALID, "must not be negative"},
	{K_GPU, "memory", "-80GiB", KVP_STATUS_INVALID, "must not be negative"},
	{K_GPU, "bandwidth", "-1TB/s", KVP_STATUS_INVALID, "must not be negative"},
	{K_GPU, "bf16_tflops", "-.inf", KVP_STATUS_INVALID, "must not be negative"},
	{K_GPU, "l2_cache", "-1MiB", KVP_STATUS_INVALID, "must not be negative"},
	{K_HF, "num_hidden_layers", "-4", KVP_STATUS_INVALID, "must not be negative"},
	{K_HF, "vocab_size", "-1", KVP_STATUS_INVALID, "must not be negative"},
	/* zero, and past the integer range */
	{K_MODEL, "num_layers", "0", KVP_STATUS_INVALID, "positive"},
	{K_MODEL, "num_layers", "4097", KVP_STATUS_INVALID, "more than 4096"},
	{K_MODEL, "num_layers", "4294967296", KVP_STATUS_OVERFLOW, "larger than"},
	{K_MODEL, "params", "18446744073709551616", KVP_STATUS_OVERFLOW, "64 bits"},
	{K_GPU, "memory", "0", KVP_STATUS_INVALID, "positive"},
	{K_GPU, "memory", "16777216TiB", KVP_STATUS_OVERFLOW, "64 bits"},
	{K_GPU, "bandwidth", "0TB/s", KVP_STATUS_INVALID, "positive"},
	{K_HF, "num_attention_heads", "0", KVP_STATUS_INVALID, "positive"},
	{K_HF, "hidden_size", "4294967296", KVP_STATUS_OVERFLOW, "larger than"},
	{K_HF, "num_hidden_layers", "1e400", KVP_STATUS_INVALID, "whole number"},
	/* NaN and infinity */
	{K_MODEL, "num_layers", ".nan", KVP_STATUS_INVALID, "whole number"},
	{K_MODEL, "head_dim", ".inf", KVP_STATUS_INVALID, "whole number"},
	{K_GPU, "memory", "nanGiB", KVP_STATUS_INVALID, "size"},
	{K_GPU, "memory", ".inf", KVP_STATUS_INVALID, "size"},
	{K_GPU, "bandwidth", "infTB/s", KVP_STATUS_INVALID, "rate"},
	{K_GPU, "bandwidth", ".nan", KVP_STATUS_INVALID, "rate"},
	{K_GPU, "bf16_tflops", ".nan", KVP_STATUS_INVALID, "number"},
	{K_GPU, "bf16_tflops", "nan", KVP_STATUS_INVALID, "number"},
	{K_GPU, "bf16_tflops", ".inf", KVP_STATUS_INVALID, "number"},
	{K_GPU, "bf16_tflops", "1e309", KVP_STATUS_OVERFLOW, "out of range"},
	/* regression (profile.c): finite TFLOPS, infinite FLOP/s (x 10^12) */
	{K_GPU, "bf16_tflops", "1e300", KVP_STATUS_OVERFLOW, "out of range"},
	{K_GPU, "fp8_tflops", "1e300", KVP_STATUS_OVERFLOW, "out of range"},
	{K_GPU, "price_per_hour", ".nan", KVP_STATUS_INVALID, "number"},
	{K_GPU, "nvlink", "infGB/s", KVP_STATUS_INVALID, "rate"},
	/* NCCL's ring over PCIe: a positive, finite rate */
	{K_GPU, "pcie_busbw_8", "0GB/s", KVP_STATUS_INVALID, "positive"},
	{K_GPU, "pcie_busbw_4", "fast", KVP_STATUS_INVALID, "rate"},
	{K_GPU, "pcie_busbw_2", ".nan", KVP_STATUS_INVALID, "rate"},
	/* topology keys come in pairs (profile.c check_topology) */
	{K_GPU, "nvlink", "900GB/s", KVP_STATUS_INVALID, "needs nvlink_domain"},
	{K_GPU, "nvlink_domain", "8", KVP_STATUS_INVALID, "without an nvlink rate"},
	{K_GPU, "nvlink_domain", "-2", KVP_STATUS_INVALID, "must not be negative"},
	{K_GPU, "node_gpus", "8", KVP_STATUS_INVALID, "come together"},
	{K_GPU, "node_gpus", "0", KVP_STATUS_INVALID, "positive"},
	{K_GPU, "scale_out", "50GB/s", KVP_STATUS_INVALID, "come together"},
	{K_GPU, "scale_out", "0GB/s", KVP_STATUS_INVALID, "positive"},
	{K_HF, "hidden_size", "NaN", KVP_STATUS_INVALID, "whole number"},
	{K_HF, "hidden_size", "Infinity", KVP_STATUS_INVALID, "whole number"},
};

START_TEST(test_fields)
{
	const char *const *base = fields[_i].kind == K_MODEL ? model_lines
				: fields[_i].kind == K_GPU ? gpu_lines : hf_lines;
	char text[4096] = "", want_key[80];
	size_t n = 0;
	int line = 0;
	snprintf(want_key, sizeof want_key, fields[_i].kind == K_HF ? "\"%s\":" : "%s:",
		 fields[_i].key);
	for (; base[n]; n++) {
		if (strncmp(base[n], want_key, strlen(want_key)) == 0) {
			line = (int)n + 1;
			snprintf(text + strlen(text), sizeof text - strlen(text), "%s %s%s\n",
				 want_key, fields[_i].value,
				 fields[_i].kind == K_HF && base[n + 1] ? "," : "");
		} else if (fields[_i].kind == K_HF && !base[n + 1] && !line) {
			/* the closing line: add the key before it */
			line = (int)n + 1;
			snprintf(text + strlen(text), sizeof text - strlen(text), "%s %s,\n%s\n",
				 want_key, fields[_i].value, base[n]);
		} else {
			snprintf(text + strlen(text), sizeof text - strlen(text), "%s\n", base[n]);
		}
	}
	if (!line) {
		line = (int)n + 1;
		snprintf(text + strlen(text), sizeof text - strlen(text), "%s %s\n", want_key,
			 fields[_i].value);
	}
	const char *path = write_tmp(fields[_i].kind == K_HF ? "config.json" : "case", text);
	struct kvp_error err = {0};
	kvp_status st;
	if (fields[_i].kind == K_GPU) {
		struct kvp_gpu g;
		st = kvp_gpu_load(path, &g, &err);
	} else if (fields[_i].kind == K_MODEL) {
		st = kvp_model_load_yaml(path, &model, &err);
	} else {
		st = kvp_hf_config_load(path, &model, &err);
	}
	ck_assert_msg(st == fields[_i].status, "%s: %s: status %d, want %d (%s)", fields[_i].key,
		      fields[_i].value, st, fields[_i].status, err.msg);
	ck_assert_msg(err.line == line, "%s: %s: line %d, want %d", fields[_i].key,
		      fields[_i].value, err.line, line);
	ck_assert_str_eq(err.field, fields[_i].key);
	ck_assert_msg(strstr(err.msg, fields[_i].msg) != NULL, "%s: %s: '%s' lacks '%s'",
		      fields[_i].key, fields[_i].value, err.msg, fields[_i].msg);
}
END_TEST

START_TEST(test_base_profiles_load)
{
	/* the bases of test_fields are valid as they stand */
	const char *const *bases[] = {model_lines, gpu_lines, hf_lines};
	for (int k = 0; k < 3; k++) {
		char text[4096] = "";
		for (size_t n = 0; bases[k][n]; n++)
			snprintf(text + strlen(text), sizeof text - strlen(text), "%s\n", bases[k][n]);
		const char *path = write_tmp(k == K_HF ? "config.json" : "case", text);
		struct kvp_error err = {0};
		struct kvp_gpu g;
		kvp_status st = k == K_MODEL ? kvp_model_load_yaml(path, &model, &err)
			      : k == K_GPU ? kvp_gpu_load(path, &g, &err)
					   : kvp_hf_config_load(path, &model, &err);
		ck_assert_msg(st == KVP_STATUS_OK, "base %d: %s", k, err.msg);
	}
}
END_TEST

static Suite *extreme_suite(void)
{
	Suite *s = suite_create("extreme");
	TCase *tc = tcase_create("units");
	tcase_add_loop_test(tc, test_units, 0, sizeof units / sizeof units[0]);
	tcase_add_test(tc, test_format);
	suite_add_tcase(s, tc);
	tc = tcase_create("model");
	tcase_add_test(tc, test_model_one);
	tcase_add_test(tc, test_million_gpus);
	tcase_add_test(tc, test_u32_limits);
	suite_add_tcase(s, tc);
	tc = tcase_create("budget");
	tcase_add_test(tc, test_billion_tokens);
	tcase_add_test(tc, test_layer_tokens_saturate);
	tcase_add_test(tc, test_vllm_window_saturates);
	tcase_add_test(tc, test_vllm_mamba_block);
	tcase_add_test(tc, test_gpu_memory_limits);
	tcase_add_test(tc, test_sglang_small_gpu);
	suite_add_tcase(s, tc);
	tc = tcase_create("documents");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_remove);
	/* generous: the sanitizer and valgrind builds run these too */
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_hundred_mb_profile);
	tcase_add_loop_test(tc, test_refused, 0, sizeof refused / sizeof refused[0]);
	tcase_add_test(tc, test_deep_nesting);
	tcase_add_test(tc, test_wide_documents);
	suite_add_tcase(s, tc);
	tc = tcase_create("fields");
	tcase_add_checked_fixture(tc, tmp_setup, tmp_remove);
	tcase_add_test(tc, test_base_profiles_load);
	tcase_add_loop_test(tc, test_fields, 0, sizeof fields / sizeof fields[0]);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(extreme_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
