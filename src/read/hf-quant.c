/* hf-quant.c: the weights' storage format from a config.json: the
 * checkpoint dtype (torch_dtype / dtype) and quantization_config per
 * quant_method (fp8, fbgemm_fp8, compressed-tensors, modelopt, gptq, awq,
 * bitsandbytes, mxfp4), with the modules an ignore list keeps unquantized.
 * An unknown method is sized in the serving dtype with a warning naming it,
 * never silently. */
#include "read/hf-private.h"

#include <stdint.h>
#include <stdio.h>
#include <strings.h>
#include <string.h>

#include "base/units.h"

/* ------------------------------------------------------------ dtypes */

kvp_status hf_read_dtype(struct hf *h, struct kvp_model *m)
{
	static const char *const keys[] = {"torch_dtype", "dtype", NULL};
	const char *which = keys[0];
	const struct kvp_node *n = hf_get_any(h->top, keys, &which);
	if (!n && h->cfg != h->top)
		n = hf_get_any(h->cfg, keys, &which);
	if (!n) {
		m->dtype = KVP_DTYPE_FP32;  /* vLLM treats a missing dtype as float32 */
		return KVP_STATUS_OK;
	}
	char buf[32];
	kvp_status st = kvp_node_str(h->doc, n, which, buf, sizeof buf, h->err);
	if (st)
		return st;
	enum kvp_dtype dt;
	if (!kvp_dtype_parse(buf, &dt) ||
	    !(dt == KVP_DTYPE_FP32 || dt == KVP_DTYPE_FP16 || dt == KVP_DTYPE_BF16 ||
	      dt == KVP_DTYPE_AUTO))
		return kvp_node_fail(h->doc, n, h->err, KVP_STATUS_INVALID, which,
				     "unknown dtype \"%s\" (expected float32, float16 or bfloat16)",
				     buf);
	m->dtype = dt;
	return KVP_STATUS_OK;
}

/* ------------------------------------------------------------ quantization
 *
 * quantization_config, per quant_method (the layouts as the checkpoints store
 * them; architectures.md 4.2):
 *   fp8, fbgemm_fp8        1 byte; per-tensor, per-channel or 128x128 block
 *                          scales (at most 4/16384 B per parameter: not counted)
 *   compressed-tensors     config_groups.*.weights: num_bits, type int|float,
 *                          strategy group (group_size) or channel/tensor/block;
 *                          group scales in 16 bits (fp8 for 4-bit floats,
 *                          nvfp4), a num_bits zero per group when not symmetric
 *   modelopt               quant_algo FP8; NVFP4 (group 16, fp8 scale);
 *                          W4A8_AWQ / W4A16_AWQ (group 128, 16-bit scale)
 *   gptq, awq (+ _marlin)  bits; group_size (-1: per channel); fp16 scale and a
 *                          packed `bits` zero per group (GPTQ's act-order g_idx,
 *                          4 B per input row, is not counted)
 *   bitsandbytes           4-bit nf4/fp4: fp32 absmax per 64, or with double
 *                          quantization an int8 absmax per 64 plus fp32 per 256
 *                          blocks; 8-bit: 1 byte (row scales not counted)
 *   mxfp4                  4 bits + e8m0 per 32, the experts only when MoE
 * The ignore lists (ignore, modules_to_not_convert, exclude_modules,
 * llm_int8_skip_modules, ignored_layers) keep what they name in the serving
 * dtype: lm_head and embeddings always are; attention, shared experts and
 * dense MLPs are counted out when an entry names them.  Any other method is
 * sized in the serving dtype with a warning that names it. */

/* Which parts of the dense share an ignore list keeps unquantized. */
static kvp_status quant_ignored(struct hf *h, const struct kvp_node *q, struct kvp_model *m)
{
	static const char *const keys[] = {"ignore", "modules_to_not_convert", "exclude_modules",
					   "llm_int8_skip_modules", "ignored_layers", NULL};
	const char *which = keys[0];
	const struct kvp_node *list = hf_get_any(q, keys, &which);
	if (!list)
		return KVP_STATUS_OK;
	char field[64];
	snprintf(field, sizeof field, "quantization_config.%s", which);
	kvp_status st = kvp_node_expect(h->doc, list, field, KVP_NODE_SEQ, h->err);
	if (st)
		return st;
	bool attn = false, shared = false, mlp = false;
	for (size_t i = 0; i < list->n; i++) {
		const struct kvp_node *it = list->items[i];
		if (it->type != KVP_NODE_SCALAR)
			return kvp_node_fail(h->doc, it, h->err, KVP_STATUS_INVALID, field,
					     "expected module names");
		const char *v = it->value;
		if (strstr(v, "shared_expert"))
			shared = true;
		else if (strstr(v, "attn") || strstr(v, "attention"))
			attn = true;
		else if (strstr(v, "mlp") && !strstr(v, "expert") && !strstr(v, "gate.") &&
			 strcmp(v, "mlp.gate") != 0 && !strstr(v, "router"))
			mlp = true;
	}
	uint64_t keep = 0;
	if ((attn && !kvp_add(keep, h->attn_params, &keep)) ||
	    (shared && !kvp_add(keep, h->shared_params, &keep)) ||
	    (mlp && !kvp_add(keep, h->mlp_params, &keep)))
		return kvp_node_fail(h->doc, list, h->err, KVP_STATUS_OVERFLOW, field,
				     "parameter count overflow");
	m->unquantized_params = keep;
	return KVP_STATUS_OK;
}

/* An optional whole number `key` of q, in [lo, hi]; *out keeps its default. */
static kvp_status quant_uint(struct hf *h, const struct kvp_node *q, const char *key, uint64_t hi,
			     uint32_t *out, bool *found)
{
	const struct kvp_node *n = kvp_map_get(q, key);
	if (found)
		*found = n != NULL;
	if (!n)
		return KVP_STATUS_OK;
	char field[96];
	snprintf(field, sizeof field, "quantization_config.%s", key);
	uint64_t v;
	kvp_status st = hf_node_uint(h, n, field, hi, &v);
	if (!st)
		*out = (uint32_t)v;
	return st;
}

/* A scalar string of q under `key` into buf ("" when absent). */
static kvp_status quant_str(struct hf *h, const struct kvp_node *q, const char *key, char *buf,
			    size_t size)
{
	buf[0] = 0;
	const struct kvp_node *n = kvp_map_get(q, key);
	if (!n)
		return KVP_STATUS_OK;
	char field[96];
	snprintf(field, sizeof field, "quantization_config.%s", key);
	return kvp_node_str(h->doc, n, field, buf, size, h->err);
}

/* The dtype whose name describes a format (for the printout). */
static enum kvp_dtype quant_dtype(uint32_t bits, bool is_float, uint32_t group)
{
	if (bits >= 16)
		return KVP_DTYPE_AUTO;
	if (bits == 8)
		return is_float ? KVP_DTYPE_FP8 : KVP_DTYPE_INT8;
	if (is_float)
		return group == 32 ? KVP_DTYPE_MXFP4 : KVP_DTYPE_NVFP4;
	return KVP_DTYPE_INT4;
}

/* compressed-tensors: the first config group's weights (several groups: the
 * widest, and a warning). */
static kvp_status quant_compressed_tensors(struct hf *h, const struct kvp_node *q,
					   struct kvp_weights_format *f, enum kvp_dtype *dt)
{
	const struct kvp_node *groups = kvp_map_get(q, "config_groups");
	if (!groups || groups->type != KVP_NODE_MAP || groups->n == 0)
		return kvp_node_fail(h->doc, groups ? groups : q, h->err, KVP_STATUS_INVALID,
				     "quantization_config.config_groups",
				     "required for compressed-tensors: a map of groups with "
				     "their weights' num_bits");
	if (groups->n > 1)
		hf_warn(h, groups, "quantization_config.config_groups",
		     "%zu groups: every quantized weight is sized as the widest one", groups->n);
	for (size_t i = 0; i < groups->n; i++) {
		const struct kvp_node *w = groups->items[i]->type == KVP_NODE_MAP
			? kvp_map_get(groups->items[i], "weights") : NULL;
		if (!w || w->type != KVP_NODE_MAP)
			continue;  /* an activations-only group */
		uint32_t bits = 0, group = 0;
		kvp_status st;
		if ((st = quant_uint(h, w, "num_bits", 32, &bits, NULL)))
			return st;
		char type[16], strategy[24];
		if ((st = quant_str(h, w, "type", type, sizeof type)) ||
		    (st = quant_str(h, w, "strategy", strategy, sizeof strategy)))
			return st;
		/* groups: strategy group or tensor_group (nvfp4), or a group_size
		 * given without a strategy; channel, tensor and block scales are
		 * too few to count */
		const struct kvp_node *gs = kvp_map_get(w, "group_size");
		bool grouped = strcmp(strategy, "group") == 0 ||
			       strcmp(strategy, "tensor_group") == 0 || (!strategy[0] && gs);
		if (grouped) {
			uint64_t v;
			if (!gs)
				return kvp_node_fail(h->doc, w, h->err, KVP_STATUS_INVALID,
						     "quantization_config.config_groups.weights."
						     "group_size", "required for strategy \"%s\"",
						     strategy);
			if ((st = hf_node_positive(h, gs, "quantization_config.config_groups.weights."
						"group_size", UINT32_MAX, &v)))
				return st;
			group = (uint32_t)v;
		}
		bool is_float = strcmp(type, "float") == 0, sym = true;
		const struct kvp_node *sn = kvp_map_get(w, "symmetric");
		if (sn && (st = kvp_node_bool(h->doc, sn, "symmetric", &sym, h->err)))
			return st;
		if (!bits)
			return kvp_node_fail(h->doc, w, h->err, KVP_STATUS_INVALID,
					     "quantization_config.config_groups.weights.num_bits",
					     "required field is missing");
		/* scale: fp8 for 4-bit floats (nvfp4), else 16 bits; a zero point
		 * of num_bits when asymmetric */
		uint32_t gbits = group ? (is_float && bits == 4 ? 8 : 16) + (sym ? 0 : bits) : 0;
		if (bits * (uint64_t)(group ? group : 1) + gbits >
		    f->bits * (uint64_t)(f->group ? f->group : 1) + f->group_bits) {
			f->bits = bits;
			f->group = group;
			f->group_bits = gbits;
			*dt = quant_dtype(bits, is_float, group);
		}
	}
	if (!f->bits)
		return kvp_node_fail(h->doc, groups, h->err, KVP_STATUS_INVALID,
				     "quantization_config.config_groups",
				     "no group quantizes weights (weights.num_bits)");
	return KVP_STATUS_OK;
}

kvp_status hf_read_quantization(struct hf *h, struct kvp_model *m)
{
	const struct kvp_node *q = kvp_map_get(h->top, "quantization_config");
	if (!q && h->cfg != h->top)
		q = kvp_map_get(h->cfg, "quantization_config");
	if (!q)
		return KVP_STATUS_OK;
	kvp_status st = kvp_node_expect(h->doc, q, "quantization_config", KVP_NODE_MAP, h->err);
	if (st)
		return st;
	char method[48];
	if ((st = quant_str(h, q, "quant_method", method, sizeof method)))
		return st;
	const struct kvp_node *mn = kvp_map_get(q, "quant_method");
	struct kvp_weights_format f = {0};
	enum kvp_dtype dt = KVP_DTYPE_AUTO;
	bool experts_only = false;
	if (strcmp(method, "fp8") == 0 || strcmp(method, "fbgemm_fp8") == 0) {
		dt = KVP_DTYPE_FP8;
		f = (struct kvp_weights_format){8, 0, 0};
	} else if (strcmp(method, "mxfp4") == 0) {
		dt = KVP_DTYPE_MXFP4;
		f = (struct kvp_weights_format){4, 32, 8};
		experts_only = m->moe_num_experts != 0;  /* gpt-oss: attention etc. stay bf16 */
	} else if (strcmp(method, "compressed-tensors") == 0 ||
		   strcmp(method, "compressed_tensors") == 0) {
		if ((st = quant_compressed_tensors(h, q, &f, &dt)))
			return st;
	} else if (strcmp(method, "modelopt") == 0) {
		const struct kvp_node *inner = kvp_map_get(q, "quantization");
		const struct kvp_node *src = inner && inner->type == KVP_NODE_MAP ? inner : q;
		char algo[32];
		uint32_t group = 0;
		if ((st = quant_str(h, src, "quant_algo", algo, sizeof algo)) ||
		    (st = quant_uint(h, src, "group_size", UINT32_MAX, &group, NULL)))
			return st;
		if (strcasecmp(algo, "FP8") == 0) {
			dt = KVP_DTYPE_FP8;
			f = (struct kvp_weights_format){8, 0, 0};
		} else if (strcasecmp(algo, "NVFP4") == 0) {
			dt = KVP_DTYPE_NVFP4;
			f = (struct kvp_weights_format){4, group ? group : 16, 8};
		} else if (strcasecmp(algo, "W4A8_AWQ") == 0 || strcasecmp(algo, "W4A16_AWQ") == 0 ||
			   strcasecmp(algo, "INT4_AWQ") == 0) {
			dt = KVP_DTYPE_INT4_AWQ;
			f = (struct kvp_weights_format){4, group ? group : 128, 16};
		} else {
			hf_warn(h, kvp_map_get(src, "quant_algo") ? kvp_map_get(src, "quant_algo") : q,
			     "quantization_config.quant_algo",
			     "modelopt algorithm \"%s\" is not modelled: weights sized in the "
			     "serving dtype (an overestimate if they are smaller)", algo);
		}
		if (inner && inner != src)
			q = inner;
	} else if (strcmp(method, "gptq") == 0 || strcmp(method, "awq") == 0 ||
		   strcmp(method, "gptq_marlin") == 0 || strcmp(method, "awq_marlin") == 0) {
		bool awq = method[0] == 'a';
		uint32_t bits = 4, group = 128;
		bool has_bits, has_w_bit = false, zero = true;
		if ((st = quant_uint(h, q, "bits", 16, &bits, &has_bits)) ||
		    (!has_bits && (st = quant_uint(h, q, "w_bit", 16, &bits, &has_w_bit))))
			return st;
		/* group_size -1 means per channel */
		const struct kvp_node *gn = kvp_map_get(q, "group_size");
		if (!gn)
			gn = kvp_map_get(q, "q_group_size");
		if (gn && !(gn->type == KVP_NODE_SCALAR && !gn->quoted &&
			    strcmp(gn->value, "-1") == 0)) {
			uint64_t v;
			if ((st = hf_node_positive(h, gn, "quantization_config.group_size", UINT32_MAX,
						&v)))
				return st;
			group = (uint32_t)v;
		} else if (gn) {
			group = 0;
		}
		const struct kvp_node *zn = kvp_map_get(q, "zero_point");
		if (awq && zn && (st = kvp_node_bool(h->doc, zn, "quantization_config.zero_point",
						      &zero, h->err)))
			return st;
		/* the widths the engines load (vLLM quantization/): gptq.py GPTQConfig
		 * "only 2/3/4/8-bit"; gptq_marlin.py TYPE_MAP 4 and 8; awq.py 4 only,
		 * awq_marlin.py TYPE_MAP 4 and 8 (vLLM moves an awq checkpoint to
		 * awq_marlin where it can) */
		bool gptq_plain = strcmp(method, "gptq") == 0;
		if (!(bits == 4 || bits == 8 || (gptq_plain && (bits == 2 || bits == 3)))) {
			const struct kvp_node *bn = kvp_map_get(q, has_w_bit ? "w_bit" : "bits");
			return kvp_node_fail(h->doc, bn ? bn : q, h->err, KVP_STATUS_INVALID,
					     has_w_bit ? "quantization_config.w_bit"
						       : "quantization_config.bits",
					     "%u bits: %s loads %s (vLLM %s)", bits, method,
					     gptq_plain ? "2, 3, 4 or 8" : "4 or 8",
					     gptq_plain ? "GPTQConfig" : awq ? "AWQ/AWQMarlinConfig"
									: "GPTQMarlinConfig");
		}
		f = (struct kvp_weights_format){bits, group, group ? 16 + (zero ? bits : 0) : 0};
		dt = bits == 8 ? KVP_DTYPE_INT8
		     : bits == 4 ? (awq ? KVP_DTYPE_INT4_AWQ : KVP_DTYPE_INT4_GPTQ) : KVP_DTYPE_INT4;
	} else if (strcmp(method, "bitsandbytes") == 0) {
		bool b4 = false, b8 = false, dq = false;
		const struct kvp_node *n;
		if (((n = kvp_map_get(q, "load_in_4bit")) &&
		     (st = kvp_node_bool(h->doc, n, "quantization_config.load_in_4bit", &b4, h->err))) ||
		    ((n = kvp_map_get(q, "load_in_8bit")) &&
		     (st = kvp_node_bool(h->doc, n, "quantization_config.load_in_8bit", &b8, h->err))) ||
		    ((n = kvp_map_get(q, "bnb_4bit_use_double_quant")) &&
		     (st = kvp_node_bool(h->doc, n, "quantization_config.bnb_4bit_use_double_quant",
					 &dq, h->err))))
			return st;
		if (b4) {
			dt = KVP_DTYPE_INT4;
			/* per 64 x 256 = 16,384 elements: 256 absmax of 32 bits, or
			 * with double quantization 256 of 8 bits and one fp32 */
			f = (struct kvp_weights_format){4, 16384, dq ? 256 * 8 + 32 : 256 * 32};
		} else if (b8) {
			dt = KVP_DTYPE_INT8;
			f = (struct kvp_weights_format){8, 0, 0};
		} else {
			hf_warn(h, q, "quantization_config",
			     "bitsandbytes without load_in_4bit or load_in_8bit: weights sized in "
			     "the serving dtype");
		}
	} else {
		hf_warn(h, mn ? mn : q, "quantization_config.quant_method",
		     "unknown quantization method \"%s\": weights sized in the serving dtype "
		     "(%s for a 16-bit checkpoint), which overestimates them if they are smaller",
		     method, kvp_dtype_name(kvp_model_serving_dtype(m, KVP_DTYPE_AUTO)));
		return KVP_STATUS_OK;
	}
	if (!f.bits)
		return KVP_STATUS_OK;
	snprintf(m->weights_source, sizeof m->weights_source,
		 "quantization_config.quant_method \"%.48s\"", method);
	if (experts_only) {
		m->expert_dtype = dt;
		m->expert_format = f;
		return KVP_STATUS_OK;
	}
	m->weights_dtype = dt == KVP_DTYPE_AUTO ? KVP_DTYPE_AUTO : dt;
	m->weights_format = f;
	return quant_ignored(h, q, m);
}
