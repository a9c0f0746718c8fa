/* cmd-report.c: `kvplan report SCENARIO -o DIR`: a design-review report,
 * DIR/report.md and DIR/report.html with the tables, the arithmetic and the
 * charts (DIR/plots/).  Without gnuplot the report is still written, with
 * the charts' data and scripts, and one warning says so. */
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli-options.h"
#include "report/report.h"

static const char *const cmd = "report";

static void help(void)
{
	printf("Usage: kvplan report SCENARIO.yaml -o DIR [--term png|svg]\n\n"
	       "Write a design-review report for the models, GPUs, engines, splits, KV\n"
	       "dtypes and workloads a scenario file names: DIR/report.md, DIR/report.html\n"
	       "(open it in a browser) and the charts under DIR/plots/ (.dat, .gp and the\n"
	       "image gnuplot draws, found on PATH or as $KVPLAN_GNUPLOT).\n\n"
	       "  -o, --output-dir DIR   where the report goes (required; created if missing)\n"
	       "  --term png|svg         the charts' image format (default png)\n"
	       "  --help                 this text\n\n"
	       "The scenario file is described in kvplan(1), REPORT; reports/example/ holds\n"
	       "a worked one.  Exit status: 0 written (also without gnuplot), 2 usage,\n"
	       "3 an invalid scenario (file:line:col: error: field: message).\n");
}

/* --term: png or svg, what a browser shows. */
static bool term_parse(const char *cmd, const char *arg, void *dest)
{
	enum kvp_plot_term *term = dest;
	if (!kvp_plot_term_parse(arg, term) ||
	    (*term != KVP_PLOT_TERM_PNG && *term != KVP_PLOT_TERM_SVG)) {
		kvp_cli_usage_error(cmd, "--term: expected png or svg (what a browser shows), "
				    "got '%s'", arg);
		return false;
	}
	return true;
}

int kvp_cmd_report(int argc, char **argv)
{
	struct kvp_report_opts o = {.term = KVP_PLOT_TERM_PNG};
	const struct kvp_cli_opt opts[] = {
		{.name = "output-dir", .short_name = 'o', .kind = KVP_CLI_OPT_STRING, .dest = &o.dir},
		{.name = "term", .kind = KVP_CLI_OPT_PARSE, .dest = &o.term, .parse = term_parse},
		{.name = "help", .short_name = 'h', .kind = KVP_CLI_OPT_HELP},
		{.kind = KVP_CLI_OPT_END}
	};
	int rc = kvp_cli_options_parse(cmd, argc, argv, opts, help);
	if (rc != KVP_CLI_OPTIONS_DONE ||
	    (rc = kvp_cli_one_operand(cmd, argc, argv, "a scenario file is required")))
		return rc;
	if (!o.dir)
		return kvp_cli_usage_error(cmd, "-o DIR is required");

	char source[1024];
	size_t len = (size_t)snprintf(source, sizeof source, "kvplan");
	for (int i = 0; i < argc && len < sizeof source; i++)
		len += (size_t)snprintf(source + len, sizeof source - len, " %s", argv[i]);
	o.source = source;
	o.gnuplot = getenv("KVPLAN_GNUPLOT");

	struct kvp_scenario *s = calloc(1, sizeof *s);
	if (!s) {
		fprintf(stderr, "kvplan report: out of memory\n");
		return KVP_EXIT_FAIL;
	}
	struct kvp_error err = {0};
	struct kvp_report_result res;
	rc = KVP_EXIT_OK;
	if (kvp_scenario_load(argv[optind], s, &err) || kvp_report_write(s, &o, &res, &err)) {
		rc = kvp_cli_error(cmd, &err);
		goto out;
	}
	printf("kvplan report: wrote %s/report.md and %s/report.html (%zu charts, %zu images)\n",
	       o.dir, o.dir, res.plots, res.images);
	if (res.render.status) {
		char why[1400];
		kvp_error_format(&res.render, why, sizeof why);
		fprintf(stderr, "kvplan report: warning: %zu of %zu charts have no image (%s); their "
				".dat and .gp files are in %s/plots\n",
			res.plots - res.images, res.plots, why, o.dir);
	}
out:
	kvp_scenario_free(s);
	free(s);
	return rc;
}
