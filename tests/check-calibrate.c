/* check-calibrate.c: `kvplan calibrate`'s layers: the strict JSON reader
 * (base/json-read), the benchmark readers (read/bench-*), the fit
 * (time/calibrate-fit) and the calibration file written and read back
 * (time/calibration-write, time/calibration).
 *
 * Expected values: a reader's fields are the fixture's own numbers
 * (tests/data/bench/, written to each tool's schema; their README and
 * make-fixtures.py say how) in the unit the reader promises, with the
 * conversion written beside each assertion.  The fit's expectations come
 * from the fixtures' story (README): llama-3.1-8b on h100-sxm under an
 * engine at 0.70 of the bandwidth in decode and 0.50 of the peak in
 * prefill, each time moved by up to 3 % of noise. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check-tmp.h"
#include "base/json-read.h"
#include "read/bench.h"
#include "time/calibrate-fit.h"
#include "time/calibration-write.h"
#include "time/calibration.h"
#include "time/ttft-load.h"

#ifndef KVP_SRCDIR
#define KVP_SRCDIR "."
#endif

static const char *data_path(const char *rel)
{
	static char buf[1024];
	const char *top = getenv("top_srcdir");
	snprintf(buf, sizeof buf, "%s/tests/data/bench/%s", top && top[0] ? top : KVP_SRCDIR, rel);
	return buf;
}

static kvp_status load(const char *rel, const struct kvp_bench_given *g, struct kvp_bench_runs *r,
		       struct kvp_error *err)
{
	static const struct kvp_bench_given none = {0};
	return kvp_bench_load(data_path(rel), g ? g : &none, r, err);
}

/* ------------------------------------------------------------ JSON */

static struct kvp_doc *json(const char *text, const struct kvp_json_opts *o)
{
	struct kvp_doc *d = NULL;
	struct kvp_error err = {0};
	ck_assert_msg(kvp_json_load_buffer("t.json", text, strlen(text), o, &d, &err) ==
			      KVP_STATUS_OK, "%s: %s", text, err.msg);
	return d;
}

START_TEST(test_json_values)
{
	struct kvp_doc *d = json("{\"a\": [1, -2.5e3, true, null], \"s\": \"\\u00e9\\ud83d\\ude00\\n\","
				 " \"o\": {}}", NULL);
	const struct kvp_node *r = d->root, *a = kvp_map_get(r, "a"), *s = kvp_map_get(r, "s");
	ck_assert_int_eq(r->type, KVP_NODE_MAP);
	ck_assert_uint_eq(r->n, 3);
	ck_assert_uint_eq(a->n, 4);
	ck_assert_str_eq(a->items[1]->value, "-2.5e3");   /* the number's text, as written */
	ck_assert(!a->items[1]->quoted);
	ck_assert(kvp_node_is_null(a->items[3]));
	/* U+00E9 = C3 A9; U+1F600 (the pair D83D DE00) = F0 9F 98 80; \n */
	ck_assert_str_eq(s->value, "\xc3\xa9\xf0\x9f\x98\x80\n");
	ck_assert(s->quoted);
	ck_assert_int_eq(kvp_map_get(r, "o")->type, KVP_NODE_MAP);
	/* marks: "s" is on line 1, its value at column 37 (1-based) */
	ck_assert_int_eq(s->line, 1);
	ck_assert_int_eq(s->col, 37);
	kvp_doc_free(d);
}
END_TEST

START_TEST(test_json_lines_and_skip)
{
	static const char *const skip[] = {"itls", NULL};
	struct kvp_json_opts o = {.skip = skip, .lines = true};
	struct kvp_doc *d = json("{\"x\": 1, \"itls\": [[0.1, 0.2], [0.3]]}\n\n{\"x\": 2}\n", &o);
	ck_assert_int_eq(d->root->type, KVP_NODE_SEQ);
	ck_assert_uint_eq(d->root->n, 2);
	ck_assert_uint_eq(d->root->items[0]->n, 1);            /* itls checked, not kept */
	ck_assert_ptr_null(kvp_map_get(d->root->items[0], "itls"));
	ck_assert_int_eq(d->root->items[1]->line, 3);          /* the blank line 2 skipped */
	/* nodes kept: the sequence, two maps, two keys, two values = 7 */
	ck_assert_uint_eq(d->nodes, 7);
	kvp_doc_free(d);
}
END_TEST

static const struct {
	const char *text;
	int line, col;
} bad_json[] = {
	{"{\"a\": 1", 1, 8},             /* truncated: the end, after column 7 */
	{"{\"a\": 1,}", 1, 9},           /* a trailing comma: '}' where a key goes */
	{"[1 2]", 1, 4},                 /* no comma */
	{"{\"a\": 1, \"a\": 2}", 1, 10},  /* the key given twice: the second */
	{"{\"a\": NaN}", 1, 7},          /* Python's NaN is not JSON */
	{"[\"\x01\"]", 1, 3},            /* a raw control character in a string */
	{"[01]", 1, 3},                  /* a leading zero: '1' after the number 0 */
	{"{} x", 1, 4},                  /* more after the document */
	{"[\"\xc3\"]", 1, 3},            /* a cut UTF-8 sequence */
	{"[\"\\udc00\"]", 1, 3},          /* a lone low surrogate */
	{"{\n\"a\":\n", 3, 1},           /* truncated on line 3 */
	{"[1.]", 1, 2},                  /* no digit after the point: at the number */
};

START_TEST(test_json_errors)
{
	struct kvp_doc *d = (struct kvp_doc *)1;
	struct kvp_error err = {0};
	const char *t = bad_json[_i].text;
	ck_assert_int_eq(kvp_json_load_buffer("t.json", t, strlen(t), NULL, &d, &err),
			 KVP_STATUS_PARSE);
	ck_assert_ptr_null(d);
	ck_assert_msg(err.line == bad_json[_i].line && err.col == bad_json[_i].col,
		      "%s: %d:%d: %s", t, err.line, err.col, err.msg);
}
END_TEST

/* An object of 40 keys (past the 32 scanned one by one: sorted at its end)
 * with k7 given again as the 41st: refused at the second k7, column 2 of
 * its line. */
START_TEST(test_json_duplicate_large)
{
	char buf[2048];
	size_t n = 0;
	n += (size_t)snprintf(buf + n, sizeof buf - n, "{");
	for (int i = 0; i < 40; i++)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "\"k%d\": %d,\n", i, i);
	n += (size_t)snprintf(buf + n, sizeof buf - n, "\"k7\": 0}");
	struct kvp_doc *d;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_json_load_buffer("t", buf, n, NULL, &d, &err), KVP_STATUS_PARSE);
	ck_assert_int_eq(err.line, 41);
	ck_assert_int_eq(err.col, 1);
	ck_assert_ptr_nonnull(strstr(err.msg, "'k7' is given twice"));
	/* without the repeat: 40 keys kept */
	n = 0;
	n += (size_t)snprintf(buf + n, sizeof buf - n, "{");
	for (int i = 0; i < 40; i++)
		n += (size_t)snprintf(buf + n, sizeof buf - n, "%s\"k%d\": %d", i ? ", " : "", i, i);
	n += (size_t)snprintf(buf + n, sizeof buf - n, "}");
	ck_assert_int_eq(kvp_json_load_buffer("t", buf, n, NULL, &d, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(d->root->n, 40);
	kvp_doc_free(d);
}
END_TEST

START_TEST(test_json_deep)
{
	char buf[200];
	memset(buf, '[', 100);
	memset(buf + 100, ']', 100);
	struct kvp_doc *d;
	struct kvp_error err = {0};
	/* 100 levels > KVP_DOC_MAX_DEPTH (64) */
	ck_assert_int_eq(kvp_json_load_buffer("t", buf, sizeof buf, NULL, &d, &err), KVP_STATUS_PARSE);
	ck_assert_ptr_nonnull(strstr(err.msg, "nesting"));
}
END_TEST

/* ------------------------------------------------------------ readers */

START_TEST(test_vllm_serve)
{
	struct kvp_bench_runs r = {0};
	struct kvp_error err = {0};
	ck_assert_msg(load("vllm-serve-c8.json", NULL, &r, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(r.n, 1);
	const struct kvp_bench_run *v = &r.v[0];
	ck_assert_int_eq(v->format, KVP_BENCH_FORMAT_VLLM_SERVE);
	ck_assert_str_eq(v->engine, "vllm");
	ck_assert_str_eq(v->model_id, "meta-llama/Llama-3.1-8B-Instruct");
	ck_assert_str_eq(v->date, "20261201-103000");
	ck_assert_double_eq_tol(v->m.ttft_s, 0.033013, 1e-12);   /* median_ttft_ms 33.013 */
	ck_assert_double_eq_tol(v->m.tpot_s, 0.0074816, 1e-12);  /* median_tpot_ms 7.4816 */
	ck_assert_uint_eq(v->prompt_tokens, 1024);               /* 204,800 / 200 completed */
	ck_assert_uint_eq(v->output_tokens, 128);                /* 25,600 / 200 */
	ck_assert_uint_eq(v->requests, 200);
	/* Little's law: 8.136901 req/s x 0.983175 s = 7.99999 in flight, under
	 * max_concurrency 8 */
	ck_assert_double_eq_tol(v->batch, 8.136901 * 0.983175, 1e-9);
	kvp_bench_runs_free(&r);
}
END_TEST

/* vLLM 0.8.3's line (no mean_e2el_ms): vllm-serve-no-e2el.json, by hand:
 * 20,200 / 200 = 101 output tokens, latency 0.050 + 0.020 x 100 = 2.05 s,
 * in flight 2.0 req/s x 2.05 s = 4.1.  And a public file of that release
 * (tests/data/bench-public/vllm-llama70b-a100-tp8, qps 01): its
 * request_throughput 0.9745666315653629 x (0.06525777634499718 +
 * 0.024564414268982127 x (42722 / 200 - 1 = 212.61)) = 0.9745666 x
 * 5.2878... = 5.153 in flight; 42,659 / 200 = 213.3 -> 213 prompt tokens */
START_TEST(test_vllm_serve_no_e2el)
{
	struct kvp_bench_runs r = {0};
	struct kvp_error err = {0};
	ck_assert_msg(load("vllm-serve-no-e2el.json", NULL, &r, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert_double_eq_tol(r.v[0].batch, 4.1, 1e-9);
	ck_assert_uint_eq(r.v[0].output_tokens, 101);
	ck_assert_double_eq_tol(r.v[0].throughput_rps, 2.0, 1e-12);
	ck_assert_double_eq_tol(r.v[0].m.ttft_s, 0.045, 1e-12);   /* the median, not the mean */
	kvp_bench_runs_free(&r);
	ck_assert_msg(load("../bench-public/vllm-llama70b-a100-tp8/serving_meta-llama-"
			   "Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_01.json", NULL, &r, &err) ==
		      KVP_STATUS_OK, "%s", err.msg);
	double e2e = 0.06525777634499718 + 0.024564414268982127 * (42722.0 / 200 - 1);
	ck_assert_double_eq_tol(r.v[0].batch, 0.9745666315653629 * e2e, 1e-9);
	ck_assert_double_eq_tol(r.v[0].batch, 5.153, 1e-3);
	ck_assert_uint_eq(r.v[0].prompt_tokens, 213);
	kvp_bench_runs_free(&r);
}
END_TEST

/* The queue's wait (time/ttft-load.h), by hand: 286 waiting behind 714
 * running, each 0.2 s to its first token and 127 steps of 0.1 s after it:
 * E2E = 0.2 + 12.7 = 12.9 s, 714 finish every 12.9 s, so the last of the
 * 286 waits 286 x 12.9 / 714 = 3,689.4 / 714 = 5.167227 s.  Nothing
 * waiting, or nothing running: 0; one output token: the TTFT alone. */
START_TEST(test_queue_wait)
{
	ck_assert_double_eq_tol(kvp_perf_queue_wait_s(286, 714, 0.2, 0.1, 128), 5.167227, 1e-6);
	ck_assert_double_eq(kvp_perf_queue_wait_s(0, 714, 0.2, 0.1, 128), 0);
	ck_assert_double_eq(kvp_perf_queue_wait_s(10, 0, 0.2, 0.1, 128), 0);
	/* 10 x 0.2 / 5 = 0.4 */
	ck_assert_double_eq_tol(kvp_perf_queue_wait_s(10, 5, 0.2, 0.1, 1), 0.4, 1e-12);
}
END_TEST

START_TEST(test_vllm_latency)
{
	struct kvp_bench_runs r = {0};
	struct kvp_error err = {0};
	struct kvp_bench_given g = {.batch = 8, .prompt_tokens = 32, .output_tokens = 128};
	ck_assert_msg(load("vllm-latency.json", &g, &r, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_int_eq(r.v[0].format, KVP_BENCH_FORMAT_VLLM_LATENCY);
	ck_assert_double_eq_tol(r.v[0].m.latency_s, 0.883512, 1e-12);   /* percentiles."50" */
	ck_assert_double_eq(r.v[0].batch, 8);
	ck_assert_uint_eq(r.v[0].prompt_tokens, 32);
	kvp_bench_runs_free(&r);
	/* no shape: the file records none */
	ck_assert_int_eq(load("vllm-latency.json", NULL, &r, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "avg_latency");
	ck_assert_uint_eq(r.n, 0);
}
END_TEST

START_TEST(test_sglang)
{
	struct kvp_bench_runs r = {0};
	struct kvp_error err = {0};
	ck_assert_msg(load("sglang-serving.jsonl", NULL, &r, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_int_eq(r.v[1].line, 2);                        /* one run per line */
	ck_assert_str_eq(r.v[0].engine_version, "0.5.10");       /* server_info.version */
	ck_assert_uint_eq(r.v[0].tp, 1);                         /* server_info.tp_size */
	ck_assert_double_eq_tol(r.v[0].batch, 7.88, 1e-12);      /* concurrency */
	ck_assert_double_eq_tol(r.v[1].batch, 31.52, 1e-12);
	ck_assert_uint_eq(r.v[1].prompt_tokens, 1024);           /* 409,600 / 400 */
	ck_assert_double_eq_tol(r.v[0].m.tpot_s, 0.0073349, 1e-12);  /* median_tpot_ms */
	ck_assert_double_eq_tol(r.v[0].throughput_rps, 8.2853, 1e-12); /* request_throughput */
	/* random_range_ratio 1.0: every request of one length, no spread */
	ck_assert_double_eq(r.v[0].decode_context, 0);
	ck_assert_msg(load("sglang-one-batch.jsonl", NULL, &r, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert_uint_eq(r.n, 5);                               /* appended to the same list */
	/* the late-2024 line of a random dataset at range ratio 0.0 (output 0..256
	 * drawn uniformly, bench.h): E[o] = 128, E[o^2] = (257^2 - 1) / 12 +
	 * 128^2 = 21,888, E[o (o - 1)] / (2 E[o]) = 21,760 / 256 = 85; mean prompt
	 * 51,200 / 100 = 512: 597 */
	ck_assert_msg(load("sglang-serving-2024.jsonl", NULL, &r, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert_double_eq_tol(r.v[5].decode_context, 597.0, 1e-9);
	ck_assert_uint_eq(r.v[5].output_tokens, 128);
	const struct kvp_bench_run *b = &r.v[3];
	ck_assert_int_eq(b->format, KVP_BENCH_FORMAT_SGLANG_ONE_BATCH);
	ck_assert_double_eq(b->batch, 16);
	ck_assert_uint_eq(b->output_tokens, 16);
	ck_assert_double_eq_tol(b->m.prefill_s, 0.535375, 1e-12);        /* s, as written */
	ck_assert_double_eq_tol(b->m.decode_step_s, 0.007849, 1e-12);
	kvp_bench_runs_free(&r);
}
END_TEST

START_TEST(test_trtllm_genai_aiperf)
{
	struct kvp_bench_runs r = {0};
	struct kvp_error err = {0};
	ck_assert_msg(load("trtllm-report.json", NULL, &r, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(load("genai-perf.json", NULL, &r, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(load("aiperf.json", NULL, &r, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(r.n, 3);
	const struct kvp_bench_run *t = &r.v[0], *g = &r.v[1], *a = &r.v[2];
	ck_assert_str_eq(t->engine_version, "1.0.0");            /* engine.version */
	ck_assert_double_eq_tol(t->m.ttft_s, 0.0343031, 1e-12);  /* ttft_percentiles.p50 ms */
	ck_assert_double_eq_tol(t->m.tpot_s, 0.0078209, 1e-12);
	ck_assert_double_eq(t->batch, 16);                       /* avg_num_concurrent_requests */
	ck_assert_int_eq(g->format, KVP_BENCH_FORMAT_GENAI_PERF);
	ck_assert_double_eq_tol(g->m.ttft_s, 0.034841, 1e-12);   /* time_to_first_token.p50 ms */
	ck_assert_double_eq_tol(g->m.tpot_s, 0.0087931, 1e-12);  /* inter_token_latency.p50 */
	/* 27.78839 req/s x 1,151.5599 ms = 31.99999 in flight */
	ck_assert_double_eq_tol(g->batch, 27.78839 * 1.1515599, 1e-9);
	ck_assert_int_eq(a->format, KVP_BENCH_FORMAT_AIPERF);
	/* its request_latency in ns: 1,151,559,908.3286 ns x 27.78839 */
	ck_assert_double_eq_tol(a->batch, 27.78839 * 1.1515599083286, 1e-9);
	kvp_bench_runs_free(&r);
}
END_TEST

static const struct {
	const char *file;
	kvp_status st;
	const char *field;   /* NULL: none */
	int line;
} bad_files[] = {
	{"bad-truncated.json", KVP_STATUS_PARSE, NULL, 0},
	{"bad-other-tool.json", KVP_STATUS_INVALID, NULL, 1},
	{"bad-missing-tpot.json", KVP_STATUS_INVALID, "median_tpot_ms", 1},
	{"bad-nan.json", KVP_STATUS_PARSE, NULL, 24},    /* "median_ttft_ms": NaN on line 24 */
	{"bad-string-number.json", KVP_STATUS_INVALID, "median_tpot_ms", 28}, /* "7.4816" */
};

START_TEST(test_bad_files)
{
	struct kvp_bench_runs r = {0};
	struct kvp_error err = {0};
	ck_assert_int_eq(load(bad_files[_i].file, NULL, &r, &err), bad_files[_i].st);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_ptr_nonnull(strstr(err.path, bad_files[_i].file));
	if (bad_files[_i].field)
		ck_assert_str_eq(err.field, bad_files[_i].field);
	if (bad_files[_i].line)
		ck_assert_int_eq(err.line, bad_files[_i].line);
	else
		ck_assert_ptr_nonnull(strstr(err.msg, "truncated"));
}
END_TEST

/* ------------------------------------------------------------ the fit */

static struct kvp_model model;
static struct kvp_gpu gpu;
static struct kvp_perf_hw hw;
static struct kvp_budget_opts bopts;

static void fit_setup(void)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_model_load("llama-3.1-8b", &model, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(kvp_gpu_load("h100-sxm", &gpu, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_msg(kvp_perf_hw_from_gpu(&gpu, &model, &hw, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	/* the story is told at flat efficiencies (its README): the GPU's prefill
	 * timed at one, 0.60 uncalibrated, as a profile that gives its own
	 * prefill_flops_efficiency has it, not through h100-sxm's measured GEMM
	 * table (test_fit_table below takes that path) */
	ck_assert_uint_gt(hw.gemm.nm, 0);
	kvp_perf_hw_prefill_efficiency(&hw, 0.60);
	/* the story has no fixed costs: pinned at none, as a calibration that
	 * gave them would pin them (the engine's time data fills only what no
	 * calibration gave, kvp_perf_hw_engine) */
	hw.step_fixed_s = hw.prefill_fixed_s = hw.seq_step_s = 0;
	hw.given |= KVP_PERF_GIVEN_STEP_FIXED | KVP_PERF_GIVEN_PREFILL_FIXED | KVP_PERF_GIVEN_SEQ_STEP;
	/* and one bandwidth efficiency for the weights and the KV alike */
	hw.kv_bw_efficiency = 0;
	hw.given |= KVP_PERF_GIVEN_KV_BW;
	memset(&bopts, 0, sizeof bopts);
	bopts.engine = KVP_ENGINE_VLLM;
	bopts.par.tp = bopts.par.pp = 1;
	bopts.dtype = bopts.kv_dtype = KVP_DTYPE_AUTO;
}

static void serve_runs(struct kvp_bench_runs *r)
{
	static const char *const files[] = {"vllm-serve-c1.json", "vllm-serve-c2.json",
					    "vllm-serve-c4.json", "vllm-serve-c8.json",
					    "vllm-serve-c16.json", "vllm-serve-c32.json",
					    "vllm-serve-c48.json", "vllm-serve-c64.json"};
	struct kvp_error err = {0};
	for (size_t i = 0; i < 8; i++)
		ck_assert_msg(load(files[i], NULL, r, &err) == KVP_STATUS_OK, "%s", err.msg);
}

/* The target: fitted on half the runs (c1, c4, c16, c48), the
 * other half (c2, c8, c32, c64) within 7 % median. */
START_TEST(test_fit_holdout)
{
	fit_setup();
	struct kvp_bench_runs r = {0};
	serve_runs(&r);
	bool held[8] = {false, true, false, true, false, true, false, true};
	struct kvp_calib_opts fo = {.held_out = held};
	fo.want[KVP_CALIB_DECODE_BW_EFFICIENCY] = fo.want[KVP_CALIB_PREFILL_FLOPS_EFFICIENCY] = true;
	struct kvp_calib_result *f = malloc(sizeof *f);
	struct kvp_error err = {0};
	ck_assert_msg(kvp_calib_run(&model, &gpu, &bopts, &hw, r.v, r.n, &fo, f, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(f->nobs, 16);                  /* a TTFT and a TPOT per run */
	ck_assert_uint_eq(f->ntrain, 8);
	ck_assert_double_lt(f->median_held_out, 0.07);
	/* the story's engine: 0.70 and 0.50, within the 3 % of noise */
	ck_assert_double_eq_tol(f->value[KVP_CALIB_DECODE_BW_EFFICIENCY], 0.70, 0.02);
	ck_assert_double_eq_tol(f->value[KVP_CALIB_PREFILL_FLOPS_EFFICIENCY], 0.50, 0.015);
	ck_assert(f->lo[0] <= f->value[0] && f->value[0] <= f->hi[0]);
	/* each training run predicted by the refit without it: a spread there */
	ck_assert_double_gt(f->loo_spread, 0);
	ck_assert(!f->worse);
	ck_assert_double_lt(f->median_calibrated, f->median_uncalibrated);
	/* the defaults 0.80 / 0.60 are 12.5 % / 17 % fast on this story: each
	 * uncalibrated time is short by more than 7 % */
	ck_assert_double_gt(f->median_uncalibrated, 0.07);
	free(f);
	kvp_bench_runs_free(&r);
}
END_TEST

/* A constant no run moves (all-reduce latency at tp 1) and one run alone
 * are refused; so are two runs of one shape that disagree. */
START_TEST(test_fit_refusals)
{
	fit_setup();
	struct kvp_bench_runs r = {0};
	serve_runs(&r);
	struct kvp_calib_result *f = malloc(sizeof *f);
	struct kvp_error err = {0};
	struct kvp_calib_opts fo = {0};
	fo.want[KVP_CALIB_ALLREDUCE_LATENCY_S] = true;
	ck_assert_int_eq(kvp_calib_run(&model, &gpu, &bopts, &hw, r.v, r.n, &fo, f, &err),
			 KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "allreduce_latency_s");
	ck_assert(!f->supported[KVP_CALIB_ALLREDUCE_LATENCY_S]);
	ck_assert(f->supported[KVP_CALIB_DECODE_BW_EFFICIENCY]);
	struct kvp_calib_opts none = {0};
	ck_assert_int_eq(kvp_calib_run(&model, &gpu, &bopts, &hw, r.v, 1, &none, f, &err),
			 KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "runs");
	ck_assert_msg(load("bad-contradicts-c8.json", NULL, &r, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	ck_assert_int_eq(kvp_calib_run(&model, &gpu, &bopts, &hw, r.v, r.n, &none, f, &err),
			 KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "tpot");                 /* 14.96 ms against 7.48 ms */
	ck_assert_ptr_nonnull(strstr(err.path, "bad-contradicts-c8.json"));
	free(f);
	kvp_bench_runs_free(&r);
}
END_TEST

/* The support test judges only the constants asked for.  At tp 2 every
 * step, prefill or decode, pays 2 all-reduces x 32 layers x the latency
 * (step.c allreduce_s) beside step_fixed_s: both add one fixed time to
 * every step, so their log-sensitivity columns are parallel on any runs of
 * one tp.  Asked alone, the all-reduce latency is fitted (step_fixed_s,
 * not asked, does not hide it; before, it did, standing before it in the
 * order); asked with step_fixed_s it is refused, named; and step_fixed_s,
 * not asked, shows as not supported beside it. */
START_TEST(test_fit_support_asked)
{
	fit_setup();
	bopts.par.tp = 2;
	struct kvp_bench_runs r = {0};
	serve_runs(&r);
	struct kvp_calib_result *f = malloc(sizeof *f);
	struct kvp_error err = {0};
	struct kvp_calib_opts fo = {0};
	fo.want[KVP_CALIB_ALLREDUCE_LATENCY_S] = true;
	ck_assert_msg(kvp_calib_run(&model, &gpu, &bopts, &hw, r.v, r.n, &fo, f, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert(f->fitted[KVP_CALIB_ALLREDUCE_LATENCY_S]);
	ck_assert(f->supported[KVP_CALIB_ALLREDUCE_LATENCY_S]);
	ck_assert(!f->fitted[KVP_CALIB_STEP_FIXED_S]);
	ck_assert(!f->supported[KVP_CALIB_STEP_FIXED_S]);
	/* the prefill efficiency moves only the TTFTs: apart from it */
	ck_assert(f->supported[KVP_CALIB_PREFILL_FLOPS_EFFICIENCY]);
	fo.want[KVP_CALIB_STEP_FIXED_S] = true;
	ck_assert_int_eq(kvp_calib_run(&model, &gpu, &bopts, &hw, r.v, r.n, &fo, f, &err),
			 KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "allreduce_latency_s");
	ck_assert(f->supported[KVP_CALIB_STEP_FIXED_S]);
	ck_assert(!f->supported[KVP_CALIB_ALLREDUCE_LATENCY_S]);
	free(f);
	kvp_bench_runs_free(&r);
}
END_TEST

/* worse-c*.json (README): the defaults predict them but for one TPOT at
 * twice its prediction; the fit's median residual is worse than none. */
START_TEST(test_fit_worse)
{
	fit_setup();
	bopts.engine = KVP_ENGINE_GENERIC;   /* their backend is openai-chat: no engine */
	struct kvp_bench_runs r = {0};
	struct kvp_error err = {0};
	ck_assert_int_eq(load("worse-c1.json", NULL, &r, &err), KVP_STATUS_OK);
	ck_assert_int_eq(load("worse-c2.json", NULL, &r, &err), KVP_STATUS_OK);
	ck_assert_int_eq(load("worse-c64.json", NULL, &r, &err), KVP_STATUS_OK);
	struct kvp_calib_result *f = malloc(sizeof *f);
	struct kvp_calib_opts fo = {0};
	ck_assert_msg(kvp_calib_run(&model, &gpu, &bopts, &hw, r.v, r.n, &fo, f, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	/* uncalibrated: five times within 1 %, the outlier at +100 % */
	ck_assert_double_lt(f->median_uncalibrated, 0.01);
	ck_assert(f->worse);
	free(f);
	kvp_bench_runs_free(&r);
}
END_TEST

/* The file written reads back as the calibration perf applies; written
 * over an input, it is refused and the input stays as it was. */
START_TEST(test_write_read_back)
{
	fit_setup();
	tmp_make("calibrate");
	struct kvp_bench_runs r = {0};
	serve_runs(&r);
	struct kvp_calib_result *f = malloc(sizeof *f);
	struct kvp_error err = {0};
	struct kvp_calib_opts fo = {0};
	ck_assert_msg(kvp_calib_run(&model, &gpu, &bopts, &hw, r.v, r.n, &fo, f, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	char path[600];
	snprintf(path, sizeof path, "%s/cal.yaml", tmpdir);
	struct kvp_calibration_source src = {.gpu = "h100-sxm", .model = "llama-3.1-8b",
					     .engine = "vllm", .tp = 1, .kvplan_version = "test",
					     .created = "2026-12-03T00:00:00Z"};
	ck_assert_msg(kvp_calibration_write(path, &src, f, r.v, r.n, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	struct kvp_calibration cal;
	ck_assert_msg(kvp_calibration_load(path, &gpu, &cal, &err) == KVP_STATUS_OK, "%s", err.msg);
	/* written in 9 significant digits */
	ck_assert_double_eq_tol(cal.decode_bw_efficiency, f->value[0], 1e-8);
	ck_assert_double_eq_tol(cal.prefill_flops_efficiency, f->value[1], 1e-8);
	ck_assert_uint_eq(cal.points, f->ntrain);
	ck_assert_double_gt(cal.latency_spread, 0);
	/* the spreads, rounded UP at 4 significant digits: never below the fit's */
	ck_assert_double_ge(cal.latency_spread_loo, f->loo_spread);
	ck_assert_double_le(cal.latency_spread_loo, f->loo_spread * (1 + 1e-3));
	struct kvp_perf_hw h = hw;
	kvp_calibration_apply(&cal, &h);
	ck_assert_double_eq_tol(h.decode_bw_efficiency, f->value[0], 1e-8);
	/* the band: 1 -/+ the larger spread, holding every time the fit saw */
	double s = fmax(cal.latency_spread, cal.latency_spread_loo);
	ck_assert(h.given & KVP_PERF_GIVEN_BAND);
	ck_assert_double_eq(h.time_ratio_low, 1 - s);
	ck_assert_double_eq(h.time_ratio_high, 1 + s);
	for (size_t i = 0; i < f->nobs; i++) {
		double ratio = f->obs[i].measured_s / f->obs[i].predicted_s;
		ck_assert(f->obs[i].train && ratio >= h.time_ratio_low && ratio <= h.time_ratio_high);
	}
	/* the engine's time data does not replace it */
	struct kvp_engine_model em = {0};
	kvp_perf_hw_engine(&h, &em);
	ck_assert_double_eq(h.time_ratio_low, 1 - s);
	/* over an input: refused before a byte is written */
	ck_assert_int_eq(kvp_calibration_write(data_path("vllm-serve-c1.json"), &src, f, r.v, r.n,
					       &err), KVP_STATUS_USAGE);
	struct kvp_bench_runs again = {0};
	ck_assert_int_eq(load("vllm-serve-c1.json", NULL, &again, &err), KVP_STATUS_OK);
	kvp_bench_runs_free(&again);
	free(f);
	kvp_bench_runs_free(&r);
	tmp_remove();
}
END_TEST

/* With h100-sxm's measured GEMM table (as perf times a prefill by
 * default) the prefill's constant is a scale on it, 1 uncalibrated
 * (calibrate-fit.h); the file writes it as prefill_flops_scale, and read
 * back and applied it keeps the table and divides every prefill FLOP's time
 * by it: a prefill of 16 x 1024 tokens (compute-bound: 16 x 1024 rows)
 * takes compute_s / s of its uncalibrated compute time, by the definition
 * of a rate, while its bytes' terms do not move. */
START_TEST(test_fit_table)
{
	fit_setup();
	struct kvp_error err = {0};
	struct kvp_perf_hw flat = hw;
	ck_assert_msg(kvp_perf_hw_from_gpu(&gpu, &model, &hw, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	hw.step_fixed_s = hw.prefill_fixed_s = hw.seq_step_s = 0;
	hw.kv_bw_efficiency = 0;
	hw.given = flat.given;
	ck_assert_uint_gt(hw.gemm.nm, 0);
	tmp_make("calibrate-table");
	struct kvp_bench_runs r = {0};
	serve_runs(&r);
	struct kvp_calib_result *f = malloc(sizeof *f);
	struct kvp_calib_opts fo = {0};
	fo.want[KVP_CALIB_DECODE_BW_EFFICIENCY] = fo.want[KVP_CALIB_PREFILL_FLOPS_EFFICIENCY] = true;
	ck_assert_msg(kvp_calib_run(&model, &gpu, &bopts, &hw, r.v, r.n, &fo, f, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert(f->prefill_scale);
	ck_assert_str_eq(kvp_calib_result_param_name(f, KVP_CALIB_PREFILL_FLOPS_EFFICIENCY),
			 "prefill_flops_scale");
	ck_assert_int_eq(kvp_calib_param_from_name("prefill_flops_scale"),
			 KVP_CALIB_PREFILL_FLOPS_EFFICIENCY);
	ck_assert_double_eq(f->start[KVP_CALIB_PREFILL_FLOPS_EFFICIENCY], 1);
	double sc = f->value[KVP_CALIB_PREFILL_FLOPS_EFFICIENCY];
	/* the story's engine is slower in prefill than the table's GEMMs
	 * (0.50 of the peak against the table's 0.6-0.8 at these shapes) */
	ck_assert_double_lt(sc, 1);
	ck_assert_double_gt(sc, 0.5);
	ck_assert_double_lt(f->median_calibrated, f->median_uncalibrated);
	char path[600];
	snprintf(path, sizeof path, "%s/cal.yaml", tmpdir);
	struct kvp_calibration_source src = {.gpu = "h100-sxm", .model = "llama-3.1-8b",
					     .engine = "vllm", .tp = 1, .kvplan_version = "test",
					     .created = "2026-12-07T00:00:00Z"};
	ck_assert_msg(kvp_calibration_write(path, &src, f, r.v, r.n, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	struct kvp_calibration cal;
	ck_assert_msg(kvp_calibration_load(path, &gpu, &cal, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_double_eq(cal.prefill_flops_efficiency, 0);
	ck_assert_double_eq_tol(cal.prefill_flops_scale, sc, 1e-8 * sc);
	struct kvp_perf_hw h = hw, g = hw;
	kvp_calibration_apply(&cal, &h);
	kvp_calib_apply(f, &g);
	ck_assert_uint_gt(h.gemm.nm, 0);                       /* the table kept */
	ck_assert_double_eq_tol(h.prefill_flops_efficiency, 0.60 * sc, 1e-8);
	ck_assert_double_eq_tol(g.prefill_flops_efficiency, h.prefill_flops_efficiency, 1e-8);
	struct kvp_budget b;
	struct kvp_budget_opts bo = bopts;
	bo.context = 1024 + 1;
	bo.batch = 16;
	ck_assert_msg(kvp_budget_compute(&model, &gpu, &bo, &b, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	struct kvp_perf_ctx c0, c1;
	struct kvp_perf_step p0, p1;
	ck_assert(kvp_perf_init(&c0, &b.spec, b.weights_bytes, &hw, &err) == KVP_STATUS_OK);
	/* the scale alone (the fitted decode efficiency moves the bytes' terms) */
	struct kvp_perf_hw hs = hw;
	struct kvp_calibration only = {.prefill_flops_scale = cal.prefill_flops_scale};
	kvp_calibration_apply(&only, &hs);
	ck_assert(kvp_perf_init(&c1, &b.spec, b.weights_bytes, &hs, &err) == KVP_STATUS_OK);
	ck_assert(kvp_perf_prefill(&c0, 16, 1024, &p0, &err) == KVP_STATUS_OK);
	ck_assert(kvp_perf_prefill(&c1, 16, 1024, &p1, &err) == KVP_STATUS_OK);
	/* (the file's 9 digits, not the fit's own double) */
	ck_assert_double_eq_tol(p1.compute_s * cal.prefill_flops_scale, p0.compute_s,
				1e-12 * p0.compute_s);
	ck_assert_double_eq(p1.memory_s, p0.memory_s);
	ck_assert_double_eq(p1.elementwise_s, p0.elementwise_s);
	/* a scale does not compound: applied twice, the same */
	kvp_calibration_apply(&cal, &h);
	ck_assert_double_eq_tol(h.prefill_flops_efficiency, 0.60 * sc, 1e-8);
	/* a flat efficiency given afterwards drops the table and the scale */
	kvp_perf_hw_prefill_efficiency(&h, 0.5);
	ck_assert_uint_eq(h.gemm.nm, 0);
	ck_assert_double_eq(h.prefill_flops_scale, 0);
	free(f);
	kvp_bench_runs_free(&r);
	tmp_remove();
}
END_TEST

/* A calibration file with a fixed cost out of range names it. */
START_TEST(test_read_bad_fixed_cost)
{
	fit_setup();
	tmp_make("calibrate-bad");
	const char *p = write_tmp("c.yaml", "calibration:\n  - gpu: h100-sxm\n    step_fixed_s: 2\n");
	struct kvp_calibration cal;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_calibration_load(p, &gpu, &cal, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "step_fixed_s");
	ck_assert_int_eq(err.line, 3);
	p = write_tmp("d.yaml", "calibration:\n  - gpu: h100-sxm\n    seq_step_s: 2.5e-5\n");
	ck_assert_msg(kvp_calibration_load(p, &gpu, &cal, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_double_eq(cal.seq_step_s, 2.5e-5);
	tmp_remove();
}
END_TEST


/* A request's latency outside the steps (step.h request_latency_s) moves
 * each serving run's predicted TTFT by exactly itself and its TPOT not at
 * all: 30 ms on, each TTFT + 0.030 s (where no request waits for the pool,
 * queued 0), each TPOT the same to the last bit. */
START_TEST(test_request_latency_ttft_only)
{
	fit_setup();
	struct kvp_bench_runs r = {0};
	serve_runs(&r);
	struct kvp_calib_result *a = malloc(sizeof *a), *b = malloc(sizeof *b);
	struct kvp_error err = {0};
	ck_assert_double_eq(hw.request_latency_s, 0);   /* the GPU's hw: none */
	ck_assert_msg(kvp_calib_evaluate(&model, &gpu, &bopts, &hw, r.v, r.n, NULL, 0, a, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	struct kvp_perf_hw h = hw;
	h.request_latency_s = 0.030;
	h.given |= KVP_PERF_GIVEN_REQUEST_LATENCY;
	ck_assert_msg(kvp_calib_evaluate(&model, &gpu, &bopts, &h, r.v, r.n, NULL, 0, b, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(a->nobs, 16);
	ck_assert_uint_eq(b->nobs, 16);
	size_t nttft = 0;
	for (size_t i = 0; i < a->nobs; i++) {
		ck_assert_int_eq(a->obs[i].kind, b->obs[i].kind);
		ck_assert_double_eq(a->obs[i].queued, 0);
		if (a->obs[i].kind == KVP_CALIB_TTFT) {
			ck_assert_double_eq_tol(b->obs[i].predicted_s - a->obs[i].predicted_s, 0.030,
						1e-12);
			nttft++;
		} else {
			ck_assert_int_eq(a->obs[i].kind, KVP_CALIB_TPOT);
			ck_assert_double_eq(b->obs[i].predicted_s, a->obs[i].predicted_s);
		}
	}
	ck_assert_uint_eq(nttft, 8);
	/* the engine's time data (none given here) does not replace it */
	struct kvp_engine_model em = {0};
	kvp_perf_hw_engine(&h, &em);
	ck_assert_double_eq(h.request_latency_s, 0.030);
	free(a);
	free(b);
	kvp_bench_runs_free(&r);
}
END_TEST

/* The fit recovers a request latency it did not make, from runs whose
 * times this test writes by the story's own formula (tests/data/bench/README,
 * not kvplan's step model): llama-3.1-8b (8.03e9 parameters, W =
 * 16,060,522,496 B, 131,072 B of KV a token) on an H100 SXM (3.35e12 B/s,
 * 989.4e12 FLOP/s), decode at 0.70 of the bandwidth, prefill at 0.50 of the
 * peak, no fixed step costs; at B in flight, prompt p, output o = 256,
 * c = p + (o - 1) / 2 = p + 127:
 *   TPOT = (W + B c 131,072) / (3.35e12 x 0.70)
 *   TTFT = (2 x 8.03e9 p + 4 x 32 x 4096 p^2 / 2 + (B - 1)(2 x 8.03e9 +
 *          4 x 32 x 4096 c)) / (989.4e12 x 0.50) + L,   L = 0.025 s
 * p in {512, 1024, 1536} (compute-bound: 2 x 8.03e9 x 512 / 4.947e14 =
 * 16.6 ms against the weights' 16.06e9 / 2.345e12 = 6.8 ms), B in {1, 4}.
 * A latency is told apart from the prefill's efficiency only by TTFTs of
 * different lengths: 25 ms is 60 % of p = 512's and 33 % of p = 1536's.
 * The fit (the two efficiencies and the latency) must give 25 ms back
 * within 3 ms, 0.70 and 0.50 within 0.02 (the step model's extra terms,
 * the decodes' KV reads beside the chunk, differ from the formula's a
 * little), and the fit without it is worse. */
START_TEST(test_fit_request_latency)
{
	fit_setup();
	tmp_make("calibrate-reqlat");
	struct kvp_bench_runs r = {0};
	serve_runs(&r);
	struct kvp_bench_run tmpl = r.v[0];
	const double W = 16060522496.0, N = 8.03e9, KV = 131072, BW = 3.35e12 * 0.70,
		     F = 989.4e12 * 0.50, L = 0.025;
	const uint64_t ps[] = {512, 1024, 1536};
	const double bs[] = {1, 4};
	size_t n = 0;
	for (size_t i = 0; i < 3; i++)
		for (size_t j = 0; j < 2; j++, n++) {
			struct kvp_bench_run *x = &r.v[n];
			double p = (double)ps[i], B = bs[j], c = p + 127;
			*x = tmpl;
			x->line = (int)n + 1;
			x->prompt_tokens = ps[i];
			x->output_tokens = 256;
			x->batch = B;
			x->m.tpot_s = (W + B * c * KV) / BW;
			x->m.ttft_s = (2 * N * p + 4.0 * 32 * 4096 * p * p / 2 +
				       (B - 1) * (2 * N + 4.0 * 32 * 4096 * c)) / F + L;
		}
	r.n = n;
	struct kvp_calib_opts fo = {0};
	fo.want[KVP_CALIB_DECODE_BW_EFFICIENCY] = fo.want[KVP_CALIB_PREFILL_FLOPS_EFFICIENCY] =
		fo.want[KVP_CALIB_REQUEST_LATENCY_S] = true;
	struct kvp_calib_result *f = malloc(sizeof *f);
	struct kvp_error err = {0};
	ck_assert_msg(kvp_calib_run(&model, &gpu, &bopts, &hw, r.v, r.n, &fo, f, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert(f->fitted[KVP_CALIB_REQUEST_LATENCY_S]);
	ck_assert(f->supported[KVP_CALIB_REQUEST_LATENCY_S]);
	ck_assert_double_eq(f->start[KVP_CALIB_REQUEST_LATENCY_S], 0);
	ck_assert_double_eq_tol(f->value[KVP_CALIB_REQUEST_LATENCY_S], 0.025, 0.003);
	ck_assert_double_eq_tol(f->value[KVP_CALIB_DECODE_BW_EFFICIENCY], 0.70, 0.02);
	ck_assert_double_eq_tol(f->value[KVP_CALIB_PREFILL_FLOPS_EFFICIENCY], 0.50, 0.03);
	/* without it the fit cannot explain the 25 ms: worse on the same runs */
	struct kvp_calib_result *g = malloc(sizeof *g);
	fo.want[KVP_CALIB_REQUEST_LATENCY_S] = false;
	ck_assert_msg(kvp_calib_run(&model, &gpu, &bopts, &hw, r.v, r.n, &fo, g, &err) ==
			      KVP_STATUS_OK, "%s", err.msg);
	ck_assert_double_gt(g->median_calibrated, f->median_calibrated);
	free(g);
	/* the YAML round trip: written, read back, applied */
	char path[600];
	snprintf(path, sizeof path, "%s/cal.yaml", tmpdir);
	struct kvp_calibration_source src = {.gpu = "h100-sxm", .model = "llama-3.1-8b",
					     .engine = "vllm", .tp = 1, .kvplan_version = "test",
					     .created = "2026-12-06T00:00:00Z"};
	ck_assert_msg(kvp_calibration_write(path, &src, f, r.v, r.n, &err) == KVP_STATUS_OK, "%s",
		      err.msg);
	struct kvp_calibration cal;
	ck_assert_msg(kvp_calibration_load(path, &gpu, &cal, &err) == KVP_STATUS_OK, "%s", err.msg);
	/* written in 9 significant digits */
	ck_assert_double_eq_tol(cal.request_latency_s, f->value[KVP_CALIB_REQUEST_LATENCY_S],
				1e-8 * f->value[KVP_CALIB_REQUEST_LATENCY_S]);
	struct kvp_perf_hw h = hw;
	kvp_calibration_apply(&cal, &h);
	ck_assert_double_eq(h.request_latency_s, cal.request_latency_s);
	ck_assert(h.given & KVP_PERF_GIVEN_REQUEST_LATENCY);
	free(f);
	kvp_bench_runs_free(&r);
	tmp_remove();
}
END_TEST

/* A request latency that is negative, not a number or above a second names
 * the field and its line. */
static const char *const bad_reqlat[] = {"-0.01", "fast", "2", ".nan"};

START_TEST(test_read_bad_request_latency)
{
	fit_setup();
	tmp_make("calibrate-bad-reqlat");
	char text[200];
	snprintf(text, sizeof text, "calibration:\n  - gpu: h100-sxm\n    seq_step_s: 2.5e-5\n"
		 "    request_latency_s: %s\n", bad_reqlat[_i]);
	const char *p = write_tmp("c.yaml", text);
	struct kvp_calibration cal;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_calibration_load(p, &gpu, &cal, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "request_latency_s");
	ck_assert_int_eq(err.line, 4);
	tmp_remove();
}
END_TEST

/* A random dataset's spread is used only where the file's mean output is
 * the drawn range's: outputs cut short (a mean of 100 for 0..256, whose mean
 * is 128: 22 % off) leave the mean lengths' context. */
START_TEST(test_sglang_spread_unused)
{
	tmp_make("calibrate-spread");
	const char *p = write_tmp("s.jsonl", "{\"backend\": \"sglang\", \"dataset_name\": \"random\", "
				  "\"total_input_tokens\": 51200, \"total_output_tokens\": 10000, "
				  "\"mean_e2e_latency_ms\": 4000.0, \"median_ttft_ms\": 100.0, "
				  "\"median_itl_ms\": 20.0, \"random_input_len\": 1024, "
				  "\"random_output_len\": 256, \"random_range_ratio\": 0.0, "
				  "\"duration\": 50.0, \"completed\": 100}\n");
	struct kvp_bench_runs r = {0};
	struct kvp_error err = {0};
	static const struct kvp_bench_given none = {0};
	ck_assert_msg(kvp_bench_load(p, &none, &r, &err) == KVP_STATUS_OK, "%s", err.msg);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(r.v[0].output_tokens, 100);
	ck_assert_double_eq(r.v[0].decode_context, 0);
	kvp_bench_runs_free(&r);
	tmp_remove();
}
END_TEST

/* prefill_flops_scale: above 0 and at most 50 (1 / 0.02, the smallest
 * efficiency; calibration.c), a number: each refused at its line (4) and key */
static const char *const bad_scale[] = {"0", "-1", "51", "slow", ".nan"};

START_TEST(test_read_bad_prefill_scale)
{
	fit_setup();
	tmp_make("calibrate-bad-scale");
	char text[200];
	snprintf(text, sizeof text, "calibration:\n  - gpu: h100-sxm\n    seq_step_s: 2.5e-5\n"
		 "    prefill_flops_scale: %s\n", bad_scale[_i]);
	const char *p = write_tmp("c.yaml", text);
	struct kvp_calibration cal;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_calibration_load(p, &gpu, &cal, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "prefill_flops_scale");
	ck_assert_int_eq(err.line, 4);
	tmp_remove();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("calibrate");
	TCase *core = tcase_create("core");
	tcase_add_test(core, test_json_values);
	tcase_add_test(core, test_json_lines_and_skip);
	tcase_add_test(core, test_vllm_serve);
	tcase_add_test(core, test_vllm_latency);
	tcase_add_test(core, test_vllm_serve_no_e2el);
	tcase_add_test(core, test_queue_wait);
	tcase_add_test(core, test_sglang);
	tcase_add_test(core, test_trtllm_genai_aiperf);
	tcase_add_test(core, test_fit_holdout);
	tcase_add_test(core, test_write_read_back);
	tcase_add_test(core, test_request_latency_ttft_only);
	tcase_add_test(core, test_fit_request_latency);
	tcase_add_test(core, test_fit_table);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_loop_test(errors, test_json_errors, 0, sizeof bad_json / sizeof bad_json[0]);
	tcase_add_test(errors, test_json_deep);
	tcase_add_test(errors, test_json_duplicate_large);
	tcase_add_loop_test(errors, test_bad_files, 0, sizeof bad_files / sizeof bad_files[0]);
	tcase_add_test(errors, test_fit_refusals);
	tcase_add_test(errors, test_fit_support_asked);
	tcase_add_test(errors, test_fit_worse);
	tcase_add_test(errors, test_read_bad_fixed_cost);
	tcase_add_loop_test(errors, test_read_bad_request_latency, 0,
			    sizeof bad_reqlat / sizeof bad_reqlat[0]);
	tcase_add_test(errors, test_sglang_spread_unused);
	tcase_add_loop_test(errors, test_read_bad_prefill_scale, 0,
			    sizeof bad_scale / sizeof bad_scale[0]);
	suite_add_tcase(s, errors);
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
