#!/bin/sh
# bench/adversarial.sh - worst-case latency per route under adversarial bodies.
#
# usage: bench/adversarial.sh [path/to/trainsize-server]
#        (default: $TRAINSIZE_SERVER, else build/gcc/server/trainsize-server)
# env:   ADV_MAX_TIME (30: curl's --max-time per request, seconds),
#        ADV_RUNS (1: times each body is sent; the worst is kept),
#        SERVER_THREADS (2), ADV_VERBOSE=1 (every body's status and time)
#
# Starts trainsize-server on a free 127.0.0.1 port with --answer-cache 0
# (every answer computed: a cached answer would hide the work) and posts
# each body below: the maximal value of every dimension the search, the
# solvers, the estimators and the budget plan loop over (max_gpus, max_micro_batch, max_tp,
# max_pp, max_cp, max_vpp, a global batch of 6720 divisors, 2^20 layers
# and pipeline stages, seq at its cap), on every route, one at a time.
# Prints, per route, the bodies sent, the worst curl time_total (wall) and
# the worst server CPU time (user + system from /proc/PID/stat around the
# request, 1/CLK_TCK resolution: what the request cost its worker, even
# when other jobs on the machine delay the wall clock) with the body that
# took it, then the worst of all against the 1 s a request may keep a
# worker busy (issue 22).  Report only: the exit status says whether the
# run worked - every request answered (an HTTP status below 500) within
# ADV_MAX_TIME and the server alive at the end - never how fast.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/server.sh"
bin=${1:-${TRAINSIZE_SERVER:-$here/../build/gcc/server/trainsize-server}}
max_time=${ADV_MAX_TIME:-30}
runs=${ADV_RUNS:-1}
sthreads=${SERVER_THREADS:-2}

[ -x "$bin" ] || { echo "adversarial.sh: no server binary at $bin" >&2; exit 2; }
command -v curl >/dev/null 2>&1 || { echo "adversarial.sh: curl not installed" >&2; exit 2; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/trainsize-adv.XXXXXX")
pid=
cleanup() {
    [ -z "$pid" ] || bench_stop "$pid" || true
    rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

# label  method  path  body.  A custom shape of 2^20 layers keeps the
# parameters small so that every layout fits and nothing is pruned early.
# HC: 963761198400 < 2^40 has 6720 divisors, the most of any global_batch
# the API accepts (every dp and micro-batch divides it somewhere).
TALL='"layers":1048576,"hidden":64,"heads":1,"vocab":64'
HC=963761198400
cat >"$tmp/bodies" <<EOF
presets GET /v1/presets -
gpus GET /v1/gpus -
memory-pp-2^20 POST /v1/memory {$TALL,"pp":1048576,"gpus":1048576}
memory-seq-max POST /v1/memory {"model":"llama3-8b","seq":16777216,"recompute":"none","attention":"eager"}
memory-everything-max POST /v1/memory {$TALL,"pp":1024,"dp":1024,"seq":16777216,"micro_batch":1048576,"global_batch":1099511627776,"vpp":1024,"pp_schedule":"interleaved","loss_chunks":16777216}
compute-pp-2^20 POST /v1/compute {$TALL,"pp":1048576,"gpus":1048576}
compute-everything-max POST /v1/compute {$TALL,"pp":1024,"dp":1024,"seq":16777216,"micro_batch":1048576,"global_batch":1099511627776,"vpp":1024,"pp_schedule":"interleaved","tokens":1e20}
checkpoint-pp-2^20 POST /v1/checkpoint {$TALL,"pp":1048576,"gpus":1048576,"nvme_keep":1048576}
plan-pp-2^20 POST /v1/plan {$TALL,"pp":1048576,"gpus":1048576}
plan-pp-2^19 POST /v1/plan {$TALL,"pp":524288,"dp":2}
plan-sweep-pp-1024 POST /v1/plan {$TALL,"pp":1024,"dp":1024,"global_batch":1099511627776}
fit-mb-hc POST /v1/fit {"model":"llama3-70b","solve":"micro_batch","max_micro_batch":1048576,"global_batch":$HC,"dp":1,"gpus":1}
fit-mb-hc-pp-1024 POST /v1/fit {$TALL,"solve":"micro_batch","max_micro_batch":1048576,"global_batch":$HC,"pp":1024,"gpus":1024,"seq":16777216}
fit-mb-hc-walk-pp-1024 POST /v1/fit {"layers":1024,"hidden":64,"heads":1,"vocab":64,"solve":"micro_batch","max_micro_batch":1048576,"global_batch":$HC,"pp":1024,"gpus":1024,"seq":256}
fit-mb-derived-pp-2^20 POST /v1/fit {$TALL,"solve":"micro_batch","max_micro_batch":1048576,"pp":1048576,"gpus":1048576}
fit-gpus-hc POST /v1/fit {"model":"llama3-8b","solve":"gpus","max_gpus":1048576,"global_batch":$HC}
fit-gpus-hc-pp-1024 POST /v1/fit {$TALL,"solve":"gpus","max_gpus":1048576,"global_batch":$HC,"pp":1024}
fit-gpus-prime POST /v1/fit {"model":"llama3-8b","solve":"gpus","max_gpus":1048576,"global_batch":1099511627689,"micro_batch":1}
search-issue22-vpp POST /v1/search {"model":"llama3-8b","max_gpus":1048576,"global_batch":$HC,"max_vpp":1048576}
search-all-max POST /v1/search {"model":"llama3-8b","max_gpus":1048576,"global_batch":$HC,"max_vpp":1048576,"max_micro_batch":1048576,"max_tp":1048576,"max_pp":1048576,"max_cp":1048576,"limit":100}
search-tall-max-pp POST /v1/search {$TALL,"max_gpus":1048576,"global_batch":$HC,"max_pp":1048576,"max_vpp":1048576,"max_micro_batch":1048576}
search-heads-max-tp POST /v1/search {"layers":64,"hidden":1048576,"heads":1048576,"vocab":64,"max_gpus":1048576,"max_tp":1048576,"global_batch":$HC}
search-seq-max-cp POST /v1/search {"model":"llama3-8b","seq":16777216,"max_gpus":1048576,"max_cp":1048576,"global_batch":$HC}
search-mb-max POST /v1/search {$TALL,"max_gpus":1048576,"global_batch":1099511627776,"max_micro_batch":1048576,"pp":1,"tp":1,"cp":1}
search-moe-ep POST /v1/search {"model":"mixtral-8x7b","max_gpus":1048576,"global_batch":$HC,"max_vpp":1048576,"max_micro_batch":1048576}
search-experts-720720 POST /v1/search {"layers":64,"hidden":64,"heads":1,"vocab":64,"experts":720720,"top_k":1,"moe_ffn":64,"max_gpus":1048576,"global_batch":$HC}
search-heads-720720 POST /v1/search {"layers":2,"hidden":720720,"heads":720720,"vocab":64,"max_gpus":1048576,"max_tp":1048576,"global_batch":$HC}
search-fixed-gpus POST /v1/search {"model":"llama3-8b","gpus":1048576,"global_batch":$HC,"max_vpp":1048576,"max_micro_batch":1048576}
budget-optimal-hc POST /v1/budget {"gpus":720720,"global_batch":$HC,"budget_days":1}
budget-ratio-hc POST /v1/budget {"gpus":720720,"global_batch":$HC,"budget_days":100000,"tokens_per_param":1e6}
budget-model-hc POST /v1/budget {"model":"llama3-8b","gpus":720720,"global_batch":$HC,"budget_days":100000}
import-max POST /v1/import {"model":"llama3-8b","megatron_args":"--num-layers 1048576 --pipeline-model-parallel-size 1048576 --position-embedding-type rope","pp":1048576,"gpus":1048576}
EOF

bench_start adversarial.sh "$bin" "$sthreads" "$tmp" --answer-cache 0
echo "adversarial.sh: $url, server threads $sthreads, --answer-cache 0, curl --max-time $max_time, $runs run(s) per body"

# The server's CPU time so far, in clock ticks (fields 14 and 15 of
# /proc/PID/stat; its name field has no spaces).
tck=$(getconf CLK_TCK 2>/dev/null || echo 100)
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0; }

rc=0
: >"$tmp/times"
while read -r label method path body; do
    i=0
    while [ $i -lt "$runs" ]; do
        i=$((i + 1))
        c0=$(cpu_ticks)
        if [ "$method" = GET ]; then
            res=$(curl -sS -o "$tmp/answer" --max-time "$max_time" \
                -w '%{http_code} %{time_total}' "$url$path" 2>"$tmp/curl") || true
        else
            printf '%s' "$body" >"$tmp/body"
            res=$(curl -sS -o "$tmp/answer" --max-time "$max_time" \
                -H 'Content-Type: application/json' --data-binary @"$tmp/body" \
                -w '%{http_code} %{time_total}' "$url$path" 2>"$tmp/curl") || true
        fi
        c1=$(cpu_ticks)
        cpu=$(awk -v a="$c0" -v b="$c1" -v t="$tck" 'BEGIN { printf "%.2f", (b - a) / t }')
        code=${res%% *}
        secs=${res#* }
        case "$code" in
            [1-4][0-9][0-9]) ;;
            *)
                echo "adversarial.sh: $label ($method $path): no answer below 500 (status '$code'): $(head -c 300 "$tmp/curl" "$tmp/answer" 2>/dev/null)" >&2
                rc=1
                [ -n "$secs" ] && [ "$secs" != "$res" ] || secs=$max_time ;;
        esac
        # A 200 that says it stopped early: worth seeing next to its time.
        trunc=
        grep -q '"truncated":true' "$tmp/answer" 2>/dev/null && trunc=truncated
        if [ "${ADV_VERBOSE:-0}" = 1 ]; then
            printf '  %-26s %-16s %s %8.3f s  cpu %5.2f s %s\n' "$label" "$path" "$code" "$secs" "$cpu" "$trunc"
            [ "$code" = 200 ] || printf '    %s\n' "$(head -c 200 "$tmp/answer" 2>/dev/null)"
        fi
        printf '%s %s %s %s %s %s\n' "$path" "$secs" "$label" "$code" "${trunc:--}" "$cpu" >>"$tmp/times"
    done
done <"$tmp/bodies"

echo
awk '
    { n[$1]++; if (!($1 in w) || $2 + 0 > w[$1] + 0) { w[$1] = $2; wl[$1] = $3; wc[$1] = $4; wt[$1] = $5 }
      if (!($1 in cw) || $6 + 0 > cw[$1] + 0) { cw[$1] = $6; cl[$1] = $3 }
      if ($2 + 0 > all + 0) { all = $2; alll = $3; allp = $1 }
      if ($6 + 0 > call + 0) { call = $6; calll = $3 }
      if (!($1 in seen)) { seen[$1] = 1; order[++k] = $1 } }
    END {
        printf "%-16s %6s %10s  %-26s %-6s %9s  %s\n", "route", "bodies", "wall (s)", "worst wall body", "status", "cpu (s)", "worst cpu body"
        for (i = 1; i <= k; i++) { r = order[i]
            printf "%-16s %6d %10.3f  %-26s %-6s %9.2f  %s\n", r, n[r], w[r], wl[r],
                   wc[r] (wt[r] == "-" ? "" : "+t"), cw[r], cl[r] }
        printf "(+t: the answer says truncated: true)\n"
        printf "worst of all: wall %.3f s (%s, %s), server CPU %.2f s (%s): %s the 1 s a request may hold a worker\n",
               all, alll, allp, call, calll, call + 0 <= 1.0 ? "within" : "OVER"
    }' "$tmp/times"

# Still serving after all of it.
live=$(curl -sS -o /dev/null --max-time 5 -w '%{http_code}' "$url/livez" 2>/dev/null || true)
[ "$live" = 200 ] || { echo "adversarial.sh: /livez answered '$live' after the run" >&2; rc=1; }
exit $rc
