"""The validation tables' file layout, shared by the scripts that write them
(llmfoundry-rows.py, vtrain-rows.py): the head object indented, then one
row per line, so that a file stays reviewable and diffs row by row."""
import json


def rows_text(head, rows, key="rows"):
    body = ",\n".join("  " + json.dumps(r) for r in rows)
    return '%s,\n "%s": [\n%s\n ]\n}\n' % (json.dumps(head, indent=1)[:-2], key, body)
