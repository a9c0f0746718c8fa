#!/usr/bin/env python3
# peer-aiconfigurator.py: ask NVIDIA's aiconfigurator (Apache-2.0, PyPI) the
# same questions bench/perf-measured.sh asks kvplan, case by case, and write
# a CSV beside kvplan's answers (issue 32: "ahead of the best peer measured on
# the same cases").  One-off data work, run by hand; neither the build nor the
# tests need it.  How it was run and what it found: reports/peer-aiconfigurator.md.
#
# Usage (from the repository root, aiconfigurator in a venv OUTSIDE the tree):
#   python3 -m venv /tmp/aic-venv && /tmp/aic-venv/bin/pip install aiconfigurator==0.12.0
#   sh bench/perf-measured.sh > /tmp/kvplan-bench.txt
#   AICONFIGURATOR_LOG_LEVEL=ERROR /tmp/aic-venv/bin/python scripts/peer-aiconfigurator.py \
#       /tmp/kvplan-bench.txt > reports/peer-aiconfigurator-DATE.csv
#
# The kvplan bench output gives, per case, the batch kvplan was asked at (for
# `batch: max` cases the largest batch its memory model fits, as
# bench/measured-lib.sh max_batch) and kvplan's signed speed error; the peer is
# asked at that same batch.
#
# Mapping, case field -> aiconfigurator (nothing here is tuned to a result):
#   gpu      -> system (SYSTEMS); AMD and unprofiled GPUs are skipped with the reason
#   model    -> a HuggingFace id whose config.json ships in aiconfigurator_core
#               (MODELS), or, for Llama 2 and Mistral 7B, a config.json written
#               from kvplan's own model profile (LOCAL_MODELS, LlamaForCausalLM)
#   engine   -> backend trtllm | vllm | sglang; NIM (backend unstated) -> trtllm
#   version  -> aiconfigurator's default ("current") database version for that
#               system and backend; the version used is recorded per case
#   dtypes   -> gemm/moe quant: fp8 -> fp8 (fp8_block for DeepSeek V3), nvfp4 ->
#               nvfp4, fp16/bf16 -> bfloat16, profile -> the checkpoint's own
#               (auto); kv: fp8 -> fp8, fp16/bf16 -> bfloat16, unstated -> auto
#   tp/pp/ep -> tp_size, pp_size; MoE: moe_ep_size = ep, moe_tp_size = tp / ep
#   shape    -> a static batch (run_static: gptSessionBenchmark, benchmark_latency,
#               bench_one_batch, concurrency 1) -> mode "static"; a loaded run
#               (trtllm-bench at full load: `batch: max`; a serving benchmark at
#               concurrency > 1) -> mode "agg" (in-flight batching) at that batch
#   metric   -> from TTFT/TPOT in ms as the bench's header defines it:
#               tpot_ms = tpot; ttft_ms = ttft; latency_s = ttft + (output-1) tpot;
#               output_tps = batch x output / latency (static) or the agg
#               result's "tokens/s" (agg); output_tps_per_gpu the same / (tp pp);
#               decode_tps = 1 / tpot; prefill_tps = prompt / ttft
# Sign convention as bench/perf-measured.sh: speed error = measured time /
# predicted time - 1 (time metrics), predicted rate / measured rate - 1 (rates);
# positive = the peer predicts faster than measured.
import contextlib
import csv
import glob
import io
import json
import os
import sys
import tempfile
import traceback

import yaml

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SYSTEMS = {
    "h100-sxm": "h100_sxm",
    "h200": "h200_sxm",
    "b200": "b200_sxm",
    "gb200": "gb200",
    "l40s": "l40s",
    "a100-80gb": "a100_sxm",
    "rtx-pro-6000": "rtx_pro_6000_server",
}
SKIP_GPUS = {
    "mi300x": "AMD GPU: aiconfigurator 0.12.0 has no AMD system (its systems are NVIDIA, plus Intel b60)",
    "a100-80gb-pcie": "A100 PCIe: aiconfigurator's a100_pcie is estimate-only, no silicon data "
                      "(and kvplan skips the case too: no GPU profile)",
}
MODELS = {  # kvplan profile -> a model id whose config.json aiconfigurator_core ships
    "llama-3.1-8b": "meta-llama/Meta-Llama-3.1-8B",
    "llama-3.1-70b": "meta-llama/Meta-Llama-3.1-70B",
    "llama-3.1-405b": "meta-llama/Meta-Llama-3.1-405B",
    "mixtral-8x7b": "mistralai/Mixtral-8x7B-v0.1",
    "qwen3-235b-a22b": "Qwen/Qwen3-235B-A22B",
    "qwen3-30b-a3b": "Qwen/Qwen3-30B-A3B",
    "llama-4-scout": "meta-llama/Llama-4-Scout-17B-16E-Instruct",
    "llama-4-maverick": "meta-llama/Llama-4-Maverick-17B-128E-Instruct",
    "deepseek-v3": "deepseek-ai/DeepSeek-V3",
    "gpt-oss-120b": "openai/gpt-oss-120b",
}
# not shipped by aiconfigurator: a LlamaForCausalLM config.json from kvplan's
# profile (whose every field cites the model's config.json)
LOCAL_MODELS = ("llama-2-7b", "llama-2-70b", "mistral-7b-v0.1")
MOE = ("mixtral-8x7b", "qwen3-235b-a22b", "qwen3-30b-a3b", "llama-4-scout",
       "llama-4-maverick", "deepseek-v3", "gpt-oss-120b")
TIME_METRICS = ("tpot_ms", "ttft_ms", "latency_s")


def local_model_dir(profile, tmp):
    with open(os.path.join(TOP, "profiles", "models", profile + ".yaml")) as f:
        p = yaml.safe_load(f)
    d = os.path.join(tmp, profile)
    os.makedirs(d, exist_ok=True)
    cfg = {
        "architectures": ["LlamaForCausalLM"], "model_type": "llama",
        "hidden_size": p["hidden_size"], "intermediate_size": p["intermediate_size"],
        "num_attention_heads": p["num_heads"], "num_hidden_layers": p["num_layers"],
        "num_key_value_heads": p["num_kv_heads"], "head_dim": p["head_dim"],
        "vocab_size": p["vocab_size"], "max_position_embeddings": p["max_context"],
        "tie_word_embeddings": bool(p.get("tie_word_embeddings", False)),
        "torch_dtype": {"fp16": "float16", "bf16": "bfloat16"}.get(p.get("dtype"), "bfloat16"),
        "hidden_act": "silu", "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
    }
    with open(os.path.join(d, "config.json"), "w") as f:
        json.dump(cfg, f, indent=1)
    return d, p.get("sliding_window")


def bundled_dir(hf_id, tmp):
    """a model whose config.json aiconfigurator_core ships but does not list in
    DefaultHFModels (it would download it): the shipped file, in a local dir"""
    from aiconfigurator_core.sdk.common import DefaultHFModels
    if hf_id in DefaultHFModels:
        return hf_id, ""
    import aiconfigurator_core
    src = os.path.join(os.path.dirname(aiconfigurator_core.__file__), "model_configs",
                       hf_id.replace("/", "--") + "_config.json")
    d = os.path.join(tmp, hf_id.replace("/", "--"))
    os.makedirs(d, exist_ok=True)
    with open(src) as f, open(os.path.join(d, "config.json"), "w") as g:
        g.write(f.read())
    return d, "config.json shipped in aiconfigurator_core/model_configs, passed as a local dir (not in DefaultHFModels)"


def read_bench(path):
    """case -> (batch, kvplan prediction, kvplan speed error %) from perf-measured.sh's output"""
    out = {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 10 and w[9].endswith("%") and w[6].isdigit():
                out[w[0]] = (int(w[6]), float(w[8]), float(w[9].rstrip("%")))
    return out


def quant(dtype, model):
    if dtype in (None, "", "profile"):
        return None, "checkpoint's own"
    if dtype == "fp8":
        return ("fp8_block", "") if model == "deepseek-v3" else ("fp8", "")
    if dtype == "nvfp4":
        return "nvfp4", ""
    if dtype in ("fp16", "bf16"):
        return "bfloat16", "fp16 mapped to bfloat16 (aiconfigurator has no fp16 GEMM table)" if dtype == "fp16" else ""
    return None, "weights dtype %s left to aiconfigurator" % dtype


def kvq(dtype):
    if dtype in (None, "", "unstated"):
        return None, "kv dtype unstated: aiconfigurator's default"
    if dtype == "fp8":
        return "fp8", ""
    if dtype in ("fp16", "bf16"):
        return "bfloat16", ""
    return None, "kv dtype %s left to aiconfigurator" % dtype


def stats(errs):
    """count, median |e|, p90 |e| (perf-measured.sh's rank), signed mean, share within 15 %"""
    a = sorted(abs(e) for e in errs)
    m = len(a)
    if m == 0:
        return None
    med = a[(m - 1) // 2] if m % 2 else (a[m // 2 - 1] + a[m // 2]) / 2
    p90 = a[max(1, int(0.9 * m + 0.999999)) - 1]
    within = 100.0 * sum(1 for e in errs if -15 <= e <= 15) / m
    return m, med, p90, sum(errs) / m, within


def summary(path):
    """--summary CSV: the side-by-side on the cases both express, per regime"""
    with open(path) as f:
        rows = list(csv.DictReader(f))
    both = [r for r in rows if r["aic_speed_error_pct"] and r["kvplan_speed_error_pct"]]
    print("| regime | cases | tool | median \\|e\\| | p90 \\|e\\| | signed mean | within ±15 % |")
    print("|---|---:|---|---:|---:|---:|---:|")
    for reg in ("batch1-decode", "loaded", "prefill", "all"):
        sel = [r for r in both if reg == "all" or r["regime"] == reg]
        for tool, col in (("kvplan", "kvplan_speed_error_pct"), ("aiconfigurator", "aic_speed_error_pct")):
            st = stats([float(r[col]) for r in sel])
            if st:
                print("| %s | %d | %s | %.1f %% | %.1f %% | %+.1f %% | %.0f %% |" % ((reg, st[0], tool) + st[1:]))
    print()
    print("| source (case prefix) | cases | kvplan median \\|e\\| | aiconfigurator median \\|e\\| | kvplan mean | aiconfigurator mean |")
    print("|---|---:|---:|---:|---:|---:|")
    for src in sorted(set(r["case"].split("-")[0] for r in both)):
        sel = [r for r in both if r["case"].split("-")[0] == src]
        k = stats([float(r["kvplan_speed_error_pct"]) for r in sel])
        a = stats([float(r["aic_speed_error_pct"]) for r in sel])
        print("| %s | %d | %.1f %% | %.1f %% | %+.1f %% | %+.1f %% |" % (src, k[0], k[1], a[1], k[3], a[3]))
    print()
    print("| subset | cases | kvplan median \\|e\\| | aiconfigurator median \\|e\\| | kvplan p90 | aiconfigurator p90 | kvplan mean | aiconfigurator mean |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    subsets = (
        ("asked at the same batch (no OOM fallback)", lambda r: "OOM in aiconfigurator" not in r["mapping_notes"]),
        ("within the peer's own KV capacity (no warning)",
         lambda r: "exceeds estimated KV" not in r["mapping_notes"] and "OOM" not in r["mapping_notes"]),
        ("without SGLang 0.4.1 DeepSeek V3", lambda r: not r["case"].startswith("sglang")),
    )
    for name, keep in subsets:
        sel = [r for r in both if keep(r)]
        k = stats([float(r["kvplan_speed_error_pct"]) for r in sel])
        a = stats([float(r["aic_speed_error_pct"]) for r in sel])
        print("| %s | %d | %.1f %% | %.1f %% | %.1f %% | %.1f %% | %+.1f %% | %+.1f %% |"
              % (name, k[0], k[1], a[1], k[2], a[2], k[3], a[3]))
    closer = sum(1 for r in both if abs(float(r["kvplan_speed_error_pct"])) < abs(float(r["aic_speed_error_pct"])))
    print()
    print("kvplan closer to the measurement on %d of %d shared cases" % (closer, len(both)))
    print()
    only_k = [r for r in rows if r["kvplan_speed_error_pct"] and not r["aic_speed_error_pct"]]
    st = stats([float(r["kvplan_speed_error_pct"]) for r in only_k])
    if st:
        print("| kvplan only | %d | kvplan | %.1f %% | %.1f %% | %+.1f %% | %.0f %% |" % ((st[0],) + st[1:]))


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--summary":
        summary(sys.argv[2])
        return
    if len(sys.argv) != 2:
        sys.exit("usage: peer-aiconfigurator.py KVPLAN-BENCH-OUTPUT > out.csv\n"
                 "       peer-aiconfigurator.py --summary OUT.csv")
    bench = read_bench(sys.argv[1])
    from importlib.metadata import version
    from aiconfigurator.cli.api import cli_estimate
    aic_version = version("aiconfigurator")
    tmp = tempfile.mkdtemp(prefix="aic-models-")
    w = csv.writer(sys.stdout, lineterminator="\n")
    w.writerow(["case", "gpu", "engine", "regime", "metric", "batch", "measured",
                "aic_prediction", "aic_speed_error_pct", "kvplan_prediction", "kvplan_speed_error_pct",
                "aic_version", "aic_system", "aic_backend", "aic_backend_version", "aic_mode",
                "aic_model", "aic_quant", "mapping_notes", "skipped_because"])
    for f in sorted(glob.glob(os.path.join(TOP, "tests", "data", "perf-measured", "*.yaml"))):
        case = os.path.basename(f)[:-5]
        if os.environ.get("PEER_CASES") and case not in os.environ["PEER_CASES"].split(","):
            continue
        with open(f) as fh:
            c = yaml.safe_load(fh)
        gpu, model, engine = c["gpu"], c["model"], c["engine"]
        regime, metric, measured = c["regime"], c["metric"], float(c["measured"])
        prompt, output = int(c["prompt"]), int(c["output"])
        tp, pp, ep = int(c.get("tp") or 1), int(c.get("pp") or 1), int(c.get("ep") or 1)
        row = [case, gpu, engine, regime, metric, "", measured, "", "", "", "",
               aic_version, "", "", "", "", "", "", "", ""]
        kb = bench.get(case)
        if kb:
            row[5], row[9], row[10] = kb[0], kb[1], kb[2]
        notes = []

        def skip(why):
            row[19] = why
            w.writerow(row)
            sys.stdout.flush()

        if gpu in SKIP_GPUS:
            skip(SKIP_GPUS[gpu]); continue
        if gpu not in SYSTEMS:
            skip("no aiconfigurator system for GPU %s" % gpu); continue
        backend = {"trtllm": "trtllm", "vllm": "vllm", "sglang": "sglang", "nim": "trtllm"}.get(engine)
        if backend is None:
            skip("engine %s: no aiconfigurator backend" % engine); continue
        if engine == "nim":
            notes.append("NIM's backend is not stated: asked as trtllm")
        if kb is None:
            skip("kvplan did not express the case (no batch to ask at)"); continue
        batch = kb[0]
        if model in MODELS:
            mpath, n = bundled_dir(MODELS[model], tmp)
            if n:
                notes.append(n)
        elif model in LOCAL_MODELS:
            mpath, window = local_model_dir(model, tmp)
            notes.append("config.json written from kvplan's profile (LlamaForCausalLM)")
            if window:
                if prompt + output <= window:
                    notes.append("sliding window %d dropped: prompt + output %d never reaches it"
                                 % (window, prompt + output))
                else:
                    notes.append("sliding window %d dropped (sequence %d exceeds it)" % (window, prompt + output))
            mpath_label = "local:" + model
        else:
            skip("model %s: no aiconfigurator config" % model); continue
        gq, gn = quant(c.get("weights_dtype"), model)
        kq, kn = kvq(c.get("kv_dtype"))
        for n in (gn, kn):
            if n and n != "checkpoint's own":
                notes.append(n)
        loaded = c.get("batch") == "max" or (engine == "nim" and batch > 1)
        mode = "agg" if loaded else "static"
        osl = output
        if metric == "ttft_ms" and output <= 1:
            mode, osl = "static_ctx", 1
        kw = dict(mode=mode, backend_name=backend, isl=prompt, osl=osl, batch_size=batch,
                  tp_size=tp, pp_size=pp, gemm_quant_mode=gq, kvcache_quant_mode=kq)
        if model in MOE:
            kw["moe_ep_size"] = ep
            kw["moe_tp_size"] = max(1, tp // ep)
            kw["moe_quant_mode"] = gq
        row[12], row[13], row[15] = SYSTEMS[gpu], backend, mode
        row[16] = MODELS[model] if model in MODELS else mpath_label
        row[17] = "gemm=%s kv=%s" % (gq or "auto", kq or "auto")
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err), contextlib.redirect_stdout(err):
                try:
                    r = cli_estimate(mpath, SYSTEMS[gpu], **kw)
                except RuntimeError as e:
                    # a loaded case whose batch (kvplan's max_batch) the peer's
                    # memory model refuses: ask it at the largest batch it
                    # accepts (bisection), as a user of the peer would
                    if mode != "agg" or not str(e).startswith("OOM"):
                        raise
                    lo, hi, r = 0, batch, None
                    while hi - lo > 1:
                        mid = (lo + hi) // 2
                        try:
                            rr = cli_estimate(mpath, SYSTEMS[gpu], **dict(kw, batch_size=mid))
                            lo, r = mid, rr
                        except RuntimeError as e2:
                            if not str(e2).startswith("OOM"):
                                raise
                            hi = mid
                    if r is None:
                        raise
                    notes.append("OOM in aiconfigurator at kvplan's batch %d: asked at its largest "
                                 "accepted batch %d" % (batch, lo))
                    batch = lo
        except Exception as e:  # the peer's own refusal, recorded as the reason
            msg = (str(e) or type(e).__name__).replace("\n", " ")[:300]
            row[18] = "; ".join(notes)
            skip("aiconfigurator refused: %s: %s" % (type(e).__name__, msg))
            if os.environ.get("PEER_DEBUG"):
                traceback.print_exc()
            continue
        raw = r.raw if isinstance(r.raw, dict) else {}
        row[14] = r.backend_version
        if raw.get("gemm"):
            row[17] = "gemm=%s kv=%s moe=%s fmha=%s" % (raw.get("gemm"), raw.get("kvcache"),
                                                          raw.get("moe"), raw.get("fmha"))
        if r.kv_cache_warning:
            notes.append("aiconfigurator warns: %s" % str(r.kv_cache_warning).replace("\n", " ")[:160])
        ttft, tpot = float(r.ttft or 0), float(r.tpot or 0)
        e2e = (ttft + (output - 1) * tpot) / 1000.0
        gpus = tp * pp
        if metric == "tpot_ms":
            pred = tpot
        elif metric == "ttft_ms":
            pred = ttft
        elif metric == "latency_s":
            pred = e2e
        elif metric in ("output_tps", "output_tps_per_gpu"):
            pred = float(raw["tokens/s"]) if mode == "agg" else batch * output / e2e
            if metric == "output_tps_per_gpu":
                pred /= gpus
        elif metric == "decode_tps":
            pred = 1000.0 / tpot
        elif metric == "prefill_tps":
            pred = prompt / (ttft / 1000.0)
        else:
            skip("unknown metric %s" % metric); continue
        e = (measured / pred if metric in TIME_METRICS else pred / measured) - 1
        row[7], row[8], row[18] = "%.5g" % pred, "%+.1f" % (100 * e), "; ".join(notes).replace(tmp, "<tmp>")
        w.writerow(row)
        sys.stdout.flush()


if __name__ == "__main__":
    main()
