/* cli-calibration.c: --calibration given once or twice (cli-calibration.h). */
#include "cli/cli-calibration.h"

#include <stdio.h>
#include <string.h>

#include "base/error.h"
#include "out/output.h"

bool kvp_cli_calibration_parse(const char *cmd, const char *arg, void *dest)
{
	struct kvp_cli_calibration *cf = dest;
	if (cf->n >= KVP_CALIBRATION_MAX_FILES) {
		kvp_cli_usage_error(cmd, "--calibration: at most %d files, one engine calibration "
				    "(kvplan calibrate --out, or a table) and one kvbench run",
				    KVP_CALIBRATION_MAX_FILES);
		return false;
	}
	cf->path[cf->n++] = arg;
	return true;
}

int kvp_cli_calibration_load(const char *cmd, const struct kvp_cli_calibration *cf,
			     const struct kvp_gpu *g, struct kvp_calibration *cal,
			     struct kvp_cli_warnings *w)
{
	memset(cal, 0, sizeof *cal);
	if (!cf->n)
		return 0;
	struct kvp_error err = {0};
	if (kvp_calibration_load_files(cf->path, cf->n, g, cal, &err)) {
		if (err.status == KVP_STATUS_USAGE) {
			char shown[KVP_TERM_SIZE(sizeof err.msg)];
			return kvp_cli_usage_error(cmd, "--calibration: %s",
						   kvp_term_text(shown, sizeof shown, err.msg));
		}
		return kvp_cli_error(cmd, &err);
	}
	if (cal->kernel_unused) {
		char msg[KVP_WARNING_MAX], shown[KVP_TERM_SIZE(sizeof msg)];
		snprintf(msg, sizeof msg, "--calibration: %s fitted kv_bw_efficiency %.3g itself, "
			 "which wins; the kvbench figure of %s was not used", cal->engine_path,
			 cal->kv_bw_efficiency, cal->kernel_path);
		fprintf(stderr, "kvplan %s: warning: %s\n", cmd,
			kvp_term_text(shown, sizeof shown, msg));
		if (w && w->n < KVP_CLI_MAX_WARNINGS) {
			snprintf(w->code[w->n], sizeof w->code[0], "calibration_kernel_unused");
			snprintf(w->message[w->n], sizeof w->message[0], "%s", msg);
			w->n++;
		}
	}
	return 0;
}

const char *kvp_cli_calibration_label(const struct kvp_cli_calibration *cf,
				      const struct kvp_calibration *cal)
{
	return cal->engine_path ? cal->engine_path : cf->n ? cf->path[0] : NULL;
}

const char *kvp_cli_calibration_kernel(const struct kvp_calibration *cal)
{
	return cal->kernel_path;
}

/* The names of the constants c gives, comma-separated, into buf. */
static void given(const struct kvp_calibration *c, bool with_kv, char *buf, size_t size)
{
	const struct {
		const char *name;
		double v;
	} k[] = {
		{"decode_bw_efficiency", c->decode_bw_efficiency},
		{"prefill_flops_efficiency", c->prefill_flops_efficiency},
		{"prefill_flops_scale", c->prefill_flops_scale},
		{"kv_bw_efficiency", with_kv ? c->kv_bw_efficiency : 0},
		{"step_fixed_s", c->step_fixed_s},
		{"prefill_fixed_s", c->prefill_fixed_s},
		{"seq_step_s", c->seq_step_s},
		{"allreduce_latency_s", c->allreduce_latency_s},
		{"request_latency_s", c->request_latency_s},
		{"latency_spread (the band)", !c->kernel && c->points && c->latency_spread >= 0 ? 1 : 0},
	};
	buf[0] = 0;
	for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
		size_t l = strlen(buf);
		if (k[i].v > 0)
			snprintf(buf + l, size - l, "%s%s", l ? ", " : "", k[i].name);
	}
	if (!buf[0])
		snprintf(buf, size, "nothing");
}

void kvp_cli_calibration_print(const struct kvp_cli_calibration *cf,
			       const struct kvp_calibration *cal, const char *indent)
{
	char list[400], p[KVP_TERM_SIZE(512)];
	if (!cf->n)
		return;
	if (!cal->engine_path) {
		given(cal, true, list, sizeof list);
		printf("%scalibration %s (%s): %s\n", indent,
		       kvp_term_text(p, sizeof p, cf->path[0]),
		       cal->kernel ? "a kvbench run" : "an engine calibration", list);
		return;
	}
	given(cal, !cal->kv_from_kernel, list, sizeof list);
	printf("%scalibration %s (an engine calibration): %s\n", indent,
	       kvp_term_text(p, sizeof p, cal->engine_path), list);
	if (cal->kv_from_kernel)
		printf("%scalibration %s (a kvbench run): kv_bw_efficiency %.3g (its decode "
		       "figure, the KV read)\n", indent, kvp_term_text(p, sizeof p, cal->kernel_path),
		       cal->kv_bw_efficiency);
	else
		printf("%scalibration %s (a kvbench run): not used (the engine calibration "
		       "fitted kv_bw_efficiency)\n", indent,
		       kvp_term_text(p, sizeof p, cal->kernel_path));
}
