/* profile.c: load kvplan's model and GPU profiles (YAML) and find them by name.
 * Each profile is walked with a key table: every key has a type and a place
 * in the struct; unknown keys, wrong types and missing required keys are
 * errors located at file:line:col.  See profile.h for the search order. */
#include "read/profile.h"

#include "model/shape.h"

#include <errno.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "read/gguf.h"
#include "read/hf-config.h"
#include "read/model-name.h"
#include "base/input-file.h"
#include "base/suggest.h"
#include "base/units.h"
#include "base/yaml-walk.h"

#ifdef HAVE_CONFIG_H
#include "config.h" /* KVP_PKGDATADIR, KVP_BUILD_TREE (configure.ac) */
#endif
#include <limits.h>

/* Built without configure (python/setup.py): no build tree, and the data
 * directory of a default install, behind $KVPLAN_PROFILES. */
#ifndef KVP_PKGDATADIR
#define KVP_PKGDATADIR "/usr/local/share/kvplan"
#endif

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

static bool try_dir(const char *dir, const char *kind, const char *name, char *path, size_t size)
{
	/* a path cut to fit could name another file: not found instead */
	if ((size_t)snprintf(path, size, "%s/%s/%s.yaml", dir, kind, name) < size && is_file(path))
		return true;
	return (size_t)snprintf(path, size, "%s/%s.yaml", dir, name) < size && is_file(path);
}

/* Whether this process is a program of kvplan's build tree (./kvplan, a
 * test, or a symlink to one): its executable, links resolved, lies under
 * KVP_BUILD_TREE and not in the configured bindir (a --prefix inside the
 * build tree installs there).  An installed copy, or one copied anywhere
 * else, is not, so it never follows the checkout; nor is any process where
 * /proc/self/exe cannot be resolved. */
#ifdef KVP_BUILD_TREE
static bool in_build_tree(void)
{
	char exe[PATH_MAX], tree[PATH_MAX], bin[PATH_MAX];
	if (!realpath("/proc/self/exe", exe) || !realpath(KVP_BUILD_TREE, tree))
		return false;
	size_t n = strlen(tree);
	if (strncmp(exe, tree, n) != 0 || exe[n] != '/')
		return false;
	*strrchr(exe, '/') = '\0'; /* its folder */
	return !(realpath(KVP_BINDIR, bin) && strcmp(exe, bin) == 0);
}
#endif

/* The profile roots, in search order; returns how many were written:
 * each directory of $KVPLAN_PROFILES (then of $KVPLAN_PROFILE_PATH, its
 * older spelling), so a user's file wins over a built-in one; then one data
 * directory's profiles/: $KVPLAN_DATA when set, else the source tree's for
 * a program of the build tree (nothing installed needed), else the
 * installed data directory (KVP_PKGDATADIR, fixed at configure time).  A
 * folder that does not fit a root (511 bytes), or one past the max - 2 a
 * variable may give, is left out whole, never cut into another folder's
 * name: *cut (when not NULL) then names where it came from, for
 * kvp_profile_resolve to refuse. */
static int profile_roots(char roots[][512], int max, const char **cut)
{
	int n = 0;
	const char *vars[] = {"KVPLAN_PROFILES", "KVPLAN_PROFILE_PATH"};
	if (cut)
		*cut = NULL;
	for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++) {
		const char *env = getenv(vars[v]);
		char *buf = env ? strdup(env) : NULL; /* any length */
		if (!buf)
			continue;
		for (char *save = NULL, *d = strtok_r(buf, ":", &save); d;
		     d = strtok_r(NULL, ":", &save)) {
			if (n < max - 2 && (size_t)snprintf(roots[n], 512, "%s", d) < 512)
				n++;
			else if (cut && !*cut)
				*cut = vars[v];
		}
		free(buf);
	}
	const char *data = getenv("KVPLAN_DATA"), *from = "KVPLAN_DATA";
	if (!data || !data[0]) {
		data = KVP_PKGDATADIR;
		from = "the installed data directory";
#ifdef KVP_BUILD_TREE
		if (in_build_tree())
			data = KVP_SOURCE_TREE, from = "the source tree";
#endif
	}
	if ((size_t)snprintf(roots[n], 512, "%s/profiles", data) < 512)
		n++;
	else if (cut && !*cut)
		*cut = from;
	return n;
}

bool kvp_profile_name_is_path(const char *name)
{
	static const char *const ext[] = {".yaml", ".yml", ".json", ".gguf"};
	size_t n = strlen(name);
	if (strchr(name, '/'))
		return true;
	for (size_t i = 0; i < sizeof ext / sizeof ext[0]; i++) {
		size_t e = strlen(ext[i]);
		if (n > e && strcmp(name + n - e, ext[i]) == 0)
			return true;
	}
	return false;
}

kvp_status kvp_profile_resolve(const char *kind, const char *name, char *path, size_t size,
			       struct kvp_error *err)
{
	if (!name || !name[0])
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, kind, "empty profile name");
	struct stat sb;
	if (kvp_profile_name_is_path(name)) {
		if (stat(name, &sb) != 0)
			return kvp_error_set(err, KVP_STATUS_NOT_FOUND, name, 0, 0, NULL,
					     "%s", errno == ENOENT ? "no such file" : strerror(errno));
		if (!S_ISREG(sb.st_mode))
			return kvp_error_set(err, KVP_STATUS_INVALID, name, 0, 0, NULL,
					     "%s, not a regular file", kvp_input_kind(sb.st_mode));
		if ((size_t)snprintf(path, size, "%s", name) >= size)
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, kind,
					     "path longer than %zu bytes", size - 1);
		return KVP_STATUS_OK;
	}
	char roots[34][512];
	const char *cut;
	int n = profile_roots(roots, 34, &cut);
	for (int i = 0; i < n; i++)
		if (try_dir(roots[i], kind, name, path, size))
			return KVP_STATUS_OK;
	/* no profile of that name: a regular file of that name here (a
	 * folder here never is one: `mkdir vllm` must not hide --engine vllm) */
	if (stat(name, &sb) == 0 && S_ISREG(sb.st_mode) &&
	    (size_t)snprintf(path, size, "%s", name) < size)
		return KVP_STATUS_OK;
	if (cut) /* the profile may be in the folder left out: not "no such profile" */
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, kind,
				     "no profile named '%s' in the folders searched; %s gives a "
				     "folder longer than 511 bytes or more than 32 folders, left out",
				     name, cut);
	char *names[1024];
	size_t k = kvp_profile_list(kind, names, 1024);
	char near[256];
	kvp_suggest_text(name, (const char *const *)names, k, "", near, sizeof near);
	for (size_t i = 0; i < k; i++)
		free(names[i]);
	return kvp_error_set(err, KVP_STATUS_NOT_FOUND, NULL, 0, 0, kind,
			     "no profile named '%s'%s (see `kvplan list %s`)", name, near, kind);
}

bool kvp_profile_data_file(const char *kind, const char *file, char *path, size_t size)
{
	char roots[34][512];
	int n = profile_roots(roots, 34, NULL);
	for (int i = 0; i < n; i++)
		if ((size_t)snprintf(path, size, "%s/%s/%s", roots[i], kind, file) < size &&
		    is_file(path))
			return true;
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t kvp_profile_list(const char *kind, char **names, size_t max)
{
	char roots[34][512];
	int nroots = profile_roots(roots, 34, NULL);
	size_t n = 0;
	for (int r = 0; r < nroots; r++) {
		char dir[1100];
		snprintf(dir, sizeof dir, "%.511s/%.64s", roots[r], kind); /* 511 + 1 + 64 < 1100: whole */
		DIR *d = opendir(dir);
		if (!d)
			continue;
		struct dirent *e;
		while ((e = readdir(d)) && n < max) {
			size_t len = strlen(e->d_name);
			if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
				continue;
			char *nm = strndup(e->d_name, len - 5);
			bool dup = false;
			for (size_t i = 0; i < n && !dup; i++)
				dup = strcmp(names[i], nm) == 0;
			if (dup || !nm)
				free(nm);
			else
				names[n++] = nm;
		}
		closedir(d);
	}
	qsort(names, n, sizeof *names, cmp_str);
	return n;
}

/* ------------------------------------------------------------ key tables */

enum field_type { F_STR, F_U32, F_U64, F_BOOL, F_DTYPE, F_BYTES, F_RATE, F_DOUBLE };

struct field {
	const char *key;
	enum field_type type;
	size_t offset;
	size_t size;       /* F_STR buffer size */
	bool required;
	bool positive;     /* numbers: zero is refused */
};

static kvp_status read_field(const struct kvp_doc *doc, const struct kvp_node *node,
			     const struct field *f, void *base, struct kvp_error *err)
{
	char *p = (char *)base + f->offset;
	kvp_status st = KVP_STATUS_OK;
	uint64_t u;
	double d;
	char buf[64];
	switch (f->type) {
	case F_STR:
		return kvp_node_str(doc, node, f->key, p, f->size, err);
	case F_BOOL:
		return kvp_node_bool(doc, node, f->key, (bool *)p, err);
	case F_U32:
	case F_U64:
		if ((st = kvp_node_u64(doc, node, f->key, &u, err)))
			return st;
		if (f->type == F_U32 && u > UINT32_MAX)
			return kvp_node_fail(doc, node, err, KVP_STATUS_OVERFLOW, f->key,
					     "%s is larger than %u", node->value, UINT32_MAX);
		if (f->positive && u == 0)
			return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, f->key,
					     "must be positive");
		if (f->type == F_U32)
			*(uint32_t *)p = (uint32_t)u;
		else
			*(uint64_t *)p = u;
		return KVP_STATUS_OK;
	case F_BYTES:
		if ((st = kvp_node_bytes(doc, node, f->key, &u, err)))
			return st;
		if (f->positive && u == 0)
			return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, f->key,
					     "must be positive");
		*(uint64_t *)p = u;
		return KVP_STATUS_OK;
	case F_RATE:
	case F_DOUBLE:
		st = f->type == F_RATE ? kvp_node_rate(doc, node, f->key, &d, err)
				       : kvp_node_double(doc, node, f->key, &d, err);
		if (st)
			return st;
		if (f->positive && !(d > 0))
			return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, f->key,
					     "must be positive");
		*(double *)p = d;
		return KVP_STATUS_OK;
	case F_DTYPE:
		if ((st = kvp_node_str(doc, node, f->key, buf, sizeof buf, err)))
			return st;
		if (!kvp_dtype_parse(buf, (enum kvp_dtype *)p) || *(enum kvp_dtype *)p == KVP_DTYPE_AUTO)
			return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, f->key,
					     "unknown dtype '%s' (fp32, fp16, bf16, fp8, int8, "
					     "int4-gptq, int4-awq, mxfp4, nvfp4)", buf);
		return KVP_STATUS_OK;
	}
	return st;
}

/* Walk `map` with `table`: unknown keys and missing required keys are errors. */
static kvp_status walk(const struct kvp_doc *doc, const struct kvp_node *map,
		       const struct field *table, size_t n, const char *const *extra_keys,
		       void *base, struct kvp_error *err)
{
	kvp_status st = kvp_node_expect(doc, map, "", KVP_NODE_MAP, err);
	if (st)
		return st;
	for (size_t i = 0; i < map->n; i++) {
		const char *k = map->keys[i]->value;
		bool known = false;
		for (size_t j = 0; j < n && !known; j++)
			known = strcmp(table[j].key, k) == 0;
		for (const char *const *e = extra_keys; e && *e && !known; e++)
			known = strcmp(*e, k) == 0;
		if (!known) {
			const char *keys[128];
			size_t nk = 0;
			for (size_t j = 0; j < n && nk < 128; j++)
				keys[nk++] = table[j].key;
			for (const char *const *e = extra_keys; e && *e && nk < 128; e++)
				keys[nk++] = *e;
			char near[256];
			kvp_suggest_text(k, keys, nk, "", near, sizeof near);
			return kvp_node_fail(doc, map->keys[i], err, KVP_STATUS_INVALID, k,
					     "unknown key%s", near);
		}
	}
	for (size_t j = 0; j < n; j++) {
		const struct kvp_node *v = kvp_map_get(map, table[j].key);
		if (!v) {
			if (table[j].required)
				return kvp_node_fail(doc, map, err, KVP_STATUS_INVALID, table[j].key,
						     "missing required key");
			continue;
		}
		if ((st = read_field(doc, v, &table[j], base, err)))
			return st;
	}
	return KVP_STATUS_OK;
}

#define M(key, type, member, req, pos) \
	{key, type, offsetof(struct kvp_model, member), sizeof(((struct kvp_model *)0)->member), req, pos}

static const struct field model_fields[] = {
	M("name", F_STR, name, true, false),
	M("hf_id", F_STR, hf_id, false, false),
	M("family", F_STR, family, false, false),
	M("dtype", F_DTYPE, dtype, true, false),
	M("num_layers", F_U32, num_layers, true, true),
	M("hidden_size", F_U32, hidden_size, true, true),
	M("num_heads", F_U32, num_heads, true, true),
	M("num_kv_heads", F_U32, num_kv_heads, true, true),
	M("head_dim", F_U32, head_dim, true, true),
	M("head_dim_v", F_U32, head_dim_v, false, true),
	M("rotary_dim", F_U32, rotary_dim, false, true),
	M("intermediate_size", F_U32, intermediate_size, true, true),
	M("vocab_size", F_U32, vocab_size, true, true),
	M("tie_word_embeddings", F_BOOL, tie_word_embeddings, true, false),
	M("max_context", F_U64, max_context, true, true),
	M("rotary_cache_positions", F_U64, rotary_cache_positions, false, true),
	M("rotary_local_cache", F_BOOL, rotary_local_cache, false, false),
	M("sliding_window", F_U32, sliding_window, false, true),
	M("chunk_size", F_U32, chunk_size, false, true),
	M("params", F_U64, params, true, true),
	M("active_params", F_U64, active_params, false, true),
	M("expert_params", F_U64, expert_params, false, false),
	M("shared_expert_params", F_U64, shared_expert_params, false, false),
	M("weights_dtype", F_DTYPE, weights_dtype, false, false),
	M("expert_dtype", F_DTYPE, expert_dtype, false, false),
};

static const struct field mla_fields[] = {
	M("kv_lora_rank", F_U32, mla_kv_lora_rank, true, true),
	M("qk_rope_head_dim", F_U32, mla_rope_dim, true, true),
	M("q_lora_rank", F_U32, mla_q_lora_rank, false, true),
};

static const struct field mamba_fields[] = {
	M("d_state", F_U32, mamba_d_state, true, true),
	M("d_conv", F_U32, mamba_d_conv, true, true),
	M("expand", F_U32, mamba_expand, true, true),
};

static const struct field linear_fields[] = {
	M("num_key_heads", F_U32, linear_num_key_heads, true, true),
	M("num_value_heads", F_U32, linear_num_value_heads, true, true),
	M("key_head_dim", F_U32, linear_key_dim, true, true),
	M("value_head_dim", F_U32, linear_value_dim, true, true),
	M("conv_kernel", F_U32, linear_conv_kernel, true, true),
	M("state_dtype", F_DTYPE, linear_state_dtype, false, false),
};

static const struct field moe_fields[] = {
	M("num_experts", F_U32, moe_num_experts, true, true),
	M("experts_per_token", F_U32, moe_experts_per_token, true, true),
	M("expert_intermediate_size", F_U32, moe_intermediate_size, false, true),
	M("first_dense_layers", F_U32, moe_first_dense_layers, false, false),
	M("layer_step", F_U32, moe_layer_step, false, true),
};
#undef M

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static const char *const model_sections[] = {"layer_pattern", "mla", "mamba", "linear", "moe",
					     NULL};

static kvp_status walk_section(const struct kvp_doc *doc, const struct kvp_node *root,
			       const char *key, const struct field *t, size_t n,
			       struct kvp_model *m, struct kvp_error *err)
{
	const struct kvp_node *sec = kvp_map_get(root, key);
	if (!sec)
		return KVP_STATUS_OK;
	kvp_status st = kvp_node_expect(doc, sec, key, KVP_NODE_MAP, err);
	return st ? st : walk(doc, sec, t, n, NULL, m, err);
}

kvp_status kvp_model_load_yaml(const char *path, struct kvp_model *m, struct kvp_error *err)
{
	struct kvp_doc *doc;
	kvp_status st = kvp_doc_load_file(path, &doc, err);
	if (st)
		return st;
	memset(m, 0, sizeof *m);
	snprintf(m->path, sizeof m->path, "%s", path);
	if (!doc->root) {
		st = kvp_node_fail(doc, NULL, err, KVP_STATUS_INVALID, NULL, "empty profile");
		goto out;
	}
	if ((st = walk(doc, doc->root, model_fields, NELEM(model_fields), model_sections, m, err)) ||
	    (st = walk_section(doc, doc->root, "mla", mla_fields, NELEM(mla_fields), m, err)) ||
	    (st = walk_section(doc, doc->root, "mamba", mamba_fields, NELEM(mamba_fields), m, err)) ||
	    (st = walk_section(doc, doc->root, "linear", linear_fields, NELEM(linear_fields), m, err)) ||
	    (st = walk_section(doc, doc->root, "moe", moe_fields, NELEM(moe_fields), m, err)))
		goto out;
	if (m->num_layers > KVP_MAX_LAYERS) {
		st = kvp_node_fail(doc, kvp_map_get(doc->root, "num_layers"), err,
				   KVP_STATUS_INVALID, "num_layers", "more than %d layers",
				   KVP_MAX_LAYERS);
		goto out;
	}
	/* layer_pattern: repeated over the layers; default all full */
	const struct kvp_node *pat = kvp_map_get(doc->root, "layer_pattern");
	enum kvp_layer_kind kinds[KVP_MAX_LAYERS];
	size_t nk = 1;
	kinds[0] = KVP_LAYER_FULL;
	if (pat) {
		if ((st = kvp_node_expect(doc, pat, "layer_pattern", KVP_NODE_SEQ, err)))
			goto out;
		if (pat->n == 0 || pat->n > m->num_layers) {
			st = kvp_node_fail(doc, pat, err, KVP_STATUS_INVALID, "layer_pattern",
					   "needs between 1 and num_layers (%u) entries",
					   m->num_layers);
			goto out;
		}
		for (nk = 0; nk < pat->n; nk++) {
			char buf[32];
			const struct kvp_node *it = pat->items[nk];
			if ((st = kvp_node_str(doc, it, "layer_pattern", buf, sizeof buf, err)))
				goto out;
			if (!kvp_layer_kind_parse(buf, &kinds[nk])) {
				st = kvp_node_fail(doc, it, err, KVP_STATUS_INVALID, "layer_pattern",
						   "unknown layer kind '%s' (full, sliding, chunked, "
						   "mla, mamba, linear, none)", buf);
				goto out;
			}
		}
	}
	for (uint32_t i = 0; i < m->num_layers; i++)
		m->layers[i] = (uint8_t)kinds[i % nk];
	if (!m->head_dim_v)
		m->head_dim_v = m->head_dim;
	if (!m->active_params)
		m->active_params = m->params;
	/* the name must match the file so `--model NAME` finds what it says */
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t blen = strlen(base);
	if (blen > 5 && strcmp(base + blen - 5, ".yaml") == 0 &&
	    (strlen(m->name) != blen - 5 || strncmp(m->name, base, blen - 5) != 0)) {
		st = kvp_node_fail(doc, kvp_map_get(doc->root, "name"), err, KVP_STATUS_INVALID,
				   "name", "'%s' differs from the file name '%.*s'", m->name,
				   (int)(blen - 5), base);
		goto out;
	}
	/* which layers hold the experts (moe: first_dense_layers, layer_step),
	 * as many as expert_params holds */
	if (m->moe_num_experts && m->expert_params && m->moe_intermediate_size) {
		uint32_t want = kvp_shape_moe_layers(m), got = 0, step = m->moe_layer_step ? m->moe_layer_step : 1;
		for (uint32_t i = 0; i < m->num_layers; i++)
			got += m->moe_layers[i] = i >= m->moe_first_dense_layers && (i + 1) % step == 0;
		if (got != want) {
			const struct kvp_node *sec = kvp_map_get(doc->root, "moe");
			st = kvp_node_fail(doc, sec ? sec : doc->root, err, KVP_STATUS_INVALID,
					   "first_dense_layers", "first_dense_layers %u and layer_step %u "
					   "give %u MoE layers; expert_params holds %u", m->moe_first_dense_layers,
					   step, got, want);
			goto out;
		}
		m->moe_layers_known = true;
	}
	/* consistency checks, located at the offending key where there is one */
	struct kvp_error e2;
	if ((st = kvp_model_validate(m, &e2))) {
		const struct kvp_node *at = kvp_map_get(doc->root, e2.field);
		st = kvp_node_fail(doc, at ? at : doc->root, err, st, e2.field, "%s", e2.msg);
	}
out:
	kvp_doc_free(doc);
	return st;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static kvp_status load_model_file(const char *path, struct kvp_model *out, struct kvp_error *err)
{
	if (ends_with(path, ".json"))
		return kvp_hf_config_load(path, out, err);
	if (ends_with(path, ".gguf"))
		return kvp_gguf_load(path, out, err);
	return kvp_model_load_yaml(path, out, err);
}

/* Say how a typed name was read, in the model's warnings. */
static void note_name(struct kvp_model *m, const char *typed, const struct kvp_model_name *mn)
{
	if (m->num_warnings >= KVP_MODEL_WARNINGS)
		return;
	char what[320];
	if (mn->profile[0])
		snprintf(what, sizeof what, "the profile '%s'", mn->profile);
	else
		snprintf(what, sizeof what, "%.300s", mn->path);
	snprintf(m->warnings[m->num_warnings++], KVP_WARNING_MAX,
		 "%.100s: warning: model: read as %s (%s%s%s%s%s)", typed, what, mn->how,
		 mn->variant[0] ? "; dropped from the name: " : "", mn->variant,
		 mn->weights_dtype != KVP_DTYPE_AUTO ? "; weights " : "",
		 mn->weights_dtype != KVP_DTYPE_AUTO ? kvp_dtype_name(mn->weights_dtype) : "");
}

/* A bare name with variant words (`Llama-3.1-70B-Instruct`: no org) names
 * the variant's repository, not the base profile's: its id is the profile
 * hf_id's organisation and the name as typed, with the base part spelled as
 * the hf_id spells it when the two differ only in case
 * (`llama-3.1-70b-instruct` -> `meta-llama/Llama-3.1-70B-instruct`; the Hub
 * resolves repository names without case).  Not for a quantization word
 * (`-FP8`, `-AWQ`): those checkpoints come from other organisations, so
 * the base id stays and the weights flags realise the dtype.  A profile
 * without an organisation in its hf_id keeps its id. */
static void bare_variant_id(struct kvp_model *m, const char *typed)
{
	const char *slash = strchr(m->hf_id, '/');
	if (!slash || slash == m->hf_id || typed[0] == '-')
		return;
	const char *repo = slash + 1;
	size_t org = (size_t)(slash - m->hf_id), rl = strlen(repo);
	char id[sizeof m->hf_id];
	int n = strncasecmp(typed, repo, rl) == 0
			? snprintf(id, sizeof id, "%.*s/%s%s", (int)org, m->hf_id, repo, typed + rl)
			: snprintf(id, sizeof id, "%.*s/%s", (int)org, m->hf_id, typed);
	if (n > 0 && (size_t)n < sizeof id)
		memcpy(m->hf_id, id, (size_t)n + 1);
}

/* A name as people write it (model-name.h): the profile whose name or hf_id
 * matches, its weights in the format the name says, its hf_id the id typed. */
static kvp_status load_by_name(const char *typed, struct kvp_model *out, struct kvp_error *err)
{
	char *names[1024];
	size_t n = kvp_profile_list("models", names, 1024);
	char **ids = calloc(n ? n : 1, sizeof *ids);
	struct kvp_model *tmp = malloc(sizeof *tmp);
	kvp_status st = KVP_STATUS_NOMEM;
	struct kvp_model_name mn;
	if (!ids || !tmp) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		char path[512];
		struct kvp_error ignore = {0};
		/* a profile that does not load cannot match by its hf_id */
		if (!kvp_profile_resolve("models", names[i], path, sizeof path, &ignore) &&
		    !kvp_model_load_yaml(path, tmp, &ignore))
			ids[i] = strdup(tmp->hf_id);
	}
	st = kvp_model_name_match(typed, (const char *const *)names, (const char *const *)ids, n,
				  &mn, err);
	if (st)
		goto out;
	char path[512];
	if ((st = kvp_profile_resolve("models", mn.profile, path, sizeof path, err)) ||
	    (st = kvp_model_load_yaml(path, out, err)))
		goto out;
	if (mn.weights_dtype != KVP_DTYPE_AUTO &&
	    (st = kvp_model_set_weights_dtype(out, mn.weights_dtype)))
		st = kvp_error_set(err, st, NULL, 0, 0, "model",
				   "'%s': %s weights cannot be applied to the profile '%s'", typed,
				   kvp_dtype_name(mn.weights_dtype), mn.profile);
	else if (mn.weights_dtype != KVP_DTYPE_AUTO)
		snprintf(out->weights_source, sizeof out->weights_source, "the name's word %s",
			 kvp_dtype_name(mn.weights_dtype));
	if (!st && strchr(typed, '/'))
		snprintf(out->hf_id, sizeof out->hf_id, "%s", typed);
	else if (!st && mn.variant[0] && mn.weights_dtype == KVP_DTYPE_AUTO)
		bare_variant_id(out, typed);
	if (!st)
		note_name(out, typed, &mn);
out:
	for (size_t i = 0; i < n; i++) {
		free(names[i]);
		if (ids)
			free(ids[i]);
	}
	free(ids);
	free(tmp);
	return st;
}

kvp_status kvp_model_load(const char *name_or_path, struct kvp_model *out, struct kvp_error *err)
{
	char path[512];
	struct kvp_model_name mn;
	struct stat sb;
	kvp_status st;
	/* a model directory: its config.json; but a bare name that is a
	 * profile's names the profile, whatever folder of that name is here
	 * (as --gpu and --engine: kvp_profile_resolve) */
	if (stat(name_or_path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		struct kvp_error ignore = {0};
		if (!kvp_profile_name_is_path(name_or_path) &&
		    !kvp_profile_resolve("models", name_or_path, path, sizeof path, &ignore))
			return load_model_file(path, out, err);
		if ((st = kvp_model_name_find_file(name_or_path, &mn, err)))
			return st;
		return load_model_file(mn.path, out, err);
	}
	st = kvp_profile_resolve("models", name_or_path, path, sizeof path, err);
	if (!st)
		return load_model_file(path, out, err);
	if (st != KVP_STATUS_NOT_FOUND)
		return st;
	/* a Hugging Face id in the local cache, then a profile by its written name */
	struct kvp_error first = *err;
	kvp_status cached = kvp_model_name_find_file(name_or_path, &mn, err);
	if (!cached) {
		if ((st = load_model_file(mn.path, out, err)))
			return st;
		if (!out->hf_id[0] || strchr(name_or_path, '/'))
			snprintf(out->hf_id, sizeof out->hf_id, "%s", name_or_path);
		note_name(out, name_or_path, &mn);
		return KVP_STATUS_OK;
	}
	if (cached != KVP_STATUS_NOT_FOUND)
		return cached;
	/* a path that names a file (not an org/name id) keeps its own error */
	if (name_or_path[0] == '.' || name_or_path[0] == '/' ||
	    strchr(name_or_path, '/') != strrchr(name_or_path, '/') || ends_with(name_or_path, ".yaml") ||
	    ends_with(name_or_path, ".json") || ends_with(name_or_path, ".gguf")) {
		*err = first;
		return KVP_STATUS_NOT_FOUND;
	}
	return load_by_name(name_or_path, out, err);
}

#define G(key, type, member, req, pos) \
	{key, type, offsetof(struct kvp_gpu, member), sizeof(((struct kvp_gpu *)0)->member), req, pos}

static const struct field gpu_fields[] = {
	G("name", F_STR, name, true, false),
	G("vendor", F_STR, vendor, false, false),
	G("memory", F_BYTES, memory_bytes, true, true),
	G("bandwidth", F_RATE, bandwidth_bps, true, true),
	G("bf16_tflops", F_DOUBLE, bf16_flops, true, true),
	G("fp8_tflops", F_DOUBLE, fp8_flops, false, false),
	G("fp16_acc16_tflops", F_DOUBLE, fp16_acc16_flops, false, true),
	G("fp8_acc16_tflops", F_DOUBLE, fp8_acc16_flops, false, true),
	G("int8_tops", F_DOUBLE, int8_ops, false, true),
	G("fp6_tflops", F_DOUBLE, fp6_flops, false, true),
	G("fp4_tflops", F_DOUBLE, fp4_flops, false, true),
	G("host_link", F_STR, host_link, true, false),
	G("nvlink", F_RATE, nvlink_bps, false, false),
	G("nvlink_domain", F_U32, nvlink_domain, false, false),
	G("nvlink_mesh", F_BOOL, nvlink_mesh, false, false),
	G("pcie_p2p", F_BOOL, pcie_p2p, false, false),
	G("pcie_busbw_2", F_RATE, pcie_busbw[0], false, true),
	G("pcie_busbw_4", F_RATE, pcie_busbw[1], false, true),
	G("pcie_busbw_8", F_RATE, pcie_busbw[2], false, true),
	G("node_gpus", F_U32, node_gpus, false, true),
	G("scale_out", F_RATE, scale_out_bps, false, true),
	G("price_per_hour", F_DOUBLE, price_per_hour, false, true),
	G("price_kind", F_STR, price_kind, false, false),
	G("price_provider", F_STR, price_provider, false, false),
	G("price_date", F_STR, price_date, false, false),
	G("purchase_price", F_DOUBLE, purchase_usd, false, true),
	G("purchase_kind", F_STR, purchase_kind, false, false),
	G("purchase_date", F_STR, purchase_date, false, false),
	G("tdp_watts", F_DOUBLE, tdp_watts, false, true),
	G("server_price", F_DOUBLE, server_usd, false, true),
	G("server_date", F_STR, server_date, false, false),
	G("compute_capability", F_DOUBLE, compute_capability, false, true),
	G("l2_cache", F_BYTES, l2_bytes, false, false),
};

static const struct field calib_fields[] = {
	G("decode_bw_efficiency", F_DOUBLE, decode_bw_efficiency, false, true),
	G("prefill_flops_efficiency", F_DOUBLE, prefill_flops_efficiency, false, true),
};
#undef G

static const char *const gpu_sections[] = {"calibration", NULL};

/* The topology keys agree: an NVLink rate comes with the size of the domain
 * it joins (a bridge joins 2, an NVSwitch board 8), a domain with a rate, and
 * a server size with the network that leaves it. */
static kvp_status check_topology(const struct kvp_doc *doc, const struct kvp_gpu *g,
				 struct kvp_error *err)
{
	const struct kvp_node *root = doc->root, *dom = kvp_map_get(root, "nvlink_domain");
	if (g->nvlink_bps > 0 && g->nvlink_domain < 2)
		return kvp_node_fail(doc, dom ? dom : kvp_map_get(root, "nvlink"), err,
				     KVP_STATUS_INVALID, dom ? "nvlink_domain" : "nvlink",
				     "an NVLink rate needs nvlink_domain, the GPUs it joins (2 for "
				     "bridged pairs, 8 for an NVSwitch board), at least 2");
	if (!(g->nvlink_bps > 0) && g->nvlink_domain > 1)
		return kvp_node_fail(doc, dom, err, KVP_STATUS_INVALID, "nvlink_domain",
				     "given without an nvlink rate");
	if ((g->node_gpus > 0) != (g->scale_out_bps > 0)) {
		const char *key = g->node_gpus ? "node_gpus" : "scale_out";
		return kvp_node_fail(doc, kvp_map_get(root, key), err, KVP_STATUS_INVALID, key,
				     "node_gpus and scale_out come together (the GPUs in one server "
				     "and the network that joins servers)");
	}
	return KVP_STATUS_OK;
}

/* "YYYY-MM-DD", a real month and day (not a calendar check of each month). */
static bool is_date(const char *s)
{
	int y, m, d;
	char end;
	return strlen(s) == 10 && sscanf(s, "%4d-%2d-%2d%c", &y, &m, &d, &end) == 3 && s[4] == '-' &&
	       s[7] == '-' && y >= 1990 && m >= 1 && m <= 12 && d >= 1 && d <= 31;
}

/* The cost keys agree: a price kind from the known list, a purchase kind
 * list or street, dates as YYYY-MM-DD, and a label only beside its price. */
static kvp_status check_cost(const struct kvp_doc *doc, const struct kvp_gpu *g,
			     struct kvp_error *err)
{
	static const char *const kinds[] = {"on-demand", "reserved-1y", "reserved-3y", "spot",
					    "serverless", NULL};
	const struct kvp_node *root = doc->root;
	bool ok = !g->price_kind[0];
	for (const char *const *k = kinds; *k && !ok; k++)
		ok = strcmp(*k, g->price_kind) == 0;
	if (!ok)
		return kvp_node_fail(doc, kvp_map_get(root, "price_kind"), err, KVP_STATUS_INVALID,
				     "price_kind", "unknown kind '%s' (on-demand, reserved-1y, "
				     "reserved-3y, spot, serverless)", g->price_kind);
	if (g->purchase_kind[0] && strcmp(g->purchase_kind, "list") && strcmp(g->purchase_kind, "street"))
		return kvp_node_fail(doc, kvp_map_get(root, "purchase_kind"), err, KVP_STATUS_INVALID,
				     "purchase_kind", "unknown kind '%s' (list, street)", g->purchase_kind);
	static const char *const dates[] = {"price_date", "purchase_date", "server_date"};
	const char *vals[] = {g->price_date, g->purchase_date, g->server_date};
	for (int i = 0; i < 3; i++)
		if (vals[i][0] && !is_date(vals[i]))
			return kvp_node_fail(doc, kvp_map_get(root, dates[i]), err, KVP_STATUS_INVALID,
					     dates[i], "expected a date YYYY-MM-DD, got '%s'", vals[i]);
	static const char *const needs_price[] = {"price_kind", "price_provider", "price_date"};
	for (int i = 0; i < 3; i++)
		if (!(g->price_per_hour > 0) && kvp_map_get(root, needs_price[i]))
			return kvp_node_fail(doc, kvp_map_get(root, needs_price[i]), err,
					     KVP_STATUS_INVALID, needs_price[i],
					     "labels a price: give price_per_hour too");
	static const char *const needs_purchase[] = {"purchase_kind", "purchase_date"};
	for (int i = 0; i < 2; i++)
		if (!(g->purchase_usd > 0) && kvp_map_get(root, needs_purchase[i]))
			return kvp_node_fail(doc, kvp_map_get(root, needs_purchase[i]), err,
					     KVP_STATUS_INVALID, needs_purchase[i],
					     "labels a purchase price: give purchase_price too");
	if (!(g->server_usd > 0) && kvp_map_get(root, "server_date"))
		return kvp_node_fail(doc, kvp_map_get(root, "server_date"), err, KVP_STATUS_INVALID,
				     "server_date", "labels a server price: give server_price too");
	if (g->server_usd > 0 && !g->node_gpus)
		return kvp_node_fail(doc, kvp_map_get(root, "server_price"), err, KVP_STATUS_INVALID,
				     "server_price", "prices a whole server: give node_gpus, the GPUs "
				     "in it, too");
	return KVP_STATUS_OK;
}

kvp_status kvp_gpu_load(const char *name_or_path, struct kvp_gpu *g, struct kvp_error *err)
{
	char path[512];
	kvp_status st = kvp_profile_resolve("gpus", name_or_path, path, sizeof path, err);
	if (st)
		return st;
	struct kvp_doc *doc;
	if ((st = kvp_doc_load_file(path, &doc, err)))
		return st;
	memset(g, 0, sizeof *g);
	g->pcie_p2p = true; /* unless the profile says otherwise */
	snprintf(g->path, sizeof g->path, "%s", path);
	if (!doc->root) {
		st = kvp_node_fail(doc, NULL, err, KVP_STATUS_INVALID, NULL, "empty profile");
		goto out;
	}
	if ((st = walk(doc, doc->root, gpu_fields, NELEM(gpu_fields), gpu_sections, g, err)))
		goto out;
	const struct kvp_node *cal = kvp_map_get(doc->root, "calibration");
	if (cal && ((st = kvp_node_expect(doc, cal, "calibration", KVP_NODE_MAP, err)) ||
		    (st = walk(doc, cal, calib_fields, NELEM(calib_fields), NULL, g, err))))
		goto out;
	/* TFLOPS in the file, FLOP/s in memory: 1e300 TFLOPS is a finite
	 * number in the file but an infinite one here, so it is refused */
	static const char *const peak_keys[] = {"bf16_tflops", "fp8_tflops", "fp16_acc16_tflops",
						"fp8_acc16_tflops", "int8_tops", "fp6_tflops",
						"fp4_tflops"};
	double *peaks[] = {&g->bf16_flops, &g->fp8_flops, &g->fp16_acc16_flops,
			   &g->fp8_acc16_flops, &g->int8_ops, &g->fp6_flops, &g->fp4_flops};
	for (size_t i = 0; i < NELEM(peaks); i++) {
		*peaks[i] *= 1e12;
		if (!isfinite(*peaks[i])) {
			st = kvp_node_fail(doc, kvp_map_get(doc->root, peak_keys[i]), err,
					   KVP_STATUS_OVERFLOW, peak_keys[i], "%s %s is out of range",
					   kvp_map_get(doc->root, peak_keys[i])->value,
					   i == 4 ? "TOPS" : "TFLOPS");
			goto out;
		}
	}
	if (g->decode_bw_efficiency > 1 || g->prefill_flops_efficiency > 1) {
		st = kvp_node_fail(doc, cal, err, KVP_STATUS_INVALID, "calibration",
				   "efficiencies are fractions in (0, 1]");
		goto out;
	}
	if ((st = check_topology(doc, g, err)) || (st = check_cost(doc, g, err)))
		goto out;
	static const char *const links[] = {"pcie3x16", "pcie4x16", "pcie5x16", "pcie6x16",
					    "nvlink-c2c", NULL};
	bool ok = false;
	for (const char *const *l = links; *l && !ok; l++)
		ok = strcmp(*l, g->host_link) == 0;
	if (!ok)
		st = kvp_node_fail(doc, kvp_map_get(doc->root, "host_link"), err,
				   KVP_STATUS_INVALID, "host_link",
				   "unknown link '%s' (pcie3x16, pcie4x16, pcie5x16, pcie6x16, "
				   "nvlink-c2c)", g->host_link);
out:
	kvp_doc_free(doc);
	return st;
}
