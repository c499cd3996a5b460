#!/usr/bin/env bash
# diff.sh - `tpuplan diff A B` end to end (TAP): exact deltas on a hand-made pair (f32 -> bf16
# activation, a tensor removed, one added), the same answer from model files, stored
# result files and service plan documents, the text report, the JSON Schema, and usage errors.
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
a=tests/data/diff/lm-f32.json
b=tests/data/diff/lm-bf16.json

# On v5e (alignment 512): w f32[16,128] = 8192 B in both; h f32[16,128] 8192 B -> bf16
# [16,128] 4096 B (T(8,128)(2,1): no padding); old f32[8,128] 4096 B removed; new f32[1,1]
# 4 B logical, padded to one T(2,128) tile = 1024 B, added. All live together:
# peak 20480 -> 13312 (-7168); logical 8192+8192+4096 = 20480 -> 8192+4096+4 = 12292 (-8188).
run diff $a $b --format json
ok $rc "diff of two model files (exit 0)"
check "summary deltas are exact" \
    'd["summary"]["peak_bytes_before"] == 20480 and d["summary"]["peak_bytes_after"] == 13312 and d["summary"]["peak_bytes_delta"] == -7168 and d["summary"]["padded_bytes_delta"] == -7168 and d["summary"]["logical_bytes_delta"] == -8188'
check "fragmentation and fit before and after" \
    'd["summary"]["fragmentation_delta"] == 0 and d["summary"]["fits_before"] and d["summary"]["fits_after"]'
check "added 1, removed 1, changed 1, unchanged 1" \
    '[d["summary"][k] for k in ("added", "removed", "changed", "unchanged")] == [1, 1, 1, 1]'
check "per-kind deltas: param 0, activation -4096, temp -3072" \
    '{k: v["padded_bytes_delta"] for k, v in d["by_kind"].items()} == {"param": 0, "activation": -4096, "temp": -3072}'
check "tensors sorted by |delta| then name: h, old (both 4096), new" \
    '[(t["name"], t["status"], t["padded_bytes_delta"]) for t in d["tensors"]] == [("h", "changed", -4096), ("old", "removed", -4096), ("new", "added", 1024)]'
check "layout before and after" \
    'd["tensors"][0]["layout_before"] == "f32[16,128]{1,0:T(8,128)}" and d["tensors"][0]["layout_after"] == "bf16[16,128]{1,0:T(8,128)(2,1)}" and d["tensors"][1]["layout_after"] is None and d["tensors"][2]["layout_before"] is None'
cp "$tmp/out" "$tmp/from-models.json"

# Stored results: a file `tpuplan plan` wrote, and the service's plan document around it.
"$bin" plan $a >"$tmp/a.result.json"
"$bin" plan $b >"$tmp/b.result.json"
python3 -c 'import json,sys; print(json.dumps({"id": "x", "status": "done", "summary": {}, "result": json.load(open(sys.argv[1]))}))' \
    "$tmp/b.result.json" >"$tmp/b.plan.json"
run diff "$tmp/a.result.json" "$tmp/b.plan.json" --format json
ok $rc "diff of a stored result and a service plan document (exit 0)"
cmp -s "$tmp/out" "$tmp/from-models.json"
ok $? "the same diff, byte for byte, as from the model files"
run diff "$tmp/a.result.json" $b --format json
cmp -s "$tmp/out" "$tmp/from-models.json"
ok $? "a stored result against a model file: the same diff"

run diff $a $b
ok $rc "text report (exit 0)"
grep -q '^peak  *20.0K -> 13.0K  *(-7.0K)$' "$tmp/out"
ok $? "text: the peak line"
grep -q '^  *-4.0K  changed  h  .*f32\[16,128\]{1,0:T(8,128)} -> bf16\[16,128\]{1,0:T(8,128)(2,1)}$' "$tmp/out"
ok $? "text: the largest change with both layouts"
grep -q 'tensors  *3 -> 3: 1 added, 1 removed, 1 changed, 1 unchanged' "$tmp/out"
ok $? "text: the tensor counts"

# Remat (lm-saved -> lm-remat: a and b recomputed at step 3 as a/remat and b/remat, each
# f32[64,128] = 32.0K): the peak is the headline (104.0K at step 2 -> 72.0K at step 3), the
# copies one group, and the sums of buffer sizes (+64.0K) labelled as sums, after the peak.
run diff tests/data/diff/lm-saved.json tests/data/diff/lm-remat.json
ok $rc "remat diff (exit 0)"
[ "$(sed -n 2p "$tmp/out")" = "peak               104.0K -> 72.0K      (-32.0K)" ] &&
    grep -q '^verdict  *fits -> fits$' "$tmp/out" &&
    grep -q '^buffer sizes, summed (not memory: buffers live at different steps)$' "$tmp/out" &&
    grep -q '^  padded  *104.0K -> 168.0K  *(+64.0K)$' "$tmp/out"
ok $? "text: the peak first, the summed buffer sizes labelled as sums"
grep -q '^  *+64.0K  added    2 remat copies (\*/remat), summed$' "$tmp/out" && ! grep -q 'a/remat\|b/remat' "$tmp/out"
ok $? "text: the added remat copies grouped, not listed one by one"
run diff tests/data/diff/lm-saved.json tests/data/diff/lm-remat.json --format json
check "groups: the remat copies, 2 of them, +65536 B summed; each tensor marked" \
    'd["groups"] == [{"name": "remat copies", "match": "*/remat", "status": "added", "tensors": 2, "padded_bytes_delta": 65536, "logical_bytes_delta": 65536}] and [t["group"] for t in d["tensors"]] == ["remat copies"] * 2 and d["summary"]["verdict_after"] == "fits"'

run diff $a $a --format json
check "a plan against itself: no tensor listed, every delta 0" \
    'd["tensors"] == [] and d["summary"]["unchanged"] == 3 and d["summary"]["peak_bytes_delta"] == 0'
run diff $a $b --chip v6e --format json
check "plan options apply to both model files" 'd["a"]["chip"] == "v6e" and d["b"]["chip"] == "v6e"'

if have_jsonschema; then
    valid diff.schema.json "$tmp/from-models.json"
    ok $? "the diff validates against static/schema/diff.schema.json"
else
    ok 0 "schema # SKIP python3 jsonschema is not installed"
fi

# --- usage and bad input: exit 2 with a message
refused "one input: usage (exit 2)" '^usage: tpuplan diff' diff $a
refused "three inputs (exit 2)" 'more than two inputs' diff $a $b $a
refused "unknown format (exit 2)" 'format must be text or json' diff $a $b --format svg
refused "missing file (exit 2)" 'nope.json' diff $a "$tmp/nope.json"
printf '{"tensors":[{"name":"w","shape":[8],"dtype":"f33"}]}' >"$tmp/bad.json"
refused "a bad model names the file, the tensor and the field (exit 2)" 'bad.json: tensors\[0\] "w": dtype: unknown dtype "f33"' diff $a "$tmp/bad.json"
printf '{"schema_version":1,"summary":{"peak_bytes":"x"}}' >"$tmp/badresult.json"
refused "a malformed stored result names the side and field (exit 2)" 'a.summary: peak_bytes' diff "$tmp/badresult.json" $b
# the plan options' table (planner/plan_options.h): plan's options, grammar and messages
refused "bad --capacity names it (exit 2)" 'tpuplan diff: --capacity: "lots" is not a byte count' diff $a $b --capacity lots
refused "--time-limit above an hour (exit 2)" 'tpuplan diff: --time-limit: must be above 0 and at most 3600 s, got "3601"' diff $a $b --time-limit 3601
refused "--name is plan's, not diff's (exit 2)" 'tpuplan diff: unknown option --name' diff $a $b --name x
run diff $a $b --format json --goal fit --time-limit 250ms --alignment 512 --threads 1
[ $rc -eq 0 ]
ok $? "diff takes --goal, a duration, --alignment and --threads (exit 0)"
check "the same deltas with them" 'd["summary"]["peak_bytes_delta"] == -7168'

echo "1..$n"
[ "$fails" -eq 0 ]
