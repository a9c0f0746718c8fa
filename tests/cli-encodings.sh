#!/bin/sh
# cli-encodings.sh: what kvplan writes parses whatever the names hold
# (tests/data/hostile): JSON (valid UTF-8, control characters escaped), CSV
# (formula prefixes neutralised), JUnit XML (xmllint), TAP (a small parser),
# report.md/report.html (no tag from a name), the terminal (control
# characters shown escaped) and `size --emit` (every text argument
# single-quoted; sh reads back the very name).
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
h="$top_srcdir/tests/data/hostile"
py=no
command -v python3 >/dev/null 2>&1 && py=yes

# A model whose name (its HF folder's) holds a byte that is not UTF-8 (0xff),
# a control character (0x01) and an escape sequence (ESC [2J clears a screen).
bad=$(printf 'bad\377\001\033[2Jname')
mkdir -p "$tmp/$bad" && cp "$top_srcdir/tests/data/hf/Llama-2-7b/config.json" "$tmp/$bad/"

# --- JSON: parses; the names read back, 0xff as U+FFFD
run "$KVPLAN" budget --engine generic --model "$tmp/$bad/config.json" --gpu "$h/evil-gpu.yaml" --format json
expect_rc 0
expect_out '"model": "bad\ufffd\u0001\u001b[2Jname"'
if [ $py = yes ]; then
	name="json parses, names round-trip"
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
assert d["model"] == "bad\ufffd\x01\x1b[2Jname", d["model"]
want = "=h`touch PWNED-gpu1`$(touch PWNED-gpu2)" + chr(39) + "\"; system(\"touch PWNED-gpu3\"); x=\"\n<b>@x"
assert d["gpu"] == want, d["gpu"]
' "$tmp/out" && ok || bad "python json"
fi

# --- CSV: a name that begins with = + - @ is a formula no more
run "$KVPLAN" budget --engine generic --model "$h/evil-model.yml" --gpu "$h/evil-gpu.yaml" --format csv
expect_rc 0
if [ $py = yes ]; then
	name="csv cells neutralised"
	python3 -c '
import csv, sys
rows = list(csv.reader(open(sys.argv[1], encoding="utf-8", newline="")))
assert len(rows) == 2 and len(rows[0]) == len(rows[1]), rows
row = dict(zip(rows[0], rows[1]))
assert row["gpu"].startswith("\x27=h`touch"), row["gpu"]
assert row["model"].startswith("\x27-m`touch"), row["model"]
assert row["tp"] == "1" and row["engine"] == "generic", row
for k, v in row.items():
    assert v == "" or v[0] not in "=+-@", (k, v)
' "$tmp/out" && ok || bad "python csv"
fi

# --- the terminal: control characters shown, never sent
run "$KVPLAN" budget --engine generic --model "$tmp/$bad/config.json" --gpu "$h/evil-gpu.yaml"
expect_out 'kvplan budget: bad'
expect_out '\x01\x1b[2Jname on =h'
expect_out 'x="\n<b>@x, engine generic'
name="no escape character on the terminal"
printf '%s' "$out" | od -An -tx1 | grep -q ' 1b' && bad "ESC sent" || ok
# an error message naming that folder: shown, not sent
mkdir -p "$tmp/e$bad" && cp "$top_srcdir/tests/data/bad/hf-bad-dtype.json" "$tmp/e$bad/config.json"
run "$KVPLAN" budget --engine generic --model "$tmp/e$bad/config.json" --gpu h100-sxm
expect_rc 3
expect_err '\x01\x1b[2Jname/config.json'
name="no escape character in the error"
printf '%s' "$err" | od -An -tx1 | grep -q ' 1b' && bad "ESC sent" || ok
run "$KVPLAN" check "$h/evil-check.yaml"
name="check's table shows \\x01"
expect_out 'directive \ \x01'

# --- JUnit XML: well-formed, the names read back
run "$KVPLAN" check "$h/evil-check.yaml" --junit "$tmp/junit.xml"
expect_rc 1
if command -v xmllint >/dev/null 2>&1; then
	name="xmllint junit.xml"
	xmllint --noout "$tmp/junit.xml" && ok || bad "not well-formed"
fi
if [ $py = yes ]; then
	name="junit names read back"
	python3 -c '
import sys, xml.etree.ElementTree as E
root = E.parse(sys.argv[1]).getroot()
names = [s.get("name") for s in root]
assert names[0] == "s`touch PWNED-s`</testcase><x a=\x271\x27>&amp; # SKIP not a directive \\ ? \u00e9", names
assert names[1] == "=cmd|\x27 /C calc\x27!A0", names
assert root.get("failures") == "3", root.attrib
' "$tmp/junit.xml" && ok || bad "python xml"
fi

# --- TAP: a plan, one line per point, no directive from a name, UTF-8
run "$KVPLAN" check "$h/evil-check.yaml" --tap
expect_rc 1
name="tap parses"
printf '%s\n' "$out" | awk '
	NR == 1 { if ($0 != "TAP version 13") bad = "version"; next }
	NR == 2 { if (!match($0, /^1\.\.[0-9]+$/)) bad = "plan"; plan = substr($0, 4); next }
	/^(not )?ok [0-9]+ - / {
		n++; split($0, f, " "); num = ($1 == "not") ? f[3] : f[2]
		if (num != n) bad = "number " num
		d = $0; gsub(/\\\\/, "", d); gsub(/\\#/, "", d)
		if (index(d, "#")) bad = "a directive in: " $0
		next }
	/^  / || /^# / { next }
	{ bad = "stray line: " $0 }
	END { if (n != plan) bad = bad " count " n " of " plan; if (bad) { print bad; exit 1 } }' &&
	ok || bad "TAP"
if [ $py = yes ]; then
	name="tap is UTF-8"
	python3 -c 'import sys; open(sys.argv[1], "rb").read().decode("utf-8")' "$tmp/out" && ok || bad "not UTF-8"
fi

# --- the report: no tag from a name, in Markdown or HTML
r="$tmp/report"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" report "$h/evil-scenario.yaml" -o "$r"
expect_rc 0
name="report.md holds no tag from a name"
grep -q '<script\|<img\|<b>' "$r/report.md" && bad "$(grep -n '<script\|<img\|<b>' "$r/report.md" | head -3)" || ok
name="report.html holds no tag from a name"
grep -q '<script\|<img src=x\|<b>' "$r/report.html" && bad "$(grep -n '<script\|<img src=x\|<b>' "$r/report.html" | head -3)" || ok
expect_md() { name="report.md has $1"; grep -qF "$1" "$r/report.md" && ok || bad "missing"; }
expect_md '&lt;img src=x onerror=alert(1)>'
expect_md '&lt;script>alert(1)&lt;/script>'

# --- size --emit: every text argument single-quoted; sh gives back the name
cat >"$tmp/m.yml" <<'YML'
name: tiny
hf_id: "org/it's $(touch PWNED-emit) `id` ; rm -rf x"
dtype: bf16
num_layers: 4
hidden_size: 512
num_heads: 8
num_kv_heads: 2
head_dim: 64
intermediate_size: 1024
vocab_size: 1000
tie_word_embeddings: false
max_context: 4096
params: 10000000
YML
for e in vllm sglang trtllm; do
	run "$KVPLAN" size --engine generic --model "$tmp/m.yml" --workload chat --rate 1 --gpus h100-sxm --tp 1 --emit $e
	expect_rc 0
	name="--emit $e: sh reads the id back as one word"
	cmd=$(printf '%s\n' "$out" | sed -n '/^\(vllm serve\|python -m\|trtllm-serve\)/,/[^\\]$/p')
	# run the command line with the engine replaced by a printer of argv
	got=$(cd "$tmp" && printf '%s\n' "$cmd" | sed 's/^vllm serve/args/; s/^python -m sglang.launch_server --model-path/args/; s/^trtllm-serve/args/' |
		sh -c 'args() { printf "%s\n" "$1"; }; eval "$(cat)"')
	[ "$got" = "org/it's \$(touch PWNED-emit) \`id\` ; rm -rf x" ] && ok || bad "got '$got' from: $cmd"
	name="--emit $e ran nothing"
	[ ! -e "$tmp/PWNED-emit" ] && ok || bad "PWNED-emit exists"
done
# --- usage errors quote what was typed: an escape sequence in an option is
# shown, never sent
run "$KVPLAN" budget --engine generic "$(printf -- '--fro\033[2Jb')"
expect_rc 2
expect_err "unknown option '--fro\\x1b[2Jb'"
name="usage error: no ESC on the terminal"
printf '%s' "$err" | od -An -tx1 | grep -q ' 1b' && bad "ESC sent" || ok
finish
