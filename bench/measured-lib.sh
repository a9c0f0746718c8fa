# measured-lib.sh: what bench/perf-measured.sh and bench/serve-measured.sh
# share in reading a measured case (tests/data/perf-measured/*.yaml) and
# kvplan's JSON; sourced, never run.  Needs $top (the checkout) and $kvplan.

# field FILE KEY: a scalar of the flat case file, quotes and comments removed
field() {
	sed -n "s/^$2:[[:space:]]*//p" "$1" | sed "s/[[:space:]][[:space:]]*#.*//; s/[[:space:]]*$//; s/^\"//; s/\"$//; s/^'//; s/'$//; s/''/'/g"
}
# json FIELD: the first number of that name in kvplan's JSON on stdin
json() { sed -n "s/^ *\"$1\": \\([-+0-9.eE][-+0-9.eE]*\\).*/\\1/p" | head -n 1; }
# jbool FIELD: true|false
jbool() { sed -n "s/^ *\"$1\": \\([a-z][a-z]*\\).*/\\1/p" | head -n 1; }

# shape_args FILE: the case's model, GPU, parallel shape, engine (and the
# version assumed for it, assume_engine_version) and dtypes as
# kvplan options (perf and serve take them alike); profile names hold no
# spaces, so the words split safely
shape_args() {
	_a="--model $(field "$1" model) --gpu $(field "$1" gpu)"
	# dp: attention data-parallel ranks (kvplan --dp; GPUs = tp x pp x dp),
	# e.g. SGLang's --enable-dp-attention, which sets dp_size = tp_size
	for _k in tp pp dp ep; do
		_v=$(field "$1" $_k)
		[ -n "$_v" ] && [ "$_v" != 1 ] && _a="$_a --$_k $_v"
	done
	_e=$(field "$1" engine)
	case $_e in vllm|sglang|trtllm|llamacpp) _a="$_a --engine $_e" ;; esac
	# a case whose source names no engine version but dates the run, or
	# names one kvplan models apart, or names it in words: the release it
	# was run as (the case file says why)
	_ev=$(field "$1" assume_engine_version)
	[ -n "$_ev" ] && _a="$_a --engine-version $_ev"
	_w=$(field "$1" weights_dtype)
	case $_w in ''|profile) ;; *) _a="$_a --weights-dtype $_w" ;; esac
	_kv=$(field "$1" kv_dtype)
	case $_kv in ''|unstated) ;; *) _a="$_a --kv-dtype $_kv" ;; esac
	echo "$_a"
}

# max_batch FILE PERF-ARGS: the batch a `batch: max` case runs at: the
# largest kvplan's memory model fits at prompt + output (perf's max_batch),
# capped at the case's max_batch_cap, else at the engine's own cap: 4096 for
# TensorRT-LLM, whose trtllm-bench sizes its runs as "raw_bs =
# min(kv_cache_max_requests, 4096) / pp_size" (tensorrt_llm/bench/build/
# tuning.py, finetune_setting: "Cap total batch size to avoid decoder buffer
# size becoming too large"), else 2048; fails when none fits
max_batch() {
	# shellcheck disable=SC2086
	_mb=$("$kvplan" perf $2 --batch 1 2>/dev/null | json max_batch || true)
	_cap=$(field "$1" max_batch_cap)
	[ -z "$_cap" ] && [ "$(field "$1" engine)" = trtllm ] && _cap=4096
	_cap=${_cap:-2048}
	[ -n "$_mb" ] && [ "$_mb" -ge 1 ] || return 1
	[ "$_mb" -gt "$_cap" ] && _mb=$_cap
	echo "$_mb"
}
