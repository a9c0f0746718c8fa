#!/bin/sh
# calibrate-read.sh: how long `kvplan calibrate` takes to read a
# 10,000-request `vllm bench serve --save-result --save-detailed` result (a
# measurement, not a test; issue 38's target: at most 0.2 s).  The file is
# made here to vLLM's schema (vllm/benchmarks/serve.py, 0.19.0): the summary
# of tests/data/bench/vllm-serve-c64.json and, per request, input_lens,
# output_lens, ttfts, itls (127 gaps each: 1.27 million numbers), start_times,
# errors and generated_texts (about 600 bytes each): about 30 MB.  Prints the
# CPU, the file's size, then the CPU time (user + system, GNU time: the
# machine may be shared) and peak memory of `calibrate --evaluate` (the
# reading and one prediction per time, no fit) over it and one small run,
# beside the same over the two small runs alone: the difference is the
# reading.
#
# Usage: bench/calibrate-read.sh [PATH-TO-KVPLAN]     (default: ./kvplan)
#        N=100000 bench/calibrate-read.sh             (another request count)
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
kvplan=${1:-$top/kvplan}
n=${N:-10000}
[ -x "$kvplan" ] || { echo "calibrate-read: build kvplan first (make)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "calibrate-read: needs GNU time (/usr/bin/time)" >&2; exit 1; }
d="$top/tests/data/bench"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
big="$tmp/vllm-serve-detailed.json"
# the summary's keys without the closing brace, then the per-request arrays
sed '$d' "$d/vllm-serve-c64.json" | sed '$s/$/,/' >"$big"
awk -v n="$n" 'BEGIN {
	srand(1)
	printf "  \"input_lens\": ["; for (i = 0; i < n; i++) printf "%s1024", i ? ", " : ""; print "],"
	printf "  \"output_lens\": ["; for (i = 0; i < n; i++) printf "%s128", i ? ", " : ""; print "],"
	printf "  \"ttfts\": ["; for (i = 0; i < n; i++) printf "%s%.6f", i ? ", " : "", 0.035 + rand() / 100; print "],"
	printf "  \"itls\": ["
	for (i = 0; i < n; i++) {
		printf "%s[", i ? ", " : ""
		for (j = 0; j < 127; j++) printf "%s%.6f", j ? ", " : "", 0.0105 + rand() / 1000
		printf "]"
	}
	print "],"
	printf "  \"start_times\": ["; for (i = 0; i < n; i++) printf "%s%.6f", i ? ", " : "", 1000 + i * 0.01; print "],"
	printf "  \"errors\": ["; for (i = 0; i < n; i++) printf "%s\"\"", i ? ", " : ""; print "],"
	printf "  \"generated_texts\": ["
	for (i = 0; i < n; i++) {
		printf "%s\"", i ? ", " : ""
		for (j = 0; j < 100; j++) printf "token "
		printf "\\n\\u00e9\""
	}
	print "]"
	print "}"
}' >>"$big"
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
echo "CPU: ${cpu:-unknown}"
echo "file: $n requests, $(wc -c <"$big") bytes"
args="--gpu h100-sxm --model llama-3.1-8b --evaluate --format csv"
/usr/bin/time -f "%U %S %M" -o "$tmp/t0" "$kvplan" calibrate $args "$d/vllm-serve-c1.json" \
	"$d/vllm-serve-c64.json" >/dev/null
/usr/bin/time -f "%U %S %M" -o "$tmp/t1" "$kvplan" calibrate $args "$d/vllm-serve-c1.json" \
	"$big" >/dev/null
awk 'FNR == 1 { c[NR] = $1 + $2; m[NR] = $3 / 1024 }
     END { printf "two small runs:        %.3f s CPU, %.1f MiB peak\n", c[1], m[1]
	   printf "one small + detailed:  %.3f s CPU, %.1f MiB peak\n", c[2], m[2]
	   printf "reading the detailed file: %.3f s CPU (target 0.2 s)\n", c[2] - c[1] }' \
	"$tmp/t0" "$tmp/t1"
