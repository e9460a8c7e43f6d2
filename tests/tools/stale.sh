#!/bin/sh
# The generators' own behaviour on edited copies (tests/tools):
#  1. a hand edit of api/openapi.json (Run.seq's description, which the
#     registry writes) is reported stale, with the line, the diff command
#     and the refresh, and regenerating gives the committed file back;
#  2. a hand edit of the template (info.summary) comes through into the
#     output, and nothing else changes;
#  3. a template whose generated spot holds hand text instead of its
#     placeholder (Inputs.properties) is refused, naming the spot, and so
#     is a placeholder the generator does not fill;
#  4. a hand edit of a terms-table copy (the memory HBM row in web/terms.js,
#     and MemoryHuman in openapi.json) is reported stale and undone.
# usage: stale.sh TS_GEN_OPENAPI TEMPLATE OPENAPI WORKDIR TS_GEN_FIELDS TERMS_JS
set -u
gen=$1 tpl=$2 src=$3 dir=$4 genf=$5 terms=$6
mkdir -p "$dir" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

sed 's/"description": "Sequence length s\./"description": "Sequence length, edited by hand./' \
    "$src" > "$dir/edited-inside.json"
cmp -s "$src" "$dir/edited-inside.json" && fail "sed did not change Run.seq's description"
line=$(grep -n 'Sequence length, edited by hand' "$dir/edited-inside.json" | head -1 | cut -d: -f1)
if "$gen" check "$tpl" "$dir/edited-inside.json" "$dir/out1.json" 2> "$dir/err1"; then
    fail "an edited generated description was not reported stale"
fi
grep -q "from line $line\." "$dir/err1" || fail "no 'from line $line.' in: $(cat "$dir/err1")"
grep -q 'diff -u' "$dir/err1" && grep -q 'regen-openapi' "$dir/err1" ||
    fail "no diff hint or refresh command in: $(cat "$dir/err1")"
cmp -s "$src" "$dir/out1.json" || fail "regenerating did not give the committed file back"

sed 's/"summary": "GPU memory/"summary": "Hand-edited GPU memory/' "$tpl" > "$dir/tpl-summary.json"
cmp -s "$tpl" "$dir/tpl-summary.json" && fail "sed did not change the template's info.summary"
"$gen" "$dir/tpl-summary.json" "$dir/out2.json" || fail "the edited template was refused"
sed 's/"summary": "GPU memory/"summary": "Hand-edited GPU memory/' "$src" > "$dir/want2.json"
cmp -s "$dir/want2.json" "$dir/out2.json" || fail "the template's edit did not come through alone"

# Inputs is the third request schema: its "properties" placeholder is the
# third line that holds the registry's one.
awk '/"properties": "@generated: from the request-field registry/ && ++n == 3 {
        sub(/"@generated[^"]*"/, "{}") } { print }' "$tpl" > "$dir/no-placeholder.json"
cmp -s "$tpl" "$dir/no-placeholder.json" && fail "awk did not replace Inputs' placeholder"
if "$gen" "$dir/no-placeholder.json" "$dir/out3.json" 2> "$dir/err3"; then
    fail "a template with hand text at Inputs.properties was rewritten"
fi
grep -q 'components.schemas.Inputs: "properties" must be a "@generated' "$dir/err3" ||
    fail "unclear refusal: $(cat "$dir/err3")"
sed 's/"title": "trainsize/"title": "@generated: by nobody",\n    "x-title": "trainsize/' "$tpl" \
    > "$dir/stray.json"
cmp -s "$tpl" "$dir/stray.json" && fail "sed did not add a stray placeholder"
if "$gen" "$dir/stray.json" "$dir/out4.json" 2> "$dir/err4"; then
    fail "a template with a stray placeholder was rewritten"
fi
grep -q 'placeholder at /info/title is not one the generator fills' "$dir/err4" ||
    fail "unclear refusal: $(cat "$dir/err4")"

sed 's/label: "GPU HBM"/label: "GPU memory"/' "$terms" > "$dir/terms-edited.js"
cmp -s "$terms" "$dir/terms-edited.js" && fail "sed did not change the HBM label of web/terms.js"
if "$genf" check terms-js "$dir/terms-edited.js" "$dir/terms-out.js" 2> "$dir/err5"; then
    fail "an edited web/terms.js was not reported stale"
fi
grep -q 'regen-fields' "$dir/err5" || fail "no refresh command in: $(cat "$dir/err5")"
cmp -s "$terms" "$dir/terms-out.js" || fail "regenerating web/terms.js did not restore it"

sed 's/"description": "GPU HBM: /"description": "Edited GPU HBM: /' "$src" > "$dir/human-edited.json"
cmp -s "$src" "$dir/human-edited.json" && fail "sed did not change MemoryHuman.hbm_bytes"
if "$gen" check "$tpl" "$dir/human-edited.json" "$dir/out6.json" 2> /dev/null; then
    fail "an edited MemoryHuman schema was not reported stale"
fi
cmp -s "$src" "$dir/out6.json" || fail "regenerating the edited MemoryHuman did not restore it"
echo "ok: stale copy detected at line $line, template edits kept, bad placeholders refused, terms copies checked"
