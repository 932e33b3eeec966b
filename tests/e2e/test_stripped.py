"""e2e_stripped: hs_single stripped of .symtab and debug info.

The counts are hs_single's exactly (see test_single.py); the frames in the
stripped program have no name from its symbol table: `??`, empty, or a
dynamic symbol, never alloc_site_a/alloc_site_b, and they still name the
stripped module (so an offset can be read off `address`).
"""
import os

import hstest
import test_single


def main(t):
    prog = t.prog("hs_single_stripped")
    r = t.run(prog, out="stripped.hsp")
    t.eq("program stdout", b"single done\n", r.stdout)
    p = t.report(r.out)
    test_single.check_counts(t, p, symbols=False)
    by_size = {}
    for st in p.alloc_stacks:
        sizes = sorted(int(e["size_lo"]) for e in st.get("sizes", []))
        by_size[tuple(sizes)] = st
    a = by_size.get(tuple(range(16, 116)))
    b = by_size.get((1000,))
    if a is None or b is None:
        raise hstest.HsError("stacks with sizes 16..115 and 1000 not found: %s"
                             % [p.describe(s) for s in p.stacks])
    for label, st, n, nbytes, nfree in (("site a", a, 100, 6550, 100),
                                        ("site b", b, 50, 50000, 20)):
        t.eq(label + " allocations", n, st["allocations"])
        t.eq(label + " bytes_allocated", nbytes, st["bytes_allocated"])
        t.eq(label + " frees", nfree, st["frees"])
        f0 = st["frames"][0]
        t.eq(label + ": frame 0 module is the stripped program",
             os.path.realpath(prog), os.path.realpath(f0.get("module") or ""))
        t.true(label + ": frame 0 has an address", int(f0.get("address") or "0", 0) != 0)
        names = [f.get("function") or "" for f in st["frames"]]
        t.true(label + ": no static function names from a stripped binary",
               "alloc_site_a" not in names and "alloc_site_b" not in names, str(names))
    t.true("the two sites' frame 0 addresses differ",
           a["frames"][0].get("address") != b["frames"][0].get("address"))
    t.report_text(r.out)


if __name__ == "__main__":
    hstest.main(main)
