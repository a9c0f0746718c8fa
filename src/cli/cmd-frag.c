/* cmd-frag.c: `kvplan frag`: how many requests really fit in the KV pool
 * given how long they are, under contiguous reservation and paging at each
 * block size, with and without a shared prefix; which block size to use and
 * why; and what a prefix cache buys for the memory it keeps.  The pool comes
 * from the budget (kvp_budget_compute), the bytes per token from the model's
 * layer list, the lengths from a workload (frag.h describes the simulation).
 * cmd-frag-print.c prints the answer. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli-options.h"
#include "cli/cmd-frag-print.h"
#include "frag/frag.h"
#include "base/units.h"

static const char *const cmd = "frag";

static void help(void)
{
	printf("Usage: kvplan frag --model NAME --gpu NAME (--workload NAME | --lengths FILE |\n"
	       "                   --prompt SPEC --output SPEC) [OPTIONS]\n\n"
	       "Simulate requests over the KV pool and compare, side by side: contiguous\n"
	       "reservation of max_len (contiguous-max) or of prompt + requested tokens\n"
	       "(contiguous-request) with first-fit and best-fit allocators, paging at each\n"
	       "block size (paged), and paging with a shared prefix (paged-shared).  Reports\n"
	       "the share of the pool holding real tokens, internal and external waste,\n"
	       "metadata, the sequences that fit, and a recommended block size.\n\n"
	       "%s"
	       "Lengths:\n"
	       "  --workload NAME|PATH      profiles/workloads/NAME.yaml (kvplan list workloads)\n"
	       "  --lengths FILE            CSV (prompt,output per row) or YAML list of pairs\n"
	       "  --prompt SPEC             fixed:N uniform:LO,HI normal:MEAN,SD\n"
	       "  --output SPEC             lognormal:MEDIAN,SIGMA zipf:MAX,S\n"
	       "  --max-len N               cap of prompt + output and the contiguous-max\n"
	       "                            reservation (default: workload, --context, model)\n"
	       "  --max-tokens N            requested max tokens of contiguous-request\n"
	       "                            (default: each request's own output)\n"
	       "  --shared-prefix K[:F]     K tokens before the prompt of a share F of the\n"
	       "                            requests (default F = 1)\n"
	       "Simulation:\n"
	       "  --policies LIST           of contiguous-max, contiguous-request, paged,\n"
	       "                            paged-shared (default all)\n"
	       "  --block-sizes LIST        paged block sizes (default 1,8,16,32,64,128,256)\n"
	       "  --allocator A             first-fit|best-fit|both (default both)\n"
	       "  --requests N              requests simulated (default 100000)\n"
	       "  --warmup N                admissions before measuring (default requests/10)\n"
	       "  --seed S                  random seed (default 1); same seed, same numbers\n"
	       "Arrivals over time (every policy; without them every request waits):\n"
	       "  --arrival-rate R          requests per second, Poisson (seeded by --seed)\n"
	       "  --step-time S             seconds per scheduler step: each step a decode\n"
	       "                            token per running sequence and prefill chunks up\n"
	       "                            to --max-batched-tokens (default with a rate: the\n"
	       "                            perf model's decode step, as kvplan perf's\n"
	       "                            tpot_s, of B = ceil(R x mean output x step)\n"
	       "                            sequences at the context a decoding sequence\n"
	       "                            holds over time, E[o (p + (o - 1) / 2)] / E[o]\n"
	       "                            tokens); alone, replays a --lengths file's third\n"
	       "                            column of arrival times, prompt,output,arrival_s\n"
	       "Prefix cache:\n"
	       "  --prefix-cache N[:S]      LRU over N distinct prefixes of the shared-prefix\n"
	       "                            length with Zipf(S) popularity (default S = 1)\n"
	       "  --cache-sizes LIST        cache memory, e.g. 1GiB,4GiB (default 0, 1, 2, 5,\n"
	       "                            10, 20, 50%% of the KV pool)\n\n"
	       "Example: kvplan frag --model qwen2.5-7b --gpu l4 --prompt lognormal:1200,0.8 \\\n"
	       "           --output lognormal:300,1.0 --max-len 8192 --shared-prefix 2048:0.7\n",
	       kvp_cli_common_help);
}

struct frag_opts {
	struct kvp_frag_opts sim;   /* the simulation's options, parsed in place */
	const char *workload, *lengths, *prompt, *output, *prefix_cache;
	bool has_prefix;
	uint64_t prefix_tokens;
	double prefix_fraction;
	uint64_t blocks[KVP_FRAG_MAX_BLOCK_SIZES];  /* sim.block_sizes, as parsed */
	size_t nblock;
	uint64_t cache_sizes[16];
	size_t ncache;
	bool has_rate, has_step;
};

/* The table's parsers (cli-options.h): dest is the struct frag_opts.
 * --shared-prefix: "2048" or "2048:0.7". */
static bool shared_prefix_parse(const char *name, const char *arg, void *dest)
{
	struct frag_opts *o = dest;
	char buf[64];
	const char *colon = strchr(arg, ':');
	size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
	if (len >= sizeof buf) { /* longer than any token count: refused, not cut */
		kvp_cli_usage_error(name, "--shared-prefix: expected TOKENS[:FRACTION], got '%s'", arg);
		return false;
	}
	memcpy(buf, arg, len);
	buf[len] = '\0';
	o->prefix_fraction = 1;
	if (!kvp_cli_tokens(name, "--shared-prefix", buf, &o->prefix_tokens))
		return false;
	if (colon && kvp_parse_double(colon + 1, &o->prefix_fraction)) {
		kvp_cli_usage_error(name, "--shared-prefix: expected TOKENS[:FRACTION], got '%s'", arg);
		return false;
	}
	if (o->prefix_fraction > 1) {
		kvp_cli_usage_error(name, "--shared-prefix: the fraction must lie in [0, 1], got "
				    "'%s'", arg);
		return false;
	}
	o->has_prefix = true;
	return true;
}

static bool allocator_parse(const char *name, const char *arg, void *dest)
{
	struct frag_opts *o = dest;
	o->sim.fit[0] = strcmp(arg, "first-fit") == 0 || strcmp(arg, "both") == 0;
	o->sim.fit[1] = strcmp(arg, "best-fit") == 0 || strcmp(arg, "both") == 0;
	if (!o->sim.fit[0] && !o->sim.fit[1]) {
		kvp_cli_usage_error(name, "--allocator: expected first-fit, best-fit or both, "
				    "got '%s'", arg);
		return false;
	}
	return true;
}

static bool cache_sizes_parse(const char *name, const char *arg, void *dest)
{
	struct frag_opts *o = dest;
	char *item[sizeof o->cache_sizes / sizeof o->cache_sizes[0]];
	size_t n;
	char *buf = kvp_cli_split(name, "--cache-sizes", arg, item, sizeof item / sizeof item[0], &n);
	o->ncache = 0;
	if (!buf)
		return false;
	bool good = true;
	for (size_t i = 0; i < n && good; i++) {
		good = kvp_cli_bytes(name, "--cache-sizes", item[i], &o->cache_sizes[i]);
		for (size_t j = 0; good && j < i; j++)
			if (o->cache_sizes[j] == o->cache_sizes[i]) {
				kvp_cli_usage_error(name, "--cache-sizes: '%s' and '%s' are the same size",
						    item[j], item[i]);
				good = false;
			}
	}
	free(buf);
	o->ncache = good ? n : 0;
	return good;
}

static bool policies_parse(const char *name, const char *arg, void *dest)
{
	struct frag_opts *o = dest;
	char *item[KVP_FRAG_POLICY_COUNT];
	size_t n;
	char *buf = kvp_cli_split(name, "--policies", arg, item, KVP_FRAG_POLICY_COUNT, &n);
	if (!buf)
		return false;
	memset(o->sim.policy, 0, sizeof o->sim.policy);
	o->sim.has_policies = true;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const char *t = item[i];
		int p = 0;
		while (p < KVP_FRAG_POLICY_COUNT && strcmp(t, kvp_frag_policy_name((enum kvp_frag_policy)p)))
			p++;
		if (p == KVP_FRAG_POLICY_COUNT)
			rc = kvp_cli_usage_error(name, "--policies: unknown policy '%s' (contiguous-max, "
						 "contiguous-request, paged, paged-shared)", t);
		else
			o->sim.policy[p] = true;
	}
	free(buf);
	if (rc)
		return false;
	for (int p = 0; p < KVP_FRAG_POLICY_COUNT; p++)
		if (o->sim.policy[p])
			return true;
	kvp_cli_usage_error(name, "--policies: empty list (contiguous-max, contiguous-request, "
			    "paged, paged-shared)");
	return false;
}

/* A positive, finite number: --arrival-rate, --step-time. */
static int parse_positive(const char *opt, const char *arg, double *out)
{
	if (kvp_parse_double(arg, out) || !(*out > 0) || !isfinite(*out))
		return kvp_cli_usage_error(cmd, "%s: expected a positive, finite number, got '%s'",
					   opt, arg);
	return 0;
}

static bool max_len_parse(const char *name, const char *arg, void *dest)
{
	struct frag_opts *o = dest;
	return kvp_cli_tokens(name, "--max-len", arg, &o->sim.max_len);
}

static bool max_tokens_parse(const char *name, const char *arg, void *dest)
{
	struct frag_opts *o = dest;
	return kvp_cli_tokens(name, "--max-tokens", arg, &o->sim.max_tokens);
}

static bool requests_parse(const char *name, const char *arg, void *dest)
{
	struct frag_opts *o = dest;
	return kvp_cli_u64(name, "--requests", arg, 1, &o->sim.requests);
}

static bool seed_parse(const char *name, const char *arg, void *dest)
{
	struct frag_opts *o = dest;
	return kvp_cli_u64(name, "--seed", arg, 0, &o->sim.seed);
}

static bool warmup_parse(const char *name, const char *arg, void *dest)
{
	struct frag_opts *o = dest;
	o->sim.has_warmup = true;
	return kvp_cli_u64(name, "--warmup", arg, 0, &o->sim.warmup);
}

static bool arrival_rate_parse(const char *name, const char *arg, void *dest)
{
	struct frag_opts *o = dest;
	(void)name;
	o->has_rate = true;
	return parse_positive("--arrival-rate", arg, &o->sim.arrival_rate) == 0;
}

static bool step_time_parse(const char *name, const char *arg, void *dest)
{
	struct frag_opts *o = dest;
	(void)name;
	o->has_step = true;
	return parse_positive("--step-time", arg, &o->sim.step_time_s) == 0;
}

static bool block_sizes_parse(const char *name, const char *arg, void *dest)
{
	struct frag_opts *o = dest;
	if (!kvp_cli_token_list(name, "--block-sizes", arg, o->blocks, KVP_FRAG_MAX_BLOCK_SIZES,
				&o->nblock))
		return false;
	for (size_t i = 0; i < o->nblock; i++)
		if (o->blocks[i] > KVP_FRAG_MAX_BLOCK) {
			kvp_cli_usage_error(name, "--block-sizes: %llu is more than %u tokens",
					    (unsigned long long)o->blocks[i], KVP_FRAG_MAX_BLOCK);
			return false;
		}
	return true;
}

/* The workload: a profile, then the command line's lengths and prefix on top. */
static int load_workload(const struct frag_opts *o, struct kvp_workload *w)
{
	struct kvp_error err = {0};
	memset(w, 0, sizeof *w);
	if (o->workload && kvp_workload_load(o->workload, w, &err))
		return kvp_cli_error(cmd, &err);
	/* a file of lengths replaces the distributions: given beside it, they
	 * would be read and silently dropped */
	if (o->lengths && (o->prompt || o->output))
		return kvp_cli_usage_error(cmd, "--lengths gives every request's prompt and output: "
					   "give it or --prompt and --output, not both");
	if (o->lengths) {
		if (kvp_workload_load_lengths(o->lengths, w, &err))
			return kvp_cli_error(cmd, &err);
	} else if (o->prompt || o->output) {
		int rc = kvp_cli_set_lengths(cmd, o->prompt, o->output, o->workload != NULL, w);
		if (rc >= 0)
			return rc;
	} else if (!o->workload) {
		return kvp_cli_usage_error(cmd, "give --workload, --lengths, or --prompt and --output");
	}
	if (o->has_prefix) {
		w->prefix_tokens = o->prefix_tokens;
		w->prefix_fraction = o->prefix_fraction;
	}
	return 0;
}

/* The simulation's options from the command line's; when the run would take
 * more than KVP_CLI_PROGRESS_FROM_S, say so up front and report progress through
 * tenth. */
static void sim_options(const struct frag_opts *o, const struct kvp_workload *w,
			struct kvp_frag_opts *fo, struct kvp_cli_progress *tenth)
{
	*fo = o->sim;
	/* more requests than a minute's simulation: say so up front and show
	 * progress (the rows run side by side over one stream) */
	size_t est_rows = 0;
	double est_s = kvp_cli_frag_estimate_s(fo, o->nblock, o->has_rate || o->has_step, w,
					       &est_rows);
	if (est_s > KVP_CLI_PROGRESS_FROM_S) {
		char t1[64];
		kvp_format_u64(fo->requests, t1, sizeof t1);
		fprintf(stderr, "kvplan frag: %s requests over about %zu row%s: about %.0f s; "
			"progress follows\n", t1, est_rows, est_rows == 1 ? "" : "s", est_s);
		fo->progress = kvp_cli_progress;
		fo->progress_ctx = tenth;
	}
	fo->nblock = o->nblock;
	for (size_t i = 0; i < o->nblock; i++)
		fo->block_sizes[i] = (uint32_t)o->blocks[i];
}

/* The prefix cache of --prefix-cache, at the recommended block (or the first
 * paged one): cc and ncache rows of cache, or the exit code after a message. */
static int run_prefix_cache(const struct frag_opts *o, const struct kvp_workload *w,
			    const struct kvp_frag_report *rep, struct kvp_frag_cache_config *cc,
			    struct kvp_frag_cache_row *cache, size_t *ncache)
{
	const struct kvp_frag_config *fc = &rep->cfg;
	const struct kvp_frag_result *rows = rep->rows;
	int rec = rep->recommended;
	struct kvp_error err = {0};
	char buf[64];
	bool whole = (size_t)snprintf(buf, sizeof buf, "%s", o->prefix_cache) < sizeof buf;
	char *colon = strchr(buf, ':');
	if (colon)
		*colon = '\0';
	cc->zipf_s = 1;
	/* a value cut to fit buf would be another number: refused */
	if (!whole || kvp_parse_u64(buf, &cc->prefixes) || !cc->prefixes ||
	    (colon && (kvp_parse_double(colon + 1, &cc->zipf_s) || !(cc->zipf_s > 0))))
		return kvp_cli_usage_error(cmd, "--prefix-cache: expected PREFIXES[:ZIPF_S], got '%s'",
					   o->prefix_cache);
	if (!w->prefix_tokens)
		return kvp_cli_usage_error(cmd, "--prefix-cache needs a prefix length: "
					   "--shared-prefix K or shared_prefix in the workload");
	const struct kvp_frag_result *at = rec >= 0 ? &rows[rec] : NULL;
	cc->block_size = at ? at->block_size : fc->block_sizes[0];
	cc->prefix_tokens = w->prefix_tokens;
	uint64_t full = cc->prefix_tokens / cc->block_size * cc->block_size;
	cc->entry_bytes = kvp_frag_seq_bytes(&fc->shape, full, cc->block_size) - fc->shape.seq_bytes;
	cc->requests = fc->requests;
	cc->carrier_fraction = w->prefix_fraction;
	cc->seed = fc->seed;
	uint64_t sizes[16];
	static const double pct[] = {0, 1, 2, 5, 10, 20, 50};
	if (o->ncache) {
		*ncache = o->ncache;
		memcpy(sizes, o->cache_sizes, *ncache * sizeof sizes[0]);
	} else {
		*ncache = sizeof pct / sizeof pct[0];
		for (size_t i = 0; i < *ncache; i++)
			sizes[i] = (uint64_t)((double)fc->pool_bytes * pct[i] / 100);
	}
	struct kvp_frag_cache_result r1[16], r2[16];
	if (kvp_frag_prefix_cache(cc, sizes, *ncache, r1, &err))
		return kvp_cli_error(cmd, &err);
	cc->unique_first_token = true;
	kvp_frag_prefix_cache(cc, sizes, *ncache, r2, &err);
	cc->unique_first_token = false;
	for (size_t i = 0; i < *ncache; i++) {
		cache[i].shared = r1[i];
		cache[i].stamped = r2[i];
		cache[i].displaced = at && at->held_bytes_per_sequence > 0
					     ? (double)sizes[i] / at->held_bytes_per_sequence
					     : 0;
	}
	return 0;
}

int kvp_cmd_frag(int argc, char **argv)
{
	struct kvp_cli_common c;
	struct frag_opts o = {0};
	kvp_frag_opts_init(&o.sim);
	kvp_cli_common_init(&c);
	int rc;
	const struct kvp_cli_opt opts[] = {
		{.short_name = 'h', .kind = KVP_CLI_OPT_FLAG, .dest = &c.help},
		{.kind = KVP_CLI_OPT_COMMON, .dest = &c},
		{.name = "workload", .kind = KVP_CLI_OPT_STRING, .dest = &o.workload},
		{.name = "lengths", .kind = KVP_CLI_OPT_STRING, .dest = &o.lengths},
		{.name = "prompt", .kind = KVP_CLI_OPT_STRING, .dest = &o.prompt},
		{.name = "output", .kind = KVP_CLI_OPT_STRING, .dest = &o.output},
		{.name = "max-len", .kind = KVP_CLI_OPT_PARSE, .dest = &o, .parse = max_len_parse},
		{.name = "block-sizes", .kind = KVP_CLI_OPT_PARSE, .dest = &o, .parse = block_sizes_parse},
		{.name = "shared-prefix", .kind = KVP_CLI_OPT_PARSE, .dest = &o, .parse = shared_prefix_parse},
		{.name = "max-tokens", .kind = KVP_CLI_OPT_PARSE, .dest = &o, .parse = max_tokens_parse},
		{.name = "requests", .kind = KVP_CLI_OPT_PARSE, .dest = &o, .parse = requests_parse},
		{.name = "seed", .kind = KVP_CLI_OPT_PARSE, .dest = &o, .parse = seed_parse},
		{.name = "warmup", .kind = KVP_CLI_OPT_PARSE, .dest = &o, .parse = warmup_parse},
		{.name = "allocator", .kind = KVP_CLI_OPT_PARSE, .dest = &o, .parse = allocator_parse},
		{.name = "prefix-cache", .kind = KVP_CLI_OPT_STRING, .dest = &o.prefix_cache},
		{.name = "cache-sizes", .kind = KVP_CLI_OPT_PARSE, .dest = &o, .parse = cache_sizes_parse},
		{.name = "policies", .kind = KVP_CLI_OPT_PARSE, .dest = &o, .parse = policies_parse},
		{.name = "arrival-rate", .kind = KVP_CLI_OPT_PARSE, .dest = &o, .parse = arrival_rate_parse},
		{.name = "step-time", .kind = KVP_CLI_OPT_PARSE, .dest = &o, .parse = step_time_parse},
		{.kind = KVP_CLI_OPT_END}
	};
	if ((rc = kvp_cli_options_parse_no_operand(cmd, argc, argv, opts, help, &c.help)) !=
	    KVP_CLI_OPTIONS_DONE)
		return rc;
	if (!c.model)
		return kvp_cli_usage_error(cmd, "--model is required");

	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_frag_report *rep = malloc(sizeof *rep);
	struct kvp_workload w = {0};
	struct kvp_gpu g;
	struct kvp_frag_cache_row cache[16];
	struct kvp_frag_cache_config cc = {0};
	size_t ncache = 0;
	struct kvp_error err = {0};
	if (!m || !rep) {
		fprintf(stderr, "kvplan frag: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	if ((rc = load_workload(&o, &w)) || (rc = kvp_cli_load(&c, cmd, m, &g, true)))
		goto out;
	if (o.has_step && !o.has_rate && !w.arrival_s) {
		rc = kvp_cli_usage_error(cmd, "--step-time applies only with --arrival-rate or "
					 "arrival times in --lengths (a third column)");
		goto out;
	}
	if (w.arrival_s && !o.has_rate && !o.has_step) {
		rc = kvp_cli_usage_error(cmd, "--lengths has arrival times (a third column): give "
					 "--step-time S to replay them");
		goto out;
	}

	struct kvp_frag_opts fo;
	struct kvp_cli_progress tenth = {.cmd = "kvplan frag"};
	sim_options(&o, &w, &fo, &tenth);
	uint64_t max_len = kvp_frag_max_len(&fo, &w, &c.opts, m);
	struct kvp_cli_warnings warn = {0};
	kvp_cli_model_warnings(&warn, m);
	kvp_cli_check_context(&warn, cmd, "max_len", max_len, m);
	if (w.prefix_tokens >= max_len) {
		rc = kvp_cli_usage_error(cmd, "--shared-prefix: %llu tokens leave no room under max_len %llu",
					 (unsigned long long)w.prefix_tokens,
					 (unsigned long long)max_len);
		goto out;
	}
	if (kvp_frag_plan(m, &g, &c.opts, &w, &fo, rep, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	const struct kvp_frag_result *rows = rep->rows;
	size_t n = rep->nrows;
	if (!rep->budget.kv_pool_bytes) {
		fprintf(stderr, "kvplan frag: the weights, activations and overhead leave no KV pool "
				"on %s (see kvplan budget)\n", g.name);
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		if (!rows[i].measured_steps) {
			fprintf(stderr, "kvplan frag: warning: %s measured nothing: the requests ran out "
					"during the warm-up; raise --requests or lower --warmup\n",
				kvp_frag_policy_name(rows[i].policy));
			break;
		}

	if (o.prefix_cache && (rc = run_prefix_cache(&o, &w, rep, &cc, cache, &ncache)))
		goto out;

	if (c.format == KVP_FORMAT_TABLE) {
		kvp_frag_print_table(rep, &g, &w, cache, ncache, &cc);
	} else if (!kvp_frag_print_record(rep, c.format, &warn, cache, ncache)) {
		fprintf(stderr, "kvplan frag: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	rc = KVP_EXIT_OK;
out:
	kvp_workload_free(&w);
	free(m);
	free(rep);
	return rc;
}
