/* model-name.h: model names as people write them, mapped to what kvplan can
 * read, without the network: a Hugging Face repo id (`org/name`) found in the
 * local Hugging Face cache, a model directory holding a config.json, or a
 * built-in profile matched without case and without the variant words of a
 * checkpoint's name (`-Instruct`, `-Chat`, `-FP8`, `-AWQ`, ...), against the
 * profile's name and the name part of its hf_id.
 *
 * Stance: a name that matches nothing, or more than one profile, is an error
 * with a suggestion, never a guess; a quantization read from the name is
 * reported as such (the caller applies and names it). */
#ifndef KVP_MODEL_NAME_H
#define KVP_MODEL_NAME_H

#include <stddef.h>

#include "base/error.h"
#include "model/model.h"

/* What a typed name resolved to. */
struct kvp_model_name {
	char path[1024];           /* the file to load: a profile, or a config.json */
	char profile[KVP_NAME_MAX];/* the profile matched; empty for a file found */
	char how[64];              /* "profile", "Hugging Face cache", "model directory" */
	char variant[64];          /* the variant words dropped, e.g. "instruct-fp8"; may be empty */
	enum kvp_dtype weights_dtype; /* from a quantization word, else KVP_DTYPE_AUTO */
};

/* Normalize `typed` into out (size bytes): lower case, the `org/` part
 * dropped, a leading "meta-" dropped, and every variant word between dashes
 * removed (instruct, chat, it, base, hf, fp8, dynamic, awq, gptq, int4, int8,
 * w4a16, w8a8), the words removed joined with '-' into variant, and the
 * weights dtype the quantization words imply into *wdt (AUTO when none).
 * Either of variant and wdt may be NULL. */
void kvp_model_name_normalize(const char *typed, char *out, size_t size, char *variant,
			      size_t vsize, enum kvp_dtype *wdt);

/* A directory holding a config.json, or an `org/name` in the Hugging Face
 * cache ($HF_HUB_CACHE, else $HF_HOME/hub, else $XDG_CACHE_HOME/huggingface/hub,
 * else ~/.cache/huggingface/hub: models--org--name/snapshots/<the commit in
 * refs/main, else the first in name order>/config.json): out->path and
 * out->how.  NOT_FOUND when `typed` is neither (nothing set in err);
 * INVALID for a directory without a config.json. */
kvp_status kvp_model_name_find_file(const char *typed, struct kvp_model_name *out,
				    struct kvp_error *err);

/* The one candidate (profile names[i], hf_ids[i], hf_ids[i] may be "") whose
 * normalized name, or normalized hf_id, equals the normalized `typed`:
 * out->profile, variant, weights_dtype and how.  NOT_FOUND with
 * a did-you-mean over the normalized names; INVALID when several match. */
kvp_status kvp_model_name_match(const char *typed, const char *const *names,
				const char *const *hf_ids, size_t n, struct kvp_model_name *out,
				struct kvp_error *err);

#endif
