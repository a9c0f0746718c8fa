/* model.h: the one description of a model that every command reads, and the
 * arithmetic on it: KV bytes per token per layer, per-sequence state, weights.
 *
 * Legend: L = layers, n = tokens, H_kv = KV heads, d_h = head dim,
 * b = bytes per element, B = sequences, tp/pp = tensor/pipeline parallel.
 *
 * A model is a list of layers, each of one kind.  kvp_spec_build turns it into
 * the per-GPU layer list of the worst pipeline stage for a tp/pp split and a KV
 * dtype: bytes per token for attention layers (2 * max(1, H_kv/tp) * d_h * b
 * for MHA/GQA/MQA, (r + d_rope) * b for MLA, which tensor parallelism does not
 * split), the window of sliding and chunked layers, and fixed bytes per
 * sequence for Mamba and linear-attention layers (Mamba1: ((d_conv - 1) +
 * d_state) x expand H / tp elements; linear attention, vLLM's
 * gated_delta_net_state_shape: (H_v / tp) d_k d_v state elements plus
 * (conv - 1) (2 H_k d_k + H_v d_v) / tp convolution elements).  Nothing else in kvplan recomputes these. */
#ifndef KVP_MODEL_H
#define KVP_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"

#define KVP_MAX_LAYERS 4096
#define KVP_NAME_MAX 128
#define KVP_MODEL_WARNINGS 8
#define KVP_WARNING_MAX 1280

enum kvp_layer_kind {
	KVP_LAYER_FULL,     /* full attention: every token */
	KVP_LAYER_SLIDING,  /* sliding window of W tokens */
	KVP_LAYER_CHUNKED,  /* chunked local attention, chunk C */
	KVP_LAYER_MLA,      /* multi-head latent attention: one latent per token */
	KVP_LAYER_MAMBA,    /* Mamba / linear state: fixed bytes per sequence */
	KVP_LAYER_NONE,     /* no KV (shared or encoder-only) */
	KVP_LAYER_KIND_COUNT
};

/* Element formats for weights and KV.  Sizes are rational: bits per element
 * plus scale bytes, see kvp_dtype_info. */
enum kvp_dtype {
	KVP_DTYPE_AUTO,       /* KV: follow the serving dtype */
	KVP_DTYPE_FP32,
	KVP_DTYPE_FP16,
	KVP_DTYPE_BF16,
	KVP_DTYPE_FP8,        /* e4m3; per-layer scalar scales */
	KVP_DTYPE_FP8_E5M2,
	KVP_DTYPE_FP8_PTH,    /* fp8 with an fp32 scale per token and head */
	KVP_DTYPE_INT8,       /* int8 with an fp32 scale per token and head */
	KVP_DTYPE_INT4,       /* KV int4 with fp16 scale + fp16 zero per token and head */
	KVP_DTYPE_INT4_GPTQ,  /* weights: group 128, fp16 scales, 4-bit zeros */
	KVP_DTYPE_INT4_AWQ,   /* weights: same footprint as GPTQ */
	KVP_DTYPE_MXFP4,      /* weights: e8m0 scale per 32 */
	KVP_DTYPE_NVFP4,      /* fp8 scale per 16 */
	KVP_DTYPE_COUNT
};

struct kvp_dtype_info {
	const char *name;
	unsigned bits;             /* bits per element */
	/* weights: extra bytes per parameter as num/den (group scales, zeros) */
	unsigned scale_num, scale_den;
	/* KV: extra bytes per (token, KV head) for K and again for V */
	unsigned kv_scale_bytes;
	bool kv_ok;                /* usable as a KV cache dtype */
	bool weights_ok;           /* usable as a weights dtype */
};

const struct kvp_dtype_info *kvp_dtype_info(enum kvp_dtype dt);
/* KV extra bytes per element as *num / *den (NVFP4: one fp8 scale per 16
 * elements, 1/16); 0/1 for the other dtypes.  For printing the arithmetic. */
void kvp_dtype_kv_elem_scale(enum kvp_dtype dt, unsigned *num, unsigned *den);
/* Accepts names and engine spellings: bf16/bfloat16, fp16/float16/half,
 * fp8/fp8_e4m3/fp8-e4m3, fp8_e5m2, int8, int4, int4-gptq, int4-awq, mxfp4, nvfp4,
 * fp32/float32, auto.  Returns false when unknown. */
bool kvp_dtype_parse(const char *s, enum kvp_dtype *out);
const char *kvp_dtype_name(enum kvp_dtype dt);
const char *kvp_layer_kind_name(enum kvp_layer_kind kind);
bool kvp_layer_kind_parse(const char *s, enum kvp_layer_kind *out);

/* A quantized weights layout read from a checkpoint (quantization_config):
 * `bits` per element plus `group_bits` of scales and zero points for every
 * `group` elements.  bits = 0: none, the dtype alone says the size. */
struct kvp_weights_format {
	uint32_t bits;
	uint32_t group;            /* elements per scale group; 0: per channel (negligible) */
	uint32_t group_bits;       /* bits of scale (+ zero) per group */
};

struct kvp_model {
	char name[KVP_NAME_MAX];
	char path[512];            /* where it was read from, for messages */
	char hf_id[KVP_NAME_MAX];
	char family[64];
	enum kvp_dtype dtype;      /* checkpoint dtype */
	uint32_t num_layers;
	uint32_t hidden_size;
	uint32_t num_heads;
	uint32_t num_kv_heads;
	uint32_t head_dim;
	uint32_t head_dim_v;
	uint32_t intermediate_size;
	uint32_t vocab_size;
	bool tie_word_embeddings;
	uint64_t max_context;
	uint8_t layers[KVP_MAX_LAYERS]; /* enum kvp_layer_kind per layer */
	uint32_t sliding_window;   /* W, tokens */
	uint32_t chunk_size;       /* C, tokens */
	uint32_t mla_kv_lora_rank; /* r */
	uint32_t mla_rope_dim;     /* d_rope */
	uint32_t mla_q_lora_rank;  /* q_lora_rank; 0: q is projected directly (no q_a_proj) */
	/* RoPE dimensions per head (partial_rotary_factor x head_dim, rotary_pct,
	 * rotary_dim); 0: the whole head (MLA: mla_rope_dim) */
	uint32_t rotary_dim;
	/* positions of the rotary cos/sin cache where rope_scaling lengthens it
	 * (linear, dynamic: max_position x factor; yarn: original x factor); 0:
	 * max_context.  rotary_local_cache: the sliding layers build a second,
	 * unscaled cache of max_context positions (Gemma 3's local rope) */
	uint64_t rotary_cache_positions;
	bool rotary_local_cache;
	uint32_t mamba_d_state, mamba_d_conv, mamba_expand;
	/* linear attention (Gated DeltaNet, lightning attention): a state of
	 * H_v x d_k x d_v and a short convolution over q, k, v of width conv,
	 * kept as "mamba" layers (fixed bytes per sequence); 0 when absent */
	uint32_t linear_num_key_heads, linear_num_value_heads;
	uint32_t linear_key_dim, linear_value_dim, linear_conv_kernel;
	enum kvp_dtype linear_state_dtype;  /* AUTO: the serving dtype (vLLM "auto") */
	uint32_t moe_num_experts, moe_experts_per_token, moe_intermediate_size;
	/* which layers hold the routed experts (1) and which a dense MLP of
	 * intermediate_size (0), as the checkpoint lays them out (DeepSeek's
	 * first_k_dense_replace dense layers first, Llama 4's interleave);
	 * moe_layers_known false: not given, a pipeline stage then holds its
	 * share of the layers' experts (shape.c) */
	bool moe_layers_known;
	uint8_t moe_layers[KVP_MAX_LAYERS];
	/* a kvplan profile's layout of them: layers i >= moe_first_dense_layers
	 * with (i + 1) % moe_layer_step == 0 (0: 1) hold experts */
	uint32_t moe_first_dense_layers, moe_layer_step;
	uint64_t params;           /* total parameters, all experts */
	uint64_t active_params;    /* per token */
	uint64_t expert_params;    /* the part of params in routed MoE experts */
	uint64_t shared_expert_params; /* the part of params in shared experts (DeepSeek, Llama 4) */
	/* weights read from a file (GGUF) with their exact bytes, whatever mix of
	 * formats: the input embedding and LM head, the rest of the layers, shared
	 * experts, routed experts; all 0 when the bytes follow params x dtype */
	uint64_t file_embed_bytes, file_dense_bytes, file_shared_bytes, file_routed_bytes;
	enum kvp_dtype weights_dtype;  /* AUTO: the serving dtype */
	enum kvp_dtype expert_dtype;   /* AUTO: weights_dtype */
	/* exact layouts when quantization_config gives them; override the dtypes' sizes */
	struct kvp_weights_format weights_format, expert_format;
	/* where weights_dtype / expert_dtype were set, when not by the model
	 * file's own weights_dtype key: "quantization_config.quant_method
	 * \"gptq\"", "the name's word fp8", "--weights-dtype"; empty otherwise
	 * (kvp_model_weights_origin says the rest) */
	char weights_source[96];
	/* --weights-dtype (a what-if): true, and the weights_dtype the model
	 * gave before it (AUTO: the serving dtype; a quantized checkpoint's own
	 * format else), so that size --emit can tell an engine what to do with
	 * the checkpoint it loads (size.h kvp_size_weights_flags) */
	bool weights_what_if;
	enum kvp_dtype weights_checkpoint_dtype;
	/* of the non-embedding, non-expert parameters, those the checkpoint's
	 * quantization leaves in the serving dtype (ignored attention, shared
	 * experts, dense MLPs); 0 when everything follows weights_dtype */
	uint64_t unquantized_params;
	/* vision/audio towers and their projectors (multimodal checkpoints),
	 * not in params: loaded in the serving dtype on the first stage */
	uint64_t tower_params;
	/* the vision encoder the engine runs in its profile run (vLLM:
	 * memory/encoder.h), read by hf-encoder.c from vision_config and the
	 * preprocessor config; family[0] == 0: none modelled */
	struct kvp_mm_encoder {
		char family[16];           /* "qwen2_vl", "llava", "llava_next", "gemma3" */
		uint64_t image_tokens;     /* placeholder tokens (encoder outputs) of the largest image */
		uint64_t image_patches;    /* tower sequence length of that image, all crops */
		uint64_t patch_inputs;     /* pixel values per patch (C t p^2) */
		uint32_t tower_width;      /* Hv */
		uint32_t tower_mlp;        /* Iv */
		bool tower_gated;          /* gate and up projections (2 Iv + Iv live) */
		bool video;                /* a video modality of image_tokens per frame group */
		uint32_t temporal_patch;   /* frames per temporal patch (video) */
		uint32_t patch, merge;     /* p and the spatial merge m (Qwen2-VL) */
		uint32_t out_width;        /* the outputs' width (the text model's hidden size) */
		uint64_t max_pixels;       /* Qwen2-VL: the processor's longest_edge / max_pixels */
		char max_pixels_source[96];/* where max_pixels was read */
	} mm_encoder;
	/* What the importer read but doubts, each "path:line:col: warning:
	 * field: message"; the library never prints them, the CLI does. */
	uint32_t num_warnings;
	char warnings[KVP_MODEL_WARNINGS][KVP_WARNING_MAX];
};

/* Check a filled description for consistency (heads divide, windows given
 * for sliding layers, ...).  Errors name the field and carry the model's path. */
kvp_status kvp_model_validate(const struct kvp_model *m, struct kvp_error *err);

/* The dtype an engine serves a checkpoint in: fp32 checkpoints are served in
 * bf16 (vLLM >= 0.10.1: "we use bfloat16 for float32 models"); `requested`
 * (not AUTO) overrides. */
enum kvp_dtype kvp_model_serving_dtype(const struct kvp_model *m, enum kvp_dtype requested);

/* One layer as it lives on one GPU. */
struct kvp_spec_layer {
	enum kvp_layer_kind kind;
	uint32_t index;            /* layer number in the model */
	uint64_t token_bytes;      /* bytes per token (attention kinds), 0 otherwise */
	uint64_t seq_bytes;        /* bytes per sequence (Mamba), 0 otherwise */
	uint32_t window;           /* W or C tokens for sliding/chunked, 0 otherwise */
};

/* The deployment shape (shape.h says how it places the weights). */
struct kvp_parallel {
	uint32_t tp;               /* tensor parallel ranks inside one DP rank, >= 1 */
	uint32_t pp;               /* pipeline stages, >= 1 */
	uint32_t dp;               /* data-parallel attention ranks; 0 or 1: none */
	uint32_t ep;               /* GPUs holding whole routed experts; 0 or 1: none */
	uint32_t gpus;             /* the GPU count asked for; 0: tp x pp x dp */
	/* with dp > 1, the parts the engine splits over all tp x dp GPUs of a
	 * stage, like the routed experts, instead of over the tp GPUs of one DP
	 * rank (KVP_SHAPE_DP_*, shape.h; SGLang's DP attention) */
	uint32_t dp_full_tp;
};

/* One GPU's weights by kind, each rounded up to whole bytes. */
struct kvp_weights_split {
	uint64_t embed_bytes;      /* input embedding and LM head */
	uint64_t dense_bytes;      /* attention, dense MLPs, norms, routers */
	uint64_t replicated_bytes; /* the part of dense_bytes held whole on every tp rank */
	uint64_t shared_bytes;     /* shared experts */
	uint64_t routed_bytes;     /* routed experts */
	uint64_t draft_bytes;      /* a speculative draft (memory/draft.h), 0 without */
	uint64_t tower_bytes;      /* vision/audio towers (first stage), 0 without */
	uint64_t total_bytes;      /* the sum */
};

/* The per-GPU view of the worst pipeline stage (the one with the most KV bytes
 * per token; ties go to the first). */
struct kvp_spec {
	const struct kvp_model *model;
	struct kvp_parallel par;
	enum kvp_dtype serving_dtype;
	enum kvp_dtype kv_dtype;   /* resolved, never AUTO */
	uint32_t kv_heads_per_gpu; /* max(1, H_kv / tp); 1 for MLA */
	uint32_t stage;            /* which pp stage this is */
	uint32_t first_layer, num_layers;
	uint32_t draft_layers;     /* the last draft_layers of layers[] are a speculative draft's */
	struct kvp_spec_layer layers[KVP_MAX_LAYERS];
	uint32_t count[KVP_LAYER_KIND_COUNT];       /* layers of each kind on this GPU */
	uint64_t kind_token_bytes[KVP_LAYER_KIND_COUNT]; /* per token, summed per kind */
	uint64_t token_bytes;      /* sum over layers with per-token KV on this GPU */
	uint64_t seq_bytes;        /* sum of per-sequence state on this GPU */
	uint64_t token_bytes_total;/* whole model, unsplit: sum over all layers, tp = pp = 1 */
	uint64_t weights_bytes;    /* on this GPU, towers included */
	uint64_t tower_bytes;      /* the part of weights_bytes in towers */
	struct kvp_weights_split weights_split; /* the same, by kind */
	uint64_t weights_bytes_total;
};

/* One layer of `kind` on one GPU of tp: its KV bytes per token (attention
 * kinds, with its window) or per sequence (Mamba/linear state), in kv (KV
 * cache) and serving (state) dtypes.  OVERFLOW when a count does not fit. */
kvp_status kvp_model_layer_cost(const struct kvp_model *m, enum kvp_layer_kind kind, uint32_t tp,
				enum kvp_dtype kv, enum kvp_dtype serving, struct kvp_spec_layer *l);

/* KV bytes one sequence of n tokens holds on this GPU with paged blocks of
 * `block` tokens (block = 1: exact).  Sliding layers hold at most
 * min(ceil(n/P), ceil(W/P) + 1) blocks (the window may straddle a block
 * boundary); chunked layers at most ceil(C/P) + 1; Mamba layers their state. */
kvp_status kvp_spec_seq_bytes(const struct kvp_spec *s, uint64_t n, uint32_t block,
			      uint64_t *out);

/* Tokens a layer keeps for a sequence of n tokens, in blocks of `block`;
 * UINT64_MAX when n rounded up to whole blocks passes 2^64. */
uint64_t kvp_spec_layer_tokens(const struct kvp_spec_layer *l, uint64_t n, uint32_t block);

/* Weights bytes for `params` parameters in dtype dt, rounded up. */
kvp_status kvp_weights_bytes(uint64_t params, enum kvp_dtype dt, uint64_t *out);

/* Weights bytes for `params` parameters in format f (bits != 0):
 * ceil(params * (bits + group_bits / group) / 8), rounded up. */
kvp_status kvp_weights_format_bytes(uint64_t params, const struct kvp_weights_format *f,
				    uint64_t *out);

/* What-if quantization (--weights-dtype): every non-embedding weight of m in
 * dt, replacing what the checkpoint said.  INVALID when dt is no weights format. */
kvp_status kvp_model_set_weights_dtype(struct kvp_model *m, enum kvp_dtype dt);

/* Where the format of m's weights was read, for the budget's table and
 * record (issue 35: the quantization detected, and where): into buf,
 * "quantization_config.quant_method \"gptq\" in PATH", "the tensor types of
 * the GGUF file PATH", "the name's word fp8 (the profile PATH)",
 * "--weights-dtype (a what-if over PATH)", "weights_dtype in PATH", or with
 * no format given "no quantization found in PATH (the serving dtype)".  Cut to size. */
void kvp_model_weights_origin(const struct kvp_model *m, char *buf, size_t size);

/* The weights' dtype as sized, by name: "gguf" for a GGUF file's mix of
 * tensor types, the serving dtype when m gives none. */
const char *kvp_model_weights_dtype_name(const struct kvp_model *m, enum kvp_dtype serving);

#endif
