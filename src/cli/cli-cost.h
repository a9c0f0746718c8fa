/* cli-cost.h: the cost options `kvplan size` and `kvplan plot pareto` share:
 * --cost cloud[:KIND]|own and --price GPU=USD, parsed once for both. */
#ifndef KVP_CLI_COST_H
#define KVP_CLI_COST_H

#include <stdbool.h>

#include "model/model.h"

/* --cost ARG into the struct kvp_size_cost at dest (size.h): "own", "cloud"
 * or "cloud:KIND" with KIND one of on-demand, reserved-1y, reserved-3y, spot,
 * serverless.  A KVP_CLI_OPT_PARSE callback (cli-options.h): on a bad ARG it
 * reports a usage error for command `name` and returns false. */
bool kvp_cli_cost_parse(const char *name, const char *arg, void *dest);

/* --price ARG, "GPU=USD" with a positive finite USD per GPU-hour, into
 * gpu[KVP_NAME_MAX] and *usd.  False after a usage error for command `name`
 * (gpu and *usd then undefined). */
bool kvp_cli_price_parse(const char *name, const char *arg, char gpu[KVP_NAME_MAX], double *usd);

#endif
