#!/usr/bin/env bash
# soak.sh - a bounded soak and abuse run of bin/tpuplan-server on loopback (make soak).
#
# SOAK_SECONDS (default 600) is split over six phases, each under a mixed wrk load
# (tests/soak/mixed.lua: 1 submission in 10, the rest reads) from 127.0.0.1:
#   steady     20%  the load alone
#   pg-restart 15%  PostgreSQL stopped and started twice
#   kill-9     15%  the server killed with SIGKILL and started again on the same port
#   slowloris  15%  SOAK_SLOWLORIS (400) half-sent requests kept up from 127.0.0.2
#                   (slowloris.py); none may hold its connection past the header deadline
#   abuse      15%  from 127.0.0.3: bodies at and one byte over --max-body, deep JSON
#                   nesting, huge dims, safetensors headers whose length field lies (short
#                   of it, or past the limit); each must get its expected status
#   heavy      20%  from 127.0.0.4: what-ifs with huge pattern lists (16,000 and 257
#                   patterns: 422 at once; 256 that select nothing: a plan that fails 422),
#                   and rounds of four large reads at once (the whole plan, its trace, its
#                   layout, a diff) of a plan of SOAK_HEAVY_TENSORS (1,000,000)
#                   activations, planned before the load by a second server with a
#                   larger --max-body: each is 200 or 503 server-busy (--max-heavy 2),
#                   while /readyz, probed every 0.2 s, answers 200 and 9 in 10 in under
#                   100 ms; then RSS must come back within 64 MiB of where the phase began
# then drains: every plan whose submission was acknowledged (201/202, ids kept by the wrk
# script and by the abuse requests) must end done or failed with jobs.completions = 1.
#
# Reports, per phase: requests, responses by status, socket errors, p50/p99 latency; and
# jobs acknowledged / lost / done twice, the server's RSS and open fds at the start of the
# last server's life (after warm-up) and at the end (after the load stops and connections
# idle out). Bounds: RSS may grow by at most the plan cache (--cache-bytes) + 32 MiB, fds
# by at most 8. Exit status 0 only when no job is lost or done twice, the bounds hold,
# every abuse request got its expected status, and no server died unasked.
# Everything runs on loopback against a throwaway PostgreSQL (tests/pg.sh).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/server.sh

total=${SOAK_SECONDS:-600}
conns=${SOAK_CONNS:-16}
loris=${SOAK_SLOWLORIS:-400}
SERVER=${TPUPLAN_SERVER:-bin/tpuplan-server}
MAX_BODY=$((1024 * 1024))
CACHE=$((64 * 1024 * 1024))
HDR_TIMEOUT=10
tmp=$(mktemp -d /tmp/tpuplan-soak.XXXXXX)
pid=""
bg=()
fail=0
report=build/soak/report.txt
mkdir -p build/soak

cleanup() {
    for p in "${bg[@]}"; do kill "$p" 2>/dev/null; done
    server_cleanup
}
trap cleanup EXIT

command -v wrk >/dev/null || {
    echo "soak: wrk is not installed (make deps DEPS_PROFILE=bench, or apt-get install wrk)" >&2
    exit 2
}
[ "$total" -ge 30 ] || {
    echo "soak: SOAK_SECONDS must be at least 30" >&2
    exit 2
}
say() { echo "$*" | tee -a "$report"; }
bad() {
    fail=1
    say "FAIL: $*"
}
: >"$report"

DATABASE_URL=$(tests/pg.sh start "$tmp/pg") || exit 1
export DATABASE_URL
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base="http://127.0.0.1:$port"
start_server() {
    "$SERVER" --listen "127.0.0.1:$port" --workers 2 --executors 2 --http-threads 2 \
        --max-body "$MAX_BODY" --cache-bytes "$CACHE" --timeout 10 --rate-limit 1200 --max-heavy 2 \
        --rate-burst 100 --max-queue 5000 --header-timeout "$HDR_TIMEOUT" >>"$tmp/server.log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do
        curl -sf -o /dev/null "$base/healthz" && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "soak: the server did not start:" >&2
    tail -5 "$tmp/server.log" >&2
    exit 1
}
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"; }
fds() { find "/proc/$pid/fd" -mindepth 1 -maxdepth 1 | wc -l; }
sql() { psql "$DATABASE_URL" -X -Atc "$1"; }

# The large plan, planned before the soak's server starts by one that takes its body (a job
# is held to the limits of the server that runs it).
heavy_n=${SOAK_HEAVY_TENSORS:-1000000}
acts_model "$heavy_n" soak-heavy >"$tmp/heavy.json"
"$SERVER" --listen 127.0.0.1:0 --workers 1 --max-body 256M --rate-limit 0 >"$tmp/big.log" 2>&1 &
big_pid=$!
bg+=("$big_pid")
big_port=$(server_port "$tmp/big.log" "$big_pid")
heavy_id=$(curl -s -H 'Content-Type: application/json' --data-binary @"$tmp/heavy.json" \
    "http://127.0.0.1:$big_port/api/v1/plans" | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4)
for _ in $(seq 600); do
    case "$(sql "SELECT status FROM plans WHERE id = '$heavy_id'" 2>/dev/null)" in done | failed) break ;; esac
    sleep 1
done
kill -TERM "$big_pid"
wait "$big_pid" 2>/dev/null
if [ -z "$heavy_id" ] || [ "$(sql "SELECT status FROM plans WHERE id = '$heavy_id'")" != "done" ]; then
    echo "soak: the plan of $heavy_n activations was not planned: $(tail -3 "$tmp/big.log")" >&2
    exit 1
fi
echo "$heavy_id" >"$tmp/ids.heavy"
start_server
small='{"name":"soak","chip":"v5e","tensors":[{"name":"w","shape":[4,128],"dtype":"f32","kind":"param"},{"name":"x","shape":[8,128],"dtype":"bf16","kind":"activation","live":[0,2]}]}'
printf '%s' "$small" >"$tmp/small.json"
plan_id=$(curl -s -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data-binary @"$tmp/small.json" "$base/api/v1/plans" | grep -o '"id":"[^"]*"' | head -1 | cut -d'"' -f4)
[ -n "$plan_id" ] || {
    echo "soak: the first plan did not finish" >&2
    exit 1
}
echo "$plan_id" >"$tmp/ids.curl"

say "# soak, $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg), SOAK_SECONDS=$total, wrk -c$conns"
printf '%-11s %6s %9s %9s %9s  %s\n' phase secs requests p50_ms p99_ms "statuses; socket errors" | tee -a "$report"

# load PHASE SECONDS: wrk's mixed load for SECONDS in the background; sets $wpid.
load() {
    wrk -t2 -c"$conns" -d"$2s" --timeout 10s --latency -s tests/soak/mixed.lua "$base" -- \
        "$plan_id" "$tmp/small.json" "$tmp/ids.$1" >"$tmp/wrk.$1" 2>&1 &
    wpid=$!
    bg+=("$wpid")
}
# summary PHASE SECONDS: the phase's row of the table.
summary() {
    local f=$tmp/wrk.$1 st
    wait "$wpid"
    st=$(awk '$1 == "status" { printf "%s%s:%s", sep, $2, $3; sep = " " }' "$f")
    printf '%-11s %6s %9s %9s %9s  %s; %s\n' "$1" "$2" "$(awk '$1 == "requests" { print $2 }' "$f")" \
        "$(awk '$1 == "p50_ms" { print $2 }' "$f")" "$(awk '$1 == "p99_ms" { print $2 }' "$f")" \
        "$st" "$(grep '^socket' "$f" | cut -d' ' -f2-)" | tee -a "$report"
}
secs() { awk -v t="$total" -v f="$1" 'BEGIN { printf "%d", t * f }'; }

# ---- steady ----
t=$(secs 0.20)
sleep 2
rss0=$(rss_kb)
fd0=$(fds)
load steady "$t"
summary steady "$t"

# ---- PostgreSQL restarted twice ----
t=$(secs 0.15)
load pg-restart "$t"
for _ in 1 2; do
    sleep "$(awk -v t="$t" 'BEGIN { print t / 6 }')"
    tests/pg.sh pause "$tmp/pg" >/dev/null
    sleep 2
    tests/pg.sh start "$tmp/pg" >/dev/null
done
summary pg-restart "$t"

# ---- kill -9 and restart ----
t=$(secs 0.15)
load kill-9 "$t"
sleep "$(awk -v t="$t" 'BEGIN { print t / 3 }')"
kill -KILL "$pid"
wait "$pid" 2>/dev/null
start_server
sleep 2
rss1=$(rss_kb)
fd1=$(fds)
summary kill-9 "$t"

# ---- slowloris from 127.0.0.2 ----
t=$(secs 0.15)
python3 tests/soak/slowloris.py 127.0.0.2 127.0.0.1 "$port" "$loris" "$t" >"$tmp/loris" 2>&1 &
lpid=$!
bg+=("$lpid")
sleep 1
load slowloris "$((t - 1))"
summary slowloris "$((t - 1))"
wait "$lpid"
say "slowloris   $loris half-sent requests kept up from 127.0.0.2: $(cat "$tmp/loris")"
longest=$(awk '{ for (i = 1; i < NF; i++) if ($i == "longest_s") print int($(i + 1)) }' "$tmp/loris")
# Held past the header deadline (plus a sweep of the reaper and a tick of the trickle)?
if [ "$t" -gt $((HDR_TIMEOUT + 4)) ] && [ "${longest:-999}" -gt $((HDR_TIMEOUT + 4)) ]; then
    bad "a half-sent request held its connection ${longest} s (header deadline ${HDR_TIMEOUT} s)"
fi

# ---- abuse ----
t=$(secs 0.15)
load abuse "$t"
# The expected status of each request, checked; a body exactly at the limit is a valid
# model padded with spaces (accepted), one byte more is 413.
python3 - "$tmp" "$MAX_BODY" "$small" <<'PY'
import struct, sys
tmp, limit, small = sys.argv[1], int(sys.argv[2]), sys.argv[3]
open(tmp + "/at-limit.json", "w").write(small + " " * (limit - len(small)))
open(tmp + "/over-limit.json", "w").write(small + " " * (limit + 1 - len(small)))
open(tmp + "/deep.json", "w").write('{"tensors":' + "[" * 100000 + "]" * 100000 + "}")
open(tmp + "/huge-dims.json", "w").write('{"tensors":[{"name":"x","shape":[4611686018427387904,4611686018427387904],"dtype":"f32","kind":"param"}]}')
h = b'{"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
open(tmp + "/st-short", "wb").write(struct.pack("<Q", 1000) + h)
open(tmp + "/st-huge", "wb").write(struct.pack("<Q", 1 << 40) + h)
PY
abuse_end=$(($(date +%s) + t - 2))
: >"$tmp/abuse.out"
rounds=0
while [ "$(date +%s)" -lt "$abuse_end" ]; do
    rounds=$((rounds + 1))
    for c in "at-limit.json application/json 202" "over-limit.json application/json 413" \
        "deep.json application/json 422" "huge-dims.json application/json 422" \
        "st-short application/octet-stream 400" "st-huge application/octet-stream 413"; do
        # shellcheck disable=SC2086 # split into file, type, status on purpose
        set -- $c
        st=$(curl -s --interface 127.0.0.3 -o "$tmp/abuse.body" -w '%{http_code}' -H "Content-Type: $2" \
            --data-binary @"$tmp/$1" "$base/api/v1/plans")
        echo "$1 $3 $st" >>"$tmp/abuse.out"
        [ "$st" = 202 ] && grep -o '"id":"[^"]*"' "$tmp/abuse.body" | cut -d'"' -f4 >>"$tmp/ids.curl"
    done
    sleep 0.5 # 6 submissions a round stay under the rate limit (20 a second)
done
summary abuse "$t"
while read -r name want n_want; do
    say "abuse       $name: $n_want of $rounds got $want"
done < <(awk '$2 == $3 { ok[$1 " " $2]++ } END { for (k in ok) print k, ok[k] }' "$tmp/abuse.out" | sort)
wrong=$(awk '$2 != $3 { print $1 " got " $3 " (want " $2 ")" }' "$tmp/abuse.out" | sort | uniq -c)
[ -z "$wrong" ] || bad "abuse requests with another status: $wrong"

# ---- heavy: what-ifs with huge pattern lists, large reads of a 1,000,000-tensor plan ----
t=$(secs 0.20)
python3 - "$tmp" <<'PY'
import json, sys
tmp = sys.argv[1]
for n, p in ((16000, "*"), (257, "layers.*"), (256, "nothing.*")):
    json.dump({"remat": [p] * n}, open("%s/whatif-%d.json" % (tmp, n), "w"), separators=(",", ":"))
PY
sleep 2
rss_h0=$(rss_kb)
load heavy "$t"
heavy_end=$(($(date +%s) + t - 2))
: >"$tmp/heavy.out"
: >"$tmp/readyz.ms"
(
    while [ "$(date +%s)" -lt "$heavy_end" ]; do
        curl -s -o /dev/null -w '%{http_code} %{time_total}\n' "$base/readyz" >>"$tmp/readyz.ms"
        sleep 0.2
    done
) &
ppid_=$!
bg+=("$ppid_")
hrounds=0
while [ "$(date +%s)" -lt "$heavy_end" ]; do
    hrounds=$((hrounds + 1))
    for c in "16000 422" "257 422" "256 202"; do
        # shellcheck disable=SC2086 # split into count and status on purpose
        set -- $c
        st=$(curl -s --interface 127.0.0.4 -o "$tmp/heavy.body" -w '%{http_code}' \
            -H 'Content-Type: application/json' --data-binary @"$tmp/whatif-$1.json" \
            "$base/api/v1/plans/$plan_id/whatif")
        echo "whatif-$1 $2 $st" >>"$tmp/heavy.out"
        [ "$st" = 202 ] && grep -o '"id":"[^"]*"' "$tmp/heavy.body" | cut -d'"' -f4 >>"$tmp/ids.curl"
    done
    rpids=()
    for q in "plans/$heavy_id" "plans/$heavy_id?format=trace" "plans/$heavy_id?view=layout" \
        "diff?a=$heavy_id&b=$heavy_id"; do
        curl -s --interface 127.0.0.4 -o /dev/null -w "${q%%[?&]*} %{http_code}\n" \
            "$base/api/v1/$q" >>"$tmp/heavy.reads" &
        rpids+=($!)
    done
    wait "${rpids[@]}"
done
wait "$ppid_"
summary heavy "$t"
wrong=$(awk '$2 != $3 { print $1 " got " $3 " (want " $2 ")" }' "$tmp/heavy.out" | sort | uniq -c)
[ -z "$wrong" ] || bad "what-ifs with another status: $wrong"
say "heavy       $hrounds rounds of 3 what-ifs (16,000, 257 and 256 patterns) and 4 large reads of $heavy_n tensors at once"
say "heavy       large reads: $(awk '{ print $2 }' "$tmp/heavy.reads" | sort | uniq -c | awk '{ printf "%s%s:%s", sep, $2, $1; sep = " " }')"
odd=$(awk '$2 != 200 && $2 != 503' "$tmp/heavy.reads" | sort | uniq -c)
[ -z "$odd" ] || bad "large reads answered neither 200 nor 503: $odd"
rz_bad=$(awk '$1 != 200' "$tmp/readyz.ms" | wc -l)
read -r rz_n rz_p90 rz_max < <(awk '{ print int($2 * 1000) }' "$tmp/readyz.ms" | sort -n |
    awk '{ ms[NR] = $1 } END { printf "%d %d %d\n", NR, ms[int(NR * 0.9 + 0.999)], ms[NR] }')
say "heavy       /readyz: $rz_n probes, $rz_bad not 200, 90% in ${rz_p90} ms, the slowest ${rz_max} ms"
if [ "$rz_bad" != 0 ] || [ "$rz_p90" -ge 100 ]; then
    bad "/readyz was slow or failing while large reads ran"
fi
sleep 3
rss_h1=$(rss_kb)
say "heavy       RSS ${rss_h0} KiB before the phase, peak $(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status") KiB, ${rss_h1} KiB 3 s after it"
[ "$((rss_h1 - rss_h0))" -le 65536 ] || bad "RSS did not come back after the large reads: +$((rss_h1 - rss_h0)) KiB"

# ---- drain and check ----
sort -u "$tmp"/ids.* >"$tmp/acked"
acked=$(wc -l <"$tmp/acked")
for _ in $(seq 120); do
    open=$(sql "SELECT count(*) FROM plans WHERE status IN ('queued', 'running')")
    [ "$open" = 0 ] && break
    sleep 1
done
sql "SELECT id || ' ' || status FROM plans" | sort >"$tmp/db"
lost=$(awk 'NR == FNR { st[$1] = $2; next } !($1 in st) || (st[$1] != "done" && st[$1] != "failed")' \
    "$tmp/db" "$tmp/acked" | wc -l)
twice=$(sql "SELECT count(*) FROM jobs WHERE completions > 1")
say "jobs        acknowledged $acked, in the database $(wc -l <"$tmp/db"), lost $lost, done twice $twice"
[ "$lost" = 0 ] || bad "$lost acknowledged plans are missing or unfinished"
[ "$twice" = 0 ] || bad "$twice jobs completed more than once"

# The end: load stopped, slowloris gone; let idle connections time out (--timeout 10).
sleep 11
rss2=$(rss_kb)
fd2=$(fds)
say "server      first life: RSS ${rss0} KiB, fds $fd0 at the start"
say "server      after kill -9: RSS ${rss1} KiB, fds $fd1 at the start; RSS ${rss2} KiB, fds $fd2 at the end"
say "bounds      RSS growth <= $((CACHE / 1024 + 32768)) KiB, fd growth <= 8"
[ "$((rss2 - rss1))" -le "$((CACHE / 1024 + 32768))" ] || bad "RSS grew by $((rss2 - rss1)) KiB"
[ "$((fd2 - fd1))" -le 8 ] || bad "open fds grew by $((fd2 - fd1))"
kill -0 "$pid" 2>/dev/null || bad "the server died"
crashes=$(grep -c -i -E 'AddressSanitizer|runtime error|segmentation' "$tmp/server.log")
[ "$crashes" = 0 ] || bad "$crashes sanitizer or crash lines in the server log"
cp "$tmp/server.log" build/soak/server.log
if [ "$fail" = 0 ]; then say "soak: passed"; else say "soak: FAILED (server log: build/soak/server.log)"; fi
exit "$fail"
