/* step-eager.c: the attention layers an engine launches eagerly, by the
 * kind of op (step-eager.h). */
#include "time/step-eager.h"

#include "model/shape.h"

void kvp_perf_eager_layers(const struct kvp_model *m, uint32_t *dense, uint32_t *mla)
{
	*dense = *mla = 0;
	for (uint32_t i = 0; i < m->num_layers && i < KVP_MAX_LAYERS; i++) {
		enum kvp_layer_kind k = (enum kvp_layer_kind)m->layers[i];
		if (k == KVP_LAYER_MLA)
			(*mla)++;
		else if (k == KVP_LAYER_FULL || k == KVP_LAYER_SLIDING || k == KVP_LAYER_CHUNKED)
			(*dense)++;
	}
}

double kvp_perf_uncaptured_launches(const struct kvp_model *m, uint32_t tp, uint32_t attn,
				    uint32_t attn_mla, uint32_t mlp, uint32_t moe, uint32_t shared)
{
	if (!attn || !attn_mla || !mlp || !moe)
		return 0;
	uint32_t dense, mla;
	kvp_perf_eager_layers(m, &dense, &mla);
	double layers = m->num_layers;
	double moe_layers = kvp_shape_moe_layers(m);
	if (moe_layers > layers)
		moe_layers = layers;
	double moe_part = moe + (m->shared_expert_params ? (double)shared : 0);
	return (layers - mla) * attn + (double)mla * attn_mla + (layers - moe_layers) * mlp +
	       moe_layers * moe_part + (tp > 1 ? 2.0 * layers : 0);
}
