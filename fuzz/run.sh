#!/bin/sh
# fuzz/run.sh: build kvplan's libFuzzer targets with clang
# (-fsanitize=fuzzer,address,undefined), replay the committed regression
# inputs in fuzz/regress/<target>/, then fuzz each target for SECONDS.
#
#   fuzz/run.sh SECONDS [TARGET...]      e.g. fuzz/run.sh 20; fuzz/run.sh 300 profile gpu
#
# TARGET is a file name fuzz/fuzz-TARGET.c (default: all).  Work goes to
# $FUZZ_BUILD (default build-fuzz/, ignored by git): the binaries, a corpus
# per target seeded from profiles/, tests/data/ and fuzz/seeds/ and kept
# between runs, crash inputs under crashes/<target>/, one log per target and
# summary.txt (executions, seconds, new corpus, crashes).  Exit status: 0 no
# crash, 1 a crash or a broken invariant (the input is named in the log; copy
# it to fuzz/regress/<target>/ once it is fixed), 77 when clang cannot build
# fuzzers.  CLANG names the compiler (default clang), FUZZ_JOBS runs that many
# targets at once (default 1), FUZZ_CFLAGS adds flags (with its own
# FUZZ_BUILD), e.g. -fsanitize=unsigned-integer-overflow to look for wraps.
# FUZZ_KEEP_GOING=1 (the long run) fuzzes on past a crash, timeout or OOM
# (libFuzzer -fork=1 -ignore_crashes=1 ...) and keeps every distinct input.
# FUZZ_SEED fixes libFuzzer's random seed (CI: the same mutations each run,
# so a short run does not pass or fail by luck); default random.
set -eu
secs=${1:?usage: fuzz/run.sh SECONDS [TARGET...]}
shift
top=$(cd "$(dirname "$0")/.." && pwd)
out=${FUZZ_BUILD:-$top/build-fuzz}
cc=${CLANG:-clang}
jobs=${FUZZ_JOBS:-1}
targets=${*:-$(cd "$top/fuzz" && ls fuzz-*.c | sed 's/^fuzz-//; s/\.c$//')}
mkdir -p "$out/obj" "$out/tmp"

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "fuzz: $cc not found; skipped" >&2
	exit 77
fi
probe="$out/probe.c"
printf '#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n' >"$probe"
if ! "$cc" -fsanitize=fuzzer "$probe" -o "$out/probe" 2>/dev/null; then
	echo "fuzz: $cc cannot build libFuzzer targets; skipped" >&2
	exit 77
fi

# The library the targets link: libkvplan.a's C sources as Makefile.am lists them.
# (FRAG_SOURCES too: libkvplan_a_SOURCES takes the simulator through it;
# the hf-*.c files of the config.json importer are listed there since issue 19)
lib=$(awk '/^(libkvplan_a_SOURCES|FRAG_SOURCES|SERVE_SOURCES)/ { on = 1 }
	on { for (i = 1; i <= NF; i++) if ($i ~ /^src\/.*\.c$/) { sub(/^src\//, "", $i); sub(/\.c$/, "", $i); print $i }
	     if ($0 !~ /\\$/) on = 0 }' "$top/Makefile.am")
flags="-g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
$(pkg-config --cflags yaml-0.1) ${FUZZ_CFLAGS:-}"
# compile: $cc with the flags, the source tree's headers and profiles (its
# profiles/ as the data directory: no -DHAVE_CONFIG_H, so profile.c reads
# KVP_PKGDATADIR from here, not from config.h)
# config.h: the configured tree's, else the one macro the library reads
mkdir -p "$out/include"
if [ -f "$top/config.h" ]; then
	cp "$top/config.h" "$out/include/config.h"
else
	printf '#define PACKAGE_VERSION "fuzz"\n' >"$out/include/config.h"
fi
cc_() { "$cc" $flags -I"$out/include" -I"$top/src" -I"$top/include" -I"$top/kernels" "-DKVP_SRCDIR=\"$top\"" "-DKVP_PKGDATADIR=\"$top\"" "$@"; }
libs="$(pkg-config --libs yaml-0.1) -lm"
objs=""
for s in $lib; do
	o="$out/obj/$(printf '%s' "$s" | tr / -).o"
	if [ ! -f "$o" ] || [ "$top/src/$s.c" -nt "$o" ] || [ -n "$(find "$top/src" -name '*.h' -newer "$o")" ]; then
		cc_ -fsanitize=fuzzer-no-link -c "$top/src/$s.c" -o "$o"
	fi
	objs="$objs $o"
done

# seeds: copy the files of each directory given into the target's corpus
seed() {
	t=$1
	shift
	mkdir -p "$out/corpus/$t"
	for f in "$@"; do
		[ -f "$f" ] && cp "$f" "$out/corpus/$t/seed-$(basename "$(dirname "$f")")-$(basename "$f")"
	done
	return 0
}
d="$top/tests/data"
seed profile "$top"/profiles/models/*.yaml "$d"/good/*.yaml "$d"/bad/model-*.yaml
seed gpu "$top"/profiles/gpus/*.yaml "$d"/good/*gpu*.yaml "$d"/bad/gpu-*.yaml
seed hfconfig "$d"/hf/*/config.json "$d"/bad/hf-*.json
seed yaml "$top"/profiles/*/*.yaml "$d"/good/*.yaml "$d"/bad/*.yaml "$d"/hf/*/config.json
seed workload "$top"/profiles/workloads/*.yaml "$d"/workloads/*.yaml "$d"/bad/workload-*.yaml \
	"$d"/report/fixed-*.yaml
seed expect "$d"/check/*.yaml "$d"/bad/check-*.yaml "$top"/examples/*.yaml
seed baseline "$d"/check/baseline*.yaml
seed bench "$d"/bench/*.json "$d"/bench/*.jsonl
seed scenario "$d"/report/tiny.yaml "$d"/bad/scenario-*.yaml "$top"/reports/*/scenario*.yaml
# the writers (issue 17): the hostile names' files, whole, as names
for t in gnuplot json csv xml tap shell; do
	seed "$t" "$d"/hostile/*.yaml "$d"/hostile/*.yml
done
# targets whose input starts with a byte that picks the form (see each target)
first() {
	t=$1 c=$2
	shift 2
	mkdir -p "$out/corpus/$t"
	for f in "$@"; do
		[ -f "$f" ] && { printf '%s' "$c"; cat "$f"; } >"$out/corpus/$t/seed-$c-$(basename "$f")"
	done
	return 0
}
first lengths b "$d"/workloads/*.csv
first lengths y "$d"/workloads/*.yaml
first results b "$d"/report/kvbench-results.yaml "$d"/bad/results-*.yaml "$top"/reports/*/*.yaml \
	"$d"/good/kvbench-*.yaml "$d"/bad/validate-*.yaml
first results c "$d"/*/*.csv
# one-line inputs: fuzz/seeds/TARGET.txt, a file per line
for t in $targets; do
	mkdir -p "$out/corpus/$t"
	[ -f "$top/fuzz/seeds/$t.txt" ] || continue
	n=0
	while IFS= read -r line; do
		n=$((n + 1))
		printf '%s' "$line" >"$out/corpus/$t/seed-line-$n"
	done <"$top/fuzz/seeds/$t.txt"
done
for t in $targets; do
	[ -d "$top/fuzz/regress/$t" ] && seed "$t" "$top/fuzz/regress/$t"/*
	[ -d "$top/fuzz/seeds/$t" ] && seed "$t" "$top/fuzz/seeds/$t"/*
done

# build
for t in $targets; do
	cc_ -fsanitize=fuzzer "$top/fuzz/fuzz-$t.c" $objs $libs -o "$out/fuzz-$t"
done

# replay the regressions, then fuzz
run_one() {
	t=$1
	log="$out/fuzz-$t.log"
	rm -rf "$out/crashes/$t"
	mkdir -p "$out/crashes/$t"
	: >"$log"
	if [ -d "$top/fuzz/regress/$t" ] && [ -n "$(ls "$top/fuzz/regress/$t")" ]; then
		mkdir -p "$out/tmp/$t"
		if ! TMPDIR="$out/tmp/$t" "$out/fuzz-$t" -runs=1 "$top/fuzz/regress/$t"/* >>"$log" 2>&1; then
			echo "fuzz-$t: a regression input fails again; see $log" >&2
			return 1
		fi
	fi
	dict=""
	[ "$t" = units ] || dict="-dict=$top/fuzz/profile.dict"
	[ "$t" = gguf ] && dict="-dict=$top/fuzz/gguf.dict"
	rc=0
	keep=""
	[ "${FUZZ_KEEP_GOING:-0}" = 1 ] && keep="-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1"
	mkdir -p "$out/tmp/$t"
	TMPDIR="$out/tmp/$t" "$out/fuzz-$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 -seed="${FUZZ_SEED:-0}" $dict $keep \
		-artifact_prefix="$out/crashes/$t/" "$out/corpus/$t" >>"$log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	# fork mode reports "#EXECS: cov: ..." lines instead of final stats
	[ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\): cov:.*/\1/p' "$log" | tail -n 1)
	crashes=$(ls "$out/crashes/$t" | wc -l)
	printf '%-10s %6ss %12s execs %6s corpus files %3s crash inputs  exit %s\n' "$t" "$secs" \
		"${execs:-?}" "$(ls "$out/corpus/$t" | wc -l)" "$crashes" "$rc"
	[ "$rc" = 0 ] && [ "$crashes" = 0 ]
}
: >"$out/summary.txt"
status=0
if [ "$jobs" -gt 1 ]; then
	# batches of $jobs targets at once
	pids=""
	n=0
	for t in $targets; do
		run_one "$t" >"$out/summary-$t.txt" &
		pids="$pids $!"
		n=$((n + 1))
		if [ "$n" -ge "$jobs" ]; then
			for p in $pids; do wait "$p" || status=1; done
			pids=""
			n=0
		fi
	done
	for p in $pids; do wait "$p" || status=1; done
	for t in $targets; do cat "$out/summary-$t.txt" >>"$out/summary.txt"; done
else
	for t in $targets; do run_one "$t" >>"$out/summary.txt" || status=1; done
fi
cat "$out/summary.txt"
if [ "$status" != 0 ]; then
	echo "fuzz: crashes; inputs under $out/crashes/, logs $out/fuzz-*.log" >&2
	for t in $targets; do grep -h -m 3 -E "ERROR: |runtime error|invariant broken|Test unit written" "$out/fuzz-$t.log" >&2 || true; done
fi
exit "$status"
