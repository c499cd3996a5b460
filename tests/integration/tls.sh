#!/usr/bin/env bash
# tls.sh - https straight from libmicrohttpd (--tls-cert/--tls-key) with a throwaway
# self-signed certificate made here with openssl, against a throwaway PostgreSQL: the
# certificate is the one served, a plan goes through over https, plain http is refused,
# only TLS 1.2 and 1.3 are spoken, every https answer carries HSTS (and no http one does),
# and a key that does not load stops the server at start. Prints TAP.
set -uo pipefail
cd "$(dirname "$0")/../.."
. tests/server.sh

server_init tls

command -v openssl >/dev/null || {
    echo "Bail out! no openssl (server/scripts/deps.sh test installs it)"
    exit 1
}
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
    -keyout "$tmp/key.pem" -out "$tmp/cert.pem" >"$tmp/openssl.log" 2>&1 ||
    {
        echo "Bail out! openssl req failed: $(tail -3 "$tmp/openssl.log")"
        exit 1
    }
server_db

"$SERVER" --listen 127.0.0.1:0 --workers 1 --executors 1 --http-threads 1 \
    --tls-cert "$tmp/cert.pem" --tls-key "$tmp/cert.pem" >"$tmp/bad.log" 2>&1
rc=$?
check "a --tls-key that is not a key stops the server at start (exit $rc)" \
    eval '[ "$rc" != 0 ] && grep -q "TLS certificate and key do not load" "$tmp/bad.log"'
"$SERVER" --listen 127.0.0.1:0 --workers 1 --executors 1 --http-threads 1 \
    --tls-cert "$tmp/cert.pem" >"$tmp/bad2.log" 2>&1
rc=$?
check "--tls-cert without --tls-key is a usage error (exit $rc)" \
    eval '[ "$rc" = 2 ] && grep -q "go together" "$tmp/bad2.log"'

server_start server --workers 1 --executors 2 --http-threads 2 --tls-cert "$tmp/cert.pem" \
    --tls-key "$tmp/key.pem"
check "the server says it listens on https" grep -q "listening on https://127.0.0.1:$port/" "$tmp/server.log"

status=$(curl -s --cacert "$tmp/cert.pem" -o "$tmp/b" -w '%{http_code}' "$base/healthz")
check "GET /healthz over https, verified against the throwaway certificate" \
    eval '[ "$status" = 200 ] && grep -q "\"ok\"" "$tmp/b"'
served=$(openssl s_client -connect "127.0.0.1:$port" -servername localhost </dev/null 2>/dev/null |
    openssl x509 -noout -fingerprint -sha256 2>/dev/null)
want=$(openssl x509 -in "$tmp/cert.pem" -noout -fingerprint -sha256)
check "the certificate served is --tls-cert" eval '[ -n "$served" ] && [ "$served" = "$want" ]'
# RFC 8996: no TLS 1.0 or 1.1. The client offers only the version named (-tls1 ...) and
# may use it (SECLEVEL=0: Debian's OpenSSL refuses 1.0 and 1.1 itself otherwise), so a
# handshake without a cipher is the server's refusal.
for v in 1:1.0 1_1:1.1 1_2:1.2 1_3:1.3; do
    cipher=$(openssl s_client -connect "127.0.0.1:$port" -servername localhost "-tls${v%%:*}" \
        -cipher 'DEFAULT:@SECLEVEL=0' </dev/null 2>/dev/null | sed -n 's/^New, .*, Cipher is //p')
    case $v in
    1:* | 1_1:*) check "TLS ${v#*:} is refused (cipher: ${cipher:-none})" \
        eval '[ -z "$cipher" ] || [ "$cipher" = "(NONE)" ]' ;;
    *) check "TLS ${v#*:} is spoken ($cipher)" eval '[ -n "$cipher" ] && [ "$cipher" != "(NONE)" ]' ;;
    esac
done
hsts=$(curl -s --cacert "$tmp/cert.pem" -D - -o /dev/null "$base/healthz" | tr -d '\r' |
    sed -n 's/^[Ss]trict-[Tt]ransport-[Ss]ecurity: //p')
check "an https answer carries Strict-Transport-Security ($hsts)" [ "$hsts" = "max-age=31536000" ]
hsts=$(curl -s --cacert "$tmp/cert.pem" -D - -o /dev/null "$base/api/v1/plans/nope" | tr -d '\r' |
    grep -ci '^strict-transport-security: max-age=31536000$')
check "... an error too" [ "$hsts" = 1 ]
status=$(curl -s -o "$tmp/b" -w '%{http_code}' "$base/healthz")
check "a client that does not trust the self-signed certificate is refused (curl: $status)" \
    [ "$status" = 000 ]
model='{"name":"tls-test","chip":"v5e","tensors":[{"name":"w","shape":[4,128],"dtype":"f32","kind":"param"}]}'
status=$(curl -s --cacert "$tmp/cert.pem" -o "$tmp/b" -w '%{http_code}' -X POST \
    -H 'Content-Type: application/json' -H 'Prefer: wait=10' --data "$model" "$base/api/v1/plans")
check "a plan is submitted and finished over https" \
    eval '[ "$status" = 201 ] && grep -q "\"status\":\"done\"" "$tmp/b"'
status=$(curl -s -m 5 -o "$tmp/b" -w '%{http_code}' "http://127.0.0.1:$port/healthz")
check "plain http on the https port gets no HTTP answer (curl: $status)" \
    eval '[ "$status" = 000 ] || [ "$status" = 400 ]'
# The image's HEALTHCHECK command (docker/healthcheck.sh), with the settings a container
# would give the server in its environment.
TPUPLAN_LISTEN=0.0.0.0:$port TPUPLAN_TLS_CERT=$tmp/cert.pem docker/healthcheck.sh 2>"$tmp/hc.err"
hc=$?
check "the HEALTHCHECK command passes against the https server (exit $hc)" [ "$hc" = 0 ]
TPUPLAN_LISTEN=0.0.0.0:$port TPUPLAN_TLS_CERT= docker/healthcheck.sh 2>"$tmp/hc.err"
hc=$?
check "... and plain HTTP to it fails, saying what it got (exit $hc)" \
    eval '[ "$hc" = 1 ] && grep -q "healthcheck: GET /healthz on 127.0.0.1:$port" "$tmp/hc.err"'

server_stop_check server

# Plain http: no HSTS (RFC 6797 8.1: a UA ignores it over http, and it would be a lie).
server_start plain --workers 1 --executors 1 --http-threads 1
check "a plain-http answer carries no Strict-Transport-Security" \
    eval '! curl -s -D - -o /dev/null "$base/healthz" | grep -qi "^strict-transport-security"'
server_stop_check plain
tap_end
