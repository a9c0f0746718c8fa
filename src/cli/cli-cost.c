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

/* own:YEARS[,USD_PER_KWH[,PUE]]: the terms --years, --power-price and --pue
 * give, in one word (issue 35); an empty field keeps its default.  False,
 * having said why, on a bad field. */
static bool own_terms(const char *name, const char *terms, struct kvp_size_cost *cost)
{
	static const char *const what[] = {"years", "$/kWh", "PUE"};
	double *to[] = {&cost->years, &cost->power_usd_per_kwh, &cost->pue};
	const char *p = terms;
	for (int i = 0; i < 3; i++) {
		size_t len = strcspn(p, ",");
		char field[64];
		if (len >= sizeof field)
			len = sizeof field - 1;
		memcpy(field, p, len);
		field[len] = 0;
		double v;
		if (len > 0 && (kvp_parse_double(field, &v) || !(v > 0) || !isfinite(v) ||
				(i == 2 && v < 1))) {
			char t[KVP_TERM_SIZE(64)];
			kvp_cli_usage_error(name, "--cost own:YEARS,USD_PER_KWH,PUE: %s: expected %s, "
					    "got '%s'", what[i], i == 2 ? "a number of at least 1"
					    : "a positive number", kvp_term_text(t, sizeof t, field));
			return false;
		}
		if (len > 0)
			*to[i] = v;
		p += strcspn(p, ",");
		if (*p == 0)
			return true;
		p++;
	}
	char t[KVP_TERM_SIZE(64)];
	kvp_cli_usage_error(name, "--cost own:YEARS,USD_PER_KWH,PUE: three terms at most, got '%s'",
			    kvp_term_text(t, sizeof t, terms));
	return false;
}

bool kvp_cli_cost_parse(const char *name, const char *arg, void *dest)
{
	struct kvp_size_cost *cost = dest;
	if (strcmp(arg, "own") == 0) {
		cost->basis = KVP_SIZE_BASIS_OWN;
	} else if (strncmp(arg, "own:", 4) == 0) {
		cost->basis = KVP_SIZE_BASIS_OWN;
		return own_terms(name, arg + 4, cost);
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
				    "reserved-3y, spot, serverless), own or own:YEARS,USD_PER_KWH,PUE, got '%s'",
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
