/* cli-bench.h: what the commands that read an engine's benchmark files
 * share (`kvplan calibrate`, `kvplan validate`, `kvplan plot validate`):
 * the operands (FILE, or FILE#batch=B,prompt=P,output=O for a file that
 * records no shape), the runs read (read/bench.h), the model, GPU, engine
 * and tp taken from the command line or, where it names none, from the
 * files, and the hardware with --calibration applied.  One copy, so the
 * three commands predict the same runs alike. */
#ifndef KVP_CLI_BENCH_H
#define KVP_CLI_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/cli.h"
#include "cli/cli-calibration.h"
#include "read/bench.h"
#include "time/calibrate-fit.h"
#include "time/step.h"

struct kvp_cli_bench {
	struct kvp_bench_runs runs;
	struct kvp_model *m;          /* allocated */
	struct kvp_gpu g;
	struct kvp_perf_hw hw;        /* g's, with --calibration's constants */
	struct kvp_calibration cal;   /* --calibration's files composed; zero: none */
	/* the runs those files record being fitted on, with their prompts
	 * (calibration-runs.h; allocated, NULL: none) */
	struct kvp_calib_seen *seen;
	size_t nseen;
	const char *engine;           /* the runs' engine (or --engine's), NULL: none named */
	const char *version;          /* --engine-version, else the first run's, or NULL */
};

/* Read files[0..n) (each FILE or FILE#SHAPE, over `given`'s shape) into b,
 * then settle c: the engine from the runs unless --engine was given (all
 * alike, else an error naming the odd run), the model from the first run
 * that records one unless --model was given, tp from the runs unless --tp
 * was given (c->opts.par.tp 0: not given; all alike), and load the model,
 * the GPU (required) and its hardware, with the calibration files of calib
 * (cli-calibration.h; none given: none) applied, read into b->cal (and the
 * runs they were fitted on into b->seen).  0, or the exit code after a message for `cmd`;
 * free b with kvp_cli_bench_free either way. */
int kvp_cli_bench_load(const char *cmd, struct kvp_cli_common *c, char *const *files, size_t n,
		       const struct kvp_bench_given *given,
		       const struct kvp_cli_calibration *calib, struct kvp_cli_bench *b);
void kvp_cli_bench_free(struct kvp_cli_bench *b);

/* The model file's warnings and the runs' (another GPU, model or engine
 * version than the first: fit's) noted in w, code "calibration_source",
 * each of the runs' said on stderr for `cmd`. */
void kvp_cli_bench_warnings(const char *cmd, const struct kvp_model *m,
			    const struct kvp_calib_result *fit, struct kvp_cli_warnings *w);

/* The fields every measured time's record opens with, in this order: run
 * (file:line), format, measure, batch, prompt_tokens, output_tokens,
 * measured_s (calibrate's and validate's CSV rows and JSON items).  false
 * when memory runs out. */
struct kvp_record;
bool kvp_cli_bench_obs_fields(struct kvp_record *rec, const struct kvp_bench_run *r,
			      const struct kvp_calib_obs *o);

/* Whether the operand (FILE or FILE#SHAPE) names an engine's benchmark
 * file: JSON (kvp_bench_file_is_json), not kvbench's YAML or CSV. */
bool kvp_cli_bench_is_engine_file(const char *arg);

#endif
