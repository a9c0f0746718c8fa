/* draft.h: speculative decoding: a draft proposes K tokens, the target
 * verifies them in one pass of K + 1 tokens per sequence; the draft itself
 * and what it adds to one GPU's memory (its weights and KV).  What a step
 * costs and yields is time/speculative.h's.
 *
 * Legend: K = draft tokens per step, a = acceptance rate per position (the
 * chance a draft token is accepted once every one before it was), r = the
 * share of drafted tokens accepted (vLLM's logged accepted / drafted), H = hidden
 * size, I = MLP width, H_q, H_kv = heads, d_h = head dim, L = layers.
 *
 *   draft MODEL  a separate model with the target's vocabulary, run with the
 *                target's tp (vLLM's draft_tensor_parallel_size default): all
 *                its layers' KV and its weights
 *   eagle:K      EAGLE's draft head (SafeAILab/EAGLE, eagle/model/cnets.py:
 *                decoder layers of the target's shape, one in the released
 *                heads, and fc = Linear(2H, H)); it reuses the target's
 *                embeddings and LM head: params = H H_q d_h + 2 H H_kv d_h +
 *                H_q d_h H + 3 H I + 2 H + 2 H^2; KV = one layer of the
 *                target's first attention kind
 *   mtp:K        a multi-token-prediction module (DeepSeek-V3
 *                num_nextn_predict_layers 1): one MoE layer of the target plus
 *                eh_proj 2H x H, embeddings and head shared; its routed and
 *                shared experts are one MoE layer's share of the target's, its
 *                dense part the target's per-layer average; KV one layer
 *
 *   tokens per step  (1 - a^(K+1)) / (1 - a)   (Leviathan et al. 2023, eq. 1),
 *                    or 1 + r K from the logged share (vLLM
 *                    v1/spec_decode/metrics.py: mean acceptance length =
 *                    1 + accepted / drafts, drafted = drafts x K); the two
 *                    differ: a = 0.8, K = 4 gives 3.36, r = 0.8 gives 4.2
 *   step             verify: the target's decode step with K + 1 tokens per
 *                    sequence (the same bytes, (K + 1) x the FLOPs and the
 *                    all-reduce messages) + K draft steps
 *   TPOT             step / tokens per step */
#ifndef KVP_DRAFT_H
#define KVP_DRAFT_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "model/model.h"

enum kvp_speculative_kind {
	KVP_SPECULATIVE_NONE,
	KVP_SPECULATIVE_DRAFT,
	KVP_SPECULATIVE_EAGLE,
	KVP_SPECULATIVE_MTP
};

/* What --spec-accept-rate (and the older --spec-accept) and --spec-acceptance give. */
enum kvp_spec_accept_kind {
	KVP_SPEC_ACCEPT_RATE,          /* a per position, in [0, 1) */
	KVP_SPEC_ACCEPT_SHARE          /* r = accepted / drafted, in [0, 1] */
};

struct kvp_speculative {
	enum kvp_speculative_kind kind;
	uint32_t k;                    /* draft tokens per step */
	enum kvp_spec_accept_kind accept_kind;
	double accept;                 /* a or r, as accept_kind says */
	struct kvp_model draft;        /* DRAFT: the model; EAGLE/MTP: the head as a 1-layer model */
	uint64_t head_params;          /* EAGLE/MTP: the target's LM head each draft step runs */
};

/* Parse --spec-draft (MODEL | eagle:K | mtp:K; a MODEL drafts 4 tokens, or
 * MODEL:K) and the per-position acceptance rate a (--spec-accept-rate,
 * --spec-accept) for `target`.  Errors name "spec-draft" (a draft with
 * another vocabulary, mtp on a model without experts, K out of 1..16 or
 * followed by more text, a draft profile's own error with its
 * file:line:col) or "spec-accept" (a outside [0, 1)). */
kvp_status kvp_speculative_parse(const char *draft, const char *accept,
				 const struct kvp_model *target, struct kvp_speculative *out,
				 struct kvp_error *err);

/* Add the draft to a built per-GPU spec of the target (same dtypes, tp): its
 * layers join the layer list (so the KV pool and paging count them) and its
 * weights the weights (weights_split.draft_bytes). */
kvp_status kvp_speculative_apply(const struct kvp_speculative *s, struct kvp_spec *spec,
				 struct kvp_error *err);

/* Replace the acceptance with the share of drafted tokens accepted
 * (--spec-acceptance: "0.8" or "80%", in [0, 1]).  USAGE naming
 * "spec-acceptance" otherwise. */
kvp_status kvp_speculative_parse_acceptance(const char *share, struct kvp_speculative *out,
					    struct kvp_error *err);

/* Expected tokens per verify step: (1 - a^(K+1)) / (1 - a), or 1 + r K. */
double kvp_speculative_tokens_per_step(const struct kvp_speculative *s);

#endif
