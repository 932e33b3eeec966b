#!/usr/bin/env python3
"""Allocations before main (a constructor), after main (an atexit handler
and a destructor), and across exec: the exec'd image writes its own profile
(NAME.<pid>) and the replaced image's profile ends with the exec."""
import os
import hstest


def site(t, p, label, name, allocs, nbytes, freed):
    st = p.stacks_with(name)
    t.eq(label + ": " + name + " allocations", allocs, sum(s["allocations"] for s in st))
    t.eq(label + ": " + name + " bytes", nbytes, sum(s["bytes_allocated"] for s in st))
    t.eq(label + ": " + name + " bytes freed", freed, sum(s["bytes_freed"] for s in st))


def main(t):
    r = t.run("hs_lifecycle", out="plain.hsp")
    p = t.report(r.out)
    t.true("plain: profile final", p.summary["final"])
    site(t, p, "plain", "ctor_site", 3, 333, 0)
    site(t, p, "plain", "main_site", 2, 444, 444)
    site(t, p, "plain", "atexit_site", 4, 1332, 0)
    site(t, p, "plain", "dtor_site", 5, 220, 220)

    r = t.run("hs_lifecycle", args=["exec"], out="exec.hsp")
    before = t.report(r.out)
    site(t, before, "before exec", "ctor_site", 3, 333, 0)
    site(t, before, "before exec", "main_site", 2, 444, 444)
    site(t, before, "before exec", "atexit_site", 0, 0, 0)
    site(t, before, "before exec", "exec_child_site", 0, 0, 0)
    others = [f for f in os.listdir(t.dir) if f.startswith("exec.hsp.") and not f.endswith(".tmp")]
    t.eq("exec'd image wrote one more profile", 1, len(others))
    if others:
        after = t.report(os.path.join(t.dir, others[0]))
        t.eq("exec'd image has the same pid", before.summary["pid"], after.summary["pid"])
        site(t, after, "after exec", "exec_child_site", 6, 3330, 0)
        site(t, after, "after exec", "ctor_site", 3, 333, 0)
        site(t, after, "after exec", "atexit_site", 4, 1332, 0)
        site(t, after, "after exec", "dtor_site", 5, 220, 220)
        site(t, after, "after exec", "main_site", 0, 0, 0)


if __name__ == "__main__":
    hstest.main(main)
