#!/usr/bin/env bash
# deps.sh PROFILE - install the Debian packages a make target needs, only those missing.
#
# Profiles: build (compile), run (build + PostgreSQL server), test (run + test tools,
# Chromium, Node.js), lint, bench, image (test + podman and debootstrap: `make image`),
# soak (run + wrk, curl, python3: `make soak`). Idempotent: when everything is present it
# only runs dpkg-query. As root it installs with apt-get; otherwise it prints the command to
# run.
set -euo pipefail

profile=${1:-build}
build=(gcc make pkg-config libmicrohttpd-dev libjson-c-dev libpq-dev)
run=("${build[@]}" postgresql)
# python3: tests/cli/*.sh check JSON with it (it came only through npm, so a machine with
# its own Node.js lacked it); without python3-jsonschema tests/cli/plan.sh skips its JSON
# Schema checks.
# openssl: tests/integration/tls.sh makes a throwaway self-signed certificate with it.
test=("${run[@]}" libcmocka-dev clang libclang-rt-14-dev curl chromium python3
    python3-jsonschema procps openssl)
# git: make lint finds the files to check with `git ls-files`; without git it checks none.
lint=("${build[@]}" libcmocka-dev clang-format clang-tidy cppcheck git)
bench=("${test[@]}" wrk time)
image=("${test[@]}" podman crun debootstrap)
soak=("${run[@]}" curl python3 procps wrk)

case "$profile" in
build) want=("${build[@]}") ;;
run) want=("${run[@]}") ;;
test) want=("${test[@]}") ;;
lint) want=("${lint[@]}") ;;
bench) want=("${bench[@]}") ;;
image) want=("${image[@]}") ;;
soak) want=("${soak[@]}") ;;
*)
    echo "deps.sh: unknown profile '$profile' (build, run, test, lint, bench, image, soak)" >&2
    exit 2
    ;;
esac

# Node.js and npm only where no node is on PATH: a machine may carry a newer one.
if [ "$profile" = test ] || [ "$profile" = bench ]; then
    command -v node >/dev/null 2>&1 || want+=(nodejs)
    command -v npm >/dev/null 2>&1 || want+=(npm)
fi

missing=()
for p in "${want[@]}"; do
    st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
    [ "$st" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
    echo "deps.sh: missing Debian packages: ${missing[*]}" >&2
    echo "deps.sh: run as root: apt-get install -y ${missing[*]}" >&2
    exit 1
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# A fresh machine has no package lists; refresh them once before installing.
apt-get update -qq >&2 || true
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
