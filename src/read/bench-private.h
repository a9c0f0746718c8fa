/* bench-private.h: what the benchmark readers (bench-*.c) share: the
 * located field readers of a run's JSON object and the per-format entry
 * points bench.c dispatches to.  Not part of the reading layer's interface
 * (bench.h is). */
#ifndef KVP_BENCH_PRIVATE_H
#define KVP_BENCH_PRIVATE_H

#include <stdbool.h>

#include "base/yaml-walk.h"
#include "read/bench.h"

/* One run's object in its file. */
struct kvp_bench_src {
	const struct kvp_doc *doc;
	const struct kvp_node *obj;
	const char *tool;              /* for messages: "vllm bench serve --save-result" */
	/* obj's JSON pointer (RFC 6901) in its run's object, for messages:
	 * "" the run itself, "/server_info" a member (NULL: ""); keys the
	 * readers name are plain words, nothing to escape */
	const char *ptr;
};

/* The number at obj's `key` (a non-negative double), scaled by `scale`.
 * Absent (or null): INVALID naming the key when `required`, else *out
 * untouched and OK. */
kvp_status kvp_bench_num(const struct kvp_bench_src *s, const struct kvp_node *obj,
			 const char *key, double scale, bool required, double *out,
			 struct kvp_error *err);
/* The same for a string (copied, cut to size); absent and not required: "" */
kvp_status kvp_bench_str(const struct kvp_bench_src *s, const struct kvp_node *obj,
			 const char *key, bool required, char *buf, size_t size,
			 struct kvp_error *err);
/* The mapping at obj's `key`, or NULL when absent (INVALID when required or
 * when it is not a mapping). */
kvp_status kvp_bench_map(const struct kvp_bench_src *s, const struct kvp_node *obj,
			 const char *key, bool required, const struct kvp_node **out,
			 struct kvp_error *err);
/* INVALID at obj's `key` (or obj itself when key is absent from it). */
kvp_status kvp_bench_fail(const struct kvp_bench_src *s, const struct kvp_node *obj,
			  const char *key, struct kvp_error *err, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* Tokens per request, total / requests rounded to nearest, at least 1. */
uint64_t kvp_bench_per_request(double total, double requests);
/* Fill run's shape from `given` where the file left it out; INVALID naming
 * `field` where both hold one and they differ. */
kvp_status kvp_bench_shape(const struct kvp_bench_src *s, const struct kvp_bench_given *given,
			   struct kvp_bench_run *run, struct kvp_error *err);

/* The readers: run is cleared and holds path, line and format. */
kvp_status kvp_bench_vllm_serve(const struct kvp_bench_src *s, struct kvp_bench_run *run,
				struct kvp_error *err);
kvp_status kvp_bench_vllm_latency(const struct kvp_bench_src *s, const struct kvp_bench_given *g,
				  struct kvp_bench_run *run, struct kvp_error *err);
kvp_status kvp_bench_sglang_serving(const struct kvp_bench_src *s, struct kvp_bench_run *run,
				    struct kvp_error *err);
kvp_status kvp_bench_sglang_one_batch(const struct kvp_bench_src *s, struct kvp_bench_run *run,
				      struct kvp_error *err);
kvp_status kvp_bench_trtllm(const struct kvp_bench_src *s, struct kvp_bench_run *run,
			    struct kvp_error *err);
kvp_status kvp_bench_genai_perf(const struct kvp_bench_src *s, struct kvp_bench_run *run,
				struct kvp_error *err);

#endif
