/* fuzz-dist.c: libFuzzer target for length distribution specs (dist.h,
 * --prompt/--output and a workload's prompt:/output:), e.g.
 * "lognormal:1200,0.8".  A parsed spec samples lengths of at most 2^32
 * tokens, has a finite mean, rising quantiles, and prints back to a spec
 * that parses to the same distribution (the integer kinds; see below).
 * Build: fuzz/run.sh. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/dist.h"
#include "fuzz-common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	if (!s)
		return 0;
	struct kvp_dist d;
	memset(&d, 0, sizeof d);
	struct kvp_error err = {0};
	kvp_status st;
	if (kvp_dist_parse(s, "prompt", &d, &err) != KVP_STATUS_OK) {
		FUZZ_ASSERT(err.msg[0], "failure without a message");
		free(s);
		return 0;
	}
	double mean = kvp_dist_mean(&d);
	FUZZ_ASSERT(isfinite(mean) && mean >= 0, "mean not finite and non-negative");
	/* four quantiles: a zipf quantile sums up to 10^6 terms (slow under ASan) */
	static const double ps[] = {0, 0.5, 0.99, 1};
	uint64_t prev = 0;
	for (int k = 0; k < 4; k++) {
		uint64_t q = kvp_dist_quantile(&d, ps[k]);
		FUZZ_ASSERT(q >= prev && q <= KVP_DIST_MAX_TOKENS, "quantiles");
		prev = q;
	}
	struct kvp_rng r;
	kvp_rng_seed(&r, 42);
	for (int i = 0; i < 256; i++)
		FUZZ_ASSERT(kvp_dist_sample(&d, &r) <= KVP_DIST_MAX_TOKENS, "a sample past 2^32");
	char buf[256];
	kvp_dist_format(&d, buf, sizeof buf);
	struct kvp_dist back;
	memset(&back, 0, sizeof back);
	st = kvp_dist_parse(buf, "prompt", &back, &err);
	/* normal and lognormal print "%g", which rounds past 6 digits
	 * (fuzz/pending/dist/lognormal-printed-rounded): checked for the
	 * integer kinds until dist.c prints exactly */
	if (d.kind == KVP_DIST_FIXED || d.kind == KVP_DIST_UNIFORM || d.kind == KVP_DIST_ZIPF) {
		FUZZ_ASSERT(st == KVP_STATUS_OK, "the printed spec does not parse");
		FUZZ_ASSERT(back.kind == d.kind && back.a == d.a, "the printed spec differs");
	}
	if (st == KVP_STATUS_OK)
		kvp_dist_free(&back);
	kvp_dist_free(&d);
	free(s);
	return 0;
}
