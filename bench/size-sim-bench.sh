#!/bin/sh
# size-sim-bench.sh: how long `kvplan size --gpus all` takes with the
# finalists simulated (issue 33's target: <= 10 s; a measurement, not a
# test).  Llama-3.1-70B, the chat workload, every built-in GPU at tp
# 1,2,4,8, TTFT 1 s and TPOT 50 ms at p50: first at 4 requests/s, then for
# 300 concurrent users (a closed loop); each with --simulate 8 (the eight
# cheapest configurations sized again on the serving-loop simulator) and
# --simulate 0 (closed forms only) for comparison.  One core (taskset -c 0
# where it exists); prints the CPU, the wall and CPU seconds of each run
# and the rows simulated.
#
# Usage: bench/size-sim-bench.sh [PATH-TO-KVPLAN]     (default: ./kvplan)
#        K=16 bench/size-sim-bench.sh                 (another finalist count)
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
kvplan=${1:-$top/kvplan}
k=${K:-8}
[ -x "$kvplan" ] || { echo "size-sim-bench: build kvplan first (make)" >&2; exit 1; }
pin=""
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "CPU: ${cpu:-unknown} (one core${pin:+, taskset -c 0}); load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"
tmp=${TMPDIR:-/tmp}/size-sim-bench.$$
trap 'rm -f "$tmp" "$tmp.t"' EXIT
common="--model llama-3.1-70b --workload chat --ttft 1 --tpot 0.05 --gpus all --format csv"
printf '%-22s %10s %8s %8s %10s\n' load simulate wall_s cpu_s simulated
for load in "--rate 4" "--users 300"; do
	for n in "$k" 0; do
		t0=$(date +%s.%N)
		if [ -x /usr/bin/time ]; then
			/usr/bin/time -f "%U %S" -o "$tmp.t" $pin "$kvplan" size $common $load --simulate "$n" >"$tmp" || true
			cpu_s=$(awk '{printf "%.2f", $1 + $2}' "$tmp.t")
		else
			$pin "$kvplan" size $common $load --simulate "$n" >"$tmp" || true
			cpu_s="?"
		fi
		t1=$(date +%s.%N)
		# the CSV's simulated column, by its header
		sims=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "simulated") c = i; next }
			c && $c == "true" { n++ } END { print n + 0 }' "$tmp")
		printf '%-22s %10s %8.2f %8s %10s\n' "$load" "$n" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$cpu_s" "$sims"
	done
done
echo "target: --simulate $k on every GPU <= 10 s"
