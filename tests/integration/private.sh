#!/usr/bin/env bash
# private.sh - plans are private by default, over real HTTP against a throwaway PostgreSQL:
# GET /api/v1/plans lists only the caller's own plans (those of the API key and of the
# client token, TPUplan-Client, it presents; with neither, none), --public-list lists every
# plan, and a share link (the plan's id) stays readable by anyone, key or not. Idempotency
# keys are the client token's own. Three servers share one database: one without keys, one
# under --require-key, one with --public-list. Prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/server.sh

server_init private

model='{"name":"private-test","chip":"v5e","tensors":[{"name":"w","shape":[4,128],"dtype":"f32","kind":"param"}]}'
# Two browsers' tokens (43 characters of base64url, as the dashboard makes them), and one
# that is too short.
ta=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')
tb=$(head -c 32 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=\n')

# submit NAME [curl args...]: the model named NAME, as JSON, waiting for it to be planned.
submit() {
    local name=$1
    shift
    req POST /api/v1/plans -H 'Content-Type: application/json' -H 'Prefer: wait=10' \
        --data "${model/private-test/$name}" "$@"
}
# listed [curl args...]: the list (up to 100) as the caller sees it; ids in $tmp/ids.
listed() {
    req GET '/api/v1/plans?limit=100' "$@"
    grep -o '"id" *: *"[^"]*"' "$tmp/b" | cut -d'"' -f4 >"$tmp/ids"
}
# has ID / lacks ID: whether the last list holds the plan.
has() { grep -qxF -e "$1" "$tmp/ids"; }
lacks() { ! grep -qxF -e "$1" "$tmp/ids"; }

server_db
k1=$("$SERVER" key create one 2>/dev/null)
k2=$("$SERVER" key create two 2>/dev/null)
server_start keyed --workers 1 --executors 2 --http-threads 2 --require-key
keyed=$base
keyed_pid=$pid
server_start public --workers 1 --executors 2 --http-threads 2 --public-list
public=$base
public_pid=$pid
server_start open --workers 1 --executors 2 --http-threads 2
open=$base

# ---- without keys: each browser its own ----
submit priv-a -H "TPUplan-Client: $ta"
ida=$(jstr id)
check "a submission with a client token is created" eval 'is 201 && [ ${#ida} = 22 ]'
check "the server keeps only the token's SHA-256, never the token" \
    eval '[ "$(sql "SELECT encode(client_hash, '"'"'hex'"'"') FROM plans WHERE id = '"'"'$ida'"'"'")" = "$(printf %s "$ta" | sha256sum | cut -c1-64)" ]'
submit priv-b -H "TPUplan-Client: $tb"
idb=$(jstr id)
submit priv-none
idn=$(jstr id)
listed -H "TPUplan-Client: $ta"
check "a browser's list holds its own plan and no other (scope mine)" \
    eval 'is 200 && has "$ida" && lacks "$idb" && lacks "$idn" && body_has "\"scope\":\"mine\""'
listed -H "TPUplan-Client: $tb"
check "the other browser's list holds only its plan" eval 'is 200 && has "$idb" && lacks "$ida" && lacks "$idn"'
listed
check "a caller with neither key nor token lists nothing" \
    eval 'is 200 && [ ! -s "$tmp/ids" ] && body_has "\"items\":\[\]"'
req GET '/api/v1/plans?name=priv' -H "TPUplan-Client: $ta"
check "the name filter applies within the caller's own plans" eval 'is 200 && body_has "$ida" && ! body_has "$idb"'
listed -H 'TPUplan-Client: too-short'
check "a malformed client token is 400 naming the header" \
    eval 'problem 400 invalid-parameter && body_has "TPUplan-Client must be 22 to 64 characters"'
submit priv-bad -H 'TPUplan-Client: has spaces in it, which is not base64url'
check "a submission with a malformed client token is 400" problem 400 invalid-parameter

# ---- a share link is the capability: anyone reads it ----
req GET "/api/v1/plans/$ida"
check "a plan is readable by its id without a key or token" eval 'is 200 && [ "$(jstr id)" = "$ida" ]'
req GET "/p/$ida"
check "so is its share page" is 200
req GET "/api/v1/plans/$ida?format=trace"
check "and its trace" is 200
base=$keyed
req GET "/api/v1/plans/$ida?view=summary"
check "and under --require-key, without a key" is 200

# ---- under --require-key: each key its own ----
submit key-one -H "Authorization: Bearer $k1"
id1=$(jstr id)
submit key-one-in-a -H "Authorization: Bearer $k1" -H "TPUplan-Client: $ta"
id1a=$(jstr id)
submit key-two -H "Authorization: Bearer $k2"
id2=$(jstr id)
check "plans made with keys" eval '[ ${#id1} = 22 ] && [ ${#id1a} = 22 ] && [ ${#id2} = 22 ]'
listed -H "Authorization: Bearer $k1"
check "a key lists the plans made with it and no other key's" \
    eval 'is 200 && has "$id1" && has "$id1a" && lacks "$id2" && lacks "$ida" && lacks "$idn"'
listed -H "Authorization: Bearer $k2"
check "the other key lists only its plan" eval 'is 200 && has "$id2" && lacks "$id1" && lacks "$id1a"'
listed -H "Authorization: Bearer $k1" -H "TPUplan-Client: $ta"
check "key and token together list both: the key's plans and the browser's" \
    eval 'is 200 && has "$id1" && has "$id1a" && has "$ida" && lacks "$id2" && lacks "$idb"'
listed -H "TPUplan-Client: $tb"
check "a browser's token lists only what that browser made, keyed or not" \
    eval 'is 200 && has "$idb" && lacks "$id1" && lacks "$id2" && lacks "$ida"'
listed
check "without a key or token the list is empty (every plan used to be listed)" \
    eval 'is 200 && [ ! -s "$tmp/ids" ]'
listed -H "Authorization: Bearer tpk_AAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
check "an unknown key is 401, not an empty list" problem 401 key-required

# ---- --public-list: the team-wide list ----
base=$public
listed
check "--public-list lists every plan to anyone (scope all)" \
    eval 'is 200 && has "$ida" && has "$idb" && has "$idn" && has "$id1" && has "$id2" && body_has "\"scope\":\"all\""'

# ---- Idempotency-Key: the client token's own ----
base=$open
req POST /api/v1/plans -H 'Content-Type: application/json' -H "TPUplan-Client: $ta" \
    -H 'Idempotency-Key: nightly' --data "$model"
owned=$(jstr id)
req POST /api/v1/plans -H 'Content-Type: application/json' -H "TPUplan-Client: $tb" \
    -H 'Idempotency-Key: nightly' --data "${model/private-test/other}"
check "another browser's same Idempotency-Key (same address) is its own: no 422" \
    eval 'is 202 && [ "$(jstr id)" != "$owned" ]'
req POST /api/v1/plans -H 'Content-Type: application/json' -H "TPUplan-Client: $ta" \
    -H 'Idempotency-Key: nightly' --data "$model"
check "the owner's retry replays its plan" eval '[ "$(jstr id)" = "$owned" ] && ! body_has manage_token'

server_stop_check open
server_stop_check public "$public_pid"
server_stop_check keyed "$keyed_pid"
tap_end
