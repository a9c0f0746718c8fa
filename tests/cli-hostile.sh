#!/bin/sh
# cli-hostile.sh: names that try to run a command (tests/data/hostile) go
# through every plot kind and the report; no command may run, neither when
# kvplan renders nor when gnuplot re-renders a kept .gp by hand.  A name that
# runs something creates a file PWNED* in the folder it runs in.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
h="$top_srcdir/tests/data/hostile"
if command -v gnuplot >/dev/null 2>&1; then gp=gnuplot; else gp=/nonexistent; fi

# The marker check: nothing named PWNED* anywhere under $tmp, nor in the
# folder the test runs in.
no_marker() {
	name="no marker after $1"
	found=$(find "$tmp" . -maxdepth 4 -name 'PWNED*' 2>/dev/null | head -n 3)
	[ -z "$found" ] && ok || bad "found $found"
}

# What of a script lies outside its single-quoted strings ('' inside one is
# a quote) and the line-break literal "\n", where it holds input text
# (PWNED) or a backquote; comment lines may hold the text, not a backquote.
unquoted() {
	awk '/^#/ { if (index($0, "`")) print FILENAME ":" NR ": " $0; next }
	     { s = $0; gsub(/\047([^\047]|\047\047)*\047/, "", s); gsub(/"\\n"/, "", s)
	       if (index(s, "PWNED") || index(s, "`")) print FILENAME ":" NR ": " s }' "$1"
}

# An HF config whose folder name is hostile (made here: a tarball cannot
# carry every byte of it).
hf="$tmp/hf/x\`touch PWNED-hf1\`\$(touch PWNED-hf2)'\"; system(\"touch PWNED-hf3\")"
mkdir -p "$hf" && cp "$top_srcdir/tests/data/hf/Llama-2-7b/config.json" "$hf/"
# a kvbench results file under a hostile name
res="$tmp/r\`touch PWNED-res1\`\$(touch PWNED-res2)'\";x.yaml"
cp "$h/evil-results.yaml" "$res"

m="$h/evil-model.yml"
g="$h/evil-gpu.yaml"
d="$tmp/charts"
cd "$tmp" || exit 1
for kind in budget kv-context max-seqs perf block-size validate pareto hf; do
	case $kind in
	budget) set -- budget --model "$m" --gpu "$g" --context 1k ;;
	kv-context) set -- kv-context --model "$m,$hf/config.json" --contexts 1k,2k ;;
	max-seqs) set -- max-seqs --model "$m" --gpu "$g" --contexts 1k,2k --gpu-memory 80GiB ;;
	perf) set -- perf --model "$m" --gpu "$g" --batches 1,2 --contexts 1k ;;
	block-size) set -- block-size --model "$m" --gpu "$g" --gpu-memory 1GiB --utilization 1 \
		--weights-bytes 0 --activation-bytes 0 --overhead-bytes 0 \
		--workload "$top_srcdir/tests/data/report/fixed-100.yaml" --block-sizes 16,128 \
		--requests 200 ;;
	validate) set -- validate --results "$res" ;;
	pareto) set -- pareto --model "$m" --gpu "$g" --price "$g=2" --tp 1,2 ;;
	hf) set -- budget --model "$hf/config.json" --gpu h100-sxm --context 1k --name hf ;;
	esac
	run env KVPLAN_GNUPLOT=$gp "$KVPLAN" plot "$@" --term svg -o "$d"
	expect_rc 0
	stem=$kind
	name="$kind: the hostile name reached the script, quoted"
	grep -q 'touch PWNED' "$d/$stem.gp" && ok || bad "no hostile text in $stem.gp"
	name="$kind: input text only inside single quotes"
	outside=$(unquoted "$d/$stem.gp")
	[ -z "$outside" ] && ok || bad "$outside"
	no_marker "plot $kind"
done

# the command the missing-gnuplot warning suggests, pasted into sh as it is:
# the folder is one quoted word, so nothing in its name runs
o="$tmp/o'\$(touch PWNED-o)\`touch PWNED-o2\`"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot kv-context --model llama-2-7b --term dumb -o "$o"
expect_rc 0
hint=${err##*render them with: }
name="the suggested command runs in the folder"
(sh -c "$hint" >/dev/null 2>&1 || [ "$gp" != gnuplot ]) && ok || bad "$hint"
no_marker "pasting the suggested command"

# --name: a stem outside letters, digits, . _ - is refused, nothing written
run "$KVPLAN" plot kv-context --model llama-2-7b --name 'x"; system("touch PWNED-name"); y="' -o "$d"
expect_rc 2
expect_err "--name: not a file stem"
run "$KVPLAN" plot kv-context --model llama-2-7b --name '-x' -o "$d"
expect_rc 2

# the report: hostile title, model, GPU, workload and results
r="$tmp/report"
run env KVPLAN_GNUPLOT=$gp "$KVPLAN" report "$h/evil-scenario.yaml" --term svg -o "$r"
expect_rc 0
no_marker "report"
name="report stems are plain words"
bad_stems=$(ls "$r/plots" | grep -v '^[A-Za-z0-9_][A-Za-z0-9._-]*$')
[ -z "$bad_stems" ] && ok || bad "$bad_stems"

# every kept script rendered again by hand, as the comments in it say to
if [ "$gp" = gnuplot ]; then
	for f in "$d"/*.gp "$r"/plots/*.gp; do
		name="gnuplot $(basename "$f") renders"
		(cd "$(dirname "$f")" && gnuplot "$(basename "$f")" >/dev/null 2>&1) && ok ||
			bad "gnuplot failed"
	done
	no_marker "re-rendering every .gp"
	name="images drawn"
	[ "$(ls "$d"/*.svg | wc -l)" -ge 7 ] && ok || bad "$(ls "$d")"
fi

# `size --emit` of a disaggregated plan: the hostile model name reaches each
# role's engine command as one argument, and running the emitted script
# (engines stubbed: each records its arguments, fields \037, calls \036)
# runs nothing else.  The GPU of round numbers and the 10.5 ms TPOT make
# 1:1 the cheapest plan (as in tests/cli-size.sh).
grep -v "^#" "$top_srcdir/tests/data/good/round.yaml" >"$tmp/round.yaml" # its lines as the error tests count them
mkdir -p "$tmp/stub"
for b in vllm trtllm-serve python; do
	printf '#!/bin/sh\nprintf "%%s\\037" "$@" >>"%s/argv"; printf "\\036" >>"%s/argv"\n' \
		"$tmp" "$tmp" >"$tmp/stub/$b"
	chmod +x "$tmp/stub/$b"
done
# the name in evil-model.yml, its \n and \t as the bytes, behind an x: a
# name that starts with '-' is refused (below), never launched
evil=$(printf '%s\n\t<script>' "x-m\`touch PWNED-model1\`\$(touch PWNED-model2)'\"; system(\"touch PWNED-model3\")")
sed 's/^name: "-m/name: "x-m/' "$m" >"$tmp/evil-x.yml"
# (timed as the generic engine, the roofline the 1:1 plan was worked for in
# cli-size.sh: the engines' fixed costs would miss the 10.5 ms level)
for e in vllm sglang trtllm; do
	run "$KVPLAN" size --model "$tmp/evil-x.yml" --gpu "$tmp/round.yaml" --weights-bytes 10GB --utilization 1 \
		--activation-bytes 0 --overhead-bytes 0 --tp 1 --disagg 1:1 --tpot 0.0105 \
		--workload "$top_srcdir/tests/data/workloads/size-replicas.yaml" --engine generic --emit $e
	expect_rc 0
	expect_out "# disaggregated: 1 prefill and 1 decode instance"
	sed -n "/^# $e: /,\$p" "$tmp/out" >"$tmp/emit-$e.sh"
	rm -f "$tmp/argv"
	mkdir -p "$tmp/run-$e" && (cd "$tmp/run-$e" && PATH="$tmp/stub:$PATH" sh "$tmp/emit-$e.sh") \
		>/dev/null 2>&1
	# one model argument per role: vllm serve NAME, python -m
	# sglang.launch_server --model-path NAME, trtllm-serve NAME (the two
	# workers; the front, trtllm-serve disaggregated, names no model)
	n=$(awk -v want="$evil" 'BEGIN { RS = "\036"; FS = "\037" }
		{ for (i = 1; i <= NF; i++) if ($i == want) c++ } END { print c + 0 }' "$tmp/argv")
	name="$e disaggregated: the hostile name is one argument of each role's command"
	[ "$n" = 2 ] && ok || bad "$n calls had it: $(tr '\036\037' '\n|' <"$tmp/argv")"
	no_marker "running the $e disaggregated launch script"
done

# N6: what `size --emit` launches.  Each emitted script runs under sh with
# the stub engines above; the model argument must arrive as the exact bytes
# planned, one argument of each engine call.
# emit_model MODEL ENGINE WANT: plan MODEL with --emit ENGINE, run the script
# (in a fresh folder under $tmp/emit-run), and count the calls that had WANT
emit_model() {
	run "$KVPLAN" size --model "$1" --gpu "$tmp/round.yaml" --weights-bytes 10GB --utilization 1 \
		--activation-bytes 0 --overhead-bytes 0 --tp 1 --tpot 0.0105 \
		--workload "$top_srcdir/tests/data/workloads/size-replicas.yaml" --engine generic --emit "$2"
	expect_rc 0
	sed -n "/^# $2: /,\$p" "$tmp/out" >"$tmp/emit.sh"
	rm -rf "$tmp/argv" "$tmp/emit-run" && mkdir "$tmp/emit-run"
	(cd "$tmp/emit-run" && PATH="$tmp/stub:$PATH" sh "$tmp/emit.sh") >/dev/null 2>&1
	n=$(awk -v want="$3" 'BEGIN { RS = "\036"; FS = "\037" }
		{ for (i = 1; i <= NF; i++) if ($i == want) c++ } END { print c + 0 }' "$tmp/argv")
	name="emit $2 of $1: the model argument is '$3', literally"
	[ "$n" = 1 ] && ok || bad "$n calls had it: $(tr '\036\037' '\n|' <"$tmp/argv")"
	no_marker "running the $2 launch script of $1"
}
# a name that starts with '-' would be an engine option: refused (exit 3,
# the file and field named), nothing emitted
for e in vllm sglang trtllm; do
	run "$KVPLAN" size --model "$m" --gpu "$tmp/round.yaml" --weights-bytes 10GB --utilization 1 \
		--activation-bytes 0 --overhead-bytes 0 --tp 1 --tpot 0.0105 \
		--workload "$top_srcdir/tests/data/workloads/size-replicas.yaml" --engine generic --emit $e
	expect_rc 3
	expect_err "evil-model.yml: error: name: '-m"
	expect_err "starts with '-': an engine would read it as an option"
	name="emit $e of a '-' name: no command printed"
	case $out in *serve*|*launch_server*) bad "$out" ;; *) ok ;; esac
done
# a local config.json is launched from its folder, as given (not the bare
# folder name, not the _name_or_path it declares): the hostile folder, a
# relative folder that starts with '-' (written ./-dash), and a folder path
# of 300 bytes (past the 127 of a name, within the 511 of a path)
mkdir -p "$tmp/-dash" && cp "$top_srcdir/tests/data/hf/Llama-2-7b/config.json" "$tmp/-dash/"
long="$tmp/$(printf '%0150d' 0)/$(printf '%0150d' 1)"
mkdir -p "$long" && cp "$top_srcdir/tests/data/hf/Llama-2-7b/config.json" "$long/"
for e in vllm sglang trtllm; do
	emit_model "$hf/config.json" $e "$hf"
	emit_model "-dash/config.json" $e "./-dash"
	emit_model "$long/config.json" $e "$long"
done
# U+0085 (NEL), U+2028 and U+2029 in an hf_id: one argument as they are,
# and \u escapes in the here-document's YAML, which would read them raw as
# line breaks
id=$(printf 'org/a\302\205b\342\200\250c\342\200\251d')
# (written in the profile as YAML's own escapes \N \L \P: raw, a YAML
# reader folds them as line breaks)
{ grep -v '^#' "$top_srcdir/tests/data/good/tiny.yaml"; printf 'hf_id: "org/a\\Nb\\Lc\\Pd"\n'; } >"$tmp/tiny.yaml"
emit_model "$tmp/tiny.yaml" vllm "$id"
name="emit vllm: the config file's model line escapes NEL, LS and PS"
line=$(grep '^model: ' "$tmp/emit-run/kvplan-vllm.yaml")
[ "$line" = 'model: "org/a\u0085b\u2028c\u2029d"' ] && ok || bad "$line"
name="emit vllm: no raw NEL, LS or PS in the config file"
if LC_ALL=C grep -q "$(printf '\302\205\|\342\200\250\|\342\200\251')" "$tmp/emit-run/kvplan-vllm.yaml"; then
	bad "raw line breaks"; else ok; fi
# N14: `kvplan list` shows a file name's control characters, never sends
# them (an ESC drives the terminal), and a line break in a name keeps the
# name on one line; a model file's warning, which quotes the file, likewise
# on stderr, and it reaches JSON as {code: model_file, message}.
esc=$(printf '\033')
lp="$tmp/list-profiles"
mkdir -p "$lp/models"
touch "$lp/models/a${esc}[31mred.yaml" "$lp/models/two
lines.yaml"
run env KVPLAN_PROFILES="$lp" "$KVPLAN" list models
expect_rc 0
name="list: no raw ESC"
case $out in *"$esc"*) bad "raw ESC in $(printf '%s' "$out" | od -c | head -3)" ;; *) ok ;; esac
name="list: the ESC shown as \\x1b"
printf '%s\n' "$out" | grep -qxF 'a\x1b[31mred' && ok || bad "$out"
name="list: the name with a line break is one line, shown as \\n"
printf '%s\n' "$out" | grep -qxF 'two\nlines' && ok || bad "$out"
name="list: no line is half a name"
printf '%s\n' "$out" | grep -qx 'two\|lines' && bad "$out" || ok
# an HF config in a folder named with an ESC, whose quantization method (an
# ESC in it too) kvplan does not know: a warning (hf-quant.c)
wq="$tmp/q${esc}[2J"
mkdir -p "$wq"
sed "s/^{/{\"quantization_config\": {\"quant_method\": \"we\\\\u001bird\"},/" \
	"$top_srcdir/tests/data/hf/Llama-2-7b/config.json" >"$wq/config.json"
for c in budget perf frag size; do
	case $c in
	budget) set -- budget --gpu h100-sxm --context 1k ;;
	perf) set -- perf --gpu h100-sxm --prompt 100 --output 10 --batch 1 ;;
	frag) set -- frag --gpu h100-sxm --workload chat --requests 20 ;;
	size) set -- size --gpu h100-sxm --workload chat --tp 1 ;;
	esac
	run "$KVPLAN" "$@" --model "$wq/config.json" --format json
	name="$c: the model file's warning on stderr"
	case $err in *"warning: quantization_config.quant_method"*) ok ;; *) bad "$err" ;; esac
	name="$c: no raw ESC on stderr"
	case $err in *"$esc"*) bad "raw ESC" ;; *) ok ;; esac
	name="$c: the warning in JSON, code model_file"
	case $out in *'"code": "model_file"'*'quant_method: unknown quantization method'*) ok ;;
	*) bad "$(printf '%s' "$out" | grep -A3 warnings)" ;; esac
	name="$c: the ESC in JSON as \\u001b"
	case $out in *'\u001b[2J/config.json:'*) ok ;; *) bad "$(printf '%s' "$out" | grep -A3 warnings)" ;; esac
done
# N19: CSV cells are valid UTF-8 and hold no control byte: a model folder
# named with a byte that is not UTF-8 (\377), ESC, a line break and a C1
# NEL reaches the CSV cell as U+FFFD, \x1b, \n and \u0085, one line.
cb="$tmp/c$(printf '\377\033[1m\n\302\205')x"
mkdir -p "$cb" && cp "$top_srcdir/tests/data/hf/Llama-2-7b/config.json" "$cb/"
run "$KVPLAN" budget --model "$cb/config.json" --gpu h100-sxm --context 1k --format csv
expect_rc 0
name="csv: two lines, a header and one record"
[ "$(printf '%s\n' "$out" | wc -l)" = 2 ] && ok || bad "$out"
name="csv: no control byte but the line ends, no C1 NEL"
if printf '%s' "$out" | tr -d '\n' | LC_ALL=C grep -q "$(printf '[\001-\037\177]\\|\302\205')"; then
	bad "$(printf '%s' "$out" | od -c | head -5)"; else ok; fi
name="csv: valid UTF-8"
if command -v iconv >/dev/null 2>&1; then
	printf '%s' "$out" | iconv -f UTF-8 -t UTF-8 >/dev/null 2>&1 && ok || bad "not UTF-8"
else ok; fi
name="csv: the folder as U+FFFD, \\x1b, \\n, \\u0085"
case $out in *"c$(printf '\357\277\275')\x1b[1m\n\u0085x"*) ok ;; *) bad "$(printf '%s' "$out" | tail -1 | od -c | head)" ;; esac
# D21: Markdown links and images from names are text in report.md, not
# links: a title, description and workload name holding [x](javascript:..),
# an image and a link reference, each [ ] escaped as \[ \] (a renderer
# shows the bracket); a backslash cannot undo the escape (\\ first)
mkdir -p "$tmp/mdrep"
sed -e 's|^title: .*|title: "T [click](javascript:alert(1)) ![i](http://e.test/x.png)"|' \
	-e 's|^  - {name: short,|  - {name: "s\\\\[w](javascript:alert(2))",|' \
	-e 's|^description: .*|description: "[ref]: javascript:alert(3)"|' -e '/^  First paragraph/,/^  Second/d' \
	-e 's|\.\./good/|'"$top_srcdir"'/tests/data/good/|g' \
	-e 's|fixed-100.yaml|'"$top_srcdir"'/tests/data/report/fixed-100.yaml|' \
	-e 's|kvbench-results.yaml|'"$top_srcdir"'/tests/data/report/kvbench-results.yaml|' \
	"$top_srcdir/tests/data/report/tiny.yaml" >"$tmp/mdrep/s.yaml"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" report "$tmp/mdrep/s.yaml" -o "$tmp/mdrep/out"
expect_rc 0
md="$tmp/mdrep/out/report.md"
name="report.md: no live link or image from a name"
# a live one: ] directly before ( or :, the ] not escaped (fenced code
# blocks, where Markdown makes no link, aside)
live=$(awk '/^```/ { fence = !fence; next } !fence' "$md" |
	grep -n '\(^\|[^\\]\)\](\|^\[[^]]*\]:' | grep -v '](plots/' | head -3)
[ -z "$live" ] && ok || bad "$live"
name="report.md: the title's link shown as text"
grep -qF '# T \[click\](javascript:alert(1)) !\[i\](http://e.test/x.png)' "$md" && ok || bad "$(head -3 "$md")"
name="report.md: the link reference shown as text"
grep -qF '\[ref\]: javascript:alert(3)' "$md" && ok || bad "$(sed -n 1,6p "$md")"
name="report.md: a backslash in a name escaped before the bracket"
grep -qF 's\\\[w\](javascript:alert(2))' "$md" && ok || bad "$(grep -n 'javascript:alert(2)' "$md" | head -2)"
# N11: chart stems are unique.  Two models whose names differ only in
# punctuation ("q4+a", "q4 a": both stem q4_a) or in case ("Q4_A"), as two
# GGUF quantizations with one general.name do: each chart keeps its own
# files (-2, -3 after the first), and each heading shows its own image.
mkdir -p "$tmp/stems"
for n in "q4+a" "q4 a" "Q4_A"; do
	f="$tmp/stems/$(printf '%s' "$n" | tr ' +' '-p').yml"
	grep -v '^#' "$top_srcdir/tests/data/good/tiny.yaml" | sed "s/^name: tiny/name: \"$n\"/" >"$f"
done
printf '%s\n' 'title: stems' 'models: [q4pa.yml, q4-a.yml, Q4_A.yml]' 'gpus: [h100-sxm]' \
	'engines: [generic]' 'tp: [1]' 'kv_dtypes: [auto]' 'workloads:' \
	'  - {name: w, context: 1k, batch: 1}' 'plots: [budget, max-seqs]' >"$tmp/stems/s.yaml"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" report "$tmp/stems/s.yaml" -o "$tmp/stems/out"
expect_rc 0
for c in budget max-seqs; do
	name="$c: three charts, three stems"
	got=$(cd "$tmp/stems/out/plots" && ls $c-*.gp | LC_ALL=C sort | tr '\n' ' ')
	[ "$got" = "$c-Q4_A-3.gp $c-q4_a-2.gp $c-q4_a.gp " ] && ok || bad "$got"
	# in the scenario's order: q4+a, q4 a, Q4_A (its case kept: -3 makes it
	# unique on a case-blind disk too)
	for pair in "q4_a:q4+a" "q4_a-2:q4 a" "Q4_A-3:Q4_A"; do
		name="$c: plots/$c-${pair%%:*}.gp is ${pair#*:}'s chart"
		grep -qF "${pair#*:}" "$tmp/stems/out/plots/$c-${pair%%:*}.gp" && ok ||
			bad "$(grep -i 'title' "$tmp/stems/out/plots/$c-${pair%%:*}.gp" | head -2)"
	done
	name="$c: report.md points at each stem"
	n=$(grep -io "plots/$c-q4_a\(-[23]\)\{0,1\}\.dat" "$tmp/stems/out/report.md" | sort -u | wc -l)
	[ "$n" = 3 ] && ok || bad "$n stems named"
done
finish
