/* frag-sim.h: the closed-batch fragmentation simulator (internal to
 * src/frag/): the rows run over one request stream drawn from the workload
 * (frag-sim.c).  kvp_frag_run (frag-run.c) is its one caller. */
#ifndef KVP_FRAG_SIM_H
#define KVP_FRAG_SIM_H

#include <stddef.h>

#include "base/error.h"
#include "frag/frag.h"

/* Simulate rows[0..nr) (policy, allocator or block size set; the rest filled
 * in) over cfg->requests requests of w.  NOMEM, INVALID (a contiguous-max
 * reservation larger than the pool) or INTERNAL (a consistency check failed). */
kvp_status kvp_frag_sim_rows(const struct kvp_frag_config *cfg, const struct kvp_workload *w,
			     struct kvp_frag_result *rows, size_t nr, struct kvp_error *err);

#endif
