"""e2e_temporary: temporary allocations (hs_temporary.c).

A block is temporary when its thread frees it before allocating again.
temp_loop: 1,000 x malloc(64)+free: 1,000 temporary.  In the loop
{a = keep_a(); b = keep_b(); free(a); free(b)} x 100, keep_b's block is
allocated before a is freed, so keep_a's 100 are not temporary, while
keep_b's are (only a free came in between): 100.
Valgrind: total heap usage 1,200 allocs, 1,200 frees, 72,000 bytes; xtree:
temp_loop 1,000 / 64,000, keep_a 100 / 3,200, keep_b 100 / 4,800.
"""
import hstest

EXPECT = dict(allocations=1200, frees=1200, bytes_allocated=72000,
              bytes_freed=72000, leaked_bytes=0, leaked_allocations=0)


def main(t):
    r = t.run("hs_temporary", out="temporary.hsp")
    t.eq("program stdout", b"temporary done\n", r.stdout)
    p = t.report(r.out)
    t.check_site(p, "temp_loop", allocations=1000, bytes_allocated=64000, frees=1000,
                 temporary_allocations=1000)
    t.check_site(p, "keep_a", allocations=100, bytes_allocated=3200, frees=100,
                 temporary_allocations=0)
    t.check_site(p, "keep_b", allocations=100, bytes_allocated=4800, frees=100,
                 temporary_allocations=100)
    t.check_summary(p, final=True, temporary_allocations=1100, **EXPECT)
    t.check_consistent(p)


if __name__ == "__main__":
    hstest.main(main)
