#!/usr/bin/env python3
"""A profile written while threads allocate and free (hs_handoff.c): the
writer reads each thread's counters while that thread changes them, and
one thread frees what another allocated.  Killed at a random moment, the
last profile written must still be a state the program could have been
in: no site with more frees than allocations.  churn_site, whose pairs one
thread makes, must have them all freed but at most the one being recorded.

Four runs, fp and dwarf, since each flush reads the counters at another
moment; then four with HEAPSCOPE_FAULT_SLOW_READS, where the flush waits
20 us between its reads of a site's counters, as one that loses the CPU
there does: the threads run on meanwhile, so no flush sees them at one
moment, and only the first rule is asked.  (Before col_flush.c's
read_counts and recount_allocs, which read a thread's frees before its
allocations and the allocations of every thread again where the sum
fell short, five such runs showed churn_site with 45-142 frees more
than allocations and handoff_site with 170-8,791 more; CI once saw
churn_site one free ahead in e2e_nothread without the knob.)  The slow
runs check recount_allocs: without it every one fails.  read_counts'
reads of one thread at one moment are checked only by churn_site's 0 or
1 live in the runs without the knob, which catch a fault there by
chance, as that CI run did.  Every heap sample of the timeline (SAMPLES)
must have no more frees than allocations either: the sample reads every
thread's frees before any thread's allocations, and with the knob it
sleeps after each thread's read; with each thread's allocations and frees
read together instead, all four slow runs had samples with 29-512 frees
more than allocations."""
import json
import os
import re
import hstest

RUNS = 4


def check(t, p, slow):
    base = os.path.basename(p.path)
    t.check_summary(p, final=False, truncated=False)
    for name in ("handoff_site", "churn_site"):
        got = p.totals_of(t.site(p, name))
        t.true("%s: %s freed while the profile was written" % (base, name),
               got["frees"] >= 1000, str(got))
        t.true("%s: %s: no more frees than allocations" % (base, name),
               got["allocations"] >= got["frees"], str(got))
        t.true("%s: %s: no more bytes freed than allocated" % (base, name),
               got["bytes_allocated"] >= got["bytes_freed"], str(got))
        if name == "churn_site" and not slow:
            t.true(base + ": churn_site: every pair freed but the one being recorded",
                   got["allocations"] - got["frees"] in (0, 1), str(got))
    # the heap samples read every thread's frees before any thread's
    # allocations (col_sample.c): so do the timeline's counts
    tl = json.loads(t.report_text(p.path, ["--timeline", "--json"]))
    samples = tl["samples"]
    t.true(base + ": heap samples taken", len(samples) >= 5, str(len(samples)))
    bad = [x for x in samples if x["frees"] > x["allocations"]]
    t.eq(base + ": samples with more frees than allocations", [], bad)
    t.true(base + ": samples' counts never go down",
           all(a["allocations"] <= b["allocations"] and a["frees"] <= b["frees"]
               for a, b in zip(samples, samples[1:])))
    s = p.summary
    t.true(base + ": summary: no more frees than allocations",
           int(s["allocations"]) >= int(s["frees"]),
           "%s allocations, %s frees" % (s["allocations"], s["frees"]))
    t.check_consistent(p)


def main(t):
    for k in range(2 * RUNS):
        slow = k >= RUNS
        mode = ("dwarf", "fp")[k % 2]
        out = "handoff-%d%s.hsp" % (k, "-slow" if slow else "")
        r = t.run("hs_handoff", ["300"], out=out, opts=["--unwind", mode, "--interval", "10"],
                  env={"HEAPSCOPE_FAULT_SLOW_READS": "1"} if slow else None, expect_rc=137)
        if not re.match(rb"handoffs \d+\n$", r.stdout):
            raise hstest.HsError("hs_handoff printed %r" % r.stdout)
        check(t, t.report(r.out), slow)


if __name__ == "__main__":
    hstest.main(main)
