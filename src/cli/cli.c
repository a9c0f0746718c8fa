/* cli.c: options, profile loading and error reporting shared by every kvplan
 * subcommand.  Messages about user input always carry the option or the
 * file:line:col and field; see cli.h for the exit codes. */
#include "cli/cli.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"
#include "base/units.h"
#include "base/dist.h"
#include "read/hf-config.h"
#include "read/workload.h"
#include "frag/frag.h"

const char kvp_cli_common_help[] =
	"Model and hardware:\n"
	"  --model NAME|PATH         model profile name, YAML path, HF config.json or a\n"
	"                            .gguf file (its header only)\n"
	"  --gpu NAME|PATH           GPU profile name or YAML path\n"
	"  --engine E                vllm|sglang|trtllm|llamacpp|generic (default\n"
	"                            vllm, newest version; llamacpp: step times only)\n"
	"  --engine-version V        the engine's version as it prints it (v0.19.0,\n"
	"                            0.19.0+cu128, 0.27.1): the entry of profiles/engines\n"
	"                            whose range holds it, else the nearest modelled one\n"
	"                            (a warning, a wider band); default the newest\n"
	"  --p2p yes|no              whether the TP group's GPUs reach each other's\n"
	"                            memory peer-to-peer (vLLM runs its custom\n"
	"                            all-reduce only then); default: the GPU profile's\n"
	"                            pcie_p2p, and NVLink within its nvlink_domain\n"
	"  --tp N, --pp N            tensor / pipeline parallel size (default 1)\n"
	"  --dp N                    data-parallel attention ranks, each with its own\n"
	"                            requests' KV; GPUs = tp x pp x dp (default 1)\n"
	"  --ep N                    routed experts owned whole by N GPUs (N divides the\n"
	"                            experts and tp x dp; default 1: sharded)\n"
	"  --num-gpus N              the GPU count the shape must use (checked; size,\n"
	"                            which searches it, refuses it)\n"
	"  --spec-draft D            speculative decoding (budget, perf): a draft MODEL\n"
	"                            (MODEL:K), eagle:K or mtp:K, K tokens per step\n"
	"  --spec-accept-rate A      per-position acceptance a, in [0, 1): the chance a\n"
	"                            draft token is accepted once those before it were;\n"
	"                            (1 - a^(K+1)) / (1 - a) tokens per step\n"
	"  --spec-accept A           the same as --spec-accept-rate (its older name)\n"
	"  --spec-acceptance R       accepted / drafted tokens, as vLLM logs it (\"Avg\n"
	"                            Draft acceptance rate\"), 0.8 or 80%: 1 + R K tokens\n"
	"                            per step\n"
	"  --dtype D                 serving dtype: auto|bf16|fp16|fp32 (auto: checkpoint,\n"
	"                            fp32 checkpoints are served in bf16)\n"
	"  --kv-dtype D              auto|bf16|fp16|fp32|fp8|fp8_e5m2|fp8-pth|int8|int4|nvfp4\n"
	"  --weights-dtype D         what-if quantization of every weight but the embeddings:\n"
	"                            bf16|fp16|fp8|int8|int4|int4-gptq|int4-awq|mxfp4|nvfp4\n"
	"                            (default: the profile or the checkpoint's\n"
	"                            quantization_config; refused for a GGUF, whose\n"
	"                            tensor types are its weights)\n"
	"  --preprocessor-config F   the checkpoint's preprocessor_config.json: a Qwen2-VL\n"
	"                            or Qwen2.5-VL model's max_pixels, which sizes the\n"
	"                            image vLLM profiles the vision tower with (default:\n"
	"                            the published checkpoints' 12,845,056)\n"
	"  --block-size N            KV block size in tokens (default 16; sglang 1; trtllm 32)\n"
	"  --utilization F           memory fraction (vLLM gpu_memory_utilization, SGLang\n"
	"                            mem_fraction_static, TRT-LLM free fraction); 0.9 or 90%\n"
	"Workload:\n"
	"  --context N               tokens per sequence (default: model maximum); 8192, 128k\n"
	"  --batch B                 concurrent sequences (default 1)\n"
	"  --max-batched-tokens N    tokens per forward pass for activations (default 8192)\n"
	"  --max-num-seqs N          sequences per step, for the sampler (default 256)\n"
	"Overrides (plug in what your engine logged):\n"
	"  --weights-bytes SIZE      weights on one GPU, e.g. 14.99GiB\n"
	"  --activation-bytes SIZE   activation peak\n"
	"  --overhead-bytes SIZE     CUDA context, NCCL, CUDA graphs\n"
	"  --gpu-memory SIZE         total GPU memory, e.g. 79.19GiB\n"
	"  --disable-hybrid-kv       vLLM without the hybrid KV manager (windows not capped)\n"
	"Output:\n"
	"  --format F                table|json|csv (default table)\n"
	"  --help                    this text\n";

void kvp_cli_common_init(struct kvp_cli_common *c)
{
	memset(c, 0, sizeof *c);
	c->format = KVP_FORMAT_TABLE;
	c->opts.engine = KVP_CLI_DEFAULT_ENGINE;
	c->opts.par.tp = 1;
	c->opts.par.pp = 1;
	c->opts.dtype = KVP_DTYPE_AUTO;
	c->opts.kv_dtype = KVP_DTYPE_AUTO;
}

int kvp_cli_usage_error(const char *cmd, const char *fmt, ...)
{
	/* the message quotes what the user typed: control characters shown,
	 * never sent to the terminal; a message past the buffer ends in "..." */
	char buf[1024], shown[KVP_TERM_SIZE(sizeof buf)];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n >= (int)sizeof buf)
		memcpy(buf + sizeof buf - 4, "...", 4);
	fprintf(stderr, "kvplan %s: %s\nTry 'kvplan %s --help'.\n", cmd,
		kvp_term_text(shown, sizeof shown, buf), cmd);
	return KVP_EXIT_USAGE;
}

int kvp_cli_error(const char *cmd, const struct kvp_error *err)
{
	char buf[1400], shown[KVP_TERM_SIZE(sizeof buf)];
	kvp_error_format(err, buf, sizeof buf);
	/* names in a message come from files: control characters shown, not sent */
	fprintf(stderr, "kvplan %s: %s\n", cmd, kvp_term_text(shown, sizeof shown, buf));
	return kvp_status_exit_code(err->status);
}

int kvp_cli_bad_option(const char *cmd, const char *arg, const struct option *longopts)
{
	if (arg[0] == '-' && arg[1] && arg[1] != '-')
		return kvp_cli_usage_error(cmd, "option '%s' is unknown or needs a value", arg);
	char name[64];
	const char *word = arg;
	while (*word == '-')
		word++;
	snprintf(name, sizeof name, "%.*s", (int)strcspn(word, "="), word);
	size_t len = strlen(name);
	const char *names[128];
	const struct option *match = NULL;
	size_t n = 0, prefixed = 0;
	for (const struct option *o = longopts; o->name && n < 128; o++) {
		names[n++] = o->name;
		if (len && strncmp(o->name, name, len) == 0) {
			prefixed++;
			if (!match || strcmp(o->name, name) == 0)
				match = o;
		}
	}
	/* an exact name, or getopt's unique abbreviation of one */
	if (match && (strcmp(match->name, name) == 0 || prefixed == 1))
		return match->has_arg == no_argument
			? kvp_cli_usage_error(cmd, "option '--%s' takes no value", match->name)
			: kvp_cli_usage_error(cmd, "option '--%s' needs a value", match->name);
	char near[256];
	kvp_suggest_text(name, names, n, "--", near, sizeof near);
	return kvp_cli_usage_error(cmd, "unknown option '%s'%s", arg, near);
}

bool kvp_cli_u64(const char *cmd, const char *opt, const char *arg, uint64_t min, uint64_t *out)
{
	int rc = kvp_parse_u64(arg, out);
	if (rc == -2 || (rc == 0 && *out > UINT32_MAX && min > 0 && strcmp(opt, "--batch") != 0 &&
			 strcmp(opt, "--context") != 0)) {
		kvp_cli_usage_error(cmd, "%s: %s is too large", opt, arg);
		return false;
	}
	if (rc) {
		kvp_cli_usage_error(cmd, "%s: expected a whole number, got '%s'", opt, arg);
		return false;
	}
	if (*out < min) {
		kvp_cli_usage_error(cmd, "%s: must be at least %llu, got %s", opt,
				    (unsigned long long)min, arg);
		return false;
	}
	return true;
}

bool kvp_cli_tokens(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
	int rc = kvp_parse_tokens(arg, out);
	if (rc == -2) {
		kvp_cli_usage_error(cmd, "%s: %s is too large", opt, arg);
		return false;
	}
	if (rc == -3) {
		kvp_cli_usage_error(cmd, "%s: %s is not a whole number of tokens (1.5k = 1536 is)",
				    opt, arg);
		return false;
	}
	if (rc || *out == 0) {
		kvp_cli_usage_error(cmd, "%s: expected a positive token count such as 8192 or 128k, got '%s'",
				    opt, arg);
		return false;
	}
	return true;
}

bool kvp_cli_bytes(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
	int rc = kvp_parse_bytes(arg, out);
	if (rc == -2) {
		kvp_cli_usage_error(cmd, "%s: %s does not fit in 64 bits", opt, arg);
		return false;
	}
	char readings[KVP_BYTES_READINGS_SIZE];
	if (rc == -4 && kvp_bytes_readings(arg, readings, sizeof readings)) {
		kvp_cli_usage_error(cmd, "%s: '%s' is ambiguous: %s?", opt, arg, readings);
		return false;
	}
	if (rc) {
		kvp_cli_usage_error(cmd, "%s: expected a size such as 14.99GiB or 80GB, got '%s'",
				    opt, arg);
		return false;
	}
	/* a bare number below 1 MiB is almost surely GiB without its unit
	 * (--gpu-memory 80); bytes that small must say B */
	if (*out > 0 && *out < (1u << 20) && arg[strspn(arg, "0123456789.")] == '\0') {
		kvp_cli_usage_error(cmd, "%s: %s without a unit means %s bytes; did you mean %sGiB? "
				    "(write %sB for bytes)", opt, arg, arg, arg, arg);
		return false;
	}
	return true;
}

char *kvp_cli_split(const char *cmd, const char *opt, const char *arg, char **items, size_t max,
		    size_t *n)
{
	char *buf = strdup(arg); /* a copy of any length: no item is cut */
	*n = 0;
	if (!buf) {
		kvp_cli_usage_error(cmd, "%s: out of memory", opt);
		return NULL;
	}
	if (!buf[0]) {
		kvp_cli_usage_error(cmd, "%s: empty list", opt);
		goto fail;
	}
	for (char *t = buf;;) {
		char *comma = strchr(t, ',');
		if (comma)
			*comma = '\0';
		if (!t[0]) {
			kvp_cli_usage_error(cmd, "%s: an empty item in '%s' (a comma too many)", opt, arg);
			goto fail;
		}
		if (*n == max) {
			kvp_cli_usage_error(cmd, "%s: at most %zu values", opt, max);
			goto fail;
		}
		for (size_t i = 0; i < *n; i++)
			if (strcmp(items[i], t) == 0) {
				kvp_cli_usage_error(cmd, "%s: '%s' is given twice", opt, t);
				goto fail;
			}
		items[(*n)++] = t;
		if (!comma)
			return buf;
		t = comma + 1;
	}
fail:
	free(buf);
	*n = 0;
	return NULL;
}

bool kvp_cli_token_list(const char *cmd, const char *opt, const char *arg, uint64_t *out,
			size_t max, size_t *n)
{
	char **items = malloc((max ? max : 1) * sizeof *items);
	char *buf = items ? kvp_cli_split(cmd, opt, arg, items, max, n) : NULL;
	if (!items)
		kvp_cli_usage_error(cmd, "%s: out of memory", opt);
	bool good = buf != NULL;
	for (size_t i = 0; good && i < *n; i++) {
		good = kvp_cli_tokens(cmd, opt, items[i], &out[i]);
		for (size_t j = 0; good && j < i; j++)
			if (out[j] == out[i]) {
				kvp_cli_usage_error(cmd, "%s: '%s' and '%s' are the same count, %llu", opt,
						    items[j], items[i], (unsigned long long)out[i]);
				good = false;
			}
	}
	free(buf);
	free(items);
	if (!good)
		*n = 0;
	return good;
}

int kvp_cli_common_option(struct kvp_cli_common *c, const char *cmd, int opt, const char *arg)
{
	struct kvp_budget_opts *o = &c->opts;
	uint64_t v;
	double d;
	switch (opt) {
	case KVP_OPT_MODEL: c->model = arg; return 0;
	case KVP_OPT_GPU: c->gpu = arg; return 0;
	case KVP_OPT_HELP: c->help = true; return 0;
	case KVP_OPT_ENGINE:
		if (!kvp_engine_parse(arg, &o->engine))
			return kvp_cli_usage_error(cmd, "--engine: unknown engine '%s' (generic, vllm, sglang, trtllm, llamacpp)", arg);
		c->engine_given = true;
		return 0;
	case KVP_OPT_TP:
	case KVP_OPT_PP:
		if (!kvp_cli_u64(cmd, opt == KVP_OPT_TP ? "--tp" : "--pp", arg, 1, &v))
			return KVP_EXIT_USAGE;
		if (v > 1u << 20)
			return kvp_cli_usage_error(cmd, "%s: %s GPUs is more than kvplan plans for",
						   opt == KVP_OPT_TP ? "--tp" : "--pp", arg);
		*(opt == KVP_OPT_TP ? &o->par.tp : &o->par.pp) = (uint32_t)v;
		return 0;
	case KVP_OPT_SPEC_DRAFT: c->spec_draft = arg; return 0;
	case KVP_OPT_SPEC_ACCEPT: c->spec_accept = arg; return 0;
	case KVP_OPT_SPEC_ACCEPT_RATE: c->spec_accept_rate = arg; return 0;
	case KVP_OPT_SPEC_ACCEPTANCE: c->spec_acceptance = arg; return 0;
	case KVP_OPT_DP:
	case KVP_OPT_EP:
	case KVP_OPT_NUM_GPUS: {
		const char *name = opt == KVP_OPT_DP ? "--dp" : opt == KVP_OPT_EP ? "--ep" : "--num-gpus";
		if (!kvp_cli_u64(cmd, name, arg, 1, &v))
			return KVP_EXIT_USAGE;
		if (v > 1u << 20)
			return kvp_cli_usage_error(cmd, "%s: %s GPUs is more than kvplan plans for",
						   name, arg);
		*(opt == KVP_OPT_DP ? &o->par.dp : opt == KVP_OPT_EP ? &o->par.ep : &o->par.gpus) =
			(uint32_t)v;
		return 0;
	}
	case KVP_OPT_DTYPE:
	case KVP_OPT_KV_DTYPE: {
		enum kvp_dtype dt;
		const char *name = opt == KVP_OPT_DTYPE ? "--dtype" : "--kv-dtype";
		if (!kvp_dtype_parse(arg, &dt))
			return kvp_cli_usage_error(cmd, "%s: unknown dtype '%s'", name, arg);
		if (opt == KVP_OPT_DTYPE && dt != KVP_DTYPE_AUTO && dt != KVP_DTYPE_BF16 &&
		    dt != KVP_DTYPE_FP16 && dt != KVP_DTYPE_FP32)
			return kvp_cli_usage_error(cmd, "--dtype: %s is not a serving dtype (auto, bf16, fp16, fp32); "
						   "quantized weights belong in the model profile", arg);
		if (opt == KVP_OPT_KV_DTYPE && !kvp_dtype_info(dt)->kv_ok)
			return kvp_cli_usage_error(cmd, "--kv-dtype: %s is not a KV cache format", arg);
		*(opt == KVP_OPT_DTYPE ? &o->dtype : &o->kv_dtype) = dt;
		return 0;
	}
	case KVP_OPT_ENGINE_VERSION:
		if (!arg[0] || strlen(arg) >= KVP_ENGINE_VERSION_MAX)
			return kvp_cli_usage_error(cmd, "--engine-version: expected a version such "
						   "as 0.19.0 or v0.27.1, got '%s'", arg);
		o->engine_version = arg;
		return 0;
	case KVP_OPT_PREPROCESSOR_CONFIG:
		c->preprocessor_config = arg;
		return 0;
	case KVP_OPT_P2P:
		if (strcmp(arg, "yes") == 0)
			o->p2p = KVP_P2P_ALL;
		else if (strcmp(arg, "no") == 0)
			o->p2p = KVP_P2P_NONE;
		else
			return kvp_cli_usage_error(cmd, "--p2p: expected yes or no, got '%s'", arg);
		return 0;
	case KVP_OPT_WEIGHTS_DTYPE: {
		enum kvp_dtype dt;
		if (!kvp_dtype_parse(arg, &dt) || dt == KVP_DTYPE_AUTO ||
		    !kvp_dtype_info(dt)->weights_ok)
			return kvp_cli_usage_error(cmd, "--weights-dtype: '%s' is not a weights format "
						   "(bf16, fp16, fp32, fp8, int8, int4, int4-gptq, "
						   "int4-awq, mxfp4, nvfp4)", arg);
		c->weights_dtype = dt;
		return 0;
	}
	case KVP_OPT_BLOCK_SIZE:
		if (!kvp_cli_u64(cmd, "--block-size", arg, 1, &v))
			return KVP_EXIT_USAGE;
		if (v > 1u << 20)
			return kvp_cli_usage_error(cmd, "--block-size: %s tokens is too large", arg);
		o->block_size = (uint32_t)v;
		return 0;
	case KVP_OPT_UTILIZATION:
		if (kvp_parse_fraction(arg, &d))
			return kvp_cli_usage_error(cmd, "--utilization: expected a fraction in (0, 1] such as 0.9 or 90%%, got '%s'", arg);
		o->utilization = d;
		return 0;
	case KVP_OPT_CONTEXT:
		return kvp_cli_tokens(cmd, "--context", arg, &o->context) ? 0 : KVP_EXIT_USAGE;
	case KVP_OPT_BATCH:
		return kvp_cli_u64(cmd, "--batch", arg, 1, &o->batch) ? 0 : KVP_EXIT_USAGE;
	case KVP_OPT_MAX_BATCHED_TOKENS:
		return kvp_cli_tokens(cmd, "--max-batched-tokens", arg, &o->max_batched_tokens)
			? 0 : KVP_EXIT_USAGE;
	case KVP_OPT_MAX_NUM_SEQS:
		if (!kvp_cli_u64(cmd, "--max-num-seqs", arg, 1, &v))
			return KVP_EXIT_USAGE;
		o->max_num_seqs = (uint32_t)v;
		return 0;
	case KVP_OPT_WEIGHTS_BYTES:
		o->has_weights = true;
		return kvp_cli_bytes(cmd, "--weights-bytes", arg, &o->weights_bytes) ? 0 : KVP_EXIT_USAGE;
	case KVP_OPT_ACTIVATION_BYTES:
		o->has_activation = true;
		return kvp_cli_bytes(cmd, "--activation-bytes", arg, &o->activation_bytes) ? 0 : KVP_EXIT_USAGE;
	case KVP_OPT_OVERHEAD_BYTES:
		o->has_overhead = true;
		return kvp_cli_bytes(cmd, "--overhead-bytes", arg, &o->overhead_bytes) ? 0 : KVP_EXIT_USAGE;
	case KVP_OPT_GPU_MEMORY:
		o->has_gpu_memory = true;
		if (!kvp_cli_bytes(cmd, "--gpu-memory", arg, &o->gpu_memory_bytes))
			return KVP_EXIT_USAGE;
		if (o->gpu_memory_bytes == 0)
			return kvp_cli_usage_error(cmd, "--gpu-memory: must be positive");
		return 0;
	case KVP_OPT_DISABLE_HYBRID:
		o->hybrid_off = true;
		return 0;
	case KVP_OPT_FORMAT:
		if (!kvp_format_parse(arg, &c->format))
			return kvp_cli_usage_error(cmd, "--format: expected table, json or csv, got '%s'", arg);
		return 0;
	default:
		return 1;
	}
}

void kvp_cli_progress(void *ctx, uint64_t done, uint64_t total)
{
	struct kvp_cli_progress *ps = ctx;
	if (done < ps->last)
		ps->tenth = 0; /* the next row */
	ps->last = done;
	unsigned now = total ? (unsigned)((double)done / (double)total * 10) : 10;
	if (now <= ps->tenth)
		return;
	ps->tenth = now;
	char t1[64], t2[64];
	kvp_format_u64(done, t1, sizeof t1);
	kvp_format_u64(total, t2, sizeof t2);
	fprintf(stderr, "%s: %s of %s requests drawn\n", ps->cmd, t1, t2);
}

/* arrivals over time simulate about 1 us per request and row
 * (bench/frag-bench.sh, as KVP_CLI_FRAG_US_PER_REQUEST_ROW) */
#define FRAG_US_PER_ARRIVAL_ROW 1.0

double kvp_cli_frag_estimate_s(const struct kvp_frag_opts *fo, size_t nblock, bool over_time,
			       const struct kvp_workload *w, size_t *rows)
{
	size_t nb = nblock ? nblock : 7, nfit = (size_t)fo->fit[0] + fo->fit[1], est_rows = 0;
	for (int p = 0; p < KVP_FRAG_POLICY_COUNT; p++) {
		if (fo->has_policies && !fo->policy[p])
			continue;
		if (p < KVP_FRAG_POLICY_PAGED)
			est_rows += nfit;
		else if (p == KVP_FRAG_POLICY_PAGED || w->prefix_tokens)
			est_rows += nb; /* paged-shared: with a prefix */
	}
	*rows = est_rows;
	return (double)(w->arrival_s && !(fo->arrival_rate > 0) ? w->narrival : fo->requests) *
	       (double)est_rows * 1e-6 *
	       (over_time ? FRAG_US_PER_ARRIVAL_ROW : KVP_CLI_FRAG_US_PER_REQUEST_ROW);
}

int kvp_cli_apply_model_options(const struct kvp_cli_common *c, const char *cmd,
				struct kvp_model *m)
{
	if (c->weights_dtype == KVP_DTYPE_AUTO)
		return 0;
	if (m->file_embed_bytes || m->file_dense_bytes || m->file_shared_bytes ||
	    m->file_routed_bytes)
		return kvp_cli_usage_error(cmd, "--weights-dtype: %s is a GGUF file, whose tensor "
					   "types fix its weight bytes (read exactly); to size "
					   "another quantization, give that quantization's GGUF or "
					   "the model's config.json", m->path);
	enum kvp_dtype before = m->weights_dtype;
	kvp_model_set_weights_dtype(m, c->weights_dtype); /* checked when parsed */
	m->weights_what_if = true;
	m->weights_checkpoint_dtype = before;
	snprintf(m->weights_source, sizeof m->weights_source, "--weights-dtype %s",
		 kvp_dtype_name(c->weights_dtype));
	return 0;
}

/* The start of the warning an --engine-version outside every modelled
 * range raises: kvp_cli_model_warnings gives it its own code. */
static const char engine_version_prefix[] = "--engine-version ";

/* --engine-version outside every entry of the engine's file: say which
 * modelled version stands in, on stderr now and (through the model's
 * warnings, which every command lists in JSON) under "warnings".  A version
 * no entry can stand in for is an error here, as the budget would say. */
static int engine_version_warning(const struct kvp_cli_common *c, const char *cmd,
				  struct kvp_model *m)
{
	const struct kvp_budget_opts *o = &c->opts;
	struct kvp_engine_model e;
	struct kvp_error err = {0};
	if (o->engine == KVP_ENGINE_GENERIC || o->engine_model || !o->engine_version)
		return 0;
	if (kvp_engine_model_load(kvp_engine_name(o->engine), o->engine_version, &e, &err))
		return kvp_cli_error(cmd, &err);
	char msg[KVP_WARNING_MAX], shown[KVP_TERM_SIZE(KVP_WARNING_MAX)];
	if (e.time_from[0]) {
		/* an entry without time data of its own (engine.h time_from) */
		snprintf(msg, sizeof msg, "%s%s: %s %s has no time data of its own; its times "
			 "use %s's (%s), the band on them doubled each way", engine_version_prefix,
			 o->engine_version, e.kind, e.version, e.time_from, e.path);
		fprintf(stderr, "kvplan %s: warning: %s\n", cmd,
			kvp_term_text(shown, sizeof shown, msg));
		if (m->num_warnings < KVP_MODEL_WARNINGS)
			snprintf(m->warnings[m->num_warnings++], KVP_WARNING_MAX, "%s", msg);
	}
	if (!e.version_nearest)
		return 0;
	char spread[32] = "nothing";
	if (e.unmodelled_version_spread_bytes)
		kvp_format_bytes(e.unmodelled_version_spread_bytes, spread, sizeof spread);
	snprintf(msg, sizeof msg, "%s%s: no modelled %s version covers it; the nearest, %s, is "
		 "used (%s), and the band widens by %s each way", engine_version_prefix,
		 o->engine_version, e.kind, e.version, e.path, spread);
	fprintf(stderr, "kvplan %s: warning: %s\n", cmd, kvp_term_text(shown, sizeof shown, msg));
	if (m->num_warnings < KVP_MODEL_WARNINGS)
		snprintf(m->warnings[m->num_warnings++], KVP_WARNING_MAX, "%s", msg);
	return 0;
}

int kvp_cli_load(const struct kvp_cli_common *c, const char *cmd, struct kvp_model *m,
		 struct kvp_gpu *g, bool need_gpu)
{
	struct kvp_error err = {0};
	int rc;
	if (!c->model)
		return kvp_cli_usage_error(cmd, "--model is required");
	if (need_gpu && !c->gpu && !c->opts.has_gpu_memory)
		return kvp_cli_usage_error(cmd, "--gpu (or --gpu-memory) is required");
	if ((c->spec_draft || c->spec_accept || c->spec_accept_rate || c->spec_acceptance) &&
	    strcmp(cmd, "budget") != 0 &&
	    strcmp(cmd, "perf") != 0)
		return kvp_cli_usage_error(cmd, "--spec-draft and --spec-accept are for budget and perf");
	if (kvp_model_load(c->model, m, &err))
		return kvp_cli_error(cmd, &err);
	if (c->preprocessor_config && kvp_hf_preprocessor_load(c->preprocessor_config, m, &err))
		return kvp_cli_error(cmd, &err);
	/* a warning quotes the file: control characters shown, not sent */
	for (uint32_t i = 0; i < m->num_warnings && i < KVP_MODEL_WARNINGS; i++) {
		char shown[KVP_TERM_SIZE(KVP_WARNING_MAX)];
		fprintf(stderr, "kvplan %s: %s\n", cmd,
			kvp_term_text(shown, sizeof shown, m->warnings[i]));
	}
	if ((rc = kvp_cli_apply_model_options(c, cmd, m)))
		return rc;
	if ((rc = engine_version_warning(c, cmd, m)))
		return rc;
	/* an engine kvplan times but does not budget (llama.cpp): say so, on
	 * stderr and under "warnings" */
	if (kvp_engine_time_only(c->opts.engine)) {
		char msg[KVP_WARNING_MAX];
		snprintf(msg, sizeof msg, "--engine %s: kvplan models its step times only; the "
			 "memory figures are the generic engine's, not %s's own allocation",
			 kvp_engine_name(c->opts.engine), kvp_engine_name(c->opts.engine));
		fprintf(stderr, "kvplan %s: warning: %s\n", cmd, msg);
		if (m->num_warnings < KVP_MODEL_WARNINGS)
			snprintf(m->warnings[m->num_warnings++], KVP_WARNING_MAX, "%s", msg);
	}
	/* the default engine needs its profile (a KVPLAN_DATA folder may have
	 * none): the error, and the way to plan without one */
	if (!c->engine_given && c->opts.engine != KVP_ENGINE_GENERIC && !c->opts.engine_model &&
	    !c->opts.engine_version) {
		struct kvp_engine_model e;
		if (kvp_engine_model_load(kvp_engine_name(c->opts.engine), NULL, &e, &err)) {
			rc = kvp_cli_error(cmd, &err);
			fprintf(stderr, "kvplan %s: %s is the default engine; --engine generic plans "
				"without an engine profile\n", cmd, kvp_engine_name(c->opts.engine));
			return rc;
		}
	}
	if (g) {
		memset(g, 0, sizeof *g);
		if (c->gpu) {
			if (kvp_gpu_load(c->gpu, g, &err))
				return kvp_cli_error(cmd, &err);
		} else {
			snprintf(g->name, sizeof g->name, "custom");
		}
	}
	return 0;
}

int kvp_cli_speculative(struct kvp_cli_common *c, const char *cmd, const struct kvp_model *m)
{
	struct kvp_error err = {0};
	const char *rate = c->spec_accept_rate ? c->spec_accept_rate : c->spec_accept;
	const char *given = c->spec_accept_rate ? "--spec-accept-rate"
			    : c->spec_accept ? "--spec-accept" : "--spec-acceptance";
	if (c->spec_accept_rate && c->spec_accept)
		return kvp_cli_usage_error(cmd, "--spec-accept is --spec-accept-rate's older name: "
					   "give one");
	if (rate && c->spec_acceptance)
		return kvp_cli_usage_error(cmd, "%s (the per-position rate) and --spec-acceptance "
					   "(accepted / drafted) say one thing two ways: give one",
					   given);
	if (!c->spec_draft) {
		if (rate || c->spec_acceptance)
			return kvp_cli_usage_error(cmd, "%s needs --spec-draft", given);
		return 0;
	}
	/* budget sizes memory (the draft's weights and KV), which the acceptance
	 * does not change: it is not asked for there (0 stands in, and budget
	 * reads it nowhere); perf's speed-up needs it */
	if (!rate && !c->spec_acceptance && strcmp(cmd, "budget") == 0)
		rate = "0";
	/* the share replaces the rate parsed as 0 */
	if (kvp_speculative_parse(c->spec_draft, c->spec_acceptance ? "0" : rate, m,
				  &c->speculative, &err) ||
	    (c->spec_acceptance &&
	     kvp_speculative_parse_acceptance(c->spec_acceptance, &c->speculative, &err)))
		return kvp_cli_error(cmd, &err);
	c->opts.speculative = &c->speculative;
	return 0;
}

void kvp_cli_write_rows(FILE *f, enum kvp_format fmt, struct kvp_record *const *rows, size_t n,
			const char *wrap)
{
	if (fmt == KVP_FORMAT_CSV) {
		kvp_write_csv(f, rows, n);
		return;
	}
	if (fmt == KVP_FORMAT_TABLE) {
		kvp_write_table(f, rows, n);
		return;
	}
	if (!wrap && n == 1) {
		kvp_write_json(f, rows[0]);
		return;
	}
	kvp_write_json_rows(f, wrap ? wrap : "rows", rows, n);
}

void kvp_cli_check_context(struct kvp_cli_warnings *w, const char *cmd, const char *what,
			   uint64_t tokens, const struct kvp_model *m)
{
	if (!m->max_context || tokens <= m->max_context || w->n == KVP_CLI_MAX_WARNINGS)
		return;
	char t1[32], t2[32];
	kvp_format_u64(tokens, t1, sizeof t1);
	kvp_format_u64(m->max_context, t2, sizeof t2);
	snprintf(w->code[w->n], sizeof w->code[0], "context_beyond_model_max");
	snprintf(w->message[w->n], sizeof w->message[0],
		 "%s: %s tokens is beyond the maximum context of %s, %s tokens "
		 "(the memory is planned; the model was not trained that long)", what, t1, m->name, t2);
	char shown[KVP_TERM_SIZE(sizeof w->message[0])];
	fprintf(stderr, "kvplan %s: warning: %s\n", cmd,
		kvp_term_text(shown, sizeof shown, w->message[w->n]));
	w->n++;
}

void kvp_cli_model_warnings(struct kvp_cli_warnings *w, const struct kvp_model *m)
{
	for (uint32_t i = 0; i < m->num_warnings && i < KVP_MODEL_WARNINGS; i++) {
		if (w->n == KVP_CLI_MAX_WARNINGS)
			return;
		snprintf(w->code[w->n], sizeof w->code[0], "%s",
			 strncmp(m->warnings[i], engine_version_prefix,
				 sizeof engine_version_prefix - 1) == 0
			 ? "engine_version_unmodelled" : "model_file");
		snprintf(w->message[w->n], sizeof w->message[0], "%s", m->warnings[i]);
		w->n++;
	}
}

bool kvp_cli_warnings_to_record(const struct kvp_cli_warnings *w, struct kvp_record *r)
{
	if (!kvp_record_list(r, "warnings"))
		return false;
	for (size_t i = 0; i < w->n; i++) {
		struct kvp_record *x = kvp_record_new();
		if (!x || !kvp_record_str(x, "code", w->code[i]) ||
		    !kvp_record_str(x, "message", w->message[i])) {
			kvp_record_free(x);
			return false;
		}
		if (!kvp_record_push(r, "warnings", x))
			return false;
	}
	return true;
}

int kvp_cli_set_lengths(const char *cmd, const char *prompt, const char *output, bool named,
			struct kvp_workload *w)
{
	if (!prompt || !output)
		return kvp_cli_usage_error(cmd, "--prompt and --output go together");
	struct kvp_error err = {0};
	struct kvp_dist p = {0}, q = {0};
	if (kvp_dist_parse(prompt, "--prompt", &p, &err) ||
	    kvp_dist_parse(output, "--output", &q, &err)) {
		kvp_dist_free(&p);
		char buf[800];
		kvp_error_format(&err, buf, sizeof buf);
		return kvp_cli_usage_error(cmd, "%s", buf + strlen("error: "));
	}
	kvp_dist_free(&w->prompt);
	kvp_dist_free(&w->output);
	w->prompt = p;
	w->output = q;
	w->paired = false;
	if (!named)
		snprintf(w->name, sizeof w->name, "custom");
	return -1;
}
