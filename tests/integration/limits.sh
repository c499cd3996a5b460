#!/usr/bin/env bash
# limits.sh - the service's abuse limits and request ids over real HTTP and PostgreSQL.
# Prints TAP.
#
#   1. --rate-limit/--rate-burst: a client's submissions past its burst get 429 problem+json
#      with Retry-After (the body unread, nothing written); after Retry-After it is accepted
#      again; another client address (127.0.0.2) is unaffected; behind a trusted proxy the
#      key is the forwarded client (X-Forwarded-For), as for --max-per-ip.
#   2. --max-queue: with that many plans queued (jobs made unclaimable in SQL), a submission
#      gets 503 queue-full with Retry-After and writes nothing; once the queue drains,
#      submissions are accepted again.
#   3. X-Request-Id on every response (API, problem, static file, cached plan, chips, 304):
#      a well-formed client id is echoed, a malformed one replaced; error responses are
#      logged with the id.
#   4. --log-format json: every line of the server's log is one JSON object in UTF-8 (a URL
#      that is not is written with U+FFFD), and a request's lines carry its request_id; a bad
#      --log-format is refused at start.
#   5. --header-timeout: a client trickling header bytes (slowloris) loses its connection
#      at the deadline, though each byte resets the idle --timeout.
#   6. --body-min-rate: a body trickled after complete headers loses its connection at the
#      grace plus its bytes' credit; a body sent in pieces over seconds, but above the rate,
#      is answered.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
. tests/server.sh

server_init limits
MODEL=tests/data/service/tiny.json

# start NAME ARGS...: one more small server (tests/server.sh's server_start).
start() {
    local name=$1
    shift
    server_start "$name" --workers 1 --executors 2 --http-threads 2 "$@"
}
submit() { req POST /api/v1/plans -H 'Content-Type: application/json' --data-binary @"$MODEL" "$@"; }
plans() { sql "SELECT count(*) FROM plans"; }

server_db

# ---- 1. rate limit: 12 a minute (a token every 5 s), bursts of 3 ----
start rate --rate-limit 12 --rate-burst 3 --max-queue 0
base_rate=$base
sts=""
for _ in 1 2 3; do
    submit
    sts="$sts $status"
done
check "a burst of 3 submissions is accepted (202 202 202)" [ "$sts" = " 202 202 202" ]
before=$(plans)
submit
check "the 4th right after is 429 rate-limited problem+json" problem 429 rate-limited
wait_s=$(hdr Retry-After)
check "with Retry-After of 1 to 5 s (a token every 5 s): $wait_s" [ "${wait_s:-0}" -ge 1 ] && [ "$wait_s" -le 5 ]
check "and nothing written" [ "$(plans)" = "$before" ]
submit --interface 127.0.0.2
check "another client address is not limited (202)" [ "$status" = 202 ]
sleep "${wait_s:-5}.2"
submit
check "after Retry-After the client is accepted again (202)" [ "$status" = 202 ]
req GET /api/v1/plans
check "reads are not rate-limited" [ "$status" = 200 ]

# Behind a trusted proxy the limit keys on the forwarded client, like --max-per-ip.
start proxied --trusted-proxy 127.0.0.1 --rate-limit 12 --rate-burst 1 --max-queue 0
submit -H 'X-Forwarded-For: 10.0.0.1'
s1=$status
submit -H 'X-Forwarded-For: 10.0.0.1'
check "behind a trusted proxy, one forwarded client's second submission is 429 ($s1 $status)" \
    [ "$s1 $status" = "202 429" ]
check "naming the forwarded client" grep -q '10.0.0.1 has sent more than' "$tmp/b"
submit -H 'X-Forwarded-For: 10.0.0.2'
check "another forwarded client through the same proxy is accepted" [ "$status" = 202 ]

# ---- 2. bounded queue: jobs made unclaimable, so they stay queued ----
start queue --rate-limit 0 --max-queue 2
sql "UPDATE jobs SET run_at = now() WHERE state = 'queued'" >/dev/null
sql "ALTER TABLE jobs ALTER COLUMN run_at SET DEFAULT now() + interval '1 hour'" >/dev/null
for _ in $(seq 100); do
    [ "$(sql "SELECT count(*) FROM jobs WHERE state IN ('queued', 'running')")" = 0 ] && break
    sleep 0.1
done
submit
s1=$status
submit
check "two submissions fill a queue of 2 (202 202)" [ "$s1 $status" = "202 202" ]
before=$(plans)
submit
check "the third is 503 queue-full problem+json" problem 503 queue-full
check "with Retry-After" [ -n "$(hdr Retry-After)" ]
check "and nothing written" [ "$(plans)" = "$before" ]
sql "ALTER TABLE jobs ALTER COLUMN run_at SET DEFAULT now()" >/dev/null
sql "UPDATE jobs SET run_at = now() WHERE state = 'queued'" >/dev/null
for _ in $(seq 200); do
    [ "$(sql "SELECT count(*) FROM jobs WHERE state = 'queued'")" = 0 ] && break
    sleep 0.1
done
submit
check "once the queue drains, submissions are accepted again" [ "$status" = 202 ]

# ---- 3. request ids (server "rate" from part 1) ----
base=$base_rate
rid_ok() { hdr X-Request-Id | grep -Eq '^[A-Za-z0-9_-]{16}$'; }
req GET /api/v1/plans
check "an API response carries a generated X-Request-Id (16 base64url characters)" rid_ok
req GET /api/v1/chips
check "the chips document carries one" rid_ok
req GET /
check "a static file carries one" rid_ok
req GET /api/v1/plans/nope
check "a problem response carries one" rid_ok
id=$(sql "SELECT id FROM plans WHERE status = 'done' LIMIT 1")
req GET "/api/v1/plans/$id"
req GET "/api/v1/plans/$id"
etag=$(hdr ETag)
check "a cached finished plan carries one" rid_ok
a=$(hdr X-Request-Id)
req GET "/api/v1/plans/$id"
check "and a different one each time" [ "$(hdr X-Request-Id)" != "$a" ]
req GET "/api/v1/plans/$id" -H "If-None-Match: $etag"
check "a 304 from the cache carries one" [ "$status" = 304 ] && rid_ok
req GET /api/v1/plans -H 'X-Request-Id: trace-42.abc:7'
check "a well-formed client X-Request-Id is echoed" [ "$(hdr X-Request-Id)" = trace-42.abc:7 ]
req GET /api/v1/plans -H 'X-Request-Id: bad id with spaces'
check "a malformed one is replaced" rid_ok
req GET /api/v1/plans -H "X-Request-Id: $(printf 'a%.0s' $(seq 65))"
check "so is one over 64 characters" rid_ok
req POST /api/v1/plans -H 'Content-Type: application/json' -H 'X-Request-Id: soak-bad-model-1' \
    --interface 127.0.0.2 --data-binary '{"tensors":[{"name":"x","shape":[2],"dtype":"nope"}]}'
check "an invalid model is 422" [ "$status" = 422 ]
sleep 0.2
check "and its error is logged with its request id" grep -q \
    'http: POST /api/v1/plans 422 .* client 127.0.0.2 request_id=soak-bad-model-1' "$tmp/rate.log"

# ---- 4. JSON logs ----
start json --log-format json --rate-limit 0
req GET /api/v1/plans/nope -H 'X-Request-Id: json-log-1'
req GET '/api/v1/plans/%FF%C3' -H 'X-Request-Id: json-log-2' # not UTF-8 once decoded
sleep 0.2
json_lines() {
    python3 - "$tmp/json.log" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1], encoding="utf-8", errors="strict"):
    o = json.loads(line)
    assert isinstance(o, dict) and {"time", "module", "message"} <= o.keys(), line
    n += 1
sys.exit(0 if n > 0 else 1)
PY
}
check "every log line is a JSON object with time, module and message, in UTF-8" json_lines
check "a URL's bytes that are not UTF-8 are logged as U+FFFD" grep -q \
    '"request_id":"json-log-2","message":"GET /api/v1/plans/\\ufffd\\ufffd 404' "$tmp/json.log"
check "a request's line carries its request_id" grep -q \
    '"module":"http","request_id":"json-log-1","message":"GET /api/v1/plans/nope 404' "$tmp/json.log"
"$SERVER" --log-format xml >"$tmp/bad.log" 2>&1
rc=$?
check "--log-format xml is refused (exit 2)" \
    eval '[ "$rc" = 2 ] && grep -q "expected text or json" "$tmp/bad.log"'

# ---- 5. request-header deadline: a trickle of header bytes does not keep a connection ----
start slow --header-timeout 2 --body-min-rate 1000 --timeout 30 --rate-limit 0
port=${base##*:}
held=$(python3 - "$port" <<'PY'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
t0 = time.monotonic()
s.settimeout(0.5)
while time.monotonic() - t0 < 10:
    try:
        if s.recv(1) == b"":
            break
    except socket.timeout:
        pass
    except OSError:
        break
    try:
        s.send(b"x")
    except OSError:
        break
print("%.1f" % (time.monotonic() - t0))
PY
)
check "a connection trickling header bytes is closed after the 2 s header deadline (${held} s)" \
    awk -v h="$held" 'BEGIN { exit !(h >= 1.5 && h < 5) }'
check "and the closing is logged with the client" \
    grep -q 'closed a connection from 127.0.0.1: no complete request headers within 2 s' "$tmp/slow.log"
req GET /healthz
check "a prompt request on the same server is answered" [ "$status" = 200 ]

# ---- 6. request-body rate: a trickled body does not keep a connection either ----
# slowbody.py PORT FILE CHUNKS PAUSE [LENGTH]: sends the headers of a POST of the file (with
# Content-Length LENGTH, default the file's size), then the file in CHUNKS pieces PAUSE s
# apart; prints the seconds the connection was held and the status line (or "closed").
cat >"$tmp/slowbody.py" <<'PY'
import socket, sys, time
port, path, chunks, pause = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
body = open(path, "rb").read()
length = int(sys.argv[5]) if len(sys.argv) > 5 else len(body)
s = socket.create_connection(("127.0.0.1", port))
s.sendall(b"POST /api/v1/plans HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
          b"Connection: close\r\nContent-Length: %d\r\n\r\n" % length)
t0 = time.monotonic()
step = (len(body) + chunks - 1) // chunks
try:
    for i in range(chunks):
        s.sendall(body[i * step:(i + 1) * step])
        time.sleep(pause)
    s.settimeout(20)
    reply = s.recv(4096)
except OSError:
    reply = b""
line = reply.split(b"\r\n", 1)[0].decode() if reply else "closed"
print("%.1f %s" % (time.monotonic() - t0, line.replace(" ", "_")))
PY
read -r held line < <(python3 "$tmp/slowbody.py" "$port" "$MODEL" 40 0.25 100000)
check "a body trickled at about 36 bytes/s is cut off near the 2 s grace (${held} s, ${line})" \
    eval '[ "$line" = closed ] && awk -v h="$held" "BEGIN { exit !(h >= 1.5 && h < 5) }"'
check "and the closing is logged with the client and the rate" \
    grep -q 'closed a connection from 127.0.0.1: request body slower than 1000 bytes/s' "$tmp/slow.log"
{
    cat "$MODEL"
    head -c 30000 /dev/zero | tr '\0' ' '
} >"$tmp/padded.json"
read -r held line < <(python3 "$tmp/slowbody.py" "$port" "$tmp/padded.json" 10 0.3)
check "a 30 KB body sent in 10 pieces over 3 s (10 KB/s) is answered (${held} s, ${line})" \
    [ "$line" = "HTTP/1.1_202_Accepted" ]
tap_end
