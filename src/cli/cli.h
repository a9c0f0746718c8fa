/* cli.h: what every kvplan subcommand shares: the command table, the common
 * planner options (model, GPU, engine, split, dtypes, sizes, overrides,
 * format), and turning library errors into messages and exit codes.
 *
 * Exit codes (kvplan(1)): 0 ok, 1 a requested check failed or something does
 * not fit, 2 usage, 3 invalid input file. */
#ifndef KVP_CLI_H
#define KVP_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "memory/budget.h"
#include "base/error.h"
#include "out/output.h"
#include "read/profile.h"
#include "memory/draft.h"

#define KVP_EXIT_OK 0
#define KVP_EXIT_FAIL 1
#define KVP_EXIT_USAGE 2
#define KVP_EXIT_INPUT 3

struct kvp_cmd {
	const char *name;
	const char *summary;
	int (*exec)(int argc, char **argv);
};

/* Options every planner command accepts; ids start at KVP_OPT_BASE. */
enum {
	KVP_OPT_BASE = 1000,
	KVP_OPT_MODEL, KVP_OPT_GPU, KVP_OPT_ENGINE, KVP_OPT_TP, KVP_OPT_PP, KVP_OPT_DTYPE,
	KVP_OPT_KV_DTYPE, KVP_OPT_BLOCK_SIZE, KVP_OPT_UTILIZATION, KVP_OPT_CONTEXT,
	KVP_OPT_BATCH, KVP_OPT_MAX_BATCHED_TOKENS, KVP_OPT_MAX_NUM_SEQS, KVP_OPT_WEIGHTS_BYTES,
	KVP_OPT_ACTIVATION_BYTES, KVP_OPT_OVERHEAD_BYTES, KVP_OPT_GPU_MEMORY,
	KVP_OPT_DISABLE_HYBRID, KVP_OPT_FORMAT, KVP_OPT_HELP, KVP_OPT_WEIGHTS_DTYPE, KVP_OPT_ENGINE_VERSION,
	KVP_OPT_DP, KVP_OPT_EP, KVP_OPT_NUM_GPUS, KVP_OPT_SPEC_DRAFT, KVP_OPT_SPEC_ACCEPT,
	KVP_OPT_SPEC_ACCEPT_RATE, KVP_OPT_SPEC_ACCEPTANCE,
	KVP_OPT_P2P, KVP_OPT_PREPROCESSOR_CONFIG,
	KVP_OPT_LAST
};

#define KVP_CLI_COMMON_OPTIONS                                                         \
	{"model", required_argument, NULL, KVP_OPT_MODEL},                             \
	{"gpu", required_argument, NULL, KVP_OPT_GPU},                                 \
	{"engine", required_argument, NULL, KVP_OPT_ENGINE},                           \
	{"engine-version", required_argument, NULL, KVP_OPT_ENGINE_VERSION},           \
	{"p2p", required_argument, NULL, KVP_OPT_P2P},                                 \
	{"tp", required_argument, NULL, KVP_OPT_TP},                                   \
	{"pp", required_argument, NULL, KVP_OPT_PP},                                   \
	{"dp", required_argument, NULL, KVP_OPT_DP},                                   \
	{"ep", required_argument, NULL, KVP_OPT_EP},                                   \
	{"num-gpus", required_argument, NULL, KVP_OPT_NUM_GPUS},                       \
	{"spec-draft", required_argument, NULL, KVP_OPT_SPEC_DRAFT},                   \
	{"spec-accept", required_argument, NULL, KVP_OPT_SPEC_ACCEPT},                 \
	{"spec-accept-rate", required_argument, NULL, KVP_OPT_SPEC_ACCEPT_RATE},       \
	{"spec-acceptance", required_argument, NULL, KVP_OPT_SPEC_ACCEPTANCE},         \
	{"dtype", required_argument, NULL, KVP_OPT_DTYPE},                             \
	{"kv-dtype", required_argument, NULL, KVP_OPT_KV_DTYPE},                       \
	{"weights-dtype", required_argument, NULL, KVP_OPT_WEIGHTS_DTYPE},             \
	{"preprocessor-config", required_argument, NULL, KVP_OPT_PREPROCESSOR_CONFIG}, \
	{"block-size", required_argument, NULL, KVP_OPT_BLOCK_SIZE},                   \
	{"utilization", required_argument, NULL, KVP_OPT_UTILIZATION},                 \
	{"context", required_argument, NULL, KVP_OPT_CONTEXT},                         \
	{"batch", required_argument, NULL, KVP_OPT_BATCH},                             \
	{"max-batched-tokens", required_argument, NULL, KVP_OPT_MAX_BATCHED_TOKENS},   \
	{"max-num-seqs", required_argument, NULL, KVP_OPT_MAX_NUM_SEQS},               \
	{"weights-bytes", required_argument, NULL, KVP_OPT_WEIGHTS_BYTES},             \
	{"activation-bytes", required_argument, NULL, KVP_OPT_ACTIVATION_BYTES},       \
	{"overhead-bytes", required_argument, NULL, KVP_OPT_OVERHEAD_BYTES},           \
	{"gpu-memory", required_argument, NULL, KVP_OPT_GPU_MEMORY},                   \
	{"disable-hybrid-kv", no_argument, NULL, KVP_OPT_DISABLE_HYBRID},              \
	{"format", required_argument, NULL, KVP_OPT_FORMAT},                           \
	{"help", no_argument, NULL, KVP_OPT_HELP}

/* The option help text matching KVP_CLI_COMMON_OPTIONS. */
extern const char kvp_cli_common_help[];

struct kvp_cli_common {
	const char *model;          /* name or path */
	const char *gpu;
	const char *spec_draft, *spec_accept;   /* --spec-draft, --spec-accept */
	const char *spec_accept_rate;           /* --spec-accept-rate (a per position) */
	const char *spec_acceptance;            /* --spec-acceptance (accepted / drafted) */
	struct kvp_speculative speculative;      /* parsed by kvp_cli_speculative */
	enum kvp_format format;
	struct kvp_budget_opts opts;
	enum kvp_dtype weights_dtype;  /* --weights-dtype; AUTO: what the model says */
	/* --preprocessor-config: the checkpoint's preprocessor_config.json
	 * (Qwen2-VL max_pixels, read/hf-config.h), or NULL */
	const char *preprocessor_config;
	bool engine_given;             /* --engine was given (else opts.engine is the
					* default, KVP_CLI_DEFAULT_ENGINE) */
	bool help;
};

/* Apply the command line's what-if weights dtype to a loaded model.  A GGUF's
 * tensor types are the truth for its weights (their bytes are read exactly),
 * so --weights-dtype with a GGUF model is refused: returns the usage exit
 * code after printing why, else 0. */
int kvp_cli_apply_model_options(const struct kvp_cli_common *c, const char *cmd,
				struct kvp_model *m);

/* The engine a command plans with when --engine is not given: vLLM, the
 * engine most deployments serve with, at its newest modelled version
 * (profiles/engines/vllm.yaml); `--engine generic` stays for what-ifs
 * (issue 35). */
#define KVP_CLI_DEFAULT_ENGINE KVP_ENGINE_VLLM

void kvp_cli_common_init(struct kvp_cli_common *c);
/* Handle one common option; returns 0 when handled, 1 when `opt` is not a
 * common option, or KVP_EXIT_USAGE after printing a message. */
int kvp_cli_common_option(struct kvp_cli_common *c, const char *cmd, int opt, const char *arg);

/* Load the model and GPU named by c (the GPU is optional when need_gpu is false).
 * Prints the error and returns its exit code, or 0. */
int kvp_cli_load(const struct kvp_cli_common *c, const char *cmd, struct kvp_model *m,
		 struct kvp_gpu *g, bool need_gpu);

/* Parse --spec-draft and its acceptance (--spec-accept-rate or its older
 * name --spec-accept, or --spec-acceptance; one of them) for model m into c (budget, perf) and
 * point c->opts at it.  Prints the error and returns its exit code, or 0. */
int kvp_cli_speculative(struct kvp_cli_common *c, const char *cmd, const struct kvp_model *m);

/* Print "kvplan CMD: path:line:col: error: field: message" to stderr and
 * return the exit code for err's status. */
int kvp_cli_error(const char *cmd, const struct kvp_error *err);
/* Print a usage mistake ("kvplan CMD: ...; see kvplan CMD --help") and return 2. */
int kvp_cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* --prompt and --output (given together, each a length distribution) as w's
 * lengths, replacing the workload profile's; w is named "custom" when no
 * profile was given (`named` false).  Returns -1 when done, else the exit
 * code after a usage error for `cmd`. */
struct kvp_workload;
int kvp_cli_set_lengths(const char *cmd, const char *prompt, const char *output, bool named,
			struct kvp_workload *w);

/* An option getopt_long refused (arg: argv[optind - 1]): "option '--x'
 * needs a value" when it names one of longopts, else "unknown option" with
 * the closest names of longopts.  Prints and returns KVP_EXIT_USAGE. */
int kvp_cli_bad_option(const char *cmd, const char *arg, const struct option *longopts);

/* Progress of a long simulation on stderr, "CMD: N of M requests drawn" at
 * each further tenth; a row that starts again from 0 (arrivals run their
 * rows one after the other) starts the tenths again.  ctx is a struct
 * kvp_cli_progress with cmd set (e.g. "kvplan frag"). */
/* Simulation speed for the up-front estimate of kvplan frag and plot
 * block-size, measured by bench/frag-bench.sh on a slow core and rounded up:
 * the saturated mode about 0.3 us per request and row; a run estimated
 * above KVP_CLI_PROGRESS_FROM_S seconds says so and shows progress. */
#define KVP_CLI_FRAG_US_PER_REQUEST_ROW 0.3
#define KVP_CLI_PROGRESS_FROM_S 10.0

struct kvp_cli_progress {
	const char *cmd;
	unsigned tenth;
	uint64_t last;
};
void kvp_cli_progress(void *ctx, uint64_t done, uint64_t total);

/* The seconds a frag simulation of fo over w is estimated to take, and
 * its rows in *rows: the contiguous allocators, and the paged block sizes
 * (nblock, 0: the 7 defaults) once, twice with a shared prefix; arrivals
 * over time (over_time) at about 1 us per request and row. */
struct kvp_frag_opts;
struct kvp_workload;
double kvp_cli_frag_estimate_s(const struct kvp_frag_opts *fo, size_t nblock, bool over_time,
			       const struct kvp_workload *w, size_t *rows);

/* Parsing of option values with range checks; print and return false on error. */
bool kvp_cli_u64(const char *cmd, const char *opt, const char *arg, uint64_t min, uint64_t *out);
bool kvp_cli_tokens(const char *cmd, const char *opt, const char *arg, uint64_t *out);
bool kvp_cli_bytes(const char *cmd, const char *opt, const char *arg, uint64_t *out);
/* Split the comma list `arg` into *n items (at most max), pointers into the
 * copy returned, which the caller frees.  Every comma separates: an empty
 * item ("1,,8", a leading or trailing comma), an item given twice and more
 * than max items are usage errors naming opt (printed; NULL returned), never
 * skipped or cut. */
char *kvp_cli_split(const char *cmd, const char *opt, const char *arg, char **items, size_t max,
		    size_t *n);
/* A comma-separated list of token counts ("1,8,32" or "4k,8k"), split by
 * kvp_cli_split; a value given twice ("1k,1024") is refused too. */
bool kvp_cli_token_list(const char *cmd, const char *opt, const char *arg, uint64_t *out,
			size_t max, size_t *n);

/* Write rows in the chosen machine format (json: one object, or {"rows": [...]}
 * when wrap is set; csv: one line per row). */
void kvp_cli_write_rows(FILE *f, enum kvp_format fmt, struct kvp_record *const *rows, size_t n,
			const char *wrap);

/* Warnings about the inputs: printed on stderr as "kvplan CMD: warning:
 * ..." when noted, and listed in JSON output under "warnings" (a list of
 * {"code", "message"}, empty when nothing was noted). */
/* room for the model file's warnings (KVP_MODEL_WARNINGS) and a command's own */
#define KVP_CLI_MAX_WARNINGS (KVP_MODEL_WARNINGS + 4)
struct kvp_cli_warnings {
	size_t n;
	char code[KVP_CLI_MAX_WARNINGS][32];
	char message[KVP_CLI_MAX_WARNINGS][KVP_WARNING_MAX];
};
/* Note (and print) a warning when `tokens` (named by `what`, e.g.
 * "--context") is beyond the model's max_context. */
void kvp_cli_check_context(struct kvp_cli_warnings *w, const char *cmd, const char *what,
			   uint64_t tokens, const struct kvp_model *m);
/* Note the warnings the model's file raised (kvp_cli_load printed them) in
 * w, code "model_file", so JSON carries them too. */
void kvp_cli_model_warnings(struct kvp_cli_warnings *w, const struct kvp_model *m);
/* Set r's "warnings" list from w; false when memory runs out. */
bool kvp_cli_warnings_to_record(const struct kvp_cli_warnings *w, struct kvp_record *r);

/* Subcommands */
int kvp_cmd_budget(int argc, char **argv);
int kvp_cmd_list(int argc, char **argv);
int kvp_cmd_frag(int argc, char **argv);
int kvp_cmd_perf(int argc, char **argv);
int kvp_cmd_serve(int argc, char **argv);
int kvp_cmd_size(int argc, char **argv);
int kvp_cmd_check(int argc, char **argv);
int kvp_cmd_plot(int argc, char **argv);
int kvp_cmd_report(int argc, char **argv);
int kvp_cmd_validate(int argc, char **argv);
int kvp_cmd_calibrate(int argc, char **argv);

#endif
