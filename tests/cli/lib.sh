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
