/* report.h: design-review reports: a scenario file (models, GPUs, engines,
 * splits, KV dtypes, workloads, questions, plots) read with located errors,
 * and a report written from it: DIR/report.md and DIR/report.html (the same
 * content; the HTML opens in a browser with its images) with the tables, the
 * arithmetic and the charts (DIR/plots/, see plot.h).
 *
 * Stance: the report only arranges what the library computes (model, budget,
 * plot); every number in it comes from kvp_budget_compute and kvp_spec_build.
 * A missing gnuplot costs the images, never the report.
 *
 *   title: "Llama-3.1-70B on H100 or H200"      # required
 *   description: "..."                          # optional
 *   models: [llama-3.1-70b]                     # profile names or paths, required
 *   gpus: [h100-sxm, h200]                      # required
 *   engines: [vllm]                             # default [generic]
 *   tp: [2, 4, 8]                               # default [1]
 *   kv_dtypes: [auto, fp8]                      # default [auto]
 *   utilization: 0.9                            # optional, as --utilization
 *   block_size: 16                              # optional, as --block-size
 *   max_batched_tokens: 8192                    # optional
 *   workloads:                                  # required
 *     - {name: chat, context: 8k, batch: 64,
 *        profile: chat}                         # optional: request lengths for
 *                                               # the block-size chart
 *   results: [kvbench-h100.yaml]                # optional: kvbench --out files
 *   questions: [fit, max-context, utilization]  # default [fit]
 *   plots: [budget, kv-context, max-seqs, perf, block-size, validate]
 *                                               # default: every one that applies
 *                                               # (block-size needs a profile,
 *                                               # validate results); [] for none
 *
 * Paths (models, GPUs, profiles, results) are taken from the scenario's
 * directory when relative.
 *
 * Lists hold at most KVP_SCENARIO_MAX entries; the options (models x GPUs x
 * engines x tp x KV dtypes) at most KVP_SCENARIO_MAX_OPTIONS. */
#ifndef KVP_REPORT_H
#define KVP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memory/budget.h"
#include "base/error.h"
#include "model/model.h"
#include "plot/plot.h"
#include "read/profile.h"

#define KVP_SCENARIO_MAX 16
#define KVP_SCENARIO_MAX_OPTIONS 128

enum kvp_question {
	KVP_QUESTION_FIT = 1,          /* does batch x context fit; max sequences */
	KVP_QUESTION_MAX_CONTEXT = 2,  /* the longest context for the batch */
	KVP_QUESTION_UTILIZATION = 4   /* the memory fraction batch x context needs */
};

enum kvp_report_plot {
	KVP_REPORT_PLOT_BUDGET = 1,
	KVP_REPORT_PLOT_KV_CONTEXT = 2,
	KVP_REPORT_PLOT_MAX_SEQS = 4,
	KVP_REPORT_PLOT_PERF = 8,
	KVP_REPORT_PLOT_BLOCK_SIZE = 16,
	KVP_REPORT_PLOT_VALIDATE = 32
};

struct kvp_workload;

struct kvp_scenario_workload {
	char name[64];
	uint64_t context;   /* tokens per sequence */
	uint64_t batch;     /* concurrent sequences */
	struct kvp_workload *lengths;  /* the profile named, owned; NULL: none */
};

struct kvp_scenario {
	char path[512];
	char title[256];
	char description[2048];
	struct kvp_model *models;      /* nmodels, owned */
	struct kvp_gpu *gpus;          /* ngpus, owned */
	size_t nmodels, ngpus;
	enum kvp_engine engines[KVP_SCENARIO_MAX];
	uint32_t tp[KVP_SCENARIO_MAX];
	enum kvp_dtype kv[KVP_SCENARIO_MAX];
	size_t nengines, ntp, nkv;
	double utilization;            /* 0: the engine's default */
	uint32_t block_size;           /* 0: the engine's default */
	uint64_t max_batched_tokens;   /* 0: the default */
	struct kvp_scenario_workload workloads[KVP_SCENARIO_MAX];
	size_t nworkloads;
	unsigned questions;            /* enum kvp_question bits */
	unsigned plots;                /* enum kvp_report_plot bits */
	char results[KVP_SCENARIO_MAX][512];  /* kvbench --out files */
	size_t nresults;
};

/* Read a scenario file and load the profiles it names.  Errors carry
 * file:line:col and the field (unknown keys, wrong types, unknown names,
 * out-of-range values); a model or GPU file that is itself invalid reports
 * its own location.  On failure *s is left empty (kvp_scenario_free is safe). */
kvp_status kvp_scenario_load(const char *path, struct kvp_scenario *s, struct kvp_error *err);
void kvp_scenario_free(struct kvp_scenario *s);

struct kvp_report_opts {
	const char *dir;               /* created when missing */
	enum kvp_plot_term term;       /* png or svg (the HTML shows either) */
	const char *gnuplot;           /* NULL: gnuplot on PATH */
	const char *source;            /* the command line, for the report's footer */
};

struct kvp_report_result {
	size_t plots;                  /* charts written (.dat + .gp) */
	size_t images;                 /* of which gnuplot rendered */
	struct kvp_error render;       /* the first render failure (status OK: none) */
};

/* Write DIR/report.md, DIR/report.html and DIR/plots/.  IO when a file cannot
 * be written; a render failure is not an error (see result->render). */
kvp_status kvp_report_write(const struct kvp_scenario *s, const struct kvp_report_opts *o,
			    struct kvp_report_result *result, struct kvp_error *err);

#endif
