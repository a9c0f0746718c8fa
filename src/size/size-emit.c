/* size-emit.c: the engine settings that realise a sizing choice (`size
 * --emit`, size.h): the KV cache name and block size each engine takes, the
 * model argument a launch line may carry, and the vLLM, SGLang and
 * TensorRT-LLM command lines and config files, every input through the shell
 * and YAML quoting writers. */
#include "size/size.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "model/shape.h"
#include "out/output.h"
#include "out/shell-quote.h"
#include "base/units.h"
#include "base/version.h"
#include "out/yaml-writer.h"

bool kvp_size_engine_on_gpu(enum kvp_engine e, const struct kvp_gpu *g)
{
	/* TensorRT-LLM builds on CUDA and NVIDIA's kernels only (its install
	 * guide lists NVIDIA GPUs; there is no ROCm or oneAPI build): a GPU of
	 * another maker is refused; a profile that names none is taken at its word */
	return e != KVP_ENGINE_TRTLLM || !kvp_size_vendor_not_nvidia(g->vendor);
}

bool kvp_size_vendor_not_nvidia(const char *vendor)
{
	static const char *const others[] = {"amd", "intel", "google", "apple", "huawei", "aws"};
	for (size_t i = 0; i < sizeof others / sizeof others[0]; i++)
		if (strcasecmp(vendor, others[i]) == 0)
			return true;
	return false;
}

bool kvp_size_kv_on_gpu(const struct kvp_gpu *g, enum kvp_dtype dt)
{
	if (dt != KVP_DTYPE_NVFP4)
		return true;
	return strcmp(g->vendor, "nvidia") == 0 && g->compute_capability >= 10.0;
}

uint32_t kvp_size_block_default(enum kvp_engine e, const struct kvp_model *m)
{
	if (e != KVP_ENGINE_VLLM)
		return 0;
	for (uint32_t i = 0; i < m->num_layers; i++)
		if (m->layers[i] == KVP_LAYER_MLA)
			return 64;
	return 0;
}

const char *kvp_size_kv_name(enum kvp_engine e, const struct kvp_model *m, enum kvp_dtype dt)
{
	enum kvp_dtype serving = kvp_model_serving_dtype(m, KVP_DTYPE_AUTO);
	bool native = dt == serving || dt == KVP_DTYPE_BF16 || dt == KVP_DTYPE_FP16 ||
		      dt == KVP_DTYPE_AUTO;
	switch (e) {
	case KVP_ENGINE_SGLANG:
		/* --kv-cache-dtype {auto, fp8_e5m2, fp8_e4m3} */
		return native ? "auto" : dt == KVP_DTYPE_FP8 ? "fp8_e4m3"
				       : dt == KVP_DTYPE_FP8_E5M2 ? "fp8_e5m2" : NULL;
	case KVP_ENGINE_TRTLLM:
		/* kv_cache_config.dtype: auto, fp8, nvfp4 */
		return native ? "auto" : dt == KVP_DTYPE_FP8 ? "fp8" : dt == KVP_DTYPE_NVFP4 ? "nvfp4" : NULL;
	case KVP_ENGINE_VLLM:
		/* vLLM CacheDType: auto, fp8, fp8_e4m3, fp8_e5m2 */
		return native ? "auto" : dt == KVP_DTYPE_FP8 ? "fp8"
				       : dt == KVP_DTYPE_FP8_E5M2 ? "fp8_e5m2" : NULL;
	default:
		return NULL;
	}
}

/* The engines' names for a serving dtype: vLLM ModelConfig.dtype and
 * SGLang ServerArgs.dtype (--dtype auto|half|float16|bfloat16|float|float32),
 * TensorRT-LLM BaseLlmArgs.dtype (tensorrt_llm/llmapi/llm_args.py, "The data
 * type to use for the model", default "auto"; an extra_llm_api_options key). */
static const char *engine_dtype_name(enum kvp_dtype dt)
{
	switch (dt) {
	case KVP_DTYPE_BF16: return "bfloat16";
	case KVP_DTYPE_FP16: return "float16";
	case KVP_DTYPE_FP32: return "float32";
	default: return NULL;
	}
}

static bool dtype_is_float(enum kvp_dtype dt)
{
	return dt == KVP_DTYPE_BF16 || dt == KVP_DTYPE_FP16 || dt == KVP_DTYPE_FP32;
}

kvp_status kvp_size_weights_flags(enum kvp_engine e, const struct kvp_model *m,
				  enum kvp_dtype serving, const char **quant, const char **dtype,
				  struct kvp_error *err)
{
	const char *engine = kvp_engine_name(e);
	const char *at = m->path[0] ? m->path : NULL;
	enum kvp_dtype own = kvp_model_serving_dtype(m, KVP_DTYPE_AUTO);
	if (serving == KVP_DTYPE_AUTO)
		serving = own;
	*quant = NULL;
	/* --dtype: the engine casts the checkpoint's unquantized weights and its
	 * activations to it; "auto" picks what `own` says (fp32 served in bf16) */
	*dtype = serving != own ? engine_dtype_name(serving) : NULL;
	if (!m->weights_what_if)
		return KVP_STATUS_OK; /* the checkpoint as it is: the engine reads its quantization */
	enum kvp_dtype want = m->weights_dtype;
	enum kvp_dtype had = m->weights_checkpoint_dtype == KVP_DTYPE_AUTO
				     ? own : m->weights_checkpoint_dtype;
	if (dtype_is_float(want)) {
		/* unquantized weights are loaded in the serving dtype */
		if (want == serving && dtype_is_float(had))
			return KVP_STATUS_OK;
		if (!dtype_is_float(had))
			return kvp_error_set(err, KVP_STATUS_INVALID, at, 0, 0, "--weights-dtype",
					     "the checkpoint is quantized (%s) and %s loads it so, "
					     "not as %s: give an unquantized checkpoint as --model",
					     kvp_dtype_name(had), engine, kvp_dtype_name(want));
		return kvp_error_set(err, KVP_STATUS_INVALID, at, 0, 0, "--weights-dtype",
				     "%s loads unquantized weights in the serving dtype (%s here), "
				     "so %s weights need --dtype %s", engine,
				     kvp_dtype_name(serving), kvp_dtype_name(want), kvp_dtype_name(want));
	}
	if (want == had)
		return KVP_STATUS_OK; /* the checkpoint holds them so: the engine reads it */
	if (!dtype_is_float(had))
		return kvp_error_set(err, KVP_STATUS_INVALID, at, 0, 0, "--weights-dtype",
				     "the checkpoint is already quantized (%s); %s cannot "
				     "quantize it again to %s: give a checkpoint in %s as --model",
				     kvp_dtype_name(had), engine, kvp_dtype_name(want),
				     kvp_dtype_name(want));
	if (want == KVP_DTYPE_FP8 && e != KVP_ENGINE_TRTLLM) {
		/* vLLM: "Dynamic quantization of an original precision BF16/FP16
		 * model to FP8 ... specifying --quantization=\"fp8\""
		 * (docs/features/quantization/fp8.md of vLLM 0.19; "fp8" in
		 * QuantizationMethods,
		 * vllm/model_executor/layers/quantization/__init__.py); from vLLM
		 * 0.31 the launch line spells it fp8_per_tensor (vllm_quant_name,
		 * below); SGLang: "add
		 * --quantization fp8 on a fp16 checkpoint"
		 * (https://docs.sglang.io/docs/advanced_features/server_arguments,
		 * online quantization in advanced_features/quantization) */
		*quant = "fp8";
		return KVP_STATUS_OK;
	}
	if (e == KVP_ENGINE_TRTLLM)
		/* "TensorRT LLM can directly run pre-quantized models generated
		 * with the NVIDIA Model Optimizer ... If a pre-quantized model is
		 * not available ... quantize it offline using ModelOpt"
		 * (https://nvidia.github.io/TensorRT-LLM/features/quantization.html):
		 * the PyTorch backend has no on-the-fly weight quantization */
		return kvp_error_set(err, KVP_STATUS_INVALID, at, 0, 0, "--weights-dtype",
				     "TensorRT-LLM cannot quantize a %s checkpoint to %s on the "
				     "fly (it loads pre-quantized ModelOpt checkpoints): give a "
				     "checkpoint quantized to %s (its id or folder) as --model, or "
				     "--emit vllm|sglang%s",
				     kvp_dtype_name(had), kvp_dtype_name(want), kvp_dtype_name(want),
				     want == KVP_DTYPE_FP8 ? " (--quantization fp8)" : "");
	/* int8, int4, GPTQ, AWQ, MXFP4, NVFP4 need calibrated or packed
	 * checkpoints: vLLM and SGLang read them from quantization_config */
	return kvp_error_set(err, KVP_STATUS_INVALID, at, 0, 0, "--weights-dtype",
			     "%s cannot quantize a %s checkpoint to %s on the fly (only fp8, "
			     "--quantization fp8): give a checkpoint quantized to %s (its id or "
			     "folder) as --model",
			     engine, kvp_dtype_name(had), kvp_dtype_name(want), kvp_dtype_name(want));
}

/* vLLM's --quantization for online FP8 of an unquantized checkpoint, by the
 * vLLM version the plan was made for (c->engine_version with --engine vllm;
 * planned for another engine, vLLM's newest modelled version, 0.19.0).
 * Read in the released wheels (pip download --no-deps vllm==V):
 * vllm/model_executor/layers/quantization/fp8.py, Fp8Config.__init__ with
 * is_checkpoint_fp8_serialized false, quantizes online through 0.30.0
 * (0.10.2 and 0.11.2: Fp8LinearMethod; 0.19.0: Fp8OnlineLinearMethod;
 * 0.26.0 and 0.30.0: online/fp8.py Fp8PerTensorOnlineLinearMethod), and
 * from 0.31.0 (0.31.0 to 0.34.0 alike) raises "The `fp8` quantization
 * method no longer supports online quantization. Please use
 * `--quantization fp8_per_tensor` instead."  "fp8_per_tensor" is a
 * --quantization value (QuantizationMethods in quantization/__init__.py;
 * per-tensor FP8 weights, one byte each as before) in every wheel read
 * from 0.20.0 on (0.20.0, 0.23.0, 0.26.0, 0.30.0 to 0.34.0) and in none up
 * to 0.19.0.  So "fp8" below 0.31 (every modelled entry: 0.10.2, 0.11.2,
 * 0.19.0), "fp8_per_tensor" from 0.31 on, its pre-releases and nightlies
 * included (both spellings work from 0.20.0 to 0.30.0). */
static const char *vllm_quant_name(const char *quant, const struct kvp_size_config *c)
{
	struct kvp_version asked, from;
	if (!quant || strcmp(quant, "fp8") != 0 || c->engine != KVP_ENGINE_VLLM ||
	    !kvp_version_parse(c->engine_version, &asked) ||
	    !kvp_version_parse("0.31.0.dev0", &from))
		return quant;
	return kvp_version_cmp(&asked, &from) >= 0 ? "fp8_per_tensor" : quant;
}

bool kvp_size_emit_ep_ok(enum kvp_engine e, uint32_t tp, uint32_t dp, uint32_t ep)
{
	return e != KVP_ENGINE_VLLM || ep <= 1 || (uint64_t)ep == (uint64_t)tp * (dp ? dp : 1);
}

/* What a launch line carries beyond the plan's numbers: the model argument,
 * the KV cache dtype as the engine spells it, and kvp_size_weights_flags'
 * quantization and dtype (NULL: none). */
struct launch {
	const char *id, *kv, *quant, *dtype;
};

/* The here-document that writes an engine's config file: its delimiter is
 * quoted, so the shell expands nothing inside, and every line starts with a
 * key or a space, so none can end it early. */
#define HEREDOC_END "KVPLAN_EOF"

/* Disaggregated serving: a replica is disagg_p prefill and disagg_d decode
 * instances of the one shape; each role's command carries the engine's own
 * KV-transfer settings.  `role` is NULL for a colocated plan (output as
 * before), else "prefill" or "decode". */

/* vLLM's NixlConnector, the same JSON on both roles (kv_role kv_both), as in
 * https://docs.vllm.ai/en/stable/features/nixl_connector_usage.html
 * (vllm serve ... --kv-transfer-config '{"kv_connector":"NixlConnector","kv_role":"kv_both"}').
 * Written through the JSON writer into `buf`; false when it did not fit. */
static bool vllm_kv_transfer_json(char *buf, size_t size)
{
	struct kvp_record *r = kvp_record_new();
	bool ok = r && kvp_record_str(r, "kv_connector", "NixlConnector") &&
		  kvp_record_str(r, "kv_role", "kv_both");
	FILE *m = ok ? fmemopen(buf, size, "w") : NULL;
	if (m) {
		kvp_write_json_line(m, r);
		ok = fputc('\0', m) != EOF && fflush(m) == 0 && !ferror(m);
		fclose(m);
	} else {
		ok = false;
	}
	kvp_record_free(r);
	buf[size - 1] = '\0';
	return ok;
}

static void emit_vllm(FILE *f, const struct launch *l, const struct kvp_size_config *c,
		      bool prefix, const char *role)
{
	const char *id = l->id, *kv = l->kv;
	char xfer[128] = "";
	char file[64];
	snprintf(file, sizeof file, "kvplan-vllm%s%s.yaml", role ? "-" : "", role ? role : "");
	if (role && !vllm_kv_transfer_json(xfer, sizeof xfer))
		return;
	fputs("vllm serve ", f);
	kvp_sh_word(f, id);
	fprintf(f, " --tensor-parallel-size %u \\\n"
		   "    --max-model-len %llu --max-num-seqs %llu \\\n"
		   "    --gpu-memory-utilization %.4f --kv-cache-dtype ",
		c->tp, (unsigned long long)c->max_model_len, (unsigned long long)c->max_num_seqs,
		c->utilization);
	kvp_sh_word(f, kv);
	fprintf(f, " --block-size %u \\\n    --max-num-batched-tokens %llu%s", c->block_size,
		(unsigned long long)c->max_batched_tokens, prefix ? " --enable-prefix-caching" : "");
	/* data-parallel attention; expert parallelism spreads the experts over
	 * tp x dp GPUs (shape.h) */
	if (c->pp > 1)
		fprintf(f, " \\\n    --pipeline-parallel-size %u", c->pp);
	if (c->dp > 1)
		fprintf(f, " \\\n    --data-parallel-size %u", c->dp);
	if (c->ep > 1)
		fputs(" --enable-expert-parallel", f);
	/* the weights as planned: --quantization fp8 quantizes an unquantized
	 * checkpoint on load; --dtype the serving dtype (EngineArgs, 0.19
	 * vllm/engine/arg_utils.py) */
	if (l->quant) {
		fputs(" \\\n    --quantization ", f);
		kvp_sh_word(f, l->quant);
	}
	if (l->dtype) {
		fputs(l->quant ? " --dtype " : " \\\n    --dtype ", f);
		kvp_sh_word(f, l->dtype);
	}
	if (role) {
		fputs(" \\\n    --kv-transfer-config ", f);
		kvp_sh_word(f, xfer);
	}
	fputc('\n', f);
	fprintf(f, "# or fix the pool instead of the fraction: --kv-cache-memory-bytes %llu\n",
		(unsigned long long)c->kv_pool_bytes);
	fprintf(f, "# the same as a config file, for: vllm serve --config %s\n", file);
	fprintf(f, "cat > %s <<'" HEREDOC_END "'\n", file);
	kvp_yaml_kv_str(f, 0, "model", id);
	kvp_yaml_kv_u64(f, 0, "tensor-parallel-size", c->tp);
	kvp_yaml_kv_u64(f, 0, "max-model-len", c->max_model_len);
	kvp_yaml_kv_u64(f, 0, "max-num-seqs", c->max_num_seqs);
	kvp_yaml_kv_f64(f, 0, "gpu-memory-utilization", c->utilization);
	kvp_yaml_kv_str(f, 0, "kv-cache-dtype", kv);
	kvp_yaml_kv_u64(f, 0, "block-size", c->block_size);
	kvp_yaml_kv_u64(f, 0, "max-num-batched-tokens", c->max_batched_tokens);
	if (prefix)
		kvp_yaml_kv_bool(f, 0, "enable-prefix-caching", 1);
	if (c->pp > 1)
		kvp_yaml_kv_u64(f, 0, "pipeline-parallel-size", c->pp);
	if (c->dp > 1)
		kvp_yaml_kv_u64(f, 0, "data-parallel-size", c->dp);
	if (c->ep > 1)
		kvp_yaml_kv_bool(f, 0, "enable-expert-parallel", 1);
	if (l->quant)
		kvp_yaml_kv_str(f, 0, "quantization", l->quant);
	if (l->dtype)
		kvp_yaml_kv_str(f, 0, "dtype", l->dtype);
	if (role)
		kvp_yaml_kv_str(f, 0, "kv-transfer-config", xfer);
	fputs(HEREDOC_END "\n", f);
}

/* TRT-LLM: each context (prefill) and generation (decode) server is a
 * trtllm-serve whose extra_llm_api_options hold cache_transceiver_config
 * (backend UCX), and `trtllm-serve disaggregated -c FILE` fronts them, FILE
 * listing context_servers and generation_servers (num_instances, urls), as in
 * https://nvidia.github.io/TensorRT-LLM/features/disagg-serving.html */
static void emit_trtllm(FILE *f, const struct launch *l, const struct kvp_size_config *c,
			bool prefix, const char *role, unsigned port)
{
	const char *id = l->id, *kv = l->kv;
	char file[64];
	snprintf(file, sizeof file, "kvplan-trtllm%s%s.yaml", role ? "-" : "", role ? role : "");
	/* the options file first: the command reads it */
	fprintf(f, "cat > %s <<'" HEREDOC_END "'\n", file);
	kvp_yaml_map(f, 0, "kv_cache_config");
	kvp_yaml_kv_str(f, 2, "dtype", kv);
	kvp_yaml_kv_f64(f, 2, "free_gpu_memory_fraction", c->utilization);
	kvp_yaml_kv_bool(f, 2, "enable_block_reuse", prefix);
	if (c->dp > 1)
		kvp_yaml_kv_bool(f, 0, "enable_attention_dp", 1);
	/* quantization is the checkpoint's (kvp_size_weights_flags refuses a
	 * what-if); the serving dtype is BaseLlmArgs.dtype */
	if (l->dtype)
		kvp_yaml_kv_str(f, 0, "dtype", l->dtype);
	if (role) {
		kvp_yaml_map(f, 0, "cache_transceiver_config");
		kvp_yaml_kv_str(f, 2, "backend", "UCX");
	}
	fputs(HEREDOC_END "\n", f);
	fputs("trtllm-serve ", f);
	kvp_sh_word(f, id);
	if (role)
		fprintf(f, " --host localhost --port %u", port);
	fprintf(f, " --tp_size %u --max_seq_len %llu \\\n"
		   "    --max_batch_size %llu --max_num_tokens %llu \\\n"
		   "    --kv_cache_free_gpu_memory_fraction %.4f \\\n"
		   "    --extra_llm_api_options %s",
		c->tp * c->dp, (unsigned long long)c->max_model_len, (unsigned long long)c->max_num_seqs,
		(unsigned long long)c->max_batched_tokens, c->utilization, file);
	if (c->pp > 1)
		fprintf(f, " --pp_size %u", c->pp);
	if (c->ep > 1)
		fprintf(f, " --ep_size %u", c->ep);
	fputc('\n', f);
}

/* SGLang: --disaggregation-mode prefill|decode and the transfer engine
 * (--disaggregation-transfer-backend: mooncake or nixl; nixl here, as vLLM),
 * a router in front, as in
 * https://docs.sglang.io/docs/advanced_features/pd_disaggregation */
static void emit_sglang(FILE *f, const struct launch *l, const struct kvp_size_config *c,
			bool prefix, const char *role)
{
	const char *id = l->id, *kv = l->kv;
	fputs("python -m sglang.launch_server --model-path ", f);
	kvp_sh_word(f, id);
	/* with DP attention SGLang's tp-size counts every GPU of the replica,
	 * and --max-running-requests the whole replica's requests: each DP rank
	 * takes max_running_requests // dp_size (0.5.10
	 * srt/model_executor/model_runner_kv_cache_mixin.py
	 * _resolve_max_num_reqs), so the per-rank figure goes times dp */
	fprintf(f, " --tp-size %u \\\n"
		   "    --context-length %llu --max-running-requests %llu \\\n"
		   "    --mem-fraction-static %.4f --kv-cache-dtype ",
		c->tp * c->dp, (unsigned long long)c->max_model_len,
		(unsigned long long)c->max_num_seqs * (c->dp > 1 ? c->dp : 1), c->utilization);
	kvp_sh_word(f, kv);
	if (c->pp > 1)
		fprintf(f, " --pp-size %u", c->pp);
	if (c->dp > 1)
		fprintf(f, " \\\n    --dp-size %u --enable-dp-attention", c->dp);
	if (c->ep > 1)
		fprintf(f, " --ep-size %u", c->ep);
	/* the weights as planned: ServerArgs.quantization ("fp8": online
	 * quantization of an unquantized checkpoint) and ServerArgs.dtype
	 * (0.5.10 python/sglang/srt/server_args.py) */
	if (l->quant) {
		fputs(" \\\n    --quantization ", f);
		kvp_sh_word(f, l->quant);
	}
	if (l->dtype) {
		fputs(l->quant ? " --dtype " : " \\\n    --dtype ", f);
		kvp_sh_word(f, l->dtype);
	}
	/* SGLang's radix cache shares prefixes unless --disable-radix-cache */
	if (role) {
		fputs(" \\\n    --disaggregation-mode ", f);
		kvp_sh_word(f, role);
		fputs(" --disaggregation-transfer-backend ", f);
		kvp_sh_word(f, "nixl");
	}
	fprintf(f, " --page-size %u%s\n", c->block_size,
		prefix ? "\n# prefixes are shared: keep the radix cache (the default; no --disable-radix-cache)"
		       : "");
}

/* One command per role; the instances of a role are launched alike (each on
 * its own GPUs, its own port).  The front that sends a request to a prefill
 * then a decode instance: vLLM's is an example proxy, SGLang's a router,
 * TRT-LLM's `trtllm-serve disaggregated` (its config written here). */
static void emit_disagg(FILE *f, enum kvp_engine e, const struct launch *l,
			const struct kvp_size_config *c, bool prefix)
{
	unsigned gpus = c->tp * c->pp * c->dp;
	static const char *const roles[2] = { "prefill", "decode" };
	const uint32_t n[2] = { c->disagg_p, c->disagg_d };
	switch (e) {
	case KVP_ENGINE_VLLM:
		fputs("# KV transfer: vLLM NixlConnector (kv_role kv_both on both roles);\n"
		      "# https://docs.vllm.ai/en/stable/features/nixl_connector_usage.html\n"
		      "# a proxy in front sends each request to a prefill, then a decode instance\n", f);
		break;
	case KVP_ENGINE_SGLANG:
		fputs("# KV transfer: SGLang --disaggregation-transfer-backend nixl;\n"
		      "# https://docs.sglang.io/docs/advanced_features/pd_disaggregation\n"
		      "# a router in front: python -m sglang_router.launch_router --pd-disaggregation\n"
		      "#   --prefill http://HOST:PORT --decode http://HOST:PORT (one per instance)\n", f);
		break;
	default:
		fputs("# KV transfer: TRT-LLM cache_transceiver_config (backend UCX);\n"
		      "# https://nvidia.github.io/TensorRT-LLM/features/disagg-serving.html\n", f);
		break;
	}
	for (int r = 0; r < 2; r++) {
		fprintf(f, "# %s: %u instance%s of %u GPU%s each (tp %u x pp %u x dp %u)%s\n", roles[r],
			n[r], n[r] == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s", c->tp, c->pp, c->dp,
			n[r] > 1 ? ", each on its own GPUs and port" : "");
		switch (e) {
		case KVP_ENGINE_SGLANG: emit_sglang(f, l, c, prefix, roles[r]); break;
		case KVP_ENGINE_TRTLLM:
			emit_trtllm(f, l, c, prefix, roles[r], 8001u + (r ? c->disagg_p : 0));
			break;
		default: emit_vllm(f, l, c, prefix, roles[r]); break;
		}
	}
	if (e != KVP_ENGINE_TRTLLM)
		return;
	/* the front's file: context_servers are the prefill instances,
	 * generation_servers the decode ones, at ports 8001 upward on localhost
	 * (edit the urls to the hosts they run on) */
	fputs("cat > kvplan-trtllm-disagg.yaml <<'" HEREDOC_END "'\n", f);
	kvp_yaml_kv_str(f, 0, "hostname", "localhost");
	kvp_yaml_kv_u64(f, 0, "port", 8000);
	unsigned port = 8001;
	for (int r = 0; r < 2; r++) {
		kvp_yaml_map(f, 0, r ? "generation_servers" : "context_servers");
		kvp_yaml_kv_u64(f, 2, "num_instances", n[r]);
		kvp_yaml_map(f, 2, "urls");
		for (uint32_t i = 0; i < n[r]; i++) {
			char url[32];
			snprintf(url, sizeof url, "localhost:%u", port++);
			kvp_yaml_item_str(f, 4, url);
		}
	}
	fputs(HEREDOC_END "\n", f);
	fputs("trtllm-serve disaggregated -c kvplan-trtllm-disagg.yaml\n", f);
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	return a >= b && strcmp(s + a - b, suffix) == 0;
}

kvp_status kvp_size_launch_id(const struct kvp_model *m, char *buf, size_t size,
			      struct kvp_error *err)
{
	const char *p = m->path;
	bool json = ends_with(p, ".json"), gguf = ends_with(p, ".gguf");
	int n;
	if (json || gguf) {
		/* config.json: its folder ("." when given bare); GGUF: the file */
		const char *slash = strrchr(p, '/');
		int len = json ? (slash ? (int)(slash - p) : 0) : (int)strlen(p);
		if (json && slash == p)
			len = 1; /* /config.json: the root folder */
		const char *pre = len && p[0] == '-' ? "./" : "";
		n = len ? snprintf(buf, size, "%s%.*s", pre, len, p) : snprintf(buf, size, ".");
	} else {
		const char *id = m->hf_id[0] ? m->hf_id : m->name;
		const char *key = m->hf_id[0] ? "hf_id" : "name";
		if (id[0] == '-')
			return kvp_error_set(err, KVP_STATUS_INVALID, p[0] ? p : NULL, 0, 0, key,
					     "'%s' starts with '-': an engine would read it as an "
					     "option, not a model", id);
		n = snprintf(buf, size, "%s", id);
	}
	if (n < 0 || (size_t)n >= size)
		return kvp_error_set(err, KVP_STATUS_OVERFLOW, p[0] ? p : NULL, 0, 0, "model",
				     "the model's launch id is longer than %zu bytes", size - 1);
	return KVP_STATUS_OK;
}

void kvp_size_emit(FILE *f, enum kvp_engine e, const struct kvp_model *m,
		   const struct kvp_size_config *c, bool prefix_caching)
{
	char id[sizeof m->path + 2];
	struct kvp_error err;
	if (kvp_size_launch_id(m, id, sizeof id, &err)) {
		fputs("# not launched: ", f);
		kvp_sh_comment(f, err.msg);
		fputc('\n', f);
		return;
	}
	if (e == KVP_ENGINE_GENERIC) {
		kvp_size_emit(f, KVP_ENGINE_VLLM, m, c, prefix_caching);
		kvp_size_emit(f, KVP_ENGINE_SGLANG, m, c, prefix_caching);
		kvp_size_emit(f, KVP_ENGINE_TRTLLM, m, c, prefix_caching);
		return;
	}
	struct kvp_size_config one = *c; /* dp, pp 0 (a config not from evaluate): none */
	if (!one.dp)
		one.dp = 1;
	if (!one.pp)
		one.pp = 1;
	c = &one;
	const char *kv = kvp_size_kv_name(e, m, c->kv_dtype);
	/* input text only through shell-quote.h: words single-quoted, comments on one line */
	fprintf(f, "# %s: %u replica%s of %u x ", kvp_engine_name(e), c->replicas,
		c->replicas == 1 ? "" : "s",
		c->tp * c->pp * c->dp * (c->disagg_p ? c->disagg_p + c->disagg_d : 1));
	kvp_sh_comment(f, c->gpu);
	if (c->dp > 1 || c->pp > 1)
		fprintf(f, " (tp %u x pp %u x dp %u)", c->tp, c->pp, c->dp);
	fprintf(f, " (%u GPU%s); each replica:\n", c->count, c->count == 1 ? "" : "s");
	if (c->disagg_p)
		fprintf(f, "# disaggregated: %u prefill and %u decode instance%s, each launched as below;\n",
			c->disagg_p, c->disagg_d, c->disagg_d == 1 ? "" : "s");
	if (e == KVP_ENGINE_TRTLLM && kvp_size_vendor_not_nvidia(c->vendor)) {
		/* planned with another engine (--engine), emitted for TRT-LLM */
		fprintf(f, "# trtllm: TensorRT-LLM runs on NVIDIA GPUs only; this GPU's vendor is ");
		kvp_sh_comment(f, c->vendor);
		fprintf(f, ": not launched\n");
		return;
	}
	if (!kv) {
		/* the caller refuses this; never print a dtype the plan did not size */
		fprintf(f, "# %s has no KV cache dtype %s: not launched as planned\n",
			kvp_engine_name(e), kvp_dtype_name(c->kv_dtype));
		return;
	}
	struct launch l = {.id = id, .kv = kv};
	if (kvp_size_weights_flags(e, m, c->serving_dtype, &l.quant, &l.dtype, &err)) {
		/* the caller refuses this too; never launch weights the plan did not size */
		fputs("# not launched: ", f);
		kvp_sh_comment(f, err.msg);
		fputc('\n', f);
		return;
	}
	if (e == KVP_ENGINE_VLLM)
		l.quant = vllm_quant_name(l.quant, c);
	if (c->disagg_p) {
		emit_disagg(f, e, &l, c, prefix_caching);
		return;
	}
	switch (e) {
	case KVP_ENGINE_SGLANG: emit_sglang(f, &l, c, prefix_caching, NULL); break;
	case KVP_ENGINE_TRTLLM: emit_trtllm(f, &l, c, prefix_caching, NULL, 0); break;
	default: emit_vllm(f, &l, c, prefix_caching, NULL); break;
	}
}
