/* budget.h: the memory budget of one GPU and the KV pool it leaves, the way
 * each serving engine sizes it (../shared/reference/peers.md section 2).
 *
 *   generic  pool = total * util - weights - activations - overhead;
 *            one block holds P tokens of every layer.
 *   vllm     pool = total * gpu_memory_utilization - weights - activation
 *            peak - non-torch overhead; V1 groups the layers of hybrid models
 *            into KV groups of equal size sharing one block pool
 *            (num_blocks = pool // page // group_size) and reports
 *            max concurrency with its worst-case per-request formula.
 *   sglang   pool = mem_fraction_static * free-before-load - weights;
 *            activations and graphs live in the remaining fraction; tokens
 *            = pool // cell_size (page size 1 by default).
 *   trtllm   pool = free_gpu_memory_fraction * (total - weights - activation
 *            peak - overhead); tokens_per_block 32.
 *
 * Every term can be overridden.  All byte counts are per GPU (the worst
 * pipeline stage).  Legend: n = tokens per sequence (context), B = sequences,
 * P = block size in tokens. */
#ifndef KVP_BUDGET_H
#define KVP_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "memory/encoder.h"
#include "read/engine.h"
#include "base/error.h"
#include "model/model.h"
#include "out/output.h"
#include "read/profile.h"

struct kvp_speculative;

/* KVP_ENGINE_LLAMACPP: time data only (profiles/engines/llamacpp.yaml);
 * its memory is budgeted as the generic engine's (kvp_engine_time_only). */
enum kvp_engine { KVP_ENGINE_GENERIC, KVP_ENGINE_VLLM, KVP_ENGINE_SGLANG, KVP_ENGINE_TRTLLM,
		  KVP_ENGINE_LLAMACPP };

bool kvp_engine_parse(const char *s, enum kvp_engine *out);
const char *kvp_engine_name(enum kvp_engine e);
/* Engines kvplan models the time of but not the memory (llama.cpp): the
 * budget is the generic engine's, and the commands say so. */
bool kvp_engine_time_only(enum kvp_engine e);

/* Defaults, documented in kvplan(1). */
#define KVP_DEFAULT_UTILIZATION 0.90      /* vLLM gpu_memory_utilization (released versions) */
#define KVP_DEFAULT_TRT_FREE_FRACTION 0.90 /* TensorRT-LLM free_gpu_memory_fraction */
#define KVP_DEFAULT_MAX_BATCHED_TOKENS 8192
#define KVP_DEFAULT_MAX_NUM_SEQS 256
#define KVP_OVERHEAD_CONTEXT_BYTES (512ULL << 20)  /* CUDA context, cuBLAS workspaces */
#define KVP_OVERHEAD_NCCL_BYTES (256ULL << 20)     /* NCCL buffers when tp * pp > 1 */
#define KVP_OVERHEAD_GRAPHS_BYTES (512ULL << 20)   /* CUDA graphs */

struct kvp_budget_opts {
	enum kvp_engine engine;
	struct kvp_parallel par;
	enum kvp_dtype dtype;          /* serving dtype; AUTO follows the checkpoint */
	enum kvp_dtype kv_dtype;       /* AUTO follows the serving dtype */
	uint32_t block_size;           /* 0: engine default (16, 16, 1, 32) */
	double utilization;            /* 0: engine default; sglang: mem_fraction_static */
	uint64_t context;              /* n; 0: the model's max_context */
	uint64_t batch;                /* B; 0: 1 */
	uint64_t max_batched_tokens;   /* 0: 8192 */
	uint32_t max_num_seqs;         /* 0: 256 */
	bool hybrid_off;               /* vLLM --disable-hybrid-kv-cache-manager */
	/* the engine's memory model (profiles/engines); NULL: loaded from
	 * engine_version (NULL: the newest modelled) for vllm, sglang, trtllm */
	const struct kvp_engine_model *engine_model;
	const char *engine_version;
	const struct kvp_speculative *speculative;  /* a draft to add (memory/draft.h), or NULL */
	/* peer-to-peer between the TP group's GPUs (vLLM's custom all-reduce
	 * runs only with it): 0 from the GPU profile (pcie_p2p, NVLink within
	 * nvlink_domain), else KVP_P2P_ALL (--p2p yes) or KVP_P2P_NONE (no) */
	enum kvp_p2p p2p;
	bool has_weights, has_activation, has_overhead, has_gpu_memory;
	uint64_t weights_bytes, activation_bytes, overhead_bytes, gpu_memory_bytes;
};

/* One KV group of vLLM's hybrid manager (or the single group of the others). */
struct kvp_budget_group {
	enum kvp_layer_kind kind;
	uint32_t layers;               /* real layers of this kind on the GPU */
	uint32_t groups;               /* KV groups they form */
	uint64_t blocks_per_seq;       /* blocks one sequence of n tokens takes in one group */
};

struct kvp_budget {
	struct kvp_spec spec;
	enum kvp_engine engine;
	struct kvp_engine_model engine_model;  /* engine.version[0] == 0: generic */
	uint32_t max_num_seqs;         /* the profiling pass's sequences (vLLM defaults by GPU) */
	uint32_t block_size;
	double utilization;
	uint64_t context, batch, max_batched_tokens;
	uint64_t gpu_memory_bytes;
	uint64_t usable_bytes;         /* what the engine lets itself use */
	uint64_t weights_bytes, activation_bytes, overhead_bytes;
	uint64_t rotary_cache_bytes;   /* of weights_bytes: the rotary cos/sin cache (engine.h) */
	/* of activation_bytes: what vLLM's encoder profile run adds above the
	 * language model's peak (memory/encoder.h), and its dummy batch;
	 * encoder.items 0: none charged */
	uint64_t encoder_bytes;
	struct kvp_encoder_profile encoder;
	uint64_t kv_pool_bytes;        /* 0 when nothing is left */
	uint64_t headroom_bytes;       /* gpu - usable */
	bool weights_fit;              /* weights + activations + overhead fit at all */
	uint64_t page_bytes;           /* one block across the layers it covers */
	uint32_t group_size;           /* layers per KV group (vLLM), else layers on GPU */
	uint32_t num_groups;
	uint32_t padding_layers;       /* group slots with no layer (vLLM hybrid) */
	struct kvp_budget_group group[KVP_LAYER_KIND_COUNT];
	uint64_t num_blocks;
	/* Tokens the pool holds when every layer keeps every token: many short
	 * sequences, each within the windows (vLLM's "GPU KV cache size",
	 * SGLang's max_total_num_tokens).  A sliding or chunked layer keeps only
	 * its window of a long sequence, so one long sequence can hold more. */
	uint64_t max_tokens;
	/* The longest single sequence whose KV fits the pool, under the same
	 * per-sequence bytes as max_sequences (kvp_budget_pool_for): the
	 * windowed layers' capped bytes come off first, the full layers take
	 * the rest.  KVP_BUDGET_UNBOUNDED when no layer grows with the sequence
	 * (every layer windowed or a fixed state) and one sequence fits. */
	uint64_t max_tokens_one_sequence;
	uint64_t seq_bytes;            /* pool bytes one sequence of n tokens takes */
	uint64_t max_sequences;        /* at n */
	uint64_t kv_bytes;             /* exact KV of B sequences of n tokens */
	bool fits;                     /* B sequences of n tokens fit */
	/* The uncertainty band: each estimated term's spread (the engine
	 * profile's, fitted on public logs; 0 for terms the user passed and
	 * under the generic policy), and what the pool, max tokens and max
	 * sequences become with every spread against (low) or for (high). */
	uint64_t weights_spread_bytes, activation_spread_bytes, overhead_spread_bytes;
	uint64_t fraction_spread_bytes; /* SGLang / TRT-LLM fraction */
	/* the activation peak's spread upward (the engine takes more: the low
	 * end); activation_spread_bytes is its spread downward (the high end) */
	uint64_t activation_spread_above_bytes;
	/* each way, when --engine-version is outside every modelled range
	 * (engine.h version_nearest; unmodelled_version_spread) */
	uint64_t version_spread_bytes;
	uint64_t kv_pool_low_bytes, kv_pool_high_bytes;
	uint64_t max_tokens_low, max_tokens_high, max_sequences_low, max_sequences_high;
	char estimated_terms[96];      /* "weights,activation,overhead"; "" none */
	/* With pp > 1 every stage is sized and the one with the least room
	 * governs (spec.stage); its figures above.  The first
	 * KVP_BUDGET_STAGES_SHOWN stages, for the printout: */
	uint32_t stages_shown;
	struct kvp_budget_stage {
		uint32_t first_layer, num_layers;
		uint64_t weights_bytes, kv_pool_bytes, max_tokens, max_sequences;
	} stage[8];
};
#define KVP_BUDGET_STAGES_SHOWN 8

#define KVP_BUDGET_UNBOUNDED UINT64_MAX

/* Compute the budget.  Fails on an invalid split (tp/pp), dtype or overflow;
 * a budget where the weights do not fit is not a failure: kv_pool_bytes is 0
 * and fits is false. */
kvp_status kvp_budget_compute(const struct kvp_model *m, const struct kvp_gpu *g,
			      const struct kvp_budget_opts *o, struct kvp_budget *out,
			      struct kvp_error *err);

/* Pool bytes B sequences of n tokens take under the engine's paging. */
kvp_status kvp_budget_pool_for(const struct kvp_budget *b, uint64_t n, uint64_t B, uint64_t *out);

/* The longest context (tokens) at which B sequences fit, searching up to
 * `limit`; 0 when not even one token fits. */
uint64_t kvp_budget_max_context(const struct kvp_budget *b, uint64_t B, uint64_t limit);

/* The utilization (or fraction) the engine needs for B sequences of n
 * tokens; > 1 when even all of the memory is not enough. */
double kvp_budget_utilization_for(const struct kvp_budget *b, uint64_t n, uint64_t B);

/* vLLM's profiling peak (engine-memory.md 3): the dummy sampler over
 * N = min(S, T) requests x the full vocabulary, not divided by tp, the top-k
 * buffer, the retained hidden states and the MoE workspaces.  UINT64_MAX on
 * overflow. */
uint64_t kvp_budget_vllm_sampler_peak(const struct kvp_spec *s, const struct kvp_engine_model *e,
				      uint64_t tokens, uint32_t max_num_seqs);

/* The activation peak estimate for max_batched_tokens tokens (see budget.c). */
uint64_t kvp_budget_activation_estimate(const struct kvp_spec *s, uint64_t tokens,
					uint32_t max_num_seqs);

/* Fill a record with the output contract's fields (man/kvplan.1). */
bool kvp_budget_to_record(const struct kvp_budget *b, const char *gpu_name,
			  struct kvp_record *r);

#endif
