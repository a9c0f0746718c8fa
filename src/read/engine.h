/* engine.h: each serving engine's memory accounting as data, one version at a
 * time, loaded from profiles/engines/<engine>.yaml.
 *
 * The budget reads every engine constant through this module and nowhere
 * else: default batch limits by GPU class, the profiling pass's sampler and
 * hidden-state terms, MoE workspaces, non-torch memory by tensor parallelism,
 * whether CUDA graphs are charged, SGLang's mem_fraction_static reserve and
 * TensorRT-LLM's free fraction.  Each file cites the engine source it
 * transcribes; the spreads say how far public logs scatter around each
 * estimated term.  Legend: N = sequences in the profiling pass, V = vocabulary,
 * T = batched tokens, H = hidden size, S = top-k buffer rows. */
#ifndef KVP_ENGINE_H
#define KVP_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "model/model.h"

#define KVP_ENGINE_VERSION_MAX 32

struct kvp_engine_model {
	char engine[16];                   /* as asked for: vllm, sglang, trtllm (or a path) */
	char kind[16];                     /* the file's engine: key: vllm, sglang, trtllm */
	char version[KVP_ENGINE_VERSION_MAX];  /* the modelled version followed */
	/* the versions the entry stands for (base/version.h: ">=0.19,<0.20");
	 * "": its own version only (any spelling of it: v0.19.0, 0.19.0+cu128) */
	char range[48];
	/* --engine-version as given ("": the file's default), and whether it
	 * was outside every entry, so the nearest modelled version stands in */
	char version_asked[KVP_ENGINE_VERSION_MAX];
	bool version_nearest;
	/* added to both sides of the band when version_nearest: how far a
	 * version's accounting strayed from its nearest modelled one on the
	 * recorded logs (0: nothing added) */
	uint64_t unmodelled_version_spread_bytes;
	char source[160];
	char path[512];
	double utilization;                /* vLLM gpu_memory_utilization; 0: none */
	uint32_t block_size;
	/* vLLM */
	uint64_t large_gpu_memory_bytes;   /* GPUs with at least this ... */
	char large_gpu_excludes[32];       /* ... whose name lacks this are "large" */
	uint32_t max_num_seqs_large, max_num_seqs_small;
	uint32_t max_num_batched_tokens_large, max_num_batched_tokens_small;
	uint32_t sampler_bytes_per_seq_vocab;
	uint32_t topk_buffer_rows, topk_buffer_bytes_per_row_vocab;
	uint32_t retained_hidden_per_token, retained_hidden_per_seq;
	/* the fused-MoE kernel's buffers kept past the forward pass, 0-2:
	 * workspace13, then workspace2 (shapes in budget.c) */
	uint32_t moe_workspaces;
	uint64_t non_torch_tp1_bytes, non_torch_tp_multi_bytes;
	/* vLLM's custom all-reduce (distributed/device_communicators/
	 * custom_all_reduce.py): the TP group sizes it runs at (comma-separated;
	 * "": the rule is off and every TP > 1 is charged as if it ran), the
	 * largest group it runs at without NVLink between every pair, and the
	 * non-torch growth charged on top of non_torch_tp_multi when it runs */
	char custom_all_reduce_sizes[32];
	uint32_t custom_all_reduce_pcie_max;
	uint64_t non_torch_custom_all_reduce_bytes;
	bool cuda_graphs_subtracted;
	uint64_t cuda_graphs_bytes;
	double activation_spread;          /* fraction the peak may fall below */
	/* bytes the engine's peak may rise above the estimate (the low end of
	 * the band); 0: activation_spread on that side too */
	uint64_t activation_spread_above_bytes;
	uint64_t non_torch_spread_bytes;
	double weights_spread;             /* fraction */
	/* vLLM MXFP4 MoE layout: I/tp and H rounded up to these multiples
	 * (Marlin, before SM100); to the sm100 multiple on GPUs whose name
	 * contains an entry of mxfp4_sm100_gpus (comma-separated); 0: unpadded */
	uint32_t mxfp4_pad_intermediate, mxfp4_pad_hidden, mxfp4_pad_sm100;
	char mxfp4_sm100_gpus[64];
	/* the Triton MoE kernels' layout (vLLM >= the version that vendors
	 * triton_kernels, on SM90): I/tp and H rounded up to these multiples
	 * (0: unpadded) on GPUs whose name contains an entry of
	 * mxfp4_triton_gpus; the sm100 list is checked first */
	uint32_t mxfp4_pad_triton_intermediate, mxfp4_pad_triton_hidden;
	char mxfp4_triton_gpus[64];
	/* the rotary cos/sin cache every rank builds (max positions x rotary
	 * dim): "serving" (its elements in the serving dtype), a dtype name, or
	 * "" (not counted) */
	char rotary_cache_dtype[16];
	/* vLLM's encoder profile run (memory/encoder.h): whether the version
	 * runs the vision tower on its largest dummy input and keeps the outputs
	 * through the language model's dummy run, and the frames a dummy video
	 * holds at most (Qwen2-VL's _MAX_FRAMES_PER_VIDEO) */
	bool mm_encoder_profile;
	uint32_t mm_video_max_frames;
	/* the dummy input's frames are counted against max_num_batched_tokens
	 * (0.10.2's _get_mm_dummy_batch seq_len=self.max_num_tokens) instead of
	 * max_model_len */
	bool mm_dummy_from_batched_tokens;
	/* with DP attention, the weights split over every GPU of a stage as the
	 * routed experts are, comma-separated: lm_head, dense_mlp,
	 * shared_experts ("": only the routed experts, vLLM's placement) */
	char dp_attention_full_tp[64];
	/* SGLang */
	uint64_t reserve_base_bytes, reserve_per_prefill_token_bytes;
	uint32_t reserve_min_prefill_tokens;
	uint64_t reserve_per_graph_bs_bytes, reserve_per_gpu_in_group_bytes;
	uint64_t reserve_piecewise_graphs_bytes, reserve_floor_bytes, reserve_floor_above_bytes;
	/* MLA models' piecewise-graph reserve instead (0: the same) */
	uint64_t reserve_piecewise_graphs_mla_bytes;
	/* DP attention: per cuda_graph_max_bs x dp, and again per the same
	 * above reserve_graph_bs_large_above */
	uint64_t reserve_per_graph_bs_dp_bytes, reserve_per_graph_bs_dp_large_bytes;
	uint32_t reserve_graph_bs_large_above;
	uint32_t chunked_prefill_size;
	uint32_t cuda_graph_max_bs_tp_below_4, cuda_graph_max_bs_tp_from_4;
	/* SGLang versions whose default mem_fraction_static is a table, not
	 * the reserve formula above (kvp_engine_sglang_fraction; "" when not):
	 * "tp:fraction,..." (the fraction of the largest tp not above the
	 * deployment's), or "below GiB:base GiB:GiB per GPU,...,0:base:per"
	 * (the first row whose GPU memory bound is above the GPU's; 0: any) */
	char fraction_by_tp[64];
	char reserve_by_gpu_memory[96];
	double fraction_spread;            /* SGLang and TRT-LLM fractions */
	/* TensorRT-LLM */
	double free_fraction;
	/* time data (kvplan-profiles(5), ENGINE TIME DATA), seconds; each 0
	 * when not given: the engine's fixed cost of every forward pass, of a
	 * prefill pass beyond it, of each running sequence in a step, and of
	 * one all-reduce (its latency, beside the bytes over the link) */
	double step_fixed_s, prefill_fixed_s, seq_step_s, allreduce_latency_s;
	/* each request's latency outside the GPU's steps (tokenising, the
	 * hops between the engine's processes), added to its TTFT and end to
	 * end and charged to no step; 0: none given */
	double request_latency_s;
	/* the share of the bandwidth its attention kernels reach on the KV
	 * cache; 0: not given (the weights' decode efficiency) */
	double kv_bw_efficiency;
	/* on GPUs whose name contains an entry of kv_bw_efficiency_gpus
	 * (comma-separated), the share its attention kernels reach there
	 * instead (kvp_engine_kv_bw_efficiency); 0: kv_bw_efficiency on every GPU */
	double kv_bw_efficiency_listed;
	char kv_bw_efficiency_gpus[64];
	/* the band on time: the measured / predicted time ratios of the fit's
	 * 10th and 90th percentiles (0: not given) */
	double time_ratio_low, time_ratio_high;
	bool time_given;                   /* any of the time keys above was read */
	/* the host's cost of one launch made from Python outside a CUDA graph
	 * (eager_launch_us: a time key, fitted), and how many launches one
	 * layer's attention op makes where the engine runs it outside its
	 * graphs (vLLM V1's piecewise graphs split at the attention op), for
	 * a dense (flash) attention layer and an MLA layer, counted in the
	 * engine's source (the graph piece that follows the op counted as one
	 * launch); decode_full_graph: a pass of decodes alone replays a full
	 * graph, attention inside it (vLLM 0.11.0 onward, FULL_AND_PIECEWISE),
	 * so only passes with a prefill pay them.  0 / false: none charged. */
	double eager_launch_s;
	uint32_t eager_attention_launches, eager_attention_launches_mla;
	bool decode_full_graph;
	/* a pass of more tokens than graph_max_tokens (the engine's largest
	 * CUDA-graph size, read in its source) replays no graph: every op of
	 * every layer is launched from the host, uncaptured_launch_s each
	 * launch (uncaptured_launch_us: a time key, fitted), in place of the
	 * eager attention's launches.  How many a layer launches, counted in
	 * the engine's source by the layer's parts: its attention part (input
	 * norm to o_proj) for a dense and an MLA layer, its FFN part (post-
	 * attention norm to the FFN's output) for a dense MLP and an MoE layer;
	 * at tp > 1 each part adds its all-reduce's one.  0: none charged (no
	 * such pass, or no data) */
	uint32_t graph_max_tokens;
	double uncaptured_launch_s;
	uint32_t uncaptured_attention_launches, uncaptured_attention_launches_mla;
	uint32_t uncaptured_mlp_launches, uncaptured_moe_launches;
	/* beside the MoE part's, a layer's shared experts (0: none counted) */
	uint32_t uncaptured_shared_expert_launches;
	/* an engine whose kernels reach a share of what the GPU's efficiencies
	 * say (llama.cpp's own mat-vec and GEMM paths): decode_bw_efficiency
	 * and prefill_flops_efficiency are multiplied by these, each in (0, 1];
	 * 0: not given (x 1).  Time data: borrowed with the rest. */
	double decode_bw_scale, prefill_flops_scale;
	/* a kernel of fixed time run once per MoE layer of every forward pass,
	 * whatever the batch, in models of at least moe_align_min_experts
	 * routed experts (SGLang 0.4.1-0.4.1.post3's serial moe_align_block_size
	 * for >= 224 experts: time/step-moe-align.h): moe_align_layer_us, a
	 * time key (its own entry's, never borrowed); 0: none charged */
	double moe_align_layer_s;
	uint32_t moe_align_min_experts;
	/* time data fitted on a defect of this entry's own releases: never
	 * lent to an entry without time data (kvp_engine_model_load) */
	bool time_own_only;
	/* the scheduler's shape of a request's first token under load
	 * (kvp_perf_loaded_ttft): prefill_alone, a new request's prefill runs
	 * in a batch of prefills while the running decodes wait (SGLang's
	 * default, no mixed chunk), not chunked beside them (vLLM's);
	 * overlap_schedule, the scheduler launches the next batch before it
	 * reads the last one's result, so one more step passes before a
	 * prefill's token is seen (SGLang's event_loop_overlap).  Both false:
	 * vLLM's chunked prefill. */
	bool prefill_alone, overlap_schedule;
	/* the prefill's elementwise term (time/step-elementwise.h): whether the
	 * engine runs the rotary embedding as a kernel of its own (vLLM's,
	 * SGLang's rotary_emb), true when left out; false where it rotates q
	 * and k inside its attention's QKV preprocessing (TensorRT-LLM);
	 * rotary_fused, its negation, false in a model read from no file */
	bool elementwise_rotary, rotary_fused;
	/* the engine's MoE layers run the fused MoE kernels the measured tables
	 * profiles/kernels/moe-<gpu>-<dtype>.tsv were collected on (TensorRT-LLM's
	 * PyTorch backend): its routed experts are timed from them
	 * (time/moe-table.h); false when left out */
	bool moe_kernel_tables;
	/* the engine's attention runs as kernels of its own between the
	 * layer's GEMMs, each waiting on the last (TensorRT-LLM's
	 * Attention.forward: qkv_proj, attn.forward, o_proj in turn): a step's
	 * KV reads add to the rest of the step, not under it
	 * (kvp_perf_step_time); false when left out: the whole step's roofline */
	bool attention_serial;
	/* the generation attention runs one thread block per (sequence, query
	 * head), each loading its KV head's cache (TensorRT-LLM 0.6's masked
	 * MHA): a decode step's KV loads are the cache's bytes times the query
	 * heads per KV head (time/step-gqa.h); false when left out: once */
	bool decode_kv_per_query_head;
	/* a decode step's linear layers at the measured GEMM table's rate for
	 * M = its sequences, as a prefill's (kvp_perf_decode_flops_efficiency),
	 * for an engine whose per-step costs were fitted with it in place;
	 * false when left out: the constant prefill_flops_efficiency */
	bool decode_gemm_table;
	/* the entry that gave the time data when this one has none: the
	 * nearest modelled version that has some ("": its own), its band
	 * doubled each way (kvp_engine_model_load) */
	char time_from[KVP_ENGINE_VERSION_MAX];
};

/* Load `engine`'s model for `version` (NULL or "": the file's
 * default_version) from profiles/engines/<engine>.yaml, found like the other
 * profiles.  `version` is read as the engine prints it (base/version.h):
 * the first entry whose range holds it, else whose own version equals it;
 * outside every entry, the entry whose version is nearest (ties: the newer)
 * with version_nearest set, for the caller to warn.  An entry without time
 * data takes the nearest entry's that has some (ties: the newer), names it
 * in time_from, and doubles its band's distance from 1 each way (no
 * measurement of the version stands behind it).  NOT_FOUND (field
 * engine-version) when it is no version and no entry is named so, or no
 * entry's version is one; INVALID and PARSE carry file:line:col and the
 * field. */
kvp_status kvp_engine_model_load(const char *engine, const char *version,
				 struct kvp_engine_model *out, struct kvp_error *err);

/* vLLM's default max_num_seqs / max_num_batched_tokens on a GPU of
 * `memory_bytes` named `gpu_name` (engine/arg_utils.py get_batch_defaults). */
void kvp_engine_batch_defaults(const struct kvp_engine_model *e, uint64_t memory_bytes,
			       const char *gpu_name, uint32_t *max_num_seqs,
			       uint64_t *max_batched_tokens);

/* The routed-expert bytes on one GPU as vLLM allocates MXFP4 experts
 * (model_executor/layers/quantization/mxfp4.py, Mxfp4MoEMethod.create_weights):
 * w13 is E x 2 I_p x H_p and w2 E x H_p x I_p (4-bit values, an e8m0 scale
 * per 32), with I_p = inter_per_partition and H_p = hidden rounded up to the
 * padding for `gpu_name`.  Returns routed_bytes x (I_p H_p) / (I H), rounded
 * up; routed_bytes itself when nothing pads; UINT64_MAX on overflow. */
/* The rotary cos/sin cache one rank holds beside its weights: P x d_r
 * elements of rotary_cache_dtype, P = the model's max_context
 * (max_position_embeddings), d_r = its rotary_dim, else the MLA rope
 * dimension, else head_dim; one cache for the model (the engines share it
 * between layers).  0 when the engine model does not count it or the model
 * has no attention layer; UINT64_MAX on overflow.  Models without RoPE
 * (ALiBi, learned positions) are not told apart: their cache is
 * over-counted. */
uint64_t kvp_engine_rotary_cache_bytes(const struct kvp_engine_model *e,
				       const struct kvp_model *m, enum kvp_dtype serving);

/* dp_attention_full_tp as KVP_SHAPE_DP_* flags (model/shape.h). */
uint32_t kvp_engine_dp_full_tp(const struct kvp_engine_model *e);

/* SGLang's default mem_fraction_static under a version's table rule (the
 * entry's fraction_by_tp or reserve_by_gpu_memory) for a GPU of gpu_mib MiB
 * and tp x pp GPUs: the table's fraction, or round((gpu - reserved) / gpu,
 * 3) with reserved = base + per GPU x tp x pp GiB, at least 0.  -1 when the
 * entry has neither table (the reserve formula applies). */
double kvp_engine_sglang_fraction(const struct kvp_engine_model *e, double gpu_mib, uint32_t tp,
				  uint32_t pp);

/* The share of the bandwidth e's attention kernels reach on the KV cache
 * of the GPU named gpu_name: kv_bw_efficiency_listed where the name
 * contains an entry of kv_bw_efficiency_gpus, else kv_bw_efficiency. */
double kvp_engine_kv_bw_efficiency(const struct kvp_engine_model *e, const char *gpu_name);
uint64_t kvp_engine_mxfp4_routed_bytes(const struct kvp_engine_model *e, const char *gpu_name,
				       uint32_t hidden, uint32_t inter_per_partition,
				       uint64_t routed_bytes);

/* Which GPUs of a TP group reach each other's memory peer-to-peer
 * (custom_all_reduce.py _can_p2p: gpu_p2p_access_check on every pair). */
enum kvp_p2p {
	KVP_P2P_PCIE = 0,      /* over PCIe and NVLink alike (the default) */
	KVP_P2P_NVLINK_ONLY,   /* only peers NVLink joins (a profile's pcie_p2p: false) */
	KVP_P2P_NONE,          /* none (--p2p no) */
	KVP_P2P_ALL,           /* every pair (--p2p yes) */
};

/* Does vLLM's custom all-reduce run in a TP group of `tp` GPUs whose
 * NVLink domain joins `nvlink_domain` GPUs (0 or 1: no NVLink; negative:
 * topology unknown), peers reaching each other as `p2p` says?
 * custom_all_reduce.py: only at the listed world sizes; above
 * custom_all_reduce_pcie_max only when NVLink joins every pair ("not
 * supported on more than two PCIe-only GPUs"); and only when every pair
 * passes the P2P test ("Custom allreduce is disabled because your platform
 * lacks GPU P2P capability or P2P test failed").  Unknown topology counts
 * as NVLink: it charges more memory, so it errs toward fewer tokens. */
bool kvp_engine_custom_all_reduce(const struct kvp_engine_model *e, uint32_t tp,
				  int nvlink_domain, enum kvp_p2p p2p);

/* Non-torch memory the engine charges on one of `gpus` GPUs in a TP group
 * of `tp` (nvlink_domain and p2p as above): non_torch_tp1 on one GPU, else
 * non_torch_tp_multi plus non_torch_custom_all_reduce where the custom
 * all-reduce runs. */
uint64_t kvp_engine_non_torch_bytes(const struct kvp_engine_model *e, uint32_t gpus,
				    uint32_t tp, int nvlink_domain, enum kvp_p2p p2p);

#endif
