#!/bin/sh
# The settings table of deploy/README.md against the server's --help,
# which ts_config.c writes from its options table: every variable the
# server reads has a row, and the row's default (its first word) is the
# one --help names.  The paths are left out: their defaults follow the
# build's prefix, the README's name the default one.
# usage: doc_defaults.sh TRAINSIZE_SERVER DEPLOY_README
set -u
server=$1 readme=$2
help=$("$server" --help) || { echo "FAIL: $server --help"; exit 1; }
# "(LO..HI; ENV, DEF)" or "(ENV, DEF)" at the end of each option, joined
# across its wrapped lines
pairs=$(printf '%s\n' "$help" | awk '
    /^  --/ { if (p != "") print p; p = $0; next }
    /^                  / { sub(/^ +/, " "); p = p $0; next }
    { if (p != "") print p; p = "" }
    END { if (p != "") print p }' |
    sed -n 's/.*(\([0-9]*\.\.[0-9]*; \)\{0,1\}\(TRAINSIZE_[A-Z_]*\), \(.*\))$/\2 \3/p')
[ -n "$pairs" ] || { echo "FAIL: no (ENV, default) in --help"; exit 1; }
n=0 bad=0
while read -r env def; do
    n=$((n + 1))
    case $def in /*) continue ;; esac
    row=$(grep -E "^\| \`$env\` \| " "$readme" | head -1)
    if [ -z "$row" ]; then
        echo "FAIL: $env has no row in $readme"; bad=$((bad + 1)); continue
    fi
    doc=$(printf '%s\n' "$row" | awk -F'|' '{ gsub(/^ +| +$/, "", $3); print $3 }')
    case "$doc" in
    "$def"|"$def "*) ;;
    *) echo "FAIL: $env: $readme says '$doc', --help says '$def'"; bad=$((bad + 1)) ;;
    esac
done <<EOP
$pairs
EOP
[ "$bad" = 0 ] || exit 1
echo "ok: $n settings, the README's defaults are --help's"
