#!/usr/bin/env bash
# Install the Debian packages trainsize needs.  Usage: scripts/deps.sh build|test
#   build: compile and run the service
#   test:  build + sanitizers, fuzzing, load test, headless Chromium
# Runs apt-get only when something is missing, so repeated runs are fast;
# on a bare machine (CI) it does `apt-get update` then `apt-get install -y`.
set -euo pipefail

build_pkgs=(meson ninja-build pkg-config gcc libc6-dev
            libmicrohttpd-dev libjansson-dev libcurl4-openssl-dev
            libyaml-dev)  # axolotl_config (optional at build time)
test_pkgs=(check clang libclang-rt-14-dev libfuzzer-14-dev wrk chromium
           fonts-liberation valgrind procps util-linux
           libxml2-utils)  # xmllint: the JUnit report against tests/data/junit.xsd

want=("${build_pkgs[@]}")
if [ "${1:-build}" = test ]; then
    want+=("${test_pkgs[@]}")
    # The machine image ships Node.js; fall back to Debian's when absent.
    command -v node >/dev/null 2>&1 || want+=(nodejs)
    command -v npm >/dev/null 2>&1 || want+=(npm)
fi

missing=()
for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
        || missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update
$SUDO apt-get install -y --no-install-recommends "${missing[@]}"
