#!/bin/sh
# fuzz/run.sh BUILD_DIR - bounded libFuzzer runs of the three targets.
#
#   CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=false
#   ninja -C build-fuzz && fuzz/run.sh build-fuzz
#
# FUZZ_SECONDS (default 30) is the total, split 40/35/25 between
#   fuzz_api     body -> validate -> estimate -> JSON   (fuzz/corpus/)
#   fuzz_http    raw request bytes into the real daemon  (fuzz/corpus-http/)
#   fuzz_solver  structured runs into ts_fit_*           (fuzz/corpus-solver/)
# Each runs on a scratch copy of its seeds (the seeds stay untouched; the
# grown corpora live in fuzz/run-*/, which git ignores).  Exits non-zero
# on a crash, leak, sanitizer report or broken invariant; the reproducer
# is written to BUILD_DIR/fuzz/crash-*.  FUZZ_TARGETS="fuzz_http" runs a
# subset (then that target gets the whole budget).
#
# Longer run (before a release, or after touching server/, api/, core/):
#   FUZZ_SECONDS=3600 FUZZ_JOBS=2 fuzz/run.sh build-fuzz
# and keep interesting inputs by merging them into the seeds:
#   build-fuzz/fuzz/fuzz_http -merge=1 fuzz/corpus-http fuzz/run-http
set -eu

build=${1:-build-fuzz}
here=$(cd "$(dirname "$0")" && pwd)
total=${FUZZ_SECONDS:-30}
jobs=${FUZZ_JOBS:-1}
targets=${FUZZ_TARGETS:-"fuzz_api fuzz_http fuzz_solver"}

share() { # target -> percent of the budget
    case "$targets" in
    *" "*) case $1 in fuzz_api) echo 40 ;; fuzz_http) echo 35 ;; *) echo 25 ;; esac ;;
    *) echo 100 ;;
    esac
}

run_one() { # target seeds dict max_len
    bin=$build/fuzz/$1
    if [ ! -x "$bin" ]; then
        echo "run.sh: $bin not built (CC=clang meson setup $build -Dfuzz=true)" >&2
        return 2
    fi
    work=$here/run-${1#fuzz_}
    rm -rf "$work"
    mkdir -p "$work"
    cp "$2"/* "$work"/
    secs=$((total * $(share "$1") / 100))
    [ "$secs" -ge 1 ] || secs=1
    echo "== $1: ${secs}s"
    # -jobs > 1 forks workers that each run the full time budget.
    set -- "$bin" -max_total_time="$secs" -max_len="$4" -timeout=10 \
        -rss_limit_mb=2048 ${3:+-dict="$3"} -print_final_stats=1 \
        -artifact_prefix="$build/fuzz/$1-" "$work"
    if [ "$jobs" -gt 1 ]; then
        "$@" -jobs="$jobs" -workers="$jobs"
    else
        "$@"
    fi
}

rc=0
for t in $targets; do
    case $t in
    fuzz_api) run_one fuzz_api "$here/corpus" "$here/api.dict" 4096 || rc=1 ;;
    fuzz_http) run_one fuzz_http "$here/corpus-http" "$here/http.dict" 8192 || rc=1 ;;
    fuzz_solver) run_one fuzz_solver "$here/corpus-solver" "" 256 || rc=1 ;;
    *) echo "run.sh: unknown target $t" >&2; rc=2 ;;
    esac
done
exit $rc
