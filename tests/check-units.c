/* check-units.c: size, rate and token parsing; checked arithmetic.
 * Expected values are the unit definitions (KiB = 1024 B, GB = 10^9 B). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/units.h"

static const struct {
	const char *in;
	int rc;
	uint64_t bytes;
} byte_cases[] = {
	{"0", 0, 0},
	{"1", 0, 1},
	{"512B", 0, 512},
	{"80GiB", 0, 80ULL << 30},           /* 80 * 2^30 = 85,899,345,920 */
	{"80GB", 0, 80000000000ULL},         /* decimal */
	{"81559MiB", 0, 81559ULL << 20},     /* H100 nvidia-smi total: 85,520,809,984 B */
	{"1.5GiB", 0, 1610612736ULL},        /* 1.5 * 2^30 */
	{"14.99GiB", 0, 16095389942ULL},     /* 15 * 2^30 - 0.01 * 2^30 = 16,106,127,360 - 10,737,418.24 = 16,095,389,941.76 -> 16,095,389,942 */
	{"16EiB", -1, 0},                    /* unknown suffix */
	{"16384TiB", 0, 16384ULL << 40},     /* 2^54 */
	{"17179869184GiB", -2, 0},           /* 2^34 GiB = 2^64 B: overflows */
	{"18446744073709551615", 0, UINT64_MAX},
	{"18446744073709551616", -2, 0},     /* UINT64_MAX + 1 */
	{"-1GiB", -1, 0},
	{"", -1, 0},
	{"GiB", -1, 0},
	{"1.2.3GB", -1, 0},
	{"nanGB", -1, 0},
	{"1_000_000", 0, 1000000},
	/* issue 35: units in any case; a bare letter is ambiguous (-4) */
	{"80gb", 0, 80000000000ULL},         /* 80 * 10^9 */
	{"80Gb", 0, 80000000000ULL},
	{"80gib", 0, 80ULL << 30},           /* 80 * 2^30 = 85,899,345,920 */
	{"80GIB", 0, 85899345920ULL},
	{"1.5gib", 0, 1610612736ULL},        /* 1.5 * 2^30 = 1,610,612,736 */
	{"512mb", 0, 512000000ULL},          /* 512 * 10^6 */
	{"512MiB", 0, 536870912ULL},         /* 512 * 2^20 */
	{"4kb", 0, 4000},
	{"4kB", 0, 4000},
	{"4KiB", 0, 4096},
	{"2tb", 0, 2000000000000ULL},        /* 2 * 10^12 */
	{"2TiB", 0, 2199023255552ULL},       /* 2 * 2^40 */
	{"512b", 0, 512},
	{"80G", -4, 0},                      /* was 80 GiB without a word */
	{"80g", -4, 0},
	{"1.5G", -4, 0},
	{"512M", -4, 0},
	{"4K", -4, 0},
	{"2T", -4, 0},
	{"80 G", -4, 0},
	{"80Gi", -1, 0},
	{"80GG", -1, 0},
};

START_TEST(test_parse_bytes)
{
	uint64_t v = 12345;
	int rc = kvp_parse_bytes(byte_cases[_i].in, &v);
	ck_assert_msg(rc == byte_cases[_i].rc, "%s: rc %d, want %d", byte_cases[_i].in, rc,
		      byte_cases[_i].rc);
	if (rc == 0)
		ck_assert_msg(v == byte_cases[_i].bytes, "%s: %llu, want %llu", byte_cases[_i].in,
			      (unsigned long long)v, (unsigned long long)byte_cases[_i].bytes);
}
END_TEST

static const struct {
	const char *in;
	int rc;
	uint64_t tokens;
} token_cases[] = {
	{"8192", 0, 8192},
	{"128k", 0, 131072},   /* "128k context" = Llama-3.1 max_position_embeddings 131,072 */
	{"32K", 0, 32768},
	{"1m", 0, 1048576},
	{"4.5k", 0, 4608},     /* 4.5 * 1024 */
	{"10x", -1, 0},
	{"-5", -1, 0},
	/* D21: a count is whole; a suffix may make a fraction whole */
	{"1.5", -3, 0},        /* was rounded to 2 tokens */
	{"1.5k", 0, 1536},     /* 1.5 * 1024 */
	{"1.50k", 0, 1536},    /* trailing zeros change nothing */
	{".5k", 0, 512},
	{"1.3k", -3, 0},       /* 1.3 * 1024 = 1331.2 */
	{"0.0009765625m", 0, 1024}, /* 2^-10 * 2^20 = 2^10, exact in decimal */
	{"0.00000000000000000001k", -3, 0}, /* 20 decimals */
	{"2.0", 0, 2},
	{"17592186044416m", -2, 0},  /* 2^44 * 2^20 = 2^64: overflows */
	{"17592186044415.5m", 0, 18446744073709027328ULL}, /* (2^44 - 1 + 0.5) * 2^20 = 2^64 - 2^19 */
	{"0x10", -1, 0},
	{"1e3", -1, 0},
};

START_TEST(test_parse_tokens)
{
	uint64_t v = 0;
	int rc = kvp_parse_tokens(token_cases[_i].in, &v);
	ck_assert_int_eq(rc, token_cases[_i].rc);
	if (rc == 0)
		ck_assert_uint_eq(v, token_cases[_i].tokens);
}
END_TEST

static const struct {
	const char *in;
	int rc;
	double bps;
} rate_cases[] = {
	{"4.8TB/s", 0, 4.8e12},     /* H200 datasheet */
	{"3.35TB/s", 0, 3.35e12},   /* H100 SXM datasheet */
	{"25GB/s", 0, 25e9},
	{"900GiB/s", 0, 900.0 * 1073741824.0},
	{"0GB/s", 0, 0},
	{"4.8TB", -1, 0},           /* missing /s */
	{"fastTB/s", -1, 0},
	{"-1GB/s", -1, 0},
	{"25gb/s", 0, 25e9},        /* any case */
	{"900gib/s", 0, 900.0 * 1073741824.0},
	{"900G/s", -4, 0},          /* GB/s or GiB/s? */
	{"/s", -1, 0},
};

START_TEST(test_parse_rate)
{
	double v = -1;
	int rc = kvp_parse_rate(rate_cases[_i].in, &v);
	ck_assert_int_eq(rc, rate_cases[_i].rc);
	if (rc == 0)
		ck_assert_double_eq_tol(v, rate_cases[_i].bps, rate_cases[_i].bps * 1e-12 + 1e-9);
}
END_TEST

START_TEST(test_fraction)
{
	double v;
	ck_assert_int_eq(kvp_parse_fraction("0.9", &v), 0);
	ck_assert_double_eq_tol(v, 0.9, 1e-12);
	ck_assert_int_eq(kvp_parse_fraction("92%", &v), 0);
	ck_assert_double_eq_tol(v, 0.92, 1e-12);
	ck_assert_int_eq(kvp_parse_fraction("1", &v), 0);
	ck_assert_int_eq(kvp_parse_fraction("0", &v), -2);     /* must be > 0 */
	ck_assert_int_eq(kvp_parse_fraction("1.01", &v), -2);  /* must be <= 1 */
	ck_assert_int_eq(kvp_parse_fraction("nan", &v), -1);
	ck_assert_int_eq(kvp_parse_fraction("inf", &v), -1);
	ck_assert_int_eq(kvp_parse_fraction("1e999", &v), -2); /* overflows a double */
	/* D21: decimal only; strtod would take these */
	ck_assert_int_eq(kvp_parse_fraction("0x0.8p0", &v), -1); /* hex float, 0.5 */
	ck_assert_int_eq(kvp_parse_fraction("0X1", &v), -1);
	ck_assert_int_eq(kvp_parse_fraction("0.5e", &v), -1);
	ck_assert_int_eq(kvp_parse_fraction(".", &v), -1);
	ck_assert_int_eq(kvp_parse_fraction("5e-1", &v), 0);
	ck_assert_double_eq_tol(v, 0.5, 1e-12);
	ck_assert_int_eq(kvp_parse_fraction(".5", &v), 0);
	ck_assert_double_eq_tol(v, 0.5, 1e-12);
	double d;
	ck_assert_int_eq(kvp_parse_double("0x10", &d), -1);
	ck_assert_int_eq(kvp_parse_double("1e+3", &d), 0);
	ck_assert_double_eq(d, 1000);
	ck_assert_int_eq(kvp_parse_double("1..2", &d), -1);
}
END_TEST

START_TEST(test_checked_arithmetic)
{
	uint64_t r = 7;
	ck_assert(kvp_mul(1ULL << 32, 1ULL << 31, &r));
	ck_assert_uint_eq(r, 1ULL << 63);
	r = 7;
	ck_assert(!kvp_mul(1ULL << 32, 1ULL << 32, &r)); /* 2^64 */
	ck_assert_uint_eq(r, 7);                          /* untouched */
	ck_assert(!kvp_add(UINT64_MAX, 1, &r));
	ck_assert(kvp_add(UINT64_MAX - 1, 1, &r));
	ck_assert_uint_eq(r, UINT64_MAX);
	ck_assert(kvp_mul(0, UINT64_MAX, &r));
	ck_assert_uint_eq(r, 0);
	ck_assert_uint_eq(kvp_cdiv(4095, 16), 256); /* 255.9 -> 256 */
	ck_assert_uint_eq(kvp_cdiv(4096, 16), 256);
	ck_assert_uint_eq(kvp_cdiv(1, 16), 1);
	ck_assert_uint_eq(kvp_cdiv(0, 16), 0);
}
END_TEST

START_TEST(test_format)
{
	char buf[64];
	kvp_format_bytes(1073741824ULL, buf, sizeof buf);
	ck_assert_str_eq(buf, "1.00 GiB");
	kvp_format_bytes(512, buf, sizeof buf);
	ck_assert_str_eq(buf, "512 B");
	kvp_format_bytes(1536, buf, sizeof buf);
	ck_assert_str_eq(buf, "1.50 KiB");
	kvp_format_u64(1234567, buf, sizeof buf);
	ck_assert_str_eq(buf, "1,234,567");
	kvp_format_u64(0, buf, sizeof buf);
	ck_assert_str_eq(buf, "0");
	kvp_format_rate(4.8e12, buf, sizeof buf);
	ck_assert_str_eq(buf, "4.80 TB/s");
}
END_TEST

/* Fixed decimals below 10^15, scientific from there on (by hand). */
/* The two readings of a bare letter, by hand (issue 35). */
static const struct {
	const char *in, *want;
} reading_cases[] = {
	/* 80 * 10^9; 80 * 2^30 = 80 * 1,073,741,824 */
	{"80G", "80GB (80,000,000,000 B) or 80GiB (85,899,345,920 B)"},
	{"80g", "80GB (80,000,000,000 B) or 80GiB (85,899,345,920 B)"},
	/* 1.5 * 10^9; 1.5 * 2^30 */
	{"1.5G", "1.5GB (1,500,000,000 B) or 1.5GiB (1,610,612,736 B)"},
	/* 512 * 10^6; 512 * 2^20 */
	{"512m", "512MB (512,000,000 B) or 512MiB (536,870,912 B)"},
	{"4K", "4KB (4,000 B) or 4KiB (4,096 B)"},
	/* 2^24 TB = 1.6777216e19 < 2^64 = 1.8446744e19; 2^24 TiB = 2^64 */
	{"16777216T", "16777216TB (16,777,216,000,000,000,000 B) or 16777216TiB (over 64 bits)"},
	{"900G/s", "900GB/s or 900GiB/s"},
	{"80GB", NULL},
	{"80", NULL},
	{"80Gx", NULL},
	{"G", NULL},
	{"80G/", NULL},
	/* the longest: 63 characters of number (what split_number takes), both
	 * readings past 64 bits: 2 x (63 + 3 + 2 + 12 + 1) + 4 = 166 characters */
	{"999999999999999999999999999999999999999999999999999999999999999G",
	 "999999999999999999999999999999999999999999999999999999999999999GB (over 64 bits) or "
	 "999999999999999999999999999999999999999999999999999999999999999GiB (over 64 bits)"},
};

START_TEST(test_readings)
{
	char buf[KVP_BYTES_READINGS_SIZE] = "untouched";
	bool got = kvp_bytes_readings(reading_cases[_i].in, buf, sizeof buf);
	if (reading_cases[_i].want) {
		ck_assert_msg(got, "%s: no readings", reading_cases[_i].in);
		ck_assert_str_eq(buf, reading_cases[_i].want);
	} else {
		ck_assert_msg(!got, "%s: readings '%s'", reading_cases[_i].in, buf);
		ck_assert_str_eq(buf, "untouched");
	}
}
END_TEST

static const struct {
	double v;
	int decimals;
	const char *unit, *want;
} fixed_cases[] = {
	{12.345, 1, " s", "12.3 s"},
	{0.5, 3, " ms", "0.500 ms"},
	{999999999999999.0, 0, "", "999999999999999"},
	{1e15, 1, "", "1.000e+15"},
	{1e61, 2, "", "1.0000e+61"},
	{-2.5e300, 1, " x", "-2.500e+300 x"},
};

START_TEST(test_format_fixed)
{
	char buf[64];
	kvp_format_fixed(fixed_cases[_i].v, fixed_cases[_i].decimals, fixed_cases[_i].unit, buf,
			 sizeof buf);
	ck_assert_str_eq(buf, fixed_cases[_i].want);
}
END_TEST

static Suite *units_suite(void)
{
	Suite *s = suite_create("units");
	TCase *core = tcase_create("core");
	tcase_add_loop_test(core, test_parse_bytes, 0, sizeof byte_cases / sizeof byte_cases[0]);
	tcase_add_loop_test(core, test_parse_tokens, 0, sizeof token_cases / sizeof token_cases[0]);
	tcase_add_loop_test(core, test_parse_rate, 0, sizeof rate_cases / sizeof rate_cases[0]);
	tcase_add_test(core, test_format);
	tcase_add_loop_test(core, test_readings, 0, sizeof reading_cases / sizeof reading_cases[0]);
	tcase_add_loop_test(core, test_format_fixed, 0, sizeof fixed_cases / sizeof fixed_cases[0]);
	suite_add_tcase(s, core);
	TCase *limits = tcase_create("limits");
	tcase_add_test(limits, test_fraction);
	tcase_add_test(limits, test_checked_arithmetic);
	suite_add_tcase(s, limits);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(units_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
