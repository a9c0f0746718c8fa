/* name-index.h: find a name among many in constant time: the duplicate
 * checks and look-ups of `kvplan check` (scenario names in an expectations
 * file, in a baseline), which a plain scan made quadratic (a file of 100,000
 * scenarios: 5 x 10^9 comparisons before the first one ran).
 *
 * Open addressing over borrowed strings: the index stores pointers to the
 * caller's names, which must outlive it and not move. */
#ifndef KVP_NAME_INDEX_H
#define KVP_NAME_INDEX_H

#include <stdbool.h>
#include <stddef.h>

struct kvp_name_index {
	struct kvp_name_slot {
		const char *name; /* NULL: empty */
		size_t pos;
	} *slot;
	size_t cap, n;    /* cap a power of two, kept above 2n */
};

/* An empty index; free with kvp_name_index_free (also after a failed add). */
void kvp_name_index_init(struct kvp_name_index *ix);
void kvp_name_index_free(struct kvp_name_index *ix);

/* The position stored with `name`, or SIZE_MAX when it is not there. */
size_t kvp_name_index_find(const struct kvp_name_index *ix, const char *name);

/* Store `name` (borrowed) with `pos`; a name already there keeps its first
 * position.  False when memory runs out. */
bool kvp_name_index_add(struct kvp_name_index *ix, const char *name, size_t pos);

#endif
