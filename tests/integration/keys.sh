#!/usr/bin/env bash
# keys.sh - API keys and retention over real HTTP against a throwaway PostgreSQL:
# `tpuplan-server key create|list|revoke`, keys stored only as hashes, --require-key on
# POST and DELETE (401 key-required without or with an unknown key, 403 key-revoked, 403
# for another key's plan), share links readable without a key, the plan recording its key,
# plans counted by key name in /metrics only with --metrics-detail; who deletes what (a plan made without a key only
# with its manage token, whatever the server requires), the manage token never reaching
# PostgreSQL (its statement log, log_statement=all, is read); --retain and ?retain= setting
# expires_at, 410 expired before and after the expiry sweep deleted the plan, and the sweep
# itself. Prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/server.sh

server_init keys

model='{"name":"keys-test","chip":"v5e","tensors":[{"name":"w","shape":[4,128],"dtype":"f32","kind":"param"}]}'
post() { # post KEY [curl args...]: submit the model with API key KEY ("" for none)
    local key=$1
    shift
    if [ -n "$key" ]; then
        req POST /api/v1/plans -H 'Content-Type: application/json' -H "Authorization: Bearer $key" --data "$model" "$@"
    else
        req POST /api/v1/plans -H 'Content-Type: application/json' --data "$model" "$@"
    fi
}

# Every statement and its parameters in the cluster's log: nothing secret may reach it.
TPUPLAN_PG_OPTIONS="-c log_statement=all" server_db

# ---- the admin command ----
"$SERVER" key list >"$tmp/list0" 2>"$tmp/err"
rc=$?
check "key list on a fresh database applies the migrations and lists no key" \
    eval '[ "$rc" = 0 ] && [ "$(wc -l <"$tmp/list0")" = 1 ] && grep -q "^NAME" "$tmp/list0"'
ci=$("$SERVER" key create ci 2>"$tmp/err")
check "key create prints the key once, on stdout alone" \
    eval '[[ "$ci" =~ ^tpk_[A-Za-z0-9_-]{8}_[A-Za-z0-9_-]{43}$ ]] && grep -q "shown only this once" "$tmp/err"'
check "only the key's SHA-256 is stored, never the key or its secret" \
    eval '[ "$(sql "SELECT count(*) FROM api_keys WHERE encode(key_hash, '"'"'hex'"'"') = '"'"'$(printf %s "$ci" | sha256sum | cut -c1-64)'"'"'")" = 1 ] && [ "$(sql "SELECT count(*) FROM api_keys WHERE strpos(name || prefix || encode(key_hash, '"'"'escape'"'"'), '"'"'${ci: -20}'"'"') > 0")" = 0 ]'
"$SERVER" key create ci >/dev/null 2>"$tmp/err"
rc=$?
check "a second active key of the same name is refused (exit $rc)" \
    eval '[ "$rc" = 1 ] && grep -q "exists" "$tmp/err"'
"$SERVER" key create 'bad name' >/dev/null 2>"$tmp/err"
rc=$?
check "a key name with a space is refused" eval '[ "$rc" = 1 ] && grep -q "letters, digits" "$tmp/err"'
other=$("$SERVER" key create other 2>/dev/null)
ops=$("$SERVER" key create ops 2>/dev/null)
"$SERVER" key revoke nobody >/dev/null 2>"$tmp/err"
rc=$?
check "revoking a key that does not exist fails" eval '[ "$rc" = 1 ] && grep -q "no active key" "$tmp/err"'

# A server without --require-key on the same database, for plans made without a key.
server_start open --workers 1 --executors 2 --http-threads 2
open_base=$base
open_pid=$pid
server_start server --workers 1 --executors 2 --http-threads 2 --require-key --retain 1h \
    --cache-ttl 1 --metrics-detail
keyed_base=$base

# ---- --require-key ----
post ""
check "POST without a key is 401 key-required with WWW-Authenticate" \
    eval 'problem 401 key-required && hdr WWW-Authenticate | grep -q "^Bearer"'
post "tpk_AAAAAAAA_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
check "POST with an unknown key is 401" problem 401 key-required
post "${ci:0:13}AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
check "POST with a known prefix but the wrong secret is 401" problem 401 key-required
post "$ci" -H 'Prefer: wait=10'
id=$(jstr id)
check "POST with a key creates the plan" eval 'is 201 && [ ${#id} = 22 ]'
token=$(jstr manage_token)
check "the plan records which key created it" \
    eval '[ "$(sql "SELECT k.name FROM plans p JOIN api_keys k ON k.id = p.api_key_id WHERE p.id = '"'"'$id'"'"'")" = ci ]'
req GET "/api/v1/plans/$id"
check "the plan is readable without a key (share links stay open)" is 200
req GET "/p/$id"
check "so is its share page" is 200
req GET /api/v1/plans -H "Authorization: Bearer $ci"
check "and the key's list holds it" eval 'is 200 && body_has "$id"'
req DELETE "/api/v1/plans/$id" -H "Authorization: Bearer $token"
check "DELETE with the manage token alone is 401 under --require-key" problem 401 key-required
req DELETE "/api/v1/plans/$id" -H "Authorization: Bearer $other"
check "DELETE with another key is 403" problem 403 forbidden
"$SERVER" key revoke other >/dev/null 2>"$tmp/err"
rc=$?
check "key revoke succeeds" eval '[ "$rc" = 0 ] && grep -q "other revoked" "$tmp/err"'
post "$other"
check "POST with a revoked key is 403 key-revoked" problem 403 key-revoked
req DELETE "/api/v1/plans/$id" -H "Authorization: Bearer $other"
check "DELETE with a revoked key is 403 key-revoked" problem 403 key-revoked
"$SERVER" key list >"$tmp/list" 2>/dev/null
check "key list shows each key's prefix, plans and revocation, never the key" \
    eval 'grep -q "^ci  *${ci:4:8}  *1 " "$tmp/list" && grep "^other " "$tmp/list" | grep -qv " -$" && ! grep -qF -e "${ci:13}" "$tmp/list"'
req GET /metrics
check "/metrics with --metrics-detail counts plans by key name, and refusals by reason" \
    eval 'body_has "tpuplan_plans_created_total{key=\"ci\"} 1" && body_has "tpuplan_auth_failures_total{reason=\"missing\"} 2" && body_has "tpuplan_auth_failures_total{reason=\"unknown\"} 2" && body_has "tpuplan_auth_failures_total{reason=\"revoked\"} 2"'
req DELETE "/api/v1/plans/$id" -H "Authorization: Bearer $ci"
check "DELETE with the key that created the plan is 204" is 204
"$SERVER" key create other >/dev/null 2>&1
rc=$?
check "a revoked key's name can be given to a new key" [ "$rc" = 0 ]

# ---- who deletes a plan ----
# on_open CMD...: runs CMD against the server without --require-key.
on_open() {
    base=$open_base
    "$@"
    base=$keyed_base
}
on_open post ""
anon=$(jstr id)
anon_token=$(jstr manage_token)
check "without --require-key a plan is created without a key" \
    eval 'is 202 && [ "$(sql "SELECT api_key_id IS NULL FROM plans WHERE id = '"'"'$anon'"'"'")" = t ]'
on_open req DELETE "/api/v1/plans/$anon" -H "Authorization: Bearer $ci"
check "a key cannot delete a plan made without one (403), even where keys are optional" \
    eval 'problem 403 forbidden && body_has "manage token"'
req DELETE "/api/v1/plans/$anon" -H "Authorization: Bearer $ci"
check "under --require-key no key deletes a plan made without one (403)" \
    eval 'problem 403 forbidden && [ "$(sql "SELECT count(*) FROM plans WHERE id = '"'"'$anon'"'"'")" = 1 ]'
req DELETE "/api/v1/plans/$anon"
check "under --require-key, DELETE of such a plan with nothing asks for its manage token (401)" \
    eval 'problem 401 unauthorized && hdr WWW-Authenticate | grep -q "^Bearer"'
# another token: its first character changed (the last one carries only 4 of the 256 bits, so
# it is "A" in one token of 16, and writing "A" there kept the token right)
wrong_token=$([ "${anon_token:0:1}" = A ] && echo B || echo A)${anon_token:1}
req DELETE "/api/v1/plans/$anon" -H "Authorization: Bearer $wrong_token"
check "a wrong manage token is 403" problem 403 forbidden
req DELETE "/api/v1/plans/$anon" -H "Authorization: Bearer $anon_token"
check "under --require-key its manage token deletes a plan made without a key (204)" \
    eval 'is 204 && [ "$(sql "SELECT count(*) FROM plans WHERE id = '"'"'$anon'"'"'")" = 0 ]'
on_open post "$ci"
kid=$(jstr id)
ktoken=$(jstr manage_token)
req DELETE "/api/v1/plans/$kid" -H "Authorization: Bearer $ktoken"
check "under --require-key the manage token of a plan made with a key is 401 key-required" \
    problem 401 key-required
on_open req DELETE "/api/v1/plans/$kid" -H "Authorization: Bearer $ktoken"
check "without --require-key the manage token deletes a plan made with a key (204)" is 204
pglog=$(tests/pg.sh log "$tmp/pg")
check "PostgreSQL's statement log holds the plans' inserts and ids, never a manage token" \
    eval 'grep -q "execute plan_insert" "$pglog" && grep -qF -e "$anon" "$pglog" && grep -qF -e "$kid" "$pglog" && ! grep -qF -e "$token" -e "$anon_token" -e "$ktoken" "$pglog"'
check "nor an API key's secret" eval '! grep -qF -e "${ci:13}" -e "${other:13}" "$pglog"'
on_open req GET /metrics
check "/metrics without --metrics-detail names no key: one total of the plans created" \
    eval 'is 200 && body_has "^tpuplan_plans_created_total 2$" && ! body_has "key=" && ! body_has "\"ci\""'
# Its expiry sweep would race the one below, whose count /metrics shows.
server_stop_check open "$open_pid"

# ---- retention ----
post "$ci" -H 'Prefer: wait=10'
id=$(jstr id)
check "--retain 1h: expires_at is one hour after created_at" \
    eval 'is 201 && [ "$(sql "SELECT extract(epoch FROM expires_at - created_at)::int FROM plans WHERE id = '"'"'$id'"'"'")" = 3600 ] && body_has "\"expires_at\":\"20"'
# A what-if creates a plan: the same key rule, and the same retention, as a submission.
req POST "/api/v1/plans/$id/whatif" -H 'Content-Type: application/json' --data '{"name":"keys-whatif"}'
check "a what-if without a key is 401 key-required under --require-key" problem 401 key-required
req POST "/api/v1/plans/$id/whatif" -H 'Content-Type: application/json' -H "Authorization: Bearer $ci" \
    -H 'Prefer: wait=10' --data '{"name":"keys-whatif"}'
wid=$(jstr id)
check "a what-if with a key records the key and expires after --retain like any new plan" \
    eval 'is 201 && [ "$(jstr parent_id)" = "$id" ] && [ "$(sql "SELECT k.name || '"'"' '"'"'|| extract(epoch FROM p.expires_at - p.created_at)::int FROM plans p JOIN api_keys k ON k.id = p.api_key_id WHERE p.id = '"'"'$wid'"'"'")" = "ci 3600" ]'
req POST "/api/v1/plans/$id/whatif?retain=2h" -H 'Content-Type: application/json' \
    -H "Authorization: Bearer $ci" --data '{}'
check "a what-if's ?retain longer than --retain is 400" problem 400 invalid-parameter
req POST '/api/v1/plans?retain=2h' -H 'Content-Type: application/json' -H "Authorization: Bearer $ci" --data "$model"
check "?retain longer than --retain is 400" problem 400 invalid-parameter
req POST '/api/v1/plans?retain=soon' -H 'Content-Type: application/json' -H "Authorization: Bearer $ci" --data "$model"
check "?retain that is not a duration is 400" problem 400 invalid-parameter
req POST '/api/v1/plans?retain=2s' -H 'Content-Type: application/json' -H "Authorization: Bearer $ci" -H 'Prefer: wait=10' --data "$model"
short=$(jstr id)
check "?retain=2s sets a plan's own expires_at" \
    eval 'is 201 && [ "$(sql "SELECT extract(epoch FROM expires_at - created_at)::int FROM plans WHERE id = '"'"'$short'"'"'")" = 2 ]'
req GET "/api/v1/plans/$short"
check "before its expiry the plan is served" is 200
sleep 2.2
req GET "/api/v1/plans/$short"
first=$status
check "after expires_at, GET is 410 expired (problem+json)" \
    eval 'problem 410 expired && hdr Content-Type | grep -q problem+json'
req POST "/api/v1/plans/$short/whatif" -H 'Content-Type: application/json' -H "Authorization: Bearer $ci" --data '{}'
check "a what-if of an expired plan is 410 expired" problem 410 expired
for _ in $(seq 50); do
    [ "$(sql "SELECT count(*) FROM plans WHERE id = '$short'")" = 0 ] && break
    sleep 0.1
done
check "the expiry sweep deleted the plan and kept its id for 410" \
    eval '[ "$(sql "SELECT count(*) FROM plans WHERE id = '"'"'$short'"'"'")" = 0 ] && [ "$(sql "SELECT count(*) FROM expired_plans WHERE id = '"'"'$short'"'"'")" = 1 ] && [ "$(sql "SELECT count(*) FROM jobs WHERE plan_id = '"'"'$short'"'"'")" = 0 ]'
check "the sweep left the plan that has not expired" \
    [ "$(sql "SELECT count(*) FROM plans WHERE id = '$id'")" = 1 ]
req GET "/api/v1/plans/$short?view=summary"
check "after the sweep, GET is still 410" problem 410 expired
req POST "/api/v1/plans/$short/whatif" -H 'Content-Type: application/json' -H "Authorization: Bearer $ci" --data '{}'
check "after the sweep, a what-if of it is still 410" problem 410 expired
req GET '/api/v1/plans?limit=100' -H "Authorization: Bearer $ci"
check "expired plans are not listed" eval 'is 200 && ! body_has "$short" && body_has "$id"'
req GET /metrics
check "/metrics counts the swept plans" body_has 'tpuplan_plans_expired_total 1'
check "the sweep logs what it deleted" grep -q "expiry sweep deleted 1 plans" "$tmp/server.log"

# ---- Idempotency-Key: each API key's own ----
idem() { # idem KEY IDEMPOTENCY-KEY NAME: submits the model named NAME
    req POST /api/v1/plans -H 'Content-Type: application/json' -H "Authorization: Bearer $1" \
        -H "Idempotency-Key: $2" --data "${model/keys-test/$3}"
}
idem "$ci" release-1 keys-test
owned=$(jstr id)
check "a key's submission with an Idempotency-Key" eval 'is 202 && body_has manage_token'
idem "$ops" release-1 keys-test
check "another API key replaying that Idempotency-Key and body gets a plan of its own" \
    eval 'is 202 && [ "$(jstr id)" != "$owned" ] && body_has manage_token'
idem "$ci" release-1 keys-test
check "the owner's retry replays its plan" eval '[ "$(jstr id)" = "$owned" ] && ! body_has manage_token'
idem "$ci" release-1 changed
check "the owner's same key with another body is 422" problem 422 idempotency-key-reused
idem "$ops" release-2 squatter
check "a key claims an Idempotency-Key first" is 202
idem "$ci" release-2 keys-test
check "that claim does not stop the key's owner (202, not 422)" eval 'is 202 && body_has manage_token'

server_stop_check server
tap_end
