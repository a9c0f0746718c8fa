/* fuzz-baseline.c: libFuzzer target for `kvplan check` baselines (checks.h,
 * kvp_check_baseline_load_buffer): the YAML that --update-baseline writes
 * and --baseline reads.  Build: fuzz/run.sh. */
#include <stdint.h>

#include "check/checks.h"
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kvp_check_baseline *b = NULL;
	struct kvp_error err = {0};
	kvp_status st = kvp_check_baseline_load_buffer("fuzz-baseline.yaml", (const char *)data,
						       size, &b, &err);
	if (st) {
		FUZZ_ASSERT(b == NULL, "failure left a baseline");
		FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
		return 0;
	}
	for (size_t i = 0; i < b->n; i++) {
		FUZZ_ASSERT(b->e[i].fields != NULL, "an entry without fields");
		struct kvp_record *r = b->e[i].fields;
		fuzz_write_record(r);
	}
	kvp_check_baseline_free(b);
	return 0;
}
