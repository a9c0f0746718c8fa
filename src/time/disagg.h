/* disagg.h: disaggregated prefill and decode: P prefill instances and D decode
 * instances, each pool its own GPU and deployment shape, the KV of every
 * request moved from the prefill to the decode instance over a link, and the
 * colocated configuration beside it.
 *
 * Legend: n = prompt tokens, o = output tokens, b = sequences per decode
 * instance, P, D = instances, G_p, G_d = GPUs one request spans on each side
 * (tp x pp; a request lives on one DP rank).
 *
 *   KV moved per request = the request's KV, one copy of every head (the
 *                          unsplit model's bytes for n tokens, windows capped)
 *   transfer             = KV / (min(G_p, G_d) x link): every GPU sends its
 *                          own shard over its own NIC at once
 *   TTFT                 = prefill of one prompt + transfer (the decode side
 *                          streams the first token once it holds the KV)
 *   decode               = the decode instance's step at b, undisturbed by
 *                          prefills; D x b / TPOT tokens per second, if the
 *                          prefill pool keeps up: it must start D x b / (o x
 *                          TPOT) requests per second and can start P x dp /
 *                          prefill
 *   colocated            = P + D instances of the decode shape, each also
 *                          prefilling its requests one by one: TPOT + b x
 *                          prefill / o per output token
 *
 * Link rates are taken as stated (InfiniBand NDR 400 Gb/s = 50 GB/s per
 * direction); no efficiency is applied, so transfers are a lower bound. */
#ifndef KVP_DISAGG_H
#define KVP_DISAGG_H

#include <stdint.h>

#include "memory/budget.h"
#include "base/error.h"
#include "model/model.h"
#include "time/perf.h"
#include "read/profile.h"

/* One pool: its GPU, shape, instances, and the hardware after overrides. */
struct kvp_disagg_pool {
	struct kvp_gpu gpu;
	struct kvp_parallel par;
	uint32_t instances;
	struct kvp_perf_hw hw;
};

/* Parse --disagg P:D (instances of each pool, both >= 1). */
kvp_status kvp_disagg_parse_counts(const char *spec, uint32_t *p, uint32_t *d,
				   struct kvp_error *err);

/* The KV link: ib200 ib400 ib800 roce200 roce400 (stated rates), nvlink (the
 * GPUs' own NVLink: both pools on the same GPU model, all their GPUs inside one
 * NVLink domain), a PCIe preset, or a rate ("25GB/s").  Host-only links
 * (nvlink-c2c, nvme, sata) and links the GPUs do not have are INVALID, naming
 * --kv-link. */
kvp_status kvp_disagg_link_parse(const char *spec, const struct kvp_disagg_pool *prefill,
				 const struct kvp_disagg_pool *decode, struct kvp_link *out,
				 struct kvp_error *err);

struct kvp_disagg_row {
	uint64_t batch;                 /* b, per decode instance */
	double tpot_s;                  /* decode instance, no prefills */
	double tokens_per_s;            /* D x b / TPOT */
	double prefill_needed_rps;      /* D x b / (o x TPOT) */
	double prefill_utilization;     /* needed / capacity; > 1: the decode pool starves */
	bool fits;                      /* b sequences of n + o fit a decode instance */
	double colocated_ttft_s;        /* the decode shape's own prefill */
	double colocated_tpot_s;        /* TPOT + b x prefill / o */
	double colocated_tokens_per_s;  /* (P + D) x b / colocated TPOT */
};

struct kvp_disagg_result {
	uint64_t prompt, output;
	uint32_t prefill_instances, decode_instances;
	uint32_t prefill_gpus, decode_gpus;     /* all instances */
	struct kvp_link link;
	uint64_t kv_request_bytes;              /* KV one request moves */
	uint64_t kv_gpu_bytes;                  /* of which one prefill GPU's shard (worst stage) */
	uint32_t transfer_gpus;                 /* min(G_p, G_d) */
	double transfer_s;
	double prefill_s;                       /* one prompt on a prefill instance */
	double ttft_s;                          /* prefill_s + transfer_s */
	double prefill_capacity_rps;            /* P x dp / prefill_s */
	uint64_t prefill_max_sequences;         /* prompts a prefill instance holds, all DP ranks */
	uint64_t decode_max_sequences;          /* sequences of n + o a decode instance holds */
	uint64_t prefill_weights_bytes, decode_weights_bytes;   /* one GPU */
	struct kvp_disagg_row rows[KVP_PERF_MAX_BATCHES];
	size_t nrows;
	struct kvp_perf_result *prefill, *decode;   /* the two runs (owned) */
};

/* Run both pools (o gives dtypes and budget terms; its shape is replaced by
 * each pool's), time the transfer and compare with colocated serving.  *out
 * owns two perf runs: free them with kvp_disagg_free.  Errors: the pools'
 * budgets and perf runs (naming the failing side in err->field's message). */
kvp_status kvp_disagg_run(const struct kvp_model *m, const struct kvp_budget_opts *o,
			  const struct kvp_disagg_pool *prefill, const struct kvp_disagg_pool *decode,
			  const struct kvp_link *link, const struct kvp_perf_opts *po,
			  struct kvp_disagg_result *out, struct kvp_error *err);
void kvp_disagg_free(struct kvp_disagg_result *r);

/* The run as `kvplan perf --disagg --format json` prints it (rows under "rows"). */
bool kvp_disagg_to_record(const struct kvp_disagg_result *r, const struct kvp_model *m,
			  struct kvp_record *out);

#endif
