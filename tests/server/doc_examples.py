#!/usr/bin/env python3
"""doc_examples.py - the curl examples of README.md and docs/api.md, run as
written against the real server.

Usage: doc_examples.py SERVER SRCDIR

Every example of a fenced sh block (its comment lines and the command under
them) that calls curl on http://127.0.0.1:8080 is run with bash from the
repository root (as the docs say to), the port swapped for a free one the
test's own server listens on.  Each answer must be a JSON object.  An
example whose comment shows a problem ("4xx", "400", or the problem's
"field":"..." and "detail":"...") must answer that problem; any other must
not answer one.  What the other examples' comments claim is held to the
answers:

- an integer of 7 or more digits ("params.total is the checkpoint's
  7615616512") must appear in an answer;
- "does not fit" means an answer says "fits": false, "fits" alone
  "fits": true;
- "~N GiB" must be within 2 % of the answer's peak (memory.total, the
  worst stage's), or of a "... GiB" figure when it has no memory.total.

At least MIN_EXAMPLES examples must run, so that a change in how the docs
write them (another fence, another address) cannot make this pass by
running nothing.

A doc whose example stops working, or whose comment stops being true, fails
here rather than in a user's terminal.
"""
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

DOCS = ("README.md", "docs/api.md")
MIN_EXAMPLES = 20


def sh_blocks(path):
    """(line, text) of each fenced sh block of path."""
    out, cur, start = [], None, 0
    with open(path, encoding="utf-8") as f:
        for i, line in enumerate(f.read().split("\n"), 1):
            if line.startswith("```"):
                if cur is None:
                    cur, start, lang = [], i, line[3:].strip()
                else:
                    if lang in ("sh", "bash"):
                        out.append((start, "\n".join(cur)))
                    cur = None
            elif cur is not None:
                cur.append(line)
    return out


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answers(text):
    """The JSON documents curl printed, one after another."""
    dec, docs, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(text) and text[i].isspace():
            i += 1
        if i >= len(text):
            return docs
        doc, i = dec.raw_decode(text, i)
        docs.append(doc)


def gib_figures(doc, out):
    """Every "N GiB" string anywhere in doc, as numbers."""
    if isinstance(doc, dict):
        for v in doc.values():
            gib_figures(v, out)
    elif isinstance(doc, list):
        for v in doc:
            gib_figures(v, out)
    elif isinstance(doc, str):
        m = re.fullmatch(r"([0-9.]+) GiB", doc)
        if m:
            out.append(float(m.group(1)))
    return out


def fits_values(doc, out):
    if isinstance(doc, dict):
        for k, v in doc.items():
            if k == "fits" and isinstance(v, bool):
                out.append(v)
            else:
                fits_values(v, out)
    elif isinstance(doc, list):
        for v in doc:
            fits_values(v, out)
    return out


def examples(line, text):
    """A block's examples: each its comment lines and the command under
    them, (line, comment, command)."""
    out, com, cmd, start = [], [], [], line
    for i, l in enumerate(text.split("\n"), line + 1):
        if l.lstrip().startswith("#"):
            if cmd:
                out.append((start, " ".join(com), "\n".join(cmd)))
                com, cmd = [], []
            if not com:
                start = i
            com.append(l.strip().lstrip("#").strip())
        elif l.strip():
            cmd.append(l)
        elif cmd:
            out.append((start, " ".join(com), "\n".join(cmd)))
            com, cmd = [], []
    if cmd:
        out.append((start, " ".join(com), "\n".join(cmd)))
    return out


def peak_gib(doc):
    """memory.total of an answer in GiB, or None."""
    m = doc.get("memory") if isinstance(doc, dict) else None
    t = m.get("total") if isinstance(m, dict) else None
    v = t.get("value") if isinstance(t, dict) else None
    return v / 2**30 if isinstance(v, (int, float)) else None


def check_example(where, comments, command, port, srcdir):
    script = command.replace("127.0.0.1:8080", "127.0.0.1:%d" % port)
    try:
        r = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", script], cwd=srcdir,
                           capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return ["%s: no answer in 60 s" % where]
    if r.returncode != 0:
        return ["%s: exit %d: %s" % (where, r.returncode, r.stderr.strip()[:300])]
    try:
        docs = answers(r.stdout)
    except ValueError as e:
        return ["%s: not JSON (%s): %s" % (where, e, r.stdout[:300])]
    if not docs:
        return ["%s: no answer" % where]
    errs = []
    # An example of bad input says so: "4xx", "400" or the problem's
    # "field" (and "detail") as the answer has them.
    field = re.search(r'"field":"([^"]*)"', comments)
    detail = re.search(r'"detail":"([^"]*)"', comments)
    bad = field is not None or re.search(r"\b4xx\b|\b400\b", comments) is not None
    for d in docs:
        problem = isinstance(d, dict) and isinstance(d.get("status"), int) and d["status"] >= 400
        if not isinstance(d, dict):
            errs.append("%s: an answer is not an object" % where)
        elif problem and not bad:
            errs.append("%s: a problem: %s (%s)" % (where, d.get("detail"), d.get("field")))
        elif bad and not problem:
            errs.append("%s: the comment shows a problem, the answer is none" % where)
        elif bad:
            if field and d.get("field") != field.group(1):
                errs.append("%s: field %s, the comment says %s" % (where, d.get("field"),
                                                                    field.group(1)))
            if detail and detail.group(1) not in str(d.get("detail")):
                errs.append("%s: detail '%s' lacks the comment's '%s'" % (where, d.get("detail"),
                                                                        detail.group(1)))
    if bad:
        return errs
    for n in re.findall(r"\b[0-9]{7,}\b", comments):
        if n not in r.stdout:
            errs.append("%s: the comment's %s is in no answer" % (where, n))
    fits = [v for d in docs for v in fits_values(d, [])]
    words = re.sub(r"\bmemory\.fits\b|\"fits\":(true|false)", " ", comments)
    if re.search(r"\b(does not|doesn't|won't|will not|cannot) fit\b", words):
        if False not in fits:
            errs.append("%s: the comment says it does not fit, the answer says %s" % (where, fits))
    elif re.search(r"\bfits\b", words):
        if True not in fits:
            errs.append("%s: the comment says it fits, the answer says %s" % (where, fits))
    peaks = [p for p in (peak_gib(d) for d in docs) if p is not None]
    gibs = peaks or [g for d in docs for g in gib_figures(d, [])]
    for n in re.findall(r"~([0-9.]+) GiB", comments):
        want = float(n)
        if not any(abs(g - want) <= 0.02 * want for g in gibs):
            errs.append("%s: the comment's ~%s GiB is not within 2 %% of the answer's %s %s"
                        % (where, n, "peak" if peaks else "GiB figures",
                           sorted(round(g, 2) for g in set(gibs))[:12]))
    return errs


def main():
    server, srcdir = sys.argv[1], sys.argv[2]
    # The examples call curl and jq, as a reader's shell has them; a build
    # image without them (the container's build stage) skips (meson: 77).
    missing = [t for t in ("curl", "jq", "bash") if shutil.which(t) is None]
    if missing:
        print("skipped: %s not on PATH" % ", ".join(missing))
        return 77
    port = free_port()
    log = open(os.devnull, "w")
    proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1"],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        for _ in range(200):
            if proc.poll() is not None:
                print("the server exited (%d) before it answered on port %d"
                      % (proc.returncode, port))
                return 1
            try:
                urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=1)
                break
            except OSError:
                time.sleep(0.1)
        else:
            print("the server did not come up on port %d" % port)
            return 1
        errs, n = [], 0
        for doc in DOCS:
            for line, text in sh_blocks(os.path.join(srcdir, doc)):
                for at, comments, command in examples(line, text):
                    if "curl" not in command or "127.0.0.1:8080" not in command:
                        continue
                    n += 1
                    errs += check_example("%s:%d" % (doc, at), comments, command, port, srcdir)
        print("%d curl examples run" % n)
        for e in errs:
            print("FAIL " + e)
        if proc.poll() is not None:
            print("FAIL the server exited (%d) during the examples" % proc.returncode)
            return 1
        if n < MIN_EXAMPLES:
            print("FAIL %d curl examples found, at least %d expected: the extraction or the "
                  "docs' form changed" % (n, MIN_EXAMPLES))
            return 1
        return 1 if errs else 0
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


if __name__ == "__main__":
    sys.exit(main())
