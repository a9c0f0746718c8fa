/* frag.h: KV-cache fragmentation under four allocation policies, block-size
 * choice, prefix sharing and a prefix cache, measured by simulating requests
 * drawn from a workload (dist.h, workload.h).
 *
 * Legend: P = block size in tokens, p = prompt tokens (with any shared prefix),
 * o = output tokens, k = shared prefix tokens, B = live sequences.
 *
 * Time is counted in decode steps: a request admitted at step a holds p tokens
 * (its prefill is instantaneous), holds p + j tokens at step a + j and leaves
 * after step a + o.  The server is saturated: requests always wait, first come
 * first served, so what is measured is how many sequences the pool sustains.
 *
 *   contiguous-max      reserves max_len tokens per request, contiguously
 *   contiguous-request  reserves p + requested max tokens, contiguously
 *   paged               blocks of P tokens allocated as the sequence grows;
 *                       admission needs the prompt's blocks, a step that finds
 *                       no free block preempts the newest sequences (recompute)
 *   paged-shared        paged, and requests carrying the shared prefix share its
 *                       floor(k / P) full blocks (the partial block is copied)
 *
 * Contiguous reservations live in an address space with a first-fit or
 * best-fit allocator that coalesces holes; a request refused while enough
 * memory is free in total is external fragmentation.  Bytes come from the
 * model's layer list (kvp_frag_shape_from_spec), never recomputed here. */
#ifndef KVP_FRAG_H
#define KVP_FRAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memory/budget.h"
#include "base/error.h"
#include "model/model.h"
#include "out/output.h"
#include "read/workload.h"

enum kvp_frag_policy {
	KVP_FRAG_POLICY_CONTIGUOUS_MAX,
	KVP_FRAG_POLICY_CONTIGUOUS_REQUEST,
	KVP_FRAG_POLICY_PAGED,
	KVP_FRAG_POLICY_PAGED_SHARED,
	KVP_FRAG_POLICY_COUNT
};

enum kvp_frag_fit { KVP_FRAG_FIT_FIRST, KVP_FRAG_FIT_BEST };

const char *kvp_frag_policy_name(enum kvp_frag_policy p);
const char *kvp_frag_fit_name(enum kvp_frag_fit f);

/* ------------------------------------------------------------ shape */

#define KVP_FRAG_MAX_CLASSES 3

/* How one sequence's bytes grow with its tokens on one GPU: a class per kind
 * of per-token layer (full and MLA together; sliding; chunked), each with
 * its bytes per token and a representative layer for kvp_spec_layer_tokens,
 * plus fixed bytes per sequence (Mamba state). */
struct kvp_frag_shape {
	uint32_t nclass;
	uint64_t token_bytes[KVP_FRAG_MAX_CLASSES];
	/* of which hold tokens: token_bytes less the padding of vLLM's groups
	 * (kvp_frag_shape_vllm); 0: all of token_bytes */
	uint64_t used_token_bytes[KVP_FRAG_MAX_CLASSES];
	struct kvp_spec_layer layer[KVP_FRAG_MAX_CLASSES];
	uint64_t seq_bytes;
};

/* Group the spec's layers into classes.  INVALID when the model keeps no KV. */
kvp_status kvp_frag_shape_from_spec(const struct kvp_spec *s, struct kvp_frag_shape *out,
				    struct kvp_error *err);
/* vLLM's hybrid KV groups as kvp_budget_compute lays them out for budget b
 * (engine vllm): each kind's layers fill groups of group_size layer slots,
 * the last one padded, every slot a page of the largest layer's bytes per
 * token, so a class holds groups x group_size x those bytes per token (a
 * window capped as for any layer of its kind; with the hybrid manager off,
 * every layer keeps every token).  false, *out untouched, when the layer
 * list already counts the same (one kind of layer, no window) or for Mamba
 * hybrids (their page grows to hold a state: the layer list is kept). */
bool kvp_frag_shape_vllm(const struct kvp_budget *b, struct kvp_frag_shape *out);
/* A shape of plain tokens: one unbounded class of token_bytes (for tests and
 * for pools counted in tokens). */
void kvp_frag_shape_tokens(struct kvp_frag_shape *out, uint64_t token_bytes);
/* Bytes one sequence of n tokens holds in blocks of P tokens (P = 1: exact);
 * equals kvp_spec_seq_bytes for a shape from that spec.  UINT64_MAX on overflow. */
uint64_t kvp_frag_seq_bytes(const struct kvp_frag_shape *sh, uint64_t n, uint32_t block);
/* Bytes one sequence of n tokens fills with tokens (the padding of vLLM's
 * groups left out): kvp_frag_seq_bytes at P = 1 for a shape without
 * padding.  UINT64_MAX on overflow. */
uint64_t kvp_frag_used_bytes(const struct kvp_frag_shape *sh, uint64_t n);
/* Bytes per token of all classes together. */
uint64_t kvp_frag_token_bytes(const struct kvp_frag_shape *sh);

/* ------------------------------------------------------------ arena */

/* A contiguous address space [0, size) with first-fit and best-fit
 * allocation and coalescing of freed ranges (holes in two treaps: by address,
 * with the largest hole of each subtree, and by size). */
struct kvp_frag_arena;

/* by_size: also keep the holes ordered by size, which best fit needs (first
 * fit alone is cheaper without it). */
struct kvp_frag_arena *kvp_frag_arena_new(uint64_t size, bool by_size);
void kvp_frag_arena_free(struct kvp_frag_arena *a);
/* Reserve `size` bytes; false when no hole is large enough (or best fit is
 * asked of an arena without by_size). */
bool kvp_frag_arena_alloc(struct kvp_frag_arena *a, uint64_t size, enum kvp_frag_fit fit,
			  uint64_t *addr);
/* Give back a range obtained from kvp_frag_arena_alloc. */
void kvp_frag_arena_release(struct kvp_frag_arena *a, uint64_t addr, uint64_t size);
uint64_t kvp_frag_arena_free_bytes(const struct kvp_frag_arena *a);
uint64_t kvp_frag_arena_largest_hole(const struct kvp_frag_arena *a);
size_t kvp_frag_arena_holes(const struct kvp_frag_arena *a);

/* ------------------------------------------------------------ simulation */

#define KVP_FRAG_MAX_BLOCK_SIZES 32
#define KVP_FRAG_MAX_BLOCK 65536u
/* The most steps arrivals over time may span (2^53: a step's time i x dt
 * stays exact in a double, its index in a u64); a rate and step time whose
 * requests span more are refused. */
#define KVP_FRAG_MAX_STEPS 9007199254740992.0
#define KVP_FRAG_MAX_ROWS (4 + 2 * KVP_FRAG_MAX_BLOCK_SIZES)
/* How far a row's shares of the pool may stray from [0, 1] and their sum
 * from 1: the rounding of sums of up to 2^53 byte-steps in doubles. */
#define KVP_FRAG_SHARE_TOLERANCE 1e-9

struct kvp_frag_config {
	struct kvp_frag_shape shape;
	/* the paged rows' shape when it differs (vLLM's hybrid KV groups, padding
	 * included: kvp_frag_shape_vllm); the contiguous rows keep shape */
	struct kvp_frag_shape paged_shape;
	bool has_paged_shape;
	uint64_t pool_bytes;          /* the KV pool (kvp_budget_compute's kv_pool_bytes) */
	uint64_t max_len;             /* contiguous-max reservation, and the cap of p + o */
	uint64_t max_tokens;          /* contiguous-request: requested max tokens; 0: o itself */
	uint32_t block_sizes[KVP_FRAG_MAX_BLOCK_SIZES];
	size_t nblock;
	bool policy[KVP_FRAG_POLICY_COUNT];
	bool fit[2];                  /* contiguous allocators to run: first, best */
	uint64_t prefix_tokens;       /* k, prepended to the prompt of carriers */
	double prefix_fraction;       /* share of requests carrying it */
	uint64_t requests;            /* drawn from the workload */
	uint64_t warmup;              /* admissions before measuring */
	uint64_t seed;
	uint64_t max_seqs;            /* 0: only memory limits the live sequences */
	/* arrivals over time (frag-arrivals.c); arrival_rate 0: the saturated mode */
	double arrival_rate;          /* requests/s, Poisson */
	double step_time_s;           /* one scheduler step (prefill chunk + decode) */
	uint64_t max_batched_tokens;  /* tokens per step, prefill chunks and decodes */
	/* called (when set) after each chunk of requests drawn: done of total */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

/* Defaults: every policy, first and best fit, block sizes 1, 8, 16, 32, 64,
 * 128, 256, 100,000 requests, warm-up a tenth, seed 1. */
void kvp_frag_config_init(struct kvp_frag_config *c);

/* One row: a policy with an allocator (contiguous) or a block size (paged).
 * Averages are over the steps after warm-up while requests were waiting. */
struct kvp_frag_result {
	enum kvp_frag_policy policy;
	enum kvp_frag_fit fit;        /* contiguous */
	uint32_t block_size;          /* paged; 0 for contiguous */
	double used_fraction;         /* pool bytes holding real tokens */
	double internal_waste_fraction; /* reserved or allocated but empty */
	double external_waste_fraction; /* free while the next request was refused for
					 * want of a large enough hole */
	double free_fraction;         /* the rest: free, and enough for nobody waiting */
	double mean_sequences;        /* time-average of live sequences */
	uint64_t max_sequences;       /* floor(mean_sequences) */
	uint64_t peak_sequences;
	uint64_t refused_with_free_memory; /* requests refused at least once while the
					    * pool had enough free bytes in total */
	uint64_t preemptions;         /* paged: sequences evicted to let others grow */
	uint64_t dropped;             /* requests that cannot fit even alone */
	uint64_t metadata_bytes;      /* block table and allocator state, see frag-sim.c */
	uint64_t pool_bytes;          /* the KV pool the row ran in (metadata comes out of
				       * the same memory) */
	uint64_t num_blocks;          /* paged: pool / bytes of a block of every class */
	double waste_tokens_per_sequence;  /* internal waste in token slots per live sequence */
	double expected_waste_tokens;      /* paged closed form (P - 1) / 2 */
	double held_bytes_per_sequence;    /* pool bytes per live sequence */
	uint64_t measured_steps;
	uint64_t admitted;
	/* arrivals over time only (over_time), over the whole run */
	bool over_time;
	double arrival_rate;          /* requests/s asked for (replayed times: rows - 1 over
				       * their span; 0 when they all arrive at once) */
	double mean_queue_s;          /* arrival to first admission */
	double p99_queue_s;           /* within 1 % (a log histogram) */
	double mean_live_sequences;   /* time-average of running sequences */
	double mean_latency_s;        /* arrival to the last token */
	double throughput_rps;        /* completed / time to the last completion */
	uint64_t completed;
};

/* Arrivals over time, for one contiguous (res->policy, res->fit) or paged
 * (res->policy, res->block_size) row; contiguous rows reserve a request's
 * whole length in the arena at admission and never grow or preempt;
 * paged-shared holds the prefix's full blocks once while a carrier runs, and
 * a carrier admitted then starts past them (a prefix-cache hit):
 * requests arrive as a Poisson process of cfg->arrival_rate (seeded) or, when
 * that is 0 and the workload has arrival times (a length file's third
 * column), as its rows in order at their own times (Poisson gaps come from a
 * generator of their own seeded with seed ^ 0x5851f42d4c957f2d); they wait
 * first come first served, are admitted when their first prefill chunk's
 * blocks fit; each step of cfg->step_time_s gives every running sequence one
 * decode token and the prefills chunks of what is left of
 * cfg->max_batched_tokens; a sequence that finds no free block preempts the
 * newest (recompute: back to the front of the queue).  The run lasts until
 * every request has finished.  Memory: the running and waiting requests.
 * Errors: INVALID (rate, step time or budget not positive and finite, a
 * paged-shared row); NOMEM; INTERNAL when a conservation check fails. */
kvp_status kvp_frag_arrivals_run(const struct kvp_frag_config *cfg, const struct kvp_workload *w,
				 struct kvp_frag_result *res, struct kvp_error *err);

/* Run every configured row over the same request stream.  Rows are written
 * to out (up to max) in the order contiguous-max (first, best),
 * contiguous-request (first, best), paged (each P), paged-shared (each P);
 * paged-shared only when a prefix is configured.  Memory: the live set and a
 * fixed buffer of requests, whatever cfg->requests is.  Errors: INVALID for a
 * pool that holds no reservation at all, or bad settings; USAGE when no row
 * is left to simulate (paged-shared alone without a prefix); NOMEM; INTERNAL
 * when a row fails its conservation checks (shares of the pool outside
 * [0, 1] or not adding up to 1, tokens not conserved, more sequences live
 * than the pool holds): no rows are returned then. */
kvp_status kvp_frag_run(const struct kvp_frag_config *cfg, const struct kvp_workload *w,
			struct kvp_frag_result *out, size_t max, size_t *n,
			struct kvp_error *err);

/* Blocks under this many tokens cost decode kernels block-table lookups:
 * they are recommended only when they hold KVP_FRAG_SMALL_BLOCK_GAIN more
 * sequences than the best block of at least this size (frag-recommend.c
 * cites the figures). */
#define KVP_FRAG_SMALL_BLOCK 16u
#define KVP_FRAG_SMALL_BLOCK_GAIN 0.26

/* The recommended block size among the paged (or paged-shared, when present)
 * rows: rows are weighed by their mean sequences less the share of the pool
 * their metadata takes (a row whose metadata fills the pool is impossible);
 * the largest P within 1% of the best is taken, since a larger block means
 * fewer blocks to track, and a P under KVP_FRAG_SMALL_BLOCK must beat the
 * best larger block by KVP_FRAG_SMALL_BLOCK_GAIN.  Returns the row index, or
 * -1 (no paged row, or none possible), and writes the reason. */
int kvp_frag_recommend(const struct kvp_frag_result *rows, size_t n, char *reason, size_t size);

/* ------------------------------------------------------------ prefix cache */

struct kvp_frag_cache_config {
	uint64_t prefixes;            /* distinct prefixes, popularity Zipf(s) */
	double zipf_s;
	uint64_t prefix_tokens;       /* k */
	uint32_t block_size;          /* only full blocks are cached: floor(k / P) */
	uint64_t entry_bytes;         /* bytes of one cached prefix (its full blocks) */
	bool unique_first_token;      /* a timestamp or request id first: nothing repeats */
	double carrier_fraction;      /* F, in (0, 1]: share of requests carrying a prefix;
				       * only they look one up */
	uint64_t requests;            /* of the whole stream: F x requests look a prefix up */
	uint64_t seed;
};

struct kvp_frag_cache_result {
	uint64_t cache_bytes;
	uint64_t capacity_prefixes;   /* floor(cache_bytes / entry_bytes) */
	double hit_rate;              /* of the carriers' lookups */
	double saved_prefill_tokens_per_carrier; /* hit_rate * floor(k / P) * P */
	double saved_prefill_tokens;  /* per request of the stream: F times the above */
};

/* LRU over the prefixes for each cache size in sizes[0..n), looked up by
 * round(F x requests) carrier requests.  INVALID for no prefixes, a Zipf
 * exponent not above 0 or F outside (0, 1].  A prefix shorter than a block
 * caches nothing and is not an error: every hit rate is then 0. */
kvp_status kvp_frag_prefix_cache(const struct kvp_frag_cache_config *c, const uint64_t *sizes,
				 size_t n, struct kvp_frag_cache_result *out,
				 struct kvp_error *err);

/* ------------------------------------------------------------ runs */

/* What `kvplan frag` is asked beyond the budget's inputs. */
struct kvp_frag_opts {
	uint64_t max_len;             /* 0: the workload's, the budget's context, the model's */
	uint64_t max_tokens;          /* contiguous-request's requested max; 0: o itself */
	uint64_t requests, seed;
	uint64_t warmup;              /* when has_warmup; else a tenth of the requests */
	bool has_warmup;
	bool fit[2];                  /* first fit, best fit */
	bool policy[KVP_FRAG_POLICY_COUNT];
	bool has_policies;            /* policy[] replaces the default (all) */
	uint32_t block_sizes[KVP_FRAG_MAX_BLOCK_SIZES];
	size_t nblock;                /* 0: the budget's block_size, else the defaults */
	double arrival_rate;          /* > 0: arrivals over time */
	double step_time_s;           /* 0 with a rate: the perf model's decode step */
	void (*progress)(void *ctx, uint64_t done, uint64_t total); /* see kvp_frag_config */
	void *progress_ctx;
};

/* kvplan frag's defaults: 100,000 requests, seed 1, both allocators. */
void kvp_frag_opts_init(struct kvp_frag_opts *o);

/* The max_len a run uses: the option, the workload's, the budget's context,
 * the model's. */
uint64_t kvp_frag_max_len(const struct kvp_frag_opts *fo, const struct kvp_workload *w,
			  const struct kvp_budget_opts *o, const struct kvp_model *m);

/* One `kvplan frag` run: the budget at max_len gives the pool, every row
 * runs over the same requests, and the recommended block size. */
struct kvp_frag_report {
	const struct kvp_model *model;       /* borrowed */
	const struct kvp_workload *workload; /* borrowed */
	char gpu[KVP_NAME_MAX];
	struct kvp_budget budget;            /* at max_len */
	struct kvp_frag_config cfg;
	bool max_fits;                       /* one reservation of max_len fits the pool */
	struct kvp_frag_result rows[KVP_FRAG_MAX_ROWS];
	size_t nrows;
	int recommended;                     /* a row index, or -1 */
	char reason[512];
	/* arrivals: cfg.step_time_s is the perf model's decode step of step_batch
	 * sequences at step_context tokens (frag-plan.c says how they are chosen) */
	bool step_from_perf;
	uint64_t step_batch, step_context;
};

/* Run `kvplan frag` for model m on GPU g (o: the split, dtypes and budget
 * terms; its context is replaced by max_len) over workload w (w->max_len
 * becomes the max_len used).  *out is large: allocate it.  A budget that
 * leaves no KV pool is not a failure: budget.kv_pool_bytes is 0 and no row
 * runs.  Errors: the budget's, INVALID for a shared prefix that leaves no
 * room under max_len (field shared_prefix) and kvp_frag_run's. */
kvp_status kvp_frag_plan(const struct kvp_model *m, const struct kvp_gpu *g,
			 const struct kvp_budget_opts *o, struct kvp_workload *w,
			 const struct kvp_frag_opts *fo, struct kvp_frag_report *out,
			 struct kvp_error *err);

/* The output contract (man/kvplan.1, FRAG): one row as its record (new; NULL
 * when memory runs out), and the whole run as `kvplan frag --format json`
 * prints it without the prefix cache: the inputs, "rows" and
 * "recommendation" (false when memory runs out; r keeps what was added). */
struct kvp_record *kvp_frag_row_to_record(const struct kvp_frag_result *row);
bool kvp_frag_to_record(const struct kvp_frag_report *rep, struct kvp_record *r);

#endif
