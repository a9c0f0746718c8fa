#!/bin/sh
# cli-gemm-table.sh: `kvplan perf` with the measured GEMM tables of
# profiles/kernels (src/time/gemm-table.c): which one is named, when none is
# used, and a malformed one refused with its file, line and field (exit 3).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

# 16-bit weights on an H100 SXM: the bf16 table; fp8 weights: the fp8 one
run "$KVPLAN" perf --model llama-2-7b --gpu h100-sxm --prompt 128 --output 1 --format json
expect_rc 0
expect_json gemm_table gemm-h100-sxm-bf16.tsv
run "$KVPLAN" perf --model llama-2-7b --gpu h100-sxm --weights-dtype fp8 --prompt 128 --output 1 --format json
expect_json gemm_table gemm-h100-sxm-fp8.tsv
# no table: a GPU without one (A100 40 GB), weight-only int4, an efficiency given
run "$KVPLAN" perf --model llama-2-7b --gpu a100-40gb --prompt 128 --output 1 --format json
expect_json gemm_table null
run "$KVPLAN" perf --model llama-2-7b --gpu h100-sxm --weights-dtype int4-awq --prompt 128 --output 1 --format json
expect_json gemm_table null
run "$KVPLAN" perf --model llama-2-7b --gpu h100-sxm --prefill-flops-efficiency 0.5 --prompt 128 --output 1 --format json
expect_json gemm_table null
expect_json prefill_flops_efficiency 0.5
# the text names it
run "$KVPLAN" perf --model llama-2-7b --gpu h100-sxm --prompt 128 --output 1
expect_out "measured GEMM table gemm-h100-sxm-bf16.tsv"

# a malformed table found first on $KVPLAN_PROFILES: exit 3, file:line: field
mkdir -p "$tmp/p/kernels"
printf '# bad\nm n k tflops\n1 512 512 fast\n' > "$tmp/p/kernels/gemm-h100-sxm-bf16.tsv"
run env KVPLAN_PROFILES="$tmp/p" "$KVPLAN" perf --model llama-2-7b --gpu h100-sxm --prompt 128 --output 1
expect_rc 3
expect_err "$tmp/p/kernels/gemm-h100-sxm-bf16.tsv:3:"
expect_err "tflops: 'fast' is not a positive number"
printf 'm n k\n' > "$tmp/p/kernels/gemm-h100-sxm-bf16.tsv"
run env KVPLAN_PROFILES="$tmp/p" "$KVPLAN" perf --model llama-2-7b --gpu h100-sxm --prompt 128 --output 1
expect_rc 3
expect_err "gemm-h100-sxm-bf16.tsv:1:1: error: header"
finish
