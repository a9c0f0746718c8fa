/* model-name.c: model names as people write them (see model-name.h): the
 * normal form that drops case, the organisation and the words a checkpoint's
 * name adds to the model's; the Hugging Face cache and model directories on
 * this machine.  No network: a repo id that is neither cached nor a profile
 * is an error that says where it looked. */
#include "read/model-name.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/suggest.h"

/* Words of a checkpoint's name that are not the model's, and the weights
 * format a quantization word says (AUTO: none). */
static const struct {
	const char *word;
	enum kvp_dtype dt;
} variant_words[] = {
	{"instruct", KVP_DTYPE_AUTO}, {"chat", KVP_DTYPE_AUTO}, {"it", KVP_DTYPE_AUTO},
	{"base", KVP_DTYPE_AUTO},     {"hf", KVP_DTYPE_AUTO},   {"dynamic", KVP_DTYPE_AUTO},
	{"fp8", KVP_DTYPE_FP8},       {"awq", KVP_DTYPE_INT4_AWQ}, {"gptq", KVP_DTYPE_INT4_GPTQ},
	{"int4", KVP_DTYPE_INT4},     {"w4a16", KVP_DTYPE_INT4}, {"int8", KVP_DTYPE_INT8},
	{"w8a8", KVP_DTYPE_INT8},
};

static bool is_dir(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static bool is_file(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

void kvp_model_name_normalize(const char *typed, char *out, size_t size, char *variant,
			      size_t vsize, enum kvp_dtype *wdt)
{
	char low[512];
	const char *slash = strrchr(typed, '/');
	const char *s = slash ? slash + 1 : typed;
	size_t n = 0;
	for (; *s && n + 1 < sizeof low; s++)
		low[n++] = (char)tolower((unsigned char)*s);
	low[n] = 0;
	char *p = low;
	if (strncmp(p, "meta-", 5) == 0 && p[5])
		p += 5;
	if (size)
		out[0] = 0;
	if (variant && vsize)
		variant[0] = 0;
	if (wdt)
		*wdt = KVP_DTYPE_AUTO;
	size_t used = 0, vused = 0;
	for (char *save = NULL, *w = strtok_r(p, "-", &save); w; w = strtok_r(NULL, "-", &save)) {
		bool drop = false;
		for (size_t i = 0; i < sizeof variant_words / sizeof variant_words[0]; i++)
			if (strcmp(w, variant_words[i].word) == 0) {
				drop = true;
				if (wdt && variant_words[i].dt != KVP_DTYPE_AUTO)
					*wdt = variant_words[i].dt;
			}
		if (drop) {
			if (variant && vsize)
				vused += (size_t)snprintf(variant + (vused < vsize ? vused : vsize - 1),
							  vused < vsize ? vsize - vused : 1, "%s%s",
							  vused ? "-" : "", w);
			continue;
		}
		if (used < size)
			used += (size_t)snprintf(out + used, size - used, "%s%s", used ? "-" : "", w);
	}
}

/* models--org--name/snapshots/<rev>/config.json under one hub directory. */
static bool in_cache(const char *hub, const char *org, const char *name, char *path, size_t size)
{
	char repo[1024], rev[256] = "";
	if ((size_t)snprintf(repo, sizeof repo, "%s/models--%s--%s", hub, org, name) >= sizeof repo ||
	    !is_dir(repo))
		return false;
	char ref[1100];
	snprintf(ref, sizeof ref, "%s/refs/main", repo);
	FILE *f = fopen(ref, "r");
	if (f) {
		if (!fgets(rev, sizeof rev, f))
			rev[0] = 0;
		fclose(f);
		rev[strcspn(rev, "\r\n")] = 0;
		if (strchr(rev, '/') || strcmp(rev, "..") == 0)
			rev[0] = 0;
	}
	if (rev[0] && (size_t)snprintf(path, size, "%s/snapshots/%s/config.json", repo, rev) < size &&
	    is_file(path))
		return true;
	/* no usable refs/main: the first snapshot, in name order, with a config */
	char snaps[1100];
	snprintf(snaps, sizeof snaps, "%s/snapshots", repo);
	DIR *d = opendir(snaps);
	if (!d)
		return false;
	char best[256] = "";
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.' || strlen(e->d_name) >= sizeof best)
			continue;
		char cfg[1400];
		if ((size_t)snprintf(cfg, sizeof cfg, "%s/%s/config.json", snaps, e->d_name) < sizeof cfg &&
		    is_file(cfg) && (!best[0] || strcmp(e->d_name, best) < 0))
			snprintf(best, sizeof best, "%s", e->d_name);
	}
	closedir(d);
	return best[0] && (size_t)snprintf(path, size, "%s/%s/config.json", snaps, best) < size;
}

kvp_status kvp_model_name_find_file(const char *typed, struct kvp_model_name *out,
				    struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	out->weights_dtype = KVP_DTYPE_AUTO;
	if (is_dir(typed)) {
		if ((size_t)snprintf(out->path, sizeof out->path, "%s/config.json", typed) >=
			    sizeof out->path ||
		    !is_file(out->path))
			return kvp_error_set(err, KVP_STATUS_INVALID, typed, 0, 0, NULL,
					     "a directory without a config.json: give a model "
					     "directory, its config.json, a profile or a GGUF file");
		snprintf(out->how, sizeof out->how, "model directory");
		return KVP_STATUS_OK;
	}
	/* org/name: one slash, neither end, no dot path */
	const char *slash = strchr(typed, '/');
	if (!slash || slash == typed || !slash[1] || strchr(slash + 1, '/') || typed[0] == '.')
		return KVP_STATUS_NOT_FOUND;
	char org[256], name[256];
	size_t ol = (size_t)(slash - typed);
	if (ol >= sizeof org || strlen(slash + 1) >= sizeof name)
		return KVP_STATUS_NOT_FOUND;
	memcpy(org, typed, ol);
	org[ol] = 0;
	snprintf(name, sizeof name, "%s", slash + 1);
	char hubs[4][1024];
	int nh = 0;
	const char *v;
	if ((v = getenv("HF_HUB_CACHE")) && v[0])
		snprintf(hubs[nh++], sizeof hubs[0], "%s", v);
	if ((v = getenv("HF_HOME")) && v[0])
		snprintf(hubs[nh++], sizeof hubs[0], "%s/hub", v);
	if ((v = getenv("XDG_CACHE_HOME")) && v[0])
		snprintf(hubs[nh++], sizeof hubs[0], "%s/huggingface/hub", v);
	if ((v = getenv("HOME")) && v[0])
		snprintf(hubs[nh++], sizeof hubs[0], "%s/.cache/huggingface/hub", v);
	for (int i = 0; i < nh; i++)
		if (in_cache(hubs[i], org, name, out->path, sizeof out->path)) {
			snprintf(out->how, sizeof out->how, "Hugging Face cache");
			return KVP_STATUS_OK;
		}
	return KVP_STATUS_NOT_FOUND;
}

kvp_status kvp_model_name_match(const char *typed, const char *const *names,
				const char *const *hf_ids, size_t n, struct kvp_model_name *out,
				struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	char want[512], cand[512];
	kvp_model_name_normalize(typed, want, sizeof want, out->variant, sizeof out->variant,
				 &out->weights_dtype);
	size_t hit = n, hits = 0;
	char also[256] = "";
	for (size_t i = 0; i < n; i++) {
		bool same = false;
		kvp_model_name_normalize(names[i], cand, sizeof cand, NULL, 0, NULL);
		same = want[0] && strcmp(want, cand) == 0;
		if (!same && hf_ids && hf_ids[i] && hf_ids[i][0]) {
			kvp_model_name_normalize(hf_ids[i], cand, sizeof cand, NULL, 0, NULL);
			same = want[0] && strcmp(want, cand) == 0;
		}
		if (!same)
			continue;
		if (hits++ == 0)
			hit = i;
		else
			snprintf(also + strlen(also), sizeof also - strlen(also), "%s'%s'",
				 also[0] ? ", " : "", names[i]);
	}
	if (hits > 1)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "model",
				     "'%s' matches the profiles '%s', %s: name one", typed, names[hit],
				     also);
	if (hits == 1) {
		snprintf(out->profile, sizeof out->profile, "%s", names[hit]);
		snprintf(out->how, sizeof out->how, "matched without case and variant words");
		return KVP_STATUS_OK;
	}
	/* did you mean: over the normalized names */
	char **norm = calloc(n ? n : 1, sizeof *norm);
	char near[256] = "";
	if (norm) {
		size_t k = 0;
		for (; k < n; k++) {
			kvp_model_name_normalize(names[k], cand, sizeof cand, NULL, 0, NULL);
			if (!(norm[k] = strdup(cand)))
				break;
		}
		kvp_suggest_text(want, (const char *const *)norm, k, "", near, sizeof near);
		for (size_t i = 0; i < k; i++)
			free(norm[i]);
		free(norm);
	}
	return kvp_error_set(err, KVP_STATUS_NOT_FOUND, NULL, 0, 0, "model",
			     "no profile named '%s'%s (see `kvplan list models`; a Hugging Face "
			     "id is read from the local cache only)",
			     typed, near);
}
