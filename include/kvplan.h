/* kvplan.h: the public C API of libkvplan, the KV-cache memory and latency
 * planner behind the `kvplan` command.  This header is the whole contract:
 * every exported symbol is declared here (include/kvplan.sym lists them and
 * `make check` fails when the built library exports anything else).
 *
 * Shape of the API.  Opaque handles for a model, a GPU, an engine's memory
 * model and a workload, each loaded once (a model from a profile name, a
 * YAML path, a Hugging Face config.json or a GGUF file) and read-only
 * afterwards.  Calls take the handles and an options struct and answer in
 * one of two ways:
 *
 *   - kvplan_budget() fills a typed result struct: the hot path ("how many
 *     more sequences fit?" asked thousands of times a second by an admission
 *     controller) makes no text and parses nothing (bench/api-bench.c);
 *   - kvplan_budget_json(), kvplan_perf_json(), kvplan_frag_json() and
 *     kvplan_size_json() return the record the CLI prints with --format
 *     json, with the same field names and units (man/kvplan.1, MACHINE
 *     OUTPUT; its schema_version rules apply).  A result struct for every command
 *     would freeze dozens of fields into the ABI; the JSON text carries all
 *     of them and grows without a new symbol.
 *
 * Options are typed (not a JSON request) because they are few, checked by
 * the compiler, and cost nothing to pass on the hot path.  ABI versioning:
 * every options and result struct opens with `size`, which the caller sets
 * to sizeof the struct it was compiled with (kvplan_*_init does it); the
 * library reads and writes only the fields inside `size`, so fields are only
 * ever appended and an older caller keeps working with a newer library.
 *
 * Errors: every call that can fail returns a kvplan_status (0 ok) and, when
 * `err` is not NULL, fills it with the message kvplan prints, located
 * ("profiles/models/x.yaml:12:5: error: num_kv_heads: must divide
 * num_heads").  The library never exits, never prints and never reads
 * standard input.
 *
 * Threads: there is no global mutable state reachable from this API but a
 * mutex-guarded list of files read (base/input-file.c).  Handles are
 * immutable after loading, so one handle may be used by several threads at
 * once; each call allocates what it needs.
 *
 * Profile names resolve as in kvplan(1): $KVPLAN_PROFILES, then
 * $KVPLAN_DATA, or the source tree for a program run from the build tree,
 * or the installed data directory.
 *
 * Memory: handles are freed with their *_free; strings the library returns
 * are freed with kvplan_free.  Byte counts are uint64_t bytes; token counts
 * are tokens.  See kvplan(3). */
#ifndef KVPLAN_H
#define KVPLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(KVPLAN_BUILD) && defined(__GNUC__)
#define KVPLAN_API __attribute__((visibility("default")))
#else
#define KVPLAN_API
#endif

/* Raised when a declaration here changes incompatibly (never, we hope). */
#define KVPLAN_API_VERSION 1

/* Status codes; the same numbers as kvplan's internal statuses. */
typedef enum kvplan_status {
	KVPLAN_OK = 0,
	KVPLAN_ERR_USAGE = 1,      /* a bad option value */
	KVPLAN_ERR_IO = 2,         /* a file could not be read */
	KVPLAN_ERR_PARSE = 3,      /* malformed YAML or JSON */
	KVPLAN_ERR_INVALID = 4,    /* a wrong, missing or inconsistent value */
	KVPLAN_ERR_OVERFLOW = 5,   /* a number too large for the arithmetic */
	KVPLAN_ERR_NOT_FOUND = 6,  /* a profile name that resolves to no file */
	KVPLAN_ERR_NOMEM = 7,
	KVPLAN_ERR_INTERNAL = 8    /* a bug in kvplan, never the input */
} kvplan_status;

/* A located error.  message is the whole line kvplan prints after
 * "kvplan CMD: " (path:line:col: error: field: text); the parts are also
 * given alone: path "" and line/col 0 when unknown. */
typedef struct kvplan_error {
	int status;                /* a kvplan_status */
	char message[1400];
	char path[512];
	int line, col;             /* 1-based */
	char field[128];
} kvplan_error;

typedef struct kvplan_model kvplan_model;
typedef struct kvplan_gpu kvplan_gpu;
typedef struct kvplan_engine kvplan_engine;
typedef struct kvplan_workload kvplan_workload;

/* "0.1.0": the version of the library (the package's). */
KVPLAN_API const char *kvplan_version(void);
/* "invalid input", ...: a status's name; never NULL. */
KVPLAN_API const char *kvplan_status_str(int status);
/* Free a string the library returned (NULL is fine). */
KVPLAN_API void kvplan_free(void *p);

/* Load a model: a profile name ("llama-3.1-8b"), a kvplan YAML file, a
 * Hugging Face config.json or a GGUF file.  *out is set on success, NULL on
 * failure. */
KVPLAN_API kvplan_status kvplan_model_load(const char *name_or_path, kvplan_model **out,
					   kvplan_error *err);
KVPLAN_API void kvplan_model_free(kvplan_model *m);
/* The model's name, its longest context in tokens, and the importer's
 * warnings (what kvplan prints on stderr when loading it): index i of
 * kvplan_model_warning_count, else NULL. */
KVPLAN_API const char *kvplan_model_name(const kvplan_model *m);
KVPLAN_API uint64_t kvplan_model_max_context(const kvplan_model *m);
KVPLAN_API size_t kvplan_model_warning_count(const kvplan_model *m);
KVPLAN_API const char *kvplan_model_warning(const kvplan_model *m, size_t i);

/* Load a GPU profile by name or path. */
KVPLAN_API kvplan_status kvplan_gpu_load(const char *name_or_path, kvplan_gpu **out,
					 kvplan_error *err);
KVPLAN_API void kvplan_gpu_free(kvplan_gpu *g);
KVPLAN_API const char *kvplan_gpu_name(const kvplan_gpu *g);
KVPLAN_API uint64_t kvplan_gpu_memory_bytes(const kvplan_gpu *g);

/* Load an engine's memory policy: "generic", "vllm", "sglang" or "trtllm",
 * at `version` (NULL or "": the newest modelled; profiles/engines/). */
KVPLAN_API kvplan_status kvplan_engine_load(const char *name, const char *version,
					    kvplan_engine **out, kvplan_error *err);
KVPLAN_API void kvplan_engine_free(kvplan_engine *e);
KVPLAN_API const char *kvplan_engine_name(const kvplan_engine *e);
/* The version loaded ("" for generic). */
KVPLAN_API const char *kvplan_engine_version(const kvplan_engine *e);

/* The budget's options: those of `kvplan budget` (kvplan(1)).  Zero means
 * "the default" for every number; NULL for every string. */
typedef struct kvplan_budget_opts {
	uint32_t size;                 /* sizeof(kvplan_budget_opts): the version */
	uint32_t tp, pp, dp, ep;       /* 0: 1, 1, none, none */
	uint32_t num_gpus;             /* --num-gpus; 0: tp x pp x dp */
	uint64_t context;              /* tokens per sequence; 0: the model's max */
	uint64_t batch;                /* sequences; 0: 1 */
	double utilization;            /* 0: the engine's default */
	uint32_t block_size;           /* tokens; 0: the engine's */
	uint32_t max_num_seqs;         /* 0: the engine's */
	uint64_t max_batched_tokens;   /* 0: the engine's */
	const char *dtype;             /* serving dtype; NULL: the checkpoint's */
	const char *kv_dtype;          /* NULL: the serving dtype */
	int disable_hybrid_kv;         /* vLLM --disable-hybrid-kv-cache-manager */
	/* overrides of the modelled terms, each used only when its bit is in
	 * `set` (zero bytes is a real what-if: --overhead-bytes 0B) */
	uint32_t set;                  /* KVPLAN_SET_* */
	uint64_t gpu_memory_bytes, weights_bytes, activation_bytes, overhead_bytes;
} kvplan_budget_opts;

#define KVPLAN_SET_GPU_MEMORY 1u   /* --gpu-memory (must be > 0) */
#define KVPLAN_SET_WEIGHTS 2u      /* --weights-bytes */
#define KVPLAN_SET_ACTIVATION 4u   /* --activation-bytes */
#define KVPLAN_SET_OVERHEAD 8u     /* --overhead-bytes */

/* Set o to the defaults (all zero) and o->size. */
KVPLAN_API void kvplan_budget_opts_init(kvplan_budget_opts *o);

/* One GPU's budget (the worst under tp/pp).  Field names follow the JSON
 * output's. */
typedef struct kvplan_budget_result {
	uint32_t size;                 /* sizeof(kvplan_budget_result): set by the caller */
	int fits;                      /* batch sequences of context tokens fit */
	int weights_fit;               /* weights + activations + overhead fit at all */
	uint32_t block_size;
	uint64_t context, batch;
	uint64_t kv_bytes_per_token;   /* on this GPU, all its layers */
	uint64_t kv_bytes_per_sequence;/* pool bytes one sequence of context takes */
	uint64_t kv_bytes;             /* exact KV of batch sequences */
	uint64_t gpu_memory_bytes, usable_bytes, weights_bytes, activation_bytes,
		 overhead_bytes, kv_pool_bytes;
	uint64_t num_blocks, max_tokens, max_sequences;
	uint64_t max_sequences_low, max_sequences_high;  /* the uncertainty band */
} kvplan_budget_result;

/* Compute the budget of model m on GPU g (NULL when KVPLAN_SET_GPU_MEMORY
 * is given) under engine e (NULL: generic).  Not fitting is not a failure:
 * out->fits is 0.  Errors: USAGE (a dtype name, a size too small), INVALID
 * (a split the model refuses), OVERFLOW. */
KVPLAN_API kvplan_status kvplan_budget(const kvplan_model *m, const kvplan_gpu *g,
				       const kvplan_engine *e, const kvplan_budget_opts *opts,
				       kvplan_budget_result *out, kvplan_error *err);

/* The same budget as `kvplan budget --format json` prints it (without the
 * "warnings" list and the inverse answers): *json is malloc'd, free it with
 * kvplan_free. */
KVPLAN_API kvplan_status kvplan_budget_json(const kvplan_model *m, const kvplan_gpu *g,
					    const kvplan_engine *e, const kvplan_budget_opts *opts,
					    char **json, kvplan_error *err);

/* `kvplan perf`'s options beyond the budget's (whose context and batch it
 * replaces). */
#define KVPLAN_PERF_MAX_BATCHES 64
typedef struct kvplan_perf_opts {
	uint32_t size;                 /* sizeof(kvplan_perf_opts) */
	uint64_t prompt;               /* tokens; 0: the budget's context, else 1024 */
	uint64_t output;               /* tokens; 0: 256 */
	const uint64_t *batches;       /* sequences per row; NULL: one row of 1 */
	size_t nbatch;                 /* at most KVPLAN_PERF_MAX_BATCHES */
	/* read only when size covers them (an older caller's struct ends before) */
	double decode_bw_efficiency;   /* in (0, 1] (--decode-bw-efficiency); 0: the
					* calibration's, else the GPU profile's */
	double prefill_flops_efficiency; /* (--prefill-flops-efficiency) the same */
	const char *calibration;       /* a calibration of g (--calibration: kvbench --out,
					* a table, `kvplan calibrate`'s file); NULL: none.
					* The record's "calibration" names it */
	/* read only when size covers it */
	const char *calibration_kernel; /* a second calibration of the other kind
					* (--calibration twice): a kvbench run beside an
					* engine calibration, whose decode figure sets
					* kv_bw_efficiency unless the engine calibration
					* fitted its own; two of one kind: USAGE.  NULL:
					* none.  The record's "calibration_kernel" names
					* the kvbench run */
} kvplan_perf_opts;

KVPLAN_API void kvplan_perf_opts_init(kvplan_perf_opts *o);

/* Time to first token, time per output token and throughput of one replica
 * on GPU g (needed: its bandwidth and FLOP/s), as `kvplan perf --format
 * json` prints it (rows under "rows"; no "warnings"). */
KVPLAN_API kvplan_status kvplan_perf_json(const kvplan_model *m, const kvplan_gpu *g,
					  const kvplan_engine *e, const kvplan_budget_opts *opts,
					  const kvplan_perf_opts *perf, char **json,
					  kvplan_error *err);

/* A workload (request lengths, arrivals, a shared prefix): a profile name
 * ("chat") or a kvplan workload YAML file (kvplan-profiles(5)). */
KVPLAN_API kvplan_status kvplan_workload_load(const char *name_or_path, kvplan_workload **out,
					      kvplan_error *err);
/* A lengths file of `kvplan frag --lengths` (prompt and output tokens a
 * line, an arrival time as a third column). */
KVPLAN_API kvplan_status kvplan_workload_load_lengths(const char *path, kvplan_workload **out,
						      kvplan_error *err);
KVPLAN_API void kvplan_workload_free(kvplan_workload *w);

/* `kvplan frag`'s options beyond the budget's (whose context it replaces
 * by max_len).  Zero means the default. */
#define KVPLAN_FRAG_MAX_BLOCK_SIZES 32
typedef struct kvplan_frag_opts {
	uint32_t size;                 /* sizeof(kvplan_frag_opts) */
	uint64_t max_len;              /* tokens; 0: the workload's, the context, the model's */
	uint64_t requests;             /* 0: 100,000 */
	uint64_t seed;                 /* 0: 1 */
	int64_t warmup;                /* requests before measuring; < 0: a tenth */
	const uint32_t *block_sizes;   /* the paged rows' blocks; NULL: the defaults */
	size_t nblock;                 /* at most KVPLAN_FRAG_MAX_BLOCK_SIZES */
	double arrival_rate;           /* requests/s; 0: a closed batch */
	double step_time_s;            /* with a rate or arrival times; 0: the perf model's */
} kvplan_frag_opts;

/* Set o to the defaults (warmup -1) and o->size. */
KVPLAN_API void kvplan_frag_opts_init(kvplan_frag_opts *o);

/* The paged-KV fragmentation simulator over workload w on the budget's KV
 * pool, as `kvplan frag --format json` prints it (rows, recommendation;
 * no prefix cache, no "warnings").  Can take seconds: 100,000 requests by
 * default.  A budget that leaves no pool is an answer (no rows). */
KVPLAN_API kvplan_status kvplan_frag_json(const kvplan_model *m, const kvplan_gpu *g,
					  const kvplan_engine *e, const kvplan_workload *w,
					  const kvplan_budget_opts *opts,
					  const kvplan_frag_opts *frag, char **json,
					  kvplan_error *err);

/* `kvplan size`'s options beyond the budget's: the search space, the
 * demand over the workload's, the cost basis.  Zero (NULL) means the
 * default, except latency_spread (set it with kvplan_size_opts_init). */
#define KVPLAN_SIZE_MAX_AXIS 8         /* entries of each list */
#define KVPLAN_SIZE_MAX_GPUS 64        /* GPUs of one search */
typedef struct kvplan_size_opts {
	uint32_t size;                 /* sizeof(kvplan_size_opts) */
	double rate;                   /* requests/s (--rate); 0: the workload's */
	uint64_t users;                /* concurrent users (--users); 0: the workload's */
	double ttft_s, tpot_s;         /* service levels (--ttft, --tpot); 0: the workload's */
	double percentile;             /* of the TTFT level, in (0, 100); 0: the workload's, else 50 */
	int queue_percentile;          /* the wait at the percentile too (--slo-percentile) */
	/* the axes searched, each at most KVPLAN_SIZE_MAX_AXIS entries */
	const uint32_t *tp;            /* tensor-parallel sizes; NULL: 1, 2, 4, 8 */
	size_t ntp;
	const uint32_t *pp, *dp, *ep;  /* NULL: 1 */
	size_t npp, ndp, nep;
	const char *const *kv_dtypes;  /* NULL: the budget options' kv_dtype */
	size_t nkv_dtypes;
	const uint64_t *max_num_seqs;  /* caps a replica schedules (0: none); NULL: none */
	size_t nmax_num_seqs;
	const uint32_t (*disagg)[2];   /* {P, D} prefill and decode instances, besides
					* colocated (--disagg); needs a rate */
	size_t ndisagg;
	const double *prices;          /* USD per GPU-hour, one per GPU of the list
					* (--price); NULL or 0: the profile's */
	const char *cost;              /* "cloud", "cloud:KIND" or "own"; NULL: "cloud" */
	double years, power_usd_per_kwh, pue, cost_utilization;  /* "own": 0, the defaults */
	uint32_t max_replicas;         /* 0: 1024 */
	double decode_bw_efficiency;   /* 0: the GPU profile's */
	double prefill_flops_efficiency;
	double latency_spread;         /* 0 to 10 (--latency-spread); < 0: not given (0) */
	uint32_t simulate;             /* the cheapest sized again on the simulator (--simulate) */
	int pareto_only;               /* only the Pareto front (--pareto) */
	/* read only when size covers them */
	const char *emit;              /* "vllm", "sglang" or "trtllm" (--emit): the
					* record's "emit" is that engine's command for
					* the cheapest; plans it cannot launch fail or
					* are refused as the CLI's; with no engine
					* handle, that engine (its newest version) is
					* planned with.  NULL: none */
	const char *calibration;       /* a calibration of the one GPU searched
					* (--calibration): its efficiencies and
					* latency spread where these options give none.
					* NULL: none */
	/* read only when size covers it */
	const char *calibration_kernel; /* a second calibration of the other kind,
					* as kvplan_perf_opts' */
} kvplan_size_opts;

/* Set o to the defaults (latency_spread -1, all else zero) and o->size. */
KVPLAN_API void kvplan_size_opts_init(kvplan_size_opts *o);

/* The purchase search of model m over workload w on each of the ngpu GPUs
 * (1 to KVPLAN_SIZE_MAX_GPUS handles, only read), as `kvplan size --gpus G1,G2,...
 * --format json` prints it: "configs" ranked by cost, "chosen" (null when
 * none meets, with "nearest"), "min_gpus", and "emit" when asked for and
 * one meets; no "warnings".
 * The budget options give the engine-side settings (dtypes, block size,
 * utilization, overrides); the split is searched, so their tp, pp, dp, ep,
 * num_gpus and max_num_seqs must be left 0 (the size options' lists set
 * them).  Nothing meeting the levels is an answer, not a failure; a
 * search can take seconds (a simulate of many configurations, longer).
 * Errors: USAGE (an option), INVALID (a workload the search cannot use). */
KVPLAN_API kvplan_status kvplan_size_json(const kvplan_model *m, kvplan_gpu *const *gpus,
					  size_t ngpu, const kvplan_engine *e,
					  const kvplan_workload *w, const kvplan_budget_opts *opts,
					  const kvplan_size_opts *size, char **json,
					  kvplan_error *err);

/* The names of the built-in profiles of `kind` ("models", "gpus",
 * "workloads", "engines"), one per line, sorted; *names is malloc'd (free
 * with kvplan_free). */
KVPLAN_API kvplan_status kvplan_profile_list(const char *kind, char **names, kvplan_error *err);

#ifdef __cplusplus
}
#endif

#endif
