/* fuzz-workload.c: libFuzzer target for workload profiles (workload.h,
 * kvp_workload_load): length distributions, a lengths file beside the
 * profile (lengths.csv and lengths.yaml are written next to the input), the
 * shared prefix and the SLO.  A loaded workload is sampled: every sample is
 * at most 2^32 tokens (dist.h's bound that keeps sums from overflowing), the
 * means are finite and the quantiles rise with p.  Build: fuzz/run.sh. */
#include <math.h>
#include <stdint.h>

#include "base/dist.h"
#include "fuzz-common.h"
#include "read/workload.h"

static void check_dist(const struct kvp_dist *d)
{
	double mean = kvp_dist_mean(d);
	FUZZ_ASSERT(isfinite(mean) && mean >= 0, "mean not finite and non-negative");
	uint64_t prev = 0;
	for (int k = 0; k <= 10; k++) {
		uint64_t q = kvp_dist_quantile(d, k / 10.0);
		FUZZ_ASSERT(q >= prev, "quantiles fall");
		FUZZ_ASSERT(q <= KVP_DIST_MAX_TOKENS, "quantile past 2^32 tokens");
		prev = q;
	}
	char buf[128];
	kvp_dist_format(d, buf, sizeof buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int init;
	if (!init) {
		/* files a profile may name in `lengths:` */
		const char *dir = getenv("TMPDIR");
		char p[600];
		snprintf(p, sizeof p, "%s/lengths.csv", dir && *dir ? dir : "/tmp");
		FILE *f = fopen(p, "w");
		if (f) {
			fputs("prompt,output\n1000,200\n1,0\n4294967296,1\n", f);
			fclose(f);
		}
		snprintf(p, sizeof p, "%s/lengths.yaml", dir && *dir ? dir : "/tmp");
		if ((f = fopen(p, "w"))) {
			fputs("- {prompt: 100, output: 20}\n- {prompt: 7, output: 0}\n", f);
			fclose(f);
		}
		init = 1;
	}
	const char *path = fuzz_write_input("workload", data, size);
	struct kvp_workload w;
	memset(&w, 0, sizeof w);
	struct kvp_error err = {0};
	kvp_status st = kvp_workload_load(path, &w, &err);
	if (st) {
		FUZZ_ASSERT(err.status == st && err.msg[0], "failure without a message");
		kvp_workload_free(&w);
		return 0;
	}
	check_dist(&w.prompt);
	check_dist(&w.output);
	struct kvp_rng r;
	kvp_rng_seed(&r, size);
	for (int i = 0; i < 64; i++) {
		uint64_t p, o;
		kvp_workload_sample(&w, &r, &p, &o);
		FUZZ_ASSERT(p <= KVP_DIST_MAX_TOKENS && o <= KVP_DIST_MAX_TOKENS,
			    "a sample past 2^32 tokens");
	}
	FUZZ_ASSERT(w.arrival_rate >= 0 && isfinite(w.arrival_rate), "arrival rate");
	FUZZ_ASSERT(w.prefix_fraction >= 0 && w.prefix_fraction <= 1, "prefix fraction");
	kvp_workload_free(&w);
	return 0;
}
