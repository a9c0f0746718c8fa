/* fuzz-scenario.c: libFuzzer target for `kvplan report` scenario files
 * (report.h, kvp_scenario_load): the models, GPUs, engines, splits, KV
 * dtypes, workloads, questions, plots and kvbench results a report covers.
 * Profiles are named (profiles/) or paths beside the input.  A loaded
 * scenario's lists stay within KVP_SCENARIO_MAX.  Build: fuzz/run.sh. */
#include <stdint.h>

#include "fuzz-common.h"
#include "report/report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kvp_scenario s;
	const char *path = fuzz_write_input("scenario", data, size);
	memset(&s, 0, sizeof s);
	struct kvp_error err = {0};
	kvp_status st = kvp_scenario_load(path, &s, &err);
	if (st) {
		FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
	} else {
		FUZZ_ASSERT(s.nengines <= KVP_SCENARIO_MAX && s.ntp <= KVP_SCENARIO_MAX &&
				    s.nkv <= KVP_SCENARIO_MAX && s.nworkloads <= KVP_SCENARIO_MAX &&
				    s.nresults <= KVP_SCENARIO_MAX,
			    "a list past KVP_SCENARIO_MAX");
		FUZZ_ASSERT(s.utilization >= 0 && s.utilization <= 1, "utilization");
	}
	kvp_scenario_free(&s);
	return 0;
}
