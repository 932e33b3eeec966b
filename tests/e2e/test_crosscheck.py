"""e2e_crosscheck: heapscope's totals equal Valgrind's `total heap usage` on
the same deterministic program (hs_crosscheck.c), and the program's own
count of its calls.

hs_crosscheck does 20,000 random (fixed seed) malloc / calloc /
realloc(NULL) / posix_memalign / free / realloc steps and prints its own
tally `allocs=A frees=F bytes=B live_blocks=L live_bytes=M` (realloc = one
free + one allocation, as both tools count it).  Measured: A 13,363,
F 13,275, B 35,887,686, 88 blocks / 235,568 bytes live at exit; Valgrind
3.19 reports exactly these.  No systematic difference: the program makes no
failed calls and no realloc(p, 0), where the tools differ.
Skipped (exit 77) when valgrind is not installed.
"""
import re
import sys

import hstest

MEASURED = dict(allocs=13363, frees=13275, bytes=35887686, live_blocks=88,
                live_bytes=235568)


def own_tally(stdout):
    m = re.match(rb"allocs=(\d+) frees=(\d+) bytes=(\d+) live_blocks=(\d+) "
                 rb"live_bytes=(\d+)\n$", stdout)
    if not m:
        raise hstest.HsError("unexpected stdout %r" % stdout)
    keys = ("allocs", "frees", "bytes", "live_blocks", "live_bytes")
    return dict(zip(keys, (int(x) for x in m.groups())))


def main(t):
    if not t.args.valgrind:
        print("valgrind not installed: skipped")
        sys.exit(77)
    prog = t.prog("hs_crosscheck")
    r = t.run("hs_crosscheck", out="cross.hsp")
    own = own_tally(r.stdout)
    t.eq("the program's own tally (fixed seed)", MEASURED, own)
    vg = hstest.valgrind_heap_usage(t.args.valgrind, [prog])
    t.eq("valgrind run's exit status", 0, vg["rc"])
    t.eq("valgrind: total heap usage allocs", own["allocs"], vg["allocs"])
    t.eq("valgrind: total heap usage frees", own["frees"], vg["frees"])
    t.eq("valgrind: total heap usage bytes", own["bytes"], vg["bytes"])
    t.eq("valgrind: in use at exit bytes", own["live_bytes"], vg["live_bytes"])
    t.eq("valgrind: in use at exit blocks", own["live_blocks"], vg["live_blocks"])
    p = t.report(r.out)
    t.check_summary(p, final=True, allocations=vg["allocs"], frees=vg["frees"],
                    bytes_allocated=vg["bytes"], leaked_bytes=vg["live_bytes"],
                    leaked_allocations=vg["live_blocks"])
    t.check_site(p, "mixed_step", n_stacks=None, allocations=vg["allocs"])
    t.check_consistent(p)


if __name__ == "__main__":
    hstest.main(main)
