/* cmd-validate-print.c: how `kvplan validate` prints its comparison
 * (cmd-validate-print.h): the table, one section per kind of point; the
 * JSON and CSV records; and the caveats the statistics cannot show, as
 * warnings on stderr.  cmd-validate.c parses, loads and fits; this prints. */
#include "cli/cmd-validate-print.h"

#include <stdlib.h>
#include <string.h>

#include "out/output.h"
#include "base/units.h"

static const char *const cmd = "validate";

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

/* One point as a record: the same fields for every kind, so that CSV has
 * one header; `measured` and `predicted` are in `unit`. */
static struct kvp_record *point_record(const struct kvp_vpoint *p)
{
	struct kvp_record *r = kvp_record_new();
	if (!r)
		return NULL;
	bool dec = p->kind == KVP_VPOINT_DECODE;
	bool ok = kvp_record_str(r, "file", p->file) && kvp_record_u64(r, "line", (uint64_t)p->line) &&
		  kvp_record_str(r, "kind", dec ? "decode" : "capacity") &&
		  kvp_record_str(r, "backend", p->backend) &&
		  kvp_record_str(r, "kv_dtype", kvp_dtype_name(p->shape.kv_dtype)) &&
		  kvp_record_u64(r, "num_heads", p->shape.num_heads) &&
		  kvp_record_u64(r, "num_kv_heads", p->shape.num_kv_heads) &&
		  kvp_record_u64(r, "head_dim", p->shape.head_dim) &&
		  kvp_record_u64(r, "block_size", p->shape.block_size) &&
		  kvp_record_u64(r, "layers", p->shape.layers) &&
		  (dec ? kvp_record_u64(r, "batch", p->batch) : kvp_record_null(r, "batch")) &&
		  kvp_record_u64(r, "context", p->context) &&
		  (dec ? kvp_record_u64(r, "tokens", p->tokens) : kvp_record_null(r, "tokens")) &&
		  kvp_record_str(r, "lengths", p->lengths) &&
		  kvp_record_str(r, "basis", dec ? p->basis : "generic-budget") &&
		  (dec ? kvp_record_f64(r, "bandwidth_gbps", p->bandwidth_bps / 1e9) &&
			 kvp_record_f64(r, "efficiency", p->efficiency) &&
			 kvp_record_u64(r, "predicted_kv_bytes", p->kv_bytes)
		       : kvp_record_null(r, "bandwidth_gbps") && kvp_record_null(r, "efficiency") &&
			 kvp_record_null(r, "predicted_kv_bytes")) &&
		  kvp_record_str(r, "unit", dec ? "s" : "blocks") &&
		  kvp_record_f64(r, "measured", dec ? p->measured_s : (double)p->blocks) &&
		  kvp_record_f64(r, "predicted", dec ? p->predicted_s : (double)p->predicted.num_blocks) &&
		  kvp_record_f64(r, "error", p->error) &&
		  (dec ? kvp_record_null(r, "sequences") && kvp_record_null(r, "predicted_sequences")
		       : kvp_record_u64(r, "sequences", p->sequences) &&
			 kvp_record_u64(r, "predicted_sequences", p->predicted.max_sequences)) &&
		  kvp_record_bool(r, "within", p->within) &&
		  (dec ? kvp_record_bool(r, "large", p->large) : kvp_record_null(r, "large"));
	if (!ok) {
		kvp_record_free(r);
		return NULL;
	}
	return r;
}


void kvp_validate_caveats_find(struct kvp_validation *v, bool in_sample, enum kvp_fit_by by,
			       struct kvp_validate_caveats *c)
{
	memset(c, 0, sizeof *c);
	c->in_sample = in_sample;
	if (in_sample)
		kvp_validation_fit_degrees(v, by, &c->parameters, &c->points, &c->exact);
	for (size_t i = 0; i < v->n; i++)
		c->capacity_cpu += v->points[i].kind == KVP_VPOINT_CAPACITY &&
				   strcmp(v->points[i].backend, "cpu") == 0;
}

static bool fit_exact(const struct kvp_validate_caveats *c)
{
	return c->in_sample && c->points && c->parameters == c->points;
}

void kvp_validate_caveats_warn(const struct kvp_validate_caveats *c)
{
	if (fit_exact(c))
		fprintf(stderr, "kvplan %s: warning: the fit has as many efficiencies as points "
				"(%zu): it reproduces every fitted point by construction, so their "
				"0 %% error proves nothing; fit to another run (--calibration FILE) "
				"or measure more points per group\n", cmd, c->points);
	else if (c->in_sample && c->exact)
		fprintf(stderr, "kvplan %s: warning: %zu of %zu fitted group%s rest%s on one "
				"point, which the fit reproduces by construction (error 0)\n", cmd,
			c->exact, c->parameters, c->parameters == 1 ? "" : "s",
			c->exact == 1 ? "s" : "");
	if (c->capacity_cpu)
		fprintf(stderr, "kvplan %s: warning: %zu capacity point%s on the cpu backend: the "
				"budget's floor((limit - weights) / block) against the blocks malloc "
				"gave under the same limit agrees by construction; it checks the "
				"allocator, not the planner's budget (run --capacity on a GPU)\n",
			cmd, c->capacity_cpu, c->capacity_cpu == 1 ? "" : "s");
}

static void pct(char *buf, size_t size, double x)
{
	snprintf(buf, size, "%+.1f%%", 100 * x);
}

/* The table: one section per kind, the columns a reader compares. */
static void print_table(const struct kvp_validation *v, double tol, double cap_tol,
			bool large_only, const char *eff_note, const struct kvp_validate_caveats *cv)
{
	char a[64], b[64], e[32], heads[32], where[300];
	int w = 5; /* "point" */
	for (size_t i = 0; i < v->n; i++) {
		int len = snprintf(where, sizeof where, "%s:%d", base_name(v->points[i].file),
				   v->points[i].line);
		w = len > w ? (len < 48 ? len : 48) : w;
	}
	for (int kind = 0; kind < 2; kind++) {
		size_t n = kind == KVP_VPOINT_DECODE ? v->decode_n : v->capacity_n;
		if (!n)
			continue;
		if (kind == KVP_VPOINT_DECODE)
			printf("Decode step: measured median time vs the planner's (%s)\n\n"
			       "%-*s %-7s %-6s %-7s %4s %3s %4s %10s %-12s %5s %11s %11s %8s\n",
			       eff_note, w, "point", "backend", "kv", "heads", "d", "P", "B", "tokens",
			       "basis", "eff", "measured", "predicted", "error");
		else
			printf("%sCapacity: KV blocks allocated vs the generic budget's\n\n"
			       "%-*s %-7s %-6s %-7s %4s %3s %6s %12s %12s %8s %9s %9s\n",
			       v->decode_n ? "\n" : "", w, "point", "backend", "kv", "heads", "d", "P",
			       "layers", "blocks", "predicted", "error", "seqs", "predicted");
		for (size_t i = 0; i < v->n; i++) {
			const struct kvp_vpoint *p = &v->points[i];
			if ((int)p->kind != kind)
				continue;
			snprintf(where, sizeof where, "%s:%d", base_name(p->file), p->line);
			snprintf(heads, sizeof heads, "%u:%u", p->shape.num_heads, p->shape.num_kv_heads);
			pct(e, sizeof e, p->error);
			const char *mark = p->within			 ? ""
					   : !large_only || p->kind != KVP_VPOINT_DECODE || p->large
						? "  <- outside"
						: "  (small step, not judged)";
			if (kind == KVP_VPOINT_DECODE) {
				kvp_format_fixed(p->measured_s * 1e3, 3, " ms", a, sizeof a);
				kvp_format_fixed(p->predicted_s * 1e3, 3, " ms", b, sizeof b);
				printf("%-*.48s %-7s %-6s %-7s %4u %3u %4llu %10llu %-12.12s %5.3f %11s "
				       "%11s %8s%s\n",
				       w, where, p->backend, kvp_dtype_name(p->shape.kv_dtype), heads,
				       p->shape.head_dim, p->shape.block_size,
				       (unsigned long long)p->batch, (unsigned long long)p->tokens,
				       p->basis, p->efficiency, a, b, e, mark);
			} else {
				kvp_format_u64(p->blocks, a, sizeof a);
				kvp_format_u64(p->predicted.num_blocks, b, sizeof b);
				printf("%-*.48s %-7s %-6s %-7s %4u %3u %6u %12s %12s %8s %9llu %9llu%s\n",
				       w, where, p->backend, kvp_dtype_name(p->shape.kv_dtype), heads,
				       p->shape.head_dim, p->shape.block_size, p->shape.layers, a, b, e,
				       (unsigned long long)p->sequences,
				       (unsigned long long)p->predicted.max_sequences, mark);
			}
		}
	}
	printf("\n");
	if (v->decode_n) {
		const struct kvp_vpoint *w = &v->points[v->worst];
		printf("decode: %zu point(s), median |error| %.1f%%, worst %+.1f%% (%s:%d, %s %u:%u), "
		       "%zu outside +/-%.3g%%\n",
		       v->decode_n, 100 * v->decode_median_abs, 100 * w->error, base_name(w->file),
		       w->line, kvp_dtype_name(w->shape.kv_dtype), w->shape.num_heads,
		       w->shape.num_kv_heads, v->decode_outside, 100 * tol);
		if (v->large_n < v->decode_n)
			printf("decode, large steps: %zu point(s), median |error| %.1f%%, worst "
			       "%.1f%%, %zu outside +/-%.3g%%%s\n",
			       v->large_n, 100 * v->large_median_abs, 100 * v->large_max_abs,
			       v->large_outside, 100 * tol, large_only ? " (judged)" : "");
	}
	if (v->capacity_n)
		printf("capacity: %zu point(s), worst |error| %.2f%% in blocks, %zu outside "
		       "+/-%.3g%%\n",
		       v->capacity_n, 100 * v->capacity_max_abs, v->capacity_outside, 100 * cap_tol);
	if (v->skipped)
		printf("skipped: %zu point(s) that failed validation or were not timed\n", v->skipped);
	if (fit_exact(cv))
		printf("fit: %zu efficiencies on %zu points, exact by construction: the decode "
		       "errors of the fitted points prove nothing\n", cv->parameters, cv->points);
	else if (cv->in_sample && cv->points)
		printf("fit: %zu efficienc%s on %zu points (in sample); %zu group%s of one point, "
		       "exact by construction\n", cv->parameters, cv->parameters == 1 ? "y" : "ies",
		       cv->points, cv->exact, cv->exact == 1 ? "" : "s");
	if (cv->capacity_cpu)
		printf("capacity on the cpu: the blocks malloc gave under the budget's own limit; "
		       "agreement is by construction\n");
}

bool kvp_validate_failed(const struct kvp_validation *v, bool large_only)
{
	return (large_only ? v->large_outside : v->decode_outside) || v->capacity_outside;
}

static int write_records(const struct kvp_validation *v, enum kvp_format fmt, double tol,
			 double cap_tol, bool large_only, const char *eff_source, size_t fit_points,
			 const struct kvp_validate_caveats *cv)
{
	struct kvp_record **rows = calloc(v->n ? v->n : 1, sizeof *rows);
	struct kvp_record *top = kvp_record_new(), *sum = kvp_record_new();
	int rc = KVP_EXIT_OK;
	bool ok = rows && top && sum;
	for (size_t i = 0; ok && i < v->n; i++)
		ok = (rows[i] = point_record(&v->points[i])) != NULL;
	if (!ok) {
		fprintf(stderr, "kvplan %s: out of memory\n", cmd);
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	if (fmt == KVP_FORMAT_CSV) {
		kvp_write_csv(stdout, rows, v->n);
		goto out;
	}
	ok = kvp_record_str(top, "efficiency_source", eff_source) &&
	     (v->efficiency > 0 ? kvp_record_f64(top, "efficiency", v->efficiency)
				: kvp_record_null(top, "efficiency")) &&
	     kvp_record_u64(top, "fit_points", fit_points) &&
	     kvp_record_bool(top, "fit_in_sample", cv->in_sample) &&
	     kvp_record_u64(top, "fit_parameters", cv->parameters) &&
	     kvp_record_u64(top, "fit_exact_groups", cv->exact) &&
	     kvp_record_bool(top, "fit_exact_by_construction", fit_exact(cv)) &&
	     kvp_record_f64(sum, "tolerance", tol) &&
	     kvp_record_f64(sum, "capacity_tolerance", cap_tol) &&
	     kvp_record_u64(sum, "decode_points", v->decode_n) &&
	     kvp_record_u64(sum, "decode_outside", v->decode_outside) &&
	     kvp_record_f64(sum, "decode_median_abs_error", v->decode_median_abs) &&
	     kvp_record_f64(sum, "decode_max_abs_error", v->decode_max_abs) &&
	     kvp_record_u64(sum, "large_points", v->large_n) &&
	     kvp_record_u64(sum, "large_outside", v->large_outside) &&
	     kvp_record_f64(sum, "large_median_abs_error", v->large_median_abs) &&
	     kvp_record_f64(sum, "large_max_abs_error", v->large_max_abs) &&
	     kvp_record_u64(sum, "capacity_points", v->capacity_n) &&
	     kvp_record_u64(sum, "capacity_outside", v->capacity_outside) &&
	     kvp_record_f64(sum, "capacity_max_abs_error", v->capacity_max_abs) &&
	     kvp_record_u64(sum, "capacity_cpu_points", cv->capacity_cpu) &&
	     kvp_record_u64(sum, "skipped", v->skipped) &&
	     kvp_record_bool(sum, "large_only", large_only) &&
	     kvp_record_bool(sum, "all_within", !kvp_validate_failed(v, large_only)) &&
	     kvp_record_rec(top, "summary", sum);
	sum = NULL;
	for (size_t i = 0; ok && i < v->n; i++) {
		ok = kvp_record_push(top, "points", rows[i]);
		rows[i] = NULL;
	}
	if (!ok) {
		fprintf(stderr, "kvplan %s: out of memory\n", cmd);
		rc = KVP_EXIT_FAIL;
		goto out;
	}
	kvp_write_json(stdout, top);
out:
	for (size_t i = 0; rows && i < v->n; i++)
		kvp_record_free(rows[i]);
	free(rows);
	kvp_record_free(top);
	kvp_record_free(sum);
	return rc;
}

int kvp_validate_print(const struct kvp_validation *v, enum kvp_format fmt,
		       const struct kvp_validate_print_opts *o, const struct kvp_validate_caveats *cv)
{
	if (fmt != KVP_FORMAT_TABLE)
		return write_records(v, fmt, o->tol, o->cap_tol, o->large_only, o->eff_source,
				     o->fit_points, cv);
	char note[700];
	if (o->eff > 0)
		snprintf(note, sizeof note, "efficiency %.3f, %s", o->eff, o->eff_source);
	else if (o->eff < 0)
		snprintf(note, sizeof note, "efficiencies %s", o->eff_source);
	else
		snprintf(note, sizeof note, "uncalibrated: %s", o->eff_source);
	if (o->fit_points)
		snprintf(note + strlen(note), sizeof note - strlen(note),
			 ", median of %zu point(s)", o->fit_points);
	print_table(v, o->tol, o->cap_tol, o->large_only, note, cv);
	return KVP_EXIT_OK;
}
