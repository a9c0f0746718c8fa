/* fuzz-text.h: what the writer targets (fuzz-gnuplot, fuzz-json, fuzz-csv,
 * fuzz-xml, fuzz-tap, fuzz-shell) share: UTF-8 checked by RFC 3629's table of
 * well-formed byte sequences (a different method from src/base/utf8.c, which
 * decodes and range-checks), and a growing array of code points to compare a
 * writer's output, decoded by the target's own parser, with what the writer
 * should have kept of its input.  Header-only: each target includes it once. */
#ifndef KVP_FUZZ_TEXT_H
#define KVP_FUZZ_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The length of the well-formed sequence at s[0..n), 0 when none; its code
 * point in *cp.  RFC 3629 section 4, row by row. */
static size_t ft_seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	static const struct {
		unsigned char lo0, hi0, lo1, hi1;
		size_t len;
	} rows[] = {
		{0xc2, 0xdf, 0x80, 0xbf, 2}, {0xe0, 0xe0, 0xa0, 0xbf, 3}, {0xe1, 0xec, 0x80, 0xbf, 3},
		{0xed, 0xed, 0x80, 0x9f, 3}, {0xee, 0xef, 0x80, 0xbf, 3}, {0xf0, 0xf0, 0x90, 0xbf, 4},
		{0xf1, 0xf3, 0x80, 0xbf, 4}, {0xf4, 0xf4, 0x80, 0x8f, 4},
	};
	if (n == 0)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
		if (s[0] < rows[r].lo0 || s[0] > rows[r].hi0)
			continue;
		size_t len = rows[r].len;
		if (n < len || s[1] < rows[r].lo1 || s[1] > rows[r].hi1)
			return 0;
		for (size_t i = 2; i < len; i++)
			if (s[i] < 0x80 || s[i] > 0xbf)
				return 0;
		uint32_t v = s[0] & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
		for (size_t i = 1; i < len; i++)
			v = v << 6 | (s[i] & 0x3f);
		*cp = v;
		return len;
	}
	return 0;
}

struct ft_cps {
	uint32_t *v;
	size_t n, cap;
};

static void ft_push(struct ft_cps *a, uint32_t cp)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		a->v = realloc(a->v, a->cap * sizeof *a->v);
		if (!a->v)
			abort();
	}
	a->v[a->n++] = cp;
}

static bool ft_equal(const struct ft_cps *a, const struct ft_cps *b)
{
	return a->n == b->n && (a->n == 0 || memcmp(a->v, b->v, a->n * sizeof *a->v) == 0);
}

/* The input as code points, a byte that starts no well-formed sequence as
 * U+FFFD (one per byte, as the writers replace them). */
static void ft_decode_lossy(const char *s, struct ft_cps *out)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = strlen(s);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = ft_seq(p + i, n - i, &cp);
		ft_push(out, len ? cp : 0xfffd);
		i += len ? len : 1;
	}
}

/* What a writer should keep of s: its code points (ft_decode_lossy), each
 * through the writer's documented replacement `map`. */
static void ft_expect(const char *s, uint32_t (*map)(uint32_t), struct ft_cps *want)
{
	struct ft_cps in = {0};
	ft_decode_lossy(s, &in);
	for (size_t i = 0; i < in.n; i++)
		ft_push(want, map(in.v[i]));
	free(in.v);
}

/* What a writer wrote, in memory: (buf, len) from open_memstream. */
struct ft_out {
	char *buf;
	size_t len;
	FILE *f;
};

static FILE *ft_open(struct ft_out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	if (!o->f)
		abort();
	return o->f;
}

static void ft_close(struct ft_out *o)
{
	if (fclose(o->f) != 0)
		abort();
	o->f = NULL;
}

/* o = what `writer` writes of s; a writer never writes a NUL. */
static void ft_write(void (*writer)(FILE *, const char *), const char *s, struct ft_out *o)
{
	writer(ft_open(o), s);
	ft_close(o);
	if (strlen(o->buf) != o->len) {
		fprintf(stderr, "invariant broken: a NUL in a writer's output\n");
		abort();
	}
}

#endif
