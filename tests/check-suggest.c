/* check-suggest.c: the edit distance and the "did you mean" choice.
 * Expected distances are counted by hand beside each case; a plain
 * recursive reference of the optimal-string-alignment distance (its
 * textbook definition, sharing no code) is compared on random strings. */
#include <check.h>
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/suggest.h"

static const struct {
	const char *a, *b;
	size_t d;
} dist_cases[] = {
	{"", "", 0},
	{"", "abc", 3},                       /* three insertions */
	{"abc", "abc", 0},
	{"H100-SXM", "h100-sxm", 0},          /* case folded */
	{"kitten", "sitting", 3},             /* k->s, e->i, +g */
	{"ca", "ac", 1},                      /* one swap of neighbours */
	{"budgte", "budget", 1},              /* te -> et */
	{"num_kv_head", "num_kv_heads", 1},   /* +s */
	{"gpu-memroy", "gpu-memory", 1},      /* ro -> or */
	{"contxt", "context", 1},             /* +e */
	{"h100", "h200", 1},                  /* 1 -> 2 */
	{"abc", "xyz", 3},
};

START_TEST(test_distance)
{
	ck_assert_uint_eq(kvp_suggest_distance(dist_cases[_i].a, dist_cases[_i].b), dist_cases[_i].d);
	ck_assert_uint_eq(kvp_suggest_distance(dist_cases[_i].b, dist_cases[_i].a), dist_cases[_i].d);
}
END_TEST

/* The OSA distance by its recursive definition. */
static size_t ref_osa(const char *a, size_t i, const char *b, size_t j)
{
	if (i == 0)
		return j;
	if (j == 0)
		return i;
	size_t best = ref_osa(a, i - 1, b, j - 1) + (a[i - 1] != b[j - 1]);
	size_t del = ref_osa(a, i - 1, b, j) + 1, ins = ref_osa(a, i, b, j - 1) + 1;
	best = del < best ? del : best;
	best = ins < best ? ins : best;
	if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
		size_t sw = ref_osa(a, i - 2, b, j - 2) + 1;
		best = sw < best ? sw : best;
	}
	return best;
}

START_TEST(test_distance_reference)
{
	srand(18);
	for (int t = 0; t < 2000; t++) {
		char a[7], b[7];
		size_t la = (size_t)rand() % 7, lb = (size_t)rand() % 7;
		for (size_t i = 0; i < la; i++)
			a[i] = "ab-c"[rand() % 4];
		for (size_t i = 0; i < lb; i++)
			b[i] = "ab-c"[rand() % 4];
		a[la] = b[lb] = '\0';
		ck_assert_uint_eq(kvp_suggest_distance(a, b), ref_osa(a, la, b, lb));
	}
}
END_TEST

static const char *const gpus[] = {"a100-80gb", "h100-pcie", "h100-sxm", "h200", "l4"};
static const char *const cmds[] = {"budget", "list", "frag", "perf", "size", "check"};

START_TEST(test_suggest)
{
	const char *out[4];
	/* a prefix names every candidate it starts */
	ck_assert_uint_eq(kvp_suggest("h100", gpus, 5, out, 4), 2);
	ck_assert_str_eq(out[0], "h100-pcie");
	ck_assert_str_eq(out[1], "h100-sxm");
	/* the nearest, when near enough: budgte is 1 from budget */
	ck_assert_uint_eq(kvp_suggest("budgte", cmds, 6, out, 4), 1);
	ck_assert_str_eq(out[0], "budget");
	/* ties: h300 is 1 from h200 only (h100-* are 6 away) */
	ck_assert_uint_eq(kvp_suggest("h300", gpus, 5, out, 4), 1);
	ck_assert_str_eq(out[0], "h200");
	/* far: nothing */
	ck_assert_uint_eq(kvp_suggest("zzzzzz", cmds, 6, out, 4), 0);
	/* 4 characters allow 1 edit only: "fxag" is 1 from frag, "fxxg" 2 */
	ck_assert_uint_eq(kvp_suggest("fxag", cmds, 6, out, 4), 1);
	ck_assert_uint_eq(kvp_suggest("fxxg", cmds, 6, out, 4), 0);
	/* an exact name is not a suggestion */
	ck_assert_uint_eq(kvp_suggest("perf", cmds, 6, out, 4), 0);
}
END_TEST

START_TEST(test_text)
{
	char buf[128];
	ck_assert_str_eq(kvp_suggest_text("h100", gpus, 5, "", buf, sizeof buf),
			 "; did you mean 'h100-pcie' or 'h100-sxm'?");
	ck_assert_str_eq(kvp_suggest_text("budgte", cmds, 6, "--", buf, sizeof buf),
			 "; did you mean '--budget'?");
	ck_assert_str_eq(kvp_suggest_text("qqqq", cmds, 6, "", buf, sizeof buf), "");
	/* a small buffer truncates, never overflows */
	char tiny[8];
	kvp_suggest_text("h100", gpus, 5, "", tiny, sizeof tiny);
	ck_assert_uint_eq(strlen(tiny), 7);
}
END_TEST

START_TEST(test_limits)
{
	char lng[80];
	memset(lng, 'a', sizeof lng - 1);
	lng[sizeof lng - 1] = '\0';
	ck_assert_uint_eq(kvp_suggest_distance(lng, "a"), SIZE_MAX);
	const char *out[1];
	ck_assert_uint_eq(kvp_suggest("", cmds, 6, out, 1), 0);
	ck_assert_uint_eq(kvp_suggest("budgte", cmds, 0, out, 1), 0);
}
END_TEST

static Suite *suggest_suite(void)
{
	Suite *s = suite_create("suggest");
	TCase *core = tcase_create("core");
	tcase_add_loop_test(core, test_distance, 0, sizeof dist_cases / sizeof dist_cases[0]);
	tcase_add_test(core, test_distance_reference);
	tcase_add_test(core, test_suggest);
	tcase_add_test(core, test_text);
	suite_add_tcase(s, core);
	TCase *limits = tcase_create("limits");
	tcase_add_test(limits, test_limits);
	suite_add_tcase(s, limits);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suggest_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
