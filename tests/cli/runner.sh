#!/usr/bin/env bash
# runner.sh - the test runner itself (tests/run.sh, tests/fuzz/run.sh), on a scratch copy of
# the repository's layout with stand-in binaries: it runs the binaries the Makefile builds
# (one per tests/unit/test_*.c, tests/fuzz/fuzz_*.c), not a stale one left in build/ by a
# checkout whose source is gone, and a source whose binary was not built fails.
cd "$(dirname "$0")/../.." || exit 1
. tests/cli/lib.sh

r=$tmp/repo
mkdir -p "$r/tests/unit" "$r/tests/fuzz" "$r/build/release/tests" "$r/build/fuzz/fuzz"
cp tests/run.sh "$r/tests/run.sh"
cp tests/fuzz/run.sh "$r/tests/fuzz/run.sh"
: >"$r/tests/unit/test_kept.c"
: >"$r/tests/fuzz/fuzz_kept.c"
# stand_in PATH BODY : an executable shell script
stand_in() {
    printf '#!/bin/sh\n%s\n' "$2" >"$1"
    chmod +x "$1"
}
stand_in "$r/build/release/tests/test_kept" 'echo "ok 1 - kept"'
stand_in "$r/build/release/tests/test_gone" 'echo "not ok 1 - gone"; exit 1'
stand_in "$r/build/fuzz/fuzz/fuzz_kept" 'echo "Done 3 runs in 1 second(s)"'
stand_in "$r/build/fuzz/fuzz/fuzz_gone" 'exit 1'

# runner SUITES : runs the scratch copy's run.sh; its output -> $tmp/out, status -> $rc
runner() {
    TPUPLAN_SUITES="$1" TPUPLAN_FUZZ_SECONDS=1 "$r/tests/run.sh" >"$tmp/out" 2>&1
    rc=$?
}

runner unit
[ "$rc" -eq 0 ] && tail -1 "$tmp/out" | grep -qx '1 passed, 0 failed'
ok $? "unit: the built test runs, the stale build/release/tests/test_gone does not"
! grep -q test_gone "$tmp/out"
ok $? "unit: the stale binary is not named in the output"

runner fuzz
[ "$rc" -eq 0 ] && tail -1 "$tmp/out" | grep -qx '1 passed, 0 failed'
ok $? "fuzz: the built target runs, the stale build/fuzz/fuzz/fuzz_gone does not"

: >"$r/tests/unit/test_unbuilt.c"
runner unit
[ "$rc" -ne 0 ] && tail -1 "$tmp/out" | grep -qx '1 passed, 1 failed' &&
    grep -q 'unit/test_unbuilt: exited with status 127' "$tmp/out"
ok $? "unit: a test whose binary was not built fails"

[ "$fails" -eq 0 ]
