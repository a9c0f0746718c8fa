#!/bin/sh
# cli-budget-equations.sh: every equation `kvplan budget` prints adds up from
# the operands it prints, over many models, GPUs, engines, KV dtypes and
# splits.  The recomputation is tests/budget-equations.awk, which shares no
# code with kvplan; a hand-made printout of the old SGLang line (79.19 GiB x
# 0.8343 = 65.65 GiB, really 0.8343 x (79.19 - 0.5)) must fail it.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
check="$top_srcdir/tests/budget-equations.awk"

# the checker can fail: 85,028,896,768 x 0.8343 = 70,939,608,614, not 70,488,146,487
run awk -f "$check" "$top_srcdir/tests/data/budget-sglang-unbalanced.txt"
expect_rc 1
expect_out "running value"

for model in llama-3.1-8b llama-3.1-70b gpt-oss-120b gemma-3-27b deepseek-v3 jamba-v0.1 \
	     mixtral-8x7b qwen3-30b-a3b falcon-7b phi-3-mini-4k; do
	for gpu in h100-sxm a10g mi300x; do
		for engine in generic vllm sglang trtllm; do
			for kv in auto fp8 int8 int4 nvfp4; do
				for split in "--tp 1" "--tp 2 --pp 2"; do
					"$KVPLAN" budget --model $model --gpu $gpu --engine $engine \
						--kv-dtype $kv $split --context 8192 --batch 3 \
						>"$tmp/table" 2>"$tmp/err"
					r=$?
					name="$model $gpu $engine $kv $split"
					# falcon-7b's 71 heads refuse tp 2: a correct refusal
					if [ $r = 3 ] && grep -q "does not divide" "$tmp/err"; then
						continue
					fi
					if [ $r -gt 1 ]; then
						bad "exit $r: $(cat "$tmp/err")"
						continue
					fi
					if awk -f "$check" "$tmp/table" >"$tmp/awk"; then
						ok
					else
						bad "$(cat "$tmp/awk")"
					fi
				done
			done
		done
	done
done
# K and V of different widths (d_k 128, d_v 64): the line takes (d_k + d_v),
# and each of K and V its scale: 32 x 8 x (192 x 1 + 2 x 4) = 51,200 B
sed 's/^head_dim: 128.*/head_dim: 128\nhead_dim_v: 64/; s/^name: llama-3.1-8b/name: kdv/' \
	"$top_srcdir/profiles/models/llama-3.1-8b.yaml" >"$tmp/kdv.yaml"
for kv in auto int8 nvfp4; do
	run "$KVPLAN" budget --model "$tmp/kdv.yaml" --gpu h100-sxm --kv-dtype $kv --context 8192
	expect_rc 0
	if awk -f "$check" "$tmp/out" >"$tmp/awk"; then ok; else bad "$(cat "$tmp/awk")"; fi
done
expect_out "32 layers x 8 KV heads x ((d_k 128 + d_v 64) x (0.5 B + 1 B scale / 16)) = 27,648 B/token"
finish
