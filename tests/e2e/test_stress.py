#!/usr/bin/env python3
"""Threads that start and exit all the time, and fork while other threads
allocate: exact counts in the parent's profile, and in every child's.  In
each unwinding mode: with libunwind, which every allocation calls, a fork
while another thread holds libunwind's cache lock would leave the child
waiting for it (the fork waits for walks inside libunwind: col_unwind.c)."""
import glob
import os
import hstest


def totals(p, name):
    st = p.stacks_with(name)
    return (sum(s["allocations"] for s in st), sum(s["bytes_allocated"] for s in st),
            sum(s["frees"] for s in st))


def main(t):
    for unwind in ("dwarf", "fp", "libunwind"):
        out = "stress-%s.hsp" % unwind
        r = t.run("hs_stress", out=out, opts=["--unwind", unwind], timeout=120)
        p = t.report(r.out)
        label = unwind + ": "
        t.eq(label + "churn_site", (80000, 3200000, 80000), totals(p, "churn_site"))
        t.eq(label + "short_site", (1500, 96000, 1200), totals(p, "short_site"))
        t.eq(label + "child_site in the parent", (0, 0, 0), totals(p, "child_site"))
        t.eq(label + "unknown frees", 0, p.summary["unknown_frees"])
        t.eq(label + "shadow overwrites", 0, p.summary["shadow_overwrites"])
        t.true(label + "threads counted", p.summary["threads"] >= 305, p.summary["threads"])
        children = [f for f in glob.glob(r.out + ".*") if not f.endswith(".tmp")]
        t.eq(label + "one profile per child", 20, len(children))
        for f in children:
            c = t.report(f)
            t.eq(label + os.path.basename(f) + ": child_site", (1, 77, 0), totals(c, "child_site"))
            t.true(label + os.path.basename(f) + ": final", c.summary["final"])


if __name__ == "__main__":
    hstest.main(main)
