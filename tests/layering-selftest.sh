#!/bin/sh
# layering-selftest.sh: tests/layering.sh catches what it is for, on small
# trees made here: an include up the layers, a circle of includes, a bare
# src/ header name, a file over 900 lines; and passes a tree that keeps the plan.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
check=$top_srcdir/tests/layering.sh
tree() {  # tree NAME: an empty tree with kernels/ and src/base, src/time
	rm -rf "$tmp/$1"
	mkdir -p "$tmp/$1/src/base" "$tmp/$1/src/time" "$tmp/$1/kernels"
	printf '#include "base/a.h"\n' >"$tmp/$1/src/base/a.c"
	: >"$tmp/$1/src/base/a.h"
	printf '#include "time/t.h"\n#include "base/a.h"\n' >"$tmp/$1/src/time/t.c"
	: >"$tmp/$1/src/time/t.h"
}
tree good
run sh "$check" "$tmp/good" "$tmp/good"
expect_rc 0
expect_out "downward only, no circle"

tree up
printf '#include "base/a.h"\n#include "time/t.h"\n' >"$tmp/up/src/base/a.c"
run sh "$check" "$tmp/up" "$tmp/up"
expect_rc 1
expect_out 'src/base/a.c:2: #include "time/t.h": layer base (0) may not include time (5)'

tree circle
printf '#include "base/b.h"\n' >"$tmp/circle/src/base/a.h"
printf '#include "base/a.h"\n' >"$tmp/circle/src/base/b.c"
printf '#include "base/a.h"\n' >"$tmp/circle/src/base/b.h"
run sh "$check" "$tmp/circle" "$tmp/circle"
expect_rc 1
expect_out "a circle of includes"
expect_out "src/base/b"

tree bare
printf '#include "a.h"\n' >"$tmp/bare/src/time/t.c"
run sh "$check" "$tmp/bare" "$tmp/bare"
expect_rc 1
expect_out 'src/time/t.c:1: #include "a.h": name src/ headers with their folder'

tree long
awk 'BEGIN { for (i = 0; i < 901; i++) print "/* line */" }' >"$tmp/long/kernels/k.c"
run sh "$check" "$tmp/long" "$tmp/long"
expect_rc 1
expect_out "kernels/k.c:901: 901 lines, more than 900"

tree nolayer
mkdir -p "$tmp/nolayer/src/extra"
run sh "$check" "$tmp/nolayer" "$tmp/nolayer"
expect_rc 1
expect_out "src/extra/ has no layer"
# calls: a base object that calls a time function, in built libraries
if command -v cc >/dev/null 2>&1 && command -v ar >/dev/null 2>&1 && command -v nm >/dev/null 2>&1; then
	tree calls
	printf 'int t_fn(void) { return 1; }\n' >"$tmp/calls/src/time/t.c"
	printf 'int t_fn(void);\nint a_fn(void) { return t_fn(); }\n' >"$tmp/calls/src/base/a.c"
	printf 'int k_fn(void) { return 2; }\n' >"$tmp/calls/kernels/k.c"
	(cd "$tmp/calls" && cc -c src/time/t.c -o libkvplan_a-t.o && cc -c src/base/a.c -o libkvplan_a-a.o &&
		cc -c kernels/k.c -o libkvbench_a-k.o && ar rc libkvplan.a libkvplan_a-a.o libkvplan_a-t.o &&
		ar rc libkvbench.a libkvbench_a-k.o)
	run sh "$check" "$tmp/calls" "$tmp/calls"
	expect_rc 1
	expect_out "a (base) calls t_fn in t (time): a call up the layers"
fi
finish
