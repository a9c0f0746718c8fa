/* error.c: located error reports.  See error.h. */
#include "base/error.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/utf8.h"

/* A path too long for err->path keeps its end (the file's name), after
 * "...", from a character boundary on: never cut silently or mid-character. */
static void set_path(char *dst, size_t size, const char *path)
{
	size_t n = strlen(path);
	if (n < size) {
		memcpy(dst, path, n + 1);
		return;
	}
	const char *tail = path + n - (size - 4);
	while ((*tail & 0xc0) == 0x80)
		tail++;
	snprintf(dst, size, "...%s", tail);
}

kvp_status kvp_error_set(struct kvp_error *err, kvp_status status, const char *path,
			 int line, int col, const char *field, const char *fmt, ...)
{
	if (!err)
		return status;
	err->status = status;
	set_path(err->path, sizeof err->path, path ? path : "");
	err->line = line;
	err->col = col;
	snprintf(err->field, sizeof err->field, "%s", field ? field : "");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err->msg, sizeof err->msg, fmt, ap);
	va_end(ap);
	kvp_utf8_trim(err->field);
	kvp_utf8_trim(err->msg);
	return status;
}

void kvp_error_format(const struct kvp_error *err, char *buf, size_t size)
{
	char where[600] = "";
	if (err->path[0] && err->line > 0)
		snprintf(where, sizeof where, "%s:%d:%d: ", err->path, err->line, err->col);
	else if (err->path[0])
		snprintf(where, sizeof where, "%s: ", err->path);
	snprintf(buf, size, "%serror: %s%s%s", where, err->field, err->field[0] ? ": " : "",
		 err->msg);
}

const char *kvp_status_str(kvp_status status)
{
	switch (status) {
	case KVP_STATUS_OK: return "ok";
	case KVP_STATUS_USAGE: return "usage";
	case KVP_STATUS_IO: return "i/o error";
	case KVP_STATUS_PARSE: return "parse error";
	case KVP_STATUS_INVALID: return "invalid value";
	case KVP_STATUS_OVERFLOW: return "overflow";
	case KVP_STATUS_NOT_FOUND: return "not found";
	case KVP_STATUS_NOMEM: return "out of memory";
	case KVP_STATUS_INTERNAL: return "internal error";
	}
	return "unknown";
}

int kvp_status_exit_code(kvp_status status)
{
	switch (status) {
	case KVP_STATUS_OK: return 0;
	case KVP_STATUS_USAGE: return 2;
	case KVP_STATUS_INTERNAL: return 70;
	default: return 3;
	}
}
