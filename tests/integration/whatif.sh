#!/usr/bin/env bash
# whatif.sh - what-ifs bounded before they run, over real HTTP and PostgreSQL. Prints TAP.
#
#   1. The request that once took the server down (issue 26): a plan of 1,000 activations and
#      {"remat": ["*", ... 16,000 times]} (64 KB), against the ASan+UBSan server
#      (build/asan/bin/tpuplan-server, built by make test): 422 limit-exceeded at once, the
#      server's peak RSS stays small, and it stops without a sanitizer report.
#   2. 256 patterns (the default --max-patterns) of "*" split each activation once: 2,000
#      tensors, not 256,000; 257 are refused. A pattern that selects nothing fails the
#      what-if with a 422 problem naming it (remat, dtype, memory_space); an unknown memory
#      space is refused before it is queued.
#   3. The model a what-if makes is held to --max-tensors and --max-body (422 limit-exceeded
#      naming overrides.remat).
#   4. --max-time-limit: ?time_limit above it is 400 naming the parameter; a model's own
#      options.time_limit above it is 422 limit-exceeded.
#   5. What-ifs run on the worker pool: the POST answers 202 at once, the plan records its
#      parent and overrides ("whatif"), a what-if of a what-if starts from the model its
#      parent made, one of a JSON plan sent with XLA's dumps (options over 2 KB) is planned,
#      and one racing the DELETE of its parent is 404, never 500.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/server.sh

server_init whatif
ASAN_SERVER=${TPUPLAN_ASAN_SERVER:-build/asan/bin/tpuplan-server}

# acts N: a model of N activations, each live over [i, i + 4), in $tmp/actsN.json.
acts() { acts_model "$1" "acts$1" >"$tmp/acts$1.json"; }
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
# jfield EXPR: a Python expression over the last body (b) holds.
jfield() {
    python3 -c 'import json, sys; b = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' "$tmp/b" "$@"
}
# fails NAME OVERRIDES TYPE WHERE TEXT: a waited what-if of $parent fails, its error a 422
# problem of TYPE at WHERE whose detail holds TEXT.
fails() {
    whatif "$parent" -H 'Prefer: wait=30' --data "$2"
    check "$1" jfield 'b["status"] == "failed" and b["error"]["status"] == 422 and b["error"]["type"].endswith("/'"$3"'") and b["error"]["where"] == sys.argv[3] and sys.argv[4] in b["error"]["detail"]' "$4" "$5"
}
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
fails "a remat pattern that selects no activation fails the what-if: 422 naming it" \
    '{"remat":["layers.1.h","layers.*.x"]}' invalid-model overrides.remat[1] \
    'overrides.remat[1]: "layers.*.x" matches no activation'
fails "a dtype pattern that selects no tensor: 422 naming it" '{"dtype":{"params.*":"f32"}}' \
    invalid-model 'overrides.dtype.params.*' '"params.*" matches no tensor'
fails "a memory_space pattern that selects no tensor: 422 naming it" \
    '{"memory_space":{"params.*":"host"}}' invalid-model 'overrides.memory_space.params.*' \
    '"params.*" matches no tensor'
whatif "$parent" --data '{"memory_space":{"layers.1.h":"disk"}}'
check "an unknown memory space is 422 naming the field, before it is queued" \
    eval 'problem 422 invalid-model && body_has "\"where\":\"overrides.memory_space.layers.1.h\"" && body_has "(HBM) or .*host"'
whatif "$parent" -H 'Prefer: wait=60' --data '{"memory_space":{"layers.1.h":"host"}}'
check "memory_space host offloads the activation: 1,001 tensors in HBM, its host copy apart" \
    eval 'is 201 && [ "$(jstr status)" = done ] && [ "$(jnum tensors)" = 1001 ]'

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
fails "a what-if past --max-tensors fails: 422 limit-exceeded naming overrides.remat" \
    '{"remat":"activation"}' limit-exceeded overrides.remat 'makes 2000 tensors; the limit is 1500'
fails "one past --max-body fails: 422 limit-exceeded naming overrides.remat" \
    '{"remat":"layers.[1-4]??.h"}' limit-exceeded overrides.remat 'the new model is'
server_stop_check small

# ---- 5. on the worker pool ----
server_start pool --workers 1 --executors 2 --http-threads 2
submit "$tmp/acts1000.json"
parent=$(jstr id)
whatif "$parent" --data '{"remat":["layers.1.h"],  "name":"w1"}'
w1=$(jstr id)
check "a what-if answers 202 queued, linking its parent" \
    eval 'is 202 && [ "$(jstr status)" = queued ] && [ "$(jstr parent_id)" = "$parent" ]'
check "stored with its overrides as sent" \
    [ "$(sql "SELECT whatif::text FROM plans WHERE id = '$w1'")" = "{\"parent\":\"$parent\",\"overrides\":{\"remat\":[\"layers.1.h\"],  \"name\":\"w1\"}}" ]
for _ in $(seq 100); do
    req GET "/api/v1/plans/$w1?view=summary"
    [ "$(jstr status)" = done ] && break
    sleep 0.1
done
check "the worker plans it: 1,001 tensors, and the plan says what made it (whatif)" \
    jfield 'b["status"] == "done" and b["summary"]["tensors"] == 1001 and b["name"] == "w1" and b["whatif"] == {"parent": "'"$parent"'", "overrides": {"remat": ["layers.1.h"], "name": "w1"}}'
check "its input is now the model it made, its parent's input unchanged" \
    [ "$(sql "SELECT position('layers.1.h/remat' IN convert_from(input, 'UTF8')) > 0 FROM plans WHERE id IN ('$w1', '$parent') ORDER BY id = '$w1'")" = "$(printf 'f\nt')" ]
whatif "$w1" -H 'Prefer: wait=30' --data '{"dtype":{"layers.1.h/remat":"f32"}}'
check "a what-if of the what-if starts from the model it made (layers.1.h/remat is there)" \
    jfield 'b["status"] == "done" and b["summary"]["tensors"] == 1001 and b["name"] == "w1 (what-if)" and b["parent_id"] == "'"$w1"'"'
req POST /api/v1/plans -H 'Prefer: wait=20' -H 'TPUplan-Client: whatif-sh-dashboard-token' \
    -F "file=@tests/data/xla/small.model.json" \
    -F "xla_assignment=@tests/data/xla/small.buffer-assignment.txt" \
    -F "xla_report=@tests/data/xla/small.memory-usage-report.txt"
xid=$(jstr id)
whatif "$xid" -H 'Prefer: wait=30' --data '{"dtype":{"temp":"bf16"}}'
check "a what-if of a JSON plan sent with XLA's dumps (3.8 KB of options) is planned, xla-actual and all" \
    jfield 'b["status"] == "done" and b["result"]["packing"]["xla"]["matched_values"] == 3'
# A DELETE of the parent holding its row while the what-if arrives: the parent is there
# when the what-if checks it, gone when it is stored.
submit "$tmp/acts1000.json"
gone=$(jstr id)
psql "$DATABASE_URL" -X -q -c "BEGIN; DELETE FROM plans WHERE id = '$gone'; SELECT pg_sleep(1.5); COMMIT;" >/dev/null 2>&1 &
race=$!
sleep 0.5
whatif "$gone" --data '{"name":"raced"}'
wait "$race"
check "a what-if racing the DELETE of its parent is 404 not-found, and stores nothing" \
    eval 'problem 404 not-found && [ "$(sql "SELECT count(*) FROM plans WHERE name = '"'raced'"'")" = 0 ]'
sts=""
for i in $(seq 10); do
    req POST /api/v1/plans -H 'Content-Type: application/json' --data-binary @tests/data/service/tiny.json
    p=$(jstr id) tok=$(jstr manage_token)
    curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $tok" "$base/api/v1/plans/$p" &
    del=$!
    whatif "$p" --data '{}'
    wait "$del"
    sts="$sts $status"
done
check "ten more races with DELETE: each 202 or 404, never 500 (${sts# })" \
    eval '! echo "$sts" | grep -qvE "^( (202|404))+$"'
server_stop_check pool

tap_end
