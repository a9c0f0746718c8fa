#!/bin/sh
# cli-run-device.sh: the one-shot device script's dry run on the CPU
# backend (the same script, order and deadline logic as on the GPU, small
# sizes): it keeps its deadline, cuts or skips the benches that do not fit
# and says so, keeps the points a cut bench finished, writes env.txt with the
# commit passed in, stops its logger by PID, and ends with summary lines.
# The pre-flight is checked with stand-in nvidia-smi and nvcc scripts: no
# device exits 77, a driver older than the toolkit exits 1 and says so.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
SCRIPT="$top_srcdir/kernels/run-device.sh"

# Mistakes: exit 2.
run "$SCRIPT" --deadline soon
expect_rc 2
expect_err "--deadline: 'soon'"
run "$SCRIPT" --backend tpu
expect_rc 2
expect_err "--backend: 'tpu'"

# A deadline that the build itself passes: said, nothing measured, exit 1.
run env OUT="$tmp/cut" BUILD="$tmp/cutbuild" "$SCRIPT" --backend cpu --deadline 1
expect_rc 1
if grep -q 'build failed or cut by the deadline' "$tmp/cut/summary.txt"; then ok
else bad "summary: $(cat "$tmp/cut/summary.txt")"; fi

# The dry run under a deadline too short for the sweep: 20 s for the
# benches (the build first, apart, as --build-only does on a device, so a
# loaded machine's compile time does not decide the test).  It must end
# within the deadline (+ 5 s for the last kill and the summary) and say
# what the deadline cut.
run env OUT="$tmp/drybuild" BUILD="$tmp/drybuild" "$SCRIPT" --backend cpu --build-only
expect_rc 0
s=$(date +%s)
run env OUT="$tmp/dry" KVBENCH="$tmp/drybuild/kvbench" GIT_REV=0123abcd MIN_S=3 "$SCRIPT" \
	--backend cpu --deadline 20
took=$(( $(date +%s) - s ))
expect_rc 1
if [ "$took" -le 25 ]; then ok; else bad "the dry run took $took s with a 20 s deadline: $(grep '^[#$ ]' "$tmp/dry/log.txt")"; fi
expect_out "# summary:"
if grep -q '^git: 0123abcd$' "$tmp/dry/env.txt"; then ok; else bad "env.txt: $(head -n 5 "$tmp/dry/env.txt")"; fi
if grep -q '^cpu: ' "$tmp/dry/env.txt"; then ok; else bad "env.txt has no cpu line"; fi
if grep -q 'skipped by the deadline\|cut by the deadline' "$tmp/dry/summary.txt"; then ok
else bad "nothing cut or skipped: $(cat "$tmp/dry/summary.txt")"; fi
# the benches after the cut one are skipped, in priority order: the last
# one (dims-groups) never ran
if grep -q '^bench dims-groups: skipped by the deadline' "$tmp/dry/summary.txt"; then ok
else bad "dims-groups ran: $(cat "$tmp/dry/summary.txt")"; fi
# a cut bench keeps the points it finished, in a file kvbench's readers take
for y in "$tmp"/dry/*.yaml; do
	[ -s "$y" ] || continue
	if grep -q '^kvbench:' "$y"; then ok; else bad "$y: no header"; fi
done
# the logger was stopped by its PID
pid=$(sed -n 's/^# logger PID \([0-9]*\) .*/\1/p' "$tmp/dry/log.txt")
if [ -n "$pid" ] && ! kill -0 "$pid" 2>/dev/null; then ok; else bad "logger '$pid' still runs"; fi
if [ -s "$tmp/dry/clocks.csv" ]; then ok; else bad "no clocks.csv"; fi

# Pre-flight with stand-ins: no device, then a driver older than nvcc.
mkdir -p "$tmp/bin"
cat >"$tmp/bin/nvcc" <<'EOF'
#!/bin/sh
echo "Cuda compilation tools, release 13.0, V13.0.88"
EOF
cat >"$tmp/bin/nvidia-smi" <<'EOF'
#!/bin/sh
[ "${FAKE_GPU:-0}" = 1 ] || { echo "No devices were found" >&2; exit 6; }
case "$1" in -L) echo "GPU 0: NVIDIA H200 (UUID: GPU-0)" ;;
*) echo "| NVIDIA-SMI 550.54   Driver Version: 550.54   CUDA Version: 12.4 |" ;; esac
EOF
chmod +x "$tmp/bin/nvcc" "$tmp/bin/nvidia-smi"
run env PATH="$tmp/bin:$PATH" NVCC="$tmp/bin/nvcc" OUT="$tmp/nodev" "$SCRIPT"
expect_rc 77
expect_out "no CUDA device"
run env PATH="$tmp/bin:$PATH" NVCC="$tmp/bin/nvcc" OUT="$tmp/olddrv" FAKE_GPU=1 "$SCRIPT"
expect_rc 1
expect_out "the driver is too old for this toolkit: it runs CUDA up to 12.4, nvcc is 13.0"
# env.txt was written before the pre-flight and the build
if grep -q '^nvcc: 13.0' "$tmp/olddrv/env.txt"; then ok; else bad "env.txt: $(cat "$tmp/olddrv/env.txt")"; fi
finish
