/* cli-cost.c: --cost and --price, the cost options of `kvplan size` and
 * `kvplan plot pareto`.  See cli-cost.h. */
#include "cli/cli-cost.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "out/output.h"
#include "size/size.h"
#include "base/units.h"

bool kvp_cli_cost_parse(const char *name, const char *arg, void *dest)
{
	struct kvp_size_cost *cost = dest;
	if (strcmp(arg, "own") == 0) {
		cost->basis = KVP_SIZE_BASIS_OWN;
	} else if (strcmp(arg, "cloud") == 0) {
		cost->basis = KVP_SIZE_BASIS_CLOUD;
	} else if (strncmp(arg, "cloud:", 6) == 0 &&
		   (!strcmp(arg + 6, "on-demand") || !strcmp(arg + 6, "reserved-1y") ||
		    !strcmp(arg + 6, "reserved-3y") || !strcmp(arg + 6, "spot") ||
		    !strcmp(arg + 6, "serverless"))) {
		cost->basis = KVP_SIZE_BASIS_CLOUD;
		snprintf(cost->kind, sizeof cost->kind, "%s", arg + 6);
	} else {
		char t[KVP_TERM_SIZE(64)];
		kvp_cli_usage_error(name, "--cost: expected cloud, cloud:KIND (on-demand, reserved-1y, "
				    "reserved-3y, spot, serverless) or own, got '%s'",
				    kvp_term_text(t, sizeof t, arg));
		return false;
	}
	return true;
}

bool kvp_cli_price_parse(const char *name, const char *arg, char gpu[KVP_NAME_MAX], double *usd)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || (size_t)(eq - arg) >= KVP_NAME_MAX || kvp_parse_double(eq + 1, usd) ||
	    !(*usd > 0) || !isfinite(*usd)) {
		kvp_cli_usage_error(name, "--price: expected GPU=USD, a positive price such as "
				    "h100-sxm=2.5, got '%s'", arg);
		return false;
	}
	memcpy(gpu, arg, (size_t)(eq - arg));
	gpu[eq - arg] = 0;
	return true;
}
