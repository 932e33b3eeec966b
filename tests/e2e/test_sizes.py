"""e2e_sizes: many sizes from a few stacks (tests/progs/hs_sizes.c).

Three stacks allocate 2,500 small sizes and 100 sizes above 8 KiB,
interleaved, so that (stack, size) pairs share the entries of the
collector's per-thread site memo and a stack's cache entry changes size
at nearly every call; a fourth cycles through four sizes, two answered by
the memo each time and two that share one memo entry; a fifth and a
calloc twin go back and forth across 8192 (the largest exact size, taken
inline by the hook) and 8193 (the first bucket, out of line).  Every size
of every stack must keep its own exact count and bytes, also when the
collector's mappings of several counter leaves fail
(HEAPSCOPE_FAULT_COUNT_MAPS=1) and each leaf is mapped alone.  With the site
table full (HEAPSCOPE_FAULT_SITES=1) no pair gets a site, and every one
of the 26,700 allocations must be counted as lost: none may be answered
from the memo or the cache.  With room for 8 site ids (the lost
pseudo-site and 7 real ones) the first seven pairs in program order keep
theirs, alloc_a's sizes 1-4 and alloc_b's 2500-2498, and everything else
is lost.
"""
import hstest

EXACT_MAX = 8192


def bucket(size):
    """(size_lo, size_hi) of the size histogram entry holding `size`: exact
    up to 8 KiB, then 16 buckets per power of two (docs/FORMAT.md)."""
    if size <= EXACT_MAX:
        return size, size
    step = 1 << (size.bit_length() - 1 - 4)
    lo = size & ~(step - 1)
    return max(lo, EXACT_MAX + 1), lo + step - 1


def histogram(sizes_counts):
    h = {}
    for size, n in sizes_counts:
        lo, hi = bucket(size)
        e = h.setdefault((lo, hi), [0, 0])
        e[0] += n
        e[1] += n * size
    return [(lo, hi, n, b) for (lo, hi), (n, b) in h.items()]


TOTALS = dict(allocations=26700, frees=26700, bytes_allocated=82784150,
              bytes_freed=82784150, leaked_bytes=0, leaked_allocations=0)
EDGE = [100, 9000, 8192, 8193, 200]


def held(p):
    """(allocations, bytes allocated, bytes freed) of every stack that
    holds blocks, sorted."""
    return sorted((int(s["allocations"]), int(s["bytes_allocated"]), int(s["bytes_freed"]))
                  for s in p.stacks if int(s["allocations"]))


def check_exact(t, out, env=None):
    """hs_sizes run into `out`: every size of every stack counted exactly."""
    r = t.run("hs_sizes", out=out, env=env)
    t.eq("program stdout", b"sizes done\n", r.stdout)
    p = t.report(r.out)
    small = range(1, 2501)
    big = [8193 + 997 * j for j in range(100)]
    for name, n, sizes, temporary in (("alloc_a", 3, small, 2500),
                                      ("alloc_b", 2, small, 5000),
                                      ("alloc_c", 2, big, 200),
                                      ("alloc_d", 1000, [48, 100, 1126, 3000], 4000),
                                      ("alloc_e", 1000, EDGE, 5000),
                                      ("calloc_e", 1000, EDGE, 5000)):
        nbytes = n * sum(sizes)
        st = t.check_site(p, name, n_stacks=1, allocations=n * len(sizes),
                          frees=n * len(sizes), bytes_allocated=nbytes,
                          bytes_freed=nbytes, leaked_bytes=0,
                          temporary_allocations=temporary)[0]
        t.check_sizes(p, st, histogram((s, n) for s in sizes))
    t.check_summary(p, final=True, lost_allocations=0, **TOTALS)
    t.check_consistent(p)


def main(t):
    check_exact(t, "sizes.hsp")
    # ~5,200 sites: the thread's counter leaves 2-5 come from mappings of
    # 2 and 4 leaves; when those fail (address space refused), each leaf
    # is mapped alone and every count stays exact
    check_exact(t, "sizes-maps.hsp", env={"HEAPSCOPE_FAULT_COUNT_MAPS": "1"})

    p = t.report(t.run("hs_sizes", out="sizes-lost.hsp",
                       env={"HEAPSCOPE_FAULT_SITES": "1"}).out)
    t.check_summary(p, final=True, lost_allocations=26700, **TOTALS)
    t.eq("sizes-lost: one stack holds every block", [(26700, 82784150, 82784150)], held(p))
    t.check_consistent(p)

    p = t.report(t.run("hs_sizes", out="sizes-few.hsp",
                       env={"HEAPSCOPE_FAULT_SITES": "8"}).out)
    a = 3 * (1 + 2 + 3 + 4)
    b = 2 * (2500 + 2499 + 2498)
    lost = 26700 - 12 - 6
    t.check_summary(p, final=True, lost_allocations=lost, **TOTALS)
    t.eq("sizes-few: the seven sites and the lost blocks",
         sorted([(6, b, b), (12, a, a), (lost, 82784150 - a - b, 82784150 - a - b)]), held(p))
    t.check_site(p, "alloc_a", n_stacks=1, allocations=12, bytes_allocated=a)
    t.check_site(p, "alloc_b", n_stacks=1, allocations=6, bytes_allocated=b)
    t.check_consistent(p)


if __name__ == "__main__":
    hstest.main(main)
