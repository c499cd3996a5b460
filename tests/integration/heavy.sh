#!/usr/bin/env bash
# heavy.sh - large reads and jobs against a real server and PostgreSQL (issue 26, Musts 2
# and 3), on plans of HEAVY_TENSORS (200,000) activations: the whole plan is about 70 MB.
#   1. Four diffs run at once (--max-heavy 4) while /readyz, /healthz and /metrics answer
#      200 in under 100 ms (9 in 10 of them: the VM's scheduler delays some): they have an
#      executor of their own (route.h's lanes).
#   2. Four slow downloads of the whole plan hold the four slots: the fifth large read (the
#      plan, its layout, its trace, a diff) is 503 server-busy with Retry-After at once,
#      while the summary view, the list, /readyz and every read of a small plan are
#      answered; once the downloads are gone a large read is admitted again.
#   3. Memory comes back (memtrim.h): after the two jobs and every large read, the server's
#      RSS is within HEAVY_RSS_BOUND_MB (48) of its idle level, though its peak was hundreds
#      of MB above it.
# Prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/server.sh

server_init heavy
ntensors=${HEAVY_TENSORS:-200000}
bound_mb=${HEAVY_RSS_BOUND_MB:-48}

# rss_kb KIND: the server's VmRSS or VmHWM (peak) in kB.
rss_kb() { awk -v k="$1:" '$1 == k { print $2 }' "/proc/$pid/status"; }
# ms URL: GETs base URL, prints "STATUS MILLISECONDS".
ms() { curl -s -o /dev/null -w '%{http_code} %{time_total}' "$base$1" | awk '{ printf "%s %d\n", $1, $2 * 1000 }'; }
# running PIDS...: whether any of them still runs.
running() {
    local p
    for p in "$@"; do kill -0 "$p" 2>/dev/null && return 0; done
    return 1
}

server_db
acts_model "$ntensors" heavy >"$tmp/acts.json"
server_start heavy --workers 1 --executors 2 --http-threads 2 --max-heavy 4 \
    --max-body 64M --max-tensors "$ntensors" --cache-bytes 1M
req GET /healthz
req GET /api/v1/chips
sleep 0.5
idle=$(rss_kb VmRSS)
ids=()
for name in a b; do
    req POST "/api/v1/plans?name=$name" -H 'Content-Type: application/json' \
        -H 'Prefer: wait=60' --data-binary @"$tmp/acts.json"
    ids+=("$(jstr id)")
    for _ in $(seq 300); do
        [ "$(sql "SELECT status FROM plans WHERE id = '${ids[-1]}'")" = "done" ] && break
        sleep 1
    done
done
a=${ids[0]} b=${ids[1]}
req POST /api/v1/plans -H 'Content-Type: application/json' -H 'Prefer: wait=60' \
    --data-binary @tests/data/service/tiny.json
small=$(jstr id)
check "two plans of $ntensors activations ($(($(stat -c %s "$tmp/acts.json") / 1000000)) MB each) are planned" \
    [ "$(sql "SELECT count(*) FROM plans WHERE status = 'done' AND tensors = $ntensors")" = 2 ]

# ---- 1. the operators' endpoints while four diffs run ----
dpids=()
for i in 1 2 3 4; do
    curl -s -o /dev/null -w '%{http_code}\n' "$base/api/v1/diff?a=$a&b=$b" >"$tmp/diff$i" &
    dpids+=($!)
done
sleep 0.3
# Every probe 200, and 9 in 10 under 100 ms: on a shared 2-core VM under load the
# scheduler alone delays a few by tens of ms (tests/bench/RESULTS.md has the figures).
: >"$tmp/probes"
while running "${dpids[@]}" && [ "$(wc -l <"$tmp/probes")" -lt 60 ]; do
    for p in /readyz /healthz /metrics; do
        echo "$p $(ms "$p")" >>"$tmp/probes"
    done
done
wait "${dpids[@]}"
probes=$(wc -l <"$tmp/probes")
not200=$(awk '$2 != 200' "$tmp/probes" | wc -l)
p90=$(awk '{ print $3 }' "$tmp/probes" | sort -n | awk '{ v[NR] = $1 } END { print v[int(NR * 0.9 + 0.999)] + 0 }')
max=$(awk '{ print $3 }' "$tmp/probes" | sort -n | tail -1)
check "/readyz, /healthz and /metrics answer while four diffs run: $probes probes, all 200, 90% in ${p90} ms (< 100), the slowest ${max} ms" \
    eval '[ "$probes" -ge 6 ] && [ "$not200" = 0 ] && [ "$p90" -lt 100 ]'
check "and the four diffs are answered (200)" [ "$(cat "$tmp"/diff[1-4] | sort -u)" = 200 ]

# ---- 2. admission: four slots held by slow downloads ----
spids=()
for i in 1 2 3 4; do
    curl -s -o /dev/null --limit-rate 200K "$base/api/v1/plans/$a" &
    spids+=($!)
done
sleep 1
busy=0
for q in "/api/v1/plans/$b" "/api/v1/plans/$b?view=layout" "/api/v1/plans/$b?format=trace" \
    "/api/v1/diff?a=$a&b=$b"; do
    req GET "$q"
    problem 503 server-busy && [ "$(hdr Retry-After)" = 1 ] && body_has "4 large reads" &&
        busy=$((busy + 1))
done
check "with four slow downloads of the plan, each large read is 503 server-busy, Retry-After: 1" \
    [ "$busy" = 4 ]
req GET "/api/v1/plans/$b?view=summary"
s1=$status
req GET "/api/v1/plans"
s2=$status
req GET /readyz
check "the summary view, the list and /readyz are answered meanwhile ($s1 $s2 $status)" \
    [ "$s1 $s2 $status" = "200 200 200" ]
smalls=""
for q in "/api/v1/plans/$small" "/api/v1/plans/$small?view=layout" \
    "/api/v1/plans/$small?format=trace" "/api/v1/diff?a=$small&b=$small"; do
    req GET "$q"
    smalls="$smalls $status"
done
check "and so is every read of a small plan: whole, layout, trace, diff ($smalls)" \
    [ "$smalls" = " 200 200 200 200" ]
kill "${spids[@]}" 2>/dev/null
wait "${spids[@]}" 2>/dev/null
t0=$(date +%s%N)
for _ in $(seq 300); do
    req GET "/api/v1/plans/$b?view=layout"
    is 503 || break
    sleep 0.1
done
check "once the downloads are gone, a large read is admitted again (200 after $((($(date +%s%N) - t0) / 1000000)) ms)" is 200

# ---- 3. memory comes back ----
for q in "/api/v1/plans/$a" "/api/v1/plans/$a?format=trace" "/api/v1/diff?a=$a&b=$b"; do
    curl -s -o /dev/null "$base$q"
done
# The last answer goes out before its thread has freed and given back what it made.
t0=$(date +%s%N)
for _ in $(seq 100); do
    now=$(rss_kb VmRSS)
    [ "$((now - idle))" -lt "$((bound_mb * 1024))" ] && break
    sleep 0.1
done
peak=$(rss_kb VmHWM)
check "RSS comes back within ${bound_mb} MB of idle: idle $((idle / 1024)) MB, peak $((peak / 1024)) MB, $((now / 1024)) MB $((($(date +%s%N) - t0) / 1000000)) ms after the last read" \
    eval '[ "$((now - idle))" -lt "$((bound_mb * 1024))" ] && [ "$((peak - idle))" -gt "$((4 * bound_mb * 1024))" ]'
server_stop_check heavy
tap_end
