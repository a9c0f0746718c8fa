#!/usr/bin/env python3
"""api-bench.py: the time of one kvplan.budget() call from Python (the
package in python/, over include/kvplan.h), model, GPU and engine loaded:
issue 40's targets are at most 100 us a call and 1,000,000 calls in at most
2 minutes.

    python3 bench/api-bench.py [CALLS]      (default 100000; 1000000 for the target)

Run it with the Python the package is installed in (pip install ./python).
Prints the median of 9 runs of CALLS / 9 calls, in wall and in process CPU
time, the total, and the CPU it ran on.  Each call varies the batch.
"""
import platform
import statistics
import sys
import time

import kvplan


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def main() -> None:
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
    m, g, e = kvplan.Model("llama-3.1-8b"), kvplan.GPU("h100-sxm"), kvplan.Engine("vllm")
    per = max(1, calls // 9)
    wall, cpu = [], []
    t_all = time.perf_counter()
    for _ in range(9):
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(per):
            kvplan.budget(m, g, e, context=8192, batch=1 + (i & 255))
        wall.append((time.perf_counter() - t0) / per)
        cpu.append((time.process_time() - c0) / per)
    total = time.perf_counter() - t_all
    print("api-bench.py: kvplan.budget llama-3.1-8b on h100-sxm (vllm %s), context 8192: "
          "%.1f us per call (median of 9 x %d; min %.1f, max %.1f), %.1f us of CPU time; "
          "%d calls in %.1f s; %s; Python %s; kvplan %s"
          % (e.version, statistics.median(wall) * 1e6, per, min(wall) * 1e6,
             max(wall) * 1e6, statistics.median(cpu) * 1e6, 9 * per, total, cpu_name(),
             platform.python_version(), kvplan.version()))


if __name__ == "__main__":
    main()
