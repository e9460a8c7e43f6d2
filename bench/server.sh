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

# bench_start NAME BIN THREADS DIR [FLAGS...]: starts the server on port
# 0 with FLAGS, sets $pid and $url ("listening on http://127.0.0.1:PORT"
# once bound); exits the script when it dies or does not bind within 5 s.
bench_start() {
    bs_name=$1 bs_bin=$2 bs_threads=$3 bs_dir=$4
    shift 4
    "$bs_bin" --port 0 --bind 127.0.0.1 --threads "$bs_threads" --access-log 0 "$@" \
        >"$bs_dir/out" 2>"$bs_dir/err" &
    pid=$!
    url=
    i=0
    while [ $i -lt 100 ]; do
        url=$(sed -n 's/^listening on //p' "$bs_dir/out" 2>/dev/null || true)
        [ -n "$url" ] && break
        kill -0 "$pid" 2>/dev/null || { cat "$bs_dir/err" >&2; echo "$bs_name: server exited" >&2; exit 1; }
        sleep 0.05
        i=$((i + 1))
    done
    [ -n "$url" ] || { echo "$bs_name: server did not start" >&2; exit 1; }
}
