#!/usr/bin/env bash
# healthcheck.sh - the image's HEALTHCHECK: GET BASE/healthz from the server in this
# container and succeed on a 200. It reads the settings the server reads from the
# environment: TPUPLAN_LISTEN (host:port; 0.0.0.0, :: or no host: ask 127.0.0.1),
# TPUPLAN_BASE_PATH (the path prefix) and TPUPLAN_TLS_CERT (set: the server speaks https,
# so the request goes through `openssl s_client`; the slim image has no curl, and openssl
# comes with ca-certificates). The probe asks for liveness over loopback, not identity, so
# it does not verify the certificate. tests/integration/tls.sh and proxy.sh run this very
# script against real servers.
set -uo pipefail
trap '' PIPE # a server that hangs up early is unhealthy, not a signal that kills the check

listen=${TPUPLAN_LISTEN:-127.0.0.1:8080}
port=${listen##*:}
host=${listen%:*}
host=${host#[}
host=${host%]}
case "$host" in "" | 0.0.0.0 | "::") host=127.0.0.1 ;; esac
base=${TPUPLAN_BASE_PATH:-}
base=${base%/}
# Host: localhost, a name the server always accepts (its Host check, --public-url: guard.h).
request="GET $base/healthz HTTP/1.0\r\nHost: localhost\r\n\r\n"

addr=$host:$port
case "$host" in *:*) addr="[$host]:$port" ;; esac # an IPv6 address

if [ -n "${TPUPLAN_TLS_CERT:-}" ]; then
    # -quiet implies -ign_eof: s_client waits for the server to close after its answer.
    # shellcheck disable=SC2059 # the request holds the \r\n escapes printf expands
    status=$(printf "$request" | timeout 5 openssl s_client -quiet -connect "$addr" \
        -servername localhost 2>/dev/null | head -n 1)
else
    exec 3<>"/dev/tcp/$host/$port" || exit 1
    # shellcheck disable=SC2059
    printf "$request" >&3 2>/dev/null
    status=$(timeout 5 head -n 1 <&3)
fi
case "$status" in "HTTP/1."?" 200 "*) exit 0 ;; esac
echo "healthcheck: GET $base/healthz on $host:$port answered: ${status:-nothing}" >&2
exit 1
