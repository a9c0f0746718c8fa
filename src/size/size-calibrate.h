/* size-calibrate.h: a calibration (time/calibration.h: a kvbench run, a
 * table, a `kvplan calibrate` fit) of the one GPU a search considers, into
 * the search's options, the same for `kvplan size --calibration`
 * (cli/cmd-size.c) and kvplan_size_json's calibration (api/api-size.c). */
#ifndef KVP_SIZE_CALIBRATE_H
#define KVP_SIZE_CALIBRATE_H

#include <stdbool.h>

#include "size/size.h"

/* Read the calibration at path for GPU g (kvp_calibration_load: its
 * errors) and put its decode and prefill efficiencies into so where so has
 * none (0), and its latency spread where spread_given is false and it
 * measured points; *spread_from then says "calibration". */
kvp_status kvp_size_calibrate(const char *path, const struct kvp_gpu *g, bool spread_given,
			      struct kvp_size_opts *so, const char **spread_from,
			      struct kvp_error *err);

#endif
