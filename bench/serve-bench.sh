#!/bin/sh
# serve-bench.sh: the 100,000-request benchmark of `kvplan serve` (a
# measurement, not a test; issue 33's target: 100,000 simulated requests in
# at most 1 s of CPU on one core).  Prints the CPU it ran on
# (/proc/cpuinfo), then for each load the CPU time (user + system, GNU time;
# the machine may be shared, so CPU and not wall time is judged), the steps
# simulated, requests per CPU-second and the peak memory, which should stay
# flat from 10,000 to 100,000 requests: the simulator keeps only the running
# and waiting requests, fixed histograms and a fixed series.
#
# Usage: bench/serve-bench.sh [PATH-TO-KVPLAN]     (default: ./kvplan)
#        N=1000000 bench/serve-bench.sh            (another request count)
# Workload: Llama-3.1-8B on an H100 SXM under vLLM, the chat profile
# (lognormal prompts around 1,020 tokens, outputs around 129), seed 1.
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
kvplan=${1:-$top/kvplan}
n=${N:-100000}
[ -x "$kvplan" ] || { echo "serve-bench: build kvplan first (make)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "serve-bench: needs GNU time (/usr/bin/time)" >&2; exit 1; }
pin=""
command -v taskset >/dev/null 2>&1 && pin="taskset -c 0"
common="--model llama-3.1-8b --gpu h100-sxm --engine vllm --workload chat --format csv"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "CPU: ${cpu:-unknown} (one core${pin:+, taskset -c 0})"
echo "kvplan serve, $common"
printf '%-34s %9s %8s %9s %12s %9s\n' load requests cpu_s steps req/cpu_s peak_MiB
tmpf=$(mktemp)
trap 'rm -f "$tmpf" "$tmpf.csv"' EXIT

# bench LABEL REQUESTS ARGS...
bench() {
	label=$1
	reqs=$2
	shift 2
	/usr/bin/time -f "%U %S %M" -o "$tmpf" $pin "$kvplan" serve $common --requests "$reqs" "$@" \
		>"$tmpf.csv"
	steps=$(awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "steps") c = i }
			 NR == 2 { print $c }' "$tmpf.csv")
	awk -v l="$label" -v n="$reqs" -v s="$steps" '{ c = $1 + $2
		printf "%-34s %9d %8.3f %9d %12.0f %9.1f\n", l, n, c, s, (c > 0 ? n / c : 0), $3 / 1024 }' "$tmpf"
}

bench "Poisson 12/s (below the knee)" "$n" --rate 12
bench "Poisson 30/s (overloaded)" "$n" --rate 30
bench "closed loop, 256 users" "$n" --concurrency 256
bench "closed loop, 256 users, 3000 blocks" "$n" --concurrency 256 --num-blocks 3000
bench "Poisson 12/s, 10,000 requests" 10000 --rate 12
echo "target: $n requests <= 1 s of CPU on one core (issue 33)"
