/* check-version.c: engine version strings (base/version.h).  Expected
 * orders are PEP 440's (https://peps.python.org/pep-0440/, "Summary of
 * permitted suffixes and relative ordering") and the strings the engines
 * print: vLLM's tag "v0.19.0", a wheel's "0.19.0+cu128", a nightly
 * "0.11.1rc2.dev123+g1a2b3c", a source build "0.1.dev8168+g475c1a0". */
#include <check.h>
#include <stdlib.h>

#include "base/version.h"

static const struct {
	const char *in;
	bool ok;
	uint32_t major, minor, patch;
	int pre;
	bool dev;
} parse_cases[] = {
	{"0.19.0", true, 0, 19, 0, -1, false},
	{"v0.19.0", true, 0, 19, 0, -1, false},
	{"V0.27.1", true, 0, 27, 1, -1, false},
	{"0.19.0+cu128", true, 0, 19, 0, -1, false},
	{"0.11.1rc2.dev123+g1a2b3c", true, 0, 11, 1, 2, true},
	{"0.1.dev8168+g475c1a0", true, 0, 1, 0, -1, true},
	{"0.11.0+582e4e37.nv25.11", true, 0, 11, 0, -1, false},
	{"0.27", true, 0, 27, 0, -1, false},
	{"0.10.1.1", true, 0, 10, 1, -1, false},
	{"1.0a1", true, 1, 0, 0, 0, false},
	{"1.0b2", true, 1, 0, 0, 1, false},
	{"1.0.post1", true, 1, 0, 0, -1, false},
	{"", false, 0, 0, 0, -1, false},
	{"v", false, 0, 0, 0, -1, false},
	{"0.19.x", false, 0, 0, 0, -1, false},
	{"0.19.0+", false, 0, 0, 0, -1, false},
	{"0.19.0 ", false, 0, 0, 0, -1, false},
	{"pytorch-4c05a748", false, 0, 0, 0, -1, false},   /* trtllm.yaml's commit name */
	{"4294967296.0", false, 0, 0, 0, -1, false},       /* 2^32: past UINT32_MAX */
	{"1.2.3.4.5.6.7", false, 0, 0, 0, -1, false},      /* more than 6 parts */
	{"0.19.0+cu 128", false, 0, 0, 0, -1, false},
};

START_TEST(test_parse)
{
	struct kvp_version v;
	bool ok = kvp_version_parse(parse_cases[_i].in, &v);
	ck_assert_msg(ok == parse_cases[_i].ok, "%s: parsed %d", parse_cases[_i].in, ok);
	if (!ok)
		return;
	ck_assert_uint_eq(v.part[0], parse_cases[_i].major);
	ck_assert_uint_eq(v.nparts > 1 ? v.part[1] : 0, parse_cases[_i].minor);
	ck_assert_uint_eq(v.nparts > 2 ? v.part[2] : 0, parse_cases[_i].patch);
	ck_assert_int_eq(v.pre, parse_cases[_i].pre);
	ck_assert_int_eq(v.dev, parse_cases[_i].dev);
}
END_TEST

/* each pair: a < b (PEP 440), so b > a and neither equals the other */
static const char *const less_cases[][2] = {
	{"0.10.2", "0.11.2"},
	{"0.9.9", "0.10.0"},          /* numeric, not text, order */
	{"0.19.0", "0.27.1"},
	{"1.0.dev1", "1.0a1.dev1"},
	{"1.0a1.dev1", "1.0a1"},
	{"1.0a1", "1.0b1"},
	{"1.0b1", "1.0rc1"},
	{"1.0rc1", "1.0"},
	{"1.0", "1.0.post1.dev1"},
	{"1.0.post1.dev1", "1.0.post1"},
	{"0.11.1rc2.dev123+g1a2b3c", "0.11.1rc2"},
	{"0.11.1rc2", "0.11.1"},
	{"0.11.0", "0.11.1rc2.dev123"},
	{"0.10.1", "0.10.1.1"},
};

START_TEST(test_order)
{
	struct kvp_version a, b;
	ck_assert(kvp_version_parse(less_cases[_i][0], &a));
	ck_assert(kvp_version_parse(less_cases[_i][1], &b));
	ck_assert_msg(kvp_version_cmp(&a, &b) < 0, "%s < %s", less_cases[_i][0], less_cases[_i][1]);
	ck_assert_msg(kvp_version_cmp(&b, &a) > 0, "%s > %s", less_cases[_i][1], less_cases[_i][0]);
}
END_TEST

START_TEST(test_equal)
{
	/* the tag, a local build and missing zero parts are one version */
	static const char *const same[] = {"0.19.0", "v0.19.0", "0.19.0+cu128", "0.19", "0.19.0.0"};
	struct kvp_version a, b;
	ck_assert(kvp_version_parse(same[0], &a));
	for (size_t i = 1; i < sizeof same / sizeof same[0]; i++) {
		ck_assert(kvp_version_parse(same[i], &b));
		ck_assert_msg(kvp_version_cmp(&a, &b) == 0, "%s == %s", same[0], same[i]);
	}
}
END_TEST

static const struct {
	const char *version, *range;
	bool in;
} range_cases[] = {
	{"0.19.0", ">=0.19,<0.20", true},
	{"v0.19.1+cu128", ">=0.19,<0.20", true},
	{"0.20.0", ">=0.19,<0.20", false},
	{"0.18.9", ">=0.19,<0.20", false},
	/* PEP 440: "<0.20" leaves out 0.20's own pre-releases and nightlies */
	{"0.20.0rc1", ">=0.19,<0.20", false},
	{"0.20.0rc1.dev5", ">=0.19, <0.20", false},
	/* ... but 0.19's pre-releases are below ">=0.19" */
	{"0.19.0rc1", ">=0.19,<0.20", false},
	{"0.10.2", "==0.10.2", true},
	{"0.10.2+cu126", "== 0.10.2", true},
	{"0.10.3", "==0.10.2", false},
	{"0.11.0", ">0.10.2,<=0.11.2", true},
	{"0.11.2", ">0.10.2,<=0.11.2", true},
	{"0.10.2", ">0.10.2,<=0.11.2", false},
	{"0.11.1", "!=0.11.1", false},
};

START_TEST(test_range)
{
	struct kvp_version v;
	ck_assert(kvp_version_parse(range_cases[_i].version, &v));
	ck_assert(kvp_version_range_valid(range_cases[_i].range));
	ck_assert_msg(kvp_version_in_range(&v, range_cases[_i].range) == range_cases[_i].in,
		      "%s in %s", range_cases[_i].version, range_cases[_i].range);
}
END_TEST

START_TEST(test_range_errors)
{
	static const char *const bad[] = {"", "0.19", ">=0.19,", ",<0.20", ">=", "=>0.19",
					  ">=0.19;<0.20", "~=0.19", ">=x"};
	struct kvp_version v;
	ck_assert(kvp_version_parse("0.19.0", &v));
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(!kvp_version_range_valid(bad[i]), "'%s' is no range", bad[i]);
		ck_assert(!kvp_version_in_range(&v, bad[i]));
	}
}
END_TEST

START_TEST(test_position)
{
	/* four parts in steps of 1000: 0.15.0 = 15,000,000, 0.11.2 = 11,002,000
	 * (3,998,000 below), 0.19.0 = 19,000,000 (4,000,000 above) */
	struct kvp_version a, b, c;
	ck_assert(kvp_version_parse("0.15.0", &a));
	ck_assert(kvp_version_parse("0.11.2", &b));
	ck_assert(kvp_version_parse("0.19.0", &c));
	ck_assert_double_eq(kvp_version_position(&a) - kvp_version_position(&b), 3998000);
	ck_assert_double_eq(kvp_version_position(&c) - kvp_version_position(&a), 4000000);
	ck_assert(kvp_version_parse("0.20.0rc1", &a));
	ck_assert(kvp_version_parse("0.20.0", &b));
	ck_assert_double_eq(kvp_version_position(&b) - kvp_version_position(&a), 0.5);
}
END_TEST

static Suite *version_suite(void)
{
	Suite *s = suite_create("version");
	TCase *core = tcase_create("core");
	tcase_add_loop_test(core, test_parse, 0, sizeof parse_cases / sizeof parse_cases[0]);
	tcase_add_loop_test(core, test_order, 0, sizeof less_cases / sizeof less_cases[0]);
	tcase_add_test(core, test_equal);
	tcase_add_loop_test(core, test_range, 0, sizeof range_cases / sizeof range_cases[0]);
	tcase_add_test(core, test_position);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_test(errors, test_range_errors);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(version_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
