/* step-eager.c: the attention layers an engine launches eagerly, by the
 * kind of op (step-eager.h). */
#include "time/step-eager.h"

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
