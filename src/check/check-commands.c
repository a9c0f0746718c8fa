/* check-commands.c: the command kinds a `kvplan check` scenario may name
 * (budget, perf, frag), each one scenario -> record function calling the
 * same library entry as its command, so an assertion tests exactly what
 * `kvplan CMD --format json` prints. */
#include "check/check-private.h"

#include <stdlib.h>
#include <string.h>

#include "read/profile.h"

/* ------------------------------------------------------------ commands */

/* The scenario's model and GPU (a "custom" one when gpu_memory stands in);
 * m and g are the caller's, NULL for out of memory. */
static kvp_status scenario_profiles(const struct kvp_check_scenario *s, struct kvp_model *m,
				    struct kvp_gpu *g, struct kvp_error *err)
{
	memset(g, 0, sizeof *g);
	if (!m)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	kvp_status st = kvp_model_load(s->model, m, err);
	if (st || s->gpu[0])
		return st ? st : kvp_gpu_load(s->gpu, g, err);
	snprintf(g->name, sizeof g->name, "custom");
	return KVP_STATUS_OK;
}

static kvp_status run_budget(const struct kvp_check_scenario *s, struct kvp_record *out,
			     struct kvp_error *err)
{
	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_budget *b = malloc(sizeof *b);
	struct kvp_gpu g;
	kvp_status st = scenario_profiles(s, b ? m : NULL, &g, err);
	if (st || (st = kvp_budget_compute(m, &g, &s->opts, b, err)))
		goto out;
	if (!kvp_budget_to_record(b, g.name, out) || !kvp_encoder_to_record(&b->encoder, b->encoder_bytes, out))
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
out:
	free(m);
	free(b);
	return st;
}

/* kvplan perf: the same defaults (prompt: context, else 1024; output 256;
 * batch 1) and the same library run; the record is its --format json. */
static kvp_status run_perf(const struct kvp_check_scenario *s, struct kvp_record *out,
			   struct kvp_error *err)
{
	const struct kvp_check_perf *p = &s->perf;
	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_perf_result *res = malloc(sizeof *res);
	struct kvp_perf_opts po = {
		.prompt = p->prompt ? p->prompt : s->opts.context ? s->opts.context : 1024,
		.output = p->output ? p->output : 256,
		.prefix = p->prefix,
		.offload = {.tier = KVP_OFFLOAD_NONE, .fraction = -1},
	};
	struct kvp_gpu g;
	struct kvp_perf_hw hw;
	kvp_status st = scenario_profiles(s, res ? m : NULL, &g, err);
	if (st || (st = kvp_perf_hw_from_gpu(&g, m, &hw, err)))
		goto out;
	if (p->host_link[0]) {
		struct kvp_link link;
		if ((st = kvp_link_parse(p->host_link, "host_link", &link, err)))
			goto out;
		kvp_perf_hw_host_link(&hw, &link);
	}
	if (p->decode_bw_efficiency > 0)
		hw.decode_bw_efficiency = p->decode_bw_efficiency, hw.efficiency_given = true;
	if (p->prefill_flops_efficiency > 0)
		kvp_perf_hw_prefill_efficiency(&hw, p->prefill_flops_efficiency);
	if (p->kv_offload[0]) {
		if ((st = kvp_offload_parse(p->kv_offload, &hw.host_link, &po.offload, err))) {
			snprintf(err->field, sizeof err->field, "kv_offload");
			goto out;
		}
		po.offload.fraction = p->offload_fraction;
	}
	po.nbatch = p->nbatch ? p->nbatch : 1;
	if (p->nbatch)
		memcpy(po.batches, p->batches, p->nbatch * sizeof p->batches[0]);
	else
		po.batches[0] = s->opts.batch ? s->opts.batch : 1;
	if ((st = kvp_perf_run(m, &g, &s->opts, &hw, &po, res, err)))
		goto out;
	if (!kvp_perf_to_record(res, out))
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
out:
	free(m);
	free(res);
	return st;
}

/* kvplan frag: the workload, the budget at max_len, every row and the
 * recommendation; the record is its --format json (no prefix cache). */
static kvp_status run_frag(const struct kvp_check_scenario *s, struct kvp_record *out,
			   struct kvp_error *err)
{
	struct kvp_model *m = malloc(sizeof *m);
	struct kvp_frag_report *rep = malloc(sizeof *rep);
	struct kvp_workload w;
	struct kvp_gpu g;
	memset(&w, 0, sizeof w);
	kvp_status st = scenario_profiles(s, rep ? m : NULL, &g, err);
	if (st || (st = kvp_workload_load(s->frag.workload, &w, err)) ||
	    (st = kvp_frag_plan(m, &g, &s->opts, &w, &s->frag.opts, rep, err)))
		goto out;
	if (!rep->budget.kv_pool_bytes)
		st = kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, NULL,
				   "the weights, activations and overhead leave no KV pool on %s "
				   "(see kvplan budget)", g.name);
	else if (!kvp_frag_to_record(rep, out))
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
out:
	kvp_workload_free(&w);
	free(m);
	free(rep);
	return st;
}

/* One entry per command kind: its scenario -> record function.  The keys
 * each reads beyond the common ones are in check-scenario.c's keys[]. */
static const struct kvp_check_command commands[] = {
	{"budget", run_budget},
	{"perf", run_perf},
	{"frag", run_frag},
};

const struct kvp_check_command *kvp_check_command_find(const char *name)
{
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}
