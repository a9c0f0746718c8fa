/* table-line.c: the lines of a measured kernel table (table-line.h). */
#include "time/table-line.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

kvp_status kvp_table_line(FILE *f, const char *path, char *line, size_t size, int *lineno,
			  char **tok, int max, int *nt, struct kvp_error *err)
{
	*nt = 0;
	while (fgets(line, (int)size, f)) {
		++*lineno;
		size_t len = strlen(line);
		if (len == size - 1 && line[len - 1] != '\n')
			return kvp_error_set(err, KVP_STATUS_INVALID, path, *lineno, 1, NULL,
					     "line longer than %zu bytes", size - 2);
		line[strcspn(line, "\r\n")] = 0;
		char *p = line + strspn(line, " \t");
		if (*p == '#' || *p == 0)
			continue;
		char *save = NULL;
		for (char *s = strtok_r(p, " \t", &save); s && *nt < max + 1;
		     s = strtok_r(NULL, " \t", &save))
			tok[(*nt)++] = s;
		return KVP_STATUS_OK;
	}
	return ferror(f) ? kvp_error_set(err, KVP_STATUS_IO, path, *lineno, 0, NULL, "read error")
			 : KVP_STATUS_OK;
}

bool kvp_table_header_is(char *const *tok, int nt, const char *const *names, int n)
{
	if (nt != n)
		return false;
	for (int i = 0; i < n; i++)
		if (strcmp(tok[i], names[i]) != 0)
			return false;
	return true;
}

int kvp_table_field(const char *s, bool integer, double *out)
{
	char *end;
	errno = 0;
	if (integer) {
		long long v = strtoll(s, &end, 10);
		if (end == s || *end || errno || v <= 0 || v > 2147483648LL)
			return -1;
		*out = (double)v;
		return 0;
	}
	double v = strtod(s, &end);
	if (end == s || *end || errno || !isfinite(v) || !(v > 0))
		return -1;
	*out = v;
	return 0;
}
