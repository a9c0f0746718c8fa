/* rounds.h: a timed round on the CPU pool and whether it was preempted
 * (kernels/rounds.c; the pool's side is in decode-cpu.c).
 *
 * On a machine shared with other work a round can lose its cores to
 * another process for milliseconds, and its GB/s then says nothing about
 * the loop.  A round is timed twice: on the wall clock, and per worker
 * thread on the thread's own CPU clock (CLOCK_THREAD_CPUTIME_ID) and wall
 * clock inside each job.  A worker that computes without blocking spends
 * its wall time on its CPU; a gap means it was off its CPU (another task
 * ran there, or the hypervisor took the vCPU: Linux's task clock leaves
 * steal time out where paravirtual steal accounting is on).  A round is
 * preempted when
 *   wall - (CPU time of the busiest worker) > max(FRAC * wall, FLOOR), or
 *   (wall - CPU time inside jobs) of any worker > max(FRAC * wall, FLOOR):
 * the first catches the critical path losing time (the slowest worker, or
 * a worker woken late), the second a worker whose units the other thread
 * took over, which the first misses.  FLOOR keeps the wake-up latency of an
 * idle vCPU (tens of microseconds) from flagging rounds of under a
 * millisecond; such rounds time overheads anyway (kvbench warns).
 * Such a round is redone, a bounded number of times, and the redone and
 * still-preempted rounds are counted for the output.  What this cannot
 * see: memory bandwidth taken by work on other cores or machines, which
 * slows a round without taking its CPU. */
#ifndef KVB_ROUNDS_H
#define KVB_ROUNDS_H

#ifdef __cplusplus
extern "C" {
#endif

struct kvb_cpu;

#define KVB_PREEMPT_FRAC 0.10     /* share of the round's wall time */
#define KVB_PREEMPT_FLOOR_S 2e-4  /* seconds: below this no round is flagged */
#define KVB_ROUND_REDOS 3         /* attempts after the first, per round */

struct kvb_round {
	double wall_s;    /* the round on the monotonic clock */
	double cpu_max_s; /* CPU seconds of the busiest worker inside the round's jobs */
	double off_max_s; /* the most seconds any worker spent inside a job off its CPU */
	int preempted;    /* kvb_round_preempted's verdict (-1 until given) */
};

/* Rounds run, and what preemption cost them, for one measured quantity. */
struct kvb_tally {
	int rounds;    /* rounds kept */
	int redone;    /* attempts thrown away as preempted */
	int preempted; /* kept rounds that were still preempted after KVB_ROUND_REDOS */
};

/* decode-cpu.c, the pool: begin zeroes each worker's CPU and wall seconds
 * inside jobs and starts the round's wall clock; end fills *r's times from
 * them (preempted -1: the verdict is kvb_round_preempted's, which
 * kvb_round_run applies).  Every kvb_cpu_parallel between the two counts. */
void kvb_cpu_round_begin(struct kvb_cpu *cpu);
void kvb_cpu_round_end(struct kvb_cpu *cpu, struct kvb_round *r);
/* The test hook: the next job's last worker first loses `seconds`, asleep
 * (spin 0: off its CPU, as a preempted worker) or spinning on its CPU
 * (spin 1: slow, not preempted).  Once; 0 disarms. */
void kvb_cpu_stall(struct kvb_cpu *cpu, double seconds, int spin);

/* Whether r was preempted by the rule above (r's times as given). */
int kvb_round_preempted(const struct kvb_round *r);

/* body(cpu, arg) timed as a round, redone while preempted, at most
 * KVB_ROUND_REDOS more times; prep(cpu, arg), when not NULL, runs untimed
 * before each attempt (a cache flush).  *r gets the first clean attempt, or, when
 * none was, the fastest (and t->preempted one more); t->redone counts the
 * attempts thrown away, t->rounds the round.  With the environment's
 * KVB_STALL_MS (tests of the output), every round's first attempt has the
 * hook's sleep of that many milliseconds.  Returns body's status: a
 * non-zero one ends the round at once (r then holds that attempt). */
int kvb_round_run(struct kvb_cpu *cpu, void (*prep)(struct kvb_cpu *cpu, void *arg),
		  int (*body)(struct kvb_cpu *cpu, void *arg), void *arg, struct kvb_tally *t,
		  struct kvb_round *r);

#ifdef __cplusplus
}
#endif

#endif
