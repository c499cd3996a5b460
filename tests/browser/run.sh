#!/usr/bin/env bash
# run.sh - the dashboard in real Chromium (Debian's /usr/bin/chromium driven by playwright-core)
# against the real bin/tpuplan-server on a free loopback port and a throwaway PostgreSQL
# (tests/pg.sh). Prints TAP. Screenshots go to tests/artifacts/ (git-ignored).
#
# playwright-core is pinned in tests/browser/package-lock.json and installed with `npm ci`
# when node_modules is missing; it never downloads a browser.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/server.sh

SERVER=${TPUPLAN_SERVER:-bin/tpuplan-server}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
tmp=$(mktemp -d /tmp/tpuplan-browser.XXXXXX)
pid=""
pid2=""

trap 'if [ -n "$pid2" ]; then kill -TERM "$pid2" 2>/dev/null; fi; server_cleanup' EXIT

bail() {
    echo "Bail out! $*"
    exit 1
}

[ -x "$CHROMIUM" ] || bail "no Chromium at $CHROMIUM (server/scripts/deps.sh test installs it)"
command -v node >/dev/null || bail "no node on PATH (server/scripts/deps.sh test installs it)"
[ -x "$SERVER" ] || bail "no $SERVER: run make first"
if [ ! -d tests/browser/node_modules/playwright-core ]; then
    (cd tests/browser && npm ci --no-audit --no-fund --loglevel=error) >"$tmp/npm.log" 2>&1 ||
        bail "npm ci failed: $(tail -3 "$tmp/npm.log")"
fi

DATABASE_URL=$(tests/pg.sh start "$tmp/pg" 2>"$tmp/pg.err") ||
    bail "cannot start PostgreSQL: $(tail -3 "$tmp/pg.err")"
export DATABASE_URL
"$SERVER" --listen 127.0.0.1:0 --static static --workers 2 --executors 2 --http-threads 2 \
    >"$tmp/server.log" 2>&1 &
pid=$!
port=$(server_port "$tmp/server.log" "$pid")
[ -n "$port" ] || bail "server did not start: $(tail -5 "$tmp/server.log")"
base="http://127.0.0.1:$port"
# A second server on the same database, under a base path as behind a reverse proxy, and
# keeping plans 30 days (the plan page shows the expiry date).
"$SERVER" --listen 127.0.0.1:0 --static static --workers 1 --executors 1 --http-threads 1 \
    --base-path /tpuplan --retain 30d >"$tmp/server2.log" 2>&1 &
pid2=$!
port2=$(server_port "$tmp/server2.log" "$pid2")
[ -n "$port2" ] || bail "second server did not start: $(tail -5 "$tmp/server2.log")"

mkdir -p tests/artifacts
node tests/browser/dashboard.test.mjs "$base" "$tmp" "$CHROMIUM" "http://127.0.0.1:$port2/tpuplan"
rc=$?
kill -TERM "$pid2" 2>/dev/null
wait "$pid2" 2>/dev/null
if [ "$rc" -ne 0 ]; then
    echo "# server log (last lines):"
    tail -15 "$tmp/server.log" | sed 's/^/#   /'
fi
exit "$rc"
