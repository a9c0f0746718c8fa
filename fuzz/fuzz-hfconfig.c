/* fuzz-hfconfig.c: libFuzzer target for the Hugging Face config.json importer
 * (kvp_hf_config_load), and for the budget of every imported model under
 * every engine, with the invariants of fuzz-common.h.  The input is the
 * config.json text.  Build: fuzz/run.sh. */
#include <stdint.h>

#include "fuzz-common.h"
#include "read/hf-config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kvp_model m;
	static const struct kvp_gpu gpu = {
		.name = "fuzz-80g", .memory_bytes = 80ULL << 30, .bandwidth_bps = 3.35e12,
		.bf16_flops = 989e12, .host_link = "pcie5x16",
	};
	const char *path = fuzz_write_input("config.json", data, size);
	struct kvp_error err = {0};
	kvp_status st = kvp_hf_config_load(path, &m, &err);
	if (st) {
		FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
		return 0;
	}
	FUZZ_ASSERT(kvp_model_validate(&m, &err) == KVP_STATUS_OK, "imported model does not validate");
	fuzz_budgets(&m, &gpu, 0);
	fuzz_budgets(&m, &gpu, 8192);
	return 0;
}
