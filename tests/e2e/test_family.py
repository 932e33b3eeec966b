"""e2e_family: calloc, the aligned allocators and reallocarray (hs_family.c).

Valgrind (`hs_family no-pvalloc`, since Valgrind aborts on pvalloc): total
heap usage 15 allocs, 15 frees, 7,676 bytes; xtree: calloc_site 5 / 5,000,
posix_memalign_site 3 / 300, aligned_alloc_site 2 / 512, memalign_site
2 / 144, valloc_site 1 / 1,000 (the request, not the page), reallocarray_site
1 / 240, reallocarray_grow 1 / 480 (freeing reallocarray_site's 240).  The
overflowing calloc, posix_memalign(3, ...) and overflowing reallocarray are
not counted.  With pvalloc(8192): 16, 16, 15,868.
The program checks alignment and malloc_usable_size() >= request itself
(exit 99 otherwise), so exit 0 under heapscope means the interposed
malloc_usable_size agrees with the real allocator.
"""
import hstest

EXPECT = dict(allocations=16, frees=16, bytes_allocated=15868,
              bytes_freed=15868, leaked_bytes=0, leaked_allocations=0)
EXPECT_NO_PVALLOC = dict(allocations=15, frees=15, bytes_allocated=7676,
                         bytes_freed=7676, leaked_bytes=0, leaked_allocations=0)

SITES = [  # function, allocations, bytes, sizes
    ("calloc_site", 5, 5000, [(1000, 1000, 5, 5000)]),
    ("posix_memalign_site", 3, 300, [(100, 100, 3, 300)]),
    ("aligned_alloc_site", 2, 512, [(256, 256, 2, 512)]),
    ("memalign_site", 2, 144, [(72, 72, 2, 144)]),
    ("valloc_site", 1, 1000, [(1000, 1000, 1, 1000)]),
    ("pvalloc_site", 1, 8192, [(8192, 8192, 1, 8192)]),
]


def merged_sizes(stacks):
    """Size histogram of several stacks added up (a short loop may have been
    unrolled into several call sites)."""
    acc = {}
    for st in stacks:
        for e in st["sizes"]:
            k = (int(e["size_lo"]), int(e["size_hi"]))
            a, b = acc.get(k, (0, 0))
            acc[k] = (a + int(e["allocations"]), b + int(e["bytes"]))
    return sorted((lo, hi, a, b) for (lo, hi), (a, b) in acc.items())


def main(t):
    r = t.run("hs_family", out="family.hsp")
    t.eq("program stdout (alignment and usable-size checks passed)",
         b"family done\n", r.stdout)
    p = t.report(r.out)
    for name, n, nbytes, sizes in SITES:
        st = t.check_site(p, name, allocations=n, bytes_allocated=nbytes, frees=n,
                          bytes_freed=nbytes, leaked_bytes=0, temporary_allocations=0)
        t.eq("%s sizes" % name, sizes, merged_sizes(st))
    t.check_site(p, "reallocarray_site", allocations=1, bytes_allocated=240,
                 frees=1, bytes_freed=240)
    # the last allocation of the run, freed last by release_all with no
    # allocation in between: temporary
    t.check_site(p, "reallocarray_grow", allocations=1, bytes_allocated=480,
                 frees=1, bytes_freed=480, temporary_allocations=1)
    for name in ("calloc_overflow", "posix_memalign_bad", "reallocarray_overflow"):
        t.check_no_site(p, name)
    covered = sum(len(p.stacks_with(n)) for n, _, _, _ in SITES) + \
        len(p.stacks_with("reallocarray_site")) + len(p.stacks_with("reallocarray_grow"))
    t.eq("every stack that allocated is one of the named sites'", len(p.alloc_stacks),
         covered)
    t.check_summary(p, final=True, unknown_frees=0, **EXPECT)
    t.check_consistent(p)


if __name__ == "__main__":
    hstest.main(main)
