/* fuzz-lengths.c: libFuzzer target for empirical length files
 * (kvp_workload_load_lengths, --lengths FILE): CSV rows of prompt,output or
 * a YAML list of {prompt, output}.  The input's first byte picks the form
 * (even: CSV, odd: YAML), the rest is the file.  A loaded file samples pairs
 * of at most 2^32 tokens each.  Build: fuzz/run.sh. */
#include <stdint.h>

#include "base/dist.h"
#include "fuzz-common.h"
#include "read/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *named = fuzz_write_picked("lengths", "csv", "yaml", data, size);
	if (!named)
		return 0;
	struct kvp_workload w;
	memset(&w, 0, sizeof w);
	struct kvp_error err = {0};
	kvp_status st = kvp_workload_load_lengths(named, &w, &err);
	if (st) {
		FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
		kvp_workload_free(&w);
		return 0;
	}
	FUZZ_ASSERT(w.prompt.n > 0 && w.prompt.n == w.output.n, "rows lost");
	struct kvp_rng r;
	kvp_rng_seed(&r, 1);
	for (int i = 0; i < 16; i++) {
		uint64_t p, o;
		kvp_workload_sample(&w, &r, &p, &o);
		FUZZ_ASSERT(p <= KVP_DIST_MAX_TOKENS && o <= KVP_DIST_MAX_TOKENS,
			    "a sample past 2^32 tokens");
	}
	kvp_workload_free(&w);
	return 0;
}
