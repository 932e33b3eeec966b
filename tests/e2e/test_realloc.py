"""e2e_realloc: realloc chains and edge cases (hs_realloc.c).

realloc(p, n) is one free (of p, charged to the stack that allocated p) and
one allocation (charged to the realloc's stack); realloc(NULL, n) is an
allocation; realloc(p, 0) a free; a failed realloc nothing.
Valgrind: total heap usage 25 allocs, 25 frees, 4,611,686,018,427,456,064
bytes; in use at exit 0.  Valgrind counts the failed realloc(p, 2^62) as an
allocation and a free of 2^62 bytes; without it: 24, 24, 68,160, which is
what heapscope must report (e2e_valgrind_truth checks both).  xtree:
chain_grow 10 allocs / 32,736 bytes, after_shrink 1 / 16,000,
shrink_chain 3 / 11,000, shrink_source 1 / 8,000, zero_source 4 / 224,
realloc_from_null 3 / 120, fail_source 1 / 64, chain_start 1 / 16;
realloc_to_zero frees 224 bytes in 4 blocks.  The peak, 17,000 bytes, is
the shrunk block and after_shrink's.  massif's peak snapshot has those
two and 64 bytes more: it keeps fail_source's block live after the failed
realloc, to the end of the run, where memcheck has 0 bytes in use.
Temporaries are only asserted where no realloc is involved: whether a block
freed by a realloc counts as freed "before the thread allocated again" is
the collector's choice.

hs_realloc_thread: realloc as a thread's first allocation call (of a block
from another thread, and of NULL), and in a key destructor after
heapscope's own ran.  Each once hung the program; now each is counted at
its own site, with no unknown free.
"""
import hstest

EXPECT = dict(allocations=24, frees=24, bytes_allocated=68160,
              bytes_freed=68160, leaked_bytes=0, leaked_allocations=0,
              peak_bytes=17000)
# Valgrind's figures differ by the failed realloc(p, 2^62) it counts.
VALGRIND_EXTRA = dict(allocs=1, frees=1, bytes=1 << 62)


def main(t):
    r = t.run("hs_realloc", out="realloc.hsp")
    t.eq("program stdout", b"realloc done\n", r.stdout)
    p = t.report(r.out)
    t.check_site(p, "chain_start", allocations=1, bytes_allocated=16, frees=1,
                 bytes_freed=16, leaked_bytes=0)
    grow = t.check_site(p, "chain_grow", allocations=10, bytes_allocated=32736,
                        frees=10, bytes_freed=32736, leaked_bytes=0)[0]
    exact = sorted((int(e["size_lo"]), int(e["size_hi"]), int(e["allocations"]),
                    int(e["bytes"])) for e in grow["sizes"] if int(e["size_lo"]) <= 8192)
    t.eq("chain_grow sizes up to 8192",
         [(16 << i, 16 << i, 1, 16 << i) for i in range(1, 10)], exact)
    big = [e for e in grow["sizes"] if int(e["size_lo"]) > 8192]
    t.eq("chain_grow size bucket of 16384 (16 buckets per power of two)",
         [(16384, 17407, 1, 16384)],
         [(int(e["size_lo"]), int(e["size_hi"]), int(e["allocations"]), int(e["bytes"]))
          for e in big])
    t.check_site(p, "realloc_from_null", allocations=3, bytes_allocated=120, frees=3,
                 bytes_freed=120, temporary_allocations=0)
    # the last block zero_source makes is freed by realloc(p, 0) before the
    # thread allocates again: temporary
    t.check_site(p, "zero_source", allocations=4, bytes_allocated=224, frees=4,
                 bytes_freed=224, temporary_allocations=1)
    # malloc(64), a failed realloc (no allocation), free: temporary
    t.check_site(p, "fail_source", allocations=1, bytes_allocated=64, frees=1,
                 bytes_freed=64, temporary_allocations=1)
    t.check_no_site(p, "realloc_to_zero")   # realloc(p, 0) allocates nothing
    t.check_no_site(p, "realloc_fail")      # a failed realloc is not counted
    # the peak is the shrunk block and the one after it: each realloc's
    # free came off the heap with its allocation, as free-then-malloc would
    t.check_site(p, "shrink_source", allocations=1, bytes_allocated=8000, frees=1,
                 bytes_freed=8000, peak_bytes=0)
    t.check_site(p, "shrink_chain", allocations=3, bytes_allocated=11000, frees=3,
                 bytes_freed=11000, peak_bytes=1000)
    t.check_site(p, "after_shrink", allocations=1, bytes_allocated=16000, frees=1,
                 bytes_freed=16000, peak_bytes=16000)
    t.check_site(p, "chain_grow", peak_bytes=0)
    t.eq("number of stacks that allocated", 8, len(p.alloc_stacks))
    t.check_summary(p, final=True, unknown_frees=0, **EXPECT)
    t.check_consistent(p)

    r = t.run("hs_realloc_thread", out="realloc_thread.hsp", timeout=60)
    t.eq("hs_realloc_thread stdout", b"realloc threads done\n", r.stdout)
    p = t.report(r.out)
    t.check_site(p, "handed_source", allocations=1, bytes_allocated=24, frees=1,
                 bytes_freed=24, leaked_bytes=0)
    t.check_site(p, "first_is_realloc", allocations=1, bytes_allocated=200, frees=1,
                 bytes_freed=200, leaked_bytes=0)
    t.check_site(p, "first_is_realloc_null", allocations=1, bytes_allocated=48, frees=1,
                 bytes_freed=48, leaked_bytes=0)
    t.check_site(p, "late_realloc", allocations=2, bytes_allocated=168, frees=2,
                 bytes_freed=168, leaked_bytes=0)
    t.check_summary(p, final=True, unknown_frees=0, lost_allocations=0)
    t.check_consistent(p)


if __name__ == "__main__":
    hstest.main(main)
