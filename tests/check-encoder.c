/* check-encoder.c: vLLM's encoder profile run (src/memory/encoder.h), a table
 * of dummy batches worked by hand from the vLLM source rules the header
 * cites, the charge rule, and the limits (no encoder, one item, overflow). */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "memory/encoder.h"

/* a Qwen2.5-VL-7B-like encoder at max_pixels 12,845,056: 16,384 tokens an
 * image of 65,536 patches, 1,176 pixel values each, Hv 1280, Iv 3420 gated,
 * out 3584, temporal patch 2 */
static struct kvp_mm_encoder qwen25(void)
{
	struct kvp_mm_encoder e = {0};
	strcpy(e.family, "qwen2_5_vl");
	e.image_tokens = 16384, e.image_patches = 65536, e.patch_inputs = 1176;
	e.tower_width = 1280, e.tower_mlp = 3420, e.tower_gated = true;
	e.video = true, e.temporal_patch = 2, e.out_width = 3584;
	return e;
}

/* LLaVA-1.6-Mistral: 2,928 tokens from 5 crops of 577 patches, 588 values
 * each, CLIP Hv 1024, Iv 4096 (GELU), out 4096 */
static struct kvp_mm_encoder llava_next(void)
{
	struct kvp_mm_encoder e = {0};
	strcpy(e.family, "llava_next");
	e.image_tokens = 2928, e.image_patches = 5 * 577, e.patch_inputs = 588;
	e.tower_width = 1024, e.tower_mlp = 4096, e.out_width = 4096;
	return e;
}

static const struct {
	const char *what;
	int enc;                  /* 0 qwen25, 1 llava_next */
	struct kvp_encoder_args a;
	bool video;
	uint64_t tokens, items, outputs, pixels, peak;
} cases[] = {
	/* 128,000 tokens, 14 frames at most: 7 groups of 16,384 = 114,688 <=
	 * 128,000 (8 would be 131,072); budget max(2,048, 114,688) // 114,688 =
	 * 1; outputs 114,688 x 3,584 x 2; pixels 458,752 x 1,176 x 4; peak
	 * 458,752 x ((3 x 1280 + 3 x 3420) x 2 + 1,176 x 6) */
	{"qwen video 128k", 0, {128000, 2048, 256, 14, 0, 2}, true, 114688, 1,
	 822083584ULL, 2157969408ULL, 16173760512ULL},
	/* 16,384 tokens: a second frame group would need 32,768: one group,
	 * no more than the image: the image's 16,384, one item; peak 65,536 x
	 * 35,256 */
	{"qwen image 16k", 0, {16384, 8192, 1024, 14, 0, 2}, false, 16384, 1,
	 117440512ULL, 308281344ULL, 2310537216ULL},
	/* 0.10.2: 16 frames at most, the item from 128,000 (7 groups: 16 frames
	 * would be 8 groups = 131,072 > 128,000), the dummy from 2,048 (one
	 * group, 16,384 tokens, 65,536 patches) */
	{"qwen 0.10.2 dummy", 0, {128000, 2048, 256, 16, 2048, 2}, true, 114688, 1,
	 117440512ULL, 308281344ULL, 2310537216ULL},
	/* LLaVA-Next: 16,384 // 2,928 = 5 items; 1,024 x max(1, 4,096 //
	 * 2,928 = 1) allow more; outputs 5 x 2,928 x 4,096 x 2; pixels 14,425 x
	 * 588 x 4; peak 14,425 x ((3 x 1024 + 8 x 1024) x 2 + 588 x 6) */
	{"llava-next 16k", 1, {4096, 16384, 1024, 0, 0, 2}, false, 2928, 5,
	 119930880ULL, 33927600ULL, 375857800ULL},
	/* decoder bound: 2 sequences x 1 per prompt = 2 items of 65,536 // 2,928
	 * = 22 */
	{"llava-next seqs", 1, {4096, 65536, 2, 0, 0, 2}, false, 2928, 2,
	 47972352ULL, 13571040ULL, 150343120ULL},
	/* a budget below one item still profiles one (max(1, ...)) */
	{"llava-next one", 1, {2048, 512, 256, 0, 0, 2}, false, 2928, 1,
	 23986176ULL, 6785520ULL, 75171560ULL},
};

START_TEST(test_cases)
{
	struct kvp_mm_encoder e = cases[_i].enc ? llava_next() : qwen25();
	struct kvp_encoder_profile p;
	ck_assert_msg(kvp_encoder_profile(&e, &cases[_i].a, &p), "%s", cases[_i].what);
	ck_assert_msg(p.video == cases[_i].video, "%s", cases[_i].what);
	ck_assert_uint_eq(p.tokens_per_item, cases[_i].tokens);
	ck_assert_uint_eq(p.items, cases[_i].items);
	ck_assert_uint_eq(p.outputs_bytes, cases[_i].outputs);
	ck_assert_uint_eq(p.pixels_bytes, cases[_i].pixels);
	ck_assert_uint_eq(p.tower_peak_bytes, cases[_i].peak);
}
END_TEST

START_TEST(test_charge)
{
	struct kvp_encoder_profile p = {.outputs_bytes = 100, .pixels_bytes = 20,
					.tower_peak_bytes = 1000};
	/* the tower above the LM's 500: 1,000 - 500 = 500 > kept 120 */
	ck_assert_uint_eq(kvp_encoder_charge(&p, 500), 500);
	/* the LM's peak above the tower: only what is kept, 120 */
	ck_assert_uint_eq(kvp_encoder_charge(&p, 2000), 120);
	ck_assert_uint_eq(kvp_encoder_charge(&p, 950), 120);
	p.outputs_bytes = UINT64_MAX;
	ck_assert_uint_eq(kvp_encoder_charge(&p, 0), UINT64_MAX);
}
END_TEST

START_TEST(test_errors)
{
	struct kvp_encoder_profile p;
	struct kvp_encoder_args a = {4096, 8192, 256, 14, 0, 2};
	struct kvp_mm_encoder none = {0};
	/* no family: nothing to profile */
	ck_assert(!kvp_encoder_profile(&none, &a, &p));
	ck_assert_uint_eq(p.items, 0);
	/* a family without an image (max_pixels below one merged patch) */
	struct kvp_mm_encoder e = qwen25();
	e.image_tokens = 0, e.image_patches = 0;
	ck_assert(!kvp_encoder_profile(&e, &a, &p));
	/* overflow: a width that multiplies past 2^64 is refused, not wrapped */
	e = llava_next();
	e.out_width = UINT32_MAX;
	e.image_tokens = UINT64_MAX / 2;
	a.max_batched_tokens = UINT64_MAX;
	ck_assert(!kvp_encoder_profile(&e, &a, &p));
}
END_TEST

static Suite *encoder_suite(void)
{
	Suite *s = suite_create("encoder");
	TCase *core = tcase_create("core");
	tcase_add_loop_test(core, test_cases, 0, sizeof cases / sizeof cases[0]);
	tcase_add_test(core, test_charge);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_test(errors, test_errors);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(encoder_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
