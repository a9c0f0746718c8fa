/* error.h: status codes and located error reports of the kvplan library.
 *
 * Library code never prints or exits: a failing function fills a
 * struct kvp_error and returns its status.  The CLI turns it into
 * "path:line:col: error: field: message" and an exit code.  Lines and
 * columns are 1-based; 0 means unknown. */
#ifndef KVP_ERROR_H
#define KVP_ERROR_H

#include <stddef.h>

typedef enum {
	KVP_STATUS_OK = 0,
	KVP_STATUS_USAGE,     /* a bad option value given on the command line */
	KVP_STATUS_IO,        /* a file could not be read or written */
	KVP_STATUS_PARSE,     /* malformed YAML or JSON */
	KVP_STATUS_INVALID,   /* well-formed input with a wrong, missing or inconsistent value */
	KVP_STATUS_OVERFLOW,  /* a number too large for the arithmetic */
	KVP_STATUS_NOT_FOUND, /* a profile name that resolves to no file */
	KVP_STATUS_NOMEM,
	KVP_STATUS_INTERNAL   /* a check of kvplan's own arithmetic failed: a bug, never input */
} kvp_status;

struct kvp_error {
	kvp_status status;
	char path[512];
	int line;
	int col;
	char field[128];
	char msg[512];
};

/* Fill *err (which may be NULL) and return status.  path and field may be NULL. */
kvp_status kvp_error_set(struct kvp_error *err, kvp_status status, const char *path,
			 int line, int col, const char *field, const char *fmt, ...)
	__attribute__((format(printf, 7, 8)));

/* Write "path:line:col: error: field: message" (parts that are unknown are left out). */
void kvp_error_format(const struct kvp_error *err, char *buf, size_t size);

const char *kvp_status_str(kvp_status status);

/* Exit code the CLI uses for a status: 2 usage, 3 invalid input, 70 internal
 * error (EX_SOFTWARE of sysexits.h). */
int kvp_status_exit_code(kvp_status status);

#endif
