#!/usr/bin/env bash
# run.sh [SECONDS] [RUNS] - run every libFuzzer target from its seed corpus
# (tests/fuzz/corpus/<target>/, copied to a scratch folder so runs never write into the
# repo) with its dictionary (tests/fuzz/<target>.dict) when there is one, and print one
# TAP line per target.
#
#   SECONDS  time limit per target; 0: none (default 15)
#   RUNS     executions per target; 0: none (default 0). `make fuzz` passes FUZZ_RUNS.
#
# Each target stops at whichever limit comes first. Crashes are kept in $B/crashes/.
# A short report (executions, seconds, coverage, features, corpus size, crashes) goes to
# $B/report.txt and stdout. $B is TPUPLAN_FUZZ_BUILD (default build/fuzz), the folder
# holding fuzz/fuzz_* (a copy elsewhere lets a long run go on while `make` rebuilds).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
secs=${1:-15}
runs=${2:-0}
B=${TPUPLAN_FUZZ_BUILD:-build/fuzz}
if [ "$secs" = 0 ] && [ "$runs" = 0 ]; then
    echo "run.sh: SECONDS and RUNS are both 0: the run would never end" >&2
    exit 2
fi
# findings TARGET: how many crash, leak, timeout and out-of-memory inputs libFuzzer has kept
# for TARGET. Its slow-unit-* files are not among them: a unit over -report_slow_units (10 s)
# on a loaded machine, or a process stopped for a while, is not a defect (each one kept so far
# ran in milliseconds alone), so the TAP line only counts them (kept TARGET slow-unit).
findings() {
    find "$B/crashes" \( -name "$1-crash-*" -o -name "$1-leak-*" -o -name "$1-timeout-*" \
        -o -name "$1-oom-*" \) | wc -l
}
kept() { find "$B/crashes" -name "$1-$2-*" | wc -l; }
# The targets the Makefile builds (FUZZ_SRC: one per tests/fuzz/fuzz_*.c), not whatever
# lies in $B/fuzz: a binary left from a checkout whose source is gone is not run, and one
# that was not built fails (exit 127).
bins=()
for src in tests/fuzz/fuzz_*.c; do
    bins+=("$B/fuzz/$(basename "$src" .c)")
done
report=$B/report.txt
mkdir -p "$B/crashes"
{
    echo "# libFuzzer report, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "# limits per target: $([ "$runs" = 0 ] && echo "no run limit" || echo "$runs runs"), $([ "$secs" = 0 ] && echo "no time limit" || echo "${secs} s")"
    printf '%-18s %12s %8s %8s %8s %8s %8s\n' target execs seconds cov ft corpus crashes
} >"$report"
echo "1..${#bins[@]}"
i=0
status=0
for b in "${bins[@]}"; do
    i=$((i + 1))
    name=$(basename "$b")
    work=$B/corpus-run/$name
    log=$B/$name.log
    mkdir -p "$work"
    [ -d "tests/fuzz/corpus/$name" ] && cp -n tests/fuzz/corpus/"$name"/* "$work"/ 2>/dev/null
    args=(-max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$B/crashes/$name-")
    [ "$secs" != 0 ] && args+=(-max_total_time="$secs")
    [ "$runs" != 0 ] && args+=(-runs="$runs")
    [ -f "tests/fuzz/$name.dict" ] && args+=(-dict="tests/fuzz/$name.dict")
    before=$(findings "$name")
    slow_before=$(kept "$name" slow-unit)
    "$b" "${args[@]}" "$work" >"$log" 2>&1
    rc=$?
    crashes=$(($(findings "$name") - before))
    slow=$(($(kept "$name" slow-unit) - slow_before))
    execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
    took=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' | tail -1)
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' <<<"$last" | grep -o '[0-9]*')
    ft=$(grep -o 'ft: [0-9]*' <<<"$last" | grep -o '[0-9]*')
    corp=$(grep -o 'corp: [0-9]*' <<<"$last" | grep -o '[0-9]*')
    printf '%-18s %12s %8s %8s %8s %8s %8s\n' "$name" "${execs:-?}" "${took:-?}" "${cov:-?}" \
        "${ft:-?}" "${corp:-?}" "$crashes" >>"$report"
    if [ "$rc" = 0 ] && [ "$crashes" = 0 ]; then
        echo "ok $i - $name (${execs:-?} runs in ${took:-?} s, cov ${cov:-?}, ft ${ft:-?}$(
            [ "$slow" = 0 ] || echo ", $slow slow units kept"))"
    else
        echo "not ok $i - $name (exit $rc, $crashes crash files; see $log)"
        tail -40 "$log" | sed 's/^/# /'
        status=1
    fi
done
sed 's/^/# /' "$report"
exit $status
