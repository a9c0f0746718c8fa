/* check-output.c: how the machine formats print numbers and versions.
 * Expected texts are the numbers' own decimal expansions, worked by hand
 * beside each case; random doubles must read back to themselves. */
#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out/output.h"

static const struct {
	double x;
	const char *text;
} f64_cases[] = {
	{0.9, "0.9"},                                /* shortest that reads back */
	{0.1 + 0.2, "0.30000000000000004"},          /* needs all 17 digits */
	{1.0 / 3.0, "0.3333333333333333"},           /* 16 digits suffice */
	{1073741824.0, "1073741824"},                /* 2^30 bytes held in a double: exact, not 1.07374e+09 */
	{14080286720.0, "14080286720"},              /* a FLOP count */
	{17179869184.0 / 25e9, "0.68719476736"},     /* 16 GiB at 25 GB/s, exact in decimal */
	{16386.0 / 4097.0, "3.999511837930193"},     /* 3.99951183793019282... */
	{0.0, "0"},
	{-2.5, "-2.5"},
	{1e300, "1e+300"},
	{9007199254740993.0, "9007199254740992"},    /* 2^53 + 1 rounds to 2^53 in a double */
	{1e17, "1e+17"},                             /* whole but past 2^53: shortest %g */
};

START_TEST(test_f64)
{
	struct kvp_value v = {.type = KVP_VALUE_F64, .f = f64_cases[_i].x};
	char buf[64];
	kvp_value_format(&v, buf, sizeof buf);
	ck_assert_str_eq(buf, f64_cases[_i].text);
}
END_TEST

START_TEST(test_round_trip)
{
	srand(18);
	for (int i = 0; i < 20000; i++) {
		uint64_t bits = ((uint64_t)rand() << 33) ^ ((uint64_t)rand() << 11) ^ (uint64_t)rand();
		double x;
		memcpy(&x, &bits, sizeof x);
		if (!isfinite(x))
			continue;
		struct kvp_value v = {.type = KVP_VALUE_F64, .f = x};
		char buf[64];
		kvp_value_format(&v, buf, sizeof buf);
		ck_assert_msg(strtod(buf, NULL) == x, "%s does not read back", buf);
		/* at most 17 significant digits: no more than sign, 17 digits,
		 * point and an exponent of 5 characters */
		ck_assert_uint_le(strlen(buf), 1 + 17 + 1 + 5);
	}
}
END_TEST

START_TEST(test_u64)
{
	struct kvp_value v = {.type = KVP_VALUE_U64, .u = UINT64_MAX};
	char buf[32];
	kvp_value_format(&v, buf, sizeof buf);
	ck_assert_str_eq(buf, "18446744073709551615");
	struct kvp_value n = {.type = KVP_VALUE_NULL};
	kvp_value_format(&n, buf, sizeof buf);
	ck_assert_str_eq(buf, "");
}
END_TEST

/* CSV: schema_version first, a null field an empty cell; JSON opens with it */
START_TEST(test_versions)
{
	struct kvp_record *a = kvp_record_new(), *b = kvp_record_new();
	kvp_record_u64(a, "batch", 1);
	kvp_record_null(a, "transfer_s");
	kvp_record_u64(b, "batch", 8);
	kvp_record_f64(b, "transfer_s", 0.5);
	struct kvp_record *rows[] = {a, b};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	kvp_write_csv(f, rows, 2);
	fclose(f);
	ck_assert_str_eq(text, "schema_version,batch,transfer_s\n1,1,\n1,8,0.5\n");
	free(text);
	f = open_memstream(&text, &len);
	kvp_write_json(f, a);
	fclose(f);
	ck_assert_str_eq(text, "{\n  \"schema_version\": 1,\n  \"batch\": 1,\n  \"transfer_s\": null\n}\n");
	free(text);
	f = open_memstream(&text, &len);
	kvp_write_json_rows(f, "rows", rows, 2);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "{\n  \"schema_version\": 1,\n  \"rows\": ["));
	ck_assert_ptr_null(strstr(strstr(text, "rows") , "schema_version"));
	free(text);
	kvp_record_free(a);
	kvp_record_free(b);
}
END_TEST

/* kvp_write_json_line: one object on one line, no schema_version (vLLM's
 * --kv-transfer-config value); a quote and a line break escaped, so the
 * line never breaks; a nested record is not written (null). */
START_TEST(test_json_line)
{
	struct kvp_record *r = kvp_record_new(), *sub = kvp_record_new();
	kvp_record_str(r, "kv_connector", "NixlConnector");
	kvp_record_str(r, "kv_role", "kv_both");
	kvp_record_u64(r, "n", 2);
	kvp_record_str(r, "x", "a\"b\n");
	kvp_record_u64(sub, "y", 1);
	kvp_record_rec(r, "sub", sub);
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	kvp_write_json_line(f, r);
	fclose(f);
	ck_assert_str_eq(text, "{\"kv_connector\":\"NixlConnector\",\"kv_role\":\"kv_both\","
			       "\"n\":2,\"x\":\"a\\\"b\\n\",\"sub\":null}");
	free(text);
	kvp_record_free(r);
}
END_TEST

static Suite *output_suite(void)
{
	Suite *s = suite_create("output");
	TCase *core = tcase_create("core");
	tcase_add_loop_test(core, test_f64, 0, sizeof f64_cases / sizeof f64_cases[0]);
	tcase_add_test(core, test_u64);
	tcase_add_test(core, test_versions);
	tcase_add_test(core, test_json_line);
	suite_add_tcase(s, core);
	TCase *limits = tcase_create("limits");
	tcase_add_test(limits, test_round_trip);
	suite_add_tcase(s, limits);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(output_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
