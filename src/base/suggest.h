/* suggest.h: "did you mean ...?" for a misspelt name: an unknown flag,
 * subcommand, profile name or YAML key, against the names that exist.
 *
 * Closeness is the optimal-string-alignment edit distance (insertions,
 * deletions, substitutions and swaps of two neighbours each cost 1), case
 * folded.  A name that begins with the word (`h100` -> `h100-pcie`,
 * `h100-sxm`) is suggested before any distance is looked at. */
#ifndef KVP_SUGGEST_H
#define KVP_SUGGEST_H

#include <stddef.h>

/* The OSA edit distance of a and b (case folded); strings longer than 63
 * characters count as far from everything (SIZE_MAX). */
size_t kvp_suggest_distance(const char *a, const char *b);

/* Up to max names of cands[0..n) close to word, in cands' order: every
 * candidate that starts with word (when word has 2 or more characters),
 * else those at the least distance if it is small for word's length (1 for
 * up to 4 characters, then a third of the length, at most 3).  Returns how
 * many were written to out; 0 when nothing is close. */
size_t kvp_suggest(const char *word, const char *const *cands, size_t n, const char **out,
		   size_t max);

/* Format the suggestions as "; did you mean 'a'?" or "; did you mean 'a' or
 * 'b'?" into buf (empty when there are none); prefix is put before each name
 * (e.g. "--").  Returns buf. */
char *kvp_suggest_text(const char *word, const char *const *cands, size_t n, const char *prefix,
		       char *buf, size_t size);

#endif
