#!/bin/sh
# The generator's own behaviour on copies of api/openapi.json (tests/tools):
#  1. a hand edit inside a generated section (Run.seq's description) is
#     reported stale, with the line, the diff command and the refresh;
#  2. a hand edit outside them (info.summary) is kept byte for byte, and
#     regenerating a fresh copy changes nothing;
#  3. a missing anchor (no Inputs schema) is refused, not guessed;
#  4. a hand edit of a terms-table copy (the memory HBM row in web/terms.js,
#     and MemoryHuman in openapi.json) is reported stale and undone.
# usage: stale.sh TS_GEN_FIELDS SRC_OPENAPI WORKDIR SRC_TERMS_JS
set -u
gen=$1 src=$2 dir=$3 terms=$4
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
sed 's/label: "GPU HBM"/label: "GPU memory"/' "$terms" > "$dir/terms-edited.js"
cmp -s "$terms" "$dir/terms-edited.js" && fail "sed did not change the HBM label of web/terms.js"
if "$gen" check terms-js "$dir/terms-edited.js" "$dir/terms-out.js" 2> "$dir/err4"; then
    fail "an edited web/terms.js was not reported stale"
fi
grep -q 'regen-fields' "$dir/err4" || fail "no refresh command in: $(cat "$dir/err4")"
cmp -s "$terms" "$dir/terms-out.js" || fail "regenerating web/terms.js did not restore it"

sed 's/"description": "GPU HBM: /"description": "Edited GPU HBM: /' "$src" > "$dir/human-edited.json"
cmp -s "$src" "$dir/human-edited.json" && fail "sed did not change MemoryHuman.hbm_bytes"
if "$gen" check openapi "$dir/human-edited.json" "$dir/out5.json" 2> /dev/null; then
    fail "an edited MemoryHuman schema was not reported stale"
fi
cmp -s "$src" "$dir/out5.json" || fail "regenerating the edited MemoryHuman did not restore it"
echo "ok: stale copy detected at line $line, outside edits kept, missing anchor refused, terms copies checked"
