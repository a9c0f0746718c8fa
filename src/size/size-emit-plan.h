/* size-emit-plan.h: which plans an engine's launch command can realise,
 * checked the same way around the search for `kvplan size --emit`
 * (cli/cmd-size.c) and kvplan_size_json's emit (api/api-size.c), and the
 * command itself as the record's "emit" field, so that the CLI and the
 * library cannot drift apart.  The messages carry the engine's name first
 * ("vllm: ..."); the CLI prints them after "--emit ". */
#ifndef KVP_SIZE_EMIT_PLAN_H
#define KVP_SIZE_EMIT_PLAN_H

#include <stdbool.h>
#include <stddef.h>

#include "out/output.h"
#include "size/size.h"

/* Before the search: a single expert-parallel shape the engine cannot take
 * (vLLM's ep spans tp x dp; kvp_size_emit_ep_ok), then weights the engine
 * cannot load as planned (kvp_size_weights_flags), each KVP_STATUS_USAGE
 * with field "emit".  A searched list of shapes is not refused here: its
 * points fail in kvp_size_emit_filter.  The launch id
 * (kvp_size_launch_id) is the caller's to check first. */
kvp_status kvp_size_emit_precheck(enum kvp_engine e, const struct kvp_model *m,
				  enum kvp_dtype serving, const struct kvp_size_space *sp,
				  struct kvp_error *err);

/* After the search, before ranking: of cfg[0 .. n-1], the points the
 * engine cannot launch fail, never to be chosen: a KV dtype it has no name
 * for (only when several were searched, kv_list: a single one is refused
 * after the choice) fails kv_dtype, an ep it cannot take fails split. */
void kvp_size_emit_filter(enum kvp_engine e, const struct kvp_model *m, bool kv_list,
			  struct kvp_size_config *cfg, size_t n);

/* After the choice: the chosen configuration's KV dtype must be one the
 * engine holds (KVP_STATUS_USAGE, field "emit", otherwise).  best NULL
 * (nothing met) passes. */
kvp_status kvp_size_emit_best_ok(enum kvp_engine e, const struct kvp_model *m,
				 const struct kvp_size_config *best, struct kvp_error *err);

/* The command that realises best (kvp_size_emit) as top's "emit" string;
 * prefix: the workload shares prefixes (prefix caching on).  False when
 * memory runs out. */
bool kvp_size_emit_record(struct kvp_record *top, enum kvp_engine e, const struct kvp_model *m,
			  const struct kvp_size_config *best, bool prefix);

#endif
