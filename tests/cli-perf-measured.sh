#!/bin/sh
# cli-perf-measured.sh: bench/perf-measured.sh --check over the recorded
# public measured serving results (tests/data/perf-measured, each case with
# its URL): the time model must hold its guard (median |speed bias| <= 12 %,
# p90 <= 36 %, signed mean <= +3 %, the measured value inside the printed
# band in >= 78 % of cases) over every case but the `guard: no` ones, which
# still run and print, and a guard it cannot meet must fail.  Issue 32's own targets (median <= 10 % per regime ...) are printed
# as met or not; they are not asserted here because they are not met yet.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
bench="$top_srcdir/bench/perf-measured.sh"

run sh "$bench" --check "$KVPLAN"
expect_rc 0
expect_out "== issue 32's targets, per regime (all cases) =="
# 117 recorded, none skipped (the a100-80gb-pcie profile runs the two
# llama.cpp cases); outside the guard (`guard: no`): 3 DeepSeek V3 cases on
# SGLang 0.4.1.post2 (DeepSeek-R1 AWQ on vLLM joined it: its 5 batch-1
# decode cases with the eager attention term, its 2 TTFT cases with the
# host floor of a pass that replays no graph; the 2 llama.cpp ones with
# profiles/engines/llamacpp.yaml), 117 - 3 = 114 under it
expect_out "perf-measured: guard on 114 cases (3 outside it, guard: no):"
expect_out "llamacpp6017-llama2-7b-f16-a100pcie-pp512      a100-80gb-pcie"
# a case outside the guard is still measured and printed
expect_out "tt356-dsr1-awq-h100-tp8-128-128-bs1"
# the guard can fail: a median of at most 1 % is beyond the model today
run env PERF_MEASURED_GUARD="1 50 15 70" sh "$bench" --check "$KVPLAN"
expect_rc 1
expect_err "fell below its guard"
finish
