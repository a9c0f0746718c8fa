#!/bin/sh
# size-bench.sh: how long `kvplan size` takes (issue 16's targets; a
# measurement, not a test):
#   search  one model over every built-in GPU and shape: mixtral-8x7b (8
#           routed experts, so dp and ep apply) at tp 1,2,4,8 x pp 1,2,4 x
#           dp 1,2,4,8 x ep 1,8 x KV auto,fp8 x colocated, 1:1, 1:2, every
#           GPU; target <= 1 s; then again with max_num_seqs caps
#           0,128,32,8 as a fifth axis
#   models  `kvplan size` (every GPU, tp 1,2,4,8) for 100 models: the
#           built-in ones in turn, again from the first; target <= 30 s
# Both on one core (taskset -c 0 where it exists).  Prints the wall seconds
# of each, the configurations sized, and the CPU.
#
# Usage: bench/size-bench.sh [PATH-TO-KVPLAN]     (default: ./kvplan)
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
kvplan=${1:-$top/kvplan}
[ -x "$kvplan" ] || { echo "size-bench: build kvplan first (make)" >&2; exit 1; }
one=""
if command -v taskset >/dev/null 2>&1; then one="taskset -c 0"; fi
now() { date +%s.%N; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "cpu: ${cpu:-unknown}; load: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null)"

# 1. the full search for one model: printing the Pareto front (the search
# itself), then printing every configuration (the CSV writer's time added).
# Wall seconds, and the CPU seconds (user + system) of the one core, which a
# loaded machine does not inflate.
tmp=${TMPDIR:-/tmp}/size-bench.$$
trap 'rm -f "$tmp" "$tmp.t"' EXIT
timed() {
	if [ -x /usr/bin/time ]; then
		/usr/bin/time -f "%U %S" -o "$tmp.t" "$@" >"$tmp" || true
		cpu_s=$(awk '{printf "%.2f", $1 + $2}' "$tmp.t")
	else
		"$@" >"$tmp" || true
		cpu_s="?"
	fi
}
search() {
	# $one is "taskset -c 0" or empty: split on purpose
	# shellcheck disable=SC2086
	timed $one "$kvplan" size --model mixtral-8x7b --workload chat --rate 4 --ttft 1 --tpot 0.05 --gpus all \
		--tp 1,2,4,8 --pp 1,2,4 --dp 1,2,4,8 --ep 1,8 --kv-dtypes auto,fp8 --disagg 1:1,1:2 \
		--format csv "$@"
}
t0=$(now)
search --pareto
t1=$(now)
front=$(($(wc -l <"$tmp") - 1))
cpu1=$cpu_s
search
t2=$(now)
n=$(($(wc -l <"$tmp") - 1))
echo "search: $n configurations (GPU x tp x pp x dp x ep x KV x colocated/1:1/1:2), front of $front" \
	"printed: $(echo "$t1 $t0" | awk '{printf "%.2f", $1 - $2}') s wall, $cpu1 s CPU (target 1 s);" \
	"all $n printed as CSV: $(echo "$t2 $t1" | awk '{printf "%.2f", $1 - $2}') s wall, $cpu_s s CPU"

# 1b. the same search with max_num_seqs as an axis too (--max-num-seqs
# 0,128,32,8: as many as fit, and three caps below): 4 x the points
t0=$(now)
search --pareto --max-num-seqs 0,128,32,8
t1=$(now)
front=$(($(wc -l <"$tmp") - 1))
echo "search with --max-num-seqs 0,128,32,8: front of $front printed:" \
	"$(echo "$t1 $t0" | awk '{printf "%.2f", $1 - $2}') s wall, $cpu_s s CPU (target 1 s)"

# 2. size over 100 models
models=$(for f in "$top"/profiles/models/*.yaml; do basename "$f" .yaml; done)
t0=$(now)
i=0
while [ "$i" -lt 100 ]; do
	for m in $models; do
		[ "$i" -lt 100 ] || break
		$one "$kvplan" size --model "$m" --workload chat --rate 2 --gpus all --format csv >/dev/null 2>&1 || true
		i=$((i + 1))
	done
done
t1=$(now)
echo "models: $i runs of kvplan size (every GPU, tp 1,2,4,8) in $(echo "$t1 $t0" | awk '{printf "%.2f", $1 - $2}') s (target 30 s)"
