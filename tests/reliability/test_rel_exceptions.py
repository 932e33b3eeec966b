"""e2e_rel_exceptions: a C++ program throwing exceptions across frames
(rl_throw.cpp).  Exception objects come from __cxa_allocate_exception,
which calls malloc: exactly 750 allocations there, all freed; the output
and exit status are the same as without heapscope.
"""
import hstest
import rltest


def main(t):
    r = rltest.run_both(t, [t.prog("rl_throw")], "throw.hsp")
    t.eq("rl_throw output", b"caught 500 sum 125000\n", r.stdout)
    p = rltest.check_profile(t, r.out, 750)
    t.check_site(p, "__cxa_allocate_exception", allocations=750, frees=750,
                 leaked_allocations=0)
    t.check_site(p, "rl_level3", allocations=500, frees=500)
    t.check_site(p, "rl_level2", allocations=750, frees=750)


if __name__ == "__main__":
    hstest.main(main)
