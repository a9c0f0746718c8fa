#!/bin/sh
# cli-check.sh: golden tests of `kvplan check`: exit codes, the text report,
# baselines (round trip, tolerance edges, drift diff), JUnit XML validated
# against tests/data/check/junit.xsd (when xmllint exists), TAP, and the
# malformed expectation files of tests/data/bad/check-*.yaml.  The budget is
# tests/cli-budget.sh's Llama-2-7B with every term given: pool 57 GiB =
# 61,203,283,968 B, 7,296 blocks of 8 MiB, 28 sequences of 4,096 tokens.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
data="$top_srcdir/tests/data/check"
bad_dir="$top_srcdir/tests/data/bad"

# every assertion holds: exit 0
run "$KVPLAN" check "$data/pass.yaml"
expect_rc 0
expect_out "ok    kv_pool_bytes == 57GiB           61203283968 (57.00 GiB)"
expect_out "ok    kv_pool_bytes ~ 60GiB within 5%"      # |57 - 60| = 5% of 60: at the edge
expect_out "22 passed, 0 failed, 0 errors"

# every assertion false by the smallest step: exit 1, each with its location
run "$KVPLAN" check "$data/fail.yaml"
expect_rc 1
expect_out "FAIL  fits == true"
expect_out "got 28, want >= 64  ($data/fail.yaml:17:9)"
expect_out "got 7296, want == 7297"
expect_out "got 116736, want > 116736"
# one byte past 5%: 61,203,283,968 is 3,221,225,473 B = 5.000000001% below 64,424,509,441
expect_out "got 61203283968 (57.00 GiB), -5.000000001% from 64424509441 (within 5% allowed)"
expect_out "+14% from 50GiB (within 13.99% allowed)"   # 7 GiB over 50 GiB
expect_out "0 passed, 10 failed, 0 errors"

# the example shipped with kvplan holds on the built-in profiles
run "$KVPLAN" check "$top_srcdir/examples/budgets.yaml"
expect_rc 0
expect_out "21 passed, 0 failed, 0 errors"

# the deployment-shape keys (shape.yaml: the arithmetic in its header)
run "$KVPLAN" check "$data/shape.yaml"
expect_rc 0
expect_out "ok    weights_routed_expert_bytes == 81738596352"
expect_out "ok    rows[batch=12].dp_balance == 0.75"
expect_out "9 passed, 0 failed, 0 errors"

# perf and frag scenarios (rows.yaml: the arithmetic beside each assertion)
run "$KVPLAN" check "$data/rows.yaml"
expect_rc 0
# one prefill of 28,686,048,288,768 FLOP at 312e12 x 0.6 = 0.15323743744 s
expect_out "ok    ttft_s <= 0.5                                 0.153237"
# 11 x 2,047 x 524,288 B of KV read per step
expect_out "ok    rows[batch=11].decode_kv_bytes_per_step == 11805392896  11805392896"
# paged 16: 7,296 blocks / 63 per sequence = 115.8 -> 115
expect_out "ok    rows[policy=paged,block_size=16].max_sequences == 115"
expect_out "ok    recommendation.recommended_block_size == 32"
expect_out "perf-two-batches  (perf: model llama-2-7b,"
expect_out "30 passed, 0 failed, 0 errors"
run "$KVPLAN" check "$data/rows-fail.yaml"
expect_rc 1
expect_out "FAIL  rows[batch=12].fits == true"
expect_out "got 11805392896, want == 11805392897  ($data/rows-fail.yaml:21:9)"
expect_out "got 115, want >= 116  ($data/rows-fail.yaml:36:9)"
expect_out "0 passed, 7 failed, 0 errors"
# their baseline keeps every row under its selector, and holds at 0%
run "$KVPLAN" check "$data/rows.yaml" --update-baseline "$tmp/rows-base.yaml"
expect_rc 0
name="rows in the baseline"
grep -q '^      "rows\[batch=11\].decode_kv_bytes_per_step": 11805392896$' "$tmp/rows-base.yaml" &&
	ok || bad "no perf row field"
grep -q '^      "rows\[policy=paged,block_size=32\].max_sequences": 114$' "$tmp/rows-base.yaml" &&
	ok || bad "no frag row field"
grep -q '^      batch: "\[11, 12\]"$' "$tmp/rows-base.yaml" && ok || bad "batch list not recorded"
run "$KVPLAN" check "$data/rows.yaml" --baseline "$tmp/rows-base.yaml"
expect_rc 0
expect_out "34 passed, 0 failed, 0 errors"          # 30 assertions + 4 baselines
# a row field that moved: 0.0125 s recorded, 25,764,036,608 / 2.039e12 =
# 0.012635623642962236 s now (printed round-trip): +1.085%, beyond 1%, within 1.1%
cat >"$tmp/tpot-base.yaml" <<EOF
baseline:
  - scenario: perf-two-batches
    command: perf
    fields:
      "rows[batch=11].tpot_s": 0.0125
EOF
run "$KVPLAN" check "$data/rows.yaml" --baseline "$tmp/tpot-base.yaml" --tolerance 1%
expect_rc 1
expect_out "FAIL  baseline: 1 field moved beyond 1%"
expect_out "rows[batch=11].tpot_s  0.0125                        0.012635623642962236          +1.085%"
run "$KVPLAN" check "$data/rows.yaml" --baseline "$tmp/tpot-base.yaml" --tolerance 1.1% --tap
expect_out "ok 20 - perf-two-batches: baseline"    # after 11 + 1 + 7 assertions

# baseline round trip: record, then compare with itself at 0%
run "$KVPLAN" check "$data/pass.yaml" --update-baseline "$tmp/base.yaml"
expect_rc 0
name="baseline written"
grep -q '^      kv_pool_bytes: 61203283968$' "$tmp/base.yaml" && ok || bad "no kv_pool_bytes line"
grep -q '^      layers.full.bytes_per_token: 524288$' "$tmp/base.yaml" && ok || bad "no nested field"
grep -q '^      utilization: "0.9"$' "$tmp/base.yaml" && ok || bad "inputs not recorded"
run "$KVPLAN" check "$data/pass.yaml" --baseline "$tmp/base.yaml"
expect_rc 0
expect_out "ok    baseline: every field within 0%"
expect_out "24 passed, 0 failed, 0 errors"               # 22 assertions + 2 baselines

# drift: utilization 0.85 instead of 0.9: pool 68 - 15 = 53 GiB against 57
# (-7.018%), sequences 26 against 28 (-7.143%), and 28 no longer fit; the
# generic policy has no band, so max_tokens/max_sequences low and high move
# with the point values, and so do max_tokens_one_sequence (no window: the
# same 116,736 -> 108,544) and dp_sequences, 28 x dp 1 (12 fields)
run "$KVPLAN" check "$data/drift.yaml" --baseline "$tmp/base.yaml" --tolerance 7%
expect_rc 1
expect_out "FAIL  baseline: 12 fields moved beyond 7%"
expect_out "kv_pool_bytes            61203283968 (57.00 GiB)       56908316672 (53.00 GiB)       -7.018%"
expect_out "max_sequences            28                            26                            -7.143%"
expect_out "max_sequences_low        28                            26                            -7.143%"
expect_out "fits                     true                          false                         changed"
expect_out "inputs changed since the baseline: utilization 0.9 -> 0.85"
expect_out "llama2-fixed  (budget: model llama-2-7b, gpu_memory 80GiB, utilization 0.85,"

# no baseline is written while a scenario cannot run or an assertion errs
run "$KVPLAN" check "$bad_dir/check-tp-not-divide.yaml" --update-baseline "$tmp/partial.yaml"
expect_rc 3
expect_err "partial.yaml not written: 1 error above"
name="no partial baseline"
[ ! -e "$tmp/partial.yaml" ] && ok || bad "$tmp/partial.yaml was written"

# scenarios run one at a time (issue 37 D5), yet with stdout and stderr in
# one place the errors still come first, then the report, as when it was
# written whole: 300 scenarios of the Llama-2-7B above at batch 28 (the
# report far past stdio's buffer), the last unable to run (tp 3 does not
# divide its 32 heads)
{
	printf 'defaults:\n  model: llama-2-7b\n  gpu_memory: 80GiB\n  utilization: 0.9\n'
	printf '  weights_bytes: 13GiB\n  activation_bytes: 1GiB\n  overhead_bytes: 1GiB\n'
	printf '  context: 4096\nscenarios:\n'
	awk 'BEGIN { for (i = 1; i <= 300; i++)
		printf "  - name: s%d\n    batch: 28\n%s    expect:\n      - fits == true\n", i,
		       i == 300 ? "    tp: 3\n" : "" }'
} >"$tmp/many.yaml"
run "$KVPLAN" check "$tmp/many.yaml"
expect_rc 3
expect_out "299 passed, 0 failed, 1 error"
name="errors before the report"
"$KVPLAN" check "$tmp/many.yaml" >"$tmp/both" 2>&1
sed -n 1p "$tmp/both" | grep -q "^kvplan check: scenario 's300': .*tp: 3 does not divide" &&
	sed -n 2p "$tmp/both" | grep -q "^kvplan check: .*many.yaml (300 scenarios)$" && ok ||
	bad "$(head -n 2 "$tmp/both")"

# a scenario the baseline lacks fails
run "$KVPLAN" check "$data/fail.yaml" --baseline "$tmp/base.yaml"
expect_rc 1
expect_out "FAIL  baseline: not in $tmp/base.yaml; run --update-baseline"

# tolerance edges against a hand-written baseline: it records 60 GiB where
# kvplan computes 57 (-3/60 = -5% exactly) and utilization 1.0 where it is
# 0.9 (-10%)
run "$KVPLAN" check "$data/pass.yaml" --baseline "$data/baseline-60g.yaml" --tolerance 5%
expect_rc 1                                   # utilization moved 10%
expect_out "ok    baseline: every field within 5%"   # the pool: exactly 5%, holds
run "$KVPLAN" check "$data/pass.yaml" --baseline "$data/baseline-60g.yaml" --tolerance 4.9999%
expect_rc 1
expect_out "FAIL  baseline: 1 field moved beyond 4.9999%"
expect_out "kv_pool_bytes  64424509440 (60.00 GiB)       61203283968 (57.00 GiB)       -5%"
run "$KVPLAN" check "$data/pass.yaml" --baseline "$data/baseline-60g.yaml" --tolerance 10%
expect_rc 0
run "$KVPLAN" check "$data/pass.yaml" --baseline "$data/baseline-60g.yaml" --tolerance 9.999%
expect_rc 1
expect_out "utilization  1                             0.9                           -10%"

# JUnit: written for passing, failing, drifting and erroring runs; valid
# against the common schema when xmllint is there
xsd="$data/junit.xsd"
have_xmllint=false
command -v xmllint >/dev/null 2>&1 && have_xmllint=true
$have_xmllint || echo "SKIP: xmllint not found; JUnit schema validation skipped" >&2
junit_case() {
	want_rc=$1
	shift
	run "$KVPLAN" check "$@" --junit "$tmp/junit.xml"
	expect_rc "$want_rc"
	name="junit $*"
	[ -s "$tmp/junit.xml" ] && ok || bad "no JUnit file"
	if $have_xmllint; then
		if xmllint --noout --schema "$xsd" "$tmp/junit.xml" 2>"$tmp/xmllint"; then
			ok
		else
			bad "invalid JUnit: $(cat "$tmp/xmllint")"
		fi
	fi
	rm -f "$tmp/junit.xml"
}
junit_case 0 "$data/pass.yaml"
junit_case 1 "$data/fail.yaml"
junit_case 1 "$data/drift.yaml" --baseline "$tmp/base.yaml"
junit_case 3 "$bad_dir/check-unknown-field.yaml"
junit_case 3 "$bad_dir/check-tp-not-divide.yaml"
junit_case 0 "$top_srcdir/examples/budgets.yaml"
junit_case 0 "$data/rows.yaml"
junit_case 1 "$data/rows-fail.yaml"
run "$KVPLAN" check "$data/fail.yaml" --junit -
expect_rc 1
expect_out '<testsuites name="kvplan check '
expect_out 'tests="10" failures="10" errors="0"'
expect_out '<testcase classname="llama2-fails" name="max_sequences &gt;= 64">'
expect_out '<failure type="assertion" message="'
if $have_xmllint; then
	name="junit on stdout validates"
	printf '%s\n' "$out" | xmllint --noout --schema "$xsd" - 2>/dev/null && ok || bad "invalid"
fi

# TAP 13 on stdout: the plan matches the points, numbered in order
tap_ok() {
	printf '%s\n' "$out" | awk '
		NR == 1 { if ($0 != "TAP version 13") exit 1; next }
		NR == 2 { if ($0 !~ /^1\.\.[0-9]+$/) exit 1; plan = substr($0, 4); next }
		/^(ok|not ok) [0-9]+ - / { n++; num = ($1 == "ok") ? $2 : $3; if (num != n) exit 1; next }
		/^  / || /^#/ { next }
		{ exit 1 }
		END { if (n != plan) exit 1 }'
}
run "$KVPLAN" check "$data/pass.yaml" --tap
expect_rc 0
name="tap pass"
tap_ok && ok || bad "malformed TAP: $out"
expect_out "1..22"
expect_out "ok 1 - llama2-fixed: fits == true"
run "$KVPLAN" check "$data/fail.yaml" --tap
expect_rc 1
name="tap fail"
tap_ok && ok || bad "malformed TAP: $out"
expect_out "not ok 2 - llama2-fails: max_sequences >= 64
  ---
  message: \"$data/fail.yaml:17:9: max_sequences >= 64: got 28, want >= 64\"
  severity: fail"
expect_out "# 0 passed, 10 failed, 0 errors"
run "$KVPLAN" check "$data/drift.yaml" --baseline "$tmp/base.yaml" --tap
name="tap drift"
tap_ok && ok || bad "malformed TAP: $out"
expect_out "not ok 1 - llama2-fixed: baseline"
expect_out "  inputs_changed: \"utilization 0.9 -> 0.85\""
expect_out "    - field: \"kv_pool_bytes\""

# malformed expectation files: exit 3 and "file:line:col: error: field: ...",
# the location written by hand on the first line of each
count=0
for f in "$bad_dir"/check-*.yaml; do
	count=$((count + 1))
	want=$(sed -n '1s/^# error: //p' "$f")
	loc=$(printf '%s' "$want" | cut -d: -f1-2)
	rest=${want#*:*: }
	run "$KVPLAN" check "$f"
	expect_rc 3
	expect_err "$f:$loc: error: $rest"
done
name="bad corpus size"
[ "$count" -ge 6 ] && ok || bad "only $count malformed files"

# usage mistakes: exit 2
run "$KVPLAN" check
expect_rc 2
expect_err "missing the expectations FILE"
for args in "--tolerance 1%" "--baseline x --tolerance 1" "--baseline x --update-baseline y" \
	    "--bogus" "--tap --junit -" "extra"; do
	run "$KVPLAN" check "$data/pass.yaml" $args
	expect_rc 2
	expect_err "kvplan check:"
done
run "$KVPLAN" check --help
expect_rc 0
expect_out "Usage: kvplan check FILE"
# files that cannot be read or written: exit 3
run "$KVPLAN" check "$tmp/no-such.yaml"
expect_rc 3
expect_err "no-such.yaml: error: cannot open"
run "$KVPLAN" check "$data/pass.yaml" --baseline "$tmp/no-such.yaml"
expect_rc 3
run "$KVPLAN" check "$data/pass.yaml" --junit "$tmp/no/such/dir/j.xml"
expect_rc 3
expect_err "cannot write"

# A frag scenario that simulates long says so before it runs and shows its
# progress, as kvplan frag does (issue 37 D20).  1 row (paged, block 16) x
# 4 x 10^7 requests x 0.3 us (cli.h's estimate) = 12 s, past the 10 s
# threshold; every request of prompts-1000.yaml lives one step, so the run
# itself takes a few seconds.  The short scenarios of rows.yaml print neither.
cat >"$tmp/long.yaml" <<EOF
scenarios:
  - name: frag-long
    command: frag
    model: llama-2-7b
    gpu_memory: 80GiB
    utilization: 0.9
    weights_bytes: 13GiB
    activation_bytes: 1GiB
    overhead_bytes: 1GiB
    workload: $data/prompts-1000.yaml
    block_sizes: [16]
    policies: [paged]
    requests: 40000000
    expect:
      - rows[policy=paged,block_size=16].max_sequences >= 1
EOF
run "$KVPLAN" check "$tmp/long.yaml"
expect_rc 0
expect_err "kvplan check: 1 frag scenario simulates about 12 s; progress follows"
expect_err "kvplan check: scenario 'frag-long': 40,000,000 of 40,000,000 requests drawn"
run "$KVPLAN" check "$data/rows.yaml"
case "$err" in *"progress follows"*) bad "progress for short scenarios: $err" ;; *) ok ;; esac

finish
