/* workload.h: a serving workload: request lengths, arrivals, a shared prefix
 * and service levels.  Read from profiles/workloads/NAME.yaml (by name or
 * path, as other profiles); used by `kvplan frag`, `kvplan perf`, `kvplan size`
 * and `kvplan check`.
 *
 *   name: chat                      # = file stem
 *   description: "..."              # optional
 *   prompt: lognormal:1200,0.8      # dist.h spec, or
 *   output: lognormal:300,1.0
 *   lengths: chat-lengths.csv       # empirical (prompt,output per row; path
 *                                   # relative to the YAML), instead of both
 *   max_len: 8192                   # prompt + output cap (max_model_len)
 *   arrival_rate: 4.0               # requests per second (optional)
 *   concurrent_users: 64            # optional
 *   shared_prefix: {tokens: 2048, fraction: 0.7}   # optional
 *   slo: {ttft_s: 0.5, tpot_s: 0.05, percentile: 90}  # optional
 *
 * Every number cites its source in a comment, as in the other profiles. */
#ifndef KVP_WORKLOAD_H
#define KVP_WORKLOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/dist.h"
#include "base/error.h"

struct kvp_workload {
	char name[128];
	char path[512];
	struct kvp_dist prompt;
	struct kvp_dist output;
	bool paired;                /* prompt[i], output[i] from a file: sample as pairs */
	uint64_t max_len;           /* 0: none */
	double arrival_rate;        /* requests/s, 0: not given */
	uint64_t concurrent_users;  /* 0: not given */
	uint64_t prefix_tokens;     /* shared prefix, 0: none */
	double prefix_fraction;     /* share of requests that carry it */
	double *arrival_s;          /* a length file's third column: row i arrives at
				     * arrival_s[i] s (non-decreasing); owned, NULL: none */
	size_t narrival;
	double slo_ttft_s, slo_tpot_s;  /* 0: not given */
	double slo_percentile;      /* e.g. 90; default 50 */
};

kvp_status kvp_workload_load(const char *name_or_path, struct kvp_workload *out,
			     struct kvp_error *err);
/* Read an empirical CSV (header optional; columns prompt,output, or
 * prompt,output,arrival_s on every row: arrival times, kept in order) or YAML list
 * of {prompt, output}; errors carry file:line. */
kvp_status kvp_workload_load_lengths(const char *path, struct kvp_workload *out,
				     struct kvp_error *err);
/* Sample one request's prompt and output lengths (pairs stay together). */
void kvp_workload_sample(const struct kvp_workload *w, struct kvp_rng *r, uint64_t *prompt,
			 uint64_t *output);
void kvp_workload_free(struct kvp_workload *w);

#endif
