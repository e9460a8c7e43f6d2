#!/usr/bin/env bash
# code-stats.sh [--check] - the size counts a reader meets (issue 23):
#   functions over 80 lines (C, by universal-ctags' end lines),
#   source files over 800 lines (C, headers, the dashboard's JS and CSS),
#   token-pasting macros (## in C sources and the registry),
#   hand-kept copies (one name defined in more than one place).
# Each count is printed with its items.  An item may be explained by one
# line in scripts/code-stats.allow ("KIND ITEM - why"); --check exits 1
# when an item is neither 0 nor explained, or an explanation is stale.
# Generated files (build dirs, web/fields.js, web/terms.js) are not counted:
# a generator's table is data, and its staleness test keeps it right.
set -euo pipefail
cd "$(dirname "$0")/.."
check=0
[ "${1:-}" = --check ] && check=1
allow=scripts/code-stats.allow
# The function counts need universal-ctags (scripts/deps.sh test installs
# it); without it there is nothing to count with: 77 is meson's "skipped".
if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
    echo "code-stats: needs universal-ctags (apt-get install universal-ctags)"
    exit 77
fi
FN_MAX=${FN_MAX:-80}
FILE_MAX=${FILE_MAX:-800}

dirs=()
for d in core lib import api server cli tools; do [ -d "$d" ] && dirs+=("$d"); done
csrc() { find "${dirs[@]}" -type f \( -name '*.c' -o -name '*.h' -o -name '*.def' \) | sort; }

items=$(mktemp)
trap 'rm -f "$items"' EXIT

# 1. functions over FN_MAX lines: "fn path:name lines"
csrc | grep -E '\.(c|h)$' | ctags -L - -x --languages=C --kinds-C=f \
    --_xformat='%F	%N	%n	%e' 2>/dev/null |
    awk -F'\t' -v max="$FN_MAX" '$4 != "" && $4 - $3 + 1 > max {
        printf "fn %s:%s %d\n", $1, $2, $4 - $3 + 1 }' >>"$items"

# 2. files over FILE_MAX lines: "file path lines"
{ csrc; find web -maxdepth 1 -type f \( -name '*.js' -o -name '*.css' -o -name '*.html' \) \
      ! -name fields.js ! -name terms.js | sort; } |
    while read -r f; do
        n=$(wc -l <"$f")
        if [ "$n" -gt "$FILE_MAX" ]; then echo "file $f $n"; fi
    done >>"$items"

# 3. token pasting: "paste path count" (string literals dropped first: a
#    markdown heading "## ..." that a generator writes is not a macro)
csrc | while read -r f; do
    n=$(sed -E 's/"([^"\\]|\\.)*"//g' "$f" | grep -c '##' || true)
    if [ "$n" -gt 0 ]; then echo "paste $f $n"; fi
done >>"$items"

# 4. hand-kept copies: a function or table defined in more than one file
#    (static helpers copied between modules; main is per program).
csrc | grep -E '\.c$' | ctags -L - -x --languages=C --kinds-C=fv \
    --_xformat='%N	%F' 2>/dev/null |
    awk -F'\t' '$1 != "main" { f[$1] = f[$1] (f[$1] ? "," : "") $2; n[$1]++ }
        END { for (k in n) if (n[k] > 1) printf "copy %s %s\n", k, f[k] }' | sort >>"$items"
# the dashboard: a list of field names kept by hand beside the generated
# web/fields.js
grep -nE '^(const|let|var) [A-Z_]+_(KEYS|FIELDS) *= *\[' web/*.js 2>/dev/null |
    grep -v -E '^web/(fields|terms)\.js:' |
    awk -F: '{ split($3, w, /[ =]+/); printf "copy web:%s %s:%s\n", w[2], $1, $2 }' >>"$items" || true

bad=0
for kind in fn file paste copy; do
    n=$(grep -c "^$kind " "$items" || true)
    case $kind in
    fn) what="functions over $FN_MAX lines" ;;
    file) what="files over $FILE_MAX lines" ;;
    paste) what="files with token-pasting macros" ;;
    copy) what="hand-kept copies" ;;
    esac
    echo "$what: $n"
    while read -r k item rest; do
        why=$(awk -v k="$k" -v i="$item" '$1 == k && $2 == i { $1 = $2 = ""; sub(/^ +- */, ""); print; exit }' "$allow" 2>/dev/null || true)
        if [ -n "$why" ]; then
            echo "  $item $rest (explained: $why)"
        else
            echo "  $item $rest"
            bad=$((bad + 1))
        fi
    done < <(grep "^$kind " "$items" || true)
done
# an explanation for an item that is gone is stale
if [ -f "$allow" ]; then
    while read -r k item _; do
        case $k in ''|'#'*) continue ;; esac
        grep -q "^$k $item " "$items" || { echo "stale explanation: $k $item"; bad=$((bad + 1)); }
    done <"$allow"
fi
echo "code-stats: $bad unexplained"
[ "$check" = 0 ] || [ "$bad" = 0 ]
