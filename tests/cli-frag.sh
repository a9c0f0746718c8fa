#!/bin/sh
# cli-frag.sh: golden tests of `kvplan frag`: CSV, JSON and table, errors.
# Expected values are hand arithmetic written beside each check.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
data="$top_srcdir/tests/data"

# csv_field POLICY ALLOCATOR BLOCK FIELD: a cell of the last CSV output
csv_field() {
	awk -F, -v p="$1" -v a="$2" -v b="$3" -v f="$4" '
		NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
		$2 == p && $3 == a && $4 == b { print $col[f]; exit }' "$tmp/out"
}
# (column 1 is schema_version; fractions print round-trip, to 17 digits: they
# are compared at the 6 significant digits of the hand arithmetic)
expect_csv() {
	v=$(csv_field "$1" "$2" "$3" "$4")
	case "$5" in *.*) v=$(awk -v x="$v" 'BEGIN { printf "%.6g", x }') ;; esac
	if [ "$v" = "$5" ]; then ok; else bad "$1 $2 $3 $4 = '$v', want '$5'"; fi
}

# Llama-2-7B with every term given (as in cli-budget.sh): pool 57 GiB;
# 524,288 B per token -> 116,736 token slots = 7,296 blocks of 16.
fixed="--model llama-2-7b --gpu-memory 80GiB --utilization 0.9 --weights-bytes 13GiB
       --activation-bytes 1GiB --overhead-bytes 1GiB"

# 1,000-token prompts, no output: each request lives one step.
#   paged 16: 63 blocks = 1,008 slots (8 empty); 7,296 / 63 = 115.8 -> 115;
#     used 115,000 / 116,736 = 0.985129; waste 920 / 116,736 = 0.00788103
#   contiguous-request: 116,736 / 1,000 -> 116; used 116,000 / 116,736 = 0.993695
#   contiguous-max 4,096: 116,736 / 4,096 = 28.5 -> 28; used 28,000 / 116,736
#     = 0.239857; free 2,048 / 116,736 = 0.0175439
run "$KVPLAN" frag --engine generic $fixed --prompt fixed:1000 --output fixed:0 --max-len 4096 \
	--block-sizes 16 --allocator first-fit --requests 2000 --format csv
expect_rc 0
expect_out "schema_version,policy,allocator,block_size,used_fraction,internal_waste_fraction,external_waste_fraction"
expect_csv paged "" 16 max_sequences 115
expect_csv paged "" 16 used_fraction 0.985129
expect_csv paged "" 16 internal_waste_fraction 0.00788103
expect_csv paged "" 16 waste_tokens_per_sequence 8
expect_csv paged "" 16 expected_waste_tokens 7.5
expect_csv paged "" 16 num_blocks 7296
# metadata: 115 x ceil(4,096 / 16) x 4 B = 117,760 + 7,296 blocks x 8 B = 58,368
expect_csv paged "" 16 metadata_bytes 176128
expect_csv contiguous-request first-fit "" max_sequences 116
expect_csv contiguous-request first-fit "" used_fraction 0.993695
expect_csv contiguous-max first-fit "" max_sequences 28
expect_csv contiguous-max first-fit "" used_fraction 0.239857
expect_csv contiguous-max first-fit "" free_fraction 0.0175439
expect_csv contiguous-max first-fit "" refused_with_free_memory 0
# 1 header + 3 rows (contiguous-max, contiguous-request, paged 16)
[ "$(printf '%s\n' "$out" | wc -l)" = 4 ] && ok || bad "csv has $(printf '%s\n' "$out" | wc -l) lines"

# vLLM's hybrid KV groups in the paged rows, padding included: Gemma 3 4B
# (5 full + 29 sliding layers of 4,096 B per token, window 1,024) in groups
# of 5: 1 full and 6 sliding groups, one padding slot (check-frag.c spells
# it out).  A 1,000-token request in blocks of 16 holds 63 blocks = 1,008
# slots in each class: 1,008 x (5 + 30) x 4,096 = 144,506,880 B, of which
# 1,000 x 34 x 4,096 = 139,264,000 hold tokens.  Pool 61,203,283,968 B:
#   vllm:    floor(61,203,283,968 / 144,506,880) = 423 sequences; used
#            423 x 139,264,000 / pool = 0.962508; internal 423 x 5,242,880 /
#            pool = 0.0362356; blocks pool / (16 x 143,360) = 26,682
#   generic: 1,008 x 139,264 = 140,378,112 B -> 435 sequences; blocks
#            pool / (16 x 139,264) = 27,467
# contiguous rows keep the layers' own bytes: 439 reservations of 1,000
# tokens (floor(pool / 139,264,000)) with either engine
gemma="--model gemma-3-4b --gpu h100-sxm --gpu-memory 80GiB --utilization 0.9
       --weights-bytes 13GiB --activation-bytes 1GiB --overhead-bytes 1GiB"
run "$KVPLAN" frag $gemma --engine vllm --prompt fixed:1000 --output fixed:0 --max-len 4096 \
	--block-sizes 16 --allocator first-fit --requests 2000 --format csv
expect_rc 0
expect_csv paged "" 16 max_sequences 423
expect_csv paged "" 16 used_fraction 0.962508
expect_csv paged "" 16 internal_waste_fraction 0.0362356
expect_csv paged "" 16 num_blocks 26682
expect_csv contiguous-request first-fit "" max_sequences 439
run "$KVPLAN" frag --engine generic $gemma --prompt fixed:1000 --output fixed:0 --max-len 4096 \
	--block-sizes 16 --allocator first-fit --requests 2000 --format csv
expect_csv paged "" 16 max_sequences 435
expect_csv paged "" 16 num_blocks 27467
expect_csv contiguous-request first-fit "" max_sequences 439

# the same lengths from a file, through a workload profile beside it
run "$KVPLAN" frag --engine generic $fixed --workload "$data/workloads/fixed-1000.yaml" --block-sizes 16 \
	--allocator first-fit --requests 2000 --format csv
expect_rc 0
expect_csv paged "" 16 max_sequences 115
run "$KVPLAN" frag --engine generic $fixed --lengths "$data/workloads/fixed-1000.csv" --max-len 4096 \
	--block-sizes 16 --requests 2000 --format json
expect_json workload fixed-1000
expect_json max_len 4096
expect_json kv_pool_bytes 61203283968       # 57 GiB
expect_json kv_bytes_per_token 524288

# A shared 64-token prefix (4 blocks) before 32-token prompts: paged needs
# 6 blocks each: 7,296 / 6 = 1,216; shared: 4 + 2 g <= 7,296 -> g = 3,646.
run "$KVPLAN" frag --engine generic $fixed --prompt fixed:32 --output fixed:0 --shared-prefix 64 \
	--max-len 4096 --block-sizes 16 --requests 20000 --format csv
expect_rc 0
expect_csv paged "" 16 max_sequences 1216
expect_csv paged-shared "" 16 max_sequences 3646
# a prefix shorter than a block shares nothing: 42 tokens = 3 blocks -> 2,432
run "$KVPLAN" frag --engine generic $fixed --prompt fixed:32 --output fixed:0 --shared-prefix 10 \
	--max-len 4096 --block-sizes 16 --requests 20000 --format csv
expect_csv paged "" 16 max_sequences 2432
expect_csv paged-shared "" 16 max_sequences 2432

# JSON: rows with the contract's field names, the recommendation an object
run "$KVPLAN" frag --engine generic $fixed --prompt uniform:100,3000 --output uniform:1,500 --max-len 4096 \
	--requests 20000 --format json
expect_rc 0
for f in policy block_size used_fraction internal_waste_fraction external_waste_fraction \
	 metadata_bytes max_sequences refused_with_free_memory recommended_block_size reason; do
	case "$out" in *"\"$f\":"*) ok ;; *) bad "json lacks $f" ;; esac
done
expect_out '"recommendation": {'
expect_out '"policy": "contiguous-max"'
expect_out '"policy": "paged"'
expect_out '"allocator": "best-fit"'

# deterministic for a seed; another seed, other numbers
run "$KVPLAN" frag --engine generic $fixed --prompt lognormal:800,1 --output lognormal:200,1 --max-len 4096 \
	--requests 20000 --seed 5 --format csv
first=$out
run "$KVPLAN" frag --engine generic $fixed --prompt lognormal:800,1 --output lognormal:200,1 --max-len 4096 \
	--requests 20000 --seed 5 --format csv
[ "$out" = "$first" ] && ok || bad "seed 5 gave two different answers"
run "$KVPLAN" frag --engine generic $fixed --prompt lognormal:800,1 --output lognormal:200,1 --max-len 4096 \
	--requests 20000 --seed 6 --format csv
[ "$out" != "$first" ] && ok || bad "seeds 5 and 6 gave the same answer"

# the table explains itself and recommends a block size
run "$KVPLAN" frag --engine generic --model llama-3.1-8b --gpu h100-sxm --workload chat --requests 20000
expect_rc 0
expect_out "Workload chat: prompt lognormal:1020,1, output lognormal:129,1"
expect_out "KV pool (kvplan budget):"
expect_out "131,072 B per token"                # 2 * 8 * 128 * 2 * 32
expect_out "Engine's worst case (every request at max_len 8,192)"
expect_out "Recommended block size:"
expect_out "contiguous-request first"

# the prefix cache: one prefix only, so every request after the first hits
# as soon as the cache holds one prefix; a request id first never hits
run "$KVPLAN" frag --engine generic $fixed --prompt fixed:100 --output fixed:10 --shared-prefix 64 \
	--max-len 4096 --block-sizes 16 --requests 1000 --prefix-cache 1 \
	--cache-sizes 0,1GiB --format json
expect_rc 0
expect_out '"prefix_first": "shared"'
expect_out '"prefix_first": "request-id"'
expect_out '"hit_rate": 0.999'                # (1,000 - 1) / 1,000
expect_out '"saved_prefill_tokens": 63.936'    # 0.999 x 64 (4 full blocks of 16)
# half the requests carry the prefix (issue 22): 500 look it up, 499 hit:
# 0.998 of the carriers, 0.998 x 64 = 63.872 tokens per carrier, x 0.5 =
# 31.936 per request of the stream
run "$KVPLAN" frag --engine generic $fixed --prompt fixed:100 --output fixed:10 --shared-prefix 64:0.5 \
	--max-len 4096 --block-sizes 16 --requests 1000 --prefix-cache 1 \
	--cache-sizes 1GiB --format json
expect_rc 0
expect_out '"hit_rate": 0.998'
expect_out '"saved_prefill_tokens": 31.936'
expect_out '"saved_prefill_tokens_per_carrier": 63.872'
run "$KVPLAN" frag --engine generic $fixed --prompt fixed:100 --output fixed:10 --shared-prefix 64 \
	--max-len 4096 --block-sizes 16 --requests 1000 --prefix-cache 100:1.2
expect_out "Prefix cache: LRU over 100 prefixes of 64 tokens, Zipf(1.2)"
expect_out "hit% id first"

# the shipped workloads run by name
for wname in chat rag code-completion batch-summarize; do
	run "$KVPLAN" frag --engine generic --model qwen2.5-7b --gpu h100-sxm --workload "$wname" --requests 5000 \
		--format json
	expect_rc 0
	expect_json workload "$wname"
done
run "$KVPLAN" list workloads
expect_out "batch-summarize"

# errors: usage mistakes exit 2
for args in "--prompt fixed:10" "--prompt lognormal:5 --output fixed:1" "--prompt poisson:3 --output fixed:1" \
	    "--workload chat --allocator worst-fit" "--workload chat --block-sizes 0" \
	    "--workload chat --block-sizes 100000" "--workload chat --shared-prefix 64:1.5" \
	    "--workload chat --shared-prefix 9000" "--workload chat --requests 0" \
	    "--workload chat --prefix-cache x" "--workload chat --prefix-cache 10" "" \
	    "--workload chat --bogus" \
	    "--workload chat --step-time 0.02" "--workload chat --arrival-rate 0 --step-time 0.02" \
	    "--workload chat --arrival-rate inf --step-time 0.02" \
	    "--workload chat --arrival-rate 2 --step-time 0" \
	    "--workload chat --arrival-rate -1 --step-time 0.02" \
	    "--workload chat --policies paged-shared"; do
	run "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm $args
	expect_rc 2
	expect_err "kvplan frag:"
done
run "$KVPLAN" frag --engine generic --gpu h100-sxm --workload chat
expect_rc 2
expect_err "--model is required"
# an empty policy list or a policy with nothing to run: never an empty table
run "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm --workload chat --policies ""
expect_rc 2
expect_err "--policies: empty list"
run "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm --workload chat --policies paged-shared
expect_rc 2
expect_err "paged-shared needs a shared prefix"
# an empty lengths file, or one of a header only, is an input error
: > "$tmp/empty.csv"
run "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm --lengths "$tmp/empty.csv"
expect_rc 3
expect_err "empty.csv: error: no rows"
# more requests than a minute's simulation: an estimate, then progress, on
# stderr (rows x requests x 0.3 us: 4 contiguous + 7 paged rows x 10^7 = 33 s;
# --policies paged --block-sizes 16 keeps the run itself short: 1 row x
# 4 x 10^7 x 0.3 us = 12 s, past the 10 s threshold)
run "$KVPLAN" frag --engine generic $fixed --prompt fixed:1000 --output fixed:0 --max-len 4096 \
	--requests 40000000 --policies paged --block-sizes 16 --format csv
expect_rc 0
expect_err "requests over about 1 row: about 12 s; progress follows"
expect_err "kvplan frag: 40,000,000 of 40,000,000 requests drawn"

# arrivals over time (tests/check-frag.c checks Little's law): a request of
# 1,000 prompt tokens and no output takes one step; at 1 request/s and 0.5 s
# steps nothing waits but for the next step boundary (on average 0.25 s)
run "$KVPLAN" frag --engine generic $fixed --prompt fixed:1000 --output fixed:0 --max-len 4096 \
	--requests 2000 --block-sizes 16 --arrival-rate 1 --step-time 0.5 --format json
expect_rc 0
expect_json arrival_rate 1
expect_out '"completed": 2000'
expect_out '"preemptions": 0'
expect_out '"mean_queue_s": 0.2'      # 0.25 within sampling error: 0.2xxx
# a rate without --step-time: the perf model's decode step of B sequences at
# the mean context 1,000 + (101 - 1) / 2 = 1,050 tokens.  One step reads the
# 13 GiB = 13,958,643,712 B of weights and B x 1,050 x 524,288 B of KV at
# 3.35 TB/s x 0.8 (h100-sxm.yaml, KVP_PERF_DECODE_BW_EFFICIENCY) = 2.68e12 B/s;
# B = ceil(10/s x 101 steps x step):
#   B 1: (13,958,643,712 + 550,502,400) / 2.68e12 = 5.41386 ms -> ceil(5.468) = 6
#   B 6: 17,261,658,112 / 2.68e12 = 6.44092 ms -> ceil(6.505) = 7
#   B 7: 17,812,160,512 / 2.68e12 = 6.64633 ms -> ceil(6.713) = 7, settled
fixedgpu="$fixed --gpu h100-sxm"
run "$KVPLAN" frag --engine generic $fixedgpu --prompt fixed:1000 --output fixed:101 --max-len 4096 \
	--requests 2000 --block-sizes 16 --arrival-rate 10 --format json
expect_rc 0
expect_json step_time_from perf
expect_json step_time_batch 7
expect_json step_time_context 1050
step=$(json step_time_s)
awk -v s="$step" 'BEGIN { exit !(s > 0.00664632 && s < 0.00664634) }' && ok || bad "step_time_s $step"
# and kvplan perf, run on its own, times that step alike (its tpot_s at batch
# 7, prompt 1,050 and one output token: context 1,050)
"$KVPLAN" perf --engine generic $fixedgpu --batch 7 --prompt 1050 --output 1 --format json >"$tmp/perf.json"
tpot=$(sed -n 's/^ *"tpot_s": \([0-9.e-]*\),*$/\1/p' "$tmp/perf.json" | head -n 1)
name="frag's step time is kvplan perf's tpot_s"
[ -n "$tpot" ] && [ "$tpot" = "$step" ] && ok || bad "frag $step, perf '$tpot'"
# the table says where the step comes from
run "$KVPLAN" frag --engine generic $fixedgpu --prompt fixed:1000 --output fixed:101 --max-len 4096 \
	--requests 2000 --block-sizes 16 --arrival-rate 10
expect_out "step: the perf model's decode step of 7 sequences at 1050 tokens"
# a GPU profile without bandwidth has no perf step: a clear error
run "$KVPLAN" frag --engine generic $fixed --prompt fixed:1000 --output fixed:101 --max-len 4096 \
	--requests 2000 --block-sizes 16 --arrival-rate 10
expect_rc 3
expect_err "bandwidth: needed for latency"
# given, the step is the option's
run "$KVPLAN" frag --engine generic $fixedgpu --prompt fixed:1000 --output fixed:101 --max-len 4096 \
	--requests 200 --block-sizes 16 --arrival-rate 10 --step-time 0.02 --format json
expect_json step_time_s 0.02
expect_json step_time_from option
expect_json step_time_batch null
# arrival times from a length file's third column, replayed: three requests
# of 1,000 prompt tokens and no output at 0, 1 and 2.5 s, 0.5 s steps.  Each
# is admitted at the start of the step it arrives in (steps 0, 2 and 5:
# queue 0) and finishes with it: latency 0.5 s; the last ends at 3.0 s:
# throughput 3 / 3.0 = 1/s; running 3 steps of the 6: 0.5 live = 1 x 0.5
# (Little); the file's rate: 2 gaps over 2.5 s = 0.8/s
run "$KVPLAN" frag --engine generic $fixed --lengths "$data/workloads/arrivals-3.csv" --max-len 4096 \
	--block-sizes 16 --step-time 0.5 --format json
expect_rc 0
expect_json requests 3
expect_json arrival_rate 0.8
expect_json mean_queue_s 0
expect_json mean_latency_s 0.5
expect_json mean_live_sequences 0.5
expect_json throughput_rps 1
expect_json completed 3
run "$KVPLAN" frag --engine generic $fixed --lengths "$data/workloads/arrivals-3.csv" --max-len 4096
expect_rc 2
expect_err "give --step-time S to replay them"
run "$KVPLAN" frag --engine generic $fixed --workload chat --step-time 0.5
expect_rc 2
expect_err "--step-time applies only with --arrival-rate"
printf '100,10,5\n100,10,4\n' > "$tmp/dec.csv"
run "$KVPLAN" frag --engine generic $fixed --lengths "$tmp/dec.csv" --step-time 1
expect_rc 3
expect_err "dec.csv:2:8: error: arrival_s: expected seconds, finite, not before the row above"
printf '100,10,5\n100,10\n' > "$tmp/mix.csv"
run "$KVPLAN" frag --engine generic $fixed --lengths "$tmp/mix.csv" --step-time 1
expect_rc 3
expect_err "mix.csv:2:1: error: expected two columns"


# invalid files exit 3 with path:line:col: error: field: message
count=0
for f in "$data"/bad/workload-*.yaml; do
	count=$((count + 1))
	run "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm --workload "$f"
	expect_rc 3
	expect_err "$(basename "$f"):"
	expect_err "error: "
done
# an endless length file (found by fuzzing: it used to hang) is refused
run "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm --workload "$data/bad/lengths-dev-zero.yaml"
expect_rc 3
expect_err "/dev/zero: cannot open: a character device, not a regular file"
printf '100,10\n\000\000\n' > "$tmp/nul.csv"
run "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm --lengths "$tmp/nul.csv"
expect_rc 3
expect_err "nul.csv:2:1: error: NUL byte"
name="bad workload corpus"
[ "$count" -ge 6 ] && ok || bad "only $count bad workload files"
run "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm --workload "$data/bad/workload-unknown-key.yaml"
expect_err "workload-unknown-key.yaml:5:1: error: arival_rate: unknown key"
run "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm --workload "$data/bad/workload-bad-dist.yaml"
expect_err "workload-bad-dist.yaml:3:9: error: prompt: lognormal takes two parameters"
run "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm --lengths "$data/workloads/bad-row.csv"
expect_rc 3
expect_err "bad-row.csv:3:6: error: output: expected a whole number of tokens"
run "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm --lengths "$data/workloads/no-such.csv"
expect_rc 3
run "$KVPLAN" frag --engine generic --model llama-2-7b --gpu h100-sxm --workload no-such-workload
expect_rc 3
expect_err "no profile named 'no-such-workload'"

# the weights leave no pool: exit 1
run "$KVPLAN" frag --engine generic --model llama-3.1-70b --gpu-memory 24GiB --workload chat
expect_rc 1
expect_err "leave no KV pool"

# waste per sequence over time (issue 34.9: it printed 0.0 on every row):
# a fixed prompt of 100 tokens and 1 output token is prefilled and finishes
# in one step, holding ceil(100 / 16) = 7 blocks = 112 slots for 100 tokens:
# 12 empty slots per sequence; blocks of 8: 13 x 8 = 104, 4 empty
run "$KVPLAN" frag --engine generic --model llama-3.1-8b --gpu h100-sxm --prompt fixed:100 --output fixed:1 \
	--requests 500 --arrival-rate 5 --step-time 0.01 --policies paged --block-sizes 16 --format json
expect_rc 0
expect_json waste_tokens_per_sequence 12
run "$KVPLAN" frag --engine generic --model llama-3.1-8b --gpu h100-sxm --prompt fixed:100 --output fixed:1 \
	--requests 500 --arrival-rate 5 --step-time 0.01 --policies paged --block-sizes 8 --format json
expect_json waste_tokens_per_sequence 4

# the step of --arrival-rate is timed at the context a decoding sequence
# holds averaged over time (issue 34.8): two requests of 100 prompt tokens,
# 10 and 1,000 output tokens: (10 x 104.5 + 1,000 x 599.5) / 1,010 = 594.6,
# rounded 595; mean p + (mean o - 1) / 2 gave 100 + 504 / 2 = 352
printf '100,10\n100,1000\n' >"$tmp/two.csv"
run "$KVPLAN" frag --engine generic --model llama-3.1-8b --gpu h100-sxm --lengths "$tmp/two.csv" --requests 300 \
	--arrival-rate 2 --policies paged --block-sizes 16 --format json
expect_rc 0
expect_json step_time_context 595

# rates and step times whose requests span more steps than the simulation
# counts are refused up front, not run forever (issue 37 N7): 1,000 requests
# at 1e-300/s span 1e303 s; at 5/s over steps of 1e-300 s, 2e302 steps; at
# 1e-9/s over steps of 1e-9 s, 1e21 steps: all above 2^53
for a in "--arrival-rate 1e-300 --step-time 0.02" "--arrival-rate 5 --step-time 1e-300" \
	 "--arrival-rate 1e-9 --step-time 1e-9" "--arrival-rate 1e-300"; do
	# shellcheck disable=SC2086
	run timeout 60 "$KVPLAN" frag --engine generic --model llama-3.1-8b --gpu h100-sxm --workload chat \
		--requests 1000 $a
	expect_rc 2
	expect_err "more than the 2^53 the simulation counts"
done
# --max-tokens as large as a u64 holds: the reservation is max_len, as with
# contiguous-max, not a wrapped sum (issue 37 N8: exit 70)
run "$KVPLAN" frag --engine generic --model llama-3.1-8b --gpu h100-sxm --workload chat --requests 2000 \
	--policies contiguous-max,contiguous-request --allocator first-fit \
	--max-tokens 18446744073709551615 --format csv
expect_rc 0
a=$(printf '%s\n' "$out" | awk -F, '$2 == "contiguous-max" { print $5 }')
b=$(printf '%s\n' "$out" | awk -F, '$2 == "contiguous-request" { print $5 }')
[ -n "$a" ] && [ "$a" = "$b" ] && ok || bad "used_fraction max '$a' request '$b'"

run "$KVPLAN" frag --engine generic --help
expect_rc 0
expect_out "Usage: kvplan frag"
finish
