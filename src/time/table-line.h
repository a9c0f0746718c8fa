/* table-line.h: the lines of a measured kernel table under profiles/kernels/
 * (gemm-*.tsv, moe-*.tsv: whitespace-separated fields, a header of column
 * names, '#' comment lines holding the source), read the one way both
 * readers (gemm-table.c, moe-table.c) take them. */
#ifndef KVP_TABLE_LINE_H
#define KVP_TABLE_LINE_H

#include "base/error.h"

#include <stdbool.h>
#include <stdio.h>

/* The next data line of f (path names it in errors): blank and '#' lines
 * skipped, *lineno counting every line read.  The line is read into line
 * (size bytes) and split at spaces and tabs into tok, at most max + 1
 * fields (one past max, so the caller can tell "more" from "as many"),
 * *nt of them (at least 1); *nt = 0 at the end of the file.  INVALID for a
 * line longer than the buffer, IO for a read error (err set either way). */
kvp_status kvp_table_line(FILE *f, const char *path, char *line, size_t size, int *lineno,
			  char **tok, int max, int *nt, struct kvp_error *err);

/* A field of such a table: an integer from 1 to 2^31 (integer) or a
 * positive finite number.  0 with *out set, -1 when it is not one. */
int kvp_table_field(const char *s, bool integer, double *out);

/* Whether the nt fields of tok are exactly the n column names. */
bool kvp_table_header_is(char *const *tok, int nt, const char *const *names, int n);

#endif
