/* kvbench-opts.c: kvbench's command line.  usage(), the list parsers
 * (batch, context, heads, dtypes, sizes) and parse_opts(), which fills
 * struct opts with the sweep's lists and the run's settings, the --quick
 * sweep's defaults among them.  Every mistake is a usage error (exit 2)
 * naming the option and the value. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "kvbench.h"
#include "base/units.h"
#ifndef KVBENCH_STANDALONE
#include "time/perf.h"
#endif

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void usage(FILE *f)
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
		"  --kv-scale K,V          multiply K's and V's values by K and V (default\n"
		"                          1,1; 1e-8..1e4): int8's per-token and fp8's\n"
		"                          per-tensor scales follow; K above 1 also divides\n"
		"                          the softmax scale, so the logits keep their spread\n"
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
		"                          to FILE.partial as it finishes, FILE written\n"
		"                          whole at the end (a regular file; ends with\n"
		"                          point_count, which kvplan validate checks)\n"
		"  --help, --version\n"
		"\n"
		"Exit status: 0 ok, 1 a point failed validation or the run failed (or did\n"
		"not fit the memory, or a capacity pool stopped short of its limit, or\n"
		"standard output could not be written), 2 usage (also an --out that is\n"
		"not a regular file or is the --gpu profile), 77 --backend cuda without\n"
		"a CUDA device.\n"
#ifndef KVBENCH_STANDALONE
		, KVP_PERF_DECODE_BW_EFFICIENCY
#else
		, 0.8
#endif
	);
}

int die_usage(const char *fmt, ...)
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
	OPT_PROGRESS, OPT_QUIET, OPT_STREAM, OPT_GPU, OPT_KVSCALE, OPT_HELP, OPT_VERSION
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
	{"kv-scale", required_argument, NULL, OPT_KVSCALE},
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
int parse_opts(int argc, char **argv, struct opts *o)
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
	o->k_mul = o->v_mul = 1.0;
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
		case OPT_KVSCALE: {
			char *end = NULL, *end2 = NULL;
			const double k = strtod(optarg, &end);
			const double v = end && *end == ',' ? strtod(end + 1, &end2) : NAN;
			if (!end2 || *end2 || !(k >= 1e-8 && k <= 1e4) || !(v >= 1e-8 && v <= 1e4))
				return die_usage("--kv-scale: '%s' is not K,V with each in 1e-8..1e4",
						 optarg);
			o->k_mul = k;
			o->v_mul = v;
			break;
		}
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
