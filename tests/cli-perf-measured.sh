#!/bin/sh
# cli-perf-measured.sh: bench/perf-measured.sh --check over the recorded
# public measured serving results (tests/data/perf-measured, each case with
# its URL): the time model must hold its guard on all cases (median |speed
# bias| <= 20 %, p90 <= 50 %, signed mean <= +15 %, the measured value inside
# the printed band in >= 70 % of cases), and a guard it cannot meet must
# fail.  Issue 32's own targets (median <= 10 % per regime ...) are printed
# as met or not; they are not asserted here because they are not met yet.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
bench="$top_srcdir/bench/perf-measured.sh"

run sh "$bench" --check "$KVPLAN"
expect_rc 0
expect_out "== issue 32's targets, per regime (all cases) =="
expect_out "perf-measured: guard on 91 cases:"
# every case kvplan can express ran: 93 recorded, 2 without a GPU profile
expect_out "llamacpp6017-llama2-7b-f16-a100pcie-pp512"
# the guard can fail: a median of at most 1 % is beyond the model today
run env PERF_MEASURED_GUARD="1 50 15 70" sh "$bench" --check "$KVPLAN"
expect_rc 1
expect_err "fell below its guard"
finish
