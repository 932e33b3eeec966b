"""e2e_convoy: threads that make the same new stacks at once (hs_convoy.c).

4 workers, released together, each build and free a tree of 1,023 nodes,
each node allocated (16 bytes) from its own stack in conv_build; three
rounds.  So the collector's call tree and site table are asked for the
same 1,023 new keys by four threads at the same moment, and threads that
find another making the key wait for it, or back off and sleep when they
keep trailing it (col_idtab.c).  Whatever the interleaving, every stack
must come out once, with its exact counts: 12 allocations (4 workers x 3
rounds) of 16 bytes, all freed; each worker's last block of a round (the
rightmost leaf) is freed before it allocates again, 12 temporary in all.

How often the workers meet on one key depends on the scheduler (a few
times a run on a 2-CPU machine); HEAPSCOPE_FAULT_BACKOFF=1 makes each such
wait a back-off, the path that sleeps instead of waiting for the lock.
(unit_tsan_collector_backoff takes that path thousands of times, under
ThreadSanitizer.)
"""
import hstest

STACKS = 1023
PER_STACK = 4 * 3


def check(t, out, opts=(), env=None):
    r = t.run("hs_convoy", out=out, opts=opts, env=env)
    t.eq(out + ": program stdout", b"convoy done\n", r.stdout)
    p = t.report(r.out)
    stacks = t.check_site(p, "conv_build", n_stacks=STACKS, allocations=STACKS * PER_STACK,
                          bytes_allocated=STACKS * PER_STACK * 16,
                          frees=STACKS * PER_STACK, bytes_freed=STACKS * PER_STACK * 16,
                          leaked_allocations=0, temporary_allocations=PER_STACK)
    odd = [p.describe(s) for s in stacks
           if (int(s["allocations"]), int(s["bytes_allocated"]), int(s["frees"]))
           != (PER_STACK, PER_STACK * 16, PER_STACK)]
    t.eq(out + ": stacks through conv_build without 12 allocations of 16 bytes, all freed",
         [], odd[:5])
    depths = sorted(sum(1 for f in s.get("frames", []) if hstest.frame_matches(f, "conv_build"))
                    for s in stacks)
    t.eq(out + ": conv_build frames per stack (a tree of depth 9)",
         sorted(d + 1 for d in range(10) for _ in range(2 ** d)), depths)
    t.check_summary(p, final=True, unknown_frees=0, lost_allocations=0)
    t.check_consistent(p)


def main(t):
    check(t, "convoy.hsp")
    check(t, "convoy-backoff.hsp", env={"HEAPSCOPE_FAULT_BACKOFF": "1"})
    check(t, "convoy-fp-backoff.hsp", opts=["--unwind", "fp"],
          env={"HEAPSCOPE_FAULT_BACKOFF": "1"})


if __name__ == "__main__":
    hstest.main(main)
