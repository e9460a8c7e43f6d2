#!/bin/sh
# run.sh SCRIPT.mjs [ARGS...] - run one of the deploy checks with its pinned
# npm dependencies (scripts/npm-ci.sh: npm ci when the lock file is not installed yet).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
script=$1
shift
sh "$here/../../scripts/npm-ci.sh" "$here"
exec node "$here/$script" "$@"
