"""e2e_threads: 16 threads allocating from one site (hs_threads.c).

Thread t makes 1,000 mallocs of 16 + t bytes in worker_alloc_site: 16,000
allocations, 1,000 * (16 + ... + 31) = 376,000 bytes, all freed after a
barrier (so all 376,000 bytes are live at once).  Each thread's last block is
freed before that thread allocates again: 16 temporary.
The only other allocations are glibc's: pthread_create (from spawn_workers)
callocs each new thread's DTV, 16 blocks, live until join or exit.
Valgrind: total heap usage 16,016 allocs, 16,016 frees, 380,352 bytes
(16 DTVs of 272 bytes: the DTV grows by 16 bytes per TLS module, so its size
under heapscope, whose library has TLS, differs; Valgrind's exit-time
libc_freeres frees the DTVs of cached thread stacks, a normal exit does not).

Peak: with HEAPSCOPE_PEAK_SLACK=0 every change is published and the peak is
exact: 376,000 + the 16 DTVs, all live at the barrier.  With a slack of S
bytes per thread it is within 17 * S (16 workers + main) of that, and the
profile states that bound (peak_error).

With HEAPSCOPE_STATS=1 the profile also says what the collector's own
memory holds at exit, by kind (col_memstat.c, pages this process alone
maps, from /proc/self/pagemap).  The 17 threads alive at once each had a
state, whose first page each wrote; each of the 16 workers counted its
site in its own leaf of counters, a page at least; every kind is in use;
the kinds add up to the whole.
"""
import re

import hstest

MEMSTAT = re.compile(r"HEAPSCOPE_STATS: the collector's own memory at exit, pages this process "
                     r"alone maps: (\d+) KB: shadow map (\d+) KB, thread states (\d+) KB "
                     r"\((\d+)\), counters (\d+) KB, call tree and sites (\d+) KB, "
                     r"unwinders (\d+) KB, other (\d+) KB; (\d+) mappings not kept track of")

WORKER_BYTES = 376000
EXPECT_ALLOCATIONS = 16016


def check_counts(t, p, through_glibc=True):
    """through_glibc=False: frame-pointer unwinding stops inside glibc
    (built without frame pointers), so pthread_create's DTV stacks do not
    reach spawn_workers; they are then only counted."""
    w = t.check_site(p, "worker_alloc_site", n_stacks=1, allocations=16000,
                     bytes_allocated=WORKER_BYTES, frees=16000,
                     bytes_freed=WORKER_BYTES, leaked_bytes=0, leaked_allocations=0,
                     temporary_allocations=16)[0]
    t.check_sizes(p, w, [(16 + i, 16 + i, 1000, 1000 * (16 + i)) for i in range(16)])
    others = [s for s in p.alloc_stacks if s is not w]
    if through_glibc:
        dtv = t.check_site(p, "spawn_workers", n_stacks=None, allocations=16)
        others = [s for s in others if s not in dtv]
        t.eq("stacks other than the worker site and pthread_create's", [],
             [p.describe(s) for s in others])
    else:
        dtv = others
        t.eq("allocations outside worker_alloc_site (the DTVs)", 16,
             sum(int(s["allocations"]) for s in others))
    t.check_summary(p, final=True, allocations=EXPECT_ALLOCATIONS, threads=17,
                    unknown_frees=0, lost_allocations=0)
    t.check_consistent(p)
    return w, dtv


def check_memstat(t, p, label):
    found = [m for m in (MEMSTAT.search(w) for w in p.summary["warnings"]) if m]
    t.eq("%s: one message on the collector's own memory" % label, 1, len(found))
    if not found:
        return
    total, shadow, states_kb, states, counters, tree, unwind, other, untracked = \
        (int(x) for x in found[0].groups())
    t.eq("%s: the kinds add up to the whole" % label, total,
         shadow + states_kb + counters + tree + unwind + other)
    t.true("%s: a state for each of the 17 threads alive at once" % label, states >= 17,
           str(states))
    t.true("%s: each state wrote its first page" % label, states_kb >= 4 * states,
           "%d KB for %d states" % (states_kb, states))
    t.true("%s: each worker wrote a page of counters" % label, counters >= 4 * 16, str(counters))
    t.true("%s: the shadow map, the call tree and the unwinders are in use" % label,
           shadow > 0 and tree > 0 and unwind > 0, found[0].group(0))
    t.eq("%s: every mapping kept track of" % label, 0, untracked)


def main(t):
    # exact peak
    r = t.run("hs_threads", out="threads-exact.hsp", env={"HEAPSCOPE_PEAK_SLACK": "0"})
    t.eq("program stdout", b"threads done\n", r.stdout)
    p = exact = t.report(r.out)
    w, dtv = check_counts(t, p)
    dtv_bytes = sum(int(s["bytes_allocated"]) for s in dtv)
    t.check_summary(p, peak_bytes=WORKER_BYTES + dtv_bytes, peak_error=0)
    t.eq("worker_alloc_site peak_bytes (slack 0)", WORKER_BYTES, w["peak_bytes"])
    t.eq("pthread_create DTVs' peak_bytes (slack 0)", dtv_bytes,
         sum(int(s["peak_bytes"]) for s in dtv))

    # bounded peak with a slack of 4096 bytes per thread
    slack = 4096
    bound = 17 * slack
    r = t.run("hs_threads", out="threads-slack.hsp",
              env={"HEAPSCOPE_PEAK_SLACK": str(slack)})
    p = t.report(r.out)
    w, dtv = check_counts(t, p)
    true_peak = WORKER_BYTES + sum(int(s["bytes_allocated"]) for s in dtv)
    peak = int(p.summary["peak_bytes"])
    # the bound the profile states: 17 threads alive at once (the workers
    # at the barrier and main) times the slack
    t.check_summary(p, peak_error=bound)
    t.true("|peak_bytes - %d| <= 17 * %d" % (true_peak, slack),
           abs(peak - true_peak) <= bound, "peak_bytes=%d" % peak)
    t.true("|worker peak_bytes - %d| <= 17 * %d" % (WORKER_BYTES, slack),
           abs(int(w["peak_bytes"]) - WORKER_BYTES) <= bound,
           "peak_bytes=%s" % w["peak_bytes"])

    # frame-pointer unwinding gives the same counts
    r = t.run("hs_threads", out="threads-fp.hsp", opts=["--unwind", "fp"],
              env={"HEAPSCOPE_STATS": "1"})
    p = t.report(r.out)
    check_counts(t, p, through_glibc=False)
    check_memstat(t, p, "fp")

    # the collector's own memory in the default mode; none said without the knob
    r = t.run("hs_threads", out="threads-stats.hsp", env={"HEAPSCOPE_STATS": "1"})
    check_memstat(t, t.report(r.out), "dwarf")
    t.eq("no message on the collector's memory without HEAPSCOPE_STATS", [],
         [w for w in exact.summary["warnings"] if "own memory" in w])


if __name__ == "__main__":
    hstest.main(main)
