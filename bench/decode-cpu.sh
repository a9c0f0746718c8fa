#!/bin/sh
# decode-cpu.sh: two measurements of the CPU decode (not tests;
# bench/decode-cpu.c says what each times).  Prints the CPU it ran on, then
#   loops:  ns per token and KV head of the inner loops alone in L2, one
#           instruction set (avx2, avx512) against the other, on one thread
#           (pinned to CPU 0 where taskset exists); default 5 rounds;
#   memory: per point the median read, decode and hot (the loop's compute
#           ceiling: the same decode with its data in L1) GB/s and the
#           quartiles of decode / the read of the same round, prefetch on
#           and off, and of decode / min(read, hot) of the round, on all
#           CPUs, every round redone (at most 3 times) when preempted
#           (kernels/rounds.h; the last two columns count the redone
#           runs and the clean rounds, over which the figures are taken
#           when there is one); about 2.5 GB of memory and 45 s
#           at the default 11 rounds on idle cores.
# Needs the build (libkvbench.a) and a C compiler.
#
# Usage: bench/decode-cpu.sh loops|memory [ROUNDS [HQ:HKV [DTYPE]]]
#        (memory: HQ:HKV and DTYPE run those points alone)
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
build=${KVP_BUILD:-$top}
case ${1:-} in
loops|memory) ;;
*) echo "usage: bench/decode-cpu.sh loops|memory [ROUNDS [HQ:HKV [DTYPE]]]" >&2; exit 2 ;;
esac
[ -f "$build/libkvbench.a" ] || { echo "decode-cpu: build first (make)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
${CC:-cc} -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -I"$build" -I"$top/kernels" \
	-I"$top/src" "$top/bench/decode-cpu.c" "$build/libkvbench.a" -lpthread -lm -o "$tmp/decode-cpu"
grep -m1 'model name' /proc/cpuinfo 2>/dev/null || true
pin=""
[ "$1" = loops ] && command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"
$pin "$tmp/decode-cpu" "$@"
