#!/bin/sh
# layering.sh: the house plan (ARCHITECTURE.md) kept: folders by layer, includes
# running only downward, no circle, no source file over 900 lines.
#
#   1. every `#include "..."` in src/*/ and kernels/: a src/ header is named with
#      its folder ("base/units.h"), and that folder must be the includer's own or
#      a lower layer; kernels/ headers are named bare and only kernels/ uses them
#   2. no circle among modules (a module: one .c with its .h) by includes
#   3. when the libraries are built: no circle by calls either, and no call to a
#      higher layer (the symbols each object defines and uses, from nm)
#   4. no .c/.h/.cuh in src/, kernels/ over 900 lines
# Each failure prints the offending file and line (or the circle).  Exit 0
# when the plan holds, 1 when it does not.
#
# Usage: tests/layering.sh [SRCDIR [BUILDDIR]]   (default: the tree and its top)
set -u
top=${1:-${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}}
build=${2:-${top_builddir:-$top}}
cd "$top" || exit 1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The layers, lowest first; folders of one rank may not include each other.
ranks='base 0
out 1
model 2
read 3
memory 4
time 5
frag 6
size 6
check 7
plot 8
report 9
api 10
cli 10
kernels 10'
printf '%s\n' "$ranks" >"$tmp/ranks"

# every folder under src/ must have a rank
fail=0
for d in src/*/; do
	d=${d%/}
	d=${d#src/}
	grep -q "^$d " "$tmp/ranks" || { echo "layering: src/$d/ has no layer (add it to tests/layering.sh and ARCHITECTURE.md)"; fail=1; }
done
ls src/*.c src/*.h >/dev/null 2>&1 && { echo "layering: files directly under src/: $(ls src/*.c src/*.h | tr '\n' ' ')"; fail=1; }

# 1 and 2: the include lines
find src kernels -type f \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' -o -name '*.cc' \) |
	LC_ALL=C sort >"$tmp/files"
# "file line target" for each quoted include
while IFS= read -r f; do
	awk -v f="$f" 'match($0, /^[ \t]*#[ \t]*include[ \t]*"[^"]*"/) {
		s = substr($0, RSTART, RLENGTH); sub(/^[^"]*"/, "", s); sub(/"$/, "", s)
		print f, FNR, s }' "$f"
done <"$tmp/files" >"$tmp/incs"
awk -v ranks="$tmp/ranks" '
BEGIN { while ((getline l < ranks) > 0) { split(l, a, " "); rank[a[1]] = a[2] } }
function layer(path,   p) { p = path; if (p ~ /^src\//) { sub(/^src\//, "", p); sub(/\/.*/, "", p); return p } return "kernels" }
function module(path) { sub(/\.(c|h|cu|cuh|cc)$/, "", path); sub(/-private$/, "", path); return path }
{
	f = $1; line = $2; t = $3; from = layer(f)
	if (t == "config.h") next
	if (t ~ /\//) {
		to = t; sub(/\/.*/, "", to)
		if (!(to in rank)) { printf "%s:%s: #include \"%s\": no layer %s\n", f, line, t, to; bad = 1; next }
		if (getline dummy < ("src/" t) < 0) { printf "%s:%s: #include \"%s\": no such file under src/\n", f, line, t; bad = 1; next }
		close("src/" t)
		if (to != from && rank[to] >= rank[from]) {
			printf "%s:%s: #include \"%s\": layer %s (%d) may not include %s (%d)\n", f, line, t, from, rank[from], to, rank[to]
			bad = 1
		}
		print module(f), module("src/" t) > edges
	} else {
		if (from != "kernels") { printf "%s:%s: #include \"%s\": name src/ headers with their folder\n", f, line, t; bad = 1; next }
		print module(f), module("kernels/" t) > edges
	}
}
END { exit bad }' edges="$tmp/edges" "$tmp/incs" || fail=1
awk '$1 != $2' "$tmp/edges" | LC_ALL=C sort -u >"$tmp/modedges"
if ! tsort "$tmp/modedges" >/dev/null 2>"$tmp/loop"; then
	echo "layering: a circle of includes:"
	sed -n 's/^tsort: //p' "$tmp/loop"
	fail=1
fi

# 3: calls, from the built libraries' symbols
if command -v nm >/dev/null 2>&1 && [ -f "$build/libkvplan.a" ] && [ -f "$build/libkvbench.a" ]; then
	# object stem -> layer (stems are unique across src/ and kernels/)
	for f in src/*/*.c kernels/*.c; do
		s=${f##*/}
		s=${s%.c}
		case $f in src/*) l=${f#src/}; l=${l%%/*} ;; *) l=kernels ;; esac
		echo "$s $l"
	done >"$tmp/stems"
	nm -A "$build/libkvplan.a" "$build/libkvbench.a" 2>/dev/null | awk -v stems="$tmp/stems" -v ranks="$tmp/ranks" '
	BEGIN { while ((getline l < stems) > 0) { split(l, x, " "); lay[x[1]] = x[2] }
		while ((getline l < ranks) > 0) { split(l, x, " "); rank[x[1]] = x[2] } }
	{
		n = split($1, p, ":"); obj = p[2]; sub(/^lib(kvplan|kvbench)_a-/, "", obj); sub(/\.o$/, "", obj)
		if ($2 == "U") use[obj] = use[obj] " " $3
		else if (NF == 3 && $2 ~ /^[TDRBC]$/) def[$3] = obj
	}
	END {
		for (o in use) {
			k = split(use[o], u, " ")
			for (i = 1; i <= k; i++) {
				if (!(u[i] in def) || def[u[i]] == o) continue
				d = def[u[i]]; print o, d > edges
				lo = lay[o]; ld = lay[d]
				if (lo != ld && rank[ld] >= rank[lo]) {
					printf "%s (%s) calls %s in %s (%s): a call up the layers\n", o, lo, u[i], d, ld
					bad = 1
				}
			}
		}
		exit bad
	}' edges="$tmp/calls" || fail=1
	LC_ALL=C sort -u "$tmp/calls" >"$tmp/calledges"
	if ! tsort "$tmp/calledges" >/dev/null 2>"$tmp/loop"; then
		echo "layering: a circle of calls between files:"
		sed -n 's/^tsort: //p' "$tmp/loop"
		fail=1
	fi
else
	echo "layering: libkvplan.a/libkvbench.a not built under $build: calls not checked"
fi

# 4: file size
while IFS= read -r f; do
	n=$(wc -l <"$f")
	[ "$n" -le 900 ] || { echo "$f:$n: $n lines, more than 900: split it by concern"; fail=1; }
done <"$tmp/files"

if [ "$fail" = 0 ]; then
	echo "layering: $(wc -l <"$tmp/files") files, $(wc -l <"$tmp/modedges") include edges, $(wc -l <"$tmp/calledges" 2>/dev/null || echo 0) call edges: downward only, no circle"
	echo "1 passed, 0 failed"
else
	echo "0 passed, 1 failed"
fi
exit "$fail"
