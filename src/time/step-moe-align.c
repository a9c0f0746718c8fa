/* step-moe-align.c: the seconds of a pass's serial MoE align kernel
 * (step-moe-align.h): one fixed time per MoE layer, where the model has
 * experts enough to take it. */
#include "time/step-moe-align.h"

#include "model/shape.h"

double kvp_moe_align_step_s(const struct kvp_model *m, double layer_s, uint32_t min_experts)
{
	if (!min_experts || !(layer_s > 0) || m->moe_num_experts < min_experts)
		return 0;
	return (double)kvp_shape_moe_layers(m) * layer_s;
}
