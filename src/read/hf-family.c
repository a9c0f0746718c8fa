/* hf-family.c: which model family a config.json describes, and the rules
 * that follow from the family alone.
 *
 * The family comes from model_type (the text_config's first, then the
 * wrapper's) and picks transformers' class defaults, e.g. whether the
 * embeddings are tied when the key is absent (architectures.md 0.11).  The
 * KV-head count follows vLLM's get_total_num_kv_heads precedence
 * (architectures.md 0.3): Falcon's multi_query, attn_config.kv_n_heads,
 * n_head_kv, num_kv_heads, num_key_value_heads, multi_query_group_num, else
 * the attention heads.  The model's display name comes from the path. */
#include "read/hf-private.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* model_type -> family, and the class default of tie_word_embeddings when the
 * key is absent (architectures.md 0.11: PretrainedConfig's true is inherited
 * by GPT-2 and Falcon; Gemma classes say true; the Llama, Mistral, Mixtral,
 * Qwen2/3, Phi-3, DeepSeek, gpt-oss, Jamba, GPT-NeoX and Llama 4 classes say
 * false). */
static const struct {
	const char *model_type;
	enum family fam;
	bool tie;
} families[] = {
	{"llama", FAM_LLAMA, false},
	{"mistral", FAM_MISTRAL, false},
	{"mixtral", FAM_MIXTRAL, false},
	{"phi3", FAM_PHI3, false},
	{"qwen2", FAM_QWEN2, false},
	{"qwen2_moe", FAM_QWEN2_MOE, false},
	/* the text models of Qwen2-VL and Qwen2.5-VL are Qwen2 (vLLM
	 * qwen2_vl.py, qwen2_5_vl.py build Qwen2Model: q/k/v biases) */
	{"qwen2_vl", FAM_QWEN2, false},
	{"qwen2_5_vl", FAM_QWEN2, false},
	{"qwen3", FAM_QWEN3, false},
	{"qwen3_moe", FAM_QWEN3_MOE, false},
	{"qwen3_next", FAM_QWEN3_NEXT, false},
	{"gemma", FAM_GEMMA, true},
	{"gemma2", FAM_GEMMA2, true},
	{"gemma3", FAM_GEMMA3, true},
	{"gemma3_text", FAM_GEMMA3, true},
	{"cohere2", FAM_COHERE2, true},
	{"falcon", FAM_FALCON, true},
	{"RefinedWeb", FAM_FALCON, true},
	{"RefinedWebModel", FAM_FALCON, true},
	{"gpt2", FAM_GPT2, true},
	{"gpt_neox", FAM_NEOX, false},
	{"phi", FAM_PHI, false},
	{"deepseek_v2", FAM_DEEPSEEK_V2, false},
	{"deepseek_v3", FAM_DEEPSEEK_V3, false},
	{"deepseek_v32", FAM_DEEPSEEK_V3, false},
	{"kimi_k2", FAM_DEEPSEEK_V3, false},
	{"gpt_oss", FAM_GPT_OSS, false},
	{"jamba", FAM_JAMBA, false},
	{"llama4", FAM_LLAMA4, false},
	{"llama4_text", FAM_LLAMA4, false},
};

/* ------------------------------------------------------------ family */

void hf_find_family(struct hf *h, bool *tie_default)
{
	char type[64] = "", top_type[64] = "";
	/* model_type of a wrong type is not fatal: it only picks defaults */
	const struct kvp_node *n = kvp_map_get(h->cfg, "model_type");
	if (n && n->type == KVP_NODE_SCALAR)
		snprintf(type, sizeof type, "%s", n->value);
	n = kvp_map_get(h->top, "model_type");
	if (n && n->type == KVP_NODE_SCALAR)
		snprintf(top_type, sizeof top_type, "%s", n->value);
	if (!type[0])
		snprintf(type, sizeof type, "%s", top_type);
	snprintf(h->model_type, sizeof h->model_type, "%s", type);
	h->fam = FAM_GENERIC;
	*tie_default = true; /* PretrainedConfig */
	for (int pass = 0; pass < 2; pass++) {
		const char *t = pass ? top_type : type;
		for (size_t i = 0; i < sizeof families / sizeof families[0]; i++)
			if (strcmp(t, families[i].model_type) == 0) {
				h->fam = families[i].fam;
				*tie_default = families[i].tie;
				return;
			}
	}
}

bool hf_is_gemma(enum family f)
{
	return f == FAM_GEMMA || f == FAM_GEMMA2 || f == FAM_GEMMA3;
}

/* Non-gated MLP and LayerNorm with bias (GPT-2, GPT-NeoX, Falcon). */
bool hf_is_layernorm_family(enum family f)
{
	return f == FAM_GPT2 || f == FAM_NEOX || f == FAM_FALCON || f == FAM_PHI;
}

/* "tests/data/hf/Llama-2-7b/config.json" -> "Llama-2-7b"; "x/foo.json" -> "foo". */
void hf_model_name(const char *path, char *buf, size_t size)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	if (slash && strcmp(base, "config.json") == 0) {
		const char *start = slash;
		while (start > path && start[-1] != '/')
			start--;
		size_t len = (size_t)(slash - start);
		if (len && !(len == 1 && start[0] == '.') && !(len == 2 && start[0] == '.' &&
							       start[1] == '.')) {
			snprintf(buf, size, "%.*s", (int)len, start);
			return;
		}
	}
	const char *dot = strrchr(base, '.');
	size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	snprintf(buf, size, "%.*s", (int)len, base);
}

/* ------------------------------------------------------------ KV heads */

/* vLLM get_total_num_kv_heads, in its order (architectures.md 0.3).
 * *where is the node the value came from (NULL: derived). */
kvp_status hf_kv_heads(struct hf *h, uint32_t nq, uint32_t *out, const struct kvp_node **where,
		       const char **field)
{
	*where = NULL;
	*field = "num_attention_heads";
	bool new_arch = false, mq = false;
	kvp_status st;
	if (h->fam == FAM_FALCON && (st = hf_opt_bool(h, h->cfg, "new_decoder_architecture", &new_arch)))
		return st;
	if ((st = hf_opt_bool(h, h->cfg, "multi_query", &mq)))
		return st;
	/* Falcon before the new decoder, and GPTBigCode: one KV head, whatever
	 * num_kv_heads says (re-saved falcon-7b files carry a stray 71). */
	if (mq && !(h->fam == FAM_FALCON && new_arch)) {
		*out = 1;
		return KVP_STATUS_OK;
	}
	const struct kvp_node *attn = kvp_map_get(h->cfg, "attn_config");
	if (attn && attn->type == KVP_NODE_MAP) {
		const struct kvp_node *n = kvp_map_get(attn, "kv_n_heads");
		if (n) {
			uint64_t v;
			if ((st = hf_node_positive(h, n, "attn_config.kv_n_heads", UINT32_MAX, &v)))
				return st;
			*out = (uint32_t)v;
			*where = n;
			*field = "attn_config.kv_n_heads";
			return KVP_STATUS_OK;
		}
	}
	static const char *const keys[] = {"n_head_kv", "num_kv_heads", "num_key_value_heads",
					   "multi_query_group_num", NULL};
	const char *which = NULL;
	const struct kvp_node *n = hf_get_any(h->cfg, keys, &which);
	if (!n) {
		*out = nq;
		return KVP_STATUS_OK;
	}
	uint64_t v;
	if ((st = hf_node_positive(h, n, which, UINT32_MAX, &v)))
		return st;
	*out = (uint32_t)v;
	*where = n;
	*field = which;
	return KVP_STATUS_OK;
}
