/* serve-sim-trace.c: reading a request trace for the serving simulator
 * (serve-sim.h): a CSV with a header that names its columns, in one of three
 * layouts — the Azure LLM inference traces (TIMESTAMP, ContextTokens,
 * GeneratedTokens; TIMESTAMP a wall-clock string such as
 * "2023-11-16 18:15:46.6805900", AzurePublicDataset
 * AzureLLMInferenceDataset2023.md), Vidur's processed traces (arrived_at,
 * num_prefill_tokens, num_decode_tokens; seconds) and kvplan's own
 * (arrival_s, prompt_tokens, output_tokens; seconds), or the same three keys
 * as JSON lines ({"arrival_s": 0.5, "prompt_tokens": 100, "output_tokens":
 * 20} a line).  Other columns and keys are ignored.  Azure times are taken
 * from the first row; the others are seconds as given. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/input-file.h"
#include "base/units.h"
#include "time/serve-sim.h"

static const struct {
	const char *format, *time, *prompt, *output;
} layouts[] = {
	{"azure", "TIMESTAMP", "ContextTokens", "GeneratedTokens"},
	{"vidur", "arrived_at", "num_prefill_tokens", "num_decode_tokens"},
	{"kvplan", "arrival_s", "prompt_tokens", "output_tokens"},
};
#define NLAYOUT (sizeof layouts / sizeof layouts[0])

/* Days from 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
 * days_from_civil). */
static long long days_from_civil(long long y, unsigned m, unsigned d)
{
	y -= m <= 2;
	long long era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (long long)doe - 719468;
}

/* "YYYY-MM-DD HH:MM:SS[.frac]" (or with a T) to seconds, or a plain number
 * of seconds.  false when it is neither. */
static bool parse_time(const char *s, double *out)
{
	if (s[0] == '-' && kvp_parse_double(s + 1, out) == 0) {
		*out = -*out;   /* a negative time, refused by the caller with its own message */
		return isfinite(*out);
	}
	if (kvp_parse_double(s, out) == 0)
		return isfinite(*out);
	int y, mo, d, h, mi, n = 0;
	double sec;
	char sep;
	if (sscanf(s, "%4d-%2d-%2d%c%2d:%2d:%lf%n", &y, &mo, &d, &sep, &h, &mi, &sec, &n) != 7 ||
	    s[n] != 0 || (sep != ' ' && sep != 'T') || mo < 1 || mo > 12 || d < 1 || d > 31 ||
	    h < 0 || h > 23 || mi < 0 || mi > 59 || !(sec >= 0 && sec < 61))
		return false;
	*out = (double)days_from_civil(y, (unsigned)mo, (unsigned)d) * 86400.0 + h * 3600.0 +
	       mi * 60.0 + sec;
	return true;
}

/* Split a line at commas in place (fields trimmed, surrounding quotes
 * dropped); cols[i] is field i's 1-based column.  Returns the count. */
static size_t split(char *line, char **f, int *cols, size_t max)
{
	size_t n = 0;
	char *p = line;
	for (;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		char *start = p;
		char *end = strchr(p, ',');
		char *stop = end ? end : p + strlen(p);
		char *e = stop;
		while (e > start && isspace((unsigned char)e[-1]))
			e--;
		if (e - start >= 2 && *start == '"' && e[-1] == '"') {
			start++;
			e--;
		}
		*e = 0;
		if (n < max) {
			f[n] = start;
			cols[n] = (int)(start - line) + 1;
			n++;
		}
		if (!end)
			break;
		p = end + 1;
	}
	return n;
}

/* One JSONL row: a flat object whose arrival_s, prompt_tokens and
 * output_tokens are numbers (other keys: numbers or strings without
 * escapes, ignored).  The three values are cut out in place into f[0..3)
 * with their columns; false with *bad the key (or "json") and *bad_col
 * where it went wrong. */
static bool json_row(char *line, char **f, int *cols, const char **bad, int *bad_col)
{
	static const char *const keys[3] = {"arrival_s", "prompt_tokens", "output_tokens"};
	char *p = line;
	f[0] = f[1] = f[2] = NULL;
	*bad = "json";
#define WS() while (*p == ' ' || *p == '\t') p++
#define FAIL() do { *bad_col = (int)(p - line) + 1; return false; } while (0)
	WS();
	if (*p++ != '{')
		FAIL();
	WS();
	bool more = *p != '}';
	if (!more)
		p++;
	while (more) {
		if (*p != '"')
			FAIL();
		char *key = ++p;
		while (*p && *p != '"' && *p != '\\')
			p++;
		if (*p != '"')
			FAIL();
		*p++ = 0;
		WS();
		if (*p++ != ':')
			FAIL();
		WS();
		char *val = p;
		if (*p == '"') {
			p++;
			while (*p && *p != '"' && *p != '\\')
				p++;
			if (*p++ != '"')
				FAIL();
		} else {
			while (*p && *p != ',' && *p != '}' && *p != ' ' && *p != '\t')
				p++;
		}
		char *end = p;
		WS();
		char sep = *p;
		if (sep != ',' && sep != '}')
			FAIL();
		*end = 0;
		for (int k = 0; k < 3; k++)
			if (strcmp(key, keys[k]) == 0) {
				f[k] = val;
				cols[k] = (int)(val - line) + 1;
			}
		p++;   /* past the separator, which *end = 0 may have overwritten */
		more = sep == ',';
		WS();
	}
	if (*p)
		FAIL();
	for (int k = 0; k < 3; k++)
		if (!f[k]) {
			*bad = keys[k];
			*bad_col = 1;
			return false;
		}
	return true;
#undef WS
#undef FAIL
}

#define MAXF 64

kvp_status kvp_serve_trace_load(const char *path, uint64_t max_len, struct kvp_serve_trace *out,
				struct kvp_error *err)
{
	memset(out, 0, sizeof *out);
	FILE *f;
	kvp_status st = kvp_input_open(path, &f, err);
	if (st)
		return st;
	char *line = NULL, *fld[MAXF];
	int col[MAXF];
	size_t lcap = 0, cap = 0;
	ssize_t len;
	int lineno = 0, ci[3] = {-1, -1, -1};
	bool jsonl = false;
	double t0 = 0, prev = 0;
	const char *names[3] = {0};
	while ((len = getline(&line, &lcap, f)) >= 0) {
		lineno++;
		while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = 0;
		if (len == 0 || line[0] == '#')
			continue;
		char *lead = line + strspn(line, " \t");
		size_t nf;
		if (*lead == '{' && (ci[0] < 0 || jsonl)) {
			const char *bad;
			int bad_col;
			if (ci[0] < 0) {
				jsonl = true;
				for (int k = 0; k < 3; k++) {
					ci[k] = k;
					names[k] = (const char *[]){"arrival_s", "prompt_tokens", "output_tokens"}[k];
				}
				snprintf(out->format, sizeof out->format, "kvplan-jsonl");
			}
			if (!json_row(line, fld, col, &bad, &bad_col)) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, bad_col, bad,
						   strcmp(bad, "json") == 0
						   ? "expected a flat JSON object such as {\"arrival_s\": 0.5, "
						     "\"prompt_tokens\": 100, \"output_tokens\": 20}"
						   : "missing from the object");
				goto fail;
			}
			nf = 3;
		} else if (jsonl) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1, "json",
					   "expected a JSON object on every line");
			goto fail;
		} else {
			nf = split(line, fld, col, MAXF);
		}
		if (ci[0] < 0) {
			for (size_t l = 0; l < NLAYOUT && ci[0] < 0; l++) {
				int c[3] = {-1, -1, -1};
				const char *want[3] = {layouts[l].time, layouts[l].prompt, layouts[l].output};
				for (size_t i = 0; i < nf; i++)
					for (int k = 0; k < 3; k++)
						if (strcmp(fld[i], want[k]) == 0)
							c[k] = (int)i;
				if (c[0] >= 0 && c[1] >= 0 && c[2] >= 0) {
					memcpy(ci, c, sizeof c);
					memcpy(names, want, sizeof want);
					snprintf(out->format, sizeof out->format, "%s", layouts[l].format);
				}
			}
			if (ci[0] < 0) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1, "header",
						   "expected the columns TIMESTAMP,ContextTokens,"
						   "GeneratedTokens (Azure), arrived_at,num_prefill_tokens,"
						   "num_decode_tokens (Vidur) or arrival_s,prompt_tokens,"
						   "output_tokens");
				goto fail;
			}
			continue;
		}
		double t;
		uint64_t v[2];
		for (int k = 0; k < 3; k++)
			if ((size_t)ci[k] >= nf) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, 1, names[k],
						   "missing: the row has %zu fields", nf);
				goto fail;
			}
		if (!parse_time(fld[ci[0]], &t)) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, col[ci[0]], names[0],
					   "expected seconds or a time such as 2023-11-16 18:15:46.68, "
					   "got '%s'", fld[ci[0]]);
			goto fail;
		}
		for (int k = 0; k < 2; k++)
			if (kvp_parse_u64(fld[ci[k + 1]], &v[k]) || v[k] == 0 ||
			    v[k] > KVP_DIST_MAX_TOKENS) {
				st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, col[ci[k + 1]],
						   names[k + 1], "expected a token count >= 1, got '%s'",
						   fld[ci[k + 1]]);
				goto fail;
			}
		if (out->n == 0)
			t0 = strcmp(out->format, "azure") == 0 ? t : 0;
		/* a wall-clock time before the first row's is out of order, not negative */
		if (t - t0 < 0 && out->n && strcmp(out->format, "azure") == 0) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, col[ci[0]], names[0],
					   "times must not decrease: %.6g s before the first row's",
					   t0 - t);
			goto fail;
		}
		if (t - t0 < 0) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, col[ci[0]], names[0],
					   "a negative time (%g s)", t - t0);
			goto fail;
		}
		if (t - t0 > 1e9) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, col[ci[0]], names[0],
					   "%g s from the start is beyond 1e9 s (31 years): a step's "
					   "milliseconds would vanish in its rounding", t - t0);
			goto fail;
		}
		if (out->n && t - t0 < prev) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, col[ci[0]], names[0],
					   "times must not decrease: %.9g s after %.9g s on the row "
					   "before", t - t0, prev);
			goto fail;
		}
		if (max_len && v[0] + v[1] > max_len) {
			st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno, col[ci[1]], names[1],
					   "%llu + %llu tokens is above max_model_len %llu",
					   (unsigned long long)v[0], (unsigned long long)v[1],
					   (unsigned long long)max_len);
			goto fail;
		}
		if (out->n == cap) {
			size_t nc = cap ? cap * 2 : 1024;
			void *q = realloc(out->rows, nc * sizeof *out->rows);
			if (!q) {
				st = kvp_error_set(err, KVP_STATUS_NOMEM, path, lineno, 0, NULL,
						   "out of memory");
				goto fail;
			}
			out->rows = q;
			cap = nc;
		}
		prev = t - t0;
		out->rows[out->n++] = (struct kvp_serve_trace_row){prev, v[0], v[1]};
	}
	if (ci[0] < 0 || out->n == 0) {
		st = kvp_error_set(err, KVP_STATUS_INVALID, path, lineno ? lineno : 1, 0, "rows",
				   "no requests in the trace");
		goto fail;
	}
	free(line);
	fclose(f);
	return KVP_STATUS_OK;
fail:
	free(line);
	fclose(f);
	kvp_serve_trace_free(out);
	return st;
}

void kvp_serve_trace_free(struct kvp_serve_trace *t)
{
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
}
