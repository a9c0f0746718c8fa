/* step-collective.h: the rate a tensor-parallel all-reduce or an experts'
 * exchange reaches over PCIe inside one server, where the GPU profile gives
 * NCCL's measured ring bus bandwidth (pcie_busbw_2/4/8, kvp_gpu).  Below
 * step.c: it reads numbers only, never the step's structures. */
#ifndef KVP_TIME_STEP_COLLECTIVE_H
#define KVP_TIME_STEP_COLLECTIVE_H

#include <stdint.h>

/* The bus bandwidth of a ring among `group` GPUs from busbw[] = the
 * profile's groups of 2, 4 and 8: the smallest listed group that holds
 * `group` (a ring of 3 paces as one of 4); 0 for a group of one, a group
 * beyond 8 (it leaves the server) or none listed at or above it. */
double kvp_pcie_ring_busbw(const double busbw[3], uint32_t group);

/* Where the collective of `group` GPUs runs on the host link (`link_name`
 * equal to `host_name`: no NVLink domain holds the group and it stays in
 * the server) and the profile gives its busbw, *effective_bps becomes
 * that busbw; otherwise it is left as it is. */
void kvp_pcie_ring_apply(const double busbw[3], const char *host_name, uint32_t group,
			 const char *link_name, double *effective_bps);

#endif
