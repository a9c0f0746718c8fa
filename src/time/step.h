/* step.h: the cost of one serving step on one replica, as a roofline: the
 * step-time model that perf, the simulators, size and frag all read.
 *
 *   prefill  FLOPs = 2 * active params * n + causal attention FLOPs;
 *            time  = max(FLOPs / (peak * eff_flops), bytes / (bandwidth * eff_bw))
 *            (bytes: the weights read once and the KV written) -> time to first token
 *   decode   bytes = weights read (active experts only for MoE) + the KV of the batch;
 *            time  = max(bytes / (bandwidth * eff_bw), FLOPs / (peak * eff_flops))
 *            -> time per output token, tokens per second
 *   tp       two all-reduces of the hidden state per layer (Megatron-LM), ring:
 *            2 (tp - 1) / tp * message / link + latency; the link is the
 *            slowest a group of tp GPUs crosses: NVLink inside the NVLink
 *            domain, PCIe inside a server, else the scale-out network
 *   offload  KV kept in host memory or on disk crosses the host link every step;
 *            layer-by-layer pipelining hides it only while a layer computes
 *            longer than its KV takes to arrive
 *   prefix   reloading a saved prefix over the link against recomputing it
 *
 * Legend: L = layers, n = tokens, H_q = query heads, d_h = head dim, B = sequences,
 * P = active parameters, tp/pp = tensor/pipeline parallel.  Every byte count on a
 * GPU comes from the model's layer list (model.h) and the budget (budget.h); this
 * module never recomputes KV bytes.  All times are seconds, rates bytes per second,
 * throughputs FLOP per second.  With pipeline parallelism one token crosses every
 * stage in turn, so a step's latency is pp times the worst stage's (kvp_spec). */
#ifndef KVP_STEP_H
#define KVP_STEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memory/budget.h"
#include "base/error.h"
#include "model/model.h"
#include "out/output.h"
#include "read/profile.h"
#include "time/gemm-table.h"
#include "time/moe-table.h"

/* Defaults, documented with their sources in kvplan(1) (PERFORMANCE MODEL). */
#define KVP_PERF_DECODE_BW_EFFICIENCY 0.80
#define KVP_PERF_PREFILL_FLOPS_EFFICIENCY 0.60
#define KVP_PERF_ALLREDUCE_LATENCY_S 10e-6
/* The engine time defaults, for an engine without time data: the generic
 * engine is the roofline alone (a what-if: no fixed costs, the all-reduce
 * latency above), with the band of the engines' fit. */
#define KVP_PERF_DEFAULT_STEP_FIXED_S 0
#define KVP_PERF_DEFAULT_PREFILL_FIXED_S 0
#define KVP_PERF_DEFAULT_SEQ_STEP_S 0
#define KVP_PERF_DEFAULT_ALLREDUCE_LATENCY_S KVP_PERF_ALLREDUCE_LATENCY_S
#define KVP_PERF_DEFAULT_TIME_RATIO_LOW 0.77
#define KVP_PERF_DEFAULT_TIME_RATIO_HIGH 1.32

enum kvp_perf_bound { KVP_PERF_BOUND_BANDWIDTH, KVP_PERF_BOUND_COMPUTE };
/* "bandwidth" or "compute" */
const char *kvp_perf_bound_name(enum kvp_perf_bound b);

/* A link data crosses: a host link (PCIe, NVLink-C2C) or a disk. */
struct kvp_link {
	char name[32];
	double theoretical_bps;   /* per direction */
	double effective_bps;     /* what transfers reach; times use this */
};

/* Presets: pcie3x16 pcie4x16 pcie5x16 pcie6x16 nvlink-c2c nvme sata (sources in
 * step.c and kvplan(1)).  false when `name` is none of them. */
bool kvp_link_preset(const char *name, struct kvp_link *out);
/* The i-th preset, NULL past the last (for help texts). */
const struct kvp_link *kvp_link_preset_at(size_t i);
/* A preset name, or a preset name with a rate ("pcie4x16:20GB/s": the effective
 * rate replaced), or a bare rate ("20GB/s").  Errors name `field`. */
kvp_status kvp_link_parse(const char *spec, const char *field, struct kvp_link *out,
			  struct kvp_error *err);

enum kvp_offload_tier { KVP_OFFLOAD_NONE, KVP_OFFLOAD_CPU, KVP_OFFLOAD_DISK };

struct kvp_offload {
	enum kvp_offload_tier tier;
	struct kvp_link link;     /* the path's bottleneck: the host link, or the disk */
	double fraction;          /* share of the KV kept off the GPU; < 0: what does not fit */
};

/* Parse --kv-offload: none | cpu | cpu:RATE | nvme | nvme:RATE | sata | sata:RATE.
 * `host` is the host link (CPU memory is reached over it; a disk is read through
 * host memory, so the path is the slower of the disk and the host link). */
kvp_status kvp_offload_parse(const char *spec, const struct kvp_link *host,
			     struct kvp_offload *out, struct kvp_error *err);

/* The hardware as the model sees it. */
struct kvp_perf_hw {
	double bandwidth_bps;              /* memory, datasheet */
	double flops;                      /* dense peak in the compute dtype */
	/* the GPU's bf16 and fp8 peaks; attention_flops, attention's (QK^T,
	 * PV) peak: the KV cache's dtype's, not the weights' (set with the
	 * context, kvp_gemm_attention_peak; 0: at `flops`) */
	double flops_16bit, flops_fp8, attention_flops;
	char flops_dtype[8];               /* whose peak flops is: bf16, fp8, int8, fp4 */
	/* set when the GPU profile has no peak for the weights' dtype and the
	 * bf16 peak stands in: what was assumed, for the caller to show */
	char flops_warning[160];
	double decode_bw_efficiency;       /* (0, 1] */
	double prefill_flops_efficiency;   /* (0, 1] */
	/* a measured GEMM table for this GPU and the weights' dtype
	 * (profiles/kernels/gemm-<gpu>-<dtype>.tsv); gemm.nm = 0: none, every
	 * FLOP at prefill_flops_efficiency (kvp_perf_flops_efficiency,
	 * time/step-gemm.h) */
	struct kvp_gemm_table gemm;
	/* a measured MoE layer table for this GPU, the weights' dtype and the
	 * model's expert shape (profiles/kernels/moe-<gpu>-<dtype>.tsv,
	 * time/moe-table.h); moe.path[0] = 0: none found.  Used only where the
	 * engine runs the kernels it measured (moe_kernel_tables) */
	struct kvp_moe_table moe;
	bool moe_kernel_tables;            /* engine.h moe_kernel_tables */
	bool attention_serial;             /* engine.h attention_serial (kvp_perf_step_time) */
	bool kv_per_query_head;            /* engine.h decode_kv_per_query_head (step-gqa.h) */
	bool decode_gemm_table;            /* engine.h decode_gemm_table */
	/* a calibration's factor on the prefill's compute rate where the GEMM
	 * table times it (kvp_perf_hw_prefill_scale): the table's rates and
	 * prefill_flops_efficiency (attention, routed experts, decode) both
	 * x this; 0: 1, none */
	double prefill_flops_scale;
	double nvlink_bps;                 /* GPU-to-GPU inside the domain, per direction; 0: none */
	uint32_t nvlink_domain;            /* GPUs the NVLink rate joins; <= 1: none */
	bool nvlink_mesh;                  /* direct links, not a switch (kvp_gpu) */
	uint32_t node_gpus;                /* GPUs in one server; 0: unknown (no scale-out) */
	double scale_out_bps;              /* network between servers, per GPU, per direction */
	double pcie_busbw[3];              /* kvp_gpu pcie_busbw: NCCL's ring over PCIe (step-collective.h) */
	double allreduce_latency_s;
	/* fixed costs the roofline does not hold (engine time data,
	 * profiles/engines/; a calibration replaces them): every forward pass
	 * (launch, scheduling, sampling, metadata), each prefill pass beyond
	 * that, and each running sequence in a step.  0: none charged. */
	double step_fixed_s;
	double prefill_fixed_s;
	double seq_step_s;
	/* each request's latency outside the GPU's steps (tokenising and
	 * detokenising, the hops between the engine's processes: SGLang's
	 * TokenizerManager, Scheduler and DetokenizerManager over ZMQ): added
	 * once to a request's TTFT and end-to-end time, charged to no step
	 * (not to TPOT, not to a step's time); in a closed loop of C users it
	 * lowers throughput only through the end to end it lengthens (C /
	 * e2e).  0: none. */
	double request_latency_s;
	/* the share of the bandwidth the engine's attention kernels reach
	 * reading the KV cache (paged decode kernels run below the weights'
	 * streaming GEMMs); 0: decode_bw_efficiency, as for the weights */
	double kv_bw_efficiency;
	/* the band on time: measured / predicted time at the fit's 10th and
	 * 90th percentiles (kvp_perf_hw_engine); 0: no band */
	double time_ratio_low, time_ratio_high;
	/* the engine rotates q and k inside its attention's QKV preprocessing
	 * (engine.h elementwise_rotary false: TensorRT-LLM): the prefill's
	 * elementwise term charges no rotary pass.  false: vLLM's kernels */
	bool rotary_fused;
	/* the engine's attention launched from the host outside its CUDA
	 * graphs (engine.h: eager_launch_s, the launches of one attention
	 * layer by kind, decode_full_graph); 0: none */
	double eager_launch_s;
	uint32_t eager_attention_launches, eager_attention_launches_mla;
	bool decode_full_graph;
	/* a pass of more tokens than graph_max_tokens replays no graph: the
	 * host launches all of each layer, uncaptured_launch_s a launch, the
	 * launches of a layer's parts by kind (engine.h); 0: none */
	uint32_t graph_max_tokens;
	double uncaptured_launch_s;
	uint32_t uncaptured_attention_launches, uncaptured_attention_launches_mla;
	uint32_t uncaptured_mlp_launches, uncaptured_moe_launches;
	uint32_t uncaptured_shared_expert_launches;
	/* the engine's serial MoE align kernel (engine.h moe_align_layer_s,
	 * its own entry's) and the fewest experts that take it; moe_align_s,
	 * a pass's seconds in it for the context's model (kvp_perf_init,
	 * time/step-moe-align.h), part of every pass's fixed costs
	 * (kvp_perf_fixed_s); 0: none */
	double moe_align_layer_s, moe_align_s;
	uint32_t moe_align_min_experts;
	/* a calibration or an option gave decode_bw_efficiency,
	 * prefill_flops_efficiency or prefill_flops_scale: an engine's scales
	 * (engine.h decode_bw_scale, prefill_flops_scale) leave them as they are */
	bool efficiency_given;
	/* the engine's decode scale applied (1: none), and whether the
	 * prefill_flops_scale above is the engine's (else a calibration's) */
	double decode_bw_scale;
	bool prefill_scale_from_engine;
	/* KVP_PERF_GIVEN_* bits: constants a calibration set, which the
	 * engine's time data does not replace */
	unsigned given;
	/* where the fixed costs came from: the engine entry, "defaults", a
	 * calibration's label */
	char time_source[128];
	struct kvp_link host_link;
};

#define KVP_PERF_GIVEN_STEP_FIXED 1u
#define KVP_PERF_GIVEN_PREFILL_FIXED 2u
#define KVP_PERF_GIVEN_SEQ_STEP 4u
#define KVP_PERF_GIVEN_ALLREDUCE 8u
#define KVP_PERF_GIVEN_KV_BW 16u
#define KVP_PERF_GIVEN_REQUEST_LATENCY 64u
#define KVP_PERF_GIVEN_BAND 32u     /* time_ratio_low and _high: a calibration's spread */

/* The engine's time data (its entry of profiles/engines) into hw: the fixed
 * costs, the all-reduce latency and the band, each where no calibration
 * gave it (hw->given; a calibration's band, KVP_PERF_GIVEN_BAND, is kept).  e NULL, or an entry without time data (the generic
 * engine's empty entry, the budget's engine_model as it is; an engine file
 * without time keys): the defaults
 * KVP_PERF_DEFAULT_*, with the band they were fitted with, and
 * time_source "defaults". */
void kvp_perf_hw_engine(struct kvp_perf_hw *hw, const struct kvp_engine_model *e);

/* The link a collective among `group` GPUs is bounded by: "nvlink" when the
 * group fits the NVLink domain, the host link (GPU to GPU over PCIe) when it
 * fits one server or the server size is unknown, else "scale-out".  A group
 * of one crosses nothing: the NVLink (or host) link is returned all the same. */
void kvp_perf_collective_link(const struct kvp_perf_hw *hw, uint32_t group, struct kvp_link *out);

/* Fill hw from a GPU profile: the measured GEMM table
 * profiles/kernels/gemm-<profile file name>-<bf16|fp8>.tsv where one exists
 * for the GPU and the weights' GEMM dtype (16-bit weights: bf16; fp8: fp8;
 * weight-only int4, int8, fp4 and a profile that gives its own
 * prefill_flops_efficiency: none), INVALID naming its file, line and field
 * when that table is malformed; the GEMM peak of the weights' format (fp8 ->
 * fp8, int8 -> int8, nvfp4/mxfp4 -> fp4; 16-bit and weight-only int4 ->
 * bf16), the bf16 peak with flops_warning set where the profile has none for
 * that format, the profile's calibration or the defaults, and its links:
 * NVLink (half the profile's bidirectional figure) and its domain, the host
 * link, the server size and the scale-out network.
 * INVALID when the profile's host_link is not a preset or a rate is missing. */
kvp_status kvp_perf_hw_from_gpu(const struct kvp_gpu *g, const struct kvp_model *m,
				struct kvp_perf_hw *out, struct kvp_error *err);
/* Set prefill_flops_efficiency as given (a flag, a calibration, an API
 * caller), which then times every FLOP: the measured GEMM table is dropped. */
void kvp_perf_hw_prefill_efficiency(struct kvp_perf_hw *hw, double eff);
/* Scale the prefill's compute rate by s (> 0), keeping the measured GEMM
 * table where there is one: every FLOP the step model times at the table's
 * rate or at prefill_flops_efficiency then takes 1 / s of its time
 * (kvp_perf_flops_efficiency).  prefill_flops_efficiency becomes its value
 * before any scale x s, at most 1; prefill_flops_scale s.  Scales do not
 * compound: a second call replaces the first.  This is how a `kvplan
 * calibrate` fit against a table is applied (calibrate-fit.h), so that
 * calibrate, validate and perf --calibration time a prefill alike. */
void kvp_perf_hw_prefill_scale(struct kvp_perf_hw *hw, double s);
/* Replace the host link (--host-link); collectives beyond the NVLink domain
 * inside one server cross it too. */
void kvp_perf_hw_host_link(struct kvp_perf_hw *hw, const struct kvp_link *link);

/* What the model needs to time one replica.  Borrowed pointers. */
struct kvp_perf_ctx {
	const struct kvp_model *model;
	const struct kvp_spec *spec;       /* per-GPU layer list, worst stage */
	struct kvp_perf_hw hw;
	struct kvp_link tp_link;           /* the link the tp all-reduces cross */
	struct kvp_link moe_link;          /* the experts' exchange over tp x dp GPUs */
	uint64_t weights_bytes;            /* on one GPU, worst stage (the budget's, overrides honoured) */
	uint64_t expert_bytes;             /* of which MoE experts */
	/* the model's attention layers (all stages in turn) by the kind of
	 * op an engine launches for them: dense (full, sliding, chunked) and
	 * MLA; kvp_perf_eager_s charges each its kind's launches */
	uint32_t dense_attention_layers, mla_layers;
	/* the launches of a pass that replays no graph (kvp_perf_uncaptured):
	 * each layer's attention part by its kind (MLA or the dense count,
	 * which layers without attention take too) and its FFN part (MoE
	 * layers the MoE count, the others the MLP's), + 2 all-reduces a layer
	 * at tp > 1; 0 where the engine gives no counts */
	double uncaptured_launches;
	/* the routed experts timed from hw.moe (kvp_perf_moe_table_s): the
	 * curve of this deployment's expert group, n = 0 when none applies */
	struct kvp_moe_curve moe_curve;
	/* set when the engine runs the measured MoE kernels but the table has
	 * no curve for this GPU, dtype, expert shape or group: what was
	 * assumed instead (the roofline's experts), for the caller to show;
	 * the band is then widened (time_ratio_low / high, kvp_perf_init) */
	char moe_warning[200];
};

/* weights_bytes: what one GPU holds (kvp_budget.weights_bytes).  INVALID when
 * a rate or an efficiency is not positive. */
kvp_status kvp_perf_init(struct kvp_perf_ctx *c, const struct kvp_spec *s, uint64_t weights_bytes,
			 const struct kvp_perf_hw *hw, struct kvp_error *err);

/* One forward pass on one GPU (all pipeline stages in turn). */
struct kvp_perf_step {
	double flops;                 /* whole model, all GPUs */
	double gpu_flops;             /* one GPU's share, all stages in turn */
	uint64_t weights_bytes;       /* read on one GPU, all stages in turn */
	uint64_t kv_bytes;            /* KV read (decode) or written (prefill) on one GPU */
	uint64_t bytes;               /* weights_bytes + kv_bytes */
	double compute_s, memory_s;   /* the two roofline terms */
	double comm_s;                /* tensor-parallel all-reduces + moe_comm_s */
	double moe_comm_s;            /* the experts' dispatch and combine (dp > 1) */
	double fixed_s;               /* the engine's fixed costs (kvp_perf_fixed_s) */
	double elementwise_s;         /* a prefill's norms, rotary, activation (kvp_perf_elementwise_s) */
	double eager_launch_s;        /* the host's time launching the eager attention ops, or the
				       * whole pass's where it replays no graph (uncaptured) */
	double eager_s;               /* of which the GPU's work does not hide (kvp_perf_eager_s) */
	bool uncaptured;              /* more tokens than hw.graph_max_tokens: no graph replayed */
	/* the routed experts from the measured MoE table (ctx moe_curve): MoE
	 * layers x the table's seconds at the step's tokens; their bytes and
	 * FLOPs are then out of memory_s and compute_s.  0: none (the
	 * experts are in the roofline) */
	double moe_s;
	double time_s;                /* max(compute_s, memory_s) + comm_s + elementwise_s + moe_s
				       * + eager_s + fixed_s */
	enum kvp_perf_bound bound;
};

/* The engine's fixed cost of one forward pass that carries `seqs`
 * sequences, a prefill among them or not: step_fixed_s + seqs x seq_step_s
 * (+ prefill_fixed_s) + moe_align_s (the serial MoE align kernel, set by
 * kvp_perf_init for its model).  These are what no roofline term holds (kernel
 * launches and CUDA-graph replay, the scheduler, sampling, input
 * metadata); their values are the engine's time data (profiles/engines). */
double kvp_perf_fixed_s(const struct kvp_perf_hw *hw, double seqs, bool prefill);

/* A time a request sees, `gpu_s` of the GPU's steps (and queue) from its
 * arrival to its first token or its last, plus hw->request_latency_s, its
 * latency outside the steps: the one place that adds it, once, to a TTFT
 * or an end to end (never to a step or a TPOT).  perf, the loaded TTFT of
 * calibrate and validate (ttft-load.c), serve's simulator and size call it. */
double kvp_perf_request_s(const struct kvp_perf_hw *hw, double gpu_s);

/* The engine's eager attention: the host launches, from Python and
 * outside its CUDA graphs, each attention layer's op (vLLM V1's piecewise
 * graphs split at vllm.unified_attention*: vllm/config.py
 * set_splitting_ops_for_v1 at 0.9.2), c->eager_launches launches of
 * hw.eager_launch_s each per pass: host_s.  Launches are asynchronous, so
 * the host runs ahead of a GPU busier than it and only the excess is
 * waited for: returns max(0, host_s - gpu_s), gpu_s being the pass's GPU
 * time (roofline, communication, elementwise).  A pass of decodes alone
 * (prefill false) pays none where hw.decode_full_graph (a full graph
 * replays attention inside it).  A pass of `tokens` tokens that replays no
 * graph at all (kvp_perf_uncaptured) has host_s = c->uncaptured_launches x
 * hw.uncaptured_launch_s instead.  *host (NULL: not wanted) gets host_s. */
double kvp_perf_eager_s(const struct kvp_perf_ctx *c, double gpu_s, bool prefill, double tokens,
			double *host);

/* Whether a pass of `tokens` tokens (one rank's, padded or not) replays no
 * CUDA graph: more than hw.graph_max_tokens (vLLM V1 runs such a pass
 * without one: 0.9.2 v1/worker/gpu_model_runner.py l.1296-1311 pads only
 * up to the largest capture size, compilation/cuda_piecewise_backend.py
 * l.108-117 runs the general-shape graph for any other size) where the
 * engine has a fitted hw.uncaptured_launch_s and launch counts.  Such a
 * pass launches every op of every layer from the host: host_s =
 * c->uncaptured_launches x hw.uncaptured_launch_s, in place of the eager attention's launches (a part
 * of it); kvp_perf_eager_s charges its excess over the GPU's time alike. */
bool kvp_perf_uncaptured(const struct kvp_perf_ctx *c, double tokens);
/* The host's time of one pass that replays no graph: c->uncaptured_launches
 * x hw.uncaptured_launch_s; 0 where the engine gives no such term. */
double kvp_perf_uncaptured_host_s(const struct kvp_perf_ctx *c);

/* The launches of the engine's attention op in one pass: the dense
 * attention layers x hw.eager_attention_launches + the MLA layers x
 * hw.eager_attention_launches_mla (what kvp_perf_eager_s charges). */
double kvp_perf_eager_launches(const struct kvp_perf_ctx *c);

/* Seconds of the elementwise kernels of a pass carrying `tokens` tokens, a
 * prefill chunk among them (step-elementwise.h's bytes for the spec's tp and
 * serving dtype, at bandwidth x decode_bw_efficiency, the rate decode's
 * weight reads reach).  They run between the GEMMs, not beside them: added
 * to the step, not folded into its roofline.  Only where the GPU's prefill
 * is timed with a measured GEMM table (hw.gemm.nm, step-gemm.h), which holds
 * the GEMMs alone: the constant prefill_flops_efficiency (a profile's, a
 * calibration's or the default) is a whole pass's share of the peak, these
 * kernels inside it; 0 there.  A pass of decodes alone is charged none (its
 * few rows are inside the engine's fixed costs, fitted to decode steps). */
double kvp_perf_elementwise_s(const struct kvp_perf_ctx *c, double tokens);

/* Seconds of the routed experts of a step that carries `tokens` tokens
 * over the whole deployment (every DP rank's: TensorRT-LLM's MoE layer sees
 * them all on each GPU of the expert group), from the measured MoE table:
 * MoE layers x kvp_moe_curve_s(curve, tokens).  A negative number when no
 * curve applies (ctx moe_curve.n = 0): the roofline then holds the experts. */
double kvp_perf_moe_table_s(const struct kvp_perf_ctx *c, double tokens);

/* Seconds to read `weights` bytes at bandwidth x eff_bw and `kv` bytes at
 * bandwidth x kv_bw_efficiency (eff_bw where that is 0): the memory term. */
double kvp_perf_memory_s(const struct kvp_perf_hw *hw, uint64_t weights, uint64_t kv, double eff_bw);

/* A step's GPU seconds from its compute and memory terms, kv_s the part of
 * memory_s that reads (or writes) the KV cache: the roofline max(compute_s,
 * memory_s); where the engine runs its attention between the GEMMs
 * (attention_serial) max(compute_s, memory_s - kv_s) + kv_s, the KV's
 * reads after the GEMMs, not under them. */
double kvp_perf_step_time(const struct kvp_perf_hw *hw, double compute_s, double memory_s,
			  double kv_s);

/* Prefill B prompts of n tokens together (on each DP rank). */
kvp_status kvp_perf_prefill(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t n,
			    struct kvp_perf_step *out, struct kvp_error *err);
/* The same when the fullest DP rank prefills `batch` prompts and the
 * deployment `total` (batch <= total <= batch x dp; the form above is total
 * = batch x dp): the routed experts' FLOPs of all `total` prompts are spread
 * over the tp x dp GPUs of the expert group, so one prompt alone on dp 8
 * puts 1/8 of its routed FLOPs on each GPU, not all on its rank's.  The
 * step's flops stay the rank's whole-model count; gpu_flops is the GPU's
 * share.  USAGE naming "batch" when total is out of that range. */
kvp_status kvp_perf_prefill_dp(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t total,
			       uint64_t n, struct kvp_perf_step *out, struct kvp_error *err);

/* Time to first token under continuous batching with chunked prefill (as
 * vLLM's scheduler runs it: the running decodes first, then the prompt in
 * chunks of what the step's token budget leaves).  One request of n prompt
 * tokens joins B - 1 sequences already decoding at `context` tokens; each step
 * carries T = max_batched_tokens tokens: the B - 1 decode tokens and a chunk
 * of c = T - (B - 1) prompt tokens, so the prompt takes k = ceil(n / c)
 * steps and its first token comes with the last.  One step, on the same
 * roofline as the prefill and decode above:
 *   compute = the prompt's prefill FLOPs / k + the B - 1 decode FLOPs (with a
 *             measured GEMM table the chunk's at the rate of ceil(n / k) rows)
 *   memory  = weights (all of them, read every step) + the B - 1 sequences' KV
 *             + the prompt's KV / k (written), over bandwidth x efficiency
 *   comm    = the all-reduces of ceil(n / k) + B - 1 tokens
 *   fixed   = the engine's cost of a pass with a prefill and B sequences
 *             (kvp_perf_fixed_s)
 * TTFT = k x (max(compute, memory) + comm + fixed).  Against kvp_perf_prefill of B
 * prompts at once (B x n tokens in one pass, the "ttft" of a batch) this is
 * what one user waits for in a running server; no queueing is counted.
 * c = 0 (B - 1 >= T): no prompt token fits a step, ttft_s = INFINITY. */
struct kvp_perf_chunked {
	uint64_t chunk_tokens;        /* c */
	uint64_t steps;               /* k */
	double compute_s, memory_s, comm_s, fixed_s, step_s;   /* one step */
	double elementwise_s;         /* one step's (kvp_perf_elementwise_s), inside step_s */
	double eager_s;               /* one step's (kvp_perf_eager_s), inside step_s */
	bool uncaptured;              /* a step replays no graph (kvp_perf_uncaptured) */
	double ttft_s;
	/* with KV offloaded (kvp_perf_chunked_offload): */
	bool offload;
	uint64_t transfer_bytes;      /* over the k steps, one GPU, every stage */
	double transfer_s;            /* their time over the link */
	double gpu_ttft_s;            /* k x step_s: the TTFT were nothing offloaded */
	/* one step's routed experts from the measured MoE table, the chunk's
	 * and the decodes' tokens together, inside step_s; 0: in the roofline */
	double moe_s;
};

kvp_status kvp_perf_chunked_ttft(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t n,
				 uint64_t context, uint64_t max_batched_tokens,
				 struct kvp_perf_chunked *out, struct kvp_error *err);
/* The same with the deployment's `total` sequences beside the fullest DP
 * rank's `batch` (kvp_perf_prefill_dp): the prompt prefills alone, its routed
 * FLOPs spread over the expert group, beside total - 1 decodes.  The form
 * above is total = batch x dp.  With dp = 1 both are the one above. */
kvp_status kvp_perf_chunked_ttft_dp(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t total,
				    uint64_t n, uint64_t context, uint64_t max_batched_tokens,
				    struct kvp_perf_chunked *out, struct kvp_error *err);

/* The chunked TTFT with KV kept off the GPU (--kv-offload), as the decode
 * step's TPOT counts it (kvp_perf_offload_step): step j of the k reads the
 * B - 1 decodes' KV at `context` and the prompt's first min(j c, n) tokens;
 * of that KV on one GPU of a stage, a share `fraction` (when >= 0) or what
 * exceeds the pool `pool_bytes` (fraction < 0) crosses `link` in the step,
 * layer i + 1's while layer i computes.  ch holds kvp_perf_chunked_ttft's
 * answer; its ttft_s becomes the sum of the k offloaded steps.  With more than
 * 4,096 steps they are taken in 4,096 runs, each at its last (largest) step:
 * never faster.  OVERFLOW when a step's KV bytes overflow. */
kvp_status kvp_perf_chunked_offload(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t n,
				    uint64_t context, double fraction, uint64_t pool_bytes,
				    const struct kvp_link *link, struct kvp_perf_chunked *ch,
				    struct kvp_error *err);

/* One decode step: B sequences each holding `context` tokens of KV generate
 * one token each.  This is the prediction kvbench compares with a measured
 * decode step. */
kvp_status kvp_perf_decode_step(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t context,
				struct kvp_perf_step *out, struct kvp_error *err);
/* The same with the deployment's `total` sequences beside the fullest
 * rank's `batch` (as kvp_perf_prefill_dp): the experts a step reads are
 * those the `total` tokens touch, 1 - (1 - k/E)^total, and their FLOPs are
 * spread over the expert group. */
kvp_status kvp_perf_decode_step_dp(const struct kvp_perf_ctx *c, uint64_t batch, uint64_t total,
				   uint64_t context, struct kvp_perf_step *out,
				   struct kvp_error *err);
/* A step from its whole-model FLOPs, the weights and KV one GPU reads per
 * stage, and the tokens whose hidden states the all-reduces carry: the
 * roofline every step above ends in. */
kvp_status kvp_perf_step_roofline(const struct kvp_perf_ctx *c, double flops, double eff_flops,
				  uint64_t weights, uint64_t kv, double eff_bw, double tokens,
				  struct kvp_perf_step *out, struct kvp_error *err);

/* The same with the collectives of model m's layers instead of the
 * target's: a draft's step (time/speculative.c) all-reduces over its own
 * layers (one for an EAGLE head or an MTP module), not the target's L. */
kvp_status kvp_perf_step_roofline_of(const struct kvp_perf_ctx *c, const struct kvp_model *m,
				     double flops, double eff_flops, uint64_t weights, uint64_t kv,
				     double eff_bw, double tokens, struct kvp_perf_step *out,
				     struct kvp_error *err);

/* The same for sequences of different lengths lens[0..n). */
kvp_status kvp_perf_decode_step_lens(const struct kvp_perf_ctx *c, const uint64_t *lens, size_t n,
				     struct kvp_perf_step *out, struct kvp_error *err);

/* The share of the peak a step's FLOPs reach on c's GPU: `flops` (whole
 * model) of which `attn_flops` are attention's, over `tokens` rows of the
 * rank (`total` the deployment's); with c->hw.gemm a measured table, the
 * linear layers at its rate (kvp_gemm_step_efficiency, time/step-gemm.h),
 * else every FLOP at prefill_flops_efficiency. */
double kvp_perf_flops_efficiency(const struct kvp_perf_ctx *c, double flops, double attn_flops,
				 double tokens, double total);
/* The same with the routed experts' FLOPs on this GPU given, `routed` of
 * `flops` (0 where the measured MoE table times them apart and `flops` left
 * them out: kvp_gemm_step_efficiency_routed), a calibration's scale applied
 * alike. */
double kvp_perf_flops_efficiency_routed(const struct kvp_perf_ctx *c, double flops,
					double attn_flops, double tokens, double routed);

/* Whole-model FLOPs of one sequence: the causal attention of a prefill of n
 * tokens (QK^T and PV over the pairs each layer kind keeps: all, a window, a
 * chunk; none for Mamba), and all of a prefill of n tokens.  Counted on all
 * active parameters at every position (the LM head too, which engines run at
 * the last position only, and the input embedding, a gather): more FLOPs
 * than run, so never a faster prefill. */
double kvp_perf_attention_flops(const struct kvp_model *m, uint64_t n);
double kvp_perf_prefill_flops(const struct kvp_model *m, uint64_t n);
/* Whole-model FLOPs of one decode token over `context` tokens of KV. */
double kvp_perf_decode_flops(const struct kvp_model *m, uint64_t context);

/* A decode step with `transfer_bytes` of KV (on one GPU) brought over `link`. */
struct kvp_perf_offload {
	uint64_t transfer_bytes;
	double transfer_s;            /* transfer_bytes / effective rate */
	double gpu_s;                 /* the step on the GPU alone */
	double serial_s;              /* transfer, then compute */
	double pipelined_s;           /* layer i+1's KV moves while layer i computes */
	bool transfer_bound;          /* the transfer per layer outlasts the compute per layer */
};

void kvp_perf_offload_step(const struct kvp_perf_ctx *c, const struct kvp_perf_step *gpu,
			   uint64_t transfer_bytes, const struct kvp_link *link,
			   struct kvp_perf_offload *out);

#endif
