/* cli-bench.c: reading an engine's benchmark files for the commands that
 * share them (cli-bench.h): calibrate, validate and plot validate. */
#include "cli/cli-bench.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "time/calibration.h"
#include "time/calibration-runs.h"

/* An operand FILE or FILE#batch=B,prompt=P,output=O (the shape of that
 * file's runs, for a file that records none: vllm bench latency): the
 * path in path[], the shape over the command line's in *g.  A path that
 * exists as written is taken whole, '#' and all. */
static int operand_shape(const char *cmd, const char *arg, char *path, size_t size,
			 struct kvp_bench_given *g)
{
	const char *hash = strrchr(arg, '#');
	struct stat sb;
	snprintf(path, size, "%s", arg);
	if (!hash || stat(arg, &sb) == 0)
		return 0;
	path[hash - arg < (ptrdiff_t)size ? hash - arg : (ptrdiff_t)size - 1] = 0;
	if (!g)
		return 0;
	char *items[3];
	size_t n = 0;
	char *copy = kvp_cli_split(cmd, "FILE#SHAPE", hash + 1, items, 3, &n);
	if (!copy)
		return KVP_EXIT_USAGE;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		char *eq = strchr(items[i], '=');
		uint64_t *dst = NULL;
		if (eq) {
			*eq = 0;
			dst = strcmp(items[i], "batch") == 0 ? &g->batch
			      : strcmp(items[i], "prompt") == 0 ? &g->prompt_tokens
			      : strcmp(items[i], "output") == 0 ? &g->output_tokens : NULL;
		}
		if (!dst)
			rc = kvp_cli_usage_error(cmd, "%s: expected FILE#batch=B,prompt=P,output=O",
						 arg);
		else if (!kvp_cli_tokens(cmd, items[i], eq + 1, dst))
			rc = KVP_EXIT_USAGE;
	}
	free(copy);
	return rc;
}

bool kvp_cli_bench_is_engine_file(const char *arg)
{
	char path[4096];
	operand_shape(NULL, arg, path, sizeof path, NULL);
	return kvp_bench_file_is_json(path);
}

/* The runs' engine (all alike, or INVALID naming the odd one) onto c. */
static int runs_engine(const char *cmd, struct kvp_cli_common *c, struct kvp_cli_bench *b)
{
	b->engine = NULL;
	b->version = c->opts.engine_version;
	for (size_t i = 0; i < b->runs.n; i++) {
		const struct kvp_bench_run *r = &b->runs.v[i];
		if (r->engine[0] && b->engine && strcmp(r->engine, b->engine) != 0) {
			struct kvp_error err = {0};
			kvp_error_set(&err, KVP_STATUS_INVALID, r->path, r->line, 1, "engine",
				      "a %s run among %s runs: %s one engine at a time", r->engine,
				      b->engine, cmd);
			return kvp_cli_error(cmd, &err);
		}
		if (r->engine[0])
			b->engine = r->engine;
		if (!b->version && r->engine_version[0])
			b->version = r->engine_version;
	}
	enum kvp_engine e;
	if (!c->engine_given && b->engine && kvp_engine_parse(b->engine, &e))
		c->opts.engine = e;
	if (c->engine_given)
		b->engine = kvp_engine_name(c->opts.engine);
	return 0;
}

int kvp_cli_bench_load(const char *cmd, struct kvp_cli_common *c, char *const *files, size_t n,
		       const struct kvp_bench_given *given, const struct kvp_cli_calibration *calib,
		       struct kvp_cli_bench *b)
{
	memset(b, 0, sizeof *b);
	struct kvp_error err = {0};
	int rc;
	if (!(b->m = malloc(sizeof *b->m))) {
		fprintf(stderr, "kvplan %s: out of memory\n", cmd);
		return KVP_EXIT_FAIL;
	}
	for (size_t i = 0; i < n; i++) {
		char path[4096];
		struct kvp_bench_given one = *given;
		if ((rc = operand_shape(cmd, files[i], path, sizeof path, &one)))
			return rc;
		if (kvp_bench_load(path, &one, &b->runs, &err))
			return kvp_cli_error(cmd, &err);
	}
	if ((rc = runs_engine(cmd, c, b)))
		return rc;
	if (!c->model)
		c->model = b->runs.v[0].model_id[0] ? b->runs.v[0].model_id : NULL;
	if (!c->opts.par.tp)
		c->opts.par.tp = b->runs.v[0].tp ? b->runs.v[0].tp : 1;
	for (size_t i = 1; i < b->runs.n; i++)
		if (b->runs.v[i].tp && b->runs.v[i].tp != c->opts.par.tp) {
			kvp_error_set(&err, KVP_STATUS_INVALID, b->runs.v[i].path, b->runs.v[i].line,
				      1, "tp", "a run at tp %u among runs at tp %u: %s one split at "
				      "a time", b->runs.v[i].tp, c->opts.par.tp, cmd);
			return kvp_cli_error(cmd, &err);
		}
	if (!c->model)
		return kvp_cli_usage_error(cmd, "--model is required: the files record no model");
	if ((rc = kvp_cli_load(c, cmd, b->m, &b->g, true)))
		return rc;
	if (kvp_perf_hw_from_gpu(&b->g, b->m, &b->hw, &err))
		return kvp_cli_error(cmd, &err);
	if ((rc = kvp_cli_calibration_load(cmd, calib, &b->g, &b->cal, NULL)))
		return rc;
	kvp_calibration_apply(&b->cal, &b->hw);
	for (size_t i = 0; calib && i < calib->n; i++)
		if (kvp_calibration_runs_load(calib->path[i], &b->g, &b->seen, &b->nseen, &err))
			return kvp_cli_error(cmd, &err);
	return 0;
}

void kvp_cli_bench_free(struct kvp_cli_bench *b)
{
	kvp_bench_runs_free(&b->runs);
	free(b->m);
	b->m = NULL;
	free(b->seen);
	b->seen = NULL;
	b->nseen = 0;
}

void kvp_cli_bench_warnings(const char *cmd, const struct kvp_model *m,
			    const struct kvp_calib_result *fit, struct kvp_cli_warnings *w)
{
	kvp_cli_model_warnings(w, m);
	for (size_t i = 0; i < fit->nwarn && w->n < KVP_CLI_MAX_WARNINGS; i++, w->n++) {
		char shown[KVP_TERM_SIZE(KVP_CALIB_WARNING_MAX)];
		snprintf(w->code[w->n], sizeof w->code[0], "calibration_source");
		snprintf(w->message[w->n], sizeof w->message[0], "%s", fit->warning[i]);
		fprintf(stderr, "kvplan %s: warning: %s\n", cmd,
			kvp_term_text(shown, sizeof shown, fit->warning[i]));
	}
}

bool kvp_cli_bench_obs_fields(struct kvp_record *rec, const struct kvp_bench_run *r,
			      const struct kvp_calib_obs *o)
{
	char where[600];
	snprintf(where, sizeof where, "%s:%d", r->path, r->line);
	return kvp_record_str(rec, "run", where) &&
	       kvp_record_str(rec, "format", kvp_bench_format_name(r->format)) &&
	       kvp_record_str(rec, "measure", kvp_calib_obs_name(o->kind)) &&
	       kvp_record_f64(rec, "batch", r->batch) &&
	       kvp_record_u64(rec, "prompt_tokens", r->prompt_tokens) &&
	       kvp_record_u64(rec, "output_tokens", r->output_tokens) &&
	       kvp_record_f64(rec, "measured_s", o->measured_s);
}
