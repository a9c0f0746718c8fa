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
# the guard can fail: 1 % is beyond the model on these sweeps today
run env CALIBRATE_PUBLIC_GUARD="sglang-llama70b-h200-tp4=1 sglang-llama405b-h200-tp8=1 vllm-llama70b-a100-tp8=1" sh "$bench" --check "$KVPLAN"
expect_rc 1
expect_err "fell above its guard"
# a set with no guard is an error of the guard, not a pass
run env CALIBRATE_PUBLIC_GUARD="sglang-llama70b-h200-tp4=50 sglang-llama405b-h200-tp8=50" sh "$bench" --check "$KVPLAN"
expect_rc 1
expect_err "vllm-llama70b-a100-tp8 has no guard"
finish
