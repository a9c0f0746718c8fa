#!/bin/sh
# cli-serve.sh: `kvplan serve`, the serving-loop simulator, end to end.
# Expected values are hand arithmetic on a round GPU (1 TB/s, compute that
# never binds, efficiencies 1): Llama-2-7B with 1e10 B of weights keeps
# 524,288 B of KV per token, so a step is (1e10 + KV bytes) / 1e12 s.
. "${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}/tests/lib.sh"

cat >"$tmp/round.yaml" <<'YAML'
# A made-up GPU for tests: 1 TB/s, 1e18 FLOP/s.
name: round
memory: 80GiB
bandwidth: 1TB/s
bf16_tflops: 1000000
host_link: pcie4x16
YAML
R="--model llama-2-7b --gpu $tmp/round.yaml --weights-bytes 10000000000 --decode-bw-efficiency 1 --prefill-flops-efficiency 1"

# near: json NAME is within 1e-9 relative of V
near() {
	v=$(json "$1")
	if awk -v a="$v" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= 1e-9 * (b < 0 ? -b : b) + 1e-12) }'; then
		ok
	else
		bad "$1 = '$v', want $2"
	fi
}

# one request of 100 + 3 tokens: the prompt (1e10 + 100 x 524,288) / 1e12 =
# 10.0524288 ms; decodes over 101 and 102 tokens: 10.052953088 and
# 10.053477376 ms; E2E 30.158859264 ms, TPOT (E2E - TTFT) / 2 = 10.053215232
printf 'arrival_s,prompt_tokens,output_tokens\n0,100,3\n' >"$tmp/one.csv"
run "$KVPLAN" serve --engine generic $R --trace "$tmp/one.csv" --format json --slo-ttft 1
expect_rc 0
near mean_ttft_ms 10.0524288
near median_e2el_ms 30.158859264
near mean_tpot_ms 10.053215232
near request_throughput 33.157752793
expect_json completed 1
expect_json total_output_tokens 3
expect_json request_rate trace
expect_json preemptions 0
# goodput: the one request meets a 1 s TTFT; none meets 5 ms
near request_goodput 33.157752793
run "$KVPLAN" serve --engine generic $R --trace "$tmp/one.csv" --format json --slo-ttft 0.005
expect_json request_goodput 0
run "$KVPLAN" serve --engine generic $R --trace "$tmp/one.csv" --format json
expect_json request_goodput null
# --calibration twice (issue 38): an engine calibration (the weights at 0.5)
# and a kvbench run of an H20 (tests/data/good/kvbench-cuda-h20.yaml: 0.8,
# the KV read) on an H20 (4.0 TB/s), 1e10 B of weights: the decode steps
# over 101 and 102 tokens read 1e10 / 2.0e12 = 5 ms of weights and 101 (102)
# x 524,288 = 52,953,088 (53,477,376) B of KV / 3.2e12 = 16.54784 (16.71168)
# us: 5.01654784 and 5.01671168 ms, TPOT their mean 5.01662976 ms
kern="$top_srcdir/tests/data/good/kvbench-cuda-h20.yaml"
printf '%s\n' 'calibration:' '  - gpu: h20' '    decode_bw_efficiency: 0.5' >"$tmp/eng.yaml"
H="--engine generic --model llama-2-7b --gpu h20 --weights-bytes 10000000000 --trace $tmp/one.csv"
run "$KVPLAN" serve $H --calibration "$tmp/eng.yaml" --calibration "$kern" --format json
expect_rc 0
near mean_tpot_ms 5.01662976
run "$KVPLAN" serve $H --calibration "$kern" --calibration "$tmp/eng.yaml"
expect_rc 0
expect_out "calibration $tmp/eng.yaml (an engine calibration): decode_bw_efficiency"
expect_out "calibration $kern (a kvbench run): kv_bw_efficiency 0.8"
run "$KVPLAN" serve $H --calibration "$tmp/eng.yaml" --calibration "$tmp/eng.yaml"
expect_rc 2
expect_err "kvplan serve: --calibration:"
# the same request under vLLM's time data (profiles/engines/vllm.yaml): every
# step + 0 us + 25 us for its one sequence, the prefill's + 3,000 us, and
# the KV read (and written) at 0.65 of the bandwidth: the prompt 10 + 100 x
# 524,288 / 0.65e12 = 10.080659692 ms + 3.025 ms = 13.105659692 ms; decodes
# 10 + 101 x 524,288 / 0.65e12 + 0.025 = 10.106466289 and 10.107272886 ms;
# E2E 33.319398868 ms, TPOT 10.106869588 ms
run "$KVPLAN" serve $R --trace "$tmp/one.csv" --format json --engine vllm
expect_rc 0
near mean_ttft_ms 13.105659692
near mean_tpot_ms 10.106869588
near median_e2el_ms 33.319398868

# the Azure layout, wall-clock TIMESTAMPs; two requests 0.5 s apart, each alone
cat >"$tmp/azure.csv" <<'CSV'
TIMESTAMP,ContextTokens,GeneratedTokens
2023-11-16 18:15:46.6805900,100,3
2023-11-16 18:15:47.1805900,100,3
CSV
run "$KVPLAN" serve --engine generic $R --trace "$tmp/azure.csv" --format json
expect_rc 0
expect_json completed 2
near duration 0.530158859264
near p99_e2el_ms 30.158859264

# the public file's own first ten rows (tests/data/traces/README.md): all ten
# served; the last arrives 18:15:55.1455750 - 18:15:46.6805900 = 8.464985 s
# after the first, so the run lasts longer than that
run "$KVPLAN" serve --engine generic $R --trace "$top_srcdir/tests/data/traces/azure-conv-head.csv" --format json
expect_rc 0
expect_json completed 10
expect_json total_input_tokens 4364     # 374 + 396 + 879 + 91 + 91 + 381 + 1313 + 388 + 242 + 209
expect_json total_output_tokens 716     # 44 + 109 + 55 + 16 + 16 + 84 + 142 + 84 + 14 + 152
d=$(json duration)
if awk -v d="$d" 'BEGIN { exit !(d > 8.464985) }'; then ok; else bad "duration $d, want > 8.464985"; fi

# JSON lines of kvplan's own keys: the same request
printf '{"arrival_s": 0, "prompt_tokens": 100, "output_tokens": 3}\n' >"$tmp/one.jsonl"
run "$KVPLAN" serve --engine generic $R --trace "$tmp/one.jsonl" --format json
expect_rc 0
near mean_ttft_ms 10.0524288
printf '{"arrival_s": 0, "prompt_tokens": 100}\n' >"$tmp/bad.jsonl"
run "$KVPLAN" serve --engine generic $R --trace "$tmp/bad.jsonl"
expect_rc 3
expect_err "bad.jsonl:1:1: error: output_tokens: missing from the object"

# table and CSV
run "$KVPLAN" serve --engine generic $R --trace "$tmp/one.csv"
expect_rc 0
expect_out "ttft"
expect_out "Throughput:"
run "$KVPLAN" serve --engine generic $R --trace "$tmp/one.csv" --format csv
expect_out "mean_ttft_ms"
expect_out "request_throughput"

# a closed loop of 4 users never runs more than 4 at once
run "$KVPLAN" serve --engine generic $R --prompt fixed:200 --output fixed:20 --concurrency 4 --requests 40 --format json
expect_rc 0
expect_json completed 40
expect_json max_concurrent_requests 4
expect_json max_concurrency 4
# Poisson: the same seed gives the same run
run "$KVPLAN" serve --engine generic $R --workload chat --rate 2 --requests 200 --seed 5 --format json
a=$(json mean_e2el_ms)
run "$KVPLAN" serve --engine generic $R --workload chat --rate 2 --requests 200 --seed 5 --format json
expect_json mean_e2el_ms "$a"
expect_json request_rate 2
# a small pool preempts
run "$KVPLAN" serve --engine generic $R --prompt fixed:48 --output fixed:40 --concurrency 2 --requests 2 --num-blocks 8 --block-size 16 --format json
expect_json preemptions 1
expect_json recomputed_tokens 64

# bad input: file errors name file:line:col and the field, exit 3
printf 'arrival_s,prompt_tokens,output_tokens\n1,10,2\n0.5,10,2\n' >"$tmp/unsorted.csv"
run "$KVPLAN" serve --engine generic $R --trace "$tmp/unsorted.csv"
expect_rc 3
expect_err "unsorted.csv:3:1: error: arrival_s: times must not decrease"
# the Azure layout's wall-clock times: a row 0.685421 s before the first
# (18:15:46.68059 - 18:15:45.995169) is out of order, not negative; an hour
# of 25 is no time; 9,000 + 109 tokens is above a max_model_len of 4,096
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 18:15:45.9951690,396,109\n' >"$tmp/az-unsorted.csv"
run "$KVPLAN" serve --engine generic $R --trace "$tmp/az-unsorted.csv"
expect_rc 3
expect_err "az-unsorted.csv:3:1: error: TIMESTAMP: times must not decrease: 0.685421 s before the first row's"
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46.6805900,374,44\n2023-11-16 25:15:45.9951690,396,109\n' >"$tmp/az-hour.csv"
run "$KVPLAN" serve --engine generic $R --trace "$tmp/az-hour.csv"
expect_rc 3
expect_err "az-hour.csv:3:1: error: TIMESTAMP: expected seconds or a time"
printf 'TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 23:59:59.5000000,374,44\n2023-11-17 00:00:00.2500000,9000,109\n' >"$tmp/az-long.csv"
run "$KVPLAN" serve --engine generic $R --trace "$tmp/az-long.csv" --max-model-len 4096
expect_rc 3
expect_err "az-long.csv:3:29: error: ContextTokens: 9000 + 109 tokens is above max_model_len 4096"
printf 'arrival_s,prompt_tokens,output_tokens\n-2,10,2\n' >"$tmp/negative.csv"
run "$KVPLAN" serve --engine generic $R --trace "$tmp/negative.csv"
expect_rc 3
expect_err "negative.csv:2:1: error: arrival_s: a negative time"
printf 'arrival_s,prompt_tokens,output_tokens\n0,100,30\n' >"$tmp/long.csv"
run "$KVPLAN" serve --engine generic $R --trace "$tmp/long.csv" --max-model-len 128
expect_rc 3
expect_err "long.csv:2:3: error: prompt_tokens: 100 + 30 tokens is above max_model_len 128"
# flags: exit 2
run "$KVPLAN" serve --engine generic $R --trace "$tmp/one.csv" --rate 2
expect_rc 2
run "$KVPLAN" serve --engine generic $R --workload chat --rate 0
expect_rc 2
expect_err "--rate: expected a finite number above 0"
run "$KVPLAN" serve --engine generic $R --workload chat --rate inf
expect_rc 2
run "$KVPLAN" serve --engine generic $R --workload chat
expect_rc 2
expect_err "give one of --rate, --concurrency and --trace"
run "$KVPLAN" serve --engine generic $R --workload chat --rate 1 --think-time 2
expect_rc 2
run "$KVPLAN" serve --engine generic $R --workload chat --concurrency 0
expect_rc 2
# bash completion: the command, its flags (read from --help), --trace a file
if command -v bash >/dev/null 2>&1; then
	mkdir "$tmp/empty"
	complete_line() {
		(cd "$tmp/empty" && PATH="$top_builddir:$PATH" LC_ALL=C bash -c '
			. "$1/completion/kvplan"
			read -ra COMP_WORDS <<<"$2"
			case $2 in *" ") COMP_WORDS+=("") ;; esac
			COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
			_kvplan
			printf "%s\n" "${COMPREPLY[@]}" | sort' sh "$top_srcdir" "$1" | tr '\n' ' ' | sed 's/ $//')
	}
	name="complete kvplan ser"
	[ "$(complete_line 'kvplan ser')" = "serve" ] && ok || bad "$(complete_line 'kvplan ser')"
	name="complete kvplan serve --conc"
	[ "$(complete_line 'kvplan serve --conc')" = "--concurrency" ] && ok || bad "$(complete_line 'kvplan serve --conc')"
	touch "$tmp/empty/t.csv"
	name="complete kvplan serve --trace"
	[ "$(complete_line 'kvplan serve --trace t')" = "t.csv" ] && ok || bad "$(complete_line 'kvplan serve --trace t')"
fi
run "$KVPLAN" serve --engine generic --help
expect_rc 0
expect_out "--concurrency N"
finish
