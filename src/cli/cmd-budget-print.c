/* cmd-budget-print.c: how `kvplan budget` prints its answer
 * (cmd-budget-print.h): the table, the budget as a running computation with
 * every operand shown (the shape, the KV per token, memory, paging, the
 * uncertainty band, the fit), and the JSON and CSV record.  cmd-budget.c
 * parses and computes; this prints. */
#include "cli/cmd-budget-print.h"

#include <stdlib.h>
#include <string.h>

#include "out/output.h"
#include "model/shape.h"
#include "base/units.h"

static void line_bytes(const char *label, uint64_t v)
{
	char h[32], d[32];
	kvp_format_bytes(v, h, sizeof h);
	kvp_format_u64(v, d, sizeof d);
	printf("  %-44s %12s  (%s B)\n", label, h, d);
}

/* "1 group", "2 groups" */
static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The estimated terms with their spreads and the range they give. */
static void print_band(const struct kvp_budget *b)
{
	if (!b->estimated_terms[0])
		return;
	printf("Uncertainty (estimated: %s)\n", b->estimated_terms);
	if (!b->engine_model.version[0]) {
		printf("  the generic policy has no fitted spreads: no band\n\n");
		return;
	}
	char h[32], l[32], u[32];
	const struct {
		const char *name;
		uint64_t spread;
	} terms[] = {
		{"weights", b->weights_spread_bytes},
		{"activation peak", b->activation_spread_bytes},
		{"overhead", b->overhead_spread_bytes},
		{"engine fraction", b->fraction_spread_bytes},
	};
	for (size_t i = 0; i < sizeof terms / sizeof terms[0]; i++)
		if (i == 1 && b->activation_spread_above_bytes != b->activation_spread_bytes) {
			/* fitted one way more than the other (engine.h) */
			kvp_format_bytes(b->activation_spread_above_bytes, h, sizeof h);
			kvp_format_bytes(b->activation_spread_bytes, l, sizeof l);
			printf("  %-44s +%s / -%s\n", terms[i].name, h, l);
		} else if (terms[i].spread) {
			kvp_format_bytes(terms[i].spread, h, sizeof h);
			printf("  %-44s +/- %s\n", terms[i].name, h);
		}
	kvp_format_bytes(b->kv_pool_low_bytes, l, sizeof l);
	kvp_format_bytes(b->kv_pool_high_bytes, u, sizeof u);
	printf("  KV pool                                      %s .. %s\n", l, u);
	kvp_format_u64(b->max_tokens_low, l, sizeof l);
	kvp_format_u64(b->max_tokens_high, u, sizeof u);
	printf("  max tokens                                   %s .. %s\n", l, u);
	kvp_format_u64(b->max_sequences_low, l, sizeof l);
	kvp_format_u64(b->max_sequences_high, u, sizeof u);
	printf("  max sequences                                %s .. %s\n\n", l, u);
}

/* The shape and the weights it leaves on one GPU, by kind (shape.h). */
static void print_shape(const struct kvp_budget *b)
{
	const struct kvp_spec *s = &b->spec;
	const struct kvp_weights_split *w = &s->weights_split;
	uint32_t dp = kvp_shape_dp(&s->par), ep = kvp_shape_ep(&s->par);
	char t1[64];
	printf("Deployment shape: tp %u x pp %u x dp %u = %u GPU%s", s->par.tp, s->par.pp, dp,
	       kvp_shape_gpus(&s->par), kvp_shape_gpus(&s->par) == 1 ? "" : "s");
	if (ep > 1)
		printf("; experts owned whole by ep %u GPUs (%u each)", ep,
		       s->model->moe_num_experts / ep);
	printf("\nWeights on one GPU%s\n", b->weights_bytes == s->weights_bytes ? ""
			: " (as modelled; --weights-bytes replaces the total below)");
	/* the quantization detected and where it was read (issue 35) */
	char origin[sizeof s->model->path + 192], shown[KVP_TERM_SIZE(sizeof origin)];
	kvp_model_weights_origin(s->model, origin, sizeof origin);
	printf("  format %s%s%s: %s\n", kvp_model_weights_dtype_name(s->model, s->serving_dtype),
	       s->model->expert_dtype == KVP_DTYPE_AUTO ? "" : ", routed experts ",
	       s->model->expert_dtype == KVP_DTYPE_AUTO ? "" : kvp_dtype_name(s->model->expert_dtype),
	       kvp_term_text(shown, sizeof shown, origin));
	uint32_t full = dp > 1 ? s->par.dp_full_tp : 0;
	line_bytes(full & KVP_SHAPE_DP_LM_HEAD ? "embeddings (/ tp), LM head (/ tp x dp)"
					       : "embeddings and LM head (/ tp)", w->embed_bytes);
	line_bytes(full & KVP_SHAPE_DP_DENSE_MLP ? "attn, norms, routers / tp; MLPs / tp x dp"
						 : "attention, dense MLPs, norms, routers (/ tp)",
		   w->dense_bytes);
	if (w->replicated_bytes)
		line_bytes("  of it whole on every GPU (not / tp)",
			   w->replicated_bytes);
	if (b->rotary_cache_bytes)
		line_bytes("  of it the rotary cos/sin cache",
			   b->rotary_cache_bytes);
	if (w->shared_bytes)
		line_bytes(full & KVP_SHAPE_DP_SHARED_EXPERTS ? "shared experts (/ tp x dp)"
							      : "shared experts (/ tp)", w->shared_bytes);
	if (w->routed_bytes)
		line_bytes("routed experts (/ tp x dp)", w->routed_bytes);
	if (w->draft_bytes) {
		char lab[64];
		snprintf(lab, sizeof lab, "speculative draft (%u KV layer%s)", s->draft_layers,
			 s->draft_layers == 1 ? "" : "s");
		line_bytes(lab, w->draft_bytes);
	}
	line_bytes("= weights", w->total_bytes);
	/* every stage sized, the one with the least room governs (budget.h) */
	for (uint32_t i = 0; i < b->stages_shown; i++) {
		const struct kvp_budget_stage *st = &b->stage[i];
		char wb[32], tk[32];
		kvp_format_bytes(st->weights_bytes, wb, sizeof wb);
		kvp_format_u64(st->max_tokens, tk, sizeof tk);
		printf("  stage %u (layers %u-%u): weights %s, max tokens %s, %llu sequences%s\n", i,
		       st->first_layer, st->first_layer + st->num_layers - 1, wb, tk,
		       (unsigned long long)st->max_sequences,
		       i == s->stage ? "  <- the least room: governs" : "");
	}
	if (s->par.pp > b->stages_shown && b->stages_shown)
		printf("  (%u more stages sized, not shown)\n", s->par.pp - b->stages_shown);
	if (dp > 1) {
		kvp_format_u64(b->max_sequences, t1, sizeof t1);
		printf("  each of the %u DP ranks keeps the KV of its own requests: %s x %u "
		       "sequences in all\n", dp, t1, dp);
	}
	printf("\n");
}

/* Bytes per element as printed: "2 B", or with NVFP4's per-element scale
 * "(0.5 B + 1 B scale / 16)", so that the line's product is the total. */
static void elem_text(enum kvp_dtype dt, char *buf, size_t size)
{
	unsigned num, den;
	kvp_dtype_kv_elem_scale(dt, &num, &den);
	double b = kvp_dtype_info(dt)->bits / 8.0;
	if (num)
		snprintf(buf, size, "(%g B + %u B scale / %u)", b, num, den);
	else
		snprintf(buf, size, "%g B", b);
}

/* One line per layer kind: every operand of its product, the scales
 * included, so that the line recomputes from what it shows. */
static void print_kind_lines(const struct kvp_spec *s)
{
	const struct kvp_model *m = s->model;
	unsigned scale = kvp_dtype_info(s->kv_dtype)->kv_scale_bytes;
	char el[64], t1[64], sc[32];
	elem_text(s->kv_dtype, el, sizeof el);
	snprintf(sc, sizeof sc, " + %u B scale", scale);
	for (int k = 0; k < KVP_LAYER_KIND_COUNT; k++) {
		if (!s->count[k] || k == KVP_LAYER_NONE)
			continue;
		const struct kvp_spec_layer *l = NULL;
		for (uint32_t i = 0; i < s->num_layers && !l; i++)
			if (s->layers[i].kind == (enum kvp_layer_kind)k)
				l = &s->layers[i];
		kvp_format_u64(s->kind_token_bytes[k], t1, sizeof t1);
		switch (k) {
		case KVP_LAYER_MLA:
			printf("  mla       %3u layers x %s(r %u + d_rope %u) x %s%s%s = %s B/token\n",
			       s->count[k], scale ? "(" : "", m->mla_kv_lora_rank, m->mla_rope_dim, el,
			       scale ? sc : "", scale ? ")" : "", t1);
			break;
		case KVP_LAYER_MAMBA: {
			char di[32];
			kvp_format_u64((uint64_t)m->mamba_expand * m->hidden_size / s->par.tp, di,
				       sizeof di);
			kvp_format_u64(s->seq_bytes, t1, sizeof t1);
			if (m->linear_key_dim) {
				printf("  linear    %3u layers x (state %u/tp heads x %u x %u + conv (%u - 1) x "
				       "(2 x %u x %u + %u x %u)/tp) elements = %s B/sequence\n", s->count[k],
				       m->linear_num_value_heads, m->linear_key_dim, m->linear_value_dim,
				       m->linear_conv_kernel, m->linear_num_key_heads, m->linear_key_dim,
				       m->linear_num_value_heads, m->linear_value_dim, t1);
				break;
			}
			printf("  mamba     %3u layers x ((d_conv %u - 1) + d_state %u) x %s d_inner/tp"
			       " x %u B = %s B/sequence\n", s->count[k], m->mamba_d_conv,
			       m->mamba_d_state, di, kvp_dtype_info(s->serving_dtype)->bits / 8, t1);
			break;
		}
		default:
			if (m->head_dim == m->head_dim_v)
				printf("  %-9s %3u layers x 2 x %u KV heads x %s%u d_h x %s%s%s = %s B/token",
				       kvp_layer_kind_name((enum kvp_layer_kind)k), s->count[k],
				       s->kv_heads_per_gpu, scale ? "(" : "", m->head_dim, el,
				       scale ? sc : "", scale ? ")" : "", t1);
			else  /* K and V of different widths: each its own scale */
				printf("  %-9s %3u layers x %u KV heads x ((d_k %u + d_v %u) x %s%s%s) ="
				       " %s B/token", kvp_layer_kind_name((enum kvp_layer_kind)k),
				       s->count[k], s->kv_heads_per_gpu, m->head_dim, m->head_dim_v, el,
				       scale ? " + 2 x " : "", scale ? sc + 3 : "", t1);
			if (l && l->window)
				printf(" (window %u tokens)", l->window);
			printf("\n");
		}
	}
	if (scale)
		printf("            (%u B scale per token and head for K and for V; once for an MLA"
		       " latent)\n", scale);
	unsigned num, den;
	kvp_dtype_kv_elem_scale(s->kv_dtype, &num, &den);
	if (num)
		printf("            (%u B fp8 scale per %u elements of K and of V)\n", num, den);
}

/* The budget as a running computation: each "- x" line applies to the value
 * above it and each "=" line is the result, in exact bytes beside the GiB. */
static void print_memory(const struct kvp_budget *b)
{
	printf("Memory budget of one GPU\n");
	line_bytes("GPU memory (as the runtime reports it)", b->gpu_memory_bytes);
	switch (b->engine) {
	case KVP_ENGINE_SGLANG: {
		uint64_t free_before = b->gpu_memory_bytes > b->overhead_bytes
			? b->gpu_memory_bytes - b->overhead_bytes : 0;
		line_bytes("- CUDA context and NCCL, before load", b->overhead_bytes);
		line_bytes("= free memory before load", free_before);
		printf("  x %-44s %12.4f\n", "mem_fraction_static", b->utilization);
		line_bytes("= usable (weights + KV)", b->usable_bytes);
		line_bytes("- weights", b->weights_bytes);
		line_bytes("= KV pool", b->kv_pool_bytes);
		line_bytes("  (activations, in the other fraction)", b->activation_bytes);
		break;
	}
	case KVP_ENGINE_TRTLLM: {
		/* their sum was checked by kvp_budget_compute */
		uint64_t fixed = b->weights_bytes + b->activation_bytes + b->overhead_bytes;
		line_bytes("- weights", b->weights_bytes);
		line_bytes("- activation peak", b->activation_bytes);
		line_bytes("- overhead (CUDA context, NCCL, graphs)", b->overhead_bytes);
		line_bytes("= free after load",
			   b->gpu_memory_bytes > fixed ? b->gpu_memory_bytes - fixed : 0);
		printf("  x %-44s %12.4f\n", "free_gpu_memory_fraction", b->utilization);
		line_bytes("= KV pool", b->kv_pool_bytes);
		break;
	}
	default:
		printf("  x %-44s %12.4f\n", "utilization", b->utilization);
		line_bytes("= usable", b->usable_bytes);
		line_bytes("- weights", b->weights_bytes);
		line_bytes("- activation peak", b->activation_bytes);
		line_bytes("- overhead (CUDA context, NCCL, graphs)", b->overhead_bytes);
		line_bytes("= KV pool", b->kv_pool_bytes);
	}
	if (b->spec.tower_bytes)
		line_bytes("  (of the weights: vision/audio towers)", b->spec.tower_bytes);
	if (b->encoder.items) {
		/* memory/encoder.h: N items of T tokens, the outputs and pixel
		 * values kept through the language model's run, or the tower's
		 * own peak above it */
		char tn[32], tt[32], tp[32], tb[32];
		kvp_format_u64(b->encoder.budget_tokens, tb, sizeof tb);
		kvp_format_u64(b->encoder.items, tn, sizeof tn);
		kvp_format_u64(b->encoder.tokens_per_item, tt, sizeof tt);
		kvp_format_u64(b->encoder.patches, tp, sizeof tp);
		line_bytes("  (of the activation: the encoder profile)", b->encoder_bytes);
		printf("    %s %s item%s x %s tokens (budget %s tokens), %s tower patches\n",
		       tn, b->encoder.video ? "video" : "image", b->encoder.items == 1 ? "" : "s", tt,
		       tb, tp);
		line_bytes("    outputs kept (items x tokens x width x b)", b->encoder.outputs_bytes);
		line_bytes("    pixel values kept (fp32)", b->encoder.pixels_bytes);
		line_bytes("    the tower's own peak, pixels included", b->encoder.tower_peak_bytes);
		printf("    charged: max(kept, tower peak - the language model's peak)\n");
	}
	line_bytes(b->engine == KVP_ENGINE_TRTLLM ? "  (headroom left unused: free after load - KV pool)"
						  : "  (headroom left unused: GPU memory - usable)",
		   b->headroom_bytes);
	if (!b->weights_fit)
		printf("  The weights, activations and overhead do not fit: no KV pool.\n");
	printf("\n");
}

/* The two meanings of "max tokens" (budget.h): many short sequences, where
 * every layer keeps every token, and the longest one sequence, where the
 * windowed layers keep only their windows; the second with the bytes it
 * takes, so the line checks against the pool. */
static void print_one_sequence(const struct kvp_budget *b)
{
	const struct kvp_spec *s = &b->spec;
	bool windowed = s->count[KVP_LAYER_SLIDING] || s->count[KVP_LAYER_CHUNKED] ||
			s->count[KVP_LAYER_MAMBA];
	char t1[64], t2[64], t3[64];
	if (windowed)
		printf("    (every layer keeps every token of a sequence shorter than the windows)\n");
	if (b->max_tokens_one_sequence == KVP_BUDGET_UNBOUNDED) {
		printf("  max tokens, one sequence: no bound (every layer keeps a window or a fixed "
		       "state)\n");
		return;
	}
	uint64_t per = 0;
	if (b->max_tokens_one_sequence && kvp_budget_pool_for(b, b->max_tokens_one_sequence, 1, &per))
		per = 0;
	kvp_format_u64(b->max_tokens_one_sequence, t1, sizeof t1);
	kvp_format_u64(per, t2, sizeof t2);
	kvp_format_u64(b->kv_pool_bytes, t3, sizeof t3);
	if (!b->max_tokens_one_sequence)
		printf("  max tokens, one sequence = 0 (not even one token fits)\n");
	else
		printf("  max tokens, one sequence = %s (the longest whose %s B fit the %s B pool%s)\n",
		       t1, t2, t3, windowed ? "; windowed layers keep only their windows" : "");
}

static void print_paging(const struct kvp_budget *b)
{
	char t1[64], t2[64], t3[64], t4[64], t5[64], t6[64];
	printf("Paging\n");
	kvp_format_bytes(b->page_bytes, t1, sizeof t1);
	kvp_format_u64(b->num_blocks, t2, sizeof t2);
	kvp_format_u64(b->max_tokens, t3, sizeof t3);
	kvp_format_u64(b->page_bytes, t4, sizeof t4);
	kvp_format_u64(b->kv_pool_bytes, t5, sizeof t5);
	bool vllm = b->engine == KVP_ENGINE_VLLM;
	if (vllm) {
		if (b->num_groups > 1)
			printf("  vLLM hybrid KV groups of %u layers (%u %s, %u padding layer %s)\n",
			       b->group_size, b->num_groups, plural(b->num_groups, "group", "groups"),
			       b->padding_layers, plural(b->padding_layers, "slot", "slots"));
		for (int k = 0; k < KVP_LAYER_KIND_COUNT; k++)
			if (b->group[k].layers)
				printf("    %-8s %3u layers -> %u %s, %llu %s per sequence each\n",
				       kvp_layer_kind_name((enum kvp_layer_kind)k), b->group[k].layers,
				       b->group[k].groups, plural(b->group[k].groups, "group", "groups"),
				       (unsigned long long)b->group[k].blocks_per_seq,
				       plural(b->group[k].blocks_per_seq, "block", "blocks"));
		if (b->block_size && b->page_bytes % b->block_size == 0 &&
		    b->page_bytes >= b->block_size) {
			kvp_format_u64(b->page_bytes / b->block_size, t6, sizeof t6);
			printf("  page = %u %s x %s B of one layer = %s (%s B)\n", b->block_size,
			       plural(b->block_size, "token", "tokens"), t6, t1, t4);
		} else {
			printf("  page = one layer's state = %s (%s B)\n", t1, t4);
		}
		if (b->num_groups > 1) {
			/* every group, padded ones too, holds its kind's worst case */
			uint64_t sum = 0;
			printf("  per sequence:");
			for (int k = 0, first = 1; k < KVP_LAYER_KIND_COUNT; k++)
				if (b->group[k].layers) {
					printf("%s %u x %llu", first ? "" : " +", b->group[k].groups,
					       (unsigned long long)b->group[k].blocks_per_seq);
					sum += b->group[k].groups * b->group[k].blocks_per_seq;
					first = 0;
				}
			kvp_format_u64(sum, t6, sizeof t6);
			printf(" = %s blocks\n", t6);
		}
		printf("  one block spans a group of %u layers\n", b->group_size);
		printf("  blocks = floor(%s B KV pool / (%s B page x %u layers)) = %s\n", t5, t4,
		       b->group_size, t2);
		printf("  max tokens, short sequences = floor(%s blocks / %u %s) x %u = %s\n", t2,
		       b->num_groups, plural(b->num_groups, "group", "groups"), b->block_size, t3);
	} else {
		printf("  page = %u %s x %s B = %s (%s B)\n", b->block_size,
		       plural(b->block_size, "token", "tokens"),
		       (kvp_format_u64(b->spec.token_bytes, t6, sizeof t6), t6), t1, t4);
		if (b->engine == KVP_ENGINE_TRTLLM && b->spec.token_bytes) {
			/* TRT-LLM counts tokens, then rounds the blocks up (budget.c) */
			kvp_format_u64(b->kv_pool_bytes / b->spec.token_bytes, t1, sizeof t1);
			printf("  tokens = floor(%s B KV pool / %s B per token) = %s\n", t5, t6, t1);
			printf("  blocks = ceil(%s tokens / %u per block) = %s (TensorRT-LLM rounds up)\n",
			       t1, b->block_size, t2);
		} else {
			printf("  blocks = floor(%s B KV pool / %s B page) = %s\n", t5, t4, t2);
		}
		printf("  max tokens, short sequences = %s blocks x %u = %s\n", t2, b->block_size, t3);
	}
	print_one_sequence(b);
	kvp_format_u64(b->context, t1, sizeof t1);
	kvp_format_bytes(b->seq_bytes, t2, sizeof t2);
	kvp_format_u64(b->max_sequences, t3, sizeof t3);
	kvp_format_u64(b->seq_bytes, t4, sizeof t4);
	uint64_t slot = b->page_bytes * b->group_size;
	if (vllm && slot) {
		kvp_format_u64(b->seq_bytes / slot, t5, sizeof t5);
		kvp_format_u64(b->num_blocks, t6, sizeof t6);
		printf("  one sequence of %s tokens = %s blocks x %s B page x %u layers = %s (%s B)%s\n",
		       t1, t5, (kvp_format_u64(b->page_bytes, t2, sizeof t2), t2), b->group_size,
		       (kvp_format_bytes(b->seq_bytes, t3, sizeof t3), t3), t4,
		       b->num_groups > 1 ? " (vLLM's worst case: windows + max-batched-tokens)" : "");
		kvp_format_u64(b->max_sequences, t3, sizeof t3);
		printf("  max sequences at %s tokens = floor(%s blocks / %s blocks per sequence) = %s\n\n",
		       t1, t6, t5, t3);
	} else {
		printf("  one sequence of %s tokens takes %s (%s B) of the pool\n", t1, t2, t4);
		printf("  max sequences at %s tokens = floor(%s B KV pool / %s B per sequence) = %s\n\n",
		       t1, t5, t4, t3);
	}
}

void kvp_budget_print_table(const struct kvp_budget *b, const struct kvp_gpu *g,
			    const struct kvp_budget_answers *a)
{
	bool ask_ctx = a->ask_ctx, ask_util = a->ask_util;
	uint64_t max_ctx = a->max_ctx;
	double util = a->util;
	const struct kvp_spec *s = &b->spec;
	const struct kvp_model *m = s->model;
	char t1[64], t2[64], t3[64], t4[64];
	char mn[KVP_TERM_SIZE(sizeof m->name)], gn[KVP_TERM_SIZE(sizeof g->name)];
	printf("kvplan budget: %s on %s, engine %s%s%s, tp %u, pp %u, dtype %s, KV %s, block %u\n",
	       kvp_term_text(mn, sizeof mn, m->name), kvp_term_text(gn, sizeof gn, g->name),
	       kvp_engine_name(b->engine), b->engine_model.version[0] ? " " : "",
	       b->engine_model.version, s->par.tp, s->par.pp, kvp_dtype_name(s->serving_dtype),
	       kvp_dtype_name(s->kv_dtype), b->block_size);
	if (b->engine_model.version[0])
		printf("follows %s %s (%s), profiling %u sequences x %llu batched tokens\n",
		       kvp_engine_name(b->engine), b->engine_model.version, b->engine_model.source,
		       b->max_num_seqs, (unsigned long long)b->max_batched_tokens);
	printf("\n");
	print_shape(b);

	printf("KV cache per token on one GPU (layers %u-%u of %u)\n", s->first_layer,
	       s->first_layer + s->num_layers - 1, m->num_layers);
	print_kind_lines(s);
	kvp_format_u64(s->token_bytes, t1, sizeof t1);
	kvp_format_u64(s->token_bytes_total, t2, sizeof t2);
	printf("  = %s B per token on this GPU; whole model %s B per token\n", t1, t2);
	kvp_format_u64(b->context, t1, sizeof t1);
	kvp_format_u64(b->batch, t2, sizeof t2);
	kvp_format_bytes(b->kv_bytes, t3, sizeof t3);
	printf("  %s %s x %s tokens hold %s of KV on this GPU\n\n", t2,
	       plural(b->batch, "sequence", "sequences"), t1, t3);

	print_memory(b);
	print_paging(b);
	print_band(b);
	kvp_format_u64(b->context, t1, sizeof t1);
	kvp_format_u64(b->max_sequences, t3, sizeof t3);
	kvp_format_u64(b->batch, t4, sizeof t4);
	const char *seqs = plural(b->batch, "sequence", "sequences");
	printf("Fit: %s %s x %s tokens %s (at most %s)\n", t4, seqs, t1,
	       b->fits ? "FIT" : "DO NOT FIT", t3);
	if (ask_ctx) {
		kvp_format_u64(max_ctx, t1, sizeof t1);
		printf("Longest context for %s %s: %s tokens%s\n", t4, seqs, t1,
		       max_ctx > m->max_context ? " (beyond the model's max_context)" : "");
	}
	if (ask_util)
		printf("Utilization needed for %s x %s tokens: %.4f%s\n", t4,
		       (kvp_format_u64(b->context, t2, sizeof t2), t2), util,
		       util > 1 ? " (more than the whole GPU)" : "");
}

bool kvp_budget_print_record(const struct kvp_budget *b, const struct kvp_gpu *g,
			     const struct kvp_budget_answers *a, enum kvp_format format,
			     const struct kvp_cli_warnings *warn)
{
	struct kvp_record *r = kvp_record_new();
	if (!r || !kvp_budget_to_record(b, g->name, r)) {
		kvp_record_free(r);
		return false;
	}
	/* always both fields (null when not asked): CSV keeps its columns */
	if (a->ask_ctx)
		kvp_record_u64(r, "max_context", a->max_ctx);
	else
		kvp_record_null(r, "max_context");
	if (a->ask_util)
		kvp_record_f64(r, "utilization_needed", a->util);
	else
		kvp_record_null(r, "utilization_needed");
	/* the encoder profile run's fields come last (issue 36): new columns
	 * go at the end */
	if (!kvp_encoder_to_record(&b->encoder, b->encoder_bytes, r)) {
		kvp_record_free(r);
		return false;
	}
	if (format == KVP_FORMAT_JSON && !kvp_cli_warnings_to_record(warn, r)) {
		kvp_record_free(r);
		return false;
	}
	kvp_cli_write_rows(stdout, format, &r, 1, NULL);
	kvp_record_free(r);
	return true;
}
