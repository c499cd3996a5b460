#!/usr/bin/env bash
# recipe.sh - `tpuplan plan` on recipes end to end: each sample recipe, the quick case (a bare
# config.json and --train/--mesh flags), the recipe section and the text report, the errors
# that name the field. Prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
data=tests/data/recipes

# expect_exit NAME CODE ARGS... : tpuplan plan ARGS exits CODE
expect_exit() {
    local name=$1 code=$2
    shift 2
    run plan "$@"
    ok $((rc != code)) "$name (exit $code)"
    [ "$rc" -eq "$code" ] || echo "# exit $rc: $(head -c 300 "$tmp/err")"
}

errmsg() { grep -qF -- "$2" "$tmp/err"; ok $? "$1"; }
outhas() { grep -qF -- "$2" "$tmp/out"; ok $? "$1"; }

# --- Llama-3.1-8B on 16 chips of v5e: 16 bytes a parameter, the norms whole on each device
expect_exit "llama-3.1-8b, fsdp=16 on v5e fits" 0 "$data/llama-3.1-8b-fsdp16.json"
check "source_format recipe, 16 devices" 'd["model"]["source_format"] == "recipe" and d["model"]["devices"] == 16'
check "parameters 8,030,261,248, the published count" 'd["recipe"]["model"]["parameters"] == 8030261248 == d["recipe"]["model"]["published_parameters"]'
check "weights + gradients + master + m, v = 16 x 502,140,928 bytes a device" \
    'sum(d["recipe"]["bytes"][c]["logical_bytes"] for c in ("weights", "gradients", "master_weights", "optimizer_state")) == 16 * 502140928'
check "the categories sum to the summary's padded bytes" \
    'sum(b["padded_bytes"] for b in d["recipe"]["bytes"].values()) == d["summary"]["padded_bytes"]'
check "full remat keeps the stacked layer inputs, 32 x 1 x 4096 x 4096 bf16" \
    '[t["logical_bytes"] for t in d["tensors"] if t["name"] == "layers.x"] == [32 * 4096 * 4096 * 2]'
check "tensors are tagged with their category" \
    'all("weights" in t["tags"] for t in d["tensors"] if t["kind"] == "param")'

# --- the quick case: a bare config.json and flags
cfg=$data/configs/llama-3.1-8b.config.json
expect_exit "config.json --train --mesh --chip: the same plan" 0 "$cfg" --train batch=16,seq=4096 --mesh fsdp=16 --chip v5e
check "the quick case plans what the recipe file does" 'd["recipe"]["bytes"]["weights"]["logical_bytes"] == 1004281856 and d["recipe"]["train"]["batch"] == 16'
expect_exit "--recipe PATH=JSON: a rule override" 0 "$cfg" --train batch=8,seq=1024 --recipe 'parallelism.rules.embed=["fsdp","tensor"]' --mesh fsdp=4,tensor=2 --chip v5p
check "embed now sharded over fsdp and tensor" 'd["recipe"]["parallelism"]["rules"]["embed"] == ["fsdp", "tensor"]'
expect_exit "a bare config.json alone" 2 "$cfg"
errmsg "a bare config.json: how to make it a recipe" "--train batch=8,seq=4096"
expect_exit "a bad flag value" 2 "$cfg" --train batch=8,seq=x
errmsg "a bad flag value names the field" "train.seq: must be a whole number"
expect_exit "a flag without =" 2 "$cfg" --train batch
errmsg "a flag without = says the grammar" '--train: "batch" must be KEY=VALUE'
expect_exit "an unknown family" 2 "$cfg" --recipe model.architectures='["FalconForCausalLM"]' --recipe model.model_type=falcon --train batch=1,seq=1
errmsg "an unknown family lists the families" "Supported model_type: llama, mistral"

# --- the text report
expect_exit "text report" 0 "$data/llama-3.1-70b-pipeline.json" --format text
outhas "text: the recipe line" "recipe     LlamaForCausalLM (llama), 70.55B parameters (preset llama-3.1-70b, published 70.55B)"
outhas "text: bytes by category" "by category"
outhas "text: the planned stage" "<- planned"
check_text_stages() { [ "$(grep -c '^ \+[0-3]  ' "$tmp/out")" -ge 4 ]; }
check_text_stages
ok $? "text: every pipeline stage listed"

# --- serving: the KV cache kind, int8 weights with scales
expect_exit "gemma-2-9b serving, int8, tensor=4 on v6e" 0 "$data/gemma-2-9b-serve-int8.json"
check "kv_cache in by_kind" '"kv_cache" in d["summary"]["by_kind"]'
check "int8 weights and f32 scales" \
    'any(t["dtype"] == "s8" for t in d["tensors"]) and d["recipe"]["bytes"]["quant_scales"]["count"] > 0'
check "sliding layers (21 of 42) cache only the 4096-token window" \
    'd["recipe"]["model"]["sliding_layers"] == 21'

# --- MoE with expert parallelism
expect_exit "mixtral-8x7b, fsdp=8 x expert=8 on v5p" 0 "$data/mixtral-8x7b-expert.json"
check "experts sharded over the expert axis" \
    'any(t["name"] == "layers.moe.w_up" and t["sharding"][1] == ["expert"] for t in d["tensors"])'

# --- presets: DeepSeek's latent attention and experts, Gemma 3's windows
printf '%s' '{"model": "deepseek-r1", "serve": {"sequences": 8, "context": 4096}}' >"$tmp/ds.json"
expect_exit "deepseek-r1 serving 8 x 4096 on v5e does not fit" 1 "$tmp/ds.json"
check "deepseek-r1: 671,026,419,200 parameters, 58 of 61 layers experts" \
    'd["recipe"]["model"]["parameters"] == 671026419200 and d["recipe"]["model"]["moe_layers"] == 58'
check "deepseek-r1 caches the compressed kv: 61 x 8 x 4096 x (512 + 64) bf16" \
    'd["recipe"]["bytes"]["kv_cache"]["logical_bytes"] == 61 * 8 * 4096 * 576 * 2'
printf '%s' '{"model": "gemma-3-1b", "serve": {"sequences": 8, "context": 4096}}' >"$tmp/g3.json"
expect_exit "gemma-3-1b serving 8 x 4096 on v5e fits" 0 "$tmp/g3.json"
check "gemma-3-1b: 22 of 26 layers cache only the 512-token window (K and V, 1 x 256 bf16)" \
    'd["recipe"]["model"]["sliding_layers"] == 22 and d["recipe"]["bytes"]["kv_cache"]["logical_bytes"] == 8 * (4 * 4096 + 22 * 512) * 2 * 256 * 2'

echo "1..$n"
[ "$fails" -eq 0 ]
