#!/usr/bin/env bash
# fit.sh - `tpuplan fit RECIPE --maximize FIELD` end to end (TAP): the largest batch of a
# Llama 3.1 8B step on 16 v5e chips (32, 33 does not fit: worked in tests/unit/test_frontier.c
# and checked there by separate plans), the same answer as `tpuplan plan` at both values,
# a sweep with a refused value, the exit statuses and the usage errors.
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
r=tests/data/recipes/llama-3.1-8b-fsdp16.json

run fit $r --maximize batch --format json
ok $rc "fit finds a batch that fits (exit 0)"
python3 - "$tmp/out" <<'PY' 2>"$tmp/pyerr"
import json, sys
f = json.load(open(sys.argv[1]))["frontier"]
ln = f["lines"][0]
assert f["maximize"] == "train.batch" and f["sweep"] is None and f["plans"] == 12, f
assert ln["max_fit"] == 32 and ln["next"] == 33, ln
assert ln["next_over_bytes"] == ln["next_peak_bytes"] - f["capacity_bytes"], ln
assert [p["x"] for p in ln["probes"]] == [1, 2, 4, 8, 16, 32, 33, 34, 36, 40, 48, 64], ln
PY
ok $? "batch 32 fits, 33 does not, after 12 plans"
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["frontier"], open(sys.argv[2], "w"))' "$tmp/out" "$tmp/frontier.json"
valid frontier.schema.json "$tmp/frontier.json"
ok $? "the frontier validates against static/schema/frontier.schema.json"
peak32=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["frontier"]["lines"][0]["max_fit_peak_bytes"])' "$tmp/out")
run plan $r --train batch=32 --format json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1]))["summary"]; assert d["fits"] and d["peak_bytes"] == int(sys.argv[2]), d' "$tmp/out" "$peak32" 2>"$tmp/pyerr"
ok $? "tpuplan plan at batch 32: fits, with the same peak"
run plan $r --train batch=33 --format json
[ "$rc" -eq 1 ]
ok $? "tpuplan plan at batch 33: does not fit (exit 1)"

run fit $r --maximize batch --step 16 --sweep train.remat=nothing_saveable,nonsense
ok $rc "a sweep with one refused value still answers (exit 0)"
run fit $r --maximize batch --step 16 --sweep train.remat=nothing_saveable,nonsense --format json
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["frontier"], open(sys.argv[2], "w"))' "$tmp/out" "$tmp/frontier.json"
valid frontier.schema.json "$tmp/frontier.json"
ok $? "... and its JSON, the refused line with error alone, validates too"
run fit $r --maximize batch --step 16 --sweep train.remat=nothing_saveable,nonsense
grep -qE '^nothing_saveable +32 ' "$tmp/out" && grep -qE 'nonsense +train.remat: unknown policy' "$tmp/out"
ok $? "the text table has a line per value, the refused one with why"

# A chip sweep: each line fits against its own chip's capacity (v5e 15.75G, v6e 31.25G), and
# its next_over_bytes is over that one, not the last line's.
run fit $r --maximize batch --step 16 --sweep chip=v5e,v6e --format json
python3 - "$tmp/out" <<'PY' 2>"$tmp/pyerr"
import json, sys
f = json.load(open(sys.argv[1]))["frontier"]
v5e, v6e = f["lines"]
assert (v5e["capacity_bytes"], v6e["capacity_bytes"]) == (16911433728, 33554432000), f["lines"]
assert (v5e["max_fit"], v6e["max_fit"]) == (32, 96), f["lines"]
assert all(l["next_over_bytes"] == l["next_peak_bytes"] - l["capacity_bytes"] for l in (v5e, v6e))
PY
ok $? "a chip sweep: each line its own capacity, and over by against it"
python3 -c 'import json,sys; json.dump(json.load(open(sys.argv[1]))["frontier"], open(sys.argv[2], "w"))' "$tmp/out" "$tmp/frontier.json"
valid frontier.schema.json "$tmp/frontier.json"
ok $? "... and validates"
run fit $r --maximize batch --step 16 --sweep chip=v5e,v6e
grep -q '^capacity   each line its own' "$tmp/out" && grep -qE '^v5e +32 .* capacity 15\.75G$' "$tmp/out" &&
    grep -qE '^v6e +96 .* capacity 31\.25G$' "$tmp/out"
ok $? "... and the text gives each row its capacity"

run fit $r --maximize batch --min 4096 --step 4096
[ "$rc" -eq 1 ] && grep -qE '^\(recipe\) +none ' "$tmp/out"
ok $? "nothing fits from 4096: 'none', exit 1"

refused "no --maximize" "usage: tpuplan fit" fit $r
refused "an unknown field" 'maximize: "batchsize" is not a field' fit $r --maximize batchsize
refused "a bad --step" "--step: a positive whole number" fit $r --maximize batch --step 0
refused "a bad --sweep" "--sweep: PATH=V1,V2" fit $r --maximize batch --sweep train.remat
refused "an unknown option" "unknown option --chips" fit $r --maximize batch --chips v4

echo "1..$n"
[ "$fails" -eq 0 ]
