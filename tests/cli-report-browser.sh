#!/bin/sh
# cli-report-browser.sh: report.html as a browser sees it.  `kvplan report`
# writes the worked example's report; headless Chromium loads it from disk,
# and the test fails on any console message at error level (a broken image,
# a missing file, a script error) or a page with no text.  The screenshot is
# kept as a CI artifact: $top_builddir/tests/report-browser.png.
# Skipped (77) with a note where no Chromium is installed ($CHROMIUM names
# one; .ci/run installs the Debian package).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

browser=${CHROMIUM:-}
if [ -z "$browser" ]; then
	for b in chromium chromium-browser google-chrome headless_shell; do
		if command -v "$b" >/dev/null 2>&1; then browser=$b; break; fi
	done
fi
if [ -z "$browser" ]; then
	echo "no Chromium (chromium, chromium-browser, google-chrome or \$CHROMIUM): report.html not rendered"
	exit 77
fi

run "$KVPLAN" report "$top_srcdir/reports/example/scenario.yaml" -o "$tmp/review"
expect_rc 0
page="$tmp/review/report.html"
shot="$top_builddir/tests/report-browser.png"
rm -f "$shot"

# --enable-logging=stderr prints every console message as a line
#   [..:INFO:CONSOLE(N)] "message", source: URL (N)
# with the level in the message's prefix for errors ("Failed to load
# resource", "Uncaught ..."); --dump-dom prints the page after load.
chrome() {
	timeout 120 "$browser" --headless=new --no-sandbox --disable-gpu --no-first-run \
		--disable-dev-shm-usage --user-data-dir="$tmp/profile" --enable-logging=stderr --v=0 \
		--allow-file-access-from-files "$@"
}
chrome --window-size=1280,4000 --screenshot="$shot" "file://$page" >"$tmp/shot.out" 2>"$tmp/shot.err"
name="chromium screenshot"
if [ -s "$shot" ]; then ok; else bad "no screenshot: $(tail -5 "$tmp/shot.err")"; fi
chrome --dump-dom "file://$page" >"$tmp/dom" 2>"$tmp/dom.err"
name="chromium renders the report's text"
if grep -q "<h1" "$tmp/dom" && grep -q "<img" "$tmp/dom"; then ok; else bad "DOM: $(head -c 300 "$tmp/dom")"; fi
name="no console errors"
errors=$(cat "$tmp/shot.err" "$tmp/dom.err" | grep -i 'CONSOLE' |
	 grep -i -e 'error' -e 'failed' -e 'uncaught' -e 'not allowed' -e 'refused' || true)
if [ -z "$errors" ]; then ok; else bad "$errors"; fi
# every image the page names exists beside it (the console would say too)
name="every <img> of report.html exists"
missing=""
for src in $(sed -n 's/.*<img src="\([^"]*\)".*/\1/p' "$page"); do
	[ -f "$tmp/review/$src" ] || missing="$missing $src"
done
if [ -z "$missing" ]; then ok; else bad "missing:$missing"; fi
finish
