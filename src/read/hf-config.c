/* hf-config.c: turn a Hugging Face config.json into a struct kvp_model.
 *
 * Legend: L = layers, H = hidden size, Nq = attention heads, Nkv = KV heads,
 * d = head dim, V = vocabulary, I = dense FFN width, E = routed experts,
 * k = experts per token, Im = expert FFN width.
 *
 * This file loads the document and reads the model's shape in order; the
 * concerns live beside it (hf-private.h): JSON readers (hf-read.c), family
 * and KV heads (hf-family.c), layer kinds (hf-layers.c), parameter counts
 * (hf-params.c), dtype and quantization (hf-quant.c), vision towers
 * (hf-towers.c).  Every rule follows ../shared/reference/architectures.md
 * sections 0, 2, 3, 4 and 6, which copy what vLLM and transformers do: vLLM's
 * head size and KV-head precedence, transformers' class defaults for keys a
 * file leaves out, the per-family layer patterns, and parameter counts from
 * the config (section 4.1).  The stance: never guess silently where a wrong
 * guess shrinks the KV cache.  A value of the wrong type, a negative or
 * oversized number, heads that do not divide, or a missing required field
 * fails with the file, the line and column of the value (or of the enclosing
 * object when the field is missing), and the field's name.  Keys kvplan does
 * not need are ignored. */
#include "read/hf-config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "read/hf-private.h"

/* vLLM is_deepseek_mla: these model types with kv_lora_rank use MLA. */
static const char *const mla_types[] = {
	"deepseek_v2", "deepseek_v3", "deepseek_v32", "deepseek_mtp", "kimi_k2",
	"kimi_linear", "longcat_flash", "pangu_ultra_moe", "pangu_ultra_moe_mtp", NULL
};

/* ------------------------------------------------------------ load */

/* A JSON number (not a quoted string) as a double, or an error naming
 * field at the node. */
static kvp_status hf_node_number(struct hf *h, const struct kvp_node *n, const char *field,
				 double *out)
{
	if (n->type == KVP_NODE_SCALAR && n->quoted)
		return kvp_node_fail(h->doc, n, h->err, KVP_STATUS_INVALID, field,
				     "expected a number, got the string \"%s\"", n->value);
	return kvp_node_double(h->doc, n, field, out, h->err);
}

/* The rotary dimension as vLLM's get_rope takes it, int(head_dim x
 * partial_rotary_factor): partial_rotary_factor at the top or inside
 * rope_parameters / rope_scaling, rotary_pct (GPT-NeoX), or a whole
 * rotary_dim (GPT-J, CodeGen); none of them: the whole head (0).  MLA keeps
 * its qk_rope_head_dim. */
static kvp_status read_rotary_dim(struct hf *h, struct kvp_model *m)
{
	const struct kvp_node *n = kvp_map_get(h->cfg, "rotary_dim");
	kvp_status st;
	if (n) {
		uint64_t v;
		if ((st = hf_node_positive(h, n, "rotary_dim", UINT32_MAX, &v)))
			return st;
		if (v > m->head_dim)
			return kvp_node_fail(h->doc, n, h->err, KVP_STATUS_INVALID, "rotary_dim",
					     "%llu is larger than head_dim %u",
					     (unsigned long long)v, m->head_dim);
		m->rotary_dim = v == m->head_dim ? 0 : (uint32_t)v;
		return KVP_STATUS_OK;
	}
	const char *field = "partial_rotary_factor";
	n = kvp_map_get(h->cfg, field);
	if (!n)
		n = kvp_map_get(kvp_map_get(h->cfg, "rope_parameters"), field);
	if (!n)
		n = kvp_map_get(kvp_map_get(h->cfg, "rope_scaling"), field);
	if (!n && (n = kvp_map_get(h->cfg, "rotary_pct")))
		field = "rotary_pct";
	if (!n)
		return KVP_STATUS_OK;
	double f;
	if ((st = hf_node_number(h, n, field, &f)))
		return st;
	if (!(f > 0 && f <= 1))
		return kvp_node_fail(h->doc, n, h->err, KVP_STATUS_INVALID, field,
				     "a fraction in (0, 1], got %s", n->value);
	uint32_t d = (uint32_t)(m->head_dim * f);
	m->rotary_dim = d == m->head_dim ? 0 : d ? d : 1;
	return KVP_STATUS_OK;
}

/* The rotary cos/sin cache's length where rope_scaling (or rope_parameters)
 * lengthens it, as vLLM 0.19's get_rope builds it
 * (rotary_embedding/__init__.py): "linear" (linear_scaling_rope.py:90) and
 * "dynamic" with a factor (dynamic_ntk_scaling_rope.py:56) cover
 * max_position x factor, "yarn" without mrope_section
 * original_max_position_embeddings x factor (yarn_scaling_rope.py:78;
 * DeepSeek's, renamed "deepseek_yarn" by deepseek_v2.py:506, the same:
 * deepseek_scaling_rope.py:104);
 * torch.arange of a float length gives ceil(length) rows.  Other types keep
 * max_position (0).  Gemma 3's sliding layers take the default rope with
 * rope_local_base_freq (gemma3.py:176), a second, unscaled cache. */
static kvp_status read_rotary_cache(struct hf *h, struct kvp_model *m)
{
	const struct kvp_node *rs = kvp_map_get(h->cfg, "rope_scaling");
	const char *ff = "rope_scaling.factor";
	if (!rs || rs->type != KVP_NODE_MAP) {
		rs = kvp_map_get(h->cfg, "rope_parameters");
		ff = "rope_parameters.factor";
	}
	m->rotary_local_cache = h->fam == FAM_GEMMA3;
	if (!rs || rs->type != KVP_NODE_MAP)
		return KVP_STATUS_OK;
	const struct kvp_node *t = kvp_map_get(rs, "rope_type");
	if (!t)
		t = kvp_map_get(rs, "type");
	const struct kvp_node *fn = kvp_map_get(rs, "factor");
	if (!t || t->type != KVP_NODE_SCALAR || !fn)
		return KVP_STATUS_OK;
	uint64_t base = m->max_context;
	const char *field = "original_max_position_embeddings";
	if (strcmp(t->value, "yarn") == 0) {
		if (kvp_map_get(rs, "mrope_section"))
			return KVP_STATUS_OK;
		const struct kvp_node *o = kvp_map_get(rs, field);
		kvp_status st;
		if (!o)
			return KVP_STATUS_OK;
		if ((st = hf_node_positive(h, o, field, UINT32_MAX, &base)))
			return st;
	} else if (strcmp(t->value, "linear") != 0 && strcmp(t->value, "dynamic") != 0) {
		return KVP_STATUS_OK;
	}
	double f;
	kvp_status st;
	if ((st = hf_node_number(h, fn, ff, &f)))
		return st;
	if (!(f >= 1 && f <= 1024))
		return kvp_node_fail(h->doc, fn, h->err, KVP_STATUS_INVALID, ff,
				     "a rope scaling factor in [1, 1024], got %s", fn->value);
	double len = ceil((double)base * f);
	if (len > (double)UINT32_MAX * 1024)
		return kvp_node_fail(h->doc, fn, h->err, KVP_STATUS_INVALID, ff,
				     "the scaled rotary cache is too long");
	m->rotary_cache_positions = (uint64_t)len;
	return KVP_STATUS_OK;
}

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
	if (tc && !hf_get_any(root, layer_keys, NULL)) {
		if ((st = kvp_node_expect(h->doc, tc, "text_config", KVP_NODE_MAP, h->err)))
			return st;
		h->cfg = tc;
	}
	bool tie = true;
	hf_find_family(h, &tie);

	snprintf(m->path, sizeof m->path, "%s", path);
	hf_model_name(path, m->name, sizeof m->name);
	snprintf(m->family, sizeof m->family, "%s", h->model_type);
	const struct kvp_node *id = kvp_map_get(root, "_name_or_path");
	if (id && id->type == KVP_NODE_SCALAR && id->value[0] != '/' && id->value[0] != '.' &&
	    strchr(id->value, '/') && strchr(id->value, '/') == strrchr(id->value, '/')) {
		/* an id cut short names another repository: keep it whole or not at all */
		if (strlen(id->value) < sizeof m->hf_id)
			snprintf(m->hf_id, sizeof m->hf_id, "%s", id->value);
		else
			hf_warn(h, id, "_name_or_path", "%zu bytes, longer than kvplan keeps (%zu): "
				"not used as the model's id", strlen(id->value), sizeof m->hf_id - 1);
	}
	if ((st = hf_read_dtype(h, m)))
		return st;

	/* the required four (Gemma 3 class defaults fill heads and vocab) */
	static const char *const hidden_keys[] = {"hidden_size", "n_embd", NULL};
	static const char *const head_keys[] = {"num_attention_heads", "n_head", NULL};
	static const char *const vocab_keys[] = {"vocab_size", "padded_vocab_size", NULL};
	bool gemma3 = h->fam == FAM_GEMMA3;
	const struct kvp_node *layers_node, *heads_node, *kv_node;
	if ((st = hf_req_uint(h, layer_keys, 0, &m->num_layers, &layers_node)) ||
	    (st = hf_req_uint(h, hidden_keys, 0, &m->hidden_size, NULL)) ||
	    (st = hf_req_uint(h, head_keys, gemma3 ? GEMMA3_HEADS : 0, &m->num_heads, &heads_node)) ||
	    (st = hf_req_uint(h, vocab_keys, gemma3 ? GEMMA3_VOCAB : 0, &m->vocab_size, NULL)))
		return st;
	if (m->num_layers > KVP_MAX_LAYERS)
		return kvp_node_fail(h->doc, layers_node, h->err, KVP_STATUS_INVALID,
				     "num_hidden_layers", "%u layers, at most %u are supported",
				     m->num_layers, KVP_MAX_LAYERS);

	/* MLA (vLLM is_deepseek_mla): the cache holds one latent of kv_lora_rank
	 * + qk_rope_head_dim per token and layer; num_key_value_heads is a decoy */
	bool mla = false;
	uint32_t kv_lora = 0;
	if ((st = hf_opt_uint(h, h->cfg, "kv_lora_rank", true, &kv_lora, &mla)))
		return st;
	if (mla && !hf_is_one_of(h->model_type, mla_types)) {
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
			hf_warn(h, kn, "kv_lora_rank",
			     "model_type \"%s\" has no latent attention: the key is ignored and "
			     "the KV cache is sized from the attention heads", h->model_type);
			mla = false;
		}
	}

	/* head_dim: head_dim, else hidden_size_per_head, else the Gemma class
	 * default, else H / Nq (never assume H == Nq * d when a key says otherwise) */
	if (mla) {
		uint32_t nope = 0, rope = 0, v = 0;
		if ((st = hf_opt_uint(h, h->cfg, "qk_nope_head_dim", true, &nope, NULL)) ||
		    (st = hf_opt_uint(h, h->cfg, "qk_rope_head_dim", true, &rope, NULL)) ||
		    (st = hf_opt_uint(h, h->cfg, "v_head_dim", true, &v, NULL)))
			return st;
		if (!rope)
			return kvp_node_fail(h->doc, h->cfg, h->err, KVP_STATUS_INVALID,
					     "qk_rope_head_dim", "required field is missing for MLA");
		m->mla_kv_lora_rank = kv_lora;
		m->mla_rope_dim = rope;
		if ((st = hf_opt_uint(h, h->cfg, "q_lora_rank", true, &m->mla_q_lora_rank, NULL)))
			return st;
		m->head_dim = nope + rope;
		m->head_dim_v = v ? v : nope + rope;
	} else {
		bool found = false;
		if ((st = hf_opt_uint(h, h->cfg, "head_dim", true, &m->head_dim, &found)))
			return st;
		if (!found &&
		    (st = hf_opt_uint(h, h->cfg, "hidden_size_per_head", true, &m->head_dim, &found)))
			return st;
		if (!found && hf_is_gemma(h->fam))
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
	if ((st = hf_kv_heads(h, m->num_heads, &m->num_kv_heads, &kv_node, &kv_field)))
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
		hf_warn(h, kv_node, kv_field,
		     "%u KV heads for %u attention heads beside kv_lora_rank: latent attention "
		     "(MLA) has no grouped KV heads; sized as MLA, one latent per token",
		     m->num_kv_heads, m->num_heads);
	if (mla)
		m->num_kv_heads = 1;  /* vLLM get_num_kv_heads under MLA */

	/* FFN width: non-gated families default to 4H (GPT-2 n_inner null) */
	static const char *const ffn_keys[] = {"intermediate_size", "n_inner", "ffn_hidden_size",
					       NULL};
	const char *which = ffn_keys[0];
	const struct kvp_node *fn = hf_get_any(h->cfg, ffn_keys, &which);
	if (fn) {
		uint64_t v;
		if ((st = hf_node_positive(h, fn, which, UINT32_MAX, &v)))
			return st;
		m->intermediate_size = (uint32_t)v;
	} else if (hf_is_layernorm_family(h->fam)) {
		m->intermediate_size = 4 * m->hidden_size;
	}

	/* context */
	static const char *const ctx_keys[] = {"max_position_embeddings", "n_positions", "n_ctx",
					       "seq_length", NULL};
	which = ctx_keys[0];
	const struct kvp_node *cn = hf_get_any(h->cfg, ctx_keys, &which);
	if (cn) {
		if ((st = hf_node_positive(h, cn, which, UINT64_MAX, &m->max_context)))
			return st;
	} else if (gemma3) {
		m->max_context = GEMMA3_MAX_POS;
	} else if (h->fam == FAM_FALCON) {
		m->max_context = FALCON_MAX_POS;
	}

	/* tie_word_embeddings: the file, else (multimodal) the wrapper, else the class */
	if (kvp_map_get(h->cfg, "tie_word_embeddings"))
		st = hf_opt_bool(h, h->cfg, "tie_word_embeddings", &tie);
	else
		st = hf_opt_bool(h, h->top, "tie_word_embeddings", &tie);
	if (st)
		return st;
	m->tie_word_embeddings = tie;

	if (!mla && (st = read_rotary_dim(h, m)))
		return st;
	if ((st = read_rotary_cache(h, m)))
		return st;

	if ((st = hf_count_towers(h, m)))
		return st;

	if ((st = hf_assign_layers(h, m, mla)) || (st = hf_count_params(h, m)) ||
	    (st = hf_read_quantization(h, m)))
		return st;
	return kvp_model_validate(m, h->err);
}

kvp_status kvp_hf_config_load(const char *path, struct kvp_model *out, struct kvp_error *err)
{
	struct kvp_doc *doc = NULL;
	memset(out, 0, sizeof *out);
	/* the path is kept to name the model (messages, launch scripts): cut, it
	 * would name another file */
	if (strlen(path) >= sizeof out->path)
		return kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, NULL,
				     "the path is longer than %zu bytes", sizeof out->path - 1);
	kvp_status st = kvp_doc_load_file(path, &doc, err);
	if (st)
		return st;
	struct hf h = {.doc = doc, .err = err, .m = out};
	st = parse(&h, path, out);
	kvp_doc_free(doc);
	return st;
}
