# lib.sh: helpers for kvplan's shell golden tests.  Source it; then use
#   run CMD...          run, capturing stdout in $out, stderr in $err, status in $rc
#   expect_rc N         the last run exited N
#   expect_out TEXT     stdout contains TEXT
#   expect_err TEXT     stderr contains TEXT
#   json NAME           the scalar value of "NAME" in the last stdout (first match)
#   expect_json NAME V  json NAME equals V
#   finish              print "N passed, N failed" and exit
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir}"
KVPLAN="$top_builddir/kvplan"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
name=""

ok() { passed=$((passed + 1)); }
bad() {
	failed=$((failed + 1))
	echo "FAIL: $name: $*" >&2
}

# run: set $out, $err, $rc
run() {
	name="$*"
	"$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	out=$(cat "$tmp/out")
	err=$(cat "$tmp/err")
}

expect_rc() { if [ "$rc" = "$1" ]; then ok; else bad "exit $rc, want $1; stderr: $err"; fi; }
expect_out() { case "$out" in *"$1"*) ok ;; *) bad "stdout lacks '$1'" ;; esac; }
expect_err() { case "$err" in *"$1"*) ok ;; *) bad "stderr lacks '$1': $err" ;; esac; }
json() { sed -n "s/^ *\"$1\": \\(\"\\{0,1\\}[^\",]*\\)\"\\{0,1\\},\\{0,1\\}\$/\\1/p" "$tmp/out" | head -n 1 | tr -d '"'; }
expect_json() {
	v=$(json "$1")
	if [ "$v" = "$2" ]; then ok; else bad "$1 = '$v', want '$2'"; fi
}
finish() {
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ]
	exit $?
}
