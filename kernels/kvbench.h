/* kvbench.h: what the files of the decode harness share (kvbench.c the
 * entry point, kvbench-opts.c the options, kvbench-sweep.c the bandwidth
 * sweep, kvbench-capacity.c the capacity mode, kvbench-out.c the output
 * writers): the options, the run's context, the rows of results and the
 * functions one file calls in another.  A program's header, not a
 * library's: nothing here is installed. */
#ifndef KVBENCH_H
#define KVBENCH_H

#include "decode.h"
#include "out/output.h"
#ifndef KVBENCH_STANDALONE
#include "base/dist.h"
#include "read/profile.h"
#endif

#include <stdint.h>
#include <stdio.h>

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
	double k_mul, v_mul; /* --kv-scale: K's and V's amplitude factors */
	const char *gpu; /* profile for the predictions */
	const char *out;
	enum kvp_format format;
	char command[2048];
};

/* --------------------------------------------------------------- rows
 * Each point is a kvp_record (output.h): the JSON, CSV and table writers
 * are the library's; YAML, which kvplan's other commands only read, is
 * written from the same records (kvbench-out.c). */
struct rows {
	struct kvp_record **r;
	size_t n, cap;
};

/* -------------------------------------------------------------- backends */

struct ctx {
	struct opts *o;
	struct kvb_cpu *cpu;
	struct kvb_ceiling ceiling;
	int have_ceiling;
	void *flush;
	uint64_t flush_bytes;
	void *ceil_buf; /* CPU: the read ceiling measured again beside each point */
	double peak_gflops;     /* CPU: the multiply-add peak per core, best so far */
	FILE *stream;           /* --out's FILE.partial, a point at a time (out_prepare) */
	char *partial;          /* its name, FILE.partial */
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

/* kvbench-opts.c */
void usage(FILE *f);
int die_usage(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Returns -1 to go on, or an exit code. */
int parse_opts(int argc, char **argv, struct opts *o);

/* kvbench-out.c */
void rec_str(struct kvp_record *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
double rounded(double x, int decimals);
double num(const struct kvp_record *r, const char *key);
const char *str(const struct kvp_record *r, const char *key);
int rows_add(struct rows *rs, struct kvp_record *r);
void write_yaml(FILE *f, const struct kvp_record *env, const struct rows *rs);
void env_row(struct ctx *cx, struct kvp_record *env);
int out_is_csv(const char *path);
/* Before the run: refuse an --out that is not a regular file or is an input
 * (the --gpu profile), and open FILE.partial.  -1 to go on, else an exit code. */
int out_prepare(struct ctx *cx);
/* After the run: FILE written whole (atomic-file.h), FILE.partial removed.
 * -1 when written (or no --out), else an exit code (messages said). */
int out_finish(struct ctx *cx, const struct kvp_record *env, const struct rows *rs);
void out_point(struct ctx *cx, const struct kvp_record *row);
void stream_start(struct ctx *cx);
struct kvp_record *results_root(struct kvp_record *env, const struct rows *rs);
void print_results(FILE *f, struct ctx *cx, const struct kvp_record *root,
		   const struct rows *rs);

/* kvbench-sweep.c */
void make_lengths(const struct opts *o, int32_t batch, int32_t context, uint64_t seed,
		  int32_t *out);
void lengths_name(const struct opts *o, char *buf, size_t size);
int run_bandwidth(struct ctx *cx, struct rows *rs);

/* kvbench-capacity.c */
int run_capacity(struct ctx *cx, struct rows *rs);

#endif
