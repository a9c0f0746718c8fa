/* check-private.h: what the files of `kvplan check` (check-*.c) share and no
 * caller needs: assertion values and selector characters (check-expect.c),
 * a scenario's walk (check-scenario.c), the command table
 * (check-commands.c), values and row keys as text (check-eval.c), YAML
 * strings (check-baseline.c) and a test point's name and message
 * (check-run.c).  Callers include checks.h alone. */
#ifndef KVP_CHECK_PRIVATE_H
#define KVP_CHECK_PRIVATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "check/checks.h"
#include "out/output.h"
#include "base/yaml-walk.h"

/* check-expect.c */
/* Parse an expected value's text (already trimmed) into v; quoted says the
 * YAML scalar or the text itself was quoted. */
void kvp_check_value_parse(const char *text, bool quoted, struct kvp_check_value *v);
/* A character of a row selector's value: letters, digits, _ . - + */
bool kvp_check_is_sel_char(char c);
/* One `expect:` item (a scalar or a one-key map) into a; errors carry
 * file:line:col of the bad part. */
kvp_status kvp_check_assert_parse(const struct kvp_doc *doc, const struct kvp_node *node,
				  struct kvp_check_assert *a, struct kvp_error *err);

/* check-scenario.c: the walk of one document's scenarios (its folder, the
 * defaults, one scratch), whatever their number.  new walks `defaults:`
 * (defs, NULL when absent) and fails as the file would; doc must outlive
 * the walk.  scenario reads one scenario's mapping into s (the defaults
 * first; its name required), finish checks what the file's duplicate check
 * comes before (model, gpu, the keys that go together).  s's blocks are
 * freed by kvp_check_scenario_clear, also after a failure. */
struct kvp_check_walk;
kvp_status kvp_check_walk_new(const struct kvp_doc *doc, const struct kvp_node *defs,
			      struct kvp_check_walk **out, struct kvp_error *err);
void kvp_check_walk_free(struct kvp_check_walk *k);
kvp_status kvp_check_walk_scenario(struct kvp_check_walk *k, const struct kvp_node *m,
				   struct kvp_check_scenario *s, struct kvp_error *err);
kvp_status kvp_check_walk_finish(const struct kvp_check_walk *k, const struct kvp_node *m,
				 const struct kvp_check_scenario *s, struct kvp_error *err);

/* check-commands.c: a command kind and its scenario -> record function. */
struct kvp_check_command {
	const char *name;
	kvp_check_run_fn run;
};
/* The command kind called name, or NULL. */
const struct kvp_check_command *kvp_check_command_find(const char *name);

/* check-eval.c */
/* The value as text; byte counts also in binary units ("61203283968 (57.00 GiB)"). */
void kvp_check_value_text(const char *field, const struct kvp_value *v, char *buf, size_t size);
/* Row i's key, the selector that names it among the rows of list
 * ("batch=8", "policy=paged,block_size=16"). */
void kvp_check_row_key(const struct kvp_value *list, size_t i, char *buf, size_t size);

/* The scenario behind outcome res of scenario i: res->scenario, or the
 * file's i-th for a report put together without it (kvp_check_load kept
 * them all).  Here, not in check-run.c: the writers and the baseline
 * comparison, which check-run.c calls, read it. */
static inline const struct kvp_check_scenario *
kvp_check_ran(const struct kvp_check_report *r, size_t i,
	      const struct kvp_check_scenario_result *res)
{
	return res->scenario ? res->scenario : &r->file->scenarios[i];
}

/* check-run.c */
/* The name of a test point and, when it did not pass, its message and detail. */
void kvp_check_point_text(const struct kvp_check_report *r,
			  const struct kvp_check_scenario_result *res,
			  const struct kvp_check_point *p, char *name, size_t nsize, char *msg,
			  size_t msize);

/* check-baseline.c: comparing with a baseline one scenario at a time
 * (kvp_check_compare is begin, one per scenario, end).  begin sets the
 * report's baseline fields; NULL when memory runs out.  one fails only when
 * memory runs out. */
struct kvp_check_compare;
struct kvp_check_compare *kvp_check_compare_begin(struct kvp_check_report *r,
						  const struct kvp_check_baseline *b,
						  const struct kvp_check_pct *tolerance);
kvp_status kvp_check_compare_one(struct kvp_check_compare *c, size_t i,
				 struct kvp_check_scenario_result *res);
void kvp_check_compare_end(struct kvp_check_compare *c);
/* A drifted field's change: "+4.2%", or "changed" / "new" when not a number. */
void kvp_check_drift_change(const struct kvp_check_drift *d, char *buf, size_t size);

#endif
