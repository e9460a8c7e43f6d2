#!/usr/bin/env bash
# Run the dashboard's end-to-end tests in headless Debian Chromium.
#   bash tests/web/run.sh <path to trainsize-server> [suite.mjs ...]
# Installs the pinned playwright-core (package-lock.json) on first use;
# it drives /usr/bin/chromium and downloads no browser.  Every e2e*.mjs
# suite runs (each starts its own server), unless some are named.
# TRAINSIZE_E2E_ONLY=<regex> runs only the checks whose names match (while
# working on one; a later check may rely on what an earlier one left).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
server="${1:-${TRAINSIZE_SERVER:-}}"
if [ -z "$server" ]; then
    echo "usage: $0 <path to trainsize-server> [suite.mjs ...]" >&2
    exit 2
fi
shift || true
server="$(cd "$(dirname "$server")" && pwd)/$(basename "$server")"
if [ ! -x /usr/bin/chromium ]; then
    echo "run.sh: /usr/bin/chromium is missing (apt-get install chromium)" >&2
    exit 2
fi
sh "$here/../../scripts/npm-ci.sh" "$here"
cd "$here"
suites=("$@")
if [ ${#suites[@]} -eq 0 ]; then
    suites=(e2e*.mjs)
fi
# each suite guards its own run (lib.mjs RUN_TIMEOUT_MS); this is the backstop
limit=$(( ${TRAINSIZE_E2E_TIMEOUT_S:-300} + 15 ))
rc=0
for s in "${suites[@]}"; do
    echo "== $s"
    timeout "$limit" node "$s" "$server" || rc=1
done
exit $rc
