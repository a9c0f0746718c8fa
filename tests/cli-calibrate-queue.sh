#!/bin/sh
# cli-calibrate-queue.sh: how `kvplan calibrate` and `kvplan validate`
# predict a serving run's TTFT and TPOT under load (src/time/ttft-load.h),
# checked against kvplan perf's own prefill and decode step (another path
# through the step model) with the composition written out by hand here:
#   SGLang (prefill_alone, overlap_schedule in profiles/engines/sglang.yaml,
#   from srt/managers/scheduler.py): TTFT = P + 1.5 x D(B - 1), the prompt
#   prefilled with the lambda x D(B - 1) others that arrived in the same step
#   (lambda: the run's requests a second): P = P(1) + lambda D (P(2) - P(1))
#   vLLM (chunked prefill): TTFT = perf's ttft_chunked_s at the same batch
#   queue: N = the pool's sequences at the mean context p + (o - 1) / 2,
#   Q = B - N wait, TTFT = TTFT(N) + Q x (TTFT(N) + (o - 1) x D(N)) / N,
#   TPOT = D(N)
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
d="$top_srcdir/tests/data/bench"
base="--gpu h100-sxm --model llama-3.1-8b"
# calibrate and validate time a prefill as perf does by default: through
# the measured GEMM table where the GPU has one (h100-sxm bf16 does,
# step-gemm.h), so perf is asked nothing more
perf="$KVPLAN perf $base --format json"

# the observation's predicted_s of measure $1 in a calibrate/validate CSV
# ($tmp/out); column 10 for calibrate (predicted_s), 9 for validate
pred() { awk -F, -v m="$1" -v c="$2" '$4 == m { print $c }' "$tmp/out"; }
near() { # near GOT WANT RELTOL NAME
	name="$4"
	if awk -v g="$1" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d
		exit !(w > 0 && d <= t * w) }'; then ok; else bad "got $1, want $2"; fi
}

# 1. SGLang, nothing queued: sglang-serving-2024.jsonl, 8 in flight
# (100 x 4.0 s / 50 s), 512 + 128 tokens on average, its outputs drawn
# uniformly from 0..256 (random_output_len 256, random_range_ratio 0:
# bench_serving's randint(int(256 x 0), 256 + 1)), so the running batch's
# mean decode context is E[p] + E[o (o - 1)] / (2 E[o]) (bench.h
# decode_context): E[o] = 128, E[o^2] = (257^2 - 1) / 12 + 128^2 = 5,504 +
# 16,384 = 21,888, E[o (o - 1)] = 21,888 - 128 = 21,760, / 256 = 85.0:
# 512 + 85 = 597 (not 512 + 127 / 2 = 575).  P = one prompt's prefill with
# its fixed costs (perf --batch 1: ttft_s); D(7) = the step of the 7 others
# at context 597 (perf --batch 7 --prompt 512 --output 171: 512 + 170 / 2 =
# 597; tpot_s); P(2) two prompts in one prefill (perf --batch 2: ttft_s); lambda = 100
# requests / 50 s = 2 a second
run $perf --engine sglang --batch 1 --prompt 512 --output 128
p1=$(json ttft_s)
run $perf --engine sglang --batch 2 --prompt 512 --output 128
p2=$(json ttft_s)
run $perf --engine sglang --batch 7 --prompt 512 --output 171
d7=$(json tpot_s)
run "$KVPLAN" calibrate $base --evaluate --format csv "$d/sglang-serving-2024.jsonl"
expect_rc 0
want=$(awk -v p="$p1" -v q="$p2" -v d="$d7" 'BEGIN { printf "%.12g", p + 2 * d * (q - p) + 1.5 * d }')
near "$(pred ttft 10)" "$want" 1e-9 "SGLang TTFT = P(1) + 2 D (P(2) - P(1)) + 1.5 x D(7), P $p1 $p2, D $d7"
expect_out ",false,0"
run "$KVPLAN" validate $base --format csv "$d/sglang-serving-2024.jsonl"
near "$(pred ttft 9)" "$want" 1e-9 "validate predicts the same SGLang TTFT"

# 2. vLLM unchanged: the same run served by vLLM (--engine vllm) takes
# vLLM's chunked prefill, perf's ttft_chunked_s at batch 8 beside decodes at
# the same context 597 (--output 171, as above)
run $perf --engine vllm --batch 8 --prompt 512 --output 171
chunk=$(json ttft_chunked_s)
run "$KVPLAN" calibrate $base --engine vllm --evaluate --format csv "$d/sglang-serving-2024.jsonl"
expect_rc 0
near "$(pred ttft 10)" "$chunk" 1e-9 "vLLM TTFT = perf's chunked TTFT at batch 8"

# 2b. A calibration fitted against h100-sxm's GEMM table (prefill_flops_scale,
# calibrate-fit.h) applies alike in validate and perf: the story's c8 run
# (vLLM, 8 in flight, 1024 + 128) is predicted by validate --calibration as
# perf --calibration's chunked TTFT and TPOT at batch 8
run "$KVPLAN" calibrate $base --out "$tmp/cal.yaml" "$d/vllm-serve-c1.json" \
	"$d/vllm-serve-c4.json" "$d/vllm-serve-c16.json" "$d/vllm-serve-c64.json"
expect_rc 0
name="the file gives prefill_flops_scale"
if grep -q '^    prefill_flops_scale: ' "$tmp/cal.yaml"; then ok; else bad "$(cat "$tmp/cal.yaml")"; fi
run $perf --engine vllm --calibration "$tmp/cal.yaml" --batch 8 --prompt 1024 --output 128
ct=$(json ttft_chunked_s)
cd8=$(json tpot_s)
run "$KVPLAN" validate $base --calibration "$tmp/cal.yaml" --format csv "$d/vllm-serve-c8.json"
near "$(pred ttft 9)" "$ct" 1e-9 "calibrated TTFT: validate = perf's chunked TTFT"
near "$(pred tpot 9)" "$cd8" 1e-9 "calibrated TPOT: validate = perf's tpot_s"
run "$KVPLAN" perf $base --engine vllm --calibration "$tmp/cal.yaml" --batch 8 --prompt 1024 --output 128
expect_out "the calibration's prefill_flops_scale"

# 3. The queue: sglang-serving-queued.jsonl asks 1,000 in flight.  The
# pool at the mean context 575 holds N sequences (kvplan budget --context
# 575: max_sequences; 714 on the profiles of this commit); Q = 1000 - N
# wait.  TTFT(N) = P + 1.5 x D(N - 1), lambda = its request_throughput
# 0.1667; E2E(N) = TTFT(N) + 127 x D(N); TTFT = TTFT(N) + Q x E2E(N) / N.
# By hand with this commit's figures (the prefill through h100-sxm's
# measured GEMM table, as perf times it): P(1) 0.0165134, P(2) 0.0279208
# (P(2) - P(1) = 0.0114074), D(713) 0.1172557, D(714) 0.1174103: P =
# 0.0165134 + 0.1667 x 0.1172557 x 0.0114074 = 0.0167364; TTFT(N) =
# 0.0167364 + 1.5 x 0.1172557 = 0.0167364 + 0.1758836 = 0.1926200; E2E =
# 0.1926200 + 127 x 0.1174103 = 0.1926200 + 14.9111081 = 15.1037281; wait =
# 286 x 15.1037281 / 714 = 6.0499527; TTFT = 6.2425727 s
run "$KVPLAN" budget $base --engine sglang --context 575 --format json
n=$(json max_sequences)
run $perf --engine sglang --batch $((n - 1)) --prompt 512 --output 128
dn1=$(json tpot_s)
run $perf --engine sglang --batch "$n" --prompt 512 --output 128
dn=$(json tpot_s)
run "$KVPLAN" calibrate $base --evaluate --format csv "$d/sglang-serving-queued.jsonl"
expect_rc 0
q=$((1000 - n))
want=$(awk -v p="$p1" -v p2="$p2" -v a="$dn1" -v b="$dn" -v n="$n" -v q="$q" 'BEGIN {
	t = p + 0.1667 * a * (p2 - p) + 1.5 * a; printf "%.12g", t + q * (t + 127 * b) / n }')
near "$(pred ttft 10)" "$want" 1e-9 "queued TTFT = TTFT(N) + Q x E2E(N) / N, N = $n"
near "$(pred tpot 10)" "$dn" 1e-9 "queued TPOT = D(N), N = $n"
name="the queued column: Q = 1000 - $n = $q"
case "$out" in *",false,$q"*) ok ;; *) bad "$out" ;; esac
near "$want" 6.2425727 1e-6 "the hand arithmetic above still holds on these profiles"
run "$KVPLAN" validate $base --format json "$d/sglang-serving-queued.jsonl"
expect_json queued "$q"
run "$KVPLAN" validate $base "$d/sglang-serving-queued.jsonl"
expect_out "($q queued)"

# 4. vLLM runs at most max_num_seqs at once, whatever the pool holds: the
# same 1,000 asked of vLLM with --max-num-seqs 500 (the pool holds more at
# context 575: kvplan budget --engine vllm, max_sequences above 500) leave
# 1000 - 500 = 500 waiting, and the TPOT is the step of 500 (perf --batch 500)
run "$KVPLAN" budget $base --engine vllm --context 575 --format json
nv=$(json max_sequences)
name="vLLM's pool holds more than 500 at context 575 ($nv)"
if [ "$nv" -gt 500 ]; then ok; else bad "the test's premise fails"; fi
run $perf --engine vllm --max-num-seqs 500 --batch 500 --prompt 512 --output 128
d500=$(json tpot_s)
run "$KVPLAN" calibrate $base --engine vllm --max-num-seqs 500 --evaluate --format csv \
	"$d/sglang-serving-queued.jsonl"
expect_rc 0
name="vLLM: 500 queued behind max_num_seqs"
case "$out" in *",false,500"*) ok ;; *) bad "$out" ;; esac
near "$(pred tpot 10)" "$d500" 1e-9 "vLLM queued TPOT = D(500)"

finish
