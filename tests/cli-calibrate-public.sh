#!/bin/sh
# cli-calibrate-public.sh: bench/calibrate-public.sh --check over the public
# benchmark sweeps of tests/data/bench-public (each set's README gives its
# URLs): calibrated on every second run, the others predicted.  The guard
# holds each set's calibrated median |error| at what was measured plus a
# margin (reports/calibrate-public.md: 7.5 %, 7.9 % and 7.1 %) and below
# the uncalibrated one; a guard it cannot meet must fail.  Issue 38's target
# (within 7 %) is printed, met or not; it is not asserted because not every
# public set meets it yet.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
bench="$top_srcdir/bench/calibrate-public.sh"

run sh "$bench" --check "$KVPLAN"
expect_rc 0
expect_out "sglang-llama70b-h200-tp4     h200     llama-3.1-70b    4         7     4      6"
expect_out "sglang-llama405b-h200-tp8    h200     llama-3.1-405b   8         6     3      6"
expect_out "vllm-llama70b-a100-tp8       a100-40gb llama-3.1-70b    8         4     2      4"
# the bench's own medians, checked against the held-out error column (the
# median of six |errors| is the mean of the 3rd and 4th)
for set in sglang-llama70b-h200-tp4 sglang-llama405b-h200-tp8 vllm-llama70b-a100-tp8; do
	line=$(printf '%s\n' "$out" | grep "^$set ")
	before=$(printf '%s\n' "$line" | awk '{ sub("%", "", $8); print $8 }')
	after=$(printf '%s\n' "$line" | awk '{ sub("%", "", $9); print $9 }')
	name="$set: calibrated $after % < uncalibrated $before %"
	if awk -v a="$after" -v b="$before" 'BEGIN { exit !(a > 0 && a < b) }'; then ok; else bad "not narrowed"; fi
done
# The support test judges the constants asked for only: on the 70B set's
# fit half (lines 1, 3, 5, 7, as the bench splits them) prefill_fixed_s,
# SGLang's per-request cost outside the GPU, is fitted when asked for in
# place of seq_step_s (main refused it: "cannot tell it apart", judged
# against seq_step_s, not asked for); step_fixed_s and allreduce_latency_s
# stay refused together: at tp 4 every step pays 2 x 80 all-reduces'
# latency beside step_fixed_s, the same fixed time a step (step.c
# allreduce_s), so runs of one tp cannot tell them apart
set70="$top_srcdir/tests/data/bench-public/sglang-llama70b-h200-tp4"
for k in 1 3 5 7; do sed -n "${k}p" "$set70/llama_3_3_70b_online_output.jsonl" >"$tmp/run-$k.json"; done
shape="--gpu h200 --model llama-3.1-70b --tp 4 --engine sglang --engine-version 0.4.0.post1"
F=decode_bw_efficiency,prefill_flops_efficiency,kv_bw_efficiency,step_fixed_s,prefill_fixed_s
run "$KVPLAN" calibrate $shape --fit $F --format json "$tmp"/run-[1357].json
expect_rc 0
name="prefill_fixed_s fitted on the 70B set"
if awk '/"name": "prefill_fixed_s"/ { on = 1 } on && /"fitted":/ { print; exit }' "$tmp/out" |
	grep -q true; then ok; else bad "not fitted"; fi
run "$KVPLAN" calibrate $shape --fit step_fixed_s,allreduce_latency_s "$tmp"/run-[1357].json
expect_rc 3
expect_err "allreduce_latency_s: these runs cannot tell it apart"
# the bench takes a set's --fit list (set.env FIT, or CALIBRATE_PUBLIC_FIT)
# and says so under the set's line
run env CALIBRATE_PUBLIC_FIT="sglang-llama70b-h200-tp4=$F" sh "$bench" "$KVPLAN"
expect_rc 0
expect_out "sglang-llama70b-h200-tp4     h200     llama-3.1-70b    4         7     4      6"
expect_out "  fitted: --fit $F"

# the guard can fail: 1 % is beyond the model on these sweeps today
run env CALIBRATE_PUBLIC_GUARD="sglang-llama70b-h200-tp4=1 sglang-llama405b-h200-tp8=1 vllm-llama70b-a100-tp8=1" sh "$bench" --check "$KVPLAN"
expect_rc 1
expect_err "fell above its guard"
# a set with no guard is an error of the guard, not a pass
run env CALIBRATE_PUBLIC_GUARD="sglang-llama70b-h200-tp4=50 sglang-llama405b-h200-tp8=50" sh "$bench" --check "$KVPLAN"
expect_rc 1
expect_err "vllm-llama70b-a100-tp8 has no guard"
finish
