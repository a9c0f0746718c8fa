/* cmd-frag.c: `kvplan frag`: how many requests really fit in the KV pool
 * given how long they are, under contiguous reservation and paging at each
 * block size, with and without a shared prefix; which block size to use and
 * why; and what a prefix cache buys for the memory it keeps.  The pool comes
 * from the budget (kvp_budget_compute), the bytes per token from the model's
 * layer list, the lengths from a workload (frag.h describes the simulation). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "frag.h"
#include "units.h"

static const char *const cmd = "frag";

enum {
	OPT_WORKLOAD = KVP_OPT_LAST + 1, OPT_LENGTHS, OPT_PROMPT, OPT_OUTPUT, OPT_MAX_LEN,
	OPT_BLOCK_SIZES, OPT_SHARED_PREFIX, OPT_MAX_TOKENS, OPT_REQUESTS, OPT_SEED, OPT_WARMUP,
	OPT_ALLOCATOR, OPT_PREFIX_CACHE, OPT_CACHE_SIZES, OPT_POLICIES, OPT_ARRIVAL_RATE,
	OPT_STEP_TIME
};

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
	       "                            sequences at mean prompt + (mean output - 1) / 2\n"
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
	const char *workload, *lengths, *prompt, *output, *prefix_cache;
	uint64_t max_len, max_tokens, requests, seed, warmup;
	bool has_prefix, has_warmup;
	uint64_t prefix_tokens;
	double prefix_fraction;
	uint64_t blocks[KVP_FRAG_MAX_BLOCK_SIZES];
	size_t nblock;
	bool fit[2];
	bool policy[KVP_FRAG_POLICY_COUNT];
	bool has_policies;
	uint64_t cache_sizes[16];
	size_t ncache;
	double arrival_rate, step_time_s;
	bool has_rate, has_step;
};

/* "2048" or "2048:0.7". */
static int parse_prefix(struct frag_opts *o, const char *arg)
{
	char buf[64];
	const char *colon = strchr(arg, ':');
	size_t len = colon ? (size_t)(colon - arg) : strlen(arg);
	if (len >= sizeof buf) /* longer than any token count: refused, not cut */
		return kvp_cli_usage_error(cmd, "--shared-prefix: expected TOKENS[:FRACTION], got '%s'", arg);
	memcpy(buf, arg, len);
	buf[len] = '\0';
	o->prefix_fraction = 1;
	if (!kvp_cli_tokens(cmd, "--shared-prefix", buf, &o->prefix_tokens))
		return KVP_EXIT_USAGE;
	if (colon && kvp_parse_double(colon + 1, &o->prefix_fraction))
		return kvp_cli_usage_error(cmd, "--shared-prefix: expected TOKENS[:FRACTION], got '%s'", arg);
	if (o->prefix_fraction > 1)
		return kvp_cli_usage_error(cmd, "--shared-prefix: the fraction must lie in [0, 1], got '%s'", arg);
	o->has_prefix = true;
	return 0;
}

static int parse_allocator(struct frag_opts *o, const char *arg)
{
	o->fit[0] = strcmp(arg, "first-fit") == 0 || strcmp(arg, "both") == 0;
	o->fit[1] = strcmp(arg, "best-fit") == 0 || strcmp(arg, "both") == 0;
	if (!o->fit[0] && !o->fit[1])
		return kvp_cli_usage_error(cmd, "--allocator: expected first-fit, best-fit or both, got '%s'", arg);
	return 0;
}

static int parse_sizes(struct frag_opts *o, const char *arg)
{
	char *buf = strdup(arg); /* any length: no size is cut */
	if (!buf)
		return kvp_cli_usage_error(cmd, "--cache-sizes: out of memory");
	o->ncache = 0;
	int rc = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && !rc;
	     t = strtok_r(NULL, ",", &save)) {
		if (o->ncache == sizeof o->cache_sizes / sizeof o->cache_sizes[0])
			rc = kvp_cli_usage_error(cmd, "--cache-sizes: at most 16 sizes");
		else if (!kvp_cli_bytes(cmd, "--cache-sizes", t, &o->cache_sizes[o->ncache++]))
			rc = KVP_EXIT_USAGE;
	}
	free(buf);
	if (rc)
		return rc;
	return o->ncache ? 0 : kvp_cli_usage_error(cmd, "--cache-sizes: empty list");
}

static int parse_policies(struct frag_opts *o, const char *arg)
{
	char *buf = strdup(arg); /* any length: no name is cut */
	if (!buf)
		return kvp_cli_usage_error(cmd, "--policies: out of memory");
	memset(o->policy, 0, sizeof o->policy);
	o->has_policies = true;
	int rc = 0;
	for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && !rc;
	     t = strtok_r(NULL, ",", &save)) {
		int p = 0;
		while (p < KVP_FRAG_POLICY_COUNT && strcmp(t, kvp_frag_policy_name((enum kvp_frag_policy)p)))
			p++;
		if (p == KVP_FRAG_POLICY_COUNT)
			rc = kvp_cli_usage_error(cmd, "--policies: unknown policy '%s' (contiguous-max, "
						 "contiguous-request, paged, paged-shared)", t);
		else
			o->policy[p] = true;
	}
	free(buf);
	if (rc)
		return rc;
	for (int p = 0; p < KVP_FRAG_POLICY_COUNT; p++)
		if (o->policy[p])
			return 0;
	return kvp_cli_usage_error(cmd, "--policies: empty list (contiguous-max, contiguous-request, "
				   "paged, paged-shared)");
}

/* A positive, finite number: --arrival-rate, --step-time. */
static int parse_positive(const char *opt, const char *arg, double *out)
{
	if (kvp_parse_double(arg, out) || !(*out > 0) || !isfinite(*out))
		return kvp_cli_usage_error(cmd, "%s: expected a positive, finite number, got '%s'",
					   opt, arg);
	return 0;
}

static int frag_option(struct frag_opts *o, int opt, const char *arg)
{
	switch (opt) {
	case OPT_WORKLOAD: o->workload = arg; return 0;
	case OPT_LENGTHS: o->lengths = arg; return 0;
	case OPT_PROMPT: o->prompt = arg; return 0;
	case OPT_OUTPUT: o->output = arg; return 0;
	case OPT_PREFIX_CACHE: o->prefix_cache = arg; return 0;
	case OPT_MAX_LEN:
		return kvp_cli_tokens(cmd, "--max-len", arg, &o->max_len) ? 0 : KVP_EXIT_USAGE;
	case OPT_MAX_TOKENS:
		return kvp_cli_tokens(cmd, "--max-tokens", arg, &o->max_tokens) ? 0 : KVP_EXIT_USAGE;
	case OPT_REQUESTS:
		return kvp_cli_u64(cmd, "--requests", arg, 1, &o->requests) ? 0 : KVP_EXIT_USAGE;
	case OPT_SEED:
		return kvp_cli_u64(cmd, "--seed", arg, 0, &o->seed) ? 0 : KVP_EXIT_USAGE;
	case OPT_WARMUP:
		o->has_warmup = true;
		return kvp_cli_u64(cmd, "--warmup", arg, 0, &o->warmup) ? 0 : KVP_EXIT_USAGE;
	case OPT_SHARED_PREFIX: return parse_prefix(o, arg);
	case OPT_ALLOCATOR: return parse_allocator(o, arg);
	case OPT_CACHE_SIZES: return parse_sizes(o, arg);
	case OPT_POLICIES: return parse_policies(o, arg);
	case OPT_ARRIVAL_RATE:
		o->has_rate = true;
		return parse_positive("--arrival-rate", arg, &o->arrival_rate);
	case OPT_STEP_TIME:
		o->has_step = true;
		return parse_positive("--step-time", arg, &o->step_time_s);
	case OPT_BLOCK_SIZES:
		if (!kvp_cli_token_list(cmd, "--block-sizes", arg, o->blocks, KVP_FRAG_MAX_BLOCK_SIZES,
					&o->nblock))
			return KVP_EXIT_USAGE;
		for (size_t i = 0; i < o->nblock; i++)
			if (o->blocks[i] > KVP_FRAG_MAX_BLOCK)
				return kvp_cli_usage_error(cmd, "--block-sizes: %llu is more than %u tokens",
							   (unsigned long long)o->blocks[i], KVP_FRAG_MAX_BLOCK);
		return 0;
	default:
		return 1;
	}
}

/* The workload: a profile, then the command line's lengths and prefix on top. */
static int load_workload(const struct frag_opts *o, struct kvp_workload *w)
{
	struct kvp_error err = {0};
	memset(w, 0, sizeof *w);
	if (o->workload && kvp_workload_load(o->workload, w, &err))
		return kvp_cli_error(cmd, &err);
	if (o->lengths) {
		if (kvp_workload_load_lengths(o->lengths, w, &err))
			return kvp_cli_error(cmd, &err);
	} else if (o->prompt || o->output) {
		if (!o->prompt || !o->output)
			return kvp_cli_usage_error(cmd, "--prompt and --output go together");
		struct kvp_dist p, q;
		if (kvp_dist_parse(o->prompt, "--prompt", &p, &err) ||
		    kvp_dist_parse(o->output, "--output", &q, &err)) {
			char buf[800];
			kvp_error_format(&err, buf, sizeof buf);
			return kvp_cli_usage_error(cmd, "%s", buf + strlen("error: "));
		}
		kvp_dist_free(&w->prompt);
		kvp_dist_free(&w->output);
		w->prompt = p;
		w->output = q;
		w->paired = false;
		if (!o->workload)
			snprintf(w->name, sizeof w->name, "custom");
	} else if (!o->workload) {
		return kvp_cli_usage_error(cmd, "give --workload, --lengths, or --prompt and --output");
	}
	if (o->has_prefix) {
		w->prefix_tokens = o->prefix_tokens;
		w->prefix_fraction = o->prefix_fraction;
	}
	return 0;
}

struct cache_row {
	struct kvp_frag_cache_result shared, stamped;
	double displaced;
};

static void print_table(const struct kvp_budget *b, const struct kvp_gpu *g,
			const struct kvp_workload *w, const struct kvp_frag_config *fc,
			const struct kvp_frag_result *rows, size_t n, int rec, const char *reason,
			bool max_fits, const struct cache_row *cache, size_t ncache,
			const struct kvp_frag_cache_config *cc, const struct kvp_frag_report *rep)
{
	const struct kvp_spec *s = &b->spec;
	char t1[64], t2[64], t3[64], sp[128], so[128];
	char mn[KVP_TERM_SIZE(sizeof s->model->name)], gn[KVP_TERM_SIZE(sizeof g->name)];
	char wn[KVP_TERM_SIZE(sizeof w->name)];
	printf("kvplan frag: %s on %s, engine %s, tp %u, pp %u, KV %s\n\n",
	       kvp_term_text(mn, sizeof mn, s->model->name), kvp_term_text(gn, sizeof gn, g->name),
	       kvp_engine_name(b->engine), s->par.tp, s->par.pp, kvp_dtype_name(s->kv_dtype));
	kvp_dist_format(&w->prompt, sp, sizeof sp);
	kvp_dist_format(&w->output, so, sizeof so);
	kvp_format_u64(fc->max_len, t1, sizeof t1);
	kvp_format_u64(fc->requests, t2, sizeof t2);
	printf("Workload %s: prompt %s, output %s%s, max_len %s tokens\n",
	       kvp_term_text(wn, sizeof wn, w->name), sp, so,
	       w->paired ? " (pairs from the file)" : "", t1);
	if (fc->prefix_tokens) {
		kvp_format_u64(fc->prefix_tokens, t1, sizeof t1);
		printf("  shared prefix: %s tokens before the prompt of %.0f%% of the requests\n", t1,
		       100 * fc->prefix_fraction);
	}
	printf("  %s requests, seed %llu, averages after %llu admissions while requests wait\n\n",
	       t2, (unsigned long long)fc->seed, (unsigned long long)fc->warmup);

	kvp_format_bytes(fc->pool_bytes, t1, sizeof t1);
	kvp_format_u64(kvp_frag_token_bytes(&fc->shape), t2, sizeof t2);
	kvp_format_u64(fc->pool_bytes / kvp_frag_token_bytes(&fc->shape), t3, sizeof t3);
	printf("KV pool (kvplan budget): %s; %s B per token -> %s token slots\n", t1, t2, t3);
	kvp_format_u64(b->max_sequences, t1, sizeof t1);
	kvp_format_u64(fc->max_len, t2, sizeof t2);
	printf("Engine's worst case (every request at max_len %s): %s sequences\n\n", t2, t1);

	printf("%-18s %-9s %6s %7s %7s %7s %6s %9s %8s %8s %10s %11s\n", "policy", "alloc/P",
	       "used%", "int.w%", "ext.w%", "free%", "seqs", "refused*", "preempt", "waste/seq",
	       "(P-1)/2", "metadata");
	for (size_t i = 0; i < n; i++) {
		const struct kvp_frag_result *r = &rows[i];
		char what[16], exp[16], meta[32];
		if (r->policy >= KVP_FRAG_POLICY_PAGED) {
			snprintf(what, sizeof what, "%u", r->block_size);
			snprintf(exp, sizeof exp, "%.1f", r->expected_waste_tokens);
		} else {
			snprintf(what, sizeof what, "%s", r->fit ? "best" : "first");
			snprintf(exp, sizeof exp, "-");
		}
		kvp_format_bytes(r->metadata_bytes, meta, sizeof meta);
		printf("%-18s %-9s %6.2f %7.2f %7.2f %7.2f %6llu %9llu %8llu %8.1f %10s %11s%s\n",
		       kvp_frag_policy_name(r->policy), what, 100 * r->used_fraction,
		       100 * r->internal_waste_fraction, 100 * r->external_waste_fraction,
		       100 * r->free_fraction, (unsigned long long)r->max_sequences,
		       (unsigned long long)r->refused_with_free_memory,
		       (unsigned long long)r->preemptions, r->waste_tokens_per_sequence, exp, meta,
		       (int)i == rec ? "  <- recommended" : "");
	}
	if (n && rows[0].over_time) {
		printf("\nArrivals: %g requests/s (%s), %g s per step, %llu tokens per step\n",
		       rows[0].arrival_rate, fc->arrival_rate > 0 ? "Poisson" : "the file's times",
		       fc->step_time_s,
		       (unsigned long long)fc->max_batched_tokens);
		if (rep->step_from_perf)
			printf("  step: the perf model's decode step of %llu sequences at %llu tokens "
			       "(--step-time to set it)\n", (unsigned long long)rep->step_batch,
			       (unsigned long long)rep->step_context);
		printf("%-18s %-9s %12s %12s %10s %12s %9s %14s\n", "policy", "P/alloc", "queue s",
		       "p99 queue s", "live", "latency s", "preempt", "throughput/s");
		for (size_t i = 0; i < n; i++) {
			char what[16];
			if (rows[i].policy >= KVP_FRAG_POLICY_PAGED)
				snprintf(what, sizeof what, "%u", rows[i].block_size);
			else
				snprintf(what, sizeof what, "%s", rows[i].fit ? "best" : "first");
			printf("%-18s %-9s %12.4f %12.4f %10.2f %12.4f %9llu %14.3f\n",
			       kvp_frag_policy_name(rows[i].policy), what, rows[i].mean_queue_s,
			       rows[i].p99_queue_s, rows[i].mean_live_sequences,
			       rows[i].mean_latency_s, (unsigned long long)rows[i].preemptions,
			       rows[i].throughput_rps);
		}
		printf("  live = arrival rate x (latency - queue) when nothing is preempted "
		       "(Little's law).\n");
	}
	if (!max_fits)
		printf("contiguous-max: one reservation of max_len is larger than the pool: 0 sequences\n");
	printf("\n  used: pool bytes holding real tokens; int.w: reserved or allocated but empty;\n"
	       "  ext.w: free while the next request waited for a large enough hole; seqs: the\n"
	       "  time-average of live sequences; refused*: requests refused while enough bytes\n"
	       "  were free in total; waste/seq: empty token slots per sequence, against the\n"
	       "  closed form (P - 1) / 2 for lengths spread over many blocks.\n%s\n",
	       fc->shape.nclass > 1 ? "  The closed form is for full-attention layers; sliding and "
				      "chunked layers add\n  the partial blocks at both ends of "
				      "their window.\n" : "");
	for (size_t i = 0; i < n; i++)
		if (rows[i].dropped) {
			printf("  %s: %llu requests longer than the whole pool were dropped\n",
			       kvp_frag_policy_name(rows[i].policy),
			       (unsigned long long)rows[i].dropped);
			break;
		}
	if (rec >= 0)
		printf("Recommended block size: %u (%s)\n", rows[rec].block_size, reason);
	if (!ncache)
		return;
	kvp_format_u64(cc->prefixes, t1, sizeof t1);
	kvp_format_bytes(cc->entry_bytes, t2, sizeof t2);
	printf("\nPrefix cache: LRU over %s prefixes of %llu tokens, Zipf(%g) popularity, block %u;\n"
	       "one cached prefix keeps its %llu full blocks = %s\n", t1,
	       (unsigned long long)cc->prefix_tokens, cc->zipf_s, cc->block_size,
	       (unsigned long long)(cc->prefix_tokens / cc->block_size), t2);
	printf("%.0f%% of the requests carry a prefix and look it up (hit%% is of theirs)\n",
	       100 * cc->carrier_fraction);
	printf("%12s %7s %9s %8s %14s %14s %13s %17s\n", "cache", "%pool", "prefixes", "hit%",
	       "saved tok/car", "saved tok/req", "seqs given up", "hit% id first");
	for (size_t i = 0; i < ncache; i++) {
		kvp_format_bytes(cache[i].shared.cache_bytes, t1, sizeof t1);
		printf("%12s %7.2f %9llu %8.2f %14.1f %14.1f %13.1f %17.2f\n", t1,
		       100.0 * (double)cache[i].shared.cache_bytes / (double)fc->pool_bytes,
		       (unsigned long long)cache[i].shared.capacity_prefixes,
		       100 * cache[i].shared.hit_rate,
		       cache[i].shared.saved_prefill_tokens_per_carrier,
		       cache[i].shared.saved_prefill_tokens,
		       cache[i].displaced, 100 * cache[i].stamped.hit_rate);
	}
	printf("  saved tok/car: prefill tokens saved per carrying request; tok/req: per request\n"
	       "  of the stream (times the carrying share).\n");
	printf("  seqs given up: cache bytes / pool bytes per live sequence at the recommended\n"
	       "  block; id first: the same prefixes behind a timestamp or request id share nothing.\n");
}

/* Simulation speed for the up-front estimate, measured by bench/frag-bench.sh
 * on a slow core and rounded up: the saturated mode about 0.3 us per request
 * and row, arrivals over time about 1 us. */
#define FRAG_US_PER_REQUEST_ROW 0.3
#define FRAG_US_PER_ARRIVAL_ROW 1.0
#define FRAG_PROGRESS_FROM_S 10.0

/* Progress on stderr, at each further tenth of the requests; arrivals run
 * their rows one after the other, each from 0 again. */
struct progress_state {
	unsigned tenth;
	uint64_t last;
};

static void progress(void *ctx, uint64_t done, uint64_t total)
{
	struct progress_state *ps = ctx;
	if (done < ps->last)
		ps->tenth = 0; /* the next row */
	ps->last = done;
	unsigned now = (unsigned)((double)done / (double)total * 10);
	if (now <= ps->tenth)
		return;
	ps->tenth = now;
	char t1[64], t2[64];
	kvp_format_u64(done, t1, sizeof t1);
	kvp_format_u64(total, t2, sizeof t2);
	fprintf(stderr, "kvplan frag: %s of %s requests drawn\n", t1, t2);
}

int kvp_cmd_frag(int argc, char **argv)
{
	static const struct option longopts[] = {
		KVP_CLI_COMMON_OPTIONS,
		{"workload", required_argument, NULL, OPT_WORKLOAD},
		{"lengths", required_argument, NULL, OPT_LENGTHS},
		{"prompt", required_argument, NULL, OPT_PROMPT},
		{"output", required_argument, NULL, OPT_OUTPUT},
		{"max-len", required_argument, NULL, OPT_MAX_LEN},
		{"block-sizes", required_argument, NULL, OPT_BLOCK_SIZES},
		{"shared-prefix", required_argument, NULL, OPT_SHARED_PREFIX},
		{"max-tokens", required_argument, NULL, OPT_MAX_TOKENS},
		{"requests", required_argument, NULL, OPT_REQUESTS},
		{"seed", required_argument, NULL, OPT_SEED},
		{"warmup", required_argument, NULL, OPT_WARMUP},
		{"allocator", required_argument, NULL, OPT_ALLOCATOR},
		{"prefix-cache", required_argument, NULL, OPT_PREFIX_CACHE},
		{"cache-sizes", required_argument, NULL, OPT_CACHE_SIZES},
		{"policies", required_argument, NULL, OPT_POLICIES},
		{"arrival-rate", required_argument, NULL, OPT_ARRIVAL_RATE},
		{"step-time", required_argument, NULL, OPT_STEP_TIME},
		{NULL, 0, NULL, 0}
	};
	struct kvp_cli_common c;
	struct frag_opts o = {.requests = 100000, .seed = 1, .fit = {true, true}};
	kvp_cli_common_init(&c);
	int opt, rc;
	optind = 1;
	opterr = 0;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == 'h') {
			c.help = true;
			continue;
		}
		if (opt == '?' || opt == ':')
			return kvp_cli_bad_option(cmd, argv[optind - 1], longopts);
		rc = kvp_cli_common_option(&c, cmd, opt, optarg);
		if (rc == 1)
			rc = frag_option(&o, opt, optarg);
		if (rc)
			return rc == 1 ? kvp_cli_usage_error(cmd, "unexpected option") : rc;
	}
	if (c.help) {
		help();
		return KVP_EXIT_OK;
	}
	if (optind < argc)
		return kvp_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	if (!c.model)
		return kvp_cli_usage_error(cmd, "--model is required");

	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_frag_report *rep = malloc(sizeof *rep);
	struct kvp_workload w = {0};
	struct kvp_gpu g;
	struct cache_row cache[16];
	struct kvp_frag_cache_config cc = {0};
	struct kvp_record *top = NULL;
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
	kvp_frag_opts_init(&fo);
	fo.max_len = o.max_len;
	fo.max_tokens = o.max_tokens;
	fo.requests = o.requests;
	fo.seed = o.seed;
	fo.warmup = o.warmup;
	fo.has_warmup = o.has_warmup;
	fo.fit[0] = o.fit[0];
	fo.fit[1] = o.fit[1];
	fo.has_policies = o.has_policies;
	memcpy(fo.policy, o.policy, sizeof fo.policy);
	/* more requests than a minute's simulation: say so up front and show
	 * progress (the rows run side by side over one stream) */
	bool over_time = o.has_rate || o.has_step;
	size_t nb = o.nblock ? o.nblock : 7, nfit = (size_t)o.fit[0] + o.fit[1], est_rows = 0;
	for (int p = 0; p < KVP_FRAG_POLICY_COUNT; p++) {
		if (o.has_policies && !o.policy[p])
			continue;
		if (p < KVP_FRAG_POLICY_PAGED)
			est_rows += nfit;
		else if (p == KVP_FRAG_POLICY_PAGED || w.prefix_tokens)
			est_rows += nb; /* paged-shared: with a prefix */
	}
	double est_s = (double)(w.arrival_s && !o.has_rate ? w.narrival : o.requests) * (double)est_rows * 1e-6 *
		       (over_time ? FRAG_US_PER_ARRIVAL_ROW : FRAG_US_PER_REQUEST_ROW);
	struct progress_state tenth = {0};
	if (est_s > FRAG_PROGRESS_FROM_S) {
		char t1[64];
		kvp_format_u64(o.requests, t1, sizeof t1);
		fprintf(stderr, "kvplan frag: %s requests over about %zu row%s: about %.0f s; "
			"progress follows\n", t1, est_rows, est_rows == 1 ? "" : "s", est_s);
		fo.progress = progress;
		fo.progress_ctx = &tenth;
	}
	fo.arrival_rate = o.arrival_rate;
	fo.step_time_s = o.step_time_s;
	fo.nblock = o.nblock;
	for (size_t i = 0; i < o.nblock; i++)
		fo.block_sizes[i] = (uint32_t)o.blocks[i];
	uint64_t max_len = kvp_frag_max_len(&fo, &w, &c.opts, m);
	struct kvp_cli_warnings warn = {0};
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
	const struct kvp_budget *b = &rep->budget;
	const struct kvp_frag_config *fc = &rep->cfg;
	const struct kvp_frag_result *rows = rep->rows;
	size_t n = rep->nrows;
	if (!b->kv_pool_bytes) {
		fprintf(stderr, "kvplan frag: the weights, activations and overhead leave no KV pool "
				"on %s (see kvplan budget)\n", g.name);
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	int rec = rep->recommended;
	const char *reason = rep->reason;
	for (size_t i = 0; i < n; i++)
		if (!rows[i].measured_steps) {
			fprintf(stderr, "kvplan frag: warning: %s measured nothing: the requests ran out "
					"during the warm-up; raise --requests or lower --warmup\n",
				kvp_frag_policy_name(rows[i].policy));
			break;
		}

	/* the prefix cache, at the recommended block (or the first paged one) */
	if (o.prefix_cache) {
		char buf[64];
		snprintf(buf, sizeof buf, "%s", o.prefix_cache);
		char *colon = strchr(buf, ':');
		if (colon)
			*colon = '\0';
		cc.zipf_s = 1;
		if (kvp_parse_u64(buf, &cc.prefixes) || !cc.prefixes ||
		    (colon && (kvp_parse_double(colon + 1, &cc.zipf_s) || !(cc.zipf_s > 0)))) {
			rc = kvp_cli_usage_error(cmd, "--prefix-cache: expected PREFIXES[:ZIPF_S], got '%s'",
						 o.prefix_cache);
			goto out;
		}
		if (!w.prefix_tokens) {
			rc = kvp_cli_usage_error(cmd, "--prefix-cache needs a prefix length: "
						 "--shared-prefix K or shared_prefix in the workload");
			goto out;
		}
		const struct kvp_frag_result *at = rec >= 0 ? &rows[rec] : NULL;
		cc.block_size = at ? at->block_size : fc->block_sizes[0];
		cc.prefix_tokens = w.prefix_tokens;
		uint64_t full = cc.prefix_tokens / cc.block_size * cc.block_size;
		cc.entry_bytes = kvp_frag_seq_bytes(&fc->shape, full, cc.block_size) - fc->shape.seq_bytes;
		cc.requests = fc->requests;
		cc.carrier_fraction = w.prefix_fraction;
		cc.seed = fc->seed;
		uint64_t sizes[16];
		static const double pct[] = {0, 1, 2, 5, 10, 20, 50};
		if (o.ncache) {
			ncache = o.ncache;
			memcpy(sizes, o.cache_sizes, ncache * sizeof sizes[0]);
		} else {
			ncache = sizeof pct / sizeof pct[0];
			for (size_t i = 0; i < ncache; i++)
				sizes[i] = (uint64_t)((double)fc->pool_bytes * pct[i] / 100);
		}
		struct kvp_frag_cache_result r1[16], r2[16];
		if (kvp_frag_prefix_cache(&cc, sizes, ncache, r1, &err)) {
			rc = kvp_cli_error(cmd, &err);
			goto out;
		}
		cc.unique_first_token = true;
		kvp_frag_prefix_cache(&cc, sizes, ncache, r2, &err);
		cc.unique_first_token = false;
		for (size_t i = 0; i < ncache; i++) {
			cache[i].shared = r1[i];
			cache[i].stamped = r2[i];
			cache[i].displaced = at && at->held_bytes_per_sequence > 0
						     ? (double)sizes[i] / at->held_bytes_per_sequence
						     : 0;
		}
	}

	if (c.format == KVP_FORMAT_TABLE) {
		print_table(b, &g, &w, fc, rows, n, rec, reason, rep->max_fits, cache, ncache, &cc, rep);
		rc = KVP_EXIT_OK;
		goto out;
	}
	if (c.format == KVP_FORMAT_CSV) {
		struct kvp_record *recs[KVP_FRAG_MAX_ROWS];
		size_t nrec = 0;
		for (size_t i = 0; i < n; i++)
			if ((recs[nrec] = kvp_frag_row_to_record(&rows[i])))
				nrec++;
		kvp_cli_write_rows(stdout, c.format, recs, nrec, NULL);
		for (size_t i = 0; i < nrec; i++)
			kvp_record_free(recs[i]);
		rc = KVP_EXIT_OK;
		goto out;
	}
	top = kvp_record_new();
	bool ok = top && kvp_frag_to_record(rep, top) && kvp_cli_warnings_to_record(&warn, top);
	for (size_t i = 0; i < ncache && top; i++)
		for (int stamped = 0; stamped < 2; stamped++) {
			const struct kvp_frag_cache_result *x = stamped ? &cache[i].stamped : &cache[i].shared;
			struct kvp_record *cr = kvp_record_new();
			bool good = cr && kvp_record_str(cr, "prefix_first", stamped ? "request-id" : "shared") &&
				    kvp_record_u64(cr, "cache_bytes", x->cache_bytes) &&
				    kvp_record_u64(cr, "capacity_prefixes", x->capacity_prefixes) &&
				    kvp_record_f64(cr, "hit_rate", x->hit_rate) &&
				    kvp_record_f64(cr, "saved_prefill_tokens", x->saved_prefill_tokens) &&
				    kvp_record_f64(cr, "saved_prefill_tokens_per_carrier",
						   x->saved_prefill_tokens_per_carrier) &&
				    kvp_record_f64(cr, "sequences_given_up", cache[i].displaced);
			if (!good) {
				kvp_record_free(cr);
				ok = false;
			} else if (!kvp_record_push(top, "prefix_cache", cr)) {
				ok = false;
			}
		}
	if (!ok) {
		fprintf(stderr, "kvplan frag: out of memory\n");
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	kvp_write_json(stdout, top);
	rc = KVP_EXIT_OK;
out:
	kvp_record_free(top);
	kvp_workload_free(&w);
	free(m);
	free(rep);
	return rc;
}
