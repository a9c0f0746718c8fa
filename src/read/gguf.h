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
 * Keys read (ARCH = general.architecture, which must come before them, as
 * gguf-py writes it first; a key of ARCH met before it is refused, never
 * skipped unread): ARCH.block_count, ARCH.embedding_length,
 * ARCH.feed_forward_length, ARCH.context_length, ARCH.attention.head_count,
 * ARCH.attention.head_count_kv, ARCH.attention.key_length,
 * ARCH.attention.value_length, ARCH.vocab_size (else the tokenizer.ggml.tokens
 * count, else token_embd.weight's rows), ARCH.expert_count,
 * ARCH.expert_used_count, ARCH.expert_feed_forward_length,
 * ARCH.attention.kv_lora_rank with ARCH.rope.dimension_count (MLA).  Each must
 * be a whole number of an integer type (BOOL, floats and strings are refused)
 * and in range; a key given twice is refused.
 *
 * Per layer (llama.cpp get_key_or_arr): head_count, head_count_kv and
 * feed_forward_length may be arrays of one entry per layer, of block_count
 * entries exactly.  A layer with 0 heads or 0 KV heads holds no KV (the
 * model's layer list says KVP_LAYER_NONE).  A file that names recurrent state
 * (ARCH.ssm.*, ARCH.shortconv.*, ARCH.wkv.*: llama.cpp's hybrid and recurrent
 * families, which mark recurrent layers by 0 KV heads or run them beside
 * attention in every layer) is refused: kvplan does not read that state from
 * a GGUF.  The attention layers must agree on one head count and one KV head
 * count; feed_forward_length is taken at its widest.
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
/* keys and tensor names: the GGUF spec bounds keys at 2^16 - 1 bytes */
#define KVP_GGUF_MAX_NAME 65535u
/* the whole header (keys, values, tensor infos): a real one is a few MiB (a
 * 256k-entry tokenizer with its merges is under 16 MiB), so 64 MiB leaves room
 * and bounds the walk of a file that claims more, sparse or not */
#define KVP_GGUF_MAX_HEADER ((uint64_t)64 << 20)

/* Read `path` (a regular file).  INVALID (field "gguf", the byte offset in
 * the message where one applies) for a wrong magic or version, a truncated
 * header, counts or lengths past the bounds above or past the bytes the file
 * holds, a key or tensor given twice, a key of the wrong type or out of range,
 * a tensor type kvplan does not know, or missing required keys. */
kvp_status kvp_gguf_load(const char *path, struct kvp_model *out, struct kvp_error *err);

#endif
