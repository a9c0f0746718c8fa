/* hf-config.h: read a Hugging Face config.json into the model description.
 *
 * The family rules live here and only here (../shared/reference/
 * architectures.md sections 0, 2 and 6): head_dim when present else
 * hidden/heads; the KV-head precedence (Falcon multi_query, then n_head_kv,
 * num_kv_heads, num_key_value_heads, multi_query_group_num, else heads);
 * Gemma 3's nested text_config and class defaults; layer_types;
 * sliding_window ignored unless use_sliding_window (Qwen2/3); MLA; Jamba's
 * attention period; parameter counting from the config (section 4). Keys kvplan
 * does not need are ignored. */
#ifndef KVP_HF_CONFIG_H
#define KVP_HF_CONFIG_H

#include "base/error.h"
#include "model/model.h"

kvp_status kvp_hf_config_load(const char *path, struct kvp_model *out, struct kvp_error *err);

/* Read a checkpoint's preprocessor_config.json (--preprocessor-config) into
 * m's vision encoder: Qwen2-VL / Qwen2.5-VL max_pixels (or size.longest_edge),
 * which sizes the largest image vLLM profiles the tower with (hf-encoder.c).
 * INVALID with file:line:col and the field when it is missing or not a
 * positive integer, or when m has no Qwen2-VL family encoder; IO / PARSE
 * from the JSON reader. */
kvp_status kvp_hf_preprocessor_load(const char *path, struct kvp_model *m,
				    struct kvp_error *err);

#endif
