"""rptest.py - helpers of the tests of `heapscope report`'s views.

view(t, path, *args) runs `heapscope report --json ARGS PATH` and returns
the parsed object; text(t, path, *args) the text output; bad(t, args)
runs a command that must fail and returns (rc, stderr).  The programs'
known allocations are described in rp_views.c and rp_clean.cpp.
"""
import json
import subprocess

import hstest


def _run(t, argv):
    return subprocess.run([t.heapscope, "report"] + list(argv),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)


def view(t, path, *args):
    cp = _run(t, ["--json"] + list(args) + [path])
    if cp.returncode != 0:
        raise hstest.HsError("report --json %s exited %d: %s" % (
            " ".join(args), cp.returncode, cp.stderr.decode("utf-8", "replace")))
    try:
        return json.loads(cp.stdout.decode("utf-8"))
    except ValueError as e:
        raise hstest.HsError("report --json %s is not JSON: %s" % (" ".join(args), e))


def text(t, path, *args):
    return t.report_text(path, list(args))


def bad(t, args):
    cp = _run(t, args)
    return cp.returncode, cp.stderr.decode("utf-8", "replace")


def fn0(row):
    """Function of a row's first frame."""
    return row["frames"][0]["function"] if row["frames"] else None


def functions(row):
    return [f["function"] for f in row["frames"]]


def rows_by_fn0(doc):
    return [(fn0(r), r["bytes"], r["count"]) for r in doc["stacks"]]


def run_views(t):
    """Profile rp_views with a 1 ms sample period; returns the path."""
    r = t.run("rp_views", out="views.hsp", env={"HEAPSCOPE_SAMPLE_MS": "1"})
    t.eq("rp_views stdout", b"views done\n", r.stdout)
    return r.out
