"""e2e_unwind: every unwinder and the depth cap give the same exact counts
(hs_single.c; numbers in test_single.py).

--unwind fp, dwarf and libunwind: hs_single's two stacks with their exact
counts, frame 0 in alloc_site_a / alloc_site_b, main among the callers.
--depth 1: still two stacks (frame 0 differs) with one frame each (plus
inline frames at most).  HEAPSCOPE_UNWIND=fp through the environment with
LD_PRELOAD directly: the same counts.

libheapscope-fp.so, built without libunwind: `heapscope run --unwind fp`
picks it when HEAPSCOPE_LIB does not name a library, and the program then
maps neither libunwind nor liblzma, with the same counts; preloaded with
HEAPSCOPE_UNWIND=dwarf it unwinds with frame pointers and says so.

libunwind is set up at its first use (col_unwind.c): hs_fds, whose stacks
the DWARF unwinder answers, finds no pipe among its descriptors in `dwarf`
mode, and in `libunwind` mode the two ends of the pipe libunwind's memory
validation opens (so the test sees what it looks for), above 255, out of
the program's way (col_unwind.c's pipe2); both with hs_fds's 10
allocations.
"""
import os

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

    fp_lib = os.path.join(os.path.dirname(t.lib), "libheapscope-fp.so")
    # HEAPSCOPE_LIB empty: `heapscope run` finds the libraries beside itself
    r = t.run("hs_single", out="fp-lib.hsp", opts=["--unwind", "fp"], env={"HEAPSCOPE_LIB": ""})
    p = t.report(r.out)
    test_single.check_counts(t, p)
    loaded = [os.path.basename(m["path"]) for m in p.data.get("modules", [])]
    t.eq("--unwind fp: the library preloaded", ["libheapscope-fp.so"],
         [m for m in loaded if m.startswith("libheapscope")])
    t.eq("--unwind fp: neither libunwind nor liblzma loaded", [],
         [m for m in loaded if m.startswith(("libunwind", "liblzma"))])
    t.eq("--unwind fp: unwinder", "frame pointers", p.summary["unwinder"])
    r = t.run("hs_single", out="dwarf-lib.hsp", env={"HEAPSCOPE_LIB": ""})
    p = t.report(r.out)
    loaded = [os.path.basename(m["path"]) for m in p.data.get("modules", [])]
    t.eq("default: the library preloaded", ["libheapscope.so"],
         [m for m in loaded if m.startswith("libheapscope")])
    out = t.dir + "/fp-lib-dwarf.hsp"
    t.run_preloaded("hs_single", lib=fp_lib,
                    env={"HEAPSCOPE_UNWIND": "dwarf", "HEAPSCOPE_OUTPUT": out, "HEAPSCOPE_QUIET": "1"})
    p = t.report(out)
    test_single.check_counts(t, p)
    t.eq("libheapscope-fp.so asked for dwarf: unwinder", "frame pointers", p.summary["unwinder"])
    t.eq("libheapscope-fp.so asked for dwarf: says so",
         ["collector: libheapscope-fp.so unwinds with frame pointers only: "
          "HEAPSCOPE_UNWIND=dwarf was not used"],
         [w for w in p.summary["warnings"] if "libheapscope-fp.so" in w])

    for mode, pipes in (("dwarf", 0), ("libunwind", 2)):
        r = t.run("hs_fds", out="fds-%s.hsp" % mode, opts=["--unwind", mode])
        t.eq("hs_fds --unwind %s: the program's pipes" % mode, "pipes=%d low=0" % pipes,
             r.text().strip())
        st = t.report(r.out).stacks_with("fds_site")
        t.eq("hs_fds --unwind %s: fds_site's allocations" % mode, [10], [int(s["allocations"]) for s in st])


if __name__ == "__main__":
    hstest.main(main)
