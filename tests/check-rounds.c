/* check-rounds.c: the preemption detector of kernels/rounds.c and the
 * pool's per-worker accounting in decode-cpu.c.  The rule is checked on
 * rounds written by hand (the arithmetic beside each case), then on the
 * pool with the test hook (kvb_cpu_stall): a worker that sleeps inside a
 * job is off its CPU exactly as a preempted one, and must be flagged; a
 * worker that spins on its CPU for as long is slow, not preempted, and
 * must not be.  Neither verdict can pass alone: a detector that flags
 * everything fails the spin cases, one that flags nothing the sleep ones. */
#include "decode.h"
#include "rounds.h"
#include "timing.h"

#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

/* --------------------------------------------------- the rule, by hand */

static const struct {
	double wall_s, cpu_max_s, off_max_s;
	int preempted;
	const char *why;
} t_rule[] = {
	/* slack = max(0.10 x wall, 0.2 ms) */
	{10e-3, 9.5e-3, 0, 0, "gap 0.5 ms < 1.0 ms (10% of 10 ms)"},
	{10e-3, 8.9e-3, 0, 1, "gap 1.1 ms > 1.0 ms"},
	{10e-3, 10e-3, 1.1e-3, 1, "a worker 1.1 ms off its CPU > 1.0 ms, busiest worker on time"},
	{10e-3, 10e-3, 0.9e-3, 0, "a worker 0.9 ms off its CPU < 1.0 ms"},
	{0.5e-3, 0.35e-3, 0, 0, "gap 0.15 ms < the 0.2 ms floor (10% would be 0.05 ms)"},
	{0.5e-3, 0.25e-3, 0, 1, "gap 0.25 ms > the 0.2 ms floor"},
	{1.0, 0.95, 0.04, 0, "50 ms gap, 40 ms off, both < 100 ms"},
	{1.0, 0.85, 0.0, 1, "150 ms gap > 100 ms"},
};

START_TEST(test_rule)
{
	struct kvb_round r = {t_rule[_i].wall_s, t_rule[_i].cpu_max_s, t_rule[_i].off_max_s, -1};
	ck_assert_msg(kvb_round_preempted(&r) == t_rule[_i].preempted, "case %d (%s): got %d", _i,
		      t_rule[_i].why, kvb_round_preempted(&r));
}
END_TEST

/* ------------------------------------------------- the pool and the hook */

/* About 2 ms of CPU work per worker: a spin on the thread's own clock,
 * so a worker's CPU time in the job is at least that whatever the load. */
#define WORK_S 2e-3
#define STALL_S 30e-3

/* The kernel's thread ids of the workers, for their schedstat. */
static pid_t worker_tid[2];

static void work(void *arg, int tid, int nthreads)
{
	(void)arg;
	(void)nthreads;
	if (tid < 2)
		worker_tid[tid] = (pid_t)syscall(SYS_gettid);
	const double c0 = kvb_thread_cpu_s();
	while (kvb_thread_cpu_s() - c0 < WORK_S)
		;
}

static int body(struct kvb_cpu *cpu, void *arg)
{
	kvb_cpu_parallel(cpu, work, arg);
	return 0;
}

/* Seconds thread `tid` of this process has waited on a run queue
 * (/proc/self/task/TID/schedstat, its second field: the kernel's own
 * account, which shares nothing with rounds.c), -1 when not readable. */
static double runq_wait_s(pid_t tid)
{
	char path[64];
	unsigned long long run, wait;
	snprintf(path, sizeof path, "/proc/self/task/%d/schedstat", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	int n = fscanf(f, "%llu %llu", &run, &wait);
	fclose(f);
	return n == 2 ? (double)wait / 1e9 : -1;
}

/* The machine's steal time so far, in clock ticks summed over its CPUs
 * (/proc/stat's "cpu" line, its eighth field), -1 when not readable.  A
 * virtual machine's hypervisor that takes the CPU away from a running
 * thread leaves it neither on a run queue nor accruing CPU time (the
 * kernel leaves steal out of a task's runtime), so schedstat cannot see
 * it; this machine-wide count, in ticks of 10 ms, can. */
static long long steal_ticks(void)
{
	unsigned long long v[8];
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return -1;
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
		       &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	return n == 8 ? (long long)v[7] : -1;
}

/* One round of `work` on `threads` workers, the hook armed as given;
 * *waited (when not NULL) gets the seconds the workers waited on a run
 * queue during it, summed (-1 when unknown), and *stolen the machine's
 * steal ticks during it (-1 when unknown). */
static struct kvb_round one_round(int threads, double stall_s, int spin, double *waited,
				  long long *stolen)
{
	struct kvb_cpu *cpu;
	struct kvb_round r;
	double w0[2] = {0, 0};
	ck_assert_int_eq(kvb_cpu_create(threads, &cpu), 0);
	kvb_cpu_parallel(cpu, work, NULL); /* untimed: the workers are up */
	for (int t = 0; t < threads; t++)
		w0[t] = runq_wait_s(worker_tid[t]);
	const long long s0 = steal_ticks();
	kvb_cpu_stall(cpu, stall_s, spin);
	kvb_cpu_round_begin(cpu);
	body(cpu, NULL);
	kvb_cpu_round_end(cpu, &r);
	r.preempted = kvb_round_preempted(&r);
	if (stolen) {
		const long long s1 = steal_ticks();
		*stolen = s0 < 0 || s1 < 0 ? -1 : s1 - s0;
	}
	if (waited) {
		*waited = 0;
		for (int t = 0; t < threads; t++) {
			double w1 = runq_wait_s(worker_tid[t]);
			if (w0[t] < 0 || w1 < 0)
				*waited = -1;
			else if (*waited >= 0)
				*waited += w1 - w0[t];
		}
	}
	kvb_cpu_free(cpu);
	return r;
}

/* A worker asleep 30 ms inside a job of 2 ms: the round's wall time is at
 * least 30 ms, that worker spent at least 30 ms of it off its CPU and no
 * worker had more than 2 ms + what the machine adds of CPU, so both halves
 * of the rule flag it, whatever the machine's load (load only adds to
 * the gap). */
START_TEST(test_sleep_flagged)
{
	const int threads = 1 + _i; /* 1 and 2 workers: the hook's is the last */
	struct kvb_round r = one_round(threads, STALL_S, 0, NULL, NULL);
	ck_assert_msg(r.wall_s >= STALL_S, "wall %g", r.wall_s);
	ck_assert_msg(r.off_max_s >= STALL_S * 0.99, "off %g", r.off_max_s);
	ck_assert_msg(r.cpu_max_s < r.wall_s - 0.5 * STALL_S, "cpu %g wall %g", r.cpu_max_s,
		      r.wall_s);
	ck_assert_int_eq(r.preempted, 1);
}
END_TEST

/* The same 30 ms spent spinning on the CPU: slow, not preempted.  Its
 * CPU time is at least 30 ms, and the verdict is 0 unless the machine
 * really took a core away for more than 10% of the round.  Whether it did
 * the kernel says on its own: schedstat gives the workers' time waiting on
 * a run queue, /proc/stat the steal of a virtual machine's hypervisor
 * (which no per-thread count holds).  Each of 12 rounds must be clean or,
 * when flagged, have waited at least half its gap and at least 1 ms (a
 * round is only flagged for a gap over 10% of its ~35 ms; a quiet round
 * waits some tens of µs for its worker to wake, which must not excuse a
 * detector that flags it), or have seen steal.  Steal
 * is counted machine-wide in 10 ms ticks, so a few ms of it can pass
 * unseen: up to 2 of the 12 rounds may be flagged with no cause the kernel
 * shows; a detector that flags every round fails on any machine quiet
 * for 3 of 12 rounds of about 35 ms.  (On a machine with every core busy
 * all 12 may be flagged, and rightly.)  Without schedstat one of the 12
 * must be clean. */
#define SPIN_ROUNDS 12
START_TEST(test_spin_not_flagged)
{
	const int threads = 1 + _i;
	int clean = 0, unexplained = 0, unknown = 0;
	char why[2][160] = {"", ""}; /* the first two unexplained rounds */
	for (int a = 0; a < SPIN_ROUNDS; a++) {
		double waited;
		long long stolen;
		struct kvb_round r = one_round(threads, STALL_S, 1, &waited, &stolen);
		ck_assert_msg(r.cpu_max_s >= STALL_S, "cpu %g", r.cpu_max_s);
		ck_assert_msg(r.wall_s >= r.cpu_max_s, "wall %g < cpu %g", r.wall_s, r.cpu_max_s);
		const double gap = fmax(r.wall_s - r.cpu_max_s, r.off_max_s);
		if (!r.preempted)
			clean++;
		else if (waited < 0)
			unknown++;
		else if (!(waited >= 0.5 * gap && waited >= 1e-3) && stolen <= 0 && unexplained++ < 2)
			snprintf(why[unexplained - 1], sizeof why[0],
				 "round %d (wall %g, cpu %g, off %g: waited %g s, %lld steal ticks)", a,
				 r.wall_s, r.cpu_max_s, r.off_max_s, waited, stolen);
	}
	ck_assert_msg(unexplained <= 2,
		      "%d of %d rounds of a spinning worker flagged with no run-queue wait or steal "
		      "to say why; the first two: %s; %s",
		      unexplained, SPIN_ROUNDS, why[0], why[1]);
	/* no schedstat: at least one round must be clean */
	ck_assert_msg(unknown == 0 || clean > 0,
		      "%d rounds of a spinning worker all flagged, no schedstat to say why", SPIN_ROUNDS);
}
END_TEST

/* kvb_round_run with the first attempt asleep: that attempt is thrown away
 * (redone >= 1), the round kept is one of the later attempts (its wall
 * time under the 30 ms the stalled one took), and the tally counts one
 * round. */
static int stalled_once(struct kvb_cpu *cpu, void *arg)
{
	int *calls = arg;
	if ((*calls)++ == 0)
		kvb_cpu_stall(cpu, STALL_S, 0);
	return body(cpu, NULL);
}

START_TEST(test_run_redoes)
{
	struct kvb_cpu *cpu;
	struct kvb_tally t = {0, 0, 0};
	struct kvb_round r;
	int calls = 0;
	ck_assert_int_eq(kvb_cpu_create(2, &cpu), 0);
	kvb_cpu_parallel(cpu, work, NULL);
	ck_assert_int_eq(kvb_round_run(cpu, NULL, stalled_once, &calls, &t, &r), 0);
	ck_assert_int_ge(calls, 2);
	ck_assert_int_ge(t.redone, 1);
	ck_assert_int_eq(t.redone, calls - 1);
	ck_assert_int_le(calls, 1 + KVB_ROUND_REDOS);
	ck_assert_int_eq(t.rounds, 1);
	ck_assert_msg(r.wall_s < STALL_S, "kept the stalled attempt: wall %g", r.wall_s);
	kvb_cpu_free(cpu);
}
END_TEST

/* A round that is always preempted: KVB_ROUND_REDOS redos, then the
 * fastest attempt kept and counted as still preempted. */
static int stalled_always(struct kvb_cpu *cpu, void *arg)
{
	int *calls = arg;
	/* 30, 40, 50, 60 ms: the first is the fastest */
	kvb_cpu_stall(cpu, STALL_S + 10e-3 * (*calls)++, 0);
	return body(cpu, NULL);
}

START_TEST(test_run_gives_up)
{
	struct kvb_cpu *cpu;
	struct kvb_tally t = {0, 0, 0};
	struct kvb_round r;
	int calls = 0;
	ck_assert_int_eq(kvb_cpu_create(2, &cpu), 0);
	ck_assert_int_eq(kvb_round_run(cpu, NULL, stalled_always, &calls, &t, &r), 0);
	ck_assert_int_eq(calls, 1 + KVB_ROUND_REDOS);
	ck_assert_int_eq(t.redone, KVB_ROUND_REDOS);
	ck_assert_int_eq(t.preempted, 1);
	ck_assert_int_eq(r.preempted, 1);
	/* the last attempt alone sleeps 60 ms: not the one kept */
	ck_assert_msg(r.wall_s >= STALL_S && r.wall_s < STALL_S + 30e-3,
		      "kept wall %g, want the fastest attempt", r.wall_s);
	kvb_cpu_free(cpu);
}
END_TEST

/* The environment's KVB_STALL_MS stalls each round's first attempt: the
 * output's redone counts come from it in cli-kvbench.sh. */
START_TEST(test_env_stall)
{
	struct kvb_cpu *cpu;
	struct kvb_tally t = {0, 0, 0};
	struct kvb_round r;
	ck_assert_int_eq(kvb_cpu_create(2, &cpu), 0);
	setenv("KVB_STALL_MS", "30", 1);
	for (int k = 0; k < 3; k++)
		ck_assert_int_eq(kvb_round_run(cpu, NULL, body, NULL, &t, &r), 0);
	unsetenv("KVB_STALL_MS");
	ck_assert_int_eq(t.rounds, 3);
	ck_assert_int_ge(t.redone, 3);
	kvb_cpu_free(cpu);
}
END_TEST

static Suite *rounds_suite(void)
{
	Suite *s = suite_create("rounds");
	TCase *core = tcase_create("core");
	TCase *errors = tcase_create("errors");
	tcase_set_timeout(core, 60);
	tcase_add_loop_test(core, test_rule, 0, (int)(sizeof t_rule / sizeof t_rule[0]));
	tcase_add_loop_test(core, test_sleep_flagged, 0, 2);
	tcase_add_loop_test(core, test_spin_not_flagged, 0, 2);
	tcase_add_test(core, test_run_redoes);
	tcase_add_test(core, test_env_stall);
	tcase_add_test(errors, test_run_gives_up);
	suite_add_tcase(s, core);
	suite_add_tcase(s, errors);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(rounds_suite());
	srunner_run_all(sr, CK_ENV);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
