#!/usr/bin/env bash
# container-test.sh - build the real image and run it the way the README says.
#
#   1. start Debian's dockerd with its own --data-root, --exec-root, pidfile
#      and socket (no default bridge, no iptables or sysctl changes), so it
#      touches nothing of the host's and is stopped by its pid at the end;
#   2. make debian:bookworm-slim with deploy/base-image.sh (mmdebstrap,
#      cached under build/base) and `docker import` it: no registry needed
#      (the Dockerfile's default base is pinned by a registry digest; the
#      build is given this image instead, --build-arg BASE_IMAGE);
#   3. `docker build` the Dockerfile (its build stage runs the core, api,
#      server and cli suites), check the image: size, user, HEALTHCHECK, no
#      curl/compiler/apt lists inside;
#   4. run it with --read-only --cap-drop ALL --security-opt
#      no-new-privileges, published on 127.0.0.1 only, wait for Docker's
#      HEALTHCHECK to say healthy, then: API smoke checks with curl, the
#      dashboard in headless Chromium (tests/deploy/dashboard_container.mjs),
#      the process's uid/gid, capabilities and no_new_privs from /proc,
#      a read-only root, and SIGTERM -> exit 0 within the grace period;
#   5. deploy/compose.yaml with Debian's docker-compose: up, ps healthy,
#      exec the CLI, stop (exit 0), down.
# Everything it starts is removed by the name it gave or the pid it got.
#
# When no engine can run here (not root, no dockerd, inside the fresh-root
# check, dockerd fails to start) it says exactly why and runs the host
# replay, deploy/verify-host.sh, instead.  The line "container-stage: ..."
# says which ran; test.sh repeats it in its summary.
#
# env: BUILD_DIR=DIR   scratch (default <repo>/build/container), emptied first
#      HOST_SERVER=BIN a host-built trainsize-server: its /v1/plan answer
#                      must equal the container's, byte for byte
#      NO_DOCKER=1     skip the engine (host replay only)
#      GRACE_S=N       SIGTERM-to-exit limit (default 10: the server drains
#                      within 10 s, deploy/k8s leaves 20, compose 15)
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/.." && pwd)
work=${BUILD_DIR:-$repo/build/container}
GRACE_S=${GRACE_S:-10}
tag=trainsize:0.1.0          # the tag deploy/compose.yaml and deploy/k8s use
name=trainsize-ct-$$         # every container/network/project is named from this
D=/usr/bin/docker            # Debian's client: /usr/local/bin/docker may be another one
DC=/usr/bin/docker-compose

passed=0 failed=0
ok()   { passed=$((passed + 1)); echo "ok   $*"; }
bad()  { failed=$((failed + 1)); echo "FAIL $*"; }
check() { # name, command...
    local n=$1; shift
    if "$@"; then ok "$n"; else bad "$n"; fi
}
log() { echo "container: $*"; }
now() { date +%s; }

host_replay() {
    echo "container-stage: host replay (deploy/verify-host.sh): $1"
    log "no container engine: $1"
    log "falling back to the host replay of the Dockerfile's steps"
    INSTALL=${INSTALL:-0} BUILD_DIR="$work/host" bash "$here/verify-host.sh"
    exit $?
}

[ "${NO_DOCKER:-0}" = 1 ] && host_replay "NO_DOCKER=1"
[ -n "${TRAINSIZE_FRESH_ROOT:-}" ] &&
    host_replay "running inside the fresh-root check (a chroot has no container engine)"
[ "$(id -u)" = 0 ] || host_replay "dockerd needs root (running as $(id -un))"
[ -x /usr/sbin/dockerd ] || host_replay "/usr/sbin/dockerd missing (apt-get install docker.io)"
[ -x "$D" ] || host_replay "$D missing (apt-get install docker.io)"
[ -x "$DC" ] || host_replay "$DC missing (apt-get install docker-compose)"
command -v mmdebstrap >/dev/null || host_replay "mmdebstrap missing: cannot make the base image"
command -v curl >/dev/null || host_replay "curl missing"

# One engine at a time on a machine: two test runs would share subnets.
exec 9>/tmp/trainsize-container.lock
flock -w 900 9 || host_replay "another container test held the lock for 15 minutes"

rm -rf "$work"
mkdir -p "$work"
# Unix socket paths are short (108 bytes): exec-root and socket under /tmp.
run=$(mktemp -d /tmp/tsdk.XXXXXX)
data=$work/data
export DOCKER_HOST=unix://$run/docker.sock
dockerd_pid=
compose_up=0
host_pid=

cleanup() {
    set +e
    if [ -n "$dockerd_pid" ] && kill -0 "$dockerd_pid" 2>/dev/null; then
        [ "$compose_up" = 1 ] &&
            timeout 60 "$DC" -p "$name" -f "$repo/deploy/compose.yaml" down --timeout 5 >/dev/null 2>&1
        for c in "$name" "$name-probe"; do timeout 30 "$D" rm -f "$c" >/dev/null 2>&1; done
        timeout 30 "$D" network rm "$name" >/dev/null 2>&1
        local ctd_pid=
        [ -f "$run/containerd/containerd.pid" ] && ctd_pid=$(cat "$run/containerd/containerd.pid")
        kill -TERM "$dockerd_pid"
        for _ in $(seq 1 100); do kill -0 "$dockerd_pid" 2>/dev/null || break; sleep 0.2; done
        kill -0 "$dockerd_pid" 2>/dev/null && { log "dockerd $dockerd_pid ignored SIGTERM: SIGKILL"; kill -KILL "$dockerd_pid"; }
        # dockerd stops the containerd it started; make sure, by its pid
        if [ -n "$ctd_pid" ] && kill -0 "$ctd_pid" 2>/dev/null; then
            sleep 2; kill -0 "$ctd_pid" 2>/dev/null && kill -KILL "$ctd_pid"
        fi
        log "stopped dockerd (pid $dockerd_pid)"
    fi
    [ -n "$host_pid" ] && kill -0 "$host_pid" 2>/dev/null && kill -KILL "$host_pid"
    # mounts left under our directories (netns, overlay), deepest first
    findmnt -rn -o TARGET 2>/dev/null | grep -E "^($run|$data)(/|$)" | sort -r |
        while read -r m; do umount -l "$m"; done
    rm -rf "$run" "$data"
}
trap cleanup EXIT

# ---------------------------------------------------------------------------
# 1. the engine
t_start=$(now)
/usr/sbin/dockerd --data-root "$data" --exec-root "$run/exec" --pidfile "$run/dockerd.pid" \
    -H "$DOCKER_HOST" --bridge none --iptables=false --ip6tables=false --ip-forward=false \
    --ip-masq=false --userland-proxy=true --log-level warn >"$work/dockerd.log" 2>&1 &
dockerd_pid=$!
for _ in $(seq 1 150); do
    "$D" version >/dev/null 2>&1 && break
    kill -0 "$dockerd_pid" 2>/dev/null || break
    sleep 0.2
done
if ! "$D" version >/dev/null 2>&1; then
    why=$(grep -v '^\s*$' "$work/dockerd.log" | tail -3 | tr '\n' ' ')
    kill -0 "$dockerd_pid" 2>/dev/null && kill -KILL "$dockerd_pid"
    wait "$dockerd_pid" 2>/dev/null
    dockerd_pid=
    host_replay "dockerd did not start within 30 s: ${why:-no output}"
fi
engine=$("$D" version -f '{{.Server.Version}}')
log "dockerd $engine up (pid $dockerd_pid, data-root $data, socket $DOCKER_HOST)"

# ---------------------------------------------------------------------------
# 2. the base image, from the Debian archive
t0=$(now)
base=$(bash "$here/base-image.sh" | tail -1) || { bad "deploy/base-image.sh made the base"; exit 1; }
"$D" import --change 'CMD ["bash"]' "$base" debian:bookworm-slim >/dev/null ||
    { bad "docker import of the base"; exit 1; }
base_mb=$("$D" image inspect -f '{{.Size}}' debian:bookworm-slim | awk '{printf "%.1f", $1 / 1e6}')
ok "debian:bookworm-slim imported from $(basename "$base") ($base_mb MB, $(( $(now) - t0 )) s)"

# ---------------------------------------------------------------------------
# 3. the image.  Host network: apt in the build needs the host's route to
# the archive (the engine has no NAT of its own here).
t0=$(now)
# The local base by its image id: nothing to resolve or pull.
base_id=$("$D" image inspect -f '{{.Id}}' debian:bookworm-slim)
if DOCKER_BUILDKIT=0 timeout 900 "$D" build --network host --force-rm -t "$tag" \
        --build-arg BASE_IMAGE="$base_id" "$repo" \
        >"$work/build.log" 2>&1; then
    build_s=$(( $(now) - t0 ))
    n_ok=$(awk '/^Ok:/ { s += $2 } END { print s + 0 }' "$work/build.log")
    ok "docker build ($build_s s; build stage ran $n_ok tests, 0 failed)"
else
    # What failed, wherever it is in the log (a flaky test's assertion is
    # far above the last 40 lines): meson's FAIL lines, Check's
    # assertions, the harness's own complaints; test.sh's summary keeps them.
    grep -E '^ *[0-9]+/[0-9]+ .* (FAIL|TIMEOUT|ERROR) |[^ :]+\.c:[0-9]+:[EF]:|th_harness: ' \
        "$work/build.log" | awk '!seen[$0]++' | head -n 24
    tail -40 "$work/build.log"
    bad "docker build (log: $work/build.log)"
    echo "container-stage: docker $engine: build failed"
    echo "container: $passed passed, $failed failed"
    exit 1
fi
grep -q -- '--suite server' "$work/build.log" && grep -qE '^Fail: +0' "$work/build.log"
check "build stage ran the server suite too" [ $? = 0 ]

size=$("$D" image inspect -f '{{.Size}}' "$tag")
size_mb=$(awk -v s="$size" 'BEGIN { printf "%.1f", s / 1e6 }')
check "image size $size_mb MB <= 90 MB" [ "$size" -le 90000000 ]
check "image USER is 10001:10001" [ "$("$D" image inspect -f '{{.Config.User}}' "$tag")" = 10001:10001 ]
hc=$("$D" image inspect -f '{{json .Config.Healthcheck.Test}}' "$tag")
check "image HEALTHCHECK is the CLI ($hc)" \
    [ "$hc" = '["CMD","/usr/local/bin/trainsize","health","--timeout","4"]' ]
# Nothing the runtime does not need: no curl binary, no compiler, no apt
# lists or cached .debs (the base image's apt settings plus the RUN's rm).
inside=$("$D" run --rm --name "$name-probe" --network none --entrypoint /bin/sh "$tag" -c '
    for f in /usr/bin/curl /usr/bin/wget /usr/bin/gcc /usr/bin/cc /usr/bin/meson; do
        [ -e "$f" ] && echo "has $f"; done
    ls /var/lib/apt/lists | grep -v "^lock$\|^partial$\|^auxfiles$" | sed "s/^/list /"
    ls /var/cache/apt/archives/*.deb 2>/dev/null
    [ -d /usr/share/doc ] && find /usr/share/doc -type f ! -name copyright | head -3
    true' 2>&1)
check "image has no curl/wget/compiler, apt lists, .debs or docs${inside:+: $inside}" [ -z "$inside" ]
# deploy/k8s's preStop hook runs it
check "image has /bin/sleep (the Kubernetes preStop hook)" \
    "$D" run --rm --name "$name-probe" --network none --entrypoint /bin/sleep "$tag" 0

# ---------------------------------------------------------------------------
# 4. run it as the README says, and compose at the same time (both wait
# for their first HEALTHCHECK, 30 s after start).
"$D" network create --driver bridge "$name" >/dev/null || { bad "docker network create"; exit 1; }
t_run=$(now)
cid=$("$D" run -d --name "$name" --network "$name" -p 127.0.0.1::8080 \
      --read-only --cap-drop ALL --security-opt no-new-privileges "$tag") ||
    { bad "docker run"; exit 1; }
ok "docker run --read-only --cap-drop ALL --security-opt no-new-privileges -p 127.0.0.1::8080"

compose() { TRAINSIZE_PUBLISH=127.0.0.1: timeout 120 "$DC" -p "$name" -f "$repo/deploy/compose.yaml" "$@"; }
if compose up -d --no-build >"$work/compose-up.log" 2>&1; then
    compose_up=1
    ok "docker-compose up -d (deploy/compose.yaml, project $name)"
else
    cat "$work/compose-up.log"; bad "docker-compose up -d"
fi

published=$("$D" port "$name" 8080/tcp)
check "published on 127.0.0.1 only ($(echo $published))" \
    [ "$(echo "$published" | grep -vc '^127\.0\.0\.1:[0-9]*$')" = 0 -a -n "$published" ]
port=$(echo "$published" | head -1 | sed 's/.*://')
url=http://127.0.0.1:$port

health() { "$D" inspect -f '{{.State.Health.Status}}' "$1" 2>/dev/null; }
status=
for _ in $(seq 1 60); do     # interval 30 s + start: <= 60 s
    status=$(health "$name")
    [ "$status" = healthy ] || [ "$status" = unhealthy ] && break
    sleep 1
done
check "HEALTHCHECK reports healthy ($status after $(( $(now) - t_run )) s)" [ "$status" = healthy ]
if [ "$status" != healthy ]; then "$D" logs "$name" 2>&1 | tail -20; fi

# API smoke checks over loopback, with curl from the host
tmp=$work/http; mkdir -p "$tmp"
code() { curl -s -o "$tmp/body" -D "$tmp/head" -w '%{http_code}' --max-time 10 "$@"; }
ctype() { sed -n 's/^[Cc]ontent-[Tt]ype: *//p' "$tmp/head" | tr -d '\r'; }
check "GET /livez -> 200" [ "$(code "$url/livez")" = 200 ]
check "GET /readyz -> 200" [ "$(code "$url/readyz")" = 200 ]
check "GET / -> 200 text/html, the repo's web/index.html" \
    sh -c "[ \"$(code "$url/")\" = 200 ] && cmp -s '$tmp/body' '$repo/web/index.html'"
check "GET /openapi.json is api/openapi.json" \
    sh -c "[ \"$(code "$url/openapi.json")\" = 200 ] && cmp -s '$tmp/body' '$repo/api/openapi.json'"
body='{"model":"llama3-8b","gpus":8,"zero":1,"recompute":"full","gpu":"h100-sxm"}'
c=$(code -X POST -H 'Content-Type: application/json' --data "$body" "$url/v1/plan")
cp "$tmp/body" "$tmp/plan.json"
check "POST /v1/plan -> 200 application/json with a verdict" \
    sh -c "[ '$c' = 200 ] && echo '$(ctype)' | grep -q '^application/json' && grep -q '\"fits\"' '$tmp/plan.json'"
if [ -n "${HOST_SERVER:-}" ] && [ -x "${HOST_SERVER:-}" ]; then
    "$HOST_SERVER" --bind 127.0.0.1 --port 0 >"$tmp/host.out" 2>&1 &
    host_pid=$!
    hurl=
    for _ in $(seq 1 50); do
        hurl=$(sed -n 's/.*listening on \(http:\/\/[^ ]*\).*/\1/p' "$tmp/host.out" | head -1)
        [ -n "$hurl" ] && break; sleep 0.1
    done
    curl -s --max-time 10 -X POST -H 'Content-Type: application/json' --data "$body" \
        "$hurl/v1/plan" -o "$tmp/plan-host.json"
    kill -TERM "$host_pid"; wait "$host_pid" 2>/dev/null; host_pid=
    check "container's /v1/plan answer = the host build's, byte for byte" \
        cmp -s "$tmp/plan.json" "$tmp/plan-host.json"
fi
c=$(code -X POST -H 'Content-Type: application/json' --data '{"model":"llama3-8b","gpus":-8}' "$url/v1/memory")
check "bad input -> 400 application/problem+json naming /gpus" \
    sh -c "[ '$c' = 400 ] && echo '$(ctype)' | grep -q '^application/problem+json' && grep -q '/gpus' '$tmp/body'"
c=$(code -X POST -H 'Content-Type: application/json' --data '{"model":' "$url/v1/memory")
check "malformed JSON -> 400 problem+json" \
    sh -c "[ '$c' = 400 ] && echo '$(ctype)' | grep -q '^application/problem+json'"
c=$(code "$url/no/such/path")
check "unknown path -> 404 problem+json" \
    sh -c "[ '$c' = 404 ] && echo '$(ctype)' | grep -q '^application/problem+json'"
c=$(code "$url/metrics")
check "GET /metrics -> 200 with request counters" \
    sh -c "[ '$c' = 200 ] && grep -q '_total' '$tmp/body'"

# the dashboard, in headless Chromium, against the container
if [ -x /usr/bin/chromium ]; then
    check "dashboard e2e against the container" \
        bash "$repo/tests/deploy/run.sh" dashboard_container.mjs "$url"
else
    bad "dashboard e2e: /usr/bin/chromium missing (scripts/deps.sh test installs it)"
fi

# the process: uid/gid, capabilities, no_new_privs, from the host's /proc
pid=$("$D" inspect -f '{{.State.Pid}}' "$name")
st=/proc/$pid/status
check "process runs as uid/gid 10001 ($(awk '/^(Uid|Gid):/ { printf "%s %s ", $1, $2 }' "$st"))" \
    sh -c "awk '/^Uid:|^Gid:/ { for (i = 2; i <= 5; i++) if (\$i != 10001) exit 1 }' '$st'"
caps=$(awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):/ { printf "%s%s ", $1, $2 }' "$st")
check "no capabilities at all ($caps)" \
    sh -c "awk '/^Cap(Inh|Prm|Eff|Bnd|Amb):/ && \$2 !~ /^0+\$/ { exit 1 }' '$st'"
check "no_new_privs is set" grep -qE '^NoNewPrivs:[[:space:]]+1' "$st"
idout=$("$D" exec "$name" id 2>&1)
check "docker exec id: $idout" [ "$idout" = "uid=10001(trainsize) gid=10001(trainsize) groups=10001(trainsize)" ]
check "root file system is read-only" \
    sh -c "! '$D' exec '$name' sh -c 'echo x > /tmp/x' 2>/dev/null && \
           [ \"\$('$D' inspect -f '{{.HostConfig.ReadonlyRootfs}}' '$name')\" = true ]"
check "the CLI in the image answers (trainsize check)" \
    "$D" exec "$name" /usr/local/bin/trainsize check --model llama3-8b --gpus 8 --zero 3 --recompute selective

# SIGTERM -> exit 0 within the grace period
t0=$(date +%s.%N)
"$D" kill --signal TERM "$name" >/dev/null
rc=$(timeout "$GRACE_S" "$D" wait "$name" 2>/dev/null)
dt=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
check "SIGTERM -> exit ${rc:-none} in $dt s (want 0 within $GRACE_S s)" [ "$rc" = 0 ]
"$D" rm -f "$name" >/dev/null 2>&1

# ---------------------------------------------------------------------------
# 5. compose: ps healthy, exec the CLI, stop, down
if [ "$compose_up" = 1 ]; then
    cst=
    for _ in $(seq 1 60); do
        cst=$(compose ps 2>/dev/null | awk 'NR > 2')
        echo "$cst" | grep -q '(healthy)' && break
        echo "$cst" | grep -q '(unhealthy)\|Exit' && break
        sleep 1
    done
    check "docker-compose ps: healthy ($(echo $cst | tr -s ' '))" grep -q '(healthy)' <<<"$cst"
    cport=$(compose port trainsize 8080 2>/dev/null | tr -d '\r')
    check "compose publishes on 127.0.0.1 only ($cport)" grep -qE '^127\.0\.0\.1:[0-9]+$' <<<"$cport"
    out=$(compose exec -T trainsize trainsize estimate --model llama3-8b --gpus 8 2>&1)
    check "docker-compose exec trainsize trainsize estimate --model llama3-8b --gpus 8" \
        sh -c "[ -n \"\$1\" ] && ! printf %s \"\$1\" | grep -qi 'error\|unhealthy'" _ "$out"
    echo "$out" | head -5 | sed 's/^/    /'
    ccid=$(compose ps -q trainsize)
    compose stop --timeout 15 >/dev/null 2>&1
    crc=$("$D" inspect -f '{{.State.ExitCode}}' "$ccid" 2>/dev/null)
    check "docker-compose stop: the service exited ${crc:-?} (want 0)" [ "$crc" = 0 ]
    if compose down --timeout 5 >/dev/null 2>&1; then compose_up=0; ok "docker-compose down"
    else bad "docker-compose down"; fi
    left=$("$D" ps -aq --filter "label=com.docker.compose.project=$name")
    check "no compose container left" [ -z "$left" ]
fi

total=$(( $(now) - t_start ))
echo "container-stage: docker $engine ran the image ($size_mb MB, build ${build_s:-?} s, stage $total s)"
echo "container: $passed passed, $failed failed"
[ "$failed" = 0 ]
