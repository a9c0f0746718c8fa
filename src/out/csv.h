/* csv.h: the small CSV reader that the results and calibration files need:
 * one record per line, RFC 4180 quotes, no embedded newlines (what kvbench
 * and kvplan write).  Split in place; columns found by header name. */
#ifndef KVP_CSV_H
#define KVP_CSV_H

#include <stddef.h>

#include "base/error.h"

#define KVP_CSV_MAX_FIELDS 64
#define KVP_CSV_LINE_MAX 4096

/* Split `line` in place into at most `max` fields (the line's end of line
 * dropped, quotes undone); returns how many. */
size_t kvp_csv_split(char *line, char **fields, size_t max);

/* The index of the header field `name`, or -1. */
int kvp_csv_col(char *const *header, size_t n, const char *name);

/* A number filling the whole field (spaces aside), finite; else INVALID
 * naming path, line, column (1-based) and field. */
kvp_status kvp_csv_number(const char *path, int line, int col, const char *field, const char *s,
			  double *out, struct kvp_error *err);

#endif
