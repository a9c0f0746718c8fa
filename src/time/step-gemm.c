/* step-gemm.c: the step's linear layers against a measured GEMM table
 * (step-gemm.h): which table a GPU and a weights' dtype get, and the share of
 * the peak a step's FLOPs reach with it.  The table itself is read and
 * interpolated by gemm-table.c; step.c, above, uses the figure. */
#include "time/step-gemm.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "model/shape.h"

/* profiles/kernels/<kind>-<GPU profile file name>-<dtype>.tsv, found as
 * kvp_profile_data_file finds it; false when there is none. */
static bool kernel_file(const struct kvp_gpu *g, const char *kind, const char *dtype,
			char *path, size_t size)
{
	const char *base = strrchr(g->path, '/');
	base = base ? base + 1 : g->path;
	size_t len = strlen(base);
	if (len > 5 && strcmp(base + len - 5, ".yaml") == 0)
		len -= 5;
	char file[160];
	return (size_t)snprintf(file, sizeof file, "%s-%.*s-%s.tsv", kind, (int)len, base, dtype) <
		       sizeof file &&
	       kvp_profile_data_file("kernels", file, path, size);
}

/* The dtype a measured table under profiles/kernels/ is named by for
 * weights of type t (fp16 and unset as bf16: the same tensor-core rate);
 * NULL where none was converted (weight-only int4, int8, mxfp4, e5m2,
 * fp32). */
static const char *table_dtype(enum kvp_dtype t)
{
	switch (t) {
	case KVP_DTYPE_AUTO:
	case KVP_DTYPE_FP16:
	case KVP_DTYPE_BF16:
		return "bf16";
	case KVP_DTYPE_FP8:
		return "fp8";
	case KVP_DTYPE_NVFP4:
		return "nvfp4";
	default:
		return NULL;
	}
}

kvp_status kvp_perf_gemm_table_find(const struct kvp_gpu *g, const struct kvp_model *m,
				    struct kvp_gemm_table *out, struct kvp_error *err)
{
	out->nm = 0;
	out->path[0] = 0;
	if (!g->path[0] || g->prefill_flops_efficiency > 0)
		return KVP_STATUS_OK;
	const char *dtype = table_dtype(m ? m->weights_dtype : KVP_DTYPE_AUTO);
	if (!dtype)
		return KVP_STATUS_OK;
	char path[768];
	if (!kernel_file(g, "gemm", dtype, path, sizeof path))
		return KVP_STATUS_OK;
	return kvp_gemm_table_load(path, out, err);
}

kvp_status kvp_perf_moe_table_find(const struct kvp_gpu *g, const struct kvp_model *m,
				   struct kvp_moe_table *out, struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	if (!g->path[0] || !m || !m->moe_num_experts || !m->moe_intermediate_size ||
	    !m->hidden_size)
		return KVP_STATUS_OK;
	const char *dtype = table_dtype(m->weights_dtype);
	if (!dtype)
		return KVP_STATUS_OK;
	char path[768];
	if (!kernel_file(g, "moe", dtype, path, sizeof path))
		return KVP_STATUS_OK;
	uint32_t k = m->moe_experts_per_token ? m->moe_experts_per_token : 1;
	return kvp_moe_table_load(path, m->hidden_size, m->moe_intermediate_size, k,
				  m->moe_num_experts, out, err);
}

/* Add one GEMM (rows x n x k, `count` of them) to the mix: its FLOPs and
 * its seconds at the table's throughput. */
static void gemm_add(const struct kvp_gemm_table *t, double rows, double n, double k,
		     double count, double *flops, double *secs)
{
	if (!(rows > 0) || !(n > 0) || !(k > 0) || !(count > 0))
		return;
	double f = 2.0 * rows * n * k * count;
	*flops += f;
	*secs += f / kvp_gemm_table_flops(t, rows, n, k);
}

double kvp_perf_routed_token_flops(const struct kvp_model *m)
{
	if (!m->moe_num_experts || !m->expert_params)
		return 0;
	double k = m->moe_experts_per_token ? m->moe_experts_per_token : 1;
	double r = (double)m->expert_params * fmin(1.0, k / m->moe_num_experts);
	return 2.0 * fmin(r, (double)m->active_params);
}

double kvp_gemm_attention_peak(double peak, double peak16, double peak8, enum kvp_dtype kv)
{
	bool fp8 = kv == KVP_DTYPE_FP8 || kv == KVP_DTYPE_FP8_E5M2;
	double a = fp8 && peak8 > 0 ? peak8 : peak16;
	return a > 0 ? fmin(a, peak) : peak;
}

double kvp_gemm_step_efficiency(const struct kvp_gemm_table *t, const struct kvp_model *m,
				const struct kvp_parallel *par, double peak_flops, double attn_peak,
				double eff_c, double flops, double attn_flops, double tokens,
				double total)
{
	double dp = kvp_shape_dp(par);
	return kvp_gemm_step_efficiency_routed(t, m, par, peak_flops, attn_peak, eff_c, flops,
					       attn_flops, tokens,
					       kvp_perf_routed_token_flops(m) *
						       fmax(total, tokens) / dp);
}

/* The linear layers' GEMMs of a step of `tokens` rows on one GPU (the list
 * in step-gemm.h): their FLOPs and their seconds at the table's rates. */
static void step_gemms(const struct kvp_gemm_table *t, const struct kvp_model *m,
		       const struct kvp_parallel *par, double tokens, double *f, double *s)
{
	double tp = par->tp ? par->tp : 1;
	double d = m->hidden_size, dh = m->head_dim, hq = m->num_heads, hkv = m->num_kv_heads;
	double layers = m->num_layers, moe = kvp_shape_moe_layers(m), dense = layers - moe;
	*f = *s = 0;
	gemm_add(t, tokens, (hq + 2 * hkv) * dh / tp, d, layers, f, s);
	gemm_add(t, tokens, d, hq * dh / tp, layers, f, s);
	if (m->intermediate_size && dense > 0) {
		double i = m->intermediate_size;
		gemm_add(t, tokens, 2 * i / tp, d, dense, f, s);
		gemm_add(t, tokens, d, i / tp, dense, f, s);
	}
	if (moe > 0 && m->shared_expert_params) {
		double is = (double)m->shared_expert_params / (3 * d * moe);
		gemm_add(t, tokens, 2 * is / tp, d, moe, f, s);
		gemm_add(t, tokens, d, is / tp, moe, f, s);
	}
	if (m->vocab_size)
		gemm_add(t, tokens, m->vocab_size / tp, d, 1, f, s);
}

double kvp_gemm_step_efficiency_routed(const struct kvp_gemm_table *t, const struct kvp_model *m,
				       const struct kvp_parallel *par, double peak_flops,
				       double attn_peak, double eff_c, double flops,
				       double attn_flops, double tokens, double routed)
{
	if (!(flops > 0) || !(peak_flops > 0))
		return eff_c;
	/* the attention's FLOPs as so many at peak_flops: x peak / attn_peak */
	double a = fmin(fmax(attn_flops, 0), flops);
	double slow = attn_peak > 0 && attn_peak < peak_flops ? peak_flops / attn_peak : 1;
	double f = 0, s = 0;
	if (t->nm && tokens > 0 && m->hidden_size)
		step_gemms(t, m, par, tokens, &f, &s);
	if (!(f > 0) || !(s > 0))
		return flops / ((flops - a + a * slow) / eff_c);
	double eff_g = fmin(1.0, f / s / peak_flops);
	/* the routed experts' FLOPs on this GPU (dp_flops' share) stay at
	 * eff_c with the attention's: grouped MoE kernels, not these GEMMs */
	double other = fmin(a + fmax(routed, 0), flops);
	return flops / ((flops - other) / eff_g + (other - a + a * slow) / eff_c);
}
