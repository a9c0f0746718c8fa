#!/bin/sh
# cli-suggest.sh: mistakes that suggest (did you mean), sizes without a unit,
# and the warning for a context beyond the model's maximum (stderr and JSON).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

# profile names: two GPUs start with h100
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100 --context 8k
expect_rc 3
expect_err "no profile named 'h100'; did you mean 'h100-pcie' or 'h100-sxm'?"
run "$KVPLAN" budget --model lama-3.1-8b --gpu h100-sxm
expect_rc 3
expect_err "did you mean 'llama-3.1-8b'?"

# flags: a swap of two letters, a missing value, a value given to a switch
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --gpu-memroy 80GiB
expect_rc 2
expect_err "unknown option '--gpu-memroy'; did you mean '--gpu-memory'?"
run "$KVPLAN" perf --model llama-3.1-8b --gpu h100-sxm --kv-ofload cpu
expect_rc 2
expect_err "did you mean '--kv-offload'?"
run "$KVPLAN" budget --model llama-3.1-8b --gpu
expect_rc 2
expect_err "option '--gpu' needs a value"
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --max-context=3
expect_rc 2
expect_err "option '--max-context' takes no value"

# subcommands
run "$KVPLAN" budgte --model llama-3.1-8b
expect_rc 2
expect_err "unknown command 'budgte'; did you mean 'budget'?"

run "$KVPLAN" list gpu
expect_rc 2
expect_err "expected one of models, gpus, workloads; did you mean 'gpus'?"

# YAML keys: a model profile and an expectations file, at file:line:col
printf '%s\n' 'name: tiny' 'family: llama' 'dtype: bf16' 'num_layers: 2' 'hidden_size: 64' \
	'num_heads: 4' 'num_kv_head: 2' 'head_dim: 16' 'intermediate_size: 128' 'vocab_size: 100' \
	'max_context: 1024' >"$tmp/tiny.yaml"
run "$KVPLAN" budget --model "$tmp/tiny.yaml" --gpu l4
expect_rc 3
expect_err "tiny.yaml:7:1: error: num_kv_head: unknown key; did you mean 'num_kv_heads'?"
printf '%s\n' 'scenarios:' '  - name: a' '    model: llama-3.1-8b' '    gpu: l4' '    contxt: 8192' \
	'    expect:' '      - fits == true' >"$tmp/exp.yaml"
run "$KVPLAN" check "$tmp/exp.yaml"
expect_rc 3
expect_err "exp.yaml:5:5: error: contxt: unknown key; did you mean 'context'?"

# a bare size below 1 MiB is refused; with B it means bytes
run "$KVPLAN" budget --model llama-3.1-8b --gpu-memory 80
expect_rc 2
expect_err "--gpu-memory: 80 without a unit means 80 bytes; did you mean 80GiB?"
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --weights-bytes 1000
expect_rc 2
expect_err "did you mean 1000GiB?"
# issue 35: units in any case; a bare G, M, K or T on a size is ambiguous:
# both readings, by hand (80 * 10^9; 80 * 2^30 = 85,899,345,920)
run "$KVPLAN" budget --model llama-3.1-8b --gpu-memory 80G
expect_rc 2
expect_err "--gpu-memory: '80G' is ambiguous: 80GB (80,000,000,000 B) or 80GiB (85,899,345,920 B)?"
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --weights-bytes 1.5g
expect_rc 2
expect_err "--weights-bytes: '1.5g' is ambiguous: 1.5GB (1,500,000,000 B) or 1.5GiB (1,610,612,736 B)?"
run "$KVPLAN" budget --model llama-3.1-8b --gpu-memory 80gb --context 8k --format json
expect_rc 0
expect_json gpu_memory_bytes 80000000000
run "$KVPLAN" budget --model llama-3.1-8b --gpu-memory 80gib --context 8k --format json
expect_rc 0
expect_json gpu_memory_bytes 85899345920
# a profile file follows the same rule, at its line and column
sed 's/^memory: 1GiB$/memory: 1G/' "$top_srcdir/tests/data/good/tinygpu.yaml" >"$tmp/g1.yaml"
run "$KVPLAN" budget --model llama-3.1-8b --gpu "$tmp/g1.yaml"
expect_rc 3
expect_err "g1.yaml:3:9: error: memory: '1G' is ambiguous: 1GB (1,000,000,000 B) or 1GiB (1,073,741,824 B)?"
# 1 MiB = 1,048,576 B and more pass bare
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --overhead-bytes 1048576 --context 8k --format json
expect_rc 0
expect_json overhead_bytes 1048576

# a context beyond the model's maximum: Llama-3.1-8B's max_position_embeddings
# is 131,072; 200k = 200 x 1,024 = 204,800 tokens
run "$KVPLAN" budget --model llama-3.1-8b --gpu h200 --context 200k --format json
expect_rc 0
expect_err "warning: --context: 204,800 tokens is beyond the maximum context of llama-3.1-8b, 131,072 tokens"
expect_json code context_beyond_model_max
run "$KVPLAN" budget --model llama-3.1-8b --gpu h200 --context 128k --format json
expect_rc 0
expect_out '"warnings": []'
name="no warning at 128k = 131,072 tokens, the maximum itself"
if [ -z "$err" ]; then ok; else bad "stderr: $err"; fi
# perf: Llama-2-7B's maximum is 4,096; prompt 4,096 + output 100 = 4,196
run "$KVPLAN" perf --model llama-2-7b --gpu h200 --prompt 4096 --output 100 --format json
expect_rc 0
expect_err "--prompt + --output: 4,196 tokens is beyond the maximum context of llama-2-7b, 4,096 tokens"
expect_json code context_beyond_model_max
# frag: max_len 8,192 > 4,096
run "$KVPLAN" frag --model llama-2-7b --gpu h200 --workload chat --max-len 8192 --requests 200 --format json
expect_rc 0
expect_err "max_len: 8,192 tokens is beyond the maximum context of llama-2-7b"
expect_json code context_beyond_model_max
# model names as people write them (issue 35): case, the organisation, the
# words a checkpoint adds.  Llama 3.1 70B at tp 2: 2 (K, V) x 8/2 KV heads x
# 128 x 2 B x 80 layers = 163,840 B a token on each GPU
for m in Llama-3.1-70B-Instruct meta-llama/Llama-3.1-70B-Instruct LLAMA-3.1-70B \
	meta-llama/Meta-Llama-3.1-70B-Instruct; do
	run "$KVPLAN" budget --model "$m" --gpu h200 --tp 2 --context 8k --format json
	expect_rc 0
	expect_json model llama-3.1-70b
	expect_json kv_bytes_per_token 163840
	expect_err "read as the profile 'llama-3.1-70b'"
done
# the id typed is what --emit launches
run "$KVPLAN" size --model meta-llama/Llama-3.1-70B-Instruct --workload chat --rate 1 --gpus h200 --emit vllm
expect_rc 0
expect_out "meta-llama/Llama-3.1-70B-Instruct"
# a quantization word sets the weights format, and says so: the same bytes as --weights-dtype
run "$KVPLAN" budget --model llama-3.1-8b --weights-dtype fp8 --gpu h100-sxm --format json
w_flag=$(json weights_bytes)
run "$KVPLAN" budget --model neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8 --gpu h100-sxm --format json
expect_rc 0
expect_json weights_bytes "$w_flag"
expect_err "dropped from the name: instruct-fp8; weights fp8"
# a local Hugging Face cache (no network): refs/main names the snapshot.
# Qwen2.5-7B: 2 x 28 layers x 4 KV heads x 128 x 2 B = 57,344 B a token
snap="$tmp/hf/hub/models--Qwen--Qwen2.5-7B-Instruct/snapshots/0123abc"
mkdir -p "$snap" "$tmp/hf/hub/models--Qwen--Qwen2.5-7B-Instruct/refs"
cp "$top_srcdir/examples/Qwen2.5-7B-Instruct/config.json" "$snap/config.json"
printf '0123abc\n' >"$tmp/hf/hub/models--Qwen--Qwen2.5-7B-Instruct/refs/main"
run env HF_HOME="$tmp/hf" HF_HUB_CACHE= "$KVPLAN" budget --model Qwen/Qwen2.5-7B-Instruct --gpu l4 --format json
expect_rc 0
expect_json kv_bytes_per_token 57344
expect_err "Hugging Face cache"
# a model directory: its config.json
run "$KVPLAN" budget --model "$top_srcdir/examples/Qwen2.5-7B-Instruct" --gpu l4 --format json
expect_rc 0
expect_json kv_bytes_per_token 57344
mkdir -p "$tmp/empty-model"
run "$KVPLAN" budget --model "$tmp/empty-model" --gpu l4
expect_rc 3
expect_err "a directory without a config.json"
# nothing matches: a suggestion, never a guess; a path keeps its own error
run "$KVPLAN" budget --model meta-llama/Llama-3.1-9B-Instruct --gpu h200
expect_rc 3
expect_err "did you mean 'llama-3.1-8b'?"
run "$KVPLAN" budget --model some/dir/llama-3.1-8b --gpu h200
expect_rc 3
expect_err "no such file"

finish
