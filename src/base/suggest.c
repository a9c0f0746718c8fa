/* suggest.c: the nearest names to a misspelt one, for "did you mean"
 * messages (see suggest.h).  Pure functions of their arguments: they
 * allocate nothing and print nothing. */
#include "base/suggest.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#define MAX_LEN 63

size_t kvp_suggest_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	if (la > MAX_LEN || lb > MAX_LEN)
		return SIZE_MAX;
	/* d[i][j]: distance of a's first i and b's first j characters */
	size_t d[MAX_LEN + 1][MAX_LEN + 1];
	for (size_t i = 0; i <= la; i++)
		d[i][0] = i;
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++)
		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]), cb = tolower((unsigned char)b[j - 1]);
			size_t best = d[i - 1][j - 1] + (ca != cb);
			if (d[i - 1][j] + 1 < best)
				best = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < best)
				best = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && d[i - 2][j - 2] + 1 < best)
				best = d[i - 2][j - 2] + 1;
			d[i][j] = best;
		}
	return d[la][lb];
}

static size_t limit_for(size_t len)
{
	if (len <= 4)
		return 1;
	return len / 3 > 3 ? 3 : len / 3;
}

size_t kvp_suggest(const char *word, const char *const *cands, size_t n, const char **out,
		   size_t max)
{
	size_t len = strlen(word), k = 0;
	if (len == 0 || max == 0)
		return 0;
	if (len >= 2)
		for (size_t i = 0; i < n && k < max; i++)
			if (strncasecmp(cands[i], word, len) == 0 && strlen(cands[i]) > len)
				out[k++] = cands[i];
	if (k)
		return k;
	size_t best = SIZE_MAX;
	for (size_t i = 0; i < n; i++) {
		size_t d = kvp_suggest_distance(word, cands[i]);
		if (d < best)
			best = d;
	}
	if (best == 0 || best > limit_for(len))
		return 0;
	for (size_t i = 0; i < n && k < max; i++)
		if (kvp_suggest_distance(word, cands[i]) == best)
			out[k++] = cands[i];
	return k;
}

char *kvp_suggest_text(const char *word, const char *const *cands, size_t n, const char *prefix,
		       char *buf, size_t size)
{
	const char *near[4];
	size_t k = kvp_suggest(word, cands, n, near, 4);
	if (size)
		buf[0] = '\0';
	if (!k || !size)
		return buf;
	size_t used = (size_t)snprintf(buf, size, "; did you mean");
	for (size_t i = 0; i < k && used < size; i++)
		used += (size_t)snprintf(buf + used, size - used, "%s '%s%s'",
					 i == 0 ? "" : i + 1 == k ? " or" : ",", prefix ? prefix : "",
					 near[i]);
	if (used < size)
		snprintf(buf + used, size - used, "?");
	return buf;
}
