/* cli-options.c: getopt_long driven by a subcommand's option table
 * (cli-options.h): the long and short option lists are built from the table
 * in its order, each option taken as its entry says. */
#include "cli/cli-options.h"

#include <assert.h>
#include <stddef.h>

#include "cli/cli.h"

/* getopt_long's answer for an entry's own long option without a short
 * letter: past any char and any KVP_OPT_* id. */
#define OPT_VAL_BASE 0x10000

static const struct option common_options[] = {KVP_CLI_COMMON_OPTIONS, {NULL, 0, NULL, 0}};

static bool takes_arg(enum kvp_cli_opt_kind kind)
{
	return kind == KVP_CLI_OPT_STRING || kind == KVP_CLI_OPT_PARSE;
}

/* The table entry getopt_long's answer c belongs to, or NULL (refused). */
static const struct kvp_cli_opt *entry_of(const struct kvp_cli_opt *opts, const struct option *longopts,
					  const size_t *owner, int c)
{
	for (const struct kvp_cli_opt *o = opts; o->kind != KVP_CLI_OPT_END; o++)
		if ((o->short_name && o->short_name == c) || (o->common_id && o->common_id == c))
			return o;
	if (c == '?' || c == ':')
		return NULL;
	for (size_t k = 0; longopts[k].name; k++)
		if (longopts[k].val == c)
			return &opts[owner[k]];
	return NULL;
}

int kvp_cli_options_parse(const char *cmd, int argc, char **argv, const struct kvp_cli_opt *opts,
			  void (*help)(void))
{
	struct option longopts[KVP_CLI_MAX_OPTS + 1];
	size_t owner[KVP_CLI_MAX_OPTS];   /* the table entry of each long option */
	char shortopts[2 * KVP_CLI_MAX_OPTS + 1];
	size_t n = 0, ns = 0;
	for (size_t i = 0; opts[i].kind != KVP_CLI_OPT_END; i++) {
		const struct kvp_cli_opt *o = &opts[i];
		const struct option *sub = o->kind == KVP_CLI_OPT_COMMON ? common_options
					   : o->kind == KVP_CLI_OPT_GROUP ? o->group : NULL;
		for (; sub && sub->name; sub++) {
			assert(n < KVP_CLI_MAX_OPTS);
			owner[n] = i;
			longopts[n++] = *sub;
		}
		if (o->name) {
			assert(n < KVP_CLI_MAX_OPTS);
			owner[n] = i;
			longopts[n++] = (struct option){o->name,
							takes_arg(o->kind) ? required_argument : no_argument,
							NULL, o->short_name ? o->short_name
									    : OPT_VAL_BASE + (int)i};
		}
		if (o->short_name) {
			shortopts[ns++] = o->short_name;
			if (takes_arg(o->kind))
				shortopts[ns++] = ':';
		}
	}
	longopts[n] = (struct option){NULL, 0, NULL, 0};
	shortopts[ns] = '\0';

	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		const struct kvp_cli_opt *o = entry_of(opts, longopts, owner, c);
		if (!o)
			return kvp_cli_bad_option(cmd, argv[optind - 1], longopts);
		switch (o->kind) {
		case KVP_CLI_OPT_END:
			break;
		case KVP_CLI_OPT_HELP:
			help();
			return KVP_EXIT_OK;
		case KVP_CLI_OPT_FLAG:
			*(bool *)o->dest = true;
			break;
		case KVP_CLI_OPT_STRING:
			*(const char **)o->dest = optarg;
			break;
		case KVP_CLI_OPT_PARSE:
			if (!o->parse(cmd, optarg, o->dest))
				return KVP_EXIT_USAGE;
			break;
		case KVP_CLI_OPT_COMMON:
			if ((rc = kvp_cli_common_option(o->dest, cmd, c, optarg)))
				return rc == 1 ? kvp_cli_usage_error(cmd, "unexpected option") : rc;
			break;
		case KVP_CLI_OPT_GROUP:
			if ((rc = o->group_fn(o->dest, c, optarg)))
				return rc == 1 ? kvp_cli_usage_error(cmd, "unexpected option") : rc;
			break;
		}
	}
	return KVP_CLI_OPTIONS_DONE;
}

int kvp_cli_one_operand(const char *cmd, int argc, char **argv, const char *missing)
{
	if (optind >= argc)
		return kvp_cli_usage_error(cmd, "%s", missing);
	if (optind + 1 < argc)
		return kvp_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind + 1]);
	return 0;
}

int kvp_cli_options_parse_no_operand(const char *cmd, int argc, char **argv,
				     const struct kvp_cli_opt *opts, void (*help)(void),
				     const bool *help_asked)
{
	int rc = kvp_cli_options_parse(cmd, argc, argv, opts, help);
	if (rc != KVP_CLI_OPTIONS_DONE)
		return rc;
	if (*help_asked) {
		help();
		return KVP_EXIT_OK;
	}
	if (optind < argc)
		return kvp_cli_usage_error(cmd, "unexpected argument '%s'", argv[optind]);
	return KVP_CLI_OPTIONS_DONE;
}
