"""e2e_unwind: every unwinder and the depth cap give the same exact counts
(hs_single.c; numbers in test_single.py).

--unwind fp, dwarf and libunwind: hs_single's two stacks with their exact
counts, frame 0 in alloc_site_a / alloc_site_b, main among the callers.
--depth 1: still two stacks (frame 0 differs) with one frame each (plus
inline frames at most).  HEAPSCOPE_UNWIND=fp through the environment with
LD_PRELOAD directly: the same counts.
"""
import hstest
import test_single


def real_frames(stack):
    return [f for f in stack["frames"] if not f.get("inlined")]


def main(t):
    for mode in ("fp", "dwarf", "libunwind"):
        r = t.run("hs_single", out="unwind-%s.hsp" % mode, opts=["--unwind", mode])
        p = t.report(r.out)
        test_single.check_counts(t, p)
        for name in ("alloc_site_a", "alloc_site_b"):
            st = p.stacks_with(name)[0]
            t.eq("%s: %s is frame 0" % (mode, name), name, st["frames"][0].get("function"))
            t.true("%s: main calls %s" % (mode, name), p.frame_of(st, "main") is not None,
                   p.describe(st))

    r = t.run("hs_single", out="depth1.hsp", opts=["--depth", "1"])
    p = t.report(r.out)
    test_single.check_counts(t, p)
    t.eq("--depth 1: frames per stack", [1, 1], sorted(len(real_frames(s)) for s in p.alloc_stacks))

    out = t.dir + "/env-fp.hsp"
    t.run_preloaded("hs_single", env={"HEAPSCOPE_UNWIND": "fp", "HEAPSCOPE_OUTPUT": out,
                                      "HEAPSCOPE_QUIET": "1"})
    test_single.check_counts(t, t.report(out))


if __name__ == "__main__":
    hstest.main(main)
