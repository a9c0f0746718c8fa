#!/bin/sh
# example-drift.sh: reports/example/ is what `make example-report` writes
# today.  The scenario is run again in a folder laid out like the tree (so
# the "made by" lines match) and every text file it writes (report.md,
# report.html, each chart's .dat and .gp) must equal the committed one; the
# images are left out (gnuplot and cairo versions draw pixels differently).
# A difference means the committed report is stale: run `make example-report`
# and review the diff of report.md.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
command -v "${KVPLAN_GNUPLOT:-gnuplot}" >/dev/null 2>&1 || { echo "example-drift: no gnuplot: skipped"; exit 77; }
ex="$top_srcdir/reports/example"
mkdir -p "$tmp/t/reports/example"
cp "$ex/scenario.yaml" "$tmp/t/reports/example/scenario.yaml"
name="kvplan report reports/example/scenario.yaml -o reports/example"
(cd "$tmp/t" && "$KVPLAN" report reports/example/scenario.yaml -o reports/example) \
	>"$tmp/out" 2>"$tmp/err"
rc=$?
err=$(cat "$tmp/err")
expect_rc 0
for f in $(cd "$tmp/t/reports/example" && find . -type f \( -name '*.md' -o -name '*.html' \
	-o -name '*.dat' -o -name '*.gp' \) | LC_ALL=C sort); do
	name="reports/example/${f#./}"
	if [ ! -f "$ex/$f" ]; then bad "new file, not committed (make example-report)"; continue; fi
	if cmp -s "$ex/$f" "$tmp/t/reports/example/$f"; then ok; else
		bad "stale: $(diff "$ex/$f" "$tmp/t/reports/example/$f" | head -n 6 | tr '\n' ' ')"
	fi
done
# and nothing committed that the scenario no longer writes
for f in $(cd "$ex" && find . -type f \( -name '*.dat' -o -name '*.gp' -o -name '*.png' \) | LC_ALL=C sort); do
	name="reports/example/${f#./}"
	case $f in *.png) g=${f%.png}.gp ;; *) g=$f ;; esac
	if [ -f "$tmp/t/reports/example/$g" ]; then ok; else bad "no longer written: remove it (make example-report)"; fi
done
finish
