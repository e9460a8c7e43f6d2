#!/usr/bin/env bash
# Run every trainsize test: installs the Debian packages it needs, then
#   1. gcc build (-Werror): Check unit tests (core, api), integration tests
#      against the real server over libcurl, CLI and deployment tests;
#   2. the same suites under clang with AddressSanitizer + UBSan;
#   3. bounded libFuzzer runs of the five targets (fuzz/run.sh: the api,
#      HTTP, Megatron args, YAML, solvers), with integer checks on;
#   4. the dashboard end-to-end in headless Chromium (playwright-core), and
#      the OpenAPI document through two validators, a linter, a Prism
#      contract proxy, a schema-driven generator and a typed client;
#   5. the container image: built with Debian's docker from a locally made
#      bookworm-slim and run as the README says (deploy/container-test.sh);
#      where no engine can run, the host replay of the Dockerfile's steps
#      (deploy/verify-host.sh) instead, and the summary says which ran;
#   6. benchmarks (report only, never pass/fail on speed);
#   7. the README's two commands on a brand-new bookworm root
#      (scripts/fresh-root.sh), as root with mmdebstrap, not when nested;
#      inside it only stages 1 and 4 run again (what depends on the bare
#      machine: deps.sh's packages and npm tools).
# Stages keep going after a failure so one run shows everything; the exit
# status is non-zero if any stage failed.  Each stage's time is reported.
# env: FRESH_ROOT=0 skips stage 7; FUZZ_SECONDS, LOAD_SECONDS bound 3 and 6
# (FLOOR_SECONDS, FLOOR_RUNS: bench/floor.sh's wrk runs of 1 s, 3 pairs per
# route: 30 runs; ADV_MAX_TIME: bench/adversarial.sh's bound per request,
# 10 s).
set -uo pipefail
cd "$(dirname "$0")"
root=$PWD

t_all=$(date +%s)
bash scripts/deps.sh test || { echo "deps: install failed"; exit 1; }
# deps.sh puts a Node.js >= 20 there when the system's is older (bookworm: 18)
[ -x build/tools/node/bin/node ] && export PATH="$root/build/tools/node/bin:$PATH"
node_v=$(node -e 'console.log(process.versions.node)' 2>/dev/null || echo none)
case "$node_v" in
    none|1[0-9].*|[0-9].*)
        echo "deps: Node.js >= 20 is needed (playwright-core, deploy checks); found $node_v"
        exit 1 ;;
esac
echo "test.sh: node $node_v ($(command -v node))"
# The pinned npm tools of the checks, fetched now (retried) rather than
# inside a test's time limit; a no-op when already installed.
t_npm=$(date +%s)
for d in tests/deploy tests/web tests/openapi; do
    flags=
    [ "$d" = tests/openapi ] && flags=--ignore-scripts
    sh scripts/npm-ci.sh "$d" $flags || { echo "deps: npm packages of $d not installed"; exit 1; }
done
echo "test.sh: npm test packages ready ($(( $(date +%s) - t_npm )) s)"

B=${BUILD_ROOT:-$root/build}
FUZZ_SECONDS=${FUZZ_SECONDS:-40}
LOAD_SECONDS=${LOAD_SECONDS:-5}
FLOOR_SECONDS=${FLOOR_SECONDS:-1}
FLOOR_RUNS=${FLOOR_RUNS:-3}
ADV_MAX_TIME=${ADV_MAX_TIME:-10}
export CK_DEFAULT_TIMEOUT=${CK_DEFAULT_TIMEOUT:-120}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:halt_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

passed=0 failed=0 failures=()
tests_ok=0 tests_bad=0 unknown=() notes=() timings=()

# Sum meson's "Ok:/Fail:" counters and our runners' "N passed, N failed".
# Skipped meson tests count as failed.  A stage that fails without
# reporting any failed test (it crashed, or its
# build broke, before printing counts) adds one failed test and is named
# in the summary as "count unknown", so the tests line can never read
# "0 failed" after a failed stage.
count() { # log, stage status, stage name
    local log=$1 rc=$2 name=$3 n ok=0 bad=0
    n=$(awk '/^Ok:/{s+=$2} END{print s+0}' "$log"); ok=$((ok + n))
    n=$(awk '/^(Fail|Unexpected Pass|Timeout):/{s+=$NF} END{print s+0}' "$log"); bad=$((bad + n))
    # a skipped test is a missing dependency: scripts/deps.sh installs them all
    n=$(awk '/^Skipped:/{s+=$NF} END{print s+0}' "$log"); bad=$((bad + n))
    [ "$n" = 0 ] || echo "!! $n meson test(s) skipped in '$name': counted as failed"
    n=$(sed -nE 's/^[A-Za-z0-9_-]+: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/p' "$log" |
        awk '{p+=$1; f+=$2} END{print p+0, f+0}')
    ok=$((ok + ${n% *})); bad=$((bad + ${n#* }))
    if [ "$rc" != 0 ] && [ "$bad" = 0 ]; then bad=1; unknown+=("$name"); fi
    tests_ok=$((tests_ok + ok)); tests_bad=$((tests_bad + bad))
}

stage() {
    local name=$1; shift
    local log rc t0 mark; log=$(mktemp); mark=$(mktemp); t0=$(date +%s)
    echo "==> $name"
    "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    if [ "$rc" = 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1)); failures+=("$name")
        echo "!! stage failed: $name (status $rc)"
    fi
    timings+=("$(printf '%5d s  %s%s' $(( $(date +%s) - t0 )) "$name" "$([ "$rc" = 0 ] || echo '  [failed]')")")
    count "$log" "$rc" "$name"
    # A failed stage names what failed in the summary, which is what a CI
    # log's tail keeps: meson's FAIL/TIMEOUT lines and Check's assertions.
    if [ "$rc" != 0 ]; then
        while IFS= read -r l; do notes+=("failed-test: $l"); done < <(
            # meson prints a failed test's last 100 lines only; its
            # testlog.txt (written in this stage) has Check's assertion
            { grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS) |[^ :]+\.c:[0-9]+:[EF]:|^!! |th_harness: ' "$log"
              # ...and what a crashed server said on its inherited stderr
              find "$B" -path '*/meson-logs/testlog.txt' -newer "$mark" -exec grep -hE '[^ :]+\.c:[0-9]+:[EF]:|Fatal error in GNU libmicrohttpd|ERROR: AddressSanitizer|runtime error: |th_harness: ' {} + 2>/dev/null
            } | sed -E 's/\x1b\[[0-9;]*m//g' | awk '!seen[$0]++' | head -n 24)
    fi
    rm -f "$mark"
    # lines a stage wants in the summary ("container-stage: ...", ...)
    while IFS= read -r l; do notes+=("$l"); done < <(grep -E '^(container-stage|fresh-root-(run|test)|fresh-root-stage): ' "$log")
    rm -f "$log"
}

setup() { # dir, extra meson args...
    local dir=$1; shift
    if [ -d "$dir" ]; then meson setup --reconfigure "$dir" "$@" >/dev/null
    else meson setup "$dir" "$@" >/dev/null; fi && ninja -C "$dir"
}

# Inside the fresh root the suites that only compute (core, lib and the
# validation tables: libc, libm and Check, the same code the outer run
# has just tested) are left out; the build and every suite that drives
# the machine's tools (server over loopback, CLI with libcurl, deploy,
# importers, generators, the docs' CI jobs) run there again.
INNER_NO_SUITES=(--no-suite core --no-suite lib --no-suite validation)
gcc_suites() {
    setup "$B/gcc" -Dwerror=true &&
    meson test -C "$B/gcc" --print-errorlogs --num-processes 2 \
        ${TRAINSIZE_FRESH_ROOT:+"${INNER_NO_SUITES[@]}"}
}
asan_suites() {
    CC=clang setup "$B/asan" -Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false &&
    # ASan+UBSan run 2-4x slower than -O2 (more on a loaded 2-core CI
    # machine): the suites' time limits are for the plain build.
    # ci-doc builds the docs' CI jobs with the plain toolchain: the same
    # run as the gcc stage's, nothing for the sanitizers to see.
    # lint (scripts/code-stats.sh) reads the sources, not the build.
    # Check's own per-test limits (tcase_set_timeout) scale by
    # CK_TIMEOUT_MULTIPLIER, not by meson's multiplier.
    CK_TIMEOUT_MULTIPLIER=3 meson test -C "$B/asan" --print-errorlogs --num-processes 2 --timeout-multiplier 3 \
        --no-suite ci-doc --no-suite lint
}
fuzz_run() {
    # The fuzz targets only (ninja's "fuzz" alias), not the whole tree
    # again: the stage stays near a minute on 2 cores.
    local dir="$B/fuzz"
    if [ -d "$dir" ]; then CC=clang meson setup --reconfigure "$dir" -Dfuzz=true -Dtests=false >/dev/null
    else CC=clang meson setup "$dir" -Dfuzz=true -Dtests=false >/dev/null; fi &&
    ninja -C "$dir" fuzz &&
    FUZZ_SECONDS=$FUZZ_SECONDS bash fuzz/run.sh "$dir"
}
# Inside the fresh root the dashboard runs a smoke set that proves the
# browser, playwright-core and the served page work on the bare machine
# (first visit, assets, the first answer equal to the API's, no console or CSP
# errors); the outer run ran every check.
E2E_SMOKE='^(10: first visit|static assets|default numbers equal|no console errors|27: no console errors)'
web_e2e() {
    TRAINSIZE_E2E_ONLY=${TRAINSIZE_E2E_ONLY:-${TRAINSIZE_FRESH_ROOT:+$E2E_SMOKE}} \
        bash tests/web/run.sh "$B/gcc/server/trainsize-server"
}
openapi_checks() { bash tests/openapi/run.sh "$B/gcc/server/trainsize-server"; }
container() {
    BUILD_DIR="$B/container" HOST_SERVER="$B/gcc/server/trainsize-server" bash deploy/container-test.sh
}
fresh_root() {
    local why=
    if [ -n "${TRAINSIZE_FRESH_ROOT:-}" ]; then why="already inside the fresh root"
    elif [ "${FRESH_ROOT:-1}" = 0 ]; then why="FRESH_ROOT=0"
    elif [ "$(id -u)" != 0 ]; then why="needs root"
    elif ! command -v mmdebstrap >/dev/null; then why="mmdebstrap missing"
    fi
    if [ -n "$why" ]; then echo "fresh-root-stage: not run: $why"; return 0; fi
    # The inner run repeats only the bare-machine stages (outer(), below).
    FRESH_DIR="$B/fresh-root" INNER_ENV="FUZZ_SECONDS=${INNER_FUZZ_SECONDS:-5} LOAD_SECONDS=${INNER_LOAD_SECONDS:-2} FLOOR_SECONDS=1 FLOOR_RUNS=1" \
        bash scripts/fresh-root.sh
}
benchmarks() {
    meson test -C "$B/gcc" --benchmark --verbose &&
    LOAD_SECONDS=$LOAD_SECONDS bash bench/load.sh "$B/gcc/server/trainsize-server" &&
    FLOOR_SECONDS=$FLOOR_SECONDS FLOOR_RUNS=$FLOOR_RUNS bash bench/floor.sh "$B/gcc/server/trainsize-server" &&
    ADV_MAX_TIME=$ADV_MAX_TIME bash bench/adversarial.sh "$B/gcc/server/trainsize-server" &&
    BUDGET_CALLS=${BUDGET_CALLS:-9} sh bench/budget.sh "$B/gcc/server/trainsize-server"
}

# Inside the fresh root (stage 7) only what depends on the bare machine runs
# again: the packages deps.sh installs, the gcc build and its suites, and the
# tools fetched from npm (browser, OpenAPI checkers).  The sanitizer build,
# fuzzing, the container and the benchmarks use the same packages and code
# as the outer run, which has just run them; repeating them there doubled the
# command's time on 2 cores.
outer() { # stage name, function: run it here, skip it inside the fresh root
    if [ -n "${TRAINSIZE_FRESH_ROOT:-}" ]; then
        echo "test.sh: '$1' not repeated inside the fresh root (the outer run ran it)"
    else stage "$@"; fi
}
stage "gcc build + unit/integration/cli/deploy tests" gcc_suites
outer "clang ASan+UBSan build + same tests" asan_suites
outer "libFuzzer (${FUZZ_SECONDS}s)" fuzz_run
stage "dashboard e2e in headless Chromium" web_e2e
stage "OpenAPI: validators, lint, Prism contract, generator, typed client" openapi_checks
outer "container image (docker; host replay where no engine runs)" container
outer "benchmarks (report only)" benchmarks
outer "README commands on a fresh bookworm root" fresh_root

echo
echo "stage times:"
printf '  %s\n' "${timings[@]}"
printf '  %5d s  total\n' $(( $(date +%s) - t_all ))
for l in "${notes[@]}"; do echo "$l"; done
echo "stages: $passed passed, $failed failed${failures[*]:+ (${failures[*]})}"
unk=
[ "${#unknown[@]}" -eq 0 ] || unk=" (count unknown, 1 failed each: $(printf '%s; ' "${unknown[@]}" | sed 's/; $//'))"
echo "tests: $tests_ok passed, $tests_bad failed$unk"
[ "$failed" -eq 0 ] && [ "$tests_bad" -eq 0 ]
