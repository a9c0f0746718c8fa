#!/bin/sh
# cli-moe-table.sh: `kvplan perf` with the measured MoE tables of
# profiles/kernels (src/time/moe-table.c): the table named and its term by
# hand, an engine that does not run those kernels, a deployment the table
# never measured (warning, widened band), and a malformed table refused with
# its file, line and field (exit 3).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

# expect_near NAME VALUE REL: json NAME within a relative tolerance of VALUE
expect_near() {
	v=$(json "$1")
	if awk -v v="$v" -v w="$2" -v t="$3" 'BEGIN { d = v - w; if (d < 0) d = -d;
		exit !(v != "" && d <= t * (w < 0 ? -w : w)) }'; then ok; else bad "$1 = '$v', want $2 (+-$3)"; fi
}

# Qwen3-235B-A22B (94 layers, all MoE: profiles/models/qwen3-235b-a22b.yaml)
# fp8 on 8 H200s, TensorRT-LLM (moe_kernel_tables: true): moe_tp 8, moe_ep 1.
# aiconfigurator-core 0.12.0, h200_sxm moe_perf.parquet (1.3.0rc20, fp8,
# power_law_1.2, moe_torch_flow_cutlass), (4096, 1536, 8, 128), tp 8 ep 1:
# 1 token 0.03379 ms, 1024 tokens 0.27562 ms (as the table keeps them,
# 33.79 and 275.6 us).  A prefill of 1,024 tokens: 94 x 275.6e-6 =
# 0.0259064 s; a decode step of one sequence: 94 x 33.79e-6 = 0.00317626 s.
q="--model qwen3-235b-a22b --gpu h200 --tp 8 --weights-dtype fp8 --prompt 1024 --output 2"
run "$KVPLAN" perf $q --engine trtllm --batch 1 --format json
expect_rc 0
expect_json moe_table moe-h200-fp8.tsv
expect_near prefill_moe_s 0.0259064 1e-9
expect_near decode_moe_s 0.00317626 1e-9
# the band is the engine's (profiles/engines/trtllm.yaml: 0.84, 1.15)
expect_json time_ratio_low 0.84
expect_json time_ratio_high 1.15
# the text names the table and adds the term to the step
run "$KVPLAN" perf $q --engine trtllm --batch 1
expect_out "routed experts at the measured MoE table moe-h200-fp8.tsv"
expect_out "moe_tp 8, moe_ep 1"
expect_out " + experts 3.18 ms = "
# vLLM runs its own fused MoE, not the kernels measured: no table, 0
run "$KVPLAN" perf $q --engine vllm --batch 1 --format json
expect_json moe_table null
expect_json decode_moe_s 0
# a dense model: none
run "$KVPLAN" perf --model llama-3.1-8b --gpu h200 --engine trtllm --prompt 128 --output 2 --format json
expect_json moe_table null

# Qwen3-30B-A3B nvfp4 on 8 RTX PRO 6000: the table has (2048, 768, 8, 128)
# only up to moe_tp 4 (768 / 8 = 96 was not measured): a warning, the
# roofline keeps the experts, the band widened each end twice as far from 1:
# 1 - 2 x (1 - 0.84) = 0.68, 1 + 2 x (1.15 - 1) = 1.30
run "$KVPLAN" perf --model qwen3-30b-a3b --gpu rtx-pro-6000 --tp 8 --weights-dtype nvfp4 \
	--engine trtllm --prompt 1000 --output 2 --batch 64 --format json
expect_rc 0
expect_err "warning: the MoE table did not measure this expert group (moe_tp 8, moe_ep 1)"
expect_json moe_table null
expect_json decode_moe_s 0
expect_near time_ratio_low 0.68 1e-9
expect_near time_ratio_high 1.30 1e-9
expect_out '"code": "moe_table_shape"'

# a malformed table found first on $KVPLAN_PROFILES: exit 3, file:line: field
mkdir -p "$tmp/p/kernels"
printf '# bad\nhidden inter topk experts moe_tp moe_ep tokens latency_us\n4096 1536 8 128 8 1 16 slow\n' \
	> "$tmp/p/kernels/moe-h200-fp8.tsv"
run env KVPLAN_PROFILES="$tmp/p" "$KVPLAN" perf $q --engine trtllm
expect_rc 3
expect_err "$tmp/p/kernels/moe-h200-fp8.tsv:3:24: error: latency_us: 'slow' is not a positive number"
printf 'hidden inter topk\n' > "$tmp/p/kernels/moe-h200-fp8.tsv"
run env KVPLAN_PROFILES="$tmp/p" "$KVPLAN" perf $q --engine trtllm
expect_rc 3
expect_err "moe-h200-fp8.tsv:1:1: error: header"
finish
