/* cli-options.h: a subcommand's options as a table (tmux's cmd-*.c habit):
 * each entry names a long option, its short letter, what it takes and where
 * it goes, so a command function reads parse -> call the library -> print
 * instead of repeating one getopt_long loop.  The table drives getopt_long
 * exactly as a hand-written loop would (permuted operands, "--" ends the
 * options, a refused option answered by kvp_cli_bad_option); the long
 * option list is built in the table's order, the common planner options
 * (cli.h) and groups such as perf's --disagg options expanded in place. */
#ifndef KVP_CLI_OPTIONS_H
#define KVP_CLI_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>

enum kvp_cli_opt_kind {
	KVP_CLI_OPT_END,     /* ends the table */
	KVP_CLI_OPT_HELP,    /* no argument: print the command's help, exit 0 */
	KVP_CLI_OPT_FLAG,    /* no argument: *(bool *)dest = true */
	KVP_CLI_OPT_STRING,  /* an argument: *(const char **)dest = it (argv, not copied) */
	KVP_CLI_OPT_PARSE,   /* an argument: parse(cmd, it, dest) */
	KVP_CLI_OPT_COMMON,  /* KVP_CLI_COMMON_OPTIONS, for kvp_cli_common_option(dest) */
	KVP_CLI_OPT_GROUP,   /* the options of `group`, for group_fn(dest) */
};

struct kvp_cli_opt {
	const char *name;          /* the long name without "--"; NULL: none of its own */
	char short_name;           /* its letter, 0 for none */
	enum kvp_cli_opt_kind kind;
	void *dest;
	/* KVP_CLI_OPT_PARSE: store the value in dest, or print the mistake
	 * (kvp_cli_usage_error) and return false */
	bool (*parse)(const char *cmd, const char *arg, void *dest);
	/* a common option (KVP_OPT_*) this entry takes in place of
	 * kvp_cli_common_option; name is then NULL (the common entry names it) */
	int common_id;
	/* KVP_CLI_OPT_GROUP: its long options (ended by a NULL name; none when
	 * the entry takes just common_id), and the function that takes one:
	 * 0 taken, else the exit code */
	const struct option *group;
	int (*group_fn)(void *dest, int opt, const char *arg);
};

/* At most this many long options, all expanded. */
#define KVP_CLI_MAX_OPTS 96
/* kvp_cli_options_parse's answer when every option was taken. */
#define KVP_CLI_OPTIONS_DONE (-1)

/* Take argv's options by the table opts (help: the command's --help text).
 * Returns KVP_CLI_OPTIONS_DONE with optind at the first operand, or the
 * exit code the command returns now: KVP_EXIT_OK after --help (a
 * KVP_CLI_OPT_HELP entry; the common --help only sets its flag),
 * KVP_EXIT_USAGE after a message on stderr. */
int kvp_cli_options_parse(const char *cmd, int argc, char **argv, const struct kvp_cli_opt *opts,
			  void (*help)(void));

/* kvp_cli_options_parse for a command that takes no operand, then the two
 * answers every such command gives: after the common --help (*help_asked,
 * set while parsing) print help and return KVP_EXIT_OK; after an operand
 * return a usage error naming it.  Else KVP_CLI_OPTIONS_DONE. */
int kvp_cli_options_parse_no_operand(const char *cmd, int argc, char **argv,
				     const struct kvp_cli_opt *opts, void (*help)(void),
				     const bool *help_asked);

/* The command takes exactly one operand, argv[optind]: 0, or a usage error
 * (`missing` when there is none, else the first unexpected argument). */
int kvp_cli_one_operand(const char *cmd, int argc, char **argv, const char *missing);

#endif
