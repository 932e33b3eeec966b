#!/usr/bin/env python3
"""e2e_jemalloc: jemalloc's own API (mallocx, rallocx, xallocx, dallocx,
sdallocx) is recorded exactly by libheapscope-jemalloc.so, which `heapscope
run` preloads after libheapscope.so when the program is linked with
jemalloc (tests/progs/hs_jemalloc.c, whose header lists its allocations),
when LD_PRELOAD names jemalloc, or with --jemalloc.

Without the extension the same program shows what it fixes: the collector
says in the profile that those entry points were not intercepted, and the
four malloc'd blocks the program frees with sdallocx stay live."""
import os
import shutil

import hstest

JEMALLOC = "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"
EXT = "libheapscope-jemalloc.so"
NOT_HOOKED = "jemalloc's own mallocx"

SITES = [  # (function, allocations, bytes, frees, leaked bytes)
    ("mallocx_site", 5, 500, 5, 0),
    ("aligned_site", 3, 600, 3, 0),
    ("malloc_site", 4, 192, 4, 0),
    ("grow_start", 1, 16, 1, 0),
    ("grow_site", 6, 2016, 6, 0),
    ("fit_start", 1, 65536, 1, 0),
    ("fit_site", 2, 52768, 2, 0),
    ("noop_start", 1, 4000, 1, 0),
    ("fail_start", 1, 64, 1, 0),
    ("leak_site", 1, 300, 0, 300),
]


def module_names(p):
    return [os.path.basename(m["path"]) for m in p.data["modules"]]


def warned(p):
    return [w for w in p.summary["warnings"] if NOT_HOOKED in w]


def check_program(t, p, what):
    for fn, allocs, nbytes, frees, leaked in SITES:
        stacks = t.check_site(p, fn, allocations=allocs, bytes_allocated=nbytes,
                              frees=frees, bytes_freed=nbytes - leaked, leaked_bytes=leaked)
        t.eq("%s: %s is frame 0" % (what, fn), fn, stacks[0]["frames"][0].get("function"))
    t.check_no_site(p, "fail_site")  # the rallocx that failed
    t.check_no_site(p, "noop_site")  # xallocx that resized nothing
    t.check_summary(p, unknown_frees=0, shadow_overwrites=0, lost_allocations=0)
    t.true(what + ": " + EXT + " loaded", EXT in module_names(p), str(module_names(p)))
    t.eq(what + ": no warning that jemalloc's API was missed", [], warned(p))
    t.check_consistent(p)


def main(t):
    if not os.path.exists(JEMALLOC):
        raise hstest.HsError(JEMALLOC + " is not installed (make deps)")
    # found by the program's DT_NEEDED entry, in both unwinding modes
    for mode in ("dwarf", "fp"):
        r = t.run("hs_jemalloc", out="je-%s.hsp" % mode, opts=["--unwind", mode])
        t.eq(mode + ": program stdout", b"jemalloc done\n", r.stdout)
        check_program(t, t.report(r.out), mode)

    # threads: every call of the extension's hooks counted, none lost
    r = t.run("hs_jemalloc", ["threads"], out="je-threads.hsp")
    p = t.report(r.out)
    t.check_site(p, "thread_site", n_stacks=1, allocations=80000, bytes_allocated=2560000,
                 frees=80000, bytes_freed=2560000, leaked_bytes=0)
    t.check_site(p, "resize_site", n_stacks=1, allocations=80000, bytes_allocated=5120000,
                 frees=80000, bytes_freed=5120000, leaked_bytes=0)
    t.check_summary(p, unknown_frees=0, shadow_overwrites=0, threads=5)
    t.check_consistent(p)

    # without the extension: said in the profile, and the sdallocx'd
    # malloc blocks stay live (what the extension is for)
    r = t.run_preloaded("hs_jemalloc", env={"HEAPSCOPE_OUTPUT": os.path.join(t.dir, "je-no.hsp")})
    p = t.report(os.path.join(t.dir, "je-no.hsp"))
    t.eq("without the extension: one warning", 1, len(warned(p)))
    t.check_site(p, "malloc_site", n_stacks=1, allocations=4, frees=0, leaked_bytes=192)
    t.check_no_site(p, "mallocx_site")

    # a glibc program: LD_PRELOAD naming jemalloc brings the extension in
    # (jemalloc loads libstdc++, whose emergency pool is one more block:
    # the sites are checked, not the summary) ...
    r = t.run("hs_single", out="single-je.hsp", env={"LD_PRELOAD": JEMALLOC})
    p = t.report(r.out)
    t.check_site(p, "alloc_site_a", n_stacks=1, allocations=100, frees=100, bytes_allocated=6550)
    t.check_site(p, "alloc_site_b", n_stacks=1, allocations=50, frees=20, bytes_allocated=50000)
    t.check_summary(p, unknown_frees=0)
    t.true("LD_PRELOAD=jemalloc: " + EXT + " loaded", EXT in module_names(p), str(module_names(p)))
    t.eq("LD_PRELOAD=jemalloc: no warning", [], warned(p))
    # ... and --jemalloc without jemalloc changes not one number
    import test_single
    r = t.run("hs_single", out="single-opt.hsp", opts=["--jemalloc"])
    p = t.report(r.out)
    test_single.check_counts(t, p)
    t.true("--jemalloc under glibc: " + EXT + " loaded", EXT in module_names(p))
    t.eq("--jemalloc under glibc: no warning", [], warned(p))
    # a glibc program that uses jemalloc's API where it finds it: with
    # --jemalloc the extension serves it from the C library, exactly
    r = t.run("hs_jemalloc_weak", out="weak.hsp", opts=["--jemalloc"])
    t.eq("weak: program stdout", b"jemalloc API used\n", r.stdout)
    p = t.report(r.out)
    t.check_site(p, "weak_alloc", allocations=2, bytes_allocated=250, frees=2,
                 bytes_freed=250)
    t.check_site(p, "weak_grow", n_stacks=1, allocations=1, bytes_allocated=400, frees=1)
    t.check_summary(p, allocations=3, bytes_allocated=650, frees=3, unknown_frees=0)
    r = t.run("hs_jemalloc_weak", out="weak-plain.hsp")
    t.eq("weak, no extension: program stdout", b"no jemalloc API\n", r.stdout)
    # ... and neither for a glibc program by default
    r = t.run("hs_single", out="single-plain.hsp")
    t.true("glibc program: " + EXT + " not loaded",
           EXT not in module_names(t.report(r.out)))

    # --jemalloc where the extension is not beside the library
    lone = os.path.join(t.dir, "lone")
    os.mkdir(lone)
    shutil.copy(t.lib, lone)
    r = t.run("hs_single", out=None, opts=["--jemalloc"], expect_rc=2,
              env={"HEAPSCOPE_LIB": os.path.join(lone, "libheapscope.so")})
    t.true("--jemalloc without the extension: says so", b"--jemalloc: cannot find" in r.stderr,
           r.stderr.decode("utf-8", "replace"))


if __name__ == "__main__":
    hstest.main(main)
