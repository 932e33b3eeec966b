"""e2e_fork: fork children write their own profiles (hs_fork.c).

With -o OUT the parent writes OUT and each child OUT.<pid>.  A child starts
with the parent's counters (its heap is inherited), as Valgrind counts too.
Valgrind: parent 6 allocs, 0 frees, 2,600 bytes; first child (exit) 9 allocs,
2,200 bytes; second child (_exit) 7 allocs, 1,650 bytes.

`heapscope run`'s summary names the children's profiles, oldest first,
with -o OUT and with the default pattern (heapscope.%e.%p.hsp), and not a
profile of an earlier run that lies there too, even one just touched.
"""
import os
import re
import shutil
import time

import hstest

EXPECT_PARENT = dict(allocations=6, frees=0, bytes_allocated=2600,
                     leaked_bytes=2600, leaked_allocations=6)
EXPECT_CHILD1 = dict(allocations=9, frees=0, bytes_allocated=2200,
                     leaked_bytes=2200, leaked_allocations=9)
EXPECT_CHILD2 = dict(allocations=7, frees=0, bytes_allocated=1650,
                     leaked_bytes=1650, leaked_allocations=7)


def main(t):
    r = t.run("hs_fork", out="fork.hsp")
    m = re.match(rb"children (\d+) (\d+)\n$", r.stdout)
    if not m:
        raise hstest.HsError("unexpected stdout %r" % r.stdout)
    c1, c2 = int(m.group(1)), int(m.group(2))
    names = sorted(os.listdir(t.dir))
    t.eq("profiles written", sorted(["fork.hsp", "fork.hsp.%d" % c1, "fork.hsp.%d" % c2]),
         names)

    p = t.report(r.out)
    t.check_site(p, "parent_before_fork", allocations=4, bytes_allocated=1200, frees=0)
    t.check_site(p, "parent_after_fork", allocations=2, bytes_allocated=1400, frees=0)
    t.check_no_site(p, "child_site")
    t.check_no_site(p, "child_underscore_exit_site")
    t.check_summary(p, final=True, **EXPECT_PARENT)
    t.check_consistent(p)

    for pid, site, n, nbytes, expect in (
            (c1, "child_site", 5, 1000, EXPECT_CHILD1),
            (c2, "child_underscore_exit_site", 3, 450, EXPECT_CHILD2)):
        cp = t.report(os.path.join(t.dir, "fork.hsp.%d" % pid))
        t.check_summary(cp, pid=pid, final=True, **expect)
        t.check_site(cp, site, allocations=n, bytes_allocated=nbytes, frees=0,
                     leaked_bytes=nbytes, leaked_allocations=n)
        t.check_site(cp, "parent_before_fork", allocations=4, bytes_allocated=1200,
                     leaked_bytes=1200)
        t.check_no_site(cp, "parent_after_fork")
        t.check_consistent(cp)

    family = "heapscope: 2 more profiles, of the processes it started: %s, %s\n"
    t.true("the summary names the children's profiles", (family % (
        os.path.join(t.dir, "fork.hsp.%d" % c1), os.path.join(t.dir, "fork.hsp.%d" % c2))).encode()
        in r.stderr, r.stderr.decode())

    # a profile of an earlier run, its file touched now, is not the run's
    stale = os.path.join(t.dir, "fork.hsp.7")
    shutil.copyfile(os.path.join(t.dir, "fork.hsp.%d" % c1), stale)
    with open(stale, "rb") as f:
        stale_bytes = f.read()
    time.sleep(0.05)
    r = t.run("hs_fork", out="fork.hsp")
    k1, k2 = (int(x) for x in re.match(rb"children (\d+) (\d+)\n$", r.stdout).groups())
    t.true("again: the summary names this run's children only", (family % (
        os.path.join(t.dir, "fork.hsp.%d" % k1), os.path.join(t.dir, "fork.hsp.%d" % k2))).encode()
        in r.stderr, r.stderr.decode())
    with open(stale, "rb") as f:
        t.eq("the earlier run's profile is left as it was", stale_bytes, f.read())

    # the default pattern: every process names its own profile
    r = t.run("hs_fork", out=None)
    k1, k2 = (int(x) for x in re.match(rb"children (\d+) (\d+)\n$", r.stdout).groups())
    t.true("default names: the summary names the children's profiles", (family % (
        "heapscope.hs_fork.%d.hsp" % k1, "heapscope.hs_fork.%d.hsp" % k2)).encode() in r.stderr,
        r.stderr.decode())
    t.check_summary(t.report(os.path.join(t.dir, "heapscope.hs_fork.%d.hsp" % k2)), pid=k2,
                    final=True, **EXPECT_CHILD2)


if __name__ == "__main__":
    hstest.main(main)
