#!/bin/sh
# cli-extreme.sh: the limits through the CLI: each extreme value gets a clear
# error with the documented exit code (2 usage, 3 invalid input) or a correct
# answer, with the arithmetic beside it.  Large and hostile files are written
# to the test's temporary directory and removed with it.  tests/check-extreme.c
# covers the same limits in the library.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
tiny="$top_srcdir/tests/data/good/tiny.yaml"
tinygpu="$top_srcdir/tests/data/good/tinygpu.yaml"
U64_MAX=18446744073709551615

# --- 10^9 tokens: Llama-3.1-8B keeps 32 layers * 2 * 8 KV heads * 128 * 2 B
# = 131,072 B per token; 10^9 tokens = 131,072,000,000,000 B: does not fit
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --context 1000000000 --format json
expect_rc 1
expect_json kv_bytes_per_token 131072
expect_json kv_bytes 131072000000000
expect_json max_sequences 0
expect_json fits false
# one token, one sequence: 131,072 B, fits
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --context 1 --batch 1 --format json
expect_rc 0
expect_json kv_bytes 131072
# the largest context and batch: overflow errors, not wrapped numbers
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --context $U64_MAX
expect_rc 3
expect_err "context: $U64_MAX tokens overflow"
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --context 1 --batch $U64_MAX
expect_rc 3
expect_err "overflow"
for e in generic vllm sglang trtllm; do
	run "$KVPLAN" budget --model gemma-2-9b --gpu h100-sxm --engine $e --context $U64_MAX --block-size 1
	expect_rc 3
	expect_err "overflow"
	# 2^64 - 1 batched tokens: the activation estimate overflows
	run "$KVPLAN" budget --model gemma-2-9b --gpu h100-sxm --engine $e --max-batched-tokens $U64_MAX
	expect_rc 3
	expect_err "max-batched-tokens: the activation estimate"
done

# --- 10^6 GPUs: Llama-3.1-8B has 32 heads and 32 layers
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --tp 1000000
expect_rc 3
expect_err "tp: 1000000 does not divide num_heads 32"
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --pp 1000000
expect_rc 3
expect_err "pp: 1000000 stages for 32 layers"
# past 2^20 GPUs: a usage error
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --tp 1048577
expect_rc 2
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --pp $U64_MAX
expect_rc 2

# --- zero, one and the largest GPU
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu-memory 0
expect_rc 2
# one byte: usable floor(0.9) = 0 B, no pool, 1 B of headroom
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu-memory 1B --context 1 --format json
expect_rc 1
expect_json usable_bytes 0
expect_json kv_pool_bytes 0
expect_json headroom_bytes 1
# 2^64 - 1 B, all of it: pool = 2^64 - 1 - weights 16,060,522,496
# - activations 1,202,192,384 - overhead 1,073,741,824 = 18,446,744,055,373,094,911
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu-memory $U64_MAX --utilization 1 --context 1 --format json
expect_rc 0
expect_json usable_bytes $U64_MAX
expect_json headroom_bytes 0
expect_json kv_pool_bytes 18446744055373094911
for e in generic vllm sglang trtllm; do
	for f in table json csv; do
		run "$KVPLAN" budget --model llama-3.1-8b --gpu-memory $U64_MAX --engine $e --format $f \
			--max-context --target-utilization
		expect_rc 0
	done
done
# SGLang on 1 GiB: its default fraction (1024 - 13,440 MiB reserve) / 1024
# is negative: fraction 0, no pool (it was a 16 EiB pool before the fix)
run "$KVPLAN" budget --model "$tiny" --gpu "$tinygpu" --engine sglang --context 10 --format json
expect_rc 1
expect_json utilization 0
expect_json kv_pool_bytes 0
# below its 512 MiB context no fraction is enough: infinite, written as null
run "$KVPLAN" budget --model "$tiny" --gpu-memory 256MiB --engine sglang --context 10 \
	--target-utilization --format json
expect_rc 1
expect_json utilization_needed null

# --- NaN, infinity and negative numbers on the command line
for u in nan inf -inf 1e-400 -0.5 0 1.0000001 nan%; do
	run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --utilization "$u"
	expect_rc 2
	expect_err "--utilization"
done
for a in "--batch -1" "--context -1" "--tp -1" "--gpu-memory -80GiB" "--gpu-memory nanGiB" \
	 "--gpu-memory infGiB" "--weights-bytes 16777216TiB" "--block-size 0" "--batch 0"; do
	run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm $a
	expect_rc 2
done

# --- profiles with extreme values: exit 3 at file:line:col and the field
printf 'name: g\nmemory: 80GiB\nbandwidth: 3.35TB/s\nbf16_tflops: %s\nhost_link: pcie5x16\n' .nan \
	>"$tmp/nan.yaml"
printf 'name: g\nmemory: 80GiB\nbandwidth: 3.35TB/s\nbf16_tflops: %s\nhost_link: pcie5x16\n' 1e300 \
	>"$tmp/huge-tflops.yaml"
printf 'name: g\nmemory: %s\nbandwidth: 3.35TB/s\nbf16_tflops: 1\nhost_link: pcie5x16\n' -80GiB \
	>"$tmp/neg-memory.yaml"
run "$KVPLAN" budget --engine generic --model "$tiny" --gpu "$tmp/nan.yaml"
expect_rc 3
expect_err "nan.yaml:4:14: error: bf16_tflops: expected a number"
run "$KVPLAN" budget --engine generic --model "$tiny" --gpu "$tmp/huge-tflops.yaml"
expect_rc 3
expect_err "huge-tflops.yaml:4:14: error: bf16_tflops: 1e300 TFLOPS is out of range"
run "$KVPLAN" budget --engine generic --model "$tiny" --gpu "$tmp/neg-memory.yaml"
expect_rc 3
expect_err "neg-memory.yaml:2:9: error: memory: must not be negative"
sed 's/^num_layers: 4$/num_layers: -1/' "$tiny" >"$tmp/neg-layers"
run "$KVPLAN" budget --engine generic --model "$tmp/neg-layers" --gpu-memory 80GiB
expect_rc 3
expect_err "num_layers: must not be negative"
sed 's/^max_context: 4096$/max_context: 18446744073709551615/' "$tiny" >"$tmp/max-context"
run "$KVPLAN" budget --engine generic --model "$tmp/max-context" --gpu-memory 80GiB
expect_rc 3
expect_err "context: $U64_MAX tokens overflow"
printf '{"model_type": "llama", "num_hidden_layers": -4, "hidden_size": 512,\n"num_attention_heads": 8, "intermediate_size": 1024, "vocab_size": 1000}\n' \
	>"$tmp/config.json"
run "$KVPLAN" budget --engine generic --model "$tmp/config.json" --gpu-memory 80GiB
expect_rc 3
expect_err "config.json:1:46: error: num_hidden_layers: must not be negative"

# --- hostile documents
# the billion laughs: refused at its first anchor
{
	printf 'a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n'
	prev=a
	for k in b c d e f g h i; do
		printf '%s: &%s [*%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s, *%s]\n' $k $k \
			$prev $prev $prev $prev $prev $prev $prev $prev $prev $prev
		prev=$k
	done
} >"$tmp/laughs.yaml"
run "$KVPLAN" budget --engine generic --model "$tmp/laughs.yaml" --gpu h100-sxm
expect_rc 3
expect_err "laughs.yaml:1:4: error: anchors and aliases are not supported"
# 100 MB: refused unread
head -c 100000000 /dev/zero | tr '\0' '#' >"$tmp/huge.yaml"
run "$KVPLAN" budget --engine generic --model "$tmp/huge.yaml" --gpu h100-sxm
expect_rc 3
expect_err "huge.yaml: error: file is larger than 16 MiB"
run "$KVPLAN" budget --engine generic --model "$tiny" --gpu "$tmp/huge.yaml"
expect_rc 3
expect_err "file is larger than 16 MiB"
rm -f "$tmp/huge.yaml"
# a million open brackets: refused at depth 65
head -c 1000000 /dev/zero | tr '\0' '[' >"$tmp/deep.yaml"
run "$KVPLAN" budget --engine generic --model "$tmp/deep.yaml" --gpu h100-sxm
expect_rc 3
expect_err "nesting deeper than 64 levels"
# 300,000 keys (3.5 MB): answered at once (the pairwise duplicate check hung)
i=0
awk 'BEGIN { for (i = 0; i < 300000; i++) printf "k%d: 1\n", i }' >"$tmp/wide.yaml"
limit=""
command -v timeout >/dev/null 2>&1 && limit="timeout 120"
run $limit "$KVPLAN" budget --engine generic --model "$tmp/wide.yaml" --gpu h100-sxm
expect_rc 3
expect_err "wide.yaml:1:1: error: k0: unknown key"
finish
