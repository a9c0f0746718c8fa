#!/bin/sh
# sanitize.sh: the whole test suite under AddressSanitizer (with its leak
# checker) and UndefinedBehaviorSanitizer: configure a separate build
# directory with --enable-sanitizers and run `make check` there.
#   scripts/sanitize.sh [configure options...]
#
# A VPATH build in build-san/ (ignored by git).  When the source tree is
# itself configured (scripts/setup.sh builds in place) configure refuses a
# second build of it, so the script builds from a snapshot of the tree
# instead: the files git tracks or would track, bootstrapped afresh, in
# build-san/src, and configures build-san/obj from there.  Any sanitizer
# report fails the test that triggered it: UBSan does not recover, ASan
# aborts, LeakSanitizer exits non-zero at the end of a leaking run.
# SANITIZE_BUILD names another directory; CC another compiler;
# SANITIZE_TARGET another make target than `check` (CI: check-sanitize-ci,
# Makefile.am says which tests it leaves out and why).
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
dir=${SANITIZE_BUILD:-$top/build-san}
jobs=$(nproc 2>/dev/null || echo 2)
mkdir -p "$dir"

if [ -f "$top/config.status" ]; then
	command -v git >/dev/null 2>&1 && git -C "$top" rev-parse --git-dir >/dev/null 2>&1 || {
		echo "sanitize: the source tree is configured in place and is not a git checkout;" >&2
		echo "sanitize: run 'make distclean' first or build from a fresh tarball" >&2
		exit 1
	}
	src="$dir/src"
	rm -rf "$src"
	mkdir -p "$src"
	# tracked files and untracked ones git does not ignore, as they are now
	(cd "$top" && git ls-files -z --cached --others --exclude-standard |
		tar --null --ignore-failed-read -T - -cf - 2>/dev/null) | (cd "$src" && tar -xf -)
	(cd "$src" && ./bootstrap >/dev/null 2>&1)
	obj="$dir/obj"
else
	[ -x "$top/configure" ] || (cd "$top" && ./bootstrap)
	src="$top"
	obj="$dir"
fi

mkdir -p "$obj"
cd "$obj"
# GCC leaves float-cast-overflow out of -fsanitize=undefined: ask for it
# (a double cast past 2^64 to a byte count is exactly the bug to catch).
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
# known leaks awaiting a fix, each with its report (delete an entry with the fix)
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$top/scripts/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
# KVP_CHECK_INVARIANTS: the frag simulator checks its bookkeeping and aborts
"$src/configure" --enable-sanitizers --with-cuda=no CPPFLAGS="-DKVP_CHECK_INVARIANTS" \
	CFLAGS="-g -O1 -fsanitize=float-cast-overflow -fno-sanitize-recover=all" "$@" >/dev/null
make -j"$jobs" >/dev/null
if ! make -j"$jobs" "${SANITIZE_TARGET:-check}"; then
	echo "sanitize: failures; logs under $obj/tests/" >&2
	grep -l -E "ERROR: (AddressSanitizer|LeakSanitizer)|runtime error" "$obj"/tests/*.log 2>/dev/null >&2 || true
	exit 1
fi
echo "sanitize: make ${SANITIZE_TARGET:-check} passed under ASan, LSan and UBSan ($obj)"
