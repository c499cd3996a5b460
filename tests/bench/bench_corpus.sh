#!/usr/bin/env bash
# bench_corpus.sh [DIR] - how much of a corpus of real programs tpuplan plans: every file of
# each folder of DIR planned by bin/tpuplan with corpus-plan (the tool beside the corpus,
# DIR/../../tools/corpus-plan), one file at a time; a table of files, planned, refused and
# crashed per folder, then each folder's largest refusal groups. DIR defaults to
# $TPUPLAN_CORPUS, else ../shared/data/xla-corpus (the development corpus of real StableHLO:
# its SOURCE.md says where each file comes from). Without the corpus or the tool it says so
# and exits 0: the corpus is not part of the repository.
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-${TPUPLAN_CORPUS:-../shared/data/xla-corpus}}
tool=$dir/../../tools/corpus-plan
if [ ! -d "$dir" ] || [ ! -x "$tool" ]; then
    echo "bench_corpus: skipped (no corpus at $dir, or no $tool)"
    exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "bench_corpus: $dir, load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf '  %-22s %7s %8s %8s %8s %8s\n' folder files planned refused crashed seconds
for sub in "$dir"/*/; do
    name=$(basename "$sub")
    start=$(date +%s%N)
    "$tool" --jobs 1 --show 8 "$sub" >"$tmp/$name" || true
    took=$((($(date +%s%N) - start) / 1000000))
    read -r files planned refused crashed < <(sed -nE \
        's/^([0-9]+) files: ([0-9]+) planned, ([0-9]+) refused, ([0-9]+) crashed.*/\1 \2 \3 \4/p' "$tmp/$name")
    printf '  %-22s %7s %8s %8s %8s %5d.%d\n' "$name" "${files:-?}" "${planned:-?}" \
        "${refused:-?}" "${crashed:-?}" $((took / 1000)) $((took % 1000 / 100))
done
for sub in "$dir"/*/; do
    name=$(basename "$sub")
    echo "  refused in $name, by message (corpus-plan's groups):"
    grep -E '^ +[0-9]+  ' "$tmp/$name" | sed 's/^/  /' || echo "    none"
done
# the files with dynamic dims (?), every dynamic argument dim and dimension argument bound to 8
echo "  the dynamic files bound (tests/bench/dynbind.py: --bind, every ? and dimension argument 8):"
python3 tests/bench/dynbind.py --jobs 1 --show 8 "$dir"/*/ | sed 's/^/  /' || true
