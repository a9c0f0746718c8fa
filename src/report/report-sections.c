/* report-sections.c: the text sections of a report: the scenario, the
 * summary, one budget table row per option (model x GPU x engine x split x
 * KV dtype), the questions asked (fit, max context, utilization) and the
 * budget arithmetic step by step.  It arranges what kvp_budget_compute
 * returns and computes nothing of its own beyond unit conversion. */
#include "report/report-private.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "model/spec.h"

/* ================================================================ options */

size_t kvp_report_options_list(const struct kvp_scenario *s, struct report_option *out)
{
	size_t n = 0;
	for (size_t mi = 0; mi < s->nmodels; mi++)
		for (size_t gi = 0; gi < s->ngpus; gi++)
			for (size_t ei = 0; ei < s->nengines; ei++)
				for (size_t ti = 0; ti < s->ntp; ti++)
					for (size_t ki = 0; ki < s->nkv; ki++)
						out[n++] = (struct report_option){&s->models[mi], &s->gpus[gi],
									   s->engines[ei], s->tp[ti],
									   s->kv[ki]};
	return n;
}

struct kvp_budget_opts kvp_report_budget_opts(const struct kvp_scenario *s, enum kvp_engine engine,
					  uint32_t tp, enum kvp_dtype kv,
					  const struct kvp_scenario_workload *w)
{
	struct kvp_budget_opts o = {0};
	o.engine = engine;
	o.par.tp = tp;
	o.par.pp = 1;
	o.dtype = KVP_DTYPE_AUTO;
	o.kv_dtype = kv;
	o.block_size = s->block_size;
	o.utilization = s->utilization;
	o.max_batched_tokens = s->max_batched_tokens;
	o.context = w ? w->context : 0;
	o.batch = w ? w->batch : 1;
	return o;
}

static kvp_status option_budget(const struct kvp_scenario *s, const struct report_option *op,
				const struct kvp_scenario_workload *w, struct kvp_budget *b,
				struct kvp_error *err)
{
	struct kvp_budget_opts o = kvp_report_budget_opts(s, op->engine, op->tp, op->kv, w);
	return kvp_budget_compute(op->m, op->g, &o, b, err);
}

/* ================================================================ formatting */

static const char *bytes_str(uint64_t v, char *buf, size_t size)
{
	kvp_format_bytes(v, buf, size);
	return buf;
}

static const char *u64_str(uint64_t v, char *buf, size_t size)
{
	kvp_format_u64(v, buf, size);
	return buf;
}

static const char *tokens_str(uint64_t n, char *buf, size_t size)
{
	if (n >= 1024 && n % 1024 == 0)
		snprintf(buf, size, "%lluk", (unsigned long long)(n / 1024));
	else
		kvp_format_u64(n, buf, size);
	return buf;
}

static void option_cells(const struct report_option *op, const struct kvp_spec *spec, char kv[][32],
			 char tp[][16], const char **cells)
{
	snprintf(*tp, 16, "%u", op->tp);
	if (spec)
		snprintf(*kv, 32, "%s", kvp_dtype_name(spec->kv_dtype));
	else
		snprintf(*kv, 32, "%s", kvp_dtype_name(op->kv));
	cells[0] = op->m->name;
	cells[1] = op->g->name;
	cells[2] = kvp_engine_name(op->engine);
	cells[3] = *tp;
	cells[4] = *kv;
}

/* ================================================================ sections */

/* Stop the report with e (or with st when e says nothing). */
kvp_status kvp_report_fail(struct report *r, kvp_status st, const struct kvp_error *e)
{
	if (e && e->status)
		*r->err = *e;
	else
		kvp_error_set(r->err, st, NULL, 0, 0, NULL, "%s", kvp_status_str(st));
	return st;
}

void kvp_report_section_scenario(struct report *r)
{
	const struct kvp_scenario *s = r->s;
	struct report_doc *d = &r->d;
	char a[64], b2[64], c[64], e[64], f[64];
	kvp_report_doc_heading(d, 2, "Scenario");
	static const char *const mhead[] = {"model", "layers", "attention heads / KV heads",
					    "head dim", "max context", "parameters",
					    "KV per token (whole model, serving dtype)"};
	kvp_report_doc_table(d, mhead, 7, 1);
	for (size_t i = 0; i < s->nmodels; i++) {
		const struct kvp_model *m = &s->models[i];
		struct kvp_error err = {0};
		const char *kvtok = "-";
		if (!kvp_spec_build(m, (struct kvp_parallel){.tp = 1, .pp = 1}, KVP_DTYPE_AUTO, KVP_DTYPE_AUTO,
				    &r->b->spec, &err)) {
			kvp_format_u64(r->b->spec.token_bytes_total, f, sizeof f);
			strcat(f, " B");
			kvtok = f;
		}
		snprintf(a, sizeof a, "%u", m->num_layers);
		snprintf(b2, sizeof b2, "%u / %u", m->num_heads, m->num_kv_heads);
		snprintf(c, sizeof c, "%u", m->head_dim);
		char params[32];
		const char *cells[] = {m->name, a, b2, c, u64_str(m->max_context, e, sizeof e),
				       u64_str(m->params, params, sizeof params), kvtok};
		kvp_report_doc_row(d, cells);
	}
	kvp_report_doc_table_end(d);

	static const char *const ghead[] = {"GPU", "memory", "bandwidth", "host link",
					    "price per GPU-hour"};
	kvp_report_doc_table(d, ghead, 5, 1);
	for (size_t i = 0; i < s->ngpus; i++) {
		const struct kvp_gpu *g = &s->gpus[i];
		kvp_format_rate(g->bandwidth_bps, b2, sizeof b2);
		if (g->price_per_hour > 0)
			snprintf(c, sizeof c, "$%.2f", g->price_per_hour);
		else
			snprintf(c, sizeof c, "unknown");
		const char *cells[] = {g->name, bytes_str(g->memory_bytes, a, sizeof a), b2,
				       g->host_link[0] ? g->host_link : "-", c};
		kvp_report_doc_row(d, cells);
	}
	kvp_report_doc_table_end(d);

	static const char *const whead[] = {"workload", "context (tokens)", "batch (sequences)",
					    "tokens in flight"};
	kvp_report_doc_table(d, whead, 4, 1);
	for (size_t i = 0; i < s->nworkloads; i++) {
		const struct kvp_scenario_workload *w = &s->workloads[i];
		uint64_t tokens;
		const char *t = kvp_mul(w->context, w->batch, &tokens) ? u64_str(tokens, c, sizeof c)
								       : "overflow";
		const char *cells[] = {w->name, u64_str(w->context, a, sizeof a),
				       u64_str(w->batch, b2, sizeof b2), t};
		kvp_report_doc_row(d, cells);
	}
	kvp_report_doc_table_end(d);

	char engines[128] = "", tps[128] = "", kvs[128] = "";
	for (size_t i = 0; i < s->nengines; i++)
		snprintf(engines + strlen(engines), sizeof engines - strlen(engines), "%s%s",
			 i ? ", " : "", kvp_engine_name(s->engines[i]));
	for (size_t i = 0; i < s->ntp; i++)
		snprintf(tps + strlen(tps), sizeof tps - strlen(tps), "%s%u", i ? ", " : "", s->tp[i]);
	for (size_t i = 0; i < s->nkv; i++)
		snprintf(kvs + strlen(kvs), sizeof kvs - strlen(kvs), "%s%s", i ? ", " : "",
			 kvp_dtype_name(s->kv[i]));
	if (s->utilization > 0)
		snprintf(a, sizeof a, "%.4g", s->utilization);
	else
		snprintf(a, sizeof a, "the engine's default");
	if (s->block_size)
		snprintf(b2, sizeof b2, "%u tokens", s->block_size);
	else
		snprintf(b2, sizeof b2, "the engine's default");
	kvp_report_doc_para(d, "Engines: %s. Tensor-parallel sizes: %s. KV dtypes: %s (auto: the serving "
		    "dtype). Memory fraction: %s. Block size: %s. Max batched tokens: %llu. "
		    "Each option below is one model on one GPU type with one engine, split and "
		    "KV dtype: %zu options.",
		 engines, tps, kvs, a, b2,
		 (unsigned long long)(s->max_batched_tokens ? s->max_batched_tokens
							    : KVP_DEFAULT_MAX_BATCHED_TOKENS),
		 r->nops);
}

/* The options a split cannot make, once each, as a note. */
static void note_invalid(struct report *r, const struct report_option *op, const struct kvp_error *e)
{
	kvp_report_doc_note(&r->d, "%s on %s at tp %u is left out: %s: %s", op->m->name, op->g->name, op->tp,
		 e->field, e->msg);
}

kvp_status kvp_report_section_budget(struct report *r)
{
	struct report_doc *d = &r->d;
	kvp_report_doc_heading(d, 2, "Memory budget of one GPU");
	kvp_report_doc_para(d, "Per GPU (the worst one under tensor parallelism). The KV pool is what "
		    "the engine leaves for the KV cache after weights, the activation peak and "
		    "runtime overhead; blocks and max tokens follow the engine's paging: "
		    "max tokens of short sequences count every layer's bytes per token, "
		    "one sequence's take the windowed layers' capped bytes off first. "
		    "Cost is the GPU's price times the GPUs of one replica.");
	static const char *const head[] = {"model", "GPU", "engine", "tp", "KV", "GPUs", "$/hour",
					   "weights", "activations", "overhead", "KV pool",
					   "blocks", "max tokens, short", "max tokens, one sequence"};
	kvp_report_doc_table(d, head, 14, 5);
	size_t invalid = 0;
	struct kvp_error skipped[KVP_SCENARIO_MAX_OPTIONS];
	size_t skipped_at[KVP_SCENARIO_MAX_OPTIONS];
	for (size_t i = 0; i < r->nops; i++) {
		const struct report_option *op = &r->ops[i];
		struct kvp_error e = {0};
		kvp_status st = option_budget(r->s, op, NULL, r->b, &e);
		if (st == KVP_STATUS_INVALID) {
			skipped[invalid] = e;
			skipped_at[invalid++] = i;
			continue;
		}
		if (st) {
			kvp_report_doc_table_end(d);
			return kvp_report_fail(r, st, &e);
		}
		char kv[1][32], tp[1][16], gpus[16], cost[32], w[32], a[32], o[32], pool[32],
			blocks[32], tokens[32], one[32];
		const char *cells[14];
		option_cells(op, &r->b->spec, kv, tp, cells);
		snprintf(gpus, sizeof gpus, "%u", op->tp);
		if (op->g->price_per_hour > 0)
			snprintf(cost, sizeof cost, "$%.2f", op->g->price_per_hour * op->tp);
		else
			snprintf(cost, sizeof cost, "-");
		cells[5] = gpus;
		cells[6] = cost;
		cells[7] = bytes_str(r->b->weights_bytes, w, sizeof w);
		cells[8] = bytes_str(r->b->activation_bytes, a, sizeof a);
		cells[9] = bytes_str(r->b->overhead_bytes, o, sizeof o);
		cells[10] = r->b->weights_fit ? bytes_str(r->b->kv_pool_bytes, pool, sizeof pool)
					      : "does not fit";
		cells[11] = u64_str(r->b->num_blocks, blocks, sizeof blocks);
		cells[12] = u64_str(r->b->max_tokens, tokens, sizeof tokens);
		cells[13] = r->b->max_tokens_one_sequence == KVP_BUDGET_UNBOUNDED
				    ? "no bound"
				    : u64_str(r->b->max_tokens_one_sequence, one, sizeof one);
		kvp_report_doc_row(d, cells);
	}
	kvp_report_doc_table_end(d);
	/* one note per model and split, not per GPU, engine and dtype */
	for (size_t k = 0; k < invalid; k++) {
		const struct report_option *op = &r->ops[skipped_at[k]];
		bool seen = false;
		for (size_t j = 0; j < k && !seen; j++)
			seen = r->ops[skipped_at[j]].m == op->m && r->ops[skipped_at[j]].tp == op->tp;
		if (!seen)
			note_invalid(r, op, &skipped[k]);
	}
	return KVP_STATUS_OK;
}

/* In short: for each model and workload, the options that hold it and the
 * cheapest replica among them (GPU price x tp; unpriced GPUs come last). */
kvp_status kvp_report_section_summary(struct report *r)
{
	const struct kvp_scenario *s = r->s;
	struct report_doc *d = &r->d;
	kvp_report_doc_heading(d, 2, "In short");
	for (size_t mi = 0; mi < s->nmodels; mi++) {
		for (size_t k = 0; k < s->nworkloads; k++) {
			const struct kvp_scenario_workload *w = &s->workloads[k];
			size_t best = SIZE_MAX, fits = 0, tried = 0;
			double best_cost = INFINITY;
			for (size_t i = 0; i < r->nops; i++) {
				if (r->ops[i].m != &s->models[mi])
					continue;
				tried++;
				struct kvp_error e = {0};
				kvp_status st = option_budget(s, &r->ops[i], w, r->b, &e);
				if (st == KVP_STATUS_INVALID || (!st && !r->b->fits))
					continue;
				if (st)
					return kvp_report_fail(r, st, &e);
				fits++;
				double cost = r->ops[i].g->price_per_hour > 0
					? r->ops[i].g->price_per_hour * r->ops[i].tp : INFINITY;
				if (best == SIZE_MAX || cost < best_cost) {
					best = i;
					best_cost = cost;
				}
			}
			char b1[32], b2[32], cost[48] = "";
			u64_str(w->batch, b1, sizeof b1);
			tokens_str(w->context, b2, sizeof b2);
			if (best == SIZE_MAX) {
				kvp_report_doc_para(d, "%s, %s (%s x %s tokens): none of its %zu options holds it.",
					 s->models[mi].name, w->name, b1, b2, tried);
				continue;
			}
			const struct report_option *op = &r->ops[best];
			if (isfinite(best_cost))
				snprintf(cost, sizeof cost, ", $%.2f per hour", best_cost);
			kvp_report_doc_para(d, "%s, %s (%s x %s tokens): %zu of %zu options hold it; the cheapest "
				    "replica is %u x %s, %s, KV %s%s.",
				 s->models[mi].name, w->name, b1, b2, fits, tried, op->tp, op->g->name,
				 kvp_engine_name(op->engine), kvp_dtype_name(op->kv), cost);
		}
	}
	kvp_report_doc_note(d, "Price per replica is not price per token: the tables and charts below show "
		    "how many sequences each option holds.");
	return KVP_STATUS_OK;
}

/* One question: a row per option, a column per workload. */
kvp_status kvp_report_section_question(struct report *r, enum kvp_question q)
{
	struct report_doc *d = &r->d;
	const struct kvp_scenario *s = r->s;
	switch (q) {
	case KVP_QUESTION_FIT:
		kvp_report_doc_heading(d, 2, "Does each workload fit?");
		kvp_report_doc_para(d, "Each cell: whether the workload's batch of sequences at its context "
			    "fits the KV pool of one replica, and the most sequences of that "
			    "context that do.");
		break;
	case KVP_QUESTION_MAX_CONTEXT:
		kvp_report_doc_heading(d, 2, "Longest context for each workload's batch");
		kvp_report_doc_para(d, "Each cell: the longest context (tokens per sequence) at which the "
			    "workload's batch still fits; marked when it passes the model's "
			    "max_context.");
		break;
	case KVP_QUESTION_UTILIZATION:
		kvp_report_doc_heading(d, 2, "Memory fraction each workload needs");
		kvp_report_doc_para(d, "Each cell: the engine's memory fraction (vLLM gpu_memory_utilization, "
			    "SGLang mem_fraction_static, TensorRT-LLM free_gpu_memory_fraction) the "
			    "workload needs; above 1 the GPU is too small.");
		break;
	}
	const char *head[5 + KVP_SCENARIO_MAX] = {"model", "GPU", "engine", "tp", "KV"};
	char wh[KVP_SCENARIO_MAX][96];
	for (size_t i = 0; i < s->nworkloads; i++) {
		char b[32], c[32];
		snprintf(wh[i], sizeof wh[i], "%s: %s x %s", s->workloads[i].name,
			 u64_str(s->workloads[i].batch, b, sizeof b),
			 tokens_str(s->workloads[i].context, c, sizeof c));
		head[5 + i] = wh[i];
	}
	kvp_report_doc_table(d, head, 5 + s->nworkloads, 5);
	for (size_t i = 0; i < r->nops; i++) {
		const struct report_option *op = &r->ops[i];
		const char *cells[5 + KVP_SCENARIO_MAX];
		char kv[1][32], tp[1][16], val[KVP_SCENARIO_MAX][64];
		bool valid = true;
		for (size_t k = 0; k < s->nworkloads && valid; k++) {
			const struct kvp_scenario_workload *w = &s->workloads[k];
			struct kvp_error e = {0};
			kvp_status st = option_budget(s, op, w, r->b, &e);
			if (st == KVP_STATUS_INVALID) {
				valid = false;
				break;
			}
			if (st) {
				kvp_report_doc_table_end(d);
				return kvp_report_fail(r, st, &e);
			}
			char n[32];
			const struct kvp_budget *b = r->b;
			if (q == KVP_QUESTION_FIT) {
				if (!b->weights_fit)
					snprintf(val[k], sizeof val[k], "no: weights do not fit");
				else
					snprintf(val[k], sizeof val[k], "%s (max %s)",
						 b->fits ? "yes" : "no",
						 u64_str(b->max_sequences, n, sizeof n));
			} else if (q == KVP_QUESTION_MAX_CONTEXT) {
				uint64_t c = kvp_budget_max_context(b, w->batch, 1ULL << 40);
				snprintf(val[k], sizeof val[k], "%s%s", u64_str(c, n, sizeof n),
					 c > op->m->max_context ? " (past max_context)" : "");
			} else {
				double u = kvp_budget_utilization_for(b, w->context, w->batch);
				if (isinf(u))
					snprintf(val[k], sizeof val[k], "never");
				else
					snprintf(val[k], sizeof val[k], "%.4f%s", u,
						 u > 1 ? " (too small)" : "");
			}
			cells[5 + k] = val[k];
		}
		if (!valid)
			continue;
		option_cells(op, &r->b->spec, kv, tp, cells);
		kvp_report_doc_row(d, cells);
	}
	kvp_report_doc_table_end(d);
	return KVP_STATUS_OK;
}

/* The budget of one option, step by step, into buf. */
static void arithmetic(const struct kvp_budget *b, const struct kvp_gpu *g, char *buf, size_t size)
{
	const struct kvp_spec *s = &b->spec;
	const struct kvp_model *m = s->model;
	size_t n = 0;
#define PUT(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))
	char t1[32], t2[32], t3[32], t4[32], t5[32];
	double elem = kvp_dtype_info(s->kv_dtype)->bits / 8.0;
	PUT("KV per token on one GPU (layers %u-%u of %u):\n", s->first_layer,
	    s->first_layer + s->num_layers - 1, m->num_layers);
	for (int k = 0; k < KVP_LAYER_KIND_COUNT; k++) {
		if (!s->count[k] || k == KVP_LAYER_NONE)
			continue;
		kvp_format_u64(s->kind_token_bytes[k], t1, sizeof t1);
		if (k == KVP_LAYER_MLA)
			PUT("  mla      %3u layers x (r %u + d_rope %u) x %g B = %s B\n", s->count[k],
			    m->mla_kv_lora_rank, m->mla_rope_dim, elem, t1);
		else if (k == KVP_LAYER_MAMBA)
			PUT("  mamba    %3u layers: %s B of state per sequence\n", s->count[k],
			    u64_str(s->seq_bytes, t1, sizeof t1));
		else {
			uint32_t window = 0;
			for (uint32_t i = 0; i < s->num_layers && !window; i++)
				if (s->layers[i].kind == (enum kvp_layer_kind)k)
					window = s->layers[i].window;
			PUT("  %-8s %3u layers x 2 x %u KV heads x %u d_h x %g B = %s B%s",
			    kvp_layer_kind_name((enum kvp_layer_kind)k), s->count[k],
			    s->kv_heads_per_gpu, m->head_dim, elem, t1,
			    kvp_dtype_info(s->kv_dtype)->kv_scale_bytes ? " (with scales)" : "");
			if (window)
				PUT(" (window %u tokens)", window);
			PUT("\n");
		}
	}
	PUT("  = %s B per token\n", u64_str(s->token_bytes, t1, sizeof t1));
	bytes_str(b->gpu_memory_bytes, t1, sizeof t1);
	bytes_str(b->weights_bytes, t2, sizeof t2);
	bytes_str(b->activation_bytes, t3, sizeof t3);
	bytes_str(b->overhead_bytes, t4, sizeof t4);
	bytes_str(b->kv_pool_bytes, t5, sizeof t5);
	switch (b->engine) {
	case KVP_ENGINE_SGLANG:
		PUT("KV pool = %.4f x (GPU %s - overhead %s) - weights %s = %s\n", b->utilization, t1,
		    t4, t2, t5);
		break;
	case KVP_ENGINE_TRTLLM:
		PUT("KV pool = %.4f x (GPU %s - weights %s - activations %s - overhead %s) = %s\n",
		    b->utilization, t1, t2, t3, t4, t5);
		break;
	default:
		PUT("KV pool = GPU %s x %.4f - weights %s - activations %s - overhead %s = %s\n", t1,
		    b->utilization, t2, t3, t4, t5);
	}
	if (!b->weights_fit) {
		PUT("The weights, activations and overhead do not fit: no KV pool.\n");
		return;
	}
	bytes_str(b->page_bytes, t1, sizeof t1);
	u64_str(b->num_blocks, t2, sizeof t2);
	u64_str(b->max_tokens, t3, sizeof t3);
	if (b->engine == KVP_ENGINE_VLLM) /* vLLM pages one layer; a block spans a group */
		PUT("page = %u tokens of one layer = %s; blocks = floor(pool / (page x %u layers "
		    "per group)) = %s;\nmax tokens = blocks / %u group(s) x %u = %s\n",
		    b->block_size, t1, b->group_size, t2, b->num_groups, b->block_size, t3);
	else
		PUT("page = %u tokens = %s; blocks = floor(pool / page) = %s; max tokens = %s\n",
		    b->block_size, t1, t2, t3);
	(void)g;
#undef PUT
}

kvp_status kvp_report_section_arithmetic(struct report *r)
{
	const struct kvp_scenario *s = r->s;
	kvp_report_doc_heading(&r->d, 2, "The arithmetic");
	kvp_report_doc_para(&r->d, "How each option's numbers come about (binary units: GiB = 2^30 bytes), "
			"and what one sequence of each workload takes of its pool.");
	for (size_t i = 0; i < r->nops; i++) {
		const struct report_option *op = &r->ops[i];
		struct kvp_error e = {0};
		kvp_status st = option_budget(s, op, NULL, r->b, &e);
		if (st == KVP_STATUS_INVALID)
			continue;
		if (st)
			return kvp_report_fail(r, st, &e);
		char head[512], text[4096];
		snprintf(head, sizeof head, "%s on %s, %s, tp %u, KV %s", op->m->name, op->g->name,
			 kvp_engine_name(op->engine), op->tp, kvp_dtype_name(r->b->spec.kv_dtype));
		arithmetic(r->b, op->g, text, sizeof text);
		size_t n = strlen(text);
		for (size_t k = 0; k < s->nworkloads && r->b->weights_fit; k++) {
			const struct kvp_scenario_workload *w = &s->workloads[k];
			if ((st = option_budget(s, op, w, r->b, &e)))
				return kvp_report_fail(r, st, &e);
			char t1[32], t2[32], t3[32], t4[32];
			snprintf(text + n, sizeof text - n,
				 "%s: one sequence of %s tokens takes %s of the pool -> at most %s "
				 "sequences; %s wanted: %s\n",
				 w->name, u64_str(w->context, t1, sizeof t1),
				 bytes_str(r->b->seq_bytes, t2, sizeof t2),
				 u64_str(r->b->max_sequences, t3, sizeof t3),
				 u64_str(w->batch, t4, sizeof t4), r->b->fits ? "fits" : "does not fit");
			n = strlen(text);
		}
		kvp_report_doc_heading(&r->d, 3, head);
		kvp_report_doc_pre(&r->d, text);
	}
	return KVP_STATUS_OK;
}
