#!/bin/sh
# fuzz/run.sh BUILD_DIR - bounded libFuzzer runs of the five targets.
#
#   CC=clang meson setup build-fuzz -Dfuzz=true -Dtests=false
#   ninja -C build-fuzz fuzz && fuzz/run.sh build-fuzz
#
# FUZZ_SECONDS (default 30) is the total, split 30/20/20/15/15 between
#   fuzz_api     body -> validate -> estimate -> JSON   (fuzz/corpus/)
#   fuzz_http    raw request bytes into the real daemon  (fuzz/corpus-http/)
#   fuzz_mega    Megatron-LM argument text               (fuzz/corpus-mega/)
#   fuzz_yaml    axolotl YAML text                       (fuzz/corpus-yaml/)
#   fuzz_solver  structured runs into ts_fit_*           (fuzz/corpus-solver/)
# each with its dictionary (fuzz/*.dict).  Each runs on a scratch copy
# of its seeds (the seeds stay untouched; the grown corpora live in
# fuzz/run-*/, which git ignores).  Exits non-zero on a crash, leak,
# sanitizer report (integer checks included) or broken invariant; the
# reproducer is written to BUILD_DIR/fuzz/<target>-crash-*.
# FUZZ_TARGETS="fuzz_mega fuzz_yaml" runs a subset (the budget is then
# split evenly); FUZZ_EACH=600 gives every target that many seconds
# instead of a share of FUZZ_SECONDS (the scheduled long run,
# docs/testing.md).
#
# Keep interesting inputs by merging them into the seeds:
#   build-fuzz/fuzz/fuzz_mega -merge=1 fuzz/corpus-mega fuzz/run-mega
set -eu

build=${1:-build-fuzz}
here=$(cd "$(dirname "$0")" && pwd)
total=${FUZZ_SECONDS:-30}
each=${FUZZ_EACH:-}
jobs=${FUZZ_JOBS:-1}
targets=${FUZZ_TARGETS:-"fuzz_api fuzz_http fuzz_mega fuzz_yaml fuzz_solver"}
ntargets=$(echo $targets | wc -w)

share() { # target -> percent of the budget
    if [ "$ntargets" -eq 5 ]; then
        case $1 in fuzz_api) echo 30 ;; fuzz_http|fuzz_mega) echo 20 ;; *) echo 15 ;; esac
    else
        echo $((100 / ntargets))
    fi
}

run_one() { # target seeds dict max_len [extra libFuzzer flags]
    bin=$build/fuzz/$1
    if [ ! -x "$bin" ]; then
        echo "run.sh: $bin not built (CC=clang meson setup $build -Dfuzz=true; ninja -C $build fuzz)" >&2
        return 2
    fi
    work=$here/run-${1#fuzz_}
    rm -rf "$work"
    mkdir -p "$work"
    cp "$2"/* "$work"/
    if [ -n "$each" ]; then
        secs=$each
    else
        secs=$((total * $(share "$1") / 100))
    fi
    [ "$secs" -ge 1 ] || secs=1
    echo "== $1: ${secs}s"
    # -jobs > 1 forks workers that each run the full time budget.
    set -- "$bin" -max_total_time="$secs" -max_len="$4" -timeout=10 \
        -rss_limit_mb=2048 ${3:+-dict="$3"} -print_final_stats=1 ${5:-} \
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
    # The readers turn text into numbers: value profiles steer the
    # mutations towards the comparisons and ranges in them.
    fuzz_mega) run_one fuzz_mega "$here/corpus-mega" "$here/mega.dict" 4096 -use_value_profile=1 || rc=1 ;;
    fuzz_yaml) run_one fuzz_yaml "$here/corpus-yaml" "$here/yaml.dict" 4096 -use_value_profile=1 || rc=1 ;;
    fuzz_solver) run_one fuzz_solver "$here/corpus-solver" "" 256 || rc=1 ;;
    *) echo "run.sh: unknown target $t" >&2; rc=2 ;;
    esac
done
exit $rc
