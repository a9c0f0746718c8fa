#!/bin/sh
# decode-memory.sh: the CPU decode from memory against the read ceiling
# measured in the same round (a measurement, not a test;
# bench/decode-memory.c says how it pairs them).  Prints the CPU it ran on,
# then per point the median read and decode GB/s and the quartiles of
# decode / read with the software prefetch on and off.  Needs the build
# (libkvbench.a), a C compiler and about 2.5 GB of memory; about 2 minutes
# at 11 rounds.
#
# Usage: bench/decode-memory.sh [ROUNDS]      (default 11)
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
build=${KVP_BUILD:-$top}
[ -f "$build/libkvbench.a" ] || { echo "decode-memory: build first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I"$build" -I"$top/kernels" \
	-I"$top/src" "$top/bench/decode-memory.c" "$build/libkvbench.a" -lpthread -lm -o "$tmp/decode-memory"
grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true
"$tmp/decode-memory" "${1:-11}"
