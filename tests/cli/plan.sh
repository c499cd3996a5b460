#!/usr/bin/env bash
# plan.sh - `tpuplan plan` end to end on tests/data: exit codes (0 fits, 1 does not fit,
# 2 bad input), key values of the result JSON (checked with python3), the text report,
# stdin, and error messages that name the tensor and field. Prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.."
bin=${TPUPLAN_BIN:-bin/tpuplan}
data=tests/data
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
fails=0

ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() { n=$((n + 1)); fails=$((fails + 1)); echo "not ok $n - $1"; [ -n "${2:-}" ] && echo "# $2"; }

# expect_exit NAME CODE ARGS... : runs bin plan ARGS, stdout to $tmp/out, stderr to $tmp/err
expect_exit() {
    local name=$1 code=$2
    shift 2
    "$bin" plan "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq "$code" ]; then ok "$name (exit $code)"; else nok "$name" "exit $rc, wanted $code: $(head -c 300 "$tmp/err")"; fi
}

# check NAME PYTHON-EXPR : evaluates EXPR with r = the JSON in $tmp/out
check() {
    if python3 - "$tmp/out" "$2" <<'PY' 2>"$tmp/pyerr"; then ok "$1"; else nok "$1" "$(tail -1 "$tmp/pyerr")"; fi
import json, sys
r = json.load(open(sys.argv[1]))
assert eval(sys.argv[2]), sys.argv[2]
PY
}

# errmsg NAME SUBSTRING : stderr of the last run contains SUBSTRING
errmsg() {
    if grep -qF -- "$2" "$tmp/err"; then ok "$1"; else nok "$1" "stderr: $(head -c 300 "$tmp/err")"; fi
}

# --- the real pytorch/xla #1965 padding disaster, with its suggestion
expect_exit "embedding model fits on v4" 0 $data/models/embedding-padding.json
check "token_ids padded to 6.00G exactly" \
    'r["tensors"][0]["padded_bytes"] == 6442450944 and r["tensors"][0]["logical_bytes"] == 50331648'
check "suggestion folds the minor dim" \
    'r["suggestions"][0]["text"] == "minor dim 1 (size 1) pads to 128 under T(8,128); storing it as u32[98304,128] saves 5.95G"'
check "totals are the sum of the tensors" \
    'r["summary"]["padded_bytes"] == sum(t["padded_bytes"] for t in r["tensors"]) and r["summary"]["logical_bytes"] == sum(t["logical_bytes"] for t in r["tensors"])'
check "by_kind adds up" \
    'sum(k["padded_bytes"] for k in r["summary"]["by_kind"].values()) == r["summary"]["padded_bytes"]'
check "headroom = capacity - peak" \
    'r["summary"]["headroom_bytes"] == r["summary"]["capacity_bytes"] - r["summary"]["peak_bytes"] and r["summary"]["fits"]'
expect_exit "same model does not fit in 8G" 1 $data/models/embedding-padding.json --capacity 8G
check "overflow reported" 'not r["summary"]["fits"] and r["summary"]["overflow_bytes"] == r["summary"]["peak_bytes"] - 8 * 2**30'
# --capacity reads the one byte grammar (planner/bytes.h): decimals taken exactly, i and B
# optional, lower-case units; a fraction of a byte is refused, not rounded
expect_exit "--capacity 7.5g" 1 $data/models/embedding-padding.json --capacity 7.5g
check "7.5g is 7.5 x 2^30 exactly" 'r["summary"]["capacity_bytes"] == 8053063680'
expect_exit "--capacity 0.3K (307.2 bytes)" 2 $data/models/embedding-padding.json --capacity 0.3K
errmsg "--capacity 0.3K: message" '--capacity: "0.3K" is not a whole number of bytes'
expect_exit "--capacity past 2^64-1" 2 $data/models/embedding-padding.json --capacity 16777216T
errmsg "--capacity past 2^64-1: message" '--capacity: "16777216T" passes 2^64-1 bytes'

# --- training step with ops: derived lifetimes, packing
expect_exit "tiny LM training step" 0 $data/models/tiny-lm-train.json
check "lifetimes derived from ops" \
    '[t["live"] for t in r["tensors"] if t["name"] == "l0.scores"] == [[2, 28]] and r["model"]["steps"] == len(json.load(open("'$data'/models/tiny-lm-train.json"))["ops"])'
check "peak >= lower bound >= largest tensor" \
    'r["summary"]["peak_bytes"] >= r["summary"]["lower_bound_bytes"] >= max(t["padded_bytes"] for t in r["tensors"])'
check "offsets never overlap in time and space" '
all(not (a["live"][0] < b["live"][1] and b["live"][0] < a["live"][1] and a["offset"] < b["offset"] + b["padded_bytes"] and b["offset"] < a["offset"] + a["padded_bytes"])
    for i, a in enumerate(r["tensors"]) for b in r["tensors"][:i] if a["padded_bytes"] and b["padded_bytes"])'
check "assumed v5e layouts are labelled" \
    'r["summary"]["assumed_layouts"] > 0 and any("assumed" in a for a in r["chip"]["assumptions"])'

# --- sharding: per-device shapes
expect_exit "sharded model on v5p" 0 $data/models/sharded-lm.json
check "per-device shape of an uneven shard" \
    '[t["dims"] for t in r["tensors"] if t["name"] == "embed"] == [[16001, 1024]] and r["model"]["devices"] == 8'
check "minor dim sharded below 128 pads back" \
    '[(t["dims"], t["padded_dims"]) for t in r["tensors"] if t["name"] == "head_proj"] == [([1024, 64], [1024, 128])]'
check "replication warning" 'any("replicated" in w for w in r["warnings"])'
check "reshard suggestion for the minor-sharded param" \
    '[s["action"] for s in r["suggestions"] if s["name"] == "head_proj"] == ["reshard"]'

# --- importers
expect_exit "safetensors header" 0 $data/tiny-llama.safetensors-header --chip v6e
check "safetensors tensors are params" \
    'r["model"]["source_format"] == "safetensors" and len(r["tensors"]) == 6 and all(t["kind"] == "param" for t in r["tensors"])'
check "safetensors bf16 embedding" \
    'r["tensors"][0]["dtype"] == "bf16" and r["tensors"][0]["padded_bytes"] == 32000 * 128 * 2'
expect_exit "MiniMalloc CSV at its capacity" 0 $data/minimalloc-small.csv --capacity 12B
check "CSV peak" 'r["summary"]["peak_bytes"] == 12 and r["chip"] is None'
expect_exit "MiniMalloc CSV over capacity" 1 $data/minimalloc-small.csv --capacity 11B

# --- stdin and text
"$bin" plan - --format text <$data/models/embedding-padding.json >"$tmp/out" 2>"$tmp/err"
if [ $? -eq 0 ] && grep -q "FITS" "$tmp/out" && grep -q "saves 5.95G" "$tmp/out"; then ok "text report from stdin"; else nok "text report from stdin"; fi
expect_exit "strategies option" 0 $data/models/tiny-lm-train.json --strategies xla-spatial,first-fit --time-limit 0.5
check "two strategies ran" '[s["name"] for s in r["packing"]["strategies"]] == ["xla-spatial", "first-fit"]'

# --- the runtime allocator replay (GPU-style BFC, not TPU) and the trace export
printf 'id,lower,upper,size\nb0,0,1,1024\nb1,0,5,1024\nb2,0,1,1024\nb3,0,5,1024\nb4,1,5,2048\n' >"$tmp/frag.csv"
expect_exit "runtime OOM with free memory (the static plan fits)" 0 "$tmp/frag.csv" --capacity 8192B --mem-fraction 0.5
check "runtime: limit 4096, b4 fails at step 1 with 2048 free in two 1024 holes" \
    '(lambda rt: rt["memory_limit_bytes"] == 4096 and rt["failed_allocations"] == 1 and rt["first_failure"]["name"] == "b4" and rt["first_failure"]["step"] == 1 and rt["first_failure"]["free_bytes"] == 2048 and rt["first_failure"]["largest_free_bytes"] == 1024 and rt["first_oom_with_free_memory"] == rt["first_failure"] and not rt["fits"])(r["packing"]["runtime"])'
check "runtime is not a strategy and never chosen" \
    'all(s["name"] != "bfc-runtime" for s in r["packing"]["strategies"]) and r["packing"]["chosen"] != "bfc-runtime"'
expect_exit "runtime with growth" 0 "$tmp/frag.csv" --capacity 64M --preallocate false
check "growth: the first region is 2 MiB" \
    'r["packing"]["runtime"]["region_bytes"] == [2097152] and r["packing"]["runtime"]["preallocate"] is False'
expect_exit "mem-fraction above 1" 2 "$tmp/frag.csv" --capacity 8192B --mem-fraction 1.5
errmsg "mem-fraction above 1: message" "--mem-fraction: must be above 0 and at most 1"
expect_exit "preallocate not a boolean" 2 "$tmp/frag.csv" --preallocate maybe
expect_exit "text report with the runtime row" 0 $data/models/tiny-lm-train.json --format text --strategies xla-spatial --runtime bfc
if grep -q "bfc-runtime .*(GPU runtime model, not the TPU; every allocation succeeds)" "$tmp/out" &&
    grep -q "^runtime    GPU runtime model (asked for with --runtime bfc): .*not what the TPU compiler does" "$tmp/out" &&
    grep -q "on a GPU every allocation would succeed$" "$tmp/out"; then
    ok "text report labels the runtime row"
else nok "text report labels the runtime row" "$(grep -n runtime "$tmp/out" | head -3)"; fi
"$bin" plan $data/models/tiny-lm-train.json --strategies xla-spatial >"$tmp/plan.json"
expect_exit "trace export" 0 $data/models/tiny-lm-train.json --strategies xla-spatial --format trace
if python3 - "$tmp/out" "$tmp/plan.json" <<'PY' 2>"$tmp/pyerr"; then ok "trace: valid trace JSON with the expected event counts"; else nok "trace: valid trace JSON with the expected event counts" "$(tail -1 "$tmp/pyerr")"; fi
import json, sys
t, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ev = t["traceEvents"]
by = {}
for e in ev:
    assert e["ph"] in "CMX" and e["pid"] == 1, e
    by.setdefault(e["ph"], []).append(e)
packed = [x for x in r["tensors"] if x["padded_bytes"] > 0]
assert len(by["X"]) == len(packed), (len(by["X"]), len(packed))
steps = len(r["packing"]["timeline"]["step"])
assert not r["packing"]["timeline"]["downsampled"]
assert len(by["C"]) == 2 * steps, (len(by["C"]), steps)
tracks = [e for e in by["M"] if e["name"] == "thread_name"]
assert len(by["M"]) == 1 + 2 * len(tracks)
# every slice is where the plan put it; slices of a track never overlap in time
off = {x["name"]: (x["offset"], x["live"]) for x in packed}
lanes = {}
for e in by["X"]:
    o, live = off[e["name"]]
    assert e["args"]["offset"] == o and [e["ts"], e["ts"] + e["dur"]] == live, e
    lanes.setdefault(e["tid"], []).append((e["ts"], e["ts"] + e["dur"]))
for tid, iv in lanes.items():
    iv.sort()
    assert all(a[1] <= b[0] for a, b in zip(iv, iv[1:])), tid
# the heap height counter is the plan's heap top
heap = [e["args"]["bytes"] for e in by["C"] if e["name"] == "heap height"]
assert max(heap) == r["summary"]["peak_bytes"], (max(heap), r["summary"]["peak_bytes"])
PY
expect_exit "trace export of a plan that does not fit" 1 $data/models/tiny-lm-train.json --strategies xla-spatial --format trace --capacity 1G
expect_exit "unknown --format" 2 $data/models/tiny-lm-train.json --format svg

# --- the budget gate: peak 13019119616 bytes on v4 (usable 33017561088)
m=$data/models/embedding-padding.json
expect_exit "budget = the peak exactly" 0 $m --budget 13019119616
check "budget_bytes and within_budget" 'r["summary"]["budget_bytes"] == 13019119616 and r["summary"]["within_budget"] is True'
expect_exit "budget one byte under the peak" 1 $m --budget 13019119615
check "over budget, still fits" 'r["summary"]["within_budget"] is False and r["summary"]["fits"] is True'
expect_exit "budget 12.125G = 12.125 x 2^30 = the peak" 0 $m --budget 12.125G
expect_exit "budget 12GiB (12884901888) is under the peak" 1 $m --budget 12GiB
check "12GiB is 12 x 2^30" 'r["summary"]["budget_bytes"] == 12 * 2**30'
expect_exit "budget 0.5 of usable HBM" 0 $m --budget 0.5
check "0.5 of 33017561088" 'r["summary"]["budget_bytes"] == 16508780544'
expect_exit "budget 0.394 of usable HBM (13008919068) is under the peak" 1 $m --budget 0.394
check "0.394 taken exactly, rounded down" 'r["summary"]["budget_bytes"] == 13008919068'
expect_exit "budget as a fraction of --capacity" 0 $m --capacity 16G --budget 0.9 --format text
if grep -q "^  budget   ok: peak 12.12G within the 14.40G budget, 2.27G under$" "$tmp/out"; then ok "text report: budget line"; else nok "text report: budget line" "$(grep budget "$tmp/out")"; fi
expect_exit "no budget" 0 $m
check "no budget: both null" 'r["summary"]["budget_bytes"] is None and r["summary"]["within_budget"] is None'
expect_exit "budget not a number" 2 $m --budget lots
errmsg "budget not a number: message" 'budget: "lots" is not a byte count'
expect_exit "budget fraction above 1" 2 $m --budget 1.5
errmsg "budget fraction above 1: message" "budget: a fraction of the capacity must be above 0 and at most 1"
expect_exit "budget 0" 2 $m --budget 0
expect_exit "budget unknown suffix" 2 $m --budget 14X
expect_exit "budget fraction without a capacity" 2 $data/minimalloc-small.csv --budget 0.9
errmsg "budget fraction without a capacity: message" "budget: a fraction needs a capacity"
expect_exit "budget in bytes on a CSV without a capacity" 1 $data/minimalloc-small.csv --budget 11B

# --- the plan options' table (planner/plan_options.h): every option on plan, one grammar,
# one range and one message. perfect-48.csv (tests/cli/pack.sh): with twice the optimum as
# capacity, goal fit stops at the greedy seed's 1235968, min goes on to the optimum 1048576.
p48=$data/perfect-48.csv
expect_exit "--goal fit" 0 $p48 --capacity 2M --strategies exact --goal fit
check "--goal fit stops at the first packing within the capacity, unproven" \
    'r["summary"]["peak_bytes"] == 1235968 and r["packing"]["strategies"][0]["proven_optimal"] is False'
expect_exit "--goal min" 0 $p48 --capacity 2M --strategies exact --goal min
check "--goal min minimises to the lower bound and proves it" \
    'r["summary"]["peak_bytes"] == 1048576 and r["packing"]["strategies"][0]["proven_optimal"] is True'
expect_exit "--time-limit 500ms --threads 1 --name" 0 $p48 --strategies xla-spatial \
    --time-limit 500ms --threads 1 --name forty-eight
check "--name names the plan" 'r["model"]["name"] == "forty-eight"'
expect_exit "--input mlir: StableHLO's other name" 0 $data/hlo/jax_while_call.mlir --input mlir
expect_exit "--time-limit 0" 2 $p48 --time-limit 0
errmsg "--time-limit 0: message" 'tpuplan plan: --time-limit: must be above 0 and at most 3600 s, got "0"'
expect_exit "--time-limit 2h" 2 $p48 --time-limit 2h
errmsg "--time-limit 2h: message" 'tpuplan plan: --time-limit: must be above 0 and at most 3600 s, got "2h"'
expect_exit "--time-limit 2x" 2 $p48 --time-limit 2x
errmsg "--time-limit 2x: message" 'tpuplan plan: --time-limit: "2x" is not a duration (2, 2s, 500ms, 1.5m'
expect_exit "--alignment 96" 2 $p48 --alignment 96
errmsg "--alignment 96: message" 'tpuplan plan: --alignment: must be a power of two from 1 to 1G (2^30) bytes, got "96"'
expect_exit "--capacity 0" 2 $p48 --capacity 0
errmsg "--capacity 0: message" 'tpuplan plan: --capacity: must be above 0 bytes, got "0"'
expect_exit "--input xml" 2 $p48 --input xml
errmsg "--input xml: message" 'tpuplan plan: --input: unknown input format "xml" (known: auto, safetensors, recipe, json, minimalloc-csv (csv), xla-buffer-assignment, hlo, stablehlo (mlir), xla-oom (oom))'
expect_exit "--chip v9" 2 $p48 --chip v9
errmsg "--chip v9: message" 'tpuplan plan: --chip: unknown chip "v9" (known: '
expect_exit "--goal most" 2 $p48 --goal most
errmsg "--goal most: message" 'tpuplan plan: --goal: must be min or fit, got "most"'
expect_exit "--preallocate maybe" 2 $p48 --preallocate maybe
errmsg "--preallocate maybe: message" 'tpuplan plan: --preallocate: must be true or false, got "maybe"'
expect_exit "--mem-fraction 5e-1" 2 $p48 --mem-fraction 5e-1
errmsg "--mem-fraction 5e-1: message" 'tpuplan plan: --mem-fraction: "5e-1" is not a decimal number (0.75, .5, 1: at most 6 decimals)'
expect_exit "--name empty" 2 $p48 --name ''
errmsg "--name empty: message" 'tpuplan plan: --name: must be 1 to 127 bytes, got 0'
expect_exit "--budget lots" 2 $p48 --budget lots
errmsg "--budget lots: message names the flag" 'tpuplan plan: --budget: "lots" is not a byte count'
expect_exit "--threads 65" 2 $p48 --threads 65
errmsg "--threads 65: message" 'tpuplan plan: --threads: must be a whole number from 1 to 64, got "65"'
# a model's own "options" in the flags' grammar; a flag wins over them
printf '{"chip":"v5e","tensors":[{"name":"w","shape":[4,128],"dtype":"f32"}],"options":{"capacity":"16GiB","time_limit":"500ms","budget":"0.5"}}' >"$tmp/opts.json"
expect_exit "a model's options: capacity \"16GiB\", time_limit \"500ms\"" 0 "$tmp/opts.json"
check "options.capacity 16GiB is 17179869184 bytes, the budget half of it" \
    'r["summary"]["capacity_bytes"] == 17179869184 and r["summary"]["budget_bytes"] == 8589934592'
expect_exit "--capacity wins over the model's" 0 "$tmp/opts.json" --capacity 1G
check "--capacity 1G, the model's budget half of it" \
    'r["summary"]["capacity_bytes"] == 1073741824 and r["summary"]["budget_bytes"] == 536870912'
printf '{"tensors":[],"options":{"capacity":"lots"}}' >"$tmp/opts-bad.json"
expect_exit "a bad model option" 2 "$tmp/opts-bad.json"
errmsg "a bad model option: message" 'options.capacity: "lots" is not a byte count'
"$bin" plan --help >"$tmp/out"
if grep -q -- '--goal min|fit' "$tmp/out" && grep -q -- '--time-limit SECONDS' "$tmp/out"; then
    ok "--help lists the table's options"
else
    nok "--help lists the table's options" "$(head -c 300 "$tmp/out")"
fi

# --- bad input: exit 2 and a message naming the tensor and the field
bad() {
    local name=$1 json=$2 msg=$3
    printf '%s' "$json" >"$tmp/in.json"
    expect_exit "$name" 2 "$tmp/in.json"
    errmsg "$name: message" "$msg"
}
bad "negative dim" '{"tensors":[{"name":"a","shape":[1],"dtype":"f32"},{"name":"attn.wq","shape":[8,-4],"dtype":"f32"}]}' \
    'tensors[1] "attn.wq": shape[1]: must be >= 0, got -4'
bad "unknown dtype" '{"tensors":[{"name":"w","shape":[8],"dtype":"f33"}]}' 'tensors[0] "w": dtype: unknown dtype "f33"'
bad "unknown chip" '{"chip":"v99","tensors":[]}' 'unknown chip "v99"'
bad "duplicate names" '{"tensors":[{"name":"w","shape":[8],"dtype":"f32"},{"name":"w","shape":[8],"dtype":"f32"}]}' \
    'tensors[1] "w": name: duplicate tensor name'
bad "layout not a permutation" '{"tensors":[{"name":"w","shape":[8,8],"dtype":"f32","layout":"{0,0}"}]}' 'tensors[0] "w": layout'
bad "unknown op tensor" '{"tensors":[{"name":"w","shape":[8],"dtype":"f32"}],"ops":[{"name":"mm","inputs":["v"]}]}' \
    'ops[0] "mm": inputs[0]: unknown tensor "v"'
bad "byte overflow" '{"tensors":[{"name":"big","shape":[4294967296,4294967296],"dtype":"f32"}]}' 'tensors[0] "big"'
bad "not JSON" '{"tensors":[' 'ends early'
bad "unknown format" 'hello world' 'unrecognized input'
printf '\x64\x00\x00\x00\x00\x00\x00\x00{"a":1}' >"$tmp/trunc.st"
expect_exit "truncated safetensors header" 2 "$tmp/trunc.st"
errmsg "truncated safetensors header: message" "header length 100 is larger than"
printf 'id,lower,upper,size\nb1,5,3,4\n' >"$tmp/bad.csv"
expect_exit "CSV lower >= upper" 2 "$tmp/bad.csv"
# CSV ids are bytes; the JSON result stays UTF-8 (what PostgreSQL's jsonb takes): U+FFFD
printf 'id,lower,upper,size\nb\xff1,0,2,4\n\xc3\xa9,1,3,4\n' >"$tmp/latin1.csv"
expect_exit "CSV ids that are not UTF-8" 0 "$tmp/latin1.csv"
check "and the result is UTF-8, that byte written as U+FFFD" \
    '{t["name"] for t in json.loads(open(sys.argv[1], "rb").read().decode("utf-8"))["tensors"]} == {"b\ufffd1", "\u00e9"}'
expect_exit "missing file" 2 "$tmp/nope.json"
expect_exit "unknown option" 2 $data/models/embedding-padding.json --colour
expect_exit "bad capacity" 2 $data/models/embedding-padding.json --capacity -5
expect_exit "unknown strategy" 2 $data/models/embedding-padding.json --strategies magic
errmsg "unknown strategy: message" 'unknown strategy "magic"'
truncate -s $((257 * 1024 * 1024)) "$tmp/huge.json" # sparse: refused from its size
expect_exit "input above the 256 MiB limit" 2 "$tmp/huge.json"
errmsg "input above the limit: message" "the limit is 268435456"
rm -f "$tmp/huge.json"

# --- one verdict (summary.verdict: plan_verdict.c), worded once, the same in the JSON and the
# text; the BFC replay is a GPU runtime model, off unless asked for
expect_exit "Pallas example: a kernel over its VMEM" 1 $data/models/pallas-kernels.json --format text
if grep -q "^fit        DOES NOT FIT$" "$tmp/out" &&
    grep -q "^  hbm      ok: HBM peak 96.00M within the 31.25G capacity, 31.16G headroom$" "$tmp/out" &&
    grep -q '^  vmem     FAILS: kernel "attention" needs 74.00M of VMEM, over its 32.00M limit by 42.00M (1 of 2 kernels over)$' "$tmp/out" &&
    ! grep -q "^fit .*FITS" "$tmp/out" && ! grep -Eq "over by -|kernels .*: DOES NOT FIT" "$tmp/out"; then
    ok "text report: one verdict for HBM and VMEM"
else nok "text report: one verdict for HBM and VMEM" "$(sed -n '/^fit/,/^$/p' "$tmp/out")"; fi
expect_exit "Pallas example, JSON" 1 $data/models/pallas-kernels.json
check "summary.verdict: does not fit, the HBM check passes, the VMEM check fails" \
    'r["summary"]["verdict"]["status"] == "does-not-fit" and not r["summary"]["fits"] and [(c["name"], c["ok"]) for c in r["summary"]["verdict"]["checks"]] == [("hbm", True), ("vmem", False)]'
expect_exit "the BFC replay is off by default on a TPU chip" 0 $data/models/tiny-lm-train.json --format text
if ! grep -q "bfc-runtime\|^runtime " "$tmp/out"; then ok "text report: no runtime replay unless asked"; else nok "text report: no runtime replay unless asked" "$(grep -n 'bfc\|runtime' "$tmp/out" | head -3)"; fi
expect_exit "--runtime must be none or bfc" 2 $data/models/tiny-lm-train.json --runtime gpu
errmsg "--runtime: message" '--runtime: must be none or bfc, got "gpu"'
expect_exit "a failing BFC allocation is worded as a GPU replay, never an OOM" 0 "$tmp/frag.csv" --capacity 8192B --mem-fraction 0.5 --format text
if grep -q "on a GPU 1 of 5 allocations would fail in this allocator (a GPU replay, not a TPU out-of-memory)$" "$tmp/out" &&
    grep -q "^  first failed GPU allocation at step 1: b4" "$tmp/out" && ! grep -q "OOM\|allocations failed" "$tmp/out" &&
    grep -q "^fit        FITS$" "$tmp/out"; then ok "text report: the GPU replay's failures"
else nok "text report: the GPU replay's failures" "$(grep -n 'GPU\|OOM\|fail' "$tmp/out" | head -5)"; fi

# --- the peak explained (server/planner/RESULT.md#the-peak): peak-train.json is worked out by
# hand in tests/unit/test_peak.c (step 2 of 4, op xent, 598016 = 584.0K live)
expect_exit "peak-train plans" 0 $data/models/peak-train.json
check "peak: step, op and live bytes" \
    'r["peak"]["step"] == 2 and r["peak"]["op"] == {"name": "xent", "source": "ops", "op_name": None} and r["peak"]["live_bytes"] == 598016 == r["summary"]["peak_bytes"]'
check "peak: every breakdown sums to the live bytes" \
    'all(sum(g["bytes"] for g in r["peak"][k]["top"]) + r["peak"][k]["rest"]["bytes"] + r["peak"][k]["none"]["bytes"] == r["peak"]["live_bytes"] for k in ("by_tag", "by_layer", "by_scope")) and sum(g["bytes"] for g in r["peak"]["by_kind"]) == r["peak"]["live_bytes"]'
expect_exit "peak section in the text report" 0 $data/models/peak-train.json --format text
if grep -q "^peak 584.0K at step 2, op xent: 584.0K live in 6 tensors, 0B free below the top$" "$tmp/out" &&
    grep -q "^  allocated there: 1 tensor, 256.0K: logits (256.0K)$" "$tmp/out" &&
    grep -Eq "^    activation +320.0K +54.8% +2$" "$tmp/out" &&
    grep -Eq "^    layer1 +192.0K +32.9% +2$" "$tmp/out" &&
    grep -Eq "^    \(untagged\) +264.0K +45.2% +3$" "$tmp/out" &&
    grep -Eq "^    layers.1 +192.0K +32.9% +2$" "$tmp/out"; then
    ok "text report: the peak section"
else nok "text report: the peak section" "$(sed -n '/^peak /,/^$/p' "$tmp/out" | head -20)"; fi
# an HLO program: the instruction at the peak and its op_name
expect_exit "HLO peak in the text report" 0 $data/hlo/donate_scheduled.hlo --format text
if grep -q "^peak .* at step 3, instruction fusion.4 (jit(f)/add): " "$tmp/out"; then ok "text report: the instruction at the peak"
else nok "text report: the instruction at the peak" "$(grep '^peak ' "$tmp/out")"; fi
# names are never cut (they were cut to 10 characters: "model.embe")
printf '{"chip":"v4","tensors":[{"name":"model.embed_tokens.weight","shape":[3,5],"dtype":"bf16"}]}' >"$tmp/long.json"
expect_exit "a long name" 0 "$tmp/long.json" --format text
if grep -Eq "^  model.embed_tokens.weight +[0-9.]+K" "$tmp/out"; then ok "text report: a long name is printed whole"
else nok "text report: a long name is printed whole" "$(grep -A2 'most padding' "$tmp/out")"; fi

# --- advice (server/planner/RESULT.md#advice): changes planned for real when a plan does not
# fit; tests/unit/test_advice.c checks each against a separate plan
expect_exit "advice: peak-train in 512K" 1 $data/models/peak-train.json --capacity 512K --format text
if grep -q "^advice (does not fit: each change planned, 1 plans with strategies xla-spatial,xla-temporal,xla-area,xla-default,first-fit,tflite)$" "$tmp/out" &&
    grep -q "^  1. keep the activations in bf16, not f32$" "$tmp/out" &&
    grep -q "^     saves 160.0K, peak 424.0K, fits; cost: lower precision (numerics)$" "$tmp/out" &&
    grep -q '^  apply these 1: 1 -> peak 424.0K, fits$' "$tmp/out"; then ok "text report: the advice section"
else nok "text report: the advice section" "$(sed -n '/^advice/,/^$/p' "$tmp/out")"; fi
# the issue's case: Llama-3.1-8B, FSDP over 16 v5e chips, here against 8G
expect_exit "advice: a recipe" 1 $data/recipes/llama-3.1-8b-fsdp16.json --capacity 8G --format text
if grep -q "^  1. 2x the chips (32): mesh axis fsdp 32 instead of 16, the smallest power-of-two multiple that fits, searched in 1 plan$" "$tmp/out" &&
    grep -q '^     what-if {"recipe":{"train":{"remat":"layer_input_offloaded"}}}$' "$tmp/out" &&
    grep -Eq '^  apply these 1: 1 -> peak [0-9.]+G, fits$' "$tmp/out"; then ok "text report: a recipe's advice"
else nok "text report: a recipe's advice" "$(sed -n '/^advice/,/^$/p' "$tmp/out")"; fi
expect_exit "no advice when it fits with room" 0 $data/models/peak-train.json
check "advice is null" 'r["advice"] is None'

# --- inputs people type (issue 24): dtype names from NumPy, JAX and PyTorch; a size without a
# unit below 1 MiB is a slip unless written with B; a budget is a fraction only when written
# as one; --version
printf '{"chip":"v4","tensors":[{"name":"a","shape":[8,128],"dtype":"jnp.bfloat16"},{"name":"b","shape":[8,128],"dtype":"torch.bfloat16"},{"name":"c","shape":[8,128],"dtype":"bfloat16"},{"name":"d","shape":[8,128],"dtype":"float32"},{"name":"e","shape":[8,128],"dtype":"int8"},{"name":"f","shape":[8,128],"dtype":"float16"}]}' >"$tmp/alias.json"
expect_exit "dtype aliases" 0 "$tmp/alias.json"
check "... are XLA's types" '[t["dtype"] for t in r["tensors"]] == ["bf16", "bf16", "bf16", "f32", "s8", "f16"]'
sed 's/"float32"/"torch.float"/' "$tmp/alias.json" >"$tmp/alias-bad.json"
expect_exit "dtype torch.float is refused" 2 "$tmp/alias-bad.json"
errmsg "... naming it and the names there are" 'unknown dtype "torch.float" (XLA names:'
expect_exit "--capacity 16 (16 bytes?)" 2 $data/models/peak-train.json --capacity 16
errmsg "--capacity 16: a likely slip" '--capacity: "16" has no unit, so it is 16 bytes, below 1 MiB: likely a slip (write 16B if you mean bytes, or give a unit: 16G, 512M)'
expect_exit "--capacity 16B is 16 bytes" 1 $data/models/peak-train.json --capacity 16B
check "... 16 bytes" 'r["summary"]["capacity_bytes"] == 16'
expect_exit "--capacity 1048576 (1 MiB) needs no unit" 0 $data/models/peak-train.json --capacity 1048576
expect_exit "--budget 1 is ambiguous" 2 $data/models/peak-train.json --budget 1
errmsg "--budget 1: message" '--budget: "1" is ambiguous: write 100% (or 1.0) for all of the capacity, or 1B for one byte'
expect_exit "--budget 90%" 0 $data/models/peak-train.json --capacity 1M --budget 90%
check "90% of 1M" 'r["summary"]["budget_bytes"] == 943718'
expect_exit "--budget 0.9 the same" 0 $data/models/peak-train.json --capacity 1M --budget 0.9
check "0.9 of 1M" 'r["summary"]["budget_bytes"] == 943718'
expect_exit "--budget 4096 (bytes?)" 2 $data/models/peak-train.json --budget 4096
errmsg "--budget 4096: a likely slip" '--budget: "4096" has no unit, so it is 4096 bytes, below 1 MiB'
if "$bin" --version >"$tmp/out" 2>&1 && grep -Eq '^tpuplan [0-9]+\.[0-9]+\.[0-9]+ \(result schema_version 1\)$' "$tmp/out"; then
    ok "tpuplan --version"
else nok "tpuplan --version" "$(cat "$tmp/out")"; fi

# --- every example model and every result validates against the published JSON Schemas
if python3 -c 'import jsonschema' 2>/dev/null; then
    for f in $data/models/*.json $data/recipes/*.json $data/tiny-llama.safetensors-header $data/minimalloc-small.csv; do
        "$bin" plan "$f" >"$tmp/out" 2>/dev/null
        if python3 - "$f" "$tmp/out" <<'PY' 2>"$tmp/pyerr"; then ok "schemas: $f"; else nok "schemas: $f" "$(tail -1 "$tmp/pyerr")"; fi
import json, sys, jsonschema
V = jsonschema.Draft202012Validator
if "/recipes/" in sys.argv[1]:
    V(json.load(open("static/schema/recipe.schema.json"))).validate(json.load(open(sys.argv[1])))
elif sys.argv[1].endswith(".json"):
    V(json.load(open("static/schema/model.schema.json"))).validate(json.load(open(sys.argv[1])))
V(json.load(open("static/schema/result.schema.json"))).validate(json.load(open(sys.argv[2])))
PY
    done
    # a result whose runtime replay failed allocations (both failure records filled)
    "$bin" plan "$tmp/frag.csv" --capacity 8192B --mem-fraction 0.5 >"$tmp/out" 2>/dev/null
    if python3 - "$tmp/out" <<'PY' 2>"$tmp/pyerr"; then ok "schemas: runtime with failures"; else nok "schemas: runtime with failures" "$(tail -1 "$tmp/pyerr")"; fi
import json, sys, jsonschema
r = json.load(open(sys.argv[1]))
assert r["packing"]["runtime"]["first_failure"] is not None
jsonschema.Draft202012Validator(json.load(open("static/schema/result.schema.json"))).validate(r)
PY
else
    ok "schemas # SKIP python3 jsonschema is not installed"
fi

# --- a tensor in host memory (memory_space "host") is planned apart from HBM: p and the
# activation (131072 + 32768 = 160.0K) in HBM, opt's 128.0K in host memory. At 150K the
# advice offloads the activation: 64.0K out and back a step, 0.004 ms at v5e's cited 16 GB/s.
cat >"$tmp/host.json" <<'JSON'
{"chip":"v5e","tensors":[
 {"name":"p","shape":[256,128],"dtype":"f32","kind":"param","live":[0,6]},
 {"name":"opt","shape":[256,128],"dtype":"f32","kind":"optimizer","live":[0,6],"memory_space":"host"},
 {"name":"layers.0.h","shape":[64,128],"dtype":"f32","kind":"activation","live":[0,6]}]}
JSON
"$bin" plan "$tmp/host.json" --capacity 150K --format text >"$tmp/out" 2>&1
if grep -q '^host       1 buffers, 128.0K, peak 128.0K: apart from HBM, never added to it$' "$tmp/out" &&
    grep -q '^peak .*160.0K' "$tmp/out" &&
    grep -q 'cost: copy 64.0K to and from host memory a step (0.004 ms at 16 GB/s: Scaling Book' "$tmp/out"; then
    ok "memory_space host: planned apart, and the advice's offload in words"
else nok "memory_space host: planned apart, and the advice's offload in words" "$(head -30 "$tmp/out")"; fi
if python3 -c 'import jsonschema' 2>/dev/null; then
    "$bin" plan "$tmp/host.json" --capacity 150K >"$tmp/out" 2>/dev/null
    if python3 - "$tmp/host.json" "$tmp/out" <<'PY' 2>"$tmp/pyerr"; then ok "schemas: host memory and advice"; else nok "schemas: host memory and advice" "$(tail -1 "$tmp/pyerr")"; fi
import json, sys, jsonschema
V = jsonschema.Draft202012Validator
V(json.load(open("static/schema/model.schema.json"))).validate(json.load(open(sys.argv[1])))
r = json.load(open(sys.argv[2]))
assert r["memory_spaces"] == [{"space": "host", "memory_space": 5, "buffers": 1, "bytes": 131072, "peak_bytes": 131072}], r["memory_spaces"]
assert any(i["kind"] == "offload" for i in r["advice"]["items"])
V(json.load(open("static/schema/result.schema.json"))).validate(r)
PY
fi

echo "1..$n"
[ "$fails" -eq 0 ]
