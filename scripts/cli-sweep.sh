#!/bin/sh
# cli-sweep.sh: random kvplan command lines, hostile values among them, run
# against a kvplan built with the sanitizers; counts the runs that end in a
# sanitizer report, a signal, an internal error (exit 70) or a timeout.
#
#   scripts/cli-sweep.sh N [SEED]        e.g. scripts/cli-sweep.sh 2000 7
#
# KVPLAN names the program (default: build-san/obj/kvplan, which
# `SANITIZE_TARGET=kvplan scripts/sanitize.sh` builds, else ./kvplan).  The
# lines come from awk's generator seeded with SEED (default 1): the same N and
# SEED give the same lines, so a report can be replayed.  Each run gets 60 s
# (SWEEP_TIMEOUT).  Every run that fails the sweep is written, with its exit
# status and the first lines of its stderr, to $SWEEP_OUT/failures.txt
# (default build-sweep/), each word single-quoted for pasting into a shell;
# the first stderr line of each usage error (exit 2) goes to usage.txt, to
# see which refusals the lines reach.  Exit status: 0 no report, 1 one or
# more, 2 no kvplan to run.
# Exits 0 to 3 are kvplan's documented answers and count as handled: the
# sweep asks that bad input be refused, not that it succeed.
set -eu
n=${1:?usage: scripts/cli-sweep.sh N [SEED]}
seed=${2:-1}
top=$(cd "$(dirname "$0")/.." && pwd)
prog=${KVPLAN:-}
if [ -z "$prog" ]; then
	prog=$top/build-san/obj/kvplan
	[ -x "$prog" ] || prog=$top/kvplan
fi
[ -x "$prog" ] || { echo "cli-sweep: no kvplan at $prog" >&2; exit 2; }
case $prog in /*) ;; *) prog=$(pwd)/$prog ;; esac
out=${SWEEP_OUT:-$top/build-sweep}
secs=${SWEEP_TIMEOUT:-60}
mkdir -p "$out"
: >"$out/failures.txt"
: >"$out/usage.txt"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$top/scripts/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export KVPLAN_DATA="$top"
work=$(mktemp -d "${TMPDIR:-/tmp}/kvplan-sweep.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
cd "$work"

# each command's own flags, from its --help (the generator picks among them)
for c in budget perf frag size serve; do
	timeout "$secs" "$prog" "$c" --help 2>/dev/null | awk -v c="$c" '/^ +-/ {
		n = split($0, w, /[ ,=\[]+/)
		for (i = 1; i <= n; i++) if (w[i] ~ /^--[a-z]/ && w[i] != "--help") print c, w[i] }'
done | sort -u >"$work/flags"

# The generator: one command line a line, its words separated by US (0x1f) so
# that a value may hold spaces and shell metacharacters and reach kvplan as
# one argument, never through a shell.
awk -v n="$n" -v seed="$seed" -v top="$top" -v flags="$work/flags" 'BEGIN {
	while ((getline fl < flags) > 0) { split(fl, p, " "); cf[p[1], ++ncf[p[1]]] = p[2] }
	srand(seed); US = sprintf("%c", 31)
	ncmd = split("budget perf frag size serve list validate budget perf", cmd, " ")
	nm = split("llama-3.1-8b llama-3.1-70b qwen3-8b gemma-3-27b deepseek-v3 mixtral-8x7b " \
		"meta-llama/Llama-3.1-8B-Instruct Llama-3.1-70B-Instruct " \
		top "/tests/data/hf/Llama-3.1-8B/config.json qwen3-30b-a3b gpt-oss-20b no-such-model -x", model, " ")
	ng = split("h100-sxm h200 a100-80gb l40s mi300x b200 l4 rtx-4090 no-such-gpu", gpu, " ")
	# hostile and edge values: negative, zero, huge, overflowing, NaN, hex
	# floats, empty list items, units, shell metacharacters, control bytes
	nv = split("1|0|-1|2|8|64|4096|131072|1e-300|1e300|nan|inf|-0|0x0.8p0|1.5|" \
		"18446744073709551615|18446744073709551616|99999999999999999999|" \
		"1,,8|1,2,4,8|,|1k|4Ki|2G|80%|0.9|1.0|-0.5|$(touch pwned)|`id`|" \
		"\033[2J|a b|--help||x", val, "|")
	nf = split("--prompt --output --batch --context --tp --pp --dp --ep --utilization " \
		"--max-tokens --block-size --kv-dtype --dtype --weights-dtype --format --engine " \
		"--engine-version --max-num-seqs --max-batched-tokens --arrival-rate --step-time " \
		"--requests --rate --users --num-gpus --spec-draft --spec-accept-rate " \
		"--prefix-share --kv-offload --host-link --gpus --workload --seed --p2p", flag, " ")
	ns = split("1 2 4 8 16 64 512 2048 4096 32768", sane, " ")
	nk = split("auto bf16 fp16 fp8 int8 int4 nvfp4 fp8_e5m2 bogus", kvd, " ")
	nwl = split("chat rag code-completion batch-summarize no-such-workload", wl, " ")
	ne = split("generic vllm sglang trtllm tgi", eng, " ")
	nfm = split("table json csv yaml", fmt, " ")
	for (i = 0; i < n; i++) {
		c = cmd[1 + int(rand() * ncmd)]
		line = c
		if (c == "list") {
			k = split("models gpus workloads bogus", lk, " ")
			print line US lk[1 + int(rand() * k)]
			continue
		}
		if (c == "validate") {
			print line US top "/tests/data/report/kvbench-results.yaml" US \
				"--format" US fmt[1 + int(rand() * nfm)]
			continue
		}
		if (rand() < 0.95) line = line US "--model" US model[1 + int(rand() * nm)]
		if ((c == "size" || c == "frag" || c == "serve") && rand() < 0.85)
			line = line US "--workload" US wl[1 + int(rand() * nwl)]
		if (c == "serve" && rand() < 0.85)
			line = line US (rand() < 0.5 ? "--rate" : "--concurrency") US sane[1 + int(rand() * 4)]
		if (c == "size") {
			if (rand() < 0.7) line = line US "--gpus" US (rand() < 0.5 ? "all" : gpu[1 + int(rand() * ng)] "," gpu[1 + int(rand() * ng)])
		} else if (rand() < 0.95) line = line US "--gpu" US gpu[1 + int(rand() * ng)]
		k = int(rand() * 5)
		for (j = 0; j < k; j++) {
			f = rand() < 0.85 && ncf[c] ? cf[c, 1 + int(rand() * ncf[c])] : flag[1 + int(rand() * nf)]
			if (f == "--kv-dtype" || f == "--dtype" || f == "--weights-dtype") v = kvd[1 + int(rand() * nk)]
			else if (f == "--engine") v = eng[1 + int(rand() * ne)]
			else if (f == "--format") v = fmt[1 + int(rand() * nfm)]
			else if (rand() < 0.6) v = sane[1 + int(rand() * ns)]
			else v = val[1 + int(rand() * nv)]
			line = line US f US v
		}
		print line
	}
}' >"$work/lines"

runs=0 bad=0 e0=0 e1=0 e2=0 e3=0
while IFS= read -r line; do
	runs=$((runs + 1))
	# split on US into the positional parameters: no globbing, no expansion
	set -f
	old=$IFS
	IFS=$(printf '\037')
	# shellcheck disable=SC2086
	set -- $line
	IFS=$old
	set +f
	rc=0
	timeout "$secs" "$prog" "$@" >"$work/stdout" 2>"$work/stderr" </dev/null || rc=$?
	why=""
	case $rc in 0) e0=$((e0 + 1)) ;; 1) e1=$((e1 + 1)) ;; 2) e2=$((e2 + 1)) ;; 3) e3=$((e3 + 1)) ;; esac
	if grep -q -E "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:" "$work/stderr"; then
		why="sanitizer report"
	elif [ "$rc" = 124 ]; then
		why="timeout after $secs s"
	elif [ "$rc" -gt 3 ]; then
		why="exit $rc"
	elif [ -e "$work/pwned" ]; then
		why="a value ran as a command"
	fi
	if [ -n "$why" ]; then
		bad=$((bad + 1))
		{
			printf 'run %d: %s:' "$runs" "$why"
			for a in "$@"; do printf " '%s'" "$(printf '%s' "$a" | sed "s/'/'\\\\''/g")"; done
			printf '\n'
			head -n 8 "$work/stderr" | sed 's/^/    /'
		} >>"$out/failures.txt"
		rm -f "$work/pwned"
	fi
	[ "$rc" = 2 ] && head -n 1 "$work/stderr" >>"$out/usage.txt"
	[ $((runs % 250)) = 0 ] && echo "cli-sweep: $runs/$n runs, $bad failing" >&2
done <"$work/lines"
echo "cli-sweep: $runs runs of $prog (seed $seed): exit 0 $e0, 1 $e1, 2 $e2, 3 $e3; $bad failing (list: $out/failures.txt)"
[ "$bad" = 0 ]
