/* cli-options.c: getopt_long driven by a subcommand's option table
 * (cli-options.h): the long and short option lists are built from the table
 * in its order, each option taken as its entry says. */
#include "cli-options.h"

#include <assert.h>
#include <getopt.h>
#include <stddef.h>

#include "cli.h"

/* getopt_long's answer for an entry without a short letter: past any char. */
#define OPT_VAL_BASE 0x1000

int kvp_cli_options_parse(const char *cmd, int argc, char **argv, const struct kvp_cli_opt *opts,
			  void (*help)(void))
{
	struct option longopts[KVP_CLI_MAX_OPTS + 1];
	char shortopts[2 * KVP_CLI_MAX_OPTS + 1];
	size_t n = 0, ns = 0;
	for (; opts[n].name; n++) {
		assert(n < KVP_CLI_MAX_OPTS);
		bool arg = opts[n].kind == KVP_CLI_OPT_STRING || opts[n].kind == KVP_CLI_OPT_PARSE;
		int val = opts[n].short_name ? opts[n].short_name : OPT_VAL_BASE + (int)n;
		longopts[n] = (struct option){opts[n].name, arg ? required_argument : no_argument, NULL,
					      val};
		if (opts[n].short_name) {
			shortopts[ns++] = opts[n].short_name;
			if (arg)
				shortopts[ns++] = ':';
		}
	}
	longopts[n] = (struct option){NULL, 0, NULL, 0};
	shortopts[ns] = '\0';

	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		size_t i = 0;
		while (i < n && longopts[i].val != c)
			i++;
		if (i == n)
			return kvp_cli_bad_option(cmd, argv[optind - 1], longopts);
		const struct kvp_cli_opt *o = &opts[i];
		switch (o->kind) {
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
		}
	}
	return KVP_CLI_OPTIONS_DONE;
}
