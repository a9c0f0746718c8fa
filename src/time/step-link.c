/* step-link.c: the links data crosses besides the GPUs' own (host links,
 * disks): their presets with sources, and the parsing of --host-link and
 * --kv-offload (declared in step.h).  The collectives' links are step.c's. */
#include "time/step.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/units.h"

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/* ------------------------------------------------------------------ links
 * Theoretical rates per direction, x16: PCIe 3.0 8 GT/s, 4.0 16 GT/s, 5.0
 * 32 GT/s with 128b/130b coding = 15.75, 31.5, 63 GB/s; PCIe 6.0 64 GT/s PAM4
 * with 242B/256B FLITs = 121 GB/s (PCI-SIG specifications, as tabulated at
 * fridayswithfaraday.com/posts/gpu-hw-pcie-gen5-bandwidth-bottleneck, which
 * also measures real transfers "20-40% below theoretical peak").
 * Effective rates: PCIe 3.0 12 GB/s (pinned host-to-device copies reach about
 * 11-12 GB/s, e.g. "11GB/s H2D ... Titan X (PCI-E 3.0 16x)" on NVIDIA's "How to
 * Optimize Data Transfers in CUDA C/C++" thread); PCIe 4.0 25 GB/s (the seed
 * figure of issue 5, 79 % of 31.5); PCIe 5.0 50 GB/s and PCIe 6.0 96 GB/s (the
 * same 79-80 % share; no measurement of ours).
 * NVLink-C2C (Grace Hopper): 900 GB/s both directions = 450 GB/s each;
 * 375 GB/s measured host-to-device (297 back) on a GH200 by KTH (Schieffer et
 * al., "Harnessing Integrated CPU-GPU System Memory for HPC: a first look into
 * Grace Hopper", arXiv 2407.07850), as reported by HPCwire in July 2024 and
 * retold at https://4nownews.com/2024/07/27/not-so-simple-and-not-so-fast-scientists-studied-the-features-of-memory-and-nvlink-c2c-in-nvidia-grace-hopper
 * ("375 GB/s in the host-to-device direction and only 297 GB/s in the reverse
 * direction"); earlier attributed here to Fusco et al. (arXiv 2408.11556, a
 * later GH200 study), whose reachable text does not give the figure.
 * NVMe: a PCIe 4.0 x4 drive, link 7.88 GB/s; 7 GB/s sequential reads (the
 * class of Samsung 990 PRO, 7,450 MB/s datasheet; issue 5's "nvme:7GB/s").
 * SATA SSD: 6 Gb/s with 8b/10b = 600 MB/s; 550 MB/s sequential reads (SATA
 * drives' datasheets quote 550-560 MB/s, e.g. Samsung 870 EVO 560 MB/s). */
static const struct kvp_link link_presets[] = {
	{"pcie3x16", 15.75e9, 12e9},
	{"pcie4x16", 31.5e9, 25e9},
	{"pcie5x16", 63e9, 50e9},
	{"pcie6x16", 121e9, 96e9},
	{"nvlink-c2c", 450e9, 375e9},
	{"nvme", 7.88e9, 7e9},
	{"sata", 0.6e9, 0.55e9},
};

bool kvp_link_preset(const char *name, struct kvp_link *out)
{
	for (size_t i = 0; i < NELEM(link_presets); i++)
		if (strcmp(name, link_presets[i].name) == 0) {
			*out = link_presets[i];
			return true;
		}
	return false;
}

const struct kvp_link *kvp_link_preset_at(size_t i)
{
	return i < NELEM(link_presets) ? &link_presets[i] : NULL;
}

kvp_status kvp_link_parse(const char *spec, const char *field, struct kvp_link *out,
			  struct kvp_error *err)
{
	char name[64];
	const char *colon = strchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
	if (len >= sizeof name)
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, field, "'%s' is too long", spec);
	memcpy(name, spec, len);
	name[len] = 0;
	double rate;
	if (!colon && kvp_parse_rate(spec, &rate) == 0) {
		if (!(rate > 0))
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, field,
					     "a rate must be positive, got '%s'", spec);
		memset(out, 0, sizeof *out);
		snprintf(out->name, sizeof out->name, "custom");
		out->theoretical_bps = out->effective_bps = rate;
		return KVP_STATUS_OK;
	}
	if (!kvp_link_preset(name, out))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, field,
				     "unknown link '%s' (pcie3x16, pcie4x16, pcie5x16, pcie6x16, "
				     "nvlink-c2c, nvme, sata, or a rate such as 25GB/s)", name);
	if (colon) {
		if (kvp_parse_rate(colon + 1, &rate) != 0 || !(rate > 0))
			return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, field,
					     "expected a rate such as 7GB/s after '%s:', got '%s'",
					     name, colon + 1);
		out->effective_bps = rate;
		if (out->theoretical_bps < rate)
			out->theoretical_bps = rate;
	}
	return KVP_STATUS_OK;
}

kvp_status kvp_offload_parse(const char *spec, const struct kvp_link *host,
			     struct kvp_offload *out, struct kvp_error *err)
{
	static const char *const field = "--kv-offload";
	memset(out, 0, sizeof *out);
	out->fraction = -1;
	if (strcmp(spec, "none") == 0) {
		out->tier = KVP_OFFLOAD_NONE;
		return KVP_STATUS_OK;
	}
	const char *colon = strchr(spec, ':');
	size_t len = colon ? (size_t)(colon - spec) : strlen(spec);
	double rate = 0;
	if (colon && (kvp_parse_rate(colon + 1, &rate) != 0 || !(rate > 0)))
		return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, field,
				     "expected a rate such as 7GB/s after ':', got '%s'", colon + 1);
	if (len == 3 && strncmp(spec, "cpu", 3) == 0) {
		out->tier = KVP_OFFLOAD_CPU;
		out->link = *host;
		if (rate > 0) {
			out->link.effective_bps = rate;
			if (out->link.theoretical_bps < rate)
				out->link.theoretical_bps = rate;
		}
		return KVP_STATUS_OK;
	}
	if ((len == 4 && strncmp(spec, "nvme", 4) == 0) || (len == 4 && strncmp(spec, "sata", 4) == 0)) {
		char name[8];
		memcpy(name, spec, 4);
		name[4] = 0;
		out->tier = KVP_OFFLOAD_DISK;
		kvp_link_preset(name, &out->link);
		if (rate > 0)
			out->link.theoretical_bps = out->link.effective_bps = rate;
		/* read through host memory: the slower of the disk and the host link */
		if (host->effective_bps < out->link.effective_bps)
			out->link.effective_bps = host->effective_bps;
		return KVP_STATUS_OK;
	}
	return kvp_error_set(err, KVP_STATUS_USAGE, NULL, 0, 0, field,
			     "expected none, cpu, cpu:RATE, nvme, nvme:RATE, sata or sata:RATE, got '%s'",
			     spec);
}

/* --------------------------------------------------------------- hardware */
