#!/bin/sh
# cli-calibrate.sh: golden tests of `kvplan calibrate`: the fixtures of
# tests/data/bench/ (each written to its tool's schema; README there tells
# their story: llama-3.1-8b on h100-sxm at 0.70 of the bandwidth in decode,
# 0.50 of the peak in prefill), the calibration file and its use by perf,
# the refusals, located errors for bad files, and nothing half-written.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
d="$top_srcdir/tests/data/bench"
serve="$d/vllm-serve-c1.json $d/vllm-serve-c2.json $d/vllm-serve-c4.json $d/vllm-serve-c8.json
$d/vllm-serve-c16.json $d/vllm-serve-c32.json $d/vllm-serve-c48.json $d/vllm-serve-c64.json"
base="--gpu h100-sxm --model llama-3.1-8b"

run "$KVPLAN" calibrate --help
expect_rc 0
expect_out "Usage: kvplan calibrate"
expect_out "trtllm-bench"
run "$KVPLAN" calibrate $base
expect_rc 2
expect_err "expected one or more benchmark result files"
run "$KVPLAN" calibrate --model llama-3.1-8b $serve
expect_rc 2
expect_err "--gpu is required"
run "$KVPLAN" calibrate $base --fit decode_bw $serve
expect_rc 2
expect_err "--fit: unknown constant 'decode_bw'"

# Fitted on every second run (c1, c4, c16, c48), the others predicted
# within 7 % (the issue's target).  The runs are vLLM's, so the
# uncalibrated start holds vLLM's engine time data (profiles/engines); the
# fit moves the efficiencies and the fixed costs the runs tell apart (the
# story has none: tests/check-calibrate.c pins them and finds 0.70 and 0.50)
run "$KVPLAN" calibrate $base --hold-out 2 --format json $serve
expect_rc 0
m=$(json median_residual_held_out)
name="held-out median residual $m"
if awk -v m="$m" 'BEGIN { exit !(m < 0.07) }'; then ok; else bad "not within 7 %"; fi
run "$KVPLAN" calibrate $base --hold-out 2 --out "$tmp/cal.yaml" $serve
expect_rc 0
expect_out "decode_bw_efficiency                  0.8"
# h100-sxm has a measured GEMM table for bf16 (profiles/kernels): the
# prefill's constant is a scale on it (calibrate-fit.h), 1 uncalibrated
expect_out "prefill_flops_scale                     1"
# the uncalibrated column holds vLLM's time data: 0 us a step since the
# second fit (profiles/engines/vllm.yaml)
expect_out "step_fixed_s                            0 "
expect_out "on the 8 held-out times"
expect_out "vllm-serve-c64.json:1"
expect_out "Written: $tmp/cal.yaml"
for key in 'calibration:' '  - gpu: "h100-sxm"' '    engine: "vllm"' '    tp: 1' \
	'    decode_bw_efficiency: 0.' '    latency_spread: ' '    points: 8' \
	'      kvplan_version: ' '      created: ' 'vllm-serve-c2.json:1", format: vllm-serve, held_out: true'; do
	if grep -qF -- "$key" "$tmp/cal.yaml"; then ok; else bad "cal.yaml lacks '$key'"; fi
done
# perf applies it
run "$KVPLAN" perf $base --calibration "$tmp/cal.yaml"
expect_rc 0
expect_out "memory bandwidth 3.35 TB/s x efficiency 0."
expect_out "calibrated from $tmp/cal.yaml"
# serve applies it too: the fit's constants, not the GPU's and vLLM's, so
# the median TPOT moves
run "$KVPLAN" serve $base --engine vllm --rate 2 --requests 200 --workload chat --format json
expect_rc 0
before=$(json median_tpot_ms)
run "$KVPLAN" serve $base --engine vllm --rate 2 --requests 200 --workload chat --format json \
	--calibration "$tmp/cal.yaml"
expect_rc 0
after=$(json median_tpot_ms)
name="serve --calibration: median TPOT $before -> $after ms"
if awk -v a="$before" -v b="$after" 'BEGIN { exit !(b > a * 1.02 || b < a / 1.02) }'; then ok; else bad "unmoved"; fi
expect_json calibration "$tmp/cal.yaml"
expect_json calibration_kernel null
run "$KVPLAN" serve $base --engine vllm --rate 2 --requests 50 --workload chat --format json
expect_json calibration null
# size: its band is the fit's largest residual
run "$KVPLAN" size --model llama-3.1-8b --gpus h100-sxm --workload chat --rate 4 \
	--calibration "$tmp/cal.yaml" --format json
expect_rc 0
expect_json latency_spread_from calibration
expect_json calibration "$tmp/cal.yaml"
run "$KVPLAN" size --model llama-3.1-8b --gpus h100-sxm --workload chat --rate 4 --format json
expect_json calibration null
# calibrate's JSON shows the spreads its file writes: the same fit (the
# same runs, --hold-out 2) gives the file's latency_spread and
# latency_spread_loo, numbers read from the YAML (not from JSON)
run "$KVPLAN" calibrate $base --hold-out 2 --format json $serve
for k in latency_spread latency_spread_loo; do
	want=$(sed -n "s/^    $k: //p" "$tmp/cal.yaml")
	got=$(json $k)
	name="calibrate JSON $k $got = the file's $want"
	if [ -n "$want" ] && awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(d < 1e-12 && d > -1e-12) }'
	then ok; else bad "differs"; fi
done
run "$KVPLAN" calibrate $base --evaluate --format json $serve
expect_json latency_spread_loo null

# The issue's target across two sessions: calibrated on half the runs,
# written; the other half predicted with that file, nothing fitted
run "$KVPLAN" calibrate $base --out "$tmp/half.yaml" "$d/vllm-serve-c1.json" "$d/vllm-serve-c4.json" \
	"$d/vllm-serve-c16.json" "$d/vllm-serve-c48.json"
expect_rc 0
run "$KVPLAN" calibrate $base --evaluate --calibration "$tmp/half.yaml" --format json \
	"$d/vllm-serve-c2.json" "$d/vllm-serve-c8.json" "$d/vllm-serve-c32.json" "$d/vllm-serve-c64.json"
expect_rc 0
m=$(json median_residual)
name="the held-out half's median residual $m"
if awk -v m="$m" 'BEGIN { exit !(m < 0.07) }'; then ok; else bad "not within 7 %"; fi
run "$KVPLAN" calibrate $base --evaluate --out "$tmp/x.yaml" "$d/vllm-serve-c2.json"
expect_rc 2
expect_err "--evaluate fits nothing"
# uncalibrated, one run will do: the defaults are 0.80 / 0.60 against the
# story's 0.70 / 0.50, so every time is predicted short
run "$KVPLAN" calibrate $base --evaluate "$d/vllm-serve-c2.json"
expect_rc 0
expect_out "GPU's uncalibrated constants; nothing fitted"

# vLLM's --append-result: runs one after another in one file (c1 is 39 lines)
cat "$d/vllm-serve-c1.json" "$d/vllm-serve-c64.json" >"$tmp/appended.json"
run "$KVPLAN" calibrate $base --evaluate --format csv "$tmp/appended.json"
expect_rc 0
expect_out "appended.json:1,vllm-serve,ttft,1,"
expect_out "appended.json:40,vllm-serve,tpot,63.9999"

# JSON and CSV
run "$KVPLAN" calibrate $base --format json $serve
expect_rc 0
expect_json runs 8
expect_json written null
expect_json name decode_bw_efficiency
expect_json measure ttft
run "$KVPLAN" calibrate $base --format csv $serve
expect_rc 0
expect_out "schema_version,run,format,measure,batch,prompt_tokens,output_tokens,measured_s"
n=$(printf '%s\n' "$out" | wc -l)
if [ "$n" = 17 ]; then ok; else bad "$n CSV lines, want a header and 16 times"; fi

# Each format read (a serving run: TTFT and TPOT; one_batch: prefill and step)
run "$KVPLAN" calibrate $base --format csv "$d/sglang-serving.jsonl" "$d/trtllm-report.json"
expect_rc 3
expect_err "engine: a trtllm run among sglang runs"
# SGLang's late-2024 line (as tests/data/bench-public/sglang-* were
# published): no median_tpot_ms, no concurrency.  Hand arithmetic: in
# flight = completed x mean_e2e_latency_ms / duration = 100 x 4.0 s / 50 s
# = 8; prompt 51,200 / 100 = 512, output 12,800 / 100 = 128; the TPOT is
# its median_itl_ms, 20 ms
run "$KVPLAN" calibrate $base --evaluate --format csv "$d/sglang-serving-2024.jsonl"
expect_rc 0
expect_out "sglang-serving-2024.jsonl:1,sglang-serving,ttft,8,512,128,0.1,"
expect_out "sglang-serving-2024.jsonl:1,sglang-serving,tpot,8,512,128,0.02,"
sed 's/"mean_e2e_latency_ms": 4000.0, //' "$d/sglang-serving-2024.jsonl" >"$tmp/sg-old.jsonl"
run "$KVPLAN" calibrate $base --evaluate "$tmp/sg-old.jsonl"
expect_rc 3
expect_err "sg-old.jsonl:1:1: error: concurrency: the requests in flight are unknown"
run "$KVPLAN" calibrate $base --format csv "$d/sglang-one-batch.jsonl"
expect_rc 0
expect_out "sglang-one-batch.jsonl:3,sglang-one-batch,decode_step,64,1024,16,0.010326"
run "$KVPLAN" calibrate $base --format csv "$d/genai-perf.json" "$d/aiperf.json"
expect_rc 0
expect_out "aiperf.json:1,aiperf,tpot,"
run "$KVPLAN" calibrate $base "$d/vllm-latency.json" "$d/vllm-serve-c1.json"
expect_rc 3
expect_err "vllm-latency.json:2:20: error: avg_latency: vllm bench latency records no shape"
run "$KVPLAN" calibrate $base --format csv "$d/vllm-latency.json#batch=8,prompt=32,output=128" \
	"$d/vllm-serve-c1.json" "$d/vllm-serve-c64.json"
expect_rc 0
expect_out "vllm-latency.json:1,vllm-latency,latency,8,32,128,0.883512"
run "$KVPLAN" calibrate $base "$d/vllm-latency.json#batch=8,size=3"
expect_rc 2
expect_err "expected FILE#batch=B,prompt=P,output=O"

# Engine versions that differ: a warning naming the run
sed '2s/"version": "0.5.10"/"version": "0.5.23"/' "$d/sglang-serving.jsonl" >"$tmp/sg.jsonl"
run "$KVPLAN" calibrate $base "$tmp/sg.jsonl"
expect_rc 0
expect_err "warning: $tmp/sg.jsonl:2: the run is on engine version 0.5.23, the others on 0.5.10"

# Refusals: one run; a constant the runs cannot tell apart
run "$KVPLAN" calibrate $base "$d/vllm-serve-c8.json"
expect_rc 3
expect_err "runs: too few runs: 1 run (2 measured times)"
run "$KVPLAN" calibrate $base --fit allreduce_latency_s $serve
expect_rc 3
expect_err "allreduce_latency_s: these runs cannot tell it apart"
# Only the constants asked for are judged against each other.  At --tp 2
# every step pays 2 x 32 all-reduces' latency beside step_fixed_s (step.c
# allreduce_s): one fixed time a step each, so on runs of one tp the two
# are collinear and asking for both is refused, naming the later; asked
# alone the latency is fitted, step_fixed_s (not asked) no longer hiding it
run "$KVPLAN" calibrate $base --tp 2 --fit step_fixed_s,allreduce_latency_s $serve
expect_rc 3
expect_err "allreduce_latency_s: these runs cannot tell it apart"
run "$KVPLAN" calibrate $base --tp 2 --fit allreduce_latency_s --format json $serve
expect_rc 0
# constants[] in calibrate's JSON: the field of the item named $1
json_const() { awk -v n="\"$1\"," -v k="\"$2\":" '$1 == "\"name\":" { in_ = ($2 == n) }
	in_ && $1 == k { sub(/,$/, "", $2); print $2; exit }' "$tmp/out"; }
if [ "$(json_const allreduce_latency_s fitted)" = true ]; then ok; else bad "allreduce_latency_s not fitted alone"; fi
if [ "$(json_const step_fixed_s supported)" = false ]; then ok; else bad "step_fixed_s supported beside allreduce_latency_s at one tp"; fi

# A fit worse than the model uncalibrated: the defaults predict worse-c*
# but c64's TPOT (twice it); the fit drags every TPOT towards the outlier,
# the median residual grows: refused, exit 1, nothing written (the files
# name no engine and were made from the generic engine's defaults at the
# flat 0.60: h100-sxm-flat.yaml, the profile giving that efficiency, so no
# GEMM table times the prefill)
run "$KVPLAN" calibrate --gpu "$d/h100-sxm-flat.yaml" --model llama-3.1-8b --engine generic --out "$tmp/worse.yaml" "$d/worse-c1.json" "$d/worse-c2.json" \
	"$d/worse-c64.json"
expect_rc 1
expect_err "refused: the fit's median residual"
expect_err "nothing written"
if [ ! -e "$tmp/worse.yaml" ]; then ok; else bad "a refused calibration was written"; fi

# Bad input: located, exit 3, nothing written
for f in bad-truncated.json bad-other-tool.json bad-missing-tpot.json bad-nan.json \
	bad-contradicts-c8.json bad-string-number.json bad-input-lens.json; do
	run "$KVPLAN" calibrate $base --out "$tmp/never.yaml" $serve "$d/$f"
	expect_rc 3
	expect_err "$f:"
	if [ ! -e "$tmp/never.yaml" ]; then ok; else bad "$f: a calibration was written"; fi
done
run "$KVPLAN" calibrate $base "$d/bad-truncated.json"
expect_err "bad-truncated.json:16:3: error: truncated JSON: a string is not closed"
run "$KVPLAN" calibrate $base "$d/bad-other-tool.json"
expect_err "bad-other-tool.json:1:1: error: not a benchmark result kvplan reads"
run "$KVPLAN" calibrate $base "$d/bad-missing-tpot.json" $serve
expect_err "error: median_tpot_ms: missing: vllm bench serve --save-result writes"
run "$KVPLAN" calibrate $base "$d/bad-nan.json"
expect_err "bad-nan.json:24:21: error: malformed JSON: NaN or Infinity"
# c8 with median_tpot_ms written "7.4816": vLLM writes it with json.dumps
# of a float, so a quoted figure is someone else's file (bench-field.c)
run "$KVPLAN" calibrate $base "$d/bad-string-number.json"
expect_err "bad-string-number.json:28:21: error: median_tpot_ms: expected a number, got the string \"7.4816\""
expect_err "(JSON pointer /median_tpot_ms)"
run "$KVPLAN" validate $base "$d/bad-string-number.json"
expect_rc 3
expect_err "bad-string-number.json:28:21: error: median_tpot_ms:"
run "$KVPLAN" calibrate $base $serve "$d/bad-contradicts-c8.json"
expect_err "bad-contradicts-c8.json:1:1: error: tpot: 0.0149632 s contradicts 0.0074816 s"
# c8 with its third prompt length written "1000" (make-fixtures.py): vLLM
# writes input_lens as Python ints
run "$KVPLAN" validate $base "$d/bad-input-lens.json"
expect_rc 3
expect_err "bad-input-lens.json:42:5: error: input_lens: item 2: expected a whole number of prompt tokens"
expect_err "(JSON pointer /input_lens/2)"

# A run that sends an earlier run's prompts again (calibrate-fit.c
# check_repeats; make-fixtures.py): repeat-b lists repeat-a's 200 prompt
# lengths in the same order and is dated after it (10:30 against 10:10),
# so it is named whichever comes first on the command line, with the run
# it repeats; calibrate and validate alike, as a warning (exit 0) that
# moves no figure
run "$KVPLAN" calibrate $base --evaluate --format csv "$d/vllm-serve-repeat-a.json" "$d/vllm-serve-repeat-b.json"
expect_rc 0
plain=$out
run "$KVPLAN" calibrate $base --evaluate --format csv "$d/vllm-serve-repeat-b.json" "$d/vllm-serve-repeat-a.json"
expect_rc 0
expect_err "warning: $d/vllm-serve-repeat-b.json:1: the run sends the 200 prompts of $d/vllm-serve-repeat-a.json:1 (dated 20261201-101000) again (input_lens equal)"
expect_err "prefix cache"
name="repeat: one warning, naming repeat-b only"
if [ "$(printf '%s\n' "$err" | grep -c 'sends the')" = 1 ]; then ok; else bad "$err"; fi
name="repeat: the figures are the runs' without the lists (c2, c8)"
run "$KVPLAN" calibrate $base --evaluate --format csv "$d/vllm-serve-c2.json" "$d/vllm-serve-c8.json"
if [ "$(printf '%s\n' "$plain" | cut -d, -f3-)" = "$(printf '%s\n' "$out" | cut -d, -f3-)" ]; then ok
else bad "$plain // $out"; fi
run "$KVPLAN" validate $base --format json "$d/vllm-serve-repeat-a.json" "$d/vllm-serve-repeat-b.json"
expect_err "vllm-serve-repeat-b.json:1: the run sends the 200 prompts of"
expect_out '"code": "calibration_source"'
# the same lengths in another order (repeat-c), or one length throughout
# (repeat-flat, which tells no prompts apart): no warning
for f in vllm-serve-repeat-c.json vllm-serve-repeat-flat.json; do
	run "$KVPLAN" calibrate $base --evaluate "$d/vllm-serve-repeat-a.json" "$d/$f"
	expect_rc 0
	name="$f: no repeat named"
	case "$err" in *"sends the"*) bad "$err" ;; *) ok ;; esac
done
# held out: validate sees only the files it is given
run "$KVPLAN" validate $base "$d/vllm-serve-repeat-b.json"
name="repeat-b alone: no repeat named"
case "$err" in *"sends the"*) bad "$err" ;; *) ok ;; esac
# ... and the runs the calibration it applies was fitted on, which the
# file records with their prompts (calibration-write.c: model_id, prompts,
# prompts_hash, the FNV-1a hash of input_lens as 16 hex digits;
# calibration-runs.c reads them back): repeat-b held out against a fit on
# repeat-a (10:10, before it) is named as repeating a fit run, and repeat-a
# itself (the same date, not before) is not
run "$KVPLAN" calibrate $base --fit decode_bw_efficiency --out "$tmp/rep.yaml" \
	"$d/vllm-serve-repeat-a.json" "$d/vllm-serve-c16.json"
expect_rc 0
# the hash computed here apart from the reader (bench-vllm.c): FNV-1a
# 64 over each length's eight little-endian bytes, in the file's order
hash=$(python3 -c 'import json, sys
h = 14695981039346656037
for x in json.load(open(sys.argv[1]))["input_lens"]:
    for b in range(8):
        h = ((h ^ ((x >> (8 * b)) & 255)) * 1099511628211) % 2**64
print("%016x" % h)' "$d/vllm-serve-repeat-a.json")
name="the calibration records repeat-a's prompts (hash $hash), and c16 (no input_lens) none"
if [ ${#hash} = 16 ] &&
	grep -q "repeat-a.json:1\", format: vllm-serve, date: \"20261201-101000\", model_id: \"meta-llama/Llama-3.1-8B-Instruct\", prompts: 200, prompts_hash: \"$hash\"}" "$tmp/rep.yaml" &&
	[ "$(grep -c 'prompts_hash' "$tmp/rep.yaml")" = 1 ]; then ok; else bad "$(cat "$tmp/rep.yaml")"; fi
run "$KVPLAN" validate $base --calibration "$tmp/rep.yaml" "$d/vllm-serve-repeat-b.json"
expect_err "warning: $d/vllm-serve-repeat-b.json:1: the run sends the 200 prompts of $d/vllm-serve-repeat-a.json:1 (dated 20261201-101000, which the calibration was fitted on) again (input_lens equal)"
run "$KVPLAN" calibrate $base --evaluate --calibration "$tmp/rep.yaml" "$d/vllm-serve-repeat-b.json"
expect_err "(dated 20261201-101000, which the calibration was fitted on) again"
run "$KVPLAN" validate $base --calibration "$tmp/rep.yaml" "$d/vllm-serve-repeat-a.json"
name="repeat-a against its own calibration: no repeat named"
case "$err" in *"sends the"*) bad "$err" ;; *) ok ;; esac
# the other order of the same lengths (repeat-c) is other prompts
run "$KVPLAN" validate $base --calibration "$tmp/rep.yaml" "$d/vllm-serve-repeat-c.json"
name="repeat-c against repeat-a's calibration: no repeat named"
case "$err" in *"sends the"*) bad "$err" ;; *) ok ;; esac
# a calibration whose recorded prompts are malformed: located, exit 3
sed 's/prompts_hash: "[0-9a-f]*"/prompts_hash: "12XY"/' "$tmp/rep.yaml" >"$tmp/rep-bad.yaml"
run "$KVPLAN" validate $base --calibration "$tmp/rep-bad.yaml" "$d/vllm-serve-repeat-b.json"
expect_rc 3
expect_err "rep-bad.yaml:"
expect_err "error: prompts_hash: expected 16 lower-case hex digits"
sed 's/, prompts_hash: "[0-9a-f]*"//' "$tmp/rep.yaml" >"$tmp/rep-half.yaml"
run "$KVPLAN" validate $base --calibration "$tmp/rep-half.yaml" "$d/vllm-serve-repeat-b.json"
expect_rc 3
expect_err "error: prompts_hash: a run that records its prompts gives both"

# request_rate "inf" without max_concurrency sends every request at once
# (vllm/benchmarks/serve.py 0.10.2 get_request, l.171-172, l.512-520): a
# burst, said as a warning; with max_concurrency 8 (c8, a closed loop) none
run "$KVPLAN" validate $base "$d/vllm-serve-c8.json"
name="c8 (max_concurrency 8): no burst named"
case "$err" in *"at once"*) bad "$err" ;; *) ok ;; esac
sed 's/"max_concurrency": 8,/"max_concurrency": null,/' "$d/vllm-serve-c8.json" >"$tmp/burst.json"
run "$KVPLAN" validate $base "$tmp/burst.json"
expect_err "warning: $tmp/burst.json:1: the run sent its 200 requests at once (request_rate \"inf\", no max_concurrency): its TTFT is a burst's"
sed 's/"request_rate": "inf",/"request_rate": 16.0,/' "$tmp/burst.json" >"$tmp/rate16.json"
run "$KVPLAN" calibrate $base --evaluate "$tmp/rate16.json"
expect_rc 0
name="request_rate 16: no burst named"
case "$err" in *"at once"*) bad "$err" ;; *) ok ;; esac

# Every message names the field's JSON pointer beside file:line:col
run "$KVPLAN" calibrate $base "$d/bad-missing-tpot.json"
expect_err "bad-missing-tpot.json:1:1: error: median_tpot_ms: missing:"
expect_err "(JSON pointer /median_tpot_ms)"
sed 's/"tp_size": 1/"tp_size": "one"/' "$d/sglang-serving.jsonl" >"$tmp/sg-tp.jsonl"
run "$KVPLAN" calibrate $base --evaluate "$tmp/sg-tp.jsonl"
expect_rc 3
expect_err "error: tp_size: expected a number, got the string \"one\": sglang bench_serving writes it as a JSON number (JSON pointer /server_info/tp_size)"

# vLLM's results before e2el joined the default metrics (0.8.3:
# tests/data/bench-public/vllm-*) have no mean_e2el_ms; the end-to-end
# latency is mean_ttft_ms + mean_tpot_ms x (output / completed - 1).
# vllm-serve-no-e2el.json by hand: 20,200 / 200 = 101 output tokens,
# 0.050 + 0.020 x 100 = 2.05 s; in flight 2.0 req/s x 2.05 s = 4.1
run "$KVPLAN" calibrate $base --evaluate --format csv "$d/vllm-serve-no-e2el.json"
expect_rc 0
expect_out "vllm-serve-no-e2el.json:1,vllm-serve,ttft,4.1,200,101,0.045,"
expect_out "vllm-serve-no-e2el.json:1,vllm-serve,tpot,4.1,200,101,0.019,"
# without mean_tpot_ms (nor mean_e2el_ms, nor max_concurrency): refused
sed 's/"mean_tpot_ms": 20.0, //' "$d/vllm-serve-no-e2el.json" >"$tmp/no-tpot.json"
run "$KVPLAN" calibrate $base --out "$tmp/never.yaml" "$tmp/no-tpot.json" "$d/vllm-serve-no-e2el.json"
expect_rc 3
expect_err "no-tpot.json:1:1: error: max_concurrency: the requests in flight are unknown"
expect_err "(or mean_ttft_ms and mean_tpot_ms)"
expect_err "(JSON pointer /max_concurrency)"
sed 's/"mean_tpot_ms": 20.0/"mean_tpot_ms": "fast"/' "$d/vllm-serve-no-e2el.json" >"$tmp/bad-tpot.json"
run "$KVPLAN" calibrate $base --evaluate "$tmp/bad-tpot.json"
expect_rc 3
expect_err "bad-tpot.json:1:547: error: mean_tpot_ms: expected a number, got the string \"fast\": vllm bench serve --save-result writes it as a JSON number (JSON pointer /mean_tpot_ms)"
# a public result file cut short: located, exit 3, nothing written
head -c 3000 "$top_srcdir/tests/data/bench-public/vllm-llama70b-a100-tp8/serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_04.json" >"$tmp/cut.json"
run "$KVPLAN" calibrate --gpu a100-40gb --model llama-3.1-70b --tp 8 --out "$tmp/never.yaml" \
	"$tmp/cut.json" "$d/vllm-serve-no-e2el.json"
expect_rc 3
expect_err "cut.json:1:3001: error: truncated JSON"
if [ ! -e "$tmp/never.yaml" ]; then ok; else bad "a calibration was written"; fi

# Never over an input
cp "$d/vllm-serve-c1.json" "$tmp/c1.json"
cp "$d/vllm-serve-c2.json" "$tmp/c2.json"
run "$KVPLAN" calibrate $base --out "$tmp/c1.json" "$tmp/c1.json" "$tmp/c2.json"
expect_rc 2
if cmp -s "$d/vllm-serve-c1.json" "$tmp/c1.json"; then ok; else bad "an input was written over"; fi
# A request's latency outside the steps (request_latency_s): perf's TTFT and
# end to end rise by exactly it, its TPOT not at all, and the batch's
# throughput is B x o / e2e on the longer e2e (hand arithmetic: 8 x 256 /
# e2e).  Two calibrations alike but for 50 ms.
printf 'calibration:\n  - gpu: h100-sxm\n    decode_bw_efficiency: 0.7\n' >"$tmp/rl0.yaml"
printf 'calibration:\n  - gpu: h100-sxm\n    decode_bw_efficiency: 0.7\n    request_latency_s: 0.05\n' \
	>"$tmp/rl50.yaml"
run "$KVPLAN" perf $base --batch 8 --calibration "$tmp/rl0.yaml" --format json
expect_rc 0
t0=$(json ttft_s); p0=$(json tpot_s); e0=$(json e2e_s)
run "$KVPLAN" perf $base --batch 8 --calibration "$tmp/rl50.yaml" --format json
expect_rc 0
t1=$(json ttft_s); p1=$(json tpot_s); e1=$(json e2e_s); x1=$(json output_tokens_per_s)
name="perf request_latency_s: TTFT $t0 -> $t1, TPOT $p0 -> $p1, e2e $e0 -> $e1, $x1 tok/s"
if awk -v a="$t0" -v b="$t1" -v c="$p0" -v d="$p1" -v e="$e0" -v f="$e1" -v x="$x1" 'BEGIN {
	exit !(b - a > 0.05 - 1e-9 && b - a < 0.05 + 1e-9 && c == d && f - e > 0.05 - 1e-9 &&
	       f - e < 0.05 + 1e-9 && x > 8 * 256 / f * (1 - 1e-9) && x < 8 * 256 / f * (1 + 1e-9)) }'
then ok; else bad "not +50 ms on TTFT and e2e alone"; fi
run "$KVPLAN" perf $base --batch 8 --calibration "$tmp/rl50.yaml"
expect_out "request_latency_s"
expect_out "+ 50.00 ms a request outside the steps = TTFT "
# serve, an open loop at 2 req/s: the same requests, the same steps; each
# TTFT and e2e 50 ms later, so the means + 50 ms, the mean TPOT the same
run "$KVPLAN" serve $base --engine vllm --rate 2 --requests 200 --workload chat --format json \
	--calibration "$tmp/rl0.yaml"
expect_rc 0
t0=$(json mean_ttft_ms); p0=$(json mean_tpot_ms); e0=$(json mean_e2el_ms)
run "$KVPLAN" serve $base --engine vllm --rate 2 --requests 200 --workload chat --format json \
	--calibration "$tmp/rl50.yaml"
expect_rc 0
t1=$(json mean_ttft_ms); p1=$(json mean_tpot_ms); e1=$(json mean_e2el_ms)
name="serve request_latency_s: mean TTFT $t0 -> $t1 ms, TPOT $p0 -> $p1, e2e $e0 -> $e1"
if awk -v a="$t0" -v b="$t1" -v c="$p0" -v d="$p1" -v e="$e0" -v f="$e1" 'BEGIN {
	exit !(b - a > 50 - 1e-6 && b - a < 50 + 1e-6 && f - e > 50 - 1e-6 && f - e < 50 + 1e-6 &&
	       d - c < 1e-9 && c - d < 1e-9) }'
then ok; else bad "not +50 ms on TTFT and e2e alone"; fi
# a closed loop of 4 users: each sends its next request when it sees the
# answer, 50 ms later, so fewer requests a second (C / e2e)
run "$KVPLAN" serve $base --engine vllm --concurrency 4 --requests 200 --workload chat \
	--format json --calibration "$tmp/rl0.yaml"
r0=$(json request_throughput)
run "$KVPLAN" serve $base --engine vllm --concurrency 4 --requests 200 --workload chat \
	--format json --calibration "$tmp/rl50.yaml"
r1=$(json request_throughput)
name="serve closed loop request_latency_s: $r0 -> $r1 req/s"
if awk -v a="$r0" -v b="$r1" 'BEGIN { exit !(b < a) }'; then ok; else bad "throughput unmoved"; fi
# size: its TTFT and floor TTFT + 50 ms, its TPOT the same
run "$KVPLAN" size --model llama-3.1-8b --gpus h100-sxm --workload chat --rate 4 \
	--calibration "$tmp/rl0.yaml" --format json
expect_rc 0
t0=$(json ttft_s); p0=$(json tpot_s); f0=$(json floor_ttft_s)
run "$KVPLAN" size --model llama-3.1-8b --gpus h100-sxm --workload chat --rate 4 \
	--calibration "$tmp/rl50.yaml" --format json
expect_rc 0
t1=$(json ttft_s); p1=$(json tpot_s); f1=$(json floor_ttft_s)
name="size request_latency_s: TTFT $t0 -> $t1, floor $f0 -> $f1, TPOT $p0 -> $p1"
if awk -v a="$t0" -v b="$t1" -v c="$p0" -v d="$p1" -v e="$f0" -v f="$f1" 'BEGIN {
	exit !(b - a > 0.05 - 1e-9 && b - a < 0.05 + 1e-9 && f - e > 0.05 - 1e-9 &&
	       f - e < 0.05 + 1e-9 && c == d) }'
then ok; else bad "not +50 ms on TTFT alone"; fi
# bad values: file:line: and the field, exit 3
for v in -0.01 fast 2; do
	printf 'calibration:\n  - gpu: h100-sxm\n    decode_bw_efficiency: 0.7\n    request_latency_s: %s\n' \
		"$v" >"$tmp/rlbad.yaml"
	run "$KVPLAN" perf $base --calibration "$tmp/rlbad.yaml"
	expect_rc 3
	expect_err "rlbad.yaml:4:"
	expect_err "request_latency_s"
done


# Two runs of two times each (the public vLLM set's fit half: qps 1 and 16)
# fit three constants; leaving either run out leaves 2 times for 3, so no
# jackknife refit can run and how far an unseen run strays is unknown.  The
# table says so instead of a zero-width [v, v], JSON's low/high and
# latency_spread are null, the file writes no latency_spread, and perf
# keeps its own band (x0.71 to x1.31 for vLLM: the band the engine profile
# gives when no calibration is applied, asked of perf beside it).
pub="$top_srcdir/tests/data/bench-public/vllm-llama70b-a100-tp8"
pb="--gpu a100-40gb --model llama-3.1-70b --tp 8 --engine vllm --engine-version 0.8.3"
two="$pub/serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_01.json
$pub/serving_meta-llama-Llama-3.3-70B-Instruct_tp8_pp1_sharegpt_qps_16.json"
run "$KVPLAN" calibrate $pb --out "$tmp/two.yaml" $two
expect_rc 0
expect_out "none: too few runs to refit with one left out"
expect_out "the file sets no band, and perf keeps its own"
name="two runs: the file writes no latency_spread and no spread"
if grep -q "^ *latency_spread:" "$tmp/two.yaml" || grep -q "^ *spread:" "$tmp/two.yaml"; then
	bad "$(cat "$tmp/two.yaml")"; else ok; fi
run "$KVPLAN" calibrate $pb --format json $two
expect_rc 0
expect_json latency_spread null
expect_json low null
run "$KVPLAN" perf $pb --format json
expect_rc 0
lo0=$(json time_ratio_low); hi0=$(json time_ratio_high)
run "$KVPLAN" perf $pb --calibration "$tmp/two.yaml" --format json
expect_rc 0
lo1=$(json time_ratio_low); hi1=$(json time_ratio_high)
name="two runs: perf's band unchanged by the file ($lo0..$hi0 -> $lo1..$hi1)"
if [ "$lo0" = 0.71 ] && [ "$hi0" = 1.31 ] && [ "$lo1" = "$lo0" ] && [ "$hi1" = "$hi0" ]; then ok
else bad "the band moved"; fi
# with four runs (every file of the set) a refit can leave one out: a band
run "$KVPLAN" calibrate $pb --out "$tmp/four.yaml" "$pub"/*.json
expect_rc 0
name="four runs: the file writes latency_spread"
if grep -q "^ *latency_spread:" "$tmp/four.yaml"; then ok; else bad "$(cat "$tmp/four.yaml")"; fi

finish
