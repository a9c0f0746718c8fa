#!/usr/bin/env python3
# gemm-tables.py: convert NVIDIA aiconfigurator's measured GEMM tables
# (Apache-2.0, PyPI package aiconfigurator-core) into the compact tables kvplan
# interpolates in C (profiles/kernels/gemm-<gpu>-<dtype>.tsv, read by
# src/time/gemm-table.c).  One-off data conversion, run by hand; neither the
# build nor the tests need Python or pyarrow.  Issue 32.
#
# Usage (from the repository root, the packages in a venv OUTSIDE the tree):
#   python3 -m venv /tmp/i32-tables-venv
#   /tmp/i32-tables-venv/bin/pip install aiconfigurator==0.12.0 pyarrow
#   /tmp/i32-tables-venv/bin/python scripts/gemm-tables.py profiles/kernels
#
# What is taken, and nothing else:
#   - one engine's table per GPU: TensorRT-LLM's (kernel_source torch_flow,
#     the engine of most of tests/data/perf-measured/), the version
#     aiconfigurator ships for that GPU (SYSTEMS below);
#   - gemm_dtype bfloat16 -> <gpu>-bf16, fp8 (per-tensor scaled) -> <gpu>-fp8,
#     nvfp4 (Blackwell: B200, GB200, RTX PRO 6000) -> <gpu>-nvfp4;
#     fp8_block and int4/int8 weight-only are left out (kvplan times
#     them at the constant efficiency, not with a table that is not theirs);
#   - M at the powers of two the source measured (1 .. 32768), N and K at
#     512 .. 16384 in powers of two (a subsample, to keep the tables
#     small; kvplan interpolates in log2 between the grid points);
#   - each row: m n k and the achieved TFLOP/s, 2 m n k / latency, the latency
#     as measured (column `latency`, milliseconds, in the parquet).
# The aiconfigurator GPU name -> kvplan GPU profile (profiles/gpus/<name>.yaml)
# map is exact: the device string the collector recorded is written beside each
# table, and only profiles of that very board are mapped (A100 40 GB, H100
# PCIe, A100 PCIe have no table of their own in 0.12.0 and get none).
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
NK = [512, 1024, 2048, 4096, 8192, 16384]


def system_peaks(core_dir, system):
    """The peaks and memory bandwidth aiconfigurator's system file states
    (for the header only; kvplan's own GPU profile keeps its peaks)."""
    out = {}
    comment = []
    path = os.path.join(core_dir, "systems", system + ".yaml")
    with open(path) as f:
        for line in f:
            s = line.strip()
            if s.startswith("#") and "clock" in s.lower():
                comment.append(s.lstrip("# "))
            for key in ("mem_bw", "bfloat16_tc_flops", "fp8_tc_flops"):
                if s.startswith(key + ":"):
                    out[key] = float(s.split(":", 1)[1].split("#")[0])
    return out, comment


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gemm-tables.py OUTDIR")
    outdir = sys.argv[1]
    import aiconfigurator_core

    core_dir = os.path.dirname(aiconfigurator_core.__file__)
    ver = pkg_version("aiconfigurator-core") if pkg_version else "unknown"
    os.makedirs(outdir, exist_ok=True)
    for gpu, system, engine, ev in SYSTEMS:
        rel = f"systems/data/{system}/gemm/{engine}/{ev}/gemm_perf.parquet"
        t = pq.read_table(os.path.join(core_dir, rel)).to_pydict()
        peaks, clock = system_peaks(core_dir, system)
        for src_dtype, dtype in DTYPES:
            rows = {}
            device = kernel = None
            for i in range(len(t["m"])):
                if t["gemm_dtype"][i] != src_dtype:
                    continue
                m, n, k = t["m"][i], t["n"][i], t["k"][i]
                if m & (m - 1) or n not in NK or k not in NK:
                    continue
                lat_ms = t["latency"][i]
                if not lat_ms > 0:
                    continue
                device, kernel = t["device"][i], t["kernel_source"][i]
                rows[(m, n, k)] = 2.0 * m * n * k / (lat_ms * 1e-3) / 1e12
            if not rows:
                continue
            ms = sorted({r[0] for r in rows})
            missing = [(m, n, k) for m in ms for n in NK for k in NK if (m, n, k) not in rows]
            if missing:
                sys.exit(f"{rel}: {src_dtype}: grid incomplete, e.g. {missing[:3]}")
            name = f"gemm-{gpu}-{dtype}.tsv"
            with open(os.path.join(outdir, name), "w") as f:
                f.write(f"# {name}: measured GEMM throughput, {device}, {dtype}\n")
                f.write(f"# source: NVIDIA aiconfigurator-core {ver} (PyPI), Apache-2.0\n")
                f.write("#   https://pypi.org/project/aiconfigurator-core/ ; "
                        "https://github.com/ai-dynamo/aiconfigurator\n")
                f.write(f"#   aiconfigurator_core/{rel}\n")
                f.write(f"#   framework {engine} {ev}, kernel_source {kernel}, "
                        f"gemm_dtype {src_dtype}, op_name gemm\n")
                f.write("# clocks: the collector records none; its system file "
                        f"(systems/{system}.yaml) states mem_bw "
                        f"{peaks.get('mem_bw', 0) / 1e9:.0f} GB/s, bf16 "
                        f"{peaks.get('bfloat16_tc_flops', 0) / 1e12:.1f} TFLOP/s, fp8 "
                        f"{peaks.get('fp8_tc_flops', 0) / 1e12:.1f} TFLOP/s")
                f.write("".join(f"\n#   ({c})" for c in clock) + "\n")
                f.write("# converted by scripts/gemm-tables.py: M at powers of two, N and K in "
                        + " ".join(str(x) for x in NK) + "\n")
                f.write("# columns: m n k (C[m x n] = A[m x k] B[k x n]) and tflops = "
                        "2 m n k / measured latency / 1e12\n")
                f.write("m\tn\tk\ttflops\n")
                for m in ms:
                    for n in NK:
                        for k in NK:
                            f.write(f"{m}\t{n}\t{k}\t{rows[(m, n, k)]:.4g}\n")
            print(f"{name}: {len(ms) * len(NK) ** 2} rows from {rel}", file=sys.stderr)


if __name__ == "__main__":
    main()
