"""e2e_setpairs: two stacks that take turns in one set of the cache of
recent stacks are both kept (tests/progs/hs_setpairs.c).

hs_setpairs runs 192 pairs of its 16 stacks, each pair from its own
frame, 200 rounds each; about one pair in 32 shares a set.  A stack is kept at its
second sight.  Until 2026-11-26 a first sight took the way of another
stack's first sight, so the two stacks of a pair in one set evicted each
other at every allocation and each was walked for good (wl-hash-table
under mimalloc walked all of its 2,000,000 allocations).  With
HEAPSCOPE_STATS=1 the collector says how the allocations found their
stacks: a pair costs four walks, so 96,800 allocations take fewer than
1,200, where one pair in a set walking for good makes 400.  The counts of
every site are exact in both modes.

A last pair runs 10,000 rounds after every set's way 0 (the hooks' inline
path) keeps a stack of the first pairs, so its stacks start in ways 1-7.
Way 0 was never evicted until 2026-11-26 and then answered ~6,000 of the
allocations; a stack answered 255 times by ways 1-7 now takes way 0, so
way 0 must answer at least 12,000 (~25,800 when the pair's stacks fall
in two sets; ~16,000 when they share one and take turns in way 0).
"""
import hstest

PADS, ROUNDS, SITES, LONG_ROUNDS = 192, 200, 16, 10000


def main(t):
    n = PADS * ROUNDS * 2 // SITES  # allocations of each site
    for mode in ("fp", "dwarf"):
        r = t.run("hs_setpairs", out="setpairs-%s.hsp" % mode, opts=("--unwind", mode),
                  env={"HEAPSCOPE_STATS": "1"})
        t.eq("%s: program stdout" % mode, b"setpairs done\n", r.stdout)
        p = t.report(r.out)
        for i in range(SITES):
            k = n + (LONG_ROUNDS if i < 2 else 0)
            t.check_site(p, "site%d" % i, allocations=k, bytes_allocated=k * 24, frees=k,
                         bytes_freed=k * 24, leaked_bytes=0, temporary_allocations=k)
        t.check_consistent(p)
        stats = t.cache_stats(p, mode)
        if not stats:
            continue
        allocs, way0, _, walks = stats
        t.true("%s: the message counts every allocation" % mode, allocs >= SITES * n + 2 * LONG_ROUNDS, str(allocs))
        t.true("%s: fewer than 1,200 walks" % mode, walks < 1200, str(walks))
        t.true("%s: way 0 answered at least 12,000" % mode, way0 >= 12000, str(way0))
    # without the knob, no such message
    r = t.run("hs_setpairs", out="setpairs-quiet.hsp")
    p = t.report(r.out)
    t.eq("no HEAPSCOPE_STATS message without the knob", [],
         [w for w in p.summary["warnings"] if "HEAPSCOPE_STATS" in w])


if __name__ == "__main__":
    hstest.main(main)
