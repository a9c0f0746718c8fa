/* calibrate-checks.c: what benchmark runs say about themselves before
 * calibrate or validate predicts them (calibrate-checks.h). */
#include "time/calibrate-checks.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static void warn(char (*warning)[KVP_CALIB_WARNING_MAX], size_t *nwarn, const char *fmt,
		 const char *a, const char *b, const char *c, int line)
{
	if (*nwarn < KVP_CALIB_MAX_WARNINGS)
		snprintf(warning[(*nwarn)++], KVP_CALIB_WARNING_MAX, fmt, a, line, b, c);
}

/* Runs on another GPU than the one calibrated, of another model than the
 * first, or on another engine version than the first that records one
 * (or --engine-version). */
static void check_sources(const struct kvp_gpu *g, const struct kvp_budget_opts *o,
			  const struct kvp_bench_run *runs, size_t n,
			  char (*warning)[KVP_CALIB_WARNING_MAX], size_t *nwarn)
{
	const char *ver = o->engine_version;
	for (size_t i = 0; i < n; i++) {
		const struct kvp_bench_run *r = &runs[i];
		if (r->gpu[0] && strcmp(r->gpu, g->name) != 0)
			warn(warning, nwarn, "%s:%d: the run is on GPU '%s', calibrating for '%s'", r->path,
			     r->gpu, g->name, r->line);
		if (r->model_id[0] && runs[0].model_id[0] && strcmp(r->model_id, runs[0].model_id) != 0)
			warn(warning, nwarn, "%s:%d: the run is of model '%s', the first of '%s'", r->path,
			     r->model_id, runs[0].model_id, r->line);
		if (r->engine_version[0] && !ver)
			ver = r->engine_version;
		else if (r->engine_version[0] && strcmp(r->engine_version, ver) != 0)
			warn(warning, nwarn, "%s:%d: the run is on engine version %s, the others on %s",
			     r->path, r->engine_version, ver, r->line);
	}
}

/* A run that sends the prompts of a run dated before it again: their
 * input_lens lists equal, in order, of the same model (bench.h
 * prompts_hash; a list of one length throughout tells no prompts apart and
 * is passed over).  vllm bench serve samples its dataset from --seed
 * (default 0), so runs of one dataset, seed and --num-prompts send the same
 * prompts.  On a server whose prefix cache outlives a run (vLLM's V1
 * engine turns it on unless told not to: vllm/engine/arg_utils.py
 * _set_default_args_v1, 0.8.3 l.1618-1620, 0.10.2 l.1621-1625) each
 * repeated prompt's full blocks are then found cached and only its rest is
 * computed (vllm/v1/core/kv_cache_manager.py get_computed_blocks, 0.8.3
 * l.103-160; 0.10.2 l.174-182: at most the prompt less one token, in whole
 * blocks of 16), so the run's TTFT measures the cache, not the prefill the
 * step model charges every request (ttft-load.h).  Said, not modelled:
 * the files do not record whether the server kept its cache between the
 * runs (restarted, --no-enable-prefix-caching, evicted), and a warm TTFT is
 * a step in flight and the API server's time, which kvplan's vLLM rule
 * does not hold (reports/calibrate-public.md, seventh pass).  The earlier
 * run may be one of runs or, where a calibration is applied, one it was
 * fitted on (seen: its file records each run's prompts), so validate names
 * a held-out run that repeats a run of the fit half. */
/* Whether a run of model_id, dated d, that sent `listed` prompts of hash
 * `hash`, sent r's prompts before r and after `latest` (NULL: none yet). */
static bool sent_before(const struct kvp_bench_run *r, const char *model_id, uint64_t listed,
			uint64_t hash, const char *d, const char *latest)
{
	return listed == r->prompts_listed && hash == r->prompts_hash &&
	       strcmp(model_id, r->model_id) == 0 && d[0] && strcmp(d, r->date) < 0 &&
	       (!latest || strcmp(d, latest) > 0);
}

static void check_repeats(const struct kvp_bench_run *runs, size_t n,
			  const struct kvp_calib_seen *seen, size_t nseen,
			  char (*warning)[KVP_CALIB_WARNING_MAX], size_t *nwarn)
{
	for (size_t i = 0; i < n; i++) {
		const struct kvp_bench_run *r = &runs[i];
		if (!r->prompts_vary || !r->date[0])
			continue;
		/* the latest run dated before r that sent its prompts: one of
		 * runs, else one the calibration applied was fitted on */
		char where[600] = "";
		const char *date = NULL, *of = "";
		for (size_t j = 0; j < n; j++) {
			const struct kvp_bench_run *a = &runs[j];
			if (a->prompts_vary && sent_before(r, a->model_id, a->prompts_listed,
							   a->prompts_hash, a->date, date)) {
				date = a->date;
				snprintf(where, sizeof where, "%.500s:%d", a->path, a->line);
			}
		}
		for (size_t j = 0; j < nseen; j++) {
			const struct kvp_calib_seen *a = &seen[j];
			if (sent_before(r, a->model_id, a->prompts_listed, a->prompts_hash, a->date,
					date)) {
				date = a->date;
				snprintf(where, sizeof where, "%s", a->run);
				of = ", which the calibration was fitted on";
			}
		}
		if (date && *nwarn < KVP_CALIB_MAX_WARNINGS)
			snprintf(warning[(*nwarn)++], KVP_CALIB_WARNING_MAX,
				 "%.500s:%d: the run sends the %llu prompts of %.400s (dated %s%s) "
				 "again (input_lens equal): a server that kept its prefix cache "
				 "(vLLM V1's default) computed only each one's last block, "
				 "so its TTFT is not the prefill kvplan predicts; calibrate on "
				 "runs from a fresh server or another --seed", r->path, r->line,
				 (unsigned long long)r->prompts_listed, where, date, of);
	}
}

/* A serving run that sent every request at once (bench.h burst): its
 * median TTFT is a burst's, the requests waiting on each other's prefills
 * and on the server taking them in, while the TTFT rules (ttft-load.h)
 * describe one request joining a steady state.  Said, not modelled. */
static void check_bursts(const struct kvp_bench_run *runs, size_t n,
			 char (*warning)[KVP_CALIB_WARNING_MAX], size_t *nwarn)
{
	for (size_t i = 0; i < n; i++)
		if (runs[i].burst && runs[i].m.ttft_s > 0 && *nwarn < KVP_CALIB_MAX_WARNINGS)
			snprintf(warning[(*nwarn)++], KVP_CALIB_WARNING_MAX,
				 "%.500s:%d: the run sent its %llu requests at once (request_rate "
				 "\"inf\", no max_concurrency): its TTFT is a burst's, which the "
				 "steady state kvplan predicts (one request joining those in "
				 "flight) does not hold", runs[i].path, runs[i].line,
				 (unsigned long long)runs[i].requests);
}

void kvp_calib_check_runs(const struct kvp_gpu *g, const struct kvp_budget_opts *o,
			  const struct kvp_bench_run *runs, size_t n,
			  const struct kvp_calib_seen *seen, size_t nseen,
			  char (*warning)[KVP_CALIB_WARNING_MAX], size_t *nwarn)
{
	check_sources(g, o, runs, n, warning, nwarn);
	check_repeats(runs, n, seen, nseen, warning, nwarn);
	check_bursts(runs, n, warning, nwarn);
}
