#!/bin/sh
# run.sh SCRIPT.mjs [ARGS...] - run one of the deploy checks with its pinned
# npm dependencies (npm ci from package-lock.json on first use).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
script=$1
shift
if [ ! -d "$here/node_modules/dockerfile-utils" ] || [ ! -d "$here/node_modules/yaml" ]; then
    (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
exec node "$here/$script" "$@"
