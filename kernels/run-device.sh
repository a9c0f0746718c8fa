#!/bin/sh
# run-device.sh: build kvbench on a GPU machine and run issue 3's sweep in
# one call that cannot waste itself.
#
# For a machine with nvcc and a C compiler but no autotools, no libyaml and
# no network: kvbench is built with plain nvcc and cc lines as a
# -DKVBENCH_STANDALONE program (the kernels, the reference, the driver,
# src/base/units.c and src/out/output.c; not the rest of the planner's library, so no
# predictions: `kvplan validate` compares the results with the planner
# afterwards).
#
# The stance: a device call is short and paid for, so everything is under
# one deadline (default 480 s, build included) and the benches run in
# priority order, each with the time left as its timeout: validation, the
# million-token points, capacity, then the rest.  kvbench appends each point
# to its --out file as it finishes, so a bench cut by the deadline keeps the
# points it finished; a bench with too little time left is skipped and says
# so.  env.txt (nvidia-smi, driver, nvcc, the kernels' register counts from
# -Xptxas -v) is written before the build, so a failed build still leaves
# it; a clock and power logger runs in the background and is stopped by its
# PID; the last lines are one summary line per target.
#
# Usage: kernels/run-device.sh [--backend cuda|cpu] [--deadline S] [--quick]
#                              [--build-only]
#   --backend cpu  the same script, the same order and deadline logic, on
#                  the CPU backend with small sizes (no nvcc needed): the dry
#                  run that CI runs (tests/cli-run-device.sh)
#   --cpu-only     the same as --backend cpu
#   --deadline S   the whole call, build included, in seconds (default 480)
#   --quick        validation and one small timed run only
#   --build-only   build, print the binary's path, stop
# Environment: OUT (results folder; default reports/h200/run-DATE), CC
# (default cc), NVCC (default nvcc on PATH, else /usr/local/cuda/bin/nvcc),
# CUDA_ARCH (default sm_90), BUILD (build folder; default a temporary one),
# KVBENCH (a kvbench built before with --build-only: no build, the whole
# deadline for the benches),
# GIT_REV (the commit being run: the copy on the device has no .git).
# Results: OUT/env.txt, OUT/ptxas.txt (registers, spills per kernel),
# OUT/<bench>.yaml (kvbench --out, what `kvplan validate` reads),
# OUT/<bench>.txt (kvbench's table), OUT/clocks.csv (the logger),
# OUT/summary.txt (the summary lines), OUT/log.txt (every command, its output).
# Exit: 0 every bench ran and passed, 1 a build, a validation or a bench
# failed or was cut or skipped by the deadline, or the driver is older than
# the toolkit, 2 usage, 77 no CUDA device.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
build_only=0 backend=cuda quick=0 deadline=480
while [ $# -gt 0 ]; do
	case "$1" in
	--build-only) build_only=1 ;;
	--cpu-only) backend=cpu ;;
	--backend)
		[ $# -ge 2 ] || { echo "run-device.sh: --backend needs cuda or cpu" >&2; exit 2; }
		case "$2" in cuda|cpu) backend=$2 ;;
		*) echo "run-device.sh: --backend: '$2' is not cuda or cpu" >&2; exit 2 ;; esac
		shift ;;
	--deadline)
		[ $# -ge 2 ] || { echo "run-device.sh: --deadline needs seconds" >&2; exit 2; }
		case "$2" in ''|*[!0-9]*) echo "run-device.sh: --deadline: '$2' is not whole seconds" >&2
			exit 2 ;; esac
		deadline=$2
		shift ;;
	--quick) quick=1 ;;
	-h|--help) sed -n '2,45p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "run-device.sh: unknown argument '$1'" >&2; exit 2 ;;
	esac
	shift
done

t0=$(date +%s)
end=$((t0 + deadline))
left() { echo $((end - $(date +%s))); }

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
summary=$out/summary.txt
: >"$summary"

say() { printf '%s\n' "$*" | tee -a "$log"; }
sum() { printf '%s\n' "$*" >>"$summary"; }

# run CMD...: log the command, keep its output, say when it failed.
run() {
	say "\$ $*"
	"$@" >>"$log" 2>&1
	rc=$?
	[ "$rc" = 0 ] || say "  -> exit $rc"
	return "$rc"
}

# The logger, stopped by its own PID (never by name) on every way out.
logger_pid=
stop_logger() {
	if [ -n "$logger_pid" ]; then
		kill "$logger_pid" 2>/dev/null
		wait "$logger_pid" 2>/dev/null
		logger_pid=
	fi
}
trap 'stop_logger' EXIT
trap 'stop_logger; exit 1' INT TERM

# ------------------------------------------------------------ environment
# Before the build: a build that fails still leaves what it ran on.
rev=${GIT_REV:-}
if [ -z "$rev" ]; then
	if [ -e "$top/.git" ] && command -v git >/dev/null 2>&1; then
		rev=$(git -C "$top" rev-parse HEAD 2>/dev/null || echo unknown)
		git -C "$top" diff --quiet HEAD 2>/dev/null || rev="$rev (with uncommitted changes)"
	else
		rev="unknown (no .git here: pass GIT_REV=<commit>)"
	fi
fi
nvcc_version=
[ -x "$NVCC" ] && nvcc_version=$("$NVCC" --version 2>&1 | sed -n 's/.*release \([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p')
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host: $(uname -a)"
	echo "script: $0 --backend $backend --deadline $deadline$([ "$quick" = 1 ] && echo ' --quick')"
	echo "git: $rev"
	echo "cc: $("$CC" --version 2>&1 | head -n 1)"
	echo "nvcc: ${nvcc_version:-none} ($NVCC)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo 2>/dev/null | cut -d: -f2)"
	echo "cpus: $(getconf _NPROCESSORS_ONLN 2>/dev/null)"
	echo "memory: $(grep -m1 MemTotal /proc/meminfo 2>/dev/null | tr -s ' ')"
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
say "# kvbench device run $stamp in $out, backend $backend, deadline $deadline s (git $rev)"

# ------------------------------------------------------------- pre-flight
# "No device" and "a driver too old for this toolkit" are different
# failures with different fixes: tell them apart before building.
if [ "$backend" = cuda ] && [ "$build_only" = 0 ]; then
	if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
		say "run-device.sh: no CUDA device (nvidia-smi missing or lists no GPU)"
		sum "no CUDA device: nothing measured"
		exit 77
	fi
	drv_cuda=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9][0-9]*\.[0-9][0-9]*\).*/\1/p' | head -n 1)
	if [ -n "$drv_cuda" ] && [ -n "$nvcc_version" ]; then
		# major.minor as one number: 12.4 -> 1204
		num() { echo "$1" | awk -F. '{ printf "%d\n", $1 * 100 + $2 }'; }
		if [ "$(num "$drv_cuda")" -lt "$(num "$nvcc_version")" ]; then
			say "run-device.sh: the driver is too old for this toolkit: it runs CUDA up to $drv_cuda, nvcc is $nvcc_version; use an nvcc of $drv_cuda or older (NVCC=...)"
			sum "driver too old for this toolkit (driver CUDA $drv_cuda < nvcc $nvcc_version): nothing measured"
			exit 1
		fi
	fi
fi

# ------------------------------------------------------------------ build
if [ -n "${KVBENCH:-}" ]; then
	# a kvbench built before (--build-only): the deadline is the benches'
	[ -x "$KVBENCH" ] || { say "run-device.sh: KVBENCH=$KVBENCH is not an executable"; exit 2; }
	say "# using the kvbench built before: $KVBENCH"
	kvbench=$KVBENCH
else
cflags="-std=c11 -O2 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -DKVBENCH_STANDALONE"
cflags="$cflags -I$top/src -I$top/kernels"
csrc="kernels/kvbench.c kernels/kvbench-opts.c kernels/kvbench-sweep.c kernels/kvbench-capacity.c
      kernels/kvbench-out.c kernels/paged.c kernels/paged-fill.c kernels/decode-ref.c kernels/decode-cpu.c
      kernels/stream.c kernels/timing.c src/base/units.c src/out/output.c src/base/error.c src/base/atomic-file.c src/base/input-file.c src/base/utf8.c"
objs=""
if [ "$backend" = cuda ]; then
	if [ ! -x "$NVCC" ]; then
		say "run-device.sh: no nvcc ($NVCC); --backend cpu builds without it"
		exit 1
	fi
	cuda_prefix=$(dirname "$(dirname "$NVCC")")
	# nvcc takes the longest: start it first, compile the C files meanwhile.
	# -Xptxas -v: registers, shared memory and spills per kernel.
	say "\$ $NVCC -O3 -arch=$CUDA_ARCH -std=c++17 -Xptxas -v -I$top/kernels -c $top/kernels/decode-cuda.cu -o $build/decode-cuda.o"
	timeout "$(left)" "$NVCC" -O3 -arch="$CUDA_ARCH" -std=c++17 -Xptxas -v -I"$top/kernels" \
		-c "$top/kernels/decode-cuda.cu" -o "$build/decode-cuda.o" >"$build/nvcc.log" 2>&1 &
	nvcc_pid=$!
	cflags="$cflags -DHAVE_CUDA"
fi
for f in $csrc; do
	o=$build/$(basename "$f" .c).o
	# (timeout 0 would mean no limit: a passed deadline stops here)
	[ "$(left)" -gt 0 ] || { say "# the deadline passed during the build"; sum "build failed or cut by the deadline: nothing measured"; exit 1; }
	# shellcheck disable=SC2086 # cflags is a list
	run timeout "$(left)" "$CC" $cflags -c "$top/$f" -o "$o" || { sum "build failed or cut by the deadline: nothing measured"; exit 1; }
	objs="$objs $o"
done
if [ "$backend" = cuda ]; then
	wait "$nvcc_pid"
	rc=$?
	cat "$build/nvcc.log" >>"$log"
	grep -E 'Compiling entry|Used [0-9]+ registers|spill' "$build/nvcc.log" >"$out/ptxas.txt"
	{ echo; echo "ptxas -v (registers per kernel):"; sed 's/^/  /' "$out/ptxas.txt"; } >>"$out/env.txt"
	[ "$rc" = 0 ] || { say "  -> nvcc exit $rc"; tail -n 20 "$build/nvcc.log"; sum "build failed: nothing measured"; exit 1; }
	# shellcheck disable=SC2086
	run "$CC" $objs "$build/decode-cuda.o" -L"$cuda_prefix/lib64" -lcudart_static -ldl -lrt \
		-lpthread -lstdc++ -lm -o "$build/kvbench" || exit 1
else
	# shellcheck disable=SC2086
	run "$CC" $objs -lpthread -lm -o "$build/kvbench" || exit 1
fi
kvbench=$build/kvbench
say "# built $kvbench in $(( $(date +%s) - t0 )) s, $(left) s left"
fi
if [ "$build_only" = 1 ]; then
	echo "$kvbench"
	exit 0
fi

# ----------------------------------------------------------------- logger
if [ "$backend" = cuda ]; then
	nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_throttle_reasons.active \
		--format=csv -lms 500 >"$out/clocks.csv" 2>&1 &
	logger_pid=$!
else
	# the CPU's load and clock, once a second, the same way stopped
	( echo "time_s,load1,cpu_mhz"
	  while :; do
		printf '%s,%s,%s\n' "$(date +%s)" "$(cut -d' ' -f1 /proc/loadavg)" \
			"$(grep -m1 'cpu MHz' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')"
		sleep 1
	  done ) >"$out/clocks.csv" 2>&1 &
	logger_pid=$!
fi
say "# logger PID $logger_pid -> $out/clocks.csv"

# ----------------------------------------------------------------- benches
# bench NAME ARGS...: one kvbench run with the time left as its timeout;
# skipped when under MIN_S seconds are left.  Its points stay in NAME.yaml
# even when the deadline cuts it.
MIN_S=${MIN_S:-5}
failed=0
bench() {
	name=$1
	shift
	l=$(left)
	if [ "$l" -lt "$MIN_S" ]; then
		say "# skipped $name: deadline ($l s left)"
		sum "bench $name: skipped by the deadline ($l s left)"
		failed=1
		return 3
	fi
	say "\$ kvbench --backend $backend $* --out $name.yaml > $name.txt  (timeout $l s)"
	s=$(date +%s)
	timeout "$l" "$kvbench" --backend "$backend" "$@" --out "$out/$name.yaml" \
		>"$out/$name.txt" 2>>"$log"
	rc=$?
	n=$(grep -c '^  - ' "$out/$name.yaml" 2>/dev/null)
	n=${n:-0}
	took=$(( $(date +%s) - s ))
	case "$rc" in
	0) say "  $n points, $took s"; sum "bench $name: $n points in $took s" ;;
	77) say "kvbench: no CUDA device"; sum "no CUDA device: nothing measured"; exit 77 ;;
	124|137) say "  -> cut by the deadline after $took s, $n points kept"
		sum "bench $name: cut by the deadline after $took s, $n points kept"; failed=1 ;;
	*) say "  -> exit $rc, $n points, $took s"; sum "bench $name: exit $rc, $n points in $took s"
	   failed=1 ;;
	esac
	return "$rc"
}

# Sizes: the device's, or the CPU dry run's (the same shapes, fewer tokens).
if [ "$backend" = cuda ]; then
	V_CTX=700 S_CTX=24k S_B=2,4 M_B=64 M_CTX=16k M2_B=256 M2_CTX=4k
	CAP="--weights-bytes 16GiB --layers 32" STREAM="" REST_CTX=16k
else
	V_CTX=300 S_CTX=2k S_B=2 M_B=4 M_CTX=4k M2_B=16 M2_CTX=1k
	CAP="--gpu-memory 256MiB --weights-bytes 16MiB --layers 2" STREAM="--stream-bytes 64MiB"
	REST_CTX=2k
fi
# shellcheck disable=SC2086 # the size variables are lists of words
{
# 1. Validation: every instantiation (5 dtypes x group 1, 4, 8, 32, 3 x d
# 64/128/256 x P 1, 16, 7 at uneven lengths), then sequences long enough to
# split (24k tokens: the references are checked per sequence on all the
# CPU's threads, so several sequences, not one long one).
bench validate --validate-only --batch 3 --context $V_CTX --lengths uniform \
	--kv-dtype fp32,fp16,bf16,fp8,int8 --heads 32:32,32:8,64:8,32:1,24:8 \
	--head-dim 64,128,256 --block-size 1,16,7
vrc=$?
bench validate-split --validate-only --batch $S_B --context $S_CTX --kv-dtype bf16,fp8,int8 \
	--heads 32:32,64:8 --head-dim 128 --block-size 16
src=$?
if [ "$vrc" = 1 ] || [ "$src" = 1 ]; then
	say "validation failed: not timing"
	sum "validation FAILED: nothing timed"
	exit 1
fi
if [ "$quick" = 1 ]; then
	bench quick --batch 16 --context 4096 --heads 32:32,64:8 --kv-dtype bf16,fp8 $STREAM
else
# 2. The targets: >= 1M tokens (64 x 16K and 256 x 4K), d 128, block 16,
# bf16 and fp8, MHA (32:32) and GQA-8 (64:8, Llama-3-70B's layer).
bench million --batch $M_B --context $M_CTX --heads 32:32,64:8 --kv-dtype bf16,fp8 \
	--head-dim 128 --block-size 16 $STREAM
bench million-256 --batch $M2_B --context $M2_CTX --heads 32:32,64:8 --kv-dtype bf16,fp8 \
	--head-dim 128 --block-size 16 $STREAM
# 3. Capacity at utilization 1: the allocator's real limit, which the
# planner's arithmetic can miss (kvbench exits 1 when the allocator stopped
# short of the limit, as it must on a GPU: that is the measurement).
failed_before=$failed
bench capacity --capacity $CAP --utilization 1 --heads 32:8 --head-dim 128 \
	--kv-dtype bf16,fp8,int8 --block-size 16 --context 8k
if [ $? = 1 ] && [ "$(grep -c 'stopped_by: "allocator"' "$out/capacity.yaml" 2>/dev/null)" = 3 ]; then
	say "  capacity: every point stopped at the allocator's limit (expected at utilization 1)"
	failed=$failed_before
fi
# 4. The rest, most useful first.
bench million-dtypes --batch $M_B --context $M_CTX --heads 64:8 --kv-dtype fp32,fp16,int8 \
	--head-dim 128 --block-size 16 $STREAM
bench batch-context --batch 1,8,32,128 --context 2k,$REST_CTX --heads 32:32,64:8,32:4 \
	--kv-dtype bf16 --head-dim 128 --block-size 16 $STREAM
bench blocks --batch $M_B --context $M_CTX --heads 64:8 --kv-dtype bf16 --head-dim 128 \
	--block-size 1,8,32,128 $STREAM
bench uniform --batch $M_B --context $M_CTX --lengths uniform --heads 32:32,64:8 \
	--kv-dtype bf16,fp8 --head-dim 128 --block-size 16 $STREAM
bench dims-groups --batch $M_B --context 4k --heads 32:32,32:8,64:8,64:1 --kv-dtype bf16 \
	--head-dim 64,256 --block-size 16 $STREAM
fi
}
stop_logger

# ----------------------------------------------------------------- summary
# One line per target (issue 20): bf16 >= 85 %, fp8 >= 80 %, int8 >= 70 %
# of the copy ceiling (the CPU dry run: of the read ceiling) at the
# million-token points; capacity: what stopped each pool.
for f in "$out"/million.yaml "$out"/million-256.yaml "$out"/million-dtypes.yaml \
	 "$out"/quick.yaml; do
	[ -s "$f" ] || continue
	awk -v file="$(basename "$f" .yaml)" '
	function flush() {
		if (dt == "") return
		want = dt == "fp8" ? 0.80 : dt == "int8" ? 0.70 : 0.85
		verdict = val != "pass" ? "NOT VALIDATED" : ratio >= want ? "met" : "missed"
		printf "target %s %s %s:%s B %s x %s: %.1f%% of the %s ceiling (target %d%%): %s\n",
			file, dt, hq, hkv, b, ctx, 100 * ratio, rc, 100 * want, verdict
		dt = ""
	}
	/^  - / { flush() }
	{ sub(/^  - /, "    ") }
	/^    kv_dtype:/ { dt = $2; gsub(/"/, "", dt) }
	/^    num_heads:/ { hq = $2 }
	/^    num_kv_heads:/ { hkv = $2 }
	/^    batch:/ { b = $2 }
	/^    context:/ { ctx = $2 }
	/^    ratio:/ { ratio = $2 }
	/^    ratio_ceiling:/ { rc = $2; gsub(/"/, "", rc) }
	/^    validated:/ { val = $2; gsub(/"/, "", val) }
	END { flush() }' "$f" >>"$summary"
done
if [ -s "$out/capacity.yaml" ]; then
	awk '/^  - / { if (dt != "") print "capacity " dt ": " bl " blocks, stopped by the " st; dt = "" }
	     { sub(/^  - /, "    ") }
	     /^    kv_dtype:/ { dt = $2; gsub(/"/, "", dt) }
	     /^    blocks:/ { bl = $2 }
	     /^    stopped_by:/ { st = $2; gsub(/"/, "", st) }
	     END { if (dt != "") print "capacity " dt ": " bl " blocks, stopped by the " st }' \
		"$out/capacity.yaml" >>"$summary"
fi
say "# done in $(( $(date +%s) - t0 )) s of $deadline; results in $out"
say "# next, where kvplan is built: kvplan validate $out/*.yaml --calibrate (and --gpu h200)"
say "# summary:"
tee -a "$log" <"$summary"
exit "$failed"
