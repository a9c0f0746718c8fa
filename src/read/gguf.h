/* gguf.h: a model description from a GGUF file's header (llama.cpp's format),
 * read without reading the tensors: the metadata gives the shape, the tensor
 * infos give each tensor's type and size, so the weight bytes are exact for
 * any mix of quantizations.
 *
 * Format (ggml docs/gguf.md; ggml/include/gguf.h): "GGUF", version (uint32,
 * 2 or 3), tensor count and key-value count (uint64), then key-value pairs
 * (key: uint64 length + bytes; value type uint32; value, arrays as element
 * type uint32 + count uint64 + elements), then per tensor: name, n_dims
 * (uint32), dims (uint64 each), ggml type (uint32), offset (uint64).  All
 * little-endian.
 *
 * Keys read (ARCH = general.architecture): ARCH.block_count,
 * ARCH.embedding_length, ARCH.feed_forward_length, ARCH.context_length,
 * ARCH.attention.head_count, ARCH.attention.head_count_kv,
 * ARCH.attention.key_length, ARCH.attention.value_length, ARCH.vocab_size
 * (else the tokenizer.ggml.tokens count, else token_embd.weight's rows),
 * ARCH.expert_count, ARCH.expert_used_count, ARCH.expert_feed_forward_length,
 * ARCH.attention.kv_lora_rank with ARCH.rope.dimension_count (MLA).
 * Sliding windows are not read: every layer is taken as full attention (an
 * upper bound on the KV for models that slide). */
#ifndef KVP_GGUF_H
#define KVP_GGUF_H

#include "base/error.h"
#include "model/model.h"

/* Bounds on what a header may claim before it is refused as damaged. */
#define KVP_GGUF_MAX_TENSORS (1u << 20)
#define KVP_GGUF_MAX_KV (1u << 20)
#define KVP_GGUF_MAX_STRING (1u << 20)
#define KVP_GGUF_MAX_ARRAY (1u << 26)

/* Read `path`.  INVALID (field "gguf", the byte offset in the message) for a
 * wrong magic or version, a truncated header, counts past the bounds above,
 * a tensor type kvplan does not know, or missing required keys. */
kvp_status kvp_gguf_load(const char *path, struct kvp_model *out, struct kvp_error *err);

#endif
