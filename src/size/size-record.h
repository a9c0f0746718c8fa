/* size-record.h: `kvplan size`'s answer as a record (out/output.h), the one
 * shape both the CLI's --format json/csv (cli/cmd-size-print.c) and the
 * public API's kvplan_size_json (api/api-size.c) write, so the two cannot
 * drift: the configurations, the chosen one, the nearest misses. */
#ifndef KVP_SIZE_RECORD_H
#define KVP_SIZE_RECORD_H

#include <stdbool.h>
#include <stddef.h>

#include "out/output.h"
#include "size/size.h"

/* How many nearest misses an answer without a chosen configuration names. */
#define KVP_SIZE_NEAREST 3

/* The configurations nearest to meeting, into idx[0 .. KVP_SIZE_NEAREST - 1]
 * (returns how many): at risk first, then the smallest distance, the sum
 * of what each level is missed by relative to the level (sequences relative
 * to what the pool holds; an unbounded queue far), rank order among
 * equals; leaving out those that fail a constraint no replica count or
 * level moves (split, weights, context, kv_dtype, engine). */
size_t kvp_size_nearest(const struct kvp_size_config *cfg, size_t n, const struct kvp_size_demand *d,
			size_t *idx);

/* One configuration as a record (a row of the CSV, an element of
 * "configs"); latency_spread and its source ("default", "given",
 * "calibration") are the search's.  NULL when memory runs out. */
struct kvp_record *kvp_size_config_record(const struct kvp_size_config *c, double latency_spread,
					  const char *latency_spread_from);

/* What a search found, as the record needs it. */
struct kvp_size_summary {
	const char *model, *workload;        /* names */
	enum kvp_engine engine;              /* the engine planned with */
	const struct kvp_size_demand *d;
	const struct kvp_size_cost *cost;
	const struct kvp_size_config *cfg;   /* ranked; n of them (the front only with pareto_only) */
	size_t n;
	size_t front;                        /* on the Pareto front */
	const struct kvp_size_config *best;   /* the cheapest that meets, or NULL */
	const struct kvp_size_config *fewest; /* the fewest GPUs that meet, or NULL */
	double latency_spread;
	const char *latency_spread_from;
};

/* The answer's fields into top, in the order the JSON record prints them:
 * the demand, the cost basis, "configs", then "chosen" or (null and)
 * "nearest".  The caller may append more ("warnings", "emit").  False when
 * memory runs out. */
bool kvp_size_summary_record(const struct kvp_size_summary *s, struct kvp_record *top);

#endif
