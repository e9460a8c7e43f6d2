#!/bin/sh
# bench/floor.sh - trainsize-server against nginx serving the same bytes.
#
# usage: bench/floor.sh [path/to/trainsize-server]
#        (default: $TRAINSIZE_SERVER, else build/gcc/server/trainsize-server)
# env:   FLOOR_SECONDS (3 per wrk run), FLOOR_CONNS (64), LOAD_THREADS (2
#        wrk threads), SERVER_THREADS (2, also nginx's worker_processes),
#        FLOOR_VERBOSE=1 (each run's req/s and p99 on stderr, for profiling),
#        FLOOR_NGINX (the nginx binary; default: nginx on PATH or /usr/sbin)
#
# The "floor" is what HTTP alone costs on this machine: nginx sending a
# static file.  The script captures trainsize's exact answers to
# POST /v1/memory, POST /v1/plan and GET /v1/gpus, has nginx serve those
# bytes (with the same response headers) as static files on another
# 127.0.0.1 port, and runs wrk against both, alternating, three times per
# route.  It prints, per route, the median request rate of trainsize over
# nginx's, and trainsize's median p99 latency.  Report only: the exit
# status says whether the run worked (every answer 200), never how fast.
# nginx is installed from Debian when missing and we are root; otherwise
# the comparison is skipped with a message (exit 0).  3 routes x 2 servers
# x 3 runs x FLOOR_SECONDS: ~60 s with the defaults.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/server.sh"
bin=${1:-${TRAINSIZE_SERVER:-$here/../build/gcc/server/trainsize-server}}
secs=${FLOOR_SECONDS:-3}
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

# One wrk run: prints "req/s p99-ms non2xx".
run() { # url, [lua args]
    if [ $# -gt 1 ]; then
        wrk -t"$wthreads" -c"$conns" -d"${secs}s" --latency -s "$tmp/post.lua" "$1" -- "$2"
    else
        wrk -t"$wthreads" -c"$conns" -d"${secs}s" --latency "$1"
    fi >"$tmp/wrk" 2>&1 || { cat "$tmp/wrk" >&2; echo "floor.sh: wrk failed" >&2; exit 1; }
    awk '
        /^Requests\/sec:/ { rps = $2 }
        $1 == "99%" { v = $2; u = v; sub(/[0-9.]+/, "", u); sub(/[a-z]+$/, "", v)
                      p = (u == "us") ? v / 1000 : (u == "s") ? v * 1000 : (u == "m") ? v * 60000 : v }
        /Non-2xx or 3xx responses:/ { bad = $NF }
        /Socket errors:/ { bad = bad + 1 }
        END { printf "%s %.3f %d\n", rps, p, bad + 0 }' "$tmp/wrk"
}
median3() { printf '%s\n' "$@" | sort -g | sed -n 2p; }

echo "floor.sh: trainsize $url vs nginx 127.0.0.1:$nport, $sthreads server threads/workers, wrk -t$wthreads -c$conns -d${secs}s, median of 3"
# Warm both (first connections, page cache, CPU frequency).
wrk -t1 -c8 -d1s "$url/v1/gpus" >/dev/null 2>&1 || true
wrk -t1 -c8 -d1s "http://127.0.0.1:$nport/gpus.json" >/dev/null 2>&1 || true

bad=0
for route in memory plan gpus; do
    ts_r= ts_p= ng_r=
    for k in 1 2 3; do
        if [ "$route" = gpus ]; then set -- $(run "$url/v1/gpus")
        else set -- $(run "$url/v1/$route" "$tmp/body.json"); fi
        ts_r="$ts_r $1" ts_p="$ts_p $2"
        bad=$((bad + $3))
        [ "${FLOOR_VERBOSE:-0}" = 0 ] || echo "  $route trainsize: $1 req/s, p99 $2 ms" >&2
        set -- $(run "http://127.0.0.1:$nport/$route.json")
        ng_r="$ng_r $1"
        bad=$((bad + $3))
        [ "${FLOOR_VERBOSE:-0}" = 0 ] || echo "  $route nginx:     $1 req/s, p99 $2 ms" >&2
    done
    # shellcheck disable=SC2086
    tr=$(median3 $ts_r) nr=$(median3 $ng_r) p99=$(median3 $ts_p)
    case $route in gpus) label="GET /v1/gpus" ;; *) label="POST /v1/$route" ;; esac
    size=$(wc -c <"$tmp/www/$route.json")
    awk -v l="$label" -v t="$tr" -v n="$nr" -v p="$p99" -v s="$size" 'BEGIN {
        printf "FLOOR %-16s %6d B  trainsize/nginx req/s %.2fx  trainsize p99 %.2f ms\n", l, s, (n > 0 ? t / n : 0), p }'
done

st=0
bench_stop "$npid" || true
npid=
bench_stop "$pid" || st=$?
pid=
[ $st -eq 0 ] || { cat "$tmp/err" >&2; echo "floor.sh: server exit $st" >&2; exit 1; }
[ $bad = 0 ] || { echo "floor.sh: non-2xx answers or socket errors under load" >&2; exit 1; }
exit 0
