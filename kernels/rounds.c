/* rounds.c: timed rounds on the CPU pool, told preempted or clean, and
 * redone when preempted (rounds.h says the rule and why).  kvbench's
 * decode, read ceiling and compute ceiling and bench/decode-cpu.c's rounds
 * all run through kvb_round_run, so every figure a CPU point is judged by
 * was measured the same way. */
#include "rounds.h"

#include <stdlib.h>

int kvb_round_preempted(const struct kvb_round *r)
{
	double slack = KVB_PREEMPT_FRAC * r->wall_s;
	if (slack < KVB_PREEMPT_FLOOR_S)
		slack = KVB_PREEMPT_FLOOR_S;
	return r->wall_s - r->cpu_max_s > slack || r->off_max_s > slack;
}

/* Milliseconds of the test stall (KVB_STALL_MS), 0 when unset or not a
 * positive number. */
static double stall_env_s(void)
{
	const char *e = getenv("KVB_STALL_MS");
	if (!e || !*e)
		return 0;
	char *end;
	double ms = strtod(e, &end);
	return *end == '\0' && ms > 0 && ms < 1e5 ? ms / 1e3 : 0;
}

int kvb_round_run(struct kvb_cpu *cpu, void (*prep)(struct kvb_cpu *cpu, void *arg),
		  int (*body)(struct kvb_cpu *cpu, void *arg), void *arg, struct kvb_tally *t,
		  struct kvb_round *r)
{
	const double stall_s = stall_env_s();
	struct kvb_round best = {0, 0, 0, 1};
	int rc = 0, have = 0;
	for (int a = 0; a <= KVB_ROUND_REDOS; a++) {
		struct kvb_round cur;
		if (prep)
			prep(cpu, arg);
		if (a == 0 && stall_s > 0)
			kvb_cpu_stall(cpu, stall_s, 0);
		kvb_cpu_round_begin(cpu);
		rc = body(cpu, arg);
		kvb_cpu_round_end(cpu, &cur);
		cur.preempted = kvb_round_preempted(&cur);
		kvb_cpu_stall(cpu, 0, 0); /* a body that ran no job leaves none armed */
		if (rc != 0) {
			best = cur;
			have = 1;
			break;
		}
		if (!cur.preempted) {
			best = cur;
			have = 1;
			break;
		}
		if (!have || cur.wall_s < best.wall_s)
			best = cur;
		have = 1;
		if (a < KVB_ROUND_REDOS)
			t->redone++;
	}
	t->rounds++;
	if (best.preempted && rc == 0)
		t->preempted++;
	*r = best;
	return rc;
}
