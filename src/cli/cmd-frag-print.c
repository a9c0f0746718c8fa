/* cmd-frag-print.c: how `kvplan frag` prints its answer (cmd-frag-print.h):
 * the table of policies and block sizes, the arrivals over time, the
 * recommended block and the prefix cache; and the CSV rows and the JSON
 * record.  cmd-frag.c parses and simulates; this prints. */
#include "cli/cmd-frag-print.h"

#include <stdio.h>

#include "out/output.h"
#include "base/units.h"

void kvp_frag_print_table(const struct kvp_frag_report *rep, const struct kvp_gpu *g,
			  const struct kvp_workload *w, const struct kvp_frag_cache_row *cache,
			  size_t ncache, const struct kvp_frag_cache_config *cc)
{
	const struct kvp_budget *b = &rep->budget;
	const struct kvp_frag_config *fc = &rep->cfg;
	const struct kvp_frag_result *rows = rep->rows;
	size_t n = rep->nrows;
	int rec = rep->recommended;
	const char *reason = rep->reason;
	bool max_fits = rep->max_fits;
	const struct kvp_spec *s = &b->spec;
	char t1[64], t2[64], t3[64], sp[128], so[128];
	char mn[KVP_TERM_SIZE(sizeof s->model->name)], gn[KVP_TERM_SIZE(sizeof g->name)];
	char wn[KVP_TERM_SIZE(sizeof w->name)];
	printf("kvplan frag: %s on %s, engine %s, tp %u, pp %u, KV %s\n\n",
	       kvp_term_text(mn, sizeof mn, s->model->name), kvp_term_text(gn, sizeof gn, g->name),
	       kvp_engine_name(b->engine), s->par.tp, s->par.pp, kvp_dtype_name(s->kv_dtype));
	kvp_dist_format(&w->prompt, sp, sizeof sp);
	kvp_dist_format(&w->output, so, sizeof so);
	kvp_format_u64(fc->max_len, t1, sizeof t1);
	kvp_format_u64(fc->requests, t2, sizeof t2);
	printf("Workload %s: prompt %s, output %s%s, max_len %s tokens\n",
	       kvp_term_text(wn, sizeof wn, w->name), sp, so,
	       w->paired ? " (pairs from the file)" : "", t1);
	if (fc->prefix_tokens) {
		kvp_format_u64(fc->prefix_tokens, t1, sizeof t1);
		printf("  shared prefix: %s tokens before the prompt of %.0f%% of the requests\n", t1,
		       100 * fc->prefix_fraction);
	}
	printf("  %s requests, seed %llu, averages after %llu admissions while requests wait\n\n",
	       t2, (unsigned long long)fc->seed, (unsigned long long)fc->warmup);

	kvp_format_bytes(fc->pool_bytes, t1, sizeof t1);
	kvp_format_u64(kvp_frag_token_bytes(&fc->shape), t2, sizeof t2);
	kvp_format_u64(fc->pool_bytes / kvp_frag_token_bytes(&fc->shape), t3, sizeof t3);
	printf("KV pool (kvplan budget): %s; %s B per token -> %s token slots\n", t1, t2, t3);
	kvp_format_u64(b->max_sequences, t1, sizeof t1);
	kvp_format_u64(fc->max_len, t2, sizeof t2);
	printf("Engine's worst case (every request at max_len %s): %s sequences\n\n", t2, t1);

	printf("%-18s %-9s %6s %7s %7s %7s %6s %9s %8s %8s %10s %11s\n", "policy", "alloc/P",
	       "used%", "int.w%", "ext.w%", "free%", "seqs", "refused*", "preempt", "waste/seq",
	       "(P-1)/2", "metadata");
	for (size_t i = 0; i < n; i++) {
		const struct kvp_frag_result *r = &rows[i];
		char what[16], exp[16], meta[32];
		if (r->policy >= KVP_FRAG_POLICY_PAGED) {
			snprintf(what, sizeof what, "%u", r->block_size);
			snprintf(exp, sizeof exp, "%.1f", r->expected_waste_tokens);
		} else {
			snprintf(what, sizeof what, "%s", r->fit ? "best" : "first");
			snprintf(exp, sizeof exp, "-");
		}
		kvp_format_bytes(r->metadata_bytes, meta, sizeof meta);
		printf("%-18s %-9s %6.2f %7.2f %7.2f %7.2f %6llu %9llu %8llu %8.1f %10s %11s%s\n",
		       kvp_frag_policy_name(r->policy), what, 100 * r->used_fraction,
		       100 * r->internal_waste_fraction, 100 * r->external_waste_fraction,
		       100 * r->free_fraction, (unsigned long long)r->max_sequences,
		       (unsigned long long)r->refused_with_free_memory,
		       (unsigned long long)r->preemptions, r->waste_tokens_per_sequence, exp, meta,
		       (int)i == rec ? "  <- recommended" : "");
	}
	if (n && rows[0].over_time) {
		printf("\nArrivals: %g requests/s (%s), %g s per step, %llu tokens per step\n",
		       rows[0].arrival_rate, fc->arrival_rate > 0 ? "Poisson" : "the file's times",
		       fc->step_time_s,
		       (unsigned long long)fc->max_batched_tokens);
		if (rep->step_from_perf)
			printf("  step: the perf model's decode step of %llu sequences at %llu tokens "
			       "(--step-time to set it)\n", (unsigned long long)rep->step_batch,
			       (unsigned long long)rep->step_context);
		printf("%-18s %-9s %12s %12s %10s %12s %9s %14s\n", "policy", "P/alloc", "queue s",
		       "p99 queue s", "live", "latency s", "preempt", "throughput/s");
		for (size_t i = 0; i < n; i++) {
			char what[16];
			if (rows[i].policy >= KVP_FRAG_POLICY_PAGED)
				snprintf(what, sizeof what, "%u", rows[i].block_size);
			else
				snprintf(what, sizeof what, "%s", rows[i].fit ? "best" : "first");
			printf("%-18s %-9s %12.4f %12.4f %10.2f %12.4f %9llu %14.3f\n",
			       kvp_frag_policy_name(rows[i].policy), what, rows[i].mean_queue_s,
			       rows[i].p99_queue_s, rows[i].mean_live_sequences,
			       rows[i].mean_latency_s, (unsigned long long)rows[i].preemptions,
			       rows[i].throughput_rps);
		}
		printf("  live = arrival rate x (latency - queue) when nothing is preempted "
		       "(Little's law).\n");
	}
	if (!max_fits)
		printf("contiguous-max: one reservation of max_len is larger than the pool: 0 sequences\n");
	printf("\n  used: pool bytes holding real tokens; int.w: reserved or allocated but empty;\n"
	       "  ext.w: free while the next request waited for a large enough hole; seqs: the\n"
	       "  time-average of live sequences; refused*: requests refused while enough bytes\n"
	       "  were free in total; waste/seq: empty token slots per sequence, against the\n"
	       "  closed form (P - 1) / 2 for lengths spread over many blocks.\n%s\n",
	       fc->shape.nclass > 1 ? "  The closed form is for full-attention layers; sliding and "
				      "chunked layers add\n  the partial blocks at both ends of "
				      "their window.\n" : "");
	for (size_t i = 0; i < n; i++)
		if (rows[i].dropped) {
			printf("  %s: %llu requests longer than the whole pool were dropped\n",
			       kvp_frag_policy_name(rows[i].policy),
			       (unsigned long long)rows[i].dropped);
			break;
		}
	if (rec >= 0)
		printf("Recommended block size: %u (%s)\n", rows[rec].block_size, reason);
	if (!ncache)
		return;
	kvp_format_u64(cc->prefixes, t1, sizeof t1);
	kvp_format_bytes(cc->entry_bytes, t2, sizeof t2);
	printf("\nPrefix cache: LRU over %s prefixes of %llu tokens, Zipf(%g) popularity, block %u;\n"
	       "one cached prefix keeps its %llu full blocks = %s\n", t1,
	       (unsigned long long)cc->prefix_tokens, cc->zipf_s, cc->block_size,
	       (unsigned long long)(cc->prefix_tokens / cc->block_size), t2);
	printf("%.0f%% of the requests carry a prefix and look it up (hit%% is of theirs)\n",
	       100 * cc->carrier_fraction);
	printf("%12s %7s %9s %8s %14s %14s %13s %17s\n", "cache", "%pool", "prefixes", "hit%",
	       "saved tok/car", "saved tok/req", "seqs given up", "hit% id first");
	for (size_t i = 0; i < ncache; i++) {
		kvp_format_bytes(cache[i].shared.cache_bytes, t1, sizeof t1);
		printf("%12s %7.2f %9llu %8.2f %14.1f %14.1f %13.1f %17.2f\n", t1,
		       100.0 * (double)cache[i].shared.cache_bytes / (double)fc->pool_bytes,
		       (unsigned long long)cache[i].shared.capacity_prefixes,
		       100 * cache[i].shared.hit_rate,
		       cache[i].shared.saved_prefill_tokens_per_carrier,
		       cache[i].shared.saved_prefill_tokens,
		       cache[i].displaced, 100 * cache[i].stamped.hit_rate);
	}
	printf("  saved tok/car: prefill tokens saved per carrying request; tok/req: per request\n"
	       "  of the stream (times the carrying share).\n");
	printf("  seqs given up: cache bytes / pool bytes per live sequence at the recommended\n"
	       "  block; id first: the same prefixes behind a timestamp or request id share nothing.\n");
}

bool kvp_frag_print_record(const struct kvp_frag_report *rep, enum kvp_format format,
			   const struct kvp_cli_warnings *warn, const struct kvp_frag_cache_row *cache,
			   size_t ncache)
{
	if (format == KVP_FORMAT_CSV) {
		struct kvp_record *recs[KVP_FRAG_MAX_ROWS] = {NULL};
		size_t nrec = 0;
		for (size_t i = 0; i < rep->nrows; i++)
			if ((recs[nrec] = kvp_frag_row_to_record(&rep->rows[i])))
				nrec++;
		kvp_cli_write_rows(stdout, format, recs, nrec, NULL);
		for (size_t i = 0; i < nrec; i++)
			kvp_record_free(recs[i]);
		return true;
	}
	struct kvp_record *top = kvp_record_new();
	bool ok = top && kvp_frag_to_record(rep, top) && kvp_cli_warnings_to_record(warn, top);
	for (size_t i = 0; i < ncache && top; i++)
		for (int stamped = 0; stamped < 2; stamped++) {
			const struct kvp_frag_cache_result *x = stamped ? &cache[i].stamped : &cache[i].shared;
			struct kvp_record *cr = kvp_record_new();
			bool good = cr && kvp_record_str(cr, "prefix_first", stamped ? "request-id" : "shared") &&
				    kvp_record_u64(cr, "cache_bytes", x->cache_bytes) &&
				    kvp_record_u64(cr, "capacity_prefixes", x->capacity_prefixes) &&
				    kvp_record_f64(cr, "hit_rate", x->hit_rate) &&
				    kvp_record_f64(cr, "saved_prefill_tokens", x->saved_prefill_tokens) &&
				    kvp_record_f64(cr, "saved_prefill_tokens_per_carrier",
						   x->saved_prefill_tokens_per_carrier) &&
				    kvp_record_f64(cr, "sequences_given_up", cache[i].displaced);
			if (!good) {
				kvp_record_free(cr);
				ok = false;
			} else if (!kvp_record_push(top, "prefix_cache", cr)) {
				ok = false;
			}
		}
	if (ok)
		kvp_write_json(stdout, top);
	kvp_record_free(top);
	return ok;
}
