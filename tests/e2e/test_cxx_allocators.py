"""e2e_cxx_allocators: C++ new/delete are counted exactly under jemalloc,
tcmalloc and mimalloc too (hs_cxx.cpp, the figures of e2e_cxx).

Those allocators define operator new and delete themselves, so `new`
never reaches malloc; heapscope interposes the operators (col_hooks_cxx.c),
which allocate through the allocator's own malloc.  Each installed
allocator is preloaded behind the collector (`LD_PRELOAD=ALLOC heapscope
run`: the collector comes first), and the program's own allocation sites
must show the same counts, bytes and frees as under glibc, with no
unknown free; the profile names the allocator that served malloc.
Allocators that are not installed are reported and skipped.
"""
import hstest

SITES = [  # (function, allocations, bytes, frees, leaked bytes): hs_cxx.cpp
    ("hsprog::make_nodes", 10, 400, 10, 0),
    ("hsprog::make_arrays", 2, 268, 2, 0),
    ("hsprog::grow_vector", 8, 1020, 8, 0),
    ("hsprog::leak_node", 1, 40, 0, 40),
]


def main(t):
    ran = 0
    for name, lib in hstest.installed_allocators():
        ran += 1
        r = t.run("hs_cxx", out="cxx-%s.hsp" % name, env={"LD_PRELOAD": lib})
        t.eq("%s: program stdout" % name, b"cxx done\n", r.stdout)
        p = t.report(r.out)
        for fn, allocs, nbytes, frees, leaked in SITES:
            stacks = t.check_site(p, fn, allocations=allocs, bytes_allocated=nbytes,
                                  frees=frees, bytes_freed=nbytes - leaked, leaked_bytes=leaked)
            if fn != "hsprog::grow_vector":  # there std::allocator's inlined frames come first
                t.true("%s: %s is frame 0 of its stacks" % (name, fn),
                       all(s["frames"][0]["function"].startswith(fn) for s in stacks),
                       str([s["frames"][0] for s in stacks]))
        t.check_summary(p, unknown_frees=0)
        t.check_consistent(p)
    t.true("at least one allocator besides glibc was tried", ran > 0)


if __name__ == "__main__":
    hstest.main(main)
