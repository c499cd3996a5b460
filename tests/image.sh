#!/usr/bin/env bash
# image.sh - `make image`: builds docker/Dockerfile with podman, runs the image against a
# throwaway PostgreSQL (tests/pg.sh; its Unix socket mounted into the container), and
# checks it over real HTTP: /readyz, one plan submitted and finished, the non-root user,
# the HEALTHCHECK (also of a second container serving https under a base path), settings
# taken from the environment, and a graceful stop. Prints TAP.
#
# No registry needs to be reachable: when the base image (TPUPLAN_IMAGE_BASE, default
# localhost/debian:bookworm) is missing, it is made with debootstrap from the Debian mirror
# and imported. Where podman run cannot start containers as is (a sandbox without cgroups),
# it retries with --cgroups=disabled and an OCI runtime wrapper that drops the cgroup and
# rlimit settings (docker/README.md#make-image); a real machine needs neither.
set -uo pipefail
cd "$(dirname "$0")/.."
. tests/server.sh

BASE_IMAGE=${TPUPLAN_IMAGE_BASE:-localhost/debian:bookworm}
IMAGE=localhost/tpuplan:make-image
server_init image
name=tpuplan-image-$$

cleanup() {
    podman rm -f -t 2 "$name" "$name-tls" >/dev/null 2>&1
    server_cleanup
}
trap cleanup EXIT

bail() {
    echo "Bail out! $*"
    exit 1
}

command -v podman >/dev/null || bail "no podman (server/scripts/deps.sh image installs it)"

# ---- the base image ----
if ! podman image exists "$BASE_IMAGE"; then
    command -v debootstrap >/dev/null || bail "no $BASE_IMAGE and no debootstrap to make it"
    echo "# making $BASE_IMAGE with debootstrap (once)"
    debootstrap --variant=minbase bookworm "$tmp/rootfs" http://deb.debian.org/debian \
        >"$tmp/debootstrap.log" 2>&1 || bail "debootstrap failed: $(tail -3 "$tmp/debootstrap.log")"
    tar -C "$tmp/rootfs" -c . | podman import - "$BASE_IMAGE" >/dev/null ||
        bail "podman import failed"
    rm -rf "$tmp/rootfs"
fi

# ---- build ----
# Docker format: OCI image configs have no HEALTHCHECK. Plain first; where RUN steps cannot get a cgroup (this sandbox: "cgroups in hybrid mode
# not supported"), again with chroot isolation, which needs none.
build() {
    podman build --format docker "$@" -f docker/Dockerfile --ignorefile docker/Dockerfile.dockerignore \
        --build-arg BUILD_IMAGE="$BASE_IMAGE" --build-arg RUN_IMAGE="$BASE_IMAGE" -t "$IMAGE" . \
        >"$tmp/build.log" 2>&1
}
t0=$(date +%s)
how=plain
if ! build; then
    echo "# plain podman build failed: $(grep -m1 -o 'cgroups[^:]*' "$tmp/build.log" || tail -1 "$tmp/build.log")"
    how="--isolation chroot"
    build --isolation chroot
fi
if [ $? = 0 ]; then
    ok "podman build -f docker/Dockerfile ($how, $(($(date +%s) - t0)) s)"
else
    nok "podman build -f docker/Dockerfile" "$(tail -5 "$tmp/build.log")"
    tap_end
    exit 1
fi
user=$(podman image inspect --format '{{.Config.User}}' "$IMAGE")
check "the image runs as a non-root user ($user)" eval '[ -n "$user" ] && [ "$user" != 0 ] && [ "$user" != root ]'
hc=$(podman image inspect --format '{{json .Config.Healthcheck}}' "$IMAGE" 2>/dev/null)
check "the image has a HEALTHCHECK" eval 'echo "$hc" | grep -q /app/bin/healthcheck'

# ---- run against a throwaway PostgreSQL ----
server_db
sock=$(sed -n 's/^host=\([^ ]*\) .*/\1/p' <<<"$DATABASE_URL")
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
run_args=(--name "$name" --network host -v "$sock:/pgsock"
    -e "DATABASE_URL=host=/pgsock dbname=postgres user=tpuplan"
    -e "TPUPLAN_LISTEN=127.0.0.1:$port" -e TPUPLAN_WORKERS=1 -e TPUPLAN_RETAIN=30d)

# wait_ready URL [CURL-OPTION...] : polls URL for up to 30 s until it answers 200; the last
# status in $status, the body in $tmp/b
wait_ready() {
    local url=$1
    shift
    status=000
    for _ in $(seq 150); do
        status=$(curl -s "$@" -o "$tmp/b" -w '%{http_code}' "$url")
        [ "$status" = 200 ] && break
        sleep 0.2
    done
}

# A sandbox without cgroup delegation: crun through a wrapper that drops what it cannot set.
sandbox_runtime() {
    mkdir -p "$tmp/rt"
    cat >"$tmp/rt/crun" <<'SH'
#!/bin/sh
# Drops process.rlimits, linux.resources and linux.cgroupsPath from the bundle's
# config.json (create, run) and rlimits from an exec's --process file, then runs crun.
bundle=.
proc=""
prev=""
for a in "$@"; do
    case "$prev" in --bundle | -b) bundle=$a ;; --process | -p) proc=$a ;; esac
    case "$a" in --process=*) proc=${a#--process=} ;; esac
    prev=$a
done
python3 - "$bundle/config.json" "$proc" <<'PY'
import json, os, sys
for p in sys.argv[1:]:
    if not p or not os.path.isfile(p):
        continue
    c = json.load(open(p))
    proc = c.get("process", c)
    proc.pop("rlimits", None)
    c.get("linux", {}).pop("resources", None)
    c.get("linux", {}).pop("cgroupsPath", None)
    json.dump(c, open(p, "w"))
PY
exec /usr/bin/crun "$@"
SH
    chmod +x "$tmp/rt/crun"
}

how=plain
pm=(podman)
run_extra=()
if ! podman run -d "${run_args[@]}" "$IMAGE" >"$tmp/run.log" 2>&1; then
    echo "# plain podman run failed: $(tail -1 "$tmp/run.log")"
    podman rm -f "$name" >/dev/null 2>&1
    sandbox_runtime
    how=sandbox
    # Every podman call that starts a process in the container (run, exec, healthcheck)
    # goes through the wrapper runtime, in a mount namespace without the cgroup2 mount.
    pm=(podman --runtime "$tmp/rt/crun")
    if mountpoint -q /sys/fs/cgroup/unified 2>/dev/null; then
        pm=(unshare -m sh -c 'umount /sys/fs/cgroup/unified; exec "$0" "$@"' "${pm[@]}")
    fi
    run_extra=(--cgroups=disabled)
    "${pm[@]}" run -d "${run_extra[@]}" "${run_args[@]}" "$IMAGE" >"$tmp/run.log" 2>&1 ||
        bail "podman run failed: $(tail -3 "$tmp/run.log")"
fi
echo "# podman run: $how"
base="http://127.0.0.1:$port"
wait_ready "$base/readyz"
check "the container migrates the database and answers /readyz 200" [ "$status" = 200 ]
[ "$status" = 200 ] || podman logs "$name" 2>&1 | tail -5 | sed 's/^/#   /'
model='{"name":"image-test","chip":"v5e","tensors":[{"name":"w","shape":[4,128],"dtype":"f32","kind":"param"}]}'
status=$(curl -s -o "$tmp/b" -w '%{http_code}' -X POST -H 'Content-Type: application/json' \
    -H 'Prefer: wait=20' --data "$model" "$base/api/v1/plans")
check "a plan is submitted and finished in the container" \
    eval '[ "$status" = 201 ] && grep -q "\"status\":\"done\"" "$tmp/b"'
check "settings come from the environment (TPUPLAN_RETAIN=30d gives the plan an expiry)" \
    grep -q '"expires_at":"20' "$tmp/b"
cpid=$(podman inspect --format '{{.State.Pid}}' "$name" 2>/dev/null)
uid=$(stat -c %u "/proc/$cpid" 2>/dev/null)
check "the server process is not root (uid $uid)" eval '[ -n "$uid" ] && [ "$uid" != 0 ]'
"${pm[@]}" healthcheck run "$name" >"$tmp/hc.log" 2>&1
hc_rc=$?
check "the HEALTHCHECK passes (podman healthcheck run: $hc_rc)" [ "$hc_rc" = 0 ]
[ "$hc_rc" = 0 ] || sed 's/^/#   /' "$tmp/hc.log" | tail -3

# ---- the HEALTHCHECK of a container serving https under a base path ----
# docker/healthcheck.sh follows TPUPLAN_TLS_CERT (openssl s_client) and TPUPLAN_BASE_PATH.
mkdir -p "$tmp/tls"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=localhost \
    -keyout "$tmp/tls/key.pem" -out "$tmp/tls/cert.pem" >"$tmp/openssl.log" 2>&1 ||
    bail "openssl req failed: $(tail -3 "$tmp/openssl.log")"
chmod 755 "$tmp/tls" && chmod 644 "$tmp/tls/key.pem" "$tmp/tls/cert.pem" # for uid 10001
port2=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${pm[@]}" run -d "${run_extra[@]}" --name "$name-tls" --network host -v "$sock:/pgsock" \
    -v "$tmp/tls:/tls:ro" -e "DATABASE_URL=host=/pgsock dbname=postgres user=tpuplan" \
    -e "TPUPLAN_LISTEN=127.0.0.1:$port2" -e TPUPLAN_WORKERS=1 -e TPUPLAN_TLS_CERT=/tls/cert.pem \
    -e TPUPLAN_TLS_KEY=/tls/key.pem -e TPUPLAN_BASE_PATH=/tpuplan "$IMAGE" >"$tmp/run-tls.log" 2>&1 ||
    bail "podman run (https) failed: $(tail -3 "$tmp/run-tls.log")"
wait_ready "https://127.0.0.1:$port2/tpuplan/readyz" -k
check "a container with TPUPLAN_TLS_CERT and TPUPLAN_BASE_PATH answers https under /tpuplan" \
    [ "$status" = 200 ]
[ "$status" = 200 ] || podman logs "$name-tls" 2>&1 | tail -5 | sed 's/^/#   /'
"${pm[@]}" healthcheck run "$name-tls" >"$tmp/hc-tls.log" 2>&1
hc_rc=$?
check "its HEALTHCHECK passes over https under the base path (podman healthcheck run: $hc_rc)" \
    [ "$hc_rc" = 0 ]
[ "$hc_rc" = 0 ] || sed 's/^/#   /' "$tmp/hc-tls.log" | tail -3
podman rm -f -t 5 "$name-tls" >/dev/null 2>&1

podman stop -t 20 "$name" >/dev/null 2>&1
code=$(podman inspect --format '{{.State.ExitCode}}' "$name" 2>/dev/null)
check "podman stop (SIGTERM) stops the server cleanly (exit $code)" [ "$code" = 0 ]
tap_end
