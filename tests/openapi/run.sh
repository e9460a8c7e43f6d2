#!/usr/bin/env bash
# Check api/openapi.json with independent OpenAPI tools, and the real
# server against it (see contract.mjs for the phases).
#   bash tests/openapi/run.sh <path to trainsize-server>
# Installs the pinned tools (package-lock.json) on first use with npm ci;
# after that nothing here touches the network: the server and the Prism
# proxy listen on 127.0.0.1 only, telemetry and update checks are off.
# OPENAPI_SEED and OPENAPI_GEN_MS (default 6000) steer the generator.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
server="${1:-${TRAINSIZE_SERVER:-}}"
if [ -z "$server" ]; then
    echo "usage: $0 <path to trainsize-server>" >&2
    exit 2
fi
server="$(cd "$(dirname "$server")" && pwd)/$(basename "$server")"
if [ ! -x "$server" ]; then
    echo "run.sh: $server is not an executable" >&2
    exit 2
fi
# @redocly/cli 2.x wants Node.js >= 20.19 (its package.json engines);
# tested with 20.20.  Say so plainly rather than fail deep inside a tool.
if ! node -e 'const [a, b] = process.versions.node.split(".").map(Number);
              process.exit(a > 20 || (a === 20 && b >= 19) ? 0 : 1)' 2>/dev/null; then
    echo "run.sh: Node.js >= 20.19 is needed, found $(node --version 2>/dev/null || echo none)" >&2
    exit 2
fi
# Reinstalled when the lock file changed since the last install.
sh "$here/../../scripts/npm-ci.sh" "$here" --ignore-scripts
export REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true NO_UPDATE_NOTIFIER=1
cd "$here"
exec timeout 180 node contract.mjs "$server"
