#!/usr/bin/env bash
# whatif.sh - what-ifs bounded before they run, over real HTTP and PostgreSQL. Prints TAP.
#
#   1. The request that once took the server down (issue 26): a plan of 1,000 activations and
#      {"remat": ["*", ... 16,000 times]} (64 KB), against the ASan+UBSan server
#      (build/asan/bin/tpuplan-server, built by make test): 422 limit-exceeded at once, the
#      server's peak RSS stays small, and it stops without a sanitizer report.
#   2. 256 patterns (the default --max-patterns) of "*" split each activation once: 2,000
#      tensors, not 256,000; 257 are refused. A pattern that selects nothing is 422 naming it.
#   3. The model a what-if makes is held to --max-tensors and --max-body (422 limit-exceeded
#      naming overrides.remat).
#   4. --max-time-limit: ?time_limit above it is 400 naming the parameter; a model's own
#      options.time_limit above it is 422 limit-exceeded.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/server.sh

server_init whatif
ASAN_SERVER=${TPUPLAN_ASAN_SERVER:-build/asan/bin/tpuplan-server}

# acts N: a model of N activations, each live over [i, i + 4), in $tmp/actsN.json.
acts() {
    awk -v n="$1" 'BEGIN {
        printf "{\"name\":\"acts%d\",\"chip\":\"v5e\",\"tensors\":[", n
        for (i = 0; i < n; i++)
            printf "%s{\"name\":\"layers.%d.h\",\"shape\":[8,128],\"dtype\":\"bf16\",\"kind\":\"activation\",\"live\":[%d,%d]}",
                (i ? "," : ""), i, i, i + 4
        print "]}"
    }' >"$tmp/acts$1.json"
}
# patterns N P: {"remat": [P, P, ... N times]}
patterns() {
    awk -v n="$1" -v p="$2" 'BEGIN { printf "{\"remat\":["; for (i = 0; i < n; i++) printf "%s\"%s\"", (i ? "," : ""), p; print "]}" }'
}
submit() {
    req POST "/api/v1/plans${2:-}" -H 'Content-Type: application/json' -H 'Prefer: wait=30' \
        --data-binary @"$1"
}
whatif() { req POST "/api/v1/plans/$1/whatif" -H 'Content-Type: application/json' "${@:2}"; }
# jnum KEY: the first number value of KEY in the last body.
jnum() { grep -o "\"$1\" *: *[0-9]*" "$tmp/b" | head -1 | sed 's/.*: *//'; }
# rss_kb KIND: the server's VmRSS or VmHWM (peak) in kB.
rss_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$pid/status"; }

server_db
acts 1000

# ---- 1. the 64 KB crash, under ASan ----
if [ -x "$ASAN_SERVER" ]; then
    SERVER=$ASAN_SERVER server_start asan --workers 1 --executors 2 --http-threads 2
    submit "$tmp/acts1000.json"
    parent=$(jstr id)
    check "a plan of 1,000 activations (the ASan server plans it: 201 done)" \
        eval 'is 201 && [ "$(jstr status)" = done ]'
    patterns 16000 '*' >"$tmp/p16000.json"
    hwm0=$(rss_kb VmHWM)
    t0=$(date +%s%N)
    whatif "$parent" --data-binary @"$tmp/p16000.json"
    ms=$((($(date +%s%N) - t0) / 1000000))
    check "{\"remat\": [\"*\" x 16,000]} ($(stat -c %s "$tmp/p16000.json") bytes) is 422 limit-exceeded in ${ms} ms" \
        eval 'problem 422 limit-exceeded && [ "$ms" -lt 2000 ] && body_has "\"where\":\"overrides\"" && body_has "16000 patterns; the limit is 256 in all"'
    check "nothing was queued for it" [ "$(sql "SELECT count(*) FROM plans WHERE parent_id IS NOT NULL")" = 0 ]
    for _ in 1 2 3 4; do whatif "$parent" --data-binary @"$tmp/p16000.json"; done
    hwm1=$(rss_kb VmHWM)
    check "four more leave the ASan server's peak RSS where it was (${hwm0} -> ${hwm1} kB, +64 MB at most)" \
        [ "$((hwm1 - hwm0))" -lt 65536 ]
    req GET /healthz
    check "and it still answers" is 200
    server_stop_check asan
else
    ok "# SKIP $ASAN_SERVER not built (make test builds it)"
fi

# ---- 2. at the limit: each activation split once ----
server_start plain --workers 1 --executors 2 --http-threads 2 --max-time-limit 10
submit "$tmp/acts1000.json"
parent=$(jstr id)
patterns 256 '*' >"$tmp/p256.json"
whatif "$parent" -H 'Prefer: wait=60' --data-binary @"$tmp/p256.json"
check "256 patterns of \"*\" (the limit): each activation split once, 2,000 tensors" \
    eval 'is 201 && [ "$(jstr status)" = done ] && [ "$(jnum tensors)" = 2000 ]'
patterns 257 'layers.*' >"$tmp/p257.json"
whatif "$parent" --data-binary @"$tmp/p257.json"
check "257 patterns are 422 limit-exceeded" \
    eval 'problem 422 limit-exceeded && body_has "257 patterns; the limit is 256"'
whatif "$parent" --data '{"remat":["layers.1.h","layers.*.x"]}'
check "a remat pattern that selects no activation is 422 naming it" \
    eval 'problem 422 invalid-model && body_has "\"where\":\"overrides.remat\[1\]\"" && body_has "overrides.remat\[1\]: \\\\\"layers.\*.x\\\\\" matches no activation"'
whatif "$parent" --data '{"dtype":{"params.*":"f32"}}'
check "a dtype pattern that selects no tensor is 422 naming it" \
    eval 'problem 422 invalid-model && body_has "\"where\":\"overrides.dtype.params.\*\""'

# ---- 4. --max-time-limit 10 ----
submit "$tmp/acts1000.json" "?time_limit=11"
check "?time_limit above --max-time-limit is 400 naming it" \
    eval 'problem 400 invalid-parameter && body_has "\"name\":\"time_limit\"" && body_has "at most 10 s on this server"'
submit "$tmp/acts1000.json" "?time_limit=10"
check "?time_limit at --max-time-limit is planned" eval 'is 201 && [ "$(jstr status)" = done ]'
sed 's/"tensors":/"options":{"time_limit":3600},"tensors":/' "$tmp/acts1000.json" >"$tmp/slow.json"
submit "$tmp/slow.json"
check "a model's own options.time_limit above it is 422 limit-exceeded naming it" \
    eval 'problem 422 limit-exceeded && body_has "\"where\":\"options.time_limit\""'
server_stop_check plain

# ---- 3. the new model is held to --max-tensors and --max-body ----
server_start small --workers 1 --executors 2 --http-threads 2 --max-tensors 1500 \
    --max-body "$(($(stat -c %s "$tmp/acts1000.json") + 4096))"
submit "$tmp/acts1000.json"
parent=$(jstr id)
whatif "$parent" --data '{"remat":"activation"}'
check "a what-if past --max-tensors is 422 limit-exceeded naming overrides.remat" \
    eval 'problem 422 limit-exceeded && body_has "\"where\":\"overrides.remat\"" && body_has "makes 2000 tensors; the limit is 1500"'
whatif "$parent" --data '{"remat":"layers.[1-4]??.h"}'
check "one past --max-body is 422 limit-exceeded naming overrides.remat" \
    eval 'problem 422 limit-exceeded && body_has "\"where\":\"overrides.remat\"" && body_has "the new model is [0-9]* bytes"'
server_stop_check small

tap_end
