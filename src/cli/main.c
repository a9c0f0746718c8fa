/* main.c: kvplan's entry point: find the subcommand in the table and run it.
 * Everything else lives in cmd-<name>.c and the library. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "config.h"
#include "base/suggest.h"

static const struct kvp_cmd commands[] = {
	{"budget", "memory budget, KV pool, blocks, max tokens and sequences", kvp_cmd_budget},
	{"list", "list the built-in model, GPU or workload profiles", kvp_cmd_list},
	/* --- commands: frag, perf, size, plot, report, check, validate --- */
	{"frag", "fragmentation, block size, prefix sharing and caching over real lengths", kvp_cmd_frag},
	{"perf", "latency and throughput: prefill, decode, tensor parallel, KV offload", kvp_cmd_perf},
	{"serve", "one replica under load, simulated step by step: TTFT/TPOT/ITL percentiles", kvp_cmd_serve},
	{"size", "GPU purchase sizing: which GPUs, how many, at what cost, engine flags", kvp_cmd_size},
	{"check", "check budgets in CI: assertions, baselines, JUnit XML, TAP", kvp_cmd_check},
	{"plot", "charts: budget bars, KV against context, sequences against context", kvp_cmd_plot},
	{"report", "a design-review report (Markdown + HTML) from a scenario file", kvp_cmd_report},
	{"validate", "predictions against kvbench's or an engine's benchmark measurements", kvp_cmd_validate},
	{"calibrate", "fit the time model to an engine's benchmark results (vLLM, SGLang, TRT-LLM)", kvp_cmd_calibrate},
};

static void usage(FILE *f)
{
	fprintf(f, "Usage: kvplan COMMAND [OPTIONS]\n"
		   "       kvplan --help | --version\n\n"
		   "Plan the GPU memory of LLM serving: weights, activations, KV cache.\n\n"
		   "Commands:\n");
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\nRun 'kvplan COMMAND --help' for a command's options; see kvplan(1).\n"
		   "Exit status: 0 ok, 1 a check failed or it does not fit, 2 usage, 3 invalid input.\n");
}

/* Run the command argv[1] names. */
static int dispatch(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return KVP_EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc > 2 && strcmp(argv[1], "help") == 0) {
			char *args[] = {argv[2], "--help", NULL};
			for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
				if (strcmp(commands[i].name, argv[2]) == 0)
					return commands[i].exec(2, args);
		}
		usage(stdout);
		return KVP_EXIT_OK;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("kvplan %s\n", PACKAGE_VERSION);
		return KVP_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		if (strcmp(commands[i].name, argv[1]) == 0)
			return commands[i].exec(argc - 1, argv + 1);
	const char *names[sizeof commands / sizeof commands[0]];
	for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
		names[i] = commands[i].name;
	char near[256];
	kvp_suggest_text(argv[1], names, sizeof names / sizeof names[0], "", near, sizeof near);
	fprintf(stderr, "kvplan: unknown command '%s'%s\n", argv[1], near);
	if (!near[0])
		usage(stderr);
	return KVP_EXIT_USAGE;
}

/* A result that never reached standard output (`> /dev/full`, a closed pipe
 * with SIGPIPE ignored) is an error, not a success: flush and close it and
 * say so. */
static int close_stdout(int rc)
{
	errno = 0;
	bool bad = fflush(stdout) != 0 || ferror(stdout);
	int e = errno;
	if (fclose(stdout) != 0 && !bad) {
		bad = true;
		e = errno;
	}
	if (!bad)
		return rc;
	fprintf(stderr, "kvplan: cannot write standard output: %s\n", e ? strerror(e) : "I/O error");
	return rc == KVP_EXIT_OK || rc == KVP_EXIT_FAIL ? KVP_EXIT_INPUT : rc;
}

int main(int argc, char **argv)
{
	return close_stdout(dispatch(argc, argv));
}
