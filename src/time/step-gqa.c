/* step-gqa.c: a decode step's KV loads under a per-query-head generation
 * attention (step-gqa.h). */
#include "time/step-gqa.h"

#include <math.h>

uint64_t kvp_perf_decode_kv_loads(const struct kvp_model *m, uint32_t tp, bool per_query_head,
				  uint64_t kv)
{
	if (!per_query_head || !m->num_kv_heads || m->num_heads <= m->num_kv_heads)
		return kv;
	for (uint32_t i = 0; i < m->num_layers && i < KVP_MAX_LAYERS; i++)
		if (m->layers[i] == KVP_LAYER_MLA || m->layers[i] == KVP_LAYER_MAMBA)
			return kv;
	double t = tp ? (double)tp : 1.0;
	double q = (double)m->num_heads / t;
	double k = fmax(1.0, (double)m->num_kv_heads / t);
	double g = fmax(1.0, q / k);
	double loads = (double)kv * g;
	return loads >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)llround(loads);
}
