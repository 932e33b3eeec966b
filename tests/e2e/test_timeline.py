"""e2e_timeline: the heap-over-time samples of one thread (hs_plateau.c).

Heap levels, each held 40 ms and sampled every millisecond: 200,000 bytes
(the peak), 0, 10,000 (below the peak and below the 16 KiB that threads
may keep unpublished: one thread keeps nothing back), 0.  Every level must
appear exactly in the samples, and no sample may show anything else than
a level or a state the program passes through on its way to one: a sample
can land between two of the 4 x 50,000 or 10 x 1,000 allocations (or
frees), and those heaps are real (a CI run caught 2,000 once).
"""
import hstest

PASSING = {50000 * k for k in range(5)} | {1000 * k for k in range(11)}


def main(t):
    r = t.run("hs_plateau", out="plateau.hsp", env={"HEAPSCOPE_SAMPLE_MS": "1"})
    t.eq("program stdout", b"plateau done\n", r.stdout)
    p = t.report(r.out)
    t.check_summary(p, final=True, allocations=14, frees=14, bytes_allocated=210000,
                    bytes_freed=210000, peak_bytes=200000, leaked_bytes=0)
    heaps = [int(s["heap"]) for s in p.data.get("timeline", [])]
    t.true("at least 60 samples", len(heaps) >= 60, str(len(heaps)))
    t.eq("sample levels", [], sorted({h for h in heaps if h not in PASSING})[:10])
    for level in (200000, 10000):
        t.true("a sample at %d bytes" % level, heaps.count(level) >= 10,
               "%d samples at it; levels %s" % (heaps.count(level), sorted(set(heaps))))


if __name__ == "__main__":
    hstest.main(main)
