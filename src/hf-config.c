/* hf-config.c: turn a Hugging Face config.json into a struct kvp_model.
 *
 * Legend: L = layers, H = hidden size, Nq = attention heads, Nkv = KV heads,
 * d = head dim, V = vocabulary, I = dense FFN width, E = routed experts,
 * k = experts per token, Im = expert FFN width.
 *
 * The JSON is read by the YAML loader (a JSON file is a YAML flow document);
 * JSON null reads as absent.  Every rule follows
 * ../shared/reference/architectures.md sections 0, 2, 3, 4 and 6, which copy
 * what vLLM and transformers do: vLLM's head size and KV-head precedence,
 * transformers' class defaults for keys a file leaves out, the per-family
 * layer patterns, and parameter counts from the config (section 4.1).  The
 * stance: never guess silently where a wrong guess shrinks the KV cache.  A
 * value of the wrong type, a negative or oversized number, heads that do not
 * divide, or a missing required field fails with the file, the line and
 * column of the value (or of the enclosing object when the field is missing),
 * and the field's name.  Keys kvplan does not need are ignored. */
#include "hf-config.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>
#include <string.h>

#include "units.h"
#include "yaml-walk.h"

enum family {
	FAM_GENERIC,    /* unknown model_type: Llama-style gated decoder */
	FAM_LLAMA,
	FAM_MISTRAL,
	FAM_MIXTRAL,
	FAM_PHI3,
	FAM_QWEN2,
	FAM_QWEN2_MOE,
	FAM_QWEN3,
	FAM_QWEN3_MOE,
	FAM_QWEN3_NEXT,
	FAM_GEMMA,
	FAM_GEMMA2,
	FAM_GEMMA3,
	FAM_COHERE2,
	FAM_FALCON,
	FAM_GPT2,
	FAM_NEOX,
	FAM_PHI,        /* phi-1/1.5/2: parallel block, one LayerNorm, biased LM head */
	FAM_DEEPSEEK_V2,
	FAM_DEEPSEEK_V3,
	FAM_GPT_OSS,
	FAM_JAMBA,
	FAM_LLAMA4
};

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

/* vLLM is_deepseek_mla: these model types with kv_lora_rank use MLA. */
static const char *const mla_types[] = {
	"deepseek_v2", "deepseek_v3", "deepseek_v32", "deepseek_mtp", "kimi_k2",
	"kimi_linear", "longcat_flash", "pangu_ultra_moe", "pangu_ultra_moe_mtp", NULL
};

/* Gemma3TextConfig class defaults for keys the multimodal text_config omits
 * (architectures.md 6.5; transformers configuration_gemma3.py). */
#define GEMMA3_VOCAB 262208
#define GEMMA3_PATTERN 6
#define GEMMA3_MAX_POS 131072
#define GEMMA3_HEADS 8
#define GEMMA3_KV_HEADS 4
#define GEMMA_HEAD_DIM 256     /* Gemma, Gemma2 and Gemma3 configs */
#define GEMMA_WINDOW 4096      /* Gemma2/Gemma3 sliding_window default */
#define GPT_OSS_WINDOW 128
#define COHERE2_PATTERN 4
#define QWEN_MAX_WINDOW_LAYERS 28
#define FALCON_MAX_POS 2048    /* FalconConfig max_position_embeddings */
#define LLAMA4_NOPE_INTERVAL 4

struct hf {
	const struct kvp_doc *doc;
	const struct kvp_node *top;  /* the document's object */
	const struct kvp_node *cfg;  /* the text model's object: top or top.text_config */
	struct kvp_error *err;
	struct kvp_model *m;         /* where warnings go */
	enum family fam;
	char model_type[64];
	uint64_t attn_params, shared_params, mlp_params; /* from count_params */
};

/* Record a doubt about the file at `node` (NULL: the file) in the model's
 * warnings, "path:line:col: warning: field: message"; past
 * KVP_MODEL_WARNINGS the last slot says how many more were dropped. */
static void warn(struct hf *h, const struct kvp_node *node, const char *field, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));
static void warn(struct hf *h, const struct kvp_node *node, const char *field, const char *fmt,
		 ...)
{
	struct kvp_model *m = h->m;
	if (m->num_warnings >= KVP_MODEL_WARNINGS) {
		m->num_warnings++;
		snprintf(m->warnings[KVP_MODEL_WARNINGS - 1], KVP_WARNING_MAX,
			 "%s: warning: %u more warnings not shown", h->doc->path,
			 m->num_warnings - KVP_MODEL_WARNINGS + 1);
		return;
	}
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	const struct kvp_node *at = node ? node : h->cfg;
	snprintf(m->warnings[m->num_warnings++], KVP_WARNING_MAX, "%s:%d:%d: warning: %s: %s",
		 h->doc->path, at ? at->line : 0, at ? at->col : 0, field, msg);
}

/* ------------------------------------------------------------ readers */

static bool is_one_of(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(s, *list) == 0)
			return true;
	return false;
}

/* The first of `keys` present (and not null) in map; *which names it. */
static const struct kvp_node *get_any(const struct kvp_node *map, const char *const *keys,
				      const char **which)
{
	for (; *keys; keys++) {
		const struct kvp_node *n = kvp_map_get(map, *keys);
		if (n) {
			if (which)
				*which = *keys;
			return n;
		}
	}
	return NULL;
}

/* A whole number in [0, max]; a quoted "4096" is a string, not a number. */
static kvp_status node_uint(struct hf *h, const struct kvp_node *n, const char *field,
			    uint64_t max, uint64_t *out)
{
	if (n->type == KVP_NODE_SCALAR && n->quoted)
		return kvp_node_fail(h->doc, n, h->err, KVP_STATUS_INVALID, field,
				     "expected a number, got the string \"%s\"", n->value);
	kvp_status st = kvp_node_u64(h->doc, n, field, out, h->err);
	if (st)
		return st;
	if (*out > max)
		return kvp_node_fail(h->doc, n, h->err, KVP_STATUS_OVERFLOW, field,
				     "%s is larger than %llu", n->value, (unsigned long long)max);
	return KVP_STATUS_OK;
}

static kvp_status node_positive(struct hf *h, const struct kvp_node *n, const char *field,
				uint64_t max, uint64_t *out)
{
	kvp_status st = node_uint(h, n, field, max, out);
	if (!st && *out == 0)
		return kvp_node_fail(h->doc, n, h->err, KVP_STATUS_INVALID, field,
				     "must be positive (got 0)");
	return st;
}

/* Optional number `key` of map: *out keeps its default when the key is
 * absent; *found (may be NULL) says which. */
static kvp_status opt_uint(struct hf *h, const struct kvp_node *map, const char *key,
			   bool positive, uint32_t *out, bool *found)
{
	const struct kvp_node *n = kvp_map_get(map, key);
	if (found)
		*found = n != NULL;
	if (!n)
		return KVP_STATUS_OK;
	uint64_t v;
	kvp_status st = positive ? node_positive(h, n, key, UINT32_MAX, &v)
				 : node_uint(h, n, key, UINT32_MAX, &v);
	if (!st)
		*out = (uint32_t)v;
	return st;
}

static kvp_status opt_bool(struct hf *h, const struct kvp_node *map, const char *key, bool *out)
{
	const struct kvp_node *n = kvp_map_get(map, key);
	return n ? kvp_node_bool(h->doc, n, key, out, h->err) : KVP_STATUS_OK;
}

/* A required positive number read under any of `keys` (keys[0] is the name
 * in messages); when none is present, `dflt` (0: none) applies or the error
 * points at the enclosing object. */
static kvp_status req_uint(struct hf *h, const char *const *keys, uint32_t dflt, uint32_t *out,
			   const struct kvp_node **where)
{
	const char *which = keys[0];
	const struct kvp_node *n = get_any(h->cfg, keys, &which);
	if (where)
		*where = n;
	if (!n) {
		if (dflt) {
			*out = dflt;
			return KVP_STATUS_OK;
		}
		char also[128] = "";
		for (size_t i = 1, len = 0; keys[i] && len < sizeof also; i++)
			len += (size_t)snprintf(also + len, sizeof also - len, "%s%s",
						i == 1 ? " (also read as " : ", ", keys[i]);
		if (keys[1])
			strncat(also, ")", sizeof also - strlen(also) - 1);
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID, keys[0],
				     "required field is missing%s", also);
	}
	uint64_t v;
	kvp_status st = node_positive(h, n, which, UINT32_MAX, &v);
	if (!st)
		*out = (uint32_t)v;
	return st;
}

/* ------------------------------------------------------------ family */

static void find_family(struct hf *h, bool *tie_default)
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

static bool is_gemma(enum family f)
{
	return f == FAM_GEMMA || f == FAM_GEMMA2 || f == FAM_GEMMA3;
}

/* Non-gated MLP and LayerNorm with bias (GPT-2, GPT-NeoX, Falcon). */
static bool is_layernorm_family(enum family f)
{
	return f == FAM_GPT2 || f == FAM_NEOX || f == FAM_FALCON || f == FAM_PHI;
}

/* "tests/data/hf/Llama-2-7b/config.json" -> "Llama-2-7b"; "x/foo.json" -> "foo". */
static void model_name(const char *path, char *buf, size_t size)
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
static kvp_status kv_heads(struct hf *h, uint32_t nq, uint32_t *out, const struct kvp_node **where,
			   const char **field)
{
	*where = NULL;
	*field = "num_attention_heads";
	bool new_arch = false, mq = false;
	kvp_status st;
	if (h->fam == FAM_FALCON && (st = opt_bool(h, h->cfg, "new_decoder_architecture", &new_arch)))
		return st;
	if ((st = opt_bool(h, h->cfg, "multi_query", &mq)))
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
			if ((st = node_positive(h, n, "attn_config.kv_n_heads", UINT32_MAX, &v)))
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
	const struct kvp_node *n = get_any(h->cfg, keys, &which);
	if (!n) {
		*out = nq;
		return KVP_STATUS_OK;
	}
	uint64_t v;
	if ((st = node_positive(h, n, which, UINT32_MAX, &v)))
		return st;
	*out = (uint32_t)v;
	*where = n;
	*field = which;
	return KVP_STATUS_OK;
}

/* ------------------------------------------------------------ layers */

/* Linear-attention layers (Qwen3-Next's Gated DeltaNet): their state shape
 * from linear_num_key_heads, linear_num_value_heads, linear_key_head_dim,
 * linear_value_head_dim, linear_conv_kernel_dim; mamba_ssm_dtype, when
 * given, the recurrent state's format. */
static kvp_status linear_state(struct hf *h, struct kvp_model *m)
{
	static const char *const keys[] = {"linear_num_key_heads", "linear_num_value_heads",
					   "linear_key_head_dim", "linear_value_head_dim",
					   "linear_conv_kernel_dim"};
	uint32_t *slots[] = {&m->linear_num_key_heads, &m->linear_num_value_heads,
			     &m->linear_key_dim, &m->linear_value_dim, &m->linear_conv_kernel};
	kvp_status st;
	for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
		bool found = false;
		if ((st = opt_uint(h, h->cfg, keys[i], true, slots[i], &found)))
			return st;
		if (!found)
			return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID, keys[i],
					     "required for linear-attention layers");
	}
	const struct kvp_node *dt = kvp_map_get(h->cfg, "mamba_ssm_dtype");
	if (dt && dt->type == KVP_NODE_SCALAR &&
	    (!kvp_dtype_parse(dt->value, &m->linear_state_dtype) ||
	     !kvp_dtype_info(m->linear_state_dtype)->weights_ok))
		return kvp_node_fail(h->doc, dt, h->err, KVP_STATUS_INVALID, "mamba_ssm_dtype",
				     "unknown dtype '%s'", dt->value);
	return KVP_STATUS_OK;
}

static kvp_status layer_kind_from_string(struct hf *h, const struct kvp_node *item,
					 const char *field, uint8_t *kind)
{
	static const struct {
		const char *name;
		enum kvp_layer_kind kind;
	} names[] = {
		{"full_attention", KVP_LAYER_FULL},
		{"sliding_attention", KVP_LAYER_SLIDING},
		{"chunked_attention", KVP_LAYER_CHUNKED},
		{"linear_attention", KVP_LAYER_MAMBA},
		{"attention", KVP_LAYER_FULL},  /* layers_block_type (Jamba-style) */
		{"mamba", KVP_LAYER_MAMBA},
	};
	if (item->type != KVP_NODE_SCALAR || !item->quoted)
		return kvp_node_fail(h->doc, item, h->err, KVP_STATUS_INVALID, field,
				     "expected a layer type string such as \"full_attention\"");
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (strcmp(item->value, names[i].name) == 0) {
			*kind = (uint8_t)names[i].kind;
			return KVP_STATUS_OK;
		}
	return kvp_node_fail(h->doc, item, h->err, KVP_STATUS_INVALID, field,
			     "unknown layer type \"%s\" (expected full_attention, sliding_attention, "
			     "chunked_attention or linear_attention)", item->value);
}

/* A list of one entry per layer. */
static kvp_status layer_list(struct hf *h, const struct kvp_node *list, const char *field,
			     uint32_t L)
{
	kvp_status st = kvp_node_expect(h->doc, list, field, KVP_NODE_SEQ, h->err);
	if (st)
		return st;
	if (list->n != L)
		return kvp_node_fail(h->doc, list, h->err, KVP_STATUS_INVALID, field,
				     "has %zu entries for %u layers", list->n, L);
	return KVP_STATUS_OK;
}

/* Assign each layer its kind (architectures.md 0.5-0.8 and the section 2
 * pattern rules).  Reads the window, chunk and Mamba sizes it needs. */
static kvp_status assign_layers(struct hf *h, struct kvp_model *m, bool mla)
{
	uint32_t L = m->num_layers;
	kvp_status st;
	for (uint32_t i = 0; i < L; i++)
		m->layers[i] = KVP_LAYER_FULL;

	/* windows: the class defaults apply to the families that have one */
	if (h->fam == FAM_GEMMA2 || h->fam == FAM_GEMMA3 || h->fam == FAM_COHERE2)
		m->sliding_window = GEMMA_WINDOW;
	else if (h->fam == FAM_GPT_OSS)
		m->sliding_window = GPT_OSS_WINDOW;
	/* 0 reads as "no window", as null does */
	if ((st = opt_uint(h, h->cfg, "sliding_window", false, &m->sliding_window, NULL)) ||
	    (st = opt_uint(h, h->cfg, "attention_chunk_size", false, &m->chunk_size, NULL)))
		return st;
	bool has_window = m->sliding_window != 0;

	if (mla) {
		for (uint32_t i = 0; i < L; i++)
			m->layers[i] = KVP_LAYER_MLA;
		return KVP_STATUS_OK;
	}

	const struct kvp_node *types = kvp_map_get(h->cfg, "layer_types");
	const char *types_field = "layer_types";
	if (!types) {
		types = kvp_map_get(h->cfg, "layers_block_type");
		types_field = "layers_block_type";
	}
	if (types) {
		if ((st = layer_list(h, types, types_field, L)))
			return st;
		for (uint32_t i = 0; i < L; i++)
			if ((st = layer_kind_from_string(h, types->items[i], types_field,
							 &m->layers[i])))
				return st;
	} else {
		switch (h->fam) {
		case FAM_GEMMA2:
			/* transformers: sliding if (i + 1) % 2, i.e. even i */
			for (uint32_t i = 0; i < L; i++)
				m->layers[i] = (i + 1) % 2 ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
			break;
		case FAM_GEMMA3:
		case FAM_COHERE2: {
			uint32_t pattern = h->fam == FAM_GEMMA3 ? GEMMA3_PATTERN : COHERE2_PATTERN;
			bool found = false;
			if ((st = opt_uint(h, h->cfg, "sliding_window_pattern", true, &pattern, &found)))
				return st;
			if (!found &&
			    (st = opt_uint(h, h->cfg, "_sliding_window_pattern", true, &pattern, NULL)))
				return st;
			for (uint32_t i = 0; i < L; i++)
				m->layers[i] = (i + 1) % pattern ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
			break;
		}
		case FAM_GPT_OSS:
			for (uint32_t i = 0; i < L; i++)
				m->layers[i] = i % 2 == 0 ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
			break;
		case FAM_QWEN2:
		case FAM_QWEN2_MOE:
		case FAM_QWEN3:
		case FAM_QWEN3_MOE: {
			/* the window is inactive unless use_sliding_window (trap 6.3) */
			bool use = false;
			uint32_t max_window_layers = QWEN_MAX_WINDOW_LAYERS;
			if ((st = opt_bool(h, h->cfg, "use_sliding_window", &use)) ||
			    (st = opt_uint(h, h->cfg, "max_window_layers", false, &max_window_layers,
					   NULL)))
				return st;
			for (uint32_t i = 0; i < L; i++)
				m->layers[i] = use && has_window && i >= max_window_layers
						       ? KVP_LAYER_SLIDING : KVP_LAYER_FULL;
			break;
		}
		case FAM_LLAMA4: {
			if (!m->chunk_size)
				break;
			/* no_rope_layers[i]: 1 = RoPE layer (chunked), 0 = NoPE (global) */
			/* an empty list means "derive it" (transformers Llama4TextConfig:
			 * no_rope_layers if no_rope_layers else the interval rule) */
			const struct kvp_node *nr = kvp_map_get(h->cfg, "no_rope_layers");
			if (nr && nr->type == KVP_NODE_SEQ && nr->n == 0)
				nr = NULL;
			if (nr) {
				if ((st = layer_list(h, nr, "no_rope_layers", L)))
					return st;
				for (uint32_t i = 0; i < L; i++) {
					uint64_t v;
					if ((st = node_uint(h, nr->items[i], "no_rope_layers", 1, &v)))
						return st;
					m->layers[i] = v ? KVP_LAYER_CHUNKED : KVP_LAYER_FULL;
				}
			} else {
				uint32_t interval = LLAMA4_NOPE_INTERVAL;
				if ((st = opt_uint(h, h->cfg, "no_rope_layer_interval", true, &interval,
						   NULL)))
					return st;
				for (uint32_t i = 0; i < L; i++)
					m->layers[i] = (i + 1) % interval ? KVP_LAYER_CHUNKED
									   : KVP_LAYER_FULL;
			}
			break;
		}
		case FAM_QWEN3_NEXT: {
			/* Qwen3NextConfig: full attention every full_attention_interval
			 * layers ((i + 1) % interval == 0), Gated DeltaNet between */
			uint32_t interval = 4;
			if ((st = opt_uint(h, h->cfg, "full_attention_interval", true, &interval, NULL)))
				return st;
			for (uint32_t i = 0; i < L; i++)
				m->layers[i] = (i + 1) % interval ? KVP_LAYER_MAMBA : KVP_LAYER_FULL;
			break;
		}
		case FAM_JAMBA: {
			/* JambaConfig defaults: attention at i % 8 == 4 */
			uint32_t period = 8, offset = 4;
			if ((st = opt_uint(h, h->cfg, "attn_layer_period", true, &period, NULL)) ||
			    (st = opt_uint(h, h->cfg, "attn_layer_offset", false, &offset, NULL)))
				return st;
			if (offset >= period) {
				const struct kvp_node *on = kvp_map_get(h->cfg, "attn_layer_offset");
				return kvp_node_fail(h->doc, on ? on : h->cfg, h->err,
						     KVP_STATUS_INVALID, "attn_layer_offset",
						     "%u is not below attn_layer_period %u", offset,
						     period);
			}
			for (uint32_t i = 0; i < L; i++)
				m->layers[i] = i % period == offset ? KVP_LAYER_FULL : KVP_LAYER_MAMBA;
			break;
		}
		default:
			/* vLLM applies a model-level window to every layer when there is
			 * no per-layer information (Mistral v0.1, Phi-3-mini-4k: trap 6.4) */
			if (has_window)
				for (uint32_t i = 0; i < L; i++)
					m->layers[i] = KVP_LAYER_SLIDING;
			break;
		}
	}

	uint32_t count[KVP_LAYER_KIND_COUNT] = {0};
	for (uint32_t i = 0; i < L; i++)
		count[m->layers[i]]++;
	if (count[KVP_LAYER_SLIDING] && !m->sliding_window)
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID, "sliding_window",
				     "required: %u layer(s) use sliding attention",
				     count[KVP_LAYER_SLIDING]);
	if (count[KVP_LAYER_CHUNKED] && !m->chunk_size)
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID,
				     "attention_chunk_size",
				     "required: %u layer(s) use chunked attention",
				     count[KVP_LAYER_CHUNKED]);
	if (!count[KVP_LAYER_SLIDING])
		m->sliding_window = 0;  /* e.g. Qwen2.5's inactive 131072 */
	if (!count[KVP_LAYER_CHUNKED])
		m->chunk_size = 0;
	if (count[KVP_LAYER_MAMBA] && kvp_map_get(h->cfg, "linear_key_head_dim"))
		return linear_state(h, m);
	if (count[KVP_LAYER_MAMBA]) {
		/* Mamba1 state sizes; JambaConfig defaults 16, 4, 2 */
		bool fs = false, fc = false, fe = false;
		if (h->fam == FAM_JAMBA) {
			m->mamba_d_state = 16;
			m->mamba_d_conv = 4;
			m->mamba_expand = 2;
		}
		if ((st = opt_uint(h, h->cfg, "mamba_d_state", true, &m->mamba_d_state, &fs)) ||
		    (st = opt_uint(h, h->cfg, "mamba_d_conv", true, &m->mamba_d_conv, &fc)) ||
		    (st = opt_uint(h, h->cfg, "mamba_expand", true, &m->mamba_expand, &fe)))
			return st;
		const char *missing = !m->mamba_d_state ? "mamba_d_state"
				    : !m->mamba_d_conv ? "mamba_d_conv"
				    : !m->mamba_expand ? "mamba_expand" : NULL;
		if (missing)
			return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID, missing,
					     "required for the %u Mamba/linear-attention layers "
					     "(their per-sequence state is not modelled otherwise)",
					     count[KVP_LAYER_MAMBA]);
	}
	return KVP_STATUS_OK;
}

/* ------------------------------------------------------------ parameters */

/* Checked sums: any overflow marks the count invalid. */
struct count {
	uint64_t total;   /* all parameters */
	uint64_t active;  /* used per token */
	uint64_t expert;  /* in routed experts */
	/* parts of the dense share a quantization may leave alone (gated
	 * families only): attention or mixer, shared experts, dense MLPs;
	 * shared also gives the model's shared_expert_params, in total and active */
	uint64_t attn, shared, mlp;
	bool overflow;
};

static uint64_t mul(struct count *c, uint64_t a, uint64_t b)
{
	uint64_t r;
	if (!kvp_mul(a, b, &r)) {
		c->overflow = true;
		return 0;
	}
	return r;
}

static uint64_t mul3(struct count *c, uint64_t a, uint64_t b, uint64_t d)
{
	return mul(c, mul(c, a, b), d);
}

static uint64_t sum(struct count *c, uint64_t a, uint64_t b)
{
	uint64_t r;
	if (!kvp_add(a, b, &r)) {
		c->overflow = true;
		return 0;
	}
	return r;
}

/* Parameters every token uses. */
static void add_dense(struct count *c, uint64_t x)
{
	c->total = sum(c, c->total, x);
	c->active = sum(c, c->active, x);
}

/* E experts of `each` parameters, k of them active. */
static void add_experts(struct count *c, uint64_t E, uint64_t k, uint64_t each)
{
	uint64_t all = mul(c, E, each);
	c->total = sum(c, c->total, all);
	c->expert = sum(c, c->expert, all);
	c->active = sum(c, c->active, mul(c, k, each));
}

/* Which layers have a routed-expert FFN. */
struct moe_plan {
	uint32_t E, k, Im;           /* experts, per token, expert FFN width */
	uint32_t first_dense;        /* DeepSeek first_k_dense_replace */
	uint32_t layer_freq;         /* DeepSeek moe_layer_freq */
	uint32_t sparse_step;        /* Qwen-MoE decoder_sparse_step */
	uint32_t period, offset;     /* Jamba expert_layer_period/offset */
	uint32_t interleave;         /* Llama 4 interleave_moe_layer_step */
	uint8_t dense_only[KVP_MAX_LAYERS]; /* Qwen-MoE mlp_only_layers / not Llama 4 moe_layers */
};

static bool moe_layer(const struct hf *h, const struct moe_plan *p, uint32_t i)
{
	if (!p->E || p->dense_only[i])
		return false;
	switch (h->fam) {
	case FAM_DEEPSEEK_V2:
	case FAM_DEEPSEEK_V3:
		return i >= p->first_dense && i % p->layer_freq == 0;
	case FAM_QWEN2_MOE:
	case FAM_QWEN3_MOE:
	case FAM_QWEN3_NEXT:
		return (i + 1) % p->sparse_step == 0;
	case FAM_JAMBA:
		return i % p->period == p->offset;
	case FAM_LLAMA4:
		return (i + 1) % p->interleave == 0;
	default:
		return true;
	}
}

/* A list of layer indices into flags (value 1). */
static kvp_status index_list(struct hf *h, const char *key, uint32_t L, uint8_t *flags,
			     bool *found)
{
	const struct kvp_node *list = kvp_map_get(h->cfg, key);
	*found = list != NULL;
	if (!list)
		return KVP_STATUS_OK;
	kvp_status st = kvp_node_expect(h->doc, list, key, KVP_NODE_SEQ, h->err);
	for (size_t j = 0; !st && j < list->n; j++) {
		uint64_t v;
		st = node_uint(h, list->items[j], key, L - 1, &v);
		if (!st)
			flags[v] = 1;
	}
	return st;
}

static kvp_status moe_read(struct hf *h, const struct kvp_model *m, struct moe_plan *p)
{
	static const char *const e_keys[] = {"num_experts", "moe_num_experts", "n_routed_experts",
					     "num_local_experts", NULL};
	static const char *const k_keys[] = {"num_experts_per_tok", "experts_per_token",
					     "moe_top_k", NULL};
	kvp_status st;
	memset(p, 0, sizeof *p);
	p->layer_freq = p->sparse_step = p->interleave = 1;
	p->period = 2;
	p->offset = 1;
	const char *which = e_keys[0];
	const struct kvp_node *en = get_any(h->cfg, e_keys, &which), *kn;
	uint64_t v;
	if (h->fam == FAM_JAMBA) {
		p->E = 16;  /* JambaConfig defaults */
		p->k = 2;
	}
	if (en) {
		if ((st = node_uint(h, en, which, UINT32_MAX, &v)))
			return st;
		p->E = (uint32_t)v;
	}
	if (!p->E)
		return KVP_STATUS_OK;
	which = k_keys[0];
	kn = get_any(h->cfg, k_keys, &which);
	if (kn) {
		if ((st = node_positive(h, kn, which, UINT32_MAX, &v)))
			return st;
		p->k = (uint32_t)v;
	}
	if (!p->k)
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID,
				     "num_experts_per_tok", "required field is missing for %u experts",
				     p->E);
	if (p->k > p->E)
		return kvp_node_fail(h->doc, kn ? kn : h->cfg, h->err, KVP_STATUS_INVALID, which,
				     "%u experts per token but only %u experts", p->k, p->E);
	/* expert width: moe_intermediate_size, else intermediate_size (Mixtral,
	 * gpt-oss, Jamba, Llama 4) */
	p->Im = m->intermediate_size;
	if ((st = opt_uint(h, h->cfg, "moe_intermediate_size", true, &p->Im, NULL)))
		return st;
	if (!p->Im)
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID,
				     "moe_intermediate_size", "required field is missing for %u experts",
				     p->E);
	bool found;
	switch (h->fam) {
	case FAM_DEEPSEEK_V2:
	case FAM_DEEPSEEK_V3:
		if ((st = opt_uint(h, h->cfg, "first_k_dense_replace", false, &p->first_dense, NULL)) ||
		    (st = opt_uint(h, h->cfg, "moe_layer_freq", true, &p->layer_freq, NULL)))
			return st;
		break;
	case FAM_QWEN2_MOE:
	case FAM_QWEN3_MOE:
	case FAM_QWEN3_NEXT:
		if ((st = opt_uint(h, h->cfg, "decoder_sparse_step", true, &p->sparse_step, NULL)) ||
		    (st = index_list(h, "mlp_only_layers", m->num_layers, p->dense_only, &found)))
			return st;
		break;
	case FAM_JAMBA:
		if ((st = opt_uint(h, h->cfg, "expert_layer_period", true, &p->period, NULL)) ||
		    (st = opt_uint(h, h->cfg, "expert_layer_offset", false, &p->offset, NULL)))
			return st;
		if (p->offset >= p->period) {
			const struct kvp_node *on = kvp_map_get(h->cfg, "expert_layer_offset");
			return kvp_node_fail(h->doc, on ? on : h->cfg, h->err, KVP_STATUS_INVALID,
					     "expert_layer_offset",
					     "%u is not below expert_layer_period %u", p->offset,
					     p->period);
		}
		break;
	case FAM_LLAMA4: {
		uint8_t moe[KVP_MAX_LAYERS] = {0};
		if ((st = opt_uint(h, h->cfg, "interleave_moe_layer_step", true, &p->interleave,
				   NULL)) ||
		    (st = index_list(h, "moe_layers", m->num_layers, moe, &found)))
			return st;
		if (found) {
			p->interleave = 1;
			for (uint32_t i = 0; i < m->num_layers; i++)
				p->dense_only[i] = !moe[i];
		}
		break;
	}
	default:
		break;
	}
	return KVP_STATUS_OK;
}

/* MLA attention per layer (architectures.md 4.1, DeepSeek-V3 = 187,107,328):
 * q = H*q_lora + q_lora (norm) + q_lora*Nq*(nope+rope)  [or H*Nq*(nope+rope)]
 * kv = H*(kv_lora+rope) + kv_lora (norm) + kv_lora*Nq*(nope+v);  o = Nq*v*H */
static kvp_status mla_attention(struct hf *h, const struct kvp_model *m, struct count *c,
				uint64_t *out)
{
	uint32_t q_lora = 0, nope = 0, v = 0;
	bool fq;
	kvp_status st;
	if ((st = opt_uint(h, h->cfg, "q_lora_rank", true, &q_lora, &fq)) ||
	    (st = opt_uint(h, h->cfg, "qk_nope_head_dim", true, &nope, NULL)) ||
	    (st = opt_uint(h, h->cfg, "v_head_dim", true, &v, NULL)))
		return st;
	if (!nope || !v)
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID,
				     !nope ? "qk_nope_head_dim" : "v_head_dim",
				     "required field is missing for MLA");
	uint64_t H = m->hidden_size, Nq = m->num_heads, r = m->mla_kv_lora_rank,
		 rope = m->mla_rope_dim, qk = nope + rope, a = 0;
	if (fq)
		a = sum(c, sum(c, mul(c, H, q_lora), q_lora), mul3(c, q_lora, Nq, qk));
	else
		a = mul3(c, H, Nq, qk);
	a = sum(c, a, sum(c, sum(c, mul(c, H, r + rope), r), mul3(c, r, Nq, nope + v)));
	*out = sum(c, a, mul3(c, Nq, v, H));
	return KVP_STATUS_OK;
}

/* Mamba1 mixer (Jamba), architectures.md 4.1: in_proj H*2*di, conv di*d_conv
 * (+ di bias), x_proj di*(dt_rank + 2*d_state), dt_proj dt_rank*di + di,
 * A_log di*d_state, D di, out_proj di*H, and the dt/B/C RMSNorms
 * dt_rank + 2*d_state that JambaMambaMixer always has. */
static kvp_status mamba_mixer(struct hf *h, const struct kvp_model *m, struct count *c,
			      uint64_t *out)
{
	uint64_t H = m->hidden_size, di = (uint64_t)m->mamba_expand * H, ds = m->mamba_d_state,
		 dc = m->mamba_d_conv, dt = (H + 15) / 16;  /* "auto": ceil(H / 16) */
	bool conv_bias = true, proj_bias = false;
	kvp_status st;
	const struct kvp_node *n = kvp_map_get(h->cfg, "mamba_dt_rank");
	if (n && !(n->type == KVP_NODE_SCALAR && strcmp(n->value, "auto") == 0)) {
		if ((st = node_positive(h, n, "mamba_dt_rank", UINT32_MAX, &dt)))
			return st;
	}
	if ((st = opt_bool(h, h->cfg, "mamba_conv_bias", &conv_bias)) ||
	    (st = opt_bool(h, h->cfg, "mamba_proj_bias", &proj_bias)))
		return st;
	uint64_t a = mul3(c, H, 2, di);
	a = sum(c, a, mul(c, di, dc));
	if (conv_bias)
		a = sum(c, a, di);
	a = sum(c, a, mul(c, di, sum(c, dt, 2 * ds)));
	a = sum(c, a, sum(c, mul(c, dt, di), di));
	a = sum(c, a, sum(c, mul(c, di, ds), di));
	a = sum(c, a, mul(c, di, H));
	if (proj_bias)
		a = sum(c, a, 2 * di + H);
	*out = sum(c, a, dt + 2 * ds);
	return KVP_STATUS_OK;
}

/* Gated DeltaNet mixer (Qwen3-Next; transformers Qwen3NextGatedDeltaNet):
 * in_proj_qkvz H x (2 H_k d_k + 2 H_v d_v), in_proj_ba H x 2 H_v, a depthwise
 * conv1d over q, k, v (conv_dim x kernel, no bias), A_log and dt_bias (H_v
 * each), the gated RMSNorm (d_v) and out_proj H_v d_v x H. */
static uint64_t gdn_mixer(const struct kvp_model *m, struct count *c)
{
	uint64_t H = m->hidden_size, hk = m->linear_num_key_heads, hv = m->linear_num_value_heads,
		 dk = m->linear_key_dim, dv = m->linear_value_dim;
	uint64_t conv_dim = sum(c, mul3(c, 2, hk, dk), mul(c, hv, dv));
	uint64_t a = mul(c, H, sum(c, mul3(c, 2, hk, dk), mul3(c, 2, hv, dv)));
	a = sum(c, a, mul3(c, H, 2, hv));
	a = sum(c, a, mul(c, conv_dim, m->linear_conv_kernel));
	a = sum(c, a, 2 * hv + dv);
	return sum(c, a, mul3(c, hv, dv, H));
}

/* GPT-2 / GPT-NeoX / Falcon layers: fused QKV, dense, a 2-matrix MLP and
 * LayerNorms with bias; biases unless Falcon's `bias` is false. */
static kvp_status count_layernorm_family(struct hf *h, const struct kvp_model *m, struct count *c)
{
	kvp_status st;
	uint64_t H = m->hidden_size, Nq = m->num_heads, Nkv = m->num_kv_heads, d = m->head_dim;
	bool bias = h->fam != FAM_FALCON, parallel = true, new_arch = false;
	uint32_t n_ln = 2;
	if (h->fam == FAM_FALCON &&
	    ((st = opt_bool(h, h->cfg, "bias", &bias)) ||
	     (st = opt_bool(h, h->cfg, "parallel_attn", &parallel)) ||
	     (st = opt_bool(h, h->cfg, "new_decoder_architecture", &new_arch)) ||
	     (st = opt_uint(h, h->cfg, "num_ln_in_parallel_attn", true, &n_ln, NULL))))
		return st;
	uint64_t qkv_out = (Nq + 2 * Nkv) * d;
	uint64_t layer = sum(c, mul(c, H, qkv_out), mul(c, Nq * d, H));
	if (bias)
		layer = sum(c, layer, qkv_out + H);
	uint64_t I = m->intermediate_size;
	layer = sum(c, layer, mul3(c, 2, H, I));
	if (bias)
		layer = sum(c, layer, I + H);
	/* LayerNorms (weight + bias): two per layer, except old Falcon's
	 * parallel block which has only input_layernorm */
	uint64_t lns = 2;
	if (h->fam == FAM_FALCON)
		lns = new_arch ? n_ln : parallel ? 1 : 2;
	else if (h->fam == FAM_PHI)
		lns = 1;  /* PhiDecoderLayer: input_layernorm feeds attention and MLP */
	layer = sum(c, layer, lns * 2 * H);
	add_dense(c, mul(c, m->num_layers, layer));
	return KVP_STATUS_OK;
}

/* Decoder layers of the RMSNorm, gated-MLP families (Llama and the rest):
 * attention (standard, MLA or a Mamba mixer), norms, dense or MoE FFN. */
static kvp_status count_gated_layers(struct hf *h, const struct kvp_model *m,
				     const struct moe_plan *p, struct count *cp)
{
	struct count c = *cp;
	kvp_status st;
	uint64_t L = m->num_layers, H = m->hidden_size, Nq = m->num_heads, Nkv = m->num_kv_heads,
		 d = m->head_dim;
	bool mla = m->layers[0] == KVP_LAYER_MLA;

	/* attention of a standard layer: q, k, v, o [+ biases] [+ q/k norm] [+ sinks] */
	bool attn_bias = false, mlp_bias = false;
	if ((st = opt_bool(h, h->cfg, "attention_bias", &attn_bias)) ||
	    (st = opt_bool(h, h->cfg, "mlp_bias", &mlp_bias)))
		return st;
	uint64_t std_attn = sum(&c, mul3(&c, H, Nq, d), mul3(&c, 2 * H, Nkv, d));
	std_attn = sum(&c, std_attn, mul3(&c, Nq, d, H));
	if (h->fam == FAM_QWEN2 || h->fam == FAM_QWEN2_MOE)
		std_attn = sum(&c, std_attn, (Nq + 2 * Nkv) * d);      /* q, k, v bias */
	else if (attn_bias)
		std_attn = sum(&c, std_attn, (Nq + 2 * Nkv) * d + H);  /* and o bias */
	if (h->fam == FAM_QWEN3 || h->fam == FAM_QWEN3_MOE || h->fam == FAM_GEMMA3 ||
	    h->fam == FAM_QWEN3_NEXT)
		std_attn = sum(&c, std_attn, 2 * d);                   /* q_norm, k_norm */
	if (h->fam == FAM_QWEN3_NEXT)
		std_attn = sum(&c, std_attn, mul3(&c, H, Nq, d));      /* q_proj's output gate */
	if (h->fam == FAM_GPT_OSS)
		std_attn = sum(&c, std_attn, Nq);                      /* sinks */
	uint64_t attn = std_attn, mamba = 0;
	if (mla && (st = mla_attention(h, m, &c, &attn)))
		return st;
	bool any_mamba = false;
	for (uint32_t i = 0; i < L; i++)
		any_mamba |= m->layers[i] == KVP_LAYER_MAMBA;
	if (any_mamba && m->linear_key_dim)
		mamba = gdn_mixer(m, &c);
	else if (any_mamba && (st = mamba_mixer(h, m, &c, &mamba)))
		return st;

	/* dense FFN width: Llama 4 keeps the expert width in intermediate_size */
	uint32_t dense_I = m->intermediate_size;
	if (h->fam == FAM_LLAMA4 &&
	    (st = opt_uint(h, h->cfg, "intermediate_size_mlp", true, &dense_I, NULL)))
		return st;
	/* shared experts: DeepSeek n_shared_experts of Im; Qwen2-MoE one of
	 * shared_expert_intermediate_size plus its sigmoid gate; Llama 4 one of Im */
	uint32_t n_shared = 0, shared_I = 0;
	if ((h->fam == FAM_DEEPSEEK_V2 || h->fam == FAM_DEEPSEEK_V3) &&
	    (st = opt_uint(h, h->cfg, "n_shared_experts", false, &n_shared, NULL)))
		return st;
	if ((h->fam == FAM_QWEN2_MOE || h->fam == FAM_QWEN3_NEXT) &&
	    (st = opt_uint(h, h->cfg, "shared_expert_intermediate_size", false, &shared_I, NULL)))
		return st;
	uint64_t shared = mul3(&c, n_shared, 3 * H, p->Im);
	if (shared_I)
		shared = sum(&c, shared, sum(&c, mul3(&c, 3, H, shared_I), H));
	if (h->fam == FAM_LLAMA4)
		shared = sum(&c, shared, mul3(&c, 3, H, p->Im));
	/* one expert: gated 3*H*Im; gpt-oss fuses gate/up with biases */
	uint64_t expert = h->fam == FAM_GPT_OSS
		? sum(&c, sum(&c, mul3(&c, H, 2, p->Im), 2ULL * p->Im), sum(&c, mul(&c, p->Im, H), H))
		: mul3(&c, 3, H, p->Im);
	/* router H*E, + E bias (gpt-oss router bias, DeepSeek-V3 e_score_correction_bias) */
	uint64_t router = mul(&c, H, p->E);
	if (h->fam == FAM_GPT_OSS || h->fam == FAM_DEEPSEEK_V3)
		router = sum(&c, router, p->E);
	uint64_t norms = (h->fam == FAM_GEMMA2 || h->fam == FAM_GEMMA3 ? 4 : 2) * H;

	for (uint32_t i = 0; i < L && !c.overflow; i++) {
		add_dense(&c, m->layers[i] == KVP_LAYER_MAMBA ? mamba : attn);
		c.attn = sum(&c, c.attn, m->layers[i] == KVP_LAYER_MAMBA ? mamba : attn);
		add_dense(&c, norms);
		if (moe_layer(h, p, i)) {
			add_dense(&c, sum(&c, router, shared));
			c.shared = sum(&c, c.shared, shared);
			add_experts(&c, p->E, p->k, expert);
		} else {
			if (!dense_I)
				return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID,
						     "intermediate_size",
						     "required field is missing (layer %u has a "
						     "dense MLP)", i);
			uint64_t mlp = mul3(&c, 3, H, dense_I);
			if (mlp_bias)
				mlp = sum(&c, mlp, 2ULL * dense_I + H);
			add_dense(&c, mlp);
			c.mlp = sum(&c, c.mlp, mlp);
		}
	}
	*cp = c;
	return KVP_STATUS_OK;
}

/* Count params, active_params and expert_params (architectures.md 4.1). */
static kvp_status count_params(struct hf *h, struct kvp_model *m)
{
	struct count c = {0};
	struct moe_plan *p = &(struct moe_plan){0};
	kvp_status st;
	uint64_t H = m->hidden_size, V = m->vocab_size;
	if ((st = moe_read(h, m, p)))
		return st;
	m->moe_num_experts = p->E;
	m->moe_experts_per_token = p->E ? p->k : 0;
	m->moe_intermediate_size = p->E ? p->Im : 0;

	/* embeddings: V*H, the LM head again unless tied, GPT-2's learned positions */
	add_dense(&c, mul(&c, V, H));
	if (!m->tie_word_embeddings)
		add_dense(&c, mul(&c, V, H));
	if (h->fam == FAM_GPT2)
		add_dense(&c, mul(&c, m->max_context ? m->max_context : 1024, H));
	if (h->fam == FAM_PHI && !m->tie_word_embeddings)
		add_dense(&c, V);  /* phi's lm_head has a bias */
	/* final norm: LayerNorm has a bias */
	add_dense(&c, is_layernorm_family(h->fam) ? 2 * H : H);

	if (is_layernorm_family(h->fam)) {
		if ((st = count_layernorm_family(h, m, &c)))
			return st;
	} else if ((st = count_gated_layers(h, m, p, &c))) {
		return st;
	}
	if (c.overflow)
		return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_OVERFLOW, "params",
				     "the parameter count does not fit in 64 bits");
	m->params = c.total;
	m->active_params = c.active;
	m->expert_params = c.expert;
	h->attn_params = c.attn;
	h->shared_params = c.shared;
	h->mlp_params = c.mlp;
	m->shared_expert_params = c.shared;
	return KVP_STATUS_OK;
}

/* ------------------------------------------------------------ dtypes */

static kvp_status read_dtype(struct hf *h, struct kvp_model *m)
{
	static const char *const keys[] = {"torch_dtype", "dtype", NULL};
	const char *which = keys[0];
	const struct kvp_node *n = get_any(h->top, keys, &which);
	if (!n && h->cfg != h->top)
		n = get_any(h->cfg, keys, &which);
	if (!n) {
		m->dtype = KVP_DTYPE_FP32;  /* vLLM treats a missing dtype as float32 */
		return KVP_STATUS_OK;
	}
	char buf[32];
	kvp_status st = kvp_node_str(h->doc, n, which, buf, sizeof buf, h->err);
	if (st)
		return st;
	enum kvp_dtype dt;
	if (!kvp_dtype_parse(buf, &dt) ||
	    !(dt == KVP_DTYPE_FP32 || dt == KVP_DTYPE_FP16 || dt == KVP_DTYPE_BF16 ||
	      dt == KVP_DTYPE_AUTO))
		return kvp_node_fail(h->doc, n, h->err, KVP_STATUS_INVALID, which,
				     "unknown dtype \"%s\" (expected float32, float16 or bfloat16)",
				     buf);
	m->dtype = dt;
	return KVP_STATUS_OK;
}

/* ------------------------------------------------------------ quantization
 *
 * quantization_config, per quant_method (the layouts as the checkpoints store
 * them; architectures.md 4.2):
 *   fp8, fbgemm_fp8        1 byte; per-tensor, per-channel or 128x128 block
 *                          scales (at most 4/16384 B per parameter: not counted)
 *   compressed-tensors     config_groups.*.weights: num_bits, type int|float,
 *                          strategy group (group_size) or channel/tensor/block;
 *                          group scales in 16 bits (fp8 for 4-bit floats,
 *                          nvfp4), a num_bits zero per group when not symmetric
 *   modelopt               quant_algo FP8; NVFP4 (group 16, fp8 scale);
 *                          W4A8_AWQ / W4A16_AWQ (group 128, 16-bit scale)
 *   gptq, awq (+ _marlin)  bits; group_size (-1: per channel); fp16 scale and a
 *                          packed `bits` zero per group (GPTQ's act-order g_idx,
 *                          4 B per input row, is not counted)
 *   bitsandbytes           4-bit nf4/fp4: fp32 absmax per 64, or with double
 *                          quantization an int8 absmax per 64 plus fp32 per 256
 *                          blocks; 8-bit: 1 byte (row scales not counted)
 *   mxfp4                  4 bits + e8m0 per 32, the experts only when MoE
 * The ignore lists (ignore, modules_to_not_convert, exclude_modules,
 * llm_int8_skip_modules, ignored_layers) keep what they name in the serving
 * dtype: lm_head and embeddings always are; attention, shared experts and
 * dense MLPs are counted out when an entry names them.  Any other method is
 * sized in the serving dtype with a warning that names it. */

/* Which parts of the dense share an ignore list keeps unquantized. */
static kvp_status quant_ignored(struct hf *h, const struct kvp_node *q, struct kvp_model *m)
{
	static const char *const keys[] = {"ignore", "modules_to_not_convert", "exclude_modules",
					   "llm_int8_skip_modules", "ignored_layers", NULL};
	const char *which = keys[0];
	const struct kvp_node *list = get_any(q, keys, &which);
	if (!list)
		return KVP_STATUS_OK;
	char field[64];
	snprintf(field, sizeof field, "quantization_config.%s", which);
	kvp_status st = kvp_node_expect(h->doc, list, field, KVP_NODE_SEQ, h->err);
	if (st)
		return st;
	bool attn = false, shared = false, mlp = false;
	for (size_t i = 0; i < list->n; i++) {
		const struct kvp_node *it = list->items[i];
		if (it->type != KVP_NODE_SCALAR)
			return kvp_node_fail(h->doc, it, h->err, KVP_STATUS_INVALID, field,
					     "expected module names");
		const char *v = it->value;
		if (strstr(v, "shared_expert"))
			shared = true;
		else if (strstr(v, "attn") || strstr(v, "attention"))
			attn = true;
		else if (strstr(v, "mlp") && !strstr(v, "expert") && !strstr(v, "gate.") &&
			 strcmp(v, "mlp.gate") != 0 && !strstr(v, "router"))
			mlp = true;
	}
	uint64_t keep = 0;
	if ((attn && !kvp_add(keep, h->attn_params, &keep)) ||
	    (shared && !kvp_add(keep, h->shared_params, &keep)) ||
	    (mlp && !kvp_add(keep, h->mlp_params, &keep)))
		return kvp_node_fail(h->doc, list, h->err, KVP_STATUS_OVERFLOW, field,
				     "parameter count overflow");
	m->unquantized_params = keep;
	return KVP_STATUS_OK;
}

/* An optional whole number `key` of q, in [lo, hi]; *out keeps its default. */
static kvp_status quant_uint(struct hf *h, const struct kvp_node *q, const char *key, uint64_t hi,
			     uint32_t *out, bool *found)
{
	const struct kvp_node *n = kvp_map_get(q, key);
	if (found)
		*found = n != NULL;
	if (!n)
		return KVP_STATUS_OK;
	char field[96];
	snprintf(field, sizeof field, "quantization_config.%s", key);
	uint64_t v;
	kvp_status st = node_uint(h, n, field, hi, &v);
	if (!st)
		*out = (uint32_t)v;
	return st;
}

/* A scalar string of q under `key` into buf ("" when absent). */
static kvp_status quant_str(struct hf *h, const struct kvp_node *q, const char *key, char *buf,
			    size_t size)
{
	buf[0] = 0;
	const struct kvp_node *n = kvp_map_get(q, key);
	if (!n)
		return KVP_STATUS_OK;
	char field[96];
	snprintf(field, sizeof field, "quantization_config.%s", key);
	return kvp_node_str(h->doc, n, field, buf, size, h->err);
}

/* The dtype whose name describes a format (for the printout). */
static enum kvp_dtype quant_dtype(uint32_t bits, bool is_float, uint32_t group)
{
	if (bits >= 16)
		return KVP_DTYPE_AUTO;
	if (bits == 8)
		return is_float ? KVP_DTYPE_FP8 : KVP_DTYPE_INT8;
	if (is_float)
		return group == 32 ? KVP_DTYPE_MXFP4 : KVP_DTYPE_NVFP4;
	return KVP_DTYPE_INT4;
}

/* compressed-tensors: the first config group's weights (several groups: the
 * widest, and a warning). */
static kvp_status quant_compressed_tensors(struct hf *h, const struct kvp_node *q,
					   struct kvp_weights_format *f, enum kvp_dtype *dt)
{
	const struct kvp_node *groups = kvp_map_get(q, "config_groups");
	if (!groups || groups->type != KVP_NODE_MAP || groups->n == 0)
		return kvp_node_fail(h->doc, groups ? groups : q, h->err, KVP_STATUS_INVALID,
				     "quantization_config.config_groups",
				     "required for compressed-tensors: a map of groups with "
				     "their weights' num_bits");
	if (groups->n > 1)
		warn(h, groups, "quantization_config.config_groups",
		     "%zu groups: every quantized weight is sized as the widest one", groups->n);
	for (size_t i = 0; i < groups->n; i++) {
		const struct kvp_node *w = groups->items[i]->type == KVP_NODE_MAP
			? kvp_map_get(groups->items[i], "weights") : NULL;
		if (!w || w->type != KVP_NODE_MAP)
			continue;  /* an activations-only group */
		uint32_t bits = 0, group = 0;
		kvp_status st;
		if ((st = quant_uint(h, w, "num_bits", 32, &bits, NULL)))
			return st;
		char type[16], strategy[24];
		if ((st = quant_str(h, w, "type", type, sizeof type)) ||
		    (st = quant_str(h, w, "strategy", strategy, sizeof strategy)))
			return st;
		/* groups: strategy group or tensor_group (nvfp4), or a group_size
		 * given without a strategy; channel, tensor and block scales are
		 * too few to count */
		const struct kvp_node *gs = kvp_map_get(w, "group_size");
		bool grouped = strcmp(strategy, "group") == 0 ||
			       strcmp(strategy, "tensor_group") == 0 || (!strategy[0] && gs);
		if (grouped) {
			uint64_t v;
			if (!gs)
				return kvp_node_fail(h->doc, w, h->err, KVP_STATUS_INVALID,
						     "quantization_config.config_groups.weights."
						     "group_size", "required for strategy \"%s\"",
						     strategy);
			if ((st = node_positive(h, gs, "quantization_config.config_groups.weights."
						"group_size", UINT32_MAX, &v)))
				return st;
			group = (uint32_t)v;
		}
		bool is_float = strcmp(type, "float") == 0, sym = true;
		const struct kvp_node *sn = kvp_map_get(w, "symmetric");
		if (sn && (st = kvp_node_bool(h->doc, sn, "symmetric", &sym, h->err)))
			return st;
		if (!bits)
			return kvp_node_fail(h->doc, w, h->err, KVP_STATUS_INVALID,
					     "quantization_config.config_groups.weights.num_bits",
					     "required field is missing");
		/* scale: fp8 for 4-bit floats (nvfp4), else 16 bits; a zero point
		 * of num_bits when asymmetric */
		uint32_t gbits = group ? (is_float && bits == 4 ? 8 : 16) + (sym ? 0 : bits) : 0;
		if (bits * (uint64_t)(group ? group : 1) + gbits >
		    f->bits * (uint64_t)(f->group ? f->group : 1) + f->group_bits) {
			f->bits = bits;
			f->group = group;
			f->group_bits = gbits;
			*dt = quant_dtype(bits, is_float, group);
		}
	}
	if (!f->bits)
		return kvp_node_fail(h->doc, groups, h->err, KVP_STATUS_INVALID,
				     "quantization_config.config_groups",
				     "no group quantizes weights (weights.num_bits)");
	return KVP_STATUS_OK;
}

static kvp_status read_quantization(struct hf *h, struct kvp_model *m)
{
	const struct kvp_node *q = kvp_map_get(h->top, "quantization_config");
	if (!q && h->cfg != h->top)
		q = kvp_map_get(h->cfg, "quantization_config");
	if (!q)
		return KVP_STATUS_OK;
	kvp_status st = kvp_node_expect(h->doc, q, "quantization_config", KVP_NODE_MAP, h->err);
	if (st)
		return st;
	char method[48];
	if ((st = quant_str(h, q, "quant_method", method, sizeof method)))
		return st;
	const struct kvp_node *mn = kvp_map_get(q, "quant_method");
	struct kvp_weights_format f = {0};
	enum kvp_dtype dt = KVP_DTYPE_AUTO;
	bool experts_only = false;
	if (strcmp(method, "fp8") == 0 || strcmp(method, "fbgemm_fp8") == 0) {
		dt = KVP_DTYPE_FP8;
		f = (struct kvp_weights_format){8, 0, 0};
	} else if (strcmp(method, "mxfp4") == 0) {
		dt = KVP_DTYPE_MXFP4;
		f = (struct kvp_weights_format){4, 32, 8};
		experts_only = m->moe_num_experts != 0;  /* gpt-oss: attention etc. stay bf16 */
	} else if (strcmp(method, "compressed-tensors") == 0 ||
		   strcmp(method, "compressed_tensors") == 0) {
		if ((st = quant_compressed_tensors(h, q, &f, &dt)))
			return st;
	} else if (strcmp(method, "modelopt") == 0) {
		const struct kvp_node *inner = kvp_map_get(q, "quantization");
		const struct kvp_node *src = inner && inner->type == KVP_NODE_MAP ? inner : q;
		char algo[32];
		uint32_t group = 0;
		if ((st = quant_str(h, src, "quant_algo", algo, sizeof algo)) ||
		    (st = quant_uint(h, src, "group_size", UINT32_MAX, &group, NULL)))
			return st;
		if (strcasecmp(algo, "FP8") == 0) {
			dt = KVP_DTYPE_FP8;
			f = (struct kvp_weights_format){8, 0, 0};
		} else if (strcasecmp(algo, "NVFP4") == 0) {
			dt = KVP_DTYPE_NVFP4;
			f = (struct kvp_weights_format){4, group ? group : 16, 8};
		} else if (strcasecmp(algo, "W4A8_AWQ") == 0 || strcasecmp(algo, "W4A16_AWQ") == 0 ||
			   strcasecmp(algo, "INT4_AWQ") == 0) {
			dt = KVP_DTYPE_INT4_AWQ;
			f = (struct kvp_weights_format){4, group ? group : 128, 16};
		} else {
			warn(h, kvp_map_get(src, "quant_algo") ? kvp_map_get(src, "quant_algo") : q,
			     "quantization_config.quant_algo",
			     "modelopt algorithm \"%s\" is not modelled: weights sized in the "
			     "serving dtype (an overestimate if they are smaller)", algo);
		}
		if (inner && inner != src)
			q = inner;
	} else if (strcmp(method, "gptq") == 0 || strcmp(method, "awq") == 0 ||
		   strcmp(method, "gptq_marlin") == 0 || strcmp(method, "awq_marlin") == 0) {
		bool awq = method[0] == 'a';
		uint32_t bits = 4, group = 128;
		bool has_bits, has_w_bit = false, zero = true;
		if ((st = quant_uint(h, q, "bits", 16, &bits, &has_bits)) ||
		    (!has_bits && (st = quant_uint(h, q, "w_bit", 16, &bits, &has_w_bit))))
			return st;
		/* group_size -1 means per channel */
		const struct kvp_node *gn = kvp_map_get(q, "group_size");
		if (!gn)
			gn = kvp_map_get(q, "q_group_size");
		if (gn && !(gn->type == KVP_NODE_SCALAR && strcmp(gn->value, "-1") == 0)) {
			uint64_t v;
			if ((st = node_positive(h, gn, "quantization_config.group_size", UINT32_MAX,
						&v)))
				return st;
			group = (uint32_t)v;
		} else if (gn) {
			group = 0;
		}
		const struct kvp_node *zn = kvp_map_get(q, "zero_point");
		if (awq && zn && (st = kvp_node_bool(h->doc, zn, "quantization_config.zero_point",
						      &zero, h->err)))
			return st;
		if (!bits || bits > 8) {
			const struct kvp_node *bn = kvp_map_get(q, has_w_bit ? "w_bit" : "bits");
			return kvp_node_fail(h->doc, bn ? bn : q, h->err, KVP_STATUS_INVALID,
					     "quantization_config.bits", "%u bits: expected 2 to 8",
					     bits);
		}
		f = (struct kvp_weights_format){bits, group, group ? 16 + (zero ? bits : 0) : 0};
		dt = bits == 8 ? KVP_DTYPE_INT8
		     : bits == 4 ? (awq ? KVP_DTYPE_INT4_AWQ : KVP_DTYPE_INT4_GPTQ) : KVP_DTYPE_INT4;
	} else if (strcmp(method, "bitsandbytes") == 0) {
		bool b4 = false, b8 = false, dq = false;
		const struct kvp_node *n;
		if (((n = kvp_map_get(q, "load_in_4bit")) &&
		     (st = kvp_node_bool(h->doc, n, "quantization_config.load_in_4bit", &b4, h->err))) ||
		    ((n = kvp_map_get(q, "load_in_8bit")) &&
		     (st = kvp_node_bool(h->doc, n, "quantization_config.load_in_8bit", &b8, h->err))) ||
		    ((n = kvp_map_get(q, "bnb_4bit_use_double_quant")) &&
		     (st = kvp_node_bool(h->doc, n, "quantization_config.bnb_4bit_use_double_quant",
					 &dq, h->err))))
			return st;
		if (b4) {
			dt = KVP_DTYPE_INT4;
			/* per 64 x 256 = 16,384 elements: 256 absmax of 32 bits, or
			 * with double quantization 256 of 8 bits and one fp32 */
			f = (struct kvp_weights_format){4, 16384, dq ? 256 * 8 + 32 : 256 * 32};
		} else if (b8) {
			dt = KVP_DTYPE_INT8;
			f = (struct kvp_weights_format){8, 0, 0};
		} else {
			warn(h, q, "quantization_config",
			     "bitsandbytes without load_in_4bit or load_in_8bit: weights sized in "
			     "the serving dtype");
		}
	} else {
		warn(h, mn ? mn : q, "quantization_config.quant_method",
		     "unknown quantization method \"%s\": weights sized in the serving dtype "
		     "(%s for a 16-bit checkpoint), which overestimates them if they are smaller",
		     method, kvp_dtype_name(kvp_model_serving_dtype(m, KVP_DTYPE_AUTO)));
		return KVP_STATUS_OK;
	}
	if (!f.bits)
		return KVP_STATUS_OK;
	if (experts_only) {
		m->expert_dtype = dt;
		m->expert_format = f;
		return KVP_STATUS_OK;
	}
	m->weights_dtype = dt == KVP_DTYPE_AUTO ? KVP_DTYPE_AUTO : dt;
	m->weights_format = f;
	return quant_ignored(h, q, m);
}

/* ------------------------------------------------------------ towers
 *
 * Vision towers of multimodal wrappers (vLLM loads them with the text model;
 * engine-memory.md 1.1), counted from vision_config.  Legend: Hv = tower
 * width, Iv = its MLP width, Lv = its layers, p = patch, C = 3 channels,
 * Ht = the text model's hidden size, m = spatial merge.
 *   SigLIP / MoonViT (Gemma 3, Kimi-VL, default): per layer q, k, v, o with
 *     biases 4 (Hv^2 + Hv), MLP 2 Hv Iv + Iv + Hv, two LayerNorms 4 Hv; patch
 *     embedding C p^2 Hv + Hv; learned positions (image/p)^2 Hv (MoonViT:
 *     init_pos_emb_height x width); a final LayerNorm 2 Hv.
 *   Qwen2.5-VL: per layer fused qkv with bias 3 Hv^2 + 3 Hv, proj Hv^2 + Hv,
 *     gated MLP with biases 3 Hv Iv + 2 Iv + Hv, two RMSNorms 2 Hv; patch
 *     embedding C t p^2 Hv (no bias); merger RMSNorm Hv + (m^2 Hv)^2 + m^2 Hv
 *     + m^2 Hv out + out.
 * Projectors: Gemma 3 Hv Ht + Hv; Kimi-VL LayerNorm 2 Hv + (m^2 Hv)^2 + m^2 Hv
 * + m^2 Hv Ht + Ht.  Other towers are counted as the default ViT with a
 * warning that their projector is not; audio towers are not counted (warning). */
static kvp_status tower_uint(struct hf *h, const struct kvp_node *t, const char *const *keys,
			     const char *field, uint64_t dflt, uint64_t *out)
{
	const char *which = keys[0];
	const struct kvp_node *n = get_any(t, keys, &which);
	*out = dflt;
	if (!n)
		return KVP_STATUS_OK;
	char name[96];
	snprintf(name, sizeof name, "%s.%s", field, which);
	return node_positive(h, n, name, UINT32_MAX, out);
}

static kvp_status count_towers(struct hf *h, struct kvp_model *m)
{
	const struct kvp_node *root = h->doc->root;
	kvp_status st;
	const struct kvp_node *an = kvp_map_get(root, "audio_config");
	if (an)
		warn(h, an, "audio_config",
		     "the audio tower is not counted: the KV pool is overestimated by its weights");
	const struct kvp_node *tn = kvp_map_get(root, "vision_config");
	if (!tn)
		return KVP_STATUS_OK;
	static const char *const dim_keys[] = {"hidden_size", "embed_dim", "vt_hidden_size",
					       "width", NULL};
	static const char *const depth_keys[] = {"num_hidden_layers", "depth",
						 "vt_num_hidden_layers", "layers", NULL};
	static const char *const mlp_keys[] = {"intermediate_size", "vt_intermediate_size",
					       "mlp_dim", NULL};
	if (tn->type != KVP_NODE_MAP || !get_any(tn, dim_keys, NULL) ||
	    !get_any(tn, depth_keys, NULL)) {
		warn(h, tn, "vision_config",
		     "a tower without its dimensions (hidden_size, num_hidden_layers): "
		     "its weights are not counted, so the KV pool is overestimated");
		return KVP_STATUS_OK;
	}
	static const char *const patch_keys[] = {"patch_size", NULL};
	static const char *const image_keys[] = {"image_size", NULL};
	static const char *const out_keys[] = {"out_hidden_size", NULL};
	static const char *const tpatch_keys[] = {"temporal_patch_size", NULL};
	static const char *const merge_keys[] = {"spatial_merge_size", NULL};
	static const char *const posh_keys[] = {"init_pos_emb_height", NULL};
	static const char *const posw_keys[] = {"init_pos_emb_width", NULL};
	uint64_t Hv, Lv, Iv, p, img, out, tp, mg = 1, ph, pw;
	if ((st = tower_uint(h, tn, dim_keys, "vision_config", 0, &Hv)) ||
	    (st = tower_uint(h, tn, depth_keys, "vision_config", 0, &Lv)) ||
	    (st = tower_uint(h, tn, mlp_keys, "vision_config", 4 * Hv, &Iv)) ||
	    (st = tower_uint(h, tn, patch_keys, "vision_config", 14, &p)) ||
	    (st = tower_uint(h, tn, image_keys, "vision_config", 0, &img)) ||
	    (st = tower_uint(h, tn, out_keys, "vision_config", m->hidden_size, &out)) ||
	    (st = tower_uint(h, tn, tpatch_keys, "vision_config", 1, &tp)) ||
	    (st = tower_uint(h, tn, merge_keys, "vision_config", 1, &mg)) ||
	    (st = tower_uint(h, tn, posh_keys, "vision_config", 0, &ph)) ||
	    (st = tower_uint(h, tn, posw_keys, "vision_config", 0, &pw)))
		return st;
	const struct kvp_node *mk = kvp_map_get(tn, "merge_kernel_size");
	if (mk && mk->type == KVP_NODE_SEQ && mk->n >= 1 &&
	    (st = node_positive(h, mk->items[0], "vision_config.merge_kernel_size", 64, &mg)))
		return st;
	if (Hv > 65536 || Lv > 4096 || Iv > 1048576 || p > 4096 || mg > 64)
		return kvp_node_fail(h->doc, tn, h->err, KVP_STATUS_INVALID, "vision_config",
				     "tower dimensions out of range");
	char type[64] = "", top[64] = "";
	const struct kvp_node *n = kvp_map_get(tn, "model_type");
	if (n && n->type == KVP_NODE_SCALAR)
		snprintf(type, sizeof type, "%s", n->value);
	n = kvp_map_get(root, "model_type");
	if (n && n->type == KVP_NODE_SCALAR)
		snprintf(top, sizeof top, "%s", n->value);
	const uint64_t C = 3, Ht = m->hidden_size, mm = mg * mg;
	uint64_t t = 0;
	if (strncmp(type, "qwen2_5_vl", 10) == 0 || strncmp(top, "qwen2_5_vl", 10) == 0) {
		uint64_t layer = 4 * Hv * Hv + 4 * Hv + 3 * Hv * Iv + 2 * Iv + Hv + 2 * Hv;
		t = Lv * layer + C * tp * p * p * Hv + Hv + (mm * Hv) * (mm * Hv) + mm * Hv +
		    mm * Hv * out + out;
	} else {
		uint64_t layer = 4 * (Hv * Hv + Hv) + 2 * Hv * Iv + Iv + Hv + 4 * Hv;
		uint64_t pos = ph && pw ? ph * pw * Hv : img ? (img / p) * (img / p) * Hv : 0;
		t = Lv * layer + C * p * p * Hv + Hv + pos + 2 * Hv;
		if (strncmp(top, "gemma3", 6) == 0)
			t += Hv * Ht + Hv;
		else if (strcmp(top, "kimi_vl") == 0)
			t += 2 * Hv + (mm * Hv) * (mm * Hv) + mm * Hv + mm * Hv * Ht + Ht;
		else
			warn(h, tn, "vision_config",
			     "tower \"%s\" counted as a generic ViT (%llu layers of %llu); its "
			     "projector is not counted", type[0] ? type : top,
			     (unsigned long long)Lv, (unsigned long long)Hv);
	}
	m->tower_params = t;
	return KVP_STATUS_OK;
}

/* ------------------------------------------------------------ load */

static kvp_status parse(struct hf *h, const char *path, struct kvp_model *m)
{
	kvp_status st;
	const struct kvp_node *root = h->doc->root;
	if (!root)
		return kvp_error_set(h->err, KVP_STATUS_INVALID, path, 0, 0, NULL,
				     "empty document, expected a JSON object");
	if (root->type != KVP_NODE_MAP)
		return kvp_node_fail(h->doc, root, h->err, KVP_STATUS_INVALID, NULL,
				     "expected a JSON object of model settings");
	h->top = h->cfg = root;

	/* multimodal wrappers (Gemma 3, Llama 4): the text model lives in
	 * text_config, as vLLM's hf_text_config */
	static const char *const layer_keys[] = {"num_hidden_layers", "n_layer", "num_layers", NULL};
	const struct kvp_node *tc = kvp_map_get(root, "text_config");
	if (tc && !get_any(root, layer_keys, NULL)) {
		if ((st = kvp_node_expect(h->doc, tc, "text_config", KVP_NODE_MAP, h->err)))
			return st;
		h->cfg = tc;
	}
	bool tie = true;
	find_family(h, &tie);

	snprintf(m->path, sizeof m->path, "%s", path);
	model_name(path, m->name, sizeof m->name);
	snprintf(m->family, sizeof m->family, "%s", h->model_type);
	const struct kvp_node *id = kvp_map_get(root, "_name_or_path");
	if (id && id->type == KVP_NODE_SCALAR && id->value[0] != '/' && id->value[0] != '.' &&
	    strchr(id->value, '/') && strchr(id->value, '/') == strrchr(id->value, '/'))
		snprintf(m->hf_id, sizeof m->hf_id, "%s", id->value);
	if ((st = read_dtype(h, m)))
		return st;

	/* the required four (Gemma 3 class defaults fill heads and vocab) */
	static const char *const hidden_keys[] = {"hidden_size", "n_embd", NULL};
	static const char *const head_keys[] = {"num_attention_heads", "n_head", NULL};
	static const char *const vocab_keys[] = {"vocab_size", "padded_vocab_size", NULL};
	bool gemma3 = h->fam == FAM_GEMMA3;
	const struct kvp_node *layers_node, *heads_node, *kv_node;
	if ((st = req_uint(h, layer_keys, 0, &m->num_layers, &layers_node)) ||
	    (st = req_uint(h, hidden_keys, 0, &m->hidden_size, NULL)) ||
	    (st = req_uint(h, head_keys, gemma3 ? GEMMA3_HEADS : 0, &m->num_heads, &heads_node)) ||
	    (st = req_uint(h, vocab_keys, gemma3 ? GEMMA3_VOCAB : 0, &m->vocab_size, NULL)))
		return st;
	if (m->num_layers > KVP_MAX_LAYERS)
		return kvp_node_fail(h->doc, layers_node, h->err, KVP_STATUS_INVALID,
				     "num_hidden_layers", "%u layers, at most %u are supported",
				     m->num_layers, KVP_MAX_LAYERS);

	/* MLA (vLLM is_deepseek_mla): the cache holds one latent of kv_lora_rank
	 * + qk_rope_head_dim per token and layer; num_key_value_heads is a decoy */
	bool mla = false;
	uint32_t kv_lora = 0;
	if ((st = opt_uint(h, h->cfg, "kv_lora_rank", true, &kv_lora, &mla)))
		return st;
	if (mla && !is_one_of(h->model_type, mla_types)) {
		const struct kvp_node *kn = kvp_map_get(h->cfg, "kv_lora_rank");
		if (h->fam == FAM_GENERIC) {
			/* a wrapper (kimi_vl) or a text_config without its own
			 * model_type: the fields say DeepSeek-style MLA, which is
			 * what the wrapper's text model is (vLLM hf_text_config) */
			char topk[32] = "";
			const struct kvp_node *tn = kvp_map_get(h->cfg, "topk_method");
			if (tn && tn->type == KVP_NODE_SCALAR)
				snprintf(topk, sizeof topk, "%s", tn->value);
			h->fam = strcmp(topk, "noaux_tc") == 0 ? FAM_DEEPSEEK_V3 : FAM_DEEPSEEK_V2;
			tie = false;  /* DeepseekV2/V3Config default */
		} else {
			/* a known standard-attention family: its engine code ignores
			 * the key, so does kvplan (full heads: the larger KV) */
			warn(h, kn, "kv_lora_rank",
			     "model_type \"%s\" has no latent attention: the key is ignored and "
			     "the KV cache is sized from the attention heads", h->model_type);
			mla = false;
		}
	}

	/* head_dim: head_dim, else hidden_size_per_head, else the Gemma class
	 * default, else H / Nq (never assume H == Nq * d when a key says otherwise) */
	if (mla) {
		uint32_t nope = 0, rope = 0, v = 0;
		if ((st = opt_uint(h, h->cfg, "qk_nope_head_dim", true, &nope, NULL)) ||
		    (st = opt_uint(h, h->cfg, "qk_rope_head_dim", true, &rope, NULL)) ||
		    (st = opt_uint(h, h->cfg, "v_head_dim", true, &v, NULL)))
			return st;
		if (!rope)
			return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID,
					     "qk_rope_head_dim", "required field is missing for MLA");
		m->mla_kv_lora_rank = kv_lora;
		m->mla_rope_dim = rope;
		m->head_dim = nope + rope;
		m->head_dim_v = v ? v : nope + rope;
	} else {
		bool found = false;
		if ((st = opt_uint(h, h->cfg, "head_dim", true, &m->head_dim, &found)))
			return st;
		if (!found &&
		    (st = opt_uint(h, h->cfg, "hidden_size_per_head", true, &m->head_dim, &found)))
			return st;
		if (!found && is_gemma(h->fam))
			m->head_dim = GEMMA_HEAD_DIM;
		else if (!found) {
			if (m->hidden_size % m->num_heads)
				return kvp_node_fail(h->doc, heads_node ? heads_node : h->cfg, h->err,
						     KVP_STATUS_INVALID, head_keys[0],
						     "hidden_size %u is not a multiple of %u heads "
						     "and no head_dim is given",
						     m->hidden_size, m->num_heads);
			m->head_dim = m->hidden_size / m->num_heads;
		}
		m->head_dim_v = m->head_dim;
	}

	/* KV heads */
	const char *kv_field;
	if ((st = kv_heads(h, m->num_heads, &m->num_kv_heads, &kv_node, &kv_field)))
		return st;
	if (gemma3 && !kv_node)
		m->num_kv_heads = GEMMA3_KV_HEADS;
	if (m->num_kv_heads > m->num_heads || m->num_heads % m->num_kv_heads)
		return kvp_node_fail(h->doc, kv_node ? kv_node : h->cfg, h->err, KVP_STATUS_INVALID,
				     kv_field,
				     "%u KV heads do not divide %u attention heads",
				     m->num_kv_heads, m->num_heads);
	if (mla && kv_node && m->num_kv_heads != m->num_heads)
		/* MLA has one latent per token, no grouped heads: a GQA count
		 * beside kv_lora_rank means the file mixes two attentions */
		warn(h, kv_node, kv_field,
		     "%u KV heads for %u attention heads beside kv_lora_rank: latent attention "
		     "(MLA) has no grouped KV heads; sized as MLA, one latent per token",
		     m->num_kv_heads, m->num_heads);
	if (mla)
		m->num_kv_heads = 1;  /* vLLM get_num_kv_heads under MLA */

	/* FFN width: non-gated families default to 4H (GPT-2 n_inner null) */
	static const char *const ffn_keys[] = {"intermediate_size", "n_inner", "ffn_hidden_size",
					       NULL};
	const char *which = ffn_keys[0];
	const struct kvp_node *fn = get_any(h->cfg, ffn_keys, &which);
	if (fn) {
		uint64_t v;
		if ((st = node_positive(h, fn, which, UINT32_MAX, &v)))
			return st;
		m->intermediate_size = (uint32_t)v;
	} else if (is_layernorm_family(h->fam)) {
		m->intermediate_size = 4 * m->hidden_size;
	}

	/* context */
	static const char *const ctx_keys[] = {"max_position_embeddings", "n_positions", "n_ctx",
					       "seq_length", NULL};
	which = ctx_keys[0];
	const struct kvp_node *cn = get_any(h->cfg, ctx_keys, &which);
	if (cn) {
		if ((st = node_positive(h, cn, which, UINT64_MAX, &m->max_context)))
			return st;
	} else if (gemma3) {
		m->max_context = GEMMA3_MAX_POS;
	} else if (h->fam == FAM_FALCON) {
		m->max_context = FALCON_MAX_POS;
	}

	/* tie_word_embeddings: the file, else (multimodal) the wrapper, else the class */
	if (kvp_map_get(h->cfg, "tie_word_embeddings"))
		st = opt_bool(h, h->cfg, "tie_word_embeddings", &tie);
	else
		st = opt_bool(h, h->top, "tie_word_embeddings", &tie);
	if (st)
		return st;
	m->tie_word_embeddings = tie;

	if ((st = count_towers(h, m)))
		return st;

	if ((st = assign_layers(h, m, mla)) || (st = count_params(h, m)) ||
	    (st = read_quantization(h, m)))
		return st;
	return kvp_model_validate(m, h->err);
}

kvp_status kvp_hf_config_load(const char *path, struct kvp_model *out, struct kvp_error *err)
{
	struct kvp_doc *doc = NULL;
	memset(out, 0, sizeof *out);
	kvp_status st = kvp_doc_load_file(path, &doc, err);
	if (st)
		return st;
	struct hf h = {.doc = doc, .err = err, .m = out};
	st = parse(&h, path, out);
	kvp_doc_free(doc);
	return st;
}
