"""e2e_manyret: a program that steps through more return addresses than
a thread's table of DWARF rules holds at first (tests/progs/hs_manyret.c:
3,000 call sites of one allocating function, 20 rounds).

Every one of the 3,000 stacks must have exactly its 20 allocations, in
both modes, each under its own return address in hub().

In `dwarf` mode each allocation's walk reads the rule of its own return
address.  Until 2026-11-26 the table stopped at 1,024 rules (direct
mapped), so 3,000 addresses in turn read .eh_frame at nearly every
allocation (~60,000 times here; cc1plus 73,500 times for 273,000
allocations); a table that keeps evicting now grows, four times at a
time, to 16,384.  HEAPSCOPE_STATS=1 says how many rules were read and
how large the largest table grew: fewer than 15,000 reads, and a table
of at least 4,096 entries.
"""
import re

import hstest

CALLS, ROUNDS = 3000, 20
RULES = re.compile(r"HEAPSCOPE_STATS: DWARF rules: (\d+) read from \.eh_frame, largest rule "
                   r"table of a thread (\d+) entries")


def main(t):
    for mode in ("fp", "dwarf"):
        r = t.run("hs_manyret", out="manyret-%s.hsp" % mode, opts=("--unwind", mode),
                  env={"HEAPSCOPE_STATS": "1"})
        t.eq("%s: program stdout" % mode, b"manyret done\n", r.stdout)
        p = t.report(r.out)
        t.check_site(p, "take", n_stacks=CALLS, allocations=CALLS * ROUNDS,
                     bytes_allocated=CALLS * ROUNDS * 24, frees=CALLS * ROUNDS,
                     leaked_bytes=0, temporary_allocations=CALLS * ROUNDS)
        stacks = p.stacks_with("take")
        hubs = {}
        for s in stacks:
            f = p.frame_of(s, "hub")
            if f is None:
                t.fail("%s: a stack of take without hub: %s" % (mode, p.describe(s)))
                continue
            hubs.setdefault(f.get("address"), []).append(s)
        t.eq("%s: one stack per call site in hub" % mode, CALLS, len(hubs))
        wrong = [p.describe(s) for ss in hubs.values() for s in ss
                 if len(ss) != 1 or int(s.get("allocations", 0)) != ROUNDS]
        t.eq("%s: each stack has its %d allocations" % (mode, ROUNDS), [], wrong[:5])
        t.check_consistent(p)
        rules = [m for m in (RULES.search(w) for w in p.summary["warnings"]) if m]
        if mode == "fp":
            t.eq("fp: no DWARF rules read", [], [m.group(0) for m in rules])
            continue
        t.eq("dwarf: one message on the DWARF rules", 1, len(rules))
        if not rules:
            continue
        read, table = (int(x) for x in rules[0].groups())
        print("dwarf: %d rules read, largest table %d entries" % (read, table))
        t.true("dwarf: the rule table grew to at least 4,096 entries", table >= 4096, str(table))
        t.true("dwarf: the rules were read fewer than 15,000 times", read < 15000, str(read))


if __name__ == "__main__":
    hstest.main(main)
