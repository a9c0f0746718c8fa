/* dist.h: request length distributions and a seeded random generator.
 *
 * Specs, as users type them after --prompt / --output or in a workload file:
 *   fixed:N                 every request N tokens
 *   uniform:LO,HI           integers in [LO, HI]
 *   normal:MEAN,SD          rounded, clamped to [1, max]
 *   lognormal:MEDIAN,SIGMA  exp(N(ln MEDIAN, SIGMA)), rounded, >= 1
 *   zipf:MAX,S              a long tail: P(n) ~ n^-S over [1, MAX]
 * Empirical lengths come from a workload's file (workload.h).  Sampling is
 * deterministic for a seed (xoshiro256**). */
#ifndef KVP_DIST_H
#define KVP_DIST_H

#include <stddef.h>
#include <stdint.h>

#include "base/error.h"

/* The longest length a spec or a sample may have (2^32 tokens), so that sums
 * of a few lengths never overflow. */
#define KVP_DIST_MAX_TOKENS (1ULL << 32)

struct kvp_rng {
	uint64_t s[4];
};

void kvp_rng_seed(struct kvp_rng *r, uint64_t seed);
uint64_t kvp_rng_next(struct kvp_rng *r);
/* uniform in [0, 1) */
double kvp_rng_uniform(struct kvp_rng *r);

enum kvp_dist_kind {
	KVP_DIST_FIXED,
	KVP_DIST_UNIFORM,
	KVP_DIST_NORMAL,
	KVP_DIST_LOGNORMAL,
	KVP_DIST_ZIPF,
	KVP_DIST_EMPIRICAL
};

struct kvp_dist {
	enum kvp_dist_kind kind;
	double a, b;             /* the spec's two parameters */
	uint64_t *values;        /* empirical: owned */
	size_t n;
};

/* Parse a spec; errors name `field` (e.g. "--prompt" or "prompt"). */
kvp_status kvp_dist_parse(const char *spec, const char *field, struct kvp_dist *out,
			  struct kvp_error *err);
/* An empirical distribution over a copy of values[0..n). */
kvp_status kvp_dist_empirical(const uint64_t *values, size_t n, struct kvp_dist *out);
void kvp_dist_free(struct kvp_dist *d);

/* One length >= 1 (0 only for fixed:0). */
uint64_t kvp_dist_sample(const struct kvp_dist *d, struct kvp_rng *r);
double kvp_dist_mean(const struct kvp_dist *d);
/* The p-quantile, p in [0, 1]. */
uint64_t kvp_dist_quantile(const struct kvp_dist *d, double p);
/* Write the spec back ("lognormal:1200,0.8", "empirical:N"). */
void kvp_dist_format(const struct kvp_dist *d, char *buf, size_t size);

#endif
