"""e2e_coroutine: allocations on a coroutine's stack, one of them from a
function whose saved frame pointer leads to a PROT_NONE page
(tests/progs/hs_coroutine.c), in each unwinding mode.  The program must run
to its end with exact counts; the frame-pointer walks of the coroutine's
stack read its frames without faulting, and the stack with the sound frame
chain is found whole.

Valgrind 3.19 memcheck on hs_coroutine: total heap usage 201 allocs, 201
frees, 6,456 bytes allocated.
"""
import hstest


def main(t):
    for mode in ("fp", "dwarf"):
        r = t.run("hs_coroutine", out="coroutine-%s.hsp" % mode, opts=["--unwind", mode])
        t.eq(mode + ": program stdout", b"coroutine done\n", r.stdout)
        p = t.report(r.out)
        t.check_summary(p, allocations=201, frees=201, bytes_allocated=6456, bytes_freed=6456,
                        leaked_bytes=0, unknown_frees=0, lost_allocations=0, final=True)
        site = p.stacks_with("coro_site")
        t.eq(mode + ": coro_site's allocations", [100], [int(s["allocations"]) for s in site])
        t.true(mode + ": coro_site is called by coro_body",
               bool(site) and p.frame_of(site[0], "coro_body") is not None,
               site and p.describe(site[0]))
        main_st = p.stacks_with("main_site")
        t.eq(mode + ": main_site's allocations", [1], [int(s["allocations"]) for s in main_st])
        t.true(mode + ": main_site is called by main",
               bool(main_st) and p.frame_of(main_st[0], "main") is not None,
               main_st and p.describe(main_st[0]))


if __name__ == "__main__":
    hstest.main(main)
