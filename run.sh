#!/usr/bin/env bash
# Set up and run trainsize on its embedded defaults: installs the Debian
# build packages, builds a release binary and serves the API and dashboard
# on http://127.0.0.1:8080 (override with TRAINSIZE_PORT / TRAINSIZE_BIND).
set -euo pipefail
cd "$(dirname "$0")"
bash scripts/deps.sh build
B=build/release
if [ -d "$B" ]; then meson setup --reconfigure "$B" --buildtype=release -Dtests=false >/dev/null
else meson setup "$B" --buildtype=release -Dtests=false >/dev/null; fi
ninja -C "$B"
exec "$B/server/trainsize-server" --web-root "$PWD/web" --openapi "$PWD/api/openapi.json" "$@"
