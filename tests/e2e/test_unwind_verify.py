#!/usr/bin/env python3
"""The unwinders against their references: with HEAPSCOPE_UNWIND_VERIFY=1
every stack heapscope's cached CFI unwinder produces is compared with
unw_backtrace's, and every stack of the fp unwinder (which reuses its
previous walk) with an uncached frame-pointer walk.  Programs with many different stacks (python3 running a
script, C++ with templates and exceptions, threads) must show not a single
difference."""
import re
import hstest

SCRIPT = "import json, re, collections\n" \
         "d = [{'k': i, 'v': str(i) * 3, 'l': list(range(i % 7))} for i in range(5000)]\n" \
         "s = json.dumps(d); print(len(json.loads(s)), len(re.findall(r'[0-9]+', s)))\n" \
         "print(collections.Counter(len(x['l']) for x in d).most_common(2))\n"


def check(t, label, prog, args, minimum, env=None, opts=()):
    extra = {"HEAPSCOPE_UNWIND_VERIFY": "1"}
    extra.update(env or {})
    r = t.run(prog, args=args, out=label + ".hsp", env=extra, opts=opts, expect_rc=None)
    p = t.report(r.out)
    msgs = [w for w in p.summary["warnings"] if "unwinder verified against" in w]
    t.eq(label + ": one verification message", 1, len(msgs))
    if not msgs:
        return
    m = re.search(r"(\d+) stacks, (\d+) differed", msgs[0])
    t.true(label + ": message has counts", m is not None, msgs[0])
    checked, differed = int(m.group(1)), int(m.group(2))
    t.true(label + ": at least %d stacks checked" % minimum, checked >= minimum, msgs[0])
    t.eq(label + ": stacks that differ from libunwind", 0, differed)
    diffs = [w for w in p.summary["warnings"] if "differs from" in w]
    t.eq(label + ": no difference reported", [], diffs)


def main(t):
    import os
    script = os.path.join(t.dir, "s.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    check(t, "python3", t.prog("python3"), [script], 20000, env={"PYTHONMALLOC": "malloc"})
    # a depth cap that cuts most stacks: the walk's cached tail must stop too
    check(t, "python3-depth3", t.prog("python3"), [script], 20000, env={"PYTHONMALLOC": "malloc"},
          opts=["--depth", "3"])
    check(t, "cxx", "hs_cxx", [], 20)
    check(t, "threads", "hs_threads", [], 16000)
    # the fp unwinder's reuse of its previous walk against an uncached walk
    check(t, "python3-fp", t.prog("python3"), [script], 20000, env={"PYTHONMALLOC": "malloc"},
          opts=["--unwind", "fp"])
    check(t, "threads-fp", "hs_threads", [], 16000, opts=["--unwind", "fp"])


if __name__ == "__main__":
    hstest.main(main)
