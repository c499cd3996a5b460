#!/usr/bin/env bash
# pack.sh - bin/tpuplan pack end to end (TAP): the MiniMalloc example, the solution CSV,
# exit statuses, every bad-input message, and a challenging instance when the data is there.
set -uo pipefail
cd "$(dirname "$0")/../.."
# shellcheck source=tests/cli/lib.sh
. tests/cli/lib.sh
data=${TPUPLAN_MINIMALLOC_DIR:-../shared/data/minimalloc/challenging}

# benchmarks/examples/input.12.csv (google/minimalloc), capacity 12 = LB
cat >"$tmp/ex.csv" <<'CSV'
id,lower,upper,size
b1,0,3,4
b2,3,9,4
b3,0,9,4
b4,9,21,4
b5,0,21,4
CSV

run pack "$tmp/ex.csv" --capacity 12 --algo exact --out "$tmp/sol.csv"
ok $rc "exact packs the example at capacity 12 (exit 0)"
grep -Eq '^exact +12 +12 +1\.0000 +12 +yes +yes' "$tmp/out"
ok $? "summary row: exact, peak 12, LB 12, solved, proven"
head -1 "$tmp/sol.csv" | grep -qx 'id,lower,upper,size,offset'
ok $? "solution CSV header has the offset column"
[ "$(tail -n +2 "$tmp/sol.csv" | wc -l)" -eq 5 ]
ok $? "solution CSV has the 5 buffers"
# The solution, read back: every pair that overlaps in time is disjoint in memory.
python3 - "$tmp/sol.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
b = [(int(r["lower"]), int(r["upper"]), int(r["size"]), int(r["offset"])) for r in rows]
bad = [(i, j) for i in range(len(b)) for j in range(i) if b[i][0] < b[j][1] and b[j][0] < b[i][1]
       and b[i][3] < b[j][3] + b[j][2] and b[j][3] < b[i][3] + b[i][2]]
sys.exit(1 if bad or max(o + s for _, _, s, o in b) > 12 else 0)
PY
ok $? "solution CSV is a valid packing within 12"

run pack "$tmp/ex.csv" --algo all
ok $rc "--algo all without capacity exits 0"
for a in xla-spatial xla-temporal xla-area xla-default first-fit tflite tpuplan-search exact; do
    grep -Eq "^$a " "$tmp/out"
    ok $? "--algo all lists $a"
done

run pack "$tmp/ex.csv" --out - --algo tflite
ok $rc "--out - exits 0"
head -1 "$tmp/out" | grep -qx 'id,lower,upper,size,offset'
ok $? "--out - writes the CSV to stdout"

# A model's tensor names as ids (OWASP "CSV Injection"): a name a spreadsheet would run as a
# formula is written after an apostrophe, one with a comma or quote in quotes, so every row
# has five cells and no cell starts with = + - @; the numbers stay numbers, and the CSV
# packs again to the same ids.
cat >"$tmp/names.json" <<'JSON'
{"name":"n","chip":"v5e","tensors":[
 {"name":"=HYPERLINK(\"http://evil\",\"x\")","shape":[8,128],"dtype":"f32","kind":"activation"},
 {"name":"+cmd|' /C calc'!A0","shape":[8,128],"dtype":"f32","kind":"activation"},
 {"name":"-1","shape":[8,128],"dtype":"f32","kind":"activation"},
 {"name":"@SUM(1)","shape":[8,128],"dtype":"f32","kind":"activation"},
 {"name":"a,=b","shape":[8,128],"dtype":"f32","kind":"activation"},
 {"name":"plain","shape":[8,128],"dtype":"f32","kind":"activation"}]}
JSON
run pack "$tmp/names.json" --algo first-fit --out "$tmp/names.csv"
ok $rc "a model with formula-like names packs to CSV (exit 0)"
python3 - "$tmp/names.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1], newline="")))
assert rows[0] == ["id", "lower", "upper", "size", "offset"], rows[0]
ids = [r[0] for r in rows[1:]]
assert ids == ["'=HYPERLINK(\"http://evil\",\"x\")", "'+cmd|' /C calc'!A0", "'-1", "'@SUM(1)",
               "a,=b", "plain"], ids
for r in rows[1:]:
    assert len(r) == 5 and not any(c[:1] in "=+-@\t\r" for c in r), r
    assert all(c.isdigit() for c in r[1:]), r
PY
ok $? "every cell is text to a spreadsheet: the apostrophe before a formula, quotes around a comma"
run pack "$tmp/names.csv" --algo first-fit --out -
ok $rc "that CSV packs again (exit 0)"
want="\"'=HYPERLINK(\"\"http://evil\"\",\"\"x\"\")\",0,1,4096,0"
grep -qxF "$want" "$tmp/out" && grep -qx "'-1,0,1,4096,8192" "$tmp/out"
ok $? "... with the same ids"

# Does not fit: LB 12 > capacity 11 -> exit 1.
run pack "$tmp/ex.csv" --capacity 11 --algo exact --time-limit 1
ok $((rc != 1)) "capacity below the lower bound exits 1"
grep -q 'no packing within the capacity 11' "$tmp/err"
ok $? "says no packing within the capacity"

# Legacy aliases: buffer_id/start/end (inclusive end).
printf 'buffer_id,start,end,size\nx,0,1,4\ny,2,3,4\n' >"$tmp/alias.csv"
run pack "$tmp/alias.csv" --capacity 4 --algo first-fit
ok $rc "legacy aliases accepted"

# Bad input: exit 2 and a message naming the place.
bad() { # bad NAME EXPECTED-STDERR-SUBSTRING CONTENT [ARGS...]
    local name=$1 want=$2 content=$3
    shift 3
    printf '%b' "$content" >"$tmp/bad.csv"
    run pack "$tmp/bad.csv" "$@"
    [ "$rc" -eq 2 ] && grep -qF -- "$want" "$tmp/err"
    ok $? "$name (exit 2: $want)"
}
bad "non-numeric size" "line 3, column size: not a number" 'id,lower,upper,size\na,0,1,4\nb,0,1,x\n'
bad "duplicate id" 'duplicate id "a" (first on line 2)' 'id,lower,upper,size\na,0,1,4\na,1,2,4\n'
bad "zero size" "line 2, column size: must be positive" 'id,lower,upper,size\na,0,1,0\n'
bad "lower >= upper" "line 2: lower 3 is not below upper 3" 'id,lower,upper,size\na,3,3,1\n'
bad "buffer over capacity" "buffer big alone needs 9 bytes, capacity is 8 (line 3)" \
    'id,lower,upper,size\na,0,1,4\nbig,0,1,9\n' --capacity 8
bad "unknown column" 'unknown column "colour"' 'id,lower,upper,size,colour\n'
# the plan options' table (planner/plan_options.h): plan's grammar, ranges and messages
bad "time limit out of range" 'tpuplan pack: --time-limit: must be above 0 and at most 3600 s, got "0"' \
    'id,lower,upper,size\na,0,1,1\n' --time-limit 0
bad "time limit above an hour" 'tpuplan pack: --time-limit: must be above 0 and at most 3600 s, got "2h"' \
    'id,lower,upper,size\na,0,1,1\n' --time-limit 2h
bad "time limit not a number" 'tpuplan pack: --time-limit: "abc" is not a duration' \
    'id,lower,upper,size\na,0,1,1\n' --time-limit abc
bad "bad capacity" 'tpuplan pack: --capacity: "-3" is not a byte count' 'id,lower,upper,size\na,0,1,1\n' \
    --capacity -3
bad "capacity 0" 'tpuplan pack: --capacity: must be above 0 bytes, got "0"' 'id,lower,upper,size\na,0,1,1\n' \
    --capacity 0
bad "threads above 64" 'tpuplan pack: --threads: must be a whole number from 1 to 64, got "65"' \
    'id,lower,upper,size\na,0,1,1\n' --threads 65
bad "an option of plan only" 'tpuplan pack: unknown option --budget' 'id,lower,upper,size\na,0,1,1\n' \
    --budget 1G
bad "unknown algorithm" 'unknown packing strategy "nope"' 'id,lower,upper,size\na,0,1,1\n' --algo nope
bad "not a csv" "MiniMalloc CSV" 'hello world\n'
bad "unknown goal" 'tpuplan pack: --goal: must be min or fit, got "most"' 'id,lower,upper,size\na,0,1,1\n' \
    --goal most

# --capacity in the one byte grammar (planner/bytes.h), as plan's: 1M is 2^20
run pack "$tmp/ex.csv" --capacity 1M --algo first-fit
[ $rc -eq 0 ] && grep -Eq '^first-fit +[0-9]+ +[0-9]+ +[0-9.]+ +1048576 ' "$tmp/out"
ok $? "--capacity 1M is 1048576 bytes"

# --goal fit answers "does it fit?" at the first packing within the capacity: with room to
# spare (twice the optimum) that is the greedy seeds' packing, 1235968, above the optimum;
# min goes on to the lower bound 1048576 and proves it. perfect-48.csv: tests/bench/perfect.h
# seed 1, 48 buffers, horizon 100 (a rectangle of 2^20 bytes cut into pieces: LB = optimum).
perfect=tests/data/perfect-48.csv
run pack "$perfect" --capacity 2097152 --algo exact --goal fit
ok $rc "--goal fit within twice the optimum exits 0"
grep -Eq '^exact +1235968 +1048576 +1\.1787 +2097152 +yes +no ' "$tmp/out"
ok $? "--goal fit stops at the greedy packing, above the optimum, unproven"
run pack "$perfect" --capacity 2097152 --algo exact --goal min
grep -Eq '^exact +1048576 +1048576 +1\.0000 +2097152 +yes +yes ' "$tmp/out"
ok $? "--goal min minimises to the lower bound and proves it"
run pack "$tmp/missing.csv"
ok $((rc != 2)) "missing file exits 2"
run pack
ok $((rc != 2)) "no FILE exits 2"

# A challenging instance (skipped without the data): exact fits C at 1048576 and proves
# its lower bound 1039360 optimal (server/planner/SOURCES.md#minimalloc-challenging-suite).
if [ -r "$data/C.1048576.csv" ]; then
    run pack "$data/C.1048576.csv" --capacity 1048576 --algo exact --time-limit 30
    ok $rc "challenging C: exact fits the capacity"
    grep -Eq '^exact +1039360 +1039360 .* yes +yes' "$tmp/out"
    ok $? "challenging C: peak 1039360 = LB, proven"
    run pack "$data/C.1048576.csv" --capacity 1048576 --algo xla-spatial
    ok $((rc != 1)) "challenging C: xla-spatial does not fit (exit 1)"
    grep -Eq '^xla-spatial +1417216 ' "$tmp/out"
    ok $? "challenging C: xla-spatial peak 1417216 (server/planner/SOURCES.md#greedy-baselines)"
else
    echo "# skipped: $data not found"
fi

echo "1..$n"
exit $((fails > 0))
