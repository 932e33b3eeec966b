"""e2e_nothread: `heapscope run --no-thread` starts no thread of
heapscope's own while the program has one, so glibc keeps its
single-thread paths; the profile is still written every interval, from
the program's allocations (hs_nothread.c, col_writer.c).

- `--no-thread`, hs_nothread kill: glibc's __libc_single_threaded is still
  1 and the process has 1 thread.  It keeps 10 x 256 bytes in kept_site,
  then churns malloc(32)+free pairs for 300 ms and kills itself: the last
  profile written while it allocated (--interval 50) holds kept_site
  exactly and at least one cold check's 4,096 pairs of churn_site.
- The default (writer thread at start-up), same program: glibc says the
  process is threaded and it has 2 threads: what --no-thread avoids.  The
  profile holds kept_site exactly too.
- `--no-thread`, hs_nothread thread: the program's own thread (started and
  joined) starts heapscope's at the next cold check: 2 threads after
  20,000 pairs; the final profile is exact.
- The default on glibc 2.36, x86_64 (col_glibc.c): the writer thread is
  kept out of the thread-control-block field that glibc's malloc reads, so
  that field still says the program's thread is alone ("tcb 0"), while
  the global flag counts the writer (locks stay locks).  With
  HEAPSCOPE_HIDE_WRITER=0 the field says 1.  Elsewhere the program prints
  "tcb -".
- hs_nothread hidden, the default with a flush every 10 ms and a sample
  every 1 ms: 300 ms of fastbin churn with the loader lock taken by both
  threads, dlopen and dlclose, a fork; then the program's own thread frees
  the main thread's blocks.  Exact counts in the parent's and the child's
  profiles, the field back to 1 once the program has a thread, and no
  call of the malloc family from the writer.  With
  HEAPSCOPE_FAULT_WRITER_ALLOC=1 the writer makes one after each flush:
  the bootstrap arena serves it, the profile names it, the counts stay
  exact.
"""
import os
import platform
import re

import hstest

# bins_site's 64 sizes: 16 + i % 25 for i in 0..63
ROUND_BYTES = sum(16 + i % 25 for i in range(64))


def tcb(hidden):
    """What hs_nothread prints for the field: glibc 2.36 on x86_64 only."""
    if platform.machine() == "x86_64" and os.confstr("CS_GNU_LIBC_VERSION") == "glibc 2.36":
        return b"0" if hidden else b"1"
    return b"-"


def churn_ok(t, p, at_least):
    s = t.site(p, "churn_site")
    got = p.totals_of(s)
    t.true("churn_site: at least %d allocations" % at_least, got["allocations"] >= at_least,
           str(got["allocations"]))
    t.true("churn_site: every pair freed but the one being recorded",
           got["allocations"] - got["frees"] in (0, 1), "%d allocations, %d frees"
           % (got["allocations"], got["frees"]))


def main(t):
    r = t.run("hs_nothread", ["kill"], out="nothread.hsp",
              opts=["--no-thread", "--interval", "50"], expect_rc=137)
    t.eq("--no-thread: glibc's flags and threads", b"single 1 tcb %s threads 1\n" % tcb(True),
         r.stdout)
    p = t.report(r.out)
    t.check_summary(p, final=False, truncated=False)
    t.check_site(p, "kept_site", allocations=10, bytes_allocated=2560, frees=0)
    churn_ok(t, p, 4096)
    t.check_consistent(p)

    r = t.run("hs_nothread", ["kill"], out="writer.hsp", opts=["--interval", "50"],
              expect_rc=137)
    t.eq("default: glibc's flags and threads", b"single 0 tcb %s threads 2\n" % tcb(True),
         r.stdout)
    p = t.report(r.out)
    t.check_summary(p, final=False)
    t.check_site(p, "kept_site", allocations=10, bytes_allocated=2560, frees=0)
    churn_ok(t, p, 1)

    r = t.run("hs_nothread", ["thread"], out="thread.hsp", opts=["--no-thread"])
    t.eq("--no-thread, program thread: heapscope's started",
         b"single 0 tcb %s threads 2\n" % tcb(False), r.stdout)
    p = t.report(r.out)
    t.check_summary(p, final=True)
    t.check_site(p, "churn_site", allocations=20000, frees=20000, bytes_allocated=640000)
    t.check_consistent(p)

    r = t.run("hs_nothread", ["kill"], out="counted.hsp", opts=["--interval", "50"],
              env={"HEAPSCOPE_HIDE_WRITER": "0"}, expect_rc=137)
    t.eq("HEAPSCOPE_HIDE_WRITER=0: glibc's flags", b"single 0 tcb %s threads 2\n" % tcb(False),
         r.stdout)
    t.check_site(t.report(r.out), "kept_site", allocations=10, bytes_allocated=2560, frees=0)

    for mode, fault in (("fp", False), ("dwarf", False), ("fp", True)):
        out = "hidden-%s%s.hsp" % (mode, "-fault" if fault else "")
        env = {"HEAPSCOPE_SAMPLE_MS": "1"}
        if fault:
            env["HEAPSCOPE_FAULT_WRITER_ALLOC"] = "1"
        r = t.run("hs_nothread", ["hidden", t.prog("hs_plugin")], out=out,
                  opts=["--unwind", mode, "--interval", "10"], env=env)
        m = re.match(rb"single 0 tcb (\S+) threads 2\nrounds (\d+)\n"
                     rb"single 0 tcb (\S+) threads 2\n$", r.stdout)
        if not m:
            raise hstest.HsError("%s: hs_nothread hidden printed %r" % (mode, r.stdout))
        t.eq(mode + ": the field while alone", tcb(True), m.group(1))
        t.eq(mode + ": the field with a thread of the program", tcb(False), m.group(3))
        rounds = int(m.group(2))
        t.true(mode + ": rounds made", rounds > 100, str(rounds))
        p = t.report(r.out)
        t.check_summary(p, final=True)
        n = (rounds + 1000) * 64
        t.check_site(p, "bins_site", allocations=n, frees=n,
                     bytes_allocated=(rounds + 1000) * ROUND_BYTES, leaked_bytes=0)
        t.check_site(p, "cross_site", allocations=10000, frees=10000, bytes_allocated=240000,
                     leaked_bytes=0)
        t.check_consistent(p)
        said = [w for w in p.summary["warnings"] if "the writer thread called the malloc" in w]
        if not fault:
            t.eq(mode + ": the writer's calls of the malloc family", [], said)
        elif tcb(True) == b"0":
            t.eq(mode + ": the writer's calls, named once", 1, len(said))
        children = [f for f in os.listdir(t.dir) if f.startswith(out + ".")]
        t.eq(mode + ": the child's profile", 1, len(children))
        c = t.report(os.path.join(t.dir, children[0]))
        t.check_site(c, "bins_site", allocations=n, frees=n,
                     bytes_allocated=(rounds + 1000) * ROUND_BYTES)
        t.check_no_site(c, "cross_site")


if __name__ == "__main__":
    hstest.main(main)
