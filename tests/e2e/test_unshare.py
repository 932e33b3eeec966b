"""e2e_unshare: a program that calls unshare(CLONE_NEWUSER) (hs_unshare.c)
gets the same answer as without heapscope.

The kernel refuses a new user namespace to a process with more than one
thread, and heapscope's writer thread is one: unshare failed with EINVAL
under heapscope (`unshare -U true` too).  The hook now stops the writer,
retries, and starts it again.  Both modes; the profile holds
before_unshare's 3 x 200 bytes and after_unshare's 2 x 300.  Where the
machine refuses user namespaces to the unprofiled program as well, the
test only checks that heapscope gives the same answer.
"""
import subprocess

import hstest


def main(t):
    base = subprocess.run([t.prog("hs_unshare")], stdout=subprocess.PIPE, timeout=60)
    t.eq("unprofiled: exit status", 0, base.returncode)
    if base.stdout != b"unshare ok\n":
        print("note: user namespaces refused here without heapscope too: %r" % base.stdout)
    for mode in ("fp", "dwarf"):
        r = t.run("hs_unshare", out="unshare-%s.hsp" % mode, opts=["--unwind", mode])
        t.eq("%s: stdout as without heapscope" % mode, base.stdout, r.stdout)
        p = t.report(r.out)
        t.check_site(p, "before_unshare", allocations=3, bytes_allocated=600, frees=0)
        t.check_site(p, "after_unshare", allocations=2, bytes_allocated=600, frees=0)
        t.check_summary(p, final=True)


if __name__ == "__main__":
    hstest.main(main)
