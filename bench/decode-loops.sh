#!/bin/sh
# decode-loops.sh: the CPU decode's inner loops alone, in L2, one copy
# (avx2, avx512) against the other on one thread (a measurement, not a
# test; bench/decode-loops.c says what it times).  Prints the CPU it ran
# on, then ns per token and KV head (best and median of ROUNDS alternating
# rounds) and GB/s per CPU-second, for GQA-4 and MHA in fp32, bf16, int8
# and fp8.  Needs the build (libkvbench.a) and a C compiler.
#
# Usage: bench/decode-loops.sh [ROUNDS]      (default 5)
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
build=${KVP_BUILD:-$top}
[ -f "$build/libkvbench.a" ] || { echo "decode-loops: build first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I"$build" -I"$top/kernels" \
	-I"$top/src" "$top/bench/decode-loops.c" "$build/libkvbench.a" -lpthread -lm -o "$tmp/decode-loops"
grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true
pin=""
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"
$pin "$tmp/decode-loops" "${1:-5}"
