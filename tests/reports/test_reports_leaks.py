"""e2e_reports_leaks: `heapscope report --leaks` suppressions.  The
built-in rules hide what the C and C++ runtimes keep until exit (a clean
C++ program with iostream and an exception reports no leaks); files in
LeakSanitizer's format remove exactly the stacks they match (function,
source file or module; `*`, `^`, `$`; comments); bad files are errors."""
import os

import hstest
import rptest


def main(t):
    path = rptest.run_views(t)
    r = t.run("rp_clean", out="clean.hsp")
    t.eq("rp_clean stdout", b"caught expected\n", r.stdout)
    clean = r.out

    # a clean C++ program: no leaks with the default suppressions ...
    d = rptest.view(t, clean, "--leaks")
    t.eq("clean C++ program: leaks", (0, 0), (d["total"], d["rows"]))
    t.true("clean C++ program: runtime blocks suppressed", d["suppressed"]["stacks"] >= 1 and
           d["suppressed"]["bytes"] > 0, str(d["suppressed"]))
    txt = rptest.text(t, clean, "--leaks")
    t.true("clean text", "no stacks: no leaks" in txt and "(built-in)" in txt, txt)
    # ... and the runtime's blocks without them
    d2 = rptest.view(t, clean, "--leaks", "--no-default-suppressions")
    t.eq("--no-default-suppressions shows them", d["suppressed"]["bytes"], d2["total"])
    t.eq("--no-default-suppressions: no rules", [], d2["suppressed"]["rules"])
    # unknown functions print as ?? with module+offset (libstdc++'s pool
    # constructor has no symbol unless libstdc++'s debug info is installed)
    unknown = [f for s in d2["stacks"] for f in s["frames"] if f["function"] == "??"]
    if unknown:
        f = unknown[0]
        base = os.path.basename(f["module"])
        txt = rptest.text(t, clean, "--leaks", "--no-default-suppressions")
        t.true("?? frame shows module+offset", "??  %s+0x%x" % (base, f["offset"]) in txt, txt)
        t.eq("offset = address - load bias is in the module",
             True, 0 < f["offset"] < int(f["address"], 16))

    # a file with a function rule removes exactly that stack
    f = t.write("big.supp", "# the known big block\n\nleak:leak_big\n")
    d = rptest.view(t, path, "--leaks", "--suppressions", f)
    t.eq("leak:leak_big rows", [("leak_small", 100, 1)] * 3, rptest.rows_by_fn0(d))
    t.eq("leak:leak_big suppressed", (1, 1000, 1), (d["suppressed"]["stacks"],
                                                    d["suppressed"]["bytes"],
                                                    d["suppressed"]["blocks"]))
    rule = [x for x in d["suppressed"]["rules"] if not x["builtin"]]
    t.eq("the file's rule and its hits", [("leak_big", 1)],
         [(x["pattern"], x["stacks"]) for x in rule])
    txt = rptest.text(t, path, "--leaks", "--suppressions", f)
    t.true("suppression text", "suppressed 1000 B in 1 block, 1 stack (" in txt and
           "1 x leak:leak_big" in txt and "leaked (live at exit) 300 B in 3 blocks" in txt, txt)
    # wildcards and anchors as LSan
    for pat, left in (("^leak_sm*$", [("leak_big", 1000, 1)]),
                      ("leak_*ll", [("leak_big", 1000, 1)]),
                      ("^eak_big", [("leak_big", 1000, 1)] + [("leak_small", 100, 1)] * 3),
                      ("rp_views.c", []),          # the source file of every leak
                      ("rp_views", [])):           # the module
        d = rptest.view(t, path, "--leaks", "--suppressions",
                        t.write("p.supp", "leak:%s\n" % pat))
        t.eq("leak:%s leaves" % pat, left, rptest.rows_by_fn0(d))
    # filters compose with suppressions
    d = rptest.view(t, path, "--leaks", "--suppressions", f, "--merge", "function")
    t.eq("suppression + merge", [("leak_small", 300, 3)], rptest.rows_by_fn0(d))

    # bad suppression files
    bad = t.write("bad.supp", "leak:ok\nrace:foo\n")
    rc, err = rptest.bad(t, ["--leaks", "--suppressions", bad, path])
    t.eq("bad rule exit", 2, rc)
    t.true("bad rule message names file:line", "bad.supp:2: expected 'leak:PATTERN'" in err, err)
    rc, err = rptest.bad(t, ["--leaks", "--suppressions", os.path.join(t.dir, "none"), path])
    t.eq("missing file exit", 2, rc)
    t.true("missing file message", "No such file" in err, err)


if __name__ == "__main__":
    hstest.main(main)
