#!/bin/sh
# cli-limits.sh: no silent truncation (issue 17).  Paths, lists and numbers
# longer than a fixed buffer either work in full or are refused with an
# error; never cut into a different file, a different list or a different
# number.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

# a path of exactly $2 bytes under $1, made of folders of at most 200 bytes
long_dir() {
	p=$1
	while [ ${#p} -lt $(($2 - 201)) ]; do
		p="$p/$(printf '%0200d' 0)"
	done
	pad=$(($2 - ${#p} - 1))
	p="$p/$(printf "%0${pad}d" 0)"
	printf '%s' "$p"
}

# --- an output folder of 1,010 bytes: DIR/kv-context.dat is 1,025 bytes, past
# the 1,024-byte buffer that once cut it to DIR/kv-context.d (a decoy here)
d=$(long_dir "$tmp" 1010)
mkdir -p "$d"
echo decoy >"$d/kv-context.d"
name="a 1,010-byte folder"
[ ${#d} = 1010 ] && ok || bad "made ${#d} bytes"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot kv-context --model llama-2-7b --contexts 1k -o "$d"
expect_rc 0
name="the .dat written in full, the decoy untouched"
[ -f "$d/kv-context.dat" ] && [ "$(cat "$d/kv-context.d")" = decoy ] && ok || bad "$(ls "$d")"
# Llama-2-7B: 524,288 B per token x 1,024 tokens = 536,870,912 B
grep -q '^1024 "1k" "" 536870912$' "$d/kv-context.dat" && ok || bad "row"
# the report in the same folder, its charts under DIR/plots (1,016 bytes)
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" report "$top_srcdir/tests/data/report/tiny.yaml" -o "$d"
expect_rc 0
name="report in a 1,010-byte folder"
[ -f "$d/report.md" ] && [ -f "$d/plots/kv-context.dat" ] && ok || bad "$(ls "$d")"
# a folder whose DIR/plots passes 1,023 bytes is refused, not cut
d2=$(long_dir "$tmp/r" 1020)
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" report "$top_srcdir/tests/data/report/tiny.yaml" -o "$d2"
expect_rc 2
expect_err "error: -o: a folder of at most 1016 bytes"

# --- a profile path past 511 bytes: refused, never the file its first 511
# bytes name (a decoy profile with another name sits there)
m=$(long_dir "$tmp/m" 530)
mkdir -p "$(dirname "$m")"
cp "$top_srcdir/tests/data/good/tiny.yaml" "$m"
cut=$(printf '%s' "$m" | cut -c1-511)
sed 's/^name: tiny/name: decoy/' "$top_srcdir/tests/data/good/tiny.yaml" >"$cut"
run "$KVPLAN" budget --model "$m" --gpu h100-sxm
expect_rc 2
expect_err "models: path longer than 511 bytes"
name="the decoy was not loaded"
case "$out$err" in *decoy*) bad "loaded $cut" ;; *) ok ;; esac

# --- a list past 1,023 bytes: every value, every digit (the last one used
# to lose its digits): 24 distinct values (a value twice is refused) of 44
# zero-padded digits, 1,079 bytes
list=""
for v in 16 32 48 64 80 96 112 128 144 160 176 192 208 224 240 256 272 288 304 320 336 352 368 \
	 4096; do
	list="$list${list:+,}$(printf '%044d' $v)"
done
name="a 1,079-byte list"
[ ${#list} = 1079 ] && ok || bad "${#list} bytes"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot kv-context --model llama-2-7b --contexts "$list" \
	-o "$tmp/l"
expect_rc 0
name="the last value read in full"
# 4,096 x 524,288 B = 2,147,483,648 B, the 24th row
[ "$(grep -c '^[0-9]' "$tmp/l/kv-context.dat")" = 24 ] &&
	[ "$(grep '^[0-9]' "$tmp/l/kv-context.dat" | tail -n 1)" = '4096 "4k" "" 2147483648' ] && ok ||
	bad "$(tail -n 2 "$tmp/l/kv-context.dat")"

# --- a number past 10^60: a GPU priced at 10^61 per hour (H100 SXM's other
# numbers); the table shows 1.0000e+61, not 63 digits cut
sed 's/^name: h100-sxm/name: pricey/; s/^price_per_hour:.*/price_per_hour: 1e61/' \
	"$top_srcdir/profiles/gpus/h100-sxm.yaml" >"$tmp/pricey.yaml"
run "$KVPLAN" size --model llama-3.1-8b --workload chat --rate 2 --gpus "$tmp/pricey.yaml" --tp 1
expect_rc 0
expect_out "1.0000e+61"
expect_out 'at $1.0000e+61/hour'
# --- overflows: blamed on the flag that caused them, never undefined
# 2^64 - 1 sequences of Llama-2-7B's 4,096 x 524,288 B: the batch overflows
run "$KVPLAN" budget --model llama-2-7b --gpu h100-sxm --batch 18446744073709551615
expect_rc 3
expect_err "error: batch: KV bytes of 18446744073709551615 sequences x 4096 tokens overflow"
# an overhead of 2^64 - 1 bytes: the sum overflows, and the overhead is to blame
run "$KVPLAN" budget --model llama-2-7b --gpu h100-sxm --overhead-bytes 18446744073709551615
expect_rc 3
expect_err "error: overhead-bytes: weights + activations + overhead overflow"
# a prefix of 2^47 tokens holds 2^47 x 524,288 B = 2^66 B: no reload time
run "$KVPLAN" perf --model llama-2-7b --gpu h100-sxm --prefix 140737488355328
expect_rc 3
expect_err "error: prefix: the KV bytes of 140737488355328 tokens overflow"
# 2^64 - 1 tokens as a context (a double rounds it to 2^64, past any
# integer): beyond Llama-2-7B's max_context, so NaN, and no UB on the way
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot kv-context --model llama-2-7b \
	--contexts 1k,18446744073709551615 -o "$tmp/x"
expect_rc 0
name="the 2^64 - 1 row is NaN"
grep -q '^1.844674407e+19 "18446744073709551615" "" NaN$' "$tmp/x/kv-context.dat" && ok || bad "$(cat "$tmp/x/kv-context.dat")"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot max-seqs --model llama-2-7b --gpu h100-sxm \
	--contexts 1k,18446744073709551615 -o "$tmp/x"
expect_rc 0

# --- kvplan check finds a duplicate scenario among 20,000 in linear time
# (hashed names): the scan it replaces compared every pair, 2 x 10^8
# comparisons of names 24 KiB apart (14 s here); this takes about 1 s
awk 'BEGIN { print "defaults: {model: llama-2-7b, gpu: h100-sxm}"; print "scenarios:"
	for (i = 0; i < 20000; i++) print "  - {name: s" i "}"; print "  - {name: s19999}" }' \
	>"$tmp/many.yaml"
run timeout 10 "$KVPLAN" check "$tmp/many.yaml"
expect_rc 3
# s0 on line 3, s19999 on 3 + 19,999 = 20,002, its twin on 20,003; the value at column 12
expect_err "many.yaml:20003:12: error: name: duplicate scenario 's19999' (first at line 20002)"
# --- N17: budget sizes memory, which the acceptance rate does not change:
# --spec-draft needs no --spec-accept there.  EAGLE's head on Llama-3.1-8B
# (H 4096, 32 heads, 8 KV heads, d_h 128, I 14336): 4096 x 32 x 128 x 2 +
# 2 x 4096 x 8 x 128 + 3 x 4096 x 14336 + 2 x 4096 + 2 x 4096^2 =
# 251,666,432 parameters, x 2 B (bf16) = 503,332,864 B
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --context 8k --spec-draft eagle:3 --format json
expect_rc 0
expect_json weights_draft_bytes 503332864
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --context 8k --spec-draft eagle:3 \
	--spec-accept 0.7 --format json
expect_json weights_draft_bytes 503332864
# perf's speed-up needs it still
run "$KVPLAN" perf --model llama-3.1-8b --gpu h100-sxm --spec-draft eagle:3
expect_rc 2
expect_err "spec-accept"
# size searches the GPUs of a replica: a fixed --num-gpus is refused, not dropped
run "$KVPLAN" size --model llama-3.1-8b --workload chat --num-gpus 2
expect_rc 2
expect_err "--num-gpus: size searches the GPUs of a replica"
# --- D21: no silent misread of a number or a list
# a token count is whole: 1.5 was rounded to 2 tokens; 1.5k is 1,536, and
# Llama-2-7B's 524,288 B per token x 1,536 = 805,306,368 B
run "$KVPLAN" budget --model llama-2-7b --gpu h100-sxm --context 1.5
expect_rc 2
expect_err "--context: 1.5 is not a whole number of tokens"
run "$KVPLAN" budget --model llama-2-7b --gpu h100-sxm --context 1.5k --format json
expect_rc 0
expect_json kv_bytes 805306368
# numbers are decimal: strtod's hex float 0x0.8p0 (0.5) is refused
run "$KVPLAN" budget --model llama-2-7b --gpu h100-sxm --utilization 0x0.8p0
expect_rc 2
expect_err "--utilization"
expect_err "0x0.8p0"
# an empty item is refused, naming the flag (it was skipped: 1,,8 ran 1 and 8)
for l in 1,,8 1,8, ,1; do
	run "$KVPLAN" perf --model llama-2-7b --gpu h100-sxm --batch "$l"
	expect_rc 2
	expect_err "--batch: an empty item in '$l'"
done
run "$KVPLAN" size --model llama-3.1-8b --workload chat --gpus h100-sxm,,h200
expect_rc 2
expect_err "--gpus: an empty item"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot budget --model llama-2-7b --gpu h100-sxm, -o "$tmp/d21"
expect_rc 2
expect_err "--gpu: an empty item"
# a value twice is refused, by its text or by its value (1k = 1024 tokens):
# it was computed and plotted twice
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot kv-context --model llama-2-7b --contexts 1k,2k,1024 \
	-o "$tmp/d21"
expect_rc 2
expect_err "--contexts: '1k' and '1024' are the same count, 1024"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot budget --model llama-2-7b,llama-2-7b --gpu h100-sxm \
	-o "$tmp/d21"
expect_rc 2
expect_err "--model: 'llama-2-7b' is given twice"
run "$KVPLAN" size --model llama-3.1-8b --workload chat --kv-dtypes fp8,auto,fp8
expect_rc 2
expect_err "--kv-dtypes: 'fp8' is given twice"
run "$KVPLAN" size --model llama-3.1-8b --workload chat --tp 1,2,1
expect_rc 2
expect_err "--tp: '1' is given twice"
# frag: a lengths file and distributions were both taken, the distributions
# silently dropped
run "$KVPLAN" frag --model llama-2-7b --gpu h100-sxm --lengths "$top_srcdir/tests/data/workloads/fixed-1000.csv" \
	--prompt fixed:10 --output fixed:10
expect_rc 2
expect_err "--lengths gives every request's prompt and output"
# --- D7: the folders a file's relative paths are read from are never cut
# a check file under a 530-byte folder: its name (537 bytes) would be cut
# to 511, whose last folder is a parent, where a decoy tiny.yaml sits
cl=$(long_dir "$tmp/c" 530)
mkdir -p "$cl"
cp "$top_srcdir/tests/data/good/tiny.yaml" "$cl/tiny.yaml"
printf '%s\n' 'defaults: {model: tiny.yaml, gpu: h100-sxm}' 'scenarios:' '  - {name: s}' >"$cl/x.yaml"
cutdir=$(printf '%s' "$cl/x.yaml" | cut -c1-511)
cutdir=${cutdir%/*}
sed 's/^name: tiny/name: decoy/' "$top_srcdir/tests/data/good/tiny.yaml" >"$cutdir/tiny.yaml"
mkdir -p "$tmp/cwd" && cp "$cutdir/tiny.yaml" "$tmp/cwd/tiny.yaml"
cd "$tmp/cwd" || exit 1
run "$KVPLAN" check "$cl/x.yaml"
cd - >/dev/null || exit 1
expect_rc 2
expect_err "expectations: path longer than 511 bytes"
name="check: no decoy loaded"
case "$out$err" in *decoy*) bad "$out$err" ;; *) ok ;; esac
# a model path in a check file past 511 bytes: refused, not cut
printf '%s\n' "defaults: {model: $cl/tiny.yaml$(printf '%0100d' 0), gpu: h100-sxm}" 'scenarios:' \
	'  - {name: s}' >"$tmp/long-model.yaml"
run "$KVPLAN" check "$tmp/long-model.yaml"
expect_rc 3
expect_err "error: model: longer than 511"
# a $KVPLAN_PROFILES folder of 600 bytes: its first 511 bytes name a folder
# holding a decoy models/tiny.yaml; the folder is left out whole and the
# lookup says so
pl=$(long_dir "$tmp/p" 600)
mkdir -p "$pl/models"
cp "$top_srcdir/tests/data/good/tiny.yaml" "$pl/models/tiny.yaml"
pcut=$(printf '%s' "$pl" | cut -c1-511)
mkdir -p "$pcut/models"
sed 's/^name: tiny/name: decoy/' "$top_srcdir/tests/data/good/tiny.yaml" >"$pcut/models/tiny.yaml"
run env KVPLAN_PROFILES="$pl" "$KVPLAN" budget --model tiny --gpu h100-sxm
expect_rc 2
expect_err "KVPLAN_PROFILES gives a folder longer than 511 bytes"
name="profiles: no decoy loaded"
case "$out$err" in *decoy*) bad "$out$err" ;; *) ok ;; esac
# --prefix-cache's value was cut to 63 bytes: 100:1 and 70 zeros (a Zipf
# exponent of 10^70) read as 10^58; refused whole
run "$KVPLAN" frag --model llama-2-7b --gpu h100-sxm --workload chat --shared-prefix 512:0.5 \
	--requests 50 --prefix-cache "100:1$(printf '%070d' 0)"
expect_rc 2
expect_err "--prefix-cache: expected PREFIXES[:ZIPF_S]"
finish
