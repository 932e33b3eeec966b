"""mptest.py - helpers of the mprof and diff tests: run `heapscope report
--mprof [--json]` and `heapscope diff`, returning text or parsed JSON."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
import hstest  # noqa: E402


def heapscope(t, args, expect_rc=0):
    """Run `heapscope ARGS`; return (stdout text, stderr text)."""
    cp = subprocess.run([t.heapscope] + list(args), stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, timeout=120)
    if expect_rc is not None and cp.returncode != expect_rc:
        sys.stderr.write(cp.stderr.decode("utf-8", "replace"))
        raise hstest.HsError("heapscope %s exited %d, expected %d"
                             % (" ".join(args), cp.returncode, expect_rc))
    return (cp.stdout.decode("utf-8", "replace"),
            cp.stderr.decode("utf-8", "replace"))


def mprof_text(t, path):
    return heapscope(t, ["report", "--mprof", path])[0]


def mprof_json(t, path):
    out = heapscope(t, ["report", "--mprof", "--json", path])[0]
    return json.loads(out)


def table(text, title):
    """The lines of the table whose title line contains `title`, up to the
    next form feed."""
    start = text.index(title)
    end = text.find("\f", start)
    return text[start:end if end >= 0 else len(text)].splitlines()


def graph_entries(text):
    """The call graph's entries: lists of lines between separators."""
    lines = table(text, "Allocation Call Graph")
    entries, cur = [], []
    for ln in lines[6:]:
        if ln.startswith("-------------------------------s--m--l--x"):
            if cur:
                entries.append(cur)
            cur = []
        elif ln.strip():
            cur.append(ln)
    return entries


def json_of(t, args):
    """`heapscope ARGS` (exit 0), stdout parsed as JSON."""
    return json.loads(heapscope(t, args)[0])
