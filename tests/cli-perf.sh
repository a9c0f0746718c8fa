#!/bin/sh
# cli-perf.sh: golden tests of `kvplan perf`.  Expected values are hand
# arithmetic written beside each check, or the seed figures of issue 5.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

# expect_near NAME VALUE REL: json NAME within a relative tolerance of VALUE
expect_near() {
	v=$(json "$1")
	if awk -v v="$v" -v w="$2" -v t="$3" 'BEGIN { d = v - w; if (d < 0) d = -d;
		exit !(v != "" && d <= t * (w < 0 ? -w : w)) }'; then ok; else bad "$1 = '$v', want $2 (+-$3)"; fi
}

# The seed: Llama-2-7B, 2,048 tokens of KV = 2,048 x 512 KiB = 1 GiB; all of it
# in host memory, over PCIe 4.0 x16 at an effective 25 GB/s:
# 1,073,741,824 / 25e9 = 0.04294967296 s, "about 40 ms" per pass.
seed="--model llama-2-7b --gpu a100-80gb --output 1 --kv-offload cpu --offload-fraction 1 --host-link pcie4x16"
run "$KVPLAN" perf --engine generic $seed --prompt 2048 --format json
expect_rc 0
expect_json kv_bytes_per_token 524288
expect_json decode_context 2048                 # prompt + (1 - 1) / 2
expect_json transfer_bytes_per_step 1073741824
expect_json transfer_s_per_step 0.04294967296
expect_json offload_bound transfer
expect_json offload_link pcie4x16
expect_json offload_link_bps 25000000000           # 25 GB/s
# decode reads 6,738,415,616 x 2 B of weights + 1 GiB = 14,550,573,056 B
expect_json decode_bytes_per_step 14550573056
# at 32K one token costs over 0.6 s: 16 GiB / 25 GB/s = 0.6871947674 s
run "$KVPLAN" perf --engine generic $seed --prompt 32k --format json
expect_json transfer_bytes_per_step 17179869184
expect_json transfer_s_per_step 0.68719476736         # 17,179,869,184 / 25e9, exact
v=$(json tpot_s)
awk -v v="$v" 'BEGIN { exit !(v > 0.6) }' && ok || bad "tpot_s $v is not over 0.6 s"

# DeepSeek-V3 over dp 8, ep 8 (issue 34.7): one sequence in the deployment
# is one token at the experts (8/256 of them read), eight sequences are eight
# (1 - (31/32)^8 = 22.4 %); both fill a rank with one sequence, and were
# timed alike.  A prompt alone spreads its routed FLOPs over the 8 GPUs: its
# TTFT is below that of a prompt on every rank at once.
run "$KVPLAN" perf --engine generic --model deepseek-v3 --gpu h200 --dp 8 --ep 8 --prompt 4096 --output 512 \
	--batch 1,8 --format csv
expect_rc 0
w1=$(printf '%s\n' "$out" | awk -F, 'NR == 2 { print $11 }')
w8=$(printf '%s\n' "$out" | awk -F, 'NR == 3 { print $11 }')
t1=$(printf '%s\n' "$out" | awk -F, 'NR == 2 { print $6 }')
t8=$(printf '%s\n' "$out" | awk -F, 'NR == 3 { print $6 }')
awk -v a="$w1" -v b="$w8" -v s="$t1" -v t="$t8" 'BEGIN { exit !(a < b && s < t) }' && ok ||
	bad "batch 1 weights $w1 ttft $t1 against batch 8 $w8 $t8"

# TTFT with offload (issue 34.5: ttft_chunked left the transfer out, 3.9 s
# for the README's 8 x 32k): the 7 decodes alone hold 7 x 16 GiB = 112 GiB
# against a pool of about 56.8 GiB, so each of the ceil(32,768 / 8,185) = 5
# chunk steps moves at least 55.2 GiB = 59.3e9 B, 2.37 s at 25 GB/s: over
# 11.86 s before the prompt's own chunks; TPOT moves 71.2 GiB, 3.06 s
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --prompt 32k --output 1 --batch 8 \
	--kv-offload cpu --host-link pcie4x16 --format json
expect_rc 0
expect_json prefill_chunk_steps 5
v=$(json ttft_chunked_s)
awk -v v="$v" 'BEGIN { exit !(v > 12 && v < 5 * 3.1) }' && ok || bad "ttft_chunked_s $v, want 12 to 15.5 s"
# the batch at once writes the 71.2 GiB beyond the pool out: 3.06 s, hidden
# under its 30.9 s of compute but for one layer's share, 3.06 / 32 = 0.096 s.
# prefill_s is the roofline's; ttft_s also holds the pass's elementwise
# kernels (the A100's GEMM table is in use): Llama-2-7B moves 5,292,032 B a
# token in them (tests/check-perf.c), x 8 x 32,768 = 1,387,274,436,608 B over
# 2,039 GB/s x 0.80 = 0.8505 s
v=$(json ttft_s)
p=$(json prefill_s)
awk -v v="$v" -v p="$p" 'BEGIN { d = v - p - 1387274436608 / (2039e9 * 0.80)
	exit !(d > 0.09 && d < 0.1) }' && ok ||
	bad "ttft_s $v against prefill_s $p"

# NVMe at 7 GB/s: 1 GiB / 7e9 = 0.1533916891 s
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --prompt 2048 --output 1 \
	--kv-offload nvme:7GB/s --offload-fraction 1 --format json
expect_json transfer_s_per_step 0.15339168914285714   # 1,073,741,824 / 7e9 = 0.153391689142857142...
expect_json offload disk

# Memory runs out: 24 GiB, all usable, 13 GiB of weights, nothing else: an
# 11 GiB pool; 2,048 tokens = 128 blocks of 8 MiB = 1 GiB per sequence, so 11
# sequences fit and 12 do not (exit 1).  Decode at prompt 2,047: 11 x 2,047 x
# 524,288 = 11,805,392,896 B of KV read; weights read = the 13 GiB given.
mem="--model llama-2-7b --gpu a100-80gb --gpu-memory 24GiB --utilization 1 --weights-bytes 13GiB
     --activation-bytes 0 --overhead-bytes 0 --prompt 2047 --output 1"
run "$KVPLAN" perf --engine generic $mem --batch 11 --format json
expect_rc 0
expect_json max_batch 11
expect_json fits true
expect_json decode_kv_bytes_per_step 11805392896
expect_json decode_weights_bytes_per_step 13958643712
run "$KVPLAN" perf --engine generic $mem --batch 11,12 --format json
expect_rc 1
# the KV that does not fit spills to host memory with --kv-offload cpu:
# 12 x 2,047 x 524,288 = 12,878,610,432 - 11 GiB (11,811,160,064) = 1,067,450,368 B
run "$KVPLAN" perf --engine generic $mem --batch 12 --kv-offload cpu --format json
expect_rc 0
expect_json transfer_bytes_per_step 1067450368
expect_json fits true

# The efficiencies: A100 80GB 2.039 TB/s x 0.5 = 1.0195 TB/s; one sequence of
# 2,048 tokens reads 14,550,573,056 B -> 14.2723 ms
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --prompt 2048 --output 1 \
	--decode-bw-efficiency 0.5 --format json
expect_json decode_bw_efficiency 0.5
expect_near decode_memory_s 0.0142722639 1e-6
# the same from a calibration file (kvplan's table)
cat >"$tmp/cal.yaml" <<EOF
calibration:
  - gpu: a100-80gb
    decode_bw_efficiency: 0.5
    prefill_flops_efficiency: 0.25
EOF
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --prompt 2048 --output 1 \
	--calibration "$tmp/cal.yaml" --format json
expect_rc 0
expect_json decode_bw_efficiency 0.5
expect_json prefill_flops_efficiency 0.25
expect_near decode_memory_s 0.0142722639 1e-6
# the table names the calibration file with its control bytes escaped: an ESC
# in the file's name reaches the terminal as \x1b, never raw
esc=$(printf 'cal\033[2Jx.yaml')
cp "$tmp/cal.yaml" "$tmp/$esc"
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --prompt 2048 --output 1 --calibration "$tmp/$esc"
expect_rc 0
expect_out 'calibrated from '
expect_out 'cal\x1b[2Jx.yaml'
name="perf: no raw ESC from a calibration's name"
case $out in *"$(printf '\033')"*) bad "raw ESC in: $out" ;; *) ok ;; esac

# --calibration twice (issue 38): an engine calibration (the weights at 0.6,
# prefill at 0.5, 1 ms a step, a fitted latency_spread of 0.05 over 4 points)
# and a kvbench run of an H20 (tests/data/good/kvbench-cuda-h20.yaml: its
# decode figure 0.8, the median of 1.024/1.28, 2.048/2.40 and 4.096/5.60 ms)
# compose: the kernel's figure is the KV read, the engine's all the rest.
# llama-2-7b at 2,048 tokens on an H20 (4.0 TB/s, profiles/gpus/h20.yaml):
#   weights 6,738,415,616 params x 2 B = 13,476,831,232 B at 4.0e12 x 0.6:
#     13,476,831,232 / 2.4e12 = 5.615346347e-3 s
#   KV 2,048 x 524,288 B = 1,073,741,824 B at 4.0e12 x 0.8 (the kernel's):
#     1,073,741,824 / 3.2e12 = 3.3554432e-4 s
#   memory 5.950890667e-3 s; + 1 ms fixed (the engine calibration's) =
#   TPOT 6.950890667e-3 s; the band 1 -/+ 0.05: 0.95 and 1.05, so
#   tpot_s_low = 6.950890667e-3 x 0.95 = 6.603346133e-3 s
kern="$top_srcdir/tests/data/good/kvbench-cuda-h20.yaml"
printf '%s\n' 'calibration:' '  - gpu: h20' '    decode_bw_efficiency: 0.6' \
	'    prefill_flops_efficiency: 0.5' '    step_fixed_s: 0.001' '    latency_spread: 0.05' \
	'    points: 4' >"$tmp/eng.yaml"
two="--engine generic --model llama-2-7b --gpu h20 --prompt 2048 --output 1"
for first in eng kern; do
	if [ $first = eng ]; then c1="$tmp/eng.yaml" c2="$kern"; else c1="$kern" c2="$tmp/eng.yaml"; fi
	run "$KVPLAN" perf $two --calibration "$c1" --calibration "$c2" --format json
	expect_rc 0
	expect_json decode_bw_efficiency 0.6
	expect_json prefill_flops_efficiency 0.5
	expect_near kv_bw_efficiency 0.8 1e-9
	expect_json step_fixed_s 0.001
	expect_json calibration "$tmp/eng.yaml"
	expect_json calibration_kernel "$kern"
	expect_near decode_memory_s 5.950890667e-3 1e-9
	expect_near tpot_s 6.950890667e-3 1e-9
	expect_json time_ratio_low 0.95
	expect_json time_ratio_high 1.05
	expect_near tpot_s_low 6.603346133e-3 1e-9
done
# the table names both files and which constants each gave
run "$KVPLAN" perf $two --calibration "$tmp/eng.yaml" --calibration "$kern"
expect_rc 0
expect_out "calibration $tmp/eng.yaml (an engine calibration): decode_bw_efficiency, prefill_flops_efficiency, step_fixed_s, latency_spread (the band)"
expect_out "calibration $kern (a kvbench run): kv_bw_efficiency 0.8 (its decode figure, the KV read)"
expect_out "band on times: x0.95 to x1.05 of each time printed (1 -/+ the calibration's spread)"
# the engine calibration fitted kv_bw_efficiency itself (0.5): it wins, the
# kernel's figure is not used, and a warning says so.  KV at 4.0e12 x 0.5:
# 1,073,741,824 / 2.0e12 = 5.36870912e-4 s; memory 5.615346347e-3 +
# 5.36870912e-4 = 6.152217259e-3 s
echo '    kv_bw_efficiency: 0.5' >>"$tmp/eng.yaml"
run "$KVPLAN" perf $two --calibration "$tmp/eng.yaml" --calibration "$kern" --format json
expect_rc 0
expect_err "warning: --calibration: $tmp/eng.yaml fitted kv_bw_efficiency 0.5 itself, which wins; the kvbench figure of $kern was not used"
expect_out '"code": "calibration_kernel_unused"'
expect_json kv_bw_efficiency 0.5
expect_near decode_memory_s 6.152217259e-3 1e-9
run "$KVPLAN" perf $two --calibration "$tmp/eng.yaml" --calibration "$kern"
expect_out "not used (the engine calibration fitted kv_bw_efficiency)"
# two of one kind, or a third file: usage errors naming the flag
run "$KVPLAN" perf $two --calibration "$kern" --calibration "$kern"
expect_rc 2
expect_err "kvplan perf: --calibration: $kern and $kern are both kvbench runs"
run "$KVPLAN" perf $two --calibration "$tmp/eng.yaml" --calibration "$tmp/eng.yaml"
expect_rc 2
expect_err "are both engine calibrations"
run "$KVPLAN" perf $two --calibration "$tmp/eng.yaml" --calibration "$kern" --calibration "$kern"
expect_rc 2
expect_err "--calibration: at most 2 files"
# the band from one engine calibration alone: a spread of 0.2 over 6 points
# gives 0.8 and 1.2; a spread of 1.5 cannot bound the low end by
# subtraction: 1 / (1 + 1.5) = 0.4, and 2.5; with no points (written by hand)
# or from a kvbench run (the kernel alone), the generic engine's band stays
# (0.77 and 1.32: src/time/step.h KVP_PERF_DEFAULT_TIME_RATIO_*); with a
# leave-one-out spread the larger of the two: 0.07 over 0.02 gives 0.93 and
# 1.07; 0.03 under 0.05 leaves 0.95 and 1.05 (never narrower than the fit's)
for sp in "0.2 6 0.8 1.2" "1.5 6 0.4 2.5" "0.2 0 0.77 1.32" "0.02 6 0.93 1.07 0.07" \
	"0.05 6 0.95 1.05 0.03"; do
	set -- $sp
	printf 'calibration:\n  - gpu: h20\n    decode_bw_efficiency: 0.6\n    latency_spread: %s\n    points: %s\n' \
		"$1" "$2" >"$tmp/band.yaml"
	[ -n "${5:-}" ] && printf '    latency_spread_loo: %s\n' "$5" >>"$tmp/band.yaml"
	run "$KVPLAN" perf $two --calibration "$tmp/band.yaml" --format json
	expect_near time_ratio_low "$3" 1e-12
	expect_near time_ratio_high "$4" 1e-12
done
run "$KVPLAN" perf $two --calibration "$kern" --format json
expect_json time_ratio_low 0.77
expect_json time_ratio_high 1.32
expect_json calibration_kernel null

# The context-doubling point at 4,096 tokens: KV x2; prefill attention
# 8,192 x 8,193 / (4,096 x 4,097) = 2 x 8,193 / 4,097 = 3.999511838
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --prompt 4096 --output 1 --format json
expect_json kv_ratio_2x_context 2
expect_json attention_flops_ratio_2x_context 3.999511837930193   # 16,386 / 4,097 = 3.99951183793019282...
# attention of 4,096 tokens: 32 layers x 2 x 32 heads x 256 x 4,096 x 4,097 / 2
# = 262,144 x 16,781,312 = 4,399,120,252,928 FLOPs
expect_json prefill_attention_flops 4399120252928

# Tensor parallel over NVLink: H100 SXM 900 GB/s both ways = 4.5e11 each way;
# Llama-3.1-70B at tp 4: 80 layers x 2 all-reduces of 8,192 x 2 B per token:
# 160 x (2 x 3/4 x 16,384 / 4.5e11 + 10 us) = 1.60874 ms per decode step
run "$KVPLAN" perf --engine generic --model llama-3.1-70b --gpu h100-sxm --tp 4 --prompt 4096 --output 512 \
	--batch 1,8,32 --format json
expect_rc 0
expect_json tp_link_bps 450000000000
expect_near comm_s_per_step 0.00160873813 1e-6
expect_json batch 1
expect_json bound bandwidth

# the table shows the steps
run "$KVPLAN" perf --engine generic --model llama-3.1-70b --gpu h100-sxm --tp 4 --prompt 4096 --output 512 \
	--batch 1,8,32,128
expect_rc 1                                   # 128 sequences of 4,608 tokens do not fit
expect_out "Prefill of 4,096 tokens"
expect_out "Decode step at the mean context 4,351 tokens"   # 4,096 + 511 / 2
expect_out "prefill attention FLOPs x4.00"
expect_out "DOES NOT FIT"
expect_out "tp all-reduce over nvlink, 450.00 GB/s per direction"

# eight RTX 3090s are bridged in pairs: tp 8 all-reduces cross PCIe 4.0 (25 GB/s
# effective), and the JSON names the link
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu rtx-3090 --tp 8 --batch 1
expect_out "tp all-reduce over pcie4x16, 25.00 GB/s per direction"
expect_out "larger than the NVLink domain of 2 GPUs"
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu rtx-3090 --tp 8 --batch 1 --format json
expect_json tp_link pcie4x16
expect_json tp_link_bps 25000000000

# eight RTX PRO 6000 Server cards: no NVLink, so NCCL's ring over PCIe at the
# profile's measured 23.53 GB/s bus bandwidth for 8 (aiconfigurator's nccl-tests
# table), not the 50 GB/s of a PCIe 5.0 copy; 4 of them 24.97 GB/s
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu rtx-pro-6000 --tp 8 --batch 1
expect_out "tp all-reduce over pcie5x16, 23.53 GB/s per direction"
expect_out "(NCCL's ring over PCIe: the profile's measured bus bandwidth)"
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu rtx-pro-6000 --tp 4 --batch 1 --format json
expect_json tp_link pcie5x16
expect_json tp_link_bps 24970000000

# data-parallel attention with expert parallelism: 12 sequences over 8 DP ranks,
# the fullest rank holding ceil(12/8) = 2 (balance 12 / 16 = 0.75); the experts'
# all-to-all crosses the H200 board's NVLink
run "$KVPLAN" perf --engine generic --model deepseek-v3 --gpu h200 --dp 8 --ep 8 --batch 12
expect_rc 0
expect_out "(batch 12: 2, balance 0.75)"
expect_out "experts' all-to-all over nvlink (8 GPUs), 450.00 GB/s per direction"
run "$KVPLAN" perf --engine generic --model deepseek-v3 --gpu h200 --dp 8 --ep 8 --batch 12 --format json
expect_json moe_link nvlink
expect_json gpus 8

# disaggregated 1P:1D Llama-3.1-70B on H100s, tp 4 each: a 4,096-token prompt's
# KV, 80 x 2 x 8 x 128 x 2 B x 4,096 = 1,342,177,280 B, over 400 Gb/s InfiniBand
# (50 GB/s per GPU, 4 GPUs at once) = 6.71 ms
run "$KVPLAN" perf --engine generic --model llama-3.1-70b --gpu h100-sxm --tp 4 --disagg 1:1 --kv-link ib400 \
	--prompt 4096 --output 512 --batch 1,16
expect_rc 0
expect_out "each request moves 1.25 GiB (1,342,177,280 B)"
expect_out "1,342,177,280 / (4 x 50.00 GB/s) = 6.71 ms"
run "$KVPLAN" perf --engine generic --model llama-3.1-70b --gpu h100-sxm --tp 4 --disagg 1:1 --kv-link ib400 \
	--prompt 4096 --output 512 --batch 1,16 --format json
expect_json kv_request_bytes 1342177280
expect_json transfer_s 0.0067108864
expect_json kv_link ib400
# the prefill_load note follows the figures (issue 34.9: it printed at a load
# of 0.08): 1:1 at batch 1 keeps up; at batch 64 the decode instance finishes
# 64 requests per 512 x 23.6 ms, 5.3/s, past the one prefill's 1 / 0.297 s
run "$KVPLAN" perf --engine generic --model llama-3.1-70b --gpu h100-sxm --tp 4 --disagg 1:1 --kv-link ib400 \
	--prompt 4096 --output 512 --batch 1
expect_rc 0
expect_out "prefill_load <= 1 at every batch"
case "$out" in *"prefill_load > 1"*) bad "the overload note at a load under 1" ;; *) ok ;; esac
run "$KVPLAN" perf --engine generic --model llama-3.1-70b --gpu h100-sxm --tp 4 --disagg 1:1 --kv-link ib400 \
	--prompt 4096 --output 512 --batch 1,64
expect_out "prefill_load > 1 at batch 64:"
# a link the GPUs do not have, and malformed counts, name their flag
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu rtx-4090 --disagg 1:1 --kv-link nvlink
expect_rc 3
expect_err "error: kv-link: rtx-4090 has no NVLink"
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --disagg 1x1
expect_rc 2
expect_err "error: disagg: expected P:D"
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --kv-link ib400
expect_rc 2
expect_err "need --disagg"

# speculative decoding, EAGLE on Llama-3.1-8B: K 4, acceptance 0.8:
# (1 - 0.8^5) / (1 - 0.8) = 3.3616 tokens per step
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --spec-draft eagle:4 --spec-accept 0.8
expect_rc 0
expect_out "(1 - a^(K+1)) / (1 - a) = 3.3616 tokens per step"
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --spec-draft eagle:4 --spec-accept 0.8 \
	--format json
expect_json spec_tokens_per_step 3.3616
# a draft with another vocabulary (Qwen3: 151,936 tokens; Llama 3.1: 128,256)
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --spec-draft qwen3-8b --spec-accept 0.7
expect_rc 3
expect_err "error: spec-draft: qwen3-8b has a vocabulary of 151936 tokens"
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --spec-accept 0.7
expect_rc 2
expect_err "--spec-accept needs --spec-draft"
# the per-position rate under its own name, and vLLM's logged accepted /
# drafted share: 1 + r K = 1 + 0.8 x 4 = 4.2 tokens per step (vLLM
# v1/spec_decode/metrics.py: mean acceptance length = 1 + accepted / drafts)
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --spec-draft eagle:4 --spec-accept-rate 0.8
expect_rc 0
expect_out "(1 - a^(K+1)) / (1 - a) = 3.3616 tokens per step"
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --spec-draft eagle:4 --spec-acceptance 0.8
expect_rc 0
expect_out "accepted / drafted r 0.80): 1 + r K = 4.2000 tokens per step"
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --spec-draft eagle:4 --spec-acceptance 80% \
	--format json
expect_json spec_tokens_per_step 4.2
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --spec-draft eagle:4 --spec-accept-rate 0.8 \
	--spec-acceptance 0.8
expect_rc 2
expect_err "say one thing two ways: give one"
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --spec-draft eagle:4 --spec-acceptance 1.5
expect_rc 2
expect_err "error: spec-acceptance: expected accepted / drafted draft tokens, in [0, 1]"
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --spec-acceptance 0.7
expect_rc 2
expect_err "--spec-acceptance needs --spec-draft"
# K is all that follows the colon (issue 37 N17)
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --spec-draft eagle:4:4 --spec-accept 0.8
expect_rc 2
expect_err "error: spec-draft: 'eagle:4:4': K, the draft tokens per step, is 1 to 16"
# a bad draft profile keeps its file:line:col and field (issue 37 N5: the
# message was formatted into itself, printing "error: spec-draft: " and no more)
sed 's/^num_heads: 32 .*/num_heads: 0/' "$top_srcdir/profiles/models/llama-3.1-8b.yaml" >"$tmp/draft.yaml"
line=$(grep -n '^num_heads:' "$tmp/draft.yaml" | cut -d: -f1)
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --spec-draft "$tmp/draft.yaml" --spec-accept 0.8
expect_rc 3
[ "$err" = "kvplan perf: $tmp/draft.yaml:$line:12: error: spec-draft: num_heads: must be positive" ] &&
	ok || bad "draft profile error: $err"
# a draft that cannot split at the target's tp (32 heads over 64 GPUs): said once
run "$KVPLAN" perf --engine generic --model llama-3.1-70b --gpu h100-sxm --tp 64 --spec-draft llama-3.1-8b --spec-accept 0.8
expect_rc 3
expect_err "error: spec-draft: the draft at tp 64: tp: 64 does not divide num_heads 32"
case "$err" in *"tp 64: the draft"*) bad "doubled prefix: $err" ;; *) ok ;; esac
# the draft step all-reduces over its own layers: EAGLE on 70B at tp 4
# (2 x 1 layer, not 2 x 80): its step is well under a millisecond
run "$KVPLAN" perf --engine generic --model llama-3.1-70b --gpu h100-sxm --tp 4 --spec-draft eagle:4 --spec-accept 0.8 \
	--prompt 4096 --output 512 --batch 1 --format json
v=$(json spec_draft_s)
awk -v v="$v" 'BEGIN { exit !(v > 0 && v < 0.001) }' && ok || bad "draft step $v s"

# CSV: the contract's fields, one line per batch
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --prompt 1024 --output 128 --batch 1,2,4 --format csv
expect_rc 0
expect_out "batch,prefill_flops,prefill_s,prefill_bound,ttft_s,ttft_chunked_s,prefill_chunk_tokens,prefill_chunk_steps,decode_bytes_per_step"
expect_out ",tpot_s,tpot_s_low,tpot_s_high,ttft_s_low,ttft_s_high,tpot_loaded_s,e2e_s,decode_tokens_per_s,output_tokens_per_s,"
[ "$(printf '%s\n' "$out" | wc -l)" = 4 ] && ok || bad "csv has $(printf '%s\n' "$out" | wc -l) lines"

# mistakes
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --kv-offload gpu
expect_rc 2
expect_err "--kv-offload"
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --offload-fraction 0.5
expect_rc 2
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --host-link pcie9x16
expect_rc 2
expect_err "unknown link 'pcie9x16'"
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --batch 0
expect_rc 2
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --decode-bw-efficiency 1.2
expect_rc 2
printf 'calibration:\n  - gpu: a100-80gb\n    decode_bw_efficiency: 2\n' >"$tmp/bad.yaml"
run "$KVPLAN" perf --engine generic --model llama-2-7b --gpu a100-80gb --calibration "$tmp/bad.yaml"
expect_rc 3
expect_err "bad.yaml:3:27: error: decode_bw_efficiency"
run "$KVPLAN" perf --engine generic --model llama-2-7b
expect_rc 2
run "$KVPLAN" perf --engine generic --help
expect_rc 0
expect_out "Usage: kvplan perf"
# two TTFTs per batch: B prompts at once, and one prompt joining B - 1 decodes
# in chunks of T - (B - 1) tokens: at batch 32 with T = 8,192 and a 4,096-token
# prompt, chunks of 8,192 - 31 = 8,161 tokens, one step
run "$KVPLAN" perf --engine generic --model llama-3.1-70b --gpu h100-sxm --tp 4 --prompt 4096 --output 512 \
	--batch 32 --format json
expect_json prefill_chunk_tokens 8161
expect_json prefill_chunk_steps 1
# with --max-batched-tokens 1024: 1,024 - 31 = 993 tokens, ceil(4,096 / 993) = 5 steps
run "$KVPLAN" perf --engine generic --model llama-3.1-70b --gpu h100-sxm --tp 4 --prompt 4096 --output 512 \
	--batch 32 --max-batched-tokens 1024 --format json
expect_json prefill_chunk_tokens 993
expect_json prefill_chunk_steps 5
run "$KVPLAN" perf --engine generic --model llama-3.1-70b --gpu h100-sxm --tp 4 --prompt 4096 --output 512 --batch 1,32
expect_out "ttft_batch  ttft_chunked"
expect_out "chunked, joining 31 decoding: chunks of 8,161 tokens"
# the GEMM peak follows the weights: nvfp4 on an H100 (no FP4 tensor cores, no
# fp4_tflops in its profile) uses the bf16 peak and says so, on stderr and in
# the JSON "warnings"; on a B200 (fp4_tflops 9,000) nothing is assumed
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --weights-dtype nvfp4 --batch 1 --format json
expect_rc 0
expect_err "h100-sxm: no fp4 peak in the profile; the bf16 peak is used"
expect_out '"code": "peak_dtype_assumed"'
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu b200 --weights-dtype nvfp4 --batch 1 --format json
expect_rc 0
expect_out '"warnings": []'
# an engine version whose entry has no time data of its own takes the
# nearest entry's, says so, and doubles the band's distance from 1: SGLang
# 0.4.5's entry (memory only) with 0.5.10's time data, whose band 0.7 to 1.6
# becomes 1 - 2 x 0.3 = 0.40 to 1 + 2 x 0.6 = 2.20
run "$KVPLAN" perf --model llama-3.1-8b --gpu h100-sxm --engine sglang --engine-version 0.4.5 --batch 1
expect_rc 0
expect_err "sglang 0.4.5 has no time data of its own; its times use 0.5.10's"
expect_out "engine fixed costs (sglang 0.4.5, with 0.5.10's time data)"
expect_out "band on times: x0.40 to x2.20"

# SGLang 0.4.1 to 0.4.1.post3 (issue 32): an entry of their own
# (profiles/engines/sglang.yaml, 0.4.1.post2, >=0.4.1,<0.4.1.post4) with
# the serial moe_align kernel: DeepSeek-V3 has 256 routed experts (>= 224)
# in 61 - 3 dense (first_k_dense_replace 3) = 58 MoE layers, x 99 us =
# 5.742 ms every pass.  Against 0.4.1.post4 (the 0.4.5 entry, 0.5.10's time
# data: 1000 us a step, the same 120 us a sequence, all-reduce and KV
# share), a decode step is longer by (16730 - 1000) us + 5742 us =
# 21.472 ms, nothing else changed
ds="--model deepseek-v3 --gpu h200 --dp 8 --engine sglang --weights-dtype fp8 --prompt 128 --output 256 --batch 8 --format json"
run "$KVPLAN" perf $ds --engine-version 0.4.1.post4
expect_rc 0
t4=$(json tpot_s)
expect_json moe_align_s 0
run "$KVPLAN" perf $ds --engine-version 0.4.1.post2
expect_rc 0
expect_json engine_version 0.4.1.post2
expect_near moe_align_s 5.742e-3 1e-9
t2=$(json tpot_s)
if awk -v a="$t2" -v b="$t4" 'BEGIN { d = a - b - 21.472e-3; exit !(d < 1e-9 && d > -1e-9) }'; then ok
else bad "tpot 0.4.1.post2 $t2 - 0.4.1.post4 $t4 is not 21.472 ms"; fi
case "$err" in *"time data of its own"*) bad "0.4.1.post2 borrowed time data: $err" ;; *) ok ;; esac
run "$KVPLAN" perf --model deepseek-v3 --gpu h200 --dp 8 --engine sglang --engine-version 0.4.1.post2 \
	--weights-dtype fp8 --prompt 128 --output 256 --batch 1
expect_out "serial MoE align kernel (every pass): 58 MoE layers x 99 us = 5.74 ms"
# 0.4.1 itself is in the range; 0.4.0.post2 and 0.4.1.post4 are not
run "$KVPLAN" perf $ds --engine-version 0.4.1
expect_json engine_version 0.4.1.post2
run "$KVPLAN" perf $ds --engine-version 0.4.0.post2
expect_json engine_version 0.4.5
expect_json moe_align_s 0
# a model of fewer experts (Qwen3-30B-A3B: 128) runs no such kernel
run "$KVPLAN" perf --model qwen3-30b-a3b --gpu h100-sxm --engine sglang --engine-version 0.4.1.post2 \
	--batch 1 --format json
expect_rc 0
expect_json moe_align_s 0
# a dense model on 0.4.1: the fixed step is that release's (fitted on the
# DeepSeek-V3 case), said so, with its band (0.30: a run without DP
# attention may pay little of it), and no MoE align line
run "$KVPLAN" perf --model llama-3.1-8b --gpu h100-sxm --engine sglang --engine-version 0.4.1 --batch 1
expect_rc 0
expect_out "engine fixed costs (sglang 0.4.1.post2): 16730 us a step + 120.0 us a sequence"
expect_out "band on times: x0.30 to x1.60"
case "$out" in *"MoE align"*) bad "a dense model printed the MoE align kernel" ;; *) ok ;; esac
# the entry lends its time data to no other (time_own_only): 0.4.5's entry
# still borrows 0.5.10's (above), though 0.4.1.post2 is the nearer version
# moe_align_layer_us needs moe_align_min_experts: file, line, field, exit 3
mkdir -p "$tmp/align/engines"
printf '%s\n' 'engine: sglang' 'versions:' '  - version: "0.4.1"' '    source: "s"' \
	'    block_size: 1' '    fraction_by_tp: "1:0.88"' '    fraction_spread: 0.01' \
	'    weights_spread: 0.02' '    non_torch_spread: "0.15GiB"' \
	'    moe_align_layer_us: 99' >"$tmp/align/engines/sglang.yaml"
run env KVPLAN_PROFILES="$tmp/align" "$KVPLAN" perf --engine sglang --model deepseek-v3 --gpu h200 --dp 8
expect_rc 3
expect_err "sglang.yaml:3:5: error: moe_align_min_experts: required with moe_align_layer_us"

# vLLM's attention launched outside its piecewise CUDA graphs (issue 32):
# DeepSeek-R1 (61 MLA layers) AWQ on 8 x H100 as vLLM 0.9.2, whose nearest
# entry is 0.10.2 (PIECEWISE by default): 61 layers x 9 launches (0.9.2's
# MLACommonImpl.forward with FlashMLA: concat_and_cache_mla, bmm, cat,
# FlashMLA's 2 kernels, bmm, the reshape's copy, the copy out, + the graph
# piece) x 29.4 us = 16.1406 ms of host time, above the GPU's 6.2 ms: the
# step is 16.1406 ms + 80 us a sequence = 16.2206 ms
run "$KVPLAN" perf --model deepseek-r1 --gpu h100-sxm --tp 8 --engine vllm --engine-version 0.9.2 \
	--weights-dtype int4-awq --prompt 128 --output 1024 --batch 1 --format json
expect_rc 0
expect_json eager_launches_per_pass 549
expect_json decode_full_graph false
expect_near tpot_s 16.2206e-3 1e-9
run "$KVPLAN" perf --model deepseek-r1 --gpu h100-sxm --tp 8 --engine vllm --engine-version 0.9.2 \
	--weights-dtype int4-awq --prompt 128 --output 1024 --batch 1
expect_out "eager attention (outside the CUDA graphs, every pass): 0 dense x 3 + 61 MLA x 9 = 549 launches x 29.4 us = 16.14 ms"
expect_out "+ eager attention "
# a prefill above vLLM's largest CUDA-graph size (512 tokens, 0.9.2
# config.py cuda_graph_sizes [512]) replays no graph (issue 32): the host
# launches every op, counted in 0.9.2's source by layer part
# (profiles/engines/vllm.yaml): DeepSeek-R1's 61 MLA attention parts x 15,
# 3 dense MLPs x 4, 58 MoE FFNs x (21 + 3 for its shared expert), 2
# all-reduces x 61 layers at tp 8 =
# 915 + 12 + 1,392 + 122 = 2,441 launches x 41.88 us = 102,229.08 us,
# above the GPU's time at 1,024 tokens, + the fixed 3,000 us a prefill pass
# + 80 us a sequence = TTFT 105,309.08 us (the fit case's 105.3 ms)
run "$KVPLAN" perf --model deepseek-r1 --gpu h100-sxm --tp 8 --engine vllm --engine-version 0.9.2 \
	--weights-dtype int4-awq --prompt 1024 --output 128 --batch 1 --format json
expect_rc 0
expect_json graph_max_tokens 512
expect_json uncaptured_launches_per_pass 2441
expect_near uncaptured_launch_s 41.88e-6 1e-12
expect_near ttft_s 105.30908e-3 1e-9
run "$KVPLAN" perf --model deepseek-r1 --gpu h100-sxm --tp 8 --engine vllm --engine-version 0.9.2 \
	--weights-dtype int4-awq --prompt 1024 --output 128 --batch 1
expect_out "a pass of more than 512 tokens replays no CUDA graph: 61 layers, 2441 launches (attention 7 dense / 15 MLA, FFN 4 MLP / 21 MoE + 3 shared experts a layer, + 2 all-reduces) x 41.9 us = 102.23 ms of host time a pass"
expect_out "+ host launches (no graph) "
# a dense model launches far fewer: Llama-3.1-8B (32 layers) at tp 1, no
# all-reduce, 32 x (7 + 4) = 352 launches x 41.88 us = 14.74 ms, below its
# 1,024-token prefill's GPU time (2 x 8.03e9 params x 1,024 tokens = 16.4
# TFLOP, over 16 ms at any rate an H100 reaches): no term
run "$KVPLAN" perf --model llama-3.1-8b --gpu h100-sxm --engine vllm --engine-version 0.10.2 \
	--prompt 1024 --output 128 --batch 1
expect_rc 0
expect_out "replays no CUDA graph: 32 layers, 352 launches (attention 7 dense / 15 MLA, FFN 4 MLP / 21 MoE a layer) x 41.9 us = 14.74 ms"
case "$out" in *"host launches (no graph)"*) bad "Llama-3.1-8B's 1,024-token prefill waits for its host" ;; *) ok ;; esac
# Llama-3.1-70B at tp 8: 80 x (7 + 4 + 2 all-reduces) = 1,040
run "$KVPLAN" perf --model llama-3.1-70b --gpu h100-sxm --tp 8 --engine vllm --engine-version 0.10.2 \
	--prompt 1024 --output 128 --batch 1 --format json
expect_json uncaptured_launches_per_pass 1040
# 512 tokens replay a graph: no floor, no term
run "$KVPLAN" perf --model deepseek-r1 --gpu h100-sxm --tp 8 --engine vllm --engine-version 0.9.2 \
	--weights-dtype int4-awq --prompt 512 --output 128 --batch 1
case "$out" in *"host launches (no graph)"*) bad "512 tokens charged a graphless floor" ;; *) ok ;; esac
# 0.19.0 replays a full graph for decodes: no eager term, and none printed
run "$KVPLAN" perf --model deepseek-r1 --gpu h100-sxm --tp 8 --engine vllm --engine-version 0.19.0 \
	--weights-dtype int4-awq --prompt 128 --output 1024 --batch 1 --format json
expect_rc 0
expect_json decode_full_graph true
expect_json decode_eager_s 0
# vLLM 0.6.2, the V0 engine (issue 32): its own entry, no nearest-version
# warning; decodes replay full CUDA graphs (model_runner.py
# _use_captured_graph, batches up to max_num_seqs): no eager term.  The
# per-sequence host cost, 180 us fitted on Oracle's six V0 cases:
# Llama-3.1-405B FP8 on 8 x MI300X at batch 64, 64 x 180 us = 11.52 ms a
# step (step_fixed_us 0), beside the weights' and KV reads and the
# all-reduces
run "$KVPLAN" perf --model llama-3.1-405b --gpu mi300x --tp 8 --engine vllm --engine-version 0.6.2 \
	--weights-dtype fp8 --prompt 128 --output 128 --batch 64 --format json
expect_rc 0
expect_json engine_version 0.6.2
expect_json decode_full_graph true
expect_json decode_eager_s 0
expect_near seq_step_s 180e-6 1e-9
expect_near decode_fixed_s 11.52e-3 1e-9
expect_json time_ratio_low 0.92
case "$out" in *'"warnings": []'*) ok ;; *) bad "0.6.2 warned: $out" ;; esac
# 0.6.0 is inside the entry's range (>=0.6.0,<0.6.4): the same cost
run "$KVPLAN" perf --model llama-3.1-405b --gpu mi300x --tp 8 --engine vllm --engine-version 0.6.0 \
	--weights-dtype fp8 --prompt 128 --output 128 --batch 64
expect_rc 0
expect_out "engine fixed costs (vllm 0.6.2): 0 us a step + 180.0 us a sequence"
# a bad eager key: file, line, column and field, exit 3
mkdir "$tmp/prof" "$tmp/prof/engines"
printf '%s\n' 'engine: trtllm' 'versions:' '  - version: "x"' '    source: "s"' \
	'    free_fraction: 0.9' '    block_size: 32' '    fraction_spread: 0.02' \
	'    eager_attention_launches_mla: nine' >"$tmp/prof/engines/trtllm.yaml"
run env KVPLAN_PROFILES="$tmp/prof" "$KVPLAN" perf --engine trtllm --model llama-3.1-8b --gpu h100-sxm
expect_rc 3
expect_err "trtllm.yaml:8:35: error: eager_attention_launches_mla: expected a whole number"
# and the graphless pass's keys: file, line, column and field, exit 3
printf '%s\n' 'engine: trtllm' 'versions:' '  - version: "x"' '    source: "s"' \
	'    free_fraction: 0.9' '    block_size: 32' '    fraction_spread: 0.02' \
	'    graph_max_tokens: many' >"$tmp/prof/engines/trtllm.yaml"
run env KVPLAN_PROFILES="$tmp/prof" "$KVPLAN" perf --engine trtllm --model llama-3.1-8b --gpu h100-sxm
expect_rc 3
expect_err "trtllm.yaml:8:23: error: graph_max_tokens: expected a whole number"
printf '%s\n' 'engine: trtllm' 'versions:' '  - version: "x"' '    source: "s"' \
	'    free_fraction: 0.9' '    block_size: 32' '    fraction_spread: 0.02' \
	'    uncaptured_launch_us: -5' >"$tmp/prof/engines/trtllm.yaml"
run env KVPLAN_PROFILES="$tmp/prof" "$KVPLAN" perf --engine trtllm --model llama-3.1-8b --gpu h100-sxm
expect_rc 3
expect_err "trtllm.yaml:8:27: error: uncaptured_launch_us:"
printf '%s\n' 'engine: trtllm' 'versions:' '  - version: "x"' '    source: "s"' \
	'    free_fraction: 0.9' '    block_size: 32' '    fraction_spread: 0.02' \
	'    uncaptured_moe_launches: 2.5' >"$tmp/prof/engines/trtllm.yaml"
run env KVPLAN_PROFILES="$tmp/prof" "$KVPLAN" perf --engine trtllm --model llama-3.1-8b --gpu h100-sxm
expect_rc 3
expect_err "trtllm.yaml:8:30: error: uncaptured_moe_launches: expected a whole number"

# llama.cpp (issue 32): time data only, fitted scales of the GPU's
# efficiencies.  llama-bench tg128 on an A100 80GB PCIe (1,935 GB/s):
# Llama-2-7B F16 reads 13,476,831,232 B of weights + 64 tokens x 524,288 B
# of KV = 13,510,385,664 B a token at 1.935e12 x 0.80 x 0.653 =
# 1.010844e12 B/s: 13.365451 ms, 74.82 tokens/s (measured 74.77, PR #6017);
# no fixed cost.  The memory is the generic engine's, and it says so.
run "$KVPLAN" perf --engine llamacpp --model llama-2-7b --gpu a100-80gb-pcie --weights-dtype fp16 \
	--kv-dtype fp16 --prompt 1 --output 128 --batch 1 --format json
expect_rc 0
expect_err "warning: --engine llamacpp: kvplan models its step times only"
expect_near decode_bw_efficiency 0.5224 1e-9
expect_json decode_bw_scale 0.653
expect_json prefill_flops_scale 0.63
expect_near tpot_s 13.365451e-3 1e-6
expect_json step_fixed_s 0
# an efficiency given on the command line is not scaled again
run "$KVPLAN" perf --engine llamacpp --model llama-2-7b --gpu a100-80gb-pcie --weights-dtype fp16 \
	--decode-bw-efficiency 0.7 --format json
expect_rc 0
expect_near decode_bw_efficiency 0.7 1e-12
expect_json decode_bw_scale 1
# vLLM's KV share by GPU (profiles/engines/vllm.yaml, kv_bw_efficiency_gpus:
# the ROCm attention backends on gfx942): the listed 0.18 on an MI300X, the
# engine's 0.65 on an H100.  Llama-3.1-8B at batch 64, prompt 1,024, output 2:
# decode context 1,024 + 0 = 1,024 (perf's prompt + (output - 1) / 2 = 1,024.5,
# rounded down), 32 layers x 8 KV heads x 128 x 2 (K, V) x 2 B = 131,072 B a
# token, so 64 x 1,024 x 131,072 = 8,589,934,592 B of KV a step; on the MI300X
# at 5.3 TB/s x 0.18: 9.004124310e-3 s, beside the weights' 16,094,076,928 B
# at 5.3 TB/s x 0.5 (the GPU's decode efficiency): 6.073236577e-3 s, so the
# memory time 15.077360887e-3 s (at 0.65 it would be 8.566686e-3 s)
run "$KVPLAN" perf --model llama-3.1-8b --gpu mi300x --engine vllm --prompt 1024 --output 2 \
	--batch 64 --format json
expect_rc 0
expect_near kv_bw_efficiency 0.18 1e-9
expect_near decode_kv_bytes_per_step 8589934592 0.5
expect_near decode_memory_s 15.077360887e-3 1e-11
run "$KVPLAN" perf --model llama-3.1-8b --gpu h100-sxm --engine vllm --prompt 1024 --output 2 \
	--batch 64 --format json
expect_rc 0
expect_near kv_bw_efficiency 0.65 1e-9
# nothing to emit for an engine kvplan only times
run "$KVPLAN" size --model llama-2-7b --gpu a100-80gb-pcie --engine llamacpp --emit llamacpp
expect_rc 2
expect_err "--emit: expected vllm, sglang or trtllm, got 'llamacpp'"
finish
