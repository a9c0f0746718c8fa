#!/bin/sh
# cli-install.sh: which data a kvplan reads (issue 35).  A kvplan run from its
# build tree (or through a symlink to it) reads the source tree's profiles/;
# a copy outside the tree, as `make install` makes, reads only its installed
# data directory, $KVPLAN_DATA in its place, and $KVPLAN_PROFILES: never
# the checkout, which may be on another branch or gone.  A real
# `make install` is too slow for the suite; a copy of the binary is what it
# installs.  And config.h carries the data directory, so a new --prefix
# rebuilds what reads it.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
unset KVPLAN_PROFILES KVPLAN_PROFILE_PATH KVPLAN_DATA

# a copy of the program itself (scripts/memcheck.sh's kvplan is a wrapper
# script that would run the build tree's)
if [ "$(head -c 4 "$KVPLAN" | od -An -c | tr -d ' ')" != '177ELF' ]; then
	echo "cli-install: $KVPLAN is not the program (a wrapper?); skipped"
	exit 77
fi
case "$tmp/" in "$top_builddir"/* | "$top_srcdir"/*)
	echo "cli-install: the temporary folder $tmp is inside the tree; skipped"
	exit 77 ;;
esac
mkdir -p "$tmp/bin" "$tmp/data/profiles/models" "$tmp/data/profiles/gpus"
cp "$KVPLAN" "$tmp/bin/kvplan"
ln -s "$KVPLAN" "$tmp/bin/link"
sed 's/^name: tiny$/name: only-here/' "$top_srcdir/tests/data/good/tiny.yaml" \
	>"$tmp/data/profiles/models/only-here.yaml"
cp "$top_srcdir/tests/data/good/tinygpu.yaml" "$tmp/data/profiles/gpus/"

# the build tree's kvplan, and a symlink to it, read the tree
run "$KVPLAN" list models
expect_rc 0
expect_out "llama-3.1-8b"
run "$tmp/bin/link" budget --model llama-3.1-8b --gpu h100-sxm --context 8k --format json
expect_rc 0
expect_json kv_bytes_per_token 131072 # 2 x 32 layers x 8 KV heads x 128 x 2 B

# the copy does not: with nothing installed at its data directory it finds
# no profile (where one is installed, what it finds is that one's, not
# the tree's, which the $KVPLAN_DATA cases below show)
if [ -n "${kvp_pkgdatadir:-}" ] && [ ! -e "$kvp_pkgdatadir" ]; then
	run "$tmp/bin/kvplan" budget --model llama-3.1-8b --gpu h100-sxm --context 8k
	expect_rc 3
	expect_err "no profile named 'llama-3.1-8b'"
	run "$tmp/bin/kvplan" list models
	[ -z "$out" ] && ok || bad "the copy lists the tree's models: $(echo "$out" | head -3)"
fi
# $KVPLAN_DATA in the data directory's place: its profiles and only those
run env KVPLAN_DATA="$tmp/data" "$tmp/bin/kvplan" list models
expect_rc 0
[ "$out" = "only-here" ] && ok || bad "KVPLAN_DATA: lists '$out', want only 'only-here'"
run env KVPLAN_DATA="$tmp/data" "$tmp/bin/kvplan" budget --model llama-3.1-8b --gpu h100-sxm
expect_rc 3
expect_err "no profile named 'llama-3.1-8b'"
# tiny: 2 x 4 layers x 2 KV heads x 64 x 2 B = 2,048 B a token (on tinygpu's
# 1 GiB it does not fit an engine's overhead: exit 1, the budget printed)
run env KVPLAN_DATA="$tmp/data" "$tmp/bin/kvplan" budget --engine generic --model only-here \
	--gpu tinygpu --context 1k --format json
expect_rc 1
expect_json kv_bytes_per_token 2048
expect_json gpu_memory_bytes 1073741824
# the default engine (vLLM) needs its profile, which this folder lacks:
# the error says so and how to plan without one
run env KVPLAN_DATA="$tmp/data" "$tmp/bin/kvplan" budget --model only-here --gpu tinygpu \
	--context 1k --format json
expect_rc 3
expect_err "no profile named 'vllm'"
expect_err "vllm is the default engine; --engine generic plans without an engine profile"
# ... for the build tree's kvplan too
run env KVPLAN_DATA="$tmp/data" "$KVPLAN" list models
[ "$out" = "only-here" ] && ok || bad "KVPLAN_DATA from the tree: lists '$out'"
# $KVPLAN_PROFILES is read by the copy, before its data directory
run env KVPLAN_PROFILES="$top_srcdir/profiles" KVPLAN_DATA="$tmp/data" "$tmp/bin/kvplan" \
	budget --model llama-3.1-8b --gpu h100-sxm --context 8k --format json
expect_rc 0
expect_json kv_bytes_per_token 131072

# config.h carries the data directory make installs into ($(pkgdatadir),
# as make expands it), and profile.c reads it from there, not from a -D
if [ -n "${kvp_pkgdatadir:-}" ] && [ -f "$top_builddir/config.h" ]; then
	name="config.h: KVP_PKGDATADIR"
	grep -qxF "#define KVP_PKGDATADIR \"$kvp_pkgdatadir\"" "$top_builddir/config.h" && ok ||
		bad "config.h lacks '#define KVP_PKGDATADIR \"$kvp_pkgdatadir\"'"
	name="config.h: KVP_BUILD_TREE"
	grep -qxF "#define KVP_BUILD_TREE \"$(cd "$top_builddir" && pwd)\"" "$top_builddir/config.h" &&
		ok || bad "config.h lacks the build tree"
fi
name="profile.c includes config.h"
grep -q '^#include "config.h"' "$top_srcdir/src/read/profile.c" && ok || bad "it does not"

finish
