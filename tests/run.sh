#!/usr/bin/env bash
# run.sh - run every test suite and print one closing line "N passed, N failed".
#
# Each suite prints TAP ("ok N - name" / "not ok N - name"); this script counts those
# lines. A suite that exits non-zero without reporting a failure (a crash, a sanitizer
# abort, a missing binary) counts as one failed test, so nothing is lost silently.
#
# Suites, in order (select with TPUPLAN_SUITES="unit cli ..."):
#   unit        build/release/tests/test_*   (cmocka; one per tests/unit/test_*.c)
#   unit-asan   build/asan/tests/test_*      (cmocka under ASan+UBSan; the same list)
#   cli         tests/cli/*.sh               (bin/tpuplan end to end)
#   integration tests/integration/*.sh       (real PostgreSQL + bin/tpuplan-server over HTTP)
#   browser     tests/browser/run.sh         (real Chromium against the real server)
#   fuzz        tests/fuzz/run.sh            (each libFuzzer target, TPUPLAN_FUZZ_SECONDS each)
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1

suites=${TPUPLAN_SUITES:-"unit unit-asan cli integration browser fuzz"}
logdir=build/test-logs
mkdir -p "$logdir"
passed=0
failed=0
failures=()

# run_one NAME CMD... : runs one TAP producer, echoes its output, updates the counters.
run_one() {
    local name=$1
    shift
    local log="$logdir/${name//\//_}.log"
    echo "### $name"
    "$@" >"$log" 2>&1
    local rc=$?
    cat "$log"
    local ok nok
    ok=$(grep -cE '^ok [0-9]+' "$log")
    nok=$(grep -cE '^not ok [0-9]+' "$log")
    passed=$((passed + ok))
    failed=$((failed + nok))
    if [ "$nok" -gt 0 ]; then
        failures+=("$name: $nok failed")
    elif [ "$rc" -ne 0 ]; then
        failed=$((failed + 1))
        failures+=("$name: exited with status $rc")
    elif [ "$ok" -eq 0 ]; then
        failed=$((failed + 1))
        failures+=("$name: ran no test")
    fi
}

export CMOCKA_MESSAGE_OUTPUT=TAP
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}

for suite in $suites; do
    case "$suite" in
    unit | unit-asan)
        dir=build/release/tests
        [ "$suite" = unit-asan ] && dir=build/asan/tests
        # The binaries the Makefile builds (UNIT_SRC: one per tests/unit/test_*.c), not
        # whatever lies in $dir: a binary left from a checkout whose source is gone is not
        # run. One that was not built fails (exit 127), as the header says.
        for src in tests/unit/test_*.c; do
            t=$dir/$(basename "$src" .c)
            run_one "$suite/$(basename "$t")" "$t"
        done
        ;;
    cli | integration)
        for t in tests/"$suite"/*.sh; do
            [ -x "$t" ] || continue
            run_one "$suite/$(basename "$t" .sh)" "$t"
        done
        ;;
    browser)
        [ -x tests/browser/run.sh ] && run_one browser tests/browser/run.sh
        ;;
    fuzz)
        run_one fuzz tests/fuzz/run.sh "${TPUPLAN_FUZZ_SECONDS:-15}"
        ;;
    *)
        echo "run.sh: unknown suite $suite" >&2
        failed=$((failed + 1))
        ;;
    esac
done

if [ ${#failures[@]} -gt 0 ]; then
    echo "### failures"
    printf '  %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
