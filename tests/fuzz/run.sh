#!/usr/bin/env bash
# run.sh [SECONDS] - run every libFuzzer target for SECONDS (default 15) from its seed corpus
# (tests/fuzz/corpus/<target>/, copied to a scratch folder so runs never write into the
# repo) and print one TAP line per target. Crashes are kept in build/fuzz/crashes/.
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-15}
bins=()
for b in build/fuzz/fuzz/fuzz_*; do
    case "$b" in *.d | *.o) continue ;; esac
    [ -x "$b" ] && bins+=("$b")
done
echo "1..${#bins[@]}"
i=0
status=0
for b in "${bins[@]}"; do
    i=$((i + 1))
    name=$(basename "$b")
    work=build/fuzz/corpus-run/$name
    mkdir -p "$work" build/fuzz/crashes
    [ -d "tests/fuzz/corpus/$name" ] && cp -n tests/fuzz/corpus/"$name"/* "$work"/ 2>/dev/null
    if "$b" -max_total_time="$secs" -max_len=4096 -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix=build/fuzz/crashes/"$name"- "$work" >build/fuzz/"$name".log 2>&1; then
        echo "ok $i - $name ($(grep -o 'stat::number_of_executed_units: *[0-9]*' build/fuzz/"$name".log | grep -o '[0-9]*$' || echo '?') runs in ${secs}s)"
    else
        echo "not ok $i - $name (see build/fuzz/$name.log)"
        tail -40 build/fuzz/"$name".log | sed 's/^/# /'
        status=1
    fi
done
exit $status
