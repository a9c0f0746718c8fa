/* step-elementwise.c: the bytes of a pass's elementwise kernels
 * (step-elementwise.h); step.c turns them into seconds. */
#include "time/step-elementwise.h"

#include "model/shape.h"

double kvp_perf_elementwise_bytes(const struct kvp_model *m, double tp, double elem,
				  double tokens, bool rotary)
{
	if (!(tokens > 0) || !m->num_layers)
		return 0;
	if (!(tp >= 1))
		tp = 1;
	double t = tokens, h = m->hidden_size, layers = m->num_layers;
	double moe = kvp_shape_moe_layers(m), dense = layers - moe;
	/* norms, residual adds and the embedding gather: (8 L + 4) T H */
	double e = (8 * layers + 4) * t * h;
	/* rotary on q and k, in place, where it is a kernel of its own */
	if (rotary)
		e += layers * 2 * t * ((double)m->num_heads + m->num_kv_heads) * m->head_dim / tp;
	/* silu_and_mul: 2 I read, I written per row */
	if (dense > 0)
		e += dense * 3 * t * (double)m->intermediate_size / tp;
	if (moe > 0) {
		double k = m->moe_experts_per_token ? m->moe_experts_per_token : 1;
		e += moe * 3 * t * k * (double)m->moe_intermediate_size / tp;
		if (m->shared_expert_params && h > 0)
			e += 3 * t * (double)m->shared_expert_params / (3 * h) / tp;
	}
	return e * elem;
}
