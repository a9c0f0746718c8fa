#!/bin/sh
# cli-profile-sources.sh: every built-in profile (and man page) cites sources a user can open
# (issue 18; kvplan-profiles(5) promises public sources): each file names at
# least one https:// URL, and none points at something only this project's
# authors could follow: an internal reference file, a code-index id, an
# "issue N" of this project's tracker, a path on a build machine, or a code
# search described in words instead of given as a URL.  GitHub code-search
# URLs must carry a query.  The engine-log cases, the config fixtures' notes
# and the reports are held to the same (issue 13/18).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

n=0
for f in "$top_srcdir"/profiles/*/*.yaml; do
	n=$((n + 1))
	base=${f#"$top_srcdir"/}
	name="$base names an https:// URL"
	if grep -q 'https://' "$f"; then ok; else bad "no https:// URL"; fi
	name="$base cites nothing a user cannot open"
	hit=$(grep -n -i -E 'quoted line|code index|index id|architectures\.md|engine-memory\.md|kernel-anchors\.md|peers\.md|shared/reference|/work/|issue [0-9]+' "$f" | head -n 3)
	if [ -z "$hit" ]; then ok; else bad "$hit"; fi
	name="$base code-search URLs carry a query"
	hit=$(grep -n -o 'https://github\.com/search[^ )]*' "$f" | grep -v 'q=[^&][^&]*' | head -n 3)
	if [ -z "$hit" ]; then ok; else bad "$hit"; fi
done
# the man pages and the README cite the same way
for f in "$top_srcdir"/man/*.[0-9] "$top_srcdir"/README.md; do
	name="${f#"$top_srcdir"/} cites nothing a user cannot open"
	hit=$(grep -n -i -E 'quoted line|code index|index id|architectures\.md|engine-memory\.md|kernel-anchors\.md|peers\.md|shared/reference|/work/|issue [0-9]+' "$f" | head -n 3)
	if [ -z "$hit" ]; then ok; else bad "$hit"; fi
done
# the engine-log cases, the config fixtures' notes and the reports cite the
# same way, except that they may name this project's issues (reports are
# written for an issue); "code-index" is caught with or without its hyphen
m=0
for f in "$top_srcdir"/tests/data/engine-logs/*.yaml "$top_srcdir"/tests/data/hf/README.md \
	"$top_srcdir"/reports/*.md; do
	m=$((m + 1))
	name="${f#"$top_srcdir"/} cites nothing a user cannot open"
	hit=$(grep -n -i -E 'quoted line|code[- ]index|index id|architectures\.md|engine-memory\.md|kernel-anchors\.md|peers\.md|shared/reference|/work/' "$f" | head -n 3)
	if [ -z "$hit" ]; then ok; else bad "$hit"; fi
	name="${f#"$top_srcdir"/} code-search URLs carry a query"
	hit=$(grep -n -o 'https://github\.com/search[^ )"]*' "$f" | grep -v 'q=[^&][^&]*' | head -n 3)
	if [ -z "$hit" ]; then ok; else bad "$hit"; fi
done
# every engine-log case names its source as a URL
for f in "$top_srcdir"/tests/data/engine-logs/*.yaml; do
	name="${f#"$top_srcdir"/} url: is an https:// URL"
	if grep -q '^url: "https://' "$f"; then ok; else bad "$(grep -n '^url:' "$f" || echo 'no url: line')"; fi
done
name="engine-log cases, fixture notes and reports found"
if [ "$m" -ge 25 ]; then ok; else bad "only $m files"; fi
# the loop must have seen the built-in profiles (a wrong path would pass vacuously)
name="profiles found"
if [ "$n" -ge 50 ]; then ok; else bad "only $n profiles under $top_srcdir/profiles"; fi
finish
