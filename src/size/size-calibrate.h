/* size-calibrate.h: a calibration (time/calibration.h: a kvbench run, a
 * table, a `kvplan calibrate` fit, or an engine calibration and a kvbench
 * run composed) of the one GPU a search considers, into the search's
 * options, the same for `kvplan size --calibration` (cli/cmd-size.c) and
 * kvplan_size_json's calibration (api/api-size.c). */
#ifndef KVP_SIZE_CALIBRATE_H
#define KVP_SIZE_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>

#include "size/size.h"
#include "time/calibration.h"

/* Put cal's decode, prefill and KV-read efficiencies into so where so has
 * none (0), and its latency spread where spread_given is false and it
 * measured points; *spread_from then says "calibration". */
void kvp_size_calibration_apply(const struct kvp_calibration *cal, bool spread_given,
				struct kvp_size_opts *so, const char **spread_from);

/* Read the calibration files paths[0..n) for GPU g
 * (kvp_calibration_load_files: its errors) and apply them as above;
 * names[0] and names[1] get the engine calibration's path (or the one file
 * given) and the kvbench run's beside it (NULL: none), as size's JSON names
 * them. */
kvp_status kvp_size_calibrate(const char *const *paths, size_t n, const struct kvp_gpu *g,
			      bool spread_given, struct kvp_size_opts *so,
			      const char **spread_from, const char **names,
			      struct kvp_error *err);

#endif
