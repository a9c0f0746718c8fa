/* check-file.c: an expectations file as a whole: its document, `defaults:`
 * and the list of scenarios (each walked by check-scenario.c), names kept
 * unique.  Read whole (kvp_check_load: every scenario kept) or opened to be
 * read one scenario at a time (kvp_check_open: every scenario read and
 * checked once, then none kept but the document, so that `kvplan check`
 * holds one scenario at a time; kvplan(1), CHECK, states the bound).  Both
 * refuse the same files with the same first error. */
#include "check/check-private.h"

#include <stdlib.h>
#include <string.h>

#include "base/name-index.h"
#include "base/yaml-walk.h"

/* The document while its scenarios are read: kept by a file opened with
 * kvp_check_open, freed at once by kvp_check_load. */
struct kvp_check_source {
	struct kvp_doc *doc;
	struct kvp_check_walk *walk;
	const struct kvp_node *list;       /* `scenarios:` */
};

static void source_free(struct kvp_check_source *src)
{
	if (!src)
		return;
	kvp_check_walk_free(src->walk);
	kvp_doc_free(src->doc);
	free(src);
}

/* The top level of the document, `defaults:` and the list; takes doc
 * (freed on failure). */
static kvp_status source_open(struct kvp_doc *doc, struct kvp_check_source **out,
			      struct kvp_error *err)
{
	static const char *const top[] = {"defaults", "scenarios", NULL};
	*out = NULL;
	kvp_status st = KVP_STATUS_OK;
	struct kvp_check_source *src = NULL;
	if (!doc->root)
		st = kvp_error_set(err, KVP_STATUS_INVALID, doc->path, 0, 0, NULL,
				   "empty file; expected 'scenarios:'");
	if (!st)
		st = kvp_node_expect(doc, doc->root, "expectations", KVP_NODE_MAP, err);
	if (!st)
		st = kvp_map_only(doc, doc->root, top, err);
	if (!st && !(src = calloc(1, sizeof *src)))
		st = kvp_error_set(err, KVP_STATUS_NOMEM, doc->path, 0, 0, NULL, "out of memory");
	if (st) {
		kvp_doc_free(doc);
		return st;
	}
	src->doc = doc;
	st = kvp_check_walk_new(doc, kvp_map_get(doc->root, "defaults"), &src->walk, err);
	const struct kvp_node *list = st ? NULL : kvp_map_get(doc->root, "scenarios");
	if (!st && !list)
		st = kvp_node_fail(doc, doc->root, err, KVP_STATUS_INVALID, "scenarios",
				   "missing: list the scenarios to check");
	if (!st)
		st = kvp_node_expect(doc, list, "scenarios", KVP_NODE_SEQ, err);
	if (!st && list->n == 0)
		st = kvp_node_fail(doc, list, err, KVP_STATUS_INVALID, "scenarios", "empty list");
	if (st) {
		source_free(src);
		return st;
	}
	src->list = list;
	*out = src;
	return KVP_STATUS_OK;
}

/* Read scenario i of the list into s (free its blocks with
 * kvp_check_scenario_clear, also on failure).  names: the names of the
 * scenarios before it, for the duplicate check (i is added); NULL once the
 * file has been checked whole. */
static kvp_status source_read(struct kvp_check_source *src, size_t i, struct kvp_name_index *names,
			      struct kvp_check_scenario *s, struct kvp_error *err)
{
	const struct kvp_doc *doc = src->doc;
	const struct kvp_node *m = src->list->items[i];
	kvp_status st = kvp_check_walk_scenario(src->walk, m, s, err);
	if (st)
		return st;
	if (names) {
		/* hashed: linear time; the index borrows the document's copy of
		 * the name (s->name is the same text), which outlives the check */
		const struct kvp_node *nn = kvp_map_get(m, "name");
		size_t j = kvp_name_index_find(names, s->name);
		if (j != SIZE_MAX)
			return kvp_node_fail(doc, nn, err, KVP_STATUS_INVALID, "name",
					     "duplicate scenario '%s' (first at line %d)", s->name,
					     src->list->items[j]->line);
		if (!kvp_name_index_add(names, nn->value, i))
			return kvp_error_set(err, KVP_STATUS_NOMEM, doc->path, 0, 0, NULL,
					     "out of memory");
	}
	return kvp_check_walk_finish(src->walk, m, s, err);
}

/* Every scenario of doc read and checked in order; kept in f->scenarios
 * when keep, else each freed once checked and the source kept in f->src. */
static kvp_status check_load_doc(struct kvp_doc *doc, bool keep, struct kvp_check_file **out,
				 struct kvp_error *err)
{
	struct kvp_check_file *f = calloc(1, sizeof *f);
	if (!f) {
		kvp_status st = kvp_error_set(err, KVP_STATUS_NOMEM, doc->path, 0, 0, NULL,
					      "out of memory");
		kvp_doc_free(doc);
		return st;
	}
	snprintf(f->path, sizeof f->path, "%s", doc->path);
	struct kvp_check_source *src;
	kvp_status st = source_open(doc, &src, err);
	if (st) {
		free(f);
		return st;
	}
	f->src = src;
	size_t n = src->list->n;
	struct kvp_check_scenario *one = keep ? NULL : malloc(sizeof *one);
	if (keep ? !(f->scenarios = calloc(n, sizeof *f->scenarios)) : !one) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, f->path, 0, 0, NULL, "out of memory");
		kvp_check_file_free(f);
		return st;
	}
	struct kvp_name_index names; /* scenario names seen: duplicates in linear time */
	kvp_name_index_init(&names);
	for (size_t i = 0; i < n && !st; i++) {
		struct kvp_check_scenario *s = keep ? &f->scenarios[i] : one;
		f->n += keep;
		st = source_read(src, i, &names, s, err);
		if (!keep)
			kvp_check_scenario_clear(s);
	}
	kvp_name_index_free(&names);
	free(one);
	if (keep) {
		source_free(src);
		f->src = NULL;
	} else {
		f->n = n;
	}
	if (st) {
		kvp_check_file_free(f);
		return st;
	}
	*out = f;
	return KVP_STATUS_OK;
}

/* A file name the document keeps whole: its folder is where the file's
 * relative paths are read from, and a cut name would be another folder. */
static kvp_status check_name_fits(const char *name, struct kvp_error *err)
{
	size_t max = sizeof ((struct kvp_doc *)0)->path - 1;
	if (strlen(name) > max)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, "expectations",
				     "path longer than %zu bytes", max);
	return KVP_STATUS_OK;
}

static kvp_status check_load_path(const char *path, bool keep, struct kvp_check_file **out,
				  struct kvp_error *err)
{
	struct kvp_doc *doc;
	*out = NULL;
	kvp_status st = check_name_fits(path, err);
	if (st)
		return st;
	st = kvp_doc_load_file(path, &doc, err);
	return st ? st : check_load_doc(doc, keep, out, err);
}

kvp_status kvp_check_load(const char *path, struct kvp_check_file **out, struct kvp_error *err)
{
	return check_load_path(path, true, out, err);
}

kvp_status kvp_check_open(const char *path, struct kvp_check_file **out, struct kvp_error *err)
{
	return check_load_path(path, false, out, err);
}

kvp_status kvp_check_load_buffer(const char *name, const char *buf, size_t len,
				 struct kvp_check_file **out, struct kvp_error *err)
{
	struct kvp_doc *doc;
	*out = NULL;
	kvp_status st = check_name_fits(name, err);
	if (st)
		return st;
	st = kvp_doc_load_buffer(name, buf, len, &doc, err);
	return st ? st : check_load_doc(doc, true, out, err);
}

kvp_status kvp_check_scenario_read(const struct kvp_check_file *f, size_t i,
				   struct kvp_check_scenario *s, struct kvp_error *err)
{
	memset(s, 0, sizeof *s);
	if (!f->src || i >= f->n)
		return kvp_error_set(err, KVP_STATUS_USAGE, f->path, 0, 0, NULL,
				     "no scenario %zu to read", i);
	kvp_status st = source_read(f->src, i, NULL, s, err);
	if (st)
		kvp_check_scenario_clear(s);
	return st;
}

void kvp_check_file_free(struct kvp_check_file *f)
{
	if (!f)
		return;
	for (size_t i = 0; f->scenarios && i < f->n; i++)
		kvp_check_scenario_clear(&f->scenarios[i]);
	free(f->scenarios);
	source_free(f->src);
	free(f);
}
