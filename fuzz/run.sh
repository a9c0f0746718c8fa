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

# The library sources the targets link (the parsers and what they feed).
lib="error units yaml-walk profile hf-config model budget output"
flags="-g -O1 -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE \
-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer \
$(pkg-config --cflags yaml-0.1) ${FUZZ_CFLAGS:-}"
# compile: $cc with the flags, the source tree's headers and profiles
cc_() { "$cc" $flags -I"$top/src" "-DKVP_SRCDIR=\"$top\"" "-DKVP_DATADIR=\"$top\"" "$@"; }
libs="$(pkg-config --libs yaml-0.1) -lm"
objs=""
for s in $lib; do
	o="$out/obj/$s.o"
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
mkdir -p "$out/corpus/units"
n=0
while IFS= read -r line; do
	n=$((n + 1))
	printf '%s' "$line" >"$out/corpus/units/seed-$n"
done <"$top/fuzz/seeds/units.txt"
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
	mkdir -p "$out/crashes/$t"
	: >"$log"
	if [ -d "$top/fuzz/regress/$t" ] && [ -n "$(ls "$top/fuzz/regress/$t")" ]; then
		if ! TMPDIR="$out/tmp" "$out/fuzz-$t" -runs=1 "$top/fuzz/regress/$t"/* >>"$log" 2>&1; then
			echo "fuzz-$t: a regression input fails again; see $log" >&2
			return 1
		fi
	fi
	dict=""
	[ "$t" = units ] || dict="-dict=$top/fuzz/profile.dict"
	rc=0
	TMPDIR="$out/tmp" "$out/fuzz-$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-max_len=65536 -print_final_stats=1 $dict \
		-artifact_prefix="$out/crashes/$t/" "$out/corpus/$t" >>"$log" 2>&1 || rc=$?
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	crashes=$(ls "$out/crashes/$t" | wc -l)
	printf '%-10s %6ss %12s execs %6s corpus files %3s crash inputs  exit %s\n' "$t" "$secs" \
		"${execs:-?}" "$(ls "$out/corpus/$t" | wc -l)" "$crashes" "$rc"
	[ "$rc" = 0 ]
}
: >"$out/summary.txt"
status=0
if [ "$jobs" -gt 1 ]; then
	pids=""
	for t in $targets; do
		run_one "$t" >"$out/summary-$t.txt" &
		pids="$pids $!"
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
