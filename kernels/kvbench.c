/* kvbench.c: the decode harness.  Runs a real paged-attention decode step
 * over a real paged KV cache, on the CPU or a CUDA GPU, and reports the
 * bandwidth it reaches against a streaming ceiling measured in the same
 * run; or, with --capacity, allocates a KV pool for real under a memory
 * limit and reports the blocks, tokens and sequences that fit.
 *
 * Stance: validate before timing.  Every point is first run on fresh
 * random data with the output poisoned and compared with the double
 * reference; a point that fails is reported and never timed.  Timing is
 * cold: the caches are flushed before each timed run, each run is timed
 * alone, and the median is reported.  kvbench measures; predictions come
 * from the planner's library (not in a -DKVBENCH_STANDALONE build, which
 * needs neither libyaml nor autotools and is what kernels/run-device.sh
 * compiles on a GPU machine).
 *
 * This file is the entry point: options (kvbench-opts.c), the CUDA probe,
 * the --gpu profile, the run (kvbench-sweep.c or kvbench-capacity.c) and
 * the results (kvbench-out.c). */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "kvbench.h"
#include "timing.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Results that never reached standard output (`> /dev/full`, a closed pipe
 * with SIGPIPE ignored) are a failure, as in kvplan's main.c: flush and
 * close it and say so. */
static int close_stdout(int rc)
{
	errno = 0;
	int bad = fflush(stdout) != 0 || ferror(stdout);
	int e = errno;
	if (fclose(stdout) != 0 && !bad) {
		bad = 1;
		e = errno;
	}
	if (!bad)
		return rc;
	fprintf(stderr, "kvbench: cannot write standard output: %s\n",
		e ? strerror(e) : "I/O error");
	return rc == EXIT_OK ? EXIT_FAILED : rc;
}

int main(int argc, char **argv)
{
	struct opts o;
	struct ctx cx;
	struct rows rs = {0};
	struct kvp_record *env = NULL, *root = NULL;
	int rc = parse_opts(argc, argv, &o);
	if (rc >= 0)
		return close_stdout(rc); /* --help > /dev/full fails too */
	memset(&cx, 0, sizeof cx);
	cx.o = &o;

	if (o.backend == BACKEND_CUDA) {
#ifdef HAVE_CUDA
		int st = kvb_cuda_probe(&cx.gpu);
		if (st == KVB_CUDA_OLD_DRIVER) {
			fprintf(stderr, "kvbench: the NVIDIA driver is too old for this toolkit (%s); "
				"build with an older toolkit or update the driver\n",
				kvb_cuda_error());
			return EXIT_FAILED;
		}
		if (st == KVB_CUDA_NO_DEVICE) {
			fprintf(stderr, "kvbench: no CUDA device (%s)\n", kvb_cuda_error());
			return EXIT_NO_DEVICE;
		}
		if (st != KVB_CUDA_OK) {
			fprintf(stderr, "kvbench: %s\n", kvb_cuda_error());
			return EXIT_FAILED;
		}
#else
		fprintf(stderr, "kvbench: no CUDA device (this kvbench was built without CUDA)\n");
		return EXIT_NO_DEVICE;
#endif
	}
#ifndef KVBENCH_STANDALONE
	if (o.gpu) {
		struct kvp_error err;
		char msg[1024];
		cx.profile = calloc(1, sizeof *cx.profile);
		if (!cx.profile)
			return EXIT_FAILED;
		kvp_status st = kvp_gpu_load(o.gpu, cx.profile, &err);
		if (st != KVP_STATUS_OK) {
			kvp_error_format(&err, msg, sizeof msg);
			fprintf(stderr, "kvbench: --gpu: %s\n", msg);
			free(cx.profile);
			return kvp_status_exit_code(st);
		}
	}
#endif
	if (kvb_cpu_create(o.threads, &cx.cpu) != 0) {
		fprintf(stderr, "kvbench: cannot start %d threads: %s\n", o.threads, strerror(errno));
		return EXIT_FAILED;
	}
	const char *isa = getenv("KVB_ISA"); /* one copy of the loops against another */
	if (isa && *isa && kvb_cpu_set_isa(cx.cpu, isa) != 0) {
		fprintf(stderr, "kvbench: KVB_ISA names loops this CPU or build cannot run "
				"(known: base, avx2, avx512, avx512vnni)\n");
		kvb_cpu_free(cx.cpu);
		return EXIT_USAGE;
	}
	/* a bad --out refused, and FILE.partial opened, before any time is spent */
	if ((rc = out_prepare(&cx)) >= 0) {
		kvb_cpu_free(cx.cpu);
#ifndef KVBENCH_STANDALONE
		free(cx.profile);
#endif
		return rc;
	}
	cx.progress = o.progress != 0; /* on unless --quiet, a terminal or not */
	cx.t_start_s = kvb_now_s();
	rc = o.capacity ? run_capacity(&cx, &rs) : run_bandwidth(&cx, &rs);
	if (cx.progress)
		fprintf(stderr, "kvbench: %zu points in %.1f s\n", rs.n, kvb_now_s() - cx.t_start_s);
	env = kvp_record_new();
	if (env)
		env_row(&cx, env);
	if (!env || !(root = results_root(env, &rs))) {
		fprintf(stderr, "kvbench: out of memory\n");
		return EXIT_FAILED; /* what was built is left to the exit */
	}
	if (rs.n > 0)
		print_results(stdout, &cx, root, &rs);
	/* through the atomic writer: the previous results stay whole on failure */
	int orc = out_finish(&cx, env, &rs);
	if (orc >= 0)
		rc = orc;
	kvb_cpu_free(cx.cpu);
#ifndef KVBENCH_STANDALONE
	free(cx.profile);
#endif
	kvp_record_free(root); /* env and the rows with it */
	free(rs.r);
#ifndef KVBENCH_STANDALONE
	if (o.have_dist)
		kvp_dist_free(&o.dist);
#endif
	return close_stdout(rc);
}
