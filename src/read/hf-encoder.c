/* hf-encoder.c: the largest multimodal input a serving engine profiles a
 * vision tower with, per model family, read from config.json's vision_config
 * and (Qwen2-VL, Qwen2.5-VL) the checkpoint's preprocessor_config.json.
 * The stance: only what the engine's own processor code derives from these
 * files (vLLM's model_executor/models/<family>.py ProcessingInfo, cited per
 * family); a family whose processor was not read is a warning, never a
 * guess (memory/encoder.h charges the profile run from these facts).
 *
 * Legend: p = patch, m = spatial merge, img = image_size, n = img / p
 * patches per side, Ht = the text model's hidden size. */
#include "read/hf-config.h"
#include "read/hf-private.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "base/json-read.h"

/* Qwen2-VL and Qwen2.5-VL publish max_pixels 12,845,056 (= 3584^2) in their
 * checkpoints' preprocessor_config.json (Qwen/Qwen2-VL-7B-Instruct,
 * Qwen/Qwen2.5-VL-7B-Instruct); the transformers class default is smaller
 * (28 x 28 x 1280), so the checkpoint's figure stands in without the file. */
#define QWEN_VL_MAX_PIXELS 12845056ULL
#define LLAVA_MAX_GRID 64

/* Qwen2-VL / Qwen2.5-VL: vLLM 0.19.0 qwen2_vl.py
 * Qwen2VLProcessingInfo.get_image_size_with_most_features factors
 * max_pixels // (p m)^2 merged patches into a height x width within an
 * aspect ratio of 200, so the largest image has max_pixels // (p m)^2
 * tokens, each m^2 patches of C t p^2 inputs (0.10.2 resizes a 9,999,999
 * pixel square under max_pixels instead: at most as many).  The video
 * modality (frame groups of the same image) is sized by memory/encoder.c. */
static void qwen_vl_image(struct kvp_mm_encoder *e)
{
	uint64_t p = e->patch, mg = e->merge, unit = p * mg;
	e->image_tokens = unit ? e->max_pixels / (unit * unit) : 0;
	e->image_patches = e->image_tokens * mg * mg;
	e->patch_inputs = 3 * (uint64_t)(e->temporal_patch ? e->temporal_patch : 1) * p * p;
}

kvp_status hf_read_encoder(struct hf *h, struct kvp_model *m, const struct kvp_node *tn,
			   const char *top, const char *type, uint64_t p, uint64_t mg,
			   uint64_t img)
{
	struct kvp_mm_encoder *e = &m->mm_encoder;
	const struct kvp_node *root = h->doc->root;
	kvp_status st;
	if (strcmp(top, "qwen2_vl") == 0 || strcmp(top, "qwen2_5_vl") == 0) {
		snprintf(e->family, sizeof e->family, "%s", top);
		e->max_pixels = QWEN_VL_MAX_PIXELS;
		snprintf(e->max_pixels_source, sizeof e->max_pixels_source,
			 "the published checkpoints' preprocessor_config.json");
		e->video = true;
		e->patch = (uint32_t)p;
		e->merge = (uint32_t)mg;
		qwen_vl_image(e);
		return KVP_STATUS_OK;
	}
	if ((strcmp(top, "llava") == 0 || strcmp(top, "llava_next") == 0) &&
	    strcmp(type, "clip_vision_model") == 0 && img && img % p == 0) {
		/* CLIP: n^2 patch features plus the class token; the "default"
		 * feature strategy drops the class token (vLLM llava.py
		 * _apply_feature_select_strategy; clip.py CLIPEncoderInfo
		 * get_num_image_tokens = n^2 + 1) */
		uint64_t n = img / p, base = n * n;
		const struct kvp_node *fs = kvp_map_get(root, "vision_feature_select_strategy");
		if (fs && fs->type == KVP_NODE_SCALAR && strcmp(fs->value, "full") == 0)
			base += 1;
		uint64_t tokens = base, crops = 1;
		if (strcmp(top, "llava_next") == 0) {
			/* vLLM 0.19.0 llava_next.py get_image_size_with_most_features:
			 * the pinpoint (h, w) with the most tokens, each base + (n h /
			 * img)(n w / img) unpadded features + n h / img newlines
			 * (_get_num_unpadded_features with the image's own aspect: no
			 * padding), from 1 + (h / img)(w / img) crops of img^2 */
			const struct kvp_node *gp = kvp_map_get(root, "image_grid_pinpoints");
			if (!gp || gp->type != KVP_NODE_SEQ || gp->n == 0)
				return kvp_node_fail(h->doc, gp ? gp : root, h->err, KVP_STATUS_INVALID,
						     "image_grid_pinpoints",
						     "a list of [height, width] pairs is required");
			for (size_t i = 0; i < gp->n; i++) {
				const struct kvp_node *pr = gp->items[i];
				uint64_t hh, ww;
				if (pr->type != KVP_NODE_SEQ || pr->n != 2)
					return kvp_node_fail(h->doc, pr, h->err, KVP_STATUS_INVALID,
							     "image_grid_pinpoints",
							     "each entry is [height, width]");
				if ((st = hf_node_positive(h, pr->items[0], "image_grid_pinpoints",
							   img * LLAVA_MAX_GRID, &hh)) ||
				    (st = hf_node_positive(h, pr->items[1], "image_grid_pinpoints",
							   img * LLAVA_MAX_GRID, &ww)))
					return st;
				if (hh % img || ww % img)
					return kvp_node_fail(h->doc, pr, h->err, KVP_STATUS_INVALID,
							     "image_grid_pinpoints",
							     "%llu x %llu is not a grid of %llu-pixel crops",
							     (unsigned long long)hh,
							     (unsigned long long)ww,
							     (unsigned long long)img);
				uint64_t gh = n * (hh / img), gw = n * (ww / img);
				uint64_t t = base + gh * gw + gh;
				if (t > tokens) {
					tokens = t;
					crops = 1 + (hh / img) * (ww / img);
				}
			}
		}
		snprintf(e->family, sizeof e->family, "%s", top);
		e->image_tokens = tokens;
		e->image_patches = crops * (n * n + 1);
		e->patch_inputs = 3 * p * p;
		return KVP_STATUS_OK;
	}
	if (strcmp(top, "llava") == 0 && strcmp(type, "pixtral") == 0 && mg == 1 && img &&
	    img % p == 0) {
		/* Pixtral under LLaVA: vLLM 0.19.0 pixtral.py PixtralHFEncoderInfo
		 * get_num_image_tokens = ncols x nrows at the largest image,
		 * image_size x image_size: (img / p)^2 outputs from as many patches
		 * (the row breaks and the end token are placeholders of the
		 * prompt, not encoder outputs) */
		snprintf(e->family, sizeof e->family, "pixtral");
		e->image_tokens = (img / p) * (img / p);
		e->image_patches = e->image_tokens;
		e->patch_inputs = 3 * p * p;
		return KVP_STATUS_OK;
	}
	if (strncmp(top, "gemma3", 6) == 0 && img && img % p == 0) {
		/* vLLM 0.19.0 gemma3_mm.py get_num_image_tokens: (crops + 1) x
		 * image_seq_length, no crops without pan-and-scan (its default):
		 * mm_tokens_per_image (256) outputs from one (img / p)^2 SigLIP
		 * sequence */
		uint32_t per = 256;
		bool found;
		if ((st = hf_opt_uint(h, root, "mm_tokens_per_image", true, &per, &found)))
			return st;
		snprintf(e->family, sizeof e->family, "gemma3");
		e->image_tokens = per;
		e->image_patches = (img / p) * (img / p);
		e->patch_inputs = 3 * p * p;
		return KVP_STATUS_OK;
	}
	hf_warn(h, tn, "vision_config",
		"the encoder's own activation in the engine's profile run (vLLM runs the "
		"tower on its largest input before sizing the KV pool) is not modelled for "
		"\"%s\": the KV pool may be overestimated by it", type[0] ? type : top);
	memset(e, 0, sizeof *e);
	return KVP_STATUS_OK;
}

kvp_status kvp_hf_preprocessor_load(const char *path, struct kvp_model *m,
				    struct kvp_error *err)
{
	struct kvp_mm_encoder *e = &m->mm_encoder;
	if (strcmp(e->family, "qwen2_vl") != 0 && strcmp(e->family, "qwen2_5_vl") != 0)
		return kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, "preprocessor-config",
				     "only a Qwen2-VL or Qwen2.5-VL model's max_pixels is read; "
				     "the model has %s", e->family[0] ? e->family
				     : "no modelled vision encoder");
	struct kvp_doc *doc = NULL;
	kvp_status st = kvp_json_load_file(path, NULL, &doc, err);
	if (st)
		return st;
	const struct kvp_node *root = doc->root;
	if (!root || root->type != KVP_NODE_MAP) {
		st = kvp_node_fail(doc, root, err, KVP_STATUS_INVALID, "preprocessor-config",
				   "expected a JSON object");
		goto out;
	}
	/* transformers Qwen2VLImageProcessor: max_pixels, or size.longest_edge
	 * (the newer spelling, which vLLM 0.19.0 reads: size["longest_edge"]) */
	struct hf h = {.doc = doc, .top = root, .cfg = root, .err = err, .m = m};
	const struct kvp_node *n = kvp_map_get(root, "max_pixels");
	const char *field = "max_pixels";
	if (!n) {
		const struct kvp_node *size = kvp_map_get(root, "size");
		if (size && size->type == KVP_NODE_MAP)
			n = kvp_map_get(size, "longest_edge"), field = "size.longest_edge";
	}
	if (!n) {
		st = kvp_node_fail(doc, root, err, KVP_STATUS_INVALID, "max_pixels",
				   "neither max_pixels nor size.longest_edge is given");
		goto out;
	}
	uint64_t px;
	if ((st = hf_node_positive(&h, n, field, 1ULL << 40, &px)))
		goto out;
	e->max_pixels = px;
	snprintf(e->max_pixels_source, sizeof e->max_pixels_source, "%s", field);
	/* patch and merge stay vision_config's: vLLM reads them there
	 * (qwen2_vl.py _get_vision_info: vision_config.patch_size,
	 * spatial_merge_size), the preprocessor's own copies are not used */
	qwen_vl_image(e);
out:
	kvp_doc_free(doc);
	return st;
}
