/* ttft-load.h: the time to first token of a request that joins a running
 * server, as the engine's scheduler serves it, and the wait of requests
 * that find the KV pool full.  What `kvplan calibrate` and `kvplan
 * validate` predict a serving run's median TTFT with.
 *
 * Stance: every step is the step model's (step.h); this only says which
 * steps a first token waits for, by the engine's scheduler keys
 * (engine.h prefill_alone, overlap_schedule; profiles/engines, each cited
 * there from the engine's source):
 *   chunked        (vLLM) kvp_perf_chunked_ttft_dp: the prompt in chunks
 *                  beside the B - 1 running decodes
 *   prefill alone  (SGLang) P + w x D: P the prompt's prefill, D the
 *                  decode step of the B - 1 others at `context`, w = 1.5
 *                  with the overlap schedule (half a step, on average,
 *                  until the step the request arrived in ends, then the
 *                  step already launched), 0.5 without (the half step);
 *                  B = 1: P alone.  The scheduler forms the prefill batch
 *                  of every request received at a step's start
 *                  (get_new_batch_prefill takes the waiting queue while the
 *                  token budget allows: srt/managers/scheduler.py
 *                  0.4.0.post1 l.786-808), so the prompt prefills beside the
 *                  requests that arrived in the same step: at a rate of
 *                  lambda a second, lambda x D more on average (Poisson
 *                  arrivals), P = P(1) + lambda D (P(2) - P(1)), the
 *                  batch's prompts held within the step's token budget
 *   queue          B asked beyond the N the pool holds: N run, Q = B - N
 *                  wait; the running ones finish at X = N / E2E a second,
 *                  E2E = TTFT(N) + (o - 1) x TPOT(N), so by Little's law a
 *                  waiting request waits Q / X = Q x E2E / N before its own
 *                  TTFT(N) (kvp_perf_queue_wait_s)
 *   request        either rule adds the request's latency outside the GPU's
 *                  steps once (kvp_perf_hw request_latency_s: tokenising,
 *                  the hops between the engine's processes), charged to no
 *                  step; the queue's E2E holds it through TTFT(N)
 *
 * Legend: B = sequences asked, N = sequences the KV pool holds, Q = B - N
 * waiting, o = output tokens, P = prefill, D = decode step. */
#ifndef KVP_TTFT_LOAD_H
#define KVP_TTFT_LOAD_H

#include <stdbool.h>
#include <stdint.h>

#include "base/error.h"
#include "read/engine.h"
#include "time/step.h"

struct kvp_perf_loaded {
	bool prefill_alone;           /* the engine's rule (else chunked) */
	double prefill_s;             /* P (prefill alone) */
	double batch_prompts;         /* the prompts P prefills, on average: 1 + lambda D */
	double decode_s;              /* D: the B - 1 others' step (prefill alone; 0: none) */
	double wait_steps;            /* w (prefill alone) */
	struct kvp_perf_chunked chunked;   /* chunked: kvp_perf_chunked_ttft_dp's answer */
	double request_s;             /* the request's latency outside the steps (step.h) */
	double ttft_s;
};

/* One request of n prompt tokens joining batch - 1 sequences decoding at
 * `context` on the fullest DP rank (total in the deployment, as
 * kvp_perf_chunked_ttft_dp), by engine e's rule (NULL: chunked), requests
 * arriving at arrival_rps a second on the rank (0: none beside it; read by
 * the prefill-alone rule only).  The step functions' errors. */
kvp_status kvp_perf_loaded_ttft(const struct kvp_perf_ctx *c, const struct kvp_engine_model *e,
				uint64_t batch, uint64_t total, uint64_t n, uint64_t context,
				uint64_t max_batched_tokens, double arrival_rps,
				struct kvp_perf_loaded *out, struct kvp_error *err);

/* The wait in the queue of `queued` requests behind `running` ones (both >=
 * 0; running > 0), each of which takes ttft_s + (output - 1) x tpot_s end
 * to end: queued x (ttft_s + (output - 1) x tpot_s) / running.  0 when
 * nothing waits. */
double kvp_perf_queue_wait_s(double queued, double running, double ttft_s, double tpot_s,
			     uint64_t output);

#endif
