#!/bin/sh
# engine-logs.sh: kvplan against every recorded public engine start-up log
# (tests/data/engine-logs/*.yaml, each quoted in reports/engine-logs.md), both
# ways (a measurement, not a test; tests/check-engine.c asserts the first for
# vLLM):
#   logged terms  what the engine printed -> tokens, through `kvplan budget
#                 --engine E` with every other term 0; the log prints 2
#                 decimals of GiB, so each printed figure +/- 0.005 GiB bounds it:
#                 vllm    logged_kv_budget (the "Available KV cache memory")
#                 sglang  logged_free_before / logged_free_after ("avail mem"
#                         at load begin and end: the weights are their
#                         difference) and the mem_fraction_static in
#                         utilization; free_before_rounding when the free
#                         memory before load is a sum of two printed figures
#                 trtllm  logged_available ("available:" free memory after
#                         load) and the free fraction in utilization; or
#                         logged_kv_memory, the KV memory the PyTorch
#                         backend prints with the fraction already applied
#                         ("available KV cache memory when calculating max
#                         tokens", "Estimated max memory in KV cache"), run
#                         at utilization 1
#   config alone  only the GPU total, utilization and settings the log shows;
#                 every other term estimated (kvplan's model of the engine)
# Each case names its engine (engine: vllm|sglang|trtllm) and block_size.
# Prints each case, then median and p90 of |error|, the signed mean, how many
# cases over-predict by more than 2 %, how many logged values fall inside
# the printed band, and (config alone) the band's median width.  A case with `known_miss` (its mechanism kvplan does not
# model, named there; `known_miss_way: logged|config` when only one way) is
# printed with "miss" and left out of that way's statistics;
# one without logged_kv_budget (no budget line in the log) has no logged-terms
# row.  Optional case keys: dtype, weights_dtype, kv_dtype, dp, ep, gpu_profile (the
# --gpu profile whose name picks vLLM's batch defaults), engine_version (the
# modelled vLLM version nearest the log's; default the newest), p2p (yes|no:
# where the log says vLLM's custom all-reduce is disabled, "no").
#
# Usage: bench/engine-logs.sh [--check] [PATH-TO-KVPLAN]   (default: ./kvplan)
#   ENGINE_LOGS_DIR  read the cases from there instead (the test's bad cases)
#   --check  exit 1 unless every logged-terms case (known misses aside) is
#            within the log's rounding (tests/cli-engine-logs.sh)
set -e
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
top=$(cd "$(dirname "$0")/.." && pwd)
kvplan=${1:-$top/kvplan}
[ -x "$kvplan" ] || { echo "engine-logs: build kvplan first (make)" >&2; exit 1; }

# field FILE KEY: a scalar of the flat case file, quotes and comments removed
field() {
	sed -n "s/^$2:[[:space:]]*//p" "$1" | sed 's/[[:space:]]*#.*//; s/^"//; s/"$//'
}
# json FIELD: a number from kvplan's JSON on stdin
json() { sed -n "s/^ *\"$1\": \\([0-9][0-9]*\\).*/\\1/p" | head -n 1; }

tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
printf '%-30s %-10s %10s %10s %8s %10s %8s %s\n' case way logged kvplan error band_lo band_hi inside
for f in "${ENGINE_LOGS_DIR:-$top/tests/data/engine-logs}"/*.yaml; do
	id=$(basename "$f" .yaml)
	model=$(field "$f" model)
	case $model in */*) model=$top/$model ;; esac
	miss=$(field "$f" known_miss)
	tp=$(field "$f" tp)
	ctx=$(field "$f" max_model_len)
	[ "$ctx" = null ] && ctx=1024
	want=$(field "$f" logged_tokens)
	budget=$(field "$f" logged_kv_budget)
	extra=""
	mbt=$(field "$f" max_num_batched_tokens)
	[ -n "$mbt" ] && extra="$extra --max-batched-tokens $mbt"
	seqs=$(field "$f" max_num_seqs)
	[ -n "$seqs" ] && extra="$extra --max-num-seqs $seqs"
	for k in dtype:--dtype weights_dtype:--weights-dtype kv_dtype:--kv-dtype dp:--dp ep:--ep gpu_profile:--gpu \
		engine_version:--engine-version p2p:--p2p; do
		v=$(field "$f" "${k%%:*}")
		[ -n "$v" ] && extra="$extra ${k#*:} $v"
	done
	way=$(field "$f" known_miss_way)   # logged|config; absent: both ways
	engine=$(field "$f" engine)
	engine=${engine:-vllm}
	block=$(field "$f" block_size)
	case $engine in
	vllm) block=${block:-16} ;;
	sglang|trtllm) block=${block:-1}; extra="$extra --block-size $block" ;;
	*) echo "engine-logs: $id: unknown engine '$engine'" >&2; exit 1 ;;
	esac
	util=$(field "$f" utilization)
	# logged terms: the terms the log printed, each +/- 0.005 GiB (middle,
	# fewest tokens, most tokens); every other term 0
	: > "$tmp"
	case $engine in
	vllm)
		gib=${budget%GiB}
		[ -n "$budget" ] && for d in 0 -0.005 0.005; do
			g=$(awk -v b="$gib" -v d="$d" 'BEGIN { printf "%.4fGiB", b + d }')
			"$kvplan" budget --engine vllm --model "$model" --tp "$tp" --context "$ctx" $extra \
				--gpu-memory "$g" --utilization 1 --weights-bytes 0 --activation-bytes 0 \
				--overhead-bytes 0 --format json | json max_tokens
		done > "$tmp" ;;
	sglang)
		# rest = after - before x (1 - f) = before x f - (before - after)
		before=$(field "$f" logged_free_before); after=$(field "$f" logged_free_after)
		rb=$(field "$f" free_before_rounding); rb=${rb:-0.005}
		budget=$before
		[ -n "$before" ] && [ -n "$after" ] && for d in 0 -1 1; do
			set -- $(awk -v b="${before%GiB}" -v a="${after%GiB}" -v d="$d" -v rb="$rb" 'BEGIN {
				b -= d * rb; a += d * 0.005
				printf "%.4fGiB %.4fGiB\n", b, b - a }')
			"$kvplan" budget --engine sglang --model "$model" --tp "$tp" --context "$ctx" $extra \
				--gpu-memory "$1" --utilization "$util" --weights-bytes "$2" \
				--activation-bytes 0 --overhead-bytes 0 --format json | json max_tokens
		done > "$tmp" ;;
	trtllm)
		avail=$(field "$f" logged_available)
		lutil=$util
		kvmem=$(field "$f" logged_kv_memory)
		[ -z "$avail" ] && [ -n "$kvmem" ] && { avail=$kvmem; lutil=1; }
		budget=$avail
		[ -n "$avail" ] && for d in 0 -0.005 0.005; do
			g=$(awk -v b="${avail%GiB}" -v d="$d" 'BEGIN { printf "%.4fGiB", b + d }')
			"$kvplan" budget --engine trtllm --model "$model" --tp "$tp" --context "$ctx" $extra \
				--gpu-memory "$g" --utilization "$lutil" --weights-bytes 0 --activation-bytes 0 \
				--overhead-bytes 0 --format json | json max_tokens
		done > "$tmp" ;;
	esac
	tag=yes; [ -n "$miss" ] && [ "$way" != config ] && tag=miss
	[ -n "$budget" ] && {
	got=$(sed -n 1p "$tmp"); lo=$(sed -n 2p "$tmp"); hi=$(sed -n 3p "$tmp")
	[ -n "$got" ] || { echo "engine-logs: $id: kvplan failed (logged terms)" >&2; got=0 lo=0 hi=0; }
	# one block either side: the engine floors per worker and group
	awk -v c="$id" -v w="$want" -v g="$got" -v lo="$lo" -v hi="$hi" -v tag="$tag" -v blk="$block" 'BEGIN {
		e = 100 * (g - w) / w; ok = (w >= lo - blk && w <= hi + blk) ? "yes" : "NO"
		if (tag == "miss") ok = ok "/miss"
		printf "%-30s %-10s %10d %10d %+7.3f%% %10d %8d %s\n", c, "logged", w, g, e, lo, hi, ok
		if (tag != "miss") print "L", e, ok > "/dev/stderr" }' 2>>"$tmp.stats"
	}
	# config alone, where the GPU total is printed
	[ "$(field "$f" config_alone)" = true ] || continue
	tag=yes; [ -n "$miss" ] && [ "$way" != logged ] && tag=miss
	total=$(field "$f" gpu_memory)
	"$kvplan" budget --engine "$engine" --model "$model" --tp "$tp" --context "$ctx" $extra \
		--gpu-memory "$total" --utilization "$util" --format json > "$tmp" || true
	got=$(json max_tokens < "$tmp"); lo=$(json max_tokens_low < "$tmp")
	hi=$(json max_tokens_high < "$tmp")
	[ -n "$got" ] || { echo "engine-logs: $id: kvplan failed" >&2; got=0 lo=0 hi=0; }
	awk -v c="$id" -v w="$want" -v g="$got" -v lo="$lo" -v hi="$hi" -v tag="$tag" 'BEGIN {
		e = 100 * (g - w) / w; ok = (w >= lo && w <= hi) ? "yes" : "NO"
		if (tag == "miss") ok = ok "/miss"
		printf "%-30s %-10s %10d %10d %+7.3f%% %10d %8d %s\n", c, "config", w, g, e, lo, hi, ok
		if (tag != "miss") print "C", e, ok, (g > 0 ? 100 * (hi - lo) / g : 0) > "/dev/stderr" }' 2>>"$tmp.stats"
done
echo
for way in L C; do
	grep "^$way " "$tmp.stats" | awk -v way="$way" '
		{ e[NR] = $2; a[NR] = $2 < 0 ? -$2 : $2; s += $2; if ($2 > 2) over++; if ($3 == "yes") inb++
		  wd[NR] = $4 }
		END {
			if (!NR) exit
			for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
			med = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
			p = int(0.9 * NR + 0.999999); if (p < 1) p = 1
			printf "%s: %d cases, median |error| %.3f%%, p90 %.3f%%, signed mean %+.3f%%, over-predicting > 2%%: %d, logged value inside the band: %d of %d\n",
				way == "L" ? "logged terms" : "config alone", NR, med, a[p], s / NR, over + 0, inb + 0, NR
			if (way == "C") {
				for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (wd[j] < wd[i]) { t = wd[i]; wd[i] = wd[j]; wd[j] = t }
				printf "config alone: band width (high - low) / kvplan, median %.1f%%, smallest %.1f%%, largest %.1f%%\n",
					NR % 2 ? wd[(NR + 1) / 2] : (wd[NR / 2] + wd[NR / 2 + 1]) / 2, wd[1], wd[NR]
			}
		}'
done
bad=$(grep -c '^L .* NO$' "$tmp.stats" || true)
rm -f "$tmp.stats"
if [ "$check" = 1 ] && [ "$bad" != 0 ]; then
	echo "engine-logs: $bad logged-terms case(s) outside the log's rounding" >&2
	exit 1
fi
