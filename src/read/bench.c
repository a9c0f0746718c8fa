/* bench.c: read a benchmark result file: load its JSON (one object, or one
 * per line), tell its tool by the keys that tool always writes, and hand
 * each run's object to that tool's reader (bench-*.c).  The shared field
 * readers live here too, so every reader's messages have one shape:
 * file:line:col: error: field: what was expected. */
#include "read/bench-private.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/input-file.h"
#include "base/json-read.h"

const char *kvp_bench_format_name(enum kvp_bench_format f)
{
	switch (f) {
	case KVP_BENCH_FORMAT_VLLM_SERVE: return "vllm-serve";
	case KVP_BENCH_FORMAT_VLLM_LATENCY: return "vllm-latency";
	case KVP_BENCH_FORMAT_SGLANG_SERVING: return "sglang-serving";
	case KVP_BENCH_FORMAT_SGLANG_ONE_BATCH: return "sglang-one-batch";
	case KVP_BENCH_FORMAT_TRTLLM_BENCH: return "trtllm-bench";
	case KVP_BENCH_FORMAT_GENAI_PERF: return "genai-perf";
	case KVP_BENCH_FORMAT_AIPERF: return "aiperf";
	}
	return "unknown";
}

/* The tool that wrote obj, by the keys it always writes. */
static int detect(const struct kvp_node *obj, enum kvp_bench_format *f, const char **tool)
{
	if (obj->type != KVP_NODE_MAP)
		return -1;
#define HAS(k) (kvp_map_get(obj, k) != NULL)
	if (HAS("median_e2e_latency_ms") || (HAS("median_ttft_ms") && HAS("dataset_name"))) {
		*f = KVP_BENCH_FORMAT_SGLANG_SERVING;
		*tool = "sglang bench_serving";
	} else if (HAS("median_ttft_ms") || HAS("median_e2el_ms")) {
		*f = KVP_BENCH_FORMAT_VLLM_SERVE;
		*tool = "vllm bench serve --save-result";
	} else if (HAS("avg_latency") && (HAS("percentiles") || HAS("latencies"))) {
		*f = KVP_BENCH_FORMAT_VLLM_LATENCY;
		*tool = "vllm bench latency --output-json";
	} else if (HAS("median_decode_latency") || HAS("prefill_latency")) {
		*f = KVP_BENCH_FORMAT_SGLANG_ONE_BATCH;
		*tool = "sglang bench_one_batch";
	} else if (HAS("performance") && (HAS("world_info") || HAS("request_info"))) {
		*f = KVP_BENCH_FORMAT_TRTLLM_BENCH;
		*tool = "trtllm-bench throughput --report_json";
	} else if (HAS("aiperf_version") && HAS("time_to_first_token")) {
		*f = KVP_BENCH_FORMAT_AIPERF;
		*tool = "aiperf profile";
	} else if (HAS("time_to_first_token") && HAS("inter_token_latency")) {
		*f = KVP_BENCH_FORMAT_GENAI_PERF;
		*tool = "genai-perf profile";
	} else {
		return -1;
	}
#undef HAS
	return 0;
}

static kvp_status push_run(struct kvp_bench_runs *runs, const struct kvp_bench_run *r)
{
	if (runs->n == runs->cap) {
		size_t cap = runs->cap ? 2 * runs->cap : 8;
		struct kvp_bench_run *v = realloc(runs->v, cap * sizeof *v);
		if (!v)
			return KVP_STATUS_NOMEM;
		runs->v = v;
		runs->cap = cap;
	}
	runs->v[runs->n++] = *r;
	return KVP_STATUS_OK;
}

/* Every per-request array the tools write but vLLM's input_lens (one
 * number a request, read as a fingerprint in bench-vllm.c): checked, never
 * kept (a 10,000-request --save-detailed file holds a million inter-token
 * gaps). */
static const char *const skip[] = {"itls", "ttfts", "output_lens",
				   "generated_texts", "errors", "start_times", "latencies",
				   "queue_times", "requests", "experiments", NULL};

static kvp_status one_run(const struct kvp_doc *doc, const struct kvp_node *obj,
			  const struct kvp_bench_given *given, struct kvp_bench_runs *runs,
			  struct kvp_error *err)
{
	struct kvp_bench_src s = {.doc = doc, .obj = obj};
	struct kvp_bench_run r;
	memset(&r, 0, sizeof r);
	snprintf(r.path, sizeof r.path, "%s", doc->path);
	r.line = obj->line;
	if (detect(obj, &r.format, &s.tool))
		return kvp_node_fail(doc, obj, err, KVP_STATUS_INVALID, NULL,
				     "not a benchmark result kvplan reads: expected the JSON of "
				     "vllm bench serve/latency, sglang bench_serving/bench_one_batch, "
				     "trtllm-bench --report_json, genai-perf or aiperf "
				     "(kvplan(1), CALIBRATE)");
	kvp_status st;
	switch (r.format) {
	case KVP_BENCH_FORMAT_VLLM_SERVE: st = kvp_bench_vllm_serve(&s, &r, err); break;
	case KVP_BENCH_FORMAT_VLLM_LATENCY: st = kvp_bench_vllm_latency(&s, given, &r, err); break;
	case KVP_BENCH_FORMAT_SGLANG_SERVING: st = kvp_bench_sglang_serving(&s, &r, err); break;
	case KVP_BENCH_FORMAT_SGLANG_ONE_BATCH: st = kvp_bench_sglang_one_batch(&s, &r, err); break;
	case KVP_BENCH_FORMAT_TRTLLM_BENCH: st = kvp_bench_trtllm(&s, &r, err); break;
	default: st = kvp_bench_genai_perf(&s, &r, err); break;
	}
	if (!st)
		st = kvp_bench_shape(&s, given, &r, err);
	if (!st && (!(r.batch > 0) || !r.prompt_tokens || !r.output_tokens))
		st = kvp_node_fail(doc, obj, err, KVP_STATUS_INVALID,
				   !(r.batch > 0) ? "batch" : !r.prompt_tokens ? "prompt_tokens"
				   : "output_tokens", "the run's shape is not recorded in the "
				   "file; give --batch, --prompt and --output as it ran");
	if (!st && (st = push_run(runs, &r)))
		kvp_error_set(err, st, doc->path, 0, 0, NULL, "out of memory");
	return st;
}

kvp_status kvp_bench_load(const char *path, const struct kvp_bench_given *given,
			  struct kvp_bench_runs *runs, struct kvp_error *err)
{
	struct kvp_json_opts o = {.skip = skip, .lines = true};
	struct kvp_doc *doc;
	kvp_status st = kvp_json_load_file(path, &o, &doc, err);
	if (st)
		return st;
	size_t before = runs->n;
	if (!doc->root || doc->root->n == 0)
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 1, 1, NULL,
				   "empty file: no benchmark result in it");
	for (size_t i = 0; !st && i < doc->root->n; i++)
		st = one_run(doc, doc->root->items[i], given, runs, err);
	if (st)
		runs->n = before;
	kvp_doc_free(doc);
	return st;
}

void kvp_bench_runs_free(struct kvp_bench_runs *runs)
{
	free(runs->v);
	memset(runs, 0, sizeof *runs);
}

bool kvp_bench_file_is_json(const char *path)
{
	FILE *f;
	struct kvp_error err = {0};
	if (kvp_input_open(path, &f, &err))
		return false;
	unsigned char head[4096];
	size_t n = fread(head, 1, sizeof head, f), i = 0;
	fclose(f);
	if (n >= 3 && memcmp(head, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
		i++;
	return i < n && (head[i] == '{' || head[i] == '[');
}
