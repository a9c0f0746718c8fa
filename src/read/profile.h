/* profile.h: model and GPU profiles: kvplan's own YAML files, found by name
 * or path, and (through hf-config.h) a Hugging Face config.json.
 *
 * Names resolve in this order: an existing path; each directory of
 * $KVPLAN_PROFILES (colon-separated, holding models/ and gpus/ or the files
 * directly; $KVPLAN_PROFILE_PATH is read after it, an older spelling); then
 * one data directory's profiles/<kind>/<name>.yaml: $KVPLAN_DATA, else the
 * source tree for a program run from the build tree (nothing needs
 * installing), else the installed data directory.  Unknown keys in
 * kvplan's files are errors; the schema is man/kvplan-profiles.5. */
#ifndef KVP_PROFILE_H
#define KVP_PROFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "model/model.h"

struct kvp_gpu {
	char name[KVP_NAME_MAX];
	char path[512];
	char vendor[32];
	uint64_t memory_bytes;     /* total as the CUDA/ROCm runtime reports it */
	double bandwidth_bps;      /* bytes/s, datasheet */
	double bf16_flops;         /* dense, FLOP/s */
	double fp8_flops;          /* dense, FLOP/s; 0 when none */
	/* more dense tensor peaks, FLOP/s (OP/s for int8); 0 where the profile
	 * gives none.  GeForce cards run fp16 and fp8 at twice the rate with
	 * fp16 accumulate (bf16_flops, fp8_flops: fp32 accumulate) */
	double fp16_acc16_flops;
	double fp8_acc16_flops;
	double int8_ops;
	double fp6_flops;
	double fp4_flops;          /* NVFP4 / MXFP4 */
	char host_link[32];        /* pcie4x16, ... */
	double nvlink_bps;         /* bytes/s per GPU, both directions, 0 when none */
	/* topology: GPUs one NVLink (or Infinity Fabric) domain joins at the full
	 * nvlink rate (2: bridged pairs, 8: an NVSwitch board, 72: an NVL72 rack;
	 * 0 when there is no NVLink); GPUs in one server (0: unknown, so any
	 * group beyond the domain stays on PCIe); the scale-out network per GPU,
	 * per direction (0 when node_gpus is unknown) */
	uint32_t nvlink_domain;
	/* how the domain is joined: false a switch (NVSwitch: any group gets the
	 * whole nvlink rate), true a full mesh of nvlink_domain - 1 direct links
	 * per GPU (AMD Infinity Fabric on MI300X: a group of g GPUs uses g - 1 of
	 * them, each 1 / (nvlink_domain - 1) of the rate) */
	bool nvlink_mesh;
	/* peer-to-peer (one GPU reading another's memory) over PCIe between two
	 * of these in one server; true unless the profile says pcie_p2p: false
	 * (the driver refuses it, as on GeForce RTX 4090/5090).  NVLink peers
	 * reach each other either way.  Read only from a loaded profile (path
	 * set): a GPU struct made by hand leaves it unknown. */
	bool pcie_p2p;
	/* NCCL's ring all-reduce bus bandwidth (nccl-tests busbw: a message of
	 * S bytes takes 2 (n - 1) / n x S / busbw) among 2, 4 and 8 of these
	 * GPUs in one server over PCIe, from published nccl-tests runs
	 * (pcie_busbw_2/4/8; 0: not given, the host_link's rate stands) */
	double pcie_busbw[3];
	uint32_t node_gpus;
	double scale_out_bps;
	double price_per_hour;     /* USD per GPU-hour, 0 when unknown */
	/* what that price is: its kind (on-demand, reserved-1y, reserved-3y,
	 * spot, serverless; "" unlabelled), who asks it and when it was seen */
	char price_kind[16];
	char price_provider[64];
	char price_date[16];       /* YYYY-MM-DD */
	/* buying one: list or street price in USD, when seen; 0 unknown */
	double purchase_usd;
	char purchase_kind[16];    /* list, street */
	char purchase_date[16];
	double server_usd;         /* one server of node_gpus GPUs bought whole (CPUs,
				    * memory, network included), 0 unknown; needs
				    * node_gpus */
	char server_date[16];
	double tdp_watts;          /* board power, 0 unknown */
	double compute_capability; /* NVIDIA major.minor (9.0 Hopper, 10.0 and
				    * 12.0 Blackwell); 0 when unknown or not NVIDIA */
	uint64_t l2_bytes;         /* 0 when unknown */
	/* calibration (from kvbench results); 0 means "use the default" */
	double decode_bw_efficiency;
	double prefill_flops_efficiency;
};

/* Whether `name` is a file's path rather than a profile's name: it holds a
 * '/' or ends in .yaml, .yml, .json or .gguf (as a scenario's values,
 * report-scenario.c). */
bool kvp_profile_name_is_path(const char *name);

/* Resolve `name` of kind "models", "gpus", "engines" or "workloads" into
 * path: a path (kvp_profile_name_is_path) is taken as it is and must be a
 * regular file; a bare name is looked for in the profile folders, then as
 * a regular file here, never as a folder here.  NOT_FOUND lists nothing,
 * the CLI says where it looked. */
kvp_status kvp_profile_resolve(const char *kind, const char *name, char *path, size_t size,
			       struct kvp_error *err);

/* A data file of a kind kept beside the profiles (e.g. "kernels",
 * "gemm-h100-sxm-bf16.tsv"): the first root (as kvp_profile_resolve searches
 * them) holding <root>/<kind>/<file> writes its path; false when none does. */
bool kvp_profile_data_file(const char *kind, const char *file, char *path, size_t size);

/* Load a model by name or path: .json files go to the Hugging Face importer. */
kvp_status kvp_model_load(const char *name_or_path, struct kvp_model *out, struct kvp_error *err);
kvp_status kvp_model_load_yaml(const char *path, struct kvp_model *out, struct kvp_error *err);

kvp_status kvp_gpu_load(const char *name_or_path, struct kvp_gpu *out, struct kvp_error *err);

/* Names of the built-in profiles of a kind (sorted), for --list and `size --gpus all`.
 * Returns the count written (at most max); names are malloc'd, free each. */
size_t kvp_profile_list(const char *kind, char **names, size_t max);

#endif
