#!/bin/sh
# cli-encoder.sh: vLLM's encoder profile run in the budget (issue 36,
# src/memory/encoder.h), each figure by hand beside its assertion.
. "${top_srcdir:-$(dirname "$0")/..}/tests/lib.sh"
models="$top_srcdir/tests/data/engine-logs/models"
qwen="$models/Qwen2.5-VL-7B-Instruct/config.json"
llava="$models/llava-v1.6-mistral-7b-hf/config.json"

# Qwen2.5-VL-7B on an A100 80 GB at its max_model_len 128,000 and
# utilization 0.22, as a public vLLM 0.23.0 log ran it (reports/
# engine-logs.md, "Issue 36, the encoder profile"; 0.27.1 is the nearest
# modelled entry).  The largest image: max_pixels 12,845,056 / 28^2 =
# 16,384 tokens; a video of 14 frames (the cap) is 7 groups of them =
# 114,688 tokens <= 128,000, more than one image: the log's own "budget
# of 114688 tokens, and profiled with 1 video items" (budget = max(2,048,
# 114,688); 114,688 // 114,688 = 1 item).
case_file="$top_srcdir/tests/data/engine-logs/encoder/e1-qwen25-vl-7b-a100-v0230.yaml"
field() { sed -n "s/^$1:[[:space:]]*//p" "$case_file" | sed 's/[[:space:]]*#.*//; s/^"//; s/"$//'; }
run "$KVPLAN" budget --model "$top_srcdir/$(field model)" --gpu "$(field gpu_profile)" \
	--utilization "$(field utilization)" --context "$(field max_model_len)" \
	--engine-version "$(field engine_version)" --format json
expect_json encoder_profile_tokens_per_item "$(field logged_encoder_budget_tokens)"
expect_json encoder_profile_items "$(field logged_encoder_items)"
expect_json encoder_profile_modality video
# the tower: 7 x 128 x 128 x 4 = 458,752 patches, each (3 x 1280 + max(3 x
# 3420, 8 x 1280) = 14,100) x 2 B = 28,200 B live, + 1,176 pixel values x
# (4 B kept + 2 B cast) = 7,056 B: 35,256 B x 458,752 = 16,173,760,512 B,
# above everything the language model's run holds, so the activation peak
# is the tower's (the log implies 15.49 GiB for activation and non-torch;
# this is 15.06 GiB + 0.25 GiB non-torch)
expect_json activation_bytes 16173760512
expect_out '"fits": false'
expect_rc 1

# LLaVA-1.6-Mistral-7B as vLLM 0.10.2 ran it (tests/data/engine-logs/v17):
# the largest pinpoint 672 x 672: 576 + 48 x 48 + 48 = 2,928 tokens from 5
# crops of 577 patches; 16,384 // 2,928 = 5 items (1,024 sequences x 1 per
# prompt allow more).  Kept: 5 x 2,928 x 4,096 x 2 B = 119,930,880 B of
# outputs + 5 x 5 x 577 x 588 x 4 B = 33,927,600 B of pixel values =
# 153,858,480 B; the tower's own peak (14,425 patches x ((3 x 1024 + 8,192)
# x 2 + 588 x 6) = 375,857,800 B) is below the language model's 1.75 GiB
run "$KVPLAN" budget --model "$llava" --gpu-memory 79.19GiB --utilization 0.9 \
	--engine-version 0.10.2 --context 4096 --max-batched-tokens 16384 --format json
expect_json encoder_profile_tokens_per_item 2928
expect_json encoder_profile_items 5
expect_json encoder_profile_bytes 153858480
expect_json encoder_profile_modality image
# the CLIP tower to layer -2 and the projector: 311,892,992 params x 2 B
expect_json tower_bytes 623785984

# --preprocessor-config: max_pixels 1,003,520 / 784 = 1,280 tokens an image.
# vLLM 0.10.2 counts the item from max_model_len 32,768 (16 frames, the
# cap: 8 groups = 10,240 tokens) but builds the dummy at
# max_num_batched_tokens 2,048 (an A100 80 GB takes the small defaults):
# 2 frames, one group of 1,280 tokens over 1,280 x 4 = 5,120 patches.
# Kept: 1,280 x 3,584 x 2 B = 9,175,040 B + 5,120 x 1,176 x 4 B =
# 24,084,480 B = 33,259,520 B
run "$KVPLAN" budget --model "$qwen" --gpu a100-80gb --context 32768 --engine-version 0.10.2 \
	--preprocessor-config "$models/Qwen2.5-VL-7B-Instruct/preprocessor-max-1280-tokens.json" \
	--format json
expect_json encoder_profile_tokens_per_item 10240
expect_json encoder_profile_items 1
expect_json encoder_profile_bytes 33259520
# the same on 0.19.0: 14 frames at most, the dummy at max_model_len too:
# 7 groups = 8,960 tokens, 35,840 patches; kept 8,960 x 3,584 x 2 B =
# 64,225,280 + 35,840 x 4,704 B = 168,591,360; the tower's peak 35,840 x
# 35,256 B = 1,263,575,040 B
run "$KVPLAN" budget --model "$qwen" --gpu a100-80gb --context 32768 --engine-version 0.19.0 \
	--preprocessor-config "$models/Qwen2.5-VL-7B-Instruct/preprocessor-max-1280-tokens.json" \
	--format json
expect_json encoder_profile_tokens_per_item 8960

# with the activation given (the logged-terms runs of bench/engine-logs.sh)
# nothing is estimated: no encoder term
run "$KVPLAN" budget --model "$llava" --gpu-memory 79.19GiB --activation-bytes 0 \
	--engine-version 0.10.2 --context 4096 --format json
expect_json encoder_profile_bytes 0
expect_json encoder_profile_modality ""
# a text model has none
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm --format json
expect_json encoder_profile_items 0

# errors: a max_pixels that is no number (file:line:col, field; exit 3),
# and a preprocessor config for a model whose max_pixels is not read
run "$KVPLAN" budget --model "$qwen" --gpu a100-80gb \
	--preprocessor-config "$top_srcdir/tests/data/bad/preprocessor-max-pixels.json"
expect_rc 3
expect_err "preprocessor-max-pixels.json:3:17: error: max_pixels:"
run "$KVPLAN" budget --model llama-3.1-8b --gpu h100-sxm \
	--preprocessor-config "$models/Qwen2.5-VL-7B-Instruct/preprocessor-max-1280-tokens.json"
expect_rc 3
expect_err "only a Qwen2-VL or Qwen2.5-VL model's max_pixels is read"
finish
