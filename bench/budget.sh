#!/bin/sh
# bench/budget.sh - POST /v1/budget against POST /v1/search over loopback.
#
# usage: bench/budget.sh [path/to/trainsize-server]
#        (default: $TRAINSIZE_SERVER, else build/gcc/server/trainsize-server)
# env:   BUDGET_CALLS (25 per body)
#
# Issue 28 asks that a budget plan answer "within the same latency class as
# /v1/search".  One server, the answer cache off (every answer computed
# anew), BUDGET_CALLS requests of each body below, alternating search and
# budget so both see the machine as it is at that moment; prints each
# body's median and p90 of curl's time_total and the budget medians over
# the search median of the same cluster (the ratio is what to compare
# across machines).  Report only: the exit status says whether every
# answer was 200, never how fast.  Loopback only; 4 x BUDGET_CALLS
# requests in all.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
. "$here/server.sh"
bin=${1:-${TRAINSIZE_SERVER:-$here/../build/gcc/server/trainsize-server}}
calls=${BUDGET_CALLS:-25}

[ -x "$bin" ] || { echo "budget.sh: no server binary at $bin" >&2; exit 2; }
command -v curl >/dev/null 2>&1 || { echo "budget.sh: curl not installed" >&2; exit 2; }
case $calls in '' | *[!0-9]*) echo "budget.sh: BUDGET_CALLS must be a count" >&2; exit 2 ;; esac
[ "$calls" -ge 1 ] && [ "$calls" -le 1000 ] || { echo "budget.sh: BUDGET_CALLS in 1..1000" >&2; exit 2; }

tmp=$(mktemp -d)
pid=
cleanup() { [ -z "$pid" ] || bench_stop "$pid"; rm -rf "$tmp"; }
trap cleanup EXIT INT TERM
bench_start budget "$bin" 2 "$tmp" --answer-cache 0

# name route body: the two clusters of docs/performance.md, "POST /v1/budget"
printf '%s\n' \
    'search-70b /v1/search {"model":"llama3-70b","gpus":1024}' \
    'budget-70b /v1/budget {"model":"llama3-70b","gpus":1024,"budget_days":30}' \
    'budget-optimal-1024 /v1/budget {"gpus":1024,"budget_days":30}' \
    'search-8b /v1/search {"model":"llama3-8b","gpus":64}' \
    'budget-optimal-64 /v1/budget {"gpus":64,"budget_days":7}' >"$tmp/cases"

i=0
while [ "$i" -lt "$calls" ]; do
    while read -r name route body; do
        code=$(curl -s -o "$tmp/answer" -w '%{http_code} %{time_total}' \
            -H 'Content-Type: application/json' --data-binary "$body" "$url$route")
        set -- $code
        [ "$1" = 200 ] || { echo "budget.sh: $name answered $1: $(head -c 300 "$tmp/answer")" >&2; exit 1; }
        echo "$2" >>"$tmp/$name"
    done <"$tmp/cases"
    i=$((i + 1))
done

# quantile FILE Q: the Q-th quantile (nearest rank) of a column, in ms
quantile() {
    sort -g "$1" | awk -v q="$2" '{ v[NR] = $1 } END { i = int(q * NR + 0.999999); if (i < 1) i = 1; printf "%.2f", v[i] * 1000 }'
}

printf '%-22s %10s %10s %s\n' body 'median ms' 'p90 ms' 'budget / search (medians)'
while read -r name route body; do
    m=$(quantile "$tmp/$name" 0.5)
    case $name in
        *-70b | *-1024) ref=$(quantile "$tmp/search-70b" 0.5) ;;
        *) ref=$(quantile "$tmp/search-8b" 0.5) ;;
    esac
    case $name in
        budget-*) ratio=$(awk -v a="$m" -v b="$ref" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }') ;;
        *) ratio=- ;;
    esac
    printf '%-22s %10s %10s %s\n' "$name" "$m" "$(quantile "$tmp/$name" 0.9)" "$ratio"
done <"$tmp/cases"
