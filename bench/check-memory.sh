#!/bin/sh
# check-memory.sh: bytes of memory `kvplan check` takes per scenario (not a
# test).  Writes an expectations file of N copies of one small budget
# scenario (Llama-2-7B with every term given, one assertion, as
# tests/data/check/pass.yaml) and one of a single scenario, runs `kvplan
# check` on each under /usr/bin/time -v for each output (text, --tap,
# --junit, --update-baseline), and prints the peak RSS of both and
#   (peak RSS(N) - peak RSS(1)) / (N - 1)
# bytes per scenario.  kvplan(1), CHECK, states the bound (2 KB).
# Needs the build (./kvplan) and GNU time at /usr/bin/time.
#
# Measured (`sh bench/check-memory.sh 20000`, Intel Xeon family 6 model
# 207, 2 cores, glibc malloc), bytes per scenario for text / TAP / JUnit /
# baseline:
#   holding every scenario's result (before issue 37 D5):  15,057 / 15,050 / 15,048 / 15,051
#   one scenario at a time (kvp_check_open, spooled reports): 950 / 944 / 953 / 955
# What stays is the file's YAML tree (8 nodes, 6 strings and 3 arrays, some
# 860 bytes for this scenario), the file's bytes while it is parsed (63)
# and the duplicate-name index while it is checked (about 50).  Each
# further key in a scenario adds about 170 bytes, each assertion about 100.
#
# Usage: bench/check-memory.sh [N]        (default 20000)
set -e
top=$(cd "$(dirname "$0")/.." && pwd)
kvplan=${KVPLAN:-$top/kvplan}
n=${1:-20000}
[ -x "$kvplan" ] || { echo "check-memory: build first (make)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "check-memory: needs GNU time at /usr/bin/time" >&2; exit 1; }
[ "$n" -ge 2 ] 2>/dev/null || { echo "usage: bench/check-memory.sh [N >= 2]" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

gen() {
	cat <<EOF
defaults:
  model: llama-2-7b
  gpu_memory: 80GiB
  utilization: 0.9
  weights_bytes: 13GiB
  activation_bytes: 1GiB
  overhead_bytes: 1GiB
  context: 4096
scenarios:
EOF
	awk -v n="$1" 'BEGIN { for (i = 1; i <= n; i++)
		printf "  - name: s%d\n    batch: 28\n    expect:\n      - fits == true\n", i }'
}
gen "$n" > "$tmp/many.yaml"
gen 1 > "$tmp/one.yaml"

# peak RSS in bytes of `kvplan check FILE ARGS...`
rss() {
	f=$1
	shift
	/usr/bin/time -v "$kvplan" check "$f" "$@" > "$tmp/out" 2> "$tmp/time" || {
		rc=$?
		[ "$rc" -eq 1 ] || { echo "check-memory: kvplan check exit $rc" >&2; tail -3 "$tmp/time" >&2; exit 1; }
	}
	awk '/Maximum resident set size/ { print $NF * 1024 }' "$tmp/time"
}

printf '%s scenarios of one assertion each, %s bytes of YAML\n' "$n" "$(wc -c < "$tmp/many.yaml")"
printf '%-18s %14s %14s %12s\n' output "rss(1) B" "rss($n) B" "B/scenario"
for mode in text tap junit baseline; do
	case $mode in
	text) set -- ;;
	tap) set -- --tap ;;
	junit) set -- --junit "$tmp/j.xml" ;;
	baseline) set -- --update-baseline "$tmp/b.yaml" ;;
	esac
	one=$(rss "$tmp/one.yaml" "$@")
	many=$(rss "$tmp/many.yaml" "$@")
	printf '%-18s %14s %14s %12s\n' "$mode" "$one" "$many" \
		"$(awk -v a="$one" -v b="$many" -v n="$n" 'BEGIN { printf "%.0f", (b - a) / (n - 1) }')"
done
