"""e2e_spacing: blocks 8 bytes apart keep their own shadow values
(tests/progs/hs_spacing.c).

Under allocators other than glibc the shadow map's granule is 16 bytes,
and a block 8 bytes into a granule (the 8-byte blocks of jemalloc,
tcmalloc and mimalloc) has its value in the leaf's second half
(col_shadow_leaf).  If the
two blocks of a granule shared a value, the second allocation would
overwrite the first's (a shadow overwrite), the first's free would find
the other's site or none (an unknown free), and the counts below would
not come out.  hs_spacing keeps 7,680 blocks of 8-64 bytes live at once
and frees them in an order unlike their allocation's; under glibc, then
under each installed allocator preloaded behind the collector, in both
unwinding modes, every count, byte and leak must be exact, with no
shadow overwrite and no unknown free.  Under the three allocators the
program must also see blocks 8 bytes apart, or the test would not test
the second half: it says how many it saw.  The profile names the
library whose malloc the collector called (its granule follows from it):
glibc's libc.so.6, or the preloaded allocator.
"""
import json
import os
import re
import subprocess

import hstest

SPACED = ("jemalloc", "tcmalloc", "mimalloc")  # 8-byte blocks 8 bytes apart

SITES = [  # (function, allocations, bytes, frees, leaked bytes): hs_spacing.c
    ("tiny_site", 4096, 32768, 3996, 800),
    ("small_site", 3584, 143360, 3514, 2800),
]


def counts(stdout):
    """The program's own figures: {"pairs 8 apart": N, ...}."""
    return {k: int(v) for k, v in re.findall(rb"^([a-z0-9 ]+): (\d+)$", stdout, re.M)}


def main(t):
    ran = []
    for name, lib in [("glibc", None)] + hstest.installed_allocators():
        env = {"LD_PRELOAD": lib} if lib else None
        ran.append(name)
        for mode in ("fp", "dwarf"):
            what = "%s, %s" % (name, mode)
            r = t.run("hs_spacing", out="spacing-%s-%s.hsp" % (name, mode),
                      opts=("--unwind", mode), env=env)
            seen = counts(r.stdout)
            print("%s: %s" % (what, seen))
            t.eq("%s: the program's figures" % what,
                 {b"pairs 8 apart", b"odd tiny", b"odd small"}, set(seen))
            if name in SPACED:
                t.true("%s: blocks 8 bytes apart were live together" % what,
                       seen.get(b"pairs 8 apart", 0) >= 1000 and seen.get(b"odd tiny", 0) >= 1000,
                       str(seen))
            p = t.report(r.out)
            for fn, allocs, nbytes, frees, leaked in SITES:
                t.check_site(p, fn, allocations=allocs, bytes_allocated=nbytes, frees=frees,
                             bytes_freed=nbytes - leaked, leaked_bytes=leaked)
            t.check_summary(p, unknown_frees=0, shadow_overwrites=0)
            t.check_consistent(p)
            cp = subprocess.run([t.heapscope, "export", "--format", "json", r.out],
                                stdout=subprocess.PIPE, check=True)
            allocator = json.loads(cp.stdout)["info"]["allocator"]
            if lib:
                t.eq("%s: the allocator named" % what, os.path.realpath(lib),
                     os.path.realpath(allocator))
            else:
                t.true("%s: glibc named as the allocator" % what,
                       os.path.basename(allocator).startswith("libc.so."), allocator)
    t.true("an allocator with 8-byte spacing was tried", any(n in SPACED for n in ran), str(ran))


if __name__ == "__main__":
    hstest.main(main)
