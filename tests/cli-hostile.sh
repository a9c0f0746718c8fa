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
# the name in evil-model.yml, its \n and \t as the bytes
evil=$(printf '%s\n\t<script>' "-m\`touch PWNED-model1\`\$(touch PWNED-model2)'\"; system(\"touch PWNED-model3\")")
for e in vllm sglang trtllm; do
	run "$KVPLAN" size --model "$m" --gpu "$tmp/round.yaml" --weights-bytes 10GB --utilization 1 \
		--activation-bytes 0 --overhead-bytes 0 --tp 1 --disagg 1:1 --tpot 0.0105 \
		--workload "$top_srcdir/tests/data/workloads/size-replicas.yaml" --emit $e
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
finish
