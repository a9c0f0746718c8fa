#!/bin/sh
# cli-kvbench.sh: golden tests of kvbench, the decode harness: the quick
# sweep validates and times on the CPU, byte counts and capacity figures
# match hand arithmetic, files are written, mistakes exit 2, and the CUDA
# backend either runs or says there is no device (exit 77).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
KVBENCH="$top_builddir/kvbench"

# The quick sweep: 5 dtypes x 2 head layouts, every point validated, timed.
run "$KVBENCH" --quick --backend cpu
expect_rc 0
expect_out "decode (cpu,"
expect_out "ceiling: arrays of 8 MiB"
n=$(printf '%s\n' "$out" | grep -c ' pass *$')
if [ "$n" = 10 ]; then ok; else bad "$n points passed, want 10"; fi
for dt in fp32 fp16 bf16 fp8 int8; do expect_out " $dt "; done

# Bytes by hand: 2 sequences of 100 tokens, H_q 4, H_kv 2, d 64, bf16, P 16:
# K+V 200 tokens x 2 heads x 64 x 2 B x 2 = 102,400; Q+O 2 x 4 x 64 x 4 B x 2
# = 4,096; moved 106,496.  Blocks ceil(100/16) = 7 per sequence: tables
# (14 + 2 lengths) x 4 B = 64; pool 14 x (2 x 2 x 16 x 64 x 2 B) = 114,688.
small="--batch 2 --context 100 --heads 4:2 --head-dim 64 --kv-dtype bf16 --block-size 16"
run "$KVBENCH" $small --repeats 3 --warmup 0 --stream-bytes 1MiB --format json
expect_rc 0
expect_json moved_bytes 106496
expect_json table_bytes 64
expect_json pool_bytes 114688
expect_json tokens 200
expect_json group 2
expect_json validated pass
expect_json backend cpu
expect_json seqs_checked 2
expect_json ceiling_array_bytes 1048576
# the planner's KV bytes of the step: the K+V part of the bytes moved
expect_json predicted_kv_bytes 102400
expect_json predicted_on read-ceiling
case "$out" in *%*) bad "a percent sign in the JSON: the table's columns leaked" ;; *) ok ;; esac
for f in gbps ratio time_median_s ceiling_read_gbps ceiling_triad_gbps max_err; do
	v=$(json "$f")
	if [ -n "$v" ]; then ok; else bad "no $f in the JSON"; fi
done

# A length distribution as kvplan takes it: fixed:50 for 2 sequences is
# 100 tokens; the context shown is the distribution's mean.
run "$KVBENCH" --lengths fixed:50 --batch 2 --heads 4:2 --head-dim 64 --validate-only --format json
expect_rc 0
expect_json tokens 100
expect_json context 50
expect_json lengths fixed:50
# lognormal:300,0.6 has mean 300 e^(0.6^2/2) = 359.2
run "$KVBENCH" --lengths lognormal:300,0.6 --batch 3 --heads 4:2 --head-dim 64 --validate-only --format json
expect_rc 0
expect_json context 359
run "$KVBENCH" --lengths zipf:10,x
expect_rc 2
expect_err "--lengths"
run "$KVBENCH" --lengths fixed:50 --context 10
expect_rc 2
expect_err "--context: not with --lengths"

# --validate-only: the check, no timing.
run "$KVBENCH" $small --validate-only --format json
expect_rc 0
expect_json validated pass
if [ -z "$(json gbps)" ]; then ok; else bad "--validate-only timed a point"; fi
run "$KVBENCH" $small --validate-only
expect_out "validation (cpu)"

# CSV to stdout: a header and one line per point (2 dtypes x 2 block sizes).
run "$KVBENCH" $small --kv-dtype fp32,int8 --block-size 1,16 --validate-only --format csv
expect_rc 0
lines=$(printf '%s\n' "$out" | wc -l)
if [ "$lines" = 5 ]; then ok; else bad "$lines CSV lines, want 5"; fi
expect_out "backend,batch,context,"

# Files: YAML with the environment and the points; CSV with the header.
run "$KVBENCH" $small --repeats 2 --stream-bytes 1MiB --out "$tmp/r.yaml"
expect_rc 0
if grep -q '^kvbench:' "$tmp/r.yaml" && grep -q '^points:' "$tmp/r.yaml" &&
   grep -q 'validated: "pass"' "$tmp/r.yaml" && grep -q 'ceiling_read_gbps:' "$tmp/r.yaml" &&
   grep -q 'command: ".*kvbench --batch 2' "$tmp/r.yaml"; then ok; else bad "YAML file: $(cat "$tmp/r.yaml")"; fi
run "$KVBENCH" $small --validate-only --out "$tmp/r.csv"
expect_rc 0
if head -n 1 "$tmp/r.csv" | grep -q '^schema_version,backend,batch,' && [ "$(wc -l <"$tmp/r.csv")" = 2 ]; then ok
else bad "CSV file: $(cat "$tmp/r.csv")"; fi

# Capacity, by hand: limit 64 MiB x 0.5 = 33,554,432 B; weights 1 MiB leave
# 32,505,856 B; a bf16 block of 8 KV heads, P 16, d 128 is 2 x 8 x 16 x 128
# x 2 B = 65,536 B -> 496 blocks, 7,936 token slots; 100 tokens take
# ceil(100/16) = 7 blocks -> 70 sequences, 7,000 tokens.
run "$KVBENCH" --capacity --gpu-memory 64MiB --utilization 0.5 --weights-bytes 1MiB \
	--heads 8:8 --head-dim 128 --block-size 16 --kv-dtype bf16 --context 100 --format json
expect_rc 0
expect_json limit_bytes 33554432
expect_json block_bytes 65536
expect_json blocks 496
expect_json token_slots 7936
expect_json sequences 70
expect_json tokens 7000
# the planner (budget.h, generic engine) predicts the same from its own math
expect_json predicted_block_bytes 65536
expect_json predicted_blocks 496
expect_json predicted_sequences 70
expect_json blocks_diff 0
# int8 adds a 4 B scale per token and head: 2 x 8 x 16 x (128 + 4) = 33,792 B;
# 32,505,856 / 33,792 = 961.9 -> 961 blocks; 961 / 7 = 137 sequences.
run "$KVBENCH" --capacity --gpu-memory 64MiB --utilization 0.5 --weights-bytes 1MiB \
	--heads 8:8 --head-dim 128 --block-size 16 --kv-dtype int8 --context 100 --format json
expect_json block_bytes 33792
expect_json blocks 961
expect_json sequences 137
# weights larger than the limit: nothing fits
run "$KVBENCH" --capacity --gpu-memory 64MiB --weights-bytes 64MiB --format json
expect_rc 0
expect_json blocks 0

# Mistakes: exit 2 with the option named.
run "$KVBENCH" --heads 6:4
expect_rc 2
expect_err "--heads: 6:4: KV heads must divide query heads"
run "$KVBENCH" --kv-dtype int4
expect_rc 2
expect_err "--kv-dtype: 'int4'"
run "$KVBENCH" --backend tpu
expect_rc 2
expect_err "--backend: 'tpu'"
run "$KVBENCH" --batch 0
expect_rc 2
expect_err "--batch: '0'"
run "$KVBENCH" --context 12x
expect_rc 2
run "$KVBENCH" --utilization 1.5
expect_rc 2
expect_err "--utilization"
run "$KVBENCH" --out "$tmp/r.txt"
expect_rc 2
expect_err "must end in .csv, .yaml or .yml"
run "$KVBENCH" --no-such-option
expect_rc 2
expect_err "unknown option"
run "$KVBENCH" --backend cuda --head-dim 100
expect_rc 2
expect_err "64, 128 and 256"
run "$KVBENCH" extra
expect_rc 2

run "$KVBENCH" --gpu no-such-gpu --quick
expect_rc 3
expect_err "no-such-gpu"

run "$KVBENCH" --help
expect_rc 0
expect_out "Usage: kvbench"
expect_out "--capacity"
run "$KVBENCH" --version
expect_rc 0
expect_out "kvbench "

# kernels/run-device.sh's plain build line (no autotools, no libyaml) builds
# a CPU kvbench that validates.
run env OUT="$tmp/dev" BUILD="$tmp/devbuild" "$top_srcdir/kernels/run-device.sh" --cpu-only --build-only
expect_rc 0
run "$tmp/devbuild/kvbench" --quick --validate-only
expect_rc 0
n=$(printf '%s\n' "$out" | grep -c ' pass *$')
if [ "$n" = 10 ]; then ok; else bad "standalone build: $n points passed, want 10"; fi
run "$tmp/devbuild/kvbench" --gpu h200
expect_rc 2
expect_err "without the planner's library"

# CUDA: runs where there is a device, else says so and exits 77.
run "$KVBENCH" --backend cuda --quick
case "$rc" in
77) expect_err "kvbench: no CUDA device" ;;
0) n=$(printf '%s\n' "$out" | grep -c ' pass *$')
   if [ "$n" = 10 ]; then ok; else bad "cuda: $n points passed, want 10"; fi ;;
*) bad "--backend cuda exited $rc: $err" ;;
esac

# progress: a line per point on stderr with --progress, none with --quiet
# (and none by default here: stderr is a file, not a terminal)
run "$KVBENCH" --quick --validate-only --progress
expect_rc 0
expect_err "kvbench: [10/10] B 3, context 200, heads 8:2, d 64, P 16, int8"
run "$KVBENCH" --quick --validate-only
case "$err" in *"[1/10]"*) bad "progress without --progress on a file" ;; *) ok ;; esac
finish
