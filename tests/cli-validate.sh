#!/bin/sh
# cli-validate.sh: golden tests of `kvplan validate`: kvbench's results beside
# the planner's predictions, hand arithmetic on tests/data/good/kvbench-run.yaml
# (see tests/check-validate.c for the numbers), calibration, the formats, the
# exit codes, located errors for bad files, and a real kvbench run read back.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
KVBENCH="$top_builddir/kvbench"
good="$top_srcdir/tests/data/good"
bad_dir="$top_srcdir/tests/data/bad"

# Uncalibrated, on each point's read ceiling at efficiency 1: -20%, -20%,
# -50%: all outside 10%, exit 1.
run "$KVPLAN" validate "$good/kvbench-run.yaml"
expect_rc 1
expect_out "kvbench-run.yaml:9 "
expect_out "-20.0%  <- outside"
expect_out "-50.0%"
expect_out "decode: 3 point(s), median |error| 20.0%, worst -50.0%"
expect_out "skipped: 2 point(s)"

# Fitted: the median efficiency 0.8 makes two exact; the fp32 point is
# 256 / 409.6 - 1 = -37.5%: outside 10%, inside 40%.
run "$KVPLAN" validate "$good/kvbench-run.yaml" --calibrate
expect_rc 1
expect_out "efficiency 0.800, fitted to these results, median of 3 point(s)"
expect_out "-37.5%"
run "$KVPLAN" validate "$good/kvbench-run.yaml" --calibrate --tolerance 40%
expect_rc 0
run "$KVPLAN" validate "$good/kvbench-run.yaml" --efficiency 0.5 --tolerance 0.01 --format json
expect_rc 1
expect_json efficiency 0.5
expect_json decode_points 3
expect_json decode_outside 2
expect_json all_within false
expect_json kind decode
expect_json kv_dtype fp16
expect_json predicted_kv_bytes 2048000
# efficiency 0.5: 204.8 us / 0.5 = 409.6 us predicted against 256 measured
expect_json predicted 0.0004096
run "$KVPLAN" validate "$good/kvbench-run.yaml" --calibration "$good/kvbench-run.yaml" --format csv
expect_rc 1
n=$(printf '%s\n' "$out" | wc -l)
if [ "$n" = 4 ]; then ok; else bad "$n CSV lines, want a header and 3 points"; fi
expect_out "file,line,kind,backend,kv_dtype,num_heads,num_kv_heads,head_dim"
expect_out ",decode,cpu,fp32,8,8,64,16,1,1,500,500,fixed,read-ceiling,10,0.8,"

# On a GPU profile: the H200's 4.8 TB/s (its calibration, else 0.80)
run "$KVPLAN" validate "$good/kvbench-run.yaml" --gpu h200 --format json
expect_json basis h200
expect_json bandwidth_gbps 4800

# Capacity: a real run's blocks (exact) and one made 1 block off (-0.01%)
run "$KVPLAN" validate "$good/kvbench-capacity.csv"
expect_rc 0
expect_out "29,491       29,491    +0.0%"
expect_out "capacity: 3 point(s), worst |error| 0.01% in blocks, 0 outside +/-1%"
run "$KVPLAN" validate "$good/kvbench-capacity.csv" --capacity-tolerance 0
expect_rc 1

# Both files at once
run "$KVPLAN" validate "$good/kvbench-run.yaml" "$good/kvbench-capacity.csv" --calibrate \
	--tolerance 0.4 --format json
expect_rc 0
expect_json capacity_points 3
expect_json decode_points 3

# --large-only judges the large steps alone: fp16 8:8 at 1,000 tokens (204.8 us
# at 10 GB/s) measured at 256 us twice (efficiency 0.8) and a 10x smaller step
# of the same shape (20.48 us) measured at 204.8 us, a fixed cost: fitted 0.8,
# the small step is -87.5%, outside 10% but not judged.
printf '%s\n' "backend,batch,tokens,block_size,kv_dtype,num_heads,num_kv_heads,head_dim,validated,time_median_s,ceiling_read_gbps" \
	"cpu,2,1000,16,fp16,8,8,64,pass,0.000256,10" "cpu,2,1000,16,fp16,8,8,64,pass,0.000256,10" \
	"cpu,1,100,16,fp16,8,8,64,pass,0.0002048,10" >"$tmp/small.csv"
run "$KVPLAN" validate "$tmp/small.csv" --calibrate
expect_rc 1
expect_out "decode, large steps: 2 point(s), median |error| 0.0%, worst 0.0%, 0 outside +/-10%"
run "$KVPLAN" validate "$tmp/small.csv" --calibrate --large-only
expect_rc 0
expect_out "-87.5%  (small step, not judged)"

# One efficiency per shape: each of kvbench-run.yaml's three shapes is its own
# group of one point, so every prediction is exact; fitted to another run
# (here the same file) the groups carry over.
run "$KVPLAN" validate "$good/kvbench-run.yaml" --calibrate-by shape
expect_rc 0
expect_out "efficiencies fitted per shape to these results (3 groups)"
# three efficiencies on three points: exact by construction, and it says so
expect_err "warning: the fit has as many efficiencies as points (3)"
expect_out "fit: 3 efficiencies on 3 points, exact by construction"
run "$KVPLAN" validate "$good/kvbench-run.yaml" --calibrate-by shape --format json
expect_json fit_exact_by_construction true
expect_json fit_parameters 3
expect_json fit_exact_groups 3
expect_json fit_in_sample true
# per dtype: fp16, bf16, fp32 are one point each too
run "$KVPLAN" validate "$good/kvbench-run.yaml" --calibrate-by dtype --format json
expect_json fit_exact_by_construction true
# small.csv: one efficiency on its two large points is a real fit, no warning
run "$KVPLAN" validate "$tmp/small.csv" --calibrate --format json
expect_json fit_exact_by_construction false
expect_json fit_parameters 1
expect_json fit_exact_groups 0
case "$err" in *warning*) bad "a real fit warned: $err" ;; *) ok ;; esac
# out of sample (fitted to another run): not in sample, no claim
run "$KVPLAN" validate "$good/kvbench-run.yaml" --calibrate-by shape \
	--calibration "$good/kvbench-run.yaml" --format json
expect_json fit_in_sample false
expect_json fit_exact_by_construction false
run "$KVPLAN" validate "$good/kvbench-run.yaml" --calibrate-by dtype \
	--calibration "$good/kvbench-run.yaml" --format json
expect_rc 0
expect_json decode_outside 0
run "$KVPLAN" validate "$tmp/small.csv" --calibrate-by dtype --calibration "$good/kvbench-run.yaml"
expect_out "0 point(s) of a KV dtype it lacks"
run "$KVPLAN" validate "$good/kvbench-run.yaml" --calibrate-by shape --calibration "$tmp/small.csv"
expect_out "2 point(s) of a shape it lacks at its whole-run 0.800"

# Usage mistakes: exit 2
for args in "--tolerance 2" "--tolerance x" "--efficiency 0" "--efficiency 1.5" \
	    "--format xml" "--bogus" "--calibrate --efficiency 0.5" "--calibrate-by model" \
	    "--calibrate-by shape --efficiency 0.5"; do
	run "$KVPLAN" validate $args "$good/kvbench-run.yaml"
	expect_rc 2
	expect_err "kvplan validate:"
done
run "$KVPLAN" validate
expect_rc 2
expect_err "a kvbench results file is required"
run "$KVPLAN" validate --help
expect_rc 0
expect_out "Usage: kvplan validate"

# Bad files: exit 3, located
for f in "$bad_dir"/validate-*; do
	run "$KVPLAN" validate "$f"
	expect_rc 3
	expect_err "$(basename "$f"):"
	expect_err "error: "
done
run "$KVPLAN" validate "$bad_dir/validate-negative-time.yaml"
expect_err "validate-negative-time.yaml:12:20: error: time_median_s: must not be negative"
run "$KVPLAN" validate "$bad_dir/validate-overflow.csv"
expect_err "validate-overflow.csv:2:3: error: tokens:"
run "$KVPLAN" validate "$bad_dir/validate-missing-head-dim.yaml"
expect_err "validate-missing-head-dim.yaml:4:5: error: head_dim: missing"
run "$KVPLAN" validate "$good/kvbench-run.yaml" --calibration "$tmp/none.yaml"
expect_rc 3
run "$KVPLAN" validate "$good/kvbench-run.yaml" --gpu no-such-gpu
expect_rc 3

# A real kvbench run read back: capacity is exact on the CPU (the budget
# and the allocator agree block for block), and every decode point of the
# quick sweep has a prediction (its tiny steps are fixed costs, not
# bandwidth, so whether they lie within a tolerance is not the question).
run "$KVBENCH" --capacity --gpu-memory 64MiB --context 300 --heads 8:2,8:8 --head-dim 64 \
	--kv-dtype bf16,int8,fp8 --out "$tmp/cap.yaml"
expect_rc 0
run "$KVPLAN" validate "$tmp/cap.yaml" --capacity-tolerance 0 --format json
expect_rc 0
expect_json capacity_points 6
expect_json capacity_max_abs_error 0
# ...which is by construction on the CPU, and validate says so
expect_json capacity_cpu_points 6
expect_err "6 capacity points on the cpu backend"
expect_err "agrees by construction"
run "$KVBENCH" --quick --repeats 2 --warmup 0 --stream-bytes 4MiB --out "$tmp/run.csv"
expect_rc 0
run "$KVPLAN" validate "$tmp/run.csv" --calibrate --format json
case "$rc" in 0 | 1) ok ;; *) bad "exit $rc: $err" ;; esac
expect_json decode_points 10
expect_json fit_points 10
# kvbench's own predicted_s and validate's uncalibrated prediction come from
# the same basis and functions: equal up to the 2-decimal rounding of the
# ceiling in the file, +-0.005 GB/s, a relative 0.005 / ceiling (0.26% at the
# 1.9 GB/s a loaded machine's in-cache point can show), plus 0.05%
run "$KVPLAN" validate "$tmp/run.csv" --format csv
printf '%s\n' "$out" >"$tmp/val.csv"
name="kvbench and validate predict alike"
grep -v '^#' "$tmp/run.csv" >"$tmp/run-plain.csv" # without results_format 2's mark and count
awk -F, 'NR == FNR { if (FNR == 1) for (i = 1; i <= NF; i++) k[$i] = i
		     else { p[FNR] = $k["predicted_s"]; c[FNR] = $k["ceiling_read_gbps"] }; next }
	 FNR == 1 { for (i = 1; i <= NF; i++) v[$i] = i; next }
	 { d = $v["predicted"] / p[FNR] - 1; if (d < 0) d = -d
	   if (!(c[FNR] > 0) || d > 0.005 / c[FNR] + 0.0005) bad++; n++ }
	 END { exit !(n == 10 && !bad) }' "$tmp/run-plain.csv" "$tmp/val.csv" && ok ||
	bad "predictions differ: $(cut -d, -f1-3 "$tmp/val.csv" | head -3)"
finish
