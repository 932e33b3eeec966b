"""e2e_seccomp: a program that installs a seccomp filter (hs_seccomp.c) runs
as it does without heapscope, and its profile ends where the filter went in
if the filter would stop the profile's writing.

A filter that kills the process at openat made it die of SIGSYS at the
flush of exit() (status 159, no profile); one that fails openat lost the
profile ("cannot create the profile"); one that traps it (installed by
syscall(SYS_seccomp)) died of the unhandled SIGSYS.  The collector now runs
the filter on its own calls before it goes in (col_bpf.c, col_seccomp.c):
the profile is written then, with a message that says why it ends (and
PF_TOTALS_SEALED, so that the report says it ends early rather than that
the program did not exit normally), and
nothing after (tsync: the filter covers heapscope's writer thread too,
which then must not sample /proc/self/statm): before_site's 3 x 100 bytes, live, in a profile that is not
final; no after_site.  A filter that forbids only a call heapscope never
makes (getppid) changes nothing: the final profile has after_site's 5 x 200
bytes too.  So does one the kernel refuses (EINVAL), after which the seal
is lifted.  Both unwinding modes (libheapscope.so and libheapscope-fp.so).
"""
import hstest

SEAL = "the program installed a seccomp filter"


def main(t):
    sealed = {"kill": "stops the process at openat (a kill, a tracer or a supervisor)",
              "errno": "makes openat fail",
              "syscall": "stops the process at openat (SIGSYS)",
              "tsync": "stops the process at openat (a kill, a tracer or a supervisor)"}
    for mode in ("fp", "dwarf"):
        for how, why in sorted(sealed.items()):
            name = "%s %s" % (mode, how)
            r = t.run("hs_seccomp", args=[how], out="seccomp-%s-%s.hsp" % (mode, how),
                      opts=["--unwind", mode], expect_rc=None)
            t.eq("%s: exit status" % name, 0, r.rc)
            t.eq("%s: stdout" % name, b"filtered\n", r.stdout)
            t.true("%s: stderr says why the profile ends" % name,
                   ("heapscope: %s" % SEAL).encode() in r.stderr and why.encode() in r.stderr,
                   r.stderr.decode("utf-8", "replace"))
            p = t.report(r.out)
            t.check_site(p, "before_site", allocations=3, bytes_allocated=300, frees=0,
                         leaked_bytes=300, leaked_allocations=3)
            t.check_no_site(p, "after_site")
            t.check_summary(p, final=False, peak_bytes=300)
            t.true("%s: the last sample's peak RSS is in it" % name,
                   p.summary.get("rss_peak", 0) > 0, str(p.summary.get("rss_peak")))
            notes = [w for w in p.summary["warnings"] if w.startswith("collector: " + SEAL)]
            t.eq("%s: the collector's message" % name, 1, len(notes))
            t.true("%s: it names the call" % name, notes and why in notes[0], str(notes))
            t.eq("%s: the report says it ends early, not that the program crashed" % name,
                 [True, False],
                 [any(w.startswith("profile ends early: the program installed a seccomp filter")
                      for w in p.summary["warnings"]),
                  any("did not exit normally" in w for w in p.summary["warnings"])])

        for how, line in (("other", b"filtered\n"), ("refused", b"refused EINVAL\n")):
            name = "%s %s" % (mode, how)
            r = t.run("hs_seccomp", args=[how], out="seccomp-%s-%s.hsp" % (mode, how),
                      opts=["--unwind", mode])
            t.eq("%s: stdout" % name, line, r.stdout)
            t.true("%s: no seal on stderr" % name, SEAL.encode() not in r.stderr,
                   r.stderr.decode("utf-8", "replace"))
            p = t.report(r.out)
            t.check_site(p, "before_site", allocations=3, bytes_allocated=300, frees=0)
            t.check_site(p, "after_site", allocations=5, bytes_allocated=1000, frees=0)
            t.check_summary(p, final=True)
            t.eq("%s: no seal message" % name, [],
                 [w for w in p.summary["warnings"] if SEAL in w])


if __name__ == "__main__":
    hstest.main(main)
