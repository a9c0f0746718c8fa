#!/bin/sh
# cli-plot.sh: golden tests of `kvplan plot` and `kvplan report`: the .dat
# numbers against hand arithmetic, the .gp labels and terminal, real PNG and
# SVG images where gnuplot is installed, and the missing-gnuplot path (one
# warning, files kept, exit 0) with a fake PATH and KVPLAN_GNUPLOT.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

# The PNG's width and height from its IHDR chunk (bytes 17-24, big-endian),
# and "png" when the 8-byte signature is right.
png_sig() { od -An -tx1 -N8 "$1" | tr -d ' \n'; }
png_dim() { od -An -tu1 -j16 -N8 "$1" | awk '{ printf "%dx%d", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8 }'; }
have_gnuplot=no
command -v gnuplot >/dev/null 2>&1 && have_gnuplot=yes

# --- kv-context: Llama-2-7B holds 2 * 32 heads * 128 * 2 B * 32 layers =
# 524,288 B per token: 1,024 tokens = 536,870,912 B, 4,096 = 2,147,483,648 B;
# 8,192 is beyond its max_context (4,096): NaN.
d="$tmp/kv"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot kv-context --engine generic --model llama-2-7b,llama-3.1-8b \
	--contexts 1k,4k,8k -o "$d"
expect_rc 0
dat=$(cat "$d/kv-context.dat")
case "$dat" in *'1024 "1k" "" 536870912 134217728'*) ok ;; *) bad "1k row: $dat" ;; esac
# Llama-3.1-8B: 2 * 8 * 128 * 2 * 32 = 131,072 B per token; 8,192 -> 1 GiB
case "$dat" in *'4096 "4k" "" 2147483648 536870912'*) ok ;; *) bad "4k row" ;; esac
case "$dat" in *'8192 "8k" "" NaN 1073741824'*) ok ;; *) bad "8k row" ;; esac
gp=$(cat "$d/kv-context.gp")
case "$gp" in *'set terminal pngcairo'*) ok ;; *) bad "no pngcairo terminal" ;; esac
case "$gp" in *"set output 'kv-context.png'"*) ok ;; *) bad "no output" ;; esac
case "$gp" in *"set xlabel 'context (tokens per sequence, k = 1024)'"*) ok ;; *) bad "xlabel" ;; esac
case "$gp" in *"set ylabel 'KV cache of one sequence on one GPU (GiB)'"*) ok ;; *) bad "ylabel" ;; esac
case "$gp" in *"title 'llama-2-7b (MHA; 524,288 B/token)'"*) ok ;; *) bad "series title" ;; esac
# the missing gnuplot: exactly one warning naming both files, no image
expect_err "warning: no image"
expect_err "$d/kv-context.dat"
expect_err "$d/kv-context.gp"
name="one warning line"
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && ok || bad "stderr has $(printf '%s\n' "$err" | wc -l) lines: $err"
[ ! -f "$d/kv-context.png" ] && ok || bad "an image without gnuplot"

# a PATH without gnuplot behaves the same
run env -u KVPLAN_GNUPLOT PATH=/nonexistent "$KVPLAN" plot kv-context --engine generic --model llama-2-7b -o "$d"
expect_rc 0
expect_err "cannot run gnuplot"
[ -f "$d/kv-context.dat" ] && [ -f "$d/kv-context.gp" ] && ok || bad "files not kept"

# a gnuplot that fails: still exit 0, one warning
run env KVPLAN_GNUPLOT=false "$KVPLAN" plot kv-context --engine generic --model llama-2-7b -o "$d"
expect_rc 0
expect_err "failed"

# --- budget: Llama-2-7B with every term given: 80 GiB x 0.9 = 72 GiB usable;
# pool = 72 - 13 - 1 - 1 = 57 GiB = 61,203,283,968 B; free 8 GiB; 28 sequences
# of 4,096 tokens (7,296 blocks / 256).
fixed="--model llama-2-7b --gpu-memory 80GiB --utilization 0.9 --weights-bytes 13GiB
       --activation-bytes 1GiB --overhead-bytes 1GiB --context 4096"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot budget --engine generic $fixed -o "$d"
expect_rc 0
dat=$(cat "$d/budget.dat")
case "$dat" in *'0 "custom" "28 seqs" 13958643712 1073741824 1073741824 61203283968 8589934592 85899345920'*) ok ;;
	*) bad "budget row: $dat" ;; esac
gp=$(cat "$d/budget.gp")
case "$gp" in *"set ylabel 'memory per GPU (GiB)'"*) ok ;; *) bad "budget ylabel" ;; esac
case "$gp" in *"title 'KV pool'"*) ok ;; *) bad "KV pool series" ;; esac
case "$gp" in *'llama-2-7b, engine generic'*) ok ;; *) bad "title names model and engine" ;; esac

# tp 3 cannot split 32 heads: a note, the other bars drawn
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot budget --engine generic --model llama-3.1-8b --gpu h100-sxm,l40s \
	--tp 1,3 --context 8k -o "$d"
expect_rc 0
expect_err "note: h100-sxm tp 3 left out"
name="budget bars"
[ "$(grep -c '^[0-9]' "$d/budget.dat")" = 2 ] && ok || bad "want 2 bars"

# --- max-seqs: the same fixed terms; 2,048 tokens: 7,296 / 128 = 57 sequences;
# fp8 halves the page: 14,592 blocks, 57 sequences of 4,096.
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot max-seqs --engine generic $fixed --kv-dtype auto,fp8 \
	--contexts 2k,4k -o "$d"
expect_rc 0
dat=$(cat "$d/max-seqs.dat")
case "$dat" in *'2048 "2k" "" 57 114'*) ok ;; *) bad "2k row: $dat" ;; esac
case "$dat" in *'4096 "4k" "" 28 57'*) ok ;; *) bad "4k row" ;; esac
case "$(cat "$d/max-seqs.gp")" in *"set ylabel 'max concurrent sequences'"*) ok ;; *) bad "ylabel" ;; esac

# --- perf: Llama-3.1-8B on an H100 SXM, one sequence of 4,096 tokens: weights
# 16,060,522,496 B + KV 4,096 x 131,072 = 536,870,912 B = 16,597,393,408 B read
# at 3.35 TB/s x 0.80 = 2.68 TB/s: 6.193 ms per step (memory-bound: 2 x 8.03e9
# FLOP at 989.4 TFLOP/s x 0.6 is 0.03 ms)
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot perf --engine generic --model llama-3.1-8b --gpu h100-sxm \
	--batches 1,8 --contexts 4k -o "$d"
expect_rc 0
name="perf step time"
awk '/^1 "1"/ { d = $4 - 0.006193057; exit !(d < 1e-8 && d > -1e-8) }' "$d/perf.dat" && ok ||
	bad "$(grep '^1 "1"' "$d/perf.dat")"
name="perf throughput"
awk '/^1 "1"/ { d = $7 - 1 / 0.006193057; exit !(d < 1e-3 && d > -1e-3) }' "$d/perf.dat" && ok ||
	bad "throughput"
gp=$(cat "$d/perf.gp")
case "$gp" in *'set multiplot layout 1,2'*) ok ;; *) bad "perf: not two panels" ;; esac
case "$gp" in *"'perf.dat' index 1 using 1:"*) ok ;; *) bad "perf: no second block" ;; esac
case "$gp" in *"set y2label 'throughput (output tokens/s, all sequences)'"*) ok ;; *) bad "y2label" ;; esac
case "$gp" in *"set ylabel 'time per decode step = per output token (ms)'"*) ok ;; *) bad "ylabel" ;; esac
case "$gp" in *"title 'over pcie5x16 (50.00 GB/s)'"*) ok ;; *) bad "link series" ;; esac
run "$KVPLAN" plot perf --engine generic --model llama-3.1-8b --gpu-memory 80GiB -o "$d"
expect_rc 3                                   # no bandwidth without a GPU profile

# --- block-size: the tiny model (2,048 B/token) in a pool of exactly 1 GiB =
# 524,288 token slots; every request 100 + 1 tokens (tests/data/report/fixed-100.yaml).
# P = 128: one block a sequence, 4,096 of them, 27.5 of 128 slots empty = 21.484375 %;
# metadata 4,096 x 4 B block table + 4,096 x 8 B allocator = 49,152 B.
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot block-size --engine generic --model "$top_srcdir/tests/data/good/tiny.yaml" \
	--gpu-memory 1GiB --utilization 1 --weights-bytes 0 --activation-bytes 0 --overhead-bytes 0 \
	--workload "$top_srcdir/tests/data/report/fixed-100.yaml" --block-sizes 1,16,128 --requests 20000 -o "$d"
expect_rc 0
expect_err "note: recommended block size: paged block 1"
dat=$(cat "$d/block-size.dat")
# waste 27.5 / 128 = 0.21484375 of the pool; metadata 49,152 B of 1 GiB =
# 4.577636719e-05 of it: one unit for both
case "$dat" in *'128 "128" "" 0.21484375 4.577636719e-05'*) ok ;; *) bad "block-size row: $dat" ;; esac
case "$dat" in *'128 "128" "" 4096'*) ok ;; *) bad "block-size sequences" ;; esac
case "$(cat "$d/block-size.gp")" in *"set ylabel 'share of the KV pool (%, log scale)'"*) ok ;;
	*) bad "block-size ylabel" ;; esac
if grep -q "^set y2label" "$d/block-size.gp"; then bad "block-size: a second axis"; else ok; fi
# a long simulation says so up front and shows its progress, as kvplan frag
# does (issue 37 D20: 10^8 requests ran for minutes in silence).  1 block
# size x 4 x 10^7 requests x 0.3 us (cli.h's estimate) = 12 s, past the 10 s
# threshold; each request 1,000 prompt tokens and no output takes one step,
# so the run itself is a few seconds
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot block-size --engine generic --model llama-2-7b --gpu h100-sxm \
	--workload "$top_srcdir/tests/data/workloads/fixed-1000.yaml" --block-sizes 16 \
	--requests 40000000 -o "$d" --name block-size-long
expect_rc 0
expect_err "kvplan plot: block-size: 40,000,000 requests over about 1 row: about 12 s; progress follows"
expect_err "kvplan plot: 40,000,000 of 40,000,000 requests drawn"
# the default 100,000 requests stay quiet
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot block-size --engine generic --model llama-2-7b --gpu h100-sxm \
	--workload "$top_srcdir/tests/data/workloads/fixed-1000.yaml" --block-sizes 16 -o "$d" \
	--name block-size-short
expect_rc 0
case "$err" in *"progress follows"*) bad "progress for a short run: $err" ;; *) ok ;; esac

# --- validate: hand-written kvbench results (tests/data/report/kvbench-results.yaml):
# errors 1/11, 0, 1/5 -> median 9.1 %
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot validate --engine generic \
	--results "$top_srcdir/tests/data/report/kvbench-results.yaml" -o "$d"
expect_rc 0
dat=$(cat "$d/validate.dat")
case "$dat" in *'0.001 "B 1, n 4000000, P 16" "" 0.0011 NaN'*) ok ;; *) bad "validate row: $dat" ;; esac
case "$dat" in *'decode time: median |error| 9.1 % over 3 points'*) ok ;; *) bad "validate title" ;; esac
gp=$(cat "$d/validate.gp")
case "$gp" in *'x with lines lc rgb "black" lw 1 title "y = x"'*) ok ;; *) bad "no y = x" ;; esac
case "$gp" in *'x * 1.2 with lines'*) ok ;; *) bad "no band" ;; esac
case "$gp" in *"set xlabel 'predicted by kvplan (ms)'"*) ok ;; *) bad "validate xlabel" ;; esac
# --band 10% draws y = 1.1 x and 0.9 x; --name sets the files' stem
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot validate --engine generic --band 10% --name v10 \
	--results "$top_srcdir/tests/data/report/kvbench-results.yaml" -o "$d"
expect_rc 0
gp=$(cat "$d/v10.gp")
case "$gp" in *'x * 1.1 with lines'*'x * 0.9 with lines'*) ok ;; *) bad "band 10%" ;; esac
case "$gp" in *"'v10.dat' index 0"*) ok ;; *) bad "--name stem" ;; esac
[ -f "$d/v10.dat" ] && ok || bad "no v10.dat"
for want in "results-negative-time.yaml:7:21: error: time_median_s: must not be negative" \
	    "results-points-not-list.yaml:4:9: error: points: expected a list" \
	    "results-none-timed.yaml: error: points: no point that passed validation"; do
	run "$KVPLAN" plot validate --engine generic --results "$top_srcdir/tests/data/bad/${want%%:*}" -o "$d"
	expect_rc 3
	expect_err "$want"
done
# a real kvbench run, when this tree built kvbench: every timed point is drawn
if [ -x "$top_builddir/kvbench" ] && "$top_builddir/kvbench" --quick --out "$tmp/kvb.yaml" >/dev/null 2>&1; then
	want=$(grep -c '^    time_median_s:' "$tmp/kvb.yaml")
	run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot validate --engine generic --results "$tmp/kvb.yaml" -o "$d"
	expect_rc 0
	name="validate draws kvbench's $want points"
	[ "$want" -gt 0 ] && [ "$(grep -c '^[0-9.e+-]* "B ' "$d/validate.dat")" = "$want" ] && ok ||
		bad "$(grep -c '^[0-9.e+-]* "B ' "$d/validate.dat") rows"
fi

# --- images, where gnuplot exists: PNG signature and size, SVG root
if [ "$have_gnuplot" = yes ]; then
	run env -u KVPLAN_GNUPLOT "$KVPLAN" plot kv-context --engine generic --model llama-2-7b,deepseek-v3 -o "$d"
	expect_rc 0
	expect_out "wrote $d/kv-context.dat, $d/kv-context.gp and $d/kv-context.png"
	name="png signature"
	[ "$(png_sig "$d/kv-context.png")" = 89504e470d0a1a0a ] && ok || bad "not a PNG"
	name="png size"
	[ "$(png_dim "$d/kv-context.png")" = 1000x620 ] && ok || bad "$(png_dim "$d/kv-context.png")"
	run env -u KVPLAN_GNUPLOT "$KVPLAN" plot max-seqs --engine generic --model llama-3.1-8b --gpu h100-sxm,l40s \
		--term svg -o "$d"
	expect_rc 0
	name="svg"
	[ -s "$d/max-seqs.svg" ] && grep -q '<svg' "$d/max-seqs.svg" && grep -q '</svg>' "$d/max-seqs.svg" &&
		ok || bad "not an SVG"
	grep -q 'width="1000"' "$d/max-seqs.svg" && ok || bad "svg width"
	# twelve bars widen the image: 1000 + (12 - 10) * 90 = 1,180 pixels
	run env -u KVPLAN_GNUPLOT "$KVPLAN" plot budget --engine generic --model llama-3.1-70b \
		--gpu h100-sxm,h200,a100-80gb --tp 1,2,4,8 --context 8k -o "$d"
	expect_rc 0
	name="budget png"
	[ "$(png_dim "$d/budget.png")" = 1180x620 ] && ok || bad "$(png_dim "$d/budget.png")"
	# two panels: 1000 + 700 pixels
	run env -u KVPLAN_GNUPLOT "$KVPLAN" plot perf --engine generic --model llama-3.1-8b --gpu l40s -o "$d"
	expect_rc 0
	name="perf png"
	[ "$(png_dim "$d/perf.png")" = 1700x620 ] && ok || bad "$(png_dim "$d/perf.png")"
	run env -u KVPLAN_GNUPLOT "$KVPLAN" plot kv-context --engine generic --model llama-2-7b --term pdf -o "$d"
	name="pdf"
	[ "$(head -c 5 "$d/kv-context.pdf")" = "%PDF-" ] && ok || bad "not a PDF"
	# dumb draws on standard output
	run env -u KVPLAN_GNUPLOT "$KVPLAN" plot kv-context --engine generic --model llama-2-7b --term dumb -o "$d"
	expect_rc 0
	expect_out "llama-2-7b (MHA"
	expect_out "context (tokens per sequence"
fi

# --- report: the tiny scenario (tests/data/report/tiny.yaml), without gnuplot
r="$tmp/report"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" report "$top_srcdir/tests/data/report/tiny.yaml" -o "$r"
expect_rc 0
expect_out "wrote $r/report.md and $r/report.html (4 charts, 0 images)"
expect_err "warning: 4 of 4 charts have no image"
name="report: one warning line"
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] && ok || bad "stderr: $err"
md=$(cat "$r/report.md")
html=$(cat "$r/report.html")
for want in "# Tiny model on a tiny GPU" "## Memory budget of one GPU" "## Does each workload fit?" \
	"## Longest context for each workload's batch" "## Memory fraction each workload needs" \
	"## The arithmetic" \
	"tiny on tinygpu at tp 3 is left out: tp: 3 does not divide num_heads 8" \
	"4 layers x 2 x 2 KV heads x 64 d_h x 2 B = 2,048 B" \
	"4 layers x 2 x 1 KV heads x 64 d_h x 2 B = 1,024 B" \
	"4 layers x 2 x 1 KV heads x 64 d_h x 1 B = 512 B" \
	"| tiny | 4 | 8 / 2 | 64 | 4,096 | 10,000,000 | 2,048 B |" \
	"| short | 1,024 | 2 | 2,048 |" \
	"| tiny | h100-sxm | generic | 2 | bf16 | 2 | \$7.56 |" \
	"| tiny | tinygpu | generic | 1 | bf16 | 1 | - | 19.07 MiB |" \
	"no: weights do not fit" \
	"cd plots && gnuplot kv-context.gp"; do
	name="report.md has '$want'"
	case "$md" in *"$want"*) ok ;; *) bad "missing" ;; esac
done
# 10,000,000 parameters x 2 B = 20,000,000 B = 19.07 MiB (above); $3.78 x 2 GPUs = $7.56
case "$html" in *"<h1>Tiny model on a tiny GPU</h1>"*) ok ;; *) bad "html h1" ;; esac
case "$html" in *"with &lt;html&gt; &amp; &quot;quotes&quot;."*) ok ;; *) bad "html escaping" ;; esac
case "$html" in *"</html>"*) ok ;; *) bad "html not closed" ;; esac
for f in kv-context.dat budget-tiny.gp block-size-tiny.dat validate.gp; do
	name="report chart $f"
	[ -f "$r/plots/$f" ] && ok || bad "missing"
done
# the block-size chart ran on the H100 (the tiny GPU holds no pool) at tp 2
case "$md" in *"### Block size: tiny on 2 x h100-sxm, workload short"*) ok ;; *) bad "block-size chart" ;; esac
case "$md" in *"### kvplan's predictions against kvbench's measurements"*) ok ;; *) bad "validate chart" ;; esac

# the example's numbers by hand: Llama-3.1-70B, 80 layers x 2 x 8 KV heads x 128 x 2 B
# = 327,680 B per token; at tp 8 one KV head per GPU: 40,960 B; fp8 20,480 B; eight
# H200s at the h200 profile's on-demand $4.54 per GPU-hour = 8 x 4.54 = $36.32 per hour
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" report "$top_srcdir/reports/example/scenario.yaml" -o "$r"
expect_rc 0
md=$(cat "$r/report.md")
for want in "| llama-3.1-70b | 80 | 64 / 8 | 128 | 131,072 |" "327,680 B |" \
	"80 layers x 2 x 1 KV heads x 128 d_h x 2 B = 40,960 B" \
	"80 layers x 2 x 1 KV heads x 128 d_h x 1 B = 20,480 B" \
	"| llama-3.1-70b | h200 | vllm | 8 | fp8 | 8 | \$36.32 |"; do
	name="example report has '$want'"
	case "$md" in *"$want"*) ok ;; *) bad "missing" ;; esac
done
# the report and `kvplan budget` answer from the same library: H100 SXM, tp 8,
# fp8, 8,192 tokens
run "$KVPLAN" budget --model llama-3.1-70b --gpu h100-sxm --engine vllm --tp 8 --kv-dtype fp8 \
	--utilization 0.9 --context 8k --format json
seqs=$(json max_sequences)
name="report agrees with budget"
case "$md" in *"| llama-3.1-70b | h100-sxm | vllm | 8 | fp8 | yes (max $seqs) |"*) ok ;;
	*) bad "no row with max $seqs" ;; esac

if [ "$have_gnuplot" = yes ]; then
	run env -u KVPLAN_GNUPLOT "$KVPLAN" report "$top_srcdir/tests/data/report/tiny.yaml" -o "$r" --term svg
	expect_rc 0
	expect_out "(4 charts, 4 images)"
	[ -z "$err" ] && ok || bad "stderr: $err"
	# every image the HTML shows exists and is an SVG
	for src in $(sed -n 's/.*<img src="\([^"]*\)".*/\1/p' "$r/report.html"); do
		name="image $src"
		grep -q '<svg' "$r/$src" && ok || bad "missing or not SVG"
	done
	grep -q '<img src="plots/kv-context.svg"' "$r/report.html" && ok || bad "no kv-context image"
fi

# malformed scenarios: exit 3 with file:line:col: error: field
bad_dir="$top_srcdir/tests/data/bad"
for case in "scenario-unknown-key.yaml:4:1: error: gpu: unknown key" \
	    "scenario-bad-engine.yaml:5:17: error: engines: unknown engine 'tgi'" \
	    "scenario-tp-zero.yaml:5:9: error: tp: must be between 1 and 1024, got 0" \
	    "scenario-workload-no-context.yaml:9:5: error: context: required in every workload" \
	    "scenario-unknown-model.yaml:5:5: error: models: llama-9-1t: no profile named" \
	    "scenario-bad-context.yaml:6:27: error: context: expected a positive token count" \
	    "scenario-models-not-list.yaml:3:9: error: models: expected a list, found a scalar" \
	    "scenario-unknown-question.yaml:7:18: error: questions: unknown question 'cheapest'" \
	    "scenario-no-workloads.yaml:5:12: error: workloads: must not be empty" \
	    "scenario-kv-mxfp4.yaml:5:18: error: kv_dtypes: 'mxfp4' is not a KV cache dtype" \
	    "scenario-results-missing.yaml:7:11: error: results: no-such-kvbench-run.yaml: No such file" \
	    "scenario-block-size-no-profile.yaml:7:8: error: plots: block-size needs a workload with a profile"; do
	file=${case%%:*}
	run "$KVPLAN" report "$bad_dir/$file" -o "$tmp/bad"
	expect_rc 3
	expect_err "$case"
done
name="every bad scenario tested"
[ "$(ls "$bad_dir"/scenario-*.yaml | wc -l)" = 12 ] && ok || bad "$(ls "$bad_dir"/scenario-*.yaml | wc -l) files"
for args in "" "x.yaml" "$bad_dir/scenario-tp-zero.yaml -o" "a.yaml b.yaml -o d" "a.yaml -o d --term pdf" \
	    "a.yaml -o d --bogus"; do
	run "$KVPLAN" report $args
	expect_rc 2
	expect_err "kvplan report:"
done
run "$KVPLAN" report --help
expect_rc 0
expect_out "Usage: kvplan report SCENARIO.yaml -o DIR"

# --- usage mistakes: exit 2
for args in "" "nosuch" "kv-context --term jpeg" "kv-context --tp 1,2" "budget --model llama-2-7b" \
	    "kv-context --format json" "budget --gpu h100-sxm --model a,b" "kv-context --name ../x" \
	    "max-seqs --model llama-2-7b --gpu h100-sxm --kv-dtype fp8,mxfp4" "kv-context --contexts 0" \
	    "validate" "validate --results x.yaml --model llama-2-7b" "validate --results x.yaml --band 1.5" \
	    "block-size --model llama-2-7b --gpu h100-sxm --block-sizes 0" \
	    "block-size --model llama-2-7b --gpu h100-sxm --requests 0" "perf --model llama-2-7b --batches x"; do
	run "$KVPLAN" plot --engine generic $args -o "$d"
	expect_rc 2
	expect_err "kvplan plot:"
done
# a model that does not exist: exit 3
run "$KVPLAN" plot kv-context --engine generic --model no-such-model -o "$d"
expect_rc 3
expect_err "no-such-model"
run "$KVPLAN" plot --engine generic --help
expect_rc 0
expect_out "Usage: kvplan plot KIND"
# perf: the batches past what fits the pool are drawn grey, apart
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot perf --engine generic --model llama-3.1-8b --gpu h100-sxm -o "$d"
gp=$(cat "$d/perf.gp")
case "$gp" in *'using 1:($1 <= 108 ? ($4/0.001) : NaN)'*) ok ;; *) bad "perf: in colour up to 108" ;; esac
case "$gp" in *'using 1:($1 >= 64 ? ($4/0.001) : NaN) with linespoints lw 1 pt 4 ps 0.8 lc rgb "gray70"'*) ok ;;
	*) bad "perf: grey from the last batch that fits (64) on" ;; esac
case "$gp" in *"title 'grey: beyond the pool, cannot run'"*) ok ;; *) bad "perf: grey unexplained" ;; esac
# every script sets a palette without gnuplot's faint yellow (#f0e442)
case "$gp" in *'set linetype 5 lc rgb "#8c564b"'*) ok ;; *) bad "palette" ;; esac
# --- pareto: the chart's points are kvplan size's configurations.  The
# front's (column 4) are the rows `kvplan size --pareto --format csv` prints
# for the same arguments, matched here from the CSV read on its own, and no
# configuration that fits dominates one of them on cost, TPOT and TTFT.
# csv2tsv: RFC 4180 fields ("memory,tpot" quoted) to tab-separated ones.
csv2tsv() {
	awk '{ out = ""; f = ""; q = 0; s = $0
	       for (i = 1; i <= length(s); i++) { c = substr(s, i, 1)
		 if (q) { if (c == "\"") { if (substr(s, i + 1, 1) == "\"") { f = f c; i++ } else q = 0 } else f = f c }
		 else if (c == "\"") q = 1
		 else if (c == ",") { out = out f "\t"; f = "" }
		 else f = f c }
	       print out f }'
}
pargs="--model llama-3.1-8b --workload chat --rate 5 --tpot 0.05 --tp 1,2,4,8"
gl=h100-sxm,h200,l40s,a100-80gb    # plot takes --gpu LIST, size --gpus LIST
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot pareto --engine generic $pargs --gpu $gl -o "$d"
expect_rc 0
run "$KVPLAN" size --engine generic $pargs --gpus $gl --format csv
expect_rc 0
printf '%s\n' "$out" | csv2tsv >"$tmp/all.tsv"
run "$KVPLAN" size --engine generic $pargs --gpus $gl --pareto --format csv
printf '%s\n' "$out" | csv2tsv >"$tmp/front.tsv"
# TPOT and cost of each row, by the header's names, to 8 significant digits (the .dat's
# %.10g, rounded again to 9, can differ in the last digit from the CSV's)
pick() {
	awk -F '\t' -v want="$2" 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		want == "" || $(c["pareto"]) == want { printf "%.8g %.8g\n", $(c["tpot_s"]), $(c["cost_per_mtok"]) }' "$1" | sort
}
# the same points, each figure within 1e-7 of the other's (the .dat's %.10g
# and the CSV's digits round apart in the last place)
same_points() {
	[ -s "$1" ] && [ "$(wc -l <"$1")" -eq "$(wc -l <"$2")" ] &&
		paste -d ' ' "$1" "$2" | awk '{ for (i = 1; i <= 2; i++) { a = $i; b = $(i + 2)
			if ((a - b) ^ 2 > (1e-7 * (a > b ? a : b)) ^ 2) exit 1 } }'
}
pick "$tmp/front.tsv" "" >"$tmp/front.want"
awk '!/^#/ && NF && $(NF - 1) != "NaN" { printf "%.8g %.8g\n", $1, $(NF - 1) }' "$d/pareto.dat" | sort >"$tmp/front.got"
name="pareto: the front's points are kvplan size --pareto's rows"
same_points "$tmp/front.want" "$tmp/front.got" && ok ||
	bad "$(diff "$tmp/front.want" "$tmp/front.got")"
# the others: every configuration that fits (no failure but ttft or tpot,
# a known cost) and is not on the front
awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$(c["pareto"]) == "false" && $(c["failed"]) !~ /split|weights|context|kv_dtype|memory|throughput/ &&
	$(c["cost_per_mtok"]) ~ /^[0-9.e+-]+$/ { printf "%.8g %.8g\n", $(c["tpot_s"]), $(c["cost_per_mtok"]) }' \
	"$tmp/all.tsv" | sort >"$tmp/other.want"
awk '!/^#/ && NF && $NF != "NaN" { printf "%.8g %.8g\n", $1, $NF }' "$d/pareto.dat" | sort >"$tmp/other.got"
name="pareto: one point for every other configuration that fits"
same_points "$tmp/other.want" "$tmp/other.got" && ok ||
	bad "$(diff "$tmp/other.want" "$tmp/other.got")"
# no front row is dominated by any configuration that fits
name="pareto: the front is non-dominated"
dom=$(awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
	$(c["failed"]) !~ /split|weights|context|kv_dtype|memory|throughput/ && $(c["cost_per_mtok"]) ~ /^[0-9]/ {
		n++; k[n] = $(c["cost_per_mtok"]) + 0; t[n] = $(c["tpot_s"]) + 0; f[n] = $(c["ttft_s"]) + 0
		p[n] = $(c["pareto"]) }
	END { for (i = 1; i <= n; i++) if (p[i] == "true") for (j = 1; j <= n; j++)
		if (k[j] <= k[i] && t[j] <= t[i] && f[j] <= f[i] && (k[j] < k[i] || t[j] < t[i] || f[j] < f[i]))
			print "row " j " dominates front row " i }' "$tmp/all.tsv")
nfront=$(awk -F '\t' 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next } $(c["pareto"]) == "true"' "$tmp/all.tsv" | wc -l)
[ -z "$dom" ] && [ "$nfront" -ge 2 ] && ok || bad "$dom (front of $nfront)"
gp=$(cat "$d/pareto.gp")
case "$gp" in *"set xlabel 'TPOT, time per output token (s)'"*) ok ;; *) bad "pareto: xlabel" ;; esac
case "$gp" in *"using 1:(\$4 > 0 ? \$4/1 : NaN) with linespoints"*) ok ;; *) bad "pareto: the front a line" ;; esac
case "$gp" in *"using 1:(\$5 > 0 ? \$5/1 : NaN) with points"*) ok ;; *) bad "pareto: the others points" ;; esac
# every point named by its configuration (issue 35: the chart had no point
# labels): column 2 of the .dat, drawn with labels for both series
case "$gp" in *"using 1:(\$4 > 0 ? \$4/1 : NaN):2 with labels"*) ok ;; *) bad "pareto: front labels" ;; esac
case "$gp" in *"using 1:(\$5 > 0 ? \$5/1 : NaN):2 with labels"*) ok ;; *) bad "pareto: other labels" ;; esac
# a GPU without a price, none given: nothing to plot, and the message says what to give
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot pareto --engine generic --model llama-3.1-8b --gpu-memory 80GiB -o "$d" \
	--gpu "$top_srcdir/tests/data/hostile/evil-gpu.yaml"
expect_rc 3
expect_err "--price"
run "$KVPLAN" plot pareto --engine generic --model llama-3.1-8b --gpu h100-sxm --price h200=2 -o "$d"
expect_rc 2
expect_err "--price: 'h200' is not among the GPUs considered"
run "$KVPLAN" plot pareto --engine generic --model llama-3.1-8b --cost cloud:cheap -o "$d"
expect_rc 2
expect_err "--cost: expected cloud"
# --- serve: Llama-2-7B on the round GPU (1 TB/s, compute that never binds),
# 100 + 100 tokens.  At 0.01 requests/s a request is nearly always alone
# (its 1.01 s end to end overlaps the next arrival with probability
# 1 - exp(-0.0101) = 1 %): TTFT p50 and p90 are one prefill step,
# (10e9 + 100 x 524,288 B) / 1e12 = 10.0524288 ms, TPOT p50 the mean of 99
# decode steps at contexts 101 .. 199, (10e9 + 150 x 524,288) / 1e12 =
# 10.0786432 ms.  At 120 requests/s one replica cannot keep up: a step of B
# sequences at >= 100 tokens reads >= 10e9 + B x 52,428,800 B, so B / (100
# steps) completes at most 256 / (100 x 23.4 ms) = 109 a second (B = 256,
# the default max_num_seqs); the 1,000 requests arrive in 8.3 s and leave a
# backlog of >= 91, so the last tenth waits >= 82 / 109 = 0.75 s: TTFT p90
# above --ttft 0.3.  The knee is 0.02, the last rate within it.
d="$tmp/serve"
grep -v "^#" "$top_srcdir/tests/data/good/round.yaml" >"$tmp/round.yaml"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot serve --engine generic --model llama-2-7b --gpu "$tmp/round.yaml" \
	--weights-bytes 10GB --utilization 1 --activation-bytes 0 --overhead-bytes 0 \
	--workload "$top_srcdir/tests/data/workloads/size-replicas.yaml" --rates 0.01,0.02,120 \
	--ttft 0.3 -o "$d"
expect_rc 0
dat=$(cat "$d/serve.dat")
case "$dat" in *'0.01 "0.01" "" 0.0100524288 0.0100524288 '*) ok ;; *) bad "serve 0.01 row: $dat" ;; esac
row=$(grep '^0.01 ' "$d/serve.dat")
if echo "$row" | awk '{ exit !($7 > 0.0100786432 * 0.998 && $7 < 0.0100786432 * 1.002) }'; then ok
else bad "serve TPOT p50 at 0.01: $row"; fi
row=$(grep '^120 ' "$d/serve.dat")
if echo "$row" | awk '{ exit !($5 > 0.3) }'; then ok; else bad "serve TTFT p90 at 120: $row"; fi
case "$(cat "$d/serve.gp")" in *"knee: 0.02 requests/s"*) ok ;; *) bad "serve: no knee at 0.02" ;; esac
case "$(cat "$d/serve.gp")" in *"KV blocks in use (% of the pool)"*) ok ;; *) bad "serve: KV panel" ;; esac
run "$KVPLAN" plot serve --engine generic --model llama-2-7b --gpu h100-sxm --rates 2,1 -o "$d"
expect_rc 2
expect_err "--rates: expected increasing"
finish
