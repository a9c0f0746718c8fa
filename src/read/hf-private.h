/* hf-private.h: what the files of the config.json importer share, and
 * nothing a caller outside them uses (that is hf-config.h).
 *
 * struct hf is one import in progress: the document, the text model's object
 * (the top level or a multimodal wrapper's text_config), the family and the
 * model being filled, where warnings go.  Each function below returns
 * KVP_STATUS_OK or fails with file:line:col and the field in h->err. */
#ifndef KVP_HF_PRIVATE_H
#define KVP_HF_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "model/model.h"
#include "base/yaml-walk.h"

enum family {
	FAM_GENERIC,    /* unknown model_type: Llama-style gated decoder */
	FAM_LLAMA,
	FAM_MISTRAL,
	FAM_MIXTRAL,
	FAM_PHI3,
	FAM_QWEN2,
	FAM_QWEN2_MOE,
	FAM_QWEN3,
	FAM_QWEN3_MOE,
	FAM_QWEN3_NEXT,
	FAM_GEMMA,
	FAM_GEMMA2,
	FAM_GEMMA3,
	FAM_COHERE2,
	FAM_FALCON,
	FAM_GPT2,
	FAM_NEOX,
	FAM_PHI,        /* phi-1/1.5/2: parallel block, one LayerNorm, biased LM head */
	FAM_DEEPSEEK_V2,
	FAM_DEEPSEEK_V3,
	FAM_GPT_OSS,
	FAM_JAMBA,
	FAM_LLAMA4
};

/* Gemma3TextConfig class defaults for keys the multimodal text_config omits
 * (architectures.md 6.5; transformers configuration_gemma3.py). */
#define GEMMA3_VOCAB 262208
#define GEMMA3_PATTERN 6
#define GEMMA3_MAX_POS 131072
#define GEMMA3_HEADS 8
#define GEMMA3_KV_HEADS 4
#define GEMMA_HEAD_DIM 256     /* Gemma, Gemma2 and Gemma3 configs */
#define GEMMA_WINDOW 4096      /* Gemma2/Gemma3 sliding_window default */
#define GPT_OSS_WINDOW 128
#define COHERE2_PATTERN 4
#define QWEN_MAX_WINDOW_LAYERS 28
#define FALCON_MAX_POS 2048    /* FalconConfig max_position_embeddings */
#define LLAMA4_NOPE_INTERVAL 4

struct hf {
	const struct kvp_doc *doc;
	const struct kvp_node *top;  /* the document's object */
	const struct kvp_node *cfg;  /* the text model's object: top or top.text_config */
	struct kvp_error *err;
	struct kvp_model *m;         /* where warnings go */
	enum family fam;
	char model_type[64];
	uint64_t attn_params, shared_params, mlp_params; /* from count_params */
};

/* hf-read.c: JSON readers */
void hf_warn(struct hf *h, const struct kvp_node *node, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
bool hf_is_one_of(const char *s, const char *const *list);
const struct kvp_node *hf_get_any(const struct kvp_node *map, const char *const *keys,
				  const char **which);
kvp_status hf_node_uint(struct hf *h, const struct kvp_node *n, const char *field, uint64_t max,
			uint64_t *out);
kvp_status hf_node_positive(struct hf *h, const struct kvp_node *n, const char *field,
			    uint64_t max, uint64_t *out);
kvp_status hf_opt_uint(struct hf *h, const struct kvp_node *map, const char *key, bool positive,
		       uint32_t *out, bool *found);
kvp_status hf_opt_bool(struct hf *h, const struct kvp_node *map, const char *key, bool *out);
kvp_status hf_req_uint(struct hf *h, const char *const *keys, uint32_t dflt, uint32_t *out,
		       const struct kvp_node **where);

/* hf-family.c: family, name and KV heads */
void hf_find_family(struct hf *h, bool *tie_default);
bool hf_is_gemma(enum family f);
bool hf_is_layernorm_family(enum family f);
void hf_model_name(const char *path, char *buf, size_t size);
kvp_status hf_kv_heads(struct hf *h, uint32_t nq, uint32_t *out, const struct kvp_node **where,
		       const char **field);

/* hf-layers.c: each layer's kind (mla: the model uses DeepSeek's MLA) */
kvp_status hf_assign_layers(struct hf *h, struct kvp_model *m, bool mla);

/* hf-params.c: total, active and expert parameters */
kvp_status hf_count_params(struct hf *h, struct kvp_model *m);

/* hf-quant.c: checkpoint dtype and quantization_config */
kvp_status hf_read_dtype(struct hf *h, struct kvp_model *m);
kvp_status hf_read_quantization(struct hf *h, struct kvp_model *m);

/* hf-towers.c: vision (and audio) towers */
kvp_status hf_count_towers(struct hf *h, struct kvp_model *m);

/* hf-encoder.c: the largest image the engine profiles the tower with, per
 * family (tn: vision_config; top, type: the wrapper's and the tower's
 * model_type; p patch, mg spatial merge, img image_size, 0 when absent);
 * a family it does not know is a warning */
kvp_status hf_read_encoder(struct hf *h, struct kvp_model *m, const struct kvp_node *tn,
			   const char *top, const char *type, uint64_t p, uint64_t mg,
			   uint64_t img);

#endif
