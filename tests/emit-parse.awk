# emit-parse.awk: read what `kvplan size --emit ENGINE` printed and write back
# the settings it carries, one `key=value` a line, in the plan's terms, by
# each engine's flag table (below; from the engines' sources at the versions
# kvplan models).  Used by tests/cli-size-emit.sh, which compares them with
# the plan.  Keys: model tp pp dp ep max_num_seqs max_model_len utilization
# kv quant dtype, each prefixed "cmd." (the command line) or "yaml." (the
# config file written beside it).  A flag the engine does not take is
# written as "unknown=FLAG" so the test fails on it.
#
# Flag tables (an engine flag -> the plan's setting):
#   vLLM 0.19, vllm/engine/arg_utils.py EngineArgs (the same names, without
#   the dashes, are vllm serve --config's keys):
#     positional MODEL, --tensor-parallel-size tp, --pipeline-parallel-size pp,
#     --data-parallel-size dp, --enable-expert-parallel (ep over tp x dp),
#     --max-num-seqs max_num_seqs, --max-model-len max_model_len,
#     --gpu-memory-utilization utilization, --kv-cache-dtype kv,
#     --quantization quant (online FP8: "fp8" up to vLLM 0.30,
#     "fp8_per_tensor" from 0.31, whose Fp8Config refuses online "fp8"),
#     --dtype dtype; read but not compared (the plan's
#     record has no field for them): --block-size,
#     --max-num-batched-tokens, --enable-prefix-caching, --kv-transfer-config
#   SGLang 0.5.10, python/sglang/srt/server_args.py ServerArgs:
#     --model-path MODEL, --tp-size tp x dp, --pp-size pp, --dp-size dp
#     (with --enable-dp-attention), --ep-size ep, --max-running-requests
#     max_num_seqs x dp, --context-length max_model_len, --mem-fraction-static
#     utilization, --kv-cache-dtype kv, --quantization quant, --dtype dtype;
#     read but not compared: --page-size, --disaggregation-*
#   TensorRT-LLM, PyTorch backend, tensorrt_llm/commands/serve.py and
#   tensorrt_llm/llmapi/llm_args.py:
#     positional MODEL, --tp_size tp x dp, --pp_size pp, --ep_size ep,
#     --max_batch_size max_num_seqs, --max_seq_len max_model_len,
#     --kv_cache_free_gpu_memory_fraction utilization,
#     --extra_llm_api_options FILE; in FILE: kv_cache_config.dtype kv,
#     kv_cache_config.free_gpu_memory_fraction utilization,
#     enable_attention_dp (dp > 1), dtype; read but not compared: --max_num_tokens,
#     kv_cache_config.enable_block_reuse, --host, --port
function unq(s) {
	if (s ~ /^'.*'$/ || s ~ /^".*"$/)
		s = substr(s, 2, length(s) - 2)
	return s
}
function out(k, v) { print k "=" v }
function flags_vllm(n, w,   i, f, v) {
	out("cmd.model", unq(w[3]))
	for (i = 4; i <= n; i++) {
		f = w[i]; v = unq(w[i + 1])
		if (f == "--tensor-parallel-size") { tp = v; i++ }
		else if (f == "--pipeline-parallel-size") { pp = v; i++ }
		else if (f == "--data-parallel-size") { dp = v; i++ }
		else if (f == "--enable-expert-parallel") ep = "on"
		else if (f == "--max-num-seqs") { out("cmd.max_num_seqs", v); i++ }
		else if (f == "--max-model-len") { out("cmd.max_model_len", v); i++ }
		else if (f == "--gpu-memory-utilization") { out("cmd.utilization", v); i++ }
		else if (f == "--kv-cache-dtype") { out("cmd.kv", v); i++ }
		else if (f == "--quantization") { out("cmd.quant", v); i++ }
		else if (f == "--dtype") { out("cmd.dtype", v); i++ }
		else if (f == "--block-size" || f == "--max-num-batched-tokens" ||
			 f == "--kv-transfer-config") i++
		else if (f == "--enable-prefix-caching") ;
		else out("unknown", f)
	}
	out("cmd.tp", tp); out("cmd.pp", pp); out("cmd.dp", dp); out("cmd.ep", ep)
}
function flags_sglang(n, w,   i, f, v, tpd, reqs) {
	for (i = 4; i <= n; i++) {
		f = w[i]; v = unq(w[i + 1])
		if (f == "--model-path") { out("cmd.model", v); i++ }
		else if (f == "--tp-size") { tpd = v; i++ }
		else if (f == "--pp-size") { pp = v; i++ }
		else if (f == "--dp-size") { dp = v; i++ }
		else if (f == "--enable-dp-attention") dpa = 1
		else if (f == "--ep-size") { ep = v; i++ }
		else if (f == "--max-running-requests") { reqs = v; i++ }
		else if (f == "--context-length") { out("cmd.max_model_len", v); i++ }
		else if (f == "--mem-fraction-static") { out("cmd.utilization", v); i++ }
		else if (f == "--kv-cache-dtype") { out("cmd.kv", v); i++ }
		else if (f == "--quantization") { out("cmd.quant", v); i++ }
		else if (f == "--dtype") { out("cmd.dtype", v); i++ }
		else if (f == "--page-size" || f ~ /^--disaggregation-/) i++
		else out("unknown", f)
	}
	if (dp > 1 && !dpa)
		out("unknown", "--dp-size without --enable-dp-attention")
	out("cmd.tp", tpd / dp); out("cmd.pp", pp); out("cmd.dp", dp); out("cmd.ep", ep)
	out("cmd.max_num_seqs", reqs / dp)
}
function flags_trtllm(n, w,   i, f, v, tpd) {
	out("cmd.model", unq(w[2]))
	for (i = 3; i <= n; i++) {
		f = w[i]; v = unq(w[i + 1])
		if (f == "--tp_size") { tpd = v; i++ }
		else if (f == "--pp_size") { pp = v; i++ }
		else if (f == "--ep_size") { ep = v; i++ }
		else if (f == "--max_batch_size") { out("cmd.max_num_seqs", v); i++ }
		else if (f == "--max_seq_len") { out("cmd.max_model_len", v); i++ }
		else if (f == "--kv_cache_free_gpu_memory_fraction") { out("cmd.utilization", v); i++ }
		else if (f == "--extra_llm_api_options") { out("cmd.options", v); i++ }
		else if (f == "--max_num_tokens" || f == "--host" || f == "--port") i++
		else out("unknown", f)
	}
	# dp: the YAML's enable_attention_dp splits tp_size into dp ranks
	out("cmd.tpdp", tpd); out("cmd.pp", pp); out("cmd.ep", ep)
}
BEGIN { tp = pp = dp = 1; ep = "off"; if (engine != "vllm") ep = 1 }
# one emitted block only: the first command and the config file it reads
/^cat > .* <<'KVPLAN_EOF'$/ { if (!done_yaml) { inyaml = 1; y["file"] = $3 }; next }
/^KVPLAN_EOF$/ { if (inyaml) done_yaml = 1; inyaml = 0; next }
inyaml {
	line = $0
	ind = match(line, /[^ ]/) - 1
	key = line; sub(/^ */, "", key)
	val = key; sub(/:.*/, "", key); sub(/^[^:]*: */, "", val)
	if (ind == 0) parent = key
	if (val == "") next
	k = ind ? parent "." key : key
	val = unq(val)
	if (engine == "vllm") {
		map["model"] = "model"; map["tensor-parallel-size"] = "tp"
		map["pipeline-parallel-size"] = "pp"; map["data-parallel-size"] = "dp"
		map["enable-expert-parallel"] = "ep"; map["max-num-seqs"] = "max_num_seqs"
		map["max-model-len"] = "max_model_len"; map["gpu-memory-utilization"] = "utilization"
		map["kv-cache-dtype"] = "kv"; map["quantization"] = "quant"; map["dtype"] = "dtype"
		if (k in map) { y[map[k]] = val; next }
		if (k == "block-size" || k == "max-num-batched-tokens" ||
		    k == "enable-prefix-caching" || k == "kv-transfer-config") next
	} else if (engine == "trtllm") {
		if (k == "kv_cache_config.dtype") { y["kv"] = val; next }
		if (k == "kv_cache_config.free_gpu_memory_fraction") { y["utilization"] = val; next }
		if (k == "enable_attention_dp") { y["attention_dp"] = val; next }
		if (k == "dtype") { y["dtype"] = val; next }
		if (k == "kv_cache_config.enable_block_reuse" || k == "cache_transceiver_config.backend") next
	}
	out("unknown", "yaml " k)
	next
}
# the command, its continuation lines joined
!done_cmd && /^(vllm serve|python -m sglang\.launch_server|trtllm-serve) / { incmd = 1; cmd = "" }
incmd {
	l = $0
	cont = sub(/ \\$/, "", l)
	cmd = cmd " " l
	if (!cont) {
		incmd = 0; done_cmd = 1
		n = split(cmd, w, /[ ]+/)
		# split gave w[1] = "" for the leading space: shift by one
		for (i = 1; i < n; i++) w[i] = w[i + 1]
		n--
		if (engine == "vllm") flags_vllm(n, w)
		else if (engine == "sglang") flags_sglang(n, w)
		else flags_trtllm(n, w)
	}
}
END {
	if (engine == "vllm") {
		if (!("tp" in y)) y["tp"] = 1
		if (!("pp" in y)) y["pp"] = 1
		if (!("dp" in y)) y["dp"] = 1
		y["ep"] = ("ep" in y) && y["ep"] == "true" ? "on" : "off"
	}
	if (engine == "trtllm") {
		if (!("attention_dp" in y)) y["attention_dp"] = "false"
	}
	for (k in y) out("yaml." k, y[k])
	if (!done_cmd) out("unknown", "no command line")
}
