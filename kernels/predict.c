/* predict.c: kvbench's shape handed to the planner's library, and the
 * library's answers handed back.  See predict.h. */
#include "predict.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "budget.h"
#include "model.h"
#include "perf.h"
#include "profile.h"

static enum kvp_dtype kv_dtype_of(enum kvb_dtype dt)
{
	switch (dt) {
	case KVB_DTYPE_FP32: return KVP_DTYPE_FP32;
	case KVB_DTYPE_FP16: return KVP_DTYPE_FP16;
	case KVB_DTYPE_BF16: return KVP_DTYPE_BF16;
	case KVB_DTYPE_FP8: return KVP_DTYPE_FP8;   /* per-tensor scales: no bytes per token */
	default: return KVP_DTYPE_INT8;             /* an fp32 scale per token and head */
	}
}

/* `layers` full-attention layers of kvbench's heads.  The weights are
 * given to the budget directly, so one parameter stands in for them. */
static struct kvp_model *model_of(const struct kvb_shape *s, int layers)
{
	struct kvp_model *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	snprintf(m->name, sizeof m->name, "kvbench-%d:%d-d%d", s->h_q, s->h_kv, s->d);
	m->dtype = KVP_DTYPE_BF16;
	m->num_layers = (uint32_t)layers;
	m->num_heads = (uint32_t)s->h_q;
	m->num_kv_heads = (uint32_t)s->h_kv;
	m->head_dim = m->head_dim_v = (uint32_t)s->d;
	m->hidden_size = (uint32_t)(s->h_q * s->d);
	m->params = m->active_params = 1;
	m->max_context = 1;
	for (int i = 0; i < layers; i++)
		m->layers[i] = KVP_LAYER_FULL;
	return m;
}

static int fail(char *msg, size_t msgsz, const struct kvp_error *err, const char *what)
{
	char buf[1024];
	if (err) {
		kvp_error_format(err, buf, sizeof buf);
		snprintf(msg, msgsz, "%s: %s", what, buf);
	} else {
		snprintf(msg, msgsz, "%s: out of memory", what);
	}
	return -1;
}

int kvb_predict_capacity(const struct kvb_shape *s, int layers, uint64_t memory_bytes,
			 double utilization, uint64_t weights_bytes, uint64_t context,
			 struct kvb_capacity_prediction *out, char *msg, size_t msgsz)
{
	struct kvp_error err;
	struct kvp_gpu gpu;
	struct kvp_budget_opts o;
	struct kvp_model *m = model_of(s, layers);
	struct kvp_budget *b = calloc(1, sizeof *b);
	int rc = -1;
	memset(&err, 0, sizeof err);
	if (!m || !b) {
		rc = fail(msg, msgsz, NULL, "budget");
		goto out;
	}
	memset(&gpu, 0, sizeof gpu);
	snprintf(gpu.name, sizeof gpu.name, "kvbench");
	gpu.memory_bytes = memory_bytes;
	memset(&o, 0, sizeof o);
	o.engine = KVP_ENGINE_GENERIC;
	o.par.tp = o.par.pp = 1;
	o.kv_dtype = kv_dtype_of(s->dtype);
	o.block_size = (uint32_t)s->block_size;
	o.utilization = utilization;
	o.context = context;
	o.batch = 1;
	o.has_weights = o.has_activation = o.has_overhead = o.has_gpu_memory = true;
	o.weights_bytes = weights_bytes;
	o.gpu_memory_bytes = memory_bytes;
	if (kvp_budget_compute(m, &gpu, &o, b, &err) != KVP_STATUS_OK) {
		rc = fail(msg, msgsz, &err, "budget");
		goto out;
	}
	out->page_bytes = b->page_bytes;
	out->num_blocks = b->num_blocks;
	out->max_tokens = b->max_tokens;
	out->max_sequences = b->max_sequences;
	rc = 0;
out:
	free(m);
	free(b);
	return rc;
}

int kvb_predict_decode(const struct kvb_shape *s, const int32_t *lens, int32_t batch,
		       double bandwidth_bps, double efficiency, double flops_per_s,
		       struct kvb_decode_prediction *out, char *msg, size_t msgsz)
{
	struct kvp_error err;
	struct kvp_model *m = model_of(s, 1);
	struct kvp_spec *spec = malloc(sizeof *spec);
	uint64_t *ul = malloc((size_t)batch * sizeof *ul);
	struct kvp_perf_ctx c;
	struct kvp_perf_hw hw;
	struct kvp_perf_step step;
	int rc = -1;
	memset(&err, 0, sizeof err);
	if (!m || !spec || !ul) {
		rc = fail(msg, msgsz, NULL, "perf");
		goto out;
	}
	if (kvp_spec_build(m, (struct kvp_parallel){1, 1}, KVP_DTYPE_AUTO, kv_dtype_of(s->dtype),
			   spec, &err) != KVP_STATUS_OK) {
		rc = fail(msg, msgsz, &err, "model");
		goto out;
	}
	memset(&hw, 0, sizeof hw);
	hw.bandwidth_bps = bandwidth_bps;
	hw.decode_bw_efficiency = efficiency;
	/* no peak given: a compute term too small to ever bind */
	hw.flops = flops_per_s > 0 ? flops_per_s : 1e30;
	hw.prefill_flops_efficiency = 1.0;
	if (kvp_perf_init(&c, spec, 0, &hw, &err) != KVP_STATUS_OK) {
		rc = fail(msg, msgsz, &err, "perf");
		goto out;
	}
	for (int32_t i = 0; i < batch; i++)
		ul[i] = (uint64_t)lens[i];
	if (kvp_perf_decode_step_lens(&c, ul, (size_t)batch, &step, &err) != KVP_STATUS_OK) {
		rc = fail(msg, msgsz, &err, "perf");
		goto out;
	}
	out->kv_bytes = step.kv_bytes;
	out->time_s = step.time_s;
	rc = 0;
out:
	free(m);
	free(spec);
	free(ul);
	return rc;
}
