/* encoder.h: the vision encoder's term in vLLM's memory profile.
 *
 * Before it sizes the KV pool, vLLM V1 runs the vision tower on a batch of
 * its largest dummy input and keeps the outputs in its encoder cache while
 * the language model's dummy forward and sampler run, then frees them
 * (v1/worker/gpu_model_runner.py profile_run, the same in 0.10.2, 0.11.2,
 * 0.19.0 and 0.27.1).  The profiler's peak is therefore the larger of the
 * tower's own peak and what is held (the outputs and the dummy pixel
 * values) plus the language model's peak; this module gives what the
 * encoder adds on top of the language model's peak.
 *
 * Legend: T = tokens per item (the modality with the most), N = items in
 * the dummy batch, Ht = output width, b = bytes of the serving dtype,
 * P = tower patches per item, Hv, Iv = the tower's width and MLP width,
 * c = pixel values per patch. */
#ifndef KVP_ENCODER_H
#define KVP_ENCODER_H

#include <stdbool.h>
#include <stdint.h>

#include "model/model.h"
#include "out/output.h"
#include "read/engine.h"

struct kvp_encoder_args {
	uint64_t max_model_len;       /* tokens */
	uint64_t max_batched_tokens;  /* the scheduler's max_num_batched_tokens */
	uint64_t max_num_seqs;
	uint32_t video_max_frames;    /* frames a dummy video holds at most; 0: no video */
	/* the length the dummy video's frames are counted against (vLLM 0.10.2:
	 * max_num_batched_tokens; 0.11.2 on: max_model_len); 0: max_model_len */
	uint64_t dummy_len;
	uint32_t dtype_bytes;         /* b, the serving dtype */
};

struct kvp_encoder_profile {
	bool video;                   /* the dummy modality is video */
	uint64_t tokens_per_item;     /* T */
	uint64_t budget_tokens;       /* max(max_batched_tokens, T) */
	uint64_t items;               /* N */
	uint64_t patches;             /* N x P, the tower's sequence */
	uint64_t outputs_bytes;       /* N T Ht b, kept through the LM's run */
	uint64_t pixels_bytes;        /* N P c x 4 (fp32), kept too */
	uint64_t tower_peak_bytes;    /* the tower's own peak, pixels included */
};

/* The dummy batch vLLM profiles the encoder e with, and its bytes.  Items:
 * max(1, min(budget // T, max_num_seqs x max(1, min(999, max_model_len //
 * T)))) (multimodal/encoder_budget.py _get_max_items, 0.19.0; v1/worker/
 * utils.py MultiModalBudget.get_max_items, 0.10.2 and 0.11.2; 999 the V1
 * default limit per prompt).  false on overflow or when e has no family. */
bool kvp_encoder_profile(const struct kvp_mm_encoder *e, const struct kvp_encoder_args *a,
			 struct kvp_encoder_profile *out);

/* What the profile run adds above the language model's peak lm_peak_bytes:
 * max(held, tower peak - lm_peak) with held = outputs + pixels. */
uint64_t kvp_encoder_charge(const struct kvp_encoder_profile *p, uint64_t lm_peak_bytes);

/* The profile where the engine version em runs one (mm_encoder_profile),
 * with its frame cap and dummy rule: false when it does not, or as
 * kvp_encoder_profile.  b = bytes of the serving dtype. */
bool kvp_encoder_vllm(const struct kvp_mm_encoder *e, const struct kvp_engine_model *em,
		      uint64_t max_model_len, uint64_t max_batched_tokens, uint64_t max_num_seqs,
		      uint32_t b, struct kvp_encoder_profile *out);

/* The record fields (encoder_profile_bytes = charged, _items,
 * _tokens_per_item, _modality; zeros and "" without a profile), which the
 * commands append after their own fields: new columns go at the end. */
bool kvp_encoder_to_record(const struct kvp_encoder_profile *p, uint64_t charged,
			   struct kvp_record *r);

#endif
