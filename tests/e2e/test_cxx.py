"""e2e_cxx: C++ new/delete, new[]/delete[], std::vector growth (hs_cxx.cpp).

Valgrind: total heap usage 22 allocs, 21 frees, 74,432 bytes; in use at exit
40 bytes in 1 block.  22 = libstdc++'s 72,704-byte emergency pool (allocated
before main) + 10 Node (400) + Tracked[10] with its 8-byte cookie (168) +
int[25] (100) + 8 vector buffers (4 * (1 + 2 + ... + 128) = 1,020) + the
leaked Node (40).  Valgrind frees the emergency pool at exit through
libc_freeres; a normal exit does not, so heapscope sees 20 frees and 72,744
bytes in 2 blocks live at exit.
"""
import hstest

EXPECT = dict(allocations=22, frees=20, bytes_allocated=74432,
              bytes_freed=1688, leaked_bytes=72744, leaked_allocations=2)
# Valgrind's libc_freeres frees the emergency pool: one free more.
VALGRIND_EXTRA = dict(allocs=0, frees=1, bytes=0)


def main(t):
    r = t.run("hs_cxx", out="cxx.hsp")
    t.eq("program stdout", b"cxx done\n", r.stdout)
    p = t.report(r.out)
    # temporaries: delete_nodes deletes the last Node made first, make_arrays
    # frees int[25] (its last allocation) right after Tracked[10], and the
    # vector's last buffer is freed at destruction; blocks replaced by vector
    # growth are freed after the new buffer is allocated: not temporary.
    nodes = t.check_site(p, "hsprog::make_nodes", n_stacks=1, allocations=10,
                         bytes_allocated=400, frees=10, bytes_freed=400, leaked_bytes=0,
                         temporary_allocations=1)[0]
    t.check_sizes(p, nodes, [(40, 40, 10, 400)])
    # demangled, with the parameter list; heapscope interposes operator new
    # itself (col_hooks_cxx.c), so frame 0 is the code that said `new`
    f = p.frame_of(nodes, "hsprog::make_nodes")
    t.eq("demangled name", "hsprog::make_nodes(int)", f.get("function"))
    t.eq("make_nodes is frame 0 (no operator new frame)", 0, nodes["frames"].index(f))
    arrays = t.check_site(p, "hsprog::make_arrays", n_stacks=2, allocations=2,
                          bytes_allocated=268, frees=2, bytes_freed=268,
                          temporary_allocations=1)
    t.eq("new[] sizes (Tracked[10] with cookie, int[25])", [(100, 100, 1, 100), (168, 168, 1, 168)],
         sorted((int(e["size_lo"]), int(e["size_hi"]), int(e["allocations"]), int(e["bytes"]))
                for s in arrays for e in s["sizes"]))
    vec = t.check_site(p, "hsprog::grow_vector", n_stacks=1, allocations=8,
                       bytes_allocated=1020, frees=8, bytes_freed=1020, leaked_bytes=0,
                       temporary_allocations=1)[0]
    t.check_sizes(p, vec, [(4 << i, 4 << i, 1, 4 << i) for i in range(8)])
    t.check_site(p, "hsprog::leak_node", allocations=1, bytes_allocated=40, frees=0,
                 leaked_bytes=40, leaked_allocations=1)
    pool = [s for s in p.stacks if int(s["bytes_allocated"]) == 72704]
    t.eq("one stack with libstdc++'s 72704-byte emergency pool", 1, len(pool))
    t.check_summary(p, final=True, unknown_frees=0, temporary_allocations=3, **EXPECT)
    t.check_consistent(p)


if __name__ == "__main__":
    hstest.main(main)
