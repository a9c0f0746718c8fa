/* size.h: GPU purchase sizing.  For a model and a workload, which GPU, how
 * many, split how, at what cost: each configuration (GPU, shape tp x pp x dp
 * x ep, KV dtype, replicas R) is checked against memory, throughput and the service levels,
 * and the cheapest that meets them all is chosen.
 *
 *   per replica    rate  lambda_r = lambda / R
 *   prefill        S = the prefill of a mean prompt; utilization rho = lambda_r S;
 *                  queueing before the prefill, M/D/1: W_q = rho S / (2 (1 - rho))
 *   decode         a step of C sequences at the mean context; decode only runs
 *                  while no prefill does: TPOT = step(C) / (1 - rho)
 *   Little's law   C = lambda_r (TTFT + output x TPOT(C)), solved by iteration
 *   memory         ceil(C) sequences of the mean context fit the KV pool, and one
 *                  request of max_model_len fits at all (kvplan budget)
 *   SLOs           TTFT = prefill of the percentile prompt + W_q (or W_q's
 *                  percentile, queue_percentile) <= ttft_s; TPOT <= tpot_s (a
 *                  step serves every sequence alike)
 *   floor          an idle replica (one sequence, no queue) is as fast as any
 *                  replica count gets: a level it misses is missed at any
 *                  count (never), and named first
 *   risk           met at the central estimate but not at the conservative
 *                  end of the band (max_sequences_low; latency x (1 +
 *                  spread)): "meets at risk", not "meets"
 *   cost           one GPU-hour on the basis (cloud price of a labelled kind,
 *                  or owned: purchase amortised + power at TDP x PUE) x tp x
 *                  pp x dp x R per hour; per million output tokens
 *
 * Without an arrival rate, concurrent_users closes the loop: C = ceil(users /
 * R) sequences in flight and the rate they generate.  Without either, one
 * request at a time on one replica.  Legend: lambda = requests/s, R = replicas,
 * C = sequences in flight on a replica, S = prefill seconds. */
#ifndef KVP_SIZE_H
#define KVP_SIZE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "memory/budget.h"
#include "base/error.h"
#include "time/calibration.h"
#include "time/perf.h"
#include "read/profile.h"
#include "read/workload.h"

/* The constraints a configuration can fail, as bits of kvp_size_config.failed. */
enum kvp_size_fail {
	KVP_SIZE_FAIL_SPLIT = 1u << 0,      /* tp does not divide the model's heads */
	KVP_SIZE_FAIL_WEIGHTS = 1u << 1,    /* weights, activations, overhead do not fit */
	KVP_SIZE_FAIL_CONTEXT = 1u << 2,    /* one request of max_model_len does not fit */
	KVP_SIZE_FAIL_MEMORY = 1u << 3,     /* the KV of the concurrency does not fit */
	KVP_SIZE_FAIL_THROUGHPUT = 1u << 4, /* the rate saturates prefill or decode */
	KVP_SIZE_FAIL_TTFT = 1u << 5,
	KVP_SIZE_FAIL_TPOT = 1u << 6,
	KVP_SIZE_FAIL_KV_DTYPE = 1u << 7,   /* a hardware-only KV format the GPU lacks */
	KVP_SIZE_FAIL_ENGINE = 1u << 8,     /* the engine does not run on this GPU's vendor */
};
#define KVP_SIZE_FAIL_BITS 9
/* The failures no number of replicas can cure. */
#define KVP_SIZE_FAIL_FIXED (KVP_SIZE_FAIL_SPLIT | KVP_SIZE_FAIL_WEIGHTS | KVP_SIZE_FAIL_CONTEXT | \
			     KVP_SIZE_FAIL_KV_DTYPE | KVP_SIZE_FAIL_ENGINE)

/* "split", "weights", "context", "memory", "throughput", "ttft", "tpot",
 * "kv_dtype", "engine". */
const char *kvp_size_fail_name(unsigned bit);
/* "memory,tpot" ("" when none): the bits of `first` (those no replica count
 * can cure) before the others, each group in bit order. */
void kvp_size_fail_format(unsigned failed, unsigned first, char *buf, size_t size);

/* What the workload asks of the deployment, derived once. */
struct kvp_size_demand {
	double rate;               /* requests/s; 0: not given */
	uint64_t users;            /* concurrent users; 0: not given */
	double prompt_mean, output_mean;
	uint64_t prompt_p;         /* prompt at the SLO percentile */
	uint64_t mean_context;     /* ceil(E[o (p + (o - 1) / 2)] / E[o]): the KV a
				    * sequence holds while it decodes, averaged over
				    * time (kvp_perf_held_context) */
	uint64_t max_model_len;    /* the workload's max_len, else the model's max_context */
	double percentile;         /* 50 when the workload gives none */
	bool queue_percentile;     /* TTFT at the percentile takes the queue's
				    * percentile too, not its mean (--slo-percentile):
				    * P(W > t) = rho exp(-t rho / W_q), the exponential
				    * tail with M/D/1's mean W_q and P(W > 0) = rho, so
				    * t_p = W_q / rho x ln(rho / (1 - p)) when rho > 1 - p,
				    * else 0 */
	double slo_ttft_s, slo_tpot_s;  /* 0: none */
};

/* Derive the demand.  INVALID (naming the workload's path and field) when a
 * mean is not positive or max_len is shorter than the percentile prompt. */
kvp_status kvp_size_demand(const struct kvp_workload *w, const struct kvp_model *m,
			   struct kvp_size_demand *out, struct kvp_error *err);

/* The cost basis of a GPU-hour (--cost cloud[:KIND]|own).  Zero fields take
 * the defaults below. */
enum kvp_size_basis { KVP_SIZE_BASIS_CLOUD, KVP_SIZE_BASIS_OWN };
struct kvp_size_cost {
	enum kvp_size_basis basis;
	char kind[16];              /* cloud: only prices of this kind; "" any */
	double years;               /* own: amortisation period; default 3 */
	double power_usd_per_kwh;   /* own: default 0.10 */
	double pue;                 /* own: power usage effectiveness; default 1.3 */
	double utilization;         /* own: the fraction of hours the GPUs serve; default 1 */
};
#define KVP_SIZE_OWN_YEARS 3.0
#define KVP_SIZE_OWN_POWER_USD_PER_KWH 0.10
#define KVP_SIZE_OWN_PUE 1.3

/* One GPU-hour of g on basis c, in USD:
 *   cloud  the profile's price_per_hour, when its kind is c->kind (or c->kind
 *          is "", or the price was given on the command line: kind "given")
 *   own    purchase / (years x 8,760 h x utilization) + tdp_watts / 1,000 x pue
 *          x power price: the purchase spread over the hours it serves, the
 *          power drawn at TDP while it serves (idle draw not counted); the
 *          purchase is server_price / node_gpus where the profile prices a
 *          whole server (the host and network its GPUs need), else
 *          purchase_price (the GPU alone)
 * NAN when the profile lacks a number the basis needs.  *label (may be NULL)
 * names the basis: the price kind ("on-demand", "serverless", ...,
 * "unlabelled" when the profile gives none, "none" without a price), or "own"
 * ("none" when the profile lacks the purchase or the board power). */
double kvp_size_gpu_hour(const struct kvp_gpu *g, const struct kvp_size_cost *c, const char **label);

/* The most replicas searched when kvp_size_opts.max_replicas is 0. */
#define KVP_SIZE_MAX_REPLICAS 1024

struct kvp_size_opts {
	struct kvp_size_cost cost;      /* zero: cloud prices of any kind */
	struct kvp_budget_opts budget;  /* engine, dtypes, block, utilization, overrides;
					 * tp, context and batch are set per configuration */
	double decode_bw_efficiency;    /* 0: the GPU profile's (or the default) */
	double prefill_flops_efficiency;
	double kv_bw_efficiency;        /* the KV read's (a kvbench run composed with an
					 * engine calibration); 0: the engine's */
	/* --calibration's constants (kvp_size_calibration_apply), charged
	 * through kvp_calibration_apply as perf charges them: its fixed costs
	 * and all-reduce latency over the engine's; calibrated false: none */
	struct kvp_calibration calibration;
	bool calibrated;
	uint32_t max_replicas;          /* 0: 1024 */
	/* disaggregated prefill and decode: a replica is disagg_p prefill and
	 * disagg_d decode instances of the shape (0, 0: colocated).  Prefill
	 * instances share the rate (M/D/1 each, lambda / P); decode instances
	 * share it too (lambda / D) and decode without prefill stalls: TPOT =
	 * step(C), C = lambda / D x output x TPOT; TTFT adds the prompt's KV
	 * moved from the prefill to the decode GPUs, each GPU its own shard over
	 * the link a group of (P + D) x shape GPUs crosses
	 * (kvp_perf_collective_link).  Needs a rate. */
	uint32_t disagg_p, disagg_d;
	double latency_spread;          /* the relative error of TTFT and TPOT the
					 * conservative end allows for (0.1: +10 %) */
	uint64_t max_num_seqs;          /* the most sequences a replica (each DP
					 * rank) schedules; 0: as many as fit.
					 * Below the pool's maximum it is a cap:
					 * C above it fails memory (the sequences
					 * beyond it would wait), so the search
					 * adds replicas, each holding fewer
					 * sequences at a lower TPOT and more
					 * cost; at or above it, no cap.  The
					 * budget (its sampler) is not resized */
};

struct kvp_size_config {
	char gpu[KVP_NAME_MAX];
	char vendor[32];                /* the GPU profile's ("nvidia", "amd"; "" unknown) */
	uint32_t tp, replicas, count;   /* count = tp x pp x dp x replicas GPUs */
	uint32_t pp, dp, ep;            /* of each instance (shape.h), 1: none */
	uint32_t disagg_p, disagg_d;    /* prefill and decode instances; 0, 0: colocated */
	double transfer_s;              /* disaggregated: the percentile prompt's KV moved */
	bool pareto;                    /* on the front of cost_per_mtok, tpot_s, ttft_s
					 * (kvp_size_pareto) */
	bool meets;
	unsigned failed;                /* enum kvp_size_fail bits */
	unsigned never;                 /* the bits no replica count cures: the
					 * fixed ones, and TTFT/TPOT when even an
					 * idle replica misses them (floor_*) */
	double floor_ttft_s;            /* idle replica: prefill of the percentile prompt */
	double floor_tpot_s;            /* idle replica: the step of one sequence */
	/* Risk: the constraints met by the central estimate but not at the
	 * conservative end of the band: memory when ceil(C) sequences exceed
	 * the budget's max_sequences_low (every estimated term's spread
	 * against), ttft/tpot when the level is missed at (1 + latency_spread)
	 * x the estimate.  meets is true only when failed and risk are both
	 * empty; at_risk when only risk is not ("meets at risk"). */
	unsigned risk;
	unsigned risk_never;            /* of those, the ones no replica count cures */
	bool at_risk;
	/* what a failing configuration misses by (0 when met; INFINITY when the
	 * queue grows without bound): seconds over each level, sequences over
	 * what the pool holds */
	double miss_ttft_s, miss_tpot_s;
	uint64_t miss_sequences;
	double price_per_hour;          /* one GPU on the cost basis; 0 unknown */
	char basis[16];                 /* what that price is (kvp_size_gpu_hour's label) */
	double cloud_gpu_hour;          /* one GPU-hour in the cloud, any kind; NAN unknown */
	double own_gpu_hour;            /* one GPU-hour owned; NAN unknown */
	double cost_per_hour;           /* the deployment; NAN when the price is unknown */
	double cost_per_mtok;           /* per million output tokens */
	/* one replica */
	double rate;                    /* requests/s */
	double concurrency;             /* C, Little's law */
	uint64_t sequences;             /* ceil(C), at least 1 */
	double prefill_s;               /* S: prefill of a mean prompt */
	double prefill_utilization;     /* rho */
	double queue_s;                 /* W_q, the mean */
	double queue_p_s;               /* the wait TTFT counts: W_q, or its percentile */
	double ttft_s;                  /* percentile prompt: prefill + W_q */
	double tpot_s;
	double step_s;                  /* one decode step of ceil(C), without prefill stalls */
	enum kvp_perf_bound bound;      /* of that step */
	uint64_t kv_pool_bytes;         /* on one GPU */
	uint64_t kv_bytes_needed;       /* pool bytes of ceil(C) mean sequences, one GPU */
	uint64_t max_sequences;         /* of the mean context that fit */
	uint64_t weights_bytes;         /* on one GPU */
	/* the deployment */
	double tokens_per_s;            /* output tokens/s served */
	/* what an engine needs to realise it */
	enum kvp_engine engine;
	/* --engine-version as given for `engine` ("": its newest modelled
	 * version); the launch line spells some flags by it (size-emit.c) */
	char engine_version[KVP_ENGINE_VERSION_MAX];
	enum kvp_dtype kv_dtype;
	enum kvp_dtype serving_dtype;   /* the budget's (--dtype, else the checkpoint's) */
	uint32_t block_size;
	double utilization;
	uint64_t max_model_len;
	uint64_t max_num_seqs;          /* min(the cap, when given, and the most
					 * that keep TPOT within its level) */
	uint64_t seqs_cap;              /* kvp_size_opts.max_num_seqs; 0 none */
	uint64_t max_batched_tokens;
	/* on the serving-loop simulator (size-sim.h): whether this row's
	 * replicas, latencies and verdict are simulated, and the most one
	 * replica serves there (requests/s, or users with a closed loop); 0
	 * when not simulated */
	bool simulated;
	double sim_capacity;
	uint32_t origin;                /* the caller's tag (kvplan size: the GPU's index) */
};

/* The p-th percentile (0 < p < 1) of the wait before a prefill, from its
 * mean w_q and the prefill utilization rho (see queue_percentile). */
double kvp_size_wait_percentile(double w_q, double rho, double p);

/* Little's law: requests in the system = arrival rate x time each spends in
 * it, here TTFT + output tokens x TPOT. */
double kvp_size_concurrency(double rate, double ttft_s, double output_tokens, double tpot_s);

/* Check one configuration.  A configuration that fails a constraint is not an
 * error (out->failed says which); errors are bad inputs (a GPU without
 * bandwidth, an overflow). */
kvp_status kvp_size_evaluate(const struct kvp_model *m, const struct kvp_gpu *g,
			     const struct kvp_size_demand *d, const struct kvp_size_opts *o,
			     uint32_t tp, uint32_t replicas, struct kvp_size_config *out,
			     struct kvp_error *err);

/* The fewest replicas (1 .. max_replicas) at which (g, tp) meets every
 * constraint.  When a constraint fails at any replica count (out->never),
 * the fewest replicas at which only those fail; when none does, the
 * configuration at one replica with its failures (or, where only replicas
 * are short, at max_replicas). */
kvp_status kvp_size_search(const struct kvp_model *m, const struct kvp_gpu *g,
			   const struct kvp_size_demand *d, const struct kvp_size_opts *o,
			   uint32_t tp, struct kvp_size_config *out, struct kvp_error *err);

/* The search space beyond the GPUs: every tp x pp x dp x ep x KV dtype
 * (each list at least one entry; pp, dp, ep 1 for none; KVP_DTYPE_AUTO for
 * the budget's default KV dtype) x max_num_seqs caps (seqs: NULL for one
 * point, no cap: the most sequences that fit and keep TPOT within its level,
 * kvp_size_evaluate; else each cap in turn, kvp_size_opts.max_num_seqs). */
struct kvp_size_space {
	const uint32_t *tp, *pp, *dp, *ep;
	size_t ntp, npp, ndp, nep;
	const enum kvp_dtype *kv;
	size_t nkv;
	const uint32_t (*pd)[2];        /* {P, D} instances; {0, 0} colocated; NULL: colocated only */
	size_t npd;
	const uint64_t *seqs;           /* max_num_seqs caps; NULL: none */
	size_t nseqs;
};

/* Points in a space: ntp x npp x ndp x nep x nkv (x npd with pd) (x nseqs
 * with seqs). */
size_t kvp_size_space_points(const struct kvp_size_space *sp);

/* kvp_size_search at every point of sp on GPU g, written to out[0 ..
 * kvp_size_space_points(sp) - 1] in the order tp, pp, dp, ep, kv, P:D,
 * max_num_seqs (the last fastest).  o->budget's par and kv_dtype are replaced per point. */
kvp_status kvp_size_search_space(const struct kvp_model *m, const struct kvp_gpu *g,
				 const struct kvp_size_demand *d, const struct kvp_size_opts *o,
				 const struct kvp_size_space *sp, struct kvp_size_config *out,
				 struct kvp_error *err);

/* Mark the Pareto front (c[i].pareto): among the configurations with a known
 * cost that fail nothing replicas cannot cure at their count (no split,
 * weights, context, kv_dtype, memory or throughput failure), those no other
 * is at least as good as on all of cost_per_mtok, tpot_s and ttft_s and
 * better on one.  Returns the number on the front. */
size_t kvp_size_pareto(struct kvp_size_config *c, size_t n);

/* Order: the configurations priced on the cost basis first, ranked; those it
 * cannot price (kvp_size_priced false) apart after them, in the same order
 * among themselves.  Within each: configurations that meet everything first,
 * cheapest per million output tokens at their own throughput (then per hour,
 * fewest GPUs, lowest TPOT); then the others, fewest failures first. */
void kvp_size_rank(struct kvp_size_config *c, size_t n);

/* Whether the cost basis prices c: a positive, finite cost_per_hour. */
bool kvp_size_priced(const struct kvp_size_config *c);

/* Whether GPU g stores KV in dt: every dtype but the hardware-only ones;
 * nvfp4 needs an NVIDIA GPU of compute capability 10.0 or more (Blackwell's
 * FP4 tensor cores; Hopper is 9.0). */
/* Whether engine e runs on g: TensorRT-LLM on NVIDIA GPUs only (a profile
 * whose vendor is another maker's, kvp_size_vendor_not_nvidia, fails
 * engine); vLLM and SGLang on all. */
bool kvp_size_engine_on_gpu(enum kvp_engine e, const struct kvp_gpu *g);
/* A vendor that names a maker other than NVIDIA: amd, intel, google, apple,
 * huawei, aws (any case); "" or an unknown name is not. */
bool kvp_size_vendor_not_nvidia(const char *vendor);
bool kvp_size_kv_on_gpu(const struct kvp_gpu *g, enum kvp_dtype dt);

/* The KV cache dtype as engine e spells it for the plan's dt (m's serving
 * dtype and bf16/fp16 are the engine's "auto"); NULL when e has none, so a
 * plan in dt cannot be launched on e as planned. */
const char *kvp_size_kv_name(enum kvp_engine e, const struct kvp_model *m, enum kvp_dtype dt);

/* vLLM's block size for m when none is given: 64 where m has MLA layers
 * (vLLM's FlashMLA backend supports kernel block size 64 only,
 * https://github.com/vllm-project/vllm/blob/main/vllm/v1/attention/backends/mla/flashmla.py,
 * get_supported_kernel_block_sizes), else 0: the engine's default. */
uint32_t kvp_size_block_default(enum kvp_engine e, const struct kvp_model *m);

/* What engine e must be told so that it loads m's weights as planned, at
 * the plan's serving dtype `serving` (kvp_size_config.serving_dtype):
 * `quant`, its on-the-fly quantization ("fp8": vLLM and SGLang
 * --quantization fp8), NULL when the checkpoint is loaded as it is (a
 * quantized checkpoint's own quantization_config is read by the engine);
 * `dtype`, the engine's name for the serving dtype ("bfloat16", "float16",
 * "float32": vLLM and SGLang --dtype, TensorRT-LLM's dtype) when it is not
 * the one the engine picks for the checkpoint, else NULL.  INVALID, field
 * "--weights-dtype" (or "--dtype"), with a message that says what to give
 * instead, when e cannot realise the plan on the fly: a --weights-dtype
 * what-if other than fp8 over an unquantized checkpoint, fp8 on
 * TensorRT-LLM (its PyTorch backend loads pre-quantized checkpoints only),
 * or 16/32-bit weights other than the serving dtype. */
kvp_status kvp_size_weights_flags(enum kvp_engine e, const struct kvp_model *m,
				  enum kvp_dtype serving, const char **quant, const char **dtype,
				  struct kvp_error *err);

/* Whether engine e can be given c's expert parallelism: vLLM spreads the
 * routed experts over every tp x dp GPU of a stage once
 * --enable-expert-parallel is on (FusedMoEParallelConfig.make, shape.h), so
 * there ep is 1 or tp x dp; SGLang (--ep-size) and TensorRT-LLM (--ep_size)
 * take any ep that divides tp x dp (kvp_shape_check). */
bool kvp_size_emit_ep_ok(enum kvp_engine e, uint32_t tp, uint32_t dp, uint32_t ep);

/* The model argument an engine is launched with, into buf: a model read
 * from a local file is launched from that file as it was given (a
 * config.json: the folder holding it, which the engine loads; a GGUF: the
 * file), never by a name the file declares; a profile by its hf_id, else
 * its name.  A path that starts with '-' gets "./" so no engine reads it as
 * an option; an id that starts with '-' is refused (KVP_STATUS_INVALID,
 * located at the model's file), as is one that does not fit `size`
 * (KVP_STATUS_OVERFLOW): never a cut id. */
kvp_status kvp_size_launch_id(const struct kvp_model *m, char *buf, size_t size,
			      struct kvp_error *err);

/* Write the serving-engine command that realises c (vLLM, SGLang or
 * TensorRT-LLM; generic writes all three), for model m, with prefix caching
 * on when the workload shares prefixes, and beside it the same settings as
 * the engine's YAML config file (vLLM --config, TensorRT-LLM
 * extra_llm_api_options), written by a here-document.  Input text only
 * through shell-quote.h and yaml-writer.h.  The caller has checked that
 * kvp_size_kv_name(e, m, c->kv_dtype) is not NULL and that
 * kvp_size_launch_id(m) succeeds (else only a comment is written). */
void kvp_size_emit(FILE *f, enum kvp_engine e, const struct kvp_model *m,
		   const struct kvp_size_config *c, bool prefix_caching);

#endif
