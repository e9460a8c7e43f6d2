#!/bin/sh
# bench/floor.sh - trainsize-server against nginx serving the same bytes.
#
# usage: bench/floor.sh [path/to/trainsize-server]
#        (default: $TRAINSIZE_SERVER, else build/gcc/server/trainsize-server)
# env:   FLOOR_SECONDS (3 per wrk run), FLOOR_RUNS (5 pairs per route),
#        FLOOR_CONNS (64), LOAD_THREADS (2 wrk threads), SERVER_THREADS (2,
#        also nginx's worker_processes), FLOOR_VERBOSE=1 (each run's req/s,
#        p99 and CPU per request on stderr, for profiling), FLOOR_NGINX (the
#        nginx binary; default: nginx on PATH or /usr/sbin)
#
# The "floor" is what HTTP alone costs on this machine: nginx sending a
# static file.  The script captures trainsize's exact answers to
# POST /v1/memory, POST /v1/plan and GET /v1/gpus, has nginx serve those
# bytes (with the same response headers) as static files on another
# 127.0.0.1 port, and runs wrk against both, alternating, FLOOR_RUNS times
# per route: first as deployed (a repeated estimate is answered from the
# answer cache), then for POST /v1/memory and /v1/plan again with
# --answer-cache 0 ("computed": every answer estimated and written anew,
# what a request never seen before costs).  Per route it prints the median over the runs of trainsize's
# request rate over nginx's in the run just before (adjacent runs share
# the machine's state of the moment: on a shared 2-core machine single
# runs of nginx alone vary by 50 %, a ratio of medians would carry that),
# the smallest and largest of those ratios, trainsize's median p99, and
# both servers' CPU time per request (user + system, from /proc: what each
# answer costs, whatever share of the cores wrk took).  Report only: the
# exit status says whether the run worked (every answer 200), never how
# fast.  nginx is installed from Debian when missing and we are root;
# otherwise the comparison is skipped with a message (exit 0).
# 5 routes x 2 servers x FLOOR_RUNS x FLOOR_SECONDS: ~150 s by default.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/server.sh"
bin=${1:-${TRAINSIZE_SERVER:-$here/../build/gcc/server/trainsize-server}}
secs=${FLOOR_SECONDS:-3}
runs=${FLOOR_RUNS:-5}
conns=${FLOOR_CONNS:-64}
wthreads=${LOAD_THREADS:-2}
sthreads=${SERVER_THREADS:-2}
body='{"model":"llama3-70b","gpu":"h100-sxm","dp":8,"seq":2048}'

[ -x "$bin" ] || { echo "floor.sh: no server binary at $bin" >&2; exit 2; }
for t in wrk curl; do
    command -v "$t" >/dev/null 2>&1 || { echo "floor.sh: $t not installed" >&2; exit 2; }
done
find_nginx() { echo "${FLOOR_NGINX:-$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)}"; }
nginx=$(find_nginx)
if [ ! -x "$nginx" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "floor.sh: installing nginx (Debian package)"
        # bounded: a machine without a reachable mirror must not stall here
        DEBIAN_FRONTEND=noninteractive timeout 300 apt-get install -y -q \
            --no-install-recommends nginx >/dev/null 2>&1 || true
        nginx=$(find_nginx)
    fi
    if [ ! -x "$nginx" ]; then
        echo "floor.sh: skipped: nginx is not installed (run as root to have it installed, or: apt-get install nginx)"
        exit 0
    fi
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsize-floor.XXXXXX")
pid= npid=
cleanup() {
    [ -z "$pid" ] || bench_stop "$pid" || true
    [ -z "$npid" ] || bench_stop "$npid" || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

bench_start floor.sh "$bin" "$sthreads" "$tmp"

# The exact answers, and the headers nginx is to send with them.  nginx's
# workers drop root for "nobody": they must be able to read them.
mkdir "$tmp/www"
chmod 755 "$tmp" "$tmp/www"
printf '%s' "$body" >"$tmp/body.json"
capture() { # name, path, curl args...
    name=$1 path=$2
    shift 2
    code=$(curl -sS -o "$tmp/www/$name.json" -D "$tmp/$name.hdr" -w '%{http_code}' \
        "$@" "$url$path") || { echo "floor.sh: curl $path failed" >&2; exit 1; }
    [ "$code" = 200 ] || { echo "floor.sh: $path answered $code" >&2; exit 1; }
}
capture memory /v1/memory -H 'Content-Type: application/json' --data-binary @"$tmp/body.json"
capture plan /v1/plan -H 'Content-Type: application/json' --data-binary @"$tmp/body.json"
capture gpus /v1/gpus
chmod 644 "$tmp/www"/*.json
# Every header trainsize sends but the ones nginx makes itself.
headers=$(tr -d '\r' <"$tmp/gpus.hdr" | awk -F': ' 'NR > 1 && NF >= 2 &&
    tolower($1) !~ /^(date|content-length|content-type|connection|etag|server|keep-alive)$/ {
        v = substr($0, length($1) + 3); gsub(/"/, "\\\"", v)
        printf "        add_header %s \"%s\" always;\n", $1, v }')

# A free port for nginx: try a few until one binds.
cat >"$tmp/mime" <<EOF
types { application/json json; }
EOF
nport=
for try in 1 2 3 4 5 6 7 8; do
    p=$(( 20000 + ($$ * 7 + try * 7919 + $(date +%N | sed 's/^0*//;s/^$/0/') ) % 40000 ))
    cat >"$tmp/nginx.conf" <<EOF
daemon off;
worker_processes $sthreads;
pid $tmp/nginx.pid;
error_log $tmp/nginx-error.log warn;
events { worker_connections 1024; }
http {
    include $tmp/mime;
    access_log off;
    server_tokens off;
    client_body_temp_path $tmp/nginx-body;
    proxy_temp_path $tmp/nginx-proxy;
    fastcgi_temp_path $tmp/nginx-fcgi;
    uwsgi_temp_path $tmp/nginx-uwsgi;
    scgi_temp_path $tmp/nginx-scgi;
    keepalive_requests 1000000;
    server {
        listen 127.0.0.1:$p;
        root $tmp/www;
        etag off;
$headers
    }
}
EOF
    "$nginx" -c "$tmp/nginx.conf" -p "$tmp" -e "$tmp/nginx-error.log" >/dev/null 2>&1 &
    npid=$!
    i=0
    while [ $i -lt 40 ]; do
        if curl -s -o /dev/null "http://127.0.0.1:$p/gpus.json" 2>/dev/null; then nport=$p; break; fi
        kill -0 "$npid" 2>/dev/null || break
        sleep 0.05
        i=$((i + 1))
    done
    [ -n "$nport" ] && break
    bench_stop "$npid" || true
    npid=
done
[ -n "$nport" ] || { cat "$tmp/nginx-error.log" >&2 2>/dev/null; echo "floor.sh: nginx did not start" >&2; exit 1; }
for n in memory plan gpus; do
    curl -s -o "$tmp/check.json" "http://127.0.0.1:$nport/$n.json"
    cmp -s "$tmp/check.json" "$tmp/www/$n.json" || { echo "floor.sh: nginx serves other bytes for $n" >&2; exit 1; }
done

cat >"$tmp/post.lua" <<'EOF'
-- POST the body in the file named by the first argument.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
init = function(args)
  local f = assert(io.open(args[1], "rb"))
  wrk.body = f:read("*a")
  f:close()
end
EOF

# CPU ticks (user + system) of the processes named: read before and
# after a run.
ticks() {
    t=0
    for p in "$@"; do
        # fields 14 and 15 of /proc/PID/stat; the command name (field 2)
        # is in parentheses and has no spaces here
        set -- $(cut -d' ' -f14,15 "/proc/$p/stat" 2>/dev/null || echo 0 0)
        t=$((t + $1 + $2))
    done
    echo $t
}
hz=$(getconf CLK_TCK 2>/dev/null || echo 100)

# One wrk run: prints "req/s p99-ms non2xx cpu-us-per-request".
run() { # pids, url, [lua args]
    pids=$1
    shift
    # shellcheck disable=SC2086
    t0=$(ticks $pids)
    if [ $# -gt 1 ]; then
        wrk -t"$wthreads" -c"$conns" -d"${secs}s" --latency -s "$tmp/post.lua" "$1" -- "$2"
    else
        wrk -t"$wthreads" -c"$conns" -d"${secs}s" --latency "$1"
    fi >"$tmp/wrk" 2>&1 || { cat "$tmp/wrk" >&2; echo "floor.sh: wrk failed" >&2; exit 1; }
    # shellcheck disable=SC2086
    t1=$(ticks $pids)
    awk -v dt=$((t1 - t0)) -v hz="$hz" '
        /requests in/ { n = $1 }
        /^Requests\/sec:/ { rps = $2 }
        $1 == "99%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
                      p = (u == "us") ? v / 1000 : (u == "s") ? v * 1000 : (u == "m") ? v * 60000 : v }
        /Non-2xx or 3xx responses:/ { bad = $NF }
        /Socket errors:/ { bad = bad + 1 }
        END { printf "%s %.3f %d %.2f\n", rps, p, bad + 0, (n > 0 ? dt * 1e6 / hz / n : 0) }' "$tmp/wrk"
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
minmax() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.2f-%.2f", lo, hi }'; }

echo "floor.sh: trainsize $url vs nginx 127.0.0.1:$nport, $sthreads server threads/workers, wrk -t$wthreads -c$conns -d${secs}s, $runs alternating pairs"
# Warm both (first connections, page cache, CPU frequency).
wrk -t1 -c8 -d1s "$url/v1/gpus" >/dev/null 2>&1 || true
wrk -t1 -c8 -d1s "http://127.0.0.1:$nport/gpus.json" >/dev/null 2>&1 || true
nworkers=$(pgrep -P "$npid" 2>/dev/null | tr '\n' ' ')
[ -n "$nworkers" ] || nworkers=$npid

# One route, FLOOR_RUNS alternating pairs against the running server.
measure() { # route, label suffix
    route=$1 suffix=$2 ratios= ts_p= ts_c= ng_c=
    k=0
    while [ $k -lt "$runs" ]; do
        k=$((k + 1))
        set -- $(run "$nworkers" "http://127.0.0.1:$nport/$route.json")
        ng_r=$1 bad=$((bad + $3)) ng_c="$ng_c $4"
        [ "${FLOOR_VERBOSE:-0}" = 0 ] || echo "  $route nginx:     $1 req/s, p99 $2 ms, $4 us CPU/request" >&2
        if [ "$route" = gpus ]; then set -- $(run "$pid" "$url/v1/gpus")
        else set -- $(run "$pid" "$url/v1/$route" "$tmp/body.json"); fi
        bad=$((bad + $3)) ts_p="$ts_p $2" ts_c="$ts_c $4"
        ratios="$ratios $(awk -v t="$1" -v n="$ng_r" 'BEGIN { printf "%.4f", (n > 0 ? t / n : 0) }')"
        [ "${FLOOR_VERBOSE:-0}" = 0 ] || echo "  $route trainsize: $1 req/s, p99 $2 ms, $4 us CPU/request" >&2
    done
    # shellcheck disable=SC2086
    r=$(median $ratios) range=$(minmax $ratios) p99=$(median $ts_p) tc=$(median $ts_c) nc=$(median $ng_c)
    case $route in gpus) label="GET /v1/gpus" ;; *) label="POST /v1/$route" ;; esac
    size=$(wc -c <"$tmp/www/$route.json")
    awk -v l="$label$suffix" -v r="$r" -v g="$range" -v p="$p99" -v s="$size" -v tc="$tc" -v nc="$nc" 'BEGIN {
        printf "FLOOR %-25s %6d B  trainsize/nginx req/s %.2fx (runs %s)  trainsize p99 %.2f ms  CPU/request %.1f us vs nginx %.1f us\n", l, s, r, g, p, tc, nc }'
}

bad=0
# As deployed: a repeated estimate is answered from the answer cache
# (server/ts_memo.h), the catalogue from memory.
for route in memory plan gpus; do
    measure "$route" ""
done
# Every estimate computed (--answer-cache 0): what a request never seen
# before costs.
st=0
bench_stop "$pid" || st=$?
pid=
[ $st -eq 0 ] || { cat "$tmp/err" >&2; echo "floor.sh: server exit $st" >&2; exit 1; }
bench_start floor.sh "$bin" "$sthreads" "$tmp" --answer-cache 0
for route in memory plan; do
    measure "$route" " computed"
done

st=0
bench_stop "$npid" || true
npid=
bench_stop "$pid" || st=$?
pid=
[ $st -eq 0 ] || { cat "$tmp/err" >&2; echo "floor.sh: server exit $st" >&2; exit 1; }
[ $bad = 0 ] || { echo "floor.sh: non-2xx answers or socket errors under load" >&2; exit 1; }
exit 0
