#!/usr/bin/env python3
"""Accuracy per source, from the validation run (issues 26/30).

Runs the validation programs in --sources mode over every validation
table that tests/validation/tables.txt lists (the same list the
validation tests are made from) and prints one Markdown table: per
source, the memory rows (peak memory, |error| median and max) and the
step-time rows (median, max and mean signed error).  Rows held back
before modelling (part "held" in tables.txt) are lines of their own.

  accuracy-table.py BUILD_DIR                 print the table
  accuracy-table.py BUILD_DIR --check FILE..  exit 1 unless every FILE holds
                                              the table between the markers
  accuracy-table.py BUILD_DIR --write FILE..  rewrite the table in each FILE

The table sits between "<!-- accuracy-table:begin -->" and
"<!-- accuracy-table:end -->" in README.md and docs/accuracy.md.  A file
may also hold one validation file's own Markdown report (its runner's
--markdown output), between "<!-- validation:FILE begin -->" and
"<!-- validation:FILE end -->" (FILE as tables.txt names it; "FILE summary"
keeps only the summary table and the last line): --write and --check
treat those as they treat the table, so no copied figure goes stale.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
VAL = os.path.join(HERE, "..", "tests", "validation")
BEGIN, END = "<!-- accuracy-table:begin -->", "<!-- accuracy-table:end -->"
PROGRAMS = {"memory": "validate", "step": "step_time_check"}


def tables():
    """(kind, part, file) of every line of tests/validation/tables.txt."""
    out = []
    for line in open(os.path.join(VAL, "tables.txt"), encoding="utf-8"):
        cols = line.split()
        if cols and not cols[0].startswith("#"):
            out.append((cols[0], cols[1], cols[3]))
    return out


def run(build, prog, path, mode="--sources"):
    out = subprocess.run([os.path.join(build, "tests", "validation", prog),
                          os.path.join(VAL, path), mode] if prog == "step_time_check" else
                         [os.path.join(build, "tests", "validation", prog), mode,
                          os.path.join(VAL, path)],
                         check=True, capture_output=True, text=True).stdout
    return [line.split("\t") for line in out.splitlines() if line]


# Lines over every step-time source (issue 30's "done when"): the rows of a
# model of hidden 1,024-4,096 on 2-64 GPUs, and the rows whose tensor-parallel
# group spans nodes.  Each is (label, test on hidden, GPUs, tp, GPUs per node).
CROSS = (
    ("Every source: hidden 1,024-4,096 on 2-64 GPUs",
     lambda o, h, g, t, n: 1024 <= h <= 4096 and 2 <= g <= 64),
    # vTrain's 1,500 runs outnumber every other source there.
    ("Every source but vTrain: hidden 1,024-4,096 on 2-64 GPUs",
     lambda o, h, g, t, n: 1024 <= h <= 4096 and 2 <= g <= 64 and not o.startswith("vTrain")),
    ("Every source: a TP group across nodes",
     lambda o, h, g, t, n: t > n),
)


def stats(errs):
    """rows, median |error|, max |error|, mean signed error, as the table prints them."""
    if not errs:
        return ("0", "-", "-", "-")
    a = sorted(abs(e) for e in errs)
    k = len(a)
    med = a[k // 2] if k % 2 else 0.5 * (a[k // 2 - 1] + a[k // 2])
    return (str(k), "%.1f %%" % med, "%.1f %%" % a[-1], "%+.1f %%" % (sum(errs) / k))


def cross(build):
    """The CROSS lines, main rows and held-back rows apart."""
    rows = {"main": [], "held": []}  # (origin, hidden, GPUs, tp, GPUs per node, error in %)
    for k, p, f in tables():
        if k == "step":
            rows[p] += [(o, int(h), int(g), int(t), int(n), float(e))
                        for o, h, g, t, n, e in run(build, PROGRAMS["step"], f, "--rows")]
    lines = []
    for label, pick in CROSS:
        for part in ("main", "held"):
            errs = [r[5] for r in rows[part] if pick(*r[:5])]
            lines.append("| %s%s | - | - | - | %s | %s | %s | %s |"
                         % ((label, ", held back" if part == "held" else "") + stats(errs)))
    return lines


def table(build):
    rows = {}
    order = []

    def slot(name):
        if name not in rows:
            rows[name] = {"mem": None, "step": None}
            order.append(name)
        return rows[name]

    # memory lines first, then step time; main parts before held ones
    for kind in ("memory", "step"):
        for part in ("main", "held"):
            for k, p, f in tables():
                if k != kind or p != part:
                    continue
                for o, *vals in run(build, PROGRAMS[kind], f):
                    name = o + (", held back" if part == "held" else "")
                    slot(name)["mem" if kind == "memory" else "step"] = tuple(vals)
    lines = ["| Source | Memory rows | Memory median | Memory max | Step rows | Step median | Step max | Step mean |",
             "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for name in order:
        m, s = rows[name]["mem"], rows[name]["step"]
        mem = ("%s | %s %% | %s %%" % m) if m else "- | - | -"
        st = ("%s | %s %% | %s %% | %s %%" % s) if s else "- | - | - | -"
        lines.append("| %s | %s | %s |" % (name, mem, st))
    lines += cross(build)
    return "\n".join(lines) + "\n"


REGION = re.compile(r"(<!-- validation:(\S+?)((?: summary)?) begin -->\n)(.*?)(<!-- validation:\2\3 end -->)",
                    re.S)


def report(build, name, summary):
    """A validation file's --markdown report, the runner's pass/fail tally left out."""
    kinds = {f: k for k, _p, f in tables()}
    if name not in kinds:
        raise SystemExit("validation:%s: not a file tests/validation/tables.txt lists" % name)
    prog = os.path.abspath(os.path.join(build, "tests", "validation", PROGRAMS[kinds[name]]))
    path = "tests/validation/" + name  # from the source root: the report quotes it
    args = [prog, path, "--markdown"] if kinds[name] == "step" else [prog, "--markdown", path]
    out = subprocess.run(args, check=True, capture_output=True, text=True,
                         cwd=os.path.join(HERE, "..")).stdout
    lines = [ln for ln in out.splitlines() if not re.match(r"^validation-\S+: \d+ passed", ln)]
    if summary:
        lines = lines[next(i for i, ln in enumerate(lines) if ln.startswith("| Rows | n |")):]
    return "\n".join(lines).strip("\n") + "\n"


def regions(build, text):
    """text with every validation report region rewritten from the run."""
    return REGION.sub(lambda m: m.group(1) + report(build, m.group(2), bool(m.group(3))) +
                      m.group(5), text)


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
        if new is not None:
            new = regions(argv[1], new)
        if new is None:
            sys.stderr.write("%s: no %s ... %s markers\n" % (f, BEGIN, END))
            bad = 1
        elif mode == "--write":
            if new != text:
                open(f, "w", encoding="utf-8").write(new)
        elif new != text:
            sys.stderr.write("%s: the accuracy table or a validation report is stale; run "
                             "scripts/accuracy-table.py %s --write %s\n"
                             % (f, argv[1], f))
            bad = 1
    return bad


if __name__ == "__main__":
    sys.exit(main(sys.argv))
