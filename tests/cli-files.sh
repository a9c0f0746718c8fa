#!/bin/sh
# cli-files.sh: kvplan is careful with the user's files (issue 17): every
# output goes through a temporary file and a rename, so a full disk, a write
# error or a kill -9 leaves the previous file whole; an output that is one of
# the command's own inputs is refused; a write error on standard output is
# an error exit; inputs that are directories, FIFOs or devices are named as
# such and refused without blocking; plot's default folder is its own.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
data="$top_srcdir/tests/data"
w="$tmp/work"
mkdir -p "$w"

# no temporary file (.NAME.*.tmp) left in folder $1
no_temp() {
	name="no temporary file left in $1"
	left=$(find "$1" -name '.*.tmp' | head -n 3)
	[ -z "$left" ] && ok || bad "$left"
}

# --- standard output that cannot be written is an error exit
name="budget > /dev/full"
if [ -w /dev/full ]; then
	"$KVPLAN" budget --engine generic --model llama-2-7b --gpu h100-sxm >/dev/full 2>"$tmp/err"
	rc=$?; err=$(cat "$tmp/err")
	expect_rc 3
	expect_err "cannot write standard output: No space left on device"
	"$KVPLAN" check "$data/check/pass.yaml" --tap >/dev/full 2>"$tmp/err"
	rc=$?
	name="check --tap > /dev/full"
	expect_rc 3
fi
# a closed pipe with SIGPIPE ignored: EPIPE, exit 3 (with SIGPIPE the
# shell's default, the signal ends kvplan: exit 141, also not 0)
(trap '' PIPE; { sleep 1; "$KVPLAN" list models 2>"$tmp/err"; echo $? >"$tmp/rc"; } | true)
rc=$(cat "$tmp/rc"); err=$(cat "$tmp/err")
name="list models | (closed), SIGPIPE ignored"
expect_rc 3
expect_err "cannot write standard output: Broken pipe"

# --- an output that is one of the command's inputs is refused, untouched
cp "$data/check/pass.yaml" "$w/exp.yaml"
cp "$w/exp.yaml" "$w/exp.orig"
run "$KVPLAN" check "$w/exp.yaml" --update-baseline "$w/exp.yaml"
expect_rc 2
expect_err "--update-baseline '$w/exp.yaml' is the expectations FILE; not writing over an input"
name="expectations kept"
cmp -s "$w/exp.yaml" "$w/exp.orig" && ok || bad "exp.yaml changed"
run "$KVPLAN" check "$w/exp.yaml" --junit "$w/exp.yaml"
expect_rc 2
cmp -s "$w/exp.yaml" "$w/exp.orig" && ok || bad "exp.yaml changed by --junit"
# through a symlink or a hard link: the same inode, refused too
ln -s exp.yaml "$w/exp-link.yaml"
ln "$w/exp.yaml" "$w/exp-hard.yaml"
run "$KVPLAN" check "$w/exp.yaml" --junit "$w/exp-link.yaml"
expect_rc 2
run "$KVPLAN" check "$w/exp.yaml" --junit "$w/exp-hard.yaml"
expect_rc 2
cmp -s "$w/exp.yaml" "$w/exp.orig" && ok || bad "exp.yaml changed through a link"
# the baseline that is read cannot be the JUnit file either
run "$KVPLAN" check "$data/check/pass.yaml" --update-baseline "$w/base.yaml"
expect_rc 0
cp "$w/base.yaml" "$w/base.orig"
run "$KVPLAN" check "$data/check/pass.yaml" --baseline "$w/base.yaml" --junit "$w/base.yaml"
expect_rc 2
cmp -s "$w/base.yaml" "$w/base.orig" && ok || bad "base.yaml changed"
no_temp "$w"

# --- a target name of 254 bytes (NAME_MAX is 255): its temporary name fits too
long=$(printf '%0250d' 0).xml
run "$KVPLAN" check "$data/check/pass.yaml" --junit "$w/$long"
expect_rc 0
name="a 254-byte file name"
[ -s "$w/$long" ] && ok || bad "not written"
rm -f "$w/$long"

# --- an output through a planted symlink replaces the link, not its target
# (a link to a regular file or to nothing; issue 37 keeps this: a link in a
# shared folder cannot aim the write at another file)
echo "precious" >"$w/precious"
ln -s precious "$w/junit.xml"
run "$KVPLAN" check "$data/check/pass.yaml" --junit "$w/junit.xml"
expect_rc 0
name="symlink target untouched"
[ "$(cat "$w/precious")" = precious ] && [ ! -L "$w/junit.xml" ] && grep -q '<testsuites' "$w/junit.xml" &&
	ok || bad "$(ls -l "$w")"

# --- outputs that are not regular files are streamed to, never renamed over
# (issue 37, N1).  /dev/stdout: JUnit alone on stdout, whatever stdout is
# (a pipe here, then a file), the file stdout goes to kept as that file.
run "$KVPLAN" check "$data/check/pass.yaml" --junit /dev/stdout
expect_rc 0
name="--junit /dev/stdout: JUnit on stdout, no text report"
case "$out" in '<?xml'*'</testsuites>') ok ;; *) bad "$out" ;; esac
"$KVPLAN" check "$data/check/pass.yaml" --junit /dev/stdout >"$w/stdout.xml" 2>"$tmp/err"
rc=$?; name="--junit /dev/stdout > file"
expect_rc 0
head -n 1 "$w/stdout.xml" | grep -q '^<?xml' && grep -q '</testsuites>' "$w/stdout.xml" &&
	ok || bad "$(head -n 3 "$w/stdout.xml")"
# the file stdout goes to, named: the same as /dev/stdout
"$KVPLAN" check "$data/check/pass.yaml" --junit "$w/stdout.xml" >"$w/stdout.xml" 2>"$tmp/err"
rc=$?; name="--junit F > F"
expect_rc 0
[ "$(grep -c '<testsuites' "$w/stdout.xml")" = 1 ] && ok || bad "$(head -n 3 "$w/stdout.xml")"
# a FIFO made here: its reader gets the JUnit, and it stays a FIFO
mkfifo "$w/fifo"
cat "$w/fifo" >"$w/from-fifo" &
reader=$!
run timeout 20 "$KVPLAN" check "$data/check/pass.yaml" --junit "$w/fifo"
expect_rc 0
wait "$reader"
name="--junit FIFO: streamed, still a FIFO"
[ -p "$w/fifo" ] && grep -q '</testsuites>' "$w/from-fifo" && ok || bad "$(ls -l "$w/fifo")"
# a character device made here (1:3, a null device), where mknod is allowed
if mknod "$w/null" c 1 3 2>/dev/null; then
	run "$KVPLAN" check "$data/check/pass.yaml" --junit "$w/null"
	expect_rc 0
	name="--junit DEVICE: still a device"
	[ -c "$w/null" ] && ok || bad "$(ls -l "$w/null")"
	# and through a link: the device written, the link kept
	ln -s null "$w/null-link"
	run "$KVPLAN" check "$data/check/pass.yaml" --junit "$w/null-link"
	expect_rc 0
	name="--junit LINK-TO-DEVICE: link and device kept"
	[ -L "$w/null-link" ] && [ -c "$w/null" ] && ok || bad "$(ls -l "$w")"
else
	echo "# skip: mknod not allowed here (the device cases)"
fi
# --tap on stdout and JUnit to /dev/null, stdout also /dev/null: a device
# takes both, no usage error
"$KVPLAN" check "$data/check/pass.yaml" --tap --junit /dev/null >/dev/null 2>"$tmp/err"
rc=$?; name="--tap --junit /dev/null > /dev/null"
expect_rc 0
# a directory is refused by name
mkdir -p "$w/adir"
run "$KVPLAN" check "$data/check/pass.yaml" --junit "$w/adir"
expect_rc 3
expect_err "adir: error: a directory, not a file to write"
no_temp "$w"

# --- two outputs naming one file, or an output naming an input: usage (N18)
run "$KVPLAN" check "$data/check/pass.yaml" --junit "$w/both.yaml" --update-baseline "$w/./both.yaml"
expect_rc 2
expect_err "--junit and --update-baseline name the same file"
name="nothing written for two outputs on one file"
[ ! -e "$w/both.yaml" ] && ok || bad "both.yaml written"
cp "$w/exp.orig" "$w/exp2.yaml"
run "$KVPLAN" check "$w/exp2.yaml" --update-baseline "$w/../work/exp2.yaml"
expect_rc 2
expect_err "--update-baseline '$w/../work/exp2.yaml' is the expectations FILE"

# --- a full disk: the write fails, the previous file stays whole.  As root
# with mount: a 64 KiB tmpfs filled up; otherwise a file size limit of one
# 512-byte block (RLIMIT_FSIZE, SIGXFSZ ignored: write fails with EFBIG).
small="$tmp/small"
mkdir -p "$small"
full=""
if [ "$(id -u)" = 0 ] && mount -t tmpfs -o size=64k tmpfs "$small" 2>/dev/null; then
	full=tmpfs
	trap 'umount "$small" 2>/dev/null; rm -rf "$tmp"' EXIT
fi
run "$KVPLAN" check "$data/check/pass.yaml" --update-baseline "$small/base.yaml"
expect_rc 0
run "$KVPLAN" plot kv-context --engine generic --model llama-2-7b -o "$small/charts"
cp "$small/base.yaml" "$tmp/base.before"
cp "$small/charts/kv-context.dat" "$tmp/dat.before"
if [ "$full" = tmpfs ]; then
	dd if=/dev/zero of="$small/filler" bs=1k count=128 2>/dev/null # fills it
	limit=""
else
	limit="ulimit -f 1;"
fi
sh -c "trap '' XFSZ; $limit exec \"\$@\"" sh "$KVPLAN" check "$data/check/rows.yaml" \
	--update-baseline "$small/base.yaml" >"$tmp/out" 2>"$tmp/err"
rc=$?; err=$(cat "$tmp/err"); name="baseline on a full disk ($full${limit:+RLIMIT_FSIZE})"
expect_rc 3
expect_err "base.yaml: error: cannot write"
cmp -s "$small/base.yaml" "$tmp/base.before" && ok || bad "previous baseline changed"
sh -c "trap '' XFSZ; $limit exec \"\$@\"" sh "$KVPLAN" plot kv-context --engine generic \
	--model llama-2-7b,llama-3.1-8b,mistral-7b-v0.1 -o "$small/charts" >"$tmp/out" 2>"$tmp/err"
rc=$?; err=$(cat "$tmp/err"); name="plot on a full disk"
expect_rc 3
expect_err "kv-context.dat: error: cannot write"
cmp -s "$small/charts/kv-context.dat" "$tmp/dat.before" && ok || bad "previous .dat changed"
no_temp "$small"
[ "$full" = tmpfs ] && umount "$small"

# --- gnuplot exits 0 after a short write on a full disk (it does not check
# its writes): a gnuplot made here that writes a cut image and exits 0.  The
# cut image is removed and the warning says so (an image is a warning's
# matter in plot, as a missing gnuplot is: exit 0, data and script kept).
for term in svg png pdf; do
	printf '#!/bin/sh\ncase "$1" in *.gp) ;; *) exit 2 ;; esac\nprintf "<svg><g>cut" >"${1%%.gp}.%s"\n' \
		"$term" >"$tmp/cut-gnuplot"
	chmod +x "$tmp/cut-gnuplot"
	run env KVPLAN_GNUPLOT="$tmp/cut-gnuplot" "$KVPLAN" plot kv-context --engine generic --model llama-2-7b \
		--term "$term" -o "$w/cutplot"
	expect_rc 0
	expect_err "kv-context.$term: error: $tmp/cut-gnuplot wrote a cut image (a full disk?), removed"
	name="no cut $term image left"
	[ ! -e "$w/cutplot/kv-context.$term" ] && ok || bad "$(ls -l "$w/cutplot")"
done
# a whole SVG (ends with </svg>) passes
printf '#!/bin/sh\nprintf "<svg>\\n</svg>\\n" >"${1%%.gp}.svg"\n' >"$tmp/whole-gnuplot"
chmod +x "$tmp/whole-gnuplot"
run env KVPLAN_GNUPLOT="$tmp/whole-gnuplot" "$KVPLAN" plot kv-context --engine generic --model llama-2-7b \
	--term svg -o "$w/cutplot"
expect_rc 0
expect_out "kv-context.svg"

# --- a figure that overflows to infinity is an error naming the field, never
# "inf" in a table or CSV (issue 37, N16)
# 1e308 $/GPU-hour x 2 GPUs = 2e308 > DBL_MAX (1.797e308)
for fmt in table csv json; do
	run "$KVPLAN" size --engine generic --model llama-3.1-8b --workload chat --gpu h100-sxm \
		--price h100-sxm=1e308 --tp 2 --format "$fmt"
	expect_rc 3
	expect_err "h100-sxm, tp 2, 2 GPUs: cost_per_hour: overflows to infinity"
	name="size --format $fmt: nothing printed"
	[ -z "$out" ] && ok || bad "$out"
done
# ...while 1e308 x 1 GPU is finite and printed
run "$KVPLAN" size --engine generic --model llama-3.1-8b --workload chat --gpu h100-sxm --price h100-sxm=1e308 \
	--tp 1 --format csv
expect_rc 0
# prefill of 64 prompts of 131,072 tokens: at least 2 x 8.0e9 parameters x
# 131,072 x 64 = 1.3e17 FLOP; at 3e-308 of the H100's 989 TFLOP/s (3e-293
# FLOP/s) that is 4.5e309 s > DBL_MAX
run "$KVPLAN" perf --engine generic --model llama-3.1-8b --gpu h100-sxm --prefill-flops-efficiency 3e-308 \
	--prompt 131072 --output 128 --batch 64 --format csv
expect_rc 3
expect_err "kvplan perf: batch 64: prefill_s: overflows to infinity"
name="perf: nothing printed"
[ -z "$out" ] && ok || bad "$out"

# a FIFO at the image's name is neither removed nor written (gnuplot would
# block on it): a warning, the FIFO kept
mkdir -p "$w/fifoplot"
mkfifo "$w/fifoplot/kv-context.svg"
run env KVPLAN_GNUPLOT="$tmp/whole-gnuplot" timeout 20 "$KVPLAN" plot kv-context --engine generic \
	--model llama-2-7b --term svg -o "$w/fifoplot"
expect_rc 0
expect_err "kv-context.svg: error: not a regular file; not letting $tmp/whole-gnuplot write over it"
name="the FIFO at the image's name kept"
[ -p "$w/fifoplot/kv-context.svg" ] && ok || bad "$(ls -l "$w/fifoplot")"

# --- kill -9 while the report is being written (gnuplot, here a script that
# waits, runs while report.md is open): the previous report stays whole
r="$w/report"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" report "$data/report/tiny.yaml" -o "$r"
expect_rc 0
cp "$r/report.md" "$tmp/report.before"
printf '#!/bin/sh\ntouch "%s/started"; sleep 30\n' "$tmp" >"$tmp/slow-gnuplot"
chmod +x "$tmp/slow-gnuplot"
KVPLAN_GNUPLOT="$tmp/slow-gnuplot" "$KVPLAN" report "$data/check/../report/tiny.yaml" -o "$r" \
	>/dev/null 2>&1 &
pid=$!
i=0
while [ ! -f "$tmp/started" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
name="kill -9 mid-report"
[ -f "$tmp/started" ] && cmp -s "$r/report.md" "$tmp/report.before" && ok ||
	bad "report.md changed or the run never started"
pkill -P $$ sleep 2>/dev/null

# --- SIGTERM at the same moment (N18): the previous report whole, and the
# temporary files removed by the signal handler (kill -9 cannot do that)
r="$w/report-term"
run env KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" report "$data/report/tiny.yaml" -o "$r"
expect_rc 0
cp "$r/report.md" "$tmp/report-term.before"
rm -f "$tmp/started"
printf '#!/bin/sh\necho $$ >"%s/gnuplot.pid"; touch "%s/started"; exec sleep 30\n' "$tmp" "$tmp" \
	>"$tmp/slow-gnuplot2"
chmod +x "$tmp/slow-gnuplot2"
KVPLAN_GNUPLOT="$tmp/slow-gnuplot2" "$KVPLAN" report "$data/report/tiny.yaml" -o "$r" \
	>/dev/null 2>&1 &
pid=$!
i=0
while [ ! -f "$tmp/started" ] && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
name="a temporary file exists while gnuplot runs"
[ -n "$(find "$r" -name '.*.tmp')" ] && ok || bad "none: the SIGTERM case below shows nothing"
kill -TERM $pid 2>/dev/null
wait $pid 2>/dev/null
rc=$?
kill "$(cat "$tmp/gnuplot.pid" 2>/dev/null)" 2>/dev/null
name="SIGTERM mid-report: killed by the signal (exit 143)"
[ "$rc" = 143 ] && ok || bad "exit $rc"
name="SIGTERM mid-report: the previous report whole"
cmp -s "$r/report.md" "$tmp/report-term.before" && ok || bad "report.md changed"
no_temp "$r"

# --- inputs that are not regular files: named, refused, never waited on
mkfifo "$w/fifo.yaml"
for spec in "$w:a directory" "$w/fifo.yaml:a FIFO" "/dev/null:a character device" \
	    "$w/none.yaml:no such file"; do
	path=${spec%%:*}
	run timeout 10 "$KVPLAN" budget --engine generic --model "$path" --gpu h100-sxm
	expect_rc 3
	expect_err "$path: error: ${spec#*:}"
done
run timeout 10 "$KVPLAN" check "$w/fifo.yaml"
expect_rc 3
expect_err "fifo.yaml: error: cannot open: a FIFO, not a regular file"
run timeout 10 "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm --workload "$w/fifo.yaml"
expect_rc 3
expect_err "a FIFO"

# --- a folder here named like a profile hides no profile: a bare name
# (no '/', no .yaml/.yml/.json/.gguf ending) is a profile's, found through
# the profile folders; a path is a path (profile.c kvp_profile_resolve)
h="$tmp/here"
mkdir -p "$h/vllm" "$h/h100-sxm" "$h/llama-2-7b" "$h/chat"
cd "$h"
run "$KVPLAN" perf --engine vllm --gpu h100-sxm --model llama-2-7b --batch 4 --context 1024
expect_rc 0
expect_out "llama-2-7b on h100-sxm, engine vllm"
run "$KVPLAN" frag --engine vllm --gpu h100-sxm --model llama-2-7b --workload chat --requests 50
expect_rc 0
# written as a path, the folder is what is meant, and refused by name
run "$KVPLAN" perf --engine vllm --gpu ./h100-sxm --model llama-2-7b
expect_rc 3
expect_err "./h100-sxm: error: a directory, not a regular file"
# a bare name ending in .yaml is a file here: read, not looked up
cp "$top_srcdir/profiles/gpus/h100-sxm.yaml" "$h/mine.yaml"
run "$KVPLAN" budget --engine generic --gpu mine.yaml --model llama-2-7b
expect_rc 0
run "$KVPLAN" budget --engine generic --gpu gone.yaml --model llama-2-7b
expect_rc 3
expect_err "gone.yaml: error: no such file"
cd - >/dev/null

# --- plot writes into a folder of its own by default, not into .
(cd "$w" && KVPLAN_GNUPLOT=/nonexistent "$KVPLAN" plot kv-context --engine generic --model llama-2-7b >/dev/null 2>&1)
name="plot's default folder"
[ -f "$w/kvplan-plots/kv-context.dat" ] && [ ! -f "$w/kv-context.dat" ] && ok || bad "$(ls "$w")"
finish
