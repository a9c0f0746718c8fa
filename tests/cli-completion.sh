#!/bin/sh
# cli-completion.sh: the bash completion (completion/kvplan) completes
# subcommands, flags and profile names; the zsh one at least parses.
# Skipped (77) without bash.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
command -v bash >/dev/null 2>&1 || { echo "no bash: skipped"; exit 77; }

# complete LINE: what the completion offers for the last word of LINE (a
# trailing space starts an empty word), one a line, sorted
mkdir "$tmp/empty"      # no files to offer beside the names
complete_line() {
	(cd "$tmp/empty" && PATH="$top_builddir:$PATH" LC_ALL=C bash -c '
		. "$1/completion/kvplan"
		line=$2
		read -ra COMP_WORDS <<<"$line"
		case $line in *" ") COMP_WORDS+=("") ;; esac
		COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
		case ${COMP_WORDS[0]} in *kvbench) _kvbench ;; *) _kvplan ;; esac
		printf "%s\n" "${COMPREPLY[@]}" | sort' sh "$top_srcdir" "$1")
}
# expect_completion LINE WANT: the offers, joined by spaces, are WANT
expect_completion() {
	name="complete '$1'"
	got=$(complete_line "$1" | tr '\n' ' ' | sed 's/ $//')
	if [ "$got" = "$2" ]; then ok; else bad "got '$got', want '$2'"; fi
}
# expect_offer LINE WORD: WORD is among the offers
expect_offer() {
	name="complete '$1' offers $2"
	if complete_line "$1" | grep -qx -- "$2"; then ok; else bad "$(complete_line "$1" | tr '\n' ' ')"; fi
}

expect_completion "kvplan bu" "budget"
expect_completion "kvplan v" "validate"
# validate's options for an engine's benchmark files, and --calibrate-by's values
expect_offer "kvplan validate --pro" "--prompt"
expect_offer "kvplan validate --" "--calibration"
# --calibration may be given twice (an engine calibration and a kvbench run):
# it is offered again after the first, and its value is a file
expect_offer "kvplan perf --calibration eng.yaml --cal" "--calibration"
expect_offer "kvplan size --calibration eng.yaml --cal" "--calibration"
touch "$tmp/empty/run.yaml"
expect_offer "kvplan serve --calibration eng.yaml --calibration " "run.yaml"
rm -f "$tmp/empty/run.yaml"
expect_offer "kvplan validate --" "--engine"
expect_completion "kvplan validate --calibrate-by " "dtype shape"
expect_offer "kvplan plot validate --" "--prompt"
expect_offer "kvplan " "frag"
expect_offer "kvplan " "report"
expect_completion "kvplan list " "gpus models workloads"
expect_completion "kvplan budget --gpu h100" "h100-pcie h100-sxm"
expect_completion "kvplan budget --gpu h100-sxm,h2" "h100-sxm,h20 h100-sxm,h200"
expect_completion "kvplan perf --model llama-3.1-" "llama-3.1-405b llama-3.1-70b llama-3.1-8b"
expect_completion "kvplan budget --gpu-m" "--gpu-memory"
expect_completion "kvplan budget --max-c" "--max-context"
expect_completion "kvplan perf --kv-o" "--kv-offload"
expect_completion "kvplan check --t" "--tap --tolerance"
expect_completion "kvplan budget --engine s" "sglang"
expect_completion "kvplan budget --format j" "json"
expect_completion "kvplan frag --workload c" "chat code-completion"
expect_completion "kvplan size --gpus a1" "a100-40gb a100-80gb a100-80gb-pcie a10g"
expect_completion "kvplan plot kv" "kv-context"
expect_completion "kvplan ca" "calibrate"
expect_completion "kvplan calibrate --hol" "--hold-out"
expect_completion "kvplan calibrate --fit decode_bw_efficiency,pre" \
	"decode_bw_efficiency,prefill_fixed_s decode_bw_efficiency,prefill_flops_efficiency"
expect_completion "kvbench --val" "--validate-only"
expect_completion "kvbench --backend c" "cpu cuda"
expect_completion "$top_builddir/kvbench --gpu l4" "l4 l40s"

# N2: a profile name is data, never code.  A models folder on
# $KVPLAN_PROFILES holds files whose names are a command substitution, a
# variable and a glob; completing them must not run the command (it would
# make the marker file), and each name is offered as its literal characters.
hp="$tmp/hostile-profiles"
mkdir -p "$hp/models"
marker="$tmp/empty/PWNED"     # the commands run where the completion runs
touch "$hp/models/\$(touch PWNED).yaml" "$hp/models/\${HOME}x.yaml" "$hp/models/\`touch PWNED\`.yaml" \
	"$hp/models/g*.yaml"
hostile_line() {
	(cd "$tmp/empty" && KVPLAN_PROFILES="$hp" PATH="$top_builddir:$PATH" LC_ALL=C bash -c '
		. "$1/completion/kvplan"
		COMP_WORDS=(kvplan size --model "$2"); COMP_CWORD=3
		_kvplan
		printf "%s\n" "${COMPREPLY[@]}"' sh "$top_srcdir" "$1")
}
for cur in '' '$' '$(' '`'; do
	got=$(hostile_line "$cur")
	name="complete --model '$cur' with hostile profile names: no command ran"
	if [ -e "$marker" ]; then bad "$marker was made"; rm -f "$marker"; else ok; fi
done
got=$(hostile_line '$(')
name="the \$(...) name is offered literally"
if [ "$got" = "\$(touch PWNED)" ]; then ok; else bad "got '$got'"; fi
got=$(hostile_line '$')
name="\${HOME}x is offered literally, not as the home directory"
case "$got" in *"\${HOME}x"*) ok ;; *) bad "got '$got'" ;; esac
got=$(hostile_line '`')
name="the backquoted name is offered literally"
if [ "$got" = "\`touch PWNED\`" ]; then ok; else bad "got '$got'"; fi
got=$(hostile_line 'g')
name="a name with * is one literal offer, not a glob"
if [ "$(printf '%s\n' "$got" | grep -cx 'g\*')" = 1 ]; then ok; else bad "got '$got'"; fi
# the file part of the completion does not expand the typed word either
got=$(hostile_line '$(touch PWNED)')
name="a typed \$(...) word completes as files without running"
if [ -e "$marker" ]; then bad "$marker was made"; rm -f "$marker"; else ok; fi

# A random sweep of the filter (seeded, so a failure repeats): 200 profile
# names of shell metacharacters; completing --model offers exactly what
# `kvplan list models` prints, each name whole, and runs nothing.
hp2="$tmp/fuzz-profiles"
mkdir -p "$hp2/models"
awk 'BEGIN { srand(37); s = "$`()[]{};&|*?~!#<>=%^ \\\"\047ab-"
	for (i = 0; i < 200; i++) { n = 1 + int(rand() * 12); w = ""
		for (j = 0; j < n; j++) w = w substr(s, 1 + int(rand() * length(s)), 1)
		print w } }' | while IFS= read -r n; do
	: >"$hp2/models/$n.yaml" 2>/dev/null || : >"$hp2/models/x$n.yaml"
done
want=$(KVPLAN_PROFILES="$hp2" "$KVPLAN" list models | LC_ALL=C sort)
got=$( (cd "$tmp/empty" && KVPLAN_PROFILES="$hp2" PATH="$top_builddir:$PATH" LC_ALL=C bash -c '
	. "$1/completion/kvplan"
	COMP_WORDS=(kvplan size --model ""); COMP_CWORD=3
	_kvplan
	printf "%s\n" "${COMPREPLY[@]}"' sh "$top_srcdir") | LC_ALL=C sort)
name="random metacharacter names: the offers are kvplan list's names, whole"
printf '%s\n' "$want" >"$tmp/want" && printf '%s\n' "$got" >"$tmp/got"
[ "$got" = "$want" ] && ok || bad "$(diff "$tmp/want" "$tmp/got" | head -5)"
name="random metacharacter names: no command ran"
found=$(find "$tmp" -name 'PWNED*' | head -3)
[ -z "$found" ] && ok || bad "$found"
name="random metacharacter names: at least 150 names made"
[ "$(ls "$hp2/models" | wc -l)" -ge 150 ] && ok || bad "$(ls "$hp2/models" | wc -l)"

# the zsh function is valid zsh, where zsh is installed
if command -v zsh >/dev/null 2>&1; then
	name="zsh -n completion/_kvplan"
	if zsh -n "$top_srcdir/completion/_kvplan"; then ok; else bad "syntax"; fi
else
	echo "no zsh here: completion/_kvplan not parsed"
fi
finish
