# lib.sh - shared by the tests/cli/*.sh scripts (sourced, not run): the binary under test,
# a scratch folder, TAP counters and a runner that keeps the output for the checks.
# The binary is TPUPLAN_BIN when set (e.g. the ASan build), else bin/tpuplan.
bin=${TPUPLAN_BIN:-bin/tpuplan}
n=0
fails=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

ok() { # ok CONDITION-EXIT-STATUS NAME
    n=$((n + 1))
    if [ "$1" -eq 0 ]; then
        echo "ok $n - $2"
    else
        echo "not ok $n - $2"
        fails=$((fails + 1))
    fi
}

# run ARGS... : stdout -> $tmp/out, stderr -> $tmp/err, status -> $rc
run() {
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err"
    rc=$?
}

# have_jsonschema : whether python3 has jsonschema (the schema checks are skipped without it)
have_jsonschema() {
    python3 -c 'import jsonschema' 2>/dev/null
}

# valid SCHEMA FILE : FILE validates against static/schema/SCHEMA (Draft 2020-12); the
# validator's complaint goes to $tmp/pyerr
valid() {
    python3 - "$1" "$2" <<'PY' 2>"$tmp/pyerr"
import json, sys, jsonschema
jsonschema.Draft202012Validator(json.load(open("static/schema/" + sys.argv[1]))).validate(json.load(open(sys.argv[2])))
PY
}

# refused NAME PATTERN ARGS... : tpuplan ARGS exits 2 with PATTERN (grep's) on stderr
refused() {
    local name=$1 pattern=$2
    shift 2
    run "$@"
    [ "$rc" -eq 2 ] && grep -q -- "$pattern" "$tmp/err"
    ok $? "$name"
}

# check NAME PYTHON-EXPR : a test that EXPR holds, with d = the JSON in $tmp/out; the
# failed assertion is printed as a TAP comment
check() {
    python3 - "$tmp/out" "$2" <<'PY' 2>"$tmp/pyerr"
import json, sys
d = json.load(open(sys.argv[1]))
assert eval(sys.argv[2]), sys.argv[2]
PY
    local s=$?
    ok $s "$1"
    [ $s -eq 0 ] || sed 's/^/# /' "$tmp/pyerr" | tail -3
}
