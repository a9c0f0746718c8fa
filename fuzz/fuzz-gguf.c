/* fuzz-gguf.c: libFuzzer target for the GGUF header reader (kvp_gguf_load),
 * and for the budget of every model it accepts under every engine, with the
 * invariants of fuzz-common.h.  The input is the file, header first; seeds in
 * fuzz/seeds/gguf/ (tiny headers after ggml docs/gguf.md: a llama, per-layer
 * KV heads, MoE, MLA, a recurrent hybrid), keys in fuzz/gguf.dict.
 * Beyond the sanitizers it checks that a refusal carries a message and, when
 * the reader names a byte offset, that the offset lies inside the input.
 * Build: fuzz/run.sh. */
#include <stdint.h>
#include <stdlib.h>

#include "fuzz-common.h"
#include "read/gguf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kvp_model m;
	static const struct kvp_gpu gpu = {
		.name = "fuzz-80g", .memory_bytes = 80ULL << 30, .bandwidth_bps = 3.35e12,
		.bf16_flops = 989e12, .host_link = "pcie5x16",
	};
	const char *path = fuzz_write_file("gguf", "gguf", data, size);
	struct kvp_error err = {0};
	kvp_status st = kvp_gguf_load(path, &m, &err);
	if (st) {
		FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
		const char *at = strstr(err.msg, "at byte ");
		if (at)
			FUZZ_ASSERT(strtoull(at + 8, NULL, 10) <= size, "an offset past the input");
		return 0;
	}
	FUZZ_ASSERT(kvp_model_validate(&m, &err) == KVP_STATUS_OK, "imported model does not validate");
	FUZZ_ASSERT(m.num_layers >= 1 && m.num_layers <= KVP_MAX_LAYERS, "layer count out of range");
	fuzz_budgets(&m, &gpu, 0);
	fuzz_budgets(&m, &gpu, 8192);
	return 0;
}
