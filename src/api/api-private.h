/* api-private.h: what the files of src/api/ share and no caller sees: the
 * handles' structs and the helpers that turn the library's errors, options
 * and records into the public API's (include/kvplan.h). */
#ifndef KVP_API_PRIVATE_H
#define KVP_API_PRIVATE_H

#include <kvplan.h>

#include <stdbool.h>

#include "base/error.h"
#include "memory/budget.h"
#include "out/output.h"
#include "read/profile.h"
#include "read/workload.h"

struct kvplan_model {
	struct kvp_model m;
};

struct kvplan_gpu {
	struct kvp_gpu g;
};

struct kvplan_engine {
	enum kvp_engine engine;
	struct kvp_engine_model model;  /* version[0] == 0 for generic */
};

struct kvplan_workload {
	struct kvp_workload w;          /* owns its distributions */
};

/* Fill the caller's error (NULL: none) from the library's; returns its
 * status. */
kvplan_status kvp_api_fail(kvplan_error *out, const struct kvp_error *e);
/* An empty error: status OK, no message. */
void kvp_api_clear(kvplan_error *out);
/* The caller's budget options (NULL: defaults), read only as far as their
 * size, checked as the CLI checks its flags, into the library's.  g may be
 * NULL only with KVPLAN_SET_GPU_MEMORY. */
kvp_status kvp_api_budget_opts(const kvplan_budget_opts *in, const kvplan_engine *e,
			       const kvplan_gpu *g, struct kvp_budget_opts *o,
			       struct kvp_error *err);
/* An efficiency option: 0 (not given) or a fraction in (0, 1]; NaN fails. */
kvp_status kvp_api_efficiency(const char *name, double v, struct kvp_error *err);
/* r as the CLI's JSON text into *json (r freed either way; ok false: memory
 * ran out while r was built). */
kvplan_status kvp_api_json_out(struct kvp_record *r, bool ok, char **json, kvplan_error *err);

#endif
