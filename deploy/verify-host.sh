#!/usr/bin/env bash
# verify-host.sh - perform the Dockerfile's build and runtime steps on this
# host, for machines without a container engine.
#
# What it proves, reading the Dockerfile itself so nothing can drift:
#   1. every apt package of both stages is installed here (INSTALL=1 as root
#      installs missing ones);
#   2. the build stage's meson setup/compile/test/install works, staging the
#      tree with DESTDIR and prefix /usr/local, and the tree holds the server,
#      the CLI, the dashboard and openapi.json;
#   3. the staged binaries need no shared library outside the runtime stage's
#      package list (plus libc6, which debian:bookworm-slim always has);
#   4. the staged server, run as an unprivileged "trainsize" user with the
#      Dockerfile's ENV (but bound to 127.0.0.1 on a free port), passes the
#      Dockerfile's HEALTHCHECK command, serves the staged dashboard and
#      OpenAPI file, and exits 0 on SIGTERM.
#
# usage: deploy/verify-host.sh        (from anywhere)
# env:   INSTALL=1     apt-get install missing packages (root only)
#        SKIP_TESTS=1  skip the Dockerfile's "meson test" step
#        KEEP=1        keep the scratch directory
#        BUILD_DIR=DIR (or SCRATCH=DIR) build and stage in DIR, kept afterwards,
#                      instead of a fresh mktemp -d removed at exit
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
dockerfile="$repo/Dockerfile"
prefix=/usr/local
server_pid=

fail() { echo "verify-host: FAIL: $*" >&2; exit 1; }
step() { echo "verify-host: $*"; }

[ -f "$dockerfile" ] || fail "no Dockerfile at $dockerfile"

# ---------------------------------------------------------------------------
# Dockerfile parsing: logical instructions (continuations joined, comments
# dropped), one per line as "STAGE<TAB>OP<TAB>ARGS".
instructions() {
    awk '
        /^[ \t]*#/ { next }
        {
            line = $0
            sub(/[ \t\r]+$/, "", line)
            if (line ~ /\\$/) { cur = cur substr(line, 1, length(line) - 1) " "; next }
            cur = cur line
            if (cur ~ /[^ \t]/) {
                sub(/^[ \t]+/, "", cur)
                op = toupper(cur); sub(/[ \t].*$/, "", op)
                args = cur; sub(/^[^ \t]+[ \t]*/, "", args)
                if (op == "FROM") stage++
                printf "%d\t%s\t%s\n", stage, op, args
            }
            cur = ""
        }' "$dockerfile"
}

last_stage=$(instructions | awk -F'\t' '$2 == "FROM" { n = $1 } END { print n + 0 }')
[ "$last_stage" -ge 2 ] || fail "Dockerfile is not multi-stage"

# apt packages of a stage: words after "apt-get install" up to && ; |
apt_packages() {
    instructions | awk -F'\t' -v want="$1" -v last="$last_stage" '
        $2 == "RUN" && (want == "runtime" ? $1 == last : $1 < last) {
            n = split($3, w, /[ \t]+/)
            on = 0
            for (i = 1; i <= n; i++) {
                if (w[i] == "&&" || w[i] == ";" || w[i] == "|" || w[i] == "||") { on = 0; continue }
                if (w[i] == "install" && i > 1 && w[i - 1] ~ /^apt(-get)?$/) { on = 1; continue }
                if (on && w[i] !~ /^-/ && w[i] != "") print w[i]
            }
        }' | sort -u
}

# The text of the build stage's command that starts with $1 (e.g. "meson
# setup"), up to the next && - so the host runs the Dockerfile's own flags.
build_cmd() {
    instructions | awk -F'\t' -v last="$last_stage" -v start="$1" '
        $2 == "RUN" && $1 < last {
            n = split($3, parts, /[ \t]*&&[ \t]*/)
            for (i = 1; i <= n; i++) if (index(parts[i], start) == 1) print parts[i]
        }'
}

build_pkgs=$(apt_packages build)
runtime_pkgs=$(apt_packages runtime)
[ -n "$build_pkgs" ] || fail "no apt-get install found in the build stage"
[ -n "$runtime_pkgs" ] || fail "no apt-get install found in the runtime stage"
step "build packages: $(echo $build_pkgs)"
step "runtime packages: $(echo $runtime_pkgs)"

# ---------------------------------------------------------------------------
# 1. packages
missing=()
for p in $build_pkgs $runtime_pkgs; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
        missing+=("$p")
    fi
done
if [ ${#missing[@]} -gt 0 ]; then
    if [ "${INSTALL:-0}" = 1 ] && [ "$(id -u)" = 0 ]; then
        step "installing ${missing[*]}"
        DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}"
    else
        fail "packages not installed: ${missing[*]} (run as root with INSTALL=1)"
    fi
fi
step "all Dockerfile packages installed"

# ---------------------------------------------------------------------------
# 2. build, test, stage - with the Dockerfile's own meson commands
persist=${SCRATCH:-${BUILD_DIR:-}}
if [ -n "$persist" ]; then
    scratch=$persist
    mkdir -p "$scratch"
else
    scratch=$(mktemp -d /tmp/trainsize-verify.XXXXXX)
fi
build="$scratch/build"
stage="$scratch/staging"
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        { kill -KILL "$server_pid"; wait "$server_pid"; } 2>/dev/null || true
    fi
    if [ "${KEEP:-0}" != 1 ] && [ -z "$persist" ]; then rm -rf "$scratch"; fi
}
trap cleanup EXIT
# the unprivileged user must be able to reach the staged tree
chmod 755 "$scratch"

setup_cmd=$(build_cmd "meson setup")
test_cmd=$(build_cmd "meson test")
[ -n "$setup_cmd" ] || fail "no 'meson setup' in the build stage"
# Dockerfile: "meson setup /build <options>" -> same options, scratch build dir
read -r -a setup_words <<<"$setup_cmd"
setup_opts=("${setup_words[@]:3}")
printf '%s\n' "${setup_opts[@]}" | grep -qx -- "--prefix=$prefix" ||
    fail "Dockerfile's meson setup does not use --prefix=$prefix"

# a kept directory is wiped so every run starts like a fresh image build
wipe=()
[ -d "$build/meson-private" ] && wipe=(--wipe)
rm -rf "$stage"
step "meson setup ${setup_opts[*]}"
meson setup "${wipe[@]}" "$build" "$repo" "${setup_opts[@]}" >"$scratch/setup.log" 2>&1 ||
    { tail -30 "$scratch/setup.log"; fail "meson setup"; }
step "meson compile"
meson compile -C "$build" >"$scratch/compile.log" 2>&1 ||
    { tail -40 "$scratch/compile.log"; fail "meson compile"; }
if grep -q 'warning:' "$scratch/compile.log"; then
    grep 'warning:' "$scratch/compile.log" | head -10
    fail "compiler warnings in the release build"
fi
if [ "${SKIP_TESTS:-0}" != 1 ] && [ -n "$test_cmd" ]; then
    read -r -a test_words <<<"$test_cmd"
    step "meson test ${test_words[*]:4}"
    meson test -C "$build" "${test_words[@]:4}" >"$scratch/test.log" 2>&1 ||
        { grep -E ':[FE]:[A-Za-z0-9_]+:| (FAIL|TIMEOUT) ' "$scratch/test.log" | head -20
          tail -40 "$scratch/test.log"; fail "meson test"; }
fi
step "DESTDIR=$stage meson install"
DESTDIR="$stage" meson install -C "$build" --no-rebuild >"$scratch/install.log" 2>&1 ||
    { tail -30 "$scratch/install.log"; fail "meson install"; }

root="$stage$prefix"
for f in bin/trainsize-server bin/trainsize share/trainsize/web/index.html \
         share/trainsize/openapi.json; do
    [ -f "$root/$f" ] || fail "staged tree lacks $prefix/$f"
done
[ -x "$root/bin/trainsize-server" ] && [ -x "$root/bin/trainsize" ] ||
    fail "staged binaries are not executable"
step "staged tree complete under $root"

# the binary's built-in defaults point at the install prefix
help=$("$root/bin/trainsize-server" --help 2>&1 || true)
grep -q -- "$prefix/share/trainsize/web" <<<"$help" ||
    fail "server's default web root is not $prefix/share/trainsize/web: $help"
grep -q -- "$prefix/share/trainsize/openapi.json" <<<"$help" ||
    fail "server's default OpenAPI path is not $prefix/share/trainsize/openapi.json"
step "server defaults to $prefix/share/trainsize/{web,openapi.json}"

# ---------------------------------------------------------------------------
# 3. shared libraries: every NEEDED entry comes from a runtime-stage package
allowed=" libc6 $(echo $runtime_pkgs) "
for bin in "$root/bin/trainsize-server" "$root/bin/trainsize"; do
    for so in $(readelf -d "$bin" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
        # "pkg:arch[, pkg2]: /path" lines -> package names
        owners=$( (dpkg-query -S "*/$so" 2>/dev/null || true) |
                 sed 's/: \/.*//; s/, /\n/g' | sed 's/:.*//' | sort -u)
        ok=0
        for o in $owners; do
            case "$allowed" in *" $o "*) ok=1 ;; esac
        done
        [ "$ok" = 1 ] || fail "$(basename "$bin") needs $so (from: ${owners:-?}), not in the runtime stage"
    done
done
step "runtime libraries covered by: $(echo $runtime_pkgs)"

# ---------------------------------------------------------------------------
# 4. run the staged server as an unprivileged user with the image's ENV
if [ "$(id -u)" = 0 ]; then
    if ! getent passwd trainsize >/dev/null; then
        uid_opt=()
        getent passwd 10001 >/dev/null || uid_opt=(--uid 10001)
        useradd --system "${uid_opt[@]}" --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin trainsize
        step "created system user trainsize"
    fi
    run_as=(setpriv --reuid=trainsize --regid=trainsize --init-groups --no-new-privs --)
    want_uid=$(id -u trainsize)
else
    run_as=()
    want_uid=$(id -u)
    step "not root: running the server as $(id -un) (already unprivileged)"
fi
[ "$want_uid" != 0 ] || fail "would run the server as root"

# ENV of the runtime stage: KEY=VALUE words
mapfile -t image_env < <(instructions | awk -F'\t' -v last="$last_stage" \
    '$2 == "ENV" && $1 == last { n = split($3, w, /[ \t]+/); for (i = 1; i <= n; i++) if (w[i] ~ /=/) print w[i] }')
[ ${#image_env[@]} -gt 0 ] || fail "runtime stage sets no ENV"
step "image ENV: ${image_env[*]} (bind and port overridden for the host)"

out="$scratch/server.out"
: >"$out"
chmod 666 "$out"
env -i PATH=/usr/bin:/bin "${image_env[@]}" \
    TRAINSIZE_BIND=127.0.0.1 TRAINSIZE_PORT=0 TRAINSIZE_ACCESS_LOG=0 \
    TRAINSIZE_WEB_ROOT="$root/share/trainsize/web" \
    TRAINSIZE_OPENAPI="$root/share/trainsize/openapi.json" \
    LD_LIBRARY_PATH="$root/lib" \
    "${run_as[@]}" "$root/bin/trainsize-server" >"$out" 2>"$scratch/server.err" &
server_pid=$!

url=
for _ in $(seq 1 100); do
    url=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$out" | head -1)
    [ -n "$url" ] && break
    kill -0 "$server_pid" 2>/dev/null || { cat "$scratch/server.err"; fail "server exited"; }
    sleep 0.1
done
[ -n "$url" ] || fail "server did not print its address"
port=${url##*:}
case "$url" in http://127.0.0.1:*) ;; *) fail "server not bound to 127.0.0.1: $url" ;; esac
uid_now=$(awk '/^Uid:/ { print $2 }' "/proc/$server_pid/status")
[ "$uid_now" = "$want_uid" ] || fail "server runs as uid $uid_now, want $want_uid"
step "server up at $url as uid $uid_now"

# The Dockerfile's HEALTHCHECK, exec form, with the staged CLI.  Inside the
# image TRAINSIZE_PORT tells the CLI where to look; here it is the real port.
hc=$(instructions | awk -F'\t' -v last="$last_stage" '$2 == "HEALTHCHECK" && $1 == last { print $3 }')
hc_json=$(sed -n 's/^.*CMD[ \t]*\(\[.*\]\)[ \t]*$/\1/p' <<<"$hc")
[ -n "$hc_json" ] || fail "HEALTHCHECK is not an exec-form CMD: $hc"
mapfile -t hc_argv < <(node -e 'for (const a of JSON.parse(process.argv[1])) console.log(a)' "$hc_json")
[ "${hc_argv[0]}" = "$prefix/bin/trainsize" ] || fail "HEALTHCHECK does not run $prefix/bin/trainsize"
hc_argv[0]="$root/bin/trainsize"
env -i PATH=/usr/bin:/bin TRAINSIZE_PORT="$port" "${run_as[@]}" "${hc_argv[@]}" ||
    fail "HEALTHCHECK (${hc_argv[*]}) failed"
env -i PATH=/usr/bin:/bin "${run_as[@]}" "$root/bin/trainsize" --url "$url" health --ready ||
    fail "trainsize health --ready failed"
step "HEALTHCHECK passes: ${hc_argv[*]}"

# the staged dashboard and OpenAPI document are what gets served (curl is
# a test dependency: scripts/deps.sh test installs it; no silent skip)
command -v curl >/dev/null || fail "curl is not installed (scripts/deps.sh test installs it)"
curl -fsS "$url/" -o "$scratch/index.got" || fail "GET / failed"
cmp -s "$scratch/index.got" "$root/share/trainsize/web/index.html" ||
    fail "GET / is not the staged index.html"
curl -fsS "$url/openapi.json" -o "$scratch/openapi.got" || fail "GET /openapi.json failed"
cmp -s "$scratch/openapi.got" "$root/share/trainsize/openapi.json" ||
    fail "GET /openapi.json is not the staged file"
step "GET / and /openapi.json serve the staged files"
"$root/bin/trainsize" --url "$url" check --model llama3-8b --gpus 8 --zero 3 --recompute selective >/dev/null ||
    fail "staged CLI check of a fitting run failed"

# graceful stop: SIGTERM -> exit 0
kill -TERM "$server_pid"
rc=0
wait "$server_pid" || rc=$?
server_pid=
[ "$rc" = 0 ] || fail "server exited $rc on SIGTERM"
step "server stopped cleanly on SIGTERM"
echo "verify-host: OK"
