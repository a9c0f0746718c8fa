/* engine.c: load one version of an engine's memory accounting from
 * profiles/engines/<engine>.yaml (the key table below; unknown keys are
 * errors with file:line:col), and the two rules that need code: vLLM's batch
 * defaults by GPU class, its non-torch term by tensor parallelism (with the
 * custom all-reduce's topology rule) and its
 * padding of MXFP4 expert weights.  The
 * numbers themselves, and their sources, live in the files. */
#include "read/engine.h"

#include "model/shape.h"

#include <ctype.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/profile.h"
#include "base/units.h"
#include "base/version.h"
#include "base/yaml-walk.h"

enum key_type { K_STR, K_U32, K_BYTES, K_FRACTION, K_BOOL, K_DTYPE, K_RANGE, K_US, K_RATIO,
		K_TABLE };

/* Which engines' models must give a key (a number left out would read as 0:
 * no activation, no overhead, a budget that fits when it does not).  Keys
 * whose absence has a documented meaning (kvplan-profiles(5): "" or 0 turns
 * a rule off) are optional. */
enum { VLLM = 1, SGL = 2, TRT = 4, ALL = VLLM | SGL | TRT };
/* llama.cpp's files hold time data only: no key is required of them */
enum { LCP = 8 };
/* SGLang's reserve formula: required unless the entry's default fraction is
 * a table (fraction_by_tp, reserve_by_gpu_memory) */
enum { SGLF = 16 };

static const struct key {
	const char *name;
	enum key_type type;
	size_t offset, size;
	unsigned required;   /* mask of the engines above */
} keys[] = {
#define K(n, t, f, r) {n, t, offsetof(struct kvp_engine_model, f), sizeof(((struct kvp_engine_model *)0)->f), r}
	K("version", K_STR, version, ALL | LCP),
	K("range", K_RANGE, range, 0),
	K("unmodelled_version_spread", K_BYTES, unmodelled_version_spread_bytes, 0),
	K("source", K_STR, source, ALL | LCP),
	K("utilization", K_FRACTION, utilization, VLLM),
	K("block_size", K_U32, block_size, ALL),
	K("large_gpu_memory", K_BYTES, large_gpu_memory_bytes, VLLM),
	K("large_gpu_excludes", K_STR, large_gpu_excludes, 0),
	K("max_num_seqs_large", K_U32, max_num_seqs_large, VLLM),
	K("max_num_seqs_small", K_U32, max_num_seqs_small, VLLM),
	K("max_num_batched_tokens_large", K_U32, max_num_batched_tokens_large, VLLM),
	K("max_num_batched_tokens_small", K_U32, max_num_batched_tokens_small, VLLM),
	K("sampler_bytes_per_seq_vocab", K_U32, sampler_bytes_per_seq_vocab, VLLM),
	K("topk_buffer_rows", K_U32, topk_buffer_rows, VLLM),
	K("topk_buffer_bytes_per_row_vocab", K_U32, topk_buffer_bytes_per_row_vocab, VLLM),
	K("retained_hidden_per_token", K_U32, retained_hidden_per_token, VLLM),
	K("retained_hidden_per_seq", K_U32, retained_hidden_per_seq, VLLM),
	K("moe_workspaces", K_U32, moe_workspaces, VLLM),
	K("non_torch_tp1", K_BYTES, non_torch_tp1_bytes, VLLM),
	K("non_torch_tp_multi", K_BYTES, non_torch_tp_multi_bytes, VLLM),
	K("custom_all_reduce_sizes", K_STR, custom_all_reduce_sizes, 0),
	K("custom_all_reduce_pcie_max", K_U32, custom_all_reduce_pcie_max, 0),
	K("non_torch_custom_all_reduce", K_BYTES, non_torch_custom_all_reduce_bytes, 0),
	K("cuda_graphs_subtracted", K_BOOL, cuda_graphs_subtracted, VLLM),
	K("cuda_graphs", K_BYTES, cuda_graphs_bytes, VLLM),
	K("activation_spread", K_FRACTION, activation_spread, VLLM),
	K("activation_spread_above", K_BYTES, activation_spread_above_bytes, 0),
	K("non_torch_spread", K_BYTES, non_torch_spread_bytes, VLLM | SGL),
	K("weights_spread", K_FRACTION, weights_spread, VLLM | SGL),
	K("mxfp4_pad_intermediate", K_U32, mxfp4_pad_intermediate, 0),
	K("mxfp4_pad_hidden", K_U32, mxfp4_pad_hidden, 0),
	K("mxfp4_pad_sm100", K_U32, mxfp4_pad_sm100, 0),
	K("mxfp4_sm100_gpus", K_STR, mxfp4_sm100_gpus, 0),
	K("mxfp4_pad_triton_intermediate", K_U32, mxfp4_pad_triton_intermediate, 0),
	K("mxfp4_pad_triton_hidden", K_U32, mxfp4_pad_triton_hidden, 0),
	K("mxfp4_triton_gpus", K_STR, mxfp4_triton_gpus, 0),
	K("rotary_cache_dtype", K_DTYPE, rotary_cache_dtype, 0),
	K("mm_encoder_profile", K_BOOL, mm_encoder_profile, 0),
	K("mm_video_max_frames", K_U32, mm_video_max_frames, 0),
	K("mm_dummy_from_batched_tokens", K_BOOL, mm_dummy_from_batched_tokens, 0),
	K("dp_attention_full_tp", K_STR, dp_attention_full_tp, 0),
	K("reserve_base", K_BYTES, reserve_base_bytes, SGLF),
	K("reserve_per_prefill_token", K_BYTES, reserve_per_prefill_token_bytes, SGLF),
	K("reserve_min_prefill_tokens", K_U32, reserve_min_prefill_tokens, SGLF),
	K("reserve_per_graph_bs", K_BYTES, reserve_per_graph_bs_bytes, SGLF),
	K("reserve_per_gpu_in_group", K_BYTES, reserve_per_gpu_in_group_bytes, SGLF),
	K("reserve_piecewise_graphs", K_BYTES, reserve_piecewise_graphs_bytes, SGLF),
	K("reserve_floor", K_BYTES, reserve_floor_bytes, SGLF),
	K("reserve_floor_above", K_BYTES, reserve_floor_above_bytes, SGLF),
	K("reserve_piecewise_graphs_mla", K_BYTES, reserve_piecewise_graphs_mla_bytes, 0),
	K("reserve_per_graph_bs_dp", K_BYTES, reserve_per_graph_bs_dp_bytes, 0),
	K("reserve_per_graph_bs_dp_large", K_BYTES, reserve_per_graph_bs_dp_large_bytes, 0),
	K("reserve_graph_bs_large_above", K_U32, reserve_graph_bs_large_above, 0),
	K("chunked_prefill_size", K_U32, chunked_prefill_size, SGLF),
	K("cuda_graph_max_bs_tp_below_4", K_U32, cuda_graph_max_bs_tp_below_4, SGLF),
	K("cuda_graph_max_bs_tp_from_4", K_U32, cuda_graph_max_bs_tp_from_4, SGLF),
	K("fraction_by_tp", K_TABLE, fraction_by_tp, 0),
	K("reserve_by_gpu_memory", K_TABLE, reserve_by_gpu_memory, 0),
	K("fraction_spread", K_FRACTION, fraction_spread, SGL | TRT),
	K("free_fraction", K_FRACTION, free_fraction, TRT),
	K("step_fixed_us", K_US, step_fixed_s, 0),
	K("prefill_fixed_us", K_US, prefill_fixed_s, 0),
	K("seq_step_us", K_US, seq_step_s, 0),
	K("allreduce_latency_us", K_US, allreduce_latency_s, 0),
	K("request_latency_us", K_US, request_latency_s, 0),
	K("kv_bw_efficiency", K_FRACTION, kv_bw_efficiency, 0),
	K("kv_bw_efficiency_listed", K_FRACTION, kv_bw_efficiency_listed, 0),
	K("kv_bw_efficiency_gpus", K_STR, kv_bw_efficiency_gpus, 0),
	K("time_ratio_low", K_RATIO, time_ratio_low, 0),
	K("time_ratio_high", K_RATIO, time_ratio_high, 0),
	K("prefill_alone", K_BOOL, prefill_alone, 0),
	K("overlap_schedule", K_BOOL, overlap_schedule, 0),
	K("elementwise_rotary", K_BOOL, elementwise_rotary, 0),
	K("eager_launch_us", K_US, eager_launch_s, 0),
	K("eager_attention_launches", K_U32, eager_attention_launches, 0),
	K("eager_attention_launches_mla", K_U32, eager_attention_launches_mla, 0),
	K("decode_full_graph", K_BOOL, decode_full_graph, 0),
	K("graph_max_tokens", K_U32, graph_max_tokens, 0),
	K("uncaptured_launch_us", K_US, uncaptured_launch_s, 0),
	K("uncaptured_attention_launches", K_U32, uncaptured_attention_launches, 0),
	K("uncaptured_attention_launches_mla", K_U32, uncaptured_attention_launches_mla, 0),
	K("uncaptured_mlp_launches", K_U32, uncaptured_mlp_launches, 0),
	K("uncaptured_moe_launches", K_U32, uncaptured_moe_launches, 0),
	K("uncaptured_shared_expert_launches", K_U32, uncaptured_shared_expert_launches, 0),
	K("decode_bw_scale", K_FRACTION, decode_bw_scale, 0),
	K("prefill_flops_scale", K_FRACTION, prefill_flops_scale, 0),
	K("moe_kernel_tables", K_BOOL, moe_kernel_tables, 0),
	K("attention_serial", K_BOOL, attention_serial, 0),
	K("decode_kv_per_query_head", K_BOOL, decode_kv_per_query_head, 0),
	K("decode_gemm_table", K_BOOL, decode_gemm_table, 0),
	K("moe_align_layer_us", K_US, moe_align_layer_s, 0),
	K("moe_align_min_experts", K_U32, moe_align_min_experts, 0),
	K("time_own_only", K_BOOL, time_own_only, 0),
#undef K
};
#define NKEYS (sizeof keys / sizeof keys[0])

static const char *const engine_names[] = {"vllm", "sglang", "trtllm", "llamacpp"};

/* Row `x` of an SGLang default-fraction table: "tp:fraction,..." (by_tp:
 * the row of the largest tp not above x; from tp 1, tps rising, fractions in
 * (0, 1]) or "below GiB:base GiB:per GPU GiB,...,0:base:per" (the first row
 * whose bound is above x GiB; bounds rising, the catch-all 0 last).  False
 * when the table does not parse; *a, *b the row's values. */
static bool sglang_table_row(const char *table, bool by_tp, double x, double *a, double *b)
{
	const char *p = table;
	double prev = 0;
	bool found = false, closed = false;
	*a = *b = 0;
	while (*p) {
		char *end;
		double k = strtod(p, &end), v1, v2 = 0;
		if (closed || end == p || *end != ':' || !(k >= 0) ||
		    (by_tp ? (prev ? k <= prev : k != 1) : (k && k <= prev)))
			return false;
		char *q;
		v1 = strtod(end + 1, &q);
		if (q == end + 1 || !(v1 >= 0) || (by_tp && !(v1 > 0 && v1 <= 1)))
			return false;
		p = q;
		if (!by_tp) {
			if (*p != ':')
				return false;
			v2 = strtod(p + 1, &end);
			if (end == p + 1 || !(v2 >= 0))
				return false;
			p = end;
			closed = k == 0;
		}
		if (*p && (*p != ',' || !p[1]))
			return false;
		p += *p == ',';
		if (by_tp ? k <= x : !found && (k == 0 || x < k))
			*a = v1, *b = v2, found = true;
		prev = k;
	}
	return found && (by_tp || closed);
}

/* A number in [lo, hi] ((lo, hi] when lo_open), stored times `scale`. */
static kvp_status read_ranged(const struct kvp_doc *doc, const struct kvp_node *v, const char *name,
			      double lo, bool lo_open, double hi, double scale, const char *want,
			      double *out, struct kvp_error *err)
{
	double d;
	kvp_status st = kvp_node_double(doc, v, name, &d, err);
	if (st)
		return st;
	if (!((lo_open ? d > lo : d >= lo) && d <= hi))
		return kvp_node_fail(doc, v, err, KVP_STATUS_INVALID, name, "%s, got %s", want,
				     v->value);
	*out = d * scale;
	return KVP_STATUS_OK;
}

static kvp_status read_key(const struct kvp_doc *doc, const struct kvp_node *v,
			   const struct key *k, struct kvp_engine_model *e, struct kvp_error *err)
{
	char *p = (char *)e + k->offset;
	uint64_t u;
	kvp_status st;
	switch (k->type) {
	case K_STR:
		return kvp_node_str(doc, v, k->name, p, k->size, err);
	case K_DTYPE: {
		/* "serving" (the model's dtype) or a dtype name */
		enum kvp_dtype dt;
		if ((st = kvp_node_str(doc, v, k->name, p, k->size, err)))
			return st;
		if (strcmp(p, "serving") != 0 && (!kvp_dtype_parse(p, &dt) || dt == KVP_DTYPE_AUTO))
			return kvp_node_fail(doc, v, err, KVP_STATUS_INVALID, k->name,
					     "\"serving\" or a dtype, got %s", v->value);
		return KVP_STATUS_OK;
	}
	case K_RANGE:
		if ((st = kvp_node_str(doc, v, k->name, p, k->size, err)))
			return st;
		if (!kvp_version_range_valid(p))
			return kvp_node_fail(doc, v, err, KVP_STATUS_INVALID, k->name,
					     "expected version specifiers such as \">=0.19,<0.20\", "
					     "got %s", v->value);
		return KVP_STATUS_OK;
	case K_BOOL:
		return kvp_node_bool(doc, v, k->name, (bool *)p, err);
	case K_BYTES:
		return kvp_node_bytes(doc, v, k->name, (uint64_t *)p, err);
	case K_U32:
		if ((st = kvp_node_u64(doc, v, k->name, &u, err)))
			return st;
		if (u > UINT32_MAX)
			return kvp_node_fail(doc, v, err, KVP_STATUS_OVERFLOW, k->name,
					     "%s is larger than %u", v->value, UINT32_MAX);
		/* the fused-MoE kernel keeps two buffers at most, workspace13
		 * and workspace2 (budget.c) */
		if (k->offset == offsetof(struct kvp_engine_model, moe_workspaces) && u > 2)
			return kvp_node_fail(doc, v, err, KVP_STATUS_INVALID, k->name,
					     "%s is more than the 2 fused-MoE workspaces "
					     "(workspace13, workspace2)", v->value);
		*(uint32_t *)p = (uint32_t)u;
		return KVP_STATUS_OK;
	case K_US:
		/* microseconds in the file, seconds in the struct; at most one
		 * second (a step's fixed cost is milliseconds at most) */
		e->time_given = true;
		return read_ranged(doc, v, k->name, 0, false, 1e6, 1e-6, "microseconds in [0, 1000000]",
				   (double *)p, err);
	case K_RATIO:
		e->time_given = true;
		return read_ranged(doc, v, k->name, 0, true, 100, 1, "a ratio in (0, 100]", (double *)p,
				   err);
	case K_FRACTION:
		return read_ranged(doc, v, k->name, 0, false, 1, 1, "a fraction in [0, 1]", (double *)p,
				   err);
	case K_TABLE: {
		/* parsed whole once here, so that a lookup never fails later */
		double a, b;
		bool by_tp = strcmp(k->name, "fraction_by_tp") == 0;
		if ((st = kvp_node_str(doc, v, k->name, p, k->size, err)))
			return st;
		if (!sglang_table_row(p, by_tp, 1, &a, &b))
			return kvp_node_fail(doc, v, err, KVP_STATUS_INVALID, k->name,
					     by_tp ? "expected \"tp:fraction,...\" from tp 1 up, tps "
						     "rising, fractions in (0, 1], got %s"
						   : "expected \"below GiB:base GiB:GiB per GPU,...,"
						     "0:base:per\", bounds rising, 0 last, got %s",
					     v->value);
		return KVP_STATUS_OK;
	}
	}
	return KVP_STATUS_OK;
}

/* One entry of `versions` of an engine (mask `engine`): every key known,
 * the engine's required keys given (not null); the YAML walker refuses a
 * key given twice. */
static kvp_status read_version(const struct kvp_doc *doc, const struct kvp_node *map,
			       unsigned engine, struct kvp_engine_model *e, struct kvp_error *err)
{
	bool seen[NKEYS] = {false};
	kvp_status st = kvp_node_expect(doc, map, "versions", KVP_NODE_MAP, err);
	if (st)
		return st;
	/* left out: a rotary kernel of its own, vLLM's count */
	e->elementwise_rotary = true;
	for (size_t i = 0; i < map->n; i++) {
		size_t j = 0;
		while (j < NKEYS && strcmp(keys[j].name, map->keys[i]->value) != 0)
			j++;
		if (j == NKEYS)
			return kvp_node_fail(doc, map->keys[i], err, KVP_STATUS_INVALID,
					     map->keys[i]->value, "unknown key");
		if (kvp_node_is_null(map->items[i]))
			continue;
		seen[j] = true;
		if ((st = read_key(doc, map->items[i], &keys[j], e, err)))
			return st;
	}
	if (!seen[0] || !e->version[0])
		return kvp_node_fail(doc, map, err, KVP_STATUS_INVALID, "version",
				     "required field is missing");
	e->rotary_fused = !e->elementwise_rotary;
	if (e->time_ratio_low > 0 && e->time_ratio_high > 0 &&
	    !(e->time_ratio_low <= 1 && 1 <= e->time_ratio_high))
		return kvp_node_fail(doc, map, err, KVP_STATUS_INVALID, "time_ratio_low",
				     "the band must hold the prediction: time_ratio_low <= 1 <= "
				     "time_ratio_high, got %g and %g", e->time_ratio_low,
				     e->time_ratio_high);
	if (e->moe_align_layer_s > 0 && e->moe_align_min_experts == 0)
		return kvp_node_fail(doc, map, err, KVP_STATUS_INVALID, "moe_align_min_experts",
				     "required with moe_align_layer_us: the fewest routed "
				     "experts that run the kernel (at least 1)");
	bool table = e->fraction_by_tp[0] || e->reserve_by_gpu_memory[0];
	if (e->fraction_by_tp[0] && e->reserve_by_gpu_memory[0])
		return kvp_node_fail(doc, map, err, KVP_STATUS_INVALID, "fraction_by_tp",
				     "give fraction_by_tp or reserve_by_gpu_memory, not both");
	for (size_t j = 0; j < NKEYS; j++)
		if (((keys[j].required & engine) ||
		     ((keys[j].required & SGLF) && engine == SGL && !table)) && !seen[j])
			return kvp_node_fail(doc, map, err, KVP_STATUS_INVALID, keys[j].name,
					     "required for a %s engine model and missing (it "
					     "would be read as 0)", e->kind);
	return KVP_STATUS_OK;
}

/* An entry without time data takes the nearest entry's that has some and
 * lends them (not time_own_only; engine.h time_from): by version position,
 * ties to the newer; the moe_align term stays its own entry's; its band's
 * distance from 1 doubled each way, since no measurement of this version
 * stands behind it.  Nothing to take: the entry stays without (perf's
 * defaults, named "defaults" in its output). */
static kvp_status borrow_time(const struct kvp_doc *doc, const struct kvp_node *vs, unsigned mask,
			      struct kvp_engine_model *out, struct kvp_error *err)
{
	struct kvp_version self, ev, best_v;
	if (out->time_given || !kvp_version_parse(out->version, &self))
		return KVP_STATUS_OK;
	double best = -1;
	struct kvp_engine_model from = {0};
	for (size_t i = 0; i < vs->n; i++) {
		struct kvp_engine_model e = {0};
		kvp_status st = read_version(doc, vs->items[i], mask, &e, err);
		if (st)
			return st;
		if (!e.time_given || e.time_own_only || !kvp_version_parse(e.version, &ev))
			continue;
		double d = fabs(kvp_version_position(&self) - kvp_version_position(&ev));
		if (best < 0 || d < best || (d == best && kvp_version_cmp(&ev, &best_v) > 0)) {
			best = d;
			best_v = ev;
			from = e;
		}
	}
	if (best < 0)
		return KVP_STATUS_OK;
	out->step_fixed_s = from.step_fixed_s;
	out->prefill_fixed_s = from.prefill_fixed_s;
	out->seq_step_s = from.seq_step_s;
	out->allreduce_latency_s = from.allreduce_latency_s;
	out->request_latency_s = from.request_latency_s;
	out->kv_bw_efficiency = from.kv_bw_efficiency;
	out->kv_bw_efficiency_listed = from.kv_bw_efficiency_listed;
	memcpy(out->kv_bw_efficiency_gpus, from.kv_bw_efficiency_gpus,
	       sizeof out->kv_bw_efficiency_gpus);
	out->eager_launch_s = from.eager_launch_s;
	out->uncaptured_launch_s = from.uncaptured_launch_s;
	out->decode_bw_scale = from.decode_bw_scale;
	out->prefill_flops_scale = from.prefill_flops_scale;
	if (from.time_ratio_low > 0 && from.time_ratio_high > 0) {
		out->time_ratio_low = fmax(0.01, 1 - 2 * (1 - from.time_ratio_low));
		out->time_ratio_high = 1 + 2 * (from.time_ratio_high - 1);
	}
	out->time_given = true;
	snprintf(out->time_from, sizeof out->time_from, "%s", from.version);
	return KVP_STATUS_OK;
}

kvp_status kvp_engine_model_load(const char *engine, const char *version,
				 struct kvp_engine_model *out, struct kvp_error *err)
{
	char path[512];
	kvp_status st = kvp_profile_resolve("engines", engine, path, sizeof path, err);
	if (st)
		return st;
	struct kvp_doc *doc = NULL;
	if ((st = kvp_doc_load_file(path, &doc, err)))
		return st;
	static const char *const top[] = {"engine", "default_version", "versions", NULL};
	const struct kvp_node *root = doc->root, *vs, *dv;
	char want[KVP_ENGINE_VERSION_MAX] = "", seen[256] = "";
	if (!root) {
		st = kvp_node_fail(doc, NULL, err, KVP_STATUS_INVALID, NULL, "empty profile");
		goto out;
	}
	if ((st = kvp_node_expect(doc, root, "", KVP_NODE_MAP, err)) ||
	    (st = kvp_map_only(doc, root, top, err)))
		goto out;
	/* which engine the file describes says which keys it must give */
	const struct kvp_node *en = kvp_map_get(root, "engine");
	char kind[16] = "";
	unsigned mask = 0;
	if (!en) {
		st = kvp_node_fail(doc, root, err, KVP_STATUS_INVALID, "engine",
				   "required field is missing (vllm, sglang, trtllm or llamacpp)");
		goto out;
	}
	if ((st = kvp_node_str(doc, en, "engine", kind, sizeof kind, err)))
		goto out;
	for (unsigned i = 0; i < sizeof engine_names / sizeof engine_names[0]; i++)
		if (strcmp(kind, engine_names[i]) == 0)
			mask = 1u << i;
	if (!mask) {
		st = kvp_node_fail(doc, en, err, KVP_STATUS_INVALID, "engine",
				   "vllm, sglang, trtllm or llamacpp, got %s", en->value);
		goto out;
	}
	/* asked for by name and found among the profiles (kvp_profile_resolve
	 * gives a path back as it was given): the file must describe that engine */
	if (strcmp(path, engine) != 0 && strcmp(engine, kind) != 0) {
		st = kvp_node_fail(doc, en, err, KVP_STATUS_INVALID, "engine",
				   "the file describes %s, not %s", kind, engine);
		goto out;
	}
	vs = kvp_map_get(root, "versions");
	if (!vs || vs->type != KVP_NODE_SEQ || vs->n == 0) {
		st = kvp_node_fail(doc, vs ? vs : root, err, KVP_STATUS_INVALID, "versions",
				   "a list of at least one version");
		goto out;
	}
	dv = kvp_map_get(root, "default_version");
	if (version && version[0])
		snprintf(want, sizeof want, "%s", version);
	else if (dv && (st = kvp_node_str(doc, dv, "default_version", want, sizeof want, err)))
		goto out;
	/* asked for: read as a version (base/version.h) where it is one */
	struct kvp_version asked, ev, near_v;
	bool by_version = version && version[0] && kvp_version_parse(version, &asked);
	struct kvp_engine_model nearest = {0};
	double best = -1;
	for (size_t i = 0; i < vs->n; i++) {
		struct kvp_engine_model e = {0};
		snprintf(e.engine, sizeof e.engine, "%s", engine);
		snprintf(e.path, sizeof e.path, "%s", path);
		snprintf(e.kind, sizeof e.kind, "%s", kind);
		if ((st = read_version(doc, vs->items[i], mask, &e, err)))
			goto out;
		if (version && version[0])
			snprintf(e.version_asked, sizeof e.version_asked, "%s", version);
		size_t len = strlen(seen);
		snprintf(seen + len, sizeof seen - len, "%s%s%s%s%s", len ? ", " : "", e.version,
			 e.range[0] ? " (" : "", e.range, e.range[0] ? ")" : "");
		bool own = kvp_version_parse(e.version, &ev);
		if (!want[0] || strcmp(e.version, want) == 0 ||
		    (by_version && (e.range[0] ? kvp_version_in_range(&asked, e.range)
				    : own && kvp_version_cmp(&asked, &ev) == 0))) {
			*out = e;
			goto picked;
		}
		if (by_version && own) {
			double d = fabs(kvp_version_position(&asked) - kvp_version_position(&ev));
			if (best < 0 || d < best || (d == best && kvp_version_cmp(&ev, &near_v) > 0)) {
				near_v = ev;
				best = d;
				nearest = e;
			}
		}
	}
	if (best >= 0) {
		nearest.version_nearest = true;
		*out = nearest;
		goto picked;
	}
	st = kvp_error_set(err, version && version[0] ? KVP_STATUS_NOT_FOUND : KVP_STATUS_INVALID,
			   path, dv && !(version && version[0]) ? dv->line : 0,
			   dv && !(version && version[0]) ? dv->col : 0,
			   version && version[0] ? "engine-version" : "default_version",
			   "no %s version '%s' (the file has %s)", engine, want, seen);
	goto out;
picked:
	st = borrow_time(doc, vs, mask, out, err);
out:
	kvp_doc_free(doc);
	return st;
}

static bool contains_ci(const char *hay, const char *needle)
{
	size_t n = strlen(needle);
	if (!n)
		return false;
	for (; *hay; hay++) {
		size_t i = 0;
		while (i < n && hay[i] && tolower((unsigned char)hay[i]) ==
					       tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return true;
	}
	return false;
}

void kvp_engine_batch_defaults(const struct kvp_engine_model *e, uint64_t memory_bytes,
			       const char *gpu_name, uint32_t *max_num_seqs,
			       uint64_t *max_batched_tokens)
{
	bool large = memory_bytes >= e->large_gpu_memory_bytes &&
		     !contains_ci(gpu_name ? gpu_name : "", e->large_gpu_excludes);
	*max_num_seqs = large ? e->max_num_seqs_large : e->max_num_seqs_small;
	*max_batched_tokens = large ? e->max_num_batched_tokens_large
				    : e->max_num_batched_tokens_small;
}

/* Is n one of the comma-separated integers of list? */
static bool listed(uint32_t n, const char *list)
{
	while (*list) {
		char *end;
		unsigned long v = strtoul(list, &end, 10);
		if (end != list && v == n)
			return true;
		list += strcspn(list, ",");
		if (*list == ',')
			list++;
	}
	return false;
}

bool kvp_engine_custom_all_reduce(const struct kvp_engine_model *e, uint32_t tp,
				  int nvlink_domain, enum kvp_p2p p2p)
{
	if (tp < 2 || !listed(tp, e->custom_all_reduce_sizes))
		return false;
	bool nvlink = nvlink_domain < 0 || (uint32_t)nvlink_domain >= tp;
	if (tp > e->custom_all_reduce_pcie_max && !nvlink)
		return false;
	/* _can_p2p: every pair must reach the other */
	return p2p == KVP_P2P_ALL || p2p == KVP_P2P_PCIE || (p2p == KVP_P2P_NVLINK_ONLY && nvlink);
}

uint64_t kvp_engine_non_torch_bytes(const struct kvp_engine_model *e, uint32_t gpus,
				    uint32_t tp, int nvlink_domain, enum kvp_p2p p2p)
{
	if (gpus <= 1)
		return e->non_torch_tp1_bytes;
	uint64_t t = e->non_torch_tp_multi_bytes;
	if (!e->custom_all_reduce_sizes[0] ||
	    kvp_engine_custom_all_reduce(e, tp, nvlink_domain, p2p))
		t += e->non_torch_custom_all_reduce_bytes;
	return t;
}

/* Does gpu_name contain one of the comma-separated entries of list? */
static bool names_one_of(const char *gpu_name, const char *list)
{
	char item[64];
	while (*list) {
		size_t n = strcspn(list, ",");
		snprintf(item, sizeof item, "%.*s", (int)(n < sizeof item ? n : sizeof item - 1), list);
		if (contains_ci(gpu_name, item))
			return true;
		list += n;
		if (*list == ',')
			list++;
	}
	return false;
}

static uint64_t round_up(uint64_t x, uint32_t m)
{
	return m ? (x + m - 1) / m * m : x;
}

uint64_t kvp_engine_rotary_cache_bytes(const struct kvp_engine_model *e,
				       const struct kvp_model *m, enum kvp_dtype serving)
{
	if (!e->rotary_cache_dtype[0])
		return 0;
	bool attn = false, mla = false;
	for (uint32_t i = 0; i < m->num_layers && i < KVP_MAX_LAYERS; i++) {
		attn |= m->layers[i] == KVP_LAYER_FULL || m->layers[i] == KVP_LAYER_SLIDING ||
			m->layers[i] == KVP_LAYER_CHUNKED;
		mla |= m->layers[i] == KVP_LAYER_MLA;
	}
	if (!attn && !mla)
		return 0;
	enum kvp_dtype dt = serving;
	if (strcmp(e->rotary_cache_dtype, "serving") != 0 &&
	    !kvp_dtype_parse(e->rotary_cache_dtype, &dt))
		return 0; /* rejected when the file was read */
	uint64_t dim = m->rotary_dim ? m->rotary_dim : mla ? m->mla_rope_dim : m->head_dim, n;
	/* rotary_embedding/{linear,dynamic_ntk,yarn}_scaling_rope.py: a scaled rope's cache covers
	 * max_position x factor (rotary_cache_positions); Gemma 3's sliding
	 * layers add their own unscaled one (gemma3.py Gemma3Attention) */
	uint64_t pos = m->rotary_cache_positions ? m->rotary_cache_positions : m->max_context;
	bool sliding = false;
	for (uint32_t i = 0; i < m->num_layers && i < KVP_MAX_LAYERS; i++)
		sliding |= m->layers[i] == KVP_LAYER_SLIDING;
	if (m->rotary_local_cache && sliding && !kvp_add(pos, m->max_context, &pos))
		return UINT64_MAX;
	if (!kvp_mul(pos, dim, &n) || !kvp_mul(n, kvp_dtype_info(dt)->bits / 8, &n))
		return UINT64_MAX;
	return n;
}

double kvp_engine_kv_bw_efficiency(const struct kvp_engine_model *e, const char *gpu_name)
{
	if (e->kv_bw_efficiency_listed > 0 && e->kv_bw_efficiency_gpus[0] &&
	    names_one_of(gpu_name ? gpu_name : "", e->kv_bw_efficiency_gpus))
		return e->kv_bw_efficiency_listed;
	return e->kv_bw_efficiency;
}

uint64_t kvp_engine_mxfp4_routed_bytes(const struct kvp_engine_model *e, const char *gpu_name,
				       uint32_t hidden, uint32_t inter_per_partition,
				       uint64_t routed_bytes)
{
	bool sm100 = e->mxfp4_pad_sm100 && names_one_of(gpu_name ? gpu_name : "",
							e->mxfp4_sm100_gpus);
	bool triton = !sm100 && e->mxfp4_triton_gpus[0] &&
		      names_one_of(gpu_name ? gpu_name : "", e->mxfp4_triton_gpus);
	uint32_t pi = sm100 ? e->mxfp4_pad_sm100
		    : triton ? e->mxfp4_pad_triton_intermediate : e->mxfp4_pad_intermediate;
	uint32_t ph = sm100 ? e->mxfp4_pad_sm100
		    : triton ? e->mxfp4_pad_triton_hidden : e->mxfp4_pad_hidden;
	uint64_t ip = round_up(inter_per_partition, pi), hp = round_up(hidden, ph);
	uint64_t num, den, whole, part, out;
	if (!hidden || !inter_per_partition || (ip == inter_per_partition && hp == hidden))
		return routed_bytes;
	/* routed x (I_p H_p) / (I H) in checked integers, split as
	 * (routed / den) num + (routed % den) num / den so that no product nears
	 * 2^64 for any real model */
	if (!kvp_mul(ip, hp, &num) || !kvp_mul((uint64_t)inter_per_partition, hidden, &den) ||
	    !kvp_mul(routed_bytes / den, num, &whole) ||
	    !kvp_mul(routed_bytes % den, num, &part) ||
	    !kvp_add(whole, part / den + (part % den != 0), &out))
		return UINT64_MAX;
	return out;
}

uint32_t kvp_engine_dp_full_tp(const struct kvp_engine_model *e)
{
	const char *l = e->dp_attention_full_tp;
	return (names_one_of("lm_head", l) ? KVP_SHAPE_DP_LM_HEAD : 0) |
	       (names_one_of("dense_mlp", l) ? KVP_SHAPE_DP_DENSE_MLP : 0) |
	       (names_one_of("shared_experts", l) ? KVP_SHAPE_DP_SHARED_EXPERTS : 0);
}

double kvp_engine_sglang_fraction(const struct kvp_engine_model *e, double gpu_mib, uint32_t tp,
				  uint32_t pp)
{
	double a, b, gpus = (double)tp * (pp ? pp : 1);
	/* the tables of <= 0.4.5 go by tp_size alone; the reserve of 0.4.8 -
	 * 0.5.2 by parallel_size = tp_size x pp_size */
	if (e->fraction_by_tp[0])
		return sglang_table_row(e->fraction_by_tp, true, tp, &a, &b) ? a : -1;
	if (!e->reserve_by_gpu_memory[0] || !(gpu_mib > 0) ||
	    !sglang_table_row(e->reserve_by_gpu_memory, false, gpu_mib / 1024, &a, &b))
		return -1;
	/* server_args.py: round((gpu_mem - reserved_mem) / gpu_mem, 3) */
	double f = round((gpu_mib - (a + b * gpus) * 1024) / gpu_mib * 1000) / 1000;
	return f > 0 ? f : 0;
}
