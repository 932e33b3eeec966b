"""e2e_leak: leaks attributed to the functions that made them (hs_leak.c).

Valgrind: total heap usage 15 allocs, 5 frees, 4,336 bytes allocated; in use
at exit 3,336 bytes in 10 blocks, all "definitely lost"; xtree: 336 bytes /
7 blocks live from leak_small_nodes, 3,000 / 3 from leak_big_buffers,
tidy_site 1,000 bytes in 5 allocs and nothing live.
"""
import hstest

EXPECT = dict(allocations=15, frees=5, bytes_allocated=4336, bytes_freed=1000,
              leaked_bytes=3336, leaked_allocations=10)


def main(t):
    r = t.run("hs_leak", out="leak.hsp")
    t.eq("program stdout", b"leak done\n", r.stdout)
    p = t.report(r.out)
    t.check_site(p, "leak_small_nodes", allocations=7, frees=0, bytes_allocated=336,
                 leaked_bytes=336, leaked_allocations=7)
    t.check_site(p, "leak_big_buffers", allocations=3, frees=0, bytes_allocated=3000,
                 leaked_bytes=3000, leaked_allocations=3)
    t.check_site(p, "tidy_site", allocations=5, frees=5, bytes_allocated=1000,
                 bytes_freed=1000, leaked_bytes=0, leaked_allocations=0)
    t.check_summary(p, final=True, temporary_allocations=0, **EXPECT)
    t.eq("number of stacks that allocated", 3, len(p.alloc_stacks))
    t.check_consistent(p)
    # the biggest leak comes first among leaking stacks in the text report
    text = t.report_text(r.out)
    t.true("text report names leak_big_buffers", "leak_big_buffers" in text)


if __name__ == "__main__":
    hstest.main(main)
