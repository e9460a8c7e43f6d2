#!/usr/bin/env bash
# Run every trainsize test: installs the Debian packages it needs, then
#   1. gcc build (-Werror): Check unit tests (core, api), integration tests
#      against the real server over libcurl, CLI and deployment tests;
#   2. the same suites under clang with AddressSanitizer + UBSan;
#   3. a bounded libFuzzer run on body -> validate -> estimate -> JSON;
#   4. the dashboard end-to-end in headless Chromium (playwright-core);
#   5. the host build of the Dockerfile's steps (deploy/verify-host.sh);
#   6. benchmarks (report only, never pass/fail on speed).
# Stages keep going after a failure so one run shows everything; the exit
# status is non-zero if any stage failed.
set -uo pipefail
cd "$(dirname "$0")"
root=$PWD

bash scripts/deps.sh test || { echo "deps: install failed"; exit 1; }

B=${BUILD_ROOT:-$root/build}
FUZZ_SECONDS=${FUZZ_SECONDS:-20}
LOAD_SECONDS=${LOAD_SECONDS:-5}
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

passed=0 failed=0 failures=()
tests_ok=0 tests_bad=0

# Sum meson's "Ok:/Fail:" counters and our runners' "N passed, N failed".
count() {
    local log=$1 n
    n=$(awk '/^Ok:/{s+=$2} END{print s+0}' "$log"); tests_ok=$((tests_ok + n))
    n=$(awk '/^(Fail|Unexpected Pass|Timeout):/{s+=$NF} END{print s+0}' "$log"); tests_bad=$((tests_bad + n))
    n=$(sed -nE 's/^[A-Za-z0-9_-]+: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/p' "$log" |
        awk '{p+=$1; f+=$2} END{print p+0, f+0}')
    tests_ok=$((tests_ok + ${n% *})); tests_bad=$((tests_bad + ${n#* }))
}

stage() {
    local name=$1; shift
    local log; log=$(mktemp)
    echo "==> $name"
    if "$@" 2>&1 | tee "$log"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); failures+=("$name")
        echo "!! stage failed: $name"
    fi
    count "$log"; rm -f "$log"
}

setup() { # dir, extra meson args...
    local dir=$1; shift
    if [ -d "$dir" ]; then meson setup --reconfigure "$dir" "$@" >/dev/null
    else meson setup "$dir" "$@" >/dev/null; fi && ninja -C "$dir"
}

gcc_suites() {
    setup "$B/gcc" -Dwerror=true &&
    meson test -C "$B/gcc" --print-errorlogs --num-processes 2
}
asan_suites() {
    CC=clang setup "$B/asan" -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false &&
    meson test -C "$B/asan" --print-errorlogs --num-processes 2
}
fuzz_run() {
    CC=clang setup "$B/fuzz" -Dfuzz=true -Dtests=false &&
    FUZZ_SECONDS=$FUZZ_SECONDS bash fuzz/run.sh "$B/fuzz"
}
web_e2e() { bash tests/web/run.sh "$B/gcc/server/trainsize-server"; }
deploy_host() { BUILD_DIR="$B/deploy" bash deploy/verify-host.sh; }
benchmarks() {
    meson test -C "$B/gcc" --benchmark --verbose &&
    LOAD_SECONDS=$LOAD_SECONDS bash bench/load.sh "$B/gcc/server/trainsize-server"
}

stage "gcc build + unit/integration/cli/deploy tests" gcc_suites
stage "clang ASan+UBSan build + same tests" asan_suites
stage "libFuzzer (${FUZZ_SECONDS}s)" fuzz_run
stage "dashboard e2e in headless Chromium" web_e2e
stage "Dockerfile steps on the host" deploy_host
stage "benchmarks (report only)" benchmarks

echo
echo "stages: $passed passed, $failed failed${failures[*]:+ (${failures[*]})}"
echo "tests: $tests_ok passed, $tests_bad failed"
[ "$failed" -eq 0 ] && [ "$tests_bad" -eq 0 ]
