/* cmd-list.c: `kvplan list models|gpus|workloads`: the built-in profiles,
 * one name a line.  A name is a file name kvplan did not choose: a control
 * character in it (an escape, a line break) is shown as \xNN, \n or \t,
 * never sent, so one file is one line and drives no terminal. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "base/suggest.h"

int kvp_cmd_list(int argc, char **argv)
{
	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		printf("Usage: kvplan list models|gpus|workloads\n\n"
		       "Print the names of the profiles found in the search path\n"
		       "($KVPLAN_PROFILES, then $KVPLAN_DATA, the source tree from a build\n"
		       "tree, or the installed data directory),\n"
		       "one a line; a control character in a name shown as \\n, \\t or \\xNN.\n");
		return KVP_EXIT_OK;
	}
	static const char *const kinds[] = {"models", "gpus", "workloads"};
	if (argc != 2 || (strcmp(argv[1], "models") && strcmp(argv[1], "gpus") &&
			  strcmp(argv[1], "workloads"))) {
		char near[128] = "";
		if (argc == 2)
			kvp_suggest_text(argv[1], kinds, 3, "", near, sizeof near);
		return kvp_cli_usage_error("list", "expected one of models, gpus, workloads%s", near);
	}
	char *names[1024];
	size_t n = kvp_profile_list(argv[1], names, 1024);
	for (size_t i = 0; i < n; i++) {
		char shown[KVP_TERM_SIZE(256)];
		printf("%s\n", kvp_term_text(shown, sizeof shown, names[i]));
		free(names[i]);
	}
	return KVP_EXIT_OK;
}
