#!/bin/sh
# run-device.sh: build kvbench on a GPU machine and run issue 3's sweep.
#
# For a machine with nvcc and a C compiler but no autotools, no libyaml and
# no network: kvbench is built with plain nvcc and cc lines as a
# -DKVBENCH_STANDALONE program (the kernels, the reference, the driver,
# src/units.c and src/output.c; not the rest of the planner's library, so no
# predictions: `kvplan validate` compares the results with the planner
# afterwards).  Then it validates
# every kernel variant, runs the bandwidth sweep (batch x context x block x
# dtype x GQA; 1M-token points at d 128, block 16, bf16 and fp8, MHA and
# GQA-8) and a capacity run, in well under 8 minutes on an H200.
#
# Usage: kernels/run-device.sh [--build-only] [--cpu-only] [--quick]
#   --build-only  build, print the binary's path, stop
#   --cpu-only    build without nvcc (the CPU backend alone): how CI and
#                 machines without CUDA check the plain build line
#   --quick       the validation sweep and one small timed run only
# Environment: OUT (results folder; default reports/h200/run-DATE), CC
# (default cc), NVCC (default nvcc on PATH, else /usr/local/cuda/bin/nvcc),
# CUDA_ARCH (default sm_90), BUILD (build folder; default a temporary one).
# Results: OUT/env.txt (nvidia-smi, driver, GPU, clocks, date, commands),
# OUT/<run>.yaml (kvbench --out: environment, ceiling and every point, what
# `kvplan validate` and `kvplan perf --calibration` read), OUT/<run>.txt
# (the same as kvbench's table), OUT/log.txt (every command, its output).
# Exit: 0 ok, 1 a build, a validation or a run failed, 77 no CUDA device.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
build_only=0 cpu_only=0 quick=0
for a in "$@"; do
	case "$a" in
	--build-only) build_only=1 ;;
	--cpu-only) cpu_only=1 ;;
	--quick) quick=1 ;;
	-h|--help) sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-device.sh: unknown argument '$a'" >&2; exit 2 ;;
	esac
done

stamp=$(date -u +%Y-%m-%dT%H%M%SZ)
build=${BUILD:-$(mktemp -d)}
mkdir -p "$build" || exit 1
out=${OUT:-$top/reports/h200/run-$stamp}
[ "$build_only" = 1 ] && [ -z "${OUT:-}" ] && out=$build # no results: the log stays there
mkdir -p "$out" || exit 1
CC=${CC:-cc}
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
CUDA_ARCH=${CUDA_ARCH:-sm_90}
log=$out/log.txt

say() { printf '%s\n' "$*" | tee -a "$log"; }

# run NAME CMD...: log the command, keep its output, fail loudly.
run() {
	say "\$ $*"
	"$@" >>"$log" 2>&1
	rc=$?
	[ "$rc" = 0 ] || say "  -> exit $rc"
	return "$rc"
}

# ------------------------------------------------------------------ build
cflags="-std=c11 -O2 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DKVBENCH_STANDALONE"
cflags="$cflags -I$top/src -I$top/kernels"
csrc="kernels/kvbench.c kernels/paged.c kernels/decode-ref.c kernels/decode-cpu.c
      kernels/stream.c src/units.c src/output.c src/error.c src/atomic-file.c src/input-file.c src/utf8.c"
say "# kvbench device run $stamp in $out"
t0=$(date +%s)
objs=""
if [ "$cpu_only" = 0 ]; then
	if [ ! -x "$NVCC" ]; then
		say "run-device.sh: no nvcc ($NVCC); use --cpu-only for the CPU backend"
		exit 1
	fi
	cuda_prefix=$(dirname "$(dirname "$NVCC")")
	# nvcc takes the longest: start it first, compile the C files meanwhile.
	say "\$ $NVCC -O3 -arch=$CUDA_ARCH -std=c++17 -I$top/kernels -c $top/kernels/decode-cuda.cu -o $build/decode-cuda.o"
	"$NVCC" -O3 -arch="$CUDA_ARCH" -std=c++17 -I"$top/kernels" -c "$top/kernels/decode-cuda.cu" \
		-o "$build/decode-cuda.o" >"$build/nvcc.log" 2>&1 &
	nvcc_pid=$!
	cflags="$cflags -DHAVE_CUDA"
fi
for f in $csrc; do
	o=$build/$(basename "$f" .c).o
	# shellcheck disable=SC2086 # cflags and objs are lists
	run "$CC" $cflags -c "$top/$f" -o "$o" || exit 1
	objs="$objs $o"
done
if [ "$cpu_only" = 0 ]; then
	wait "$nvcc_pid"
	rc=$?
	cat "$build/nvcc.log" >>"$log"
	[ "$rc" = 0 ] || { say "  -> nvcc exit $rc"; tail -n 20 "$build/nvcc.log"; exit 1; }
	# shellcheck disable=SC2086
	run "$CC" $objs "$build/decode-cuda.o" -L"$cuda_prefix/lib64" -lcudart_static -ldl -lrt \
		-lpthread -lstdc++ -lm -o "$build/kvbench" || exit 1
else
	# shellcheck disable=SC2086
	run "$CC" $objs -lpthread -lm -o "$build/kvbench" || exit 1
fi
kvbench=$build/kvbench
say "# built $kvbench in $(( $(date +%s) - t0 )) s"
if [ "$build_only" = 1 ]; then
	echo "$kvbench"
	exit 0
fi
backend=cuda
[ "$cpu_only" = 1 ] && backend=cpu

# ------------------------------------------------------------ environment
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host: $(uname -a)"
	echo "script: $0 $*"
	echo "git: $(git -C "$top" rev-parse HEAD 2>/dev/null || echo unknown)"
	echo "cc: $("$CC" --version 2>&1 | head -n 1)"
	[ "$cpu_only" = 0 ] && echo "nvcc: $("$NVCC" --version 2>&1 | tail -n 2 | tr '\n' ' ')"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2)"
	echo "cpus: $(getconf _NPROCESSORS_ONLN 2>/dev/null)"
	if command -v nvidia-smi >/dev/null 2>&1; then
		echo
		nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.limit,pcie.link.gen.current,persistence_mode,compute_mode,ecc.mode.current --format=csv 2>&1
		echo
		nvidia-smi 2>&1
		echo
		nvidia-smi -q 2>&1
	else
		echo "nvidia-smi: not found"
	fi
} >"$out/env.txt" 2>&1

# bench NAME ARGS...: one kvbench run, its YAML, CSV and table kept.
failed=0
bench() {
	name=$1
	shift
	say "\$ kvbench --backend $backend $* --out $name.yaml > $name.txt"
	s=$(date +%s)
	timeout 300 "$kvbench" --backend "$backend" "$@" --progress --out "$out/$name.yaml" \
		>"$out/$name.txt" 2>>"$log"
	rc=$?
	if [ "$rc" = 77 ]; then
		say "kvbench: no CUDA device"
		exit 77
	fi
	[ "$rc" = 0 ] || { say "  -> exit $rc"; failed=1; }
	say "  $(grep -c '^  - ' "$out/$name.yaml" 2>/dev/null) points, $(( $(date +%s) - s )) s"
	return "$rc"
}

# --------------------------------------------------------------- validate
# Every instantiation: 5 dtypes x group 1, 4, 8, 32, 3 x d 64/128/256 x
# P 1, 16, 7 at uneven lengths; then long single sequences, which split.
bench validate --validate-only --batch 3 --context 700 --lengths uniform \
	--kv-dtype fp32,fp16,bf16,fp8,int8 --heads 32:32,32:8,64:8,32:1,24:8 \
	--head-dim 64,128,256 --block-size 1,16,7 || { say "validation failed: not timing"; exit 1; }
bench validate-split --validate-only --batch 1,2 --context 100000 --kv-dtype bf16,fp8,int8 \
	--heads 32:32,64:8 --head-dim 128 --block-size 16 || { say "validation failed: not timing"; exit 1; }
if [ "$quick" = 1 ]; then
	bench quick --batch 16 --context 4096 --heads 32:32,64:8 --kv-dtype bf16,fp8
	exit "$failed"
fi

# ------------------------------------------------------------------ sweep
# The targets: >= 1M tokens (64 x 16K and 256 x 4K), d 128, block 16, bf16
# and fp8, MHA (32:32) and GQA-8 (64:8, Llama-3-70B's layer).
bench million --batch 64 --context 16k --heads 32:32,64:8 --kv-dtype bf16,fp8 --head-dim 128 \
	--block-size 16
bench million-256 --batch 256 --context 4k --heads 32:32,64:8 --kv-dtype bf16,fp8 \
	--head-dim 128 --block-size 16
# The other dtypes at 1M tokens, GQA-8 (fp32 is 8 GiB there).
bench million-dtypes --batch 64 --context 16k --heads 64:8 --kv-dtype fp32,fp16,int8 \
	--head-dim 128 --block-size 16
# Block size at 1M tokens, GQA-8, bf16.
bench blocks --batch 64 --context 16k --heads 64:8 --kv-dtype bf16 --head-dim 128 \
	--block-size 1,8,32,128
# Batch x context, where split-KV and small launches show.
bench batch-context --batch 1,8,32,128 --context 2k,16k --heads 32:32,64:8,32:4 \
	--kv-dtype bf16 --head-dim 128 --block-size 16
# Head dims and groups at 256K tokens.
bench dims-groups --batch 64 --context 4k --heads 32:32,32:8,64:8,64:1 --kv-dtype bf16 \
	--head-dim 64,256 --block-size 16
# Uneven lengths (uniform on [1, 2 x 16K]).
bench uniform --batch 64 --context 16k --lengths uniform --heads 32:32,64:8 --kv-dtype bf16,fp8 \
	--head-dim 128 --block-size 16
# Capacity: an 8B-like model (32 layers, 8 KV heads, d 128) after 16 GiB of
# weights at utilization 0.9 of the whole GPU.
bench capacity --capacity --weights-bytes 16GiB --utilization 0.9 --layers 32 --heads 32:8 \
	--head-dim 128 --kv-dtype bf16,fp8,int8 --block-size 16 --context 8k

say "# done in $(( $(date +%s) - t0 )) s; results in $out"
say "# next, where kvplan is built: kvplan validate $out/*.yaml --calibrate (and --gpu h200)"
exit "$failed"
