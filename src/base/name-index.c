/* name-index.c: an open-addressing hash of borrowed names (linear probing,
 * FNV-1a, doubled at half full).  See name-index.h. */
#include "base/name-index.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__clang__)
__attribute__((no_sanitize("unsigned-integer-overflow")))
#endif
static size_t name_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a 64; the wrap is the hash */
	while (*s)
		h = (h ^ (uint8_t)*s++) * 0x100000001b3ULL;
	return (size_t)(h ^ (h >> 32));
}

void kvp_name_index_init(struct kvp_name_index *ix)
{
	memset(ix, 0, sizeof *ix);
}

void kvp_name_index_free(struct kvp_name_index *ix)
{
	free(ix->slot);
	memset(ix, 0, sizeof *ix);
}

/* The slot holding `name`, or the empty one where it would go. */
static struct kvp_name_slot *probe(struct kvp_name_slot *slot, size_t cap, const char *name)
{
	size_t i = name_hash(name) & (cap - 1);
	while (slot[i].name && strcmp(slot[i].name, name) != 0)
		i = (i + 1) & (cap - 1);
	return &slot[i];
}

size_t kvp_name_index_find(const struct kvp_name_index *ix, const char *name)
{
	if (!ix->cap)
		return SIZE_MAX;
	const struct kvp_name_slot *s = probe(ix->slot, ix->cap, name);
	return s->name ? s->pos : SIZE_MAX;
}

bool kvp_name_index_add(struct kvp_name_index *ix, const char *name, size_t pos)
{
	if (2 * (ix->n + 1) > ix->cap) {
		size_t cap = ix->cap ? 2 * ix->cap : 64;
		struct kvp_name_slot *slot = calloc(cap, sizeof *slot);
		if (!slot)
			return false;
		for (size_t i = 0; i < ix->cap; i++)
			if (ix->slot[i].name)
				*probe(slot, cap, ix->slot[i].name) = ix->slot[i];
		free(ix->slot);
		ix->slot = slot;
		ix->cap = cap;
	}
	struct kvp_name_slot *s = probe(ix->slot, ix->cap, name);
	if (!s->name) {
		s->name = name;
		s->pos = pos;
		ix->n++;
	}
	return true;
}
