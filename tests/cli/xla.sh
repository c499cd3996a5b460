#!/usr/bin/env bash
# xla.sh - `tpuplan plan` on XLA's own dumps (tests/data/xla, in the printer's exact form):
# a buffer assignment alone, attached to a model with --xla-assignment and --xla-report,
# the text report's xla-actual row, the errors (line:column), and the results against the
# published schema. Prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/cli/lib.sh
data=tests/data/xla

# check NAME PYTHON-EXPR : evaluates EXPR with r = the JSON in $tmp/out, x = r.packing.xla
check() {
    python3 - "$tmp/out" "$2" <<'PY' 2>"$tmp/pyerr"
import json, sys
r = json.load(open(sys.argv[1]))
x = r["packing"]["xla"]
t = {e["name"]: e for e in r["tensors"]}
assert eval(sys.argv[2]), sys.argv[2]
PY
    ok $? "$1"
    [ -s "$tmp/pyerr" ] && sed 's/^/# /' "$tmp/pyerr" | tail -2
}

# --- alone: detected from content, planned as it stands
run plan $data/small.buffer-assignment.txt --strategies xla-spatial
ok $rc "standalone assignment plans (exit 0)"
check "source format and 8 steps" 'r["model"]["source_format"] == "xla-buffer-assignment" and r["model"]["steps"] == 8'
check "xla-actual: 4240 B against the lower bound 3200 B" \
    'x["name"] == "xla-actual" and x["peak_bytes"] == 4240 and x["lower_bound_bytes"] == 3200 and x["fragmentation_bytes"] == 1040'
check "our packing reaches the lower bound" 'r["packing"]["peak"]["bytes"] == 3200'
check "XLA offsets: allocation base + value offset" \
    't["add.2"]["xla_offset"] == 3216 and t["tuple.5"]["xla_offset"] == 1088 and t["p1"]["xla_offset"] == 1024'
check "inclusive live ranges become [start, end+1)" 't["add.2"]["live"] == [3, 6] and t["p0"]["live"] == [0, 8]'
check "kinds from the allocation flags" 't["p0"]["kind"] == "input" and t["fusion.3"]["kind"] == "output" and t["broadcast.1"]["kind"] == "temp"'

# --- with a memory-usage report (both forms)
run plan $data/small.buffer-assignment.txt --strategies xla-spatial --xla-report $data/small.memory-usage-report.txt
check "text report total" 'x["report"] == {"form": "text", "total_bytes": 4240, "memory_spaces": []}'
run plan $data/small.buffer-assignment.txt --strategies xla-spatial --xla-report $data/small.memory-usage-report.proto.txt
check "proto report: two memory spaces" 'x["report"]["total_bytes"] == 4752 and x["report"]["memory_spaces"][1] == {"color": 1, "total_bytes": 512}'

# --- attached to a model description: matched by name
run plan $data/small.model.json --strategies xla-spatial --xla-assignment $data/small.buffer-assignment.txt
ok $rc "model with --xla-assignment (exit 0)"
check "3 of 7 values matched, scratch unmatched" \
    'x["source"] == "with-model" and x["matched_values"] == 3 and x["unmatched_tensor_names"] == ["scratch"]'
check "matched tensors carry xla_offset, the others do not" '"xla_offset" in t["p0"] and "xla_offset" not in t["scratch"]'
run plan $data/small.model.json --strategies xla-spatial --xla-assignment $data/small.buffer-assignment.txt --format text
grep -q "xla-actual .*4.1K.*(XLA's own assignment; 3 of 7 values matched)" "$tmp/out"
ok $? "text report: the xla-actual row"

# --- the HLO module of the same dump: values the importer writes in place are not unmatched
run plan $data/small.hlo --strategies xla-spatial --xla-assignment $data/small.buffer-assignment.txt
ok $rc "HLO module with --xla-assignment (exit 0)"
check "4 matched, add.2 and multiply.4 in place (in broadcast.1), tuple.5 unmatched" \
    'x["matched_values"] == 4 and x["in_place_values"] == 2 and x["unmatched_values"] == 1 and x["unmatched_value_names"] == ["tuple.5"] and t["broadcast.1"]["in_place"] == ["add.2", "multiply.4"]'
run plan $data/small.hlo --strategies xla-spatial --xla-assignment $data/small.buffer-assignment.txt --format text
grep -q "(XLA's own assignment; 4 of 7 values matched, 2 in place)" "$tmp/out"
ok $? "text report: the in-place values counted on the xla-actual row"

# --- errors: exit 2 and a line:column
printf 'allocation 0: size 8:\n value: <0 a @0> (size=16,offset=0): f32[4]\n' >"$tmp/bad.txt"
refused "value past its allocation: exit 2, line:column" "line 2:37: the value (offset 0, size 16) does not fit in allocation 0 of 8 bytes" plan "$tmp/bad.txt"
refused "bad attached assignment: exit 2, named" "xla_assignment: line 2:37" plan $data/small.model.json --xla-assignment "$tmp/bad.txt"
refused "a report alone: exit 2, says what to send" "holds XLA's totals only" plan $data/small.memory-usage-report.txt
refused "a report without an assignment: exit 2" "comes with its buffer assignment" plan $data/small.model.json --xla-report $data/small.memory-usage-report.txt

# --- XLA's out-of-memory report (tests/data/xla/oom: real pastes) and memory figures
oom=$data/oom
run plan $oom/flowpm-27.txt --strategies xla-spatial
[ "$rc" -eq 1 ]
ok $? "an out-of-memory report plans alone (exit 1: it does not fit the 16.00G it reports, as on its TPU)"
check "detected, one tensor per listed allocation" \
    'r["model"]["source_format"] == "xla-oom" and list(t) == ["copy.40488"] and t["copy.40488"]["op_name"] == "slicewise_79/cic_update/FloorMod"'
check "our padding is the report's Size and Unpadded size: 32.00G of 1.00G" \
    'r["packing"]["xla_report"]["allocations"][0]["ours"]["padded_bytes"] == 34359738368 and r["packing"]["xla_report"]["allocations"][0]["size_matches"] and r["packing"]["xla_report"]["allocations"][0]["unpadded_matches"] and r["packing"]["xla_report"]["mismatches"] == 0'
run plan $oom/colabfold-62.txt --strategies xla-spatial --format text
grep -q "^  17   broadcast.82209     64.00M     64.00M     61.25M     61.25M  yes   yes$" "$tmp/out"
ok $? "text report: XLA's size beside ours per allocation"
run plan $oom/pytorch-xla-1965-b.txt --input oom --strategies xla-spatial
ok $rc "--input oom: a log-prefixed paste without its header"
printf 'Ran out of memory in memory space hbm. Used 1.00G of 1.00G hbm.\n  1. Size: 1.00G\n     Unpadded size: 1.00Q\n' >"$tmp/oom.txt"
refused "malformed report: exit 2, line:column" "line 3:21: expected the unpadded size" plan "$tmp/oom.txt"
refused "a report without allocations: exit 2, says what to do" "line 1: the report lists no allocations" plan $oom/enzyme-jax-2422.txt
refused "CompiledMemoryStats alone: exit 2" "totals only: attach them to their program" plan $oom/jax-18954.memstats.txt
run plan tests/data/hlo/while.hlo --strategies xla-spatial --xla-report $oom/xla-10803.memstats.txt
check "CompiledMemoryStats beside a program: XLA's total" \
    'r["packing"]["xla_report"]["form"] == "compiled-memory-stats" and r["packing"]["xla_report"]["xla_total_bytes"] == 137376'

# --- the results validate against the published schema
if have_jsonschema; then
    for args in "$data/small.buffer-assignment.txt --xla-report $data/small.memory-usage-report.proto.txt" \
        "$data/small.model.json --xla-assignment $data/small.buffer-assignment.txt" \
        "$data/oom/colabfold-62.txt" "tests/data/hlo/while.hlo --xla-report $data/oom/maxtext-docs.memstats.txt"; do
        # shellcheck disable=SC2086
        "$bin" plan $args >"$tmp/out" 2>/dev/null
        valid result.schema.json "$tmp/out"
        ok $? "schema: $args"
    done
else
    ok 0 "schema # SKIP python3 jsonschema is not installed"
fi

echo "1..$n"
[ "$fails" -eq 0 ]
