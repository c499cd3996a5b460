#!/usr/bin/env bash
# hygiene.sh - what a careless or hostile client leaves in the server's logs, and the
# settings log's database password, against a throwaway PostgreSQL over real HTTP. Prints
# TAP.
#
#   1. the text log: a path with percent-encoded newlines, carriage returns and terminal
#      escapes is logged as one line, its controls escaped (log.h); the JSON log keeps them
#      inside one JSON string;
#   3. every client mistake is a 4xx naming the field: an unknown query parameter, text
#      that is not UTF-8, a cursor out of range, a form past --max-body, a what-if racing its
#      parent's DELETE; and a 304 repeats its 200's Cache-Control;
#   2. the settings log masks the database password whole: a conninfo's quoted password, a
#      URL's percent-encoded one with "@", ":" and "/" in it, and a raw "@" (conninfo.h).
#   4. a plan deleted on one server is gone from its sibling's cache at once (NOTIFY).
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/server.sh

server_init hygiene
server_db
SOCK=$(echo "$DATABASE_URL" | sed 's/.*host=\([^ ]*\).*/\1/')
PW='s3cr@t:x/y'
PW_ENC='s3cr%40t%3Ax%2Fy'

# ---- 1. the logs ----
server_start text --workers 1 --executors 1 --http-threads 1 \
    --database-url "$DATABASE_URL password='$PW'"
# A 404 is logged with its path, which arrives percent-decoded.
req GET '/nope%0Ahttp:%20GET%20/forged%20200%0D%1B%5B2J%1B%5D0;pwned%07%7F%C2%9B31m%C3%BC'
check "a forged path is 404" is 404
id=$(hdr X-Request-Id)
line=$(grep -a "request_id=$id" "$tmp/text.log")
want='http: GET /nope\nhttp: GET /forged 200\r\x1b[2J\x1b]0;pwned\x07\x7f\u009b31mü 404'
check "the text log has it on one line, every control escaped, UTF-8 kept" \
    eval '[ "$(grep -ac "request_id=$id" "$tmp/text.log")" = 1 ] && [ "${line#"$want"}" != "$line" ]'
check "... and no raw newline, carriage return, escape or DEL reached the log" \
    eval '! grep -aq "^http: GET /forged" "$tmp/text.log" && ! LC_ALL=C grep -aq "[[:cntrl:]]" <(tr -d "\n" <"$tmp/text.log")'
check "the settings log masks a quoted conninfo password" \
    eval 'grep -q "^  database-url    host=.* password=\*\*\*$" "$tmp/text.log" && ! grep -q "s3cr" "$tmp/text.log"'
server_stop_check text

server_start json --workers 1 --executors 1 --http-threads 1 --log-format json \
    --database-url "postgresql://tpuplan:$PW_ENC@/postgres?host=$SOCK"
req GET '/nope%0A%7B%22module%22:%22forged%22%7D%1B%5B2J'
id=$(hdr X-Request-Id)
check "the JSON log holds the path as one JSON string, controls escaped" \
    eval 'python3 -c "
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if sys.argv[2] in l]
assert len(lines) == 1 and lines[0][\"message\"].startswith(\"GET /nope\n{\\\"module\\\":\\\"forged\\\"}\x1b[2J 404\"), lines
" "$tmp/json.log" "$id" && ! grep -aq "^{\"module\":\"forged\"" "$tmp/json.log" && ! LC_ALL=C grep -aq "[[:cntrl:]]" <(tr -d "\n" <"$tmp/json.log")'
check "the settings log masks a URL password with @ : / percent-encoded" \
    eval 'grep -q "\"message\":\"database-url    postgresql://tpuplan:\*\*\*@/postgres?host=" "$tmp/json.log" && ! grep -q "s3cr" "$tmp/json.log"'
req GET /readyz
check "... and the server connected with that URL" is 200
server_stop_check json
# A raw "@" in a URL's password (libpq then reads a host "ss@", so the server stops at start):
# the settings, printed first, still mask it whole.
timeout 20 "$SERVER" --listen 127.0.0.1:0 --database-url "postgresql://tpuplan:p@ss@/postgres" \
    >"$tmp/raw.log" 2>&1
check "a raw @ in a URL password is masked whole" \
    eval 'grep -q "^  database-url    postgresql://tpuplan:\*\*\*@/postgres$" "$tmp/raw.log" && ! grep "database-url" "$tmp/raw.log" | grep -q "ss@"'

# ---- 3. every client mistake is a 4xx naming the field ----
server_start api --max-body 64K --workers 1 --executors 2 --http-threads 2
MODEL=tests/data/service/tiny.json
# bad_param STATUS WHERE: a problem+json invalid-parameter naming WHERE.
bad_param() { problem 400 invalid-parameter && body_has "\"where\":\"$1\""; }
req GET '/api/v1/plans?chips=v4'
check "an unknown query parameter (?chips=v4) is 400 naming it" \
    eval 'bad_param chips && body_has "chips: unknown parameter (this endpoint takes limit, cursor, name)"'
req GET '/api/v1/chips?chip=v4'
check "... on every endpoint that takes none" \
    eval 'bad_param chip && body_has "chip: unknown parameter (this endpoint takes none)"'
req GET '/api/v1/diff?a=x&b=y&veiw=summary&q=1'
check "... the first named, the rest counted" \
    eval 'bad_param veiw && body_has "; and more"'
req GET '/api/v1/plans?limit=5'
check "... and a parameter it takes is still read" is 200
req GET '/api/v1/plans?name=%FF%FE'
check "a list's ?name= that is not UTF-8 is 400 naming name" bad_param name
req GET '/api/v1/plans?name=Z%C3%BCrich'
check "... and one that is, 200" is 200
req POST /api/v1/plans -H 'Content-Type: application/json' -H $'Idempotency-Key: k\xff' \
    --data-binary @"$MODEL"
check "an Idempotency-Key that is not UTF-8 is 400 naming Idempotency-Key" bad_param Idempotency-Key
req POST '/api/v1/plans?name=n%FF' -H 'Content-Type: application/json' --data-binary @"$MODEL"
check "a plan ?name= that is not UTF-8 is 400 naming name" \
    eval 'bad_param name && body_has "name: must be UTF-8 text"'
# a form needs the dashboard's TPUplan-Client token (crosssite.sh)
form=(-H "TPUplan-Client: hygiene-sh-dashboard-token-$$")
req POST /api/v1/plans "${form[@]}" -F "file=@$MODEL;type=application/json" -F $'name=n\xff'
check "... and so is the form field" eval 'bad_param name && body_has "name: must be UTF-8 text"'
# cursor = base64url("<created_at microseconds>.<id>")
b64url() { printf '%s' "$1" | base64 -w0 | tr '+/' '-_' | tr -d '='; }
for micros in 99999999999999999999999 253402300800000000 -5 -; do
    req GET "/api/v1/plans?cursor=$(b64url "$micros.AAAAAAAAAAAAAAAAAAAAAA")"
    check "a cursor at $micros microseconds is 400, not a failed statement" \
        problem 400 invalid-parameter
done
req GET "/api/v1/plans?cursor=$(b64url 253402300799999999.AAAAAAAAAAAAAAAAAAAAAA)"
check "... the last one that names a time (9999-12-31) is 200" is 200
# The form's file and attachments together within --max-body (64 KiB): 40 + 40 KiB is 413.
head -c 40960 /dev/zero | tr '\0' ' ' >"$tmp/40k"
req POST /api/v1/plans "${form[@]}" -F "file=@$tmp/40k;filename=m.json;type=application/json" \
    -F "xla_assignment=@$tmp/40k"
check "a form whose file and attachment together pass --max-body is 413" \
    eval 'problem 413 body-too-large && body_has "together exceed the limit of 65536 bytes"'
req POST /api/v1/plans "${form[@]}" -F "file=@$tmp/40k;filename=m.json;type=application/json"
check "... the file alone is within it (read, and refused for what it holds)" \
    problem 400 malformed-input
# RFC 9110 15.4.5: a 304 repeats the Cache-Control of its 200.
req POST /api/v1/plans -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data-binary @"$MODEL"
id=$(jstr id)
req GET "/api/v1/plans/$id"
etag=$(hdr ETag)
req GET "/api/v1/plans/$id" -H "If-None-Match: $etag"
check "a 304 carries Cache-Control: no-cache, as its 200" \
    eval 'is 304 && [ "$(hdr Cache-Control)" = no-cache ] && [ "$(hdr ETag)" = "$etag" ]'
req GET "/api/v1/plans/$id?view=summary"
etag=$(hdr ETag)
req GET "/api/v1/plans/$id?view=summary" -H "If-None-Match: $etag"
check "... from the plan cache too" eval 'is 304 && [ "$(hdr Cache-Control)" = no-cache ]'
req GET "/api/v1/diff?a=$id&b=$id"
etag=$(hdr ETag)
req GET "/api/v1/diff?a=$id&b=$id" -H "If-None-Match: $etag"
check "... and a diff's" eval 'is 304 && [ "$(hdr Cache-Control)" = no-cache ]'
# A what-if racing the DELETE of its parent: each what-if is answered 201/202 (before the
# DELETE) or 404/410 (after), never 500.
racing=""
for i in $(seq 8); do
    req POST /api/v1/plans -H 'Content-Type: application/json' --data-binary @"$MODEL"
    pid_=$(jstr id) tok=$(jstr manage_token)
    curl -s -o /dev/null -w '%{http_code}\n' -X POST -H 'Content-Type: application/json' \
        --data '{"dtype":{"*":"bf16"}}' "$base/api/v1/plans/$pid_/whatif" >>"$tmp/race" &
    curl -s -o /dev/null -X DELETE -H "Authorization: Bearer $tok" "$base/api/v1/plans/$pid_"
    wait $!
done
racing=$(sort "$tmp/race" | uniq -c | tr -s ' \n' ' ')
check "a what-if racing its parent's DELETE is 2xx or 404, never 500 ($racing)" \
    eval '! grep -qv -E "^(201|202|404|410)$" "$tmp/race"'
check "no 500 was logged" eval '! grep -E "^http: .* 5[0-9][0-9] " "$tmp/api.log"'
server_stop_check api

# ---- 4. a deleted plan is gone everywhere ----
# Two servers on one database, each caching plan responses for a minute: a plan read on B
# and deleted on A is 404 on B at once (the DELETE's NOTIFY), not a minute later.
server_start a --workers 1 --executors 1 --http-threads 1 --cache-ttl 60
base_a=$base pid_a=$pid
server_start b --workers 1 --executors 1 --http-threads 1 --cache-ttl 60
base_b=$base pid_b=$pid
base=$base_a
req POST /api/v1/plans -H 'Content-Type: application/json' -H 'Prefer: wait=20' \
    --data-binary @"$MODEL"
id=$(jstr id) tok=$(jstr manage_token)
base=$base_b
req GET "/api/v1/plans/$id"
req GET "/api/v1/plans/$id?view=summary"
check "B serves the finished plan (and caches it)" eval 'is 200 && [ "$(curl -s "$base_b/metrics" | grep "^tpuplan_cache_entries " | cut -d" " -f2)" -ge 2 ]'
base=$base_a
req DELETE "/api/v1/plans/$id" -H "Authorization: Bearer $tok"
check "A deletes it (204)" is 204
base=$base_b
t0=$(date +%s%N)
for _ in $(seq 100); do
    req GET "/api/v1/plans/$id"
    is 404 && break
    sleep 0.01
done
ms=$((($(date +%s%N) - t0) / 1000000))
check "B answers 404 at once (after $ms ms; its cache lives 60 s)" eval 'is 404 && [ "$ms" -lt 1000 ]'
req GET "/api/v1/plans/$id?view=summary"
check "... for every view" is 404
server_stop_check a "$pid_a"
server_stop_check b "$pid_b"

tap_end
