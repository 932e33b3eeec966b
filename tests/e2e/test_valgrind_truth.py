"""e2e_valgrind_truth: the ground truth the other e2e tests assert, checked
against Valgrind memcheck on the same programs, without heapscope.

For each program, Valgrind's `total heap usage` and `in use at exit` must
equal the EXPECT table of its test (test_*.py), plus the documented
differences (VALGRIND_EXTRA: Valgrind counts a failed realloc; its exit-time
libc_freeres frees libstdc++'s emergency pool).  If a compiler or libc
change alters a program's allocations, this test says so before the
heapscope tests are blamed.  Skipped (exit 77) without valgrind.
"""
import sys

import hstest
import test_cxx
import test_family
import test_fork
import test_leak
import test_peak
import test_realloc
import test_single
import test_temporary


def expect_vg(expect, extra=None):
    """Valgrind's figures for a test's EXPECT dict."""
    extra = extra or {}
    return {"allocs": expect["allocations"] + extra.get("allocs", 0),
            "frees": expect["frees"] + extra.get("frees", 0),
            "bytes": expect["bytes_allocated"] + extra.get("bytes", 0),
            "live_bytes": expect["leaked_bytes"],
            "live_blocks": expect["leaked_allocations"] - extra.get("frees", 0)
            + extra.get("allocs", 0)}


def main(t):
    if not t.args.valgrind:
        print("valgrind not installed: skipped")
        sys.exit(77)
    cxx_vg = expect_vg(test_cxx.EXPECT, test_cxx.VALGRIND_EXTRA)
    cxx_vg["live_bytes"] -= 72704  # the emergency pool, freed by libc_freeres
    cases = [
        ("hs_single", [], expect_vg(test_single.EXPECT)),
        ("hs_leak", [], expect_vg(test_leak.EXPECT)),
        ("hs_realloc", [], expect_vg(test_realloc.EXPECT, test_realloc.VALGRIND_EXTRA)),
        ("hs_family", ["no-pvalloc"], expect_vg(test_family.EXPECT_NO_PVALLOC)),
        ("hs_temporary", [], expect_vg(test_temporary.EXPECT)),
        ("hs_peak", [], expect_vg(test_peak.EXPECT)),
        ("hs_cxx", [], cxx_vg),
    ]
    for name, args, want in cases:
        vg = hstest.valgrind_heap_usage(t.args.valgrind, [t.prog(name)] + args)
        t.eq(name + ": exit status under valgrind", 0, vg["rc"])
        got = {k: vg[k] for k in want}
        t.eq(name + ": valgrind heap summary", want, got)

    # fork: the parent and each child (a child counts what it inherited)
    vg = hstest.valgrind_heap_usage(t.args.valgrind, [t.prog("hs_fork")])
    t.eq("hs_fork parent", expect_vg(test_fork.EXPECT_PARENT),
         {k: vg[k] for k in ("allocs", "frees", "bytes", "live_bytes", "live_blocks")})
    t.eq("hs_fork children", sorted([expect_vg(test_fork.EXPECT_CHILD1),
                                     expect_vg(test_fork.EXPECT_CHILD2)],
                                    key=lambda d: d["allocs"]),
         sorted(vg["children"].values(), key=lambda d: d["allocs"]))

    # threads: 16,000 worker blocks and 16 DTVs from pthread_create
    vg = hstest.valgrind_heap_usage(t.args.valgrind, [t.prog("hs_threads")])
    t.eq("hs_threads allocs", 16016, vg["allocs"])

    # echo: one 64 KiB buffer
    vg = hstest.valgrind_heap_usage(t.args.valgrind, [t.prog("hs_echo")], stdin=b"abc")
    t.eq("hs_echo", (3, b"abc", 1, 1, 65536),
         (vg["rc"], vg["stdout"], vg["allocs"], vg["frees"], vg["bytes"]))


if __name__ == "__main__":
    hstest.main(main)
