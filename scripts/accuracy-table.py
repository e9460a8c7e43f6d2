#!/usr/bin/env python3
"""Accuracy per source, from the validation run (issues 26/30).

Runs the validation programs in --sources mode over every validation
table and prints one Markdown table: per source, the memory rows (peak
memory, |error| median and max) and the step-time rows (median, max and
mean signed error).  The held-back step-time rows (step_time_heldback.json,
step_time_lora_heldback.json, step_time_nemo_a100_heldback.json and
step_time_megatron2020_heldback.json, not
looked at while modelling) and the held-back memory rows
(memory_runs_heldback.json) are lines of their own.

  accuracy-table.py BUILD_DIR                 print the table
  accuracy-table.py BUILD_DIR --check FILE..  exit 1 unless every FILE holds
                                              the table between the markers
  accuracy-table.py BUILD_DIR --write FILE..  rewrite the table in each FILE

The table sits between "<!-- accuracy-table:begin -->" and
"<!-- accuracy-table:end -->" in README.md and docs/accuracy.md.
"""
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VAL = os.path.join(HERE, "..", "tests", "validation")
BEGIN, END = "<!-- accuracy-table:begin -->", "<!-- accuracy-table:end -->"
STEP_FILES = ["step_time.json", "step_time_llmfoundry.json", "step_time_sources.json",
              "step_time_lora.json", "step_time_nemo_a100.json",
              "step_time_megatron2020.json"]
HELD = ["step_time_heldback.json", "step_time_lora_heldback.json",
        "step_time_nemo_a100_heldback.json", "step_time_megatron2020_heldback.json"]
MEM_FILES = ["memory_runs.json", "memory_runs_hf.json"]
MEM_HELD = "memory_runs_heldback.json"


def run(build, prog, path):
    out = subprocess.run([os.path.join(build, "tests", "validation", prog),
                          os.path.join(VAL, path), "--sources"] if prog == "step_time_check" else
                         [os.path.join(build, "tests", "validation", prog), "--sources",
                          os.path.join(VAL, path)],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


def table(build):
    rows = {}
    order = []

    def slot(name):
        if name not in rows:
            rows[name] = {"mem": None, "step": None}
            order.append(name)
        return rows[name]

    for f in MEM_FILES:
        for o, n, med, mx in run(build, "validate", f):
            slot(o)["mem"] = (n, med, mx)
    for o, n, med, mx in run(build, "validate", MEM_HELD):
        slot(o + ", held back")["mem"] = (n, med, mx)
    for f in STEP_FILES:
        for o, n, med, mx, mean in run(build, "step_time_check", f):
            slot(o)["step"] = (n, med, mx, mean)
    for f in HELD:
        for o, n, med, mx, mean in run(build, "step_time_check", f):
            slot(o + ", held back")["step"] = (n, med, mx, mean)
    lines = ["| Source | Memory rows | Memory median | Memory max | Step rows | Step median | Step max | Step mean |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name in order:
        m, s = rows[name]["mem"], rows[name]["step"]
        mem = ("%s | %s %% | %s %%" % m) if m else "- | - | -"
        st = ("%s | %s %% | %s %% | %s %%" % s) if s else "- | - | - | -"
        lines.append("| %s | %s | %s |" % (name, mem, st))
    return "\n".join(lines) + "\n"


def splice(text, tab):
    b, e = text.find(BEGIN), text.find(END)
    if b < 0 or e < b:
        return None
    return text[:b + len(BEGIN)] + "\n" + tab + text[e:]


def main(argv):
    if len(argv) < 2:
        sys.stderr.write(__doc__)
        return 2
    tab = table(argv[1])
    if len(argv) == 2:
        sys.stdout.write(tab)
        return 0
    mode, files, bad = argv[2], argv[3:], 0
    for f in files:
        text = open(f, encoding="utf-8").read()
        new = splice(text, tab)
        if new is None:
            sys.stderr.write("%s: no %s ... %s markers\n" % (f, BEGIN, END))
            bad = 1
        elif mode == "--write":
            if new != text:
                open(f, "w", encoding="utf-8").write(new)
        elif new != text:
            sys.stderr.write("%s: the accuracy table is stale; run scripts/accuracy-table.py %s --write %s\n"
                             % (f, argv[1], f))
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
