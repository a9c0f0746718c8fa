/* cmd-frag-print.h: printing `kvplan frag` (cmd-frag-print.c), so that
 * kvp_cmd_frag reads parse -> kvp_frag_plan (and the prefix cache) -> print. */
#ifndef KVP_CMD_FRAG_PRINT_H
#define KVP_CMD_FRAG_PRINT_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/cli.h"
#include "frag/frag.h"

/* One cache size of --prefix-cache: the prefixes shared as they are, the
 * same prefixes behind a request id (nothing shared), and the sequences the
 * cache's bytes displace at the recommended block. */
struct kvp_frag_cache_row {
	struct kvp_frag_cache_result shared, stamped;
	double displaced;
};

/* rep as `kvplan frag` prints its table on stdout (g: the GPU, w: the
 * workload, cache: ncache rows of the prefix cache cc, none when 0). */
void kvp_frag_print_table(const struct kvp_frag_report *rep, const struct kvp_gpu *g,
			  const struct kvp_workload *w, const struct kvp_frag_cache_row *cache,
			  size_t ncache, const struct kvp_frag_cache_config *cc);

/* rep as CSV rows, or as one JSON record with the warnings and the prefix
 * cache, on stdout; false, having printed nothing, when memory runs out. */
bool kvp_frag_print_record(const struct kvp_frag_report *rep, enum kvp_format format,
			   const struct kvp_cli_warnings *warn, const struct kvp_frag_cache_row *cache,
			   size_t ncache);

#endif
