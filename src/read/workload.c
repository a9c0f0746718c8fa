/* workload.c: serving workloads (profiles/workloads/NAME.yaml) and empirical
 * length files, read with the YAML walker's located errors.
 *
 * Stance: a workload describes requests, not a server.  Every key is checked
 * (unknown keys, wrong types and out-of-range values are errors at
 * file:line:col, as in the other profiles); lengths come either from two
 * distribution specs (dist.h) or from a file of (prompt, output) rows, which
 * are then sampled as pairs so that a long prompt keeps its own output.
 * max_len caps prompt + output the way an engine's max_model_len does: a
 * prompt is cut to max_len and the output to what is left. */
#include "read/workload.h"

#include <sys/stat.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/input-file.h"
#include "read/profile.h"
#include "base/units.h"
#include "base/yaml-walk.h"

/* The most rows a length file may hold (two 8-byte values each). */
#define KVP_WORKLOAD_MAX_ROWS (16u * 1024u * 1024u)

/* ------------------------------------------------------------ length files */

struct rows {
	uint64_t *prompt, *output;
	double *arrival;          /* the optional third CSV column */
	size_t n, cap;
	int cols;                 /* 0 before the first row, then 2 or 3 */
};

static bool rows_push(struct rows *r, uint64_t p, uint64_t o)
{
	if (r->n == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 1024;
		uint64_t *np = realloc(r->prompt, cap * sizeof *np);
		if (!np)
			return false;
		r->prompt = np;
		uint64_t *no = realloc(r->output, cap * sizeof *no);
		if (!no)
			return false;
		r->output = no;
		double *na = realloc(r->arrival, cap * sizeof *na);
		if (!na)
			return false;
		r->arrival = na;
		r->cap = cap;
	}
	r->prompt[r->n] = p;
	r->output[r->n] = o;
	r->n++;
	return true;
}

static void rows_free(struct rows *r)
{
	free(r->prompt);
	free(r->output);
	free(r->arrival);
}

/* Range checks shared by both file formats: a prompt of at least one token,
 * an output of zero or more. */
static const char *check_row(uint64_t p, uint64_t o)
{
	if (p < 1)
		return "prompt";
	if (p > KVP_DIST_MAX_TOKENS)
		return "prompt";
	if (o > KVP_DIST_MAX_TOKENS)
		return "output";
	return NULL;
}

/* One CSV cell [s, e) as a token count. */
static bool csv_number(const char *s, const char *e, uint64_t *out)
{
	char buf[64];
	while (s < e && isspace((unsigned char)*s))
		s++;
	while (e > s && isspace((unsigned char)e[-1]))
		e--;
	if (e - s <= 0 || (size_t)(e - s) >= sizeof buf)
		return false;
	memcpy(buf, s, (size_t)(e - s));
	buf[e - s] = '\0';
	return kvp_parse_u64(buf, out) == 0;
}

static bool is_header(const char *line)
{
	char buf[64];
	size_t k = 0;
	for (const char *p = line; *p && *p != '\n' && *p != '\r' && k + 1 < sizeof buf; p++)
		if (!isspace((unsigned char)*p))
			buf[k++] = (char)tolower((unsigned char)*p);
	buf[k] = '\0';
	return strcmp(buf, "prompt,output") == 0 || strcmp(buf, "prompt,output,arrival_s") == 0;
}

/* Length files larger than this are refused (the Azure 2023 conversation
 * trace, 19,366 rows, is under 1 MiB). */
#define KVP_LENGTHS_MAX_BYTES (256ULL << 20)

static kvp_status load_csv(const char *path, struct rows *r, struct kvp_error *err)
{
	FILE *f;
	kvp_status ost = kvp_input_open(path, &f, err);
	if (ost)
		return ost;
	/* a regular file of bounded size: a device or a pipe could be endless */
	struct stat sb;
	if (fstat(fileno(f), &sb) != 0 || !S_ISREG(sb.st_mode) ||
	    (uint64_t)sb.st_size > KVP_LENGTHS_MAX_BYTES) {
		fclose(f);
		return kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, NULL,
				     "not a regular file of at most %u MiB",
				     (unsigned)(KVP_LENGTHS_MAX_BYTES >> 20));
	}
	char line[512];
	int lineno = 0;
	kvp_status st = KVP_STATUS_OK;
	bool first = true;
	while (fgets(line, sizeof line, f)) {
		lineno++;
		size_t len = strlen(line);
		if (len == 0 || (len < sizeof line - 1 && line[len - 1] != '\n' && !feof(f))) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, (int)len + 1, NULL,
					   "NUL byte in a text file");
			goto out;
		}
		if (len == sizeof line - 1 && line[len - 1] != '\n') {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1, NULL,
					   "line longer than %zu characters", sizeof line - 2);
			goto out;
		}
		const char *s = line;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s == '\0' || *s == '\n' || *s == '\r' || *s == '#')
			continue;
		if (first && !isdigit((unsigned char)*s)) {
			first = false;
			if (is_header(s))
				continue;
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, (int)(s - line) + 1,
					   NULL, "expected the header 'prompt,output' or a row of two "
					   "token counts");
			goto out;
		}
		first = false;
		const char *comma = strchr(s, ',');
		const char *end = s + strcspn(s, "\r\n"), *third = NULL;
		if (comma && comma < end)
			third = memchr(comma + 1, ',', (size_t)(end - comma - 1));
		int cols = third ? 3 : 2;
		if (!comma || comma > end || (third && memchr(third + 1, ',', (size_t)(end - third - 1))) ||
		    (r->cols && cols != r->cols)) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1, NULL,
					   "expected two columns, prompt,output, or three on every "
					   "row, prompt,output,arrival_s");
			goto out;
		}
		r->cols = cols;
		uint64_t p, o;
		if (!csv_number(s, comma, &p)) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, (int)(s - line) + 1,
					   "prompt", "expected a whole number of tokens");
			goto out;
		}
		double at = 0;
		if (third) {
			char cell[64];
			const char *a = third + 1, *b = end;
			while (a < b && isspace((unsigned char)*a))
				a++;
			while (b > a && isspace((unsigned char)b[-1]))
				b--;
			snprintf(cell, sizeof cell, "%.*s", (int)(b - a), a);
			if (b - a <= 0 || (size_t)(b - a) >= sizeof cell || kvp_parse_double(cell, &at) ||
			    (r->n && at < r->arrival[r->n - 1])) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno,
						   (int)(third + 1 - line) + 1, "arrival_s",
						   "expected seconds, finite, not before the row above");
				goto out;
			}
		}
		if (!csv_number(comma + 1, third ? third : end, &o)) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno,
					   (int)(comma + 1 - line) + 1, "output",
					   "expected a whole number of tokens");
			goto out;
		}
		const char *which = check_row(p, o);
		if (which) {
			bool pr = strcmp(which, "prompt") == 0;
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno,
					   pr ? (int)(s - line) + 1 : (int)(comma + 1 - line) + 1, which,
					   pr ? "must be between 1 and 2^32 tokens"
					      : "must be at most 2^32 tokens");
			goto out;
		}
		if (r->n >= KVP_WORKLOAD_MAX_ROWS) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1, NULL,
					   "more than %u rows", KVP_WORKLOAD_MAX_ROWS);
			goto out;
		}
		if (!rows_push(r, p, o)) {
			st = kvp_error_set(err, KVP_STATUS_NOMEM, path, lineno, 1, NULL, "out of memory");
			goto out;
		}
		r->arrival[r->n - 1] = at;
	}
	if (ferror(f))
		st = kvp_error_set(err, KVP_STATUS_IO, path, 0, 0, NULL, "read error");
out:
	fclose(f);
	return st;
}

static kvp_status load_yaml_rows(const char *path, struct rows *r, struct kvp_error *err)
{
	static const char *const keys[] = {"prompt", "output", NULL};
	struct kvp_doc *doc;
	kvp_status st = kvp_doc_load_file(path, &doc, err);
	if (st)
		return st;
	if (!doc->root) {
		st = kvp_node_fail(doc, NULL, err, KVP_STATUS_INVALID, NULL, "no rows");
		goto out;
	}
	if ((st = kvp_node_expect(doc, doc->root, "lengths", KVP_NODE_SEQ, err)))
		goto out;
	for (size_t i = 0; i < doc->root->n; i++) {
		const struct kvp_node *it = doc->root->items[i], *pn, *on;
		uint64_t p, o;
		if ((st = kvp_node_expect(doc, it, "lengths", KVP_NODE_MAP, err)) ||
		    (st = kvp_map_only(doc, it, keys, err)))
			goto out;
		pn = kvp_map_get(it, "prompt");
		on = kvp_map_get(it, "output");
		if (!pn || !on) {
			st = kvp_node_fail(doc, it, err, KVP_STATUS_INVALID, pn ? "output" : "prompt",
					   "missing required key");
			goto out;
		}
		if ((st = kvp_node_u64(doc, pn, "prompt", &p, err)) ||
		    (st = kvp_node_u64(doc, on, "output", &o, err)))
			goto out;
		const char *which = check_row(p, o);
		if (which) {
			st = kvp_node_fail(doc, strcmp(which, "prompt") == 0 ? pn : on, err,
					   KVP_STATUS_INVALID, which, "%s",
					   strcmp(which, "prompt") == 0 ? "must be between 1 and 2^32 tokens"
									 : "must be at most 2^32 tokens");
			goto out;
		}
		if (!rows_push(r, p, o)) {
			st = kvp_node_fail(doc, it, err, KVP_STATUS_NOMEM, NULL, "out of memory");
			goto out;
		}
	}
out:
	kvp_doc_free(doc);
	return st;
}

/* The extension of path's last component, with its dot ("" when none). */
static const char *extension(const char *path)
{
	const char *base = strrchr(path, '/'), *dot;
	dot = strrchr(base ? base + 1 : path, '.');
	return dot ? dot : "";
}

/* The file stem of path ("dir/chat.yaml" -> "chat"). */
static void stem(const char *path, char *buf, size_t size)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	const char *dot = strrchr(base, '.');
	size_t len = dot && dot != base ? (size_t)(dot - base) : strlen(base);
	snprintf(buf, size, "%.*s", (int)len, base);
}

/* Read a length file into out->prompt and out->output (empirical, paired).
 * .yaml/.yml/.json files hold a list of {prompt, output}; anything else is
 * CSV with an optional "prompt,output" header, '#' comments and blank lines.
 * Prompts must be >= 1 token; outputs may be 0.  Other fields of *out are
 * left as they are (the name is set from the file when empty). */
kvp_status kvp_workload_load_lengths(const char *path, struct kvp_workload *out,
				     struct kvp_error *err)
{
	struct rows r = {0};
	kvp_status st;
	const char *ext = extension(path);
	if (!strcmp(ext, ".yaml") || !strcmp(ext, ".yml") || !strcmp(ext, ".json"))
		st = load_yaml_rows(path, &r, err);
	else
		st = load_csv(path, &r, err);
	if (!st && r.n == 0)
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, 0, 0, NULL,
				   "no rows of prompt,output lengths");
	if (st)
		goto out;
	struct kvp_dist p, o;
	if ((st = kvp_dist_empirical(r.prompt, r.n, &p))) {
		kvp_error_set(err, st, path, 0, 0, NULL, "out of memory");
		goto out;
	}
	if ((st = kvp_dist_empirical(r.output, r.n, &o))) {
		kvp_dist_free(&p);
		kvp_error_set(err, st, path, 0, 0, NULL, "out of memory");
		goto out;
	}
	kvp_dist_free(&out->prompt);
	kvp_dist_free(&out->output);
	out->prompt = p;
	out->output = o;
	out->paired = true;
	free(out->arrival_s);
	out->arrival_s = NULL;
	out->narrival = 0;
	if (r.cols == 3) {
		/* the rows' own arrival times: the workload replays them in order */
		out->arrival_s = r.arrival;
		out->narrival = r.n;
		r.arrival = NULL;
	}
	if (!out->name[0])
		stem(path, out->name, sizeof out->name);
out:
	rows_free(&r);
	return st;
}

/* ------------------------------------------------------------ profiles */

/* A token count node: a whole number, or one with a k/m suffix ("8k"). */
static kvp_status node_tokens(const struct kvp_doc *doc, const struct kvp_node *node,
			      const char *field, uint64_t *out, struct kvp_error *err)
{
	kvp_status st = kvp_node_expect(doc, node, field, KVP_NODE_SCALAR, err);
	if (st)
		return st;
	if (node->value[0] == '-')
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, field,
				     "must not be negative (got %s)", node->value);
	int rc = kvp_parse_tokens(node->value, out);
	if (rc == -2 || (rc == 0 && *out > KVP_DIST_MAX_TOKENS))
		return kvp_node_fail(doc, node, err, KVP_STATUS_OVERFLOW, field,
				     "%s is more than 2^32 tokens", node->value);
	if (rc)
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, field,
				     "expected a token count such as 8192 or 8k, got '%s'",
				     node->value);
	return KVP_STATUS_OK;
}

/* A number in (lo, hi] (or [lo, hi] when lo_closed). */
static kvp_status node_range(const struct kvp_doc *doc, const struct kvp_node *node,
			     const char *field, double lo, bool lo_closed, double hi, double *out,
			     struct kvp_error *err)
{
	kvp_status st = kvp_node_double(doc, node, field, out, err);
	if (st)
		return st;
	if ((lo_closed ? *out < lo : *out <= lo) || *out > hi)
		return kvp_node_fail(doc, node, err, KVP_STATUS_INVALID, field,
				     "must lie in %s%g, %g], got %s", lo_closed ? "[" : "(", lo, hi,
				     node->value);
	return KVP_STATUS_OK;
}

static kvp_status node_dist(const struct kvp_doc *doc, const struct kvp_node *node,
			    const char *field, struct kvp_dist *out, struct kvp_error *err)
{
	char spec[128];
	kvp_status st = kvp_node_str(doc, node, field, spec, sizeof spec, err);
	if (st)
		return st;
	struct kvp_error e2 = {0};
	if ((st = kvp_dist_parse(spec, field, out, &e2)))
		return kvp_node_fail(doc, node, err, st, field, "%s", e2.msg);
	return KVP_STATUS_OK;
}

static kvp_status read_prefix(const struct kvp_doc *doc, const struct kvp_node *sec,
			      struct kvp_workload *w, struct kvp_error *err)
{
	static const char *const keys[] = {"tokens", "fraction", NULL};
	const struct kvp_node *t, *f;
	kvp_status st;
	if ((st = kvp_node_expect(doc, sec, "shared_prefix", KVP_NODE_MAP, err)) ||
	    (st = kvp_map_only(doc, sec, keys, err)))
		return st;
	if (!(t = kvp_map_get(sec, "tokens")))
		return kvp_node_fail(doc, sec, err, KVP_STATUS_INVALID, "shared_prefix.tokens",
				     "missing required key");
	if ((st = node_tokens(doc, t, "shared_prefix.tokens", &w->prefix_tokens, err)))
		return st;
	if (w->prefix_tokens == 0)
		return kvp_node_fail(doc, t, err, KVP_STATUS_INVALID, "shared_prefix.tokens",
				     "must be positive");
	w->prefix_fraction = 1.0;
	if ((f = kvp_map_get(sec, "fraction")) &&
	    (st = node_range(doc, f, "shared_prefix.fraction", 0, true, 1, &w->prefix_fraction, err)))
		return st;
	return KVP_STATUS_OK;
}

static kvp_status read_slo(const struct kvp_doc *doc, const struct kvp_node *sec,
			   struct kvp_workload *w, struct kvp_error *err)
{
	static const char *const keys[] = {"ttft_s", "tpot_s", "percentile", NULL};
	const struct kvp_node *n;
	kvp_status st;
	if ((st = kvp_node_expect(doc, sec, "slo", KVP_NODE_MAP, err)) ||
	    (st = kvp_map_only(doc, sec, keys, err)))
		return st;
	if ((n = kvp_map_get(sec, "ttft_s")) &&
	    (st = node_range(doc, n, "slo.ttft_s", 0, false, 3600, &w->slo_ttft_s, err)))
		return st;
	if ((n = kvp_map_get(sec, "tpot_s")) &&
	    (st = node_range(doc, n, "slo.tpot_s", 0, false, 60, &w->slo_tpot_s, err)))
		return st;
	if ((n = kvp_map_get(sec, "percentile")) &&
	    (st = node_range(doc, n, "slo.percentile", 0, false, 100, &w->slo_percentile, err)))
		return st;
	return KVP_STATUS_OK;
}

/* Load a workload profile by name (profiles/workloads/NAME.yaml, through the
 * profile search path) or path.  On failure *out holds nothing to free. */
kvp_status kvp_workload_load(const char *name_or_path, struct kvp_workload *out,
			     struct kvp_error *err)
{
	static const char *const keys[] = {"name", "description", "prompt", "output", "lengths",
					   "max_len", "arrival_rate", "concurrent_users",
					   "shared_prefix", "slo", NULL};
	char path[512];
	memset(out, 0, sizeof *out);
	out->slo_percentile = 50;
	kvp_status st = kvp_profile_resolve("workloads", name_or_path, path, sizeof path, err);
	if (st)
		return st;
	struct kvp_doc *doc;
	if ((st = kvp_doc_load_file(path, &doc, err)))
		return st;
	snprintf(out->path, sizeof out->path, "%s", path);
	const struct kvp_node *root = doc->root, *n, *np, *no, *nl;
	if (!root) {
		st = kvp_node_fail(doc, NULL, err, KVP_STATUS_INVALID, NULL, "empty workload");
		goto out;
	}
	if ((st = kvp_node_expect(doc, root, "", KVP_NODE_MAP, err)) ||
	    (st = kvp_map_only(doc, root, keys, err)))
		goto out;
	if (!(n = kvp_map_get(root, "name"))) {
		st = kvp_node_fail(doc, root, err, KVP_STATUS_INVALID, "name", "missing required key");
		goto out;
	}
	if ((st = kvp_node_str(doc, n, "name", out->name, sizeof out->name, err)))
		goto out;
	char want[128];
	stem(path, want, sizeof want);
	if (!strcmp(extension(path), ".yaml") && strcmp(want, out->name) != 0) {
		st = kvp_node_fail(doc, n, err, KVP_STATUS_INVALID, "name",
				   "'%s' differs from the file name '%s'", out->name, want);
		goto out;
	}
	if ((n = kvp_map_get(root, "description")) &&
	    (st = kvp_node_expect(doc, n, "description", KVP_NODE_SCALAR, err)))
		goto out;
	np = kvp_map_get(root, "prompt");
	no = kvp_map_get(root, "output");
	nl = kvp_map_get(root, "lengths");
	if (nl && (np || no)) {
		st = kvp_node_fail(doc, nl, err, KVP_STATUS_INVALID, "lengths",
				   "give either lengths or prompt and output, not both");
		goto out;
	}
	if (!nl && (!np || !no)) {
		st = kvp_node_fail(doc, root, err, KVP_STATUS_INVALID, np ? "output" : "prompt",
				   "missing required key (or give lengths: FILE)");
		goto out;
	}
	if (nl) {
		char rel[512], file[1100];
		if ((st = kvp_node_str(doc, nl, "lengths", rel, sizeof rel, err)))
			goto out;
		const char *slash = strrchr(path, '/');
		if (rel[0] == '/' || !slash)
			snprintf(file, sizeof file, "%s", rel);
		else
			snprintf(file, sizeof file, "%.*s/%s", (int)(slash - path), path, rel);
		struct kvp_error e2 = {0};
		if ((st = kvp_workload_load_lengths(file, out, &e2))) {
			/* the file's own location when it has one, else the key's */
			if (e2.line > 0 || e2.status != KVP_STATUS_IO)
				*err = e2;
			else
				kvp_node_fail(doc, nl, err, st, "lengths", "%s: %s", file, e2.msg);
			goto out;
		}
	} else if ((st = node_dist(doc, np, "prompt", &out->prompt, err)) ||
		   (st = node_dist(doc, no, "output", &out->output, err))) {
		goto out;
	}
	if ((n = kvp_map_get(root, "max_len"))) {
		if ((st = node_tokens(doc, n, "max_len", &out->max_len, err)))
			goto out;
		if (out->max_len == 0) {
			st = kvp_node_fail(doc, n, err, KVP_STATUS_INVALID, "max_len",
					   "must be positive");
			goto out;
		}
	}
	if ((n = kvp_map_get(root, "arrival_rate")) &&
	    (st = node_range(doc, n, "arrival_rate", 0, false, 1e9, &out->arrival_rate, err)))
		goto out;
	if ((n = kvp_map_get(root, "concurrent_users"))) {
		if ((st = kvp_node_u64(doc, n, "concurrent_users", &out->concurrent_users, err)))
			goto out;
		if (out->concurrent_users == 0) {
			st = kvp_node_fail(doc, n, err, KVP_STATUS_INVALID, "concurrent_users",
					   "must be positive");
			goto out;
		}
	}
	if ((n = kvp_map_get(root, "shared_prefix")) && (st = read_prefix(doc, n, out, err)))
		goto out;
	if (out->max_len && out->prefix_tokens >= out->max_len) {
		st = kvp_node_fail(doc, kvp_map_get(kvp_map_get(root, "shared_prefix"), "tokens"), err,
				   KVP_STATUS_INVALID, "shared_prefix.tokens",
				   "%llu tokens leave no room under max_len %llu",
				   (unsigned long long)out->prefix_tokens,
				   (unsigned long long)out->max_len);
		goto out;
	}
	if ((n = kvp_map_get(root, "slo")) && (st = read_slo(doc, n, out, err)))
		goto out;
out:
	if (st)
		kvp_workload_free(out);
	kvp_doc_free(doc);
	return st;
}

/* One request: a pair from a length file, or independent draws; then capped
 * by max_len (prompt to max_len, output to what the prompt leaves). */
void kvp_workload_sample(const struct kvp_workload *w, struct kvp_rng *r, uint64_t *prompt,
			 uint64_t *output)
{
	uint64_t p, o;
	if (w->paired && w->prompt.n && w->prompt.n == w->output.n) {
		size_t i = (size_t)(((unsigned __int128)kvp_rng_next(r) * w->prompt.n) >> 64);
		p = w->prompt.values[i];
		o = w->output.values[i];
	} else {
		p = kvp_dist_sample(&w->prompt, r);
		o = kvp_dist_sample(&w->output, r);
	}
	if (w->max_len) {
		if (p > w->max_len)
			p = w->max_len;
		if (o > w->max_len - p)
			o = w->max_len - p;
	}
	*prompt = p;
	*output = o;
}

void kvp_workload_free(struct kvp_workload *w)
{
	if (!w)
		return;
	kvp_dist_free(&w->prompt);
	kvp_dist_free(&w->output);
	free(w->arrival_s);
	w->arrival_s = NULL;
	w->narrival = 0;
}
