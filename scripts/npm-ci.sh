#!/bin/sh
# npm-ci.sh DIR [NPM-FLAGS...] - install DIR's pinned npm packages
# (package-lock.json) unless the same lock file is already installed there.
#
# One place for the test tools' installs: test.sh runs it for every
# package directory before the first stage, so no test's time limit pays
# for a download, and the checks' own run.sh files call it again (a no-op
# then) for when they are run by hand.  The registry is the one network
# dependency of the test command: a failed install is retried twice
# (after 5 s, then 20 s) before it is reported.
set -eu
dir=$1
shift
mark=$dir/node_modules/.trainsize-installed-lock
if cmp -s "$dir/package-lock.json" "$mark" 2>/dev/null; then
    exit 0
fi
for wait in 5 20 0; do
    if (cd "$dir" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 \
            npm ci --no-audit --no-fund --loglevel=error "$@") >&2; then
        cp "$dir/package-lock.json" "$mark"
        exit 0
    fi
    [ "$wait" = 0 ] && break
    echo "npm-ci: npm ci in $dir failed; retrying in $wait s" >&2
    sleep "$wait"
done
echo "npm-ci: FAIL: npm ci in $dir (is the npm registry reachable?)" >&2
exit 1
