#!/bin/sh
# cli-errors.sh: every bad input gets a clear located error and a non-zero
# exit: usage mistakes exit 2, invalid files exit 3 with "path:line:col: error:".
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
bad_dir="$top_srcdir/tests/data/bad"

count=0
for f in "$bad_dir"/model-*.yaml "$bad_dir"/hf-*.json; do
	[ -f "$f" ] || continue
	count=$((count + 1))
	run "$KVPLAN" budget --model "$f" --gpu-memory 80GiB --context 100
	expect_rc 3
	expect_err "$(basename "$f")"
	expect_err "error: "
done
for f in "$bad_dir"/gpu-*.yaml; do
	count=$((count + 1))
	run "$KVPLAN" budget --model "$top_srcdir/tests/data/good/tiny.yaml" --gpu "$f"
	expect_rc 3
	expect_err "$(basename "$f"):"
	expect_err "error: "
done
name="corpus size"
[ "$count" -ge 30 ] && ok || bad "only $count bad inputs"

# messages carry line:col and the field
run "$KVPLAN" budget --model "$bad_dir/model-unknown-key.yaml" --gpu-memory 80GiB
expect_err "model-unknown-key.yaml:15:1: error: parameters: unknown key"
run "$KVPLAN" budget --model "$bad_dir/model-negative-heads.yaml" --gpu-memory 80GiB
expect_err "model-negative-heads.yaml:7:12: error: num_heads: must not be negative"

# usage mistakes: exit 2
for args in "--tp 0" "--tp x" "--context -5" "--context 0" "--format xml" "--engine tgi" \
	    "--kv-dtype mxfp4" "--utilization 1.5" "--utilization 0" "--gpu-memory lots" \
	    "--weights-bytes -1GiB" "--batch 99999999999999999999999" "--bogus" "--dtype fp8"; do
	run "$KVPLAN" budget --model llama-2-7b --gpu h100-sxm $args
	expect_rc 2
	expect_err "kvplan budget:"
done
run "$KVPLAN" budget --gpu h100-sxm
expect_rc 2
expect_err "--model is required"
run "$KVPLAN" nosuchcommand
expect_rc 2
run "$KVPLAN"
expect_rc 2

# names that resolve to nothing, and splits that cannot be made: exit 3
run "$KVPLAN" budget --model no-such-model --gpu h100-sxm
expect_rc 3
expect_err "no profile named 'no-such-model'"
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --tp 3
expect_rc 3
expect_err "tp: 3 does not divide num_heads 32"
# an overflow is an error, never a wrapped number: 2^60 tokens of 512 KiB
run "$KVPLAN" budget --model llama-2-7b --gpu h100-sxm --context 1152921504606846976
expect_rc 3
expect_err "overflow"
# a doubt about the input is a located warning on stderr, and the plan goes on
run "$KVPLAN" budget --model "$top_srcdir/tests/data/warn/hf-vision-no-dims.json" --gpu h100-sxm \
	--context 1024
expect_rc 0
expect_err "hf-vision-no-dims.json:3:20: warning: vision_config: a tower without its dimensions"
# --weights-dtype with a GGUF (issue 37 N10): its tensor types are its weights,
# so the what-if is refused (exit 2) instead of being silently ignored.  The
# file is written here: a 1-layer "llama" (ggml docs/gguf.md: "GGUF", version
# 3, tensor and key counts, length-prefixed keys, typed values, tensor infos).
le() { # VALUE BYTES: VALUE in BYTES little-endian bytes
	v=$1 i=0
	while [ "$i" -lt "$2" ]; do
		printf "\\$(printf '%03o' $((v % 256)))"
		v=$((v / 256)) i=$((i + 1))
	done
}
gstr() { le ${#1} 8; printf '%s' "$1"; }
gu32() { gstr "$1"; le 4 4; le "$2" 4; }
{
	printf 'GGUF'; le 3 4; le 1 8; le 7 8
	gstr general.architecture; le 8 4; gstr llama
	gu32 llama.block_count 1; gu32 llama.embedding_length 64
	gu32 llama.context_length 2048; gu32 llama.attention.head_count 4
	gu32 llama.attention.head_count_kv 2; gu32 llama.vocab_size 256
	gstr token_embd.weight; le 2 4; le 64 8; le 256 8; le 1 4; le 0 8
} >"$tmp/tiny.gguf"
run "$KVPLAN" budget --model "$tmp/tiny.gguf" --gpu h100-sxm --context 1024
expect_rc 0
# the budget says where its weights' format came from (issue 35)
expect_out "  format gguf: the tensor types of the GGUF file $tmp/tiny.gguf"
run "$KVPLAN" budget --model "$tmp/tiny.gguf" --gpu h100-sxm --context 1024 --weights-dtype int4
expect_rc 2
expect_err "--weights-dtype: $tmp/tiny.gguf is a GGUF file, whose tensor types fix its weight bytes"

# an engine profile's elementwise_rotary is a boolean (issue 32): exit 3 at
# the file, line and field
cp -R "$top_srcdir/profiles" "$tmp/prof"
chmod -R u+w "$tmp/prof"
# (the first entry's, the default the command reads)
awk '!done && /^    elementwise_rotary: false$/ { sub(/false/, "fused"); done = 1 } { print }' \
	"$top_srcdir/profiles/engines/trtllm.yaml" >"$tmp/prof/engines/trtllm.yaml"
line=$(grep -n '^    elementwise_rotary: fused$' "$tmp/prof/engines/trtllm.yaml" | cut -d: -f1)
name="the bad value is in the copy"
[ -n "$line" ] && ok || bad "no elementwise_rotary line in profiles/engines/trtllm.yaml"
run env KVPLAN_PROFILES="$tmp/prof" "$KVPLAN" perf --model llama-3.1-8b --gpu h100-sxm --engine trtllm
expect_rc 3
expect_err "engines/trtllm.yaml:$line:25: error: elementwise_rotary: expected true or false, got 'fused'"

# and decode_kv_per_query_head (the tensorrt-0.6.1 entry, issue 32)
sed 's/^    decode_kv_per_query_head: true$/    decode_kv_per_query_head: eight/' \
	"$top_srcdir/profiles/engines/trtllm.yaml" >"$tmp/prof/engines/trtllm.yaml"
line=$(grep -n '^    decode_kv_per_query_head: eight$' "$tmp/prof/engines/trtllm.yaml" | cut -d: -f1)
name="the bad value is in the copy (decode_kv_per_query_head)"
[ -n "$line" ] && ok || bad "no decode_kv_per_query_head line in profiles/engines/trtllm.yaml"
run env KVPLAN_PROFILES="$tmp/prof" "$KVPLAN" perf --model llama-2-70b --gpu h100-sxm --tp 2 \
	--engine trtllm --engine-version 0.6.1
expect_rc 3
expect_err "engines/trtllm.yaml:$line:31: error: decode_kv_per_query_head: expected true or false, got 'eight'"
finish
