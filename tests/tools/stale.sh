#!/bin/sh
# The generator's own behaviour on copies of api/openapi.json (tests/tools):
#  1. a hand edit inside a generated section (Run.seq's description) is
#     reported stale, with the line, the diff command and the refresh;
#  2. a hand edit outside them (info.summary) is kept byte for byte, and
#     regenerating a fresh copy changes nothing;
#  3. a missing anchor (no Inputs schema) is refused, not guessed.
# usage: stale.sh TS_GEN_FIELDS SRC_OPENAPI WORKDIR
set -u
gen=$1 src=$2 dir=$3
mkdir -p "$dir" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

sed 's/"description": "Sequence length s\./"description": "Sequence length, edited by hand./' \
    "$src" > "$dir/edited-inside.json"
cmp -s "$src" "$dir/edited-inside.json" && fail "sed did not change Run.seq's description"
line=$(grep -n 'Sequence length, edited by hand' "$dir/edited-inside.json" | head -1 | cut -d: -f1)
if "$gen" check openapi "$dir/edited-inside.json" "$dir/out1.json" 2> "$dir/err1"; then
    fail "an edited generated description was not reported stale"
fi
grep -q "from line $line\." "$dir/err1" || fail "no 'from line $line.' in: $(cat "$dir/err1")"
grep -q 'diff -u' "$dir/err1" && grep -q 'regen-fields' "$dir/err1" ||
    fail "no diff hint or refresh command in: $(cat "$dir/err1")"
cmp -s "$src" "$dir/out1.json" || fail "regenerating the edited copy did not restore the original"

sed 's/"summary": "GPU memory/"summary": "Hand-edited GPU memory/' "$src" > "$dir/edited-outside.json"
cmp -s "$src" "$dir/edited-outside.json" && fail "sed did not change info.summary"
"$gen" check openapi "$dir/edited-outside.json" "$dir/out2.json" > /dev/null ||
    fail "an edit outside the generated sections was not kept"

sed 's/^      "Inputs": {$/      "InputsRenamed": {/' "$src" > "$dir/no-anchor.json"
if "$gen" openapi "$dir/no-anchor.json" "$dir/out3.json" 2> "$dir/err3"; then
    fail "a file without the Inputs schema was rewritten"
fi
grep -q 'Inputs not found' "$dir/err3" || fail "unclear refusal: $(cat "$dir/err3")"
echo "ok: stale copy detected at line $line, outside edits kept, missing anchor refused"
