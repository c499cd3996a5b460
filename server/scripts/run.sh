#!/usr/bin/env bash
# run.sh start|stop - `make run` / `make stop`: the server with its database, in one command.
#
#   start  With DATABASE_URL set, uses that database. Without it, creates (the first time)
#          and starts a PostgreSQL cluster private to this checkout: data under var/pg,
#          reachable only through a Unix socket (no TCP port, socket mode 0700). Then runs
#          bin/tpuplan-server in the foreground (it applies the migrations itself) and prints
#          the dashboard URL. Ctrl-C (or `make stop` from another terminal) stops the server
#          and the PostgreSQL it started. Listens on 127.0.0.1:8080 unless LISTEN=HOST:PORT
#          or PORT=N says otherwise.
#   stop   Stops what `start` started (pid files under var/run). Idempotent.
#
# PostgreSQL refuses to run as root, so as root the cluster belongs to user postgres and
# its binaries run through runuser. A checkout under /root is not traversable by postgres:
# then the cluster lives in /var/lib/tpuplan/<checkout hash> instead, and var/pg.location
# records where. The socket goes next to the data unless that path is too long for a Unix
# socket (~107 bytes), in which case it goes to /tmp/tpuplan-<checkout hash>.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
var=$root/var
rundir=$var/run
mkdir -p "$rundir"
hash=$(printf '%s' "$root" | sha256sum | cut -c1-12)

as_pg=()
if [ "$(id -u)" -eq 0 ]; then
    as_pg=(runuser -u postgres -- env -C /)
fi

log() { echo "run.sh: $*" >&2; }

pg_bindir() {
    command -v pg_config >/dev/null 2>&1 || {
        log "pg_config not found: run 'make deps' or server/scripts/deps.sh run"
        exit 1
    }
    pg_config --bindir
}

# Where the embedded cluster lives: var/pg, unless postgres cannot reach it (see above).
pg_location() {
    if [ -f "$var/pg.location" ]; then
        cat "$var/pg.location"
        return
    fi
    local base=$var/pg
    if [ ${#as_pg[@]} -gt 0 ] && ! runuser -u postgres -- test -x "$var"; then
        base=/var/lib/tpuplan/$hash
    fi
    echo "$base" >"$var/pg.location"
    echo "$base"
}

pg_socket_dir() {
    local base=$1
    if [ ${#base} -le 80 ]; then
        echo "$base/run"
    else
        echo "/tmp/tpuplan-$hash"
    fi
}

pg_running() {
    local bindir=$1 data=$2
    [ -f "$data/postmaster.pid" ] && "${as_pg[@]}" "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1
}

# Creates (once) and starts the embedded cluster; prints its conninfo.
pg_up() {
    local bindir base data sock
    bindir=$(pg_bindir)
    base=$(pg_location)
    data=$base/data
    sock=$(pg_socket_dir "$base")
    mkdir -p "$base" "$sock"
    if [ ${#as_pg[@]} -gt 0 ]; then
        chown postgres: "$base" "$sock"
    fi
    chmod 700 "$base" "$sock"
    if [ ! -f "$data/PG_VERSION" ]; then
        log "creating a PostgreSQL cluster in $data"
        "${as_pg[@]}" "$bindir/initdb" -D "$data" -A trust -U tpuplan -E UTF8 \
            --locale=C.UTF-8 >"$base/initdb.log" 2>&1 || {
            cat "$base/initdb.log" >&2
            exit 1
        }
    fi
    if ! pg_running "$bindir" "$data"; then
        log "starting PostgreSQL (socket in $sock)"
        "${as_pg[@]}" "$bindir/pg_ctl" -D "$data" -l "$base/log" -w -t 60 \
            -o "-k $sock -c listen_addresses='' -c unix_socket_permissions=0700" start \
            >/dev/null || {
            tail -n 20 "$base/log" >&2
            exit 1
        }
        touch "$rundir/pg.started"
    fi
    # A database of our own (the first time only).
    if [ "$("$bindir/psql" -h "$sock" -U tpuplan -d postgres -Atc \
        "SELECT 1 FROM pg_database WHERE datname = 'tpuplan'")" != 1 ]; then
        "$bindir/createdb" -h "$sock" -U tpuplan tpuplan
    fi
    echo "host=$sock dbname=tpuplan user=tpuplan"
}

pg_down() {
    [ -f "$rundir/pg.started" ] || return 0
    local bindir base
    bindir=$(pg_bindir)
    base=$(pg_location)
    if pg_running "$bindir" "$base/data"; then
        log "stopping PostgreSQL"
        "${as_pg[@]}" "$bindir/pg_ctl" -D "$base/data" -m fast -w stop >/dev/null || true
    fi
    rm -f "$rundir/pg.started"
}

server_down() {
    local pidf=$rundir/server.pid pid
    [ -f "$pidf" ] || return 0
    pid=$(cat "$pidf")
    if kill -0 "$pid" 2>/dev/null; then
        log "stopping tpuplan-server (pid $pid)"
        kill -TERM "$pid" 2>/dev/null || true
        for _ in $(seq 1 150); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        if kill -0 "$pid" 2>/dev/null; then
            log "tpuplan-server did not stop in 15 s: killing it"
            kill -KILL "$pid" 2>/dev/null || true
        fi
    fi
    rm -f "$pidf"
}

# Waits until something accepts connections on host:port (bash's /dev/tcp; no curl).
wait_port() {
    local host=$1 port=$2 pid=$3
    for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || return 1
        if (exec 3<>"/dev/tcp/$host/$port") 2>/dev/null; then
            return 0
        fi
        sleep 0.1
    done
    return 1
}

start() {
    local server=$root/bin/tpuplan-server listen host port url spid rc=0
    [ -x "$server" ] || {
        log "$server is missing: run make"
        exit 1
    }
    if [ -f "$rundir/server.pid" ] && kill -0 "$(cat "$rundir/server.pid")" 2>/dev/null; then
        log "already running (pid $(cat "$rundir/server.pid")); make stop first"
        exit 1
    fi
    if [ -z "${DATABASE_URL:-}" ]; then
        DATABASE_URL=$(pg_up)
        export DATABASE_URL
    fi
    listen=${LISTEN:-127.0.0.1:${PORT:-8080}}
    host=${listen%:*}
    port=${listen##*:}
    host=${host#[}
    host=${host%]}
    case "$host" in "" | 0.0.0.0 | "::") host=127.0.0.1 ;; esac

    "$server" --listen "$listen" &
    spid=$!
    echo "$spid" >"$rundir/server.pid"
    # Ctrl-C and `make stop` both end here: stop the server, then the database.
    trap 'kill -TERM $spid 2>/dev/null || true' INT TERM
    if wait_port "$host" "$port" "$spid"; then
        url="http://$host:$port/"
        [ "$host" = 127.0.0.1 ] && [ "${listen%:*}" != 127.0.0.1 ] && url="http://localhost:$port/"
        echo
        echo "  tpuplan dashboard: $url"
        echo "  (Ctrl-C or 'make stop' stops the server and the database it started)"
        echo
    fi
    # wait returns early when a trapped signal arrives: wait again for the real exit.
    while kill -0 "$spid" 2>/dev/null; do
        wait "$spid" || rc=$?
    done
    rm -f "$rundir/server.pid"
    pg_down
    return "$rc"
}

case "${1:-}" in
start) start ;;
stop)
    server_down
    pg_down
    ;;
*)
    echo "usage: server/scripts/run.sh start|stop" >&2
    exit 2
    ;;
esac
