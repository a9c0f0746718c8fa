/* plot.h: charts as files: the numbers (NAME.dat), a gnuplot script that
 * draws them (NAME.gp) and the image gnuplot renders from the two.
 *
 * Stance (fio's tools/fio_generate_plots): the data and the script are
 * always written first; gnuplot runs after, as a separate program found on
 * PATH or named by the caller ($KVPLAN_GNUPLOT in the CLI).  When it is
 * missing or fails, kvp_plot_render returns a status and the files stay: the
 * chart is optional, the numbers are not.  The script names its data and its
 * output by basename, so `cd DIR && gnuplot NAME.gp` re-renders it after a
 * hand edit.
 *
 * A .dat file holds exact values in base units (bytes, tokens, seconds,
 * sequences); the script scales them for display (GiB, ms).  Each panel of a
 * plot is one data block (gnuplot `index N`, blocks separated by two blank
 * lines) with columns: 1 x, 2 label (quoted), 3 tag (quoted, drawn above a
 * bar), 4.. one per series.  A value that does not exist (a context beyond a
 * model's max_context) is written NaN.
 *
 * The builders (kvp_plot_budget, kvp_plot_kv_context, ...) take profiles and
 * options, call the model and budget libraries (and frag/perf) and fill a
 * struct kvp_plot; they compute nothing of their own beyond unit scaling. */
#ifndef KVP_PLOT_H
#define KVP_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "memory/budget.h"
#include "base/error.h"
#include "model/model.h"
#include "read/profile.h"

#define KVP_PLOT_MAX_PANELS 3
#define KVP_PLOT_MAX_SERIES 24
#define KVP_PLOT_MAX_ROWS 128
#define KVP_PLOT_LABEL_MAX 64
#define KVP_PLOT_TITLE_MAX 256

enum kvp_plot_term { KVP_PLOT_TERM_PNG, KVP_PLOT_TERM_SVG, KVP_PLOT_TERM_PDF, KVP_PLOT_TERM_DUMB };

bool kvp_plot_term_parse(const char *s, enum kvp_plot_term *out);
/* The image's extension ("png", "svg", "pdf"), or NULL for dumb (the chart
 * goes to gnuplot's standard output). */
const char *kvp_plot_term_ext(enum kvp_plot_term t);

enum kvp_plot_style {
	KVP_PLOT_STYLE_LINES,    /* numeric x, one line per series */
	KVP_PLOT_STYLE_STACKED,  /* one bar per row (label), series stacked bottom up */
	KVP_PLOT_STYLE_SCATTER   /* x predicted, series measured; y = x and a band */
};

struct kvp_plot_series {
	char title[KVP_PLOT_TITLE_MAX];
	bool y2;                 /* LINES: on the right axis */
	bool outline;            /* STACKED: drawn as an empty box, not stacked (capacity) */
	int color;               /* gnuplot linetype for the colour; 0: by position */
	unsigned rgb;            /* 0xRRGGBB when not 0, instead of color */
	int dash;                /* gnuplot dashtype; 0: solid */
	int point;               /* SCATTER: gnuplot pointtype; 0: a filled circle */
	bool points;             /* LINES: markers only, no line (points that are
				  * not a sequence: pareto's configurations) */
	size_t over;             /* 1 + the series it lies on at every point, or 0
				  * (kvp_plot_mark_overlaps); drawn open and sparse */
};

struct kvp_plot_panel {
	char title[KVP_PLOT_TITLE_MAX];
	char xlabel[KVP_PLOT_TITLE_MAX], ylabel[KVP_PLOT_TITLE_MAX], y2label[KVP_PLOT_TITLE_MAX];
	char xunit[32], yunit[32], y2unit[32];  /* base units of the .dat columns */
	enum kvp_plot_style style;
	bool logx, logy, logy2;
	bool xtic_labels;        /* LINES: tics at the rows' x, named by their labels */
	bool point_labels;       /* LINES: each row's label drawn above its points */
	double yscale, y2scale;  /* displayed = value / scale (1 when 0) */
	double band;             /* SCATTER: relative error band drawn around y = x */
	double mark_x;           /* LINES: a dashed vertical line here when > 0 ... */
	char mark_label[KVP_PLOT_LABEL_MAX];   /* ... named by this */
	bool grey_past_mark;     /* ... and the points beyond it drawn grey: they
				  * cannot happen (more sequences than fit) */
	size_t nseries, nrows;
	struct kvp_plot_series series[KVP_PLOT_MAX_SERIES];
	double x[KVP_PLOT_MAX_ROWS];
	char label[KVP_PLOT_MAX_ROWS][KVP_PLOT_LABEL_MAX];
	char tag[KVP_PLOT_MAX_ROWS][KVP_PLOT_LABEL_MAX];
	double y[KVP_PLOT_MAX_ROWS][KVP_PLOT_MAX_SERIES];
};

struct kvp_plot {
	char name[2 * KVP_NAME_MAX + 16];       /* file stem */
	char title[4 * KVP_PLOT_TITLE_MAX];     /* names model, GPU and settings */
	char source[1024];                      /* how it was made, for the .dat header */
	char notes[8][KVP_PLOT_TITLE_MAX];      /* what was left out and why */
	size_t nnotes;
	size_t npanels;
	struct kvp_plot_panel panel[KVP_PLOT_MAX_PANELS];
};

/* A zeroed plot named `name` reduced to a safe file stem (kvp_gp_stem), or
 * NULL when memory runs out.
 * Free with kvp_plot_free. */
struct kvp_plot *kvp_plot_new(const char *name);
void kvp_plot_free(struct kvp_plot *p);

/* Add a panel / a series to the last panel / a row to the last panel; the
 * row's series values start NaN.  They return NULL (or false) when the fixed
 * capacity is reached. */
struct kvp_plot_panel *kvp_plot_add_panel(struct kvp_plot *p, enum kvp_plot_style style);
struct kvp_plot_series *kvp_plot_add_series(struct kvp_plot_panel *pn, const char *title);
bool kvp_plot_add_row(struct kvp_plot_panel *pn, double x, const char *label, const char *tag,
		      size_t *row);
/* Record a note (a skipped option and why); silently dropped past 8. */
void kvp_plot_note(struct kvp_plot *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Series that lie on one another: two values closer than this share a pixel. */
#define KVP_PLOT_OVERLAP_REL 0.01

/* Mark each LINES or SCATTER series none of whose points can be told from
 * another series' on the same axis (within KVP_PLOT_OVERLAP_REL): its `over`
 * names the other, its title gains " (= OTHER)", a note says so, and the
 * writer draws it with open, larger markers and a sparse dash over the other.
 * Of a pair that coincide everywhere the later is marked.  Returns how many
 * were marked.  Call once, after building and before kvp_plot_write. */
size_t kvp_plot_mark_overlaps(struct kvp_plot *p);

/* Write DIR/NAME.dat and DIR/NAME.gp (the script draws to NAME.<ext> in
 * DIR, or to standard output for dumb).  DIR must exist.  IO on failure. */
kvp_status kvp_plot_write(const struct kvp_plot *p, const char *dir, enum kvp_plot_term term,
			  struct kvp_error *err);

/* Run `gnuplot NAME.gp` in DIR.  `gnuplot` is the program (NULL or "": "gnuplot"
 * on PATH).  OK when it exits 0 and, for file terminals, DIR/NAME.<ext> is a
 * non-empty file that ends as its format does (a cut image, as gnuplot
 * leaves on a full disk, is removed and IO returned).  NOT_FOUND when the program cannot be started; IO when it
 * fails, with the last line it printed in err->msg.  gnuplot's standard
 * output is the caller's (where --term dumb draws). */
kvp_status kvp_plot_render(const struct kvp_plot *p, const char *dir, enum kvp_plot_term term,
			   const char *gnuplot, struct kvp_error *err);

/* Create DIR and its missing parents (mkdir -p).  IO on failure. */
kvp_status kvp_plot_mkdir(const char *dir, struct kvp_error *err);

/* ---------------------------------------------------------------- builders */

/* Default context sweep: powers of two from 256 to 131,072 tokens. */
size_t kvp_plot_default_contexts(uint64_t *out, size_t max);

/* 1. Memory budget of one GPU as stacked bars, one bar per GPU and tp:
 * weights, activations, overhead, KV pool, free memory (the GPU's memory
 * less the four, the engine's headroom), with the GPU's memory as an outline
 * and the maximum sequences at o->context above each bar.  Splits the model
 * cannot make (tp not dividing the heads) are left out with a note; INVALID
 * when none is left. */
kvp_status kvp_plot_budget(struct kvp_plot *p, const struct kvp_model *m,
			   const struct kvp_gpu *gpus, size_t ngpus, const uint32_t *tps,
			   size_t ntps, const struct kvp_budget_opts *o, struct kvp_error *err);

/* 2. KV bytes one sequence holds on one GPU against its context, one line per
 * model (kvp_spec_seq_bytes with blocks of `block` tokens; 1: exact).  A
 * model's line ends at its max_context (NaN beyond). */
kvp_status kvp_plot_kv_context(struct kvp_plot *p, const struct kvp_model *models,
			       size_t nmodels, const uint64_t *contexts, size_t ncontexts,
			       struct kvp_parallel par, enum kvp_dtype kv_dtype, uint32_t block,
			       struct kvp_error *err);

/* 3. Maximum concurrent sequences against context, one line per GPU and KV
 * dtype (kvp_budget_compute at each context; o->kv_dtype is replaced).  Lines
 * end at the model's max_context; 0 (nothing fits) is kept in the data. */
kvp_status kvp_plot_max_seqs(struct kvp_plot *p, const struct kvp_model *m,
			     const struct kvp_gpu *gpus, size_t ngpus, const enum kvp_dtype *kv,
			     size_t nkv, const uint64_t *contexts, size_t ncontexts,
			     const struct kvp_budget_opts *o, struct kvp_error *err);

/* 5. The decode roofline and KV offload, two panels.  (a) One decode step of
 * `batches` sequences holding o->context tokens each (kvp_perf_decode_step):
 * its time, the memory and compute terms, and the tokens per second it
 * yields (right axis).  (b) The step of o->batch sequences against their
 * context with all of their KV brought over each host link every step,
 * layer by layer (kvp_perf_offload_step, pipelined), beside the step with
 * the KV on the GPU.  The hardware comes from the GPU profile
 * (kvp_perf_hw_from_gpu); `hw` (may be NULL) replaces it, e.g. calibrated. */
struct kvp_perf_hw;
kvp_status kvp_plot_perf(struct kvp_plot *p, const struct kvp_model *m, const struct kvp_gpu *g,
			 const struct kvp_perf_hw *hw, const struct kvp_budget_opts *o,
			 const uint64_t *batches, size_t nbatches, const uint64_t *contexts,
			 size_t ncontexts, struct kvp_error *err);

/* 4. The block-size trade-off, two panels, from the fragmentation simulator
 * (kvp_frag_run over `requests` requests of workload w in the KV pool the
 * budget leaves): (a) the pool's internal waste (left) and the block tables'
 * and allocator's metadata (right) against the block size; (b) the live
 * sequences the pool sustains on average, with the block size
 * kvp_frag_recommend picks marked.  Paged rows, and paged-shared ones when
 * the workload carries a shared prefix.  progress (NULL: none) is called
 * with progress_ctx as the simulator draws requests (kvp_frag_config). */
struct kvp_workload;
kvp_status kvp_plot_block_size(struct kvp_plot *p, const struct kvp_model *m,
			       const struct kvp_gpu *g, const struct kvp_budget_opts *o,
			       const struct kvp_workload *w, const uint32_t *blocks, size_t nblocks,
			       uint64_t requests,
			       void (*progress)(void *ctx, uint64_t done, uint64_t total),
			       void *progress_ctx, struct kvp_error *err);

/* 6. The planner against the harness: kvbench --out results (YAML or CSV)
 * read as `kvplan validate` reads them (validate.h), the planner's value on x
 * and the measured one on y, with y = x and a band of +/- band (0.2: 20 %).
 * Decode points: predicted step time (on gpu's bandwidth when given, else
 * the run's own basis; at `efficiency`, or each basis' default when 0)
 * against the median time (panel a); capacity points: the budget's blocks
 * against the blocks allocated (panel b).  One series per file and KV
 * dtype.  Errors carry file:line:col; a file with no usable point is
 * INVALID. */
kvp_status kvp_plot_validate(struct kvp_plot *p, const char *const *paths, size_t npaths,
			     const struct kvp_gpu *gpu, double efficiency, double band,
			     struct kvp_error *err);

/* 6b. The planner against an engine's own benchmark: runs[0..n) (read/bench.h)
 * predicted as `kvplan validate` predicts them (time/validate-bench.h: the
 * step model on hw, model m on GPU g with o's split and engine), each
 * measured time on y against its prediction on x, one series per measure
 * (ttft, tpot, prefill, decode_step, latency), with y = x and a band of
 * +/- band.  The errors of kvp_bench_validate. */
struct kvp_perf_hw;
struct kvp_bench_run;
kvp_status kvp_plot_validate_bench(struct kvp_plot *p, const struct kvp_model *m,
				   const struct kvp_gpu *g, const struct kvp_budget_opts *o,
				   const struct kvp_perf_hw *hw, const struct kvp_bench_run *runs,
				   size_t n, double band, struct kvp_error *err);

/* 7. Cost per million output tokens against TPOT (kvplan size's search):
 * every configuration of sp on each GPU at its fewest replicas
 * (kvp_size_search_space), ranked as `kvplan size` ranks them; those on the
 * Pareto front of cost, TPOT and TTFT (kvp_size_pareto) as one line ordered
 * by TPOT, the others that fit (no failure more replicas cannot cure, a known
 * price) as points.  Columns: 1 TPOT (s), 2 the configuration, 3 "meets",
 * "at risk" or "misses", 4 the front's $/Mtok, 5 the others' (NaN where the
 * row is the other kind).  INVALID when no configuration fits with a known
 * price. */
struct kvp_size_demand;
struct kvp_size_opts;
struct kvp_size_space;
kvp_status kvp_plot_pareto(struct kvp_plot *p, const struct kvp_model *m,
			   const struct kvp_gpu *gpus, size_t ngpus, const struct kvp_size_demand *d,
			   const struct kvp_size_opts *o, const struct kvp_size_space *sp,
			   struct kvp_error *err);

/* 8. One replica under Poisson load on the serving-loop simulator
 * (kvp_serve_run, as `kvplan serve` runs it: the budget at the workload's
 * max_len, the step model of the GPU profile), two panels: (a) TTFT p50,
 * p90, p99 (left, log) and TPOT p50, p90, p99 (right) against the rate,
 * with the knee marked (kvp_plot_serve_knee); (b) the KV blocks in use over
 * time (% of the pool, the simulator's series averaged to at most
 * KVP_PLOT_MAX_ROWS points) at kv_rate, else at the knee.  Without rates:
 * 0.1, 0.2 .. 1.2 x the requests a second a closed loop of max_num_seqs
 * users completes (the engine kept full). */
struct kvp_workload;
struct kvp_plot_serve_opts {
	const double *rates;         /* requests/s, increasing; NULL: the default sweep */
	size_t nrates;
	double kv_rate;              /* panel (b)'s rate; 0: the knee's */
	uint64_t requests, seed;     /* per run; 0: 1,000 and 1 */
	double slo_ttft_s, slo_tpot_s;   /* the knee's levels at p90; 0: none */
};
kvp_status kvp_plot_serve(struct kvp_plot *p, const struct kvp_model *m, const struct kvp_gpu *g,
			  const struct kvp_budget_opts *o, const struct kvp_workload *w,
			  const struct kvp_plot_serve_opts *po, struct kvp_error *err);

/* The knee among n rates in increasing order: with SLOs (slo), the last
 * whose run meets them (meets[i]) before the first that does not; without,
 * the last whose TTFT p90 is within 2 x the first rate's before the first
 * that is not (queueing taking over).  n when even the first fails. */
size_t kvp_plot_serve_knee(const double *ttft_p90, const bool *meets, size_t n, bool slo);

/* Default batch sweep: powers of two from 1 to 512. */
size_t kvp_plot_default_batches(uint64_t *out, size_t max);

#endif
