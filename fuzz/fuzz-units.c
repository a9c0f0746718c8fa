/* fuzz-units.c: libFuzzer target for the size, rate, token and fraction
 * parsers of units.h and the printers.  The input is one string (cut at the
 * first NUL).  Beyond "no crash": a parsed token count or byte size printed
 * with kvp_format_u64 and read back (commas removed) gives the same number,
 * integer byte sizes are exact multiples of their suffix, and every parsed
 * double is finite and non-negative.  Build: fuzz/run.sh. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fuzz-common.h"
#include "base/units.h"

static void roundtrip(uint64_t v)
{
	char buf[64], plain[64];
	kvp_format_u64(v, buf, sizeof buf);
	size_t k = 0;
	for (const char *p = buf; *p; p++)
		if (*p != ',')
			plain[k++] = *p;
	plain[k] = '\0';
	uint64_t back;
	FUZZ_ASSERT(kvp_parse_u64(plain, &back) == 0 && back == v, "u64 does not round-trip");
	kvp_format_bytes(v, buf, sizeof buf);
	FUZZ_ASSERT(strlen(buf) < 16, "format_bytes too long");
	/* a small buffer is truncated, never overrun */
	kvp_format_u64(v, buf, 4);
	kvp_format_bytes(v, buf, 4);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_cstring(data, size);
	if (!s)
		return 0;
	uint64_t u;
	double d;
	int rc;
	if ((rc = kvp_parse_u64(s, &u)) == 0)
		roundtrip(u);
	FUZZ_ASSERT(rc >= -2 && rc <= 0, "status");
	if ((rc = kvp_parse_bytes(s, &u)) == 0) {
		roundtrip(u);
		/* "<integer><suffix>": exact, so the suffix's multiple divides it */
		size_t n = strspn(s, "0123456789_");
		if (n && s[n] && s[n] != '.') {
			const char *suf = s + n + strspn(s + n, " ");
			uint64_t mult = 1; /* units in any case; a bare letter is refused */
			if (!strcasecmp(suf, "KiB")) mult = 1ULL << 10;
			else if (!strcasecmp(suf, "MiB")) mult = 1ULL << 20;
			else if (!strcasecmp(suf, "GiB")) mult = 1ULL << 30;
			else if (!strcasecmp(suf, "TiB")) mult = 1ULL << 40;
			else if (!strcasecmp(suf, "GB")) mult = 1000000000ULL;
			FUZZ_ASSERT(u % mult == 0, "integer size not a multiple of its unit");
		}
	}
	/* -4: a bare K/M/G/T, and then (only then) its two readings */
	FUZZ_ASSERT(rc >= -4 && rc <= 0 && rc != -3, "status");
	char readings[KVP_BYTES_READINGS_SIZE];
	bool ambiguous = kvp_bytes_readings(s, readings, sizeof readings);
	FUZZ_ASSERT((rc == -4) == (ambiguous && !strchr(s, '/')), "ambiguous size without readings");
	if (ambiguous)
		FUZZ_ASSERT(strlen(readings) < sizeof readings - 1, "readings cut");
	if ((rc = kvp_parse_tokens(s, &u)) == 0)
		roundtrip(u);
	FUZZ_ASSERT(rc >= -3 && rc <= 0, "status"); /* -3: a count that is not whole */
	if (kvp_parse_double(s, &d) == 0)
		FUZZ_ASSERT(isfinite(d) && d >= 0, "double not finite and non-negative");
	if (kvp_parse_fraction(s, &d) == 0)
		FUZZ_ASSERT(d > 0 && d <= 1, "fraction outside (0, 1]");
	rc = kvp_parse_rate(s, &d);
	FUZZ_ASSERT(rc >= -4 && rc <= 0 && rc != -3, "rate status");
	FUZZ_ASSERT((rc == -4) == (ambiguous && strchr(s, '/')), "ambiguous rate without readings");
	if (rc == 0) {
		FUZZ_ASSERT(isfinite(d) && d >= 0, "rate not finite and non-negative");
		char buf[64];
		kvp_format_rate(d, buf, sizeof buf);
		FUZZ_ASSERT(strlen(buf) < sizeof buf - 1, "rate truncated when printed");
	}
	/* the printers on the input's first bytes as a number */
	if (size >= 8) {
		memcpy(&u, data, 8);
		roundtrip(u);
		memcpy(&d, data, 8);
		char buf[64];
		if (isfinite(d) && d >= 0) {
			kvp_format_rate(d, buf, sizeof buf);
			FUZZ_ASSERT(strlen(buf) < sizeof buf - 1, "rate truncated when printed");
		}
	}
	free(s);
	return 0;
}
