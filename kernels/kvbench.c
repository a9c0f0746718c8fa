/* kvbench.c: the decode harness.  Runs a real paged-attention decode step
 * over a real paged KV cache, on the CPU or a CUDA GPU, and reports the
 * bandwidth it reaches against a streaming ceiling measured in the same
 * run; or, with --capacity, allocates a KV pool for real under a memory
 * limit and reports the blocks, tokens and sequences that fit.
 *
 * Stance: validate before timing.  Every point is first run on fresh
 * random data with the output poisoned and compared with the double
 * reference; a point that fails is reported and never timed.  Timing is
 * cold: the caches are flushed before each timed run, each run is timed
 * alone, and the median is reported.  kvbench measures; predictions come
 * from the planner's library (not in a -DKVBENCH_STANDALONE build, which
 * needs neither libyaml nor autotools and is what kernels/run-device.sh
 * compiles on a GPU machine). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "atomic-file.h"
#include "decode.h"
#include "output.h"
#include "units.h"
#ifndef KVBENCH_STANDALONE
#include "dist.h"
#include "perf.h"
#include "predict.h"
#include "profile.h"
#include "validate.h"
#endif

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef PACKAGE_VERSION
#define PACKAGE_VERSION "0.1.0"
#endif

enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2, EXIT_NO_DEVICE = 77 };
enum backend { BACKEND_CPU, BACKEND_CUDA };

/* --------------------------------------------------------------- options */

struct int_list {
	int64_t v[64];
	int n;
};

struct heads_list {
	int hq[32], hkv[32];
	int n;
};

struct opts {
	enum backend backend;
	struct int_list batch, context, block, head_dim;
	struct heads_list heads;
	enum kvb_dtype dtypes[KVB_DTYPE_COUNT];
	int ndtypes;
	enum kvb_lengths lengths;
#ifndef KVBENCH_STANDALONE
	struct kvp_dist dist; /* --lengths SPEC (dist.h), when have_dist */
	int have_dist;
#endif
	int threads, repeats, warmup;
	uint64_t seed;
	int validate_only, capacity, quick;
	int progress; /* 1 --progress, 0 --quiet, -1 when stderr is a terminal */
	uint64_t weights_bytes, gpu_memory, stream_bytes;
	int gpu_memory_set, stream_bytes_set;
	double utilization;
	int layers;
	const char *gpu; /* profile for the predictions */
	const char *out;
	enum kvp_format format;
	char command[2048];
};

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: kvbench [options]\n"
		"Run a paged-attention decode step, validate it against a double-precision\n"
		"reference, and time it against a streaming ceiling measured in the same run.\n"
		"\n"
		"Sweep (each LIST is comma-separated; every combination is one point):\n"
		"  --backend cpu|cuda      where the decode runs (default cpu)\n"
		"  --batch LIST            sequences B (default 16)\n"
		"  --context LIST          tokens per sequence, mean for --lengths uniform;\n"
		"                          k = 1024 (default 4096)\n"
		"  --block-size LIST       tokens per KV block P (default 16)\n"
		"  --kv-dtype LIST         fp32, fp16, bf16, fp8 (e4m3), int8 (default bf16)\n"
		"  --heads LIST            HQ:HKV query and KV heads, e.g. 32:32,32:8 (default 32:8)\n"
		"  --head-dim LIST         head dim d (default 128; CUDA: 64, 128, 256)\n"
		"  --lengths fixed|uniform all equal to the context, or uniform on\n"
		"                          [1, 2*context-1] (default fixed); with the\n"
		"                          planner's library also a distribution as\n"
		"                          kvplan takes it (fixed:N, uniform:LO,HI,\n"
		"                          normal:M,SD, lognormal:MED,SIGMA, zipf:MAX,S),\n"
		"                          which then gives the lengths instead of --context\n"
		"\n"
		"Run:\n"
		"  --threads N             CPU threads (default: online CPUs)\n"
		"  --warmup N              untimed runs before timing (default 2)\n"
		"  --repeats N             timed runs; the median is reported (default 10)\n"
		"  --seed N                random seed for data and lengths (default 1)\n"
		"  --validate-only         validate every point, time nothing\n"
		"  --stream-bytes SIZE     array size of the streaming ceiling\n"
		"                          (default: 512MiB or 4x the last-level cache)\n"
		"  --quick                 a small sweep for tests: B 3, context 200,\n"
		"                          every dtype, heads 8:8 and 8:2, d 64\n"
		"                          (ceiling arrays of 2x the last-level cache)\n"
		"\n"
		"Capacity (--capacity): allocate a KV pool for real and fill it:\n"
		"  --gpu-memory SIZE       memory limit (default: the GPU's memory; 1GiB on cpu)\n"
		"  --utilization FRAC      fraction of the limit kvbench may use (default 0.9);\n"
		"                          a pool the allocator stops short of it exits 1\n"
		"  --weights-bytes SIZE    reserved and touched before the pool (default 0)\n"
		"  --layers N              layers whose KV each block holds (default 1)\n"
		"\n"
		"Predictions (builds with the planner's library):\n"
		"  --gpu NAME              GPU profile whose bandwidth and calibration\n"
		"                          time the planner's prediction (default: the CPU's\n"
		"                          read ceiling; the GPU's bus rate x %.2f)\n"
		"\n"
		"Output:\n"
		"  --format table|json|csv standard output format (default table)\n"
		"  --progress, --quiet     the plan and a line per point on stderr (the\n"
		"                          default, terminal or not), or none\n"
		"  --out FILE              also write FILE: .csv, or .yaml/.yml with the\n"
		"                          environment and ceiling; each point is appended\n"
		"                          as it finishes\n"
		"  --help, --version\n"
		"\n"
		"Exit status: 0 ok, 1 a point failed validation or the run failed (or did\n"
		"not fit the memory, or a capacity pool stopped short of its limit),\n"
		"2 usage, 77 --backend cuda without a CUDA device.\n"
#ifndef KVBENCH_STANDALONE
		, KVP_PERF_DECODE_BW_EFFICIENCY
#else
		, 0.8
#endif
	);
}

static int die_usage(const char *fmt, ...)
{
	va_list ap;
	fputs("kvbench: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'kvbench --help'.\n", stderr);
	return EXIT_USAGE;
}

/* Comma-separated positive integers; `tokens` takes k/M suffixes. */
static int parse_list(const char *opt, const char *arg, int tokens, int64_t max,
		      struct int_list *out)
{
	char buf[1024], *save = NULL;
	if (strlen(arg) >= sizeof buf)
		return die_usage("%s: list too long", opt);
	strcpy(buf, arg);
	out->n = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;
		int rc = tokens ? kvp_parse_tokens(tok, &v) : kvp_parse_u64(tok, &v);
		if (rc != 0 || v == 0 || v > (uint64_t)max)
			return die_usage("%s: '%s' is not a whole number in 1..%lld", opt, tok,
					 (long long)max);
		if (out->n == (int)(sizeof out->v / sizeof out->v[0]))
			return die_usage("%s: more than %d values", opt, out->n);
		out->v[out->n++] = (int64_t)v;
	}
	if (out->n == 0)
		return die_usage("%s: empty list", opt);
	return 0;
}

static int parse_heads(const char *arg, struct heads_list *out)
{
	char buf[1024], *save = NULL;
	if (strlen(arg) >= sizeof buf)
		return die_usage("--heads: list too long");
	strcpy(buf, arg);
	out->n = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *colon = strchr(tok, ':');
		uint64_t hq, hkv;
		if (!colon)
			return die_usage("--heads: '%s' is not HQ:HKV", tok);
		*colon = 0;
		if (kvp_parse_u64(tok, &hq) || kvp_parse_u64(colon + 1, &hkv) || hq == 0 ||
		    hkv == 0 || hq > 1024 || hkv > 1024)
			return die_usage("--heads: '%s:%s' needs two whole numbers in 1..1024", tok,
					 colon + 1);
		if (hq % hkv != 0)
			return die_usage("--heads: %s:%s: KV heads must divide query heads", tok,
					 colon + 1);
		if (out->n == (int)(sizeof out->hq / sizeof out->hq[0]))
			return die_usage("--heads: more than %d values", out->n);
		out->hq[out->n] = (int)hq;
		out->hkv[out->n++] = (int)hkv;
	}
	if (out->n == 0)
		return die_usage("--heads: empty list");
	return 0;
}

static int parse_dtypes(const char *arg, struct opts *o)
{
	char buf[256], *save = NULL;
	if (strlen(arg) >= sizeof buf)
		return die_usage("--kv-dtype: list too long");
	strcpy(buf, arg);
	o->ndtypes = 0;
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		enum kvb_dtype dt;
		if (kvb_dtype_parse(tok, &dt) != 0)
			return die_usage("--kv-dtype: '%s' is not one of fp32, fp16, bf16, fp8, int8",
					 tok);
		if (o->ndtypes == KVB_DTYPE_COUNT)
			return die_usage("--kv-dtype: more than %d values", KVB_DTYPE_COUNT);
		o->dtypes[o->ndtypes++] = dt;
	}
	if (o->ndtypes == 0)
		return die_usage("--kv-dtype: empty list");
	return 0;
}

static int parse_count(const char *opt, const char *arg, int min, int max, int *out)
{
	uint64_t v;
	if (kvp_parse_u64(arg, &v) != 0 || v < (uint64_t)min || v > (uint64_t)max)
		return die_usage("%s: '%s' is not a whole number in %d..%d", opt, arg, min, max);
	*out = (int)v;
	return 0;
}

static int parse_size(const char *opt, const char *arg, uint64_t *out)
{
	if (kvp_parse_bytes(arg, out) != 0)
		return die_usage("%s: '%s' is not a size (e.g. 80GiB, 512MiB, 1e9 not allowed)",
				 opt, arg);
	return 0;
}

enum {
	OPT_BACKEND = 256, OPT_BATCH, OPT_CONTEXT, OPT_BLOCK, OPT_DTYPE, OPT_HEADS, OPT_DIM,
	OPT_LENGTHS, OPT_THREADS, OPT_REPEATS, OPT_WARMUP, OPT_SEED, OPT_VALIDATE, OPT_CAPACITY,
	OPT_WEIGHTS, OPT_GPUMEM, OPT_UTIL, OPT_LAYERS, OPT_OUT, OPT_FORMAT, OPT_QUICK,
	OPT_PROGRESS, OPT_QUIET, OPT_STREAM, OPT_GPU, OPT_HELP, OPT_VERSION
};

static const struct option long_opts[] = {
	{"backend", required_argument, NULL, OPT_BACKEND},
	{"batch", required_argument, NULL, OPT_BATCH},
	{"context", required_argument, NULL, OPT_CONTEXT},
	{"block-size", required_argument, NULL, OPT_BLOCK},
	{"kv-dtype", required_argument, NULL, OPT_DTYPE},
	{"heads", required_argument, NULL, OPT_HEADS},
	{"head-dim", required_argument, NULL, OPT_DIM},
	{"lengths", required_argument, NULL, OPT_LENGTHS},
	{"threads", required_argument, NULL, OPT_THREADS},
	{"repeats", required_argument, NULL, OPT_REPEATS},
	{"warmup", required_argument, NULL, OPT_WARMUP},
	{"seed", required_argument, NULL, OPT_SEED},
	{"validate-only", no_argument, NULL, OPT_VALIDATE},
	{"capacity", no_argument, NULL, OPT_CAPACITY},
	{"weights-bytes", required_argument, NULL, OPT_WEIGHTS},
	{"gpu-memory", required_argument, NULL, OPT_GPUMEM},
	{"utilization", required_argument, NULL, OPT_UTIL},
	{"layers", required_argument, NULL, OPT_LAYERS},
	{"out", required_argument, NULL, OPT_OUT},
	{"format", required_argument, NULL, OPT_FORMAT},
	{"quick", no_argument, NULL, OPT_QUICK},
	{"progress", no_argument, NULL, OPT_PROGRESS},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"stream-bytes", required_argument, NULL, OPT_STREAM},
	{"gpu", required_argument, NULL, OPT_GPU},
	{"help", no_argument, NULL, OPT_HELP},
	{"version", no_argument, NULL, OPT_VERSION},
	{NULL, 0, NULL, 0},
};

static void set_list(struct int_list *l, const int64_t *v, int n)
{
	l->n = n;
	memcpy(l->v, v, (size_t)n * sizeof *v);
}

/* Returns -1 to go on, or an exit code. */
static int parse_opts(int argc, char **argv, struct opts *o)
{
	int seen_batch = 0, seen_context = 0, seen_block = 0, seen_dim = 0, seen_heads = 0,
	    seen_dtype = 0, seen_repeats = 0, seen_warmup = 0, seen_lengths = 0, c, rc;
	memset(o, 0, sizeof *o);
	o->threads = (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (o->threads < 1)
		o->threads = 1;
	o->seed = 1;
	o->progress = -1;
	o->utilization = 0.9;
	o->layers = 1;
	size_t len = 0;
	for (int i = 0; i < argc && len + 2 < sizeof o->command; i++)
		len += (size_t)snprintf(o->command + len, sizeof o->command - len, "%s%s",
					i ? " " : "", argv[i]);

	opterr = 0;
	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		rc = 0;
		switch (c) {
		case OPT_BACKEND:
			if (strcmp(optarg, "cpu") == 0)
				o->backend = BACKEND_CPU;
			else if (strcmp(optarg, "cuda") == 0)
				o->backend = BACKEND_CUDA;
			else
				return die_usage("--backend: '%s' is not cpu or cuda", optarg);
			break;
		case OPT_BATCH: rc = parse_list("--batch", optarg, 0, 1 << 20, &o->batch); seen_batch = 1; break;
		case OPT_CONTEXT: rc = parse_list("--context", optarg, 1, 1 << 30, &o->context); seen_context = 1; break;
		case OPT_BLOCK: rc = parse_list("--block-size", optarg, 0, 1 << 16, &o->block); seen_block = 1; break;
		case OPT_DIM: rc = parse_list("--head-dim", optarg, 0, 4096, &o->head_dim); seen_dim = 1; break;
		case OPT_HEADS: rc = parse_heads(optarg, &o->heads); seen_heads = 1; break;
		case OPT_DTYPE: rc = parse_dtypes(optarg, o); seen_dtype = 1; break;
		case OPT_LENGTHS:
			seen_lengths = 1;
			if (kvb_lengths_parse(optarg, &o->lengths) == 0)
				break;
#ifndef KVBENCH_STANDALONE
			{
				struct kvp_error err;
				char msg[1024];
				if (kvp_dist_parse(optarg, "--lengths", &o->dist, &err) != KVP_STATUS_OK) {
					kvp_error_format(&err, msg, sizeof msg);
					return die_usage("%s", msg);
				}
				if (kvp_dist_quantile(&o->dist, 0.999) > (1u << 30))
					return die_usage("--lengths: '%s' reaches past 2^30 tokens", optarg);
				o->have_dist = 1;
			}
#else
			return die_usage("--lengths: '%s' is not fixed or uniform (distributions "
					 "need the planner's library)", optarg);
#endif
			break;
		case OPT_THREADS: rc = parse_count("--threads", optarg, 1, 4096, &o->threads); break;
		case OPT_REPEATS: rc = parse_count("--repeats", optarg, 1, 100000, &o->repeats); seen_repeats = 1; break;
		case OPT_WARMUP: rc = parse_count("--warmup", optarg, 0, 100000, &o->warmup); seen_warmup = 1; break;
		case OPT_SEED:
			if (kvp_parse_u64(optarg, &o->seed) != 0)
				return die_usage("--seed: '%s' is not a whole number", optarg);
			break;
		case OPT_VALIDATE: o->validate_only = 1; break;
		case OPT_CAPACITY: o->capacity = 1; break;
		case OPT_QUICK: o->quick = 1; break;
		case OPT_PROGRESS: o->progress = 1; break;
		case OPT_QUIET: o->progress = 0; break;
		case OPT_WEIGHTS: rc = parse_size("--weights-bytes", optarg, &o->weights_bytes); break;
		case OPT_GPUMEM:
			rc = parse_size("--gpu-memory", optarg, &o->gpu_memory);
			if (rc == 0 && o->gpu_memory == 0)
				return die_usage("--gpu-memory: must be more than 0");
			o->gpu_memory_set = 1;
			break;
		case OPT_STREAM:
			rc = parse_size("--stream-bytes", optarg, &o->stream_bytes);
			if (rc == 0 && o->stream_bytes < 4096)
				return die_usage("--stream-bytes: at least 4KiB");
			o->stream_bytes_set = 1;
			break;
		case OPT_UTIL:
			if (kvp_parse_fraction(optarg, &o->utilization) != 0)
				return die_usage("--utilization: '%s' is not a fraction in (0, 1] "
						 "(0.9 or 90%%)", optarg);
			break;
		case OPT_LAYERS: rc = parse_count("--layers", optarg, 1, 100000, &o->layers); break;
		case OPT_OUT: o->out = optarg; break;
		case OPT_GPU:
#ifdef KVBENCH_STANDALONE
			return die_usage("--gpu: this kvbench was built without the planner's "
					 "library (-DKVBENCH_STANDALONE)");
#else
			o->gpu = optarg;
			break;
#endif
		case OPT_FORMAT:
			if (!kvp_format_parse(optarg, &o->format))
				return die_usage("--format: '%s' is not table, json or csv", optarg);
			break;
		case OPT_HELP: usage(stdout); return EXIT_OK;
		case OPT_VERSION: printf("kvbench %s\n", PACKAGE_VERSION); return EXIT_OK;
		default:
			if (optopt)
				return die_usage("unknown option or missing value: '%s'", argv[optind - 1]);
			return die_usage("unknown option '%s'", argv[optind - 1]);
		}
		if (rc)
			return rc;
	}
	if (optind < argc)
		return die_usage("unexpected argument '%s'", argv[optind]);

	/* Defaults: one Llama-3-8B-like layer, or the quick sweep. */
	static const int64_t q_batch[] = {3}, q_context[] = {200}, q_block[] = {16}, q_dim[] = {64};
	static const int64_t d_batch[] = {16}, d_context[] = {4096}, d_block[] = {16}, d_dim[] = {128};
	if (!seen_batch)
		set_list(&o->batch, o->quick ? q_batch : d_batch, 1);
	if (!seen_context)
		set_list(&o->context, o->quick ? q_context : d_context, 1);
	if (!seen_block)
		set_list(&o->block, o->quick ? q_block : d_block, 1);
	if (!seen_dim)
		set_list(&o->head_dim, o->quick ? q_dim : d_dim, 1);
	if (!seen_heads) {
		o->heads.n = o->quick ? 2 : 1;
		o->heads.hq[0] = o->quick ? 8 : 32;
		o->heads.hkv[0] = 8;
		o->heads.hq[1] = 8;
		o->heads.hkv[1] = 2;
	}
	if (!seen_dtype) {
		o->ndtypes = o->quick ? KVB_DTYPE_COUNT : 1;
		for (int i = 0; i < o->ndtypes; i++)
			o->dtypes[i] = o->quick ? (enum kvb_dtype)i : KVB_DTYPE_BF16;
	}
	if (!seen_lengths && o->quick)
		o->lengths = KVB_LENGTHS_UNIFORM;
#ifndef KVBENCH_STANDALONE
	if (o->have_dist) {
		/* the distribution gives the lengths; the context shown is its mean */
		if (seen_context)
			return die_usage("--context: not with --lengths %s, which gives the lengths",
					 "DIST");
		o->context.n = 1;
		o->context.v[0] = llround(kvp_dist_mean(&o->dist));
		if (o->context.v[0] < 1)
			o->context.v[0] = 1;
	}
#endif
	if (!seen_repeats)
		o->repeats = o->quick ? 3 : 10;
	if (!seen_warmup)
		o->warmup = o->quick ? 1 : 2;
	if (o->backend == BACKEND_CUDA)
		for (int i = 0; i < o->head_dim.n; i++)
			if (o->head_dim.v[i] != 64 && o->head_dim.v[i] != 128 && o->head_dim.v[i] != 256)
				return die_usage("--head-dim: the CUDA backend is built for 64, 128 "
						 "and 256, not %lld", (long long)o->head_dim.v[i]);
	if (o->out) {
		const char *dot = strrchr(o->out, '.');
		if (!dot || (strcmp(dot, ".csv") && strcmp(dot, ".yaml") && strcmp(dot, ".yml")))
			return die_usage("--out: '%s' must end in .csv, .yaml or .yml", o->out);
	}
	return -1;
}

/* ----------------------------------------------------------------- rows
 * Each point is a kvp_record (output.h): the JSON, CSV and table writers
 * are the library's; YAML, which kvplan's other commands only read, is
 * written here from the same records. */

struct rows {
	struct kvp_record **r;
	size_t n, cap;
};

static void rec_str(struct kvp_record *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void rec_str(struct kvp_record *r, const char *key, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	kvp_record_str(r, key, buf);
}

/* x to `decimals` places: rates and ratios carry no more than they mean. */
static double rounded(double x, int decimals)
{
	double p = pow(10, decimals);
	return isfinite(x) ? round(x * p) / p : x;
}

static double num(const struct kvp_record *r, const char *key)
{
	const struct kvp_value *v = kvp_record_get(r, key);
	return !v ? 0 : v->type == KVP_VALUE_U64 ? (double)v->u : v->type == KVP_VALUE_F64 ? v->f : 0;
}

static const char *str(const struct kvp_record *r, const char *key)
{
	const struct kvp_value *v = kvp_record_get(r, key);
	return v && v->type == KVP_VALUE_STR ? v->s : "";
}

static int rows_add(struct rows *rs, struct kvp_record *r)
{
	if (rs->n == rs->cap) {
		size_t cap = rs->cap ? 2 * rs->cap : 16;
		struct kvp_record **n = realloc(rs->r, cap * sizeof *n);
		if (!n)
			return -1;
		rs->r = n;
		rs->cap = cap;
	}
	rs->r[rs->n++] = r;
	return 0;
}


static void yaml_value(FILE *f, const struct kvp_value *v)
{
	char buf[64];
	switch (v->type) {
	case KVP_VALUE_STR:
		fputc('"', f);
		for (const char *c = v->s; *c; c++) {
			if (*c == '"' || *c == '\\')
				fputc('\\', f);
			fputc(*c, f);
		}
		fputc('"', f);
		break;
	case KVP_VALUE_F64:
		if (isnan(v->f))
			fputs(".nan", f);
		else if (isinf(v->f))
			fputs(v->f > 0 ? ".inf" : "-.inf", f);
		else
			fprintf(f, "%.10g", v->f);
		break;
	default:
		kvp_value_format(v, buf, sizeof buf);
		fputs(buf, f);
		break;
	}
}

/* The items of `points:`, one map each. */
static void write_points(FILE *f, const struct rows *rs)
{
	for (size_t k = 0; k < rs->n; k++)
		for (size_t i = 0; i < rs->r[k]->n; i++) {
			fprintf(f, "%s%s: ", i ? "    " : "  - ", rs->r[k]->fields[i].name);
			yaml_value(f, &rs->r[k]->fields[i].v);
			fputc('\n', f);
		}
}

static void write_yaml_head(FILE *f, const struct kvp_record *env)
{
	fputs("# kvbench results: measured decode bandwidth or capacity, read by\n"
	      "# `kvplan validate` and `kvplan perf --calibration`.\n"
	      "kvbench:\n", f);
	for (size_t i = 0; i < env->n; i++) {
		fprintf(f, "  %s: ", env->fields[i].name);
		yaml_value(f, &env->fields[i].v);
		fputc('\n', f);
	}
}

static void write_yaml(FILE *f, const struct kvp_record *env, const struct rows *rs)
{
	write_yaml_head(f, env);
	fputs(rs->n ? "points:\n" : "points: []\n", f);
	write_points(f, rs);
}

/* A column of the table: a field copied, or one derived for reading. */
enum col_kind { COPY, TIME_US, PERCENT, SIGNED_PERCENT };

struct col {
	const char *key, *title;
	enum col_kind kind;
};

static void write_table(FILE *f, const struct rows *rs, const struct col *cols, size_t ncols)
{
	struct kvp_record **view = calloc(rs->n ? rs->n : 1, sizeof *view);
	char buf[64];
	if (!view)
		return;
	for (size_t k = 0; k < rs->n; k++) {
		const struct kvp_record *r = rs->r[k];
		if (!(view[k] = kvp_record_new()))
			goto out;
		for (size_t c = 0; c < ncols; c++) {
			const struct kvp_value *v = kvp_record_get(r, cols[c].key);
			double x = num(r, cols[c].key);
			switch (cols[c].kind) {
			case COPY:
				if (!v)
					kvp_record_str(view[k], cols[c].title, "");
				else if (v->type == KVP_VALUE_STR)
					kvp_record_str(view[k], cols[c].title, v->s);
				else if (v->type == KVP_VALUE_U64)
					kvp_record_u64(view[k], cols[c].title, v->u);
				else
					kvp_record_f64(view[k], cols[c].title, v->f);
				continue;
			case TIME_US: /* whole microseconds once they are many */
				if (x * 1e6 >= 1e5)
					kvp_record_u64(view[k], cols[c].title, (uint64_t)llround(x * 1e6));
				else
					kvp_record_f64(view[k], cols[c].title, rounded(x * 1e6, 1));
				continue;
			case PERCENT:
				snprintf(buf, sizeof buf, "%.1f%%", 100 * x);
				break;
			case SIGNED_PERCENT:
				if (v)
					snprintf(buf, sizeof buf, "%+.1f%%", 100 * x);
				else
					buf[0] = 0;
				break;
			}
			kvp_record_str(view[k], cols[c].title, buf);
		}
	}
	kvp_write_table(f, view, rs->n);
out:
	for (size_t k = 0; k < rs->n; k++)
		kvp_record_free(view[k]);
	free(view);
}

/* ------------------------------------------------------------ environment */

static void cpu_model(char *buf, size_t size)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512];
	snprintf(buf, size, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof line, f))
		if (strncmp(line, "model name", 10) == 0) {
			char *p = strchr(line, ':');
			if (p) {
				p += 1 + strspn(p + 1, " \t");
				p[strcspn(p, "\n")] = 0;
				snprintf(buf, size, "%s", p);
			}
			break;
		}
	fclose(f);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* -------------------------------------------------------------- backends */

struct ctx {
	struct opts *o;
	struct kvb_cpu *cpu;
	struct kvb_ceiling ceiling;
	int have_ceiling;
	void *flush;
	uint64_t flush_bytes;
	void *ceil_buf; /* CPU: the read ceiling measured again beside each point */
	FILE *stream;           /* --out, written a point at a time (out_open) */
	const struct kvp_record *csv_head; /* the CSV header's row */
	int stream_points;      /* points appended so far */
	int progress;           /* a line per point on stderr */
	double t_start_s;
#ifdef HAVE_CUDA
	struct kvb_cuda_info gpu;
#endif
#ifndef KVBENCH_STANDALONE
	struct kvp_gpu *profile; /* --gpu */
#endif
};

#ifndef KVBENCH_STANDALONE
/* The planner's time for this point's step, on the basis kvp_bench_basis
 * picks (validate.h, as `kvplan validate` does): the --gpu profile, else a
 * CUDA run's bus rate, else the read ceiling measured beside the point.
 * Adds predicted_* columns; a failure is reported, not fatal. */
static void predict_point(struct ctx *cx, const struct kvb_shape *s, const struct kvb_paged_kv *kv,
			  double median, double read_ceil_gbps, struct kvp_record *row)
{
	struct kvb_decode_prediction p;
	struct kvp_bench_basis basis;
	char msg[512];
	double datasheet_bps = 0;
#ifdef HAVE_CUDA
	datasheet_bps = cx->gpu.datasheet_gbps * 1e9;
#endif
	kvp_bench_basis(cx->profile, cx->o->backend == BACKEND_CUDA, datasheet_bps,
			read_ceil_gbps * 1e9, &basis);
	if (!(basis.bandwidth_bps > 0))
		return;
	if (kvb_predict_decode(s, kv->seq_lens, kv->batch, basis.bandwidth_bps, basis.efficiency, &p,
			       msg, sizeof msg)) {
		fprintf(stderr, "kvbench: no prediction: %s\n", msg);
		return;
	}
	rec_str(row, "predicted_on", "%s", basis.name);
	kvp_record_u64(row, "predicted_kv_bytes", (uint64_t)(p.kv_bytes));
	kvp_record_f64(row, "predicted_s", p.time_s);
	kvp_record_f64(row, "prediction_error", rounded(median > 0 ? (p.time_s - median) / median : 0.0, 4));
}
#endif

/* B lengths for a point: kvbench's fixed or uniform around the context, or
 * draws from the --lengths distribution. */
static void make_lengths(const struct opts *o, int32_t batch, int32_t context, uint64_t seed,
			 int32_t *out)
{
#ifndef KVBENCH_STANDALONE
	if (o->have_dist) {
		struct kvp_rng r;
		kvp_rng_seed(&r, seed);
		for (int32_t b = 0; b < batch; b++) {
			uint64_t n = kvp_dist_sample(&o->dist, &r);
			/* a long tail's rare draw past 2^30 is cut there */
			out[b] = (int32_t)(n < 1 ? 1 : n > (1u << 30) ? (1u << 30) : n);
		}
		return;
	}
#endif
	kvb_lengths_make(o->lengths, batch, context, seed, out);
}

static void lengths_name(const struct opts *o, char *buf, size_t size)
{
#ifndef KVBENCH_STANDALONE
	if (o->have_dist) {
		kvp_dist_format(&o->dist, buf, size);
		return;
	}
#endif
	snprintf(buf, size, "%s", kvb_lengths_name(o->lengths));
}

/* Sequences to compare with the reference: all when the reference's work
 * (about 3 * len * H_q * d multiply-adds per sequence) fits a budget that
 * grows with the threads; otherwise the first, the last, the longest and
 * random others until the budget is spent. */
static int pick_seqs(const struct kvb_paged_kv *kv, int threads, uint64_t seed, int32_t *out)
{
	const double per_token = 3.0 * kv->shape.h_q * kv->shape.d;
	const double budget = 3e8 * threads;
	double total = 0;
	for (int32_t b = 0; b < kv->batch; b++)
		total += per_token * kv->seq_lens[b];
	if (total <= budget) {
		for (int32_t b = 0; b < kv->batch; b++)
			out[b] = b;
		return kv->batch;
	}
	int32_t longest = 0;
	for (int32_t b = 1; b < kv->batch; b++)
		if (kv->seq_lens[b] > kv->seq_lens[longest])
			longest = b;
	int n = 0;
	double spent = 0;
	uint64_t st = seed ^ 0x636865636bull; /* "check" */
	int32_t cand[3] = {0, kv->batch - 1, longest};
	for (int i = 0; i < 3 + 8; i++) {
		int32_t b = i < 3 ? cand[i] : (int32_t)(kvb_rng_next(&st) % (uint64_t)kv->batch);
		int dup = 0;
		for (int k = 0; k < n; k++)
			dup |= out[k] == b;
		double cost = per_token * kv->seq_lens[b];
		if (dup || (n > 0 && spent + cost > budget))
			continue;
		out[n++] = b;
		spent += cost;
	}
	return n;
}

/* The progress line of a point as it starts (--progress). */
static void say_point(int i, int n, const struct kvb_shape *s, int64_t batch, int64_t context)
{
	fprintf(stderr, "kvbench: [%d/%d] B %lld, context %lld, heads %d:%d, d %d, P %d, %s\n", i,
		n, (long long)batch, (long long)context, s->h_q, s->h_kv, s->d, s->block_size,
		kvb_dtype_name(s->dtype));
}

/* The bytes a point needs, estimated before anything is allocated, against
 * what there is: host memory (MemAvailable: the pool, its tables, Q and O;
 * on the CUDA backend the pool is built on the host first) and, on CUDA,
 * device memory (cudaMemGetInfo: the pool and tables again).  Returns 0
 * when it fits; else says why with the figures and returns -1.  *blocks,
 * *pool and *need get the estimate. */
static int point_fits(struct ctx *cx, const struct kvb_shape *s, int32_t batch,
		      const int32_t *lens, int64_t *blocks, uint64_t *pool, uint64_t *need)
{
	int64_t nb = 0, max_nb = 1;
	for (int32_t b = 0; b < batch; b++) {
		int64_t n = ((int64_t)lens[b] + s->block_size - 1) / s->block_size;
		nb += n;
		max_nb = n > max_nb ? n : max_nb;
	}
	*blocks = nb;
	uint64_t tables = 0, qo = 0;
	int ok = kvp_mul(kvb_block_bytes(s), (uint64_t)(nb > 0 ? nb : 1), pool) &&
		 kvp_mul((uint64_t)batch * 4, (uint64_t)max_nb + 1, &tables) &&
		 kvp_mul((uint64_t)batch * 8, (uint64_t)s->h_q * (uint64_t)s->d, &qo);
	if (!ok || *pool > UINT64_MAX / 2) {
		fprintf(stderr, "kvbench: B %d, %s: the cache's size overflows\n", batch,
			kvb_dtype_name(s->dtype));
		return -1;
	}
	*need = *pool + tables + qo;
	uint64_t avail = kvb_mem_available_bytes();
	if (avail && *need > avail) {
		fprintf(stderr, "kvbench: B %d, heads %d:%d, d %d, %s: needs about %llu bytes of "
			"host memory (a pool of %lld blocks, %llu bytes), %llu available "
			"(MemAvailable): not run\n", batch, s->h_q, s->h_kv, s->d,
			kvb_dtype_name(s->dtype), (unsigned long long)*need, (long long)nb,
			(unsigned long long)*pool, (unsigned long long)avail);
		return -1;
	}
#ifdef HAVE_CUDA
	uint64_t dev_free = 0;
	if (cx->o->backend == BACKEND_CUDA && kvb_cuda_free_bytes(&dev_free) == 0 &&
	    *need > dev_free) {
		fprintf(stderr, "kvbench: B %d, heads %d:%d, d %d, %s: needs about %llu bytes of "
			"device memory (a pool of %lld blocks), %llu free (cudaMemGetInfo): not "
			"run\n", batch, s->h_q, s->h_kv, s->d, kvb_dtype_name(s->dtype),
			(unsigned long long)*need, (long long)nb, (unsigned long long)dev_free);
		return -1;
	}
#else
	(void)cx;
#endif
	return 0;
}

/* One bandwidth point: validate, then time.  Fills the row; returns 0,
 * 1 when validation failed, -1 on a run error (message printed). */
static int run_point(struct ctx *cx, const struct kvb_shape *shape, int32_t batch, int32_t context,
		     uint64_t seed, struct kvp_record *row)
{
	struct opts *o = cx->o;
	struct kvb_paged_kv kv;
	int32_t *lens = malloc((size_t)batch * sizeof *lens);
	int32_t *seqs = malloc((size_t)batch * sizeof *seqs);
	size_t nq = (size_t)batch * shape->h_q * shape->d;
	float *q = malloc(nq * sizeof *q), *out = malloc(nq * sizeof *out);
	double *times = calloc((size_t)o->repeats, sizeof *times);
	int rc = -1, splits = 1, chunk = 0;
	const char *kernel_name = "cpu";
	struct kvb_check chk;
	uint64_t moved = 0, table = 0, tokens = 0;
#ifdef HAVE_CUDA
	struct kvb_cuda_decode *dc = NULL;
#endif
	memset(&kv, 0, sizeof kv);
	if (!lens || !seqs || !q || !out || !times) {
		fprintf(stderr, "kvbench: out of memory\n");
		goto out;
	}
	make_lengths(o, batch, context, seed, lens);
	uint64_t need_bytes = 0, pool_bytes = 0;
	int64_t need_blocks = 0;
	if (point_fits(cx, shape, batch, lens, &need_blocks, &pool_bytes, &need_bytes) != 0)
		goto out;
	if (kvb_paged_kv_alloc(&kv, shape, batch, lens, seed) != 0 ||
	    kvb_paged_kv_fill(&kv, seed, cx->cpu) != 0) {
		fprintf(stderr, "kvbench: cannot allocate the cache of B %d, context %d, %s: %lld "
			"blocks, %llu bytes of pool (%s)\n", batch, context,
			kvb_dtype_name(shape->dtype), (long long)need_blocks,
			(unsigned long long)pool_bytes,
			errno == EINVAL ? "more than 2^31 blocks or a bad shape" : strerror(errno));
		goto out;
	}
	kvb_queries_fill(q, nq, seed);
	for (int32_t b = 0; b < batch; b++)
		tokens += (uint64_t)lens[b];
	if (kvb_paged_kv_bytes(&kv, &moved, &table) != 0) {
		fprintf(stderr, "kvbench: byte count overflows\n");
		goto out;
	}

	/* Validate on this very cache, output poisoned first. */
	kvb_poison(out, nq);
	if (o->backend == BACKEND_CPU) {
		if (kvb_cpu_decode(cx->cpu, &kv, q, out) != 0) {
			fprintf(stderr, "kvbench: out of memory in the CPU decode\n");
			goto out;
		}
	}
#ifdef HAVE_CUDA
	else {
		int st = kvb_cuda_decode_create(&kv, q, &dc);
		if (st == KVB_CUDA_OK)
			st = kvb_cuda_decode_run(dc, out);
		if (st != KVB_CUDA_OK) {
			fprintf(stderr, "kvbench: %s\n", kvb_cuda_error());
			goto out;
		}
		kvb_cuda_decode_split(dc, &splits, &chunk);
		kernel_name = kvb_cuda_decode_kernel(dc);
	}
#endif
	int nseqs = pick_seqs(&kv, kvb_cpu_threads(cx->cpu), seed, seqs);
	if (kvb_check_output(&kv, q, out, seqs, nseqs, cx->cpu, &chk) != 0) {
		fprintf(stderr, "kvbench: out of memory in the check\n");
		goto out;
	}
	int passed = kvb_check_passed(&kv, &chk);

	double median = 0, best = 0, gbps = 0, point_ceiling = 0;
	if (passed && !o->validate_only) {
		if (o->backend == BACKEND_CPU) {
			/* The ceiling again, just before and just after: on a shared
			 * machine the load can change within a sweep. */
			const uint64_t cb = cx->ceiling.array_bytes;
			point_ceiling = kvb_stream_cpu_read(cx->cpu, cx->ceil_buf, cb, 2);
			for (int r = 0; r < o->warmup; r++)
				kvb_cpu_decode(cx->cpu, &kv, q, out);
			for (int r = 0; r < o->repeats; r++) {
				kvb_cpu_flush(cx->cpu, cx->flush, cx->flush_bytes);
				double t0 = now_s();
				kvb_cpu_decode(cx->cpu, &kv, q, out);
				times[r] = now_s() - t0;
			}
			point_ceiling = fmax(point_ceiling,
					     kvb_stream_cpu_read(cx->cpu, cx->ceil_buf, cb, 2));
			cx->ceiling.read_gbps = fmax(cx->ceiling.read_gbps, point_ceiling);
		}
#ifdef HAVE_CUDA
		else if (kvb_cuda_decode_time(dc, o->warmup, o->repeats, times) != KVB_CUDA_OK) {
			fprintf(stderr, "kvbench: %s\n", kvb_cuda_error());
			goto out;
		}
#endif
		qsort(times, (size_t)o->repeats, sizeof *times, cmp_double);
		best = times[0];
		median = o->repeats % 2 ? times[o->repeats / 2]
					: 0.5 * (times[o->repeats / 2 - 1] + times[o->repeats / 2]);
		gbps = (double)moved / median / 1e9;
	}

	rec_str(row, "backend", "%s", o->backend == BACKEND_CPU ? "cpu" : "cuda");
	kvp_record_u64(row, "batch", (uint64_t)(batch));
	kvp_record_u64(row, "context", (uint64_t)(context));
	char lname[128];
	lengths_name(o, lname, sizeof lname);
	rec_str(row, "lengths", "%s", lname);
	kvp_record_u64(row, "tokens", (uint64_t)(tokens));
	kvp_record_u64(row, "block_size", (uint64_t)(shape->block_size));
	rec_str(row, "kv_dtype", "%s", kvb_dtype_name(shape->dtype));
	kvp_record_u64(row, "num_heads", (uint64_t)(shape->h_q));
	kvp_record_u64(row, "num_kv_heads", (uint64_t)(shape->h_kv));
	kvp_record_u64(row, "group", (uint64_t)(shape->h_q / shape->h_kv));
	kvp_record_u64(row, "head_dim", (uint64_t)(shape->d));
	kvp_record_u64(row, "threads", (uint64_t)(o->backend == BACKEND_CPU ? kvb_cpu_threads(cx->cpu) : 0));
	if (o->backend == BACKEND_CPU)
		rec_str(row, "isa", "%s", kvb_cpu_isa(cx->cpu));
#ifdef HAVE_CUDA
	else
		rec_str(row, "device", "%s", cx->gpu.name);
#endif
	rec_str(row, "kernel", "%s", kernel_name);
	kvp_record_u64(row, "splits", (uint64_t)(splits));
	kvp_record_u64(row, "chunk_tokens", (uint64_t)(chunk));
	kvp_record_u64(row, "pool_bytes", (uint64_t)(kvb_pool_bytes(shape, kv.num_blocks)));
	kvp_record_u64(row, "moved_bytes", (uint64_t)(moved));
	kvp_record_u64(row, "table_bytes", (uint64_t)(table));
	rec_str(row, "validated", "%s", passed ? "pass" : "FAIL");
	kvp_record_f64(row, "max_err", chk.max_err);
	kvp_record_f64(row, "tolerance", kvb_dtype_tolerance(shape->dtype));
	kvp_record_u64(row, "nonfinite", (uint64_t)(chk.nonfinite));
	kvp_record_u64(row, "seqs_checked", (uint64_t)(chk.seqs_checked));
	if (!o->validate_only) {
		/* the CPU's read ceiling of this point, measured beside it */
		double read_ceil = point_ceiling > 0 ? point_ceiling : cx->ceiling.read_gbps;
		double ceil_gbps = o->backend == BACKEND_CPU ? read_ceil : cx->ceiling.copy_gbps;
		kvp_record_u64(row, "repeats", (uint64_t)(o->repeats));
		kvp_record_f64(row, "time_median_s", median);
		kvp_record_f64(row, "time_best_s", best);
		kvp_record_f64(row, "gbps", rounded(gbps, 2));
		/* the step's arithmetic: QK and PV, d multiply-adds each per
		 * token and query head (4 d FLOP), over the median, per core on
		 * the CPU: beside GB/s it says when a point is compute-bound */
		const double flops = 4.0 * (double)tokens * shape->h_q * shape->d;
		kvp_record_f64(row, "flop_per_byte", rounded(moved ? flops / (double)moved : 0.0, 3));
		kvp_record_f64(row, "gflops", rounded(median > 0 ? flops / median / 1e9 : 0.0, 2));
		if (o->backend == BACKEND_CPU)
			kvp_record_f64(row, "gflops_per_core",
				       rounded(median > 0 ? flops / median / 1e9 / kvb_cpu_threads(cx->cpu)
							  : 0.0, 2));
		kvp_record_f64(row, "ceiling_read_gbps", rounded(read_ceil, 2));
		kvp_record_f64(row, "ceiling_copy_gbps", rounded(cx->ceiling.copy_gbps, 2));
		kvp_record_f64(row, "ceiling_triad_gbps", rounded(cx->ceiling.triad_gbps, 2));
		/* which ceiling `ratio` divides by, and its value: the table's
		 * "ceil" column is this one, never another */
		rec_str(row, "ratio_ceiling", "%s", o->backend == BACKEND_CPU ? "read" : "copy");
		kvp_record_f64(row, "ceiling_gbps", rounded(ceil_gbps, 2));
		kvp_record_f64(row, "ratio", rounded(ceil_gbps > 0 ? gbps / ceil_gbps : 0.0, 3));
		/* the best run against the ceiling, which is a best too (STREAM) */
		kvp_record_f64(row, "gbps_best", rounded(best > 0 ? (double)moved / best / 1e9 : 0.0, 2));
		kvp_record_f64(row, "ratio_best",
			       rounded(ceil_gbps > 0 && best > 0 ? (double)moved / best / 1e9 / ceil_gbps
								 : 0.0, 3));
#ifndef KVBENCH_STANDALONE
		if (passed)
			predict_point(cx, shape, &kv, median, read_ceil, row);
#endif
	}
	if (!passed)
		fprintf(stderr,
			"kvbench: validation FAILED: %s B=%d ctx=%d P=%d %d:%d d=%d: max error %.3g "
			"(bound %.3g) at sequence %d head %d element %d, %lld non-finite outputs\n",
			kvb_dtype_name(shape->dtype), batch, context, shape->block_size, shape->h_q,
			shape->h_kv, shape->d, chk.max_err, kvb_dtype_tolerance(shape->dtype),
			chk.worst_seq, chk.worst_head, chk.worst_i, (long long)chk.nonfinite);
	rc = passed ? 0 : 1;
out:
#ifdef HAVE_CUDA
	kvb_cuda_decode_free(dc);
#endif
	kvb_paged_kv_free(&kv);
	free(lens);
	free(seqs);
	free(q);
	free(out);
	free(times);
	return rc;
}

static void env_row(struct ctx *cx, struct kvp_record *env)
{
	struct opts *o = cx->o;
	char buf[256], date[64];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tm);
	rec_str(env, "version", "%s", PACKAGE_VERSION);
	rec_str(env, "date", "%s", date);
	rec_str(env, "command", "%s", o->command);
	rec_str(env, "mode", "%s", o->capacity ? "capacity" : o->validate_only ? "validate" : "bandwidth");
	rec_str(env, "backend", "%s", o->backend == BACKEND_CPU ? "cpu" : "cuda");
	cpu_model(buf, sizeof buf);
	rec_str(env, "cpu", "%s", buf);
	kvp_record_u64(env, "threads", (uint64_t)(kvb_cpu_threads(cx->cpu)));
	rec_str(env, "isa", "%s", kvb_cpu_isa(cx->cpu));
	kvp_record_u64(env, "llc_bytes", (uint64_t)(kvb_llc_bytes()));
#ifdef HAVE_CUDA
	if (o->backend == BACKEND_CUDA) {
		rec_str(env, "gpu", "%s", cx->gpu.name);
		rec_str(env, "compute_capability", "%d.%d", cx->gpu.cc_major, cx->gpu.cc_minor);
		kvp_record_u64(env, "sm_count", (uint64_t)(cx->gpu.sm_count));
		kvp_record_u64(env, "l2_bytes", (uint64_t)(cx->gpu.l2_bytes));
		kvp_record_u64(env, "gpu_memory_bytes", (uint64_t)(cx->gpu.total_bytes));
		kvp_record_u64(env, "driver_version", (uint64_t)(cx->gpu.driver_version));
		kvp_record_u64(env, "runtime_version", (uint64_t)(cx->gpu.runtime_version));
		kvp_record_u64(env, "mem_clock_khz", (uint64_t)(cx->gpu.mem_clock_khz));
		kvp_record_u64(env, "bus_width_bits", (uint64_t)(cx->gpu.bus_width_bits));
		kvp_record_f64(env, "datasheet_gbps", rounded(cx->gpu.datasheet_gbps, 1));
	}
#endif
	if (cx->have_ceiling) {
		kvp_record_u64(env, "ceiling_array_bytes", (uint64_t)(cx->ceiling.array_bytes));
		kvp_record_f64(env, "ceiling_read_gbps", rounded(cx->ceiling.read_gbps, 2));
		kvp_record_f64(env, "ceiling_copy_gbps", rounded(cx->ceiling.copy_gbps, 2));
		kvp_record_f64(env, "ceiling_triad_gbps", rounded(cx->ceiling.triad_gbps, 2));
	}
}

/* The --out file as the run goes: the header (YAML: the environment as
 * it stands when the first point starts) and then each point appended and
 * flushed as it finishes, so a run killed by a deadline keeps every point
 * it finished.  A cut file stays readable by `kvplan validate`: YAML gets
 * its `points:` key with the first point (a file cut before any point has
 * none, which the reader reports as missing), CSV a line per point under
 * the first point's header.  At the end main() writes the whole file again
 * (the ceilings measured beside the points may have risen), through a
 * temporary file and a rename, so the file is never left half-written. */
static int out_is_csv(const char *path)
{
	const char *dot = strrchr(path, '.');
	return dot && strcmp(dot, ".csv") == 0;
}

static void out_open(struct ctx *cx, const struct kvp_record *env)
{
	const char *path = cx->o->out;
	if (!path)
		return;
	cx->stream = fopen(path, "w");
	if (!cx->stream) {
		fprintf(stderr, "kvbench: %s: %s (points are written at the end)\n", path,
			strerror(errno));
		return;
	}
	if (!out_is_csv(path))
		write_yaml_head(cx->stream, env); /* "points:" comes with a point */
	fflush(cx->stream);
}

static void out_point(struct ctx *cx, const struct kvp_record *row)
{
	FILE *f = cx->stream;
	if (!f)
		return;
	if (out_is_csv(cx->o->out)) {
		struct kvp_record *one[1] = {(struct kvp_record *)row};
		if (!cx->csv_head) {
			cx->csv_head = row;
			kvp_write_csv(f, one, 1);
		} else {
			/* the header's columns, as kvp_write_csv would write them */
			struct kvp_record *pair[2] = {(struct kvp_record *)cx->csv_head, one[0]};
			char *buf = NULL;
			size_t len = 0;
			FILE *m = open_memstream(&buf, &len);
			if (m) {
				kvp_write_csv(m, pair, 2);
				fclose(m);
				/* skip the header and the first row: the new line */
				char *p = buf ? strchr(buf, '\n') : NULL;
				p = p ? strchr(p + 1, '\n') : NULL;
				if (p)
					fputs(p + 1, f);
				free(buf);
			}
		}
	} else {
		struct rows one = {.r = (struct kvp_record **)&row, .n = 1, .cap = 1};
		if (cx->stream_points == 0)
			fputs("points:\n", f);
		write_points(f, &one);
	}
	cx->stream_points++;
	fflush(f);
}

/* The environment as it stands and the --out file's header. */
static void stream_start(struct ctx *cx)
{
	struct kvp_record *env = cx->o->out ? kvp_record_new() : NULL;
	if (!env)
		return;
	env_row(cx, env);
	out_open(cx, env);
	kvp_record_free(env);
}

/* Point k of the sweep (0 <= k < the product of the lists' lengths), in
 * the order batch, context, heads, head dim, block size, dtype (the last
 * varying fastest). */
static void sweep_at(const struct opts *o, int k, struct kvb_shape *s, int64_t *batch,
		     int64_t *context)
{
	const int it = k % o->ndtypes;
	k /= o->ndtypes;
	const int ip = k % o->block.n;
	k /= o->block.n;
	const int id = k % o->head_dim.n;
	k /= o->head_dim.n;
	const int ih = k % o->heads.n;
	k /= o->heads.n;
	const int ic = k % o->context.n;
	const int ib = k / o->context.n;
	memset(s, 0, sizeof *s);
	s->h_q = o->heads.hq[ih];
	s->h_kv = o->heads.hkv[ih];
	s->d = (int)o->head_dim.v[id];
	s->block_size = (int)o->block.v[ip];
	s->dtype = o->dtypes[it];
	*batch = o->batch.v[ib];
	*context = o->context.v[ic];
}

/* A rough cost of one point in seconds, for the plan line: filling the
 * cache with random data (assumed 0.5 GB/s per thread), the reference
 * (about 3 * tokens * H_q * d multiply-adds, at most pick_seqs' budget,
 * assumed 1e9 per second per thread) and, timed, every run at the read
 * ceiling plus the flush and the ceiling passes beside it.  An estimate to
 * say whether to wait, not a measurement. */
static double point_cost_s(const struct ctx *cx, const struct kvb_shape *s, int64_t batch,
			   int64_t context)
{
	const struct opts *o = cx->o;
	const double threads = kvb_cpu_threads(cx->cpu);
	const double tokens = (double)batch * (double)context;
	const double elem = kvb_dtype_bytes(s->dtype);
	const double kv_bytes = tokens * 2.0 * s->h_kv * s->d * elem;
	double ref = 3.0 * tokens * s->h_q * s->d;
	if (ref > 3e8 * threads)
		ref = 3e8 * threads;
	double t = kv_bytes / (0.5e9 * threads) + ref / (1e9 * threads);
	if (!o->validate_only) {
		double bw = (cx->have_ceiling && cx->ceiling.read_gbps > 0 ? cx->ceiling.read_gbps
									   : 10.0) * 1e9;
		t += (1.0 + o->warmup + o->repeats) * kv_bytes / bw;
		if (o->backend == BACKEND_CPU)
			t += ((double)o->repeats * (double)cx->flush_bytes +
			      4.0 * (double)cx->ceiling.array_bytes) / bw;
	}
	return t;
}

/* "N points, about T s" before the sweep starts (stderr). */
static void say_plan(struct ctx *cx, int total)
{
	const struct opts *o = cx->o;
	double t = 0;
	for (int k = 0; k < total; k++) {
		struct kvb_shape s;
		int64_t batch, context;
		sweep_at(o, k, &s, &batch, &context);
		t += point_cost_s(cx, &s, batch, context);
	}
	fprintf(stderr, "kvbench: %d points, about %.0f s (%s)\n", total, ceil(t),
		o->validate_only ? "validation only" : "validated, then timed");
}

/* The line of a point as it finishes: its result, its time, and the time
 * left at the average pace so far. */
static void say_result(struct ctx *cx, int done, int total, const struct kvp_record *row)
{
	const double spent = now_s() - cx->t_start_s;
	fprintf(stderr, "kvbench: [%d/%d] %s, max err %.2g", done, total, str(row, "validated"),
		num(row, "max_err"));
	if (kvp_record_get(row, "gbps"))
		fprintf(stderr, ", %.2f GB/s, %.1f%% of the %s ceiling", num(row, "gbps"),
			100 * num(row, "ratio"), str(row, "ratio_ceiling"));
	fprintf(stderr, "; %.1f s so far, about %.0f s left\n", spent,
		done > 0 ? spent / done * (total - done) : 0.0);
}

static int run_bandwidth(struct ctx *cx, struct rows *rs)
{
	struct opts *o = cx->o;
	int failed = 0, errors = 0;
	uint64_t llc = kvb_llc_bytes();
	if (llc == 0)
		llc = 32 * KVP_MIB;
	if (!o->validate_only) {
		/* The ceiling's array must not fit the last-level cache, or it
		 * measures the cache: 4 x LLC and at least 512 MiB, or for --quick
		 * 2 x LLC (the GPU's: 4 x its L2 and at least 256 MiB). */
		uint64_t bytes = o->stream_bytes;
		if (!o->stream_bytes_set)
			bytes = o->quick ? 2 * llc : 4 * llc > 512 * KVP_MIB ? 4 * llc : 512 * KVP_MIB;
		int st = -1;
		if (o->backend == BACKEND_CPU)
			st = kvb_stream_cpu(cx->cpu, bytes, 5, &cx->ceiling);
#ifdef HAVE_CUDA
		else {
			if (!o->stream_bytes_set) {
				uint64_t l2 = (uint64_t)cx->gpu.l2_bytes;
				bytes = o->quick ? (4 * l2 > 256 * KVP_MIB ? 4 * l2 : 256 * KVP_MIB)
						 : 1 * KVP_GIB;
			}
			st = kvb_cuda_stream(bytes, 10, &cx->ceiling);
		}
#endif
		if (st != 0) {
			fprintf(stderr, "kvbench: the streaming ceiling could not run: %s\n",
				o->backend == BACKEND_CPU ? "out of memory"
#ifdef HAVE_CUDA
							  : kvb_cuda_error());
#else
							  : "no CUDA");
#endif
			return EXIT_FAILED;
		}
		cx->have_ceiling = 1;
	}
	stream_start(cx);
	if (!o->validate_only && o->backend == BACKEND_CPU) {
		/* A read of twice the LLC before each timed run (a cold cache),
		 * and the ceiling's array to measure it again beside each point. */
		cx->flush_bytes = 2 * llc;
		cx->flush = kvb_big_alloc(cx->flush_bytes);
		cx->ceil_buf = kvb_big_alloc(cx->ceiling.array_bytes);
		if (!cx->flush || !cx->ceil_buf) {
			fprintf(stderr, "kvbench: out of memory\n");
			kvb_big_free(cx->flush);
			kvb_big_free(cx->ceil_buf);
			return EXIT_FAILED;
		}
		memset(cx->flush, 1, cx->flush_bytes);
		memset(cx->ceil_buf, 1, cx->ceiling.array_bytes);
	}
	uint64_t seed = o->seed;
	const int total = o->batch.n * o->context.n * o->heads.n * o->head_dim.n * o->block.n *
			  o->ndtypes;
	const int progress = cx->progress;
	int done = 0;
	if (progress)
		say_plan(cx, total);
	for (int k = 0; k < total; k++) {
		struct kvb_shape s;
		int64_t batch, context;
		sweep_at(o, k, &s, &batch, &context);
		if (progress)
			say_point(++done, total, &s, batch, context);
		struct kvp_record *row = kvp_record_new();
		int rc = row ? run_point(cx, &s, (int32_t)batch, (int32_t)context, seed++, row) : -1;
		if (rc < 0 || rows_add(rs, row) != 0) {
			kvp_record_free(row);
			errors++;
			continue;
		}
		out_point(cx, row);
		if (progress)
			say_result(cx, done, total, row);
		failed += rc;
	}
	kvb_big_free(cx->flush);
	kvb_big_free(cx->ceil_buf);
	cx->flush = cx->ceil_buf = NULL;
	if (!o->validate_only) {
		/* A point whose bytes fit the last-level cache (or the GPU's L2),
		 * or that runs in under a millisecond, times overheads: its ratio
		 * and planner columns cannot show a bandwidth model wrong. */
		uint64_t small = llc;
#ifdef HAVE_CUDA
		if (o->backend == BACKEND_CUDA)
			small = (uint64_t)cx->gpu.l2_bytes;
#endif
		int tiny = 0;
		for (size_t k = 0; k < rs->n; k++)
			if (kvp_record_get(rs->r[k], "gbps") &&
			    (num(rs->r[k], "moved_bytes") < (double)small ||
			     num(rs->r[k], "time_median_s") < 1e-3))
				tiny++;
		if (tiny)
			fprintf(stderr, "kvbench: warning: %d of %zu timed points moved less than the "
				"last-level cache (%llu bytes) or ran under 1 ms: their ratio and "
				"planner columns measure overheads, not bandwidth%s\n", tiny, rs->n,
				(unsigned long long)small, o->quick ? " (--quick is for tests)" : "");
	}
	return failed || errors ? EXIT_FAILED : EXIT_OK;
}

/* --------------------------------------------------------------- capacity
 * The measured side of the planner's capacity numbers: allocate what the
 * budget allows for real and count what fits. */

/* Allocate, for real and touched, `weights` bytes and then pool chunks of
 * whole blocks while the total stays within `limit`.  Returns blocks. */
static int64_t cpu_capacity(uint64_t weights, uint64_t limit, uint64_t block_bytes, int *err,
			    int *refused)
{
	enum { MAXCHUNKS = 4096 };
	void *chunk[MAXCHUNKS];
	int nchunks = 0;
	int64_t blocks = 0;
	uint64_t used = 0;
	const uint64_t chunk_max = 256 * KVP_MIB;
	void *w = NULL;
	*err = 0;
	*refused = 0;
	if (weights > limit)
		return 0;
	if (weights) {
		w = kvb_big_alloc(weights);
		if (!w) {
			*err = 1;
			return 0;
		}
		memset(w, 0x5a, weights);
		used = weights;
	}
	while (used + block_bytes <= limit && nchunks < MAXCHUNKS) {
		uint64_t room = limit - used;
		uint64_t n = (room < chunk_max ? room : chunk_max) / block_bytes;
		if (n == 0)
			n = 1; /* a block larger than a chunk still gets its own */
		void *p = kvb_big_alloc(n * block_bytes);
		if (!p) {
			*refused = 1; /* the machine said no before the limit did */
			break;
		}
		memset(p, 0xa5, n * block_bytes);
		chunk[nchunks++] = p;
		used += n * block_bytes;
		blocks += (int64_t)n;
	}
	if (nchunks == MAXCHUNKS && used + block_bytes <= limit)
		*refused = 1;
	for (int i = 0; i < nchunks; i++)
		kvb_big_free(chunk[i]);
	kvb_big_free(w);
	return blocks;
}

static int run_capacity(struct ctx *cx, struct rows *rs)
{
	struct opts *o = cx->o;
	uint64_t cap = o->gpu_memory_set ? o->gpu_memory : KVP_GIB;
#ifdef HAVE_CUDA
	if (o->backend == BACKEND_CUDA && !o->gpu_memory_set)
		cap = cx->gpu.total_bytes;
#endif
	uint64_t limit = (uint64_t)((double)cap * o->utilization);
	int errors = 0, short_of_limit = 0, limit_only = 0;
	if (o->backend == BACKEND_CPU) {
		/* touched pages past what the machine has end in the OOM killer,
		 * not in a refusal: refuse first, with the figures */
		uint64_t avail = kvb_mem_available_bytes();
		if (avail && limit > avail) {
			fprintf(stderr, "kvbench: capacity: the limit is %llu bytes (%.4g x %llu) but "
				"the machine has %llu available (MemAvailable); lower --gpu-memory "
				"or --utilization\n", (unsigned long long)limit, o->utilization,
				(unsigned long long)cap, (unsigned long long)avail);
			return EXIT_FAILED;
		}
	}
	stream_start(cx);
	for (int ih = 0; ih < o->heads.n; ih++)
		for (int id = 0; id < o->head_dim.n; id++)
			for (int ip = 0; ip < o->block.n; ip++)
				for (int it = 0; it < o->ndtypes; it++)
					for (int ic = 0; ic < o->context.n; ic++) {
		struct kvb_shape s = {.h_q = o->heads.hq[ih], .h_kv = o->heads.hkv[ih],
				      .d = (int)o->head_dim.v[id], .block_size = (int)o->block.v[ip],
				      .dtype = o->dtypes[it]};
		uint64_t block_bytes;
		if (!kvp_mul(kvb_block_bytes(&s), (uint64_t)o->layers, &block_bytes)) {
			fprintf(stderr, "kvbench: block size overflows\n");
			errors++;
			continue;
		}
		int64_t blocks = 0;
		int err = 0, refused = 0;
		if (o->backend == BACKEND_CPU)
			blocks = cpu_capacity(o->weights_bytes, limit, block_bytes, &err, &refused);
#ifdef HAVE_CUDA
		else if (kvb_cuda_capacity(o->weights_bytes, limit, block_bytes, &blocks,
					   &refused) != 0) {
			fprintf(stderr, "kvbench: %s\n", kvb_cuda_error());
			err = 1;
		}
#endif
		if (err) {
			fprintf(stderr, "kvbench: the weights (%llu bytes) could not be allocated\n",
				(unsigned long long)o->weights_bytes);
			errors++;
			continue;
		}
		/* Admit sequences in order while their blocks fit (first come,
		 * first served, as a serving engine's scheduler does). */
		int64_t free_blocks = blocks, seqs = 0, admitted_tokens = 0;
		uint64_t st = o->seed;
		for (;;) {
			int32_t len;
			make_lengths(o, 1, (int32_t)o->context.v[ic], kvb_rng_next(&st), &len);
			int64_t need = ((int64_t)len + s.block_size - 1) / s.block_size;
			if (need > free_blocks)
				break;
			free_blocks -= need;
			admitted_tokens += len;
			seqs++;
		}
		struct kvp_record *row = kvp_record_new();
		if (!row) {
			errors++;
			continue;
		}
		rec_str(row, "backend", "%s", o->backend == BACKEND_CPU ? "cpu" : "cuda");
		kvp_record_u64(row, "memory_bytes", (uint64_t)(cap));
		kvp_record_f64(row, "utilization", o->utilization);
		kvp_record_u64(row, "limit_bytes", (uint64_t)(limit));
		kvp_record_u64(row, "weights_bytes", (uint64_t)(o->weights_bytes));
		kvp_record_u64(row, "layers", (uint64_t)(o->layers));
		kvp_record_u64(row, "num_heads", (uint64_t)(s.h_q));
		kvp_record_u64(row, "num_kv_heads", (uint64_t)(s.h_kv));
		kvp_record_u64(row, "head_dim", (uint64_t)(s.d));
		rec_str(row, "kv_dtype", "%s", kvb_dtype_name(s.dtype));
		kvp_record_u64(row, "block_size", (uint64_t)(s.block_size));
		kvp_record_u64(row, "block_bytes", (uint64_t)(block_bytes));
		kvp_record_u64(row, "context", (uint64_t)(o->context.v[ic]));
		char lname[128];
		lengths_name(o, lname, sizeof lname);
		rec_str(row, "lengths", "%s", lname);
		kvp_record_u64(row, "blocks", (uint64_t)(blocks));
		/* what ended the pool: the limit (then blocks are the limit's
		 * arithmetic) or the allocator (the machine's real limit) */
		rec_str(row, "stopped_by", "%s", refused ? "allocator" : "limit");
		kvp_record_u64(row, "token_slots", (uint64_t)(blocks * s.block_size));
		kvp_record_u64(row, "sequences", (uint64_t)(seqs));
		kvp_record_u64(row, "tokens", (uint64_t)(admitted_tokens));
#ifndef KVBENCH_STANDALONE
		struct kvb_capacity_prediction cp;
		char msg[512];
		if (kvb_predict_capacity(&s, o->layers, cap, o->utilization, o->weights_bytes,
					 (uint64_t)o->context.v[ic], &cp, msg, sizeof msg) == 0) {
			kvp_record_u64(row, "predicted_block_bytes", (uint64_t)(cp.page_bytes));
			kvp_record_u64(row, "predicted_blocks", (uint64_t)(cp.num_blocks));
			kvp_record_u64(row, "predicted_token_slots", (uint64_t)(cp.max_tokens));
			/* the planner's sequences are all of the context's length */
			if (o->lengths == KVB_LENGTHS_FIXED
#ifndef KVBENCH_STANDALONE
			    && !o->have_dist
#endif
			)
				kvp_record_u64(row, "predicted_sequences", (uint64_t)(cp.max_sequences));
			kvp_record_f64(row, "blocks_diff", (double)blocks - (double)cp.num_blocks);
		} else {
			fprintf(stderr, "kvbench: no prediction: %s\n", msg);
		}
#endif
		if (rows_add(rs, row) != 0) {
			kvp_record_free(row);
			errors++;
			continue;
		}
		out_point(cx, row);
		const uint64_t pool = (uint64_t)blocks * block_bytes;
		if (refused) {
			fprintf(stderr, "kvbench: capacity %s: the allocator refused after %llu bytes "
				"(weights %llu + %lld blocks of %llu), %llu bytes short of the limit "
				"%llu: the pool is what the %s gave, not what was asked\n",
				kvb_dtype_name(s.dtype),
				(unsigned long long)(o->weights_bytes + pool),
				(unsigned long long)o->weights_bytes, (long long)blocks,
				(unsigned long long)block_bytes,
				(unsigned long long)(limit - o->weights_bytes - pool),
				(unsigned long long)limit,
				o->backend == BACKEND_CPU ? "machine" : "device");
			short_of_limit++;
		} else {
			limit_only++;
		}
	}
	if (limit_only)
		fprintf(stderr, "kvbench: warning: %d capacity point%s stopped at the limit (%.4g of "
			"%llu bytes) and never reached the allocator's: their blocks are the "
			"limit's arithmetic, which cannot disagree with the planner's%s\n",
			limit_only, limit_only == 1 ? "" : "s", o->utilization,
			(unsigned long long)cap,
			o->backend == BACKEND_CUDA ? "; --utilization 1 measures the device's limit"
						   : "");
	return errors || short_of_limit ? EXIT_FAILED : EXIT_OK;
}

/* ------------------------------------------------------------------ main */

/* The JSON root: {"kvbench": env, "points": [...]}, owning env and the
 * rows (rs keeps borrowed pointers). */
static struct kvp_record *results_root(struct kvp_record *env, const struct rows *rs)
{
	struct kvp_record *root = kvp_record_new();
	if (!root || !kvp_record_rec(root, "kvbench", env)) {
		kvp_record_free(root);
		return NULL;
	}
	for (size_t k = 0; k < rs->n; k++)
		if (!kvp_record_push(root, "points", rs->r[k])) {
			kvp_record_free(root);
			return NULL;
		}
	return root;
}

static void print_results(FILE *f, struct ctx *cx, const struct kvp_record *root,
			  const struct rows *rs)
{
	struct opts *o = cx->o;
	if (o->format == KVP_FORMAT_JSON) {
		kvp_write_json(f, root);
		return;
	}
	if (o->format == KVP_FORMAT_CSV) {
		kvp_write_csv(f, rs->r, rs->n);
		return;
	}
	if (o->capacity) {
		static const struct col cols[] = {
			{"kv_dtype", "dtype", COPY}, {"num_kv_heads", "Hkv", COPY},
			{"head_dim", "d", COPY}, {"block_size", "P", COPY}, {"layers", "layers", COPY},
			{"block_bytes", "block B", COPY}, {"limit_bytes", "limit B", COPY},
			{"weights_bytes", "weights B", COPY}, {"blocks", "blocks", COPY},
			{"token_slots", "slots", COPY}, {"context", "ctx", COPY},
			{"sequences", "seqs", COPY}, {"tokens", "tokens", COPY},
			{"predicted_blocks", "planner blocks", COPY},
			{"predicted_sequences", "planner seqs", COPY}, {"blocks_diff", "diff", COPY},
		};
		fprintf(f, "kvbench %s capacity (%s): limit = memory %.0f B x utilization %.4g; the "
			   "weights are allocated first,\nthen blocks of block B = layers x 2 (K,V) x "
			   "Hkv x P x d x dtype bytes (+ int8 scales) until the limit;\nsequences of "
			   "the context's length are admitted in order while their blocks fit.\n\n",
			PACKAGE_VERSION, o->backend == BACKEND_CPU ? "cpu, malloc + touch" : "cuda, cudaMalloc",
			num(rs->r[0], "memory_bytes"), o->utilization);
		write_table(f, rs, cols, sizeof cols / sizeof cols[0]);
		return;
	}
	if (o->validate_only) {
		static const struct col cols[] = {
			{"batch", "B", COPY}, {"context", "ctx", COPY}, {"block_size", "P", COPY},
			{"kv_dtype", "dtype", COPY}, {"num_heads", "Hq", COPY},
			{"num_kv_heads", "Hkv", COPY}, {"head_dim", "d", COPY}, {"tokens", "tokens", COPY},
			{"seqs_checked", "checked", COPY}, {"max_err", "max err", COPY},
			{"tolerance", "bound", COPY}, {"nonfinite", "NaN", COPY},
			{"validated", "result", COPY},
		};
		fprintf(f, "kvbench %s validation (%s): each point against the double reference, "
			   "output poisoned with NaN first;\nerror = |o - ref| / sum_t p_t |v_t|, "
			   "bound per KV dtype.\n\n", PACKAGE_VERSION,
			o->backend == BACKEND_CPU ? "cpu" : "cuda");
		write_table(f, rs, cols, sizeof cols / sizeof cols[0]);
		return;
	}
	static const struct col cols[] = {
		{"batch", "B", COPY}, {"context", "ctx", COPY}, {"block_size", "P", COPY},
		{"kv_dtype", "dtype", COPY}, {"num_heads", "Hq", COPY}, {"num_kv_heads", "Hkv", COPY},
		{"head_dim", "d", COPY}, {"splits", "splits", COPY}, {"moved_bytes", "bytes moved", COPY},
		{"time_median_s", "median us", TIME_US}, {"gbps", "GB/s", COPY},
		{"gflops_per_core", "GF/s/core", COPY},
		{"ceiling_gbps", "ceil", COPY}, {"ratio", "of ceil", PERCENT},
		{"ratio_best", "best", PERCENT}, {"prediction_error", "planner", SIGNED_PERCENT},
		{"max_err", "max err", COPY}, {"validated", "check", COPY},
	};
	if (o->backend == BACKEND_CPU)
		fprintf(f, "kvbench %s decode (cpu, %d threads, %s loops)\n", PACKAGE_VERSION,
			kvb_cpu_threads(cx->cpu), kvb_cpu_isa(cx->cpu));
	else
		fprintf(f, "kvbench %s decode (cuda, %s)\n", PACKAGE_VERSION, str(rs->r[0], "device"));
	fprintf(f, "ceiling: arrays of %.0f MiB, best of the runs: read %.2f GB/s, copy %.2f GB/s, "
		   "triad %.2f GB/s (STREAM counting)%s\n",
		(double)cx->ceiling.array_bytes / KVP_MIB, cx->ceiling.read_gbps,
		cx->ceiling.copy_gbps, cx->ceiling.triad_gbps,
		o->backend == BACKEND_CPU ? ";\nthe read ceiling is measured again before and after "
					    "each point (ceil), against which of ceil is taken" : "");
	fprintf(f, "bytes moved = K + V of the valid tokens in the KV dtype (+ their scales) + Q + O "
		   "in fp32; block tables not counted\nGB/s = bytes moved / median of %d runs "
		   "(10^9 B/s), each after a cache flush; of ceil = GB/s / the %s ceiling;\n"
		   "GF/s/core = 4 d FLOP per token and query head / median / threads (CPU);\n"
		   "ceil = that %s ceiling (the YAML's ceiling_gbps, ratio_ceiling: %s); best = the "
		   "fastest run's GB/s / the same ceiling (a best of runs too)\n",
		o->repeats, o->backend == BACKEND_CPU ? "read" : "copy",
		o->backend == BACKEND_CPU ? "read" : "copy", o->backend == BACKEND_CPU ? "read" : "copy");
	if (*str(rs->r[0], "predicted_on"))
		fprintf(f, "planner = (predicted - measured) / measured: the planner's time for the step "
			   "(its KV bytes on %s)\n", str(rs->r[0], "predicted_on"));
	fputc('\n', f);
	write_table(f, rs, cols, sizeof cols / sizeof cols[0]);
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ctx cx;
	struct rows rs = {0};
	struct kvp_record *env = NULL, *root = NULL;
	int rc = parse_opts(argc, argv, &o);
	if (rc >= 0)
		return rc;
	memset(&cx, 0, sizeof cx);
	cx.o = &o;

	if (o.backend == BACKEND_CUDA) {
#ifdef HAVE_CUDA
		int st = kvb_cuda_probe(&cx.gpu);
		if (st == KVB_CUDA_OLD_DRIVER) {
			fprintf(stderr, "kvbench: the NVIDIA driver is too old for this toolkit (%s); "
				"build with an older toolkit or update the driver\n",
				kvb_cuda_error());
			return EXIT_FAILED;
		}
		if (st == KVB_CUDA_NO_DEVICE) {
			fprintf(stderr, "kvbench: no CUDA device (%s)\n", kvb_cuda_error());
			return EXIT_NO_DEVICE;
		}
		if (st != KVB_CUDA_OK) {
			fprintf(stderr, "kvbench: %s\n", kvb_cuda_error());
			return EXIT_FAILED;
		}
#else
		fprintf(stderr, "kvbench: no CUDA device (this kvbench was built without CUDA)\n");
		return EXIT_NO_DEVICE;
#endif
	}
#ifndef KVBENCH_STANDALONE
	if (o.gpu) {
		struct kvp_error err;
		char msg[1024];
		cx.profile = calloc(1, sizeof *cx.profile);
		if (!cx.profile)
			return EXIT_FAILED;
		kvp_status st = kvp_gpu_load(o.gpu, cx.profile, &err);
		if (st != KVP_STATUS_OK) {
			kvp_error_format(&err, msg, sizeof msg);
			fprintf(stderr, "kvbench: --gpu: %s\n", msg);
			free(cx.profile);
			return kvp_status_exit_code(st);
		}
	}
#endif
	if (kvb_cpu_create(o.threads, &cx.cpu) != 0) {
		fprintf(stderr, "kvbench: cannot start %d threads: %s\n", o.threads, strerror(errno));
		return EXIT_FAILED;
	}
	cx.progress = o.progress != 0; /* on unless --quiet, a terminal or not */
	cx.t_start_s = now_s();
	rc = o.capacity ? run_capacity(&cx, &rs) : run_bandwidth(&cx, &rs);
	if (cx.stream)
		fclose(cx.stream);
	if (cx.progress)
		fprintf(stderr, "kvbench: %zu points in %.1f s\n", rs.n, now_s() - cx.t_start_s);
	env = kvp_record_new();
	if (env)
		env_row(&cx, env);
	if (!env || !(root = results_root(env, &rs))) {
		fprintf(stderr, "kvbench: out of memory\n");
		return EXIT_FAILED; /* what was built is left to the exit */
	}
	if (rs.n > 0)
		print_results(stdout, &cx, root, &rs);
	if (o.out) {
		/* through the atomic writer: the previous results stay whole on failure */
		struct kvp_afile a;
		struct kvp_error err = {0};
		if (kvp_afile_open(&a, o.out, &err) == KVP_STATUS_OK) {
			if (out_is_csv(o.out))
				kvp_write_csv(a.f, rs.r, rs.n);
			else
				write_yaml(a.f, env, &rs);
			kvp_afile_commit(&a, &err);
		}
		if (err.status) {
			fprintf(stderr, "kvbench: %s: %s\n", o.out, err.msg);
			rc = EXIT_FAILED;
		}
	}
	kvb_cpu_free(cx.cpu);
#ifndef KVBENCH_STANDALONE
	free(cx.profile);
#endif
	kvp_record_free(root); /* env and the rows with it */
	free(rs.r);
#ifndef KVBENCH_STANDALONE
	if (o.have_dist)
		kvp_dist_free(&o.dist);
#endif
	return rc;
}
