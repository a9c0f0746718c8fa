#!/bin/sh
# cli-engine-logs.sh: bench/engine-logs.sh --check over every recorded public
# vLLM start-up log (tests/data/engine-logs): from the terms each log printed,
# kvplan's token count must fall within the log's own rounding (its budget
# printed to 2 decimals of GiB, +/- 0.005 GiB, one block either side), known
# misses aside; and a case that is off must fail the check.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
bench="$top_srcdir/bench/engine-logs.sh"

run sh "$bench" --check "$KVPLAN"
expect_rc 0
# 16 cases print a budget line and are modelled (19 recorded: x1 and x2 are
# per-rank known misses, p17122 prints no budget line)
expect_out "logged terms: 16 cases"
expect_out "logged value inside the band: 16 of 16"
# the known misses are shown and flagged, not counted
expect_out "x1-qwen3-235b-fp8-h100-tp4     logged         178880"
case "$out" in *"NO/miss"*) ok ;; *) bad "no known miss flagged" ;; esac
# V10, gpt-oss-120b on an H100 from config alone, with vLLM's Marlin MXFP4
# padding: the log's 130,960 tokens; kvplan within 2 % of it (8.99 GiB logged
# pool; 65.89 GiB of weights against 65.9651 logged leaves ~0.08 GiB more)
v10=$(printf '%s\n' "$out" | awk '$1 == "v10-gpt-oss-120b-h100" && $2 == "config" { print $4 }')
if [ -n "$v10" ] && [ "$v10" -ge 130960 ] && [ "$v10" -le 133579 ]; then ok
else bad "v10 config alone: '$v10', want 130,960 .. 133,579 (+2 %)"; fi

# a case 1,000 tokens off its budget fails --check: Llama-3.1-8B, 19.25 GiB
# gives 157,696 tokens (9,856 blocks of 2 MiB), so 158,696 is out of the
# +/- 0.005 GiB band (157,616 .. 157,728) by more than a block
mkdir -p "$tmp/cases"
sed 's/^logged_tokens: 157648/logged_tokens: 158696/' \
	"$top_srcdir/tests/data/engine-logs/v3-llama31-8b-fp16-40gb.yaml" > "$tmp/cases/off.yaml"
run env ENGINE_LOGS_DIR="$tmp/cases" sh "$bench" --check "$KVPLAN"
expect_rc 1
expect_err "1 logged-terms case(s) outside the log's rounding"
# the same case as logged passes
cp "$top_srcdir/tests/data/engine-logs/v3-llama31-8b-fp16-40gb.yaml" "$tmp/cases/off.yaml"
run env ENGINE_LOGS_DIR="$tmp/cases" sh "$bench" --check "$KVPLAN"
expect_rc 0
finish
