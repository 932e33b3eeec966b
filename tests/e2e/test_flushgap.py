"""e2e_flushgap: the writer waits 20 times a flush's length before the
next (col_writer.c, FLUSH_GAP_FACTOR), so that a program whose flush is
long (many sites, many threads: a flush reads every thread's counter of
every site) does not keep it busy (tests/progs/hs_flushgap.c).

hs_flushgap allocates from 100 sites for a while, at an interval of 10
ms, and looks every millisecond for the profile's rewrites and for its
temporary file, which exists while a flush writes.  With quick flushes it
sees many rewrites: this shows that it sees flushes.  With every read of
a counter made 20 us slower (HEAPSCOPE_FAULT_SLOW_READS; on this VM a
flush then takes ~75 ms), the writer may be flushing in at most a
quarter of its looks: 1/21 of the time after the first flush, which
starts at 10 ms.  Before the gap it flushed again 10 ms after each flush
ended, and was found flushing in 93% of the looks (200 sites, 2.5 s)."""
import os
import re
import hstest

SITES = 100


def flushgap(t, name, ms, env):
    out = "flushgap-%s.hsp" % name
    r = t.run("hs_flushgap", [os.path.join(t.dir, out), str(ms), str(SITES)], out=out,
              opts=("--unwind", "fp", "--interval", "10"), env=env)
    m = re.match(rb"flushes (\d+) busy (\d+) of (\d+)\n$", r.stdout)
    if not m:
        raise hstest.HsError("hs_flushgap printed %r" % r.stdout)
    t.check_consistent(t.report(r.out))
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def main(t):
    flushes, _, _ = flushgap(t, "quick", 1500, None)
    t.true("quick flushes: the profile is rewritten often", flushes >= 5, str(flushes))
    flushes, busy, looks = flushgap(t, "slow", 2500, {"HEAPSCOPE_FAULT_SLOW_READS": "1"})
    t.true("slow flushes: the profile is rewritten", flushes >= 1, str(flushes))
    t.true("slow flushes: the writer flushes in at most a quarter of the looks",
           looks > 0 and busy * 4 <= looks, "%d of %d" % (busy, looks))


if __name__ == "__main__":
    hstest.main(main)
