#!/bin/sh
# perf-measured.sh: `kvplan perf` against public, measured serving results
# (tests/data/perf-measured/*.yaml, one case a file, each quoting its source;
# how they were collected: reports/perf-measured.md).  A measurement, not a
# test: the evidence issue 32's time model is judged on.
#
# Each case gives the engine's shape (model and GPU profile, tp, pp, dp, ep,
# weights_dtype, kv_dtype, prompt, output, batch; assume_engine_version, the
# release a source that names none was run as, or the one a source names
# where kvplan models that release apart from the default (the SGLang
# 0.4.1.post2 cases), passed as --engine-version, the case saying why) and
# one published metric:
#   tpot_ms             time per output token (TPOT or ITL)  <- tpot_loaded_s (at a
#                       concurrency: the others' prefills ride in the steps; tpot_s at 1)
#   ttft_ms             time to first token                  <- ttft_s (B prompts in one pass)
#   latency_s           a static batch end to end            <- e2e_s = ttft_s + (output - 1) x tpot_s
#   output_tps          output tokens/s of the whole replica <- output_tokens_per_s (prefill included)
#   output_tps_per_gpu  the same per GPU                     <- output_tokens_per_s_per_gpu
#   decode_tps          batch-1 generation tokens/s          <- 1 / tpot_s
#   prefill_tps         prompt tokens/s of one prefill       <- prompt / ttft_s
# (the right-hand side is kvplan's printed JSON field, as a user reads it).
# batch: max (a run at the engine's full load, its running batch not
# published) asks kvplan at its own largest batch that fits (max_batch at
# prompt + output), capped at max_batch_cap (default: 4096 for TensorRT-LLM, its
# trtllm-bench's own cap, bench/measured-lib.sh; 2048 for the others).
#
# Sign convention: every error is the signed SPEED bias,
#   speed ratio = kvplan's speed / the measured speed
#               = measured time / predicted time       (time metrics)
#               = predicted rate / measured rate       (rate metrics)
#   error       = speed ratio - 1
# positive = kvplan predicts faster than measured (optimistic), negative =
# slower.  |error| is taken of that figure.
#
# Prints each case, then per regime (batch1-decode, loaded, prefill), per GPU
# and per engine: count, median |error|, p90 |error|, signed mean speed bias
# and the share within +/-15 %, for all cases and for the fit and holdout
# parts separately.  Cases kvplan cannot express (a `skip:` in the case, a GPU
# or model without a profile, a shape that does not fit) are listed with the
# reason, and the missing profiles at the end.
# A case with `guard: no` (and a comment saying why) is measured and printed
# like any other but left out of --check's regression guard.
#
# Usage: bench/perf-measured.sh [--check] [PATH-TO-KVPLAN]   (default: ./kvplan)
#   PERF_MEASURED_DIR  read the cases from there instead
#   --check  also print issue 32's targets per regime, met or not, and exit 1
#            when the figures fall below the guard (the end of this file)
set -e
check=0
[ "${1:-}" = --check ] && { check=1; shift; }
top=$(cd "$(dirname "$0")/.." && pwd)
kvplan=${1:-$top/kvplan}
[ -x "$kvplan" ] || { echo "perf-measured: build kvplan first (make)" >&2; exit 1; }

. "$top/bench/measured-lib.sh"

tmp=$(mktemp)
stats=$(mktemp)
skips=$(mktemp)
trap 'rm -f "$tmp" "$stats" "$skips"' EXIT
printf '%-46s %-12s %-7s %-13s %-7s %-18s %5s %11s %11s %8s %s\n' \
	case gpu engine regime split metric batch measured kvplan speed note
for f in "${PERF_MEASURED_DIR:-$top/tests/data/perf-measured}"/*.yaml; do
	id=$(basename "$f" .yaml)
	gpu=$(field "$f" gpu); model=$(field "$f" model); engine=$(field "$f" engine)
	regime=$(field "$f" regime); part=$(field "$f" split); metric=$(field "$f" metric)
	measured=$(field "$f" measured); prompt=$(field "$f" prompt); output=$(field "$f" output)
	skip=$(field "$f" skip)
	guard=$(field "$f" guard | tr -d " \t")
	if [ -n "$skip" ]; then
		echo "$id|$gpu|$model|$skip" >> "$skips"; continue
	fi
	if [ ! -f "$top/profiles/gpus/$gpu.yaml" ]; then
		echo "$id|$gpu|$model|no GPU profile '$gpu'" >> "$skips"; continue
	fi
	if [ ! -f "$top/profiles/models/$model.yaml" ]; then
		echo "$id|$gpu|$model|no model profile '$model'" >> "$skips"; continue
	fi
	args="$(shape_args "$f") --prompt $prompt --output $output --format json"
	batch=$(field "$f" batch)
	if [ "$batch" = max ]; then
		if ! batch=$(max_batch "$f" "$args"); then
			echo "$id|$gpu|$model|does not fit in kvplan's memory model at prompt + output" >> "$skips"
			continue
		fi
	fi
	# shellcheck disable=SC2086
	"$kvplan" perf $args --batch "$batch" > "$tmp" 2>/dev/null || true
	tpot=$(json tpot_s < "$tmp"); ttft=$(json ttft_s < "$tmp")
	tpotl=$(json tpot_loaded_s < "$tmp"); e2e=$(json e2e_s < "$tmp")
	tps=$(json output_tokens_per_s < "$tmp"); tpsg=$(json output_tokens_per_s_per_gpu < "$tmp")
	tlo=$(json time_ratio_low < "$tmp"); thi=$(json time_ratio_high < "$tmp")
	fits=$(jbool fits < "$tmp")
	if [ -z "$tpot" ] || [ -z "$ttft" ]; then
		echo "$id|$gpu|$model|kvplan perf failed: $args --batch $batch" >> "$skips"; continue
	fi
	awk -v c="$id" -v g="$gpu" -v e="$engine" -v r="$regime" -v p="$part" -v m="$metric" \
		-v b="$batch" -v meas="$measured" -v tpot="$tpot" -v ttft="$ttft" -v tps="$tps" \
		-v tpsg="$tpsg" -v out="$output" -v pr="$prompt" -v fits="$fits" -v tpotl="$tpotl" \
		-v e2e="$e2e" -v tlo="$tlo" -v thi="$thi" -v guard="$guard" 'BEGIN {
		time = 1
		if (m == "tpot_ms") pred = 1000 * tpotl
		else if (m == "ttft_ms") pred = 1000 * ttft
		else if (m == "latency_s") pred = e2e
		else { time = 0
			if (m == "output_tps") pred = tps
			else if (m == "output_tps_per_gpu") pred = tpsg
			else if (m == "decode_tps") pred = 1 / tpot
			else if (m == "prefill_tps") pred = pr / ttft
			else { print "perf-measured: " c ": unknown metric " m > "/dev/stderr"; exit 1 } }
		err = 100 * ((time ? meas / pred : pred / meas) - 1)
		# inside the printed band: measured time / predicted time in [low, high]
		ratio = time ? meas / pred : pred / meas
		inband = (ratio >= tlo - 1e-9 && ratio <= thi + 1e-9) ? 1 : 0
		printf "%-46s %-12s %-7s %-13s %-7s %-18s %5d %11.5g %11.5g %+7.1f%% %s\n", c, g, e, r, p, m, b,
			meas, pred, err, fits == "false" ? "kvplan: does not fit" : ""
		print r, g, e, p, err, inband, (guard == "no" ? 0 : 1) > "/dev/stderr" }' 2>>"$stats"
done

# summary DIM PART: one row per value of column DIM (1 regime, 2 gpu,
# 3 engine, 0 all) over the cases of PART (fit|holdout|all)
summary() {
	awk -v dim="$1" -v part="$2" '
		part != "all" && $4 != part { next }
		{ k = dim ? $dim : "all"; n[k]++; a[k, n[k]] = $5 < 0 ? -$5 : $5; s[k] += $5
		  if ($5 >= -15 && $5 <= 15) w[k]++
		  b[k] += $6 }
		END {
			for (k in n) {
				m = n[k]
				for (i = 1; i <= m; i++) v[i] = a[k, i]
				for (i = 2; i <= m; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
				med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
				p = int(0.9 * m + 0.999999); if (p < 1) p = 1
				printf "  %-16s %5d %10.1f%% %8.1f%% %+11.1f%% %9.0f%% %7.0f%%\n", k, m, med, v[p], s[k] / m, 100 * w[k] / m, 100 * b[k] / m
			}
		}' "$stats" | sort
}
for part in all fit holdout; do
	echo
	echo "== $part cases (speed bias: + = kvplan faster than measured) =="
	for d in 0:overall 1:regime 2:gpu 3:engine; do
		printf '  %-16s %5s %11s %9s %12s %10s %8s\n' "${d#*:}" n "median|e|" "p90|e|" "signed mean" "within15" "in band"
		summary "${d%%:*}" "$part"
	done
done

echo
echo "== skipped cases (kvplan cannot express them) =="
if [ -s "$skips" ]; then
	awk -F'|' '{ printf "  %-46s %s\n", $1, $4 }' "$skips"
else
	echo "  none"
fi
echo
echo "== missing profiles that would unlock skipped cases =="
missing=0
# shellcheck disable=SC2013 # profile names hold no spaces
for g in $(cut -d'|' -f2 "$skips" | sort -u); do
	[ -f "$top/profiles/gpus/$g.yaml" ] && continue
	printf '  gpu %-20s %d case(s)\n' "$g" "$(cut -d'|' -f2 "$skips" | grep -cx "$g")"; missing=1
done
# shellcheck disable=SC2013
for mo in $(cut -d'|' -f3 "$skips" | sort -u); do
	[ -f "$top/profiles/models/$mo.yaml" ] && continue
	printf '  model %-18s %d case(s)\n' "$mo" "$(cut -d'|' -f3 "$skips" | grep -cx "$mo")"; missing=1
done
[ "$missing" = 1 ] || echo "  none"

# --check: issue 32's targets per regime (batch1-decode, loaded, prefill),
# reported as met or not: median |error| <= 10 %, p90 |error| <= 25 %, at
# least 75 % of cases within +/-15 %, signed mean speed bias in [-10 %, +3 %]
# (never faster than reality on average), the measured value inside the
# printed band in at least 80 % of cases.  All three regimes meet them
# since 2026-12-07 (tests/cli-perf-measured.sh asserts each "met"); what
# --check asserts by its exit status (1 when broken) is a wider guard over
# the cases not marked `guard: no`, the level first reached: median |error| <= 12 %, p90 <= 36 %,
# signed mean <= +3 %, inside the band >= 78 % (2026-12-06, issue 32's
# third pass: TensorRT-LLM 0.17's KV cache read as the FP8 its page states;
# 14, 45, +5 and 74 in the second pass, 20, 50, +15 and 70 in the first), over every case but those marked
# `guard: no` (each says why: a mechanism kvplan has no term for yet; they
# stay in every table above) (PERF_MEASURED_GUARD="median p90 mean band"
# replaces the bounds).
if [ "$check" = 1 ]; then
	echo
	echo "== issue 32's targets, per regime (all cases) =="
	awk '{ r = $1; n[r]++; a[r, n[r]] = $5 < 0 ? -$5 : $5; s[r] += $5; b[r] += $6
	       if ($5 >= -15 && $5 <= 15) w[r]++ }
	     END { for (r in n) { m = n[r]
		for (i = 1; i <= m; i++) v[i] = a[r, i]
		for (i = 2; i <= m; i++) { t = v[i]; for (j = i - 1; j >= 1 && v[j] > t; j--) v[j + 1] = v[j]; v[j + 1] = t }
		med = m % 2 ? v[(m + 1) / 2] : (v[m / 2] + v[m / 2 + 1]) / 2
		p = int(0.9 * m + 0.999999); if (p < 1) p = 1
		mean = s[r] / m; wf = 100 * w[r] / m; bf = 100 * b[r] / m
		ok = med <= 10 && v[p] <= 25 && wf >= 75 && mean >= -10 && mean <= 3 && bf >= 80
		printf "  %-14s median %5.1f%% p90 %6.1f%% within15 %3.0f%% mean %+6.1f%% band %3.0f%%: %s\n",
			r, med, v[p], wf, mean, bf, ok ? "met" : "NOT met" } }' "$stats" | sort
	set -- ${PERF_MEASURED_GUARD:-12 36 3 78}
	awk -v gm="$1" -v gp="$2" -v gs="$3" -v gb="$4" '!$7 { out++; next }
	     { m++; a[m] = $5 < 0 ? -$5 : $5; s += $5; b += $6 }
	     END { for (i = 2; i <= m; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
		med = m % 2 ? a[(m + 1) / 2] : (a[m / 2] + a[m / 2 + 1]) / 2
		p = int(0.9 * m + 0.999999)
		printf "perf-measured: guard on %d cases (%d outside it, guard: no): median %.1f%% (<= %s), p90 %.1f%% (<= %s), mean %+.1f%% (<= +%s), band %.0f%% (>= %s)\n",
			m, out, med, gm, a[p], gp, s / m, gs, 100 * b / m, gb
		exit !(m > 0 && med <= gm && a[p] <= gp && s / m <= gs && 100 * b / m >= gb) }' "$stats" ||
		{ echo "perf-measured: --check: the time model fell below its guard" >&2; exit 1; }
fi
