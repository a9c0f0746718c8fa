#!/bin/sh
# cli-api.sh: libkvplan as other programs get it (issue 40): the shared
# library exports exactly the symbols of include/kvplan.sym, each declared
# KVPLAN_API in include/kvplan.h (adding or removing one without changing
# both fails here); a program linked against libkvplan.so.0 gets Llama-3.1-8B's
# KV bytes by hand arithmetic (bench/api-bench --check); kvplan.pc is valid.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

so="$top_builddir/libkvplan.so.0"
if [ ! -f "$so" ] || ! command -v nm >/dev/null 2>&1; then
	echo "cli-api: no libkvplan.so.0 or no nm; skipped"
	exit 77
fi

# exported (defined, dynamic) symbols against the list under version control
nm -D --defined-only "$so" | awk '$2 ~ /^[TDRBVWiu]$/ { print $3 }' | LC_ALL=C sort >"$tmp/exported"
run diff "$top_srcdir/include/kvplan.sym" "$tmp/exported"
if [ "$rc" = 0 ]; then ok; else bad "exported symbols differ from include/kvplan.sym (< listed, > exported):
$out"; fi

# every listed symbol is declared in the header, and every KVPLAN_API
# declaration of the header is listed
sed -n 's/^KVPLAN_API [^(]*[ *]\(kvplan_[a-z_0-9]*\)(.*/\1/p' "$top_srcdir/include/kvplan.h" |
	LC_ALL=C sort >"$tmp/declared"
run diff "$top_srcdir/include/kvplan.sym" "$tmp/declared"
if [ "$rc" = 0 ]; then ok; else bad "include/kvplan.sym differs from kvplan.h's KVPLAN_API declarations:
$out"; fi

# the soname a program records
run sh -c "readelf -d '$so' 2>/dev/null || objdump -p '$so'"
expect_out "libkvplan.so.0"

# a program against the shared library: 2 x 32 layers x 8 KV heads x 128 x
# 2 B = 131,072 B per token, 1 GiB for 8,192 tokens (api-bench.c)
if [ -x "$top_builddir/bench/api-bench" ]; then
	run "$top_builddir/bench/api-bench" --check
	expect_rc 0
	expect_out "us per call"
	run sh -c "ldd '$top_builddir/bench/api-bench'"
	expect_out "libkvplan.so.0 => $top_builddir/libkvplan.so.0"
fi

# a program of a user: the header alone compiles as C and as C++ (under
# --enable-sanitizers the library needs ASan's runtime, which a plain
# program loads only after itself: tell ASan that is meant)
if ldd "$so" 2>/dev/null | grep -q libasan; then
	ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
	export ASAN_OPTIONS
fi
if command -v cc >/dev/null 2>&1; then
	printf '#include <kvplan.h>\nint main(void) { return kvplan_version()[0] == 0; }\n' >"$tmp/use.c"
	run cc -std=c99 -Wall -Werror -I"$top_srcdir/include" -o "$tmp/use" "$tmp/use.c" "$so" -Wl,-rpath,"$top_builddir"
	expect_rc 0
	run "$tmp/use"
	expect_rc 0
fi
if command -v c++ >/dev/null 2>&1; then
	cp "$tmp/use.c" "$tmp/use.cc"
	run c++ -Wall -Werror -I"$top_srcdir/include" -c -o "$tmp/use.o" "$tmp/use.cc"
	expect_rc 0
fi

# kvplan.pc as configure wrote it
if command -v pkg-config >/dev/null 2>&1 && [ -f "$top_builddir/kvplan.pc" ]; then
	run pkg-config --validate "$top_builddir/kvplan.pc"
	expect_rc 0
	run env PKG_CONFIG_PATH="$top_builddir" pkg-config --libs kvplan
	expect_out "-lkvplan"
fi

finish
