/* validate.c: see validate.h. */
#include "time/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "memory/budget.h"
#include "out/csv.h"
#include "base/input-file.h"
#include "time/perf.h"
#include "base/units.h"
#include "base/yaml-walk.h"
#include "model/spec.h"

/* ------------------------------------------------------- predictions */

/* `layers` full-attention layers of the shape's heads.  The weights are
 * given to the budget directly, so one parameter stands in for them. */
static struct kvp_model *model_of(const struct kvp_bench_shape *s)
{
	struct kvp_model *m = calloc(1, sizeof *m);
	if (!m)
		return NULL;
	snprintf(m->name, sizeof m->name, "kvbench-%u:%u-d%u", s->num_heads, s->num_kv_heads,
		 s->head_dim);
	m->dtype = KVP_DTYPE_BF16;
	m->num_layers = s->layers;
	m->num_heads = s->num_heads;
	m->num_kv_heads = s->num_kv_heads;
	m->head_dim = m->head_dim_v = s->head_dim;
	m->hidden_size = s->num_heads * s->head_dim;
	m->params = m->active_params = 1;
	m->max_context = 1;
	for (uint32_t i = 0; i < s->layers; i++)
		m->layers[i] = KVP_LAYER_FULL;
	return m;
}

static kvp_status check_shape(const struct kvp_bench_shape *s, struct kvp_error *err)
{
	if (!s->num_heads || !s->num_kv_heads || s->num_heads % s->num_kv_heads || !s->head_dim ||
	    !s->block_size || !s->layers || s->layers > KVP_MAX_LAYERS ||
	    s->num_heads > UINT32_MAX / s->head_dim)
		return kvp_error_set(err, KVP_STATUS_INVALID, NULL, 0, 0, "shape",
				     "heads %u:%u, head dim %u, block %u, layers %u: expected "
				     "positive sizes, query heads a multiple of KV heads and at "
				     "most %d layers", s->num_heads, s->num_kv_heads, s->head_dim,
				     s->block_size, s->layers, KVP_MAX_LAYERS);
	return KVP_STATUS_OK;
}

kvp_status kvp_bench_capacity(const struct kvp_bench_shape *s, uint64_t memory_bytes,
			      double utilization, uint64_t weights_bytes, uint64_t context,
			      struct kvp_bench_capacity *out, struct kvp_error *err)
{
	kvp_status st = check_shape(s, err);
	if (st)
		return st;
	struct kvp_model *m = model_of(s);
	struct kvp_budget *b = calloc(1, sizeof *b);
	if (!m || !b) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	struct kvp_gpu gpu = {.memory_bytes = memory_bytes};
	snprintf(gpu.name, sizeof gpu.name, "kvbench");
	struct kvp_budget_opts o = {
		.engine = KVP_ENGINE_GENERIC,
		.par = {.tp = 1, .pp = 1},
		.kv_dtype = s->kv_dtype,
		.block_size = s->block_size,
		.utilization = utilization,
		.context = context,
		.batch = 1,
		.has_weights = true, .has_activation = true, .has_overhead = true,
		.has_gpu_memory = true,
		.weights_bytes = weights_bytes,
		.gpu_memory_bytes = memory_bytes,
	};
	if ((st = kvp_budget_compute(m, &gpu, &o, b, err)))
		goto out;
	out->page_bytes = b->page_bytes;
	out->num_blocks = b->num_blocks;
	out->max_tokens = b->max_tokens;
	out->max_sequences = b->max_sequences;
out:
	free(m);
	free(b);
	return st;
}

void kvp_bench_basis(const struct kvp_gpu *gpu, bool cuda, double datasheet_bps,
		     double read_ceiling_bps, struct kvp_bench_basis *out)
{
	out->efficiency = KVP_PERF_DECODE_BW_EFFICIENCY;
	if (gpu) {
		snprintf(out->name, sizeof out->name, "%s", gpu->name);
		out->bandwidth_bps = gpu->bandwidth_bps;
		if (gpu->decode_bw_efficiency > 0)
			out->efficiency = gpu->decode_bw_efficiency;
	} else if (cuda && datasheet_bps > 0) {
		snprintf(out->name, sizeof out->name, "bus-rate");
		out->bandwidth_bps = datasheet_bps;
	} else {
		snprintf(out->name, sizeof out->name, "read-ceiling");
		out->bandwidth_bps = read_ceiling_bps;
		out->efficiency = 1.0;
	}
}

kvp_status kvp_bench_decode(const struct kvp_bench_shape *s, const uint64_t *lens, size_t n,
			    double bandwidth_bps, double efficiency, uint64_t *kv_bytes,
			    double *time_s, struct kvp_error *err)
{
	kvp_status st = check_shape(s, err);
	if (st)
		return st;
	struct kvp_model *m = model_of(s);
	struct kvp_spec *spec = malloc(sizeof *spec);
	struct kvp_perf_ctx c;
	struct kvp_perf_step step;
	if (!m || !spec) {
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
		goto out;
	}
	if ((st = kvp_spec_build(m, (struct kvp_parallel){.tp = 1, .pp = 1}, KVP_DTYPE_AUTO, s->kv_dtype, spec,
				 err)))
		goto out;
	struct kvp_perf_hw hw = {
		.bandwidth_bps = bandwidth_bps,
		.decode_bw_efficiency = efficiency,
		.flops = 1e30, /* no compute roof (validate.h) */
		.prefill_flops_efficiency = 1.0,
	};
	if ((st = kvp_perf_init(&c, spec, 0, &hw, err)) ||
	    (st = kvp_perf_decode_step_lens(&c, lens, n, &step, err)))
		goto out;
	*kv_bytes = step.kv_bytes;
	*time_s = step.time_s;
out:
	free(m);
	free(spec);
	return st;
}

/* -------------------------------------------- one point's fields
 * A point is a YAML map under `points:` (with the run's `kvbench:` map to
 * fall back on) or a CSV line under its header; both are read by name. */

struct row {
	const char *path;
	int line, col; /* where the point starts */
	/* YAML */
	const struct kvp_doc *doc;
	const struct kvp_node *map, *env;
	/* CSV */
	char *const *names, *const *vals;
	size_t n;
};

/* The field's text and where it is, or NULL. */
static const char *row_get(const struct row *r, const char *name, int *line, int *col)
{
	if (r->doc) {
		const struct kvp_node *v = kvp_map_get(r->map, name);
		if (!v && r->env)
			v = kvp_map_get(r->env, name);
		if (!v || v->type != KVP_NODE_SCALAR)
			return NULL;
		*line = v->line;
		*col = v->col;
		return v->value;
	}
	int c = kvp_csv_col(r->names, r->n, name);
	if (c < 0 || !r->vals[c][0])
		return NULL;
	*line = r->line;
	*col = c + 1;
	return r->vals[c];
}

/* A library error about the point's values, placed at the point. */
static kvp_status at_point(const struct row *r, kvp_status st, struct kvp_error *err)
{
	if (st && err && !err->path[0]) {
		snprintf(err->path, sizeof err->path, "%s", r->path);
		err->line = r->line;
		err->col = r->col;
	}
	return st;
}

static kvp_status row_missing(const struct row *r, const char *name, struct kvp_error *err)
{
	return kvp_error_set(err, KVP_STATUS_INVALID, r->path, r->line, r->col, name,
			     "missing: a kvbench point has it (kvbench --out writes every field)");
}

static kvp_status row_double(const struct row *r, const char *name, double *out,
			     struct kvp_error *err)
{
	int line, col;
	const char *s = row_get(r, name, &line, &col);
	if (!s)
		return row_missing(r, name, err);
	kvp_status st = kvp_csv_number(r->path, line, col, name, s, out, err);
	if (!st && *out < 0)
		st = kvp_error_set(err, KVP_STATUS_INVALID, r->path, line, col, name,
				   "must not be negative, got '%s'", s);
	return st;
}

static kvp_status row_u64(const struct row *r, const char *name, uint64_t max, uint64_t *out,
			  struct kvp_error *err)
{
	int line, col;
	const char *s = row_get(r, name, &line, &col);
	if (!s)
		return row_missing(r, name, err);
	int rc = kvp_parse_u64(s, out);
	if (rc == 0 && *out <= max)
		return KVP_STATUS_OK;
	return kvp_error_set(err, rc == -1 ? KVP_STATUS_INVALID : KVP_STATUS_OVERFLOW,
			     r->path, line, col, name, "expected a whole number up to %llu, got '%s'",
			     (unsigned long long)max, s);
}

static kvp_status row_u32(const struct row *r, const char *name, uint32_t *out,
			  struct kvp_error *err)
{
	uint64_t v;
	kvp_status st = row_u64(r, name, UINT32_MAX, &v, err);
	*out = (uint32_t)v;
	return st;
}

/* An optional text field into buf ("" when absent). */
static void row_text(const struct row *r, const char *name, char *buf, size_t size)
{
	int line, col;
	const char *s = row_get(r, name, &line, &col);
	snprintf(buf, size, "%s", s ? s : "");
}

static kvp_status row_shape(const struct row *r, struct kvp_bench_shape *s, struct kvp_error *err)
{
	kvp_status st;
	int line, col;
	const char *dt = row_get(r, "kv_dtype", &line, &col);
	if (!dt)
		return row_missing(r, "kv_dtype", err);
	if (!kvp_dtype_parse(dt, &s->kv_dtype) || s->kv_dtype == KVP_DTYPE_AUTO)
		return kvp_error_set(err, KVP_STATUS_INVALID, r->path, line, col, "kv_dtype",
				     "unknown KV dtype '%s'", dt);
	if ((st = row_u32(r, "num_heads", &s->num_heads, err)) ||
	    (st = row_u32(r, "num_kv_heads", &s->num_kv_heads, err)) ||
	    (st = row_u32(r, "head_dim", &s->head_dim, err)) ||
	    (st = row_u32(r, "block_size", &s->block_size, err)))
		return st;
	s->layers = 1;
	if (row_get(r, "layers", &line, &col) && (st = row_u32(r, "layers", &s->layers, err)))
		return st;
	return at_point(r, check_shape(s, err), err);
}

/* ----------------------------------------------------------- points */

static struct kvp_vpoint *push(struct kvp_validation *v, struct kvp_error *err)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? 2 * v->cap : 16;
		struct kvp_vpoint *p = realloc(v->points, cap * sizeof *p);
		if (!p) {
			kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
			return NULL;
		}
		v->points = p;
		v->cap = cap;
	}
	struct kvp_vpoint *p = &v->points[v->n];
	memset(p, 0, sizeof *p);
	return p;
}

static kvp_status read_capacity(const struct row *r, struct kvp_vpoint *p, struct kvp_error *err)
{
	kvp_status st;
	p->kind = KVP_VPOINT_CAPACITY;
	if ((st = row_u64(r, "memory_bytes", UINT64_MAX, &p->memory_bytes, err)) ||
	    (st = row_double(r, "utilization", &p->utilization, err)) ||
	    (st = row_u64(r, "weights_bytes", UINT64_MAX, &p->weights_bytes, err)) ||
	    (st = row_u64(r, "context", UINT64_MAX, &p->context, err)) ||
	    (st = row_u64(r, "blocks", UINT64_MAX, &p->blocks, err)) ||
	    (st = row_u64(r, "sequences", UINT64_MAX, &p->sequences, err)))
		return st;
	if (!(p->utilization > 0) || p->utilization > 1)
		return kvp_error_set(err, KVP_STATUS_INVALID, r->path, r->line, r->col, "utilization",
				     "a fraction in (0, 1] is expected, got %g", p->utilization);
	if ((st = kvp_bench_capacity(&p->shape, p->memory_bytes, p->utilization,
				     p->weights_bytes, p->context, &p->predicted, err)))
		return at_point(r, st, err);
	return KVP_STATUS_OK;
}

/* The planner's time at efficiency 1 on the point's basis: `batch`
 * sequences holding `tokens` between them (KV bytes are linear in tokens
 * for full attention, so how they were spread does not change the sum). */
static kvp_status read_decode(const struct row *r, const struct kvp_gpu *gpu,
			      struct kvp_vpoint *p, struct kvp_error *err)
{
	kvp_status st;
	p->kind = KVP_VPOINT_DECODE;
	if ((st = row_u64(r, "batch", 1u << 24, &p->batch, err)) ||
	    (st = row_u64(r, "tokens", UINT64_MAX / 2, &p->tokens, err)) ||
	    (st = row_double(r, "time_median_s", &p->measured_s, err)))
		return st;
	if (!p->batch || !(p->measured_s > 0))
		return kvp_error_set(err, KVP_STATUS_INVALID, r->path, r->line, r->col,
				     p->batch ? "time_median_s" : "batch",
				     "must be positive in a timed point");
	int line, col;
	if (row_get(r, "context", &line, &col) &&
	    (st = row_u64(r, "context", UINT64_MAX, &p->context, err)))
		return st;
	double datasheet = 0, ceiling = 0;
	bool cuda = strcmp(p->backend, "cuda") == 0;
	if ((!gpu && cuda && row_get(r, "datasheet_gbps", &line, &col) &&
	     (st = row_double(r, "datasheet_gbps", &datasheet, err))) ||
	    (!gpu && row_get(r, "ceiling_read_gbps", &line, &col) &&
	     (st = row_double(r, "ceiling_read_gbps", &ceiling, err))))
		return st;
	struct kvp_bench_basis basis;
	kvp_bench_basis(gpu, cuda, datasheet * 1e9, ceiling * 1e9, &basis);
	snprintf(p->basis, sizeof p->basis, "%s", basis.name);
	p->bandwidth_bps = basis.bandwidth_bps;
	p->base_efficiency = basis.efficiency;
	if (!(p->bandwidth_bps > 0))
		return kvp_error_set(err, KVP_STATUS_INVALID, r->path, r->line, r->col,
				     gpu ? "bandwidth" : "ceiling_read_gbps",
				     "no bandwidth to predict on (%s); kvbench writes the read "
				     "ceiling beside each timed point, or name a GPU profile with "
				     "--gpu", p->basis);
	uint64_t *lens = malloc(p->batch * sizeof *lens);
	if (!lens)
		return kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	for (uint64_t i = 0; i < p->batch; i++)
		lens[i] = p->tokens / p->batch + (i < p->tokens % p->batch);
	st = kvp_bench_decode(&p->shape, lens, p->batch, p->bandwidth_bps, 1.0, &p->kv_bytes,
			      &p->unit_s, err);
	free(lens);
	return at_point(r, st, err);
}

/* One point: skipped when it failed validation or was not timed (a
 * --validate-only run); else appended. */
static kvp_status read_point(struct kvp_validation *v, const struct row *r,
			     const struct kvp_gpu *gpu, struct kvp_error *err)
{
	char buf[32];
	int line, col;
	bool capacity = row_get(r, "predicted_blocks", &line, &col) ||
			(row_get(r, "blocks", &line, &col) && row_get(r, "memory_bytes", &line, &col));
	row_text(r, "validated", buf, sizeof buf);
	if (!capacity && (strcmp(buf, "pass") != 0 || !row_get(r, "time_median_s", &line, &col))) {
		v->skipped++;
		return KVP_STATUS_OK;
	}
	struct kvp_vpoint *p = push(v, err);
	if (!p)
		return KVP_STATUS_NOMEM;
	snprintf(p->file, sizeof p->file, "%s", r->path);
	p->line = r->line;
	row_text(r, "backend", p->backend, sizeof p->backend);
	row_text(r, "device", p->device, sizeof p->device);
	if (!p->device[0])
		row_text(r, "gpu", p->device, sizeof p->device);
	row_text(r, "lengths", p->lengths, sizeof p->lengths);
	kvp_status st = row_shape(r, &p->shape, err);
	if (!st)
		st = capacity ? read_capacity(r, p, err) : read_decode(r, gpu, p, err);
	if (!st)
		v->n++;
	return st;
}

/* ------------------------------------------------ whole or cut
 * kvbench's results_format 2 (kernels/kvbench-out.c) says at the top that
 * the file ends with a count of its points; a file that says so and lacks
 * the count, or whose count differs, was cut (or is FILE.partial of a run
 * that did not finish) and is refused: a file cut between two points would
 * otherwise read as a smaller, whole run.  A file without the mark comes
 * from a kvbench before the count (format 1, the files in reports/) and is
 * read as before: refusing it would gain nothing for the files written
 * from now on, which all carry the mark, and lose every earlier run. */
#define RESULTS_FORMAT_MAX 2

static const char cut_why[] = "the file is cut, or is FILE.partial of a kvbench run that did "
			      "not finish (kvbench writes point_count last)";

/* The format a mark's text names, or 0 when it is not a whole number
 * within what this reader knows. */
static int results_format(const char *text)
{
	uint64_t f;
	return text && kvp_parse_u64(text, &f) == 0 && f >= 1 && f <= RESULTS_FORMAT_MAX ? (int)f
											    : 0;
}

static kvp_status load_yaml(struct kvp_validation *v, const char *path, const struct kvp_gpu *gpu,
			    struct kvp_error *err)
{
	struct kvp_doc *doc = NULL;
	kvp_status st = kvp_doc_load_file(path, &doc, err);
	if (st)
		return st;
	const struct kvp_node *root = doc->root;
	const struct kvp_node *env = root && root->type == KVP_NODE_MAP ? kvp_map_get(root, "kvbench")
									 : NULL;
	const struct kvp_node *points = env ? kvp_map_get(root, "points") : NULL;
	if (!env || env->type != KVP_NODE_MAP) {
		st = kvp_node_fail(doc, env ? env : root, err, KVP_STATUS_INVALID, "kvbench",
				   "not kvbench results: expected a 'kvbench' map and 'points' "
				   "(kvbench --out FILE.yaml)");
		goto out;
	}
	if (!points) {
		st = kvp_node_fail(doc, root, err, KVP_STATUS_INVALID, "points",
				   "missing: kvbench results list their points");
		goto out;
	}
	if ((st = kvp_node_expect(doc, points, "points", KVP_NODE_SEQ, err)))
		goto out;
	const struct kvp_node *mark = kvp_map_get(env, "results_format");
	if (mark && !results_format(mark->type == KVP_NODE_SCALAR ? mark->value : NULL)) {
		st = kvp_node_fail(doc, mark, err, KVP_STATUS_INVALID, "results_format",
				   "expected 1 to %d (a newer kvbench wrote this file?)",
				   RESULTS_FORMAT_MAX);
		goto out;
	}
	if (mark && results_format(mark->value) >= 2) {
		const struct kvp_node *count = kvp_map_get(root, "point_count");
		const struct kvp_node *last = points->n ? points->items[points->n - 1] : points;
		uint64_t n;
		if (!count) {
			st = kvp_node_fail(doc, last, err, KVP_STATUS_INVALID, "point_count",
					   "missing after %zu point%s: %s", points->n,
					   points->n == 1 ? "" : "s", cut_why);
			goto out;
		}
		if (count->type != KVP_NODE_SCALAR || kvp_parse_u64(count->value, &n) != 0) {
			st = kvp_node_fail(doc, count, err, KVP_STATUS_INVALID, "point_count",
					   "expected a whole number");
			goto out;
		}
		if (n != points->n) {
			st = kvp_node_fail(doc, count, err, KVP_STATUS_INVALID, "point_count",
					   "%s, but the file has %zu point%s: cut or edited",
					   count->value, points->n, points->n == 1 ? "" : "s");
			goto out;
		}
	}
	for (size_t i = 0; i < points->n && !st; i++) {
		const struct kvp_node *e = points->items[i];
		if ((st = kvp_node_expect(doc, e, "points", KVP_NODE_MAP, err)))
			break;
		struct row r = {.path = path, .line = e->line, .col = e->col, .doc = doc, .map = e, .env = env};
		st = read_point(v, &r, gpu, err);
	}
out:
	kvp_doc_free(doc);
	return st;
}

static kvp_status load_csv(struct kvp_validation *v, const char *path, const struct kvp_gpu *gpu,
			   struct kvp_error *err)
{
	FILE *f;
	kvp_status ost = kvp_input_open(path, &f, err);
	if (ost)
		return ost;
	char hline[KVP_CSV_LINE_MAX], line[KVP_CSV_LINE_MAX];
	char *h[KVP_CSV_MAX_FIELDS], *val[KVP_CSV_MAX_FIELDS];
	kvp_status st = KVP_STATUS_OK;
	int format = 1, hln = 1;
	static const char mark[] = "# kvbench results_format ";
	if (!fgets(hline, sizeof hline, f)) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 1, 1, NULL, "empty file");
		goto out;
	}
	if (strncmp(hline, mark, sizeof mark - 1) == 0) {
		/* the mark, then the header */
		char num[24];
		size_t k = strspn(hline + sizeof mark - 1, "0123456789");
		snprintf(num, sizeof num, "%.*s", (int)(k < sizeof num ? k : sizeof num - 1),
			 hline + sizeof mark - 1);
		if (!(format = results_format(num))) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, 1, (int)sizeof mark,
					   "results_format", "expected 1 to %d (a newer kvbench "
					   "wrote this file?)", RESULTS_FORMAT_MAX);
			goto out;
		}
		hln = 2;
		if (!fgets(hline, sizeof hline, f)) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, 2, 1, "point_count",
					   "missing after 0 points: %s", cut_why);
			goto out;
		}
	}
	size_t nh = kvp_csv_split(hline, h, KVP_CSV_MAX_FIELDS);
	if (kvp_csv_col(h, nh, "kv_dtype") < 0 || kvp_csv_col(h, nh, "num_kv_heads") < 0) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, hln, 1, "header",
				   "not kvbench results: expected a kvbench --out CSV header "
				   "(backend,...,kv_dtype,num_heads,num_kv_heads,...)");
		goto out;
	}
	static const char count_key[] = "# point_count: ";
	int ln = hln + 1, count_ln = 0;
	size_t npoints = 0;
	uint64_t count = 0;
	for (; fgets(line, sizeof line, f) && !st; ln++) {
		if (!strchr(line, '\n') && !feof(f)) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, ln, 1, NULL,
					   "line longer than %d bytes", KVP_CSV_LINE_MAX - 1);
			break;
		}
		if (format >= 2 && strncmp(line, count_key, sizeof count_key - 1) == 0) {
			line[strcspn(line, "\r\n")] = 0;
			if (count_ln) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, ln, 1, "point_count",
						   "a second count (the first on line %d)", count_ln);
				break;
			}
			if (kvp_parse_u64(line + sizeof count_key - 1, &count) != 0) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, ln,
						   (int)sizeof count_key, "point_count",
						   "expected a whole number");
				break;
			}
			count_ln = ln;
			continue;
		}
		if (line[strspn(line, " \t\r\n")] == 0 || line[0] == '#')
			continue;
		if (count_ln) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, ln, 1, NULL,
					   "a point after point_count (line %d): two files joined?",
					   count_ln);
			break;
		}
		npoints++;
		size_t n = kvp_csv_split(line, val, KVP_CSV_MAX_FIELDS);
		if (n != nh) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, ln, 1, NULL,
					   "%zu fields, the header has %zu", n, nh);
			break;
		}
		struct row r = {.path = path, .line = ln, .col = 1, .names = h, .vals = val, .n = nh};
		st = read_point(v, &r, gpu, err);
	}
	if (!st && format >= 2 && !count_ln)
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, ln, 1, "point_count",
				   "missing after %zu point%s: %s", npoints, npoints == 1 ? "" : "s",
				   cut_why);
	else if (!st && count_ln && count != npoints)
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, count_ln, (int)sizeof count_key,
				   "point_count", "%llu, but the file has %zu point%s: cut or edited",
				   (unsigned long long)count, npoints, npoints == 1 ? "" : "s");
out:
	fclose(f);
	return st;
}

/* Orders of the decode points by group: shape (backend, then the whole
 * shape), KV dtype (backend, then dtype), or none (one group). */
static int cmp_shape(const void *a, const void *b)
{
	const struct kvp_vpoint *x = *(const struct kvp_vpoint *const *)a;
	const struct kvp_vpoint *y = *(const struct kvp_vpoint *const *)b;
	int c = strcmp(x->backend, y->backend);
	return c ? c : memcmp(&x->shape, &y->shape, sizeof x->shape);
}

static int cmp_dtype(const void *a, const void *b)
{
	const struct kvp_vpoint *x = *(const struct kvp_vpoint *const *)a;
	const struct kvp_vpoint *y = *(const struct kvp_vpoint *const *)b;
	int c = strcmp(x->backend, y->backend);
	return c ? c : (int)x->shape.kv_dtype - (int)y->shape.kv_dtype;
}

static int cmp_none(const void *a, const void *b)
{
	(void)a;
	(void)b;
	return 0;
}

/* The decode points sorted by `cmp`, for walking their groups; NULL when
 * memory runs out.  *n: how many. */
static struct kvp_vpoint **decode_groups(struct kvp_validation *v,
					 int (*cmp)(const void *, const void *), size_t *n)
{
	struct kvp_vpoint **by = malloc((v->n ? v->n : 1) * sizeof *by);
	*n = 0;
	if (!by)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (v->points[i].kind == KVP_VPOINT_DECODE)
			by[(*n)++] = &v->points[i];
	qsort(by, *n, sizeof *by, cmp);
	return by;
}

/* The end of the group that starts at lo. */
static size_t group_end(struct kvp_vpoint **by, size_t lo, size_t n,
			int (*cmp)(const void *, const void *))
{
	size_t hi = lo;
	while (hi < n && cmp(&by[lo], &by[hi]) == 0)
		hi++;
	return hi;
}

/* kvp_vpoint.large for every decode point: each shape's points against its
 * largest step.  false when memory runs out. */
static bool mark_large(struct kvp_validation *v)
{
	size_t n;
	struct kvp_vpoint **by = decode_groups(v, cmp_shape, &n);
	if (!by)
		return false;
	for (size_t lo = 0, hi; lo < n; lo = hi) {
		hi = group_end(by, lo, n, cmp_shape);
		uint64_t most = 0;
		for (size_t i = lo; i < hi; i++)
			most = by[i]->kv_bytes > most ? by[i]->kv_bytes : most;
		for (size_t i = lo; i < hi; i++)
			by[i]->large = by[i]->kv_bytes >= most / 4;
	}
	free(by);
	return true;
}

kvp_status kvp_validation_load(struct kvp_validation *v, const char *path,
			       const struct kvp_gpu *gpu, struct kvp_error *err)
{
	const char *dot = strrchr(path, '.');
	kvp_status st = dot && strcmp(dot, ".csv") == 0 ? load_csv(v, path, gpu, err)
							: load_yaml(v, path, gpu, err);
	if (!st && !mark_large(v))
		st = kvp_error_set(err, KVP_STATUS_NOMEM, NULL, 0, 0, NULL, "out of memory");
	return st;
}

/* ------------------------------------------------------- evaluation */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of x[0..n), n > 0; x is sorted. */
static double median(double *x, size_t n)
{
	qsort(x, n, sizeof *x, cmp_double);
	return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* The median of unit_s / measured_s over the large points of by[lo, hi). */
static double fit_range(struct kvp_vpoint *const *by, size_t lo, size_t hi, double *scratch,
			size_t *used)
{
	size_t k = 0;
	for (size_t i = lo; i < hi; i++)
		if (by[i]->large)
			scratch[k++] = by[i]->unit_s / by[i]->measured_s;
	*used = k;
	return k ? median(scratch, k) : 0;
}

double kvp_validation_fit(struct kvp_validation *v, size_t *used)
{
	size_t n;
	struct kvp_vpoint **by = decode_groups(v, cmp_none, &n);
	double *scratch = malloc((v->n ? v->n : 1) * sizeof *scratch);
	double e = 0;
	*used = 0;
	if (by && scratch)
		e = fit_range(by, 0, n, scratch, used);
	free(by);
	free(scratch);
	return e;
}

static int (*group_cmp(enum kvp_fit_by by))(const void *, const void *)
{
	return by == KVP_FIT_SHAPE ? cmp_shape : by == KVP_FIT_DTYPE ? cmp_dtype : cmp_none;
}

size_t kvp_validation_apply_fit(struct kvp_validation *v, struct kvp_validation *c,
				enum kvp_fit_by by, double fallback)
{
	int (*cmp)(const void *, const void *) = group_cmp(by);
	size_t n, missed = 0;
	struct kvp_vpoint **in_c = decode_groups(c, cmp, &n);
	if (!in_c)
		return (size_t)-1;
	for (size_t i = 0; i < v->n; i++) {
		struct kvp_vpoint *p = &v->points[i];
		if (p->kind != KVP_VPOINT_DECODE)
			continue;
		struct kvp_vpoint *const *hit = bsearch(&p, in_c, n, sizeof *in_c, cmp);
		p->fit_efficiency = hit ? (*hit)->fit_efficiency : fallback;
		missed += !hit;
	}
	free(in_c);
	return missed;
}

size_t kvp_validation_fit_by(struct kvp_validation *v, enum kvp_fit_by by_what)
{
	int (*cmp)(const void *, const void *) = group_cmp(by_what);
	size_t n, groups = 0, used;
	struct kvp_vpoint **by = decode_groups(v, cmp, &n);
	double *scratch = malloc((v->n ? v->n : 1) * sizeof *scratch);
	for (size_t lo = 0, hi; by && scratch && lo < n; lo = hi, groups++) {
		hi = group_end(by, lo, n, cmp);
		double e = fit_range(by, lo, hi, scratch, &used);
		for (size_t i = lo; i < hi; i++)
			by[i]->fit_efficiency = e;
	}
	free(by);
	free(scratch);
	return groups;
}

void kvp_validation_fit_degrees(struct kvp_validation *v, enum kvp_fit_by by_what,
				size_t *parameters, size_t *points, size_t *exact)
{
	int (*cmp)(const void *, const void *) = group_cmp(by_what);
	size_t n;
	*parameters = *points = *exact = 0;
	struct kvp_vpoint **by = decode_groups(v, cmp, &n);
	for (size_t lo = 0, hi; by && lo < n; lo = hi) {
		hi = group_end(by, lo, n, cmp);
		size_t k = 0;
		for (size_t i = lo; i < hi; i++)
			k += by[i]->large;
		*parameters += k > 0;
		*points += k;
		*exact += k == 1;
	}
	free(by);
}

static double rel(double predicted, double measured)
{
	return measured > 0 ? (predicted - measured) / measured : 0;
}

/* The median and largest of the |errors| of the decode points, all of them
 * or the large ones. */
static void decode_summary(const struct kvp_validation *v, bool large_only, double *scratch,
			   size_t *n, size_t *outside, double *median_abs, double *max_abs)
{
	*n = *outside = 0;
	*median_abs = *max_abs = 0;
	for (size_t i = 0; i < v->n; i++) {
		const struct kvp_vpoint *p = &v->points[i];
		if (p->kind != KVP_VPOINT_DECODE || (large_only && !p->large))
			continue;
		if (scratch)
			scratch[*n] = fabs(p->error);
		*max_abs = fmax(*max_abs, fabs(p->error));
		*outside += !p->within;
		(*n)++;
	}
	if (scratch && *n)
		*median_abs = median(scratch, *n);
}

void kvp_validation_evaluate(struct kvp_validation *v, double efficiency, double tolerance,
			     double capacity_tolerance)
{
	v->efficiency = efficiency;
	v->capacity_n = v->capacity_outside = 0;
	v->capacity_max_abs = 0;
	v->worst = 0;
	double worst = -1;
	for (size_t i = 0; i < v->n; i++) {
		struct kvp_vpoint *p = &v->points[i];
		if (p->kind == KVP_VPOINT_CAPACITY) {
			p->error = rel((double)p->predicted.num_blocks, (double)p->blocks);
			p->sequences_error = rel((double)p->predicted.max_sequences,
						 (double)p->sequences);
			p->within = fabs(p->error) <= capacity_tolerance;
			v->capacity_n++;
			v->capacity_outside += !p->within;
			v->capacity_max_abs = fmax(v->capacity_max_abs, fabs(p->error));
			continue;
		}
		p->efficiency = efficiency > 0				  ? efficiency
				: efficiency < 0 && p->fit_efficiency > 0 ? p->fit_efficiency
									  : p->base_efficiency;
		p->predicted_s = p->unit_s / p->efficiency;
		p->error = rel(p->predicted_s, p->measured_s);
		p->within = fabs(p->error) <= tolerance;
		if (fabs(p->error) > worst) {
			worst = fabs(p->error);
			v->worst = i;
		}
	}
	double *scratch = malloc((v->n ? v->n : 1) * sizeof *scratch);
	decode_summary(v, false, scratch, &v->decode_n, &v->decode_outside, &v->decode_median_abs,
		       &v->decode_max_abs);
	decode_summary(v, true, scratch, &v->large_n, &v->large_outside, &v->large_median_abs,
		       &v->large_max_abs);
	free(scratch);
}

void kvp_validation_free(struct kvp_validation *v)
{
	free(v->points);
	memset(v, 0, sizeof *v);
}
