#!/usr/bin/env bash
# faults.sh - the service under database and process failures, over real HTTP. Prints TAP.
#
# A throwaway PostgreSQL (tests/pg.sh) and bin/tpuplan-server on free loopback ports:
#   1. PostgreSQL stops: a submit answers 503 with Retry-After and writes nothing; it
#      starts again: the same server reconnects by itself and plans new submissions.
#   2. kill -9 of the server with 50 plans queued or running, then a restart: every plan
#      completes, none is lost, none completes twice (jobs.completions checked in SQL).
#   3. Two servers on one database finish 200 plans, each exactly once, both taking work.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/server.sh

server_init faults
server_stop_signal=KILL # a server may be left waiting on a paused database
MODEL=tests/data/service/tiny.json
# A chain of 800 activations: ~0.2 s of planning each, so one worker falls behind the
# submissions and the kill finds most of them still queued.
SLOW_MODEL=$tmp/chain800.json
awk -v n=800 'BEGIN {
    printf "{\"name\":\"chain\",\"chip\":\"v5e\",\"tensors\":["
    for (i = 0; i < n; i++)
        printf "%s{\"name\":\"t%d\",\"shape\":[64,%d],\"dtype\":\"f32\",\"kind\":\"activation\"}",
            (i ? "," : ""), i, 128 * (1 + i % 7)
    printf "],\"ops\":["
    for (i = 0; i < n - 1; i++)
        printf "%s{\"name\":\"op%d\",\"inputs\":[\"t%d\"],\"outputs\":[\"t%d\"]}",
            (i ? "," : ""), i, i, i + 1
    print "]}"
}' >"$SLOW_MODEL"
# start_server NAME WORKERS: one more server (tests/server.sh's server_start); sets $port
# and $spid.
start_server() {
    server_start "$1" --workers "$2" --executors 2 --http-threads 2
    spid=$pid
}

# submit PORT NAME [MODEL]: POSTs a model; prints the HTTP status, headers in $tmp/h.
submit() {
    curl -s -o "$tmp/b" -D "$tmp/h" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data-binary @"${3:-$MODEL}" "http://127.0.0.1:$1/api/v1/plans?name=$2"
}

# post_many MODEL PREFIX COUNT PORT...: COUNT submissions named PREFIX-i, spread over the
# ports, from one curl process (8 in parallel); prints one HTTP status per line.
post_many() {
    local model=$1 prefix=$2 count=$3 i
    shift 3
    local ports=("$@")
    for i in $(seq 1 "$count"); do
        [ "$i" -gt 1 ] && echo next
        echo "url = \"http://127.0.0.1:${ports[$((i % ${#ports[@]}))]}/api/v1/plans?name=$prefix-$i\""
        echo 'header = "Content-Type: application/json"'
        echo "data-binary = \"@$model\""
        echo 'output = "/dev/null"'
        # shellcheck disable=SC2028 # curl itself reads the \n
        echo 'write-out = "%{http_code}\n"'
    done >"$tmp/curl.cfg"
    curl -s -Z --parallel-max 8 -K "$tmp/curl.cfg" 2>/dev/null
}

# wait_sql SQL WANT SECONDS: polls until the query prints WANT.
wait_sql() {
    local got=""
    for _ in $(seq $(($3 * 10))); do
        got=$(sql "$1")
        [ "$got" = "$2" ] && return 0
        sleep 0.1
    done
    why="'$1' gave '$got', wanted '$2' after $3 s"
    return 1
}

server_db
start_server a 2
pa=$port
pid_a=$spid

# ---- 1. PostgreSQL stops and comes back ----
st=$(submit "$pa" before)
check "a submit is accepted (202)" [ "$st" = 202 ]
check "and planned" wait_sql "SELECT count(*) FROM plans WHERE status = 'done'" 1 20

tests/pg.sh pause "$tmp/pg"
st=$(submit "$pa" during)
retry=$(grep -i '^retry-after:' "$tmp/h" | tr -d '\r' | awk '{print $2}')
why="status $st, Retry-After '$retry': $(head -c 300 "$tmp/b")"
check "with PostgreSQL down a submit answers 503 with Retry-After" \
    [ "$st" = 503 ] && [ -n "$retry" ]
why="$(head -c 300 "$tmp/b")"
check "the 503 is problem+json" grep -qi '^content-type: application/problem+json' "$tmp/h"
rs=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$pa/readyz")
check "readyz answers 503 while PostgreSQL is down" [ "$rs" = 503 ]
check "the server is still alive" kill -0 "$pid_a"

tests/pg.sh start "$tmp/pg" >/dev/null
t0=$(date +%s.%N)
st=""
for _ in $(seq 100); do
    st=$(submit "$pa" after)
    [ "$st" = 202 ] && break
    sleep 0.2
done
t1=$(date +%s.%N)
why="last status $st"
check "PostgreSQL back: the same server accepts submissions again" [ "$st" = 202 ]
echo "# first accepted submit $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s after PostgreSQL restarted"
check "nothing was written by the 503 (2 plans: before, after)" \
    wait_sql "SELECT string_agg(name, ',' ORDER BY created_at) FROM plans" "before,after" 5
check "the workers reconnected and planned it" \
    wait_sql "SELECT count(*) FROM plans WHERE status = 'done'" 2 20

# ---- 2. kill -9 with 50 plans in the queue ----
# One worker and a model that takes ~0.2 s keep the queue long enough that the kill finds
# plans queued and one running (its lease must expire before it is re-run).
server_stop_check a "$pid_a"
start_server b 1
pb=$port
pid_b=$spid
post_many "$SLOW_MODEL" kill 50 "$pb" >"$tmp/codes"
# Kill while a plan is running, so its lease is held by a dead server.
wait_sql "SELECT count(*) FROM jobs WHERE state = 'running'" 1 5
kill -KILL "$pid_b"
wait "$pid_b" 2>/dev/null
accepted=$(grep -c '^202$' "$tmp/codes")
check "50 submissions accepted before the kill" [ "$accepted" = 50 ]
left=$(sql "SELECT count(*) FROM jobs j JOIN plans p ON p.id = j.plan_id
            WHERE p.name LIKE 'kill-%' AND j.state IN ('queued', 'running')")
running=$(sql "SELECT count(*) FROM jobs WHERE state = 'running'")
echo "# at the kill: $left of 50 unfinished, $running running (lease held by the dead server)"
why="all 50 finished before the kill; the test proved nothing"
check "the kill left plans unfinished" [ "$left" -gt 0 ]
t0=$(date +%s)
start_server c 2
pc=$port
check "after a restart every plan completes (expired leases are requeued)" \
    wait_sql "SELECT count(*) FROM jobs j JOIN plans p ON p.id = j.plan_id
              WHERE p.name LIKE 'kill-%' AND j.state = 'done'" 50 60
echo "# all 50 done $(($(date +%s) - t0)) s after the restart (lease 15 s)"
check "none lost, none completed twice (completions = 1 for all 50)" \
    wait_sql "SELECT count(*) FILTER (WHERE j.completions = 1) || '/' || sum(j.completions)
              FROM jobs j JOIN plans p ON p.id = j.plan_id WHERE p.name LIKE 'kill-%'" "50/50" 1
check "no lease left behind" wait_sql "SELECT count(*) FROM jobs WHERE lease_token IS NOT NULL" 0 1

# ---- 3. two servers, one database, 200 plans ----
start_server d 2
pd=$port
sql "TRUNCATE plans, jobs, idempotency_keys, frontiers" >/dev/null
t0=$(date +%s.%N)
post_many "$MODEL" pair 200 "$pc" "$pd" >"$tmp/codes"
check "200 submissions accepted across both servers" [ "$(grep -c '^202$' "$tmp/codes")" = 200 ]
check "two servers finish all 200 plans" \
    wait_sql "SELECT count(*) FROM jobs WHERE state = 'done'" 200 60
t1=$(date +%s.%N)
echo "# 200 plans submitted and finished by two servers in $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s"
check "each exactly once (completions = 1, sum 200)" \
    wait_sql "SELECT count(*) FILTER (WHERE completions = 1) || '/' || sum(completions)
              FROM jobs" "200/200" 1
echo "# plans per server: $(sql "SELECT string_agg(s || ':' || c, ' ') FROM (SELECT
    split_part(locked_by, '/', 1) AS s, count(*) AS c FROM jobs GROUP BY 1 ORDER BY 1) x")"
check "both servers took work" \
    wait_sql "SELECT count(DISTINCT split_part(locked_by, '/', 1)) FROM jobs" 2 1

tap_end
