/* checks.h: `kvplan check`, the CI guard of memory budgets: an expectations
 * file of scenarios with assertions on their output records, a baseline of
 * every scalar field with a tolerance, and JUnit XML and TAP reports.
 *
 * The stance: a scenario is run by the same library call as its command
 * (budget, perf, frag: each command kind is one scenario -> record function
 * in check-commands.c's table), and assertions read the record back by field
 * name (output.h), so `check` can test exactly what `kvplan CMD --format
 * json` prints and nothing else.  Parsing refuses what it does not
 * understand, with file:line:col; running never stops at the first failure:
 * every scenario and assertion gets an outcome.
 *
 *   defaults:                     # optional: inputs every scenario starts from
 *     gpu: h100-sxm
 *   scenarios:
 *     - name: llama8b-h100-chat
 *       command: budget           # the default
 *       model: llama-3.1-8b
 *       engine: vllm
 *       kv_dtype: fp8
 *       context: 8192
 *       batch: 32
 *       expect:
 *         - fits == true
 *         - max_sequences >= 64
 *         - kv_pool_bytes ~ 58GiB within 2%
 *         - fits: true            # a one-key map means ==
 *
 * An assertion is FIELD OP VALUE with OP one of == != < <= > >= and
 * "~ VALUE within P%" (|got - VALUE| <= P% of |VALUE|; exactly at P% holds).
 * FIELD names a scalar field of the record ("layers.full.bytes_per_token"
 * descends).  Commands that print rows (perf: one per batch; frag: one per
 * policy and allocator or block size) are addressed with a selector,
 * "rows[batch=8].ttft_s", "rows[policy=paged,block_size=16].used_fraction":
 * the one row whose fields equal the values given; with a single row, a bare
 * row field ("ttft_s") names it.  VALUE is true/false, a number, a size
 * (58GiB, 80GB), a token count (128k) or a string (bare or quoted).
 *
 * (Named checks.h, not check.h: the tests include the Check framework's
 * <check.h> with src/ on the include path.) */
#ifndef KVP_CHECKS_H
#define KVP_CHECKS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "memory/budget.h"
#include "base/error.h"
#include "frag/frag.h"
#include "out/output.h"
#include "time/perf.h"

#define KVP_CHECK_NAME_MAX 128
#define KVP_CHECK_TEXT_MAX 256
#define KVP_CHECK_INPUTS_MAX 40

enum kvp_check_op {
	KVP_CHECK_OP_EQ, KVP_CHECK_OP_NE, KVP_CHECK_OP_LT, KVP_CHECK_OP_LE,
	KVP_CHECK_OP_GT, KVP_CHECK_OP_GE, KVP_CHECK_OP_NEAR
};

const char *kvp_check_op_str(enum kvp_check_op op);

enum kvp_check_value_kind {
	KVP_CHECK_VALUE_NUMBER, KVP_CHECK_VALUE_BOOL, KVP_CHECK_VALUE_STRING
};

/* An expected value as written.  Numbers keep an exact uint64_t when they are
 * whole and non-negative (sizes always are), so byte counts compare exactly. */
struct kvp_check_value {
	enum kvp_check_value_kind kind;
	bool exact;                   /* NUMBER: u holds it exactly */
	uint64_t u;
	double d;                     /* NUMBER: the value (also when exact) */
	bool b;
	char text[KVP_CHECK_TEXT_MAX];/* unquoted text: strings, messages */
};

/* A percentage held exactly: num / 10^scale percent ("2.5%": 25, 1). */
struct kvp_check_pct {
	uint64_t num;
	unsigned scale;
	char text[32];                /* as written, "2.5%" */
};

/* "2%" or "0.25%" -> *out; -1 when malformed (a % sign is required), -2 when
 * it has more than 9 decimals or overflows. */
int kvp_check_pct_parse(const char *s, struct kvp_check_pct *out);
double kvp_check_pct_fraction(const struct kvp_check_pct *p);

/* |got - want| <= p of |want|, exactly for whole numbers; for other numbers
 * within a few ulps, so that "exactly at the tolerance" holds. */
bool kvp_check_near_u64(uint64_t got, uint64_t want, const struct kvp_check_pct *p);
bool kvp_check_near_f64(double got, double want, const struct kvp_check_pct *p);

struct kvp_check_assert {
	char text[KVP_CHECK_TEXT_MAX];   /* as written, for reports */
	char field[KVP_CHECK_NAME_MAX];
	enum kvp_check_op op;
	struct kvp_check_value want;
	struct kvp_check_pct within;     /* NEAR */
	int line, col;                   /* of the field name */
	int value_line, value_col;       /* of the value */
};

/* An input as written in the file (after defaults), for reports, baselines
 * and the commands' own keys.  key and value point into the scenario's one
 * block of inputs (exactly the bytes written), never NULL once loaded. */
struct kvp_check_input {
	const char *key;
	const char *value;
	int line, col;
};

/* The inputs of `command: perf` beyond the common ones (kvplan perf's options). */
struct kvp_check_perf {
	uint64_t prompt, output;          /* tokens; 0: context (else 1024), and 256 */
	uint64_t batches[KVP_PERF_MAX_BATCHES];
	size_t nbatch;                    /* `batch` as a list, else 0 */
	char kv_offload[64];              /* "" none */
	char host_link[64];               /* "" the GPU profile's */
	double offload_fraction;          /* < 0: what does not fit in the pool */
	uint64_t prefix;                  /* 0: the prompt */
	double decode_bw_efficiency, prefill_flops_efficiency;   /* 0: the GPU's */
};

/* The inputs of `command: frag` beyond the common ones (kvplan frag's options). */
struct kvp_check_frag {
	const char *workload;             /* a name, or a path resolved against the file;
					   * "" for other commands (in the inputs block) */
	struct kvp_frag_opts opts;
};

struct kvp_check_scenario;
/* One command kind: run a scenario and fill `out` with the same record the
 * command prints with --format json.  Errors come back located (the CLI adds
 * the scenario). */
typedef kvp_status (*kvp_check_run_fn)(const struct kvp_check_scenario *s, struct kvp_record *out,
				       struct kvp_error *err);

struct kvp_check_scenario {
	char name[KVP_CHECK_NAME_MAX];
	char command[16];                /* budget, frag, perf */
	kvp_check_run_fn run;
	int line, col;                   /* the scenario's mapping */
	const char *model;               /* a name, or a path resolved against the file */
	const char *gpu;                 /* "" when gpu_memory stands in */
	struct kvp_budget_opts opts;
	struct kvp_check_perf perf;
	struct kvp_check_frag frag;
	/* owned: one allocation holding the inputs, then their text and the
	 * model, gpu and workload strings above (a scenario's memory is its
	 * fixed fields, its assertions and the bytes it wrote, never 40 x 544
	 * bytes of slots; kvplan(1), CHECK, states the bound) */
	struct kvp_check_input *inputs;
	size_t ninputs;
	struct kvp_check_assert *asserts;
	size_t nasserts;
};

struct kvp_check_source;

struct kvp_check_file {
	char path[512];
	struct kvp_check_scenario *scenarios;  /* all n (kvp_check_load); NULL (kvp_check_open) */
	size_t n;
	struct kvp_check_source *src;          /* kvp_check_open: the document, read again */
};

/* Load an expectations file (or a buffer named `name`).  Unknown keys,
 * malformed assertions, duplicate scenario names and unknown commands are
 * INVALID with file:line:col; *out is NULL on failure. */
kvp_status kvp_check_load(const char *path, struct kvp_check_file **out, struct kvp_error *err);
kvp_status kvp_check_load_buffer(const char *name, const char *buf, size_t len,
				 struct kvp_check_file **out, struct kvp_error *err);
void kvp_check_file_free(struct kvp_check_file *f);

/* Open an expectations file to be read one scenario at a time: every
 * scenario is read and checked as kvp_check_load does (the same errors, the
 * same first one), then freed; f->n counts them, f->scenarios is NULL and
 * only the document is kept (its tree: 950 bytes for a scenario of a name,
 * a key and an assertion; kvplan(1), CHECK), so a run holds one scenario
 * at a time. */
kvp_status kvp_check_open(const char *path, struct kvp_check_file **out, struct kvp_error *err);
/* Read scenario i (< f->n) of an opened file into s; free its blocks with
 * kvp_check_scenario_clear.  Fails as the open did only if what the file
 * names changed since (a relative profile path), or memory runs out. */
kvp_status kvp_check_scenario_read(const struct kvp_check_file *f, size_t i,
				   struct kvp_check_scenario *s, struct kvp_error *err);
void kvp_check_scenario_clear(struct kvp_check_scenario *s);

/* The input `key` as written, or NULL. */
const struct kvp_check_input *kvp_check_input_get(const struct kvp_check_scenario *s,
						  const char *key);

enum kvp_check_outcome { KVP_CHECK_PASS, KVP_CHECK_FAIL, KVP_CHECK_ERROR };

struct kvp_check_result {
	enum kvp_check_outcome outcome;
	char got[KVP_CHECK_TEXT_MAX];    /* the field's value as text ("" when absent) */
	char why[640];                   /* FAIL: how far off; ERROR: a located message */
};

/* Evaluate one assertion against a record.  A field that is absent, not a
 * scalar, or of a type the value cannot be compared with is an ERROR whose
 * message carries path:line:col (path names the expectations file). */
void kvp_check_eval(const char *path, const struct kvp_check_assert *a,
		    const struct kvp_record *r, struct kvp_check_result *out);

/* One field that moved against the baseline. */
struct kvp_check_drift {
	char field[KVP_CHECK_NAME_MAX];
	char old_value[KVP_CHECK_TEXT_MAX];  /* "(absent)" when new */
	char new_value[KVP_CHECK_TEXT_MAX];  /* "(absent)" when removed */
	double change;                       /* (new - old) / old; NaN when not numeric or old = 0 */
	bool fail;                           /* beyond the tolerance (new fields only note) */
};

enum kvp_check_baseline_state {
	KVP_CHECK_BASELINE_NONE,     /* no baseline asked for */
	KVP_CHECK_BASELINE_SAME,     /* every field within the tolerance */
	KVP_CHECK_BASELINE_DRIFT,    /* some field moved beyond it */
	KVP_CHECK_BASELINE_MISSING   /* the scenario is not in the baseline */
};

struct kvp_check_scenario_result {
	const struct kvp_check_scenario *scenario; /* what ran: the writers read it */
	struct kvp_record *record;       /* owned; NULL when the scenario could not run */
	struct kvp_error err;            /* why it could not run */
	struct kvp_check_result *results;/* one per assertion */
	enum kvp_check_baseline_state baseline;
	struct kvp_check_drift *drift;
	size_t ndrift;
	char inputs_changed[1024];       /* "utilization 0.9 -> 0.85; + kv_dtype fp8" */
	double time_s;
};

struct kvp_check_baseline;

struct kvp_check_report {
	const struct kvp_check_file *file;
	struct kvp_check_scenario_result *s;   /* file->n of them; NULL from kvp_check_run_each */
	size_t passed, failed, errors;         /* test points: assertions, baselines, runs */
	bool with_baseline;
	struct kvp_check_pct tolerance;
	char baseline_path[512];
	double time_s;
};

/* Run every scenario and evaluate every assertion.  Fails only when memory
 * runs out; a scenario that cannot run is an error outcome in the report. */
kvp_status kvp_check_run(const struct kvp_check_file *f, struct kvp_check_report **out,
			 struct kvp_error *err);
void kvp_check_report_free(struct kvp_check_report *r);

/* Called after each scenario has run (and been compared with the baseline,
 * when one is given): i is its index in the file, res its outcome (and
 * res->scenario the scenario), both freed when the call returns.  A non-OK
 * status stops the run and is returned. */
typedef kvp_status (*kvp_check_each_fn)(void *ctx, const struct kvp_check_report *r, size_t i,
					const struct kvp_check_scenario_result *res);
/* Called before scenario i runs, on the copy that runs: it may set what
 * only the run reads (a frag scenario's progress callback). */
typedef void (*kvp_check_before_fn)(void *ctx, size_t i, struct kvp_check_scenario *s);

/* Run the scenarios one at a time (read one at a time from a file opened
 * with kvp_check_open; or those kvp_check_load kept), compare each with the
 * baseline b (NULL: none) within tolerance, and hand each outcome to `each`
 * (the writers' per-scenario functions below), so memory does not grow
 * with the number of scenarios: the report's counts and time are kept, its
 * s stays NULL.  before may be NULL.  Fails when memory runs out, a
 * scenario cannot be read again, or `each` fails. */
kvp_status kvp_check_run_each(const struct kvp_check_file *f, const struct kvp_check_baseline *b,
			      const struct kvp_check_pct *tolerance, kvp_check_before_fn before,
			      kvp_check_each_fn each, void *ctx, struct kvp_check_report **out,
			      struct kvp_error *err);

/* The test points of a report, in order, as JUnit and TAP see them.  Each is
 * an assertion, a baseline comparison or a scenario that could not run. */
enum kvp_check_point_kind { KVP_CHECK_POINT_RUN, KVP_CHECK_POINT_ASSERT, KVP_CHECK_POINT_BASELINE };
struct kvp_check_point {
	enum kvp_check_point_kind kind;
	size_t scenario, index;          /* index: the assertion */
	enum kvp_check_outcome outcome;
};
/* Fill pts (up to max) and return how many there are. */
size_t kvp_check_points(const struct kvp_check_report *r, struct kvp_check_point *pts, size_t max);
/* The same for scenario i whose outcome is res. */
size_t kvp_check_scenario_points(const struct kvp_check_report *r, size_t i,
				 const struct kvp_check_scenario_result *res,
				 struct kvp_check_point *pts, size_t max);

/* A baseline: every scalar field of every scenario, with its inputs. */
struct kvp_check_baseline_entry {
	char scenario[KVP_CHECK_NAME_MAX];
	char command[16];
	struct kvp_record *inputs;       /* owned: key -> value as written */
	struct kvp_record *fields;       /* owned: flat "a.b" names -> values */
};
struct kvp_check_baseline {
	char path[512];
	struct kvp_check_baseline_entry *e;
	size_t n;
};

/* Write the baseline of a report's scenarios (those that ran) as YAML that
 * kvp_check_baseline_load reads back; doubles round-trip exactly. */
void kvp_check_baseline_write(FILE *f, const struct kvp_check_report *r);
kvp_status kvp_check_baseline_load(const char *path, struct kvp_check_baseline **out,
				   struct kvp_error *err);
kvp_status kvp_check_baseline_load_buffer(const char *name, const char *buf, size_t len,
					  struct kvp_check_baseline **out, struct kvp_error *err);
void kvp_check_baseline_free(struct kvp_check_baseline *b);

/* Compare each scenario of the report with the baseline: a numeric field
 * fails when |new - old| > tolerance of |old|; a string or bool field when it
 * changed; a field the baseline has and the output lacks fails; a field the
 * output has and the baseline lacks is noted.  Updates the counts; fails
 * only when memory runs out. */
kvp_status kvp_check_compare(struct kvp_check_report *r, const struct kvp_check_baseline *b,
			     const struct kvp_check_pct *tolerance);

/* JUnit XML (one <testsuites> with one <testsuite> per scenario; valid
 * against tests/data/check/junit.xsd) and TAP version 13 with YAML
 * diagnostics. */
void kvp_check_write_junit(FILE *f, const struct kvp_check_report *r);
void kvp_check_write_tap(FILE *f, const struct kvp_check_report *r);

/* The same, one scenario at a time (kvp_check_run_each): the head needs the
 * report's final counts (JUnit's totals, TAP's plan of npoints = passed +
 * failed + errors), so a streaming caller writes the scenarios first and
 * puts the head before them; *number counts TAP's points across calls. */
void kvp_check_junit_head(FILE *f, const struct kvp_check_report *r);
void kvp_check_junit_scenario(FILE *f, const struct kvp_check_report *r, size_t i,
			      const struct kvp_check_scenario_result *res);
void kvp_check_junit_tail(FILE *f);
void kvp_check_tap_head(FILE *f, size_t npoints);
void kvp_check_tap_scenario(FILE *f, const struct kvp_check_report *r, size_t i,
			    const struct kvp_check_scenario_result *res, size_t *number);
void kvp_check_tap_tail(FILE *f, const struct kvp_check_report *r);
void kvp_check_baseline_head(FILE *f, const struct kvp_check_report *r);
void kvp_check_baseline_scenario(FILE *f, const struct kvp_check_report *r, size_t i,
				 const struct kvp_check_scenario_result *res);

/* One line describing a scenario's inputs: "budget: model llama-2-7b, tp 1". */
void kvp_check_inputs_format(const struct kvp_check_scenario *s, char *buf, size_t size);

#endif
