/* step-collective.c: NCCL's ring over PCIe (step-collective.h).
 *
 * Why a measured figure and not the host link's rate: on GPUs without NVLink
 * the engines' own all-reduce kernels stand aside and NCCL's ring runs.
 * TensorRT-LLM's AllreducePlugin::selectImplementation (cpp/tensorrt_llm/
 * plugins/ncclPlugin/allreducePlugin.cpp) returns NCCL when peer-to-peer is
 * unsupported and, under the default AUTO strategy, whenever NVLink is not
 * ("if (isAuto && !mIsNVLINKSupported ...) return NCCL"); vLLM and SGLang
 * disable their custom all-reduce on more than two PCIe-only GPUs.  A ring
 * over PCIe reaches well below the link: NVIDIA's aiconfigurator measured
 * NCCL 2.29.2 on an 8 x RTX PRO 6000 Blackwell Server at 35.4, 25.0 and 23.5
 * GB/s bus bandwidth for 2, 4 and 8 GPUs (16 MiB fp16 all_reduce), against
 * the 50 GB/s kvplan's pcie5x16 preset gives a one-way copy.  A ring of n
 * moves 2 (n - 1) / n of the message through every GPU, and nccl-tests
 * defines busbw = S / t x 2 (n - 1) / n, so t = 2 (n - 1) / n x S / busbw:
 * step.c's ring formula with busbw as the link's rate. */
#include "time/step-collective.h"

#include <string.h>

double kvp_pcie_ring_busbw(const double busbw[3], uint32_t group)
{
	static const uint32_t sizes[3] = {2, 4, 8};
	if (group < 2)
		return 0;
	for (int i = 0; i < 3; i++)
		if (group <= sizes[i] && busbw[i] > 0)
			return busbw[i];
	return 0;
}

void kvp_pcie_ring_apply(const double busbw[3], const char *host_name, uint32_t group,
			 const char *link_name, double *effective_bps)
{
	double bw = kvp_pcie_ring_busbw(busbw, group);
	if (bw > 0 && strcmp(link_name, host_name) == 0)
		*effective_bps = bw;
}
