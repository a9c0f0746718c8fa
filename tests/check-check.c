/* check-check.c: `kvplan check`'s library: assertions and every operator on
 * a record written by hand, the exact tolerance edges (the arithmetic beside
 * each case), expectations files good and bad (tests/data/check/ and
 * tests/data/bad/check-*.yaml, whose first line names the error by hand),
 * the baseline's round trip, and the JUnit and TAP writers.  The budget
 * figures are tests/cli-budget.sh's Llama-2-7B with every term given:
 * pool 57 GiB = 61,203,283,968 B, 7,296 blocks of 8 MiB, 28 sequences.
 * Commands that print rows (perf, frag) are checked through row selectors
 * on records written by hand and through tests/data/check/rows.yaml, whose
 * perf and frag figures are hand arithmetic written in that file. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check/checks.h"
#include "base/units.h"

#define DATA KVP_SRCDIR "/tests/data/"

/* The record a budget of that Llama-2-7B would give, plus two doubles. */
static struct kvp_record *sample(void)
{
	struct kvp_record *r = kvp_record_new(), *layers = kvp_record_new(),
			  *full = kvp_record_new();
	ck_assert(r && layers && full);
	kvp_record_str(r, "engine", "vllm");
	kvp_record_u64(r, "kv_pool_bytes", 57 * KVP_GIB);   /* 61,203,283,968 */
	kvp_record_u64(r, "num_blocks", 7296);
	kvp_record_f64(r, "utilization", 0.9);
	kvp_record_f64(r, "ttft_s", 0.5);
	kvp_record_bool(r, "fits", true);
	kvp_record_null(r, "nothing");
	kvp_record_u64(full, "layers", 32);
	kvp_record_rec(layers, "full", full);
	kvp_record_rec(r, "layers", layers);
	return r;
}

/* Parse one assertion through a whole expectations file, as users write it. */
static struct kvp_check_file *parse_one(const char *assertion, struct kvp_error *err)
{
	char buf[512];
	int n = snprintf(buf, sizeof buf,
			 "scenarios:\n  - name: t\n    model: m\n    gpu: g\n    expect:\n      - %s\n",
			 assertion);
	struct kvp_check_file *f = NULL;
	kvp_check_load_buffer("t.yaml", buf, (size_t)n, &f, err);
	return f;
}

/* What a writer writes for r, as a string (free it). */
static char *written(void (*writer)(FILE *, const struct kvp_check_report *),
		     const struct kvp_check_report *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(mem);
	writer(mem, r);
	fclose(mem);
	return buf;
}

static const struct op_case {
	const char *assertion;
	enum kvp_check_outcome want;
} op_cases[] = {
	/* == and != on whole numbers, sizes, bools and strings */
	{"num_blocks == 7296", KVP_CHECK_PASS},
	{"num_blocks == 7297", KVP_CHECK_FAIL},
	{"kv_pool_bytes == 57GiB", KVP_CHECK_PASS},
	{"kv_pool_bytes == 61203283968", KVP_CHECK_PASS},
	{"kv_pool_bytes == 61203283969", KVP_CHECK_FAIL},
	{"num_blocks != 7295", KVP_CHECK_PASS},
	{"num_blocks != 7296", KVP_CHECK_FAIL},
	{"fits == true", KVP_CHECK_PASS},
	{"fits == false", KVP_CHECK_FAIL},
	{"fits != false", KVP_CHECK_PASS},
	{"fits != true", KVP_CHECK_FAIL},
	{"engine == vllm", KVP_CHECK_PASS},
	{"engine == \"vllm\"", KVP_CHECK_PASS},
	{"engine == 'sglang'", KVP_CHECK_FAIL},
	{"engine != sglang", KVP_CHECK_PASS},
	{"engine != vllm", KVP_CHECK_FAIL},
	{"layers.full.layers == 32", KVP_CHECK_PASS},
	{"fits: true", KVP_CHECK_PASS},
	{"num_blocks: 7296", KVP_CHECK_PASS},
	{"engine: \"trtllm\"", KVP_CHECK_FAIL},
	/* ordering, on each side of 7,296 */
	{"num_blocks < 7297", KVP_CHECK_PASS},
	{"num_blocks < 7296", KVP_CHECK_FAIL},
	{"num_blocks <= 7296", KVP_CHECK_PASS},
	{"num_blocks <= 7295", KVP_CHECK_FAIL},
	{"num_blocks > 7295", KVP_CHECK_PASS},
	{"num_blocks > 7296", KVP_CHECK_FAIL},
	{"num_blocks >= 7296", KVP_CHECK_PASS},
	{"num_blocks >= 7297", KVP_CHECK_FAIL},
	{"num_blocks > -1", KVP_CHECK_PASS},
	{"kv_pool_bytes < 57.5GiB", KVP_CHECK_PASS},
	{"kv_pool_bytes >= 58GiB", KVP_CHECK_FAIL},
	{"ttft_s <= 0.5", KVP_CHECK_PASS},
	{"ttft_s < 0.5", KVP_CHECK_FAIL},
	{"utilization > 0.89", KVP_CHECK_PASS},
	{"utilization >= 0.91", KVP_CHECK_FAIL},
	/* ~ within P%: |got - want| <= P% of |want| */
	/* |57 - 60| GiB = 3 GiB = 5% of 60 GiB exactly: holds */
	{"kv_pool_bytes ~ 60GiB within 5%", KVP_CHECK_PASS},
	/* one byte more: 3,221,225,473 x 100 = 322,122,547,300 > 5 x 64,424,509,441
	 * = 322,122,547,205: beyond */
	{"kv_pool_bytes ~ 64424509441 within 5%", KVP_CHECK_FAIL},
	/* |57 - 50| GiB = 7 GiB = 14% of 50 GiB exactly: holds; 13.99% does not */
	{"kv_pool_bytes ~ 50GiB within 14%", KVP_CHECK_PASS},
	{"kv_pool_bytes ~ 50GiB within 13.99%", KVP_CHECK_FAIL},
	/* 7k = 7,168 tokens; 7,296 - 7,168 = 128 = 1.785714...% of 7,168 */
	{"num_blocks ~ 7k within 1.7858%", KVP_CHECK_PASS},
	{"num_blocks ~ 7k within 1.7857%", KVP_CHECK_FAIL},
	/* doubles: |0.5 - 0.625| = 0.125 = 20% of 0.625: holds at the edge */
	{"ttft_s ~ 0.625 within 20%", KVP_CHECK_PASS},
	{"ttft_s ~ 0.625 within 19.99%", KVP_CHECK_FAIL},
	/* |0.5 - 0.4| = 0.1 = 25% of 0.4 (0.1 is not exact in binary) */
	{"ttft_s ~ 0.4 within 25%", KVP_CHECK_PASS},
	{"ttft_s ~ 0.4 within 24.999%", KVP_CHECK_FAIL},
	{"utilization ~ 0.9 within 0%", KVP_CHECK_PASS},
	/* errors: fields that do not exist, groups, and types that do not compare */
	{"max_sequencs >= 1", KVP_CHECK_ERROR},
	{"layers == 32", KVP_CHECK_ERROR},
	{"layers.full == 32", KVP_CHECK_ERROR},
	{"fits >= 1", KVP_CHECK_ERROR},
	{"fits == 1", KVP_CHECK_ERROR},
	{"engine < 3", KVP_CHECK_ERROR},
	{"num_blocks == vllm", KVP_CHECK_ERROR},
	{"num_blocks == true", KVP_CHECK_ERROR},
	{"nothing == 0", KVP_CHECK_ERROR},
};

START_TEST(test_operators)
{
	const struct op_case *c = &op_cases[_i];
	struct kvp_error err = {0};
	struct kvp_check_file *f = parse_one(c->assertion, &err);
	ck_assert_msg(f != NULL, "%s: %s", c->assertion, err.msg);
	ck_assert_uint_eq(f->scenarios[0].nasserts, 1);
	struct kvp_record *r = sample();
	struct kvp_check_result res;
	kvp_check_eval("t.yaml", &f->scenarios[0].asserts[0], r, &res);
	ck_assert_msg(res.outcome == c->want, "%s: outcome %d, want %d (%s)", c->assertion,
		      res.outcome, c->want, res.why);
	if (res.outcome == KVP_CHECK_ERROR)   /* located at the assertion, line 6 */
		ck_assert_msg(strncmp(res.why, "t.yaml:6:", 9) == 0, "%s", res.why);
	if (res.outcome == KVP_CHECK_FAIL)
		ck_assert_msg(strstr(res.why, "got ") == res.why, "%s", res.why);
	kvp_record_free(r);
	kvp_check_file_free(f);
}
END_TEST

START_TEST(test_assertion_parts)
{
	struct kvp_error err = {0};
	struct kvp_check_file *f = parse_one("kv_pool_bytes ~ 58GiB within 2.5%", &err);
	ck_assert_ptr_nonnull(f);
	const struct kvp_check_assert *a = &f->scenarios[0].asserts[0];
	ck_assert_str_eq(a->field, "kv_pool_bytes");
	ck_assert_int_eq(a->op, KVP_CHECK_OP_NEAR);
	ck_assert(a->want.exact);
	ck_assert_uint_eq(a->want.u, 58 * KVP_GIB);
	ck_assert_uint_eq(a->within.num, 25);
	ck_assert_uint_eq(a->within.scale, 1);
	/* "      - " puts the field at column 9 of line 6, the value at 9 + 16 */
	ck_assert_int_eq(a->line, 6);
	ck_assert_int_eq(a->col, 9);
	ck_assert_int_eq(a->value_col, 25);
	kvp_check_file_free(f);
	/* the defaults of a scenario: budget, tp = pp = 1 */
	f = parse_one("fits == true", &err);
	ck_assert_str_eq(f->scenarios[0].command, "budget");
	ck_assert_uint_eq(f->scenarios[0].opts.par.tp, 1);
	kvp_check_file_free(f);
}
END_TEST

/* Records shaped like perf's (rows by batch) and frag's (rows by policy,
 * allocator or block size, with nulls), written by hand. */
static struct kvp_record *row(const char *policy, const char *alloc, uint64_t block, double used)
{
	struct kvp_record *x = kvp_record_new();
	ck_assert_ptr_nonnull(x);
	kvp_record_str(x, "policy", policy);
	if (alloc)
		kvp_record_str(x, "allocator", alloc);
	else
		kvp_record_null(x, "allocator");
	if (block)
		kvp_record_u64(x, "block_size", block);
	else
		kvp_record_null(x, "block_size");
	kvp_record_f64(x, "used_fraction", used);
	return x;
}

static struct kvp_record *rows_sample(void)
{
	struct kvp_record *r = kvp_record_new();
	kvp_record_str(r, "model", "m");
	kvp_record_push(r, "rows", row("contiguous-max", "first-fit", 0, 0.25));
	kvp_record_push(r, "rows", row("contiguous-max", "best-fit", 0, 0.26));
	kvp_record_push(r, "rows", row("paged", NULL, 16, 0.985));
	kvp_record_push(r, "rows", row("paged", NULL, 32, 0.97));
	return r;
}

static struct kvp_record *one_row_sample(void)
{
	struct kvp_record *r = kvp_record_new(), *x = kvp_record_new();
	kvp_record_u64(r, "max_batch", 11);
	kvp_record_u64(x, "batch", 8);
	kvp_record_f64(x, "ttft_s", 0.5);
	kvp_record_bool(x, "fits", true);
	kvp_record_push(r, "rows", x);
	return r;
}

static const struct row_case {
	bool one;                 /* one_row_sample, else rows_sample */
	const char *assertion;
	enum kvp_check_outcome want;
	const char *why;          /* the start of the message after "t.yaml:6:9: error: FIELD: " */
} row_cases[] = {
	{false, "rows[policy=paged,block_size=16].used_fraction == 0.985", KVP_CHECK_PASS, NULL},
	{false, "rows[policy=paged,block_size=32].used_fraction < 0.97", KVP_CHECK_FAIL, NULL},
	{false, "rows[block_size=32].used_fraction >= 0.97", KVP_CHECK_PASS, NULL},
	{false, "rows[block_size=32.0].used_fraction >= 0.97", KVP_CHECK_PASS, NULL},
	{false, "rows[policy=contiguous-max,allocator=best-fit].used_fraction == 0.26",
	 KVP_CHECK_PASS, NULL},
	{false, "rows[allocator=null,block_size=16].policy == paged", KVP_CHECK_PASS, NULL},
	{false, "rows[policy=paged,block_size=16].block_size: 16", KVP_CHECK_PASS, NULL},
	{false, "model == m", KVP_CHECK_PASS, NULL},
	/* errors: ambiguous, absent, misnamed, not a row */
	{false, "rows[policy=paged].used_fraction > 0", KVP_CHECK_ERROR,
	 "[policy=paged] matches 2 rows ([policy=paged,block_size=16], "
	 "[policy=paged,block_size=32]); add a field to the selector"},
	{false, "rows[policy=paged,block_size=8].used_fraction > 0", KVP_CHECK_ERROR,
	 "no such row; the rows are [policy=contiguous-max,allocator=first-fit], "
	 "[policy=contiguous-max,allocator=best-fit], [policy=paged,block_size=16], "
	 "[policy=paged,block_size=32]"},
	{false, "rows[polcy=paged].used_fraction > 0", KVP_CHECK_ERROR,
	 "the rows have no field named in [polcy=paged]"},
	{false, "used_fraction > 0", KVP_CHECK_ERROR,
	 "is a field of each of the 4 rows; name one, e.g. "
	 "rows[policy=contiguous-max,allocator=first-fit].used_fraction"},
	{false, "rows[block_size=16].used_fractoin > 0", KVP_CHECK_ERROR,
	 "no such field in the output; did you mean rows[block_size=16].used_fraction?"},
	{false, "rows == 4", KVP_CHECK_ERROR, "is a list of 4 rows, not a value"},
	{false, "rows[block_size=16] == 1", KVP_CHECK_ERROR, "is a row, not a value"},
	{false, "model[x=1].y == 1", KVP_CHECK_ERROR, "'model' is not a list of rows"},
	/* one row: its fields may be named bare */
	{true, "ttft_s <= 0.5", KVP_CHECK_PASS, NULL},
	{true, "ttft_s < 0.5", KVP_CHECK_FAIL, NULL},
	{true, "fits == true", KVP_CHECK_PASS, NULL},
	{true, "rows[batch=8].ttft_s == 0.5", KVP_CHECK_PASS, NULL},
	{true, "max_batch == 11", KVP_CHECK_PASS, NULL},
	{true, "ttft <= 1", KVP_CHECK_ERROR, "no such field in the output; did you mean ttft_s?"},
};

START_TEST(test_rows)
{
	const struct row_case *c = &row_cases[_i];
	struct kvp_error err = {0};
	struct kvp_check_file *f = parse_one(c->assertion, &err);
	ck_assert_msg(f != NULL, "%s: %s", c->assertion, err.msg);
	struct kvp_record *r = c->one ? one_row_sample() : rows_sample();
	struct kvp_check_result res;
	const struct kvp_check_assert *a = &f->scenarios[0].asserts[0];
	kvp_check_eval("t.yaml", a, r, &res);
	ck_assert_msg(res.outcome == c->want, "%s: outcome %d, want %d (%s)", c->assertion,
		      res.outcome, c->want, res.why);
	if (c->why) {
		char want[640];
		snprintf(want, sizeof want, "t.yaml:6:9: error: %s: %s", a->field, c->why);
		ck_assert_msg(strncmp(res.why, want, strlen(want)) == 0, "\n got: %s\nwant: %s",
			      res.why, want);
	}
	kvp_record_free(r);
	kvp_check_file_free(f);
}
END_TEST

/* Row selectors that do not parse: the column of the mistake, by hand
 * ("      - " puts the field at column 9 of line 6). */
START_TEST(test_row_selector_syntax)
{
	static const struct { const char *assertion; int col; const char *msg; } cases[] = {
		{"rows[batch 8].ttft_s < 1", 19, "a row selector reads [FIELD=VALUE,...]"},
		{"rows[=8].ttft_s < 1", 14, "a row selector reads [FIELD=VALUE,...]"},
		{"rows[batch=].ttft_s < 1", 20, "missing VALUE after '='"},
		{"rows[batch=8;x=1].ttft_s < 1", 21, "unexpected character in the row selector"},
		{"rows[batch=8", 13, "unclosed '[' of a row selector"},
		{"rows[batch=8]..ttft_s < 1", 9, "an assertion is 'FIELD OP VALUE'"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct kvp_error err = {0};
		struct kvp_check_file *f = parse_one(cases[i].assertion, &err);
		ck_assert_msg(f == NULL, "%s parsed", cases[i].assertion);
		ck_assert_msg(err.line == 6 && err.col == cases[i].col &&
				      strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) == 0,
			      "%s: %d:%d %s", cases[i].assertion, err.line, err.col, err.msg);
	}
	/* a selector keeps the whole name, in text and in map form */
	struct kvp_error err = {0};
	struct kvp_check_file *f = parse_one("rows[policy=paged,block_size=16].used_fraction > 0.9",
					     &err);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(f->scenarios[0].asserts[0].field,
			 "rows[policy=paged,block_size=16].used_fraction");
	kvp_check_file_free(f);
	f = parse_one("rows[batch=8].fits: true", &err);
	ck_assert_msg(f != NULL, "%s", err.msg);
	ck_assert_str_eq(f->scenarios[0].asserts[0].field, "rows[batch=8].fits");
	ck_assert_int_eq(f->scenarios[0].asserts[0].op, KVP_CHECK_OP_EQ);
	kvp_check_file_free(f);
}
END_TEST

START_TEST(test_percent_and_near)
{
	struct kvp_check_pct p;
	ck_assert_int_eq(kvp_check_pct_parse("2%", &p), 0);
	ck_assert_uint_eq(p.num, 2);
	ck_assert_uint_eq(p.scale, 0);
	ck_assert_int_eq(kvp_check_pct_parse("0.25%", &p), 0);
	ck_assert_uint_eq(p.num, 25);
	ck_assert_uint_eq(p.scale, 2);
	ck_assert_double_eq_tol(kvp_check_pct_fraction(&p), 0.0025, 1e-15);
	ck_assert_int_eq(kvp_check_pct_parse("1 %", &p), 0);
	ck_assert_int_eq(kvp_check_pct_parse("2", &p), -1);     /* the % is required */
	ck_assert_int_eq(kvp_check_pct_parse("%", &p), -1);
	ck_assert_int_eq(kvp_check_pct_parse("-1%", &p), -1);
	ck_assert_int_eq(kvp_check_pct_parse("1.2.3%", &p), -1);
	ck_assert_int_eq(kvp_check_pct_parse("1.0000000001%", &p), -2);  /* 10 decimals */
	ck_assert_int_eq(kvp_check_pct_parse("99999999999999999999%", &p), -2);

	/* 5% of 100: 95 and 105 hold, 94 and 106 do not */
	kvp_check_pct_parse("5%", &p);
	ck_assert(kvp_check_near_u64(105, 100, &p));
	ck_assert(kvp_check_near_u64(95, 100, &p));
	ck_assert(!kvp_check_near_u64(106, 100, &p));
	ck_assert(!kvp_check_near_u64(94, 100, &p));
	/* zero: only zero is within any percentage of zero */
	ck_assert(kvp_check_near_u64(0, 0, &p));
	ck_assert(!kvp_check_near_u64(1, 0, &p));
	/* huge values do not overflow: 2^64 - 1 against 2^64 - 2 is 5.4e-18 % off */
	struct kvp_check_pct tiny;
	kvp_check_pct_parse("0.000000001%", &tiny);
	ck_assert(kvp_check_near_u64(UINT64_MAX, UINT64_MAX - 1, &tiny));
	ck_assert(!kvp_check_near_u64(UINT64_MAX, 1, &tiny));
	/* 100% of 2^63 - 1 reaches 0 and 2^64 - 2 */
	struct kvp_check_pct all;
	kvp_check_pct_parse("100%", &all);
	ck_assert(kvp_check_near_u64(0, INT64_MAX, &all));
	ck_assert(kvp_check_near_u64(UINT64_MAX - 1, INT64_MAX, &all));
	ck_assert(!kvp_check_near_u64(UINT64_MAX, INT64_MAX, &all));
	/* doubles: 0.55 is 10% above 0.5 to a reader (and 0.55 - 0.5 > 0.05 in binary) */
	struct kvp_check_pct ten;
	kvp_check_pct_parse("10%", &ten);
	ck_assert(kvp_check_near_f64(0.55, 0.5, &ten));
	ck_assert(kvp_check_near_f64(0.45, 0.5, &ten));
	ck_assert(!kvp_check_near_f64(0.5500001, 0.5, &ten));
	ck_assert(!kvp_check_near_f64(NAN, 0.5, &ten));
	ck_assert(kvp_check_near_f64(-0.55, -0.5, &ten));
}
END_TEST

START_TEST(test_good_files)
{
	struct kvp_error err = {0};
	struct kvp_check_file *f;
	ck_assert_msg(kvp_check_load(DATA "check/pass.yaml", &f, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert_uint_eq(f->n, 2);
	const struct kvp_check_scenario *s = &f->scenarios[0];
	ck_assert_str_eq(s->name, "llama2-fixed");
	/* defaults reached the scenario: 80 GiB, 0.9, 13 + 1 + 1 GiB, 4,096 tokens */
	ck_assert(s->opts.has_gpu_memory);
	ck_assert_uint_eq(s->opts.gpu_memory_bytes, 80 * KVP_GIB);
	ck_assert_double_eq(s->opts.utilization, 0.9);
	ck_assert_uint_eq(s->opts.weights_bytes, 13 * KVP_GIB);
	ck_assert_uint_eq(s->opts.context, 4096);
	ck_assert_uint_eq(s->opts.batch, 28);
	ck_assert_str_eq(kvp_check_input_get(s, "batch")->value, "28");
	struct kvp_check_report *r;
	ck_assert_int_eq(kvp_check_run(f, &r, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(r->failed, 0);
	ck_assert_uint_eq(r->errors, 0);
	ck_assert_uint_eq(r->passed, f->scenarios[0].nasserts + f->scenarios[1].nasserts);
	ck_assert_uint_eq(kvp_record_get(r->s[0].record, "num_blocks")->u, 7296);
	kvp_check_report_free(r);
	kvp_check_file_free(f);

	/* fail.yaml: ten assertions, each false by the smallest step */
	ck_assert_int_eq(kvp_check_load(DATA "check/fail.yaml", &f, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_check_run(f, &r, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(r->passed, 0);
	ck_assert_uint_eq(r->failed, 10);
	ck_assert_uint_eq(r->errors, 0);
	ck_assert_str_eq(r->s[0].results[1].why, "got 28, want >= 64");
	kvp_check_report_free(r);
	kvp_check_file_free(f);
}
END_TEST

/* rows.yaml: perf and frag scenarios, every figure hand arithmetic in the file. */
START_TEST(test_rows_files)
{
	struct kvp_error err = {0};
	struct kvp_check_file *f;
	struct kvp_check_report *r;
	ck_assert_msg(kvp_check_load(DATA "check/rows.yaml", &f, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert_uint_eq(f->n, 4);
	const struct kvp_check_scenario *s = &f->scenarios[1];
	ck_assert_str_eq(s->command, "perf");
	ck_assert_uint_eq(s->perf.prompt, 2047);
	ck_assert_uint_eq(s->perf.nbatch, 2);
	ck_assert_uint_eq(s->perf.batches[1], 12);
	ck_assert_str_eq(kvp_check_input_get(s, "batch")->value, "[11, 12]");
	/* requests is frag's: in the defaults, perf scenarios do not take it */
	ck_assert_ptr_null(kvp_check_input_get(s, "requests"));
	s = &f->scenarios[2];
	ck_assert_str_eq(s->command, "frag");
	ck_assert_uint_eq(s->frag.opts.requests, 2000);
	ck_assert_uint_eq(s->frag.opts.nblock, 2);
	ck_assert(s->frag.opts.fit[0] && !s->frag.opts.fit[1]);
	/* the workload path, beside the expectations file */
	ck_assert_str_eq(s->frag.workload, DATA "check/prompts-1000.yaml");
	ck_assert_int_eq(kvp_check_run(f, &r, &err), KVP_STATUS_OK);
	size_t n = 0;
	for (size_t i = 0; i < f->n; i++)
		n += f->scenarios[i].nasserts;
	ck_assert_msg(r->failed == 0 && r->errors == 0, "%zu failed, %zu errors", r->failed,
		      r->errors);
	ck_assert_uint_eq(r->passed, n);
	/* 11 x 2,047 x 524,288 B, read back through the selector */
	const struct kvp_value *rows = kvp_record_get(r->s[1].record, "rows");
	ck_assert_int_eq(rows->type, KVP_VALUE_LIST);
	ck_assert_uint_eq(rows->nlist, 2);
	ck_assert_uint_eq(kvp_record_get(rows->list[0], "decode_kv_bytes_per_step")->u, 11805392896u);

	/* the baseline records every row under its key and reads it back */
	char *buf = written(kvp_check_baseline_write, r);
	struct kvp_check_baseline *b;
	ck_assert_msg(kvp_check_baseline_load_buffer("b.yaml", buf, strlen(buf), &b, &err) ==
			      KVP_STATUS_OK, "%s\n%s", err.msg, buf);
	const struct kvp_record *fl = b->e[1].fields;
	ck_assert_uint_eq(kvp_record_get(fl, "max_batch")->u, 11);
	bool found = false;
	for (size_t i = 0; i < fl->n; i++)
		if (strcmp(fl->fields[i].name, "rows[batch=11].decode_kv_bytes_per_step") == 0)
			found = fl->fields[i].v.u == 11805392896u;
	ck_assert_msg(found, "no rows[batch=11] field in\n%s", buf);
	fl = b->e[2].fields;
	found = false;
	for (size_t i = 0; i < fl->n; i++)
		if (strcmp(fl->fields[i].name, "rows[policy=paged,block_size=32].max_sequences") == 0)
			found = fl->fields[i].v.u == 114;
	ck_assert_msg(found, "no paged 32 row in\n%s", buf);
	struct kvp_check_pct zero = {0, 0, "0%"};
	ck_assert_int_eq(kvp_check_compare(r, b, &zero), KVP_STATUS_OK);
	for (size_t i = 0; i < f->n; i++)
		ck_assert_int_eq(r->s[i].baseline, KVP_CHECK_BASELINE_SAME);
	kvp_check_baseline_free(b);
	kvp_check_report_free(r);
	free(buf);

	/* a row field that moved: 0.0125 s recorded where the run gives
	 * 25,764,036,608 / 2.039e12 = 0.0126356236 s, +1.0849888%: beyond 1%,
	 * within 1.1% */
	static const char base[] =
		"baseline:\n  - scenario: perf-two-batches\n    command: perf\n"
		"    fields:\n      \"rows[batch=11].tpot_s\": 0.0125\n";
	ck_assert_int_eq(kvp_check_baseline_load_buffer("b.yaml", base, strlen(base), &b, &err),
			 KVP_STATUS_OK);
	static const struct { const char *tol; enum kvp_check_baseline_state want; } tol[] = {
		{"1%", KVP_CHECK_BASELINE_DRIFT}, {"1.1%", KVP_CHECK_BASELINE_SAME}};
	for (size_t k = 0; k < 2; k++) {
		struct kvp_check_pct p;
		kvp_check_pct_parse(tol[k].tol, &p);
		ck_assert_int_eq(kvp_check_run(f, &r, &err), KVP_STATUS_OK);
		ck_assert_int_eq(kvp_check_compare(r, b, &p), KVP_STATUS_OK);
		ck_assert_int_eq(r->s[1].baseline, tol[k].want);
		const struct kvp_check_drift *d = NULL;
		for (size_t i = 0; i < r->s[1].ndrift; i++)
			if (r->s[1].drift[i].fail)
				d = &r->s[1].drift[i];
		if (tol[k].want == KVP_CHECK_BASELINE_DRIFT) {
			ck_assert_ptr_nonnull(d);
			ck_assert_str_eq(d->field, "rows[batch=11].tpot_s");
			ck_assert_double_eq_tol(d->change, 25764036608.0 / 2.039e12 / 0.0125 - 1, 1e-12);
		} else {
			ck_assert_ptr_null(d);
		}
		kvp_check_report_free(r);
	}
	kvp_check_baseline_free(b);
	kvp_check_file_free(f);

	/* rows-fail.yaml: each assertion false by the smallest step */
	ck_assert_int_eq(kvp_check_load(DATA "check/rows-fail.yaml", &f, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_check_run(f, &r, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(r->passed, 0);
	ck_assert_uint_eq(r->failed, 7);
	ck_assert_uint_eq(r->errors, 0);
	ck_assert_str_eq(r->s[0].results[1].why, "got 11805392896, want == 11805392897");
	ck_assert_str_eq(r->s[1].results[0].why, "got 115, want >= 116");
	ck_assert_str_eq(r->s[1].results[2].why, "got 32, want == 16");
	kvp_check_report_free(r);
	kvp_check_file_free(f);
}
END_TEST

/* tests/data/bad/check-*.yaml: the first line of each reads
 * "# error: LINE:COL: FIELD: MESSAGE", counted by hand. */
static const char *const bad_files[] = {
	"check-unknown-key.yaml", "check-bad-operator.yaml", "check-near-no-within.yaml",
	"check-bad-percent.yaml", "check-order-string.yaml", "check-within-on-eq.yaml",
	"check-duplicate-name.yaml", "check-missing-model.yaml", "check-unknown-command.yaml",
	"check-expect-not-list.yaml", "check-bad-tp.yaml", "check-two-key-map.yaml",
	"check-name-in-defaults.yaml", "check-no-scenarios.yaml",
	/* perf and frag scenarios, and row selectors */
	"check-perf-no-gpu.yaml", "check-perf-bad-offload.yaml", "check-perf-key-in-budget.yaml",
	"check-perf-batch-twice.yaml", "check-perf-batch-list-budget.yaml",
	"check-perf-fraction-alone.yaml", "check-row-selector.yaml", "check-frag-no-workload.yaml",
	"check-frag-bad-block.yaml", "check-frag-bad-policy.yaml",
	/* these load, and fail once their scenario runs */
	"check-unknown-field.yaml", "check-type-mismatch.yaml", "check-tp-not-divide.yaml",
	"check-group-field.yaml", "check-frag-unknown-workload.yaml", "check-perf-no-row.yaml",
	"check-perf-bare-row-field.yaml",
};

START_TEST(test_bad_files)
{
	char path[1024], head[512], want[2048], got[1400];
	snprintf(path, sizeof path, DATA "bad/%s", bad_files[_i]);
	FILE *fp = fopen(path, "r");
	ck_assert_ptr_nonnull(fp);
	ck_assert_ptr_nonnull(fgets(head, sizeof head, fp));
	fclose(fp);
	head[strcspn(head, "\n")] = '\0';
	ck_assert_msg(strncmp(head, "# error: ", 9) == 0, "%s: no '# error:' line", path);
	snprintf(want, sizeof want, "%s:%s", path, head + 9);
	/* "path:L:C: FIELD: MSG" is "path:L:C: error: FIELD: MSG" once formatted */
	char *third = strchr(strchr(want + strlen(path) + 1, ':') + 1, ':');
	ck_assert_ptr_nonnull(third);
	char rest[1000];
	snprintf(rest, sizeof rest, "%s", third + 2);
	snprintf(third, sizeof want - (size_t)(third - want), ": error: %s", rest);

	struct kvp_error err = {0};
	struct kvp_check_file *f;
	kvp_status st = kvp_check_load(path, &f, &err);
	struct kvp_error oerr = {0}; /* opened one scenario at a time: the same first error */
	struct kvp_check_file *of;
	ck_assert_int_eq(kvp_check_open(path, &of, &oerr), st);
	ck_assert(strcmp(oerr.msg, err.msg) == 0 && oerr.line == err.line && oerr.col == err.col);
	kvp_check_file_free(of);
	if (st) {
		ck_assert_ptr_null(f);
		ck_assert_int_eq(kvp_status_exit_code(st), 3);
		kvp_error_format(&err, got, sizeof got);
	} else {
		struct kvp_check_report *r;
		ck_assert_int_eq(kvp_check_run(f, &r, &err), KVP_STATUS_OK);
		ck_assert_uint_eq(r->errors, 1);
		const struct kvp_check_scenario_result *res = &r->s[0];
		if (res->record)
			snprintf(got, sizeof got, "%s", res->results[0].why);
		else
			kvp_error_format(&res->err, got, sizeof got);
		kvp_check_report_free(r);
		kvp_check_file_free(f);
	}
	ck_assert_msg(strncmp(got, want, strlen(want)) == 0, "\n got: %s\nwant: %s", got, want);
}
END_TEST

START_TEST(test_baseline_round_trip)
{
	struct kvp_error err = {0};
	struct kvp_check_file *f;
	struct kvp_check_report *r;
	ck_assert_int_eq(kvp_check_load(DATA "check/pass.yaml", &f, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_check_run(f, &r, &err), KVP_STATUS_OK);
	char *buf = written(kvp_check_baseline_write, r);
	size_t len = strlen(buf);
	struct kvp_check_baseline *b;
	ck_assert_msg(kvp_check_baseline_load_buffer("b.yaml", buf, len, &b, &err) == KVP_STATUS_OK,
		      "%d:%d: %s: %s\n%s", err.line, err.col, err.field, err.msg, buf);
	ck_assert_uint_eq(b->n, 2);
	ck_assert_str_eq(b->e[0].scenario, "llama2-fixed");
	const struct kvp_record *fl = b->e[0].fields;
	/* every scalar field, flattened, with its type */
	ck_assert_uint_eq(kvp_record_get(fl, "kv_pool_bytes")->u, 57 * KVP_GIB);
	ck_assert_int_eq(kvp_record_get(fl, "utilization")->type, KVP_VALUE_F64);
	ck_assert_double_eq(kvp_record_get(fl, "utilization")->f, 0.9);
	ck_assert_int_eq(kvp_record_get(fl, "fits")->type, KVP_VALUE_BOOL);
	ck_assert_str_eq(kvp_record_get(fl, "model")->s, "llama-2-7b");
	bool nested = false;
	for (size_t i = 0; i < fl->n; i++)
		nested |= strcmp(fl->fields[i].name, "layers.full.bytes_per_token") == 0;
	ck_assert(nested);
	ck_assert_str_eq(kvp_record_get(b->e[0].inputs, "gpu_memory")->s, "80GiB");

	/* the same run against its own baseline holds at 0% */
	struct kvp_check_pct zero = {0, 0, "0%"};
	ck_assert_int_eq(kvp_check_compare(r, b, &zero), KVP_STATUS_OK);
	ck_assert_int_eq(r->s[0].baseline, KVP_CHECK_BASELINE_SAME);
	ck_assert_int_eq(r->s[1].baseline, KVP_CHECK_BASELINE_SAME);
	ck_assert_uint_eq(r->s[0].ndrift, 0);
	ck_assert_uint_eq(r->failed, 0);
	ck_assert_str_eq(r->s[0].inputs_changed, "");
	kvp_check_baseline_free(b);
	kvp_check_report_free(r);
	kvp_check_file_free(f);

	/* a new run with utilization 0.85 against that baseline: pool 68 - 15 =
	 * 53 GiB against 57: (53 - 57) / 57 = -7.0175%; 7% is not enough, 7.1% is
	 * for the pool, but the sequences drop 28 -> 26 (-7.14%) and fits turns false */
	ck_assert_int_eq(kvp_check_load(DATA "check/drift.yaml", &f, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_check_run(f, &r, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_check_baseline_load_buffer("b.yaml", buf, len, &b, &err), KVP_STATUS_OK);
	struct kvp_check_pct seven;
	kvp_check_pct_parse("7%", &seven);
	ck_assert_int_eq(kvp_check_compare(r, b, &seven), KVP_STATUS_OK);
	ck_assert_int_eq(r->s[0].baseline, KVP_CHECK_BASELINE_DRIFT);
	const struct kvp_check_drift *pool = NULL;
	for (size_t i = 0; i < r->s[0].ndrift; i++)
		if (strcmp(r->s[0].drift[i].field, "kv_pool_bytes") == 0)
			pool = &r->s[0].drift[i];
	ck_assert_ptr_nonnull(pool);
	ck_assert(pool->fail);
	ck_assert_double_eq_tol(pool->change, -4.0 / 57.0, 1e-12);
	ck_assert_str_eq(pool->old_value, "61203283968 (57.00 GiB)");
	ck_assert_str_eq(pool->new_value, "56908316672 (53.00 GiB)");
	ck_assert_str_eq(r->s[0].inputs_changed, "utilization 0.9 -> 0.85");
	ck_assert_uint_eq(r->failed, 1);
	kvp_check_baseline_free(b);
	kvp_check_report_free(r);
	kvp_check_file_free(f);
	free(buf);
}
END_TEST

START_TEST(test_baseline_tolerance_edge)
{
	/* baseline-60g.yaml records 60 GiB where kvplan computes 57: -3/60 = -5%
	 * exactly; utilization 1.0 where it is 0.9: -10% */
	static const struct { const char *tol; enum kvp_check_baseline_state s0, s1; } cases[] = {
		{"5%", KVP_CHECK_BASELINE_SAME, KVP_CHECK_BASELINE_DRIFT},
		{"4.9999%", KVP_CHECK_BASELINE_DRIFT, KVP_CHECK_BASELINE_DRIFT},
		{"10%", KVP_CHECK_BASELINE_SAME, KVP_CHECK_BASELINE_SAME},
		{"9.999%", KVP_CHECK_BASELINE_SAME, KVP_CHECK_BASELINE_DRIFT},
	};
	struct kvp_error err = {0};
	struct kvp_check_file *f;
	struct kvp_check_baseline *b;
	ck_assert_int_eq(kvp_check_load(DATA "check/pass.yaml", &f, &err), KVP_STATUS_OK);
	ck_assert_msg(kvp_check_baseline_load(DATA "check/baseline-60g.yaml", &b, &err) == 0, "%s",
		      err.msg);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct kvp_check_report *r;
		struct kvp_check_pct tol;
		ck_assert_int_eq(kvp_check_pct_parse(cases[i].tol, &tol), 0);
		ck_assert_int_eq(kvp_check_run(f, &r, &err), KVP_STATUS_OK);
		ck_assert_int_eq(kvp_check_compare(r, b, &tol), KVP_STATUS_OK);
		ck_assert_msg(r->s[0].baseline == cases[i].s0 && r->s[1].baseline == cases[i].s1,
			      "%s: %d %d", cases[i].tol, r->s[0].baseline, r->s[1].baseline);
		/* fields the baseline lacks are noted, never failed */
		for (size_t k = 0; k < r->s[0].ndrift; k++)
			if (strcmp(r->s[0].drift[k].field, "kv_pool_bytes") != 0)
				ck_assert(!r->s[0].drift[k].fail);
		kvp_check_report_free(r);
	}
	kvp_check_baseline_free(b);
	kvp_check_file_free(f);
}
END_TEST

/* A report made by hand: one scenario, a record with awkward doubles and text. */
static struct kvp_check_file hand_file;
static struct kvp_check_scenario hand_scenario;
static struct kvp_check_assert hand_asserts[2];
static struct kvp_check_result hand_results[2];

static struct kvp_check_report *hand_report(struct kvp_record *rec)
{
	memset(&hand_file, 0, sizeof hand_file);
	memset(&hand_scenario, 0, sizeof hand_scenario);
	snprintf(hand_file.path, sizeof hand_file.path, "x.yaml");
	snprintf(hand_scenario.name, sizeof hand_scenario.name, "a#b <\"&\">");
	snprintf(hand_scenario.command, sizeof hand_scenario.command, "budget");
	snprintf(hand_asserts[0].text, sizeof hand_asserts[0].text, "x < 1");
	snprintf(hand_asserts[0].field, sizeof hand_asserts[0].field, "x");
	hand_asserts[0].line = 3;
	hand_asserts[0].col = 9;
	snprintf(hand_asserts[1].text, sizeof hand_asserts[1].text, "y == 2");
	hand_scenario.asserts = hand_asserts;
	hand_scenario.nasserts = 2;
	hand_file.scenarios = &hand_scenario;
	hand_file.n = 1;
	struct kvp_check_report *r = calloc(1, sizeof *r);
	r->file = &hand_file;
	r->s = calloc(1, sizeof *r->s);
	r->s[0].record = rec;
	r->s[0].results = calloc(2, sizeof *r->s[0].results);
	hand_results[0] = (struct kvp_check_result){KVP_CHECK_FAIL, "1.5", "got 1.5, want < 1"};
	hand_results[1] = (struct kvp_check_result){KVP_CHECK_PASS, "2", ""};
	memcpy(r->s[0].results, hand_results, sizeof hand_results);
	r->passed = r->failed = 1;
	return r;
}

START_TEST(test_baseline_doubles_exact)
{
	struct kvp_record *rec = kvp_record_new();
	kvp_record_f64(rec, "third", 1.0 / 3.0);
	kvp_record_f64(rec, "sum", 0.1 + 0.2);        /* 0.30000000000000004 */
	kvp_record_f64(rec, "whole", 2.0);            /* stays a double: "2.0" */
	kvp_record_f64(rec, "tiny", 5e-324);
	kvp_record_str(rec, "text", "quote \" backslash \\ tab \t");
	kvp_record_u64(rec, "max", UINT64_MAX);
	struct kvp_check_report *r = hand_report(rec);
	char *buf = written(kvp_check_baseline_write, r);
	struct kvp_error err = {0};
	struct kvp_check_baseline *b;
	ck_assert_msg(kvp_check_baseline_load_buffer("b.yaml", buf, strlen(buf), &b, &err) == 0,
		      "%s\n%s",
		      err.msg, buf);
	const struct kvp_record *fl = b->e[0].fields;
	ck_assert_str_eq(b->e[0].scenario, "a#b <\"&\">");
	ck_assert(kvp_record_get(fl, "third")->f == 1.0 / 3.0);
	ck_assert(kvp_record_get(fl, "sum")->f == 0.1 + 0.2);
	ck_assert_int_eq(kvp_record_get(fl, "whole")->type, KVP_VALUE_F64);
	ck_assert(kvp_record_get(fl, "tiny")->f == 5e-324);
	ck_assert_str_eq(kvp_record_get(fl, "text")->s, "quote \" backslash \\ tab \t");
	ck_assert_uint_eq(kvp_record_get(fl, "max")->u, UINT64_MAX);
	kvp_check_baseline_free(b);
	free(buf);
	kvp_check_report_free(r);
}
END_TEST

START_TEST(test_tap)
{
	struct kvp_check_report *r = hand_report(kvp_record_new());
	char *buf = written(kvp_check_write_tap, r);
	/* TAP 13: version, plan, one line per point; '#' escaped in descriptions;
	 * a failure's YAML block indented two spaces between --- and ... */
	ck_assert_msg(strncmp(buf, "TAP version 13\n1..2\n", 20) == 0, "%s", buf);
	ck_assert_msg(strstr(buf, "\nnot ok 1 - a\\#b <\"&\">: x < 1\n  ---\n") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "  message: \"x.yaml:3:9: x < 1: got 1.5, want < 1\"\n") != NULL,
		      "%s", buf);
	ck_assert_msg(strstr(buf, "  severity: fail\n") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "  ...\nok 2 - a\\#b <\"&\">: y == 2\n") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "\n# 1 passed, 1 failed, 0 errors\n") != NULL, "%s", buf);
	free(buf);
	kvp_check_report_free(r);
}
END_TEST

START_TEST(test_junit)
{
	struct kvp_check_report *r = hand_report(kvp_record_new());
	char *buf = written(kvp_check_write_junit, r);
	/* counts add up; names and messages are escaped (validity against
	 * tests/data/check/junit.xsd is tests/cli-check.sh's, with xmllint) */
	ck_assert_msg(strstr(buf, "<testsuites name=\"kvplan check x.yaml\" tests=\"2\" "
				  "failures=\"1\" errors=\"0\"") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "<testsuite name=\"a#b &lt;&quot;&amp;&quot;&gt;\" tests=\"2\" "
				  "failures=\"1\" errors=\"0\" skipped=\"0\"") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "<testcase classname=\"a#b &lt;&quot;&amp;&quot;&gt;\" "
				  "name=\"x &lt; 1\">\n      <failure type=\"assertion\" "
				  "message=\"x.yaml:3:9: x &lt; 1: got 1.5, want &lt; 1\">") != NULL,
		      "%s", buf);
	ck_assert_msg(strstr(buf, "name=\"y == 2\"/>\n") != NULL, "%s", buf);
	ck_assert_msg(strstr(buf, "</testsuites>\n") != NULL, "%s", buf);
	free(buf);
	kvp_check_report_free(r);
}
END_TEST

START_TEST(test_baseline_errors)
{
	static const struct { const char *doc; int line, col; const char *field; } cases[] = {
		{"baseline:\n  - scenario: a\n    feilds: {x: 1}\n", 3, 5, "feilds"},
		{"baseline:\n  - scenario: a\n    command: budget\n", 2, 5, "fields"},
		{"baseline:\n  - scenario: a\n    fields: {x: [1]}\n", 3, 17, "x"},
		{"baseline:\n  - scenario: a\n    fields: {x: 99999999999999999999}\n", 3, 17, "x"},
		{"baseline:\n  - {scenario: a, fields: {}}\n  - {scenario: a, fields: {}}\n", 3, 16,
		 "scenario"},
		{"scenarios: []\n", 1, 1, "scenarios"},
		{"baseline: {}\n", 1, 11, "baseline"},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		struct kvp_error err = {0};
		struct kvp_check_baseline *b;
		kvp_status st = kvp_check_baseline_load_buffer("b.yaml", cases[i].doc,
							       strlen(cases[i].doc), &b, &err);
		ck_assert_msg(st != KVP_STATUS_OK, "case %zu loaded", i);
		ck_assert_ptr_null(b);
		ck_assert_msg(err.line == cases[i].line && err.col == cases[i].col &&
				      strcmp(err.field, cases[i].field) == 0,
			      "case %zu: %d:%d %s: %s", i, err.line, err.col, err.field, err.msg);
	}
}
END_TEST

/* kvp_check_run_each's callback: count the scenarios and assertions seen. */
static kvp_status count_each(void *ctx, const struct kvp_check_report *r, size_t i,
			     const struct kvp_check_scenario_result *res)
{
	size_t *seen = ctx;
	ck_assert(i == seen[0]++ && r->s == NULL);
	seen[1] += res->scenario->nasserts;
	return KVP_STATUS_OK;
}

/* A file opened to be read one scenario at a time holds none, reads each
 * again as kvp_check_load keeps it, and runs to the counts of tests/cli-
 * check.sh (pass.yaml: 22 assertions in 2 scenarios hold; fail.yaml's 10 fail). */
START_TEST(test_open_one_at_a_time)
{
	static const struct { const char *file; size_t n, passed, failed; } cases[] = {
		{DATA "check/pass.yaml", 2, 22, 0}, {DATA "check/fail.yaml", 1, 0, 10}};
	for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
		struct kvp_error err = {0};
		struct kvp_check_file *f, *all;
		struct kvp_check_scenario s;
		ck_assert_int_eq(kvp_check_open(cases[c].file, &f, &err), KVP_STATUS_OK);
		ck_assert_int_eq(kvp_check_load(cases[c].file, &all, &err), KVP_STATUS_OK);
		ck_assert(f->scenarios == NULL && f->n == cases[c].n && all->n == cases[c].n);
		for (size_t i = 0; i < f->n; i++) {
			ck_assert_int_eq(kvp_check_scenario_read(f, i, &s, &err), KVP_STATUS_OK);
			const struct kvp_check_scenario *k = &all->scenarios[i];
			ck_assert(strcmp(s.name, k->name) == 0 && s.line == k->line &&
				  s.nasserts == k->nasserts && s.ninputs == k->ninputs &&
				  strcmp(s.inputs[0].value, k->inputs[0].value) == 0);
			kvp_check_scenario_clear(&s);
		}
		/* past the end, and a file that kept them all */
		ck_assert_int_ne(kvp_check_scenario_read(f, f->n, &s, &err), KVP_STATUS_OK);
		ck_assert_int_ne(kvp_check_scenario_read(all, 0, &s, &err), KVP_STATUS_OK);
		size_t seen[2] = {0, 0};
		struct kvp_check_report *r;
		ck_assert_int_eq(kvp_check_run_each(f, NULL, NULL, NULL, count_each, seen, &r, &err),
				 KVP_STATUS_OK);
		ck_assert(seen[0] == cases[c].n && seen[1] == cases[c].passed + cases[c].failed);
		ck_assert(r->passed == cases[c].passed && r->failed == cases[c].failed &&
			  r->errors == 0);
		kvp_check_report_free(r);
		kvp_check_file_free(all);
		kvp_check_file_free(f);
	}
}
END_TEST

static Suite *check_suite(void)
{
	Suite *s = suite_create("check");
	TCase *core = tcase_create("core");
	tcase_add_loop_test(core, test_operators, 0, sizeof op_cases / sizeof op_cases[0]);
	tcase_add_test(core, test_assertion_parts);
	tcase_add_test(core, test_percent_and_near);
	tcase_add_test(core, test_good_files);
	tcase_add_loop_test(core, test_rows, 0, sizeof row_cases / sizeof row_cases[0]);
	tcase_add_test(core, test_row_selector_syntax);
	tcase_add_test(core, test_rows_files);
	tcase_add_test(core, test_baseline_round_trip);
	tcase_add_test(core, test_baseline_tolerance_edge);
	tcase_add_test(core, test_baseline_doubles_exact);
	tcase_add_test(core, test_tap);
	tcase_add_test(core, test_junit);
	tcase_add_test(core, test_open_one_at_a_time);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_loop_test(errors, test_bad_files, 0, sizeof bad_files / sizeof bad_files[0]);
	tcase_add_test(errors, test_baseline_errors);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(check_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
