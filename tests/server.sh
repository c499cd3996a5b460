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

# server_init NAME: the preamble of a script that starts servers: $SERVER (TPUPLAN_SERVER or
# bin/tpuplan-server), a scratch folder $tmp (/tmp/tpuplan-NAME.*), the TAP counters, no
# server yet, and server_cleanup as the EXIT trap (a script with more to clean up sets its
# own trap, which calls server_cleanup last).
server_init() {
    SERVER=${TPUPLAN_SERVER:-bin/tpuplan-server}
    tmp=$(mktemp -d "/tmp/tpuplan-$1.XXXXXX")
    pid=""
    pids=()
    n=0
    failed=0
    status=""
    trap server_cleanup EXIT
}

# server_db: a throwaway PostgreSQL cluster under $tmp/pg (tests/pg.sh); exports its
# DATABASE_URL, or bails out.
server_db() {
    if ! DATABASE_URL=$(tests/pg.sh start "$tmp/pg" 2>"$tmp/pg.err"); then
        echo "Bail out! cannot start PostgreSQL: $(tail -3 "$tmp/pg.err")"
        exit 1
    fi
    export DATABASE_URL
}

# server_start NAME ARGS...: $SERVER --listen 127.0.0.1:0 ARGS in the background, its log in
# $tmp/NAME.log; waits until it listens and sets $pid (also kept in $pids for the cleanup),
# $port and $base (http:// or https://, as the server says; no --base-path), or bails out.
server_start() {
    local name=$1
    shift
    "$SERVER" --listen 127.0.0.1:0 "$@" >"$tmp/$name.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    port=$(server_port "$tmp/$name.log" "$pid")
    if [ -z "$port" ]; then
        echo "Bail out! server $name did not start: $(tail -5 "$tmp/$name.log")"
        exit 1
    fi
    base=$(grep -o 'listening on https\?://[0-9.]*:[0-9]*' "$tmp/$name.log" | head -1 |
        sed 's/^listening on //')
}

# What in a server's log means it crashed or broke a rule even when it exited 0: a sanitizer
# report (ASan, LeakSanitizer, UBSan's "runtime error:", TSan) or libmicrohttpd's panic.
SERVER_CRASH_RE='Sanitizer|runtime error:|Fatal error in GNU libmicrohttpd|[Ss]egmentation fault'

# server_stop NAME [PID]: stops server NAME (started by server_start NAME; PID defaults to
# $pid, which is then cleared) with SIGTERM and waits for it. Succeeds when it exited 0 and
# $tmp/NAME.log shows no crash (SERVER_CRASH_RE); otherwise fails and says why in $why.
server_stop() {
    local name=$1 p=${2:-$pid} rc crash
    kill -TERM "$p" 2>/dev/null
    wait "$p" 2>/dev/null
    rc=$?
    [ "$p" = "${pid:-}" ] && pid=""
    crash=$(grep -m1 -E "$SERVER_CRASH_RE" "$tmp/$name.log" 2>/dev/null)
    [ "$rc" = 0 ] && [ -z "$crash" ] && return 0
    why="server $name: exit status $rc${crash:+; its log: $crash}"
    return 1
}

# server_stop_check NAME [PID]: server_stop as one TAP test.
server_stop_check() {
    check "SIGTERM stops $1 (exit 0, no sanitizer report or crash in $1.log)" server_stop "$@"
}

# server_cleanup: the EXIT trap: stops every server started ($pid, $pids) with SIGTERM (or
# $server_stop_signal), the throwaway cluster under $tmp/pg, and removes $tmp.
server_cleanup() {
    local p
    for p in ${pid:-} ${pids[@]+"${pids[@]}"}; do
        if kill -0 "$p" 2>/dev/null; then
            kill -"${server_stop_signal:-TERM}" "$p" 2>/dev/null || true
            wait "$p" 2>/dev/null || true
        fi
    done
    tests/pg.sh stop "$tmp/pg" >/dev/null 2>&1 || true
    rm -rf "$tmp"
}

# TAP for the scripts that check HTTP answers: the counters are $n and $failed
# (server_init), and $status and $tmp/b hold the last response.
ok() { n=$((n + 1)); echo "ok $n - $1"; }
# nok NAME [LINE...]: a failure, with the caller's lines under it; without any, the last
# response's status and body.
nok() {
    n=$((n + 1))
    failed=$((failed + 1))
    echo "not ok $n - $1"
    shift
    if [ $# -eq 0 ]; then
        set -- "status ${status:-}" "$(head -c 400 "$tmp/b" 2>/dev/null)"
    fi
    local line
    for line in "$@"; do echo "#   $line"; done
}
# check NAME COMMAND...: ok when the command succeeds; a failure shows $why when the
# command left one there (then cleared), else the last response.
check() {
    local name=$1
    shift
    if "$@"; then
        ok "$name"
    elif [ -n "${why:-}" ]; then
        nok "$name" "$why"
    else
        nok "$name"
    fi
    why=""
}
# tap_end: the plan line, and the script's exit status (1 when a check failed).
tap_end() {
    echo "1..$n"
    [ "$failed" -eq 0 ]
}

# The last response, for the scripts that keep it in $tmp/h and $tmp/b:
# req METHOD PATH [curl args...]: sets $status; headers in $tmp/h, body in $tmp/b.
req() {
    local m=$1 p=$2
    shift 2
    status=$(curl -s --path-as-is -X "$m" -o "$tmp/b" -D "$tmp/h" -w '%{http_code}' "$@" \
        "$base$p")
}
hdr() { grep -i "^$1:" "$tmp/h" | head -1 | cut -d: -f2- | sed 's/^ *//; s/\r$//'; }
# jstr KEY: the first string value of KEY in the last body (compact or spaced JSON).
jstr() { grep -o "\"$1\" *: *\"[^\"]*\"" "$tmp/b" | head -1 | sed 's/.*: *"\(.*\)"/\1/'; }
body_has() { grep -q -- "$1" "$tmp/b"; }
is() { [ "$status" = "$1" ]; }
# problem STATUS SLUG: a problem+json body of that status and type ($problem_base: the
# server's --base-path, which prefixes the type).
problem() {
    is "$1" && hdr Content-Type | grep -q '^application/problem+json' &&
        body_has "\"type\":\"${problem_base:-}/problems/$2\"" && body_has "\"status\":$1"
}
sql() { psql "$DATABASE_URL" -X -Atc "$1" 2>>"$tmp/psql.err"; }
# acts_model N NAME: prints a model named NAME of N activations layers.I.h, bf16 [8,128], each
# live over [i, i + 4): any size of plan, quick to plan.
acts_model() {
    awk -v n="$1" -v name="$2" 'BEGIN {
        printf "{\"name\":\"%s\",\"chip\":\"v5e\",\"tensors\":[", name
        for (i = 0; i < n; i++)
            printf "%s{\"name\":\"layers.%d.h\",\"shape\":[8,128],\"dtype\":\"bf16\",\"kind\":\"activation\",\"live\":[%d,%d]}",
                (i ? "," : ""), i, i, i + 4
        print "]}"
    }'
}
