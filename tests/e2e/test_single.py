"""e2e_single: one thread, two allocation sites (tests/progs/hs_single.c).

Valgrind 3.19 memcheck on hs_single: total heap usage 150 allocs, 120 frees,
56,550 bytes allocated; in use at exit 30,000 bytes in 30 blocks; its xtree
(--xtree-memory=full) puts 100 allocs / 6,550 bytes in alloc_site_a and
50 / 50,000 in alloc_site_b (30,000 still live).
"""
import os

import hstest

# Summary of hs_single, also checked against Valgrind by e2e_valgrind_truth.
EXPECT = dict(allocations=150, frees=120, bytes_allocated=56550,
              bytes_freed=26550, leaked_bytes=30000, leaked_allocations=30)


def check_counts(t, p, symbols=True):
    """The exact per-stack and summary numbers of hs_single.  With
    symbols=False (stripped binary) the two stacks are told apart by their
    size histograms instead of function names."""
    if symbols:
        a = t.check_site(p, "alloc_site_a", n_stacks=1, allocations=100, frees=100,
                         bytes_allocated=6550, bytes_freed=6550, leaked_bytes=0,
                         leaked_allocations=0, temporary_allocations=0,
                         peak_bytes=6550)[0]
        b = t.check_site(p, "alloc_site_b", n_stacks=1, allocations=50, frees=20,
                         bytes_allocated=50000, bytes_freed=20000,
                         leaked_bytes=30000, leaked_allocations=30,
                         temporary_allocations=0, peak_bytes=50000)[0]
        t.check_sizes(p, a, [(16 + i, 16 + i, 1, 16 + i) for i in range(100)])
        t.check_sizes(p, b, [(1000, 1000, 50, 50000)])
    t.eq("number of stacks that allocated", 2, len(p.alloc_stacks))
    t.check_summary(p, peak_bytes=56550, temporary_allocations=0, threads=1,
                    unknown_frees=0, lost_allocations=0, final=True,
                    truncated=False, **EXPECT)
    t.check_consistent(p)


def main(t):
    prog = t.prog("hs_single")
    r = t.run("hs_single", out="single.hsp")
    t.eq("program stdout", b"single done\n", r.stdout)
    p = t.report(r.out)
    check_counts(t, p)

    # frame 0 of each stack is the malloc call in the named function
    for name, needle in (("alloc_site_a", "blocks_a[i] = malloc("),
                         ("alloc_site_b", "blocks_b[i] = malloc(")):
        st = p.stacks_with(name)[0]
        f0 = st["frames"][0]
        t.eq(name + ": frame 0 function", name, f0.get("function"))
        t.eq(name + ": frame 0 file", "hs_single.c", os.path.basename(f0.get("file") or ""))
        t.eq(name + ": frame 0 line", hstest.source_line("hs_single.c", needle), f0.get("line"))
        t.eq(name + ": frame 0 module", os.path.realpath(prog),
             os.path.realpath(f0.get("module") or ""))
        t.true(name + ": main is a caller", p.frame_of(st, "main") is not None,
               p.describe(st))
    t.true("summary.program names hs_single", "hs_single" in str(p.summary.get("program")),
           repr(p.summary.get("program")))
    t.true("summary.run_time_ns > 0", int(p.summary.get("run_time_ns", 0)) > 0)
    t.true("summary.peak_time_ns <= run_time_ns",
           0 <= int(p.summary.get("peak_time_ns", -1)) <= int(p.summary.get("run_time_ns", 0)))

    # the text report works and names the sites
    text = t.report_text(r.out)
    t.true("text report mentions alloc_site_b", "alloc_site_b" in text, text[:2000])

    # every peak share saved in the counters' peak plane, as one too big
    # for the hot part's 16 bits would be: the same numbers
    p = t.report(t.run("hs_single", out="single-cold.hsp",
                       env={"HEAPSCOPE_FAULT_PEAK_COLD": "1"}).out)
    check_counts(t, p)


if __name__ == "__main__":
    hstest.main(main)
