#!/usr/bin/env bash
# run.sh KIND - benchmarks behind `make bench`, `make bench-pack`, `make bench-server`.
# Prints the machine first, so every table says where it was measured.
set -euo pipefail
cd "$(dirname "$0")/../.."
kind=${1:-layout}
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "machine: $(nproc) cores, ${cpu:-unknown cpu}, $(free -g | awk '/^Mem:/{print $2}') GiB, $(uname -r), load average $(cut -d" " -f1-3 /proc/loadavg)"
case "$kind" in
layout)
    for b in build/release/bench/bench_layout build/release/bench/bench_plan build/release/bench/bench_runtime build/release/bench/bench_kernels build/release/bench/bench_xla build/release/bench/bench_diff build/release/bench/bench_hlo build/release/bench/bench_fit build/release/bench/bench_program; do
        [ -x "$b" ] && "$b"
    done
    tests/bench/bench_million.sh
    tests/bench/bench_corpus.sh
    build/release/bench/bench_recipe
    ;;
pack) build/release/bench/bench_pack "${@:2}" ;;
server) tests/bench/bench_server.sh ;;
*)
    echo "run.sh: unknown benchmark $kind" >&2
    exit 2
    ;;
esac
