# server.sh - sourced by the scripts that start bin/tpuplan-server on a free port
# (tests/integration/*.sh, tests/browser/run.sh, tests/bench/bench_server.sh).

# Test and benchmark servers run without the per-client submission rate limit: the suites
# submit hundreds of plans from 127.0.0.1 on purpose. tests/integration/limits.sh and the
# soak test the limit with their own --rate-limit (a flag wins over the environment).
export TPUPLAN_RATE_LIMIT=${TPUPLAN_RATE_LIMIT:-0}

# server_port LOG PID: waits up to 15 s for the server logging to LOG to say where it
# listens (it binds port 0) and prints the port; prints nothing when PID exits first or
# the time runs out, so the caller can report the log's tail.
server_port() {
    local log=$1 pid=$2 port=""
    for _ in $(seq 150); do
        port=$(grep -o 'listening on https\?://[0-9.]*:[0-9]*' "$log" 2>/dev/null | head -1 |
            sed 's/.*://')
        [ -n "$port" ] && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    echo "$port"
}

# server_cleanup: the EXIT trap of a script that started one server ($pid, may be empty)
# on a throwaway cluster under its scratch folder ($tmp/pg): stops both, removes $tmp.
server_cleanup() {
    if [ -n "${pid:-}" ] && kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    fi
    tests/pg.sh stop "$tmp/pg" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}

# TAP for the scripts that check HTTP answers (keys.sh, tls.sh, proxy.sh): they set n=0,
# failed=0, and $status and $tmp/b for the last response, which a failure shows.
ok() { n=$((n + 1)); echo "ok $n - $1"; }
nok() {
    n=$((n + 1))
    failed=$((failed + 1))
    echo "not ok $n - $1"
    echo "#   status $status: $(head -c 300 "$tmp/b" 2>/dev/null)"
}
# check NAME COMMAND...: ok when the command succeeds.
check() {
    local name=$1
    shift
    if "$@"; then ok "$name"; else nok "$name"; fi
}
