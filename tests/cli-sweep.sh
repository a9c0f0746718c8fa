#!/bin/sh
# cli-sweep.sh: scripts/cli-sweep.sh, the random CLI sweep CI runs against the
# sanitized kvplan (issue 37), can fail: fake programs that print a sanitizer
# report, exit 70, outrun the timeout or run a value as a command each fail
# it, with the reason in failures.txt; the real kvplan, a short seeded sweep,
# passes and runs the same lines twice over.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
sweep="$top_srcdir/scripts/cli-sweep.sh"
mkdir -p "$tmp/bin"
fake() { # fake NAME BODY: a kvplan that runs BODY
	printf '#!/bin/sh\n%s\n' "$2" >"$tmp/bin/$1"
	chmod +x "$tmp/bin/$1"
}
fake asan 'echo "==1==ERROR: AddressSanitizer: heap-buffer-overflow" >&2; exit 1'
fake ubsan 'echo "src/x.c:1:2: runtime error: signed integer overflow" >&2; exit 1'
fake internal 'exit 70'
fake slow 'exec sleep 5'
fake pwned ': >pwned; exit 0'
fake signal 'kill -SEGV $$'
for f in asan:"sanitizer report" ubsan:"sanitizer report" internal:"exit 70" slow:"timeout after 1 s" \
	pwned:"a value ran as a command" signal:"exit 139"; do
	p=${f%%:*} why=${f#*:}
	run env KVPLAN="$tmp/bin/$p" SWEEP_OUT="$tmp/out-$p" SWEEP_TIMEOUT=1 sh "$sweep" 2 1
	name="a fake kvplan ($p) fails the sweep"
	expect_rc 1
	name="$p: failures.txt gives the reason ($why) and the command line"
	n=$(grep -c "^run [12]: $why: '" "$tmp/out-$p/failures.txt" 2>/dev/null)
	[ "$n" = 2 ] && ok || bad "$(cat "$tmp/out-$p/failures.txt")"
done

run env KVPLAN="$KVPLAN" SWEEP_OUT="$tmp/real" sh "$sweep" 40 3
name="the real kvplan passes a seeded sweep of 40 lines"
expect_rc 0
expect_out "40 runs"
first=$out
run env KVPLAN="$KVPLAN" SWEEP_OUT="$tmp/real2" sh "$sweep" 40 3
name="the same seed gives the same runs and the same exits"
[ "${out% (list:*}" = "${first% (list:*}" ] && ok || bad "$out against $first"
finish
