/* cli-calibration.h: `--calibration FILE`, given once or twice, for every
 * command that takes it (perf, serve, size, validate, plot validate,
 * calibrate): the option's parser, the files read and composed
 * (time/calibration.h: kvp_calibration_load_files), the precedence warning,
 * and the table lines that name each file and the constants it gave. */
#ifndef KVP_CLI_CALIBRATION_H
#define KVP_CLI_CALIBRATION_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/cli.h"
#include "time/calibration.h"

/* The --calibration files as given (argv, not copied). */
struct kvp_cli_calibration {
	const char *path[KVP_CALIBRATION_MAX_FILES];
	size_t n;
};

/* The option table's parse function (dest: a struct kvp_cli_calibration):
 * a third file is a usage error naming --calibration. */
bool kvp_cli_calibration_parse(const char *cmd, const char *arg, void *dest);

/* Read cf's files for GPU g into cal (nothing given: cal zeroed, 0).  Two
 * files of one kind: a usage error naming --calibration (exit 2); the
 * files' errors as kvp_cli_error says them.  When the engine calibration
 * fitted kv_bw_efficiency itself, a warning (code "calibration_kernel_unused")
 * on stderr and in w (w may be NULL).  0, or the exit code. */
int kvp_cli_calibration_load(const char *cmd, const struct kvp_cli_calibration *cf,
			     const struct kvp_gpu *g, struct kvp_calibration *cal,
			     struct kvp_cli_warnings *w);

/* The record's label: the engine calibration's file, or the one file;
 * NULL when none. */
const char *kvp_cli_calibration_label(const struct kvp_cli_calibration *cf,
				      const struct kvp_calibration *cal);
/* The kvbench run composed with an engine calibration, or NULL. */
const char *kvp_cli_calibration_kernel(const struct kvp_calibration *cal);

/* For the table: each file read and the constants it gave, one line each,
 * opened by `indent` (the paths escaped for the terminal).  Nothing when
 * none was given. */
void kvp_cli_calibration_print(const struct kvp_cli_calibration *cf,
			       const struct kvp_calibration *cal, const char *indent);

#endif
