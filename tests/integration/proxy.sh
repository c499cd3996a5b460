#!/usr/bin/env bash
# proxy.sh - running behind a reverse proxy, over real HTTP against a throwaway PostgreSQL:
# --base-path (every link, Location and Link header under the prefix; the bare prefix
# redirects; paths outside it are 404) and --trusted-proxy (the client address from
# X-Forwarded-For / Forwarded of trusted peers only, the right-most untrusted hop, and the
# per-client request limit applied per forwarded client), and the Host check behind a
# proxy. Distinct clients are distinct loopback source addresses: 127.0.0.2 is the trusted proxy, 127.0.0.3 an untrusted peer.
# Prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/server.sh

server_init proxy
holders=()

cleanup() {
    for h in "${holders[@]}"; do kill "$h" 2>/dev/null; done
    server_cleanup
}
trap cleanup EXIT

# req SRC METHOD PATH [curl args...]: tests/server.sh's req from source address SRC.
req() {
    local src=$1 m=$2 p=$3
    shift 3
    status=$(curl -s --interface "$src" -X "$m" -o "$tmp/b" -D "$tmp/h" -w '%{http_code}' "$@" \
        "$base$p")
}

# hold SRC COUNT [HEADER]: COUNT submissions from SRC whose body never finishes (headers
# sent, 1 byte of 1000), so each holds its place until the holder is killed.
cat >"$tmp/hold.py" <<'PY'
import socket, sys, time
src, port, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
extra = sys.argv[4] + "\r\n" if len(sys.argv) > 4 and sys.argv[4] else ""
socks = []
for _ in range(count):
    s = socket.socket()
    s.bind((src, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(("POST /tpuplan/api/v1/plans HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               "Content-Length: 1000\r\n" + extra + "\r\n{").encode())
    socks.append(s)
print("ready", flush=True)
time.sleep(120)
PY
hold() {
    python3 "$tmp/hold.py" "$1" "$port" "$2" "${3:-}" >"$tmp/hold.$#.$1" 2>&1 &
    holders+=($!)
    for _ in $(seq 50); do
        grep -q ready "$tmp/hold.$#.$1" 2>/dev/null && break
        sleep 0.1
    done
    sleep 0.3 # the server has read the headers
}
unhold() {
    for h in "${holders[@]}"; do kill "$h" 2>/dev/null; done
    holders=()
    sleep 0.5
}

server_db
server_start server --workers 1 --executors 2 --http-threads 2 --max-per-ip 2 \
    --trusted-proxy 127.0.0.2 --trusted-proxy 10.0.0.0/8 --base-path /tpuplan/
problem_base=/tpuplan # every problem below must say type /tpuplan/problems/...

# ---- the base path ----
req 127.0.0.1 GET /tpuplan/healthz
check "GET /tpuplan/healthz is 200 under --base-path /tpuplan/" is 200
check "the server says where it listens, with the base path" \
    grep -q "listening on http://127.0.0.1:$port/tpuplan/" "$tmp/server.log"
TPUPLAN_LISTEN=0.0.0.0:$port TPUPLAN_BASE_PATH=/tpuplan/ TPUPLAN_TLS_CERT= docker/healthcheck.sh
hc=$?
check "the image's HEALTHCHECK command asks under TPUPLAN_BASE_PATH (exit $hc)" [ "$hc" = 0 ]
TPUPLAN_LISTEN=127.0.0.1:$port TPUPLAN_BASE_PATH= TPUPLAN_TLS_CERT= docker/healthcheck.sh 2>/dev/null
hc=$?
check "... which it needs: /healthz outside the base path is not healthy (exit $hc)" [ "$hc" = 1 ]
req 127.0.0.1 GET /healthz
check "paths outside the base path are 404" problem 404 not-found
req 127.0.0.1 GET /tpuplanx/healthz
check "a path that only starts with the prefix text is 404" problem 404 not-found
req 127.0.0.1 GET /tpuplan
check "the bare base path redirects to it with a slash (308)" \
    eval 'is 308 && [ "$(hdr Location)" = /tpuplan/ ]'
req 127.0.0.1 GET /tpuplan/
check "the dashboard is served at the base path, with relative asset links" \
    eval 'is 200 && body_has "href=\"css/app.css\"" && ! body_has "=\"/"'
req 127.0.0.1 GET /tpuplan/api/v1/openapi.json
check "OpenAPI's server is relative to the document, hence under the base path" \
    eval 'is 200 && body_has "\"url\": \"../..\""'
model='{"name":"proxy-test","chip":"v5e","tensors":[{"name":"w","shape":[4,128],"dtype":"f32","kind":"param"}]}'
me="proxy-sh-client-token-$$" # the list is the caller's own: this client's token
req 127.0.0.1 POST /tpuplan/api/v1/plans -H 'Content-Type: application/json' --data "$model" \
    -H "TPUplan-Client: $me"
id=$(grep -o '"id":"[^"]*"' "$tmp/b" | head -1 | cut -d'"' -f4)
check "a submission's Location and links are under the base path" \
    eval 'is 202 && [ "$(hdr Location)" = "/tpuplan/api/v1/plans/$id" ] && body_has "\"share\":\"/tpuplan/p/$id\"" && body_has "\"self\":\"/tpuplan/api/v1/plans/$id\""'
req 127.0.0.1 POST /tpuplan/api/v1/plans -H 'Content-Type: application/json' --data "$model" \
    -H 'Prefer: wait=10' -H "TPUplan-Client: $me"
check "a finished plan's links are under the base path" \
    eval 'is 201 && body_has "\"share\":\"/tpuplan/p/"'
req 127.0.0.1 GET '/tpuplan/api/v1/plans?limit=1' -H "TPUplan-Client: $me"
check "the list's next-page Link is under the base path" \
    eval 'is 200 && hdr Link | grep -q "^</tpuplan/api/v1/plans?limit=1&cursor="'
req 127.0.0.1 POST /tpuplan/api/v1/plans -H 'Content-Type: application/json' \
    --data '{"tensors":[{"name":"w","shape":[4,-1],"dtype":"f32"}]}'
check "a model error's problem type and instance are under the base path" \
    eval 'problem 422 invalid-model && body_has "\"instance\":\"/tpuplan/api/v1/plans\""'
req 127.0.0.1 GET /tpuplan/api/v1/plans/nope
check "a plan that does not exist: type /tpuplan/problems/not-found" problem 404 not-found
req 127.0.0.1 GET "/tpuplan/p/$id"
check "the share page is served under the base path" \
    eval 'is 200 && body_has "src=\"../js/plan.js\""'

# ---- forwarded client addresses and the per-client limit (--max-per-ip 2) ----
hold 127.0.0.2 2 "X-Forwarded-For: 203.0.113.9"
req 127.0.0.2 GET /tpuplan/healthz -H 'X-Forwarded-For: 203.0.113.9'
check "a forwarded client at its limit gets 429 naming its forwarded address" \
    eval 'problem 429 too-many-requests && body_has "203.0.113.9 already has 2" && [ "$(hdr Retry-After)" = 1 ]'
req 127.0.0.2 GET /tpuplan/healthz -H 'X-Forwarded-For: 203.0.113.9, 10.1.2.3'
check "trusted hops right of the client are skipped (10.0.0.0/8 is trusted)" \
    problem 429 too-many-requests
req 127.0.0.2 GET /tpuplan/healthz -H 'Forwarded: for=203.0.113.9;proto=http'
check "Forwarded: for= is read when there is no X-Forwarded-For" problem 429 too-many-requests
req 127.0.0.2 GET /tpuplan/healthz -H 'X-Forwarded-For: 198.51.100.7'
check "another client behind the same proxy is served" is 200
req 127.0.0.2 GET /tpuplan/healthz -H 'X-Forwarded-For: 203.0.113.9, 198.51.100.7'
check "a spoofed hop left of the right-most untrusted one is ignored" is 200
req 127.0.0.2 GET /tpuplan/healthz
check "the proxy's own requests (no header) count as the proxy, not the blocked client" is 200
req 127.0.0.3 GET /tpuplan/healthz -H 'X-Forwarded-For: 198.51.100.1'
check "an untrusted peer is served under its own address" is 200
hold 127.0.0.3 2 "X-Forwarded-For: 198.51.100.2"
req 127.0.0.3 GET /tpuplan/healthz -H 'X-Forwarded-For: 198.51.100.3'
check "an untrusted peer cannot escape its limit with a made-up X-Forwarded-For" \
    eval 'problem 429 too-many-requests && body_has "127.0.0.3 already has 2"'
req 127.0.0.3 POST /tpuplan/api/v1/plans -H 'Content-Type: application/json' --data "$model" \
    -H 'Forwarded: for=198.51.100.4'
check "... nor with Forwarded, and a refused submission is 429 too" problem 429 too-many-requests
req 127.0.0.1 GET /tpuplan/healthz -H 'X-Forwarded-For: 203.0.113.9'
check "an untrusted peer claiming the blocked client's address is not blocked" is 200
unhold
req 127.0.0.2 GET /tpuplan/healthz -H 'X-Forwarded-For: 203.0.113.9'
check "once its requests end, the forwarded client is served again" is 200
req 127.0.0.3 GET /tpuplan/healthz
check "... and so is the untrusted peer" is 200
req 127.0.0.1 GET /tpuplan/metrics
check "429s are counted in /metrics" \
    eval 'is 200 && body_has "status=\"429\""'

# ---- the Host check behind a proxy (guard.h; the server listens on a loopback address) ----
req 127.0.0.2 GET /tpuplan/api/v1/chips -H 'Host: tpuplan.example.org' \
    -H 'X-Forwarded-For: 198.51.100.8'
check "a trusted proxy may pass the public name on as Host (nginx: proxy_set_header Host)" is 200
req 127.0.0.3 GET /tpuplan/api/v1/chips -H 'Host: tpuplan.example.org'
check "from any other peer that name is 421 wrong-host (a loopback server knows no names)" \
    problem 421 wrong-host

server_stop_check server
tap_end
