#!/bin/sh
# cli-engine-logs.sh: bench/engine-logs.sh --check over every recorded public
# vLLM, SGLang and TensorRT-LLM start-up log (tests/data/engine-logs): from
# the terms each log printed,
# kvplan's token count must fall within the log's own rounding (its budget
# printed to 2 decimals of GiB, +/- 0.005 GiB, one block either side), known
# misses aside; and a case that is off must fail the check.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
bench="$top_srcdir/bench/engine-logs.sh"

run sh "$bench" --check "$KVPLAN"
expect_rc 0
# 58 cases print their budget terms and are modelled (61 recorded: x1 and
# x2 are per-rank known misses, p17122 prints no budget line): 47 vLLM, 6
# SGLang (S1-S6), 5 TensorRT-LLM (T1, T3-T6); v22-v49, s3-s6, t5, t6 (issue
# 36) each within its log's rounding by the hand arithmetic in
# reports/engine-logs.md (v40-v49, ten V0 logs from 0.6.x to 0.10.0 on an
# 80 GB GPU, two T4s, an A100 80GB, a 48 GB RTX 4090, an RTX 4090 D, an AMD
# Radeon Pro VII under ROCm, a 24 GB GPU, an L40 and an A10, added 48 -> 58; none is counted
# from the config alone: GPTQ/bitsandbytes weights under Unsloth's patches,
# or no recorded config of the exact model)
expect_out "logged terms: 58 cases"
expect_out "logged value inside the band: 58 of 58"
# V43: 34.81 GiB = 37,376,952,893 B; Qwen2.5-0.5B's 24 layers x 2 KV heads x
# 64 x 2 x 2 B = 12,288 B/token, 196,608 B a 16-token block: 190,109.01 ->
# 190,109 blocks = 3,041,744 tokens (logged 190,100 blocks, 3,041,600)
expect_out "v43-qwen25-0.5b-bnb-rtx4090-48gb-v0100 logged        3041600    3041744"
# from the config alone: 18 cases counted, every logged value inside the
# band; before issue 36's logs none over-predicted by more than 2 % (the
# issue's target: at most 1 in 10), then 4 of 18 did (below), now 1.  X2 went from +2.7 % to +1.4 % when the weights counted what vLLM
# holds whole on every rank (1 replicated KV head's K and V, the bf16
# routers, the rotary cache: 27.51 -> 27.65 GiB against 27.72 logged), and
# to -0.007 % with 0.10.2's sampler peak inside torch.sort (38 B per request
# x vocabulary, no MoE workspace kept: 1.40 GiB, the logged 1.4); V19 from
# +2.1 % to -2.5 % (its peak 1.396 GiB, logged 1.40; what is left is the
# non-torch term, 0.25 GiB charged against 0.02 logged)
# (issue 36: v25, 2 x A100 40GB on two nodes with custom all-reduce off,
# p2p: no; v30/v31, 0.27.1 on four PCIe RTX PRO 6000, +4.1 %/+3.7 % from
# 1.70 GiB of logged non-torch memory per GPU against 0.25 charged; v34, an
# RTX 3090 at util 0.85, +13.6 %: 1.27 GiB of activation + non-torch logged
# (0.85 x 23.58 - 14.9889 - 3.78) against 0.77 charged; v37, 0.26.0 on
# two RTX 4090, +3.5 % (0.37 GiB of activation logged against 0.15).
# v22-v24, v26, v39 (FlashInfer sampler), v27 (V0) and v32 (AWQ on an RTX 5090) are known
# misses from the config alone; S3, S5, S6 add three SGLang cases from the
# config alone, S4, a desktop card under WSL2, is a known miss that way)
# Issue 34: V10 (0.11.2) moved to +1.955 % when 0.11.2's entry stopped
# charging MoE workspaces its source does not keep (issue 34: fused_experts
# and fused_marlin_moe allocate per call): 8,192 x 4 x 5,760 x 2 B x 2 =
# 754,974,720 B of workspaces out of the sampler peak, which leaves the
# forward's ((64 + 2 x 8) x 64 + 3 x 4 x 2,880 + 2 x 2,880) x 2 B x 8,192 =
# 744,488,960 B as the peak in place of 825,555,968 B: 81,067,008 B more
# pool, / 1,179,648 B a block (16 tokens x 36 layers x 8 KV heads x 64 x
# 2 x 2 B) = 68.7 blocks, 68 or 69 more whole ones by the old pool's
# remainder; 68 x 16 = 1,088 tokens (132,432 -> 133,520)
# Then (issue 36, the 0.27.1 entry, >=0.20.0,<0.30.0): vLLM subtracts its
# CUDA-graph estimate from 0.20.0 (envs.py VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS
# "1"; 0.19.0 "0"), 0.5 GiB charged: v30 +4.1 % -> +2.3 % (left: about 0.6
# GiB of its 1.70 GiB consumed beyond the weights, not explained from the
# source), v31 +3.7 % -> +1.9 %, v37 +3.5 % -> -1.4 %, v18 (0.31.0, the
# nearest entry) +1.7 % -> +0.8 %; and the 0.11.2 entry's sampler is the
# native sort (38 B: FlashInfer is opt-in in 0.11.1-0.11.2), v34 (0.11.1 or
# 0.11.2 by its log lines, engine_version 0.11.2) +13.6 % -> -4.2 %, v10
# +1.1 % -> +0.9 % on its own.
# Together: V10 at +1.955 %; the median of the 18 is the mean of the 9th
# and 10th |error|, V18 0.796 % and V3 1.116 %: (0.796 + 1.116) / 2 = 0.956;
# the p90, the 17th of 18 (ceil(0.9 x 18) = 17), S3's 2.682 %; over by
# more than 2 %: V30 (+2.3 %) alone, 1 in 18
# Issue 36, the encoder profile: V17 (LLaVA-1.6-Mistral, vLLM 0.10.2) is
# planned from its config.json (the CLIP tower to layer -2, the projector and
# the encoder's dummy batch: 450,960 tokens against 451,744 logged,
# -0.174 %), a 19th case below the old median: the median of 19 is the 10th
# |error|, V18's 0.796 %; the p90 the 18th (ceil(0.9 x 19) = 18), still S3's
# 2.682 %; over by more than 2 %: V30 alone, 1 in 19
expect_out "v17-llava16-mistral-7b-h100    config         451744     450960"
expect_out "config alone: 19 cases, median |error| 0.796%, p90 2.682%"
expect_out "over-predicting > 2%: 1, logged value inside the band: 19 of 19"
# SGLang S1 from the terms it logged: rest = 63.72 - 78.81 x 0.12 =
# 54.2628 GiB / 131,072 B per token = 444,520 (logged 444,500)
expect_out "s1-llama31-8b-sglang-docs      logged         444500     444520"
# SGLang S3, QwQ-32B at TP 4 on L4s (0.4.3.post4): rest = 6.09 - 21.63 x
# 0.15 = 2.8455 GiB; 64 layers x 2 KV heads x 256 x 2 B = 65,536 B per token
# on a rank; 2.8455 x 2^30 / 65,536 = 46,620.7 -> 46,620 (logged 46,611)
expect_out "s3-qwq-32b-sglang-l4-tp4       logged          46611      46620"
# TensorRT-LLM T5, the PyTorch backend's KV memory printed with the fraction
# applied (5.95 GiB, run at utilization 1): 6,388,763,853 B / 73,728 B =
# 86,653 tokens, ceil(/ 32) = 2,708 blocks = 86,656 (logged 2,710 blocks,
# 86,720: 5.955 GiB gives 86,726 tokens, 2,711 blocks)
expect_out "t5-gpt-oss-120b-trtllm-pytorch-dgx-spark logged          86720      86656"
# TensorRT-LLM T1: 0.9 x 17.83 GiB / 65,536 B = 262,914 tokens, ceil(/ 32)
# = 8,217 blocks = 262,944 tokens; at 17.835 GiB 8,219 blocks = 263,008,
# the logged count (kvCacheManager.cpp rounds the blocks up)
expect_out "t1-llama31-8b-fp8-trtllm-rtx5090 logged         263008     262944  -0.024%     262848   263008 yes"
# the known misses are shown and flagged, not counted
expect_out "x1-qwen3-235b-fp8-h100-tp4     logged         178880"
case "$out" in *"NO/miss"*) ok ;; *) bad "no known miss flagged" ;; esac
# V10, gpt-oss-120b on an H100 from config alone, with vLLM's Marlin MXFP4
# padding: the log's 130,960 tokens; kvplan within 2 % of it (8.99 GiB logged
# pool; 65.91 GiB of weights, rotary cache included, against 65.9651 logged
# leaves ~0.06 GiB more)
v10=$(printf '%s\n' "$out" | awk '$1 == "v10-gpt-oss-120b-h100" && $2 == "config" { print $4 }')
if [ -n "$v10" ] && [ "$v10" -ge 130960 ] && [ "$v10" -le 133579 ]; then ok
else bad "v10 config alone: '$v10', want 130,960 .. 133,579 (+2 %)"; fi

# a case 1,000 tokens off its budget fails --check: Llama-3.1-8B, 19.25 GiB
# gives 157,696 tokens (9,856 blocks of 2 MiB), so 158,696 is out of the
# +/- 0.005 GiB band (157,616 .. 157,728) by more than a block
mkdir -p "$tmp/cases"
sed 's/^logged_tokens: 157648/logged_tokens: 158696/' \
	"$top_srcdir/tests/data/engine-logs/v3-llama31-8b-fp16-40gb.yaml" > "$tmp/cases/off.yaml"
run env ENGINE_LOGS_DIR="$tmp/cases" sh "$bench" --check "$KVPLAN"
expect_rc 1
expect_err "1 logged-terms case(s) outside the log's rounding"
# a TensorRT-LLM case two blocks off fails too: T4's 0.9 x 70.48 GiB at
# 262,144 B per token is 259,817 tokens, ceil(/ 64) = 4,060 blocks (70.475
# and 70.485 GiB give 259,799 and 259,835 tokens: 4,060 too); 4,062 blocks =
# 259,968 is outside 259,840 by more than a block of 64
sed 's/^logged_tokens: 259840/logged_tokens: 259968/' \
	"$top_srcdir/tests/data/engine-logs/t4-llama2-7b-fp8kv-trtllm-docs.yaml" > "$tmp/cases/off2.yaml"
run env ENGINE_LOGS_DIR="$tmp/cases" sh "$bench" --check "$KVPLAN"
expect_rc 1
expect_err "2 logged-terms case(s) outside the log's rounding"
rm -f "$tmp/cases/off2.yaml"
# the same case as logged passes
cp "$top_srcdir/tests/data/engine-logs/v3-llama31-8b-fp16-40gb.yaml" "$tmp/cases/off.yaml"
run env ENGINE_LOGS_DIR="$tmp/cases" sh "$bench" --check "$KVPLAN"
expect_rc 0
finish
