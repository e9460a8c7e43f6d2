#!/bin/sh
# fuzz/run.sh BUILD_DIR - bounded libFuzzer run of the api layer.
#
#   CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=false
#   ninja -C build-fuzz && fuzz/run.sh build-fuzz
#
# Runs FUZZ_SECONDS (default 30) on a scratch copy of fuzz/corpus/ (the
# seeds stay untouched; the grown corpus lives in fuzz/corpus-run/, which
# git ignores), inputs up to 4096 bytes, with the field-name dictionary.
# Exits non-zero on a crash, leak, sanitizer report or broken invariant;
# the reproducer is written to BUILD_DIR/fuzz/crash-*.
#
# Longer run (before a release, or after touching api/ or core/):
#   FUZZ_SECONDS=3600 FUZZ_JOBS=2 fuzz/run.sh build-fuzz
# and keep interesting inputs by merging them into the seeds:
#   build-fuzz/fuzz/fuzz_api -merge=1 fuzz/corpus fuzz/corpus-run
set -eu

build=${1:-build-fuzz}
here=$(cd "$(dirname "$0")" && pwd)
bin=$build/fuzz/fuzz_api
work=${FUZZ_WORK:-$here/corpus-run}
jobs=${FUZZ_JOBS:-1}

if [ ! -x "$bin" ]; then
    echo "run.sh: $bin not built (CC=clang meson setup $build -Dfuzz=true)" >&2
    exit 2
fi
rm -rf "$work"
mkdir -p "$work"
cp "$here"/corpus/* "$work"/

# -jobs > 1 forks workers that each run the full time budget.
set -- -max_total_time="${FUZZ_SECONDS:-30}" -max_len=4096 -timeout=10 \
    -rss_limit_mb=2048 -dict="$here/api.dict" -print_final_stats=1 \
    -artifact_prefix="$build/fuzz/"
if [ "$jobs" -gt 1 ]; then
    set -- "$@" -jobs="$jobs" -workers="$jobs"
fi
exec "$bin" "$@" "$work"
