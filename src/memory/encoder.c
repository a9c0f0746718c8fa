/* encoder.c: the vision encoder's term in vLLM's memory profile (see
 * encoder.h for the mechanism and its sources).  Byte counts are checked
 * uint64_t; the tower's own peak is an estimate from its block structure,
 * not a measurement (reports/engine-logs.md, "Issue 36, the encoder profile"). */
#include "memory/encoder.h"

#include <string.h>

#include "base/units.h"

/* tokens of a video of f frames at the largest image: frames are padded to
 * the temporal patch, grid_t = max(padded / t, 1) groups of T_img tokens
 * (vLLM qwen2_vl.py _get_vision_info, 0.10.2-0.27.1) */
static uint64_t video_groups(uint64_t f, uint64_t t)
{
	uint64_t padded = f + f % t, g = padded / t;
	return g ? g : 1;
}

/* the frames of the largest dummy video: the most whose tokens fit `len`
 * (_get_max_video_frames), at most max_frames and at least one
 * (get_num_frames_with_most_features) */
static uint64_t video_frames(uint64_t len, uint64_t t, uint64_t img_tokens, uint32_t max_frames)
{
	uint64_t f = 1;
	while (f < max_frames && video_groups(f + 1, t) * img_tokens <= len)
		f++;
	return f;
}

bool kvp_encoder_profile(const struct kvp_mm_encoder *e, const struct kvp_encoder_args *a,
			 struct kvp_encoder_profile *out)
{
	memset(out, 0, sizeof *out);
	if (!e->family[0] || !e->image_tokens || !e->image_patches)
		return false;
	uint64_t T = e->image_tokens, P = e->image_patches, Tdummy = T;
	if (e->video && a->video_max_frames) {
		uint64_t t = e->temporal_patch ? e->temporal_patch : 1;
		/* the modality with the most tokens per item, from max_model_len
		 * (MultiModalBudget: get_mm_max_tokens_per_item(seq_len=
		 * max_model_len)); a tie sizes both alike */
		uint64_t g = video_groups(video_frames(a->max_model_len, t, T, a->video_max_frames), t);
		if (g > 1) {
			out->video = true;
			/* the dummy video itself (what the tower runs and outputs) */
			uint64_t len = a->dummy_len ? a->dummy_len : a->max_model_len;
			uint64_t gd = video_groups(video_frames(len, t, T, a->video_max_frames), t);
			Tdummy = gd * T;
			P *= gd;
			T *= g;
		}
	}
	out->tokens_per_item = T;
	out->budget_tokens = a->max_batched_tokens > T ? a->max_batched_tokens : T;
	/* _get_max_items: encoder items budget // T; decoder items
	 * max_num_seqs x per-prompt max(1, min(999, max_model_len // T))
	 * (chunked prefill on, the V1 default) */
	uint64_t per_prompt = a->max_model_len / T;
	if (per_prompt > 999)
		per_prompt = 999;
	if (per_prompt < 1)
		per_prompt = 1;
	uint64_t dec, n = out->budget_tokens / T;
	if (!kvp_mul(a->max_num_seqs, per_prompt, &dec))
		dec = UINT64_MAX;
	if (dec < n)
		n = dec;
	if (n < 1)
		n = 1;
	out->items = n;
	/* the tower's own peak per patch (b bytes each): the residual stream,
	 * its norm and the sum (3 Hv) beside the block's widest live set: q, k,
	 * v with their rotated copies, the attention output and its projection
	 * (8 Hv), or the MLP's intermediate (GELU: fc1's output and its
	 * activation, 2 Iv; gated: gate-up and the product, 3 Iv); and the
	 * pixel values in fp32 (the processor's tensors, moved as they are,
	 * kept by profile_run's batched_dummy_mm_inputs) with their copy in the
	 * tower's dtype (vLLM clip.py CLIPEncoderLayer, siglip.py, qwen2_vl.py
	 * Qwen2VisionBlock, qwen2_5_vl.py Qwen2_5_VisionBlock) */
	uint64_t Hv = e->tower_width, Iv = e->tower_mlp, b = a->dtype_bytes;
	uint64_t mlp = (e->tower_gated ? 3 : 2) * Iv, attn = 8 * Hv;
	uint64_t live = 3 * Hv + (mlp > attn ? mlp : attn);
	uint64_t per_patch, pix_per_patch, outs, pixels, transient;
	if (!kvp_mul(n, P, &out->patches) ||
	    !kvp_mul(live, b, &per_patch) ||
	    !kvp_mul(e->patch_inputs, 4, &pix_per_patch) ||
	    !kvp_mul(out->patches, pix_per_patch, &pixels) ||
	    !kvp_mul(out->patches, per_patch + e->patch_inputs * b, &transient) ||
	    !kvp_mul(n, Tdummy, &outs) || !kvp_mul(outs, e->out_width, &outs) ||
	    !kvp_mul(outs, b, &outs) ||
	    !kvp_add(pixels, transient, &out->tower_peak_bytes))
		return false;
	out->outputs_bytes = outs;
	out->pixels_bytes = pixels;
	return true;
}

uint64_t kvp_encoder_charge(const struct kvp_encoder_profile *p, uint64_t lm_peak_bytes)
{
	uint64_t held;
	if (!kvp_add(p->outputs_bytes, p->pixels_bytes, &held))
		return UINT64_MAX;
	uint64_t over = p->tower_peak_bytes > lm_peak_bytes ? p->tower_peak_bytes - lm_peak_bytes : 0;
	return held > over ? held : over;
}

bool kvp_encoder_vllm(const struct kvp_mm_encoder *e, const struct kvp_engine_model *em,
		      uint64_t max_model_len, uint64_t max_batched_tokens, uint64_t max_num_seqs,
		      uint32_t b, struct kvp_encoder_profile *out)
{
	memset(out, 0, sizeof *out);
	if (!em || !em->mm_encoder_profile)
		return false;
	struct kvp_encoder_args a = {
		.max_model_len = max_model_len, .max_batched_tokens = max_batched_tokens,
		.max_num_seqs = max_num_seqs, .video_max_frames = em->mm_video_max_frames,
		.dummy_len = em->mm_dummy_from_batched_tokens ? max_batched_tokens : 0,
		.dtype_bytes = b};
	return kvp_encoder_profile(e, &a, out);
}

bool kvp_encoder_to_record(const struct kvp_encoder_profile *p, uint64_t charged,
			   struct kvp_record *r)
{
	return kvp_record_u64(r, "encoder_profile_bytes", charged) &&
	       kvp_record_u64(r, "encoder_profile_items", p->items) &&
	       kvp_record_u64(r, "encoder_profile_tokens_per_item", p->tokens_per_item) &&
	       kvp_record_str(r, "encoder_profile_modality",
			      !p->items ? "" : p->video ? "video" : "image");
}
