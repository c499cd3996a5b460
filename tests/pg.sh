#!/usr/bin/env bash
# pg.sh - a throwaway PostgreSQL cluster for tests (Unix socket only, no TCP port).
#
#   tests/pg.sh start DIR   create (first time) and start a cluster; print its conninfo
#                           (libpq key=value: "host=/tmp/tpuplan-pg.XXXX dbname=postgres
#                           user=tpuplan") on stdout, e.g. DATABASE_URL=$(tests/pg.sh start d)
#   tests/pg.sh url DIR     print the conninfo again
#   tests/pg.sh log DIR     print the path of the server's log
#   tests/pg.sh pause DIR   stop the server but keep the data (fault tests), `start` resumes it
#   tests/pg.sh stop DIR    stop the server and delete everything (idempotent)
#
# DIR only holds a pointer file: the data directory and the socket live together in a
# short /tmp/tpuplan-pg.XXXX folder, because socket paths are limited to ~107 bytes and
# because as root the cluster runs as user postgres, which may not be able to enter DIR
# (a checkout under /root is mode 700). initdb refuses to run as root, so as root every
# server binary runs through `runuser -u postgres --`. Durability is off (fsync, WAL
# flush): the data is disposable and the cluster is ready in about a second.
# TPUPLAN_PG_OPTIONS adds server settings at start, e.g. "-c log_statement=all" for a test
# that reads what reached the database's log.
set -euo pipefail

usage() {
    echo "usage: tests/pg.sh start|url|log|pause|stop DIR" >&2
    exit 2
}
[ $# -eq 2 ] || usage
cmd=$1
dir=$2

bindir=$(pg_config --bindir)
as_pg=()
if [ "$(id -u)" -eq 0 ]; then
    as_pg=(runuser -u postgres -- env -C /)
fi

base=""
[ -f "$dir/base" ] && base=$(cat "$dir/base")

conninfo() {
    echo "host=$base dbname=postgres user=tpuplan"
}

server_up() {
    [ -n "$base" ] && [ -f "$base/data/postmaster.pid" ] &&
        "${as_pg[@]}" "$bindir/pg_ctl" -D "$base/data" status >/dev/null 2>&1
}

case "$cmd" in
start)
    mkdir -p "$dir"
    if [ -z "$base" ] || [ ! -d "$base/data" ]; then
        base=$(mktemp -d /tmp/tpuplan-pg.XXXXXX)
        chmod 755 "$base"
        [ ${#as_pg[@]} -gt 0 ] && chown postgres: "$base"
        "${as_pg[@]}" "$bindir/initdb" -D "$base/data" -A trust -U tpuplan -E UTF8 \
            --locale=C.UTF-8 --no-sync >"$base/initdb.log" 2>&1 || {
            cat "$base/initdb.log" >&2
            exit 1
        }
        echo "$base" >"$dir/base"
    fi
    if ! server_up; then
        # -k: socket next to the data; listen_addresses='': no TCP at all.
        "${as_pg[@]}" "$bindir/pg_ctl" -D "$base/data" -l "$base/log" -w -t 30 \
            -o "-k $base -c listen_addresses='' -c fsync=off -c synchronous_commit=off \
-c full_page_writes=off -c max_connections=200 ${TPUPLAN_PG_OPTIONS:-}" start >/dev/null || {
            tail -n 20 "$base/log" >&2
            exit 1
        }
    fi
    conninfo
    ;;
url)
    [ -n "$base" ] || {
        echo "pg.sh: no cluster in $dir" >&2
        exit 1
    }
    conninfo
    ;;
log)
    [ -n "$base" ] || {
        echo "pg.sh: no cluster in $dir" >&2
        exit 1
    }
    echo "$base/log"
    ;;
pause)
    if server_up; then
        "${as_pg[@]}" "$bindir/pg_ctl" -D "$base/data" -m fast -w stop >/dev/null
    fi
    ;;
stop)
    if server_up; then
        "${as_pg[@]}" "$bindir/pg_ctl" -D "$base/data" -m immediate -w stop >/dev/null || true
    fi
    case "$base" in /tmp/tpuplan-pg.*) rm -rf "$base" ;; esac
    rm -f "$dir/base"
    rmdir "$dir" 2>/dev/null || true
    ;;
*) usage ;;
esac
