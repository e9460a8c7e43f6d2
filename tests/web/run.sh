#!/usr/bin/env bash
# Run the dashboard's end-to-end tests in headless Debian Chromium.
#   bash tests/web/run.sh <path to trainsize-server>
# Installs the pinned playwright-core (package-lock.json) on first use;
# it drives /usr/bin/chromium and downloads no browser.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
server="${1:-${TRAINSIZE_SERVER:-}}"
if [ -z "$server" ]; then
    echo "usage: $0 <path to trainsize-server>" >&2
    exit 2
fi
server="$(cd "$(dirname "$server")" && pwd)/$(basename "$server")"
if [ ! -x /usr/bin/chromium ]; then
    echo "run.sh: /usr/bin/chromium is missing (apt-get install chromium)" >&2
    exit 2
fi
sh "$here/../../scripts/npm-ci.sh" "$here"
cd "$here"
exec timeout 120 node e2e.mjs "$server"
