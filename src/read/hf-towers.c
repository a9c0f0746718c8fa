/* hf-towers.c: the vision tower of a multimodal config.json, counted from
 * vision_config (vLLM loads it beside the text model), with its projector;
 * an audio tower or an unknown projector is a warning, not a silent zero. */
#include "read/hf-private.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ towers
 *
 * Vision towers of multimodal wrappers (vLLM loads them with the text model;
 * engine-memory.md 1.1), counted from vision_config.  Legend: Hv = tower
 * width, Iv = its MLP width, Lv = its layers, p = patch, C = 3 channels,
 * Ht = the text model's hidden size, m = spatial merge.
 *   SigLIP / MoonViT (Gemma 3, Kimi-VL, default): per layer q, k, v, o with
 *     biases 4 (Hv^2 + Hv), MLP 2 Hv Iv + Iv + Hv, two LayerNorms 4 Hv; patch
 *     embedding C p^2 Hv + Hv; learned positions (image/p)^2 Hv (MoonViT:
 *     init_pos_emb_height x width); a final LayerNorm 2 Hv.
 *   Qwen2.5-VL: per layer fused qkv with bias 3 Hv^2 + 3 Hv, proj Hv^2 + Hv,
 *     gated MLP with biases 3 Hv Iv + 2 Iv + Hv, two RMSNorms 2 Hv; patch
 *     embedding C t p^2 Hv (no bias); merger RMSNorm Hv + (m^2 Hv)^2 + m^2 Hv
 *     + m^2 Hv out + out.
 *   Qwen2-VL: width embed_dim (its hidden_size is the merger's output),
 *     MLP mlp_ratio x embed_dim, LayerNorms and biases (below).
 *   CLIP under LLaVA / LLaVA-Next: the layers up to vision_feature_layer,
 *     no post-LayerNorm, a class embedding and its position (below).
 * Projectors: Gemma 3 Hv Ht + Hv; LLaVA Hv Ht + Ht + Ht^2 + Ht (+ Ht
 * image_newline for LLaVA-Next); Kimi-VL LayerNorm 2 Hv + (m^2 Hv)^2 + m^2 Hv
 * + m^2 Hv Ht + Ht.  Other towers are counted as the default ViT with a
 * warning that their projector is not; audio towers are not counted (warning). */
static kvp_status tower_uint(struct hf *h, const struct kvp_node *t, const char *const *keys,
			     const char *field, uint64_t dflt, uint64_t *out)
{
	const char *which = keys[0];
	const struct kvp_node *n = hf_get_any(t, keys, &which);
	*out = dflt;
	if (!n)
		return KVP_STATUS_OK;
	char name[96];
	snprintf(name, sizeof name, "%s.%s", field, which);
	return hf_node_positive(h, n, name, UINT32_MAX, out);
}

/* The tower layers a LLaVA-style wrapper keeps: vision_feature_layer (a
 * layer index, negative from the end: -1 all Lv, -2 all but the last), or
 * deflt where the key is absent (llava.py init_vision_tower_for_llava,
 * _get_num_hidden_layers). */
static kvp_status feature_layers(struct hf *h, uint64_t Lv, uint64_t deflt, uint64_t *keep)
{
	const struct kvp_node *fl = kvp_map_get(h->doc->root, "vision_feature_layer");
	*keep = fl ? Lv : deflt;   /* a list of layers: the whole tower, as before */
	if (!fl || fl->type != KVP_NODE_SCALAR)
		return KVP_STATUS_OK;
	char *end = NULL;
	long v = strtol(fl->value, &end, 10);
	if (!end || *end || v == 0 || v < -(long)Lv - 1 || v > (long)Lv)
		return kvp_node_fail(h->doc, fl, h->err, KVP_STATUS_INVALID, "vision_feature_layer",
				     "must be a layer of the tower, -%llu to %llu",
				     (unsigned long long)Lv + 1, (unsigned long long)Lv);
	*keep = v < 0 ? (uint64_t)((long)Lv + v + 1) : (uint64_t)v;
	return KVP_STATUS_OK;
}

kvp_status hf_count_towers(struct hf *h, struct kvp_model *m)
{
	const struct kvp_node *root = h->doc->root;
	kvp_status st;
	const struct kvp_node *an = kvp_map_get(root, "audio_config");
	if (an)
		hf_warn(h, an, "audio_config",
		     "the audio tower is not counted: the KV pool is overestimated by its weights");
	const struct kvp_node *tn = kvp_map_get(root, "vision_config");
	if (!tn)
		return KVP_STATUS_OK;
	static const char *const dim_keys[] = {"hidden_size", "embed_dim", "vt_hidden_size",
					       "width", NULL};
	static const char *const depth_keys[] = {"num_hidden_layers", "depth",
						 "vt_num_hidden_layers", "layers", NULL};
	static const char *const mlp_keys[] = {"intermediate_size", "vt_intermediate_size",
					       "mlp_dim", NULL};
	/* Pixtral's vision_config omits its dimensions: PixtralVisionConfig's
	 * class defaults, hidden_size 1024, 24 layers, intermediate 4096
	 * (transformers configuration_pixtral.py; Mistral's "400M vision
	 * encoder") */
	const struct kvp_node *vt = tn->type == KVP_NODE_MAP ? kvp_map_get(tn, "model_type") : NULL;
	bool pixtral = vt && vt->type == KVP_NODE_SCALAR && strcmp(vt->value, "pixtral") == 0;
	if (!pixtral && (tn->type != KVP_NODE_MAP || !hf_get_any(tn, dim_keys, NULL) ||
			 !hf_get_any(tn, depth_keys, NULL))) {
		hf_warn(h, tn, "vision_config",
		     "a tower without its dimensions (hidden_size, num_hidden_layers): "
		     "its weights are not counted, so the KV pool is overestimated");
		return KVP_STATUS_OK;
	}
	static const char *const patch_keys[] = {"patch_size", NULL};
	static const char *const image_keys[] = {"image_size", NULL};
	static const char *const out_keys[] = {"out_hidden_size", NULL};
	static const char *const tpatch_keys[] = {"temporal_patch_size", NULL};
	static const char *const merge_keys[] = {"spatial_merge_size", NULL};
	static const char *const posh_keys[] = {"init_pos_emb_height", NULL};
	static const char *const posw_keys[] = {"init_pos_emb_width", NULL};
	uint64_t Hv, Lv, Iv, p, img, out, tp, mg = 1, ph, pw;
	if ((st = tower_uint(h, tn, dim_keys, "vision_config", pixtral ? 1024 : 0, &Hv)) ||
	    (st = tower_uint(h, tn, depth_keys, "vision_config", pixtral ? 24 : 0, &Lv)) ||
	    (st = tower_uint(h, tn, mlp_keys, "vision_config", 4 * Hv, &Iv)) ||
	    (st = tower_uint(h, tn, patch_keys, "vision_config", 14, &p)) ||
	    (st = tower_uint(h, tn, image_keys, "vision_config", 0, &img)) ||
	    (st = tower_uint(h, tn, out_keys, "vision_config", m->hidden_size, &out)) ||
	    (st = tower_uint(h, tn, tpatch_keys, "vision_config", 1, &tp)) ||
	    (st = tower_uint(h, tn, merge_keys, "vision_config", 1, &mg)) ||
	    (st = tower_uint(h, tn, posh_keys, "vision_config", 0, &ph)) ||
	    (st = tower_uint(h, tn, posw_keys, "vision_config", 0, &pw)))
		return st;
	const struct kvp_node *mk = kvp_map_get(tn, "merge_kernel_size");
	if (mk && mk->type == KVP_NODE_SEQ && mk->n >= 1 &&
	    (st = hf_node_positive(h, mk->items[0], "vision_config.merge_kernel_size", 64, &mg)))
		return st;
	if (Hv > 65536 || Lv > 4096 || Iv > 1048576 || p > 4096 || mg > 64)
		return kvp_node_fail(h->doc, tn, h->err, KVP_STATUS_INVALID, "vision_config",
				     "tower dimensions out of range");
	char type[64] = "", top[64] = "";
	const struct kvp_node *n = kvp_map_get(tn, "model_type");
	if (n && n->type == KVP_NODE_SCALAR)
		snprintf(type, sizeof type, "%s", n->value);
	n = kvp_map_get(root, "model_type");
	if (n && n->type == KVP_NODE_SCALAR)
		snprintf(top, sizeof top, "%s", n->value);
	const uint64_t C = 3, Ht = m->hidden_size, mm = mg * mg;
	uint64_t t = 0;
	bool qwen2_vl = strcmp(type, "qwen2_vl") == 0 || strcmp(top, "qwen2_vl") == 0;
	if (qwen2_vl) {
		/* Qwen2-VL names its width embed_dim: its vision_config.hidden_size
		 * is the merger's output (the text model's width), and its MLP is
		 * mlp_ratio x embed_dim (transformers Qwen2VLVisionConfig; vLLM
		 * 0.19.0 qwen2_vl.py Qwen2VisionTransformer reads the same keys) */
		static const char *const ed_keys[] = {"embed_dim", NULL};
		static const char *const ratio_keys[] = {"mlp_ratio", NULL};
		static const char *const hs_keys[] = {"hidden_size", NULL};
		uint64_t ratio;
		if ((st = tower_uint(h, tn, ed_keys, "vision_config", Hv, &Hv)) ||
		    (st = tower_uint(h, tn, ratio_keys, "vision_config", 4, &ratio)) ||
		    (st = tower_uint(h, tn, hs_keys, "vision_config", m->hidden_size, &out)))
			return st;
		if (Hv > 65536 || ratio > 64)
			return kvp_node_fail(h->doc, tn, h->err, KVP_STATUS_INVALID, "vision_config",
					     "tower dimensions out of range");
		Iv = ratio * Hv;
		/* per layer: LayerNorms with biases 4 Hv, fused qkv and proj with
		 * biases 4 Hv^2 + 4 Hv, MLP fc1/fc2 with biases 2 Hv Iv + Iv + Hv;
		 * Conv3d patch embedding C t p^2 Hv (no bias); merger LayerNorm
		 * 2 Hv + (m^2 Hv)^2 + m^2 Hv + m^2 Hv out + out (vLLM qwen2_vl.py
		 * Qwen2VisionBlock, Qwen2VisionPatchEmbed, Qwen2VisionPatchMerger) */
		uint64_t layer = 4 * Hv + 4 * Hv * Hv + 4 * Hv + 2 * Hv * Iv + Iv + Hv;
		t = Lv * layer + C * tp * p * p * Hv + 2 * Hv + (mm * Hv) * (mm * Hv) + mm * Hv +
		    mm * Hv * out + out;
	} else if (pixtral && mg == 1 && (strcmp(top, "llava") == 0)) {
		/* Pixtral under LLaVA (mistral-community/pixtral-12b), as vLLM
		 * builds it (pixtral.py PixtralHFVisionModel, llava.py
		 * init_vision_tower_for_llava: up to vision_feature_layer, no
		 * post-norm): per layer two RMSNorms 2 Hv, q, k, v, o without
		 * biases 4 Hv^2, gated MLP without biases 3 Hv Iv; patch_conv
		 * C p^2 Hv without bias, ln_pre Hv, no position table (2-D RoPE);
		 * the LLaVA projector Hv Ht + Ht + Ht^2 + Ht */
		uint64_t keep;
		kvp_status fst = feature_layers(h, Lv, Lv, &keep);
		if (fst != KVP_STATUS_OK)
			return fst;
		t = keep * (2 * Hv + 4 * Hv * Hv + 3 * Hv * Iv) + C * p * p * Hv + Hv +
		    Hv * Ht + Ht + Ht * Ht + Ht;
	} else if (strncmp(type, "qwen2_5_vl", 10) == 0 || strncmp(top, "qwen2_5_vl", 10) == 0) {
		uint64_t layer = 4 * Hv * Hv + 4 * Hv + 3 * Hv * Iv + 2 * Iv + Hv + 2 * Hv;
		t = Lv * layer + C * tp * p * p * Hv + Hv + (mm * Hv) * (mm * Hv) + mm * Hv +
		    mm * Hv * out + out;
	} else {
		uint64_t layer = 4 * (Hv * Hv + Hv) + 2 * Hv * Iv + Iv + Hv + 4 * Hv;
		uint64_t pos = ph && pw ? ph * pw * Hv : img ? (img / p) * (img / p) * Hv : 0;
		t = Lv * layer + C * p * p * Hv + Hv + pos + 2 * Hv;
		if (strncmp(top, "gemma3", 6) == 0)
			t += Hv * Ht + Hv;
		else if ((strcmp(top, "llava") == 0 || strcmp(top, "llava_next") == 0) &&
			 strcmp(type, "clip_vision_model") == 0) {
			/* vLLM builds the CLIP tower only up to vision_feature_layer
			 * (-2: all but the last layer) and without its post-LayerNorm
			 * (llava.py init_vision_tower_for_llava, _get_num_hidden_layers,
			 * require_post_norm=False; llava_next.py the same, 0.10.2 and
			 * 0.19.0); CLIP adds a class embedding and its position, and its
			 * pre-LayerNorm stands where the generic final one is (clip.py
			 * CLIPVisionEmbeddings, pre_layrnorm).  The projector: linear_1
			 * Hv Ht + Ht and linear_2 Ht^2 + Ht (LlavaMultiModalProjector);
			 * LLaVA-Next adds image_newline, Ht */
			uint64_t keep;   /* absent: LlavaConfig's default, -2 */
			kvp_status fst = feature_layers(h, Lv, Lv - 1, &keep);
			if (fst != KVP_STATUS_OK)
				return fst;
			uint64_t layer = 4 * (Hv * Hv + Hv) + 2 * Hv * Iv + Iv + Hv + 4 * Hv;
			t += Hv - (Lv - keep) * layer;
			t += Hv * Ht + Ht + Ht * Ht + Ht + (strcmp(top, "llava_next") == 0 ? Ht : 0);
		}
		else if (strcmp(top, "kimi_vl") == 0)
			t += 2 * Hv + (mm * Hv) * (mm * Hv) + mm * Hv + mm * Hv * Ht + Ht;
		else
			hf_warn(h, tn, "vision_config",
			     "tower \"%s\" counted as a generic ViT (%llu layers of %llu); its "
			     "projector is not counted", type[0] ? type : top,
			     (unsigned long long)Lv, (unsigned long long)Hv);
	}
	m->tower_params = t;
	/* what the encoder's profile run needs of the tower (hf-encoder.c) */
	struct kvp_mm_encoder *e = &m->mm_encoder;
	e->tower_width = (uint32_t)Hv;
	e->tower_mlp = (uint32_t)Iv;
	e->tower_gated = pixtral || (!qwen2_vl && (strncmp(type, "qwen2_5_vl", 10) == 0 ||
						   strncmp(top, "qwen2_5_vl", 10) == 0));
	e->out_width = (uint32_t)(out > UINT32_MAX ? UINT32_MAX : out);
	e->temporal_patch = (uint32_t)tp;
	return hf_read_encoder(h, m, tn, top, type, p, mg, img);
}
