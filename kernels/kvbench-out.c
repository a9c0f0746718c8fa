/* kvbench-out.c: kvbench's output writers.  Each point is a kvp_record
 * (output.h): JSON, CSV and the text table are the library's writers, YAML
 * (which only kvplan's readers take) is written here from the same records.
 * Also the environment row (CPU, ISA, GPU, ceilings), the --out file
 * streamed a point at a time, and the tables printed at the end with the
 * legend of what each column means. */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "kvbench.h"
#include "rounds.h"
#include "base/atomic-file.h"
#include "base/input-file.h"
#include "base/units.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

void rec_str(struct kvp_record *r, const char *key, const char *fmt, ...)
{
	char buf[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	kvp_record_str(r, key, buf);
}

/* x to `decimals` places: rates and ratios carry no more than they mean. */
double rounded(double x, int decimals)
{
	double p = pow(10, decimals);
	return isfinite(x) ? round(x * p) / p : x;
}

double num(const struct kvp_record *r, const char *key)
{
	const struct kvp_value *v = kvp_record_get(r, key);
	return !v ? 0 : v->type == KVP_VALUE_U64 ? (double)v->u : v->type == KVP_VALUE_F64 ? v->f : 0;
}

const char *str(const struct kvp_record *r, const char *key)
{
	const struct kvp_value *v = kvp_record_get(r, key);
	return v && v->type == KVP_VALUE_STR ? v->s : "";
}

int rows_add(struct rows *rs, struct kvp_record *r)
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

/* Results format 2 (issue 37): the head says the file ends with a count of
 * its points, `point_count: N` (YAML) or `# point_count: N` (CSV), so a
 * file cut after a whole point is told from a whole one by its reader
 * (validate.c); a file without the head's mark is from an older kvbench. */
#define RESULTS_FORMAT 2

static void write_yaml_head(FILE *f, const struct kvp_record *env)
{
	fputs("# kvbench results: measured decode bandwidth or capacity, read by\n"
	      "# `kvplan validate` and `kvplan perf --calibration`.  A whole file ends\n"
	      "# with point_count (results_format 2); one without it is cut.\n"
	      "kvbench:\n", f);
	for (size_t i = 0; i < env->n; i++) {
		fprintf(f, "  %s: ", env->fields[i].name);
		yaml_value(f, &env->fields[i].v);
		fputc('\n', f);
	}
	fprintf(f, "  results_format: %d\n", RESULTS_FORMAT);
}

void write_yaml(FILE *f, const struct kvp_record *env, const struct rows *rs)
{
	write_yaml_head(f, env);
	fputs(rs->n ? "points:\n" : "points: []\n", f);
	write_points(f, rs);
	fprintf(f, "point_count: %zu\n", rs->n);
}

static void write_csv_mark(FILE *f)
{
	fprintf(f, "# kvbench results_format %d: a whole file ends with \"# point_count: N\"\n",
		RESULTS_FORMAT);
}

static void write_csv(FILE *f, const struct rows *rs)
{
	write_csv_mark(f);
	kvp_write_csv(f, rs->r, rs->n);
	fprintf(f, "# point_count: %zu\n", rs->n);
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
			case PERCENT: /* empty where the point has no such field */
				if (v)
					snprintf(buf, sizeof buf, "%.1f%%", 100 * x);
				else
					buf[0] = 0;
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

void env_row(struct ctx *cx, struct kvp_record *env)
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
	if (o->backend == BACKEND_CPU) {
		rec_str(env, "prefetch", "%s", kvb_cpu_prefetch_name(cx->cpu));
		if (cx->peak_gflops > 0)
			kvp_record_f64(env, "peak_gflops_per_core", rounded(cx->peak_gflops, 2));
	}
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

/* The --out file as the run goes: FILE.partial beside FILE, opened before
 * the run (a bad target is refused before any time is spent), its header
 * (YAML: the environment as it stands when the first point starts) and
 * then each point appended and flushed as it finishes, so a run killed by a
 * deadline keeps every point it finished there.  FILE itself, and so the
 * previous run's results, is not touched until the end, when main() writes
 * the whole file (the ceilings measured beside the points may have risen)
 * through the atomic writer and removes FILE.partial.  FILE.partial has no
 * point_count at its end, so `kvplan validate` refuses it as cut. */
int out_is_csv(const char *path)
{
	const char *dot = strrchr(path, '.');
	return dot && strcmp(dot, ".csv") == 0;
}

/* -1 when `path` may be written over, else an exit code (said). */
static int out_refuse(const char *flag, const char *path)
{
	struct stat sb;
	if (stat(path, &sb) != 0)
		return -1; /* nothing there yet (or a dangling link, replaced) */
	if (!S_ISREG(sb.st_mode)) {
		fprintf(stderr, "kvbench: %s %s: %s, not a regular file; kvbench writes its "
				"results to a file\n", flag, path, kvp_input_kind(sb.st_mode));
		return EXIT_USAGE;
	}
	if (kvp_input_is_input(sb.st_dev, sb.st_ino)) {
		fprintf(stderr, "kvbench: %s %s: is one of this run's inputs (the --gpu profile); "
				"not writing over it\n", flag, path);
		return EXIT_USAGE;
	}
	return -1;
}

int out_prepare(struct ctx *cx)
{
	const char *path = cx->o->out;
	int rc;
	if (!path)
		return -1;
	if ((rc = out_refuse("--out", path)) >= 0)
		return rc;
	size_t size = strlen(path) + sizeof ".partial";
	if (!(cx->partial = malloc(size))) {
		fprintf(stderr, "kvbench: out of memory\n");
		return EXIT_FAILED;
	}
	snprintf(cx->partial, size, "%s.partial", path);
	struct stat sb;
	if (lstat(cx->partial, &sb) == 0 && S_ISLNK(sb.st_mode)) {
		fprintf(stderr, "kvbench: --out %s: %s is a symbolic link; not writing through "
				"it\n", path, cx->partial);
		free(cx->partial);
		cx->partial = NULL;
		return EXIT_USAGE;
	}
	if ((rc = out_refuse("--out", cx->partial)) >= 0) {
		free(cx->partial);
		cx->partial = NULL;
		return rc;
	}
	/* never through a link, never blocking on a FIFO put there meanwhile */
	int fd = open(cx->partial, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
	if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode) || ftruncate(fd, 0) != 0)) {
		close(fd);
		fd = -1;
		errno = EINVAL;
	}
	if (fd < 0 || !(cx->stream = fdopen(fd, "w"))) {
		fprintf(stderr, "kvbench: --out %s: cannot write %s: %s\n", path, cx->partial,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		free(cx->partial);
		cx->partial = NULL;
		return EXIT_FAILED;
	}
	return -1;
}

int out_finish(struct ctx *cx, const struct kvp_record *env, const struct rows *rs)
{
	const char *path = cx->o->out;
	int rc = -1;
	if (cx->stream)
		fclose(cx->stream); /* what it holds is kept until FILE is whole */
	cx->stream = NULL;
	if (!path)
		return -1;
	if (rs->n == 0) {
		/* nothing measured: the previous results are worth more */
		fprintf(stderr, "kvbench: --out %s: no points, not written (a previous file "
				"there is as it was)\n", path);
		if (cx->partial)
			unlink(cx->partial);
		free(cx->partial);
		cx->partial = NULL;
		return -1;
	}
	struct kvp_afile a;
	struct kvp_error err = {0};
	if (kvp_afile_open(&a, path, &err) == KVP_STATUS_OK) {
		if (out_is_csv(path))
			write_csv(a.f, rs);
		else
			write_yaml(a.f, env, rs);
		kvp_afile_commit(&a, &err);
	}
	if (err.status) {
		fprintf(stderr, "kvbench: %s: %s%s%s\n", path, err.msg,
			cx->partial ? "; the points are in " : "", cx->partial ? cx->partial : "");
		rc = EXIT_FAILED;
	} else if (cx->partial) {
		unlink(cx->partial);
	}
	free(cx->partial);
	cx->partial = NULL;
	return rc;
}

static void out_open(struct ctx *cx, const struct kvp_record *env)
{
	if (!cx->stream)
		return;
	if (!out_is_csv(cx->o->out))
		write_yaml_head(cx->stream, env); /* "points:" comes with a point */
	else
		write_csv_mark(cx->stream);
	fflush(cx->stream);
}

void out_point(struct ctx *cx, const struct kvp_record *row)
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
void stream_start(struct ctx *cx)
{
	struct kvp_record *env = cx->o->out ? kvp_record_new() : NULL;
	if (!env)
		return;
	env_row(cx, env);
	out_open(cx, env);
	kvp_record_free(env);
}

/* ---------------------------------------------------------- the results */

/* The JSON root: {"kvbench": env, "points": [...]}, owning env and the
 * rows (rs keeps borrowed pointers). */
struct kvp_record *results_root(struct kvp_record *env, const struct rows *rs)
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

void print_results(FILE *f, struct ctx *cx, const struct kvp_record *root,
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
		{"compute_ratio", "of peak", PERCENT}, {"warm_gbps", "warm", COPY},
		{"warm_ratio", "of warm", PERCENT}, {"bound", "bound", COPY},
		{"ceiling_gbps", "ceil", COPY}, {"ratio", "of ceil", PERCENT},
		{"compute_gbps", "hot", COPY}, {"ratio_min", "of min", PERCENT},
		{"ratio_best", "best", PERCENT}, {"prediction_error", "planner", SIGNED_PERCENT},
		{"rounds_redone", "redone", COPY}, {"max_err", "max err", COPY},
		{"validated", "check", COPY},
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
		   "GF/s/core = 4 d FLOP per token and query head / median / threads (CPU); of peak =\n"
		   "GF/s/core / the multiply-add peak per core measured beside the point (%.2f GF/s at\n"
		   "best); warm = GB/s of the same decode over a cache of the same shape held in the\n"
		   "last-level cache (no flush, best of 5: the loops' own limit), of warm = GB/s / warm;\n"
		   "bound = compute when of warm exceeds of ceil, else memory; unclear when a plain read\n"
		   "of the warm cache's size ran under 1.25x the read ceiling (the cache did not hold it);\n"
		   "hot = GB/s of the same decode with every block the same one (L1: the loop's compute\n"
		   "ceiling, CPU); of min = GB/s / min(ceil, hot), the CPU's judgement;\n"
		   "ceil = that %s ceiling (the YAML's ceiling_gbps, ratio_ceiling: %s); best = the "
		   "fastest run's GB/s / the same ceiling (a best of runs too)\n",
		o->repeats, o->backend == BACKEND_CPU ? "read" : "copy", cx->peak_gflops,
		o->backend == BACKEND_CPU ? "read" : "copy", o->backend == BACKEND_CPU ? "read" : "copy");
	if (o->backend == BACKEND_CPU)
		fprintf(f, "redone = runs of the decode, read and hot rounds thrown away as preempted: "
			   "wall time over the\nbusiest thread's CPU time (or a thread's off-CPU time) "
			   "by more than %.0f%% of it, each run\nredone up to %d times "
			   "(rounds_preempted: rounds still preempted then)\n",
			100 * KVB_PREEMPT_FRAC, KVB_ROUND_REDOS);
	if (*str(rs->r[0], "predicted_on"))
		fprintf(f, "planner = (predicted - measured) / measured: the planner's time for the step "
			   "(its KV bytes on %s)\n", str(rs->r[0], "predicted_on"));
	fputc('\n', f);
	write_table(f, rs, cols, sizeof cols / sizeof cols[0]);
}
