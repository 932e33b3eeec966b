"""e2e_counters: counts past the width of a thread's hot counters
(hs_counters.c).

A thread's counters of a site keep the low 31 bits of its allocations and
frees, 15 of its temporary allocations and 16 of its share of a peak; the
rest is carried to the leaf's other planes (col_internal.h, col_count_t).
hs_counters makes 100,000 temporary allocations at one site (the 15-bit
count fills three times), holds 40,000 blocks of another site at its peak
(a share over 16 bits) and frees 50 blocks of a thread that has exited (a
negative partial).  The numbers must be exact with both libraries, and
again with libheapscope-narrow.so, built with counters that fill every 16
allocations or frees and every 4 temporary allocations, so that nearly
every site of every thread carries, the peak's shares are read through
the carries, and the writer thread's periodic flushes read counters while
their owner carries.
"""
import os

import hstest

SITES = [
    ("temp_pairs", dict(allocations=100000, bytes_allocated=3200000, frees=100000,
                        temporary_allocations=100000, peak_bytes=0, leaked_bytes=0)),
    ("many_live", dict(allocations=40000, bytes_allocated=1920000, frees=40000,
                       temporary_allocations=1, peak_bytes=1920000, leaked_bytes=0)),
    ("handed_site", dict(allocations=50, bytes_allocated=3200, frees=50,
                         temporary_allocations=0, peak_bytes=0, leaked_bytes=0)),
]


def check(t, label, opts=(), env=None):
    r = t.run("hs_counters", out="counters-%s.hsp" % label, opts=opts, env=env)
    t.eq(label + ": program stdout", b"counters done\n", r.stdout)
    p = t.report(r.out)
    for name, expected in SITES:
        t.check_site(p, name, **expected)
    # the peak is many_live's 40,000 blocks, with nothing else of the
    # program's live (it has no other allocation before the thread)
    t.check_summary(p, final=True, peak_bytes=1920000)
    t.check_consistent(p)


def main(t):
    check(t, "dwarf")
    check(t, "fp", opts=["--unwind", "fp"])
    narrow = os.path.join(os.path.dirname(t.lib), "libheapscope-narrow.so")
    if not os.path.exists(narrow):
        raise hstest.HsError("libheapscope-narrow.so missing: " + narrow)
    check(t, "narrow", env={"HEAPSCOPE_LIB": narrow})


if __name__ == "__main__":
    hstest.main(main)
