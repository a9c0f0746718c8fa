/* csv.c: see csv.h. */
#include "out/csv.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

size_t kvp_csv_split(char *line, char **f, size_t max)
{
	size_t n = 0;
	char *p = line;
	line[strcspn(line, "\r\n")] = 0;
	for (;;) {
		if (n == max)
			return n;
		if (*p == '"') {
			char *w = ++p;
			f[n++] = w;
			while (*p) {
				if (*p == '"' && p[1] == '"') {
					*w++ = '"';
					p += 2;
				} else if (*p == '"') {
					p++;
					break;
				} else {
					*w++ = *p++;
				}
			}
			char *rest = strchr(p, ',');
			*w = 0;
			if (!rest)
				return n;
			p = rest + 1;
		} else {
			f[n++] = p;
			char *c = strchr(p, ',');
			if (!c)
				return n;
			*c = 0;
			p = c + 1;
		}
	}
}

int kvp_csv_col(char *const *h, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(h[i], name) == 0)
			return (int)i;
	return -1;
}

kvp_status kvp_csv_number(const char *path, int line, int col, const char *field, const char *s,
			  double *out, struct kvp_error *err)
{
	char *end;
	while (isspace((unsigned char)*s))
		s++;
	*out = strtod(s, &end);
	while (isspace((unsigned char)*end))
		end++;
	if (end == s || *end || !isfinite(*out))
		return kvp_error_set(err, KVP_STATUS_INVALID, path, line, col, field,
				     "expected a number, got '%s'", s);
	return KVP_STATUS_OK;
}
