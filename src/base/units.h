/* units.h: sizes, rates and token counts: parsing, printing, checked arithmetic.
 *
 * Byte counts are uint64_t everywhere; every product or sum that can grow goes
 * through kvp_mul/kvp_add, which report overflow instead of wrapping.
 * Size suffixes, in any case ("80gb" = "80GB"): KiB MiB GiB TiB (powers of
 * 2), KB MB GB TB (powers of 10), B or none = bytes.  A bare K, M, G or T on
 * a size is refused as ambiguous: "80G" could be 80GB or 80GiB.  Rates are
 * bytes per second: "4.8TB/s", "25GB/s", "900GiB/s".  Token counts take
 * k/K = 1024 and m/M = 1048576, as in "128k context" = 131,072 tokens
 * (Llama-3.1's max_position_embeddings). */
#ifndef KVP_UNITS_H
#define KVP_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KVP_KIB 1024ULL
#define KVP_MIB (1024ULL * 1024ULL)
#define KVP_GIB (1024ULL * 1024ULL * 1024ULL)

/* a*b and a+b into *out; false (and *out untouched) on overflow. */
bool kvp_mul(uint64_t a, uint64_t b, uint64_t *out);
bool kvp_add(uint64_t a, uint64_t b, uint64_t *out);
/* ceil(a / b), b > 0. */
static inline uint64_t kvp_cdiv(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* Parsers return 0 on success, -1 on a malformed string, -2 on overflow or
 * out-of-range, kvp_parse_tokens -3 on a count that is not whole ("1.5"
 * is no token count; "1.5k" = 1,536 is), and kvp_parse_bytes and
 * kvp_parse_rate -4 on a bare K, M, G or T ("80G", "900G/s"): which of the
 * two the user meant is theirs to say (kvp_bytes_readings).  They reject signs, NaN, infinity
 * and hex floats: numbers are decimal (an exponent allowed: 1e-3). */
int kvp_parse_u64(const char *s, uint64_t *out);
int kvp_parse_bytes(const char *s, uint64_t *out);
int kvp_parse_tokens(const char *s, uint64_t *out);
int kvp_parse_rate(const char *s, double *bytes_per_s);
/* For a size or rate kvp_parse_bytes or kvp_parse_rate refused as
 * ambiguous (-4), the two readings into buf: "80GB (80,000,000,000 B) or
 * 80GiB (85,899,345,920 B)", "900GB/s or 900GiB/s"; a reading past 64 bits
 * says "over 64 bits".  false (buf untouched) for any other string.  A
 * buffer of KVP_BYTES_READINGS_SIZE always holds them: the number part is
 * under 64 characters, each reading's bytes 26 ("18,446,744,073,709,551,615"). */
#define KVP_BYTES_READINGS_SIZE 256
bool kvp_bytes_readings(const char *s, char *buf, size_t size);
/* A finite non-negative decimal number. */
int kvp_parse_double(const char *s, double *out);
/* "90%" or "0.9" -> 0.9; must lie in (0, 1]. */
int kvp_parse_fraction(const char *s, double *out);

/* "15.00 GiB", "512 B", "1.50 MiB": binary units, two decimals. */
void kvp_format_bytes(uint64_t bytes, char *buf, size_t size);
/* "4.80 TB/s": decimal units; from 10^9 PB/s on "1.000e+09 PB/s", never cut off. */
void kvp_format_rate(double bytes_per_s, char *buf, size_t size);
/* "1,234,567". */
void kvp_format_u64(uint64_t v, char *buf, size_t size);
/* v with `decimals` decimals and `unit` ("%.3f s"), in scientific notation
 * with decimals + 2 digits ("1.23457e+61 s") from |v| >= 10^15 on, where
 * fixed notation would need more digits than a 64-byte buffer holds: a
 * number is never cut.  A buffer of 32 + strlen(unit) bytes always holds it. */
void kvp_format_fixed(double v, int decimals, const char *unit, char *buf, size_t size);

#endif
