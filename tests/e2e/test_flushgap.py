"""e2e_flushgap: the writer waits 20 times a flush's CPU time before the
next (col_writer.c, FLUSH_GAP_FACTOR), so that a program whose flush is
long (many sites, many threads: a flush reads every thread's counter of
every site) does not keep it busy; and a flush that is long only in
wall time, held up without working, does not space out the next ones
(tests/progs/hs_flushgap.c).

hs_flushgap allocates from 100 sites for a while, at an interval of 10
ms, and looks every millisecond for the profile's rewrites.
- With quick flushes it sees many: this shows that it sees flushes.
- With each flush spending 20 ms of CPU more
  (HEAPSCOPE_FAULT_FLUSH_CPU_MS), the next may come no sooner than 400 ms
  later: at most eight in 2.5 s (5 here).  Without the gap the writer
  flushed again 10 ms after each one ended: 77.
- With each flush 60 ms asleep (HEAPSCOPE_FAULT_FLUSH_SLEEP_MS), the
  flushes keep coming: at least twelve in 2.5 s (34 here).  With the gap
  taken from wall time (as in 90c6a48), 2."""
import os
import re
import hstest

SITES = 100


def rewrites(t, name, ms, env):
    out = "flushgap-%s.hsp" % name
    r = t.run("hs_flushgap", [os.path.join(t.dir, out), str(ms), str(SITES)], out=out,
              opts=("--unwind", "fp", "--interval", "10"), env=env)
    m = re.match(rb"flushes (\d+)\n$", r.stdout)
    if not m:
        raise hstest.HsError("hs_flushgap printed %r" % r.stdout)
    t.check_consistent(t.report(r.out))
    return int(m.group(1))


def main(t):
    n = rewrites(t, "quick", 1500, None)
    t.true("quick flushes: the profile is rewritten often", n >= 5, str(n))
    n = rewrites(t, "busy", 2500, {"HEAPSCOPE_FAULT_FLUSH_CPU_MS": "20"})
    t.true("flushes of 20 ms of CPU: at most eight in 2.5 s", 1 <= n <= 8, str(n))
    n = rewrites(t, "asleep", 2500, {"HEAPSCOPE_FAULT_FLUSH_SLEEP_MS": "60"})
    t.true("flushes held up asleep: still at least twelve in 2.5 s", n >= 12, str(n))


if __name__ == "__main__":
    hstest.main(main)
