#!/bin/sh
# cli-docs.sh: every command the documentation shows runs as written.
#
# Extracted: the kvplan/kvbench commands of README.md's indented code blocks,
# of the EXAMPLES sections of man/*.1 and man/*.5 (`$ ` shell sessions too),
# and the `Example:` lines of every `--help` text (kvplan, each subcommand,
# kvbench), continuation lines (`\`) joined, trailing `# comments` dropped;
# plus the expectations YAML that README.md, kvplan(1) (CHECK) and
# `kvplan check --help` show, each run by `kvplan check`.
#
# Each source runs as one shell session in a fresh temporary folder that
# looks like the top of a clone after scripts/setup.sh: ./kvplan and
# ./kvbench, examples/, profiles/ and reports/ (links to the tree), the
# built programs first on PATH, HOME inside the folder.  Every command must
# exit 0 and print nothing on stderr but documented warnings and notes
# (`kvplan CMD: warning: ...`, `kvplan CMD: note: ...`, `kvplan CMD: WHERE:
# warning: ...`).  The documented
# exceptions:
#   - `--backend cuda` may exit 77 with "no CUDA device" (README, kvbench(1));
#     then every later command of the session that reads a file it would
#     have written (`--out FILE`) is skipped and counted as such;
#   - the README makes its own ci/budgets.yaml and baseline (its `mkdir -p
#     DIR && cp ...` line runs too, and --update-baseline) before the CI step
#     reads them: nothing is made for it;
#   - a command whose trailing comment says "exits N" must exit N (a plan
#     that does not fit exits 1: kvplan(1));
#   - a documented marker skips a long command: in a man page the roff
#     comment `.\" cli-docs: skip WORD reason` and in README.md the comment
#     `<!-- cli-docs: skip WORD reason -->` skip that file's commands that
#     contain WORD.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"

KVBENCH="$top_builddir/kvbench"
skipped=0

# The folder a new user stands in: sets $d.
fresh() {
	d=$(mktemp -d "$tmp/run.XXXXXX")
	ln -s "$KVPLAN" "$d/kvplan"
	ln -s "$KVBENCH" "$d/kvbench"
	for x in examples profiles reports; do ln -s "$top_srcdir/$x" "$d/$x"; done
	mkdir "$d/home"
}

# commands FILE KIND: one command a line on stdout.  KIND readme: indented
# code lines; man: lines between .SH EXAMPLES and the next .SH, roff escapes
# undone; help: `Example:` lines and what continues them.
commands() {
	awk -v kind="$2" '
	function unroff(s) {
		gsub(/\\-/, "-", s); gsub(/\\e/, "\\", s); gsub(/\\\(aq/, "\047", s)
		gsub(/\\fB|\\fR|\\fI|\\fP/, "", s)
		return s
	}
	function emit(s,   note) {
		note = ""                             # a trailing comment, kept
		if (match(s, /[ \t]+# .*$/)) { note = substr(s, RSTART); s = substr(s, 1, RSTART - 1) }
		sub(/[ \t]+$/, "", s)
		sub(/^[ \t]+# /, "", note)
		print s "\t" note
	}
	{
		line = $0
		if (kind == "man") {
			if (line ~ /^\.SH /) { inex = (line ~ /^\.SH EXAMPLES/); next }
			if (!inex || line ~ /^\./) next
			line = unroff(line)
		} else if (kind == "readme") {
			if (line !~ /^    /) { cont = 0; next }
		} else if (kind == "help") {
			if (line ~ /^Example: /) sub(/^Example: /, "", line)
			else if (!cont) next
		}
		sub(/^[ \t]+/, "", line)
		if (kind == "man") sub(/^\$ /, "", line)
		# the set-up line ends in the main job: "scripts/setup.sh && ... && kvplan ..."
		if (kind == "readme" && !cont && match(line, /&& (\.\/)?(kvplan|kvbench) /))
			line = substr(line, RSTART + 3)
		if (cont) { cur = cur " " line }
		else if (line ~ /^(\.\/)?(kvplan|kvbench) / ||
			 (kind == "readme" && line ~ /^mkdir -p [A-Za-z0-9._\/-]+ && cp /) ||
			 (kind == "man" && $0 ~ /^\$ /)) { cur = line }
		else next
		if (cur ~ /\\$/) { sub(/[ \t]*\\$/, "", cur); cont = 1; next }
		cont = 0
		emit(cur)
	}' "$1"
}

# markers FILE: the words whose commands that file skips.
markers() {
	sed -n -e 's/^\.\\" cli-docs: skip \([^ ]*\).*/\1/p' \
	       -e 's/^<!-- cli-docs: skip \([^ ]*\).*/\1/p' "$1"
}

# session SRC LISTFILE MARKERS: run the commands of LISTFILE in order in one
# shell of a fresh folder; check each one's status and stderr.
session() {
	src=$1 list=$2 skipwords=$3
	fresh
	gone=""                      # files a command exiting 77 did not write
	i=0
	tab=$(printf '\t')
	while IFS= read -r line; do
		c=${line%%"$tab"*}
		note=${line#*"$tab"}
		# "exits N" in the command's comment documents its status
		want=$(echo "$note" | sed -n 's/.*exits \([0-9][0-9]*\).*/\1/p')
		want=${want:-0}
		i=$((i + 1))
		name="$src: $c"
		skip=""
		for w in $skipwords; do case "$c" in *"$w"*) skip="marker $w" ;; esac; done
		for f in $gone; do case " $c " in *" $f "* | *" $f,"* | *",$f "*) skip="no $f" ;; esac; done
		if [ -n "$skip" ]; then
			skipped=$((skipped + 1))
			echo "skip ($skip): $c"
			continue
		fi
		(cd "$d" && HOME="$d/home" PATH="$top_builddir:$PATH" sh -c "$c" \
			>"$d/.out.$i" 2>"$d/.err.$i" </dev/null)
		rc=$?
		# kvbench's documented progress (kvbench(1): the plan, a line per
		# point) and its warnings are not noise either, nor a warning located
		# at the input it is about (`kvplan size: NAME: warning: model: ...`,
		# a model name read as a profile)
		noise=$(grep -v -e '^kvplan [a-z]*: warning: ' -e '^kvplan [a-z]*: note: ' \
			-e '^kvplan [a-z]*: [^ ]*: warning: ' \
			-e '^  ' -e '^kvbench: [0-9][0-9,]* points\{0,1\}, about ' \
			-e '^kvbench: \[[0-9]*/[0-9]*\] ' -e '^kvbench: [0-9][0-9,]* points\{0,1\} in ' -e '^kvbench: warning: ' "$d/.err.$i")
		case "$c" in
		*"--backend cuda"*)
			if [ "$rc" = 77 ]; then
				case "$noise" in *"no CUDA device"*) noise="" ;; esac
				out_file=$(echo "$c" | sed -n 's/.*--out \([^ ]*\).*/\1/p')
				[ -n "$out_file" ] && gone="$gone $out_file"
				rc=$want
			fi ;;
		esac
		if [ "$rc" != "$want" ]; then bad "exit $rc, documented $want: $(head -c 600 "$d/.err.$i")"; continue; fi
		if [ -n "$noise" ]; then bad "stderr: $noise"; continue; fi
		ok
	done <"$list"
}

# The shell session of kvplan-profiles(5) exports a variable for the lines
# after it: those run in one shell, with its exit status and stderr checked
# as a whole.
man_session() {
	src=$1 list=$2
	fresh
	name="$src: the shell session"
	cut -f1 "$list" >"$d/.session"
	(cd "$d" && HOME="$d/home" PATH="$top_builddir:$PATH" sh -e "$d/.session" >"$d/.out" 2>"$d/.err" </dev/null)
	rc=$?
	if [ "$rc" != 0 ]; then bad "exit $rc: $(cat "$d/.err")"
	elif [ -s "$d/.err" ]; then bad "stderr: $(cat "$d/.err")"
	else ok; fi
}

n_cmds=0
commands "$top_srcdir/README.md" readme >"$tmp/readme.cmds"
session README.md "$tmp/readme.cmds" "$(markers "$top_srcdir/README.md")"
n_cmds=$((n_cmds + $(wc -l <"$tmp/readme.cmds")))

for m in "$top_srcdir"/man/*.[15]; do
	b=$(basename "$m")
	commands "$m" man >"$tmp/$b.cmds"
	n_cmds=$((n_cmds + $(wc -l <"$tmp/$b.cmds")))
	if grep -q '^export ' "$tmp/$b.cmds"; then
		man_session "$b" "$tmp/$b.cmds"
	else
		session "$b" "$tmp/$b.cmds" "$(markers "$m")"
	fi
done

: >"$tmp/help.cmds"
"$KVPLAN" --help >"$tmp/help.txt"
commands "$tmp/help.txt" help >>"$tmp/help.cmds"
for sub in $("$KVPLAN" --help | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 }'); do
	"$KVPLAN" "$sub" --help >"$tmp/help.txt" 2>&1
	name="kvplan $sub --help"
	if [ $? = 0 ]; then ok; else bad "exit status"; fi
	# help texts are printed as data, not as printf formats: a doubled %%
	# there reaches the reader as two characters (perf's 80%% until now)
	name="kvplan $sub --help: no doubled %"
	if grep -n '%%' "$tmp/help.txt" >"$tmp/pct"; then bad "$(cat "$tmp/pct")"; else ok; fi
	commands "$tmp/help.txt" help >>"$tmp/help.cmds"
done
"$KVBENCH" --help >"$tmp/help.txt"
commands "$tmp/help.txt" help >>"$tmp/help.cmds"
session "--help" "$tmp/help.cmds" ""
n_cmds=$((n_cmds + $(wc -l <"$tmp/help.cmds")))

# The expectations YAML the three documents show must hold as written.
yaml_check() {
	name="$1: its expectations example"
	fresh
	cp "$2" "$d/shown.yaml"
	(cd "$d" && "$KVPLAN" check shown.yaml >"$d/.out" 2>"$d/.err")
	rc=$?
	if [ "$rc" = 0 ] && [ ! -s "$d/.err" ]; then ok
	else bad "exit $rc: $(grep -i -e fail -e error "$d/.out" "$d/.err" | head -5)"; fi
}
"$KVPLAN" check --help | awk '/^  scenarios:/ { on = 1 } on && /^$/ { exit } on { print substr($0, 3) }' \
	>"$tmp/help.yaml"
yaml_check "kvplan check --help" "$tmp/help.yaml"
awk '/^    scenarios:/ { on = 1 } on && !/^    / && !/^$/ { exit } on { print substr($0, 5) }' \
	"$top_srcdir/README.md" >"$tmp/readme.yaml"
yaml_check README.md "$tmp/readme.yaml"
awk '/^The file \(YAML/ { want = 1; next } want && /^\.nf/ { on = 1; next } on && /^\.fi/ { exit }
     on { gsub(/\\-/, "-"); print }' "$top_srcdir/man/kvplan.1" >"$tmp/man.yaml"
yaml_check kvplan.1 "$tmp/man.yaml"

# The extraction itself must have found the documents' commands.
name="commands found"
if [ "$n_cmds" -ge 30 ]; then ok; else bad "only $n_cmds commands extracted"; fi
echo "$n_cmds documented commands, $skipped skipped"
finish
