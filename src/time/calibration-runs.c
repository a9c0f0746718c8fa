/* calibration-runs.c: the runs a `kvplan calibrate` file was fitted on
 * (calibration-runs.h). */
#include "time/calibration-runs.h"

#include <stdlib.h>
#include <string.h>

#include "base/yaml-walk.h"
#include "time/calibration.h"

/* One item of source.runs into s; *has false when it records no prompts. */
static kvp_status read_run(const struct kvp_doc *doc, const struct kvp_node *it,
			   struct kvp_calib_seen *s, bool *has, struct kvp_error *err)
{
	const struct kvp_node *np = kvp_map_get(it, "prompts"),
			      *nh = kvp_map_get(it, "prompts_hash"),
			      *nr = kvp_map_get(it, "run"), *nd = kvp_map_get(it, "date"),
			      *nm = kvp_map_get(it, "model_id");
	*has = np || nh;
	if (!*has)
		return KVP_STATUS_OK;
	if (!np || !nh)
		return kvp_node_fail(doc, it, err, KVP_STATUS_INVALID, np ? "prompts_hash" : "prompts",
				     "a run that records its prompts gives both 'prompts' and "
				     "'prompts_hash' (as kvplan calibrate writes them)");
	memset(s, 0, sizeof *s);
	char hex[32];
	kvp_status st;
	if ((st = kvp_node_u64(doc, np, "prompts", &s->prompts_listed, err)) ||
	    (st = kvp_node_str(doc, nh, "prompts_hash", hex, sizeof hex, err)) ||
	    (nr && (st = kvp_node_str(doc, nr, "run", s->run, sizeof s->run, err))) ||
	    (nd && (st = kvp_node_str(doc, nd, "date", s->date, sizeof s->date, err))) ||
	    (nm && (st = kvp_node_str(doc, nm, "model_id", s->model_id, sizeof s->model_id, err))))
		return st;
	if (strlen(hex) != 16 || strspn(hex, "0123456789abcdef") != 16)
		return kvp_node_fail(doc, nh, err, KVP_STATUS_INVALID, "prompts_hash",
				     "expected 16 lower-case hex digits (an FNV-1a hash of the "
				     "run's input_lens), got '%s'", hex);
	s->prompts_hash = strtoull(hex, NULL, 16);
	if (!s->run[0])
		snprintf(s->run, sizeof s->run, "%s:%d", doc->path, it->line);
	return KVP_STATUS_OK;
}

kvp_status kvp_calibration_runs_load(const char *path, const struct kvp_gpu *g,
				     struct kvp_calib_seen **v, size_t *n,
				     struct kvp_error *err)
{
	const char *dot = strrchr(path, '.');
	if (dot && strcmp(dot, ".csv") == 0)
		return KVP_STATUS_OK;
	struct kvp_doc *doc;
	kvp_status st = kvp_doc_load_file(path, &doc, err);
	if (st)
		return st;
	const struct kvp_node *list = doc->root && doc->root->type == KVP_NODE_MAP
					      ? kvp_map_get(doc->root, "calibration") : NULL;
	const struct kvp_node *e = NULL;
	struct kvp_calibration table = {0};
	if (list)
		st = kvp_calibration_table(doc, list, g, &table, &e, err);
	const struct kvp_node *src = e ? kvp_map_get(e, "source") : NULL;
	const struct kvp_node *runs = src && src->type == KVP_NODE_MAP ? kvp_map_get(src, "runs")
								       : NULL;
	for (size_t i = 0; runs && runs->type == KVP_NODE_SEQ && i < runs->n && !st; i++) {
		const struct kvp_node *it = runs->items[i];
		struct kvp_calib_seen s;
		bool has = false;
		if (it->type != KVP_NODE_MAP || (st = read_run(doc, it, &s, &has, err)) || !has)
			continue;
		struct kvp_calib_seen *nv = realloc(*v, (*n + 1) * sizeof *nv);
		if (!nv) {
			st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
			break;
		}
		*v = nv;
		nv[(*n)++] = s;
	}
	kvp_doc_free(doc);
	return st;
}
