"""e2e_samekey: six stacks from one frame and return address, taking
turns, are all kept by the cache of recent stacks
(tests/progs/hs_samekey.c).

All of hs_samekey's allocations come from one call to malloc in share(),
called from the same frame by six callers in turn, 2,000 rounds: six
stacks with one frame and return address, so all in one set of the
cache.  Until 2026-11-26 a set had four ways, and a first sight took a way
another first sight waited in: the six evicted each other before any was
seen twice, and each of the 12,000 allocations was walked (sqlite3, whose
hot stacks all come from one malloc call, walked up to 1.8 M of its 3.3 M
allocations).  Now a set has eight ways and remembers the stacks it
evicted (its ghosts), so a stack that comes back is kept at once: with
HEAPSCOPE_STATS=1 the walks must number fewer than 100 (the first rounds'
and the program's start), in both modes, and the counts of every caller
are exact.
"""
import hstest

ROUNDS, CALLERS = 2000, 6


def main(t):
    for mode in ("fp", "dwarf"):
        r = t.run("hs_samekey", out="samekey-%s.hsp" % mode, opts=("--unwind", mode),
                  env={"HEAPSCOPE_STATS": "1"})
        t.eq("%s: program stdout" % mode, b"samekey done\n", r.stdout)
        p = t.report(r.out)
        for i in range(CALLERS):
            stacks = t.check_site(p, "caller%d" % i, allocations=ROUNDS, bytes_allocated=ROUNDS * 24,
                                  frees=ROUNDS, bytes_freed=ROUNDS * 24, leaked_bytes=0,
                                  temporary_allocations=ROUNDS)
            t.eq("%s: caller%d has one stack" % (mode, i), 1, len(stacks))
        t.check_consistent(p)
        stats = t.cache_stats(p, mode)
        if not stats:
            continue
        allocs, _, _, walks = stats
        t.true("%s: the message counts every allocation" % mode, allocs >= ROUNDS * CALLERS, str(allocs))
        t.true("%s: fewer than 100 walks" % mode, walks < 100, str(walks))


if __name__ == "__main__":
    hstest.main(main)
