/* bench-field.c: the located field readers every benchmark reader
 * (bench-*.c) uses, so their messages have one shape: file:line:col:
 * error: field: what was expected; and the shape the command line fills in
 * where a file left it out.  Below the readers and bench.c alike. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "read/bench-private.h"

kvp_status kvp_bench_fail(const struct kvp_bench_src *s, const struct kvp_node *obj,
			  const char *key, struct kvp_error *err, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	const struct kvp_node *at = key ? kvp_map_get(obj, key) : NULL;
	const char *p = s->ptr ? s->ptr : "";
	return kvp_node_fail(s->doc, at ? at : obj, err, KVP_STATUS_INVALID, key,
			     "%s (JSON pointer %s/%s)", msg, p, key ? key : "");
}

/* Every message names the field's JSON pointer in the run's object
 * beside file:line:col (a JSONL file: the line's object). */
static kvp_status fail_err(const struct kvp_bench_src *s, const struct kvp_node *at,
			   const char *key, struct kvp_error *err, const char *msg)
{
	return kvp_node_fail(s->doc, at, err, KVP_STATUS_INVALID, key, "%s (JSON pointer %s/%s)",
			     msg, s->ptr ? s->ptr : "", key);
}

static kvp_status missing(const struct kvp_bench_src *s, const struct kvp_node *obj,
			  const char *key, struct kvp_error *err)
{
	char msg[300];
	snprintf(msg, sizeof msg, "missing: %s writes '%s' in every result; is this file "
		 "cut short or edited?", s->tool, key);
	return fail_err(s, obj, key, err, msg);
}

kvp_status kvp_bench_num(const struct kvp_bench_src *s, const struct kvp_node *obj,
			 const char *key, double scale, bool required, double *out,
			 struct kvp_error *err)
{
	const struct kvp_node *n = kvp_map_get(obj, key);
	if (!n)
		return required ? missing(s, obj, key, err) : KVP_STATUS_OK;
	/* every tool read here writes its figures with json.dumps of Python
	 * numbers (vllm/benchmarks/serve.py, sglang bench_serving's result
	 * dict, trtllm-bench's get_statistics_dict, genai-perf's and AIPerf's
	 * exporters); the one figure vLLM quotes, request_rate "inf", is not
	 * read.  A number written as a string was written by something else:
	 * refused, not guessed at */
	if (n->type == KVP_NODE_SCALAR && n->quoted)
		return kvp_node_fail(s->doc, n, err, KVP_STATUS_INVALID, key,
				     "expected a number, got the string \"%.40s\": %s writes it as "
				     "a JSON number (JSON pointer %s/%s)", n->value, s->tool,
				     s->ptr ? s->ptr : "", key);
	double v;
	kvp_status st = kvp_node_double(s->doc, n, key, &v, err);
	if (st) {
		/* the walker's message, with the field's JSON pointer */
		if (err) {
			size_t len = strlen(err->msg);
			snprintf(err->msg + len, sizeof err->msg - len, " (JSON pointer %s/%s)",
				 s->ptr ? s->ptr : "", key);
		}
		return st;
	}
	if (!isfinite(v * scale))
		return fail_err(s, n, key, err, "too large");
	*out = v * scale;
	return KVP_STATUS_OK;
}

kvp_status kvp_bench_str(const struct kvp_bench_src *s, const struct kvp_node *obj,
			 const char *key, bool required, char *buf, size_t size,
			 struct kvp_error *err)
{
	const struct kvp_node *n = kvp_map_get(obj, key);
	if (!n) {
		buf[0] = 0;
		return required ? missing(s, obj, key, err) : KVP_STATUS_OK;
	}
	if (n->type != KVP_NODE_SCALAR)
		return fail_err(s, n, key, err, "expected a string");
	snprintf(buf, size, "%s", n->value);
	return KVP_STATUS_OK;
}

kvp_status kvp_bench_map(const struct kvp_bench_src *s, const struct kvp_node *obj,
			 const char *key, bool required, const struct kvp_node **out,
			 struct kvp_error *err)
{
	const struct kvp_node *n = kvp_map_get(obj, key);
	*out = NULL;
	if (!n)
		return required ? missing(s, obj, key, err) : KVP_STATUS_OK;
	if (n->type != KVP_NODE_MAP)
		return fail_err(s, n, key, err, "expected an object");
	*out = n;
	return KVP_STATUS_OK;
}

uint64_t kvp_bench_per_request(double total, double requests)
{
	if (!(requests > 0) || !(total > 0))
		return 0;
	double v = floor(total / requests + 0.5);
	return v < 1 ? 1 : v > 1e15 ? (uint64_t)1e15 : (uint64_t)v;
}

static kvp_status shape_u64(const struct kvp_bench_src *s, const char *field, uint64_t given,
			    uint64_t *have, const char *opt, struct kvp_error *err)
{
	if (given && *have && given != *have) {
		char msg[300];
		snprintf(msg, sizeof msg, "the file records %llu, %s gives %llu; leave %s out "
			 "or give the file's value", (unsigned long long)*have, opt,
			 (unsigned long long)given, opt);
		return fail_err(s, s->obj, field, err, msg);
	}
	if (!*have)
		*have = given;
	return KVP_STATUS_OK;
}

kvp_status kvp_bench_shape(const struct kvp_bench_src *s, const struct kvp_bench_given *given,
			   struct kvp_bench_run *run, struct kvp_error *err)
{
	uint64_t tp = run->tp, batch = (uint64_t)run->batch;
	kvp_status st;
	if ((st = shape_u64(s, "prompt_tokens", given->prompt_tokens, &run->prompt_tokens,
			    "--prompt", err)) ||
	    (st = shape_u64(s, "output_tokens", given->output_tokens, &run->output_tokens,
			    "--output", err)) ||
	    (st = shape_u64(s, "tp", given->tp, &tp, "--tp", err)))
		return st;
	/* a serving run's concurrency is measured, not set: --batch does not
	 * contradict it, and names only an offline batch */
	if (run->requests == 0 && (st = shape_u64(s, "batch", given->batch, &batch, "--batch", err)))
		return st;
	if (run->requests == 0)
		run->batch = (double)batch;
	run->tp = (uint32_t)tp;
	if (!run->model_id[0] && given->model_id)
		snprintf(run->model_id, sizeof run->model_id, "%s", given->model_id);
	return KVP_STATUS_OK;
}

