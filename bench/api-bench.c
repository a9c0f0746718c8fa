/* api-bench.c: the time of one kvplan_budget() call through the shared
 * library (libkvplan.so.0, include/kvplan.h) once the model, GPU and engine
 * are loaded: the admission controller's "how many more sequences fit?"
 * (issue 40's target: at most 20 us a call).
 *
 *   bench/api-bench [MODEL [GPU [ENGINE [CALLS]]]]
 *       default llama-3.1-8b h100-sxm vllm 200000
 *   bench/api-bench --check     a short run that also checks one answer
 *
 * Built by `make check` (bench/api-bench), linked against libkvplan.so.0.
 * Each call varies the batch so that no answer can be cached; the figure is
 * the median of 9 runs of CALLS / 9 calls each, in wall time and in the
 * thread's CPU time (the fair figure on a shared, loaded machine), with the
 * CPU it ran on.  Where the time goes (perf record, 2026-12-02): two thirds
 * in memset of the 133 KB struct kvp_budget and the spec inside it
 * (KVP_MAX_LAYERS = 4,096 layer slots), zeroed by kvp_budget_compute and
 * again by kvp_spec_build. */
#include <kvplan.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_s(clockid_t clock)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* "model name : ..." of /proc/cpuinfo, else "unknown CPU". */
static void cpu_name(char *buf, size_t size)
{
	snprintf(buf, size, "unknown CPU");
	FILE *f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return;
	char line[512];
	while (fgets(line, sizeof line, f)) {
		char *colon = strchr(line, ':');
		if (strncmp(line, "model name", 10) == 0 && colon) {
			colon += 1 + (colon[1] == ' ');
			colon[strcspn(colon, "\n")] = '\0';
			snprintf(buf, size, "%s", colon);
			break;
		}
	}
	fclose(f);
}

int main(int argc, char **argv)
{
	int check = argc > 1 && strcmp(argv[1], "--check") == 0;
	const char *model = !check && argc > 1 ? argv[1] : "llama-3.1-8b";
	const char *gpu = !check && argc > 2 ? argv[2] : "h100-sxm";
	const char *engine = !check && argc > 3 ? argv[3] : "vllm";
	long calls = !check && argc > 4 ? atol(argv[4]) : check ? 900 : 200000;
	if (calls < 9)
		calls = 9;
	kvplan_error err;
	kvplan_model *m = NULL;
	kvplan_gpu *g = NULL;
	kvplan_engine *e = NULL;
	if (kvplan_model_load(model, &m, &err) || kvplan_gpu_load(gpu, &g, &err) ||
	    kvplan_engine_load(engine, NULL, &e, &err)) {
		fprintf(stderr, "api-bench: %s\n", err.message);
		return 3;
	}
	kvplan_budget_opts o;
	kvplan_budget_opts_init(&o);
	o.context = 8192;
	kvplan_budget_result r = {.size = sizeof r};
	if (check) {
		/* Llama-3.1-8B: 2 (K, V) x 32 layers x 8 KV heads x 128 head dim
		 * x 2 B (bf16) = 131,072 B per token; 8,192 tokens of one
		 * sequence: 131,072 x 8,192 = 1,073,741,824 B (1 GiB) */
		if (kvplan_budget(m, g, e, &o, &r, &err)) {
			fprintf(stderr, "api-bench: %s\n", err.message);
			return 1;
		}
		if (r.kv_bytes_per_token != 131072 || r.kv_bytes != 1073741824ULL) {
			fprintf(stderr, "api-bench: kv_bytes_per_token %llu (expected 131072), "
				"kv_bytes %llu (expected 1073741824)\n",
				(unsigned long long)r.kv_bytes_per_token,
				(unsigned long long)r.kv_bytes);
			return 1;
		}
	}
	double runs[9], cpu_runs[9];
	uint64_t sink = 0;
	long per = calls / 9;
	for (int k = 0; k < 9; k++) {
		double t0 = now_s(CLOCK_MONOTONIC), c0 = now_s(CLOCK_THREAD_CPUTIME_ID);
		for (long i = 0; i < per; i++) {
			o.batch = 1 + (uint64_t)(i & 255);
			if (kvplan_budget(m, g, e, &o, &r, &err)) {
				fprintf(stderr, "api-bench: %s\n", err.message);
				return 1;
			}
			sink += r.max_sequences + r.fits;
		}
		runs[k] = (now_s(CLOCK_MONOTONIC) - t0) / per;
		cpu_runs[k] = (now_s(CLOCK_THREAD_CPUTIME_ID) - c0) / per;
	}
	qsort(runs, 9, sizeof runs[0], cmp_double);
	qsort(cpu_runs, 9, sizeof cpu_runs[0], cmp_double);
	char cpu[256];
	cpu_name(cpu, sizeof cpu);
	printf("api-bench: kvplan_budget %s on %s (%s %s), context 8192: "
	       "%.2f us per call (median of 9 x %ld; min %.2f, max %.2f), %.2f us of CPU "
	       "time; %s; libkvplan %s; max_sequences at batch 1..256 summed %llu\n",
	       kvplan_model_name(m), kvplan_gpu_name(g), kvplan_engine_name(e),
	       kvplan_engine_version(e), runs[4] * 1e6, per, runs[0] * 1e6, runs[8] * 1e6,
	       cpu_runs[4] * 1e6, cpu,
	       kvplan_version(), (unsigned long long)sink);
	kvplan_model_free(m);
	kvplan_gpu_free(g);
	kvplan_engine_free(e);
	return 0;
}
