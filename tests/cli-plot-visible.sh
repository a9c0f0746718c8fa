#!/bin/sh
# cli-plot-visible.sh: every series a chart's legend names can be seen.  Each
# chart kind is written (gnuplot not run: the check reads the .gp and .dat)
# and tests/plot-series-visible.awk, which shares no code with kvplan, asserts
# that every legend series has a point at least 1 % from every other series'
# on its axis, or is named as lying on another.  The max-seqs case is the
# review's: a100-80gb (79.15 GiB) lies on h100-sxm (79.19 GiB) at tp 4.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
check="$top_srcdir/tests/plot-series-visible.awk"
KVPLAN_GNUPLOT=false
export KVPLAN_GNUPLOT
res="$top_srcdir/reports"

visible() {    # KIND ARGS...: write the chart, check it
	kind=$1
	shift
	run "$KVPLAN" plot --engine generic "$kind" -o "$tmp/p" --name "$kind" "$@"
	expect_rc 0
	if awk -f "$check" "$tmp/p/$kind.gp" "$tmp/p/$kind.dat" >"$tmp/awk"; then
		ok
	else
		bad "$(cat "$tmp/awk")"
	fi
}

visible max-seqs --model llama-3.1-70b --gpu h100-sxm,h200,a100-80gb --tp 4 --kv-dtype auto,fp8
expect_err "'a100-80gb, KV bf16 (auto)' lies on 'h100-sxm, KV bf16 (auto)'"
grep -q "title 'a100-80gb, KV fp8 (= h100-sxm, KV fp8)'" "$tmp/p/max-seqs.gp" && ok ||
	bad "the legend does not name what a100-80gb fp8 lies on"
# the check can fail: the same chart without its names hides four series
sed "s/ (= [^']*)//" "$tmp/p/max-seqs.gp" >"$tmp/strip.gp"
grep -v '^# note' "$tmp/p/max-seqs.dat" >"$tmp/strip.dat"
run awk -f "$check" "$tmp/strip.gp" "$tmp/strip.dat"
expect_rc 1
expect_out "series 'a100-80gb, KV bf16 (auto)' lies on others at every point"

visible max-seqs --model llama-3.1-8b --gpu h100-sxm,h200 --kv-dtype auto,fp8
visible budget --model llama-3.1-70b --gpu h100-sxm,h200 --tp 2,4
visible kv-context
visible kv-context --model llama-2-7b,llama-3.1-8b,mistral-7b-v0.1,qwen2.5-7b
visible perf --model llama-3.1-8b --gpu h100-sxm
visible block-size --model llama-3.1-8b --gpu h100-sxm --requests 5000
visible pareto --model llama-3.1-8b --gpu h100-sxm,h200,l40s,a100-80gb --rate 5 --tpot 0.05
visible validate --results "$res/cpu-validate-2026-11-29-A.yaml,$res/cpu-capacity-2026-11-29.yaml"
# MHA and GQA points in separate legend entries; each panel its own median;
# the capacity points (166 to 2,662 blocks) on log axes, where the +/- band
# runs parallel to y = x; two square panels side by side, no white column
gp="$tmp/p/validate.gp"
grep -q "title 'cpu, fp16, MHA (cpu-validate-2026-11-29-A.yaml)'" "$gp" && ok || bad "no MHA entry"
grep -q "title 'cpu, fp16, GQA (cpu-validate-2026-11-29-A.yaml)'" "$gp" && ok || bad "no GQA entry"
grep -q "decode time: median |error| .* over 40 points; capacity: median |error| 0.00 % over 18 points" "$gp" &&
	ok || bad "the title does not give the two medians apart"
[ "$(grep -c 'set logscale xy 10' "$gp")" = 2 ] && ok || bad "capacity not on log axes"
grep -q "size 1200,720" "$gp" && ok || bad "two square panels: 1200 x 720"
finish
