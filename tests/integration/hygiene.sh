#!/usr/bin/env bash
# hygiene.sh - what a careless or hostile client leaves in the server's logs, and the
# settings log's database password, against a throwaway PostgreSQL over real HTTP. Prints
# TAP.
#
#   1. the text log: a path with percent-encoded newlines, carriage returns and terminal
#      escapes is logged as one line, its controls escaped (log.h); the JSON log keeps them
#      inside one JSON string;
#   2. the settings log masks the database password whole: a conninfo's quoted password, a
#      URL's percent-encoded one with "@", ":" and "/" in it, and a raw "@" (conninfo.h).
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

tap_end
