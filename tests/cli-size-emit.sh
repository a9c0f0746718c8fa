#!/bin/sh
# cli-size-emit.sh: every line `kvplan size --emit ENGINE` writes, parsed
# back (tests/emit-parse.awk: each engine's flag table from its source)
# into the plan it was written for (issue 35: --emit launches the plan).
# For each plan of the table and each engine: the command line and the
# config file beside it must carry the model id as typed, tp, pp, dp, ep,
# the sequence cap, max_model_len, the memory fraction, the KV dtype and the
# weights' quantization, and nothing the flag table does not know.  The
# plan's own numbers come from the same run's JSON (its "configs"); the
# shape, KV dtype and weights are the table's, checked against that JSON
# too.  Then the plans an engine cannot launch: refused, naming the field.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

parse="$top_srcdir/tests/emit-parse.awk"
hf="$top_srcdir/tests/data/hf"

# the plan's KV dtype as each engine spells it (vLLM CacheDType in
# vllm/config/cache.py: auto, fp8, fp8_e4m3, fp8_e5m2; SGLang ServerArgs
# --kv-cache-dtype: auto, fp8_e5m2, fp8_e4m3; TensorRT-LLM
# KvCacheConfig.dtype: auto, fp8, nvfp4); the serving dtype is "auto"
kv_name() { # ENGINE KV
	case "$1:$2" in
	*:bf16 | *:fp16 | *:auto) echo auto ;;
	sglang:fp8) echo fp8_e4m3 ;;
	*:fp8) echo fp8 ;;
	*:fp8-e5m2) echo fp8_e5m2 ;;
	*) echo "?" ;;
	esac
}

# have KEY VALUE: the parsed emit carries KEY=VALUE
have() {
	if grep -qx "$1=$2" "$tmp/parsed"; then ok; else
		bad "$1: want '$2', parsed: $(grep "^$1=" "$tmp/parsed" | tr '\n' ' ')"; fi
}
lacks() { if grep -q "^$1=" "$tmp/parsed"; then bad "carries $(grep "^$1=" "$tmp/parsed")"; else ok; fi; }
near() { # KEY VALUE: within the 4 decimals the line prints
	v=$(sed -n "s/^$1=//p" "$tmp/parsed")
	if awk -v v="$v" -v w="$2" 'BEGIN { d = v - w; exit !(v != "" && d < 5e-5 && d > -5e-5) }'
	then ok; else bad "$1 = '$v', want $2"; fi
}

# The table: model as typed | GPU | tp pp dp ep | --kv-dtype | --weights-dtype
# (- none) | --max-num-seqs (0 none) | the weights the engines are told
# (quant: - none) | what the model id launches as.
# Llama-3.1-70B-Instruct at fp8 on one H200 is issue 35's buyer: 131 GiB of
# bf16 weights would not fit, so the line must quantize them; TensorRT-LLM,
# which cannot (below), serves it from an FP8 checkpoint (the name's word
# FP8: the checkpoint's own quantization, no flag, launched as typed).  A
# model folder and a config.json launch as the folder given.  A bare name
# with variant words launches the variant's repository: the profile hf_id's
# organisation and the name typed, its base part spelled as the hf_id does.
while IFS='|' read -r model gpu shape kv wd seqs quant launch; do
	[ -n "$model" ] || continue
	# shellcheck disable=SC2086
	set -- $shape
	tp=$1 pp=$2 dp=$3 ep=$4
	args="--model $model --workload chat --users 64 --gpu $gpu --tp $tp --pp $pp --dp $dp --ep $ep --kv-dtype $kv"
	[ "$wd" = - ] || args="$args --weights-dtype $wd"
	[ "$seqs" = 0 ] || args="$args --max-num-seqs $seqs"
	for engine in vllm sglang trtllm; do
		[ "$engine" = trtllm ] && [ "$quant" != - ] && continue # refused, below
		# shellcheck disable=SC2086
		run "$KVPLAN" size $args --emit "$engine" --format json
		expect_rc 0
		cp "$tmp/out" "$tmp/plan.json"
		# the plan is the table's
		expect_json tp "$tp"
		expect_json pp "$pp"
		expect_json dp "$dp"
		expect_json ep "$ep"
		expect_json kv_dtype "$kv"
		want_seqs=$(json max_num_seqs)
		want_len=$(json max_model_len)
		want_util=$(json utilization)
		if [ "$seqs" = 0 ] || [ "$want_seqs" -le "$seqs" ]; then ok; else
			bad "max_num_seqs $want_seqs over the cap $seqs"; fi
		# shellcheck disable=SC2086
		run "$KVPLAN" size $args --emit "$engine"
		expect_rc 0
		name="$engine: $model $gpu tp $tp pp $pp dp $dp ep $ep kv $kv weights $wd seqs $seqs"
		printf '%s\n' "$out" | sed -n "/^# $engine: /,\$p" | awk -v engine="$engine" -f "$parse" >"$tmp/parsed"
		lacks unknown
		have cmd.model "$launch"
		have cmd.pp "$pp"
		have cmd.max_num_seqs "$want_seqs"
		have cmd.max_model_len "$want_len"
		near cmd.utilization "$want_util"
		case $engine in
		vllm)
			have cmd.tp "$tp"
			have cmd.dp "$dp"
			# expert parallelism over the tp x dp GPUs of a stage
			have cmd.ep "$([ "$ep" -gt 1 ] && echo on || echo off)"
			have cmd.kv "$(kv_name vllm "$kv")"
			for k in model tp pp dp ep kv; do
				have "yaml.$k" "$(sed -n "s/^cmd\.$k=//p" "$tmp/parsed")"
			done
			have yaml.max_num_seqs "$want_seqs"
			have yaml.max_model_len "$want_len"
			near yaml.utilization "$want_util"
			;;
		sglang)
			have cmd.tp "$tp"
			have cmd.dp "$dp"
			have cmd.ep "$ep"
			have cmd.kv "$(kv_name sglang "$kv")"
			;;
		trtllm)
			have cmd.tpdp $((tp * dp))
			have cmd.ep "$ep"
			have cmd.options "$(sed -n 's/^yaml\.file=//p' "$tmp/parsed")" # the file it reads
			have yaml.attention_dp "$([ "$dp" -gt 1 ] && echo true || echo false)"
			have yaml.kv "$(kv_name trtllm "$kv")"
			near yaml.utilization "$want_util"
			;;
		esac
		if [ "$quant" = - ]; then
			lacks cmd.quant
			lacks yaml.quant
		else
			have cmd.quant "$quant"
			[ "$engine" = vllm ] && have yaml.quant "$quant"
		fi
		lacks cmd.dtype
		lacks yaml.dtype
	done
done <<EOF
meta-llama/Llama-3.1-70B-Instruct|h200|1 1 1 1|bf16|fp8|0|fp8|meta-llama/Llama-3.1-70B-Instruct
meta-llama/Llama-3.1-70B-Instruct|h200|2 1 1 1|fp8|fp8|32|fp8|meta-llama/Llama-3.1-70B-Instruct
llama-3.1-70b|h100-sxm|4 2 1 1|fp8|-|0|-|meta-llama/Llama-3.1-70B
meta-llama/Llama-3.1-8B-Instruct|l40s|1 1 1 1|bf16|-|16|-|meta-llama/Llama-3.1-8B-Instruct
$hf/Llama-3.1-8B/config.json|h100-sxm|2 1 1 1|bf16|bf16|0|-|$hf/Llama-3.1-8B
Qwen/Qwen3-30B-A3B|h100-sxm|1 1 2 2|bf16|-|0|-|Qwen/Qwen3-30B-A3B
mistralai/Mixtral-8x7B-Instruct-v0.1|h100-sxm|2 1 2 4|fp8|fp8|64|fp8|mistralai/Mixtral-8x7B-Instruct-v0.1
$hf/Llama-3.1-8B|l40s|1 1 1 1|fp8|-|0|-|$hf/Llama-3.1-8B
nvidia/Llama-3.1-70B-Instruct-FP8|h200|1 1 1 1|fp8|-|0|-|nvidia/Llama-3.1-70B-Instruct-FP8
Llama-3.1-70B-Instruct|h200|2 1 1 1|bf16|-|0|-|meta-llama/Llama-3.1-70B-Instruct
llama-3.1-8b-instruct|l40s|1 1 1 1|bf16|-|16|-|meta-llama/Llama-3.1-8B-instruct
EOF

# A disaggregated plan (tests/cli-size.sh's: Llama-2-7B on a GPU of round
# numbers, tests/data/good/round.yaml, one prefill and one decode instance):
# each role's command and config file carry the plan, as a colocated one.
wl="$top_srcdir/tests/data/workloads"
grep -v "^#" "$top_srcdir/tests/data/good/round.yaml" >"$tmp/round.yaml"
for engine in vllm sglang trtllm; do
	dargs="--model llama-2-7b --gpu $tmp/round.yaml --weights-bytes 10GB --utilization 1
	       --activation-bytes 0 --overhead-bytes 0 --tp 1 --workload $wl/size-replicas.yaml
	       --disagg 1:1 --tpot 0.0105 --engine generic --emit $engine"
	# shellcheck disable=SC2086
	run "$KVPLAN" size $dargs --format json
	expect_rc 0
	expect_json disagg_p 1
	want_seqs=$(json max_num_seqs)
	want_len=$(json max_model_len)
	want_util=$(json utilization)
	# shellcheck disable=SC2086
	run "$KVPLAN" size $dargs
	expect_rc 0
	for role in prefill decode; do
		name="$engine disaggregated, $role"
		printf '%s\n' "$out" | sed -n "/^# $role: /,\$p" | awk -v engine="$engine" -f "$parse" >"$tmp/parsed"
		lacks unknown
		have cmd.model meta-llama/Llama-2-7b-hf
		have cmd.pp 1
		have cmd.max_num_seqs "$want_seqs"
		have cmd.max_model_len "$want_len"
		near cmd.utilization "$want_util"
		if [ "$engine" = trtllm ]; then
			have cmd.tpdp 1
			have cmd.options "kvplan-trtllm-$role.yaml"
			have yaml.file "kvplan-trtllm-$role.yaml"
		else
			have cmd.tp 1
		fi
	done
done

# The serving dtype: --dtype fp16 over a bf16 checkpoint is every engine's
# --dtype float16 (vLLM/SGLang --dtype, TensorRT-LLM's dtype key).
for engine in vllm sglang trtllm; do
	run "$KVPLAN" size --model llama-3.1-8b --dtype fp16 --workload chat --users 16 --gpu h100-sxm --tp 1 --emit "$engine"
	expect_rc 0
	printf '%s\n' "$out" | sed -n "/^# $engine: /,\$p" | awk -v engine="$engine" -f "$parse" >"$tmp/parsed"
	lacks unknown
	if [ "$engine" = trtllm ]; then have yaml.dtype float16; else have cmd.dtype float16; fi
done

# vLLM's online FP8 of an unquantized checkpoint by vLLM version, as read
# in the released wheels (vllm/model_executor/layers/quantization/fp8.py,
# Fp8Config.__init__ with is_checkpoint_fp8_serialized false): through
# 0.30.0 --quantization fp8 quantizes on load; 0.31.0 to 0.34.0 raise "The
# `fp8` quantization method no longer supports online quantization. Please
# use `--quantization fp8_per_tensor` instead.", a value QuantizationMethods
# (quantization/__init__.py) lists from 0.20.0 on.  So the line and its
# config file say fp8 for the modelled versions (0.10.2, 0.19.0) and 0.30.0,
# fp8_per_tensor for 0.31.0 and later (a local build label does not
# matter); planned for SGLang, the vLLM line is for vLLM's newest modelled
# version, 0.19.0: fp8.
while read -r engine version quant; do
	[ -n "$engine" ] || continue
	vargs="--model meta-llama/Llama-3.1-70B-Instruct --workload chat --users 64 --gpu h200 --tp 1 --weights-dtype fp8 --engine $engine"
	[ "$version" = - ] || vargs="$vargs --engine-version $version"
	# shellcheck disable=SC2086
	run "$KVPLAN" size $vargs --emit vllm
	expect_rc 0
	name="--engine $engine --engine-version $version --emit vllm: --weights-dtype fp8"
	printf '%s\n' "$out" | sed -n "/^# vllm: /,\$p" | awk -v engine=vllm -f "$parse" >"$tmp/parsed"
	lacks unknown
	have cmd.quant "$quant"
	have yaml.quant "$quant"
done <<EOF
vllm 0.10.2 fp8
vllm 0.19.0 fp8
vllm 0.30.0 fp8
vllm 0.31.0 fp8_per_tensor
vllm v0.34.0+cu128 fp8_per_tensor
sglang - fp8
EOF

# What an engine cannot launch as planned: refused before the search, exit
# 2, the field named, nothing emitted.
# TensorRT-LLM's PyTorch backend runs pre-quantized ModelOpt checkpoints
# only (https://nvidia.github.io/TensorRT-LLM/features/quantization.html).
run "$KVPLAN" size --model meta-llama/Llama-3.1-70B-Instruct --workload chat --users 300 --ttft 2 --tpot 0.05 --gpus h200 --weights-dtype fp8 --emit trtllm
expect_rc 2
expect_err "--emit trtllm: --weights-dtype: TensorRT-LLM cannot quantize a bf16 checkpoint to fp8 on the fly"
expect_err "give a checkpoint quantized to fp8"
case "$out" in *trtllm-serve*) bad "emitted: $out" ;; *) ok ;; esac
# vLLM and SGLang quantize on the fly to fp8 only (int4, AWQ, GPTQ, NVFP4
# and MXFP4 need packed, calibrated checkpoints)
for engine in vllm sglang; do
	for wd in int4-awq int8 nvfp4; do
		run "$KVPLAN" size --model llama-3.1-8b --workload chat --users 16 --gpu h100-sxm --weights-dtype "$wd" --emit "$engine"
		expect_rc 2
		expect_err "--emit $engine: --weights-dtype: $engine cannot quantize a bf16 checkpoint to $wd on the fly"
	done
done
# a checkpoint already quantized is not quantized again: the name's word
# FP8 says the checkpoint holds fp8 (its id launched as typed, no flag) ...
run "$KVPLAN" size --model nvidia/Llama-3.1-8B-Instruct-FP8 --workload chat --users 16 --gpu h100-sxm --tp 1 --emit vllm
expect_rc 0
printf '%s\n' "$out" | sed -n "/^# vllm: /,\$p" | awk -v engine=vllm -f "$parse" >"$tmp/parsed"
have cmd.model nvidia/Llama-3.1-8B-Instruct-FP8
lacks cmd.quant
# ... and --weights-dtype int4 over it is refused
run "$KVPLAN" size --model nvidia/Llama-3.1-8B-Instruct-FP8 --workload chat --users 16 --gpu h100-sxm --weights-dtype int4-gptq --emit sglang
expect_rc 2
expect_err "--weights-dtype: the checkpoint is already quantized (fp8)"
# 16-bit weights other than the serving dtype: the engines load them in it
run "$KVPLAN" size --model llama-3.1-8b --workload chat --users 16 --gpu h100-sxm --weights-dtype fp16 --emit vllm
expect_rc 2
expect_err "--weights-dtype: vllm loads unquantized weights in the serving dtype (bf16 here), so fp16 weights need --dtype fp16"
# vLLM's expert parallelism is all of a stage's tp x dp GPUs or none
# (FusedMoEParallelConfig.make): one other ep is refused; of a list, those
# points fail split, and SGLang takes the same ep as --ep-size
run "$KVPLAN" size --model Qwen/Qwen3-30B-A3B --workload chat --users 64 --gpu h100-sxm --tp 4 --ep 2 --emit vllm
expect_rc 2
expect_err "--emit vllm: --ep 2: vLLM's expert parallelism spans the tp x dp = 4 GPUs of a stage"
run "$KVPLAN" size --model Qwen/Qwen3-30B-A3B --workload chat --users 64 --gpu h100-sxm --tp 4 --ep 2 --emit vllm --ep 1,2,4 --format json
expect_rc 0
# each config's "failed" comes before its "ep": the ep 2 row failed split, the others met
v=$(awk '/"failed":/ { f = $2 } /^      "ep":/ { print $2 f }' "$tmp/out" | sort | tr '\n' ' ')
if [ "$v" = '1,"", 2,"split", 4,"", ' ]; then ok; else bad "ep and failed: $v"; fi
run "$KVPLAN" size --model Qwen/Qwen3-30B-A3B --workload chat --users 64 --gpu h100-sxm --tp 4 --ep 2 --emit sglang
expect_rc 0
printf '%s\n' "$out" | sed -n "/^# sglang: /,\$p" | awk -v engine=sglang -f "$parse" >"$tmp/parsed"
have cmd.ep 2
have cmd.tp 4
# a KV dtype the engine has no cache for names the engine and the dtype
run "$KVPLAN" size --model llama-3.1-8b --workload chat --users 16 --gpu b200 --kv-dtype nvfp4 --emit vllm
expect_rc 2
expect_err "--emit vllm: vllm has no KV cache dtype nvfp4"

finish
