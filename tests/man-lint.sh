#!/bin/sh
# man-lint.sh: the man pages render without a warning (groff -ww; mandoc -T
# lint too where it is installed), and no text line starts with ' or . that
# troff would take for a request and drop (kvplan(1) once lost its --term line).
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
. "$top_srcdir/tests/lib.sh"
command -v groff >/dev/null 2>&1 || { echo "man-lint: no groff: skipped"; exit 77; }
for m in "$top_srcdir"/man/*.[1-9]; do
	run groff -man -ww -z "$m"
	name="groff -ww $(basename "$m")"
	if [ -z "$err$out" ]; then ok; else bad "$err"; fi
	# a line starting with ' is a control line unless it is a comment ('\")
	run awk '/^'"'"'/ && !/^'"'"'\\"/ { print FILENAME ":" FNR ": " $0 }' "$m"
	name="control lines $(basename "$m")"
	if [ -z "$out" ]; then ok; else bad "$out"; fi
	if command -v mandoc >/dev/null 2>&1; then
		run mandoc -T lint -W warning "$m"
		name="mandoc $(basename "$m")"
		if [ "$rc" = 0 ]; then ok; else bad "$out"; fi
	fi
done
finish
