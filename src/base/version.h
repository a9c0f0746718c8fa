/* version.h: engine version strings as the engines print them, compared and
 * matched against ranges.
 *
 * The grammar is PEP 440's public form with a leading "v" allowed (vLLM's
 * tags): [v]N(.N)*[{a|b|rc}N][.postN][.devN][+local], e.g. "v0.19.0",
 * "0.19.0+cu128", a nightly "0.11.1rc2.dev123+g1a2b3c".  Order follows PEP
 * 440: 1.0.dev1 < 1.0a1.dev1 < 1.0a1 < 1.0rc1 < 1.0 < 1.0.post1; missing
 * release parts are 0 (0.19 == 0.19.0); the local label (+...) is a build of
 * the same version and never changes the order.  A range is comma-separated
 * specifiers, all of which must hold: ">=0.19,<0.20", "==0.10.2"; as in PEP
 * 440, "<V" (V a final release) leaves out V's own pre-releases and nightlies
 * (0.20.0rc1.dev5 is not "<0.20": it is 0.20's code). */
#ifndef KVP_VERSION_H
#define KVP_VERSION_H

#include <stdbool.h>
#include <stdint.h>

#define KVP_VERSION_PARTS 6

struct kvp_version {
	uint32_t part[KVP_VERSION_PARTS]; /* release N.N.N..., missing parts 0 */
	uint32_t nparts;
	int pre;                          /* -1 none; 0 a, 1 b, 2 rc */
	uint32_t pre_num;
	bool post, dev;
	uint32_t post_num, dev_num;
};

/* Parse s into *out; false on anything outside the grammar (empty, a
 * number past UINT32_MAX, more than KVP_VERSION_PARTS release parts). */
bool kvp_version_parse(const char *s, struct kvp_version *out);

/* <0, 0, >0 as a sorts before, with, after b. */
int kvp_version_cmp(const struct kvp_version *a, const struct kvp_version *b);

/* Is `range` well-formed (specifiers ==, !=, >=, <=, >, < each followed by
 * a version, joined by commas, blanks allowed around them)? */
bool kvp_version_range_valid(const char *range);

/* Does v satisfy every specifier of range?  false for a malformed range. */
bool kvp_version_in_range(const struct kvp_version *v, const char *range);

/* A number that orders final releases (the first four parts, 1000 per step
 * of the last) for "which modelled version is nearest": |a - b| of two of
 * them.  A pre-release or nightly sits half a step below its release. */
double kvp_version_position(const struct kvp_version *v);

#endif
