#!/usr/bin/env bash
# bench_million.sh [N] - `tpuplan plan` on an N-tensor model file (default 1,000,000,
# about 87 MB) against Python reading the same file with json.load, one after the other on
# the same machine: wall time and peak RSS of each, and the ratio. The target (issue 13):
# the whole plan (parse, layouts, xla-default packing, metrics, result written) in no more
# wall time than json.load, under 1 GiB peak RSS.
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
build/release/bench/bench_plan --write "$tmp/model.json" "$n"
measure() { # label command...: prints "label wall_s rss_mib user_s"
    local label=$1
    shift
    /usr/bin/time -f "%e %M %U" -o "$tmp/time" "$@" >/dev/null
    read -r wall rss user <"$tmp/time"
    echo "$label $wall $((rss / 1024)) $user"
}
echo "bench_million: $n tensors, $(($(stat -c %s "$tmp/model.json") / 1000000)) MB, load average $(cut -d' ' -f1-3 /proc/loadavg)"
{
    measure tpuplan bin/tpuplan plan "$tmp/model.json" --strategies xla-default || true
    measure python python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$tmp/model.json"
} >"$tmp/rows"
# The machine is shared: user CPU beside the wall time says how much of it was waiting.
awk '{w[NR]=$2; r[NR]=$3; u[NR]=$4; printf "  %-34s %8.2f s wall %8.2f s user %8d MiB peak RSS\n", ($1=="python" ? "python3 json.load" : "tpuplan plan --strategies xla-default"), $2, $4, $3}
     END {printf "  ratio (tpuplan / json.load)        %8.2f x wall %8.2f x user %6.2f x RSS\n", w[1]/w[2], u[1]/u[2], r[1]/r[2]}' "$tmp/rows"
