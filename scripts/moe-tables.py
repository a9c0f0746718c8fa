#!/usr/bin/env python3
# moe-tables.py: convert NVIDIA aiconfigurator's measured MoE (grouped expert
# GEMM) tables (Apache-2.0, PyPI package aiconfigurator-core) into the compact
# tables kvplan interpolates in C (profiles/kernels/moe-<gpu>-<dtype>.tsv, read
# by src/time/moe-table.c).  One-off data conversion, run by hand; neither the
# build nor the tests need Python or pyarrow.  Issue 32.
#
# Usage (from the repository root, the packages in a venv OUTSIDE the tree):
#   python3 -m venv /tmp/i32-moe-venv
#   /tmp/i32-moe-venv/bin/pip install aiconfigurator-core==0.12.0 pyarrow
#   /tmp/i32-moe-venv/bin/python scripts/moe-tables.py profiles/kernels
#
# What is taken, and nothing else:
#   - TensorRT-LLM's table (aiconfigurator_core/systems/data/<gpu>/moe/trtllm/
#     <version>/moe_perf.parquet, op_name moe: one MoE layer's routed experts
#     on one GPU, token routing and both grouped GEMMs and the activation
#     between them, the latency in milliseconds), the version SYSTEMS names;
#   - the gated kernel TensorRT-LLM's PyTorch backend runs by default:
#     kernel_source moe_torch_flow_cutlass where the table has it, else
#     moe_torch_flow (aiconfigurator routes moe_torch_flow_min_latency rows to
#     a separate low-latency view, sdk/operations/moe.py; not taken);
#   - distribution power_law_1.2: the token-to-expert imbalance aiconfigurator
#     itself models generic MoE families with (sdk/models/moe.py,
#     `self._power_law_alpha = 1.2`; `balanced` is the ideal case no router
#     reaches);
#   - moe_dtype bfloat16 -> bf16, fp8 (per-tensor) -> fp8, nvfp4 -> nvfp4;
#   - only the expert shapes of kvplan's own model profiles (MODELS below:
#     hidden size, the expert's intermediate size, top-k, experts), with
#     moe_tp x moe_ep <= 8 (one server);
#   - each row: the shape, moe_tp, moe_ep, num_tokens (the tokens entering
#     the layer on each GPU: every token of the group, as TensorRT-LLM's
#     attention-TP MoE sees them) and the latency in microseconds.
# The aiconfigurator GPU name -> kvplan GPU profile map is the one
# scripts/gemm-tables.py uses (only profiles of that very board).
import os
import sys

import pyarrow.parquet as pq

try:
    from importlib.metadata import version as pkg_version
except ImportError:  # pragma: no cover
    pkg_version = None

# kvplan profile -> (aiconfigurator system, engine, engine version)
SYSTEMS = [
    ("a100-80gb", "a100_sxm", "trtllm", "1.0.0"),
    ("h100-sxm", "h100_sxm", "trtllm", "1.3.0rc20"),
    ("h200", "h200_sxm", "trtllm", "1.3.0rc20"),
    ("b200", "b200_sxm", "trtllm", "1.3.0rc20"),
    ("gb200", "gb200", "trtllm", "1.3.0rc20"),
    ("l40s", "l40s", "trtllm", "1.3.0rc20"),
    ("rtx-pro-6000", "rtx_pro_6000_server", "trtllm", "1.3.0rc20"),
]
DTYPES = [("bfloat16", "bf16"), ("fp8", "fp8"), ("nvfp4", "nvfp4")]
DISTRIBUTION = "power_law_1.2"
KERNELS = ["moe_torch_flow_cutlass", "moe_torch_flow"]
# (hidden, expert intermediate, top-k, experts): kvplan's profiles
MODELS = {
    (4096, 1536, 8, 128): "qwen3-235b-a22b",
    (2048, 768, 8, 128): "qwen3-30b-a3b",
    (5120, 8192, 1, 128): "llama-4-maverick",
    (5120, 8192, 1, 16): "llama-4-scout",
    (4096, 14336, 2, 8): "mixtral-8x7b",
}
MAX_GROUP = 8


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: moe-tables.py OUTDIR")
    outdir = sys.argv[1]
    import aiconfigurator_core

    core_dir = os.path.dirname(aiconfigurator_core.__file__)
    ver = pkg_version("aiconfigurator-core") if pkg_version else "unknown"
    os.makedirs(outdir, exist_ok=True)
    for gpu, system, engine, ev in SYSTEMS:
        rel = f"systems/data/{system}/moe/{engine}/{ev}/moe_perf.parquet"
        path = os.path.join(core_dir, rel)
        if not os.path.exists(path):
            continue
        t = pq.read_table(path).to_pydict()
        for src_dtype, dtype in DTYPES:
            rows = {}
            device = None
            kernels = set()
            for i in range(len(t["latency"])):
                if (t["moe_dtype"][i] != src_dtype or t["distribution"][i] != DISTRIBUTION
                        or t["kernel_source"][i] not in KERNELS):
                    continue
                shape = (t["hidden_size"][i], t["inter_size"][i], t["topk"][i],
                         t["num_experts"][i])
                if shape not in MODELS:
                    continue
                tp, ep = t["moe_tp_size"][i], t["moe_ep_size"][i]
                if tp * ep > MAX_GROUP or not t["latency"][i] > 0:
                    continue
                key = shape + (tp, ep, t["num_tokens"][i])
                prev = rows.get(key)
                # both kernels measured one point: the default (cutlass) one
                if prev and prev[1] == KERNELS[0]:
                    continue
                rows[key] = (t["latency"][i] * 1e3, t["kernel_source"][i])
                device = t["device"][i]
            if not rows:
                continue
            for k in rows:
                kernels.add(rows[k][1])
            name = f"moe-{gpu}-{dtype}.tsv"
            with open(os.path.join(outdir, name), "w") as f:
                f.write(f"# {name}: measured MoE layer latency (routed experts), {device}, "
                        f"{dtype}\n")
                f.write(f"# source: NVIDIA aiconfigurator-core {ver} (PyPI), Apache-2.0\n")
                f.write("#   https://pypi.org/project/aiconfigurator-core/ ; "
                        "https://github.com/ai-dynamo/aiconfigurator\n")
                f.write(f"#   aiconfigurator_core/{rel}\n")
                f.write(f"#   framework {engine} {ev}, op_name moe, moe_dtype {src_dtype}, "
                        f"distribution {DISTRIBUTION}, kernel_source "
                        + " / ".join(sorted(kernels)) + "\n")
                f.write("# converted by scripts/moe-tables.py: the expert shapes of "
                        + ", ".join(sorted(set(MODELS.values())))
                        + f"; moe_tp x moe_ep <= {MAX_GROUP}\n")
                f.write("# columns: hidden inter (one expert's intermediate size, before "
                        "moe_tp splits it) topk experts moe_tp moe_ep tokens (entering the "
                        "layer on one GPU) and latency_us (one layer, one GPU)\n")
                f.write("hidden\tinter\ttopk\texperts\tmoe_tp\tmoe_ep\ttokens\tlatency_us\n")
                for key in sorted(rows):
                    f.write("\t".join(str(x) for x in key) + f"\t{rows[key][0]:.4g}\n")
            print(f"{name}: {len(rows)} rows from {rel}", file=sys.stderr)


if __name__ == "__main__":
    main()
