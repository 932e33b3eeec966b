"""rltest.py - shared checks of the reliability tests (tests/reliability).

A real program is run twice, without and with `heapscope run`, and must
behave the same (exit status, stdout, and any file it writes); its profile
(and those of its children) must read back complete and consistent.
"""
import glob
import os

import hstest


def run_both(t, argv, out, stdin=b"", env=None, cwd=None, timeout=300,
             outputs=()):
    """Run argv unprofiled, then under `heapscope run -q -o OUT`; check the
    exit status and stdout are the same, and so are the bytes of each file
    in `outputs` (paths relative to cwd, removed between the runs).
    Returns the profiled RunResult."""
    cwd = cwd or t.dir

    def grab():
        got = {}
        for o in outputs:
            p = os.path.join(cwd, o)
            with open(p, "rb") as f:
                got[o] = f.read()
            os.unlink(p)
        return got

    plain = t._exec(list(argv), None, env, stdin, cwd, timeout, None)
    plain_files = grab()
    r = t.run(argv[0], args=argv[1:], out=out, opts=["-q"], env=env,
              stdin=stdin, cwd=cwd, timeout=timeout, expect_rc=None)
    prof_files = grab()
    name = os.path.basename(argv[0])
    t.eq("%s: exit status under heapscope = without" % name, plain.rc, r.rc)
    same = plain.stdout == r.stdout
    t.true("%s: stdout under heapscope = without (%d bytes)" % (name, len(plain.stdout)),
           same, "" if same else "first difference at byte %d, %d bytes under heapscope:\n%r"
           % (next((i for i, (a, b) in enumerate(zip(plain.stdout, r.stdout)) if a != b),
                   min(len(plain.stdout), len(r.stdout))), len(r.stdout), r.stdout[:300]))
    for o in outputs:
        t.true("%s: %s has the same %d bytes under heapscope" % (name, o, len(plain_files[o])),
               plain_files[o] == prof_files[o])
    return r


def check_profile(t, path, min_allocations, final=True):
    """`report --json PATH` works; the profile is final (or not), has more
    than min_allocations allocations, frees <= allocations, and its stacks
    add up to the summary.  Returns the Profile."""
    p = t.report(path)
    s = p.summary
    base = os.path.basename(path)
    t.eq(base + ": final", final, s.get("final"))
    t.true("%s: allocations %s > %d" % (base, s.get("allocations"), min_allocations),
           int(s.get("allocations", 0)) > min_allocations)
    t.true("%s: frees %s <= allocations %s" % (base, s.get("frees"), s.get("allocations")),
           int(s.get("frees", 0)) <= int(s.get("allocations", 0)))
    t.check_consistent(p)
    return p


def children(path):
    """The profiles FILE.<pid>[.<n>] that children of the run wrote."""
    return sorted(glob.glob(glob.escape(path) + ".*"))
