/* serve-ref.c: the plain reference loop (serve-ref.h). */
#include "serve-ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "model/shape.h"
#include "time/moe-table.h"
#include "time/step-gemm.h"

enum { NOT_YET, WAITING, RUNNING, DONE };

/* A pass with a prefill chunk: the seconds of its elementwise kernels over
 * its `tokens` rows (step.h's rule, written out here from vLLM's kernels):
 * per layer two fused add + RMS norms (read x and the residual, write both:
 * 4 H values a row each), rotary on q and k in place (2 (H_q + H_kv) d_h / tp),
 * SiLU x mul (read 2 I, write I, / tp; a MoE layer its top-k experts' rows of
 * moe_intermediate_size and its shared experts'); the final norm (4 H), the
 * embedding gather (2 H), less the first layer's plain norm (2 H, not 4),
 * each value the serving dtype's bytes, at the decode weights' HBM rate;
 * only where the prefill's GEMMs are timed with a measured table (without
 * one the constant efficiency is a whole pass's). */
static double elementwise_s(const struct kvp_perf_ctx *pc, double tokens)
{
	const struct kvp_model *m = pc->model;
	if (pc->hw.gemm.nm == 0)
		return 0.0;
	double tp = pc->spec->par.tp ? pc->spec->par.tp : 1;
	double b = kvp_dtype_info(pc->spec->serving_dtype)->bits / 8.0;
	double moe = kvp_shape_moe_layers(m);
	double per_row = 0;
	for (uint32_t i = 0; i < m->num_layers; i++)
		per_row += 4.0 * m->hidden_size + 4.0 * m->hidden_size +
			   2.0 * (m->num_heads + m->num_kv_heads) * (double)m->head_dim / tp;
	per_row += (m->num_layers - moe) * 3.0 * m->intermediate_size / tp;
	if (moe > 0) {
		double k = m->moe_experts_per_token ? m->moe_experts_per_token : 1;
		per_row += moe * k * 3.0 * m->moe_intermediate_size / tp;
		per_row += (double)m->shared_expert_params / m->hidden_size / tp;
	}
	per_row += 4.0 * m->hidden_size + 2.0 * m->hidden_size - 2.0 * m->hidden_size;
	return tokens * per_row * b / (pc->hw.bandwidth_bps * pc->hw.decode_bw_efficiency);
}

struct st {
	int state;
	uint64_t gen, comp, hit, held, n;
	double first, last;
};

/* Blocks of the pool a sequence of `tokens` tokens takes. */
static uint64_t blocks_of(const struct kvp_budget *b, uint64_t tokens)
{
	uint64_t bytes = 0;
	if (tokens && kvp_budget_pool_for(b, tokens, 1, &bytes))
		return UINT64_MAX;
	uint64_t unit = b->engine == KVP_ENGINE_VLLM ? b->page_bytes * b->group_size : b->page_bytes;
	return (bytes + unit - 1) / unit;
}

static void remove_at(size_t *arr, size_t *n, size_t i)
{
	for (size_t k = i; k + 1 < *n; k++)
		arr[k] = arr[k + 1];
	(*n)--;
}

bool serve_ref_run(const struct kvp_budget *b, const struct kvp_perf_ctx *pc,
		   const struct serve_ref_cfg *cfg, struct serve_ref_req *reqs, size_t n,
		   struct serve_ref_out *out)
{
	memset(out, 0, sizeof *out);
	struct st *s = calloc(n ? n : 1, sizeof *s);
	size_t *run = calloc(n ? n : 1, sizeof *run), *wait = calloc(n ? n : 1, sizeof *wait);
	size_t nrun = 0, nwait = 0, next = 0;
	bool ok = s && run && wait;
	uint32_t P = b->block_size ? b->block_size : 1;
	uint64_t pinned = cfg->prefix_tokens ? blocks_of(b, cfg->prefix_tokens / P * P) : 0;
	uint64_t used = pinned;
	double t = 0;
	int idle_rounds = 0;
	while (ok && out->completed < n) {
		if (nrun == 0 && nwait == 0)
			t = fmax(t, reqs[next].arrival_s);
		while (next < n && reqs[next].arrival_s <= t) {
			s[next].state = WAITING;
			wait[nwait++] = next++;
		}
		/* running first */
		uint64_t budget = cfg->max_batched_tokens;
		bool preempted = false;
		for (size_t i = 0; i < nrun; i++)
			s[run[i]].n = 0;
		size_t i = 0;
		while (i < nrun && budget > 0) {
			struct st *r = &s[run[i]];
			uint64_t want = reqs[run[i]].prompt + r->gen - r->comp;
			if (want > budget)
				want = budget;
			uint64_t need = blocks_of(b, r->comp + want) - blocks_of(b, r->hit) - r->held;
			bool self = false;
			while (need > cfg->num_blocks - used) {
				size_t v = run[nrun - 1];
				nrun--;
				preempted = true;
				used -= s[v].held;
				out->recomputed_tokens += s[v].comp - s[v].hit;
				s[v].held = s[v].comp = s[v].hit = s[v].n = 0;
				s[v].state = WAITING;
				reqs[v].preempted++;
				out->preemptions++;
				for (size_t k = nwait; k > 0; k--)
					wait[k] = wait[k - 1];
				wait[0] = v;
				nwait++;
				if (nrun == i) {
					self = true;
					break;
				}
			}
			if (self)
				break;
			r->held += need;
			used += need;
			r->n = want;
			budget -= want;
			i++;
		}
		/* then waiting, unless something was preempted */
		while (!preempted && nwait > 0 && nrun < cfg->max_num_seqs && budget > 0) {
			size_t w = wait[0];
			struct st *r = &s[w];
			uint64_t known = reqs[w].prompt + r->gen, hit = 0;
			if (reqs[w].prefix && cfg->prefix_tokens) {
				hit = known - 1 < cfg->prefix_tokens ? known - 1 : cfg->prefix_tokens;
				hit -= hit % P;
			}
			uint64_t want = known - hit;
			if (cfg->no_chunked_prefill && want > budget)
				break;
			if (want > budget)
				want = budget;
			uint64_t need = blocks_of(b, hit + want) - blocks_of(b, hit);
			if (need > cfg->num_blocks - used)
				break;
			remove_at(wait, &nwait, 0);
			r->state = RUNNING;
			r->comp = r->hit = hit;
			r->held = need;
			used += need;
			r->n = want;
			budget -= want;
			run[nrun++] = w;
		}
		if (used > out->max_blocks)
			out->max_blocks = used;
		if (budget == cfg->max_batched_tokens) {
			if (++idle_rounds > 2) {
				ok = false;
				break;
			}
			continue;
		}
		idle_rounds = 0;
		/* the step's time */
		double flops = 0, tokens = 0, attn = 0;
		uint64_t kv = 0, ndec = 0;
		bool chunk = false;
		for (size_t k = 0; k < nrun; k++) {
			struct st *r = &s[run[k]];
			if (!r->n)
				continue;
			uint64_t bytes;
			if (kvp_spec_seq_bytes(pc->spec, r->comp + r->n, 1, &bytes)) {
				ok = false;
				break;
			}
			kv += bytes;
			tokens += (double)r->n;
			if (r->n == 1 && r->comp > 0) {
				double f = kvp_perf_decode_flops(pc->model, r->comp + 1);
				flops += f;
				/* its attention: all but the 2 x active params */
				attn += f - 2.0 * (double)pc->model->active_params;
				ndec++;
			} else {
				chunk = true;
				flops += kvp_perf_prefill_flops(pc->model, r->comp + r->n) -
					 kvp_perf_prefill_flops(pc->model, r->comp);
				attn += kvp_perf_attention_flops(pc->model, r->comp + r->n) -
					kvp_perf_attention_flops(pc->model, r->comp);
			}
		}
		/* pipeline parallelism: pp micro-batches of decodes in flight, so a
		 * pass of decodes is the passage of one micro-batch through every
		 * stage, carrying a pp-th of the pass's sequences (rounded up),
		 * tokens, FLOPs and KV (rounded up) while each stage reads its
		 * weights once; a pass with a prefill chunk is charged whole */
		uint64_t pp = chunk || !pc->spec->par.pp ? 1 : pc->spec->par.pp;
		double nseq = 0;
		for (size_t k = 0; k < nrun; k++)
			nseq += s[run[k]].n ? 1 : 0;
		uint64_t micro_dec = (ndec + pp - 1) / pp;
		double micro_seq = ceil(nseq / (double)pp);
		uint64_t micro_kv = (kv + pp - 1) / pp;
		uint64_t weights = pc->weights_bytes;
		struct kvp_perf_step step;
		if (!chunk) {
			if (kvp_perf_decode_step(pc, micro_dec, 1, &step, NULL)) {
				ok = false;
				break;
			}
			weights = step.weights_bytes / pc->spec->par.pp;
		}
		/* a pass with a prefill chunk: the step cost's efficiency of its
		 * FLOPs (the measured GEMM table where the GPU has one, step.h), over
		 * all the pass's tokens; decodes alone: the constant */
		double eff = pc->hw.prefill_flops_efficiency;
		uint32_t dp = pc->spec->par.dp > 1 ? pc->spec->par.dp : 1;
		/* the routed experts from the measured MoE table (step.h moe_s):
		 * the pass's tokens x dp through every MoE layer at the curve's
		 * seconds, their FLOPs and weights (already out of a decode pass's
		 * weights) out of the roofline, added after it */
		double moe = 0;
		if (pc->moe_curve.n) {
			moe = kvp_shape_moe_layers(pc->model) *
			      kvp_moe_curve_s(&pc->moe_curve, tokens / (double)pp * dp);
			flops -= kvp_perf_routed_token_flops(pc->model) * tokens;
			if (chunk)
				weights -= pc->expert_bytes;
		}
		if (chunk && pc->moe_curve.n)
			eff = kvp_perf_flops_efficiency_routed(pc, flops, attn, tokens, 0);
		else if (chunk)
			eff = kvp_perf_flops_efficiency(pc, flops, attn, tokens, tokens * dp);
		if (!ok || kvp_perf_step_roofline(pc, flops / (double)pp, eff, weights, micro_kv,
						  pc->hw.decode_bw_efficiency, tokens / (double)pp, &step,
						  NULL)) {
			ok = false;
			break;
		}
		/* the engine's fixed costs: every pass, each sequence it carries,
		 * and a pass with a prefill chunk (step.h's, written out here) */
		/* the engine's attention ops launched outside its CUDA graphs
		 * (vLLM before 0.11, step.h): the host's launches over every
		 * attention layer, charged where they outlast the pass's GPU work
		 * (roofline, elementwise, experts); none in a pass of decodes
		 * alone that a full graph replays */
		double gpu = step.time_s + (chunk ? elementwise_s(pc, tokens) : 0) + moe;
		double host = chunk || !pc->hw.decode_full_graph
				      ? pc->hw.eager_launch_s *
					((double)pc->dense_attention_layers *
						 pc->hw.eager_attention_launches +
					 (double)pc->mla_layers * pc->hw.eager_attention_launches_mla)
				      : 0;
		t += gpu + (host > gpu ? host - gpu : 0) + pc->hw.step_fixed_s +
		     micro_seq * pc->hw.seq_step_s + (chunk ? pc->hw.prefill_fixed_s : 0);
		out->steps++;
		/* arrivals during the step are seen at the next one */
		while (next < n && reqs[next].arrival_s <= t) {
			s[next].state = WAITING;
			wait[nwait++] = next++;
		}
		for (size_t k = 0; k < nrun;) {
			size_t id = run[k];
			struct st *r = &s[id];
			if (r->n) {
				r->comp += r->n;
				r->n = 0;
				if (r->comp == reqs[id].prompt + r->gen) {
					r->gen++;
					if (r->gen == 1)
						reqs[id].ttft_s = t - reqs[id].arrival_s;
					if (r->gen == reqs[id].output) {
						reqs[id].e2e_s = t - reqs[id].arrival_s;
						reqs[id].done = true;
						r->state = DONE;
						used -= r->held;
						r->held = 0;
						out->completed++;
						remove_at(run, &nrun, k);
						continue;
					}
				}
			}
			k++;
		}
	}
	free(s);
	free(run);
	free(wait);
	return ok;
}
