#!/bin/sh
# cli-budget.sh: golden tests of `kvplan budget`, table and JSON.  Expected
# values are hand arithmetic written beside each check.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

# Llama-2-7B with every term given: 80 GiB x 0.9 = 72 GiB usable;
# pool = 72 - 13 - 1 - 1 = 57 GiB = 61,203,283,968 B; page 16 x 512 KiB = 8 MiB;
# blocks = 57 GiB / 8 MiB = 7,296; tokens = 116,736; at 4,096 tokens a sequence
# takes 256 blocks -> 28 sequences.
fixed="--model llama-2-7b --gpu-memory 80GiB --utilization 0.9 --weights-bytes 13GiB
       --activation-bytes 1GiB --overhead-bytes 1GiB --context 4096"
run "$KVPLAN" budget --engine generic $fixed --batch 28 --format json
expect_rc 0
expect_json kv_bytes_per_token 524288       # 2*32*32*128*2
expect_json kv_bytes_per_token_total 524288
expect_json kv_pool_bytes 61203283968
expect_json num_blocks 7296
expect_json max_tokens 116736
expect_json max_sequences 28
expect_json kv_bytes 60129542144            # 28 * 4096 * 524288 = 56 GiB
expect_json fits true
expect_json engine generic

run "$KVPLAN" budget --engine generic $fixed --batch 29 --format json
expect_rc 1                                  # does not fit: exit 1
expect_json fits false

# inverse questions: longest context for 2 sequences = 7,296 / 2 * 16 = 58,368;
# utilization for 28 x 4,096 = (56 + 15) / 80 = 0.8875
run "$KVPLAN" budget --engine generic $fixed --batch 2 --max-context --format json
expect_json max_context 58368
run "$KVPLAN" budget --engine generic $fixed --batch 28 --target-utilization --format json
expect_json utilization_needed 0.8875

# the table shows the arithmetic step by step
run "$KVPLAN" budget --engine generic $fixed --batch 28
expect_rc 0
expect_out "32 layers x 2 x 32 KV heads x 128 d_h x 2 B = 524,288 B/token"
expect_out "= KV pool"
# page 16 x 524,288 B = 8,388,608 B; 61,203,283,968 / 8,388,608 = 7,296
expect_out "blocks = floor(61,203,283,968 B KV pool / 8,388,608 B page) = 7,296"
expect_out "  x utilization"
# one sequence 4,096 x 524,288 B = 2 GiB; 57 GiB / 2 GiB = 28
expect_out "max sequences at 4,096 tokens = floor(61,203,283,968 B KV pool / 2,147,483,648 B per sequence) = 28"
expect_out "FIT"

# CSV: a header line and one row
run "$KVPLAN" budget --engine generic $fixed --format csv
expect_rc 0
expect_out "model,gpu,engine,tp,pp,block_size"
[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] && ok || bad "csv has $(printf '%s\n' "$out" | wc -l) lines"

# vLLM log (reports/engine-logs.md, V2): A10 total 22.07 GiB x 0.90, weights
# 14.99, non-torch 0.05, activations 0.22 -> logged 2,356 blocks, 37,696 tokens
run "$KVPLAN" budget --model llama-3.1-8b --engine vllm --gpu-memory 22.07GiB --utilization 0.9 \
	--weights-bytes 14.99GiB --overhead-bytes 0.05GiB --activation-bytes 0.22GiB \
	--context 131072 --format json
expect_json num_blocks 2356
expect_json max_tokens 37696

# built-in profiles: Llama-3.1-8B on H100 SXM; KV per token 2*8*128*2*32 = 131,072
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --context 8192 --format json
expect_rc 0
expect_json kv_bytes_per_token 131072
expect_json gpu_memory_bytes 85028896768     # CUDA runtime total (deviceQuery bytes), not nvidia-smi 81,559 MiB
expect_json kv_bytes 1073741824              # 8,192 * 131,072 = 1 GiB
expect_json weights_bytes 16060522496        # 8,030,261,248 params * 2 B

# tensor parallel: Llama-3.1-70B at tp 8 holds one KV head per GPU: 2*1*128*2*80
run "$KVPLAN" budget --engine generic --model llama-3.1-70b --gpu h200 --tp 8 --context 8192 --format json
expect_json kv_bytes_per_token 40960
expect_json kv_bytes_per_token_total 327680

# MLA: DeepSeek-V3 61 * (512 + 64) * 2 = 70,272 B on every one of 8 GPUs
run "$KVPLAN" budget --engine generic --model deepseek-v3 --gpu h200 --tp 8 --context 8192 --format json
expect_json kv_bytes_per_token 70272

# fp8 KV halves it: Llama-2-7B 262,144
run "$KVPLAN" budget --engine generic $fixed --kv-dtype fp8 --format json
expect_json kv_bytes_per_token 262144
expect_json kv_dtype fp8

# a Hugging Face config.json is read directly (fixture from tests/data/hf)
if [ -f "$top_srcdir/tests/data/hf/llama-2-7b/config.json" ]; then
	run "$KVPLAN" budget --engine generic --model "$top_srcdir/tests/data/hf/llama-2-7b/config.json" \
		--gpu h100-sxm --context 2048 --format json
	expect_rc 0
	expect_json kv_bytes 1073741824           # 2,048 * 512 KiB = 1 GiB
fi

# deployment shape: DeepSeek-V3 on 8 GPUs with --dp 8 --ep 8 (tp 1).  Routed
# experts 653,908,770,816 fp8 params / 8 GPUs = 81,738,596,352 B; the shared
# expert 58 x 3 x 7168 x 2048 = 2,554,331,136 B on every rank; MLA KV per rank
# 61 x (512 + 64) x 2 B = 70,272 B per token
run "$KVPLAN" budget --engine generic --model deepseek-v3 --gpu h200 --dp 8 --ep 8 --context 8192 --format json
expect_rc 0
expect_json dp 8
expect_json gpus 8
expect_json weights_routed_expert_bytes 81738596352
expect_json weights_shared_expert_bytes 2554331136
expect_json kv_bytes_per_token 70272
run "$KVPLAN" budget --engine generic --model deepseek-v3 --gpu h200 --dp 8 --ep 8 --context 8192
expect_out "Deployment shape: tp 1 x pp 1 x dp 8 = 8 GPUs; experts owned whole by ep 8 GPUs (32 each)"
expect_out "routed experts (/ tp x dp)"
# shapes that cannot be built name their flag
run "$KVPLAN" budget --engine generic --model deepseek-v3 --gpu h200 --dp 6 --ep 3
expect_rc 3
expect_err "error: ep: 3 does not divide the 256 routed experts"
run "$KVPLAN" budget --engine generic --model deepseek-v3 --gpu h200 --dp 8 --ep 8 --num-gpus 16
expect_rc 2
expect_err "error: dp: tp 1 x pp 1 x dp 8 = 8 GPUs, not the 16 asked for"
run "$KVPLAN" budget --engine generic --model deepseek-v3 --gpu h200 --dp 0
expect_rc 2
expect_err "--dp: must be at least 1"

# the EAGLE head of Llama-3.1-8B in the budget: 251,666,432 params x 2 B
# (one decoder layer + fc 2H x H) and one more KV layer, 4,096 B per token
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --context 8192 --spec-draft eagle:4 \
	--spec-accept 0.8 --format json
expect_rc 0
expect_json weights_draft_bytes 503332864
expect_json kv_bytes_per_token 135168

# list, help, version
run "$KVPLAN" list models
expect_rc 0
expect_out "llama-3.1-8b"
expect_out "deepseek-v3"
run "$KVPLAN" list gpus
expect_out "h100-sxm"
run "$KVPLAN" budget --engine generic --help
expect_rc 0
expect_out "Usage: kvplan budget"
run "$KVPLAN" --version
expect_rc 0
expect_out "kvplan "
run "$KVPLAN" --help
expect_rc 0
expect_out "budget"
# nvfp4 shows its scale in the product: 18 x 2 x 8 x 64 x (0.5 + 1/16) = 10,368
run "$KVPLAN" budget --model gpt-oss-120b --gpu h100-sxm --engine vllm --kv-dtype nvfp4
expect_out "18 layers x 2 x 8 KV heads x 64 d_h x (0.5 B + 1 B scale / 16) = 10,368 B/token"
expect_out "(1 B fp8 scale per 16 elements of K and of V)"
expect_out "-> 1 group, "
# --engine-version as vLLM prints it (v0.19.0, 0.19.0+cu128): the 0.19.0
# entry, no warning; 0.11.0 lies in the 0.10.2 entry's range
# (>=0.10.2,<0.11.1, profiles/engines/vllm.yaml)
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --engine vllm --engine-version v0.19.0 --format json
expect_rc 0
expect_json engine_version 0.19.0
expect_json engine_version_asked v0.19.0
expect_json engine_version_range ==0.19.0
expect_json engine_version_nearest false
[ -z "$err" ] && ok || bad "a modelled version warns: $err"
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --engine vllm --engine-version 0.19.0+cu128 --format json
expect_json engine_version 0.19.0
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --engine vllm --engine-version 0.11.0 --format json
expect_json engine_version 0.10.2
expect_out '"engine_version_range": ">=0.10.2,<0.11.1"'
# 0.27.1 as vLLM prints it: the 0.27.1 entry (>=0.20.0,<0.30.0), no warning;
# it subtracts the CUDA-graph estimate (envs.py
# VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS "1" from 0.20.0), 0.5 GiB on top
# of the 0.25 GiB non-torch: 268,435,456 + 536,870,912 = 805,306,368 B, at
# its default utilization 0.92 (config/cache.py)
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --engine vllm --engine-version v0.27.1 --format json
expect_rc 0
expect_json engine_version 0.27.1
expect_out '"engine_version_range": ">=0.20.0,<0.30.0"'
expect_json engine_version_nearest false
expect_json overhead_bytes 805306368
expect_json utilization 0.92
# modelled: no version warning; only that its time data are borrowed (none measured)
case "$err" in *"no modelled vllm version"*) bad "a modelled version warns: $err" ;; *) ok ;; esac
expect_err "vllm 0.27.1 has no time data of its own; its times use 0.19.0's"
# 0.31.0 is in no entry: the nearest, 0.27.1, with a warning on stderr and
# in JSON, and a band 1 GiB wider each way (8,192 tokens of Llama-3.1-8B's
# 131,072 B each)
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --engine vllm --engine-version v0.31.0 --format json
expect_rc 0
expect_json engine_version 0.27.1
expect_json engine_version_asked v0.31.0
expect_json engine_version_nearest true
expect_err "warning: --engine-version v0.31.0: no modelled vllm version covers it; the nearest, 0.27.1, is used"
expect_out '"code": "engine_version_unmodelled"'
lo_asked=$(json max_tokens_low)
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --engine vllm --engine-version 0.27.1 --format json
lo_modelled=$(json max_tokens_low)
[ $((lo_modelled - lo_asked)) = 8192 ] && ok || bad "band low $lo_asked vs $lo_modelled: want 8,192 tokens apart"
# no version and no entry's name: an error naming the entries
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --engine vllm --engine-version latest
expect_rc 3
expect_err "no vllm version 'latest' (the file has 0.19.0, 0.27.1 (>=0.20.0,<0.30.0), 0.11.2 (>=0.11.1,<=0.11.2)"
# --p2p: vLLM's custom all-reduce needs peer-to-peer (custom_all_reduce.py
# _can_p2p); an RTX 4090's profile says pcie_p2p: false, so at TP 2 its
# buffers (non_torch_custom_all_reduce, 1.75 GiB = 1,879,048,192 B) are left
# out: 0.25 GiB = 268,435,456 B non-torch, and 2 GiB = 2,147,483,648 B with
# --p2p yes
run "$KVPLAN" budget --model llama-3.1-8b --gpu rtx-4090 --engine vllm --tp 2 --context 8192 --format json
expect_rc 0
expect_json overhead_bytes 268435456
run "$KVPLAN" budget --model llama-3.1-8b --gpu rtx-4090 --engine vllm --tp 2 --context 8192 --p2p yes --format json
expect_json overhead_bytes 2147483648
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --engine vllm --tp 2 --p2p no --format json
expect_json overhead_bytes 268435456
run "$KVPLAN" budget --model llama-3.1-8b --gpu rtx-4090 --engine vllm --tp 2 --p2p maybe
expect_rc 2
expect_err "--p2p: expected yes or no, got 'maybe'"
# SGLang's fraction applies to the memory free before load: H100's
# 85,028,896,768 B - 512 MiB (536,870,912) = 84,492,025,856 B
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --engine sglang
expect_out "(84,492,025,856 B)"
expect_out "page = 1 token x 131,072 B"
expect_out "Fit: 1 sequence x"

# --weights-dtype: Llama-3.1-8B's 6,979,588,096 non-embedding weights in int4
# with an fp16 scale and 4-bit zero per 128 (532/1024 B) + 2 x 1,050,673,152
# bf16 embeddings = 5,727,460,432 B; an unknown format is a usage error
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --context 8192 --weights-dtype int4-awq
expect_rc 0
expect_out "(5,727,460,432 B)"
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h100-sxm --weights-dtype q4_k
expect_rc 2
expect_err "--weights-dtype: 'q4_k' is not a weights format"
# "max tokens" has two meanings (issue 34).  Gemma-3-27b, 10 full + 52 sliding
# layers (window 1,024) of 8,192 B per token each, with the terms given:
# pool = 80 GiB x 0.9 - 50 GiB = 22 GiB = 23,622,320,128 B.  Short sequences:
# page 16 x 62 x 8,192 = 8,126,464 B -> 2,906 blocks x 16 = 46,496 tokens.  One
# sequence: the sliding layers keep 65 blocks = 1,040 tokens each, 52 x 8,192
# x 1,040 = 443,023,360 B; the full layers' 1,310,720 B a block take the
# other 23,179,296,768 B: 17,684 blocks x 16 = 282,944 tokens, more than the
# 131,072 that fit (the line that contradicted the fit printed 46,496 alone).
gemma="--model gemma-3-27b --gpu-memory 80GiB --utilization 0.9 --weights-bytes 50GiB
       --activation-bytes 0 --overhead-bytes 0 --context 131072"
run "$KVPLAN" budget --engine generic $gemma --format json
expect_json max_tokens 46496
expect_json max_tokens_one_sequence 282944
expect_json fits true
run "$KVPLAN" budget --engine generic $gemma
expect_out "max tokens, short sequences = 2,906 blocks x 16 = 46,496"
expect_out "max tokens, one sequence = 282,944"
# every layer windowed (Mistral-7B-v0.1): one sequence has no bound (JSON null)
run "$KVPLAN" budget --engine generic --model mistral-7b-v0.1 --gpu h100-sxm --context 32768 --format json
expect_json max_tokens_one_sequence null
run "$KVPLAN" budget --engine generic --model mistral-7b-v0.1 --gpu h100-sxm --context 32768
expect_out "max tokens, one sequence: no bound"

# every pipeline stage sized (check-shape.c has the hand arithmetic):
# DeepSeek-V3 tp 8 pp 2 stages of 38.40 GiB (3 dense + 28 MoE layers) and
# 40.87 GiB (30 MoE layers and the LM head); the second has less room
run "$KVPLAN" budget --engine generic --model deepseek-v3 --gpu h100-sxm --tp 8 --pp 2 --context 32768
expect_out "stage 0 (layers 0-30): weights 38.40 GiB"
expect_out "stage 1 (layers 31-60): weights 40.87 GiB"
expect_out "<- the least room: governs"

# The invariant over every model profile and engine, on an H100 at 8k and
# 128k and an A100-40GB at 32k: a single sequence that fits is never longer than the printed
# longest one sequence, and one sequence of that length fits.
for prof in "$top_srcdir"/profiles/models/*.yaml; do
	mname=$(basename "$prof" .yaml)
	for engine in generic vllm sglang trtllm; do
		for case in h100-sxm:8192 h100-sxm:131072 a100-40gb:32768; do
			gpu=${case%:*} ctx=${case#*:}
			{
				"$KVPLAN" budget --model "$mname" --gpu "$gpu" --engine "$engine" \
					--context "$ctx" --format json > "$tmp/out" 2> "$tmp/err"
				fits=$(json fits)
				one=$(json max_tokens_one_sequence)
				[ -n "$fits" ] || continue  # a shape this model cannot take
				if [ "$fits" = true ] && [ "$one" != null ] && [ "$one" -lt "$ctx" ]; then
					bad "$mname $engine $gpu: $ctx tokens fit, max_tokens_one_sequence $one"
					continue
				fi
				if [ "$one" != null ] && [ "$one" -gt 0 ]; then
					"$KVPLAN" budget --model "$mname" --gpu "$gpu" --engine "$engine" \
						--context "$one" --format json > "$tmp/out" 2> "$tmp/err"
					[ "$(json fits)" = true ] ||
						bad "$mname $engine $gpu: $one tokens (the longest) do not fit"
				fi
				ok
			}
		done
	done
done

# The weights' format the budget detected, and where it read it (issue 35:
# "the output never says which quantization it detected").  Each expected
# source is a fact of the input itself: the GPTQ fixture's config.json says
# "quant_method": "gptq" (4 bits, group 128: int4-gptq); gpt-oss-20b's says
# "quant_method": "mxfp4" for its experts only (OpenAI's model card: MoE
# weights in MXFP4, the rest bf16); "-FP8" is a quantization word of the
# name; --weights-dtype is the user's what-if; Llama-3.1-8B's profile names
# no format, so the weights are in the serving dtype bf16.
hf=$top_srcdir/tests/data/hf
run "$KVPLAN" budget --engine generic --model "$hf/gemma-2-27b-it-gptq-int4/config.json" --gpu h100-sxm --context 4096
expect_out "  format int4-gptq: quantization_config.quant_method \"gptq\" in $hf/gemma-2-27b-it-gptq-int4/config.json"
run "$KVPLAN" budget --engine generic --model "$hf/gemma-2-27b-it-gptq-int4/config.json" --gpu h100-sxm --context 4096 --format json
expect_json weights_dtype int4-gptq
expect_json weights_expert_dtype ""
expect_out "\"weights_source\": \"quantization_config.quant_method \\\"gptq\\\" in $hf/gemma-2-27b-it-gptq-int4/config.json\""
run "$KVPLAN" budget --engine generic --model "$hf/gpt-oss-20b/config.json" --gpu h200 --context 4096
expect_out "  format bf16, routed experts mxfp4: quantization_config.quant_method \"mxfp4\" in"
run "$KVPLAN" budget --engine generic --model meta-llama/Llama-3.1-70B-Instruct-FP8 --gpu h200 --context 4096
expect_out "  format fp8: the name's word fp8 (the profile "
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h200 --weights-dtype int4-awq --context 4096 --format csv
# (CSV quotes a cell that starts with - behind a ' : no formula)
expect_out ",int4-awq,,\"'--weights-dtype int4-awq (a what-if over "
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h200 --context 4096
expect_out "  format bf16: no quantization found in "
expect_out "llama-3.1-8b.yaml (the serving dtype)"

# The default engine (issue 35): vLLM at the newest modelled version,
# profiles/engines/vllm.yaml's default_version "0.19.0", named in the
# output; the same answer as --engine vllm, byte for byte
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --context 8192 --format json
expect_rc 0
expect_json engine vllm
expect_json engine_version 0.19.0
default_out=$out
run "$KVPLAN" budget --engine vllm --model llama-3.1-8b --gpu h100-sxm --context 8192 --format json
name="budget: the default engine is --engine vllm"
[ "$out" = "$default_out" ] && ok || bad "outputs differ"
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --context 8192
expect_out "engine vllm 0.19.0"
run "$KVPLAN" perf --model llama-3.1-8b --gpu h100-sxm --prompt 1024 --output 16
expect_out "kvplan perf: llama-3.1-8b on h100-sxm, engine vllm 0.19.0,"
run "$KVPLAN" perf --model llama-3.1-8b --gpu h100-sxm --prompt 1024 --output 16 --format json
expect_json engine vllm
run "$KVPLAN" budget --help
expect_out "vllm, newest version; llamacpp: step times only)"

finish
