#!/bin/sh
# memcheck.sh: the CLI golden tests (tests/cli-*.sh) with every kvplan run
# under valgrind memcheck: any invalid read or write, use of uninitialised
# memory, or leak (definite, indirect or possible) fails.
#   scripts/memcheck.sh [TEST...]        e.g. scripts/memcheck.sh tests/cli-errors.sh
#
# The tests find kvplan as $top_builddir/kvplan (tests/lib.sh), so this
# points top_builddir at a directory whose kvplan is a wrapper running the
# real one under valgrind --error-exitcode=99 and whose other entries
# (kvbench, not wrapped: it times kernels) link to the real build.
# Valgrind writes to a log per process, not to the program's stderr, so the
# tests' own checks still hold; a non-empty log is a failure and is printed.
# Known leaks awaiting a fix are listed, with their reports, in
# scripts/memcheck.supp.  Needs kvplan built (scripts/setup.sh);
# KVPLAN_BUILD names another build directory; MEMCHECK_JOBS runs that many
# tests at once (default: CPUs).  MEMCHECK_EVERY=K puts only every K-th kvplan
# run of each test under valgrind (the 1st, the K+1-th, ...; the others run
# natively): the sample is fixed, so a report reproduces with the same K.
# Default 1, every run; CI passes 5 to stay inside its time (the whole suite
# also runs under ASan, LSan and UBSan there: valgrind's own share is
# uninitialised reads).
# A test that exits 77 (automake's skip: cli-install skips where kvplan is
# this wrapper, not the program) is reported SKIP, not FAIL.
# Exit status: 0 clean, 1 a test failed or valgrind reported, 77 no valgrind.
set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
build=${KVPLAN_BUILD:-$top}
jobs=${MEMCHECK_JOBS:-$(nproc 2>/dev/null || echo 2)}
every=${MEMCHECK_EVERY:-1}
case "$every" in ''|*[!0-9]*|0*)
	echo "memcheck: MEMCHECK_EVERY='$every' is not a whole number of at least 1" >&2; exit 2 ;;
esac
valgrind=$(command -v valgrind) || {
	echo "memcheck: valgrind not found (apt-get install valgrind); skipped" >&2
	exit 77
}
[ -x "$build/kvplan" ] || { echo "memcheck: no $build/kvplan; build first" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin" "$work/vg" "$work/out"
for f in "$build"/*; do
	[ "$(basename "$f")" = kvplan ] || ln -s "$f" "$work/bin/$(basename "$f")"
done
# the wrapper counts its runs in the test's own counter file (a test runs its
# commands one after another) and takes every $every-th under valgrind
cat >"$work/bin/kvplan" <<WRAP
#!/bin/sh
n=1
if [ -n "\${MEMCHECK_COUNTER:-}" ]; then
	n=\$(( \$(cat "\$MEMCHECK_COUNTER" 2>/dev/null || echo 0) + 1 ))
	echo "\$n" >"\$MEMCHECK_COUNTER"
fi
if [ \$(( (n - 1) % $every )) -ne 0 ]; then
	echo x >>"$work/native"
	exec "$build/kvplan" "\$@"
fi
exec "$valgrind" -q --tool=memcheck --error-exitcode=99 --leak-check=full \\
	--show-leak-kinds=definite,indirect,possible \\
	--errors-for-leak-kinds=definite,indirect,possible \\
	--suppressions="$top/scripts/memcheck.supp" --log-file="$work/vg/%p.log" "$build/kvplan" "\$@"
WRAP
chmod +x "$work/bin/kvplan"

# By default every CLI test but those that rerun commands the others already
# cover (cli-docs: the documented commands) or run no kvplan worth checking
# here (cli-run-device: kvbench; cli-report-browser: Chromium; cli-completion:
# bash), or rerun one path a thousand times (cli-budget-equations: 1,149
# budget tables, 1,048 s under valgrind, on paths cli-budget covers).
tests=${*:-$(ls "$top"/tests/cli-*.sh | grep -v -e /cli-docs.sh -e /cli-run-device.sh \
	-e /cli-report-browser.sh -e /cli-completion.sh -e /cli-budget-equations.sh)}
# MEMCHECK_SKIP: more test names (cli-frag ...) to leave out of the default set
for skip in ${MEMCHECK_SKIP:-}; do
	tests=$(printf '%s\n' $tests | grep -v "/$skip.sh\$" || true)
done
# one test: its output to a file, its status in the name of a marker file;
# a pool of $jobs (xargs -P) so a slow test does not hold the others back
cat >"$work/one.sh" <<'ONE'
t=$1
n=$(basename "$t" .sh)
t0=$(date +%s)
rc=0
MEMCHECK_COUNTER="$work/out/$n.count" top_srcdir="$top" top_builddir="$work/bin" sh "$t" >"$work/out/$n.log" 2>&1 || rc=$?
case $rc in
0) : >"$work/out/$n.pass" ;;
77) : >"$work/out/$n.skip" ;;
*) : >"$work/out/$n.fail" ;;
esac
echo $(( $(date +%s) - t0 )) >"$work/out/$n.secs"
ONE
start=$(date +%s)
printf '%s\n' $tests | top="$top" work="$work" xargs -P "$jobs" -n 1 sh "$work/one.sh"
status=0
for t in $tests; do
	n=$(basename "$t" .sh)
	if [ -f "$work/out/$n.pass" ]; then
		echo "PASS: $n ($(tail -n 1 "$work/out/$n.log"), $(cat "$work/out/$n.secs") s)"
	elif [ -f "$work/out/$n.skip" ]; then
		echo "SKIP: $n ($(tail -n 1 "$work/out/$n.log"))"
	else
		echo "FAIL: $n"
		sed 's/^/  /' "$work/out/$n.log" | grep -v '^  [0-9]* passed' | tail -n 20
		status=1
	fi
done
reports=0
for l in "$work"/vg/*.log; do
	[ -s "$l" ] || continue
	reports=$((reports + 1))
	[ "$reports" -le 5 ] && { echo "--- valgrind report $reports:"; head -n 40 "$l"; }
done
runs=$(ls "$work/vg" | wc -l)
native=$(cat "$work/native" 2>/dev/null | wc -l)
echo "memcheck: $runs kvplan runs under valgrind (1 in $every; $native more ran natively), $reports with reports, $(( $(date +%s) - start )) s"
[ "$reports" = 0 ] || status=1
exit "$status"
