#!/bin/bash
# format-check.sh [--fix]: every C source and header of the tree in the
# style .clang-format describes (issue 23: one style, applied once, kept).
# Checks with clang-format --dry-run --Werror; --fix rewrites in place.
# Bookworm's clang-format (14) is the reference: another version may lay
# out a few constructs differently, so a different major version skips (77).
set -euo pipefail
cd "$(dirname "$0")/.."
cf=$(command -v clang-format || true)
if [ -z "$cf" ]; then echo "format-check: no clang-format (skipped)"; exit 77; fi
ver=$("$cf" --version | sed -n 's/.*version \([0-9]*\).*/\1/p')
if [ "$ver" != 14 ]; then echo "format-check: clang-format $ver, the style is pinned to 14 (skipped)"; exit 77; fi
mapfile -t files < <(find api bench cli core fuzz import lib server tests tools \
    -path '*/data' -prune -o -type f \( -name '*.c' -o -name '*.h' \) -print | sort)
if [ "${1:-}" = --fix ]; then "$cf" -i "${files[@]}"; exit 0; fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! "$cf" --dry-run --Werror "${files[@]}" 2>"$log"; then
    grep -E '^[^ ].*(warning|error):' "$log" | head -20 || true
    echo "format-check: $(grep -cE '^[^ ].*(warning|error):' "$log" || true) lines differ;" \
        "run scripts/format-check.sh --fix (or git clang-format) and commit"
    exit 1
fi
echo "format-check: ${#files[@]} files in the tree's style"
