/* check-plot.c: the charts' data against hand arithmetic, the gnuplot script's
 * labels and terminal, and the render path when gnuplot cannot be run or
 * fails (the files stay, the status says why).  Rendering with a real
 * gnuplot is tested by tests/cli-plot.sh, where one is installed. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "out/gnuplot-writer.h"
#include "time/perf.h"
#include "plot/plot.h"
#include "size/size.h"
#include "base/units.h"
#include "read/workload.h"

static char dir[] = "/tmp/check-plot-XXXXXX";

static void load_model(const char *name, struct kvp_model *m)
{
	struct kvp_error err = {0};
	ck_assert_msg(kvp_model_load(name, m, &err) == KVP_STATUS_OK, "%s", err.msg);
}

static char *slurp(const char *name)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "%s missing", path);
	static char buf[1 << 16];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

static bool exists(const char *name)
{
	char path[512];
	struct stat sb;
	snprintf(path, sizeof path, "%s/%s", dir, name);
	return stat(path, &sb) == 0;
}

/* A GPU known only by the overrides of the options. */
static struct kvp_gpu custom_gpu(void)
{
	struct kvp_gpu g = {0};
	strcpy(g.name, "custom");
	return g;
}

/* Llama-2-7B with every term given (tests/cli-budget.sh): 80 GiB x 0.9 = 72 GiB
 * usable; pool = 72 - 13 - 1 - 1 = 57 GiB; page 16 x 512 KiB = 8 MiB. */
static struct kvp_budget_opts fixed_opts(void)
{
	struct kvp_budget_opts o = {0};
	o.par.tp = o.par.pp = 1;
	o.utilization = 0.9;
	o.has_gpu_memory = o.has_weights = o.has_activation = o.has_overhead = true;
	o.gpu_memory_bytes = 80 * KVP_GIB;
	o.weights_bytes = 13 * KVP_GIB;
	o.activation_bytes = KVP_GIB;
	o.overhead_bytes = KVP_GIB;
	o.context = 4096;
	return o;
}

/* KV bytes of one sequence: Llama-2-7B 2 * 32 heads * 128 * 2 B * 32 layers
 * = 524,288 B/token (MHA), exact tokens; the line ends at max_context 4,096. */
static const struct {
	uint64_t n;
	double bytes;
} llama2[] = {
	{256, 256.0 * 524288},   /* 128 MiB */
	{1024, 1024.0 * 524288}, /* 512 MiB */
	{4096, 4096.0 * 524288}, /* 2 GiB */
	{8192, NAN},             /* beyond max_context */
};

START_TEST(test_kv_context_llama2)
{
	static struct kvp_model m;
	load_model("llama-2-7b", &m);
	uint64_t ctx[] = {256, 1024, 4096, 8192};
	struct kvp_plot *p = kvp_plot_new("kv");
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_plot_kv_context(p, &m, 1, ctx, 4, (struct kvp_parallel){.tp = 1, .pp = 1},
					     KVP_DTYPE_AUTO, 1, &err), KVP_STATUS_OK);
	const struct kvp_plot_panel *pn = &p->panel[0];
	ck_assert_uint_eq(pn->nrows, 4);
	ck_assert_uint_eq(pn->nseries, 1);
	ck_assert_double_eq(pn->x[_i], (double)llama2[_i].n);
	if (isnan(llama2[_i].bytes))
		ck_assert(isnan(pn->y[_i][0]));
	else
		ck_assert_double_eq(pn->y[_i][0], llama2[_i].bytes);
	ck_assert_ptr_nonnull(strstr(pn->series[0].title, "MHA"));
	ck_assert_ptr_nonnull(strstr(pn->series[0].title, "524,288 B/token"));
	kvp_plot_free(p);
}
END_TEST

/* The architectures the chart compares, and their bytes per token at 8,192:
 * Llama-3.1-8B GQA 8 of 32 heads: 2 * 8 * 128 * 2 * 32 = 131,072 B/token;
 * Mistral-7B sliding window 4,096: the same per token, capped at 4,096 tokens;
 * DeepSeek-V3 MLA: 61 * (512 + 64) * 2 = 70,272 B/token. */
START_TEST(test_kv_context_architectures)
{
	static struct kvp_model m[3];
	load_model("llama-3.1-8b", &m[0]);
	load_model("mistral-7b-v0.1", &m[1]);
	load_model("deepseek-v3", &m[2]);
	uint64_t ctx[] = {8192};
	struct kvp_plot *p = kvp_plot_new("kv");
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_plot_kv_context(p, m, 3, ctx, 1, (struct kvp_parallel){.tp = 1, .pp = 1},
					     KVP_DTYPE_AUTO, 1, &err), KVP_STATUS_OK);
	const struct kvp_plot_panel *pn = &p->panel[0];
	ck_assert_double_eq(pn->y[0][0], 8192.0 * 131072);
	ck_assert_double_eq(pn->y[0][1], 4096.0 * 131072);
	ck_assert_double_eq(pn->y[0][2], 8192.0 * 70272);
	ck_assert_ptr_nonnull(strstr(pn->series[0].title, "GQA 8/32"));
	ck_assert_ptr_nonnull(strstr(pn->series[1].title, "sliding 4096"));
	ck_assert_ptr_nonnull(strstr(pn->series[2].title, "MLA"));
	kvp_plot_free(p);
}
END_TEST

/* Blocks round up: the tiny model holds 2,048 B/token (tests/data/good/tiny.yaml);
 * 100 tokens in blocks of 16 take 7 blocks = 112 tokens = 229,376 B.  With tp 2
 * the two KV heads split: 1,024 B/token, 114,688 B. */
START_TEST(test_kv_context_blocks_tp)
{
	static struct kvp_model m;
	load_model(KVP_SRCDIR "/tests/data/good/tiny.yaml", &m);
	uint64_t ctx[] = {100};
	struct kvp_error err = {0};
	struct kvp_plot *p = kvp_plot_new("kv");
	ck_assert_int_eq(kvp_plot_kv_context(p, &m, 1, ctx, 1, (struct kvp_parallel){.tp = 1, .pp = 1},
					     KVP_DTYPE_AUTO, 16, &err), KVP_STATUS_OK);
	ck_assert_double_eq(p->panel[0].y[0][0], 229376);
	kvp_plot_free(p);
	p = kvp_plot_new("kv");
	ck_assert_int_eq(kvp_plot_kv_context(p, &m, 1, ctx, 1, (struct kvp_parallel){.tp = 2, .pp = 1},
					     KVP_DTYPE_AUTO, 16, &err), KVP_STATUS_OK);
	ck_assert_double_eq(p->panel[0].y[0][0], 114688);
	kvp_plot_free(p);
}
END_TEST

START_TEST(test_budget_bars)
{
	static struct kvp_model m;
	load_model("llama-2-7b", &m);
	struct kvp_gpu g = custom_gpu();
	struct kvp_budget_opts o = fixed_opts();
	uint32_t tps[] = {1, 3};  /* 3 does not divide 32 heads: left out */
	struct kvp_plot *p = kvp_plot_new("budget");
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_plot_budget(p, &m, &g, 1, tps, 2, &o, &err), KVP_STATUS_OK);
	const struct kvp_plot_panel *pn = &p->panel[0];
	ck_assert_int_eq(pn->style, KVP_PLOT_STYLE_STACKED);
	ck_assert_uint_eq(pn->nrows, 1);
	ck_assert_uint_eq(p->nnotes, 1);
	ck_assert_ptr_nonnull(strstr(p->notes[0], "tp 3"));
	/* weights 13, activations 1, overhead 1, KV pool 57, free 80 - 72 = 8 GiB,
	 * and the GPU's 80 GiB as the outline */
	static const double gib[] = {13, 1, 1, 57, 8, 80};
	for (size_t s = 0; s < 6; s++)
		ck_assert_double_eq(pn->y[0][s], gib[s] * KVP_GIB);
	ck_assert(pn->series[5].outline);
	/* 7,296 blocks / 256 per sequence of 4,096 tokens = 28 */
	ck_assert_str_eq(pn->tag[0], "28 seqs");
	ck_assert_str_eq(pn->label[0], "custom\\ntp 1");
	ck_assert_ptr_nonnull(strstr(p->title, "llama-2-7b"));
	ck_assert_ptr_nonnull(strstr(p->title, "engine generic"));
	kvp_plot_free(p);
}
END_TEST

/* Weights larger than the GPU: no pool, "does not fit", nothing free. */
START_TEST(test_budget_does_not_fit)
{
	static struct kvp_model m;
	load_model("llama-2-7b", &m);
	struct kvp_gpu g = custom_gpu();
	struct kvp_budget_opts o = fixed_opts();
	o.weights_bytes = 90 * KVP_GIB;
	uint32_t tp = 1;
	struct kvp_plot *p = kvp_plot_new("budget");
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_plot_budget(p, &m, &g, 1, &tp, 1, &o, &err), KVP_STATUS_OK);
	ck_assert_str_eq(p->panel[0].tag[0], "does not fit");
	ck_assert_str_eq(p->panel[0].label[0], "custom");
	ck_assert_double_eq(p->panel[0].y[0][3], 0);
	ck_assert_double_eq(p->panel[0].y[0][4], 0);
	kvp_plot_free(p);
}
END_TEST

/* Max sequences: at 4,096 tokens 7,296 / 256 = 28; at 2,048, 7,296 / 128 = 57.
 * fp8 halves the page (4 MiB): 14,592 blocks, 57 sequences of 4,096. */
START_TEST(test_max_seqs)
{
	static struct kvp_model m;
	load_model("llama-2-7b", &m);
	struct kvp_gpu g = custom_gpu();
	struct kvp_budget_opts o = fixed_opts();
	enum kvp_dtype kv[] = {KVP_DTYPE_AUTO, KVP_DTYPE_FP8};
	uint64_t ctx[] = {2048, 4096, 8192};
	struct kvp_plot *p = kvp_plot_new("max-seqs");
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_plot_max_seqs(p, &m, &g, 1, kv, 2, ctx, 3, &o, &err), KVP_STATUS_OK);
	const struct kvp_plot_panel *pn = &p->panel[0];
	ck_assert_uint_eq(pn->nrows, 2); /* 8,192 is beyond max_context */
	ck_assert_uint_eq(pn->nseries, 2);
	ck_assert_double_eq(pn->y[0][0], 57);
	ck_assert_double_eq(pn->y[1][0], 28);
	ck_assert_double_eq(pn->y[1][1], 57);
	/* Llama-2-7B's checkpoint is float16 ("torch_dtype": "float16") */
	ck_assert_str_eq(pn->series[0].title, "custom, KV fp16 (auto)");
	ck_assert_str_eq(pn->series[1].title, "custom, KV fp8");
	kvp_plot_free(p);
}
END_TEST

/* The roofline and offload panels, memory-bound by construction: the tiny
 * model (2,048 B/token, 4 layers) with 1,000,000 B of weights on a GPU of
 * 1 GB/s at full efficiency and 10^18 FLOP/s.
 *   decode, 1 sequence of 1,000 tokens: 1,000,000 + 1,000 x 2,048 = 3,048,000 B
 *     -> 3.048 ms, 1 / 3.048 ms = 328.08 tokens/s
 *   decode, 4 sequences: 1,000,000 + 4 x 2,048,000 = 9,192,000 B -> 9.192 ms,
 *     4 / 9.192 ms = 435.16 tokens/s
 *   offload of the 2,048,000 B over pcie4x16 (25 GB/s effective): 81.92 us;
 *     per layer x = 20.48 us < g = 762 us, so pipelined = x + 3 g + g
 *     = 20.48 us + 3.048 ms = 3.06848 ms */
START_TEST(test_perf_panels)
{
	static struct kvp_model m;
	load_model(KVP_SRCDIR "/tests/data/good/tiny.yaml", &m);
	struct kvp_gpu g = custom_gpu();
	struct kvp_budget_opts o = fixed_opts();
	o.weights_bytes = 1000000;
	o.context = 1000;
	o.batch = 1;
	struct kvp_perf_hw hw = {0};
	hw.bandwidth_bps = 1e9;
	hw.flops = 1e18;
	hw.decode_bw_efficiency = hw.prefill_flops_efficiency = 1;
	ck_assert(kvp_link_preset("pcie4x16", &hw.host_link));
	uint64_t batches[] = {1, 4}, ctx[] = {1000};
	struct kvp_plot *p = kvp_plot_new("perf");
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_plot_perf(p, &m, &g, &hw, &o, batches, 2, ctx, 1, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(p->npanels, 2);
	const struct kvp_plot_panel *a = &p->panel[0], *b = &p->panel[1];
	ck_assert_double_eq_tol(a->y[0][0], 3.048e-3, 1e-12);   /* step time */
	ck_assert_double_eq_tol(a->y[0][1], 3.048e-3, 1e-12);   /* memory term */
	ck_assert_double_eq_tol(a->y[1][0], 9.192e-3, 1e-12);
	ck_assert_double_eq_tol(a->y[0][3], 1 / 3.048e-3, 1e-6);  /* 328.08 tokens/s */
	ck_assert_double_eq_tol(a->y[1][3], 4 / 9.192e-3, 1e-6);  /* 435.16 tokens/s */
	ck_assert(a->series[3].y2);
	ck_assert_str_eq(b->series[0].title, "KV in GPU memory (where it fits)");
	ck_assert_double_eq_tol(b->y[0][0], 3.048e-3, 1e-12);
	size_t pcie4 = 0;
	for (size_t s = 1; s < b->nseries; s++)
		if (strstr(b->series[s].title, "pcie4x16"))
			pcie4 = s;
	ck_assert_uint_ne(pcie4, 0);
	ck_assert_double_eq_tol(b->y[0][pcie4], 3.06848e-3, 1e-12);
	ck_assert_ptr_nonnull(strstr(p->title, "tiny on custom"));
	kvp_plot_free(p);

	/* (b) draws the KV in GPU memory only where the batch fits (issue 35).
	 * The pool: 80 GiB x 0.9 - 1,000,000 B weights - 1 GiB - 1 GiB =
	 * 75,160,927,680 B = 2,293,729 blocks of 16 x 2,048 B; 1,000 tokens take
	 * 63 blocks, so 36,000 sequences (2,268,000 blocks) fit, 40,000
	 * (2,520,000) do not; the links' rows stay at every batch. */
	const uint64_t batch[] = {36000, 40000};
	for (size_t i = 0; i < 2; i++) {
		o.batch = batch[i];
		p = kvp_plot_new("perf");
		ck_assert_int_eq(kvp_plot_perf(p, &m, &g, &hw, &o, batches, 2, ctx, 1, &err),
				 KVP_STATUS_OK);
		b = &p->panel[1];
		ck_assert_msg(i ? isnan(b->y[0][0]) : !isnan(b->y[0][0]), "batch %llu: %g",
			      (unsigned long long)batch[i], b->y[0][0]);
		ck_assert(!isnan(b->y[0][pcie4]));
		kvp_plot_free(p);
	}
}
END_TEST

/* Block size, by hand: the tiny model (2,048 B/token) in a pool of exactly
 * 1 GiB = 524,288 token slots, every request 100 prompt tokens + 1 output
 * token (tests/data/report/fixed-100.yaml), so live sequences hold 100 or 101
 * tokens, 100.5 on average.
 *   P = 1:   no waste; 524,288 / 100.5 = 5,216 sequences; at most 524,288 / 100
 *            = 5,242 at once; metadata 5,242 x 128 x 4 + 524,288 x 8 = 6,878,208 B
 *   P = 16:  7 blocks (112 slots) a sequence: 32,768 / 7 = 4,681 sequences,
 *            wasting 112 - 100.5 = 11.5 slots each: 4,681 x 11.5 / 524,288
 *   P = 128: one block a sequence: 4,096 sequences, 27.5 / 128 = 21.48 % waste;
 *            metadata 4,096 x 1 x 4 + 4,096 x 8 = 49,152 B
 * P = 1 holds the most and 4,681 is 10 % fewer, beyond kvp_frag_recommend's
 * 1 %, but P = 1 is under 16 tokens and does not hold 26 % more (5,216 <
 * 4,681 x 1.26 = 5,898), so P = 16 is the one marked (frag-recommend.c). */
START_TEST(test_block_size)
{
	static struct kvp_model m;
	load_model(KVP_SRCDIR "/tests/data/good/tiny.yaml", &m);
	struct kvp_gpu g = custom_gpu();
	struct kvp_budget_opts o = fixed_opts();
	o.gpu_memory_bytes = KVP_GIB;
	o.utilization = 1;
	o.weights_bytes = o.activation_bytes = o.overhead_bytes = 0;
	struct kvp_workload w;
	memset(&w, 0, sizeof w);
	struct kvp_error err = {0};
	ck_assert_msg(kvp_workload_load(KVP_SRCDIR "/tests/data/report/fixed-100.yaml", &w, &err) ==
		      KVP_STATUS_OK, "%s", err.msg);
	uint32_t blocks[] = {1, 16, 128};
	struct kvp_plot *p = kvp_plot_new("bs");
	ck_assert_int_eq(kvp_plot_block_size(p, &m, &g, &o, &w, blocks, 3, 20000, NULL, NULL, &err),
			 KVP_STATUS_OK);
	const struct kvp_plot_panel *a = &p->panel[0], *b = &p->panel[1];
	ck_assert_uint_eq(a->nrows, 3);
	ck_assert_double_eq(a->y[0][0], 0);
	ck_assert_double_eq_tol(a->y[1][0], 4681 * 11.5 / 524288, 1e-9);
	ck_assert_double_eq_tol(a->y[2][0], 27.5 / 128, 1e-9);
	/* metadata as a share of the 1 GiB pool, waste's unit */
	ck_assert_double_eq_tol(a->y[0][1], 6878208.0 / 1073741824, 1e-15);
	ck_assert_double_eq_tol(a->y[2][1], 49152.0 / 1073741824, 1e-15);
	ck_assert(a->logy && !a->series[1].y2);
	ck_assert_double_eq_tol(b->y[0][0], 524288 / 100.5, 1);
	ck_assert_double_eq(b->y[1][0], 4681);
	ck_assert_double_eq(b->y[2][0], 4096);
	ck_assert_double_eq(b->mark_x, 16);
	ck_assert_ptr_nonnull(strstr(p->title, "workload fixed-100"));
	kvp_plot_free(p);
	kvp_workload_free(&w);
}
END_TEST

/* Predicted against measured, from tests/data/report/kvbench-results.yaml:
 * three usable points, predicted by the planner on the read ceiling beside
 * each (the file's comment has the arithmetic: 1.0 vs 1.1 ms, 2 vs 2 ms, 4
 * vs 5 ms), one series per KV dtype, the failed point and the untimed one
 * left out; the median relative error is 1/11 = 9.1 %. */
START_TEST(test_validate)
{
	const char *path = KVP_SRCDIR "/tests/data/report/kvbench-results.yaml";
	struct kvp_plot *p = kvp_plot_new("validate");
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_plot_validate(p, &path, 1, NULL, 0, 0.2, &err), KVP_STATUS_OK);
	ck_assert_uint_eq(p->npanels, 1);  /* no capacity points: one panel */
	const struct kvp_plot_panel *pn = &p->panel[0];
	ck_assert_int_eq(pn->style, KVP_PLOT_STYLE_SCATTER);
	ck_assert_uint_eq(pn->nrows, 3);
	ck_assert_uint_eq(pn->nseries, 2);
	ck_assert_str_eq(pn->series[0].title, "Test GPU, bf16, MQA (kvbench-results.yaml)");
	ck_assert_int_eq(pn->series[0].point, 5);   /* 8:1 heads: MQA, a square */
	ck_assert_str_eq(pn->series[1].title, "Test GPU, fp8, MQA (kvbench-results.yaml)");
	ck_assert_int_ne(pn->series[0].color, pn->series[1].color);  /* colour: KV dtype */
	ck_assert_double_eq_tol(pn->x[0], 1.0e-3, 1e-15);
	ck_assert_double_eq(pn->y[0][0], 1.1e-3);
	ck_assert(isnan(pn->y[0][1]));
	ck_assert_double_eq_tol(pn->x[2], 4.0e-3, 1e-15);
	ck_assert_double_eq(pn->y[2][1], 5.0e-3);
	ck_assert_double_eq(pn->band, 0.2);
	ck_assert_ptr_nonnull(strstr(p->title, "decode time: median |error| 9.1 % over 3 points"));
	ck_assert_uint_eq(p->nnotes, 2);
	ck_assert_ptr_nonnull(strstr(p->notes[0], "2 point(s)"));
	ck_assert_ptr_nonnull(strstr(p->notes[1], "read-ceiling at efficiency 1"));
	kvp_plot_free(p);
	/* on a GPU profile at efficiency 0.5: the H200's 4.8 TB/s x 0.5, so
	 * 1.024e9 B takes 0.4267 ms */
	struct kvp_gpu g;
	ck_assert(kvp_gpu_load("h200", &g, &err) == KVP_STATUS_OK);
	p = kvp_plot_new("validate");
	ck_assert_int_eq(kvp_plot_validate(p, &path, 1, &g, 0.5, 0.2, &err), KVP_STATUS_OK);
	ck_assert_double_eq_tol(p->panel[0].x[0], 1.024e9 / 2.4e12, 1e-15);
	ck_assert_ptr_nonnull(strstr(p->notes[1], "h200 at efficiency 0.5 (calibrated)"));
	kvp_plot_free(p);
}
END_TEST

/* Malformed results: located errors; no usable point: INVALID. */
static const char *const bad_results[] = {
	"results-negative-time.yaml",    /* 7:21: time_median_s: must not be negative */
	"results-points-not-list.yaml",  /* 4:9: points: expected a list */
	"results-none-timed.yaml",       /* a --validate-only run: nothing timed */
};

START_TEST(test_validate_errors)
{
	char path[512];
	snprintf(path, sizeof path, "%s/tests/data/bad/%s", KVP_SRCDIR, bad_results[_i]);
	const char *paths[] = {path};
	struct kvp_plot *p = kvp_plot_new("validate");
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_plot_validate(p, paths, 1, NULL, 0, 0.2, &err), KVP_STATUS_INVALID);
	ck_assert_ptr_nonnull(strstr(err.path, bad_results[_i]));
	kvp_plot_free(p);
}
END_TEST

/* The files: data rows in base units, the script's labels and terminal. */
/* Series on one another: A = 1, 2, 4; B = 1.005, 2, 4 (within 1 % of A
 * everywhere: lies on it); C = 1, 2, 5 (25 % off at the last row: visible);
 * D = NaN, 2, 4 (drawn at two rows, both on A: lies on it); E on the right
 * axis with A's values (another axis: not compared).  Scatter: F's point
 * (10, 11) sits on G's (10, 11.05); H's (10, 20) does not. */
START_TEST(test_mark_overlaps)
{
	struct kvp_plot *p = kvp_plot_new("overlap");
	ck_assert_ptr_nonnull(p);
	struct kvp_plot_panel *pn = kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES);
	const char *names[] = {"A", "B", "C", "D", "E"};
	double v[5][3] = {{1, 2, 4}, {1.005, 2, 4}, {1, 2, 5}, {NAN, 2, 4}, {1, 2, 4}};
	for (size_t r = 0; r < 3; r++)
		ck_assert(kvp_plot_add_row(pn, (double)(r + 1), "", "", NULL));
	for (size_t s = 0; s < 5; s++) {
		struct kvp_plot_series *x = kvp_plot_add_series(pn, names[s]);
		x->y2 = s == 4;
		for (size_t r = 0; r < 3; r++)
			pn->y[r][s] = v[s][r];
	}
	struct kvp_plot_panel *sc = kvp_plot_add_panel(p, KVP_PLOT_STYLE_SCATTER);
	const char *sn[] = {"F", "G", "H"};
	double sy[3] = {11, 11.05, 20};
	ck_assert(kvp_plot_add_row(sc, 10, "", "", NULL));
	for (size_t s = 0; s < 3; s++) {
		kvp_plot_add_series(sc, sn[s]);
		sc->y[0][s] = sy[s];
	}
	ck_assert_uint_eq(kvp_plot_mark_overlaps(p), 3);
	ck_assert_uint_eq(pn->series[0].over, 0);
	ck_assert_uint_eq(pn->series[1].over, 1);   /* B on A */
	ck_assert_str_eq(pn->series[1].title, "B (= A)");
	ck_assert_uint_eq(pn->series[2].over, 0);
	ck_assert_uint_eq(pn->series[3].over, 1);   /* D on A */
	ck_assert_uint_eq(pn->series[4].over, 0);
	ck_assert_uint_eq(sc->series[0].over, 0);   /* of F and G the later is marked */
	ck_assert_uint_eq(sc->series[1].over, 1);
	ck_assert_uint_eq(sc->series[2].over, 0);
	ck_assert_uint_eq(p->nnotes, 3);
	kvp_plot_free(p);
}
END_TEST

START_TEST(test_write_files)
{
	static struct kvp_model m;
	load_model("llama-2-7b", &m);
	uint64_t ctx[] = {256, 4096, 8192};
	struct kvp_plot *p = kvp_plot_new("kv");
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_plot_kv_context(p, &m, 1, ctx, 3, (struct kvp_parallel){.tp = 1, .pp = 1},
					     KVP_DTYPE_AUTO, 1, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_plot_write(p, dir, KVP_PLOT_TERM_PNG, &err), KVP_STATUS_OK);
	const char *dat = slurp("kv.dat");
	/* 256 * 524,288 = 134,217,728; 4,096 * 524,288 = 2,147,483,648 */
	ck_assert_ptr_nonnull(strstr(dat, "\n256 \"256\" \"\" 134217728\n"));
	ck_assert_ptr_nonnull(strstr(dat, "\n4096 \"4k\" \"\" 2147483648\n"));
	ck_assert_ptr_nonnull(strstr(dat, "\n8192 \"8k\" \"\" NaN\n"));
	ck_assert_ptr_nonnull(strstr(dat, "4 llama-2-7b (MHA; 524,288 B/token) (bytes)"));
	const char *gp = slurp("kv.gp");
	ck_assert_ptr_nonnull(strstr(gp, "set terminal pngcairo"));
	ck_assert_ptr_nonnull(strstr(gp, "set output 'kv.png'"));
	ck_assert_ptr_nonnull(strstr(gp, "set xlabel 'context (tokens per sequence, k = 1024)'"));
	ck_assert_ptr_nonnull(strstr(gp, "set ylabel 'KV cache of one sequence on one GPU (GiB)'"));
	ck_assert_ptr_nonnull(strstr(gp, "set title 'KV cache of one sequence"));
	ck_assert_ptr_nonnull(strstr(gp, "'kv.dat' index 0 using 1:"));
	ck_assert_ptr_nonnull(strstr(gp, "/1073741824")); /* bytes to GiB */
	ck_assert_int_eq(kvp_plot_write(p, dir, KVP_PLOT_TERM_SVG, &err), KVP_STATUS_OK);
	gp = slurp("kv.gp");
	ck_assert_ptr_nonnull(strstr(gp, "set terminal svg"));
	ck_assert_ptr_nonnull(strstr(gp, "set output 'kv.svg'"));
	ck_assert_int_eq(kvp_plot_write(p, dir, KVP_PLOT_TERM_DUMB, &err), KVP_STATUS_OK);
	gp = slurp("kv.gp");
	ck_assert_ptr_nonnull(strstr(gp, "set terminal dumb"));
	ck_assert_ptr_null(strstr(gp, "set output"));
	kvp_plot_free(p);
}
END_TEST

/* Titles with quotes and backslashes stay one single-quoted gnuplot string:
 * ' doubled, " and \ as they are (no escapes inside single quotes). */
START_TEST(test_write_escapes)
{
	struct kvp_plot *p = kvp_plot_new("esc");
	struct kvp_plot_panel *pn = kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES);
	snprintf(p->title, sizeof p->title, "a \"quoted\" C:\\dir it's");
	kvp_plot_add_series(pn, "s \"1\"");
	size_t r;
	ck_assert(kvp_plot_add_row(pn, 1, "one \"1\"", NULL, &r));
	pn->y[r][0] = 0.5;
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_plot_write(p, dir, KVP_PLOT_TERM_PNG, &err), KVP_STATUS_OK);
	const char *gp = slurp("esc.gp");
	ck_assert_ptr_nonnull(strstr(gp, "set title 'a \"quoted\" C:\\dir it''s'"));
	ck_assert_ptr_nonnull(strstr(gp, "title 's \"1\"'"));
	const char *dat = slurp("esc.dat");
	ck_assert_ptr_nonnull(strstr(dat, "\n1 \"one '1'\" \"\" 0.5\n"));
	kvp_plot_free(p);
}
END_TEST

static const struct {
	const char *s;
	bool ok;
	enum kvp_plot_term t;
	const char *ext;
} terms[] = {
	{"png", true, KVP_PLOT_TERM_PNG, "png"},
	{"svg", true, KVP_PLOT_TERM_SVG, "svg"},
	{"pdf", true, KVP_PLOT_TERM_PDF, "pdf"},
	{"dumb", true, KVP_PLOT_TERM_DUMB, NULL},
	{"jpeg", false, 0, NULL},
	{"", false, 0, NULL},
	{"PNG", false, 0, NULL},
};

START_TEST(test_term_parse)
{
	enum kvp_plot_term t;
	ck_assert_int_eq(kvp_plot_term_parse(terms[_i].s, &t), terms[_i].ok);
	if (!terms[_i].ok)
		return;
	ck_assert_int_eq(t, terms[_i].t);
	if (terms[_i].ext)
		ck_assert_str_eq(kvp_plot_term_ext(t), terms[_i].ext);
	else
		ck_assert_ptr_null(kvp_plot_term_ext(t));
}
END_TEST

/* ------------------------------------------------------------ errors */

static struct kvp_plot *small_plot(const char *name)
{
	struct kvp_plot *p = kvp_plot_new(name);
	struct kvp_plot_panel *pn = kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES);
	kvp_plot_add_series(pn, "one");
	size_t r;
	kvp_plot_add_row(pn, 1, "1", NULL, &r);
	pn->y[r][0] = 1;
	kvp_plot_add_row(pn, 2, "2", NULL, &r);
	pn->y[r][0] = 2;
	return p;
}

/* No gnuplot: NOT_FOUND, and the data and script stay. */
START_TEST(test_render_missing)
{
	struct kvp_plot *p = small_plot("missing");
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_plot_write(p, dir, KVP_PLOT_TERM_PNG, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_plot_render(p, dir, KVP_PLOT_TERM_PNG, "/nonexistent/gnuplot", &err),
			 KVP_STATUS_NOT_FOUND);
	ck_assert_ptr_nonnull(strstr(err.msg, "/nonexistent/gnuplot"));
	ck_assert(exists("missing.dat"));
	ck_assert(exists("missing.gp"));
	ck_assert(!exists("missing.png"));
	kvp_plot_free(p);
}
END_TEST

/* A gnuplot that fails, or succeeds without drawing: IO, files kept. */
START_TEST(test_render_fails)
{
	struct kvp_plot *p = small_plot("fails");
	struct kvp_error err = {0};
	ck_assert_int_eq(kvp_plot_write(p, dir, KVP_PLOT_TERM_PNG, &err), KVP_STATUS_OK);
	ck_assert_int_eq(kvp_plot_render(p, dir, KVP_PLOT_TERM_PNG, "false", &err), KVP_STATUS_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "failed"));
	ck_assert_int_eq(kvp_plot_render(p, dir, KVP_PLOT_TERM_PNG, "true", &err), KVP_STATUS_IO);
	ck_assert_ptr_nonnull(strstr(err.msg, "wrote no image"));
	ck_assert(exists("fails.dat"));
	ck_assert(exists("fails.gp"));
	kvp_plot_free(p);
}
END_TEST

START_TEST(test_capacity)
{
	struct kvp_plot *p = kvp_plot_new("cap");
	for (int i = 0; i < KVP_PLOT_MAX_PANELS; i++)
		ck_assert_ptr_nonnull(kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES));
	ck_assert_ptr_null(kvp_plot_add_panel(p, KVP_PLOT_STYLE_LINES));
	struct kvp_plot_panel *pn = &p->panel[0];
	for (int i = 0; i < KVP_PLOT_MAX_SERIES; i++)
		ck_assert_ptr_nonnull(kvp_plot_add_series(pn, "s"));
	ck_assert_ptr_null(kvp_plot_add_series(pn, "s"));
	for (int i = 0; i < KVP_PLOT_MAX_ROWS; i++)
		ck_assert(kvp_plot_add_row(pn, i, NULL, NULL, NULL));
	ck_assert(!kvp_plot_add_row(pn, 0, NULL, NULL, NULL));
	/* a new row starts undefined in every series */
	ck_assert(isnan(pn->y[KVP_PLOT_MAX_ROWS - 1][KVP_PLOT_MAX_SERIES - 1]));
	kvp_plot_free(p);
}
END_TEST

/* Nothing to draw: every split invalid, every context beyond max_context. */
START_TEST(test_builder_errors)
{
	static struct kvp_model m;
	load_model("llama-2-7b", &m);
	struct kvp_gpu g = custom_gpu();
	struct kvp_budget_opts o = fixed_opts();
	uint32_t tp = 3;
	struct kvp_error err = {0};
	struct kvp_plot *p = kvp_plot_new("x");
	ck_assert_int_eq(kvp_plot_budget(p, &m, &g, 1, &tp, 1, &o, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "tp");
	kvp_plot_free(p);
	p = kvp_plot_new("x");
	uint64_t ctx = 8192;
	enum kvp_dtype kv = KVP_DTYPE_AUTO;
	ck_assert_int_eq(kvp_plot_max_seqs(p, &m, &g, 1, &kv, 1, &ctx, 1, &o, &err),
			 KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "context");
	kvp_plot_free(p);
	p = kvp_plot_new("x");
	ck_assert_int_eq(kvp_plot_kv_context(p, &m, 1, &ctx, 1, (struct kvp_parallel){.tp = 3, .pp = 1},
					     KVP_DTYPE_AUTO, 1, &err), KVP_STATUS_INVALID);
	ck_assert_str_eq(err.field, "model");
	kvp_plot_free(p);
	/* an unwritable directory */
	p = small_plot("x");
	ck_assert_int_eq(kvp_plot_write(p, "/nonexistent/dir", KVP_PLOT_TERM_PNG, &err),
			 KVP_STATUS_IO);
	kvp_plot_free(p);
}
END_TEST

/* pareto: three GPUs priced by hand.  h100-sxm at $1/h and at $2/h (same
 * configuration, so the same TPOT and TTFT; twice the price of a GPU-hour
 * is twice the cost per token: the second is dominated, a point, at exactly
 * 2x the first's y), and h200 at $3/h (4.8 against 3.35 TB/s: a lower TPOT,
 * but 3x the price for less than 1.5x the speed: on the front too).  The
 * front's rows come first, in TPOT order. */
/* The serve chart's knee (kvp_plot_serve_knee), by hand: TTFT p90 of 10,
 * 12, 19, 25, 400 ms: within 2 x 10 ms up to 19 ms, so index 2; with SLO
 * verdicts yes, yes, no, yes, the last before the first "no", index 1 (a
 * later "yes" is past the knee); a first rate already missing: n. */
START_TEST(test_serve_knee)
{
	const double p90[] = {0.010, 0.012, 0.019, 0.025, 0.400};
	const bool meets[] = {true, true, false, true, true};
	const bool none[] = {false, true, true, true, true};
	ck_assert_uint_eq(kvp_plot_serve_knee(p90, meets, 5, false), 2);
	ck_assert_uint_eq(kvp_plot_serve_knee(p90, meets, 5, true), 1);
	ck_assert_uint_eq(kvp_plot_serve_knee(p90, none, 5, true), 5);
	ck_assert_uint_eq(kvp_plot_serve_knee(p90, meets, 1, false), 0);
	ck_assert_uint_eq(kvp_plot_serve_knee(p90, meets, 0, false), 0);
}
END_TEST

START_TEST(test_pareto)
{
	static struct kvp_model m;
	load_model("llama-3.1-8b", &m);
	struct kvp_gpu g[3];
	struct kvp_error err = {0};
	ck_assert(kvp_gpu_load("h100-sxm", &g[0], &err) == KVP_STATUS_OK);
	ck_assert(kvp_gpu_load("h100-sxm", &g[1], &err) == KVP_STATUS_OK);
	ck_assert(kvp_gpu_load("h200", &g[2], &err) == KVP_STATUS_OK);
	strcpy(g[1].name, "h100-at-2");
	double usd[] = {1, 2, 3};
	for (int i = 0; i < 3; i++) {
		g[i].price_per_hour = usd[i];
		strcpy(g[i].price_kind, "given");
	}
	struct kvp_workload w;
	memset(&w, 0, sizeof w);
	ck_assert(kvp_workload_load("chat", &w, &err) == KVP_STATUS_OK);
	struct kvp_size_demand d;
	ck_assert_msg(kvp_size_demand(&w, &m, &d, &err) == KVP_STATUS_OK, "%s", err.msg);
	struct kvp_size_opts o = {0};
	o.budget.par = (struct kvp_parallel){.tp = 1, .pp = 1, .dp = 1, .ep = 1};
	o.budget.utilization = 0.9;
	uint32_t one = 1;
	enum kvp_dtype kv = KVP_DTYPE_AUTO;
	struct kvp_size_space sp = {&one, &one, &one, &one, 1, 1, 1, 1, &kv, 1, NULL, 0};
	struct kvp_plot *p = kvp_plot_new("pareto");
	ck_assert_msg(kvp_plot_pareto(p, &m, g, 3, &d, &o, &sp, &err) == KVP_STATUS_OK, "%s", err.msg);
	const struct kvp_plot_panel *pn = &p->panel[0];
	ck_assert_uint_eq(pn->nrows, 3);
	ck_assert_uint_eq(pn->nseries, 2);
	ck_assert_ptr_nonnull(strstr(pn->series[0].title, "front"));
	ck_assert(!pn->series[0].points && pn->series[1].points);
	ck_assert_ptr_nonnull(strstr(pn->label[0], "h200 tp1"));
	ck_assert_ptr_nonnull(strstr(pn->label[1], "h100-sxm tp1"));
	ck_assert_ptr_nonnull(strstr(pn->label[2], "h100-at-2 tp1"));
	ck_assert(pn->x[0] < pn->x[1]);
	ck_assert(isnan(pn->y[0][1]) && isnan(pn->y[1][1]) && isnan(pn->y[2][0]));
	ck_assert(pn->y[0][0] > pn->y[1][0]);
	ck_assert_double_eq(pn->x[2], pn->x[1]);
	ck_assert_double_eq_tol(pn->y[2][1], 2 * pn->y[1][0], 1e-9 * pn->y[1][0]);
	kvp_plot_free(p);
	/* no price on any: nothing to plot, and the message says what to give */
	for (int i = 0; i < 3; i++)
		g[i].price_per_hour = 0;
	p = kvp_plot_new("pareto");
	ck_assert_int_eq(kvp_plot_pareto(p, &m, g, 3, &d, &o, &sp, &err), KVP_STATUS_INVALID);
	ck_assert_ptr_nonnull(strstr(err.msg, "--price"));
	kvp_plot_free(p);
	kvp_workload_free(&w);
}
END_TEST

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[600];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	strcpy(dir, "/tmp/check-plot-XXXXXX");
}

/* The gnuplot writer's quoting, by hand: single quotes, ' doubled, a line
 * break as '."\n".', control characters as ?, nothing else changed. */
static const struct {
	const char *in, *string, *comment, *dat;
} gp_quote[] = {
	{"plain", "'plain'", "plain", "\"plain\""},
	{"", "''", "", "\"\""},
	{"it's", "'it''s'", "it's", "\"it's\""},
	{"a`id`b", "'a`id`b'", "a'id'b", "\"a`id`b\""},
	{"x\"; system(\"id\")", "'x\"; system(\"id\")'", "x\"; system(\"id\")",
	 "\"x'; system('id')\""},
	{"$(id) @m", "'$(id) @m'", "$(id) @m", "\"$(id) @m\""},
	{"a\nb", "'a'.\"\\n\".'b'", "a; b", "\"a b\""},
	{"gpu\\ntp 2", "'gpu'.\"\\n\".'tp 2'", "gpu; tp 2", "\"gpu\\ntp 2\""},
	{"tab\there\x1b[2J", "'tab?here?[2J'", "tab?here?[2J", "\"tab?here?[2J\""},
	{"end\\", "'end\\'", "end/", "\"end/\""},
	{"''", "''''''", "''", "\"''\""},
};

static char *gp_capture(void (*put)(FILE *, const char *), const char *in)
{
	static char buf[512];
	memset(buf, 0, sizeof buf);
	FILE *f = fmemopen(buf, sizeof buf, "w");
	ck_assert_ptr_nonnull(f);
	put(f, in);
	fclose(f);
	return buf;
}

START_TEST(test_gp_quote)
{
	ck_assert_str_eq(gp_capture(kvp_gp_string, gp_quote[_i].in), gp_quote[_i].string);
	ck_assert_str_eq(gp_capture(kvp_gp_comment, gp_quote[_i].in), gp_quote[_i].comment);
	ck_assert_str_eq(gp_capture(kvp_gp_dat_string, gp_quote[_i].in), gp_quote[_i].dat);
}
END_TEST

/* Stems: letters, digits, . _ - only, never first '.' or '-'. */
static const struct {
	const char *in, *out;
	bool ok, fits;
} gp_stems[] = {
	{"kv-context", "kv-context", true, true},
	{"a b/c", "a_b_c", false, true},
	{"../x", "_._x", false, true},
	{"-x", "_x", false, true},
	{".hidden", "_hidden", false, true},
	{"", "plot", false, true},
	{"h`id`", "h_id_", false, true},
	{"\xc3\xa9", "__", false, true}, /* UTF-8 e-acute: two bytes */
	{"abcdefghijklmnopq", "abcdefghijklmno", true, false}, /* out[16]: 15 and the NUL */
};

START_TEST(test_gp_stem)
{
	char out[16];
	ck_assert_int_eq(kvp_gp_stem(out, sizeof out, gp_stems[_i].in), gp_stems[_i].fits);
	ck_assert_str_eq(out, gp_stems[_i].out);
	ck_assert(kvp_gp_stem_ok(out));
	ck_assert_int_eq(kvp_gp_stem_ok(gp_stems[_i].in), gp_stems[_i].ok);
}
END_TEST

static Suite *plot_suite(void)
{
	Suite *s = suite_create("plot");
	TCase *core = tcase_create("core");
	tcase_add_checked_fixture(core, setup, teardown);
	tcase_add_loop_test(core, test_kv_context_llama2, 0, sizeof llama2 / sizeof llama2[0]);
	tcase_add_test(core, test_kv_context_architectures);
	tcase_add_test(core, test_kv_context_blocks_tp);
	tcase_add_test(core, test_budget_bars);
	tcase_add_test(core, test_budget_does_not_fit);
	tcase_add_test(core, test_max_seqs);
	tcase_add_test(core, test_perf_panels);
	tcase_add_test(core, test_block_size);
	tcase_add_test(core, test_validate);
	tcase_add_test(core, test_write_files);
	tcase_add_test(core, test_mark_overlaps);
	tcase_add_test(core, test_write_escapes);
	tcase_add_test(core, test_pareto);
	tcase_add_test(core, test_serve_knee);
	tcase_add_loop_test(core, test_gp_quote, 0, sizeof gp_quote / sizeof gp_quote[0]);
	tcase_add_loop_test(core, test_gp_stem, 0, sizeof gp_stems / sizeof gp_stems[0]);
	tcase_add_loop_test(core, test_term_parse, 0, sizeof terms / sizeof terms[0]);
	suite_add_tcase(s, core);
	TCase *errors = tcase_create("errors");
	tcase_add_checked_fixture(errors, setup, teardown);
	tcase_add_test(errors, test_render_missing);
	tcase_add_test(errors, test_render_fails);
	tcase_add_test(errors, test_capacity);
	tcase_add_test(errors, test_builder_errors);
	tcase_add_loop_test(errors, test_validate_errors, 0,
			    sizeof bad_results / sizeof bad_results[0]);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(plot_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
