/* disagg.c: disaggregated prefill/decode (see disagg.h for the model): the
 * KV link presets, the two pools' perf runs, the transfer and the colocated
 * comparison.
 *
 * Stance: every byte and step time comes from the perf runs of each pool and
 * the model's layer list; this file only adds the transfer and the pools'
 * bookkeeping. */
#include "time/disagg.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/shape.h"
#include "base/units.h"
#include "model/spec.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

kvp_status kvp_disagg_parse_counts(const char *spec, uint32_t *p, uint32_t *d,
				   struct kvp_error *err)
{
	const char *colon = spec ? strchr(spec, ':') : NULL;
	char a[32];
	uint64_t x, y;
	if (!colon || (size_t)(colon - spec) >= sizeof a)
		goto bad;
	memcpy(a, spec, (size_t)(colon - spec));
	a[colon - spec] = '\0';
	if (kvp_parse_u64(a, &x) || kvp_parse_u64(colon + 1, &y) || !x || !y || x > 4096 ||
	    y > 4096)
		goto bad;
	*p = (uint32_t)x;
	*d = (uint32_t)y;
	return KVP_STATUS_OK;
bad:
	return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "disagg",
			     "expected P:D, prefill and decode instances from 1 to 4096 (e.g. 1:1), "
			     "got '%s'", spec ? spec : "");
}

/* Scale-out links at their stated signalling rates per direction: InfiniBand
 * HDR 200 Gb/s, NDR 400 Gb/s, XDR 800 Gb/s (ConnectX-6/7/8; "NDR 400G", "XDR
 * 800G", alpha-one-index.github.io networking-interconnects); RoCE on 200/400
 * GbE ("400GbE RoCE 400 Gbps = 50 GB/s", fridayswithfaraday.com interconnect
 * table). */
static const struct kvp_link net_links[] = {
	{"ib200", 25e9, 25e9},
	{"ib400", 50e9, 50e9},
	{"ib800", 100e9, 100e9},
	{"roce200", 25e9, 25e9},
	{"roce400", 50e9, 50e9},
};

kvp_status kvp_disagg_link_parse(const char *spec, const struct kvp_disagg_pool *prefill,
				 const struct kvp_disagg_pool *decode, struct kvp_link *out,
				 struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	for (size_t i = 0; i < NELEM(net_links); i++)
		if (strcmp(spec, net_links[i].name) == 0) {
			*out = net_links[i];
			return KVP_STATUS_OK;
		}
	if (strcmp(spec, "nvlink") == 0) {
		uint64_t gpus = (uint64_t)prefill->instances * kvp_shape_gpus(&prefill->par) +
				(uint64_t)decode->instances * kvp_shape_gpus(&decode->par);
		if (strcmp(prefill->gpu.name, decode->gpu.name) != 0)
			return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "kv-link",
					     "nvlink joins GPUs of one kind, not %s and %s",
					     prefill->gpu.name, decode->gpu.name);
		if (!(prefill->gpu.nvlink_bps > 0))
			return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "kv-link",
					     "%s has no NVLink", prefill->gpu.name);
		if (gpus > prefill->gpu.nvlink_domain)
			return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "kv-link",
					     "nvlink: the pools' %llu GPUs are more than the %u one "
					     "NVLink domain of %s joins", (unsigned long long)gpus,
					     prefill->gpu.nvlink_domain, prefill->gpu.name);
		snprintf(out->name, sizeof out->name, "nvlink");
		out->theoretical_bps = out->effective_bps = prefill->gpu.nvlink_bps / 2;
		return KVP_STATUS_OK;
	}
	kvp_status st = kvp_link_parse(spec, "kv-link", out, err);
	if (st)
		return kvp_error_set(err, st, NULL, 0, 0, "kv-link",
				     "unknown link '%s' (ib200, ib400, ib800, roce200, roce400, nvlink, "
				     "pcie3x16 ... pcie6x16, or a rate such as 50GB/s)", spec);
	if (strncmp(out->name, "nvlink-c2c", 10) == 0 || strncmp(out->name, "nvme", 4) == 0 ||
	    strncmp(out->name, "sata", 4) == 0)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "kv-link",
				     "%s is not a link between GPUs", out->name);
	return KVP_STATUS_OK;
}

static kvp_status pool_run(const struct kvp_model *m, const struct kvp_budget_opts *o,
			   const struct kvp_disagg_pool *pool, const struct kvp_perf_opts *po,
			   const char *side, struct kvp_perf_result **out, struct kvp_error *err)
{
	struct kvp_budget_opts bo = *o;
	bo.par = pool->par;
	*out = malloc(sizeof **out);
	if (!*out)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	kvp_status st = kvp_perf_run(m, &pool->gpu, &bo, &pool->hw, po, *out, err);
	if (st && err) {
		/* name the side: "decode pool: ..." (cut to fit) */
		char msg[sizeof err->msg];
		size_t n = strlen(side);
		memcpy(msg, side, n);
		memcpy(msg + n, " pool: ", 7);
		size_t room = sizeof msg - n - 8;
		size_t len = strnlen(err->msg, room);
		memcpy(msg + n + 7, err->msg, len);
		msg[n + 7 + len] = '\0';
		memcpy(err->msg, msg, sizeof msg);
	}
	return st;
}

kvp_status kvp_disagg_run(const struct kvp_model *m, const struct kvp_budget_opts *o,
			  const struct kvp_disagg_pool *prefill, const struct kvp_disagg_pool *decode,
			  const struct kvp_link *link, const struct kvp_perf_opts *po,
			  struct kvp_disagg_result *out, struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	out->prompt = po->prompt;
	out->output = po->output;
	out->prefill_instances = prefill->instances;
	out->decode_instances = decode->instances;
	out->prefill_gpus = prefill->instances * kvp_shape_gpus(&prefill->par);
	out->decode_gpus = decode->instances * kvp_shape_gpus(&decode->par);
	out->link = *link;
	if (!(link->effective_bps > 0))
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "kv-link",
				     "the link needs a positive rate");

	/* the prefill pool: one prompt, one output token (the first) */
	struct kvp_perf_opts pp = *po;
	pp.output = 1;
	pp.nbatch = 1;
	pp.batches[0] = 1;
	pp.offload.tier = KVP_OFFLOAD_NONE;
	kvp_status st;
	if ((st = pool_run(m, o, prefill, &pp, "prefill", &out->prefill, err)) ||
	    (st = pool_run(m, o, decode, po, "decode", &out->decode, err)))
		return st;
	const struct kvp_perf_result *pr = out->prefill, *dr = out->decode;
	out->prefill_s = pr->rows[0].prefill.time_s;
	out->prefill_max_sequences = pr->max_batch;
	out->decode_max_sequences = dr->max_batch;
	out->prefill_weights_bytes = pr->budget.weights_bytes;
	out->decode_weights_bytes = dr->budget.weights_bytes;
	out->prefill_capacity_rps = prefill->instances * kvp_shape_dp(&prefill->par) / out->prefill_s;

	/* the request's KV, one copy of each head: the unsplit model's bytes */
	struct kvp_spec *one = malloc(sizeof *one);
	if (!one)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	const struct kvp_spec *ps = &pr->budget.spec;
	st = kvp_spec_build(m, (struct kvp_parallel){.tp = 1, .pp = 1}, ps->serving_dtype,
			    ps->kv_dtype, one, err);
	if (!st && (kvp_spec_seq_bytes(one, po->prompt, 1, &out->kv_request_bytes) ||
		    kvp_spec_seq_bytes(ps, po->prompt, 1, &out->kv_gpu_bytes)))
		st = kvp_error_set(err, KVP_STATUS_OVERFLOW, NULL, 0, 0, "prompt",
				   "KV bytes overflow");
	free(one);
	if (st)
		return st;
	uint32_t gp = prefill->par.tp * prefill->par.pp, gd = decode->par.tp * decode->par.pp;
	out->transfer_gpus = gp < gd ? gp : gd;
	out->transfer_s = (double)out->kv_request_bytes / (out->transfer_gpus * link->effective_bps);
	out->ttft_s = out->prefill_s + out->transfer_s;

	/* the colocated instance prefills one prompt on the decode shape */
	struct kvp_perf_step one_prefill;
	if ((st = kvp_perf_prefill(&dr->ctx, 1, po->prompt, &one_prefill, err)))
		return st;
	double D = decode->instances, all = (double)prefill->instances + decode->instances;
	for (size_t i = 0; i < dr->nrows; i++) {
		const struct kvp_perf_row *r = &dr->rows[i];
		struct kvp_disagg_row *x = &out->rows[i];
		double b = (double)r->batch;
		x->batch = r->batch;
		x->tpot_s = r->tpot_s;
		x->tokens_per_s = D * b / r->tpot_s;
		x->prefill_needed_rps = D * b / ((double)po->output * r->tpot_s);
		x->prefill_utilization = x->prefill_needed_rps / out->prefill_capacity_rps;
		x->fits = r->fits;
		x->colocated_ttft_s = one_prefill.time_s;
		x->colocated_tpot_s = r->tpot_s + b * one_prefill.time_s / (double)po->output;
		x->colocated_tokens_per_s = all * b / x->colocated_tpot_s;
		out->nrows++;
	}
	return KVP_STATUS_OK;
}

void kvp_disagg_free(struct kvp_disagg_result *r)
{
	free(r->prefill);
	free(r->decode);
	r->prefill = r->decode = NULL;
}

bool kvp_disagg_to_record(const struct kvp_disagg_result *r, const struct kvp_model *m,
			  struct kvp_record *out)
{
	const struct kvp_parallel *pp = &r->prefill->budget.spec.par, *dp = &r->decode->budget.spec.par;
	bool ok = kvp_record_str(out, "model", m->name) &&
		  kvp_record_u64(out, "prompt", r->prompt) && kvp_record_u64(out, "output", r->output) &&
		  kvp_record_str(out, "prefill_gpu", r->prefill->gpu) &&
		  kvp_record_u64(out, "prefill_instances", r->prefill_instances) &&
		  kvp_record_u64(out, "prefill_tp", pp->tp) &&
		  kvp_record_u64(out, "prefill_dp", kvp_shape_dp(pp)) &&
		  kvp_record_u64(out, "prefill_gpus", r->prefill_gpus) &&
		  kvp_record_str(out, "decode_gpu", r->decode->gpu) &&
		  kvp_record_u64(out, "decode_instances", r->decode_instances) &&
		  kvp_record_u64(out, "decode_tp", dp->tp) &&
		  kvp_record_u64(out, "decode_dp", kvp_shape_dp(dp)) &&
		  kvp_record_u64(out, "decode_gpus", r->decode_gpus) &&
		  kvp_record_str(out, "kv_link", r->link.name) &&
		  kvp_record_f64(out, "kv_link_bps", r->link.effective_bps) &&
		  kvp_record_u64(out, "kv_request_bytes", r->kv_request_bytes) &&
		  kvp_record_u64(out, "kv_gpu_bytes", r->kv_gpu_bytes) &&
		  kvp_record_u64(out, "transfer_gpus", r->transfer_gpus) &&
		  kvp_record_f64(out, "transfer_s", r->transfer_s) &&
		  kvp_record_f64(out, "prefill_s", r->prefill_s) &&
		  kvp_record_f64(out, "ttft_s", r->ttft_s) &&
		  kvp_record_f64(out, "prefill_capacity_rps", r->prefill_capacity_rps) &&
		  kvp_record_u64(out, "prefill_max_sequences", r->prefill_max_sequences) &&
		  kvp_record_u64(out, "decode_max_sequences", r->decode_max_sequences) &&
		  kvp_record_u64(out, "prefill_weights_bytes", r->prefill_weights_bytes) &&
		  kvp_record_u64(out, "decode_weights_bytes", r->decode_weights_bytes);
	for (size_t i = 0; i < r->nrows && ok; i++) {
		const struct kvp_disagg_row *x = &r->rows[i];
		struct kvp_record *y = kvp_record_new();
		ok = y && kvp_record_u64(y, "batch", x->batch) && kvp_record_f64(y, "tpot_s", x->tpot_s) &&
		     kvp_record_f64(y, "tokens_per_s", x->tokens_per_s) &&
		     kvp_record_f64(y, "prefill_needed_rps", x->prefill_needed_rps) &&
		     kvp_record_f64(y, "prefill_utilization", x->prefill_utilization) &&
		     kvp_record_bool(y, "fits", x->fits) &&
		     kvp_record_f64(y, "colocated_ttft_s", x->colocated_ttft_s) &&
		     kvp_record_f64(y, "colocated_tpot_s", x->colocated_tpot_s) &&
		     kvp_record_f64(y, "colocated_tokens_per_s", x->colocated_tokens_per_s);
		if (!ok) {
			kvp_record_free(y);
			break;
		}
		ok = kvp_record_push(out, "rows", y);
	}
	return ok;
}
