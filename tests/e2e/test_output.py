"""e2e_output: where profiles go, and HEAPSCOPE_DISABLE (hs_single.c).

- `heapscope run` without -o: heapscope.hs_single.<pid>.hsp in the current
  directory, and nothing else.
- LD_PRELOAD with HEAPSCOPE_OUTPUT=DIR/x.%e.%p.hsp: x.hs_single.<pid>.hsp,
  with hs_single's exact counts.
- HEAPSCOPE_DISABLE=1: the program runs as usual and writes no profile.
"""
import os
import re

import hstest
import test_single


def main(t):
    cwd = os.path.join(t.dir, "cwd")
    os.mkdir(cwd)
    r = t.run("hs_single", out=None, cwd=cwd)
    t.eq("program stdout", b"single done\n", r.stdout)
    names = os.listdir(cwd)
    t.true("one default-named profile in the current directory",
           len(names) == 1 and re.match(r"heapscope\.hs_single\.\d+\.hsp$", names[0]),
           str(names))
    if names:
        test_single.check_counts(t, t.report(os.path.join(cwd, names[0])))

    pdir = os.path.join(t.dir, "pattern")
    os.mkdir(pdir)
    t.run_preloaded("hs_single", env={"HEAPSCOPE_OUTPUT": pdir + "/x.%e.%p.hsp",
                                      "HEAPSCOPE_QUIET": "1"})
    names = os.listdir(pdir)
    t.true("HEAPSCOPE_OUTPUT pattern expanded", len(names) == 1 and
           re.match(r"x\.hs_single\.\d+\.hsp$", names[0]), str(names))
    if names:
        p = t.report(os.path.join(pdir, names[0]))
        test_single.check_counts(t, p)
        t.eq("pid in the file name is summary.pid",
             int(names[0].split(".")[2]), p.summary.get("pid"))

    ddir = os.path.join(t.dir, "disabled")
    os.mkdir(ddir)
    r = t.run_preloaded("hs_single", cwd=ddir,
                        env={"HEAPSCOPE_DISABLE": "1",
                             "HEAPSCOPE_OUTPUT": ddir + "/d.%p.hsp"})
    t.eq("disabled: program stdout", b"single done\n", r.stdout)
    t.eq("disabled: files written", [], os.listdir(ddir))


if __name__ == "__main__":
    hstest.main(main)
