#!/bin/sh
# cli-run-device.sh: the one-shot device script.  Its --dry-run prints
# every command the GPU run would make, each under a timeout, and runs
# none.  Its CPU run (the same script, order and deadline logic as on the
# GPU, small sizes) keeps its deadline, cuts or skips the benches that do
# not fit and says so, keeps the points a cut bench finished, stops its
# logger by PID, and brings everything back as one tarball and one summary
# (a device call returns at most 8 files).  The pre-flight is checked with
# stand-in nvidia-smi and nvcc scripts: no device exits 77, a driver older
# than the toolkit exits 1, a hung nvidia-smi does not outlast the
# deadline, a busy GPU and the ECC state reach the summary.  The capacity
# check can fail, and its prediction is the planner's.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
SCRIPT="$top_srcdir/kernels/run-device.sh"

# the tarball a run left in $1, unpacked into $1.x; prints its folder
unpack() {
	mkdir -p "$1.x"
	for t in "$1"/run-*.tar.gz; do tar -xzf "$t" -C "$1.x"; done
	for d in "$1.x"/run-*; do echo "$d"; done
}

# Mistakes: exit 2.
run "$SCRIPT" --deadline soon
expect_rc 2
expect_err "--deadline: 'soon'"
run "$SCRIPT" --backend tpu
expect_rc 2
expect_err "--backend: 'tpu'"

# --dry-run: what the GPU run would do, in order, nothing run, nothing
# written; every command under a timeout.
run env OUT="$tmp/dryrun" BUILD="$tmp/drybuild0" "$SCRIPT" --dry-run
expect_rc 0
expect_out "-arch=sm_90"
expect_out "-Xptxas -v"
expect_out "nvidia-smi --query-compute-apps="
expect_out "ecc.mode.current"
expect_out "clocks_event_reasons.active"
# validation first, with the scale sweep on both kernels, then the benches
first=$(printf '%s\n' "$out" | grep 'kvbench --backend cuda' | head -n 1)
case "$first" in *"--validate-only"*"--out $tmp/drybuild0/run-"*"/validate.yaml"*) ok ;;
*) bad "first bench: $first" ;; esac
for ks in 1e-6,1 1,1e-6 1e3,1; do
	for pre in "] kvbench" "] KVBENCH_CUDA_KERNEL=cuda-core kvbench"; do
		if printf '%s\n' "$out" | grep -q -- "$pre --backend cuda --validate-only.*--kv-scale $ks "
		then ok; else bad "no scale validation '$pre' at $ks"; fi
	done
done
for b in million million-256 capacity million-dtypes batch-context blocks uniform dims-groups; do
	if printf '%s\n' "$out" | grep -q -- "--out $tmp/drybuild0/run-[^ ]*/$b.yaml"; then ok
	else bad "no bench $b"; fi
done
# every line but the comments is a command under a timeout
n=$(printf '%s\n' "$out" | grep -vc '^\(#\|\[timeout \)')
if [ "$n" = 0 ]; then ok; else bad "$n lines without a timeout: $(printf '%s\n' "$out" | grep -v '^\(#\|\[timeout \)')"; fi
if [ ! -e "$tmp/dryrun" ] && [ ! -e "$tmp/drybuild0" ]; then ok; else bad "the dry run wrote files"; fi
# the capacity check's prediction is the planner's: kvplan budget on an
# H200 at utilization 1 with the generic engine (kvbench is no serving
# engine: a CUDA context and the allocator's reserve), gpu_memory_bytes - overhead_bytes (143156 MiB =
# 150,109,945,856 B, less the generic engine's 1 GiB: 149,036,204,032)
expect_out "PREDICTED_FREE_BYTES=149036204032"
run "$KVPLAN" budget --engine generic --model llama-3.1-8b --gpu h200 --utilization 1 --format json
g=$(json gpu_memory_bytes)
o=$(json overhead_bytes)
if [ -n "$g" ] && [ -n "$o" ] && [ $((g - o)) = 149036204032 ]; then ok
else bad "kvplan: gpu_memory_bytes $g - overhead_bytes $o is not the script's 149036204032"; fi

# The capacity check can fail.  A GPU run's points: 16 GiB of weights, 2
# MiB blocks (32 layers x 2 x 8 heads x 16 x 128 x 2 B = 2,097,152 B).
# 62,874 blocks: 17,179,869,184 + 62,874 x 2,097,152 = 149,036,204,032 B,
# the prediction exactly: met.  55,000 blocks: 132,523,229,184 B, 11.1 %
# short: FAILED; so are a pool stopped by the limit and a device whose
# memory is not the profile's.
cap() { # blocks stopped_by memory_bytes
	cat <<EOF
kvbench:
  backend: "cuda"
points:
  - backend: "cuda"
    memory_bytes: $3
    utilization: 1
    weights_bytes: 17179869184
    kv_dtype: "bf16"
    block_bytes: 2097152
    blocks: $1
    stopped_by: "$2"
EOF
}
cap 62874 allocator 150109945856 >"$tmp/cap-ok.yaml"
run "$SCRIPT" --judge-capacity "$tmp/cap-ok.yaml"
expect_rc 0
expect_out "capacity check bf16: 149036204032 bytes allocated (17179869184 weights + 62874 x 2097152) against the planner's 149036204032 free on an h200 (+0.00%, within 2%)"
expect_out ": met"
cap 55000 allocator 150109945856 >"$tmp/cap-short.yaml"
run "$SCRIPT" --judge-capacity "$tmp/cap-short.yaml"
expect_rc 1
expect_out "132523229184 bytes allocated"
expect_out "(-11.08%, within 2%)"
expect_out ": FAILED"
cap 62874 limit 150109945856 >"$tmp/cap-limit.yaml"
run "$SCRIPT" --judge-capacity "$tmp/cap-limit.yaml"
expect_rc 1
cap 62874 allocator 85899345920 >"$tmp/cap-mem.yaml"
run "$SCRIPT" --judge-capacity "$tmp/cap-mem.yaml"
expect_rc 1
expect_out "device memory 85899345920 (profile 150109945856): FAILED"

# A deadline that the build itself passes: said, nothing measured, exit 1;
# still one tarball and one summary, nothing else.
run env OUT="$tmp/cut" BUILD="$tmp/cutbuild" "$SCRIPT" --backend cpu --deadline 1
expect_rc 1
if grep -q 'build failed or cut by the deadline' "$tmp"/cut/run-*-summary.txt; then ok
else bad "summary: $(cat "$tmp"/cut/run-*-summary.txt)"; fi
n=$(ls "$tmp/cut" | wc -l)
if [ "$n" = 2 ] && ls "$tmp"/cut/run-*.tar.gz >/dev/null 2>&1; then ok
else bad "OUT holds $n files: $(ls "$tmp/cut")"; fi

# The CPU run under a deadline too short for the sweep: 20 s for the
# benches (the build first, apart, as --build-only does on a device, so a
# loaded machine's compile time does not decide the test).  It must end
# within the deadline (+ 5 s for the last kill and the summary) and say
# what the deadline cut.
run env OUT="$tmp/drybuild" BUILD="$tmp/drybuild" "$SCRIPT" --backend cpu --build-only
expect_rc 0
s=$(date +%s)
run env OUT="$tmp/dry" BUILD="$tmp/drywork" KVBENCH="$tmp/drybuild/kvbench" GIT_REV=0123abcd \
	MIN_S=3 "$SCRIPT" --backend cpu --deadline 20
took=$(( $(date +%s) - s ))
expect_rc 1
expect_out "# summary:"
n=$(ls "$tmp/dry" | wc -l)
if [ "$n" = 2 ]; then ok; else bad "OUT holds $n files, not the tarball and the summary: $(ls "$tmp/dry")"; fi
d=$(unpack "$tmp/dry")
if [ "$took" -le 25 ]; then ok; else bad "the run took $took s with a 20 s deadline: $(grep '^[#$ ]' "$d/log.txt")"; fi
if grep -q '^git: 0123abcd$' "$d/env.txt"; then ok; else bad "env.txt: $(head -n 5 "$d/env.txt")"; fi
if grep -q '^cpu: ' "$d/env.txt"; then ok; else bad "env.txt has no cpu line"; fi
if cmp -s "$d/summary.txt" "$tmp"/dry/run-*-summary.txt; then ok; else bad "the summary beside the tarball differs"; fi
if grep -q 'skipped by the deadline\|cut by the deadline' "$d/summary.txt"; then ok
else bad "nothing cut or skipped: $(cat "$d/summary.txt")"; fi
# the benches after the cut one are skipped, in priority order: the last
# one (dims-groups) never ran
if grep -q '^bench dims-groups: skipped by the deadline' "$d/summary.txt"; then ok
else bad "dims-groups ran: $(cat "$d/summary.txt")"; fi
# a cut bench keeps the points it finished, in a file kvbench's readers take
for y in "$d"/*.yaml; do
	[ -s "$y" ] || continue
	if grep -q '^kvbench:' "$y"; then ok; else bad "$y: no header"; fi
done
# the logger was stopped by its PID
pid=$(sed -n 's/^# logger PID \([0-9]*\) .*/\1/p' "$d/log.txt")
if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then ok; else bad "logger '$pid' still runs"; fi
if [ -s "$d/clocks.csv" ]; then ok; else bad "no clocks.csv"; fi

# Pre-flight with stand-ins: no device, then a driver older than nvcc.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/nvcc" <<'EOF'
#!/bin/sh
[ "$1" = --version ] || exit 1
echo "Cuda compilation tools, release ${FAKE_NVCC:-13.0}, V13.0.88"
EOF
cat >"$tmp/bin/nvidia-smi" <<'EOF'
#!/bin/sh
[ "${FAKE_HANG:-0}" = 1 ] && exec sleep 1000
[ "${FAKE_GPU:-0}" = 1 ] || { echo "No devices were found" >&2; exit 6; }
case "$1" in
-L) echo "GPU 0: NVIDIA H200 (UUID: GPU-0)" ;;
--query-compute-apps=pid) echo "4242" ;;
--query-compute-apps=*) echo "pid, process_name, used_memory"; echo "4242, python, 80000 MiB" ;;
--query-gpu=utilization.gpu,memory.used) echo "97, 81234" ;;
--query-gpu=ecc.mode.current*) echo "Enabled, 0, 0, 0" ;;
--query-gpu=*) echo "stand-in" ;;
*) echo "| NVIDIA-SMI 550.54   Driver Version: 550.54   CUDA Version: 12.4 |" ;; esac
EOF
chmod +x "$tmp/bin/nvcc" "$tmp/bin/nvidia-smi"
run env PATH="$tmp/bin:$PATH" NVCC="$tmp/bin/nvcc" OUT="$tmp/nodev" "$SCRIPT"
expect_rc 77
expect_out "no CUDA device"
run env PATH="$tmp/bin:$PATH" NVCC="$tmp/bin/nvcc" OUT="$tmp/olddrv" FAKE_GPU=1 "$SCRIPT"
expect_rc 1
expect_out "the driver is too old for this toolkit: it runs CUDA up to 12.4, nvcc is 13.0"
# env.txt was written before the pre-flight and the build, and packed
d=$(unpack "$tmp/olddrv")
if grep -q '^nvcc: 13.0' "$d/env.txt"; then ok; else bad "env.txt: $(cat "$d/env.txt")"; fi
# A busy GPU (another process, 97 % load) and the ECC state reach the
# summary; the build (a stand-in nvcc that compiles nothing) fails after.
run env PATH="$tmp/bin:$PATH" NVCC="$tmp/bin/nvcc" OUT="$tmp/busy" BUILD="$tmp/busybuild" \
	FAKE_GPU=1 FAKE_NVCC=12.4 "$SCRIPT" --deadline 2
expect_rc 1
if grep -q '^gpu BUSY at the start: 1 other compute processes, utilization 97 %, 81234 MiB used' \
	"$tmp"/busy/run-*-summary.txt; then ok; else bad "summary: $(cat "$tmp"/busy/run-*-summary.txt)"; fi
if grep -q '^ecc (mode, .*): Enabled, 0, 0, 0' "$tmp"/busy/run-*-summary.txt; then ok
else bad "no ecc line: $(cat "$tmp"/busy/run-*-summary.txt)"; fi
# A hung nvidia-smi: every call is under a timeout inside the deadline, so
# the script ends (no device: 77) within the deadline and the few 1 s
# timeouts after it, not never.
s=$(date +%s)
run env PATH="$tmp/bin:$PATH" NVCC="$tmp/bin/nvcc" OUT="$tmp/hang" FAKE_HANG=1 "$SCRIPT" --deadline 6
took=$(( $(date +%s) - s ))
expect_rc 77
if [ "$took" -le 20 ]; then ok; else bad "a hung nvidia-smi held the script $took s with a 6 s deadline"; fi
finish
