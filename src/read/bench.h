/* bench.h: the benchmark result files engines already write, read into one
 * shape of run: what was run (the tool, the model, the shape: batch or
 * concurrency, prompt and output tokens) and what it measured (medians of
 * TTFT and TPOT for a serving benchmark; a prefill and a decode step, or a
 * whole batch's latency, for an offline one).
 *
 * Stance: a reader takes from a file only what its tool wrote there, each
 * field as that tool's source defines it (cited beside each reader); what the
 * file does not record (the GPU, often the model or tp) comes from the
 * command line (struct kvp_bench_given), and a value the file records and
 * the command line contradicts is an error naming both.  Times are seconds,
 * whatever unit the tool wrote.  Errors carry file:line:col and the field.
 *
 * Formats (enum kvp_bench_format), detected by their keys:
 *   vllm-serve      `vllm bench serve --save-result` / benchmark_serving.py
 *                   (one object, or one per line with --append-result)
 *   vllm-latency    `vllm bench latency --output-json` / benchmark_latency.py
 *   sglang-serving  `python -m sglang.bench_serving --output-file` (JSON Lines)
 *   sglang-one-batch `python -m sglang.bench_one_batch --result-filename` (JSON Lines)
 *   trtllm-bench    `trtllm-bench throughput --report_json`
 *   genai-perf      genai-perf's `<prefix>_genai_perf.json` and AIPerf's
 *                   `profile_export_aiperf.json` summaries */
#ifndef KVP_BENCH_H
#define KVP_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/error.h"
#include "read/profile.h"

enum kvp_bench_format {
	KVP_BENCH_FORMAT_VLLM_SERVE,
	KVP_BENCH_FORMAT_VLLM_LATENCY,
	KVP_BENCH_FORMAT_SGLANG_SERVING,
	KVP_BENCH_FORMAT_SGLANG_ONE_BATCH,
	KVP_BENCH_FORMAT_TRTLLM_BENCH,
	KVP_BENCH_FORMAT_GENAI_PERF,
	KVP_BENCH_FORMAT_AIPERF,
};

/* "vllm-serve", "vllm-latency", ... as above */
const char *kvp_bench_format_name(enum kvp_bench_format f);

/* What a run measured, in seconds; 0: not measured. */
struct kvp_bench_measured {
	double ttft_s;          /* median time to first token (serving) */
	double tpot_s;          /* median time per output token after the first (serving) */
	double prefill_s;       /* one prefill of batch x prompt tokens (offline) */
	double decode_step_s;   /* median decode step of the batch (offline) */
	double latency_s;       /* one whole batch: prefill and every decode step (offline) */
};

struct kvp_bench_run {
	char path[512];
	int line;                       /* where the run starts in the file, 1-based */
	enum kvp_bench_format format;
	char engine[16];                /* vllm, sglang, trtllm; "" when the tool drives any */
	char engine_version[32];        /* where the file records it, else "" */
	char model_id[KVP_NAME_MAX];    /* where the file records it, else "" */
	char gpu[KVP_NAME_MAX];         /* where the file records it, else "" */
	char date[32];                  /* where the file records it, else "" */
	uint32_t tp;                    /* 0: not recorded */
	/* the shape: sequences in flight (a batch, or a serving run's mean
	 * concurrency by Little's law where the tool gives no figure) and the
	 * mean prompt and output tokens of its requests */
	double batch;
	uint64_t prompt_tokens, output_tokens;
	uint64_t requests;              /* completed; 0 for an offline batch */
	/* a serving run's requests completed a second (its measured
	 * throughput, which in a steady state is the rate they arrive and
	 * are admitted at); 0: not recorded, or an offline batch */
	double throughput_rps;
	struct kvp_bench_measured m;
	/* the running batch's mean decode context in tokens where the file
	 * records how its requests' lengths were drawn (an SGLang
	 * bench_serving random dataset with a range ratio below 1: read in
	 * bench-sglang.c); 0: every request of the mean lengths, p + (o - 1) / 2 */
	double decode_context;
	/* the requests' prompt lengths where the file lists them in the order
	 * sent (vllm bench serve's input_lens): how many, an FNV-1a hash of
	 * the list, and whether two of them differ; 0: not listed.  How
	 * calibrate and validate tell a run that sends an earlier run's
	 * prompts again (calibrate-fit.c check_repeats) */
	uint64_t prompts_listed, prompts_hash;
	bool prompts_vary;
	/* every request sent at once, none waited for: vLLM's request_rate
	 * "inf" without max_concurrency (bench-vllm.c); a burst, not the
	 * steady state the TTFT rules describe (calibrate-fit.c check_bursts) */
	bool burst;
};

/* The shape the command line gives, for what a file does not record (0 or
 * "": not given).  A file's value beside a different given one is INVALID. */
struct kvp_bench_given {
	uint64_t batch, prompt_tokens, output_tokens;
	uint32_t tp;
	const char *model_id;
};

struct kvp_bench_runs {
	struct kvp_bench_run *v;
	size_t n, cap;
};

/* Read every run of the file at `path` (one, or one per line) and append
 * them to runs.  PARSE for malformed or truncated JSON (file:line:col);
 * INVALID for a file of no format above, a missing or out-of-range field, or
 * a shape neither the file nor `given` holds (each naming the field). */
kvp_status kvp_bench_load(const char *path, const struct kvp_bench_given *given,
			  struct kvp_bench_runs *runs, struct kvp_error *err);
void kvp_bench_runs_free(struct kvp_bench_runs *runs);

/* Whether the file at `path` reads as JSON: its first byte past blanks and a
 * UTF-8 byte-order mark is '{' or '[' (every format above; kvbench's results
 * are YAML or CSV, which never open so).  How `kvplan validate` and `plot
 * validate` tell an engine's benchmark file from kvbench's.  false when the
 * file cannot be read: the reader chosen then says why, located. */
bool kvp_bench_file_is_json(const char *path);

#endif
