# bench/server.sh - sourced by the bench scripts: stop a process, and
# start trainsize-server on a free loopback port.  POSIX sh.

# bench_stop PID: TERM, then KILL after 15 s (a TERM sent while the shell
# is still between fork and exec can be swallowed: never wait forever).
bench_stop() {
    kill -TERM "$1" 2>/dev/null || return 0
    n=0
    while kill -0 "$1" 2>/dev/null && [ $n -lt 150 ]; do
        sleep 0.1
        n=$((n + 1))
    done
    kill -0 "$1" 2>/dev/null && kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}

# bench_start NAME BIN THREADS DIR: starts the server on port 0, sets
# $pid and $url ("listening on http://127.0.0.1:PORT" once bound); exits
# the script when it dies or does not bind within 5 s.
bench_start() {
    "$2" --port 0 --bind 127.0.0.1 --threads "$3" --access-log 0 \
        >"$4/out" 2>"$4/err" &
    pid=$!
    url=
    i=0
    while [ $i -lt 100 ]; do
        url=$(sed -n 's/^listening on //p' "$4/out" 2>/dev/null || true)
        [ -n "$url" ] && break
        kill -0 "$pid" 2>/dev/null || { cat "$4/err" >&2; echo "$1: server exited" >&2; exit 1; }
        sleep 0.05
        i=$((i + 1))
    done
    [ -n "$url" ] || { echo "$1: server did not start" >&2; exit 1; }
}
