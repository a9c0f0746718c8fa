#!/bin/sh
# cli-columns.sh: the machine output's column lists are pinned: each
# command's CSV header is written out below and must not move with the
# options; every CSV column and JSON field is listed, with its unit, in
# kvplan(1)'s MACHINE OUTPUT; bytes print as exact integers.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

budget_cols="schema_version,model,gpu,engine,tp,pp,block_size,dtype,kv_dtype,context,batch,kv_bytes_per_token,kv_bytes_per_token_total,kv_state_bytes_per_sequence,kv_bytes_per_sequence,kv_bytes,gpu_memory_bytes,utilization,usable_bytes,weights_bytes,activation_bytes,overhead_bytes,headroom_bytes,kv_pool_bytes,page_bytes,kv_groups,padding_layers,num_blocks,max_tokens,max_tokens_one_sequence,max_sequences,fits,engine_version,engine_version_asked,engine_version_range,engine_version_nearest,max_num_seqs,max_batched_tokens,max_tokens_low,max_tokens_high,max_sequences_low,max_sequences_high,estimated_terms,tower_bytes,dp,ep,gpus,weights_embed_bytes,weights_dense_bytes,weights_shared_expert_bytes,weights_routed_expert_bytes,weights_draft_bytes,dp_sequences,weights_dtype,weights_expert_dtype,weights_source,weights_rotary_cache_bytes,max_context,utilization_needed,encoder_profile_bytes,encoder_profile_items,encoder_profile_tokens_per_item,encoder_profile_modality"
perf_cols="schema_version,batch,prefill_flops,prefill_s,prefill_bound,ttft_s,ttft_chunked_s,prefill_chunk_tokens,prefill_chunk_steps,decode_bytes_per_step,decode_weights_bytes_per_step,decode_kv_bytes_per_step,decode_flops_per_step,decode_compute_s,decode_memory_s,comm_s_per_step,moe_comm_s_per_step,rank_batch,dp_balance,decode_fixed_s,prefill_fixed_s,pp_micro_batches,tpot_s,tpot_s_low,tpot_s_high,ttft_s_low,ttft_s_high,tpot_loaded_s,e2e_s,decode_tokens_per_s,output_tokens_per_s,output_tokens_per_s_low,output_tokens_per_s_high,total_tokens_per_s,bound,kv_bytes,fits,spec_tokens_per_step,spec_verify_s,spec_draft_s,transfer_bytes_per_step,transfer_s_per_step,tpot_serial_s,offload_bound,output_tokens_per_s_per_gpu,decode_eager_s,prefill_eager_s,decode_moe_s,prefill_moe_s"
frag_cols="schema_version,policy,allocator,block_size,used_fraction,internal_waste_fraction,external_waste_fraction,free_fraction,metadata_bytes,max_sequences,mean_sequences,peak_sequences,refused_with_free_memory,preemptions,dropped,waste_tokens_per_sequence,expected_waste_tokens,num_blocks,held_bytes_per_sequence,measured_steps"
size_cols="schema_version,gpu,count,tp,replicas,meets,failed,cost_per_hour,cost_per_mtok,price_per_hour,rate_per_replica,concurrency,sequences,prefill_s,prefill_utilization,queue_s,ttft_s,tpot_s,bound,tokens_per_s,weights_bytes,kv_pool_bytes,kv_bytes_needed,max_sequences,max_num_seqs,utilization,never,floor_ttft_s,floor_tpot_s,cost_basis,cloud_price_per_hour,own_price_per_hour,pp,dp,ep,kv_dtype,pareto,queue_p_s,disagg_p,disagg_d,transfer_s,risk,verdict,miss_ttft_s,miss_tpot_s,miss_sequences,latency_spread,latency_spread_from,simulated,sim_capacity"
validate_cols="schema_version,file,line,kind,backend,kv_dtype,num_heads,num_kv_heads,head_dim,block_size,layers,batch,context,tokens,lengths,basis,bandwidth_gbps,efficiency,predicted_kv_bytes,unit,measured,predicted,error,sequences,predicted_sequences,within,large"
validate_bench_cols="schema_version,run,format,measure,batch,prompt_tokens,output_tokens,measured_s,predicted_s,error,measured_over_predicted,in_band,within,queued"
bench="$top_srcdir/tests/data/bench"

# header CMD COLS ARGS...: the CSV header of `kvplan CMD ARGS --format csv`
header() {
	cmd=$1 want=$2
	shift 2
	name="kvplan $cmd $* --format csv: header"
	"$KVPLAN" "$cmd" "$@" --format csv >"$tmp/out" 2>"$tmp/err"
	got=$(head -n 1 "$tmp/out")
	if [ "$got" = "$want" ]; then ok; else bad "header is $got"; fi
}

header budget "$budget_cols" --model llama-3.1-8b --gpu h100-sxm --context 8k
header budget "$budget_cols" --model llama-3.1-8b --gpu h100-sxm --context 8k --max-context
header budget "$budget_cols" --model llama-3.1-8b --gpu h100-sxm --context 8k --target-utilization
header budget "$budget_cols" --model jamba-v0.1 --gpu h200 --context 8k --engine vllm
header perf "$perf_cols" --model llama-3.1-8b --gpu h100-sxm
header perf "$perf_cols" --model llama-3.1-8b --gpu h100-sxm --kv-offload cpu --batch 1,64
header perf "$perf_cols" --model llama-3.1-70b --gpu h100-sxm --tp 4 --kv-offload nvme --offload-fraction 0.5
header frag "$frag_cols" --model llama-3.1-8b --gpu h100-sxm --workload chat --requests 300
header frag "$frag_cols" --model llama-3.1-8b --gpu h100-sxm --workload chat --requests 300 \
	--shared-prefix 512:0.5 --block-sizes 16,32
header size "$size_cols" --model llama-3.1-8b --workload chat --rate 4
header size "$size_cols" --model llama-3.1-8b --workload chat --rate 4 --ttft 1 --tpot 0.05 --gpus all
header validate "$validate_cols" "$top_srcdir/reports/cpu-decode-2026-11-29.yaml"
header validate "$validate_cols" "$top_srcdir/reports/cpu-capacity-2026-11-29.yaml"
header validate "$validate_cols" "$top_srcdir/reports/cpu-decode-2026-11-29.yaml" --calibrate-by shape
header validate "$validate_bench_cols" --gpu h100-sxm --model llama-3.1-8b "$bench/sglang-one-batch.jsonl"

# a field that does not apply is an empty cell: without --kv-offload the
# four offload cells of perf's row are empty (",,,,")
"$KVPLAN" perf --model llama-3.1-8b --gpu h100-sxm --format csv >"$tmp/out"
name="perf without offload: empty offload cells"
if sed -n 2p "$tmp/out" | grep -q ',true,,,,,'; then ok; else bad "$(sed -n 2p "$tmp/out")"; fi

# bytes exactly: 8,192 tokens x 131,072 B = 1,073,741,824 B (not 1.07374e+09)
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --context 8192 --format csv
expect_out ",1073741824,"
# a FLOP count held in a double prints as its whole number, no exponent
run "$KVPLAN" perf --model llama-3.1-8b --gpu h100-sxm --format json
name="perf JSON has no exponent in a FLOP count"
if grep -q '"decode_flops_per_step": [0-9]*,$' "$tmp/out"; then ok; else bad "$(grep decode_flops "$tmp/out")"; fi
expect_out '"schema_version": 1,'

# every field has its line, with a unit, in kvplan(1)'s MACHINE OUTPUT
man_fields=$(sed -n '/^\.SH MACHINE OUTPUT/,/^\.SH /p' "$top_srcdir/man/kvplan.1")
listed() {
	name="kvplan(1) MACHINE OUTPUT lists $1 with a unit"
	case "$man_fields" in *"\\fB$1\\fR ("*) ok ;; *) bad "missing" ;; esac
}
for f in $(echo "$budget_cols,$perf_cols,$frag_cols,$size_cols,$validate_cols,$validate_bench_cols" | tr ',' ' ' | sort -u); do
	listed "$f"
done
# and the JSON-only fields of each command's top object
for c in "budget --model llama-3.1-8b --gpu h100-sxm --context 8k" \
	 "perf --model llama-3.1-8b --gpu h100-sxm" \
	 "frag --model llama-3.1-8b --gpu h100-sxm --workload chat --requests 300" \
	 "size --model llama-3.1-8b --workload chat --rate 4 --emit vllm" \
	 "validate $top_srcdir/reports/cpu-decode-2026-11-29.yaml" \
	 "validate --gpu h100-sxm --model llama-3.1-8b $bench/sglang-one-batch.jsonl"; do
	# shellcheck disable=SC2086
	"$KVPLAN" $c --format json 2>/dev/null | sed -n 's/^  "\([a-z0-9_]*\)": .*/\1/p' >"$tmp/keys"
	for f in $(cat "$tmp/keys"); do listed "$f"; done
done
finish
