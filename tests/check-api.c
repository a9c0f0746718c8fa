/* check-api.c: the public C API (include/kvplan.h) as a program using it
 * sees it: KV bytes and budgets by hand arithmetic through the typed call
 * and the JSON call, errors as statuses with the message kvplan prints
 * (file:line:col), the size field's versioning both ways, and handles
 * shared by threads. */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kvplan.h>

#include "check-tmp.h"

struct kv_case {
	const char *model;
	uint32_t tp;
	uint64_t kv_bytes_per_token;
};

/* KV bytes per token on one GPU = 2 (K, V) x L x H_kv / tp x d_h x 2 B (bf16),
 * from each model's config.json (profiles/models/): */
static const struct kv_case kv_cases[] = {
	/* Llama-3.1-8B: 2 x 32 x 8 x 128 x 2 = 131,072 */
	{"llama-3.1-8b", 1, 131072},
	/* Llama-3.1-70B: 2 x 80 x 8 x 128 x 2 = 327,680; tp 2: 4 heads, 163,840 */
	{"llama-3.1-70b", 1, 327680},
	{"llama-3.1-70b", 2, 163840},
	/* Qwen2.5-7B: 2 x 28 x 4 x 128 x 2 = 57,344 */
	{"qwen2.5-7b", 1, 57344},
};

START_TEST(test_kv_bytes)
{
	const struct kv_case *c = &kv_cases[_i];
	kvplan_error err;
	kvplan_model *m;
	kvplan_gpu *g;
	ck_assert_msg(kvplan_model_load(c->model, &m, &err) == KVPLAN_OK, "%s", err.message);
	ck_assert_int_eq(kvplan_gpu_load("h100-sxm", &g, &err), KVPLAN_OK);
	kvplan_budget_opts o;
	kvplan_budget_opts_init(&o);
	o.tp = c->tp;
	o.context = 4096;
	o.batch = 3;
	kvplan_budget_result r = {.size = sizeof r};
	ck_assert_msg(kvplan_budget(m, g, NULL, &o, &r, &err) == KVPLAN_OK, "%s", err.message);
	ck_assert_uint_eq(r.kv_bytes_per_token, c->kv_bytes_per_token);
	/* exact KV of 3 sequences of 4,096 tokens */
	ck_assert_uint_eq(r.kv_bytes, c->kv_bytes_per_token * 4096 * 3);
	ck_assert_uint_eq(r.context, 4096);
	ck_assert_uint_eq(r.batch, 3);
	ck_assert_str_eq(err.message, "");
	kvplan_model_free(m);
	kvplan_gpu_free(g);
}
END_TEST

/* The generic policy with every term given (budget.h): pool = total x util
 * - weights - activations - overhead = 80 GiB x 0.9 - 16 - 1 - 1 GiB
 * = 77,309,411,328 - 19,327,352,832 = 57,982,058,496 B; blocks of 16 tokens
 * x 131,072 B = 2,097,152 B: 57,982,058,496 / 2,097,152 = 27,648 blocks =
 * 442,368 tokens; at 8,192 tokens a sequence, 54 sequences; no GPU needed. */
START_TEST(test_generic_terms)
{
	kvplan_error err;
	kvplan_model *m;
	ck_assert_int_eq(kvplan_model_load("llama-3.1-8b", &m, &err), KVPLAN_OK);
	kvplan_budget_opts o;
	kvplan_budget_opts_init(&o);
	o.context = 8192;
	o.batch = 54;
	o.utilization = 0.9;
	o.set = KVPLAN_SET_GPU_MEMORY | KVPLAN_SET_WEIGHTS | KVPLAN_SET_ACTIVATION |
		KVPLAN_SET_OVERHEAD;
	o.gpu_memory_bytes = 80ULL << 30;
	o.weights_bytes = 16ULL << 30;
	o.activation_bytes = 1ULL << 30;
	o.overhead_bytes = 1ULL << 30;
	kvplan_budget_result r = {.size = sizeof r};
	ck_assert_msg(kvplan_budget(m, NULL, NULL, &o, &r, &err) == KVPLAN_OK, "%s", err.message);
	ck_assert_uint_eq(r.kv_pool_bytes, 57982058496ULL);
	ck_assert_uint_eq(r.num_blocks, 27648);
	ck_assert_uint_eq(r.max_tokens, 442368);
	ck_assert_uint_eq(r.max_sequences, 54);
	ck_assert_int_eq(r.fits, 1);
	o.batch = 55;
	ck_assert_int_eq(kvplan_budget(m, NULL, NULL, &o, &r, &err), KVPLAN_OK);
	ck_assert_int_eq(r.fits, 0);  /* not fitting is an answer, not an error */
	/* zero overhead is a what-if, not "modelled": 1 GiB more pool, 512
	 * blocks more (1 GiB / 2 MiB) */
	o.overhead_bytes = 0;
	ck_assert_int_eq(kvplan_budget(m, NULL, NULL, &o, &r, &err), KVPLAN_OK);
	ck_assert_uint_eq(r.num_blocks, 27648 + 512);
	kvplan_model_free(m);
}
END_TEST

/* The JSON call: the record of `kvplan budget --format json`. */
START_TEST(test_json)
{
	kvplan_error err;
	kvplan_model *m;
	kvplan_gpu *g;
	kvplan_engine *e;
	ck_assert_int_eq(kvplan_model_load("llama-3.1-8b", &m, &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_gpu_load("h100-sxm", &g, &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_engine_load("vllm", NULL, &e, &err), KVPLAN_OK);
	ck_assert_str_eq(kvplan_engine_name(e), "vllm");
	ck_assert_str_ne(kvplan_engine_version(e), "");
	kvplan_budget_opts o;
	kvplan_budget_opts_init(&o);
	o.context = 8192;
	char *json = NULL;
	ck_assert_int_eq(kvplan_budget_json(m, g, e, &o, &json, &err), KVPLAN_OK);
	ck_assert_ptr_nonnull(strstr(json, "\"schema_version\": "));
	ck_assert_ptr_nonnull(strstr(json, "\"kv_bytes_per_token\": 131072,"));
	ck_assert_ptr_nonnull(strstr(json, "\"engine\": \"vllm\","));
	kvplan_free(json);
	uint64_t batches[] = {1, 8};
	kvplan_perf_opts p;
	kvplan_perf_opts_init(&p);
	p.prompt = 1024;
	p.output = 128;
	p.batches = batches;
	p.nbatch = 2;
	ck_assert_msg(kvplan_perf_json(m, g, e, &o, &p, &json, &err) == KVPLAN_OK, "%s",
		      err.message);
	ck_assert_ptr_nonnull(strstr(json, "\"rows\": ["));
	ck_assert_ptr_nonnull(strstr(json, "\"tpot_s\": "));
	kvplan_free(json);
	char *names;
	ck_assert_int_eq(kvplan_profile_list("gpus", &names, &err), KVPLAN_OK);
	ck_assert_ptr_nonnull(strstr(names, "h100-sxm\n"));
	kvplan_free(names);
	kvplan_model_free(m);
	kvplan_gpu_free(g);
	kvplan_engine_free(e);
}
END_TEST

/* The fragmentation simulator over a workload handle: the record of
 * `kvplan frag --format json`, and the refusals of cmd-frag.c. */
START_TEST(test_frag)
{
	kvplan_error err;
	kvplan_model *m;
	kvplan_gpu *g;
	kvplan_workload *w;
	ck_assert_int_eq(kvplan_model_load("llama-3.1-8b", &m, &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_gpu_load("h100-sxm", &g, &err), KVPLAN_OK);
	ck_assert_msg(kvplan_workload_load("chat", &w, &err) == KVPLAN_OK, "%s", err.message);
	kvplan_frag_opts f;
	kvplan_frag_opts_init(&f);
	f.requests = 2000;
	uint32_t blocks[] = {16, 32};
	f.block_sizes = blocks;
	f.nblock = 2;
	char *json = NULL;
	ck_assert_msg(kvplan_frag_json(m, g, NULL, w, NULL, &f, &json, &err) == KVPLAN_OK, "%s",
		      err.message);
	ck_assert_ptr_nonnull(strstr(json, "\"workload\": \"chat\","));
	ck_assert_ptr_nonnull(strstr(json, "\"requests\": 2000,"));
	ck_assert_ptr_nonnull(strstr(json, "\"kv_bytes_per_token\": 131072,"));
	ck_assert_ptr_nonnull(strstr(json, "\"recommendation\": "));
	kvplan_free(json);
	/* the same run again from the same handle: the handle is unchanged */
	char *again = NULL;
	ck_assert_int_eq(kvplan_frag_json(m, g, NULL, w, NULL, &f, &again, &err), KVPLAN_OK);
	kvplan_free(again);

	blocks[1] = 0;
	ck_assert_int_eq(kvplan_frag_json(m, g, NULL, w, NULL, &f, &json, &err), KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "block_sizes");
	ck_assert_ptr_null(json);
	f.nblock = 0;
	f.step_time_s = 0.01;  /* without an arrival rate */
	ck_assert_int_eq(kvplan_frag_json(m, g, NULL, w, NULL, &f, &json, &err), KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "step_time_s");
	kvplan_workload *none;
	ck_assert_int_eq(kvplan_workload_load("no-such-workload", &none, &err),
			 KVPLAN_ERR_NOT_FOUND);
	ck_assert_ptr_null(none);
	kvplan_workload_free(w);
	kvplan_model_free(m);
	kvplan_gpu_free(g);
}
END_TEST

/* The number after "key": in json at or after `from` (NAN when absent). */
static double json_num(const char *json, const char *from, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof pat, "\"%s\": ", key);
	const char *p = strstr(from ? from : json, pat);
	return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/* The purchase search over two GPU handles: the record of `kvplan size
 * --format json` (python/tests compares it with the CLI's field by field),
 * checked here by hand arithmetic on the chosen configuration:
 *   count = tp x replicas (pp = dp = 1)
 *   rate per replica = 4 requests/s / replicas
 *   cost per hour = the given price x count
 *   tokens/s = rate x the mean output (the record's output_mean)
 *   cost per million output tokens = cost per hour / (tokens/s x 3,600 / 1e6)
 * and the refusals cmd-size.c makes on its flags. */
START_TEST(test_size)
{
	kvplan_error err;
	kvplan_model *m;
	kvplan_gpu *g[2];
	kvplan_workload *w;
	ck_assert_int_eq(kvplan_model_load("llama-3.1-8b", &m, &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_gpu_load("h100-sxm", &g[0], &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_gpu_load("l4", &g[1], &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_workload_load("chat", &w, &err), KVPLAN_OK);
	kvplan_size_opts s;
	kvplan_size_opts_init(&s);
	ck_assert_uint_eq(s.size, sizeof s);
	s.rate = 4;
	s.ttft_s = 1;
	s.tpot_s = 0.05;
	uint32_t tp[] = {1, 2};
	s.tp = tp;
	s.ntp = 2;
	double prices[] = {2.5, 0.5};
	s.prices = prices;
	char *json = NULL;
	ck_assert_msg(kvplan_size_json(m, g, 2, NULL, w, NULL, &s, &json, &err) == KVPLAN_OK, "%s",
		      err.message);
	ck_assert_ptr_nonnull(strstr(json, "\"schema_version\": "));
	ck_assert_ptr_nonnull(strstr(json, "\"workload\": \"chat\","));
	ck_assert_ptr_nonnull(strstr(json, "\"engine\": \"generic\","));
	ck_assert_ptr_nonnull(strstr(json, "\"cost\": \"cloud\","));
	ck_assert_double_eq(json_num(json, NULL, "rate"), 4);
	ck_assert_double_eq(json_num(json, NULL, "slo_ttft_s"), 1);
	ck_assert_double_eq(json_num(json, NULL, "slo_tpot_s"), 0.05);
	/* 2 GPUs x 2 tensor-parallel sizes: four configurations */
	size_t nconf = 0;
	for (const char *p = strstr(json, "\"configs\": ["); p && (p = strstr(p, "\"gpu\": "));
	     p++)
		nconf++;
	ck_assert_ptr_null(strstr(json, "\"warnings\""));
	const char *chosen = strstr(json, "\"chosen\": {");
	ck_assert_ptr_nonnull(chosen);
	ck_assert_uint_eq(nconf, 4 + 1);  /* and the chosen one again */
	double count = json_num(json, chosen, "count"), tps = json_num(json, chosen, "tp"),
	       replicas = json_num(json, chosen, "replicas");
	double price = strstr(chosen, "\"gpu\": \"l4\"") == strstr(chosen, "\"gpu\": ") ? 0.5 : 2.5;
	ck_assert_double_eq(count, tps * replicas);
	ck_assert_double_eq_tol(json_num(json, chosen, "rate_per_replica"), 4 / replicas, 1e-12);
	ck_assert_double_eq(json_num(json, chosen, "price_per_hour"), price);
	ck_assert_double_eq_tol(json_num(json, chosen, "cost_per_hour"), price * count, 1e-9);
	double tokens = json_num(json, chosen, "tokens_per_s");
	ck_assert_double_eq_tol(tokens, 4 * json_num(json, NULL, "output_mean"), 1e-6);
	ck_assert_double_eq_tol(json_num(json, chosen, "cost_per_mtok"),
				price * count / (tokens * 3600 / 1e6), 1e-9);
	ck_assert_ptr_nonnull(strstr(chosen, "\"cost_basis\": \"given\","));
	ck_assert_ptr_nonnull(strstr(chosen, "\"meets\": true,"));
	ck_assert_double_eq(json_num(json, NULL, "min_gpus"), 1);
	kvplan_free(json);

	/* an older caller whose struct ends before tp: the list past its size
	 * (here a bad one) is never read, tp is the default 1, 2, 4, 8 */
	uint32_t bad_tp[] = {0};
	s.tp = bad_tp;
	s.ntp = 1;
	s.size = offsetof(kvplan_size_opts, tp);
	ck_assert_msg(kvplan_size_json(m, g, 1, NULL, w, NULL, &s, &json, &err) == KVPLAN_OK, "%s",
		      err.message);
	kvplan_free(json);
	s.size = sizeof s;
	ck_assert_int_eq(kvplan_size_json(m, g, 1, NULL, w, NULL, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "tp");
	ck_assert_ptr_null(json);
	s.tp = tp;
	s.ntp = 2;

	/* the refusals, each with its field */
	kvplan_budget_opts o;
	kvplan_budget_opts_init(&o);
	o.num_gpus = 8;  /* kvplan size --num-gpus */
	ck_assert_int_eq(kvplan_size_json(m, g, 2, NULL, w, &o, &s, &json, &err), KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "num_gpus");
	ck_assert_int_eq(kvplan_size_json(m, g, 0, NULL, w, NULL, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "gpus");
	kvplan_gpu *holes[] = {g[0], NULL};
	ck_assert_int_eq(kvplan_size_json(m, holes, 2, NULL, w, NULL, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_int_eq(kvplan_size_json(m, g, 2, NULL, NULL, NULL, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "workload");
	s.cost = "cloud:cheap";
	ck_assert_int_eq(kvplan_size_json(m, g, 2, NULL, w, NULL, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "cost");
	s.cost = NULL;
	s.pue = 1.2;  /* --pue without --cost own */
	ck_assert_int_eq(kvplan_size_json(m, g, 2, NULL, w, NULL, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "pue");
	s.pue = 0;
	uint32_t pd[][2] = {{1, 2}};
	s.disagg = pd;
	s.ndisagg = 1;
	s.rate = 0;  /* chat has no arrival rate: --disagg needs one */
	ck_assert_int_eq(kvplan_size_json(m, g, 2, NULL, w, NULL, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "disagg");
	s.ndisagg = 0;
	s.percentile = 100;
	ck_assert_int_eq(kvplan_size_json(m, g, 2, NULL, w, NULL, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "percentile");
	s.percentile = 0;
	const char *kvs[] = {"fp8", "fp8_e4m3"};  /* one dtype twice */
	s.kv_dtypes = kvs;
	s.nkv_dtypes = 2;
	ck_assert_int_eq(kvplan_size_json(m, g, 2, NULL, w, NULL, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "kv_dtypes");
	kvplan_workload_free(w);
	kvplan_model_free(m);
	kvplan_gpu_free(g[0]);
	kvplan_gpu_free(g[1]);
}
END_TEST

/* A caller compiled against an older, shorter kvplan_budget_opts: what lies
 * past its size is never read (here a bad kv_dtype), and a shorter result
 * is written only as far as its size. */
START_TEST(test_sizes)
{
	kvplan_error err;
	kvplan_model *m;
	ck_assert_int_eq(kvplan_model_load("llama-3.1-8b", &m, &err), KVPLAN_OK);
	kvplan_budget_opts o;
	kvplan_budget_opts_init(&o);
	o.set = KVPLAN_SET_GPU_MEMORY;
	o.gpu_memory_bytes = 80ULL << 30;
	o.kv_dtype = "fp7";
	kvplan_budget_result r = {.size = sizeof r};
	ck_assert_int_eq(kvplan_budget(m, NULL, NULL, &o, &r, &err), KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "kv_dtype");
	/* an old caller without kv_dtype and beyond: the defaults, and no GPU
	 * memory either, so it must name a GPU */
	o.size = offsetof(kvplan_budget_opts, kv_dtype);
	ck_assert_int_eq(kvplan_budget(m, NULL, NULL, &o, &r, &err), KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "gpu");
	kvplan_gpu *g;
	ck_assert_int_eq(kvplan_gpu_load("h100-sxm", &g, &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_budget(m, g, NULL, &o, &r, &err), KVPLAN_OK);
	/* a result cut after kv_bytes_per_token: nothing past it is written */
	struct {
		kvplan_budget_result r;
		uint64_t guard;
	} cut;
	memset(&cut, 0xab, sizeof cut);
	cut.r.size = offsetof(kvplan_budget_result, kv_bytes_per_sequence);
	ck_assert_int_eq(kvplan_budget(m, g, NULL, &o, &cut.r, &err), KVPLAN_OK);
	ck_assert_uint_eq(cut.r.kv_bytes_per_token, 131072);
	ck_assert_uint_eq(cut.r.kv_bytes_per_sequence, 0xababababababababULL);
	ck_assert_uint_eq(cut.r.size, offsetof(kvplan_budget_result, kv_bytes_per_sequence));
	r.size = 0;
	ck_assert_int_eq(kvplan_budget(m, g, NULL, &o, &r, &err), KVPLAN_ERR_USAGE);
	kvplan_model_free(m);
	kvplan_gpu_free(g);
}
END_TEST

/* Errors: a status and kvplan's message, nothing printed. */
START_TEST(test_errors)
{
	kvplan_error err;
	kvplan_model *m = (kvplan_model *)&err;
	ck_assert_int_eq(kvplan_model_load("llama-9", &m, &err), KVPLAN_ERR_NOT_FOUND);
	ck_assert_ptr_null(m);
	ck_assert_ptr_nonnull(strstr(err.message, "no profile named 'llama-9'"));
	ck_assert_str_eq(kvplan_status_str(err.status), "not found");

	/* a profile with an unknown key on line 3, column 1 */
	tmp_make("check-api");
	char path[800];
	snprintf(path, sizeof path, "%s", write_tmp("bad.yaml",
		 "name: bad\nnum_layers: 2\nnum_kv_heds: 8\n"));
	ck_assert_int_eq(kvplan_model_load(path, &m, &err), KVPLAN_ERR_INVALID);
	char want[900];
	snprintf(want, sizeof want, "%s:3:1: error: ", path);
	ck_assert_msg(strncmp(err.message, want, strlen(want)) == 0, "%s", err.message);
	ck_assert_str_eq(err.path, path);
	ck_assert_int_eq(err.line, 3);
	ck_assert_int_eq(err.col, 1);
	tmp_remove();

	kvplan_engine *e;
	ck_assert_int_eq(kvplan_engine_load("tensorflow", NULL, &e, &err), KVPLAN_ERR_USAGE);
	ck_assert_int_eq(kvplan_engine_load("vllm", "0.0.1", &e, &err), KVPLAN_ERR_NOT_FOUND);

	ck_assert_int_eq(kvplan_model_load("llama-3.1-8b", &m, &err), KVPLAN_OK);
	kvplan_budget_opts o;
	kvplan_budget_opts_init(&o);
	o.set = KVPLAN_SET_GPU_MEMORY;
	o.gpu_memory_bytes = 80ULL << 30;
	kvplan_budget_result r = {.size = sizeof r};
	o.tp = 3;  /* 32 heads and 8 KV heads are not split 3 ways */
	ck_assert_int_eq(kvplan_budget(m, NULL, NULL, &o, &r, &err), KVPLAN_ERR_INVALID);
	o.tp = 1;
	o.dtype = "int4";  /* weights format, not a serving dtype */
	ck_assert_int_eq(kvplan_budget(m, NULL, NULL, &o, &r, &err), KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "dtype");
	o.dtype = NULL;
	o.utilization = 1.5;
	ck_assert_int_eq(kvplan_budget(m, NULL, NULL, &o, &r, &err), KVPLAN_ERR_USAGE);
	o.utilization = 0;
	o.gpu_memory_bytes = 0;  /* set but zero */
	ck_assert_int_eq(kvplan_budget(m, NULL, NULL, &o, &r, &err), KVPLAN_ERR_USAGE);
	/* err may be NULL */
	ck_assert_int_eq(kvplan_budget(m, NULL, NULL, &o, &r, NULL), KVPLAN_ERR_USAGE);
	kvplan_model_free(m);
}
END_TEST

/* Threads sharing one set of handles get the answer one thread gets. */
struct job {
	const kvplan_model *m;
	const kvplan_gpu *g;
	const kvplan_engine *e;
	uint64_t seqs[64];
	int bad;
};

static void *worker(void *arg)
{
	struct job *j = arg;
	for (int k = 0; k < 64; k++) {
		kvplan_budget_opts o;
		kvplan_budget_opts_init(&o);
		o.context = 1024 * (uint64_t)(k + 1);
		kvplan_budget_result r = {.size = sizeof r};
		kvplan_error err;
		j->bad |= kvplan_budget(j->m, j->g, j->e, &o, &r, &err) != KVPLAN_OK;
		j->seqs[k] = r.max_sequences;
	}
	return NULL;
}

START_TEST(test_threads)
{
	kvplan_error err;
	kvplan_model *m;
	kvplan_gpu *g;
	kvplan_engine *e;
	ck_assert_int_eq(kvplan_model_load("llama-3.1-8b", &m, &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_gpu_load("h100-sxm", &g, &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_engine_load("vllm", NULL, &e, &err), KVPLAN_OK);
	struct job one = {m, g, e, {0}, 0}, many[4];
	worker(&one);
	ck_assert_int_eq(one.bad, 0);
	pthread_t t[4];
	for (int i = 0; i < 4; i++) {
		many[i] = (struct job){m, g, e, {0}, 0};
		ck_assert_int_eq(pthread_create(&t[i], NULL, worker, &many[i]), 0);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		ck_assert_int_eq(many[i].bad, 0);
		ck_assert_mem_eq(many[i].seqs, one.seqs, sizeof one.seqs);
	}
	kvplan_model_free(m);
	kvplan_gpu_free(g);
	kvplan_engine_free(e);
}
END_TEST

/* The purchase search from threads sharing the model, GPU and workload
 * handles: each the record one thread alone gets. */
struct size_job {
	const kvplan_model *m;
	kvplan_gpu *const *g;
	const kvplan_workload *w;
	char *json;
};

static void *size_worker(void *arg)
{
	struct size_job *j = arg;
	kvplan_size_opts s;
	kvplan_size_opts_init(&s);
	s.rate = 4;
	s.tpot_s = 0.05;
	uint32_t tp[] = {1, 2};
	s.tp = tp;
	s.ntp = 2;
	kvplan_error err;
	if (kvplan_size_json(j->m, j->g, 2, NULL, j->w, NULL, &s, &j->json, &err) != KVPLAN_OK)
		j->json = NULL;
	return NULL;
}

START_TEST(test_size_threads)
{
	kvplan_error err;
	kvplan_model *m;
	kvplan_gpu *g[2];
	kvplan_workload *w;
	ck_assert_int_eq(kvplan_model_load("llama-3.1-8b", &m, &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_gpu_load("h100-sxm", &g[0], &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_gpu_load("l4", &g[1], &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_workload_load("chat", &w, &err), KVPLAN_OK);
	struct size_job one = {m, g, w, NULL}, many[3];
	size_worker(&one);
	ck_assert_ptr_nonnull(one.json);
	pthread_t t[3];
	for (int i = 0; i < 3; i++) {
		many[i] = (struct size_job){m, g, w, NULL};
		ck_assert_int_eq(pthread_create(&t[i], NULL, size_worker, &many[i]), 0);
	}
	for (int i = 0; i < 3; i++) {
		pthread_join(t[i], NULL);
		ck_assert_ptr_nonnull(many[i].json);
		ck_assert_str_eq(many[i].json, one.json);
		kvplan_free(many[i].json);
	}
	kvplan_free(one.json);
	kvplan_workload_free(w);
	kvplan_model_free(m);
	kvplan_gpu_free(g[0]);
	kvplan_gpu_free(g[1]);
}
END_TEST

/* perf's efficiencies, from the options and from a calibration file, as
 * `kvplan perf --decode-bw-efficiency` and `--calibration` (cli-perf.sh
 * holds the same figures): A100 80GB 2.039 TB/s x 0.5 = 1.0195 TB/s; one
 * Llama-2-7B sequence of 2,048 tokens reads 6,738,415,616 x 2 B of weights
 * + 2,048 x 2 x 32 x 4,096 x 2 B of KV = 14,550,573,056 B -> 14.2723 ms.
 * A prefill time that overflows to infinity is refused (OVERFLOW, the field
 * named), never "inf" in the record. */
START_TEST(test_perf_efficiency)
{
	kvplan_error err;
	kvplan_model *m;
	kvplan_gpu *g;
	tmp_make("check-api");
	ck_assert_int_eq(kvplan_model_load("llama-2-7b", &m, &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_gpu_load("a100-80gb", &g, &err), KVPLAN_OK);
	kvplan_perf_opts p;
	kvplan_perf_opts_init(&p);
	p.prompt = 2048;
	p.output = 1;
	char *json = NULL;
	const char *cal = write_tmp("cal.yaml", "calibration:\n  - gpu: a100-80gb\n"
				    "    decode_bw_efficiency: 0.5\n"
				    "    prefill_flops_efficiency: 0.25\n");
	for (int way = 0; way < 2; way++) {
		p.decode_bw_efficiency = way ? 0 : 0.5;
		p.calibration = way ? cal : NULL;
		ck_assert_msg(kvplan_perf_json(m, g, NULL, NULL, &p, &json, &err) == KVPLAN_OK,
			      "%s", err.message);
		ck_assert_double_eq(json_num(json, NULL, "decode_bw_efficiency"), 0.5);
		ck_assert_double_eq_tol(json_num(json, NULL, "decode_memory_s"),
					14550573056.0 / (2.039e12 * 0.5), 1e-9);
		if (way) {
			ck_assert_double_eq(json_num(json, NULL, "prefill_flops_efficiency"), 0.25);
			ck_assert_ptr_nonnull(strstr(json, "\"calibration\": \""));
		} else {
			ck_assert_ptr_nonnull(strstr(json, "\"calibration\": null"));
		}
		kvplan_free(json);
	}
	/* the options win over the calibration, as on the command line */
	p.decode_bw_efficiency = 0.25;
	ck_assert_int_eq(kvplan_perf_json(m, g, NULL, NULL, &p, &json, &err), KVPLAN_OK);
	ck_assert_double_eq(json_num(json, NULL, "decode_bw_efficiency"), 0.25);
	kvplan_free(json);
	p.calibration = NULL;
	p.decode_bw_efficiency = 1.5;
	ck_assert_int_eq(kvplan_perf_json(m, g, NULL, NULL, &p, &json, &err), KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "decode_bw_efficiency");
	ck_assert_ptr_null(json);
	/* cli-files.sh's case: 64 prompts of 131,072 tokens of Llama-3.1-8B are
	 * at least 2 x 8.0e9 x 131,072 x 64 = 1.3e17 FLOP; at 3e-308 of the
	 * H100's 989 TFLOP/s that is 4.5e309 s > DBL_MAX */
	kvplan_model *m8;
	kvplan_gpu *h100;
	ck_assert_int_eq(kvplan_model_load("llama-3.1-8b", &m8, &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_gpu_load("h100-sxm", &h100, &err), KVPLAN_OK);
	uint64_t b64[] = {64};
	kvplan_perf_opts big;
	kvplan_perf_opts_init(&big);
	big.prompt = 131072;
	big.output = 128;
	big.batches = b64;
	big.nbatch = 1;
	big.prefill_flops_efficiency = 3e-308;
	ck_assert_int_eq(kvplan_perf_json(m8, h100, NULL, NULL, &big, &json, &err),
			 KVPLAN_ERR_OVERFLOW);
	ck_assert_str_eq(err.field, "prefill_s");
	ck_assert_ptr_nonnull(strstr(err.message, "batch 64: prefill_s: overflows to infinity"));
	ck_assert_ptr_null(json);
	kvplan_model_free(m8);
	kvplan_gpu_free(h100);
	p.decode_bw_efficiency = 0;
	p.calibration = write_tmp("other.yaml", "calibration:\n  - gpu: h100-sxm\n"
				  "    decode_bw_efficiency: 0.5\n");
	ck_assert_int_ne(kvplan_perf_json(m, g, NULL, NULL, &p, &json, &err), KVPLAN_OK);
	ck_assert_ptr_null(json);
	kvplan_model_free(m);
	kvplan_gpu_free(g);
	tmp_remove();
}
END_TEST

/* --calibration twice as calibration and calibration_kernel (cli-perf.sh
 * holds the same figures): an engine calibration (the weights at 0.6) and
 * the kvbench run of an H20 (tests/data/good/kvbench-cuda-h20.yaml: its
 * decode figure 0.8, the KV read).  Llama-2-7B at 2,048 tokens on the H20
 * (4.0 TB/s) reads 13,476,831,232 B of weights at 4.0e12 x 0.6 and
 * 1,073,741,824 B of KV at 4.0e12 x 0.8: 5.615346347e-3 + 3.3554432e-4 s.
 * Either order; two of one kind is USAGE with field "calibration", a second
 * without a first the same with "calibration_kernel". */
START_TEST(test_perf_two_calibrations)
{
	kvplan_error err;
	kvplan_model *m;
	kvplan_gpu *g;
	tmp_make("check-api");
	ck_assert_int_eq(kvplan_model_load("llama-2-7b", &m, &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_gpu_load("h20", &g, &err), KVPLAN_OK);
	const char *top = getenv("top_srcdir");
	char kern[4096];
	snprintf(kern, sizeof kern, "%s/tests/data/good/kvbench-cuda-h20.yaml", top ? top : ".");
	const char *eng = write_tmp("eng.yaml", "calibration:\n  - gpu: h20\n"
				    "    decode_bw_efficiency: 0.6\n");
	kvplan_perf_opts p;
	kvplan_perf_opts_init(&p);
	p.prompt = 2048;
	p.output = 1;
	char *json = NULL;
	for (int way = 0; way < 2; way++) {
		p.calibration = way ? kern : eng;
		p.calibration_kernel = way ? eng : kern;
		ck_assert_msg(kvplan_perf_json(m, g, NULL, NULL, &p, &json, &err) == KVPLAN_OK,
			      "%s", err.message);
		ck_assert_double_eq(json_num(json, NULL, "decode_bw_efficiency"), 0.6);
		ck_assert_double_eq_tol(json_num(json, NULL, "kv_bw_efficiency"), 0.8, 1e-12);
		ck_assert_double_eq_tol(json_num(json, NULL, "decode_memory_s"),
					13476831232.0 / (4.0e12 * 0.6) +
					1073741824.0 / (4.0e12 * 0.8), 1e-12);
		ck_assert_ptr_nonnull(strstr(json, "\"calibration_kernel\": \""));
		kvplan_free(json);
	}
	p.calibration = p.calibration_kernel = kern;
	ck_assert_int_eq(kvplan_perf_json(m, g, NULL, NULL, &p, &json, &err), KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "calibration");
	ck_assert_ptr_null(json);
	p.calibration = NULL;
	ck_assert_int_eq(kvplan_perf_json(m, g, NULL, NULL, &p, &json, &err), KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "calibration_kernel");
	kvplan_model_free(m);
	kvplan_gpu_free(g);
	tmp_remove();
}
END_TEST

/* size's emit and calibration, as `kvplan size --emit` and
 * `--calibration` (python/tests compares the records with the CLI's):
 * the record carries the engine's command for the chosen configuration,
 * the search plans with that engine when no handle is given, and the
 * refusals of cmd-size.c come back with field "emit" or "calibration".
 * The H20 calibration (tests/data/good/kvbench-cuda-h20.yaml; cli-size.sh
 * has the arithmetic) gives a latency spread of 0.09375. */
START_TEST(test_size_emit)
{
	kvplan_error err;
	kvplan_model *m;
	kvplan_gpu *g[2];
	kvplan_workload *w;
	ck_assert_int_eq(kvplan_model_load("llama-3.1-8b", &m, &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_gpu_load("h100-sxm", &g[0], &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_gpu_load("h20", &g[1], &err), KVPLAN_OK);
	ck_assert_int_eq(kvplan_workload_load("chat", &w, &err), KVPLAN_OK);
	kvplan_size_opts s;
	kvplan_size_opts_init(&s);
	s.rate = 4;
	uint32_t tp[] = {1, 2};
	s.tp = tp;
	s.ntp = 2;
	s.emit = "vllm";
	char *json = NULL;
	ck_assert_msg(kvplan_size_json(m, g, 1, NULL, w, NULL, &s, &json, &err) == KVPLAN_OK, "%s",
		      err.message);
	ck_assert_ptr_nonnull(strstr(json, "\"engine\": \"vllm\","));
	const char *emit = strstr(json, "\"emit\": \"# vllm: ");
	ck_assert_ptr_nonnull(emit);
	ck_assert_ptr_nonnull(strstr(emit, "vllm serve 'meta-llama/Llama-3.1-8B'"));
	ck_assert_ptr_nonnull(strstr(emit, "--tensor-parallel-size "));
	kvplan_free(json);
	/* an engine handle is planned with; emit only writes the command */
	kvplan_engine *e;
	ck_assert_int_eq(kvplan_engine_load("sglang", NULL, &e, &err), KVPLAN_OK);
	s.emit = "sglang";
	ck_assert_int_eq(kvplan_size_json(m, g, 1, e, w, NULL, &s, &json, &err), KVPLAN_OK);
	ck_assert_ptr_nonnull(strstr(json, "\"engine\": \"sglang\","));
	ck_assert_ptr_nonnull(strstr(json, "python -m sglang.launch_server"));
	kvplan_free(json);
	kvplan_engine_free(e);
	/* no emit: no "emit" */
	s.emit = NULL;
	ck_assert_int_eq(kvplan_size_json(m, g, 1, NULL, w, NULL, &s, &json, &err), KVPLAN_OK);
	ck_assert_ptr_null(strstr(json, "\"emit\""));
	kvplan_free(json);
	/* the refusals */
	s.emit = "generic";
	ck_assert_int_eq(kvplan_size_json(m, g, 1, NULL, w, NULL, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "emit");
	s.emit = "vllm";  /* vLLM's ep is 1 or tp x dp: tp 4, ep 2 cannot launch */
	uint32_t tp4[] = {4}, ep2[] = {2};
	s.tp = tp4;
	s.ntp = 1;
	s.ep = ep2;
	s.nep = 1;
	ck_assert_int_eq(kvplan_size_json(m, g, 1, NULL, w, NULL, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "emit");
	ck_assert_ptr_nonnull(strstr(err.message, "vLLM's expert parallelism spans"));
	ck_assert_ptr_null(json);
	s.nep = 0;
	/* an fp8_e5m2 KV cache TensorRT-LLM has no name for: as the plan's one
	 * KV dtype (--kv-dtype) refused once chosen; searched in a list
	 * (--kv-dtypes), its points fail kv_dtype and none is chosen */
	kvplan_budget_opts o;
	kvplan_budget_opts_init(&o);
	o.kv_dtype = "fp8_e5m2";
	s.tp = tp;
	s.ntp = 2;
	s.emit = "trtllm";
	ck_assert_int_eq(kvplan_size_json(m, g, 1, NULL, w, &o, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "emit");
	ck_assert_ptr_nonnull(strstr(err.message, "trtllm: trtllm has no KV cache dtype fp8_e5m2"));
	const char *kv[] = {"fp8_e5m2"};
	s.kv_dtypes = kv;
	s.nkv_dtypes = 1;
	ck_assert_int_eq(kvplan_size_json(m, g, 1, NULL, w, NULL, &s, &json, &err), KVPLAN_OK);
	ck_assert_ptr_nonnull(strstr(json, "\"chosen\": null"));
	ck_assert_ptr_nonnull(strstr(json, "\"never\": \"kv_dtype\""));
	ck_assert_ptr_null(strstr(json, "\"emit\""));
	kvplan_free(json);
	s.nkv_dtypes = 0;
	s.emit = NULL;
	/* a calibration of the one GPU searched */
	const char *top = getenv("top_srcdir");
	char cal[1024];
	snprintf(cal, sizeof cal, "%s/tests/data/good/kvbench-cuda-h20.yaml", top ? top : ".");
	s.calibration = cal;
	ck_assert_msg(kvplan_size_json(m, &g[1], 1, NULL, w, NULL, &s, &json, &err) == KVPLAN_OK,
		      "%s", err.message);
	ck_assert_double_eq(json_num(json, NULL, "latency_spread"), 0.09375);
	ck_assert_ptr_nonnull(strstr(json, "\"latency_spread_from\": \"calibration\""));
	kvplan_free(json);
	s.latency_spread = 0.2;  /* given wins */
	ck_assert_int_eq(kvplan_size_json(m, &g[1], 1, NULL, w, NULL, &s, &json, &err), KVPLAN_OK);
	ck_assert_ptr_nonnull(strstr(json, "\"latency_spread_from\": \"given\""));
	kvplan_free(json);
	s.latency_spread = -1;
	ck_assert_int_eq(kvplan_size_json(m, g, 2, NULL, w, NULL, &s, &json, &err),
			 KVPLAN_ERR_USAGE);
	ck_assert_str_eq(err.field, "calibration");
	ck_assert_ptr_null(json);
	/* an older caller's struct ends before emit: never read */
	s.emit = "nonsense";
	s.calibration = NULL;
	s.size = offsetof(kvplan_size_opts, emit);
	ck_assert_int_eq(kvplan_size_json(m, g, 1, NULL, w, NULL, &s, &json, &err), KVPLAN_OK);
	ck_assert_ptr_null(strstr(json, "\"emit\""));
	kvplan_free(json);
	kvplan_workload_free(w);
	kvplan_model_free(m);
	kvplan_gpu_free(g[0]);
	kvplan_gpu_free(g[1]);
}
END_TEST

static Suite *api_suite(void)
{
	Suite *s = suite_create("api");
	TCase *core = tcase_create("core");
	tcase_add_loop_test(core, test_kv_bytes, 0, sizeof kv_cases / sizeof kv_cases[0]);
	tcase_add_test(core, test_generic_terms);
	tcase_add_test(core, test_json);
	tcase_add_test(core, test_frag);
	tcase_add_test(core, test_size);
	tcase_add_test(core, test_perf_efficiency);
	tcase_add_test(core, test_perf_two_calibrations);
	tcase_add_test(core, test_size_emit);
	tcase_add_test(core, test_sizes);
	tcase_add_test(core, test_threads);
	tcase_add_test(core, test_size_threads);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_test(errors, test_errors);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(api_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
