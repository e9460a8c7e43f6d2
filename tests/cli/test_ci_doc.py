#!/usr/bin/env python3
"""test_ci_doc.py - run the CI jobs of docs/ci.md as written.

The GitHub Actions and GitLab CI YAML blocks of docs/ci.md are parsed
(PyYAML) and their commands run, in order, in a scratch workspace whose
plans/ holds two plans that fit:

- package lines (apt-get) are not run (no network, no root): every package
  they name must be installed here (dpkg-query), so the list is one that
  builds;
- the clone line runs with `git clone` replaced by a link from its target
  to this source tree (TS_SOURCE);
- everything else runs verbatim, as one bash -eo pipefail script (GitHub's
  `run:` shell; GitLab runs a job's lines in one shell too), with the
  runner's RUNNER_TEMP and the job's TS_DIR inside the scratch directory.

Then: exit 0, a ::notice per plan (GitHub), a JUnit report with both plans
that validates against tests/data/junit.xsd (GitLab); and with a third plan
that does not fit, the check line again exits 1 with an ::error on it.
Environment: TRAINSIZE_SRCDIR; XMLLINT when installed.  Exit 77 (skipped)
without PyYAML.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    import yaml
except ImportError:
    print("test_ci_doc: PyYAML (python3-yaml) is not installed: skipped")
    sys.exit(77)

SRC = os.environ["TRAINSIZE_SRCDIR"]
FAILURES = []


def fail(msg):
    FAILURES.append(msg)
    print("FAIL: " + msg)


def yaml_blocks(path):
    text = open(path, encoding="utf-8").read()
    return [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", text, re.S)]


def jobs(blocks):
    """(name, commands, variables) of the GitHub job and the GitLab job."""
    gh = gl = None
    for b in blocks:
        if "jobs" in b:
            for job in b["jobs"].values():
                for step in job["steps"]:
                    if "run" in step:
                        env = dict(job.get("env", {}), **step.get("env", {}))
                        gh = ("github", step["run"].splitlines(), env)
        else:
            for job in b.values():
                if isinstance(job, dict) and "script" in job:
                    gl = ("gitlab", list(job["script"]), dict(job.get("variables", {})))
    return gh, gl


def installed(pkg):
    r = subprocess.run(["dpkg-query", "-W", "-f=${Status}", pkg], capture_output=True, text=True)
    return r.returncode == 0 and "install ok installed" in r.stdout


def script_of(name, lines):
    """The lines to run; the package lines checked instead."""
    out = ["ts_fake_clone() { mkdir -p \"$(dirname \"${@: -1}\")\"; "
           "ln -s \"$TS_SOURCE\" \"${@: -1}\"; }"]
    clones = 0
    for line in lines:
        words = line.split()
        if "apt-get" in " ".join(words[:2]):
            if "install" in words:
                pkgs = [w for w in words[words.index("install") + 1:] if not w.startswith("-")]
                if shutil.which("dpkg-query"):
                    for p in pkgs:
                        if not installed(p):
                            fail(f"{name}: package {p} is not installed here")
            continue
        if line.strip().startswith("git clone "):
            clones += 1
            line = line.replace("git clone", "ts_fake_clone", 1)
        out.append(line)
    if clones != 1:
        fail(f"{name}: {clones} clone lines, want 1")
    return out


def run(script, cwd, env):
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c",
                           "\n".join(script)], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=800)


def main():
    gh, gl = jobs(yaml_blocks(os.path.join(SRC, "docs", "ci.md")))
    if gh is None or gl is None:
        fail("docs/ci.md lacks a GitHub Actions or a GitLab CI job")
        return
    plans = os.path.join(SRC, "tests", "data", "plans")
    for name, lines, variables in (gh, gl):
        scratch = tempfile.mkdtemp(prefix=f"ts-ci-{name}-")
        try:
            work = os.path.join(scratch, "repo")
            os.makedirs(os.path.join(work, "plans"))
            for p in ("llama3-8b-zero3.json", "mixtral-8x7b-zero3-imports.json"):
                shutil.copy(os.path.join(plans, p), os.path.join(work, "plans", p))
            env = {k: v for k, v in os.environ.items() if not k.startswith("TRAINSIZE_")}
            env.update({k: str(v) for k, v in variables.items()})
            env.update(TS_SOURCE=SRC, RUNNER_TEMP=os.path.join(scratch, "runner"),
                       TS_DIR=os.path.join(scratch, "ts"))
            os.makedirs(env["RUNNER_TEMP"])
            script = script_of(name, lines)
            r = run(script, work, env)
            print(f"--- {name}: exit {r.returncode}\n{r.stdout[-2000:]}{r.stderr[-3000:]}")
            if r.returncode != 0:
                fail(f"{name}: the job exits {r.returncode}")
                continue
            check = [script[0], script[-1]]
            if name == "github":
                notices = [l for l in r.stdout.splitlines()
                           if l.startswith("::notice file=plans/")]
                if len(notices) != 2:
                    fail(f"github: {len(notices)} ::notice lines on plans/, want 2")
            else:
                junit = os.path.join(work, "trainsize-junit.xml")
                xml = open(junit, encoding="utf-8").read() if os.path.exists(junit) else ""
                if 'tests="2" failures="0" errors="0"' not in xml:
                    fail("gitlab: trainsize-junit.xml is not 2 passing plans")
                xmllint = os.environ.get("XMLLINT")
                if xmllint:
                    v = subprocess.run([xmllint, "--noout", "--schema",
                                        os.path.join(SRC, "tests", "data", "junit.xsd"), junit],
                                       capture_output=True, text=True)
                    if v.returncode != 0:
                        fail("gitlab: the JUnit report does not validate: " + v.stderr)
            # a plan that does not fit: the same check line fails the job
            shutil.copy(os.path.join(plans, "llama3-70b-zero0.json"),
                        os.path.join(work, "plans", "too-big.json"))
            r = run(check, work, env)
            if r.returncode != 1:
                fail(f"{name}: with a plan that does not fit the check exits {r.returncode}")
            if name == "github" and "::error file=plans/too-big.json," not in r.stdout:
                fail("github: no ::error on plans/too-big.json")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


main()
sys.exit(1 if FAILURES else 0)
