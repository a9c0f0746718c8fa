/* step-moe.c: the routed experts of a step from the measured MoE table
 * (step-moe.h): the deployment's curve and the seconds of a step's MoE
 * layers.  The table is read and interpolated by moe-table.c.  A curve
 * with experts split over moe_ep GPUs is held at or under the curves of
 * the same moe_tp over fewer (moe_ep / 2, / 4, ...): see
 * kvp_moe_curve_pick. */
#include "time/step-moe.h"

#include <stdio.h>
#include <string.h>

#include "model/shape.h"

bool kvp_moe_curve_pick(const struct kvp_moe_table *t, const struct kvp_parallel *par,
			struct kvp_moe_curve *out, char *warning, size_t size)
{
	memset(out, 0, sizeof *out);
	uint32_t group = (par->tp ? par->tp : 1) * kvp_shape_dp(par);
	uint32_t ep = par->ep > 1 ? par->ep : 1;
	const struct kvp_moe_curve *cv = group % ep ? NULL : kvp_moe_table_curve(t, group / ep, ep);
	if (cv && cv->n) {
		*out = *cv;
		/* A GPU of moe_ep owns a subset of the experts a GPU of moe_ep / 2
		 * owns and sees the same T tokens, so its layer is no slower: a
		 * measured point above a coarser split's time at the same T is
		 * held at that time, itself measured (H200 fp8, Llama 4
		 * Maverick's (1, 8) curve is 4x its (1, 4) one, the H100's half) */
		for (uint32_t e = ep / 2; e >= 1; e /= 2) {
			const struct kvp_moe_curve *up = kvp_moe_table_curve(t, group / ep, e);
			for (uint32_t i = 0; up && up->n && i < out->n; i++) {
				double s = kvp_moe_curve_s(up, out->tokens[i]);
				if (s < out->s[i])
					out->s[i] = s;
			}
		}
		return true;
	}
	const char *why = !t->path[0] ? "no MoE table for this GPU and weights' dtype"
			  : !t->ncurves ? "the MoE table has no row of this expert shape"
					: "the MoE table did not measure this expert group";
	snprintf(warning, size,
		 "%s (moe_tp %u, moe_ep %u): the routed experts are timed by the roofline, "
		 "the band widened", why, group % ep ? group : group / ep, ep);
	return false;
}

double kvp_moe_step_s(const struct kvp_moe_curve *c, const struct kvp_model *m, double tokens)
{
	if (!c->n || !(tokens > 0))
		return -1;
	return kvp_shape_moe_layers(m) * kvp_moe_curve_s(c, tokens);
}
