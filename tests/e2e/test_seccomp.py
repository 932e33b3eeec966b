"""e2e_seccomp: a program that installs a seccomp filter (hs_seccomp.c) runs
as it does without heapscope, and its profile ends where the filter went in
if the filter would stop the profile's writing or the collector.

Before the collector read filters: one that kills the process at openat
made it die of SIGSYS at the flush of exit() (status 159, no profile); one
that fails openat lost the profile ("cannot create the profile"); one that
traps it died of the unhandled SIGSYS (with TSYNC, heapscope's writer
thread died at its next /proc/self/statm sample).  Then, before the fixes
of a review: an allow-list filter (no getpid) killed the process at the
final flush's getpid; a filter installed with a listener (whose success is
a descriptor, not 0) was taken as refused, and the profile lost (openat:
ENOSYS); under a filter that kills the clone of a thread, a forked child's
first periodic check started the writer thread and died of SIGSYS.  And
before the fixes of a second review: a forked child called getpid (a
filter that kills it: the child died); threads allocating from new stacks
after a TSYNC filter that kills sched_yield waited on the collector's locks
with it (status 159); two threads installing TSYNC filters at once, the
second went in while the first still stopped the writer thread (tgkill);
an image exec'd under a filter that kills prlimit64(RLIMIT_NOFILE) loaded
heapscope again and died at its start (LD_PRELOAD now leaves it out).

Now the collector runs the filter on its own calls before it goes in
(col_bpf.c, col_seccomp_calls.c): the profile is written then, with a
message that says why it ends (and PF_TOTALS_SEALED, so that the report
says it ends early rather than that the program did not exit normally),
and nothing after: before_site's 3 x 100 bytes, live, in a profile that is
not final; no after_site; exit status 0.  A filter that forbids only a
call heapscope never makes (getppid) changes nothing: the final profile
has after_site's 5 x 200 bytes too.  So does one the kernel refuses
(EINVAL), after which the seal is lifted and stderr says so.  (Thirteen
filters; hs_seccomp.c says what each does.)  Both
unwinding modes (libheapscope.so and libheapscope-fp.so).
"""
import os

import hstest

SEAL = "the program installed a seccomp filter"
KILL = "(a kill, a tracer or a supervisor)"

# mode: (the sentence's words that name the call, stdout)
SEALED = {
    "kill": ("stops the process at openat " + KILL, b"filtered\n"),
    "errno": ("makes openat fail", b"filtered\n"),
    "syscall": ("stops the process at openat (SIGSYS)", b"filtered\n"),
    "tsync": ("stops the process at openat " + KILL, b"filtered\n"),
    "listener": ("stops the process at openat " + KILL, b"filtered\n"),
    "allowlist": ("stops the process at openat " + KILL, b"filtered\n"),
    "fork": ("stops the process at clone %s, which heapscope makes" % KILL,
             b"child 0\nfiltered\n"),
    "forkpid": ("stops the process at getpid " + KILL, b"child 0\nfiltered\n"),
    "yield": ("stops the process at sched_yield %s, which heapscope makes" % KILL,
              b"filtered\n"),
    "two": ("stops the process at tgkill %s, which heapscope makes" % KILL, b"filtered\n"),
    "exec": ("stops the process at prlimit64 " + KILL, b"filtered\nsingle done\n"),
}
THREADS = ("tsync", "yield", "two")  # (pthread_create's own blocks raise the peak)


def check_sealed(t, mode, how):
    why, stdout = SEALED[how]
    name = "%s %s" % (mode, how)
    out = "seccomp-%s-%s.hsp" % (mode, how)
    args = [how] + ([t.prog("hs_single")] if how == "exec" else [])
    r = t.run("hs_seccomp", args=args, out=out, opts=["--unwind", mode], expect_rc=None,
              timeout=60)
    t.eq("%s: exit status" % name, 0, r.rc)
    t.eq("%s: stdout" % name, stdout, r.stdout)
    t.true("%s: stderr says why the profile ends" % name,
           ("heapscope: %s" % SEAL).encode() in r.stderr and why.encode() in r.stderr,
           r.stderr.decode("utf-8", "replace"))
    t.eq("%s: one profile (no child or exec'd image under the seal writes one)" % name, [out],
         sorted(f for f in os.listdir(t.dir) if f.startswith(out)))
    p = t.report(r.out)
    t.check_site(p, "before_site", allocations=3, bytes_allocated=300, frees=0,
                 leaked_bytes=300, leaked_allocations=3)
    t.check_no_site(p, "after_site")
    t.check_summary(p, final=False)
    if how not in THREADS:
        t.check_summary(p, peak_bytes=300)
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


def check_unsealed(t, mode, how, stdout, stderr_lines):
    name = "%s %s" % (mode, how)
    r = t.run("hs_seccomp", args=[how], out="seccomp-%s-%s.hsp" % (mode, how),
              opts=["--unwind", mode])
    t.eq("%s: stdout" % name, stdout, r.stdout)
    t.eq("%s: heapscope's lines on stderr about seccomp" % name, stderr_lines,
         [l.split(" at ")[0] for l in r.stderr.decode().splitlines()
          if l.startswith("heapscope:") and "seccomp filter" in l])
    p = t.report(r.out)
    t.check_site(p, "before_site", allocations=3, bytes_allocated=300, frees=0)
    t.check_site(p, "after_site", allocations=5, bytes_allocated=1000, frees=0)
    t.check_summary(p, final=True)
    t.eq("%s: no seal message" % name, [], [w for w in p.summary["warnings"] if SEAL in w])


def main(t):
    for mode in ("fp", "dwarf"):
        for how in sorted(SEALED):
            check_sealed(t, mode, how)
        check_unsealed(t, mode, "other", b"filtered\n", [])
        # the seal's line is written before the call, then lifted
        check_unsealed(t, mode, "refused", b"preload kept\nrefused EINVAL\n",
                       ["heapscope: " + SEAL,
                        "heapscope: the kernel refused that seccomp filter: the profile goes on"])


if __name__ == "__main__":
    hstest.main(main)
