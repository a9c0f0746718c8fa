#!/usr/bin/env python3
"""sweep.py: how many sequences fit, for 5 models on every GPU kvplan
knows, the notebook way: one kvplan.sweep() call, a table, and a chart when
matplotlib is installed.

    pip install ./python                 # once, from the top of the checkout
    python3 examples/sweep.py [--context N] [--engine vllm] [--out sweep.png]

Each cell is the budget of one GPU (tp 1) under the engine's memory policy
at --context tokens per sequence: the concurrent sequences the KV pool
holds (0 where the weights alone do not fit).  With pandas the sweep is a
DataFrame, pivoted into the table; without it, a list of kvplan.Budget.
"""
import argparse
import sys

import kvplan

# five dense models of 3.8-9 B parameters, so that most GPUs hold them
MODELS = ["phi-3-mini-4k", "mistral-7b-v0.1", "qwen2.5-7b", "llama-3.1-8b", "gemma-2-9b"]


def table(rows, gpus):
    """Print max sequences, one line per model, one column per GPU."""
    width = max(len(g) for g in gpus)
    print("max sequences".ljust(18) + "".join(g.rjust(width + 1) for g in gpus))
    cell = {(r.model, r.gpu): r.max_sequences for r in rows}
    for m in MODELS:
        print(m.ljust(18) + "".join(str(cell[(m, g)]).rjust(width + 1) for g in gpus))


def plot(rows, gpus, path, title):
    """Grouped bars: one group per GPU, one bar per model."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("sweep.py: matplotlib is not installed: no chart", file=sys.stderr)
        return
    cell = {(r.model, r.gpu): r.max_sequences for r in rows}
    fig, ax = plt.subplots(figsize=(max(8, len(gpus) * 0.8), 5))
    n = len(MODELS)
    w = 0.8 / n
    for i, m in enumerate(MODELS):
        ax.bar([k + (i - (n - 1) / 2) * w for k in range(len(gpus))],
               [cell[(m, g)] for g in gpus], w, label=m)
    ax.set_xticks(range(len(gpus)))
    ax.set_xticklabels(gpus, rotation=45, ha="right")
    ax.set_ylabel("max concurrent sequences")
    ax.set_title(title)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print("sweep.py: wrote %s" % path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--context", type=int, default=4096, help="tokens per sequence")
    ap.add_argument("--engine", default="vllm", help="generic, vllm, sglang, trtllm")
    ap.add_argument("--out", default="sweep.png", help="the chart (matplotlib)")
    a = ap.parse_args()
    gpus = kvplan.profiles("gpus")
    engine = kvplan.Engine(a.engine)
    result = kvplan.sweep(MODELS, gpus, engine, context=a.context)
    if isinstance(result, list):
        rows = result
        table(rows, gpus)
    else:  # a pandas DataFrame
        print(result.pivot(index="model", columns="gpu", values="max_sequences")
              .reindex(index=MODELS, columns=gpus).to_string())
        rows = [kvplan.Budget(**r) for r in result.to_dict("records")]
    title = "max sequences at %d tokens, %s %s, tp 1" % (a.context, engine.name, engine.version)
    plot(rows, gpus, a.out, title)


if __name__ == "__main__":
    main()
