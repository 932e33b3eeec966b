#!/usr/bin/env python3
"""The unwinders against their references: with HEAPSCOPE_UNWIND_VERIFY=1
every stack heapscope's cached CFI unwinder produces is compared with
unw_backtrace's, and every stack of the fp unwinder (which reuses its
previous walk) with an uncached frame-pointer walk; and for every
allocation the recorder's cache of recent stacks would have answered, its
answer is compared with the walk's.  Programs with many different stacks
(python3 running a script, C++ with templates and exceptions, threads,
deep recursion where every stack is new, stacks cut by the depth cap) must
show not a single difference (threads that come and go on reused stacks
too); and a stack whose cache entry a dlopen made
stale must be cached again, and stacks too deep for a cache entry's own
checks must be kept and told apart by their outermost frames.  Both
unwinders' stacks taken from the recorder's guess of the next stack are
verified the same way, also where the guess is wrong only in where the
stack ends, or only in outer frames that lie where the guessed stack's
were.  In `dwarf` mode heapscope walks every stack of these programs
itself (libunwind walks none), but for hs_nocfi's 200 through a frame
without CFI whose rbp is not 0."""
import re
import hstest

SCRIPT = "import json, re, collections\n" \
         "d = [{'k': i, 'v': str(i) * 3, 'l': list(range(i % 7))} for i in range(5000)]\n" \
         "s = json.dumps(d); print(len(json.loads(s)), len(re.findall(r'[0-9]+', s)))\n" \
         "print(collections.Counter(len(x['l']) for x in d).most_common(2))\n"


def check(t, label, prog, args, minimum, env=None, opts=(), cached=1, fallbacks_expected=0):
    extra = {"HEAPSCOPE_UNWIND_VERIFY": "1"}
    extra.update(env or {})
    r = t.run(prog, args=args, out=label + ".hsp", env=extra, opts=opts, expect_rc=None)
    p = t.report(r.out)
    # the cache of recent stacks, asked in parallel to every walk
    cm = [w for w in p.summary["warnings"] if "cache of recent stacks verified" in w]
    t.eq(label + ": one cache verification message", 1, len(cm))
    if cm:
        m = re.search(r"(\d+) stacks, (\d+) differed", cm[0])
        t.true(label + ": cache message has counts", m is not None, cm[0])
        t.true(label + ": the cache answered at least %d times" % cached,
               m is not None and int(m.group(1)) >= cached, cm[0])
        t.eq(label + ": cache answers that differ from the walk", "0", m and m.group(2))
    msgs = [w for w in p.summary["warnings"] if "unwinder verified against" in w]
    t.eq(label + ": one verification message", 1, len(msgs))
    if not msgs:
        return
    m = re.search(r"(\d+) stacks, (\d+) differed", msgs[0])
    t.true(label + ": message has counts", m is not None, msgs[0])
    checked, differed = int(m.group(1)), int(m.group(2))
    t.true(label + ": at least %d stacks checked" % minimum, checked >= minimum, msgs[0])
    t.eq(label + ": stacks that differ from libunwind", 0, differed)
    diffs = [w for w in p.summary["warnings"] if "differs from" in w or "cache of recent stacks said" in w]
    t.eq(label + ": no difference reported", [], diffs)
    if "fell back to libunwind" in msgs[0]:
        t.eq(label + ": stacks walked by libunwind", fallbacks_expected, fallbacks(p))
    return p


def guessed(p):
    """How many stacks the fp verification message says were taken from
    the recorder's guess; -1 without the message."""
    g = [re.search(r"(\d+) were the guessed next stack", w)
         for w in p.summary["warnings"] if "unwinder verified" in w]
    return int(g[0].group(1)) if g and g[0] else -1


def fallbacks(p):
    """How many stacks the dwarf verification message says went to
    libunwind; -1 without the message."""
    g = [re.search(r"(\d+) fell back to libunwind", w)
         for w in p.summary["warnings"] if "unwinder verified" in w]
    return int(g[0].group(1)) if g and g[0] else -1


def check_recurse(t, p, label, cut):
    """hs_recurse: 12,485 allocations and frees of 201,360 bytes; cut
    stacks exactly when the depth cap is below the program's depth."""
    s = p.summary
    t.eq(label + ": allocations, frees, bytes",
         (12485, 12485, 201360, 201360),
         (s["allocations"], s["frees"], s["bytes_allocated"], s["bytes_freed"]))
    build = [st for st in p.stacks if any(f.get("function") == "rec_build" for f in st["frames"])]
    chain = [st for st in p.stacks if any(f.get("function") == "rec_chain" for f in st["frames"])]
    t.eq(label + ": rec_build allocations", 12285, sum(int(st["allocations"]) for st in build))
    t.eq(label + ": rec_chain allocations", 200, sum(int(st["allocations"]) for st in chain))
    if cut is None:
        t.eq(label + ": one stack per tree node", 4095, len(build))
        t.eq(label + ": no rec_build stack cut", 0, sum(1 for st in build if st["truncated"]))
        t.true(label + ": the chain's deepest stacks are cut at 64 frames",
               any(st["truncated"] and len(st["frames"]) >= 64 for st in chain), "")
    else:
        t.true(label + ": no stack longer than the cap",
               all(len(st["frames"]) <= cut for st in p.stacks), "")
        # a stack of `cut` rec_chain frames continues further out: cut
        deep = [st for st in chain if len(st["frames"]) == cut and
                all(f.get("function") == "rec_chain" for f in st["frames"])]
        t.eq(label + ": the deep chain stacks (down and up) are two, cut", [True, True],
             [st["truncated"] for st in deep])
        whole = [st for st in build + chain if not st["truncated"]]
        t.true(label + ": every stack not cut reaches main",
               all(any(f.get("function") == "main" for f in st["frames"]) for st in whole), "")


def main(t):
    import os
    script = os.path.join(t.dir, "s.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    check(t, "python3", t.prog("python3"), [script], 20000, env={"PYTHONMALLOC": "malloc"})
    # a depth cap that cuts most stacks: the walk's cached tail must stop too
    check(t, "python3-depth3", t.prog("python3"), [script], 20000, env={"PYTHONMALLOC": "malloc"},
          opts=["--depth", "3"])
    # (libstdc++ allocates while the loader runs its constructor: that
    # stack ends in the loader's start code, which no FDE covers and which
    # leaves rbp 0; the DWARF walk ends there as libunwind does, without it)
    check(t, "cxx", "hs_cxx", [], 20)
    check(t, "threads", "hs_threads", [], 16000, cached=10000)
    # 3,000 return addresses in turn: the table of DWARF rules grows to
    # 16,384 entries, moving its rules, while the walks go on (hs_manyret.c;
    # its stacks all share one set of the cache, which answers none)
    check(t, "manyret", "hs_manyret", [], 60000, cached=0)
    # a frame no FDE covers: the walk ends there when its rbp is 0, as
    # libunwind does, and leaves the stack to libunwind otherwise
    # (hs_nocfi.c).  Verified, libunwind's own cache of frames ends both
    # kinds at nocfi_call (it learnt that frame with rbp 0); alone, it
    # follows the other rbp to nocfi_outer.  A walk that did not compare
    # nocfi_call's rbp would put all 400 under nocfi_call.
    p = check(t, "nocfi", "hs_nocfi", [], 400, cached=50, fallbacks_expected=200)
    if p is not None:
        t.eq("nocfi: allocations from nocfi_site", 400,
             sum(int(st["allocations"]) for st in p.stacks_with("nocfi_site")))
    p = t.report(t.run("hs_nocfi", out="nocfi-plain.hsp", opts=["--unwind", "dwarf"]).out)
    t.eq("nocfi, not verified: nocfi_site's stacks, ending at nocfi_call or in nocfi_outer",
         [(200, ["nocfi_site", "nocfi_call"]), (200, ["nocfi_site", "nocfi_call", "nocfi_outer"])],
         sorted((int(st["allocations"]), [f.get("function") for f in st["frames"]])
                for st in p.stacks_with("nocfi_site")))
    t.eq("nocfi, not verified: the message of libunwind's walks",
         ["collector: 200 stacks were walked by libunwind, more slowly: a frame had no rule "
          "heapscope's DWARF unwinder follows (a CFA expression, a signal frame, code without "
          "CFI whose rbp is not 0, code outside every module), or the stack was not the "
          "thread's own"],
         [w for w in p.summary["warnings"] if "walked by libunwind" in w])
    # one function run as a fiber below a trampoline that ends the stack
    # for unwinders, then called the plain way at the same address
    # (hs_fiber_entry.c): only the return address in its frame tells the
    # two stacks apart, and the cache must still check it (it leaves out
    # the entry frame's words only for the C library's thread entries)
    check(t, "fiber-entry", "hs_fiber_entry", [], 8, cached=2)
    # and without verification, where the cache answers
    r = t.run("hs_fiber_entry", out="fiber-entry-plain.hsp", opts=["--unwind", "dwarf"])
    p = t.report(r.out)
    for fn in ("fiber_tramp", "fiber_plain"):
        t.eq("fiber-entry, cache on: fiber_leaf's stacks, under %s or not" % fn,
             [(4, False), (4, True)],
             sorted((int(st["allocations"]), any(f.get("function") == fn for f in st["frames"]))
                    for st in p.stacks_with("fiber_leaf")))
    # threads that start and exit all the time: new threads reuse the
    # stacks and the recycled states of exited ones, and a cached stack
    # leaves the words of its thread's entry frame (start_thread's)
    # unchecked (col_unwind_cache); forks beside them
    for mode in ("dwarf", "fp"):
        check(t, "stress-" + mode, "hs_stress", [], 20000, opts=["--unwind", mode], cached=10000)
    # threads one after another on the state (and stack) the last one left,
    # two kinds of deep code in turn: the unwinder's memo and rules handed
    # over, the cache's sets emptied in place and its deep checks' pool
    # reused must leave each allocation under its own 26- or 32-frame stack
    for mode in ("dwarf", "fp"):
        label = "churn-" + mode
        p = check(t, label, "hs_churn", [], 2000, opts=["--unwind", mode], cached=1500)
        if p is None:
            continue
        for leaf, frames, size in (("leaf_a", 24, 40), ("leaf_b", 30, 56)):
            got = [(int(st["allocations"]), int(st["bytes_allocated"]),
                    sum(f.get("function") == "deep" for f in st["frames"]))
                   for st in p.stacks_with(leaf)]
            t.eq(label + ": " + leaf + "'s one stack: allocations, bytes, frames of deep",
                 [(1000, 1000 * size, frames)], got)
    # every stack new (the cache is never asked), and stacks past the cap
    for mode in ("dwarf", "fp"):
        for depth in (None, 8):
            label = "recurse-%s%s" % (mode, "-depth%d" % depth if depth else "")
            opts = ["--unwind", mode] + (["--depth", str(depth)] if depth else [])
            p = check(t, label, "hs_recurse", [], 12485, opts=opts, cached=0)
            if p is not None:
                check_recurse(t, p, label, depth)
            if p is not None:
                # the second and third trees repeat the first's stacks in
                # order: the recorder's guess of the next stack is right,
                # and taken without the memo (never for a cut stack)
                n = guessed(p)
                t.true(label + ": stacks taken from the guess", n >= 8000 if depth is None else
                       0 < n < 200, "%d guessed" % n)
    # two stacks that agree frame for frame where they overlap, one a frame
    # longer (in fp mode), allocated in turn after a third: the guess of
    # the next stack is always the other one, and the walk compared with it
    # must see where each ends (hs_guess.c)
    for mode in ("fp", "dwarf"):
        # (the cache answers 2,000-4,000 times: whether the three stacks'
        # frames fall in one set of the cache depends on the addresses)
        p = check(t, "guess-" + mode, "hs_guess", [], 4000, opts=["--unwind", mode], cached=1000)
        if p is None:
            continue
        leaf = sorted(([f.get("function") for f in st["frames"]], int(st["allocations"]))
                      for st in p.stacks_with("guess_leaf"))
        if mode == "fp":
            t.eq("guess-fp: guess_leaf's two stacks, where the frame pointers end",
                 [(["guess_leaf", "guess_base"], 1000),
                  (["guess_leaf", "guess_base", "guess_marker"], 1000)], leaf)
        else:
            t.eq("guess-dwarf: guess_leaf's two stacks, 1,000 allocations each", [1000, 1000],
                 [n for _, n in leaf])
    # the same where the shorter stack ends at a return address of 0 (for a
    # DWARF walk: hs_guess_end.c)
    p = check(t, "guess-end-dwarf", "hs_guess_end", [], 4000, opts=["--unwind", "dwarf"], cached=0)
    if p is not None:
        t.eq("guess-end-dwarf: end_leaf's two stacks, where the DWARF walk ends",
             [(["end_leaf", "end_base"], 1000), (["end_leaf", "end_base", "end_shift"], 1000)],
             sorted(([f.get("function") for f in st["frames"]][:3], int(st["allocations"]))
                    for st in p.stacks_with("end_leaf")))
        n = guessed(p)
        t.true("guess-end-dwarf: stacks taken from the guess", n >= 1000, "%d guessed" % n)
    # two stacks that differ only in outer frames found at the same addresses
    # (hs_guess_outer.c): where the guessed stack's outer frames are checked
    # in place, the difference is in the words there, and must be seen
    for mode in ("fp", "dwarf"):
        label = "guess-outer-" + mode
        p = check(t, label, "hs_guess_outer", [], 46500, opts=["--unwind", mode], cached=0)
        if p is None:
            continue

        def under(fn):
            return sum(int(st["allocations"]) for st in p.stacks_with("guess_build")
                       if any(f.get("function") == fn for f in st["frames"]))
        t.eq(label + ": allocations under each caller", (31000, 15500),
             (under("guess_mid_x"), under("guess_mid_y")))
        n = guessed(p)
        t.true(label + ": stacks taken from the guess", n >= 20000, "%d guessed" % n)
    # stacks deeper than a cache entry's own checks (hs_deep.c): kept in the
    # entry's chunk of deep checks, and told apart only by the words of their outermost
    # frames (19 of each round's 20 allocations are the cache's to answer)
    # and the same in eight threads one after another, each taking over
    # the state the last one left, whose cache pages are given back: still
    # exact, and still answered by the cache (the cache checks every word
    # it answers for, so a stale entry could not give a wrong stack; this
    # checks that recycling breaks neither the counts nor the cache)
    for mode, label, args in (("dwarf", "deep-dwarf", []), ("fp", "deep-fp", []),
                              ("dwarf", "deep-threads-dwarf", ["8"]),
                              ("fp", "deep-threads-fp", ["8"])):
        p = check(t, label, "hs_deep", args, 40000, opts=["--unwind", mode], cached=30000)
        if p is None:
            continue
        s = p.summary
        if not args:  # with threads, glibc also allocates their TLS vector
            t.eq("%s: allocations, frees, bytes" % label, (40000, 40000, 1600000),
                 (s["allocations"], s["frees"], s["bytes_allocated"]))

        def under(fn):
            return sum(int(st["allocations"]) for st in p.stacks_with("deep_leaf")
                       if any(f.get("function") == fn for f in st["frames"]))
        t.eq("%s: allocations under each side" % label, (30000, 10000),
             (under("deep_side_a"), under("deep_side_b")))
        t.true("%s: the stacks are deeper than 44 frames" % label,
               all(len(st["frames"]) > 46 for st in p.stacks_with("deep_leaf")), "")
    # frames that keep data in rbp, and stacks told apart only by rbp
    # (hs_rbp_frames.S): a saved rbp no frame further out uses is data, not
    # part of the stack, so the cache answers for rbp_loop's stack although
    # every call saves another rbp; a used one must be checked, or the cache
    # (and the memo) would take rbp_via_b's stack for rbp_via_a's
    # (and a saved rbp next to its return address, in a frame with a frame
    # pointer, that the caller's CFA uses: rbp_std)
    def check_rbp(label, p):
        s = p.summary
        t.eq(label + ": allocations, frees, bytes", (22000, 22000, 528000),
             (s["allocations"], s["frees"], s["bytes_allocated"]))
        t.eq(label + ": allocations under rbp_leaf, rbp_via_a, rbp_via_b, rbp_mid, rbp_std",
             (10000, 9000, 3000, 4000, 4000),
             tuple(sum(int(st["allocations"]) for st in p.stacks_with(fn))
                   for fn in ("rbp_leaf", "rbp_via_a", "rbp_via_b", "rbp_mid", "rbp_std")))
        t.eq(label + ": rbp_std's stacks under rbp_via_a and rbp_via_b", [1000, 3000],
             sorted(int(st["allocations"]) for st in p.stacks_with("rbp_std")))
    p = check(t, "rbp-dwarf", "hs_rbp", [], 22000, opts=["--unwind", "dwarf"], cached=20000)
    if p is not None:
        check_rbp("rbp-dwarf", p)
    r = t.run("hs_rbp", out="rbp-plain.hsp", opts=["--unwind", "dwarf"])
    check_rbp("rbp-dwarf without verification", t.report(r.out))
    # the fp unwinder's reuse of its previous walk against an uncached walk
    check(t, "python3-fp", t.prog("python3"), [script], 20000, env={"PYTHONMALLOC": "malloc"},
          opts=["--unwind", "fp"])
    check(t, "threads-fp", "hs_threads", [], 16000, opts=["--unwind", "fp"], cached=10000)
    # a dlopen makes every cache entry stale: the stack is cached again
    # (2 x 1000 allocations, each round's first two walked)
    for mode in ("dwarf", "fp"):
        p = check(t, "cache-epoch-" + mode, "hs_cache_epoch", [t.prog("hs_plugin")], 2000,
                  opts=["--unwind", mode], cached=1990)
        if p is not None:
            own = [s for s in p.stacks_with("loop_site")
                   if not any(hstest.frame_matches(f, "reload") for f in s["frames"])]
            t.eq("cache-epoch-%s: loop_site's own allocations, bytes, frees" % mode,
                 (2000, 80000, 2000), tuple(sum(int(s[k]) for s in own) for k in
                                            ("allocations", "bytes_allocated", "frees")))


if __name__ == "__main__":
    hstest.main(main)
