"""e2e_rel_gcc: gcc compiling a real source file (the profile reader,
src/format/pf_reader.c) under heapscope.  gcc forks and execs cc1 and as;
each writes its own profile FILE.<pid>.  The object file and the exit
status are the same as without heapscope; every profile reads back
complete; cc1's has more than 10,000 allocations.
"""
import os
import shutil

import hstest
import rltest

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def main(t):
    gcc = shutil.which("gcc")
    if not gcc:
        raise hstest.HsError("gcc is not installed")
    src = os.path.join(SRC, "src", "format", "pf_reader.c")
    argv = [gcc, "-O2", "-g0", "-I" + os.path.join(SRC, "src"),
            "-I" + os.path.join(SRC, "include"), "-c", src, "-o", "r.o"]
    r = rltest.run_both(t, argv, "gcc.hsp", outputs=["r.o"])
    t.eq("gcc exit status", 0, r.rc)
    rltest.check_profile(t, r.out, 100)
    kids = rltest.children(r.out)
    progs = {}
    for k in kids:
        p = rltest.check_profile(t, k, 0)
        progs[os.path.basename(p.summary.get("program") or "")] = p
    t.true("a profile from cc1 (children: %s)" % sorted(progs), "cc1" in progs)
    t.true("a profile from as (children: %s)" % sorted(progs), "as" in progs)
    if "cc1" in progs:
        t.true("cc1: more than 10,000 allocations",
               int(progs["cc1"].summary["allocations"]) > 10000)


if __name__ == "__main__":
    hstest.main(main)
