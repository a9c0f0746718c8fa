/* spec.c: the per-GPU view of a model under a deployment shape (struct
 * kvp_spec, model.h): the layers of each pipeline stage with their KV costs
 * (model.c), the stage's weights as the shape places them (shape.c), and the
 * worst stage.  It sits above both, so the model's arithmetic and the shape's
 * placement never call each other.  Legend as in model.h. */
#include "model/spec.h"

#include <string.h>

#include "model/shape.h"
#include "base/units.h"

/* Stage boundaries as vLLM's get_pp_indices: L // pp each, the remainder
 * added one each to the stages before the last, from the back. */
static void pp_range(uint32_t L, uint32_t pp, uint32_t stage, uint32_t *first, uint32_t *count)
{
	uint32_t base = L / pp, rem = L % pp, start = 0;
	for (uint32_t s = 0; s < pp; s++) {
		/* stages pp-2, pp-3, ..., pp-1-rem get one more */
		uint32_t extra = (pp >= 2 && s <= pp - 2 && s >= pp - 1 - rem) ? 1 : 0;
		if (s == stage) {
			*first = start;
			*count = base + extra;
			return;
		}
		start += base + extra;
	}
}

static kvp_status spec_build(const struct kvp_model *m, struct kvp_parallel par,
			     enum kvp_dtype serving_dtype, enum kvp_dtype kv_dtype, uint32_t want,
			     struct kvp_spec *out, struct kvp_error *err)
{
	const char *where = m->path[0] ? m->path : m->name;
	kvp_status st = kvp_model_validate(m, err);
	if (st)
		return st;
	if (par.tp == 0 || par.pp == 0)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, par.tp ? "pp" : "tp",
				     "must be at least 1");
	if (m->num_heads % par.tp)
		return kvp_error_set(err, KVP_STATUS_INVALID, where, 0, 0, "tp",
				     "%u does not divide num_heads %u", par.tp, m->num_heads);
	bool has_std = false;
	for (uint32_t i = 0; i < m->num_layers; i++)
		has_std |= m->layers[i] == KVP_LAYER_FULL || m->layers[i] == KVP_LAYER_SLIDING ||
			   m->layers[i] == KVP_LAYER_CHUNKED;
	if (has_std && (m->num_kv_heads >= par.tp ? m->num_kv_heads % par.tp
						   : par.tp % m->num_kv_heads))
		return kvp_error_set(err, KVP_STATUS_INVALID, where, 0, 0, "tp",
				     "%u and num_kv_heads %u must divide one another", par.tp,
				     m->num_kv_heads);
	if (m->linear_key_dim && (m->linear_num_value_heads % par.tp ||
				  (2ULL * m->linear_num_key_heads * m->linear_key_dim +
				   (uint64_t)m->linear_num_value_heads * m->linear_value_dim) % par.tp))
		return kvp_error_set(err, KVP_STATUS_INVALID, where, 0, 0, "tp",
				     "%u does not divide the %u linear-attention value heads and their "
				     "convolution", par.tp, m->linear_num_value_heads);
	if (par.pp > m->num_layers)
		return kvp_error_set(err, KVP_STATUS_INVALID, where, 0, 0, "pp",
				     "%u stages for %u layers", par.pp, m->num_layers);
	if ((st = kvp_shape_check(m, &par, err)))
		return st;
	enum kvp_dtype serving = kvp_model_serving_dtype(m, serving_dtype);
	if (!kvp_dtype_info(serving)->weights_ok || kvp_dtype_info(serving)->bits < 16)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "dtype",
				     "%s is not a serving dtype (fp32, fp16, bf16)",
				     kvp_dtype_name(serving));
	enum kvp_dtype kv = kv_dtype == KVP_DTYPE_AUTO ? serving : kv_dtype;
	if (!kvp_dtype_info(kv)->kv_ok)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "kv-dtype",
				     "%s is not a KV cache format", kvp_dtype_name(kv));

	memset(out, 0, sizeof *out);
	out->model = m;
	out->par = par;
	out->serving_dtype = serving;
	out->kv_dtype = kv;
	/* MLA caches one latent "head" on every rank */
	out->kv_heads_per_gpu = !has_std ? 1 : m->num_kv_heads / par.tp ? m->num_kv_heads / par.tp : 1;

	/* whole model, unsplit */
	for (uint32_t i = 0; i < m->num_layers; i++) {
		struct kvp_spec_layer l;
		if ((st = kvp_model_layer_cost(m, m->layers[i], 1, kv, serving, &l)) ||
		    !kvp_add(out->token_bytes_total, l.token_bytes, &out->token_bytes_total))
			return kvp_error_set(err, KVP_STATUS_OVERFLOW, where, 0, 0, "num_layers",
					     "KV bytes per token overflow");
	}
	uint64_t tw = 0;
	for (uint32_t s = 0; s < par.pp; s++) {
		uint32_t first = 0, count = 0;
		pp_range(m->num_layers, par.pp, s, &first, &count);
		struct kvp_weights_split w;
		if ((st = kvp_shape_stage_weights(m, serving, &par, s, first, count, &w)) ||
		    !kvp_add(tw, w.total_bytes, &tw))
			return kvp_error_set(err, KVP_STATUS_OVERFLOW, where, 0, 0, "params",
					     "weights bytes overflow");
	}
	struct kvp_parallel one = {.tp = 1, .pp = 1};
	struct kvp_weights_split whole;
	st = kvp_shape_stage_weights(m, serving, &one, 0, 0, m->num_layers, &whole);
	if (st)
		return kvp_error_set(err, st, where, 0, 0, "params", "weights bytes overflow");
	out->weights_bytes_total = whole.total_bytes;

	/* the worst stage: most bytes per token, then per sequence, then weights */
	struct kvp_spec tmp;
	bool have = false;
	for (uint32_t s = 0; s < par.pp; s++) {
		memset(tmp.count, 0, sizeof tmp.count);
		tmp.tower_bytes = 0;
		memset(tmp.kind_token_bytes, 0, sizeof tmp.kind_token_bytes);
		tmp.token_bytes = tmp.seq_bytes = 0;
		pp_range(m->num_layers, par.pp, s, &tmp.first_layer, &tmp.num_layers);
		tmp.stage = s;
		for (uint32_t i = 0; i < tmp.num_layers; i++) {
			uint32_t idx = tmp.first_layer + i;
			struct kvp_spec_layer *l = &tmp.layers[i];
			if ((st = kvp_model_layer_cost(m, m->layers[idx], par.tp, kv, serving, l)) ||
			    !kvp_add(tmp.token_bytes, l->token_bytes, &tmp.token_bytes) ||
			    !kvp_add(tmp.seq_bytes, l->seq_bytes, &tmp.seq_bytes))
				return kvp_error_set(err, KVP_STATUS_OVERFLOW, where, 0, 0,
						     "num_layers", "KV bytes overflow");
			l->index = idx;
			tmp.count[l->kind]++;
			tmp.kind_token_bytes[l->kind] += l->token_bytes;
		}
		if ((st = kvp_shape_stage_weights(m, serving, &par, s, tmp.first_layer, tmp.num_layers,
						  &tmp.weights_split)))
			return kvp_error_set(err, st, where, 0, 0, "params", "weights bytes overflow");
		tmp.weights_bytes = tmp.weights_split.total_bytes;
		tmp.tower_bytes = tmp.weights_split.tower_bytes;
		if (want != UINT32_MAX && s != want)
			continue;
		bool worse = !have || want != UINT32_MAX || tmp.token_bytes > out->token_bytes ||
			     (tmp.token_bytes == out->token_bytes &&
			      (tmp.seq_bytes > out->seq_bytes ||
			       (tmp.seq_bytes == out->seq_bytes &&
				tmp.weights_bytes > out->weights_bytes)));
		if (worse) {
			out->stage = tmp.stage;
			out->first_layer = tmp.first_layer;
			out->num_layers = tmp.num_layers;
			memcpy(out->layers, tmp.layers, tmp.num_layers * sizeof tmp.layers[0]);
			memcpy(out->count, tmp.count, sizeof tmp.count);
			memcpy(out->kind_token_bytes, tmp.kind_token_bytes, sizeof tmp.kind_token_bytes);
			out->token_bytes = tmp.token_bytes;
			out->seq_bytes = tmp.seq_bytes;
			out->weights_bytes = tmp.weights_bytes;
			out->tower_bytes = tmp.tower_bytes;
			out->weights_split = tmp.weights_split;
			have = true;
		}
	}
	return KVP_STATUS_OK;
}


kvp_status kvp_spec_build(const struct kvp_model *m, struct kvp_parallel par,
			  enum kvp_dtype serving_dtype, enum kvp_dtype kv_dtype,
			  struct kvp_spec *out, struct kvp_error *err)
{
	return spec_build(m, par, serving_dtype, kv_dtype, UINT32_MAX, out, err);
}

kvp_status kvp_spec_build_stage(const struct kvp_model *m, struct kvp_parallel par,
				enum kvp_dtype serving_dtype, enum kvp_dtype kv_dtype, uint32_t stage,
				struct kvp_spec *out, struct kvp_error *err)
{
	if (stage >= par.pp)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "pp",
				     "stage %u of %u stages", stage, par.pp);
	return spec_build(m, par, serving_dtype, kv_dtype, stage, out, err);
}
