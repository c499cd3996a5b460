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

server_init browser
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}

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

server_db
server_start server --static static --workers 2 --executors 2 --http-threads 2
base1=$base
pid1=$pid
# A second server on the same database, under a base path as behind a reverse proxy, and
# keeping plans 30 days (the plan page shows the expiry date).
server_start server2 --static static --workers 1 --executors 1 --http-threads 1 \
    --base-path /tpuplan --retain 30d
base2=$base
pid2=$pid
# A third under --require-key, and a key for it (the same database): the upload form asks
# for the key and sends it.
key=$("$SERVER" key create browser 2>"$tmp/key.err") || bail "key create failed: $(tail -3 "$tmp/key.err")"
server_start server3 --static static --workers 1 --executors 1 --http-threads 1 --require-key
base3=$base
pid3=$pid
pid=$pid1

mkdir -p tests/artifacts
node tests/browser/dashboard.test.mjs "$base1" "$tmp" "$CHROMIUM" "$base2/tpuplan" "$base3" "$key"
rc=$?
# node printed the TAP plan, so a server that stops badly fails the suite by its exit status
server_stop server "$pid1" || { echo "# $why"; rc=1; }
server_stop server2 "$pid2" || { echo "# $why"; rc=1; }
server_stop server3 "$pid3" || { echo "# $why"; rc=1; }
if [ "$rc" -ne 0 ]; then
    echo "# server log (last lines):"
    tail -15 "$tmp/server.log" | sed 's/^/#   /'
fi
exit "$rc"
