/* fuzz-gpu.c: libFuzzer target for kvplan's GPU profiles (YAML,
 * kvp_gpu_load), and for the budget of a fixed model (Llama-3.1-8B, from
 * profiles/) on each loaded GPU under every engine, with the invariants of
 * fuzz-common.h: the GPU profile is where memory sizes, bandwidths and
 * TFLOPS come from, so tiny, huge and odd values must plan or fail cleanly.
 * The input is the profile's text.  Build: fuzz/run.sh. */
#include <stdint.h>

#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct kvp_model m;
	static int loaded;
	if (!loaded) {
		struct kvp_error e = {0};
		if (kvp_model_load("llama-3.1-8b", &m, &e)) {
			fprintf(stderr, "fuzz-gpu: cannot load llama-3.1-8b: %s\n", e.msg);
			abort();
		}
		loaded = 1;
	}
	struct kvp_gpu g;
	const char *path = fuzz_write_input("gpu", data, size);
	struct kvp_error err = {0};
	kvp_status st = kvp_gpu_load(path, &g, &err);
	if (st) {
		FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
		return 0;
	}
	FUZZ_ASSERT(g.memory_bytes > 0, "GPU without memory");
	FUZZ_ASSERT(g.bandwidth_bps > 0 && g.bandwidth_bps - g.bandwidth_bps == 0,
		    "bandwidth not finite and positive");
	FUZZ_ASSERT(g.bf16_flops > 0 && g.bf16_flops - g.bf16_flops == 0,
		    "bf16 FLOP/s not finite and positive");
	FUZZ_ASSERT(g.fp8_flops >= 0 && g.fp8_flops - g.fp8_flops == 0,
		    "fp8 FLOP/s not finite");
	fuzz_budgets(&m, &g, 8192);
	return 0;
}
