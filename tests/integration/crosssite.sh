#!/usr/bin/env bash
# crosssite.sh - what another site can make a browser send is refused (guard.h), over real
# HTTP against a throwaway PostgreSQL: a text/plain or multipart/form-data submission
# without the TPUplan-Client header or an API key (what a cross-site form sends) is 403
# cross-site and writes nothing, while the dashboard's header, a key, or JSON pass; a Host
# that names no name of the server (DNS rebinding) is 421 wrong-host on a server listening
# on loopback, and with --public-url any name but its host. Prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/server.sh

server_init crosssite

hlo=tests/data/xla/small.hlo
model='{"name":"crosssite-test","chip":"v5e","tensors":[{"name":"w","shape":[4,128],"dtype":"f32","kind":"param"}]}'
evil='Origin: https://evil.example'
plans() { sql "SELECT count(*) FROM plans"; }

server_db
key=$("$SERVER" key create ci 2>/dev/null)
server_start named --workers 1 --executors 1 --http-threads 1 \
    --public-url https://plans.example.org/tpuplan
named=$base
named_pid=$pid
server_start local --workers 1 --executors 2 --http-threads 2

# ---- cross-site submissions ----
before=$(plans)
req POST /api/v1/plans -H "$evil" -H 'Content-Type: text/plain' --data-binary @"$hlo"
check "a text/plain POST as a cross-site form sends it is 403 cross-site" \
    eval 'problem 403 cross-site && body_has "TPUplan-Client"'
req POST /api/v1/plans -H "$evil" -F "file=@$hlo"
check "so is a multipart/form-data POST" problem 403 cross-site
req POST /api/v1/plans -H "$evil" --data-binary @"$hlo" \
    -H 'Content-Type: text/plain;charset=UTF-8' -H 'Authorization: Bearer 0123456789abcdef'
check "a bearer that is no API key does not make it one's own (403)" problem 403 cross-site
req POST /api/v1/plans -H "$evil" -H 'Content-Type: application/x-www-form-urlencoded' \
    --data 'name=x'
check "a urlencoded form is 415 (never a format)" problem 415 unsupported-media-type
check "none of them wrote a plan" [ "$(plans)" = "$before" ]
req POST /api/v1/plans -H 'Content-Type: text/plain' -H 'Prefer: wait=20' \
    -H 'TPUplan-Client: crosssite-sh-dashboard-token' --data-binary @"$hlo"
check "the dashboard's TPUplan-Client header lets text/plain through (201)" is 201
req POST /api/v1/plans -H 'TPUplan-Client: crosssite-sh-dashboard-token' -F "file=@$hlo"
check "and a form (202)" is 202
req POST /api/v1/plans -H 'Content-Type: text/plain' -H "Authorization: Bearer $key" \
    --data-binary @"$hlo"
check "so does an API key, which no browser attaches by itself (202)" is 202
req POST /api/v1/plans -H "$evil" -H 'Content-Type: application/json' --data "$model"
check "JSON needs neither (a browser would preflight it, and the preflight fails)" is 202
req OPTIONS /api/v1/plans -H "$evil" -H 'Access-Control-Request-Method: POST' \
    -H 'Access-Control-Request-Headers: content-type,tpuplan-client'
check "the server answers no CORS preflight (405, no Access-Control-Allow-Origin)" \
    eval 'is 405 && [ -z "$(hdr Access-Control-Allow-Origin)" ]'

# ---- the Host check: a loopback server knows no names but localhost ----
req GET /api/v1/chips -H "Host: rebind.attacker.example:$port"
check "a rebound name in Host is 421 wrong-host on a server listening on 127.0.0.1" \
    eval 'problem 421 wrong-host && body_has "rebind.attacker.example"'
req GET / -H 'Host: rebind.attacker.example'
check "the dashboard too" problem 421 wrong-host
before=$(plans)
req POST /api/v1/plans -H 'Host: rebind.attacker.example' -H 'Content-Type: application/json' \
    --data "$model"
check "and a submission, before its body is read: nothing written" \
    eval 'problem 421 wrong-host && [ "$(plans)" = "$before" ]'
req GET /api/v1/chips -H "Host: localhost:$port"
check "localhost is the server's own name" is 200
req GET /api/v1/chips
check "so is its address (curl's Host: 127.0.0.1:PORT)" is 200
req GET /healthz --http1.0 -H 'Host:'
check "an HTTP/1.0 request without Host is served" is 200

# ---- --public-url: its host is the one name ----
base=$named
req GET /api/v1/chips -H 'Host: plans.example.org'
check "--public-url's host is accepted" is 200
req GET /api/v1/chips -H 'Host: PLANS.example.org.:443'
check "in any case, with a port and a trailing dot" is 200
req GET /api/v1/chips -H 'Host: evil.example'
check "any other name is 421, naming the one to use" \
    eval 'problem 421 wrong-host && body_has "use plans.example.org"'
req GET /healthz
check "an address in Host passes (health probes ask by address)" is 200
check "the settings log shows --public-url" grep -q "public-url      https://plans.example.org/tpuplan" "$tmp/named.log"
"$SERVER" --public-url ftp://plans.example.org --listen 127.0.0.1:0 >"$tmp/bad.log" 2>&1
rc=$?
check "a --public-url that is not http(s)://HOST is refused at start (exit $rc)" \
    eval '[ "$rc" = 2 ] && grep -q "expected http(s)://HOST" "$tmp/bad.log"'

server_stop_check local
server_stop_check named "$named_pid"
tap_end
