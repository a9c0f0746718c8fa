/* size-emit-plan.c: the plans an engine's launch command can realise,
 * around the search, for the CLI's --emit and the library's emit alike
 * (size-emit-plan.h). */
#include "size/size-emit-plan.h"

#include <stdio.h>
#include <stdlib.h>

kvp_status kvp_size_emit_precheck(enum kvp_engine e, const struct kvp_model *m,
				  enum kvp_dtype serving, const struct kvp_size_space *sp,
				  struct kvp_error *err)
{
	const char *name = kvp_engine_name(e);
	/* one shape: refused now; of a searched list, those points fail split */
	if (sp->ntp == 1 && sp->ndp == 1 && sp->nep == 1 &&
	    !kvp_size_emit_ep_ok(e, sp->tp[0], sp->dp[0], sp->ep[0])) {
		uint64_t gpus = (uint64_t)sp->tp[0] * sp->dp[0];
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "emit",
				     "%s: --ep %u: vLLM's expert parallelism spans the tp x dp = "
				     "%llu GPUs of a stage; plan with --ep 1 or --ep %llu",
				     name, sp->ep[0], (unsigned long long)gpus,
				     (unsigned long long)gpus);
	}
	/* a weights what-if the engine cannot realise on the fly is refused,
	 * not launched as the checkpoint's bf16 */
	const char *quant, *wdtype;
	struct kvp_error w = {0};
	if (kvp_size_weights_flags(e, m, serving, &quant, &wdtype, &w))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "emit", "%s: %s: %s", name,
				     w.field, w.msg);
	return KVP_STATUS_OK;
}

void kvp_size_emit_filter(enum kvp_engine e, const struct kvp_model *m, bool kv_list,
			  struct kvp_size_config *cfg, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct kvp_size_config *c = &cfg[i];
		if (c->failed & KVP_SIZE_FAIL_SPLIT)
			continue;
		if (kv_list && !kvp_size_kv_name(e, m, c->kv_dtype)) {
			c->failed |= KVP_SIZE_FAIL_KV_DTYPE;
			c->never |= KVP_SIZE_FAIL_KV_DTYPE;
			c->meets = c->at_risk = false;
		}
		if (!kvp_size_emit_ep_ok(e, c->tp, c->dp, c->ep)) {
			c->failed |= KVP_SIZE_FAIL_SPLIT;
			c->never |= KVP_SIZE_FAIL_SPLIT;
			c->meets = c->at_risk = false;
		}
	}
}

kvp_status kvp_size_emit_best_ok(enum kvp_engine e, const struct kvp_model *m,
				 const struct kvp_size_config *best, struct kvp_error *err)
{
	if (best && !kvp_size_kv_name(e, m, best->kv_dtype)) {
		const char *name = kvp_engine_name(e);
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "emit",
				     "%s: %s has no KV cache dtype %s, which the plan sizes; plan "
				     "with a KV dtype it has (--kv-dtype auto or fp8)",
				     name, name, kvp_dtype_name(best->kv_dtype));
	}
	return KVP_STATUS_OK;
}

bool kvp_size_emit_record(struct kvp_record *top, enum kvp_engine e, const struct kvp_model *m,
			  const struct kvp_size_config *best, bool prefix)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return false;
	kvp_size_emit(f, e, m, best, prefix);
	bool ok = fclose(f) == 0 && kvp_record_str(top, "emit", buf);
	free(buf);
	return ok;
}
