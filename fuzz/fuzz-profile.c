/* fuzz-profile.c: libFuzzer target for kvplan's model profiles (YAML,
 * kvp_model_load_yaml), and for everything a loaded model feeds: the layer
 * list (kvp_spec_build) and the budget of every engine under a few tp/pp
 * splits and KV dtypes on an 80 GiB GPU, with the invariants of
 * fuzz-common.h, and the record in JSON, CSV and table form.  The input is
 * the profile's text.  Build: fuzz/run.sh. */
#include <stdint.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kvp_model m;
	static const struct kvp_gpu gpu = {
		.name = "fuzz-80g", .memory_bytes = 80ULL << 30, .bandwidth_bps = 3.35e12,
		.bf16_flops = 989e12, .host_link = "pcie5x16",
	};
	const char *path = fuzz_write_input("model", data, size);
	struct kvp_error err = {0};
	kvp_status st = kvp_model_load_yaml(path, &m, &err);
	if (st) {
		FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
		char msg[1400];
		kvp_error_format(&err, msg, sizeof msg);
		return 0;
	}
	FUZZ_ASSERT(kvp_model_validate(&m, &err) == KVP_STATUS_OK, "loaded model does not validate");
	fuzz_budgets(&m, &gpu, 0);          /* the model's max_context */
	fuzz_budgets(&m, &gpu, 8192);
	return 0;
}
